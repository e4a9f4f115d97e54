"""Mutants of the claims on full-information experts and their research variants (see ``test_mutations.py``).

``MUTANTS`` maps a claim to a deliberately wrong variant that its quick run must reject;
``NO_MUTANT_YET`` names every other claim of the family and why it has none.
"""

# ``Mutant`` is provided by the test module that runs this file

_FAIR_COINS = ("fair coins: a learner plays on past losses only and the round's coins are fresh, so every "
               "learner's expected loss is T/2 and its expected regret E[T/2 - min_i L_i] is the same; the claim "
               "checks the instance and no learner can be rejected")

MUTANTS = {
    "hedge.pseudo-regret-vs-lnN": Mutant(
        "Hedge with eta = 0.05 for every N instead of sqrt(8 ln N / T): pseudo-regret ~ ln N / eta, exponent 1",
        {"learner_params": {"eta": 0.05}}, {"n_reps": 40, "n_experts": [4, 16, 64]}),
    # anytime Hedge itself passes adahedge.easy-flat (regret 4e-9 in exponent with a perfect expert and gap
    # 0.5): it tells an adaptive learner from one that does not learn, not from plain Hedge
    "adahedge.easy-flat": Mutant(
        "Hedge with eta = 1e-4 (hundreds of times too small) in AdaHedge's place: regret grows linearly",
        {"learner": "hedge", "learner_params": {"eta": 1e-4}}, {"n_reps": 50, "horizon": 2000}),
    **{f"{name}.easy-flat": Mutant(
        f"Hedge with the worst-case rate sqrt(8 ln N / T), tuned to each horizon, in {name}'s place: "
        "pseudo-regret ln N / eta ~ sqrt(T ln N / 8)",
        {"learner": "hedge", "tuned": True})
       for name in ("squint", "ml_prod", "boa", "adanormalhedge")},
    "hedge.worst-case-tuning-on-easy": Mutant(
        "anytime Hedge (eta_t = sqrt(8 ln N / t)) in place of the rate tuned to the horizon: it adapts to the "
        "gap and its pseudo-regret is flat in T",
        {"tuned": False}),
    **{f"{name}.quantile-flat-in-N": Mutant(
        f"Hedge tuned to (T, N) in {name}'s place: regret eta T / 8 ~ sqrt(T ln N / 8) grows with N",
        {"learner": "hedge", "tuned": True})
       for name in ("squint", "adanormalhedge")},
    "hedge.worst-case-tuning-on-copies": Mutant(
        "Hedge with the rate 0.1 for every N: regret about 0.1 T / 8 whatever N, exponent 0",
        {"tuned": False, "learner_params": {"eta": 0.1}}),
    "experts.memory-state-bytes-vs-S": Mutant(
        "Hedge on all n experts in the pool learner's place: one regret per expert, 8 + 16 n bytes whatever S "
        "(exponent 0 in S)",
        {"learner": "hedge"}),
    "experts.memory-state-bytes-vs-n": Mutant(
        "Hedge on all n experts in the pool learner's place: its state grows linearly in n (exponent 1)",
        {"learner": "hedge"}),
    "experts.memory-regret-vs-S": Mutant(
        "Hedge tuned to T on all n experts (no memory bound) in the pool learner's place: it finds the needle "
        "within ln n / eta rounds whatever S, pseudo-regret flat in S (exponent 0.02)",
        {"learner": "hedge"}),
    "experts.memory-regret-vs-n": Mutant(
        "Hedge tuned to T on all n experts (no memory bound) in the pool learner's place: pseudo-regret "
        "ln n / eta = sqrt(T ln n / 8), exponent 0.12 in n",
        {"learner": "hedge"}),
    "experts.memory-regret-vs-T": Mutant(
        "epoch length fixed at 336 rounds (the one tuned to T = 16000) instead of S T / (6 n): the short runs have "
        "too few epochs to find the needle, exponent about 0",
        {"epoch": 336}),
    "experts.memory-adaptive-oblivious-linear": Mutant(
        "the fresh-cycle learner with a pool of 2 sqrt(n) = 32 in place of the oblivious pool learner: it "
        "replays an expert only after 31 others, so the attack misses it and the regret is sublinear",
        {"learner": "memory_adaptive", "memory": 32}),
    "experts.memory-adaptive-sublinear": Mutant(
        "the fresh-cycle learner with a pool of sqrt(n) = 16 instead of 2 sqrt(n): every expert is replayed "
        "within the 16 punished plays, regret linear",
        {"memory": 16}),
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
    # -- research variants: search on a DAG, groupwise regret, private experts, mentor queries, LOMAR --
    "experts.dag-known-rate": Mutant(
        "the greedy order searched to the end (no optimal stop): rate 0.208 instead of r* = 0.472",
        {"stop": False}, {"n_reps": 200}),
    "experts.dag-optimistic-regret": Mutant(
        "plug-in estimates (bonus 1e-9 instead of 1.5): settles on a suboptimal plan, regret linear in B",
        {"learner_params": {"bonus": 1e-9}}, {"n_reps": 100, "baseline": False}),
    "experts.dag-plugin-linear": Mutant(
        "the optimistic bonus 1.5 in place of the plug-in's 1e-9: regret levels off (exponent 0.04)",
        {"learner_params": {"bonus": 1.5}}),
    "experts.groupwise-regret-at-most-sqrt": Mutant(
        "one global ridge regression in place of the groupwise learner: linear on a group",
        {"learner": "pooled"}, {"compare": False, "n_reps": 16}),
    "experts.groupwise-global-linear": Mutant(
        "the groupwise learner in place of the global one: its worst-group regret grows logarithmically",
        {"learner": "groupwise"}, {"compare": False, "n_reps": 16}),
    "experts.groupwise-hedge-regret-at-most-sqrt": Mutant(
        "one global Hedge over the class in place of the groupwise learner: linear on a group",
        {"learner": "pooled"}, {"compare": False, "n_reps": 16}),
    "experts.groupwise-hedge-global-linear": Mutant(
        "the groupwise learner in place of the global Hedge: its worst-group regret exponent is 0.38",
        {"learner": "groupwise"}, {"n_reps": 16}),
    "experts.private-flat-in-T": Mutant(
        "AboveThreshold threshold 10^6 instead of b2 ln(2TK): the first expert is never dropped, regret linear "
        "in T (a switch budget K = 1 is not a mutant here: the single switch gets all of eps and its "
        "exponential mechanism picks the perfect expert)",
        {"learner_params": {"threshold": 1e6}}, {"baseline_reps": 2}),
    "experts.private-inverse-epsilon": Mutant(
        "AboveThreshold threshold fixed at 100 instead of b2 ln(2TK), which scales as 1/eps: the regret no "
        "longer falls like 1/eps",
        {"learner_params": {"threshold": 100.0}}, {"n_reps": 100}),
    "experts.private-polylog-d": Mutant(
        "one switch per expert (K = d): the noise scale grows with d and so does the regret (exponent 1.03)",
        {"switch_budget": "d"}, {"n_reps": 40, "baseline_reps": 0}),
    "experts.private-switch-per-expert-linear-in-d": Mutant(
        "the default switch budget log2 d + 3 in place of d: polylogarithmic in d (exponent 0.29)",
        {"switch_budget": "log"}),
    "experts.private-small-loss-flat-in-T": Mutant(
        "the realizable learner (no doubling threshold) in place of the small-loss one: regret linear in T",
        {"learner": "realizable"}, {"n_reps": 20, "baseline_reps": 0}),
    "experts.private-realizable-linear-on-small-loss": Mutant(
        "the small-loss learner in place of the realizable one: regret flat in T",
        {"learner": "small_loss"}),
    "experts.mentor-query-rate": Mutant(
        "random queries at a fixed rate p = 0.1 instead of T^(-1/3): the query rate does not vanish",
        {"learner_params": {"query_prob": 0.1}}, {"n_reps": 30}),
    "experts.mentor-multiplicative-regret": Mutant(
        "a support radius fixed at 0.01 instead of T^(-2/3): a mistake costs up to 0.01 however long the run, "
        "the regret grows with T (exponent +0.55)",
        {"learner_params": {"radius": 0.01}}, {"n_reps": 30}),
    "experts.mentor-boundary-regret": Mutant(
        "a support radius fixed at 0.01 instead of T^(-2/3): the regret falls like T^(-0.11)",
        {"learner_params": {"radius": 0.01}}),
    "experts.mentor-no-query-catastrophe": Mutant(
        "queries allowed (the learner that asks): its catastrophe frequency is near 0, not above 0.99",
        {"allow_queries": True}),
    "experts.lomar-robustness": Mutant(
        "the switching test run at 0.9 rho while rho is checked: the spoiler drives the slack to -0.10",
        {"rho_scale": 0.9}, {"proposers": ["spoiler"], "n_reps": 100}),
}

NO_MUTANT_YET = {
    "adahedge.hard-sqrt": _FAIR_COINS,
    "experts.private-small-loss-vs-Lstar": (
        "an upper bound on the exponent in L* fails only when the regret grows faster than L*, and no variant "
        "does so on this instance: every learner's regret is at most T, the realizable learner's falls with L* "
        "(it is about (T - L*)/2), and a badly scaled doubling threshold (threshold=1: tiny per-phase budgets in "
        "the late phases) has regret about 2000 at every L* (fitted exponent 0.02 [-0.15, 0.20], 20 reps); "
        "experts.private-realizable-linear-on-small-loss carries the mutant of this pair"),
    "hedge.fair-coins-exact": _FAIR_COINS,
    "hedge.regret-vs-T": _FAIR_COINS,
}
