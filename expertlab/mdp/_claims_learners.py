"""Rate claims of the episodic learners (UCBVI, UCRL-VTR, UCRL-VTR+).

Each claim names its learner and its source; ``simulations/mdp/ucbvi.py`` and
``simulations/mdp/ucrl_vtr.py`` hold the seeded experiments that check them.
"""

from __future__ import annotations

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
        description="The two-point construction (two_point_mdp in the simulation): from the start state each of "
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
        quantity="1 / expected regret of UCRL-VTR+ after K episodes on the hard instance",
        variable="dimension d", law="power_at_most", predicted=-1.0, tolerance=0.0,
        source="Zhou, Gu & Szepesvari 2021, Thm 5.6 (lower bound Omega(d H sqrt(T)) on the hard instance)",
        learner="ucrl_vtr_plus",
        description="UCRL-VTR+ (radii scaled as in the regret-vs-K claim) on the hard instance with the paper's "
                    "gap Delta = sqrt(delta / K) / (4 sqrt 2), delta = 1/H, for d = 2, 4, 6, 8 at a fixed K. "
                    "The lower bound says the regret grows at least linearly in d; the claim checks it as: the "
                    "log-log slope of the mean of 1/regret in d is at most -1. The lower bound has no logarithmic "
                    "factor, hence no tolerance.",
    ),
)

register_claims(*CLAIMS)
