"""Rate claims of the classic bandit learners.

Each claim names its learner and its source; ``simulations/bandits/`` holds
the seeded experiment that checks it, and the learner's docstring lists it
under "Validated rates".
"""

from __future__ import annotations

import numpy as np

from ..sim._rates import RateClaim, register_claims
from ._etc import etc_expected_regret
from .instances import lai_robbins_constant

_BCB = "Bubeck & Cesa-Bianchi 2012"
_MEANS = np.arange(1, 10) / 10.0
#: Lai-Robbins constant of the nine Bernoulli arms 0.1, ..., 0.9 (the constant of these arms: 7.5165).
LR_NINE = lai_robbins_constant(_MEANS)
#: sum_i 1 / Delta_i of the same arms (10 H_8).
_INV_GAPS = float(np.sum(1.0 / (0.9 - _MEANS[:-1])))


def index_crossing_slope(means, c: float, horizon: float, *, decades: float = 1.0, n_points: int = 40) -> float:
    """Slope against ``ln t`` of the regret of a UCB index ``mean + sqrt(c ln t / N)`` in the fluid model.

    A suboptimal arm ``i`` is pulled while its index exceeds the optimal
    arm's; at the crossing ``mu_i + sqrt(c ln t / N_i) = mu* + sqrt(c ln t / N*)``
    with ``N* = t - sum_i N_i``.  Solving these equations at each ``t`` (the
    empirical means replaced by the true ones) gives the pull counts
    ``N_i(t)``, the regret ``sum_i Delta_i N_i(t)`` and its least-squares
    slope against ``ln t`` over ``[horizon / 10**decades, horizon]``, the
    window of a ``log`` claim.  As ``t`` grows the optimal arm's bonus
    vanishes and the slope tends to ``sum_i c / Delta_i``; at finite ``t``
    that bonus delays the crossing, so the finite-horizon slope is larger.

    Parameters
    ----------
    means : array of float
        Arm means; the largest is the optimal arm (unique).
    c : float
        Constant of the exploration bonus (2 for UCB1, ``alpha / 2`` for
        UCB(alpha)).
    horizon : float
        Right end of the window.
    decades, n_points : float, int
        Width of the window in decades and the number of log-spaced ``t``.

    Returns
    -------
    float

    References
    ----------
    Auer, Cesa-Bianchi & Fischer (2002), "Finite-time analysis of the
    multiarmed bandit problem", proof of Thm 1 (a suboptimal arm is pulled
    only while its index exceeds the optimal arm's); Bubeck & Cesa-Bianchi
    (2012), Thm 2.1 and its proof for UCB(alpha).
    """
    means = np.asarray(means, dtype=float)
    best = float(means.max())
    gaps = best - np.delete(means, int(means.argmax()))
    if np.any(gaps <= 0):
        raise ValueError("means must have a unique largest entry")
    ts = np.geomspace(horizon / 10.0 ** decades, horizon, n_points)
    w = c * np.log(ts)[:, None]

    def pulls(n_star):
        return w / (gaps + np.sqrt(w / n_star[:, None])) ** 2

    # N* solves N* + sum_i N_i(N*) = t; the left side increases in N*, so bisect (every t at once)
    lo, hi = np.full_like(ts, 1e-12), ts.copy()
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        below = mid + pulls(mid).sum(axis=1) < ts
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    regret = pulls(0.5 * (lo + hi)) @ gaps
    return float(np.polyfit(np.log(ts), regret, 1)[0])


# The slopes of UCB1 (c = 2) and UCB(alpha = 3) (c = 3/2) on the nine arms, on the windows of the quick
# (T = 10^4) and full (T = 10^6) runs: the claims take the midpoint and cover both windows.
_UCB1_SLOPES = (index_crossing_slope(_MEANS, 2.0, 1e4), index_crossing_slope(_MEANS, 2.0, 1e6))
_UCBA_SLOPES = (index_crossing_slope(_MEANS, 1.5, 1e4), index_crossing_slope(_MEANS, 1.5, 1e6))

