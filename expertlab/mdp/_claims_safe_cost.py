"""Rate claims of the safe linear-mixture learner with a learned cost (Shi, Liang & Shroff 2023).

``simulations/mdp/safe_learned_cost.py`` holds the seeded experiments that check them.
"""

from __future__ import annotations

from ..sim._rates import RateClaim, register_claims

_SETTING = ("On safe_cost_ladder(horizon=4, threshold=0.6, p_unsafe=0.5, rung_rewards=(1, 0.8, 0.5, 0.2), "
            "noise_scale=0.05): a ladder state whose four rungs cost tau - Delta_c, tau - Delta_c/3, "
            "tau + Delta_c/3, tau + Delta_c, a calibration state and an unsafe absorbing state; d = 2, d_c = 3; "
            "safe_learned_cost_vtr with delta = 0.1, lam = 1, cost_lam = 0.01 and both radii at beta_scale = 1.")

# Certification is checked once per episode: the first certified episode is the ceiling of a continuous
# time, E[ceil(T)] - E[T] <= 1/2 episode.  The shortest certification time of the quick grid is
# k_cert ~ 20 beta_c^2 / (H Delta_c^2) ~ 31 episodes at Delta_c = 0.2 (beta_c ~ 0.50 at K = 600), so the
# rounding inflates the largest-gap regret by at most 0.5/31 = 1.6 %, and by at most 0.2 % at the smallest
# gap (k_cert ~ 250); this tilts the log-log slope by at most (0.016 - 0.002) / ln(0.2 / 0.0707) = 0.014.
_ROUNDING_TOL = 0.02

CLAIMS = (
    RateClaim(
        name="mdp.safe-cost-zero-violations",
        quantity="indicator of a run without a step of cost above the threshold", variable="episodes K",
        law="at_least", predicted=0.9, tolerance=0.0,
        source="Shi, Liang & Shroff 2023, main theorem (no violation of the instantaneous hard constraint in any "
               "episode w.p. 1 - delta, with the safety parameter learned)",
        learner="safe_learned_cost_vtr",
        description="A violation is a played step with true cost c(s_h, a_h) > tau (every step in the unsafe "
                    "state). " + _SETTING + " Safety gap 0.1. Every played action is certified by its "
                    "pessimistic cost, which bounds the true cost from above whenever mu* lies in the ridge "
                    "ellipsoid (probability 1 - delta/2, Abbasi-Yadkori et al. 2011, Thm 2), and leads only to "
                    "states with an allowed action whenever the upper confidence transition weights dominate "
                    "theta (probability 1 - delta/2); hence at least 1 - delta = 0.9 of runs, with no tolerance "
                    "beyond the one-sided Clopper-Pearson bound.",
    ),
    RateClaim(
        name="mdp.safe-cost-point-estimate-violates",
        quantity="indicator of a run with a violation (ablation pessimistic=False)", variable="episodes K",
        law="at_least", predicted=0.95, tolerance=0.0,
        source="Shi, Liang & Shroff 2023 (the safety value must be estimated pessimistically: the estimate plus "
               "its confidence width, not the point estimate, is compared with the threshold)",
        learner="safe_learned_cost_vtr",
        description="The same learner certifying with the point estimate <psi, mu_hat> <= tau. " + _SETTING
                    + " Safety gap 0.1. Before the first episode mu_hat = 0, so every action looks safe, the "
                    "unsafe state included (so no set is emptied by reachability), and the top rung, with the "
                    "largest reward and the same optimistic continuation as the others, is the greedy action at "
                    "the ladder: every run violates in episode 1 (probability one). Claim: at least 0.95 of "
                    "runs violate (one-sided Clopper-Pearson; 64 violating runs of 64 give a bound of 0.954).",
    ),
    RateClaim(
        name="mdp.safe-cost-regret-vs-gap",
        quantity="expected regret after K episodes against the best safe policy", variable="safety gap Delta_c",
        law="power", predicted=-2.0, tolerance=_ROUNDING_TOL,
        source="Shi, Liang & Shroff 2023, main theorem (regret O~(d H^3 sqrt(d K) / Delta_c), growing as the "
               "safety gap shrinks); the exponent -2 is derived for this instance (Notes of safe_cost_ladder)",
        learner="safe_learned_cost_vtr",
        description="Exact expected regret after K episodes, K past every run's certification, at several safety "
                    "gaps with the same seeds. " + _SETTING + " Until the best safe rung (slack Delta_c/3) is "
                    "certified the learner plays a_0 at the ladder and loses 0.3 per ladder step; certification "
                    "needs the width beta_c ||psi||_{Lambda^-1} (plus the estimation error, of the same order) "
                    "below Delta_c/3, with ||psi||^2_{Lambda^-1} = (10/9)/(cost_lam + kH/2) after k episodes, so "
                    "k_cert ~ 20 (beta_c + O(sigma))^2 / (H Delta_c^2) and the regret ~ 3 (beta_c + O(sigma))^2 "
                    "/ Delta_c^2 (Gaussian noise: k_cert Delta_c^2 has a gap-free law by Brownian scaling). This "
                    "is below the paper's sqrt(K)/Delta_c envelope once K >= k_cert. Tolerance: certification "
                    "is checked once per episode, which moves the slope by at most "
                    f"{0.014:.3f} on the quick grid (0.2 to 0.0707; 0.008 on the full grid, 0.2 to 0.025); "
                    f"{_ROUNDING_TOL} covers it.",
    ),
)

register_claims(*CLAIMS)
