"""Mutants of the claims on bandits and pure exploration (see ``test_mutations.py``).

``MUTANTS`` maps a claim to a deliberately wrong variant that its quick run must reject;
``NO_MUTANT_YET`` names every other claim of the family and why it has none.
"""

# ``Mutant`` is provided by the test module that runs this file

_MINIMAX = ("minimax instance rebuilt per T (or K): the gap sqrt(K/T) caps every learner's pseudo-regret at "
            "gap * T = sqrt(KT), and it is sqrt(KT) times the learner's share of suboptimal pulls, so the exponent "
            "is 1/2 for a uniform learner too; measured: EXP3 with a constant eta = 0.5 fits 0.522 (vs T) and "
            "0.532 (vs K), Tsallis-INF with scale 0.02 fits 0.500 -- all pass.  No constant can reject either: "
            "every bound of the theorems is at least sqrt(KT).  The wrong rates are rejected on a fixed instance "
            "by the companion claim ")
_CONSERVATIVE = ("the confidence bounds (union bounds over rounds and comparisons) are so conservative that no "
                 "mis-set confidence level fails the 1 - delta frequency at this size: measured at seed 0, ")

MUTANTS = {
    "bandits.kl_ucb-lai-robbins": Mutant(
        "UCB1 in KL-UCB's place: slope about 87, an order above the Lai-Robbins constant 7.5",
        {"learner": "ucb1"}),
    "bandits.thompson-lai-robbins": Mutant(
        "Thompson sampling with the wrong prior Beta(1, 100): early lock-in, slope far above 7.5",
        {"learner_params": {"prior": (1.0, 100.0)}}, {"n_reps": 20, "horizon": 3000}),
    # the lock-in of a bonus too small is rare (the best arm's first draws are zeros), so these two mutants
    # run 800 replications: with 200 (the claim's own) the slope of UCB1 x 0.01 is 105 [77, 140], inside
    "bandits.ucb1-log-slope": Mutant(
        "UCB1 with its exploration bonus x 0.01 (c = 2e-4 for 2): some runs lock onto a suboptimal arm",
        {"learner_params": {"c": 2e-4}}, {"n_reps": 800}),
    "bandits.ucb_alpha-log-slope": Mutant(
        "UCB(alpha) with its bonus x 0.01 (UCB1 with c = 1.5e-4 for alpha / 2 = 1.5)",
        {"learner": "ucb1", "learner_params": {"c": 1.5e-4}}, {"n_reps": 800}),
    "bandits.etc-exact-regret": Mutant(
        "explore-then-commit exploring 20 pulls per arm where the exact value is for 25 (54.87, not 43.14)",
        {"learner_params": {"m": 20}}),
    "bandits.successive_elimination-flat": Mutant(
        "UCB1 in successive elimination's place: it never stops exploring, regret grows like ln T",
        {"learner": "ucb1", "learner_params": {}}, {"n_reps": 50}),
    # safety and constraints
    "bandits.pascombucb-anytime-safe": Mutant(
        "CUCB (optimistic in the cost) in PASCombUCB's place: it violates the budget",
        {"learner": "cucb"}, {"n_reps": 60, "horizon": 2000}),
    "bandits.cucb-violates": Mutant(
        "PASCombUCB in CUCB's place: the sound algorithm must not be reported as violating",
        {"learner": "pascombucb"}),
    # the minimax trio's companions: one fixed instance (seven arms at 1/2, one at 0.8) where a wrong rate is linear
    "bandits.exp3-fixed-gap-vs-T": Mutant(
        "EXP3 with a constant eta = 0.5, far too large: one loss of weight 1/p sends an arm out for good and "
        "the learner locks onto the arm that paid first (exponent 0.89; eta = 1e-4, near-uniform play, 0.98)",
        {"learner_params": {"eta": 0.5}}),
    "bandits.moss-log-T-fixed-gap": Mutant(
        "MOSS told the horizon K = 8 instead of T: its bonus ln+(T / (K N)) vanishes after one pull and greedy "
        "play locks onto a suboptimal arm (increment exponent 0.99)",
        {"learner_params": {"horizon": 8}}),
    "bandits.tsallis_inf-log-T-fixed-gap": Mutant(
        "Tsallis-INF with a learning rate 100 times too small (scale 0.02): near-uniform play, increment "
        "exponent 0.99 (scale 200, 100 times too large, fits 0.43 [0.37, 0.51] and fails too)",
        {"learner_params": {"scale": 0.02}}),
    "bandits.exp4-regret-vs-T": Mutant(
        "Exp4 with a constant eta = 0.5 instead of sqrt(2 ln N / (T K)): lock-in on the first experts that "
        "pay, regret almost linear (0.89; eta = 1e-4, near-uniform weights, fits 0.98)",
        {"learner_params": {"eta": 0.5}}, {"horizons": [1000, 3000, 10_000, 30_000]}),
    # expertise trees and the context-blind baselines: each claim rejects the other kind of learner
    "bandits.expertise_trees-regret-vs-T": Mutant(
        "global Thompson sampling (context-blind) in the trees' place: exactly linear regret",
        {"learner": "global_thompson"}, {"horizon": 10_000}),
    "bandits.global_thompson-linear-vs-oracle": Mutant(
        "expertise trees (which use the context) in global Thompson sampling's place: the exactly linear "
        "prediction must not hold for a learner that learns the cells",
        {"learner": "expertise_trees"}),
    "bandits.exp4-linear-vs-oracle": Mutant(
        "expertise trees in Exp4's place: the claim's exact linearity comes from Exp4 ignoring the context "
        "and must not hold for a learner that uses it (no setting of Exp4 itself can change gap (3/4) T)",
        {"learner": "expertise_trees"}, {"n_reps": 20}),
    # pure exploration
    "bandits.active-ranking-one-task-gap": Mutant(
        "the non-adaptive schedule that sweeps every task equally: queries grow as d^2 (exponent 2.03)",
        {"schedule": "uniform"}),
    "bandits.best-expert-flat-in-cluster-gap": Mutant(
        "the sequential champion search in the capped search's place: queries grow as eta^-2 (exponent -2.03)",
        {"methods": {"doubling": "sequential"}}),
    "bandits.best-expert-sequential-vs-cluster-gap": Mutant(
        "the capped (doubling) search in the sequential search's place: flat in eta (exponent -0.01)",
        {"methods": {"sequential": "doubling"}}),
    "bandits.linfact-vs-unstructured": Mutant(
        "the unstructured elimination in LinFACT's place: the ratio is 1 at every K (exponent 0)",
        {"learner": "unstructured"}),
}

