"""Mutants of the claims on MDP planning and learners (see ``test_mutations.py``).

``MUTANTS`` maps a claim to a deliberately wrong variant that its quick run must reject;
``NO_MUTANT_YET`` names every other claim of the family and why it has none.
"""

# ``Mutant`` is provided by the test module that runs this file

_TODO = "no mutant designed yet"
_UCBVI = ("UCBVI with its bonus scaled by 1e-4 fits slope 0.90, but with 16 replications the bootstrap "
          "interval reaches down to 0.001 (a few runs lock in, the others do not), so the power_at_most check "
          "passes: the quick run has no power against a missing bonus")
_UCRL_VTR = ("UCRL-VTR with its confidence radius scaled by 1e-4 (no optimism) fits slope 0.23 [0, 0.33]: "
             "an upper-bound (power_at_most) claim cannot reject a learner whose regret grows slowly on this "
             "instance")

MUTANTS = {
    "mdp.safe-cost-zero-violations": Mutant(
        "the point estimate of the cost instead of the pessimistic one",
        {"pessimistic": False}),
    "mdp.safe-cost-point-estimate-violates": Mutant(
        "the pessimistic learner in the point estimate's place: no violation to report",
        {"pessimistic": True}),
    "mdp.safe-vtr-zero-unsafe-visits": Mutant(
        "Safe UCRL-VTR without its reachability (pessimistic safe set) test",
        {"reachability": False}),
    "mdp.safe-vtr-ablation-violates": Mutant(
        "the full Safe UCRL-VTR in the ablation's place: no unsafe visit to report",
        {"reachability": True}),
    "mdp.stepmix-zero-violations": Mutant(
        "unconstrained UCBVI in StepMix's place: episode-wise violations of the conservative constraint",
        {"rule": "unconstrained"}, {"n_episodes": 1000}),
    "mdp.epsmix-zero-violations": Mutant(
        "unconstrained UCBVI in EpsMix's place", {"rule": "unconstrained"}),
    "mdp.cumulative-zero-violations": Mutant(
        "unconstrained UCBVI in the cumulative rule's place", {"rule": "unconstrained"}),
}

NO_MUTANT_YET = {
    "mdp.dr-mixture-monotone-chi2": _TODO,
    "mdp.dr-mixture-monotone-kl": _TODO,
    "mdp.dr-mixture-monotone-tv": _TODO,
    "mdp.dr-mixture-vs-rectangular-chi2": _TODO,
    "mdp.dr-mixture-vs-rectangular-kl": _TODO,
    "mdp.dr-mixture-vs-rectangular-tv": _TODO,
    "mdp.dr-ttr-bound-tv": _TODO,
    "mdp.dr-ttr-pessimism-tv": _TODO,
    "mdp.dr-vtr-bound-chi2": _TODO,
    "mdp.dr-vtr-bound-kl": _TODO,
    "mdp.dr-vtr-bound-tv": _TODO,
    "mdp.dr-vtr-pessimism-tv": _TODO,
    "mdp.epsmix-conservative-cost-vs-K": _TODO,
    "mdp.epsmix-regret-vs-K": _TODO,
    "mdp.regularized-optimism-regret-vs-T": _TODO,
    "mdp.rfe-confidence-coverage": _TODO,
    "mdp.rfe-value-error-vs-H": _TODO,
    "mdp.rfe-value-error-vs-K": _TODO,
    "mdp.rfe-value-error-vs-d": _TODO,
    "mdp.robust-monotone-chi2": _TODO,
    "mdp.robust-monotone-kl": _TODO,
    "mdp.robust-monotone-tv": _TODO,
    "mdp.safe-cost-regret-vs-gap": _TODO,
    "mdp.safe-vtr-regret-vs-K": _TODO,
    "mdp.stepmix-conservative-cost-vs-K": _TODO,
    "mdp.stepmix-learned-baseline-zero-violations": _TODO,
    "mdp.stepmix-regret-vs-K": _TODO,
    "mdp.ucbvi-bernstein-regret-vs-K": _UCBVI,
    "mdp.ucbvi-hoeffding-regret-vs-K": _UCBVI,
    "mdp.ucrl-vtr-regret-vs-K": _UCRL_VTR,
    "mdp.uclk-regret-vs-T": _TODO,
    "mdp.ucrl-vtr-plus-regret-vs-K": _TODO,
    "mdp.ucrl-vtr-plus-regret-vs-d": _TODO,
    "mdp.value-iteration-geometric": _TODO,
}
