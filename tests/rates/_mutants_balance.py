"""Mutants of the claims on load balancing (see ``test_mutations.py``).

``MUTANTS`` maps a claim to a deliberately wrong variant that its quick run must reject;
``NO_MUTANT_YET`` names every other claim of the family and why it has none.
"""

# ``Mutant`` is provided by the test module that runs this file

_TODO = "no mutant designed yet"

MUTANTS = {
}

NO_MUTANT_YET = {
    "balance.bias-to-lp-prices": _TODO,
    "balance.capacity-drop-closed-form": _TODO,
    "balance.constant-step-linear-regret": _TODO,
    "balance.decaying-reaches-lp-optimum": _TODO,
    "balance.expert-choice-unrouted": _TODO,
    "balance.maxvio-linear-in-step": _TODO,
    "balance.maxvio-linear-in-step-many-experts": _TODO,
    "balance.maxvio-sampling-floor": _TODO,
    "balance.monotone-step-vs-gap": _TODO,
    "balance.online-regret-log": _TODO,
}
