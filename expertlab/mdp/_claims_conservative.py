"""Rate claims of the conservative learners (StepMix, EpsMix, the cumulative-constraint UCBVI).

Each claim names its learner and its source; ``simulations/mdp/conservative.py``
holds the seeded experiments that check them.
"""

from __future__ import annotations

import math

from ..sim._rates import RateClaim, register_claims

_SETTING = ("On a 3-state, 2-action Garnet kernel (seed 2) repeated over H = 3 stages, with the baseline that "
            "plays the worst first action and the optimal ones afterwards (conservative_garnet), alpha = 0.3, "
            "delta = 0.1, stage-pooled counts, the optimistic policy of UCBVI with bonus H / sqrt(n) (the UCBVI "
            "claims' convention) and the L1 pessimistic bonus at full size (pessimism_scale = 1).")

_VIOL = ("Violations are counted by exact policy evaluation of the played mixture (episode coin included) with the "
         "true model. The theorem holds on an event of probability 1 - delta, so the frequency of runs without a "
         "violation is at least 1 - delta = 0.9; no tolerance beyond the one-sided Clopper-Pearson bound.")

_SLOPE = ("The bound has the form c1 sqrt(k) + c2 along one run (L fixed from the planned K; c2 collects the "
          "K-independent cost of the episodes spent near the baseline), whose log-log slope never exceeds 1/2; "
          "hence no tolerance beyond the bootstrap interval.")

_MINIMAX = ("(bonus H / sqrt(n), delta = 0.1, alpha = {alpha}, stage-pooled counts, pessimism_scale = 1) on "
            "the two-point construction: from the start state each of A = 4 actions reaches a rewarding absorbing "
            "state (reward 1 at each of the H - 1 = 2 later stages) with probability 1/2, the last one with "
            "probability 1/2 + eps_K, eps_K = 0.1 / sqrt(K), rebuilt for each K in {ks}; 16 replications; the "
            "baseline is the uniform policy. {mass} Exact expected regret of the episodes K/5 .. K (the first "
            "episodes break ties towards the first action, a cost that does not grow with K). The regret is "
            "(H - 1) eps_K (0.8 K) f, f the fraction of those episodes that start with another action; with "
            "eps_K sqrt(K) = 0.1 the observations cannot single out the better action, so f stays near "
            "1 - 1/A, for the optimistic policy as for the baseline and every mixture of the two (measured: "
            "{f}): the regret grows like sqrt(K), the upper bound's rate is attained, and the log-log slope is "
            "1/2 with no tolerance beyond the bootstrap interval.")

# secant slope of ln k over the decade [K / 10, K] of the quick run (K = 10^4 for StepMix, 3 10^3 for EpsMix):
# log10(ln K / ln(K / 10)), the log-log slope of a c ln k law over that window; it decreases in K, so it bounds
# the slope of a logarithmic law on every fit window at or beyond the quick one (the full runs included)
_LOG_SECANT_STEP = math.log10(math.log(1e4) / math.log(1e3))
_LOG_SECANT_EPS = math.log10(math.log(3e3) / math.log(3e2))