CLAIMS = (
    RateClaim(
        name="bandits.exp3-regret-vs-T",
        quantity="expected pseudo-regret", variable="T", law="power", predicted=0.5, tolerance=0.05,
        source=f"{_BCB}, Thm 3.1 (upper bound sqrt(2TK ln K)) and Thm 3.5 (minimax lower bound)",
        learner="exp3",
        description="EXP3 tuned to T on the minimax instance built for the same T (K = 8, gap sqrt(K/T)): "
                    "eta * gap * T = sqrt(2 ln K) does not depend on T, so the run is the same problem "
                    "rescaled and the regret is proportional to sqrt(KT).",
    ),
    RateClaim(
        name="bandits.exp3-regret-vs-K",
        quantity="expected pseudo-regret", variable="K", law="power", predicted=0.5, tolerance=0.1,
        source=f"{_BCB}, Thm 3.1 and Thm 3.5 (sqrt(KT) up to sqrt(ln K))",
        learner="exp3",
        description="EXP3 tuned to (T, K) on the minimax instance at T = 10^4 for K = 16 ... 128.  With gap "
                    "sqrt(K/T) the best arm is barely identifiable, so the regret is about "
                    "gap * T * (1 - pbar_best) = sqrt(KT) (1 - pbar_best); the share pbar_best of pulls of the "
                    "best arm falls with K, which moves the fitted exponent above 1/2 by a term that vanishes "
                    "as K grows (measured about +0.05 on this range; the tolerance 0.1 allows for it).",
    ),
    RateClaim(
        name="bandits.exp3-fixed-gap-vs-T",
        quantity="expected pseudo-regret", variable="T", law="power_at_most", predicted=0.5, tolerance=0.0,
        source=f"{_BCB}, Thm 3.1 (pseudo-regret at most sqrt(2TK ln K) on every instance, Auer et al. 2002 for "
               "EXP3)",
        learner="exp3",
        description="EXP3 tuned to T on one fixed instance for every T (K = 8: seven Bernoulli(1/2) arms and "
                    "one at 0.8).  The bound sqrt(2TK ln K) holds on every instance, so the regret grows at "
                    "most as sqrt(T).  On the minimax instance of the two claims above every learner's regret "
                    "is at most gap * T = sqrt(KT), so their exponent cannot tell a tuned rate from a wrong "
                    "one; here it can: EXP3 pays about 1/eta rounds of exploration (the time the exponential "
                    "weights need to separate the arms), so the tuned rate meets the bound's exponent "
                    "(measured 0.47), while a rate far too small (eta = 1e-4, near-uniform play: exponent "
                    "0.98) or far too large (eta = 0.5: one loss of weight 1/p sends an arm out for good and "
                    "the learner locks onto whichever arm paid first: exponent 0.89) makes the regret grow "
                    "almost linearly.",
    ),
    RateClaim(
        name="bandits.moss-minimax-vs-T",
        quantity="pseudo-regret", variable="T", law="power", predicted=0.5, tolerance=0.05,
        source="Audibert & Bubeck, COLT 2009 (MOSS: regret O(sqrt(KT)); theorem number not re-checked); "
               f"lower bound {_BCB}, Thm 3.5",
        learner="moss",
        description="MOSS tuned to T on the minimax instance built for the same T (K = 8): pseudo-regret "
                    "proportional to sqrt(KT), without UCB1's sqrt(ln T) factor.",
    ),
    RateClaim(
        name="bandits.moss-log-T-fixed-gap",
        quantity="pseudo-regret added per half decade, R(sqrt(10) T) - R(T)", variable="T",
        law="power_at_most", predicted=0.0, tolerance=0.0, fit_decades=1.0,
        source="Audibert & Bubeck, COLT 2009 (distribution-dependent bound of MOSS, O((K / Delta) "
               "ln(T Delta^2 / K)); theorem number not re-checked)",
        learner="moss",
        description="MOSS tuned to T on one fixed instance for every T (K = 8: seven Bernoulli(1/2) arms and "
                    "one at 0.8), T = 10^3, 10^3.5, ..., a separate run per horizon with the same seeds: regret "
                    "O(ln T) means the regret added over a fixed ratio of horizons does not grow with T, so "
                    "the power-law exponent of the half-decade increment is at most 0 (sqrt(T) regret would "
                    "give 1/2, linear regret 1).  The fit takes the last decade of horizons: the first increments "
                    "are still rising out of the initial exploration (measured with 500 replications: 17.4, "
                    "19.5, 19.8, 21.8, 20.5 from T = 10^3 to 10^5.5, exponent 0.038 [0.019, 0.057] over all of "
                    "them).  The minimax claim above cannot reject a wrong index (on its "
                    "instance every learner's regret is at most sqrt(KT)); this one rejects MOSS told the "
                    "horizon K instead of T (its bonus ln+(T / (K N)) is then zero after one pull: greedy "
                    "play locks onto a suboptimal arm, exponent 0.99).",
    ),
    RateClaim(
        name="bandits.tsallis_inf-minimax-vs-T",
        quantity="expected pseudo-regret", variable="T", law="power", predicted=0.5, tolerance=0.05,
        source="Zimmert & Seldin, JMLR 2021, Thm 1 (adversarial bound 4 sqrt(KT) + 1; theorem number not "
               f"re-checked); lower bound {_BCB}, Thm 3.5",
        learner="tsallis_inf",
        description="1/2-Tsallis-INF (eta_t = 2 / sqrt(t)) on the minimax instance built for each T (K = 8): "
                    "the expected pseudo-regret grows as sqrt(KT), below the 4 sqrt(KT) + 1 bound.",
    ),
    RateClaim(
        name="bandits.tsallis_inf-log-T-fixed-gap",
        quantity="expected pseudo-regret added per half decade, R(sqrt(10) T) - R(T)", variable="T",
        law="power_at_most", predicted=0.0, tolerance=0.1, fit_decades=1.0,
        source="Zimmert & Seldin, JMLR 2021 (best of both worlds: O(sum_i ln T / Delta_i) regret in the "
               "stochastic regime with the same eta_t = 2 / sqrt(t); theorem number not re-checked)",
        learner="tsallis_inf",
        description="1/2-Tsallis-INF on one fixed instance (K = 8: seven Bernoulli(1/2) arms and one at 0.8), "
                    "one anytime run read at T = 10^3, 10^3.5, ...: regret O(ln T) means the regret added "
                    "over a fixed ratio of horizons does not grow with T, so the power-law exponent of the "
                    "half-decade increment is at most 0 (sqrt(T) regret would give 1/2, linear regret 1).  "
                    "At finite T the increments still rise slowly towards their limit (measured with 100 "
                    "replications: 37, 40, 42, 45, 46 per half decade from 10^2.5 to 10^5, local exponents "
                    "0.07, 0.05, 0.05, 0.03; with 500: 41.1, 42.3, 44.1, 44.8, 44.4 from 10^3 to 10^5.5); the "
                    "fit takes the last decade of horizons and the tolerance 0.1 allows the approach at the "
                    "quick size (fitted 0.05 on 10^3 ... 10^4).  "
                    "The minimax claim above cannot reject a wrong learning rate (on its instance every "
                    "learner's regret is at most sqrt(KT)); this one rejects a rate 100 times too small "
                    "(scale 0.02: near-uniform play, exponent 0.99) and 100 times too large (scale 200: "
                    "lock-in, exponent 0.43).",
    ),
    RateClaim(
        name="bandits.etc-exact-regret",
        quantity="pseudo-regret", variable="T", law="value", predicted=etc_expected_regret(0.4, 0.6, 25, 2000),
        tolerance=0.0, level=0.997,
        source="Lattimore & Szepesvári 2020, Ch. 6 (regret decomposition of explore-then-commit); exact "
               "binomial sum",
        learner="explore_then_commit",
        description="Two Bernoulli arms 0.4 and 0.6 (the better one second, so ties commit to the worse), "
                    "m = 25, T = 2000: the Monte Carlo mean pseudo-regret is within three standard errors of "
                    "m Delta + (T - 2m) Delta P(S_0 >= S_1), S_j ~ Bin(m, mu_j).",
    ),
    RateClaim(
        name="bandits.successive_elimination-flat",
        quantity="pseudo-regret", variable="T", law="power", predicted=0.0, tolerance=0.05,
        source="Even-Dar, Mannor & Mansour, JMLR 2006 (sample complexity of successive elimination; "
               "theorem number not re-checked)",
        learner="successive_elimination", fit_decades=1.0,
        description="Nine Bernoulli arms 0.1 ... 0.9, delta = 0.05: every suboptimal arm is eliminated after "
                    "O(ln(K / (delta Delta)) / Delta^2) pulls (the last, Delta = 0.1, after about 10^4 rounds), "
                    "after which the pseudo-regret stays constant: its power-law exponent over [10^4, 10^5] is "
                    "0 up to the last eliminations inside the window (UCB1's is 0.21 there).",
    ),
    RateClaim(
        name="bandits.kl_ucb-lai-robbins",
        quantity="pseudo-regret", variable="T", law="log", predicted=LR_NINE, tolerance=3.0,
        source="Garivier & Cappé, COLT 2011, Thm 2; Lai & Robbins 1985 (the constant of these arms: 7.5165)",
        learner="kl_ucb", fit_decades=1.0,
        description="Nine Bernoulli arms 0.1 ... 0.9: the slope of the mean pseudo-regret against ln T over "
                    "the last decade tends to the Lai-Robbins constant 7.5165.  At finite T the slope sits "
                    "above it and comes down slowly (second-order terms of the finite-time bound: measured "
                    "10.8 on [10^3, 10^4], 9.3 on [10^4, 10^5] and 8.7 on [10^5, 10^6] with 200 replications, "
                    "so the distance to 7.5165 shrinks by decade, 3.3, 1.8, 1.2); the tolerance 3.0 "
                    "(40 %) is that finite-T allowance at the quick horizon.  It still separates KL-UCB "
                    "from UCB1 (slope about 88 here) and from the Gaussian constant sum 2 sigma^2 / Delta "
                    "with sigma^2 = 1/4 (13.6).",
    ),
    RateClaim(
        name="bandits.thompson-lai-robbins",
        quantity="pseudo-regret", variable="T", law="log", predicted=LR_NINE, tolerance=3.0,
        source="Kaufmann, Korda & Munos, ALT 2012, Thm 1; Agrawal & Goyal, AISTATS 2013 (the constant of these arms: "
               "7.5165; finite-T regret of Thompson sampling sits below the asymptote)",
        learner="thompson_sampling", fit_decades=1.0,
        description="Beta-Bernoulli Thompson sampling on the nine arms 0.1 ... 0.9: the late-window slope "
                    "against ln T tends to 7.5165 from below (measured 5.3 on [10^3, 10^4], 6.1 on "
                    "[10^4, 10^5] and 6.8 on [10^5, 10^6] with 200 replications: distances 2.2, 1.5, 0.7); "
                    "the tolerance 3.0 is the same finite-T allowance as for KL-UCB.",
    ),
    RateClaim(
        name="bandits.exp4-regret-vs-T",
        quantity="expected regret against the best expert", variable="T", law="power", predicted=0.5,
        tolerance=0.05,
        source="Bubeck & Cesa-Bianchi 2012, Thm 4.2: Exp4 with eta = sqrt(2 ln N / (T K)) has regret at most "
               "sqrt(2 T K ln N) (Auer et al. 2002 for Exp4; theorem number not re-checked)",
        learner="exp4",
        description="Four contexts, three arms, 32 expert policies (the optimal one and 31 random ones), gap "
                    "0.2, each horizon run with eta tuned to it: both terms of ln N / eta + eta T K / 2 grow "
                    "as sqrt(T), so the regret does (a policy that is not found costs linear regret, a fixed "
                    "rate too small or too large the wrong exponent).",
    ),
    RateClaim(
        name="bandits.ucb1-log-slope",
        quantity="pseudo-regret", variable="T", law="log", predicted=float(np.mean(_UCB1_SLOPES)),
        tolerance=float(np.ptp(_UCB1_SLOPES)) / 2 + 0.05 * float(np.mean(_UCB1_SLOPES)),
        source="Auer, Cesa-Bianchi & Fischer 2002, Thm 1 and its proof (a suboptimal arm is pulled while its "
               "index exceeds the optimal arm's; slope <= sum 8 / Delta_i); the crossing with the true means "
               "gives the limit sum 2 / Delta_i",
        learner="ucb1", fit_decades=1.0,
        description="UCB1 on the nine arms 0.1 ... 0.9: the regret is linear in ln T.  Its slope tends to "
                    "sum 2/Delta_i = 54.4 (the index crossing N_i = 2 ln T / Delta_i^2), but at finite T the "
                    "optimal arm's own bonus sqrt(2 ln t / N*) delays the crossing: solving "
                    "mu_i + sqrt(2 ln t / N_i) = mu* + sqrt(2 ln t / N*), N* = t - sum N_i, with the true means "
                    "(index_crossing_slope) gives the slope 87.0 on [10^3, 10^4] (the quick run) and 76.0 on "
                    "[10^5, 10^6] (the full run).  The claim is their midpoint 81.5; the tolerance is their "
                    "half-difference plus 5 % of the midpoint for the fluctuations the model leaves out.  Theorem 1's "
                    "bound sum 8/Delta_i = 217.4 and the Lai-Robbins constant 7.5 lie far outside, and so "
                    "does a bonus 100 times too small (some of its runs lock onto a suboptimal arm: slope "
                    "137 [119, 156] over 800 replications).",
    ),
    RateClaim(
        name="bandits.ucb_alpha-log-slope",
        quantity="pseudo-regret", variable="T", law="log", predicted=float(np.mean(_UCBA_SLOPES)),
        tolerance=float(np.ptp(_UCBA_SLOPES)) / 2 + 0.05 * float(np.mean(_UCBA_SLOPES)),
        source="Bubeck & Cesa-Bianchi 2012, Thm 2.1 and its proof (slope <= sum 2 alpha / Delta_i); the "
               "crossing with the true means gives the limit sum alpha / (2 Delta_i)",
        learner="ucb_alpha", fit_decades=1.0,
        description="UCB(alpha) with alpha = 3 (bonus sqrt(alpha ln t / (2 N))) on the nine arms 0.1 ... 0.9: "
                    "the regret is linear in ln T with a slope tending to sum 1.5/Delta_i = 40.8; with the "
                    "optimal arm's bonus kept (the finite-T correction of the UCB1 claim, index_crossing_slope "
                    "with c = 1.5) the slope is 65.1 on [10^3, 10^4] and 55.2 on [10^5, 10^6].  The claim is "
                    "their midpoint 60.1, the tolerance their half-difference plus 5 % of the midpoint; the bound "
                    "sum 6/Delta_i = 163.1 lies far outside.",
    ),
)

register_claims(*CLAIMS)
