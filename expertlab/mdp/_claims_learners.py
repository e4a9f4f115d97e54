"""Rate claims of the episodic learners (UCBVI, UCRL-VTR, UCRL-VTR+).

Each claim names its learner and its source; ``simulations/mdp/ucbvi.py`` and
``simulations/mdp/ucrl_vtr.py`` hold the seeded experiments that check them.
"""

from __future__ import annotations

import math

from ..sim._rates import RateClaim, register_claims

_LOG_SLOPE = ("The learner fixes L = ln(5 S A T / delta) from the planned number of episodes, so along one run the "
              "bound has the form c1 sqrt(k) + c2 (c2 collects the lower-order H^2 S^2 A L^2 terms), whose "
              "log-log slope never exceeds 1/2; hence no tolerance beyond the bootstrap interval.")

CLAIMS = (
    RateClaim(
        name="mdp.ucbvi-bernstein-regret-vs-K",
        quantity="expected regret of UCBVI-BF (paper constants)", variable="episodes K", law="power_at_most",
        predicted=0.5, tolerance=0.0,
        source="Azar, Osband & Munos 2017, Thm 2 (UCBVI with the Bernstein-Freedman bonus: regret "
               "O~(sqrt(H S A T)), T = K H)",
        learner="ucbvi", fit_decades=1.0, sharpened_by=("mdp.ucbvi-minimax-regret-vs-K",),
        description="UCBVI with the Bernstein-Freedman bonus at the paper's constants (bonus_scale = 1, "
                    "delta = 0.1, stage-dependent counts) on a 3-state, 2-action Garnet kernel repeated over "
                    "H = 3 stages; the exact expected regret (policy evaluation with the true model) is fitted "
                    "over the last decade of episodes. The theorem is an upper bound, so the claim is that the "
                    "exponent is at most 1/2. " + _LOG_SLOPE,
    ),
    RateClaim(
        name="mdp.ucbvi-hoeffding-regret-vs-K",
        quantity="expected regret of UCBVI-CH with bonus H / sqrt(n)", variable="episodes K",
        law="power_at_most", predicted=0.5, tolerance=0.0,
        source="Azar, Osband & Munos 2017, Thm 1 (UCBVI with the Hoeffding bonus: regret O~(H sqrt(S A T)))",
        learner="ucbvi", fit_decades=1.0, sharpened_by=("mdp.ucbvi-minimax-regret-vs-K",),
        description="UCBVI with the Hoeffding bonus scaled by 1 / (7 L), i.e. b = H / sqrt(n): the paper's "
                    "constant 7 H L keeps every Q clipped at H - h until n exceeds (7 L)^2, about 10^4 visits "
                    "per pair, which no feasible run reaches on a tiny MDP (the regret is then linear, within "
                    "the bound but uninformative). Same instance and fit as the Bernstein claim; the claim is "
                    "that the exponent is at most 1/2. " + _LOG_SLOPE,
    ),
    RateClaim(
        name="mdp.ucbvi-minimax-regret-vs-K",
        quantity="expected regret of UCBVI-CH (bonus H / sqrt(n)) after K episodes, instance rebuilt per K",
        variable="episodes K", law="power", predicted=0.5, tolerance=0.0,
        source="Jaksch, Ortner & Auer 2010, Thm 5 (lower-bound construction: actions whose chance of reaching "
               "the rewarding state differs by epsilon ~ sqrt(S A / T)), the Omega(sqrt(H S A T)) bound that "
               "Azar, Osband & Munos 2017 match with Thm 1 and Thm 2",
        learner="ucbvi",
        description="The two-point construction (mdp.instances.two_point_lower_bound): from the start state each of "
                    "A = 4 actions reaches a rewarding absorbing state (reward 1 at each of the H - 1 = 2 later "
                    "stages) with probability 1/2, the last action with probability 1/2 + eps_K, "
                    "eps_K = 0.1 / sqrt(K), rebuilt for each K in 250, 500, 1000, 2000. UCBVI-CH as in the "
                    "Garnet claim (bonus H / sqrt(n), delta = 0.1, stage-dependent counts); exact expected "
                    "regret after K episodes. The regret is (H - 1) eps_K K f, f the fraction of episodes that "
                    "start with another action, and with eps_K sqrt(K) = 0.1 the K observations carry too little "
                    "information to find the better action, so f stays near 1 - 1/A whatever K (first order in "
                    "eps_K sqrt(K): the corrections to f are O(0.1)); the regret then grows like sqrt(K): the "
                    "sqrt(K) of the upper-bound claims cannot be improved, and the log-log slope is 1/2, with no "
                    "tolerance beyond the bootstrap interval. An instance whose gap does not shrink with K (the "
                    "Garnet claims') gives a smaller slope.",
    ),
)