NO_MUTANT_YET = {
    "bandits.active-ranking-dense-gap": (
        "every schedule of the comparisons needs gap^-2 queries when every task carries the gap: the "
        "non-adaptive sweep (the one wrong variant the API offers) fits -2.07 [-2.09, -2.05], as the "
        "adaptive schedule (-2.06); a mis-set delta moves only the ln(1/delta) factor, not the exponent"),
    "bandits.active-ranking-exact": _CONSERVATIVE + (
        "delta = 0.9 still ranks exactly in 95.8% of 400 runs and delta = 0.999 in 94.5% (lower bounds "
        "0.937 and 0.922 >= 0.9); only a run that stops without an answer fails"),
    "bandits.active-ranking-queries-vs-log-delta": (
        "the queries of every comparison schedule grow linearly in ln(1/delta) (the stopping threshold is "
        "linear in it): the non-adaptive sweep fits 0.995 [0.969, 1.022], as the adaptive one (0.998)"),
    "bandits.best-expert-correct": _CONSERVATIVE + (
        "delta = 0.999 still returns the best expert in 400 runs of 400 (the comparisons with the best, "
        "0.2 above on every task, are decided far beyond their threshold)"),
    "bandits.best-expert-vs-gap": (
        "the sequential search in the capped search's place would be flat in Delta (exponent -0.003 with the "
        "others 0.01 apart), but on the claim's instance (the others 0.001 apart) it does not finish "
        "correctly (1 miss in 200 runs at Delta = 0.4), which the measurement refuses (RuntimeError) "
        "instead of fitting"),
    "bandits.exp3-regret-vs-K": _MINIMAX + "bandits.exp3-fixed-gap-vs-T",
    "bandits.exp3-regret-vs-T": _MINIMAX + "bandits.exp3-fixed-gap-vs-T",
    "bandits.linfact-exact-set": _CONSERVATIVE + (
        "delta = 0.999 still returns the exact eps-good set in 200 runs of 200"),
    "bandits.linfact-samples-vs-log-delta": (
        "every phased elimination sizes its phases by ln(1/delta_r), so the sample count of any of them "
        "(the unstructured baseline included) grows linearly in ln(1/delta); the claim checks that "
        "dependence, not the structure"),
    "bandits.moss-minimax-vs-T": _MINIMAX + "bandits.moss-log-T-fixed-gap",
    "bandits.pascombucb-regret-log-T": (
        "at budget 0.751 the unconstrained CUCB also has logarithmic regret (increment exponent -0.097 "
        "[-0.143, -0.054], passes), and PASCombUCB has no setting that removes its optimism; the budget where "
        "the safe and the unsafe optimum differ (0.6) is still in its linear certification stage up to "
        "T = 10^6 (see the claim)"),
    "bandits.tsallis_inf-minimax-vs-T": _MINIMAX + "bandits.tsallis_inf-log-T-fixed-gap",
}
