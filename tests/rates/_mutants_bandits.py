"""Mutants of the claims on bandits and pure exploration (see ``test_mutations.py``).

``MUTANTS`` maps a claim to a deliberately wrong variant that its quick run must reject;
``NO_MUTANT_YET`` names every other claim of the family and why it has none.
"""

# ``Mutant`` is provided by the test module that runs this file

_TODO = "no mutant designed yet"
_MINIMAX = ("minimax instance rebuilt per T (or K): the gap sqrt(K/T) makes every learner's pseudo-regret "
            "sqrt(KT) times its share of suboptimal pulls, so the exponent is 1/2 for a uniform learner too; "
            "measured: EXP3 with a constant eta = 0.5 fits 0.522 (vs T) and 0.532 (vs K), Tsallis-INF with "
            "scale 0.02 fits 0.500 -- all pass")

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
}

NO_MUTANT_YET = {
    "bandits.active-ranking-dense-gap": _TODO,
    "bandits.active-ranking-exact": _TODO,
    "bandits.active-ranking-one-task-gap": _TODO,
    "bandits.active-ranking-queries-vs-log-delta": _TODO,
    "bandits.best-expert-correct": _TODO,
    "bandits.best-expert-flat-in-cluster-gap": _TODO,
    "bandits.best-expert-sequential-vs-cluster-gap": _TODO,
    "bandits.best-expert-vs-gap": _TODO,
    "bandits.exp3-regret-vs-K": _MINIMAX,
    "bandits.exp3-regret-vs-T": _MINIMAX,
    "bandits.exp4-linear-vs-oracle": _TODO,
    "bandits.exp4-regret-vs-T": _TODO,
    "bandits.expertise_trees-regret-vs-T": _TODO,
    "bandits.global_thompson-linear-vs-oracle": _TODO,
    "bandits.linfact-exact-set": _TODO,
    "bandits.linfact-samples-vs-log-delta": _TODO,
    "bandits.linfact-vs-unstructured": _TODO,
    "bandits.moss-minimax-vs-T": _MINIMAX,
    "bandits.pascombucb-regret-log-T": _TODO,
    "bandits.tsallis_inf-minimax-vs-T": _MINIMAX,
}
