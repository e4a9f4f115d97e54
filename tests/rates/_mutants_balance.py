"""Mutants of the claims on load balancing (see ``test_mutations.py``).

``MUTANTS`` maps a claim to a deliberately wrong variant that its quick run must reject;
``NO_MUTANT_YET`` names every other claim of the family and why it has none.
"""

# ``Mutant`` is provided by the test module that runs this file

MUTANTS = {
    "balance.maxvio-sampling-floor": Mutant(
        "a step that does not vanish (sign rule, u = 0.05, from the optimal bias): the bias jitters around the "
        "optimum and leaves an imbalance that does not shrink with N (exponent -0.41 [-0.416, -0.405])",
        {"step": 0.05}),
    "balance.online-regret-log": Mutant(
        "a constant step (magnitude rule, u = 0.05) in place of a/t: the regret keeps growing (exponent 0.17 "
        "over the last 1.5 decades of T = 3000)",
        {"rule": "magnitude", "a": 0.05}),
    # a small constant step (0.05) also stops inside the optimal dual set on these problems (the capacities
    # are integers, so the set has an interior): relative gap 9e-8 [-7e-8, 3e-7], accepted
    "balance.decaying-reaches-lp-optimum": Mutant(
        "a constant step a = 1 (magnitude rule) in place of a/t: the bias keeps cycling and the final dual "
        "value misses the LP optimum by 3e-4",
        {"rule": "magnitude", "a": 1.0}),
    "balance.bias-to-lp-prices": Mutant(
        "a constant step (magnitude rule, u = 0.05) in place of a/t: the distance to the prices stops "
        "shrinking (exponent -0.12 instead of -1)",
        {"rule": "magnitude", "a": 0.05}),
    "balance.maxvio-linear-in-step": Mutant(
        "the magnitude rule with the same constant step in place of the sign rule: its moves shrink with the "
        "imbalance, so the stationary MaxVio is not linear in u (exponent -0.77)",
        {"rule": "magnitude"}),
    "balance.maxvio-linear-in-step-many-experts": Mutant(
        "the magnitude rule with the same constant step in place of the sign rule: its moves shrink with the "
        "imbalance, so the stationary MaxVio is not linear in u",
        {"rule": "magnitude"}),
    # the bisection bracket [w/4, 8w] is proportional to w, so only a variant whose threshold moves inside it
    # can be seen; the off-by-one capacity does
    "balance.monotone-step-vs-gap": Mutant(
        "capacities off by one (N/2 + 1 for both experts): the sign rule stops anywhere on the wider set of "
        "splits with loads within one token of N/2, whose width does not scale with the planted gap "
        "(exponent 0.82 [0.78, 0.86])",
        {"capacity_offset": 1}),
    "balance.constant-step-linear-regret": Mutant(
        "decaying steps 1/t in place of the constant step: the regret grows like log T (exponent 0.11)",
        {"rule": "decaying", "step": 1.0}),
    "balance.capacity-drop-closed-form": Mutant(
        "a capacity off by one (floor(gamma N K / E) + 1): the drop policy drops fewer tokens than the "
        "closed form (-0.0069 [-0.0087, -0.0051] at gamma = 1)",
        {"capacity_offset": 1}),
    "balance.expert-choice-unrouted": Mutant(
        "expert capacity off by one (NK/E + 1): fewer tokens are left unrouted than (1 - K/E)^E "
        "(-0.0037 [-0.0061, -0.0014] at N = 256)",
        {"capacity_offset": 1}, {"n_compare": 1}),
}

NO_MUTANT_YET = {
}