CLAIMS = (
    RateClaim(
        name="mdp.stepmix-zero-violations",
        quantity="indicator of a run without episode-wise violation", variable="episodes K", law="at_least",
        predicted=0.9, tolerance=0.0,
        source="Li, Huang, Shen & Yang 2023, Thm 1 (StepMix: V^{pi_k} >= (1 - alpha) V^{pi_b} in every episode "
               "w.p. 1 - delta)",
        learner="stepmix",
        description="StepMix (per-step mixture, weight by bisection on the pessimistic value). " + _SETTING + " "
                    + _VIOL,
    ),
    RateClaim(
        name="mdp.epsmix-zero-violations",
        quantity="indicator of a run without episode-wise violation", variable="episodes K", law="at_least",
        predicted=0.9, tolerance=0.0,
        source="Li, Huang, Shen & Yang 2023, Thm 2 (EpsMix: the same episode-wise guarantee, in expectation over "
               "the episode coin)",
        learner="epsmix",
        description="EpsMix (optimistic policy for the whole episode with the closed-form probability). "
                    + _SETTING + " " + _VIOL,
    ),
    RateClaim(
        name="mdp.cumulative-zero-violations",
        quantity="indicator of a run without cumulative violation", variable="episodes K", law="at_least",
        predicted=0.9, tolerance=0.0,
        source="Garcelon, Ghavamzadeh, Lazaric & Pirotta 2020, conservative UCBVI (sum_{j<=k} V^{pi_j} >= "
               "(1 - alpha) k V^{pi_b} for every k w.p. 1 - delta)",
        learner="conservative_ucbvi",
        description="The cumulative-constraint rule (optimistic policy iff the stored credits plus its pessimistic "
                    "value keep the budget). " + _SETTING + " A violation is an episode k at which the sum of "
                    "the exact values of the played policies falls below (1 - alpha) k V^{pi_b}. " + _VIOL,
    ),
    RateClaim(
        name="mdp.stepmix-learned-baseline-zero-violations",
        quantity="indicator of a run without episode-wise violation, baseline learned offline", variable="episodes K",
        law="at_least", predicted=0.9, tolerance=0.0,
        source="Li, Huang, Shen & Yang 2023 (StepMix with a baseline learned from offline data: the constraint "
               "holds w.p. 1 - delta once the offline value interval covers the baseline's value)",
        learner="stepmix",
        description="StepMix credited with learned_baseline(...): behaviour cloning of the baseline's actions "
                    "from N = 2000 offline episodes and the lower end of the Hoeffding interval "
                    "V_hat - H sqrt(ln(2/0.05)/(2N)) as its value. " + _SETTING + " Violations are counted against "
                    "(1 - alpha) times the true baseline value, by exact evaluation. One offline data set serves "
                    "every run, and the experiment checks that its interval covers the true value (the event of "
                    "probability 1 - 0.05 on which the guarantee rests); given it, the frequency of runs without "
                    "a violation is at least 1 - delta = 0.9 as in the known-baseline claim; no tolerance beyond "
                    "the one-sided Clopper-Pearson bound.",
    ),
    RateClaim(
        name="mdp.stepmix-regret-vs-K",
        quantity="expected regret of StepMix", variable="episodes K", law="power_at_most", predicted=0.5,
        tolerance=0.0,
        source="Li, Huang, Shen & Yang 2023, Thm 1 (StepMix: regret O~(sqrt(H^3 S A K)), as without the "
               "constraint)",
        learner="stepmix", fit_decades=1.0, sharpened_by=("mdp.stepmix-minimax-regret-vs-K",),
        description="StepMix; exact expected regret fitted over the last decade. " + _SETTING + " " + _SLOPE,
    ),
    RateClaim(
        name="mdp.epsmix-regret-vs-K",
        quantity="expected regret of EpsMix", variable="episodes K", law="power_at_most", predicted=0.5,
        tolerance=0.0,
        source="Li, Huang, Shen & Yang 2023, Thm 2 (EpsMix: the regret of StepMix)",
        learner="epsmix", fit_decades=1.0, sharpened_by=("mdp.epsmix-minimax-regret-vs-K",),
        description="EpsMix; exact expected regret fitted over the last decade. " + _SETTING + " " + _SLOPE,
    ),
    RateClaim(
        name="mdp.stepmix-minimax-regret-vs-K",
        quantity="expected regret of StepMix over episodes K/5 .. K, instance rebuilt per K", variable="episodes K",
        law="power", predicted=0.5, tolerance=0.0,
        source="Jaksch, Ortner & Auer 2010, Thm 5 (lower-bound construction, epsilon ~ sqrt(S A / T)): the "
               "O~(sqrt(H^3 S A K)) of Li, Huang, Shen & Yang 2023, Thm 1 cannot be improved in K",
        learner="stepmix",
        description="StepMix " + _MINIMAX.format(
            alpha=0.9, ks="250, 500, 1000, 2000", f="0.72 to 0.78",
            mass="alpha = 0.9 lets StepMix leave the baseline within the run: its baseline mass sum (1 - w_k) "
                 "is 83 % of the episodes at K = 250 and 12 % at K = 2000 (at alpha = 0.3 it plays the "
                 "baseline in every episode up to K = 1000, and the claim would check the baseline alone)."),
    ),
    RateClaim(
        name="mdp.epsmix-minimax-regret-vs-K",
        quantity="expected regret of EpsMix over episodes K/5 .. K, instance rebuilt per K", variable="episodes K",
        law="power", predicted=0.5, tolerance=0.0,
        source="Jaksch, Ortner & Auer 2010, Thm 5 (lower-bound construction): the regret of Li, Huang, Shen & "
               "Yang 2023, Thm 2 cannot be improved in K",
        learner="epsmix",
        description="EpsMix " + _MINIMAX.format(
            alpha=0.3, ks="125, 250, 500, 1000", f="0.74 to 0.77",
            mass="EpsMix plays the baseline in 70 % of the episodes at K = 125 and about 40 % at K = 1000."),
    ),
    RateClaim(
        name="mdp.stepmix-conservative-cost-vs-K",
        quantity="conservative mass sum_k (1 - w_k) of StepMix (bounds its regret gap to the optimistic play)",
        variable="episodes K", law="power_at_most", predicted=0.0, tolerance=round(_LOG_SECANT_STEP, 4),
        source="Li, Huang, Shen & Yang 2023, Thm 1 and its proof (reconstructed: the episodes with w_k < 1 cost "
               "a term of lower order than sqrt(K), logarithmic in K); Garcelon et al. 2020 (conservative regret = "
               "optimistic regret + a term logarithmic in K)",
        learner="stepmix", fit_decades=1.0,
        description="The regret of a conservative learner splits into the regret of its optimistic episodes "
                    "(the UCBVI analysis) and (V* - V^{pi_b}) times the mass of baseline play; the theorems "
                    "bound that mass by O(log K). Claim: its log-log exponent over the last decade is at most "
                    "0, widened by the exact secant slope of ln k over that decade, log10(ln K / ln(K/10)) "
                    f"= {_LOG_SECANT_STEP:.4f} for K = 10^4 (the quick run; the secant decreases in K, so this "
                    "bounds a logarithmic law on the full run too; a bounded mass has slope 0). " + _SETTING,
    ),
    RateClaim(
        name="mdp.epsmix-conservative-cost-vs-K",
        quantity="conservative mass sum_k (1 - epsilon_k) of EpsMix (expected number of baseline episodes)",
        variable="episodes K", law="power_at_most", predicted=0.0, tolerance=round(_LOG_SECANT_EPS, 4),
        source="Li, Huang, Shen & Yang 2023, Thm 2 and its proof (reconstructed: baseline episodes of EpsMix "
               "logarithmic in K); Garcelon et al. 2020",
        learner="epsmix", fit_decades=1.0,
        description="As for StepMix: the expected number of baseline episodes of EpsMix is O(log K); claim: "
                    "log-log exponent at most 0, widened by the secant slope of ln k over the last decade, "
                    f"log10(ln K / ln(K/10)) = {_LOG_SECANT_EPS:.4f} for K = 3000 (the quick run; smaller for "
                    "larger K). " + _SETTING,
    ),
)

register_claims(*CLAIMS)