_ELLIPTIC = ("The bound comes from the elliptical-potential lemma, sqrt(d k H ln(1 + k H^3 d / lambda)) for fixed "
             "radius: the log-log slope of sqrt(k ln(1 + c k)) is 1/2 + 1/(2 ln(1 + c k)), at most 0.05 above 1/2 for "
             "k >= 400 with c = H^3 d = 256 (true on the fit window), hence the tolerance 0.05.")

CLAIMS += (
    RateClaim(
        name="mdp.ucrl-vtr-regret-vs-K",
        quantity="expected regret of UCRL-VTR", variable="episodes K", law="power_at_most",
        predicted=0.5, tolerance=0.05,
        source="Ayoub, Jia, Szepesvari, Wang & Yang 2020, Thm 1 (UCRL-VTR: regret O~(d sqrt(H^3 T)))",
        learner="ucrl_vtr", fit_decades=1.0,
        description="UCRL-VTR (radius of Abbasi-Yadkori et al. 2011, beta_scale = 1) on the hard linear-mixture "
                    "instance with d = 4 (two action coordinates, 4 actions), H = 4 and a fixed gap "
                    "Delta = 1/(2 H m) (half the largest allowed); exact expected regret fitted over the last "
                    "decade; the theorem is an upper bound, so the claim is that the exponent is at most 1/2. "
                    + _ELLIPTIC,
    ),
    RateClaim(
        name="mdp.ucrl-vtr-plus-regret-vs-K",
        quantity="expected regret of UCRL-VTR+ (radii scaled by 1/(8 sqrt(ln(1 + K) iota)))",
        variable="episodes K", law="power_at_most", predicted=0.5, tolerance=0.05,
        source="Zhou, Gu & Szepesvari 2021, Thm 5.1 (UCRL-VTR+: regret O~(d H sqrt(T)))",
        learner="ucrl_vtr_plus", fit_decades=1.0,
        description="UCRL-VTR+ on the same instance as the UCRL-VTR claim, its three radii multiplied by "
                    "1/(8 sqrt(ln(1 + K) iota)), iota = ln(4 K^2 / delta), so that the leading term of the value "
                    "radius is sqrt(d): with the paper's constants the weighted bonus exceeds H - h at every pair "
                    "until about 10^4 samples and the regret is linear on any feasible run (within the bound but "
                    "uninformative). The claim is that the exponent is at most 1/2. " + _ELLIPTIC,
    ),
    RateClaim(
        name="mdp.ucrl-vtr-plus-regret-vs-d",
        quantity="expected regret of UCRL-VTR+ after K episodes on the hard instance",
        variable="dimension d", law="power_at_least", predicted=1.0, tolerance=0.0,
        source="Zhou, Gu & Szepesvari 2021, Thm 5.6 (lower bound Omega(d H sqrt(T)) on the hard instance)",
        learner="ucrl_vtr_plus",
        description="UCRL-VTR+ (radii scaled as in the regret-vs-K claim) on the hard instance with the paper's "
                    "gap Delta = sqrt(delta / K) / (4 sqrt 2), delta = 1/H, for d = 2, 4, 6, 8 at a fixed K. "
                    "The lower bound says the regret grows at least linearly in d, for every learner; the claim "
                    "is that the log-log slope of the mean regret in d is at least 1. The lower bound has no "
                    "logarithmic factor, hence no tolerance.  It checks the instance (that its difficulty grows "
                    "with d as the construction says), not the learner: no learner can pass below it.  At the "
                    "quick K = 1500 the slope is above 1 (about 1.3; 1.2 at K = 6000): at a fixed K the "
                    "learner's burn-in grows with d, so the matching upper bound O~(d H sqrt(T)) is not yet "
                    "attained in d at these sizes.",
    ),
)

