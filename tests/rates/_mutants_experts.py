"""Mutants of the claims on full-information experts and their research variants (see ``test_mutations.py``).

``MUTANTS`` maps a claim to a deliberately wrong variant that its quick run must reject;
``NO_MUTANT_YET`` names every other claim of the family and why it has none.
"""

# ``Mutant`` is provided by the test module that runs this file

_TODO = "no mutant designed yet"
_FAIR_COINS = ("fair coins: a learner plays on past losses only and the round's coins are fresh, so every "
               "learner's expected loss is T/2 and its expected regret E[T/2 - min_i L_i] is the same; the claim "
               "checks the instance and no learner can be rejected")

MUTANTS = {
    "hedge.pseudo-regret-vs-lnN": Mutant(
        "Hedge with eta = 0.05 for every N instead of sqrt(8 ln N / T): pseudo-regret ~ ln N / eta, exponent 1",
        {"learner_params": {"eta": 0.05}}, {"n_reps": 40, "n_experts": [4, 16, 64]}),
    # anytime Hedge itself passes the easy-flat claims (regret 4e-9 in exponent with a perfect expert and gap
    # 0.5): they tell an adaptive learner from one that does not learn, not from plain Hedge
    "adahedge.easy-flat": Mutant(
        "Hedge with eta = 1e-4 (hundreds of times too small) in AdaHedge's place: regret grows linearly",
        {"learner": "hedge", "learner_params": {"eta": 1e-4}}, {"n_reps": 50, "horizon": 2000}),
    **{f"{name}.easy-flat": Mutant(
        f"Hedge with eta = 1e-4 (far too small) in {name}'s place: regret grows linearly",
        {"learner": "hedge", "learner_params": {"eta": 1e-4}}, {"n_reps": 50})
       for name in ("squint", "ml_prod", "boa", "adanormalhedge")},
    "ftl.linear-on-alternating": Mutant(
        "anytime Hedge in FTL's place: regret of order sqrt(T), not T, on the alternating sequence",
        {"learner": "hedge"}),
    "ftpl.gumbel-equals-hedge": Mutant(
        "FTPL with exponential perturbations in place of Gumbel ones: not Hedge in disguise (mean difference "
        "-1.51 [-2.20, -0.82] over 1500 replications; Laplace perturbations, 0.16 [-0.29, 0.62] over 4000, are "
        "too close to Hedge here to be told apart)",
        {"learner_params": {"noise": "exponential"}}, {"n_reps": 1500}),
    "fixed_share.tracking-vs-T": Mutant(
        "no sharing (alpha = 0) at a fixed eta = 0.05: Hedge cannot follow the switches, tracking regret ~ T",
        {"learner_params": {"eta": 0.05, "alpha": 0.0}}, {"horizons": [300, 1000, 3000], "n_reps": 40}),
}

NO_MUTANT_YET = {
    "adahedge.hard-sqrt": _FAIR_COINS,
    "experts.dag-known-rate": _TODO,
    "experts.dag-optimistic-regret": _TODO,
    "experts.groupwise-global-linear": _TODO,
    "experts.groupwise-hedge-regret-at-most-sqrt": _TODO,
    "experts.groupwise-regret-at-most-sqrt": _TODO,
    "experts.lomar-robustness": _TODO,
    "experts.memory-adaptive-oblivious-linear": _TODO,
    "experts.memory-adaptive-sublinear": _TODO,
    "experts.memory-regret-vs-S": _TODO,
    "experts.memory-regret-vs-T": _TODO,
    "experts.memory-regret-vs-n": _TODO,
    "experts.memory-state-bytes-vs-S": _TODO,
    "experts.memory-state-bytes-vs-n": _TODO,
    "experts.mentor-multiplicative-regret": _TODO,
    "experts.mentor-no-query-catastrophe": _TODO,
    "experts.mentor-query-rate": _TODO,
    "experts.private-flat-in-T": _TODO,
    "experts.private-inverse-epsilon": _TODO,
    "experts.private-polylog-d": _TODO,
    "experts.private-small-loss-flat-in-T": _TODO,
    "experts.private-small-loss-vs-Lstar": _TODO,
    "hedge.fair-coins-exact": _FAIR_COINS,
    "hedge.regret-vs-T": _FAIR_COINS,
}
