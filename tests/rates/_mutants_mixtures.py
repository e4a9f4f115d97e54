"""Mutants of the claims on mixture-model estimators (see ``test_mutations.py``).

``MUTANTS`` maps a claim to a deliberately wrong variant that its quick run must reject;
``NO_MUTANT_YET`` names every other claim of the family and why it has none.
"""

# ``Mutant`` is provided by the test module that runs this file

_TODO = "no mutant designed yet"

MUTANTS = {
    "mixtures.gmm-mle-error-vs-n": Mutant(
        "EM stopped after one iteration: the estimate keeps its initialisation error, slope about 0",
        {"max_iter": 1}),
}

NO_MUTANT_YET = {
    "mixtures.cluster.moe-recovers-every-cluster": _TODO,
    "mixtures.cluster.single-network-misses-direction": _TODO,
    "mixtures.contaminated-moe.distinguishable.beta-vs-n": _TODO,
    "mixtures.contaminated-moe.distinguishable.eta-vs-n": _TODO,
    "mixtures.contaminated-moe.distinguishable.exp-tau-vs-n": _TODO,
    "mixtures.contaminated-moe.distinguishable.nu-vs-n": _TODO,
    "mixtures.contaminated-moe.non-distinguishable-eta.beta-over-fisher-vs-n": _TODO,
    "mixtures.contaminated-moe.non-distinguishable-eta.beta-vs-n": _TODO,
    "mixtures.contaminated-moe.non-distinguishable-eta.eta-over-fisher-vs-n": _TODO,
    "mixtures.contaminated-moe.non-distinguishable-eta.eta-vs-n": _TODO,
    "mixtures.contaminated-moe.non-distinguishable-eta.exp-tau-over-fisher-vs-n": _TODO,
    "mixtures.contaminated-moe.non-distinguishable-eta.exp-tau-vs-n": _TODO,
    "mixtures.contaminated-moe.non-distinguishable-eta.nu-over-fisher-vs-n": _TODO,
    "mixtures.contaminated-moe.non-distinguishable-eta.nu-vs-n": _TODO,
    "mixtures.poly-experts.u-shape-in-m": _TODO,
    "mixtures.poly-experts.well-specified-kl-vs-n": _TODO,
    "mixtures.shapley-mse-vs-budget": _TODO,
    "mixtures.softmax-moe.exact-fit-voronoi-d1-vs-n": _TODO,
    "mixtures.ssme-accuracy-error-vs-n-unlabeled": _TODO,
}
