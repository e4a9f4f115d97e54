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
        name="bandits.moss-minimax-vs-T",
        quantity="pseudo-regret", variable="T", law="power", predicted=0.5, tolerance=0.05,
        source="Audibert & Bubeck, COLT 2009 (MOSS: regret O(sqrt(KT)); theorem number not re-checked); "
               f"lower bound {_BCB}, Thm 3.5",
        learner="moss",
        description="MOSS tuned to T on the minimax instance built for the same T (K = 8): pseudo-regret "
                    "proportional to sqrt(KT), without UCB1's sqrt(ln T) factor.",
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
        quantity="pseudo-regret", variable="T", law="log", predicted=5.0 * _INV_GAPS,
        tolerance=3.0 * _INV_GAPS,
        source="Auer, Cesa-Bianchi & Fischer 2002, Thm 1 (slope <= sum 8 / Delta_i); the index crossing "
               "N_i ~ 2 ln T / Delta_i^2 gives the limit sum 2 / Delta_i",
        learner="ucb1", fit_decades=1.0,
        description="UCB1 on the nine arms 0.1 ... 0.9: the regret is linear in ln T with a slope between "
                    "the limit sum 2/Delta_i = 54.4 of the index crossing and Theorem 1's sum 8/Delta_i = "
                    "217.4 (the claim is the midpoint 135.9 with half-width 81.5), far above the Lai-Robbins "
                    "constant 7.5.",
    ),
    RateClaim(
        name="bandits.ucb_alpha-log-slope",
        quantity="pseudo-regret", variable="T", law="log", predicted=(15.0 / 4.0) * _INV_GAPS,
        tolerance=(9.0 / 4.0) * _INV_GAPS,
        source="Bubeck & Cesa-Bianchi 2012, Thm 2.1 (slope <= sum 2 alpha / Delta_i); the index crossing "
               "N_i ~ alpha ln T / (2 Delta_i^2) gives the limit sum alpha / (2 Delta_i)",
        learner="ucb_alpha", fit_decades=1.0,
        description="UCB(alpha) with alpha = 3 on the nine arms 0.1 ... 0.9: the regret is linear in ln T with "
                    "a slope between the limit sum 1.5/Delta_i = 40.8 of the index crossing and the bound "
                    "sum 6/Delta_i = 163.1 (the claim is the midpoint with its half-width, the same reading "
                    "as the UCB1 claim with alpha = 4).",
    ),
)

register_claims(*CLAIMS)