_TRAP = ("greedy_trap_mixture(p_good=0.9, stay_reward=0.3) played over H = 4 stages from state 0 (3 states, 2 "
         "actions, d = 2: staying earns 0.3 and is equally likely under both base kernels; the other action earns "
         "0 and reaches the paying state with probability p = 0.9; the best plan, move-collect-move-collect, is "
         "worth 2p = 1.8 against 4 x 0.3 = 1.2 for staying); exact expected regret fitted over the last decade")
# slope of sqrt(k ln(1 + c k)) with c = H^3 d = 128 at k = 100, the left end of the quick fit window
_TRAP_TOL = round(1.0 / (2.0 * math.log(1.0 + 128 * 100)), 4)

CLAIMS += (
    RateClaim(
        name="mdp.ucrl-vtr-trap-regret-vs-K",
        quantity="expected regret of UCRL-VTR on the greedy trap", variable="episodes K", law="power_at_most",
        predicted=0.5, tolerance=_TRAP_TOL,
        source="Ayoub, Jia, Szepesvari, Wang & Yang 2020, Thm 1 (UCRL-VTR: regret O~(d sqrt(H^3 T)))",
        learner="ucrl_vtr", fit_decades=1.0, sharpened_by=("mdp.ucrl-vtr-greedy-regret-linear",),
        description="UCRL-VTR (beta_scale = 1, delta = 0.1) on " + _TRAP + ". The theorem is an upper bound, so "
                    "the claim is that the exponent is at most 1/2; here the optimistic learner tries the moving "
                    "action, learns theta_1 - theta_2 and its regret stops growing, while the same learner "
                    "without optimism pays a constant regret per episode (mdp.ucrl-vtr-greedy-regret-linear): "
                    "unlike the hard instance, this one rejects a learner whose confidence radius is too small. "
                    f"Tolerance {_TRAP_TOL}: the slope of sqrt(k ln(1 + c k)), c = H^3 d = 128, exceeds 1/2 by "
                    "1 / (2 ln(1 + c k)), at most that for k >= 100 (the quick fit window).",
    ),
    RateClaim(
        name="mdp.ucrl-vtr-greedy-regret-linear",
        quantity="expected regret of UCRL-VTR with its radius multiplied by 1e-4 (no optimism)",
        variable="episodes K", law="power", predicted=1.0, tolerance=0.02,
        source="Ayoub, Jia, Szepesvari, Wang & Yang 2020, Sec. 4 (UCRL-VTR plans with the upper confidence "
               "value; without it the learner is greedy in its estimate)",
        learner="ucrl_vtr", fit_decades=1.0,
        description="The learner of mdp.ucrl-vtr-trap-regret-vs-K with its radius multiplied by 1e-4 on the same "
                    "instance, " + _TRAP + ". Started at theta_hat = 0 it stays (0.3 per stage against an "
                    "estimated 0 for moving); staying carries information only on theta_1 + theta_2, so theta_hat "
                    "tends to (1/2, 1/2), under which moving is worth 2 x 1/2 = 1 < 1.2, and the plan never "
                    "changes: a regret of 0.6 per episode from the first episode on, exponent 1. The tolerance "
                    "0.02 covers the first episodes. Rejects the sound learner (radius factor 1), whose regret "
                    "stops growing.",
    ),
)

register_claims(*CLAIMS)
