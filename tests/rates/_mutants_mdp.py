"""Mutants of the claims on MDP planning and learners (see ``test_mutations.py``).

``MUTANTS`` maps a claim to a deliberately wrong variant that its quick run must reject;
``NO_MUTANT_YET`` names every other claim of the family and why it has none.
"""

# ``Mutant`` is provided by the test module that runs this file

_MINIMAX = ("every learner's regret on the lower-bound construction is (H - 1) eps_K K f with f the fraction of "
            "episodes started with a worse action; with eps_K sqrt(K) = 0.1 no learner can find the better action "
            "(the lower-bound argument) and f <= 1, so every learner fits 1/2: UCBVI with its bonus scaled by "
            "1e-4 fits 0.494 [0.477, 0.503] (f = 0.71), the sound one 0.506 [0.487, 0.524] over 96 replications "
            "(f = 0.73); the claim checks the instance, the algorithm is checked by the Garnet claims' mutants")
_MINIMAX_CONSERVATIVE = ("as for UCBVI on the same construction: the regret is (H - 1) eps_K (0.8 K) f and f stays "
                         "near 3/4 for the optimistic policy, the uniform baseline and every mixture; StepMix at "
                         "alpha = 0.3, which then plays the uniform baseline in every episode up to K = 1000, "
                         "gives f = 0.750 at each K")
_MINIMAX_STREAM = ("the regret on the two-point linear mixture is eps_T times a factor bounded by the largest "
                   "value gap of a wrong action, and with eps_T sqrt(T) = 0.1 no learner can raise or lower that "
                   "factor by learning: every learner, a uniform one included, fits 1/2; the algorithm is checked "
                   "by the step-size mutant of the regret-vs-T claim")
_SAFE_GAP = ("the point-estimate learner, the wrong variant of this learner, plays uncertified upper rungs and "
             "earns more than the best safe policy while it violates: its mean regret after 600 episodes is "
             "-0.48, -0.44, 0.02, 0.50 at the four gaps (32 replications, 4 to 5 violating steps per run), so no "
             "power law can be fitted (its violations are what mdp.safe-cost-zero-violations rejects); a cost "
             "radius scaled by a constant keeps the exponent -2 by the claim's own argument (the width and the "
             "Gaussian estimation error both fall as 1 / sqrt(k))")
_UCRL_VTR = ("UCRL-VTR with its confidence radius scaled by 1e-4 (no optimism) fits slope 0.23 [0, 0.33]: "
             "an upper-bound (power_at_most) claim cannot reject a learner whose regret grows slowly on this "
             "instance (every action's value feature carries information on every coordinate, so even the "
             "greedy learner learns); mdp.ucrl-vtr-trap-regret-vs-K rejects that mutant on the greedy trap")
_VTR_PLUS = ("UCRL-VTR+ with its radii scaled by 1e-4 (no optimism) fits 0.005 [0, 0.010] on the hard instance "
             "with a fixed gap (quick, seed 0): as for UCRL-VTR every action informs every coordinate, so no "
             "learner we can build from the radius does worse than sqrt K here")
_VTR_PLUS_D = ("a lower bound (power_at_least) that holds for every learner on the instance, so a wrong learner "
               "cannot make the regret grow more slowly than d: measured on the mean of 1/regret (the claim's "
               "earlier form), radii scaled by 1e-4 gave a slope of -1.12 [-3.2, -0.21] and radii scaled by 20 "
               "(near-uniform play) -1.00 [-1.00, -1.00] (quick, seed 0), both on the lower bound's side")
_RFE_H = ("no knob makes the error grow with H on the random instance, where K H samples arrive per K episodes: "
          "without the bonus (beta_scale = 0) the slope is -0.50 [-0.64, -0.37], with ridge 1000 it is -0.04 "
          "[-0.06, -0.02] (quick, seed 0); an explorer that is not horizon-free would be needed")
_RFE_D = ("without the bonus (beta_scale = 0) the slope is 0.92 [0.83, 1.03], with ridge 1000 it is 0.74 "
          "[0.59, 0.91] (quick, seed 0), both accepted: the "
          "hard instance informs every coordinate at every chain step whatever the explorer plays, and the "
          "lower bound keeps every explorer's error at least of order d")
_RFE_D_ATTAINED = ("shares the runs of mdp.rfe-value-error-vs-d; without the bonus the slope is 0.92 [0.83, "
                   "1.03], with ridge 1000 it is 0.74 [0.59, 0.91] (quick, seed 0), both inside the two-sided "
                   "band: the lower bound holds for every explorer")
_RFE_H_FLAT = ("an explorer with a horizon-dependent error would be needed: with ridge 1000 the slope is 0.12 "
               "[-0.07, 0.32] (quick, seed 0), inside the band; without the bonus the explorer is still informed "
               "at every chain step (see mdp.rfe-value-error-vs-d)")

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
    "mdp.safe-vtr-regret-vs-K": Mutant(
        "Safe UCRL-VTR with its confidence radius scaled by 1e-6 (no optimism): linear regret",
        {"beta_scale": 1e-6}, {"n_reps": 8}),
    "mdp.safe-vtr-greedy-regret-linear": Mutant(
        "the sound Safe UCRL-VTR (beta_scale = 1) in the greedy learner's place: bounded regret",
        {"beta_scale": 1.0}),
    "mdp.ucrl-vtr-trap-regret-vs-K": Mutant(
        "UCRL-VTR with its confidence radius scaled by 1e-4 (no optimism): linear regret on the greedy trap",
        {"radius_factor": 1e-4}),
    "mdp.ucrl-vtr-greedy-regret-linear": Mutant(
        "the sound UCRL-VTR (radius factor 1) in the greedy learner's place: bounded regret",
        {"radius_factor": 1.0}),
    "mdp.uclk-regret-vs-T": Mutant(
        "UCLK with its confidence radius scaled by 1e-4 (no optimism): linear regret on the greedy trap",
        {"radius_factor": 1e-4}, {"n_reps": 4}),
    "mdp.uclk-greedy-regret-linear": Mutant(
        "the sound UCLK (radius factor 1) in the greedy learner's place: bounded regret",
        {"radius_factor": 1.0}),
    "mdp.rfe-confidence-coverage": Mutant(
        "the explorer's self-normalised radius scaled by 0.3: the set misses theta in more than delta of the runs",
        {"beta_scale": 0.3}),
    "mdp.rfe-value-error-vs-K": Mutant(
        "the transition-targeted regression over-regularised (ridge 1000 instead of 1): the bias flattens the slope",
        {"ridge": 1000.0}),
    "mdp.dr-mixture-monotone-tv": Mutant(
        "robust value iteration stopped at epsilon = 1e-3: the value at radius 0 misses the nominal one",
        {"epsilon": 1e-3}),
    "mdp.dr-mixture-vs-rectangular-tv": Mutant(
        "the weight ball 10 times as wide as the kernel ball (twice as wide still passes on these instances)",
        {"mixture_radius_factor": 10.0}),
    "mdp.dr-mixture-monotone-kl": Mutant(
        "robust value iteration stopped at epsilon = 1e-3: the value at radius 0 misses the nominal one",
        {"epsilon": 1e-3}),
    "mdp.dr-mixture-vs-rectangular-kl": Mutant(
        "the weight ball 10 times as wide as the kernel ball (twice as wide still passes on these instances)",
        {"mixture_radius_factor": 10.0}),
    "mdp.dr-mixture-monotone-chi2": Mutant(
        "robust value iteration stopped at epsilon = 1e-3: the value at radius 0 misses the nominal one",
        {"epsilon": 1e-3}),
    "mdp.dr-mixture-vs-rectangular-chi2": Mutant(
        "the weight ball 10 times as wide as the kernel ball (twice as wide still passes on these instances)",
        {"mixture_radius_factor": 10.0}),
    "mdp.dr-vtr-bound-tv": Mutant(
        "DRVTR planning with 3 times the true radius: the certified gap tends to a positive constant",
        {"learner_radius_factor": 3.0}),
    "mdp.dr-ttr-bound-tv": Mutant(
        "DRTTR planning with 3 times the true radius: the certified gap tends to a positive constant",
        {"learner_radius_factor": 3.0}),
    "mdp.dr-vtr-bound-kl": Mutant(
        "DRVTR planning with 3 times the true radius: the certified gap tends to a positive constant",
        {"learner_radius_factor": 3.0}),
    "mdp.dr-vtr-bound-chi2": Mutant(
        "DRVTR planning with 3 times the true radius: the certified gap tends to a positive constant",
        {"learner_radius_factor": 3.0}),
    "mdp.dr-vtr-pessimism-tv": Mutant(
        "DRVTR without its penalty (beta_scale = 0): the point estimate overshoots the robust value",
        {"beta_scale": 0.0}),
    "mdp.dr-ttr-pessimism-tv": Mutant(
        "DRTTR without its penalty (beta_scale = 0): the point estimate overshoots the robust value",
        {"beta_scale": 0.0}),
    "mdp.stepmix-zero-violations": Mutant(
        "unconstrained UCBVI in StepMix's place: episode-wise violations of the conservative constraint",
        {"rule": "unconstrained"}, {"n_episodes": 1000}),
    "mdp.epsmix-zero-violations": Mutant(
        "unconstrained UCBVI in EpsMix's place", {"rule": "unconstrained"}),
    "mdp.cumulative-zero-violations": Mutant(
        "unconstrained UCBVI in the cumulative rule's place", {"rule": "unconstrained"}),
    "mdp.stepmix-learned-baseline-zero-violations": Mutant(
        "unconstrained UCBVI in StepMix's place, with the learned baseline", {"rule": "unconstrained"},
        {"n_episodes": 100}),
    "mdp.stepmix-regret-vs-K": Mutant(
        "StepMix with a pessimism bonus 1000 times too large: it never certifies the optimistic policy and "
        "plays the baseline (linear regret)", {"pessimism_scale": 1e3}, {"n_reps": 8}),
    "mdp.epsmix-regret-vs-K": Mutant(
        "EpsMix with a pessimism bonus 1000 times too large (mostly baseline episodes)",
        {"pessimism_scale": 1e3}, {"n_episodes": 1000, "n_reps": 8}),
    "mdp.stepmix-conservative-cost-vs-K": Mutant(
        "StepMix with a pessimism bonus 1000 times too large: the baseline mass grows linearly",
        {"pessimism_scale": 1e3}, {"n_reps": 8}),
    "mdp.epsmix-conservative-cost-vs-K": Mutant(
        "EpsMix with a pessimism bonus 1000 times too large: the baseline mass grows linearly",
        {"pessimism_scale": 1e3}, {"n_episodes": 1000, "n_reps": 8}),
    "mdp.ucbvi-bernstein-regret-vs-K": Mutant(
        "UCBVI-BF with its bonus scaled by 1e-4 (no optimism): some runs lock onto a worse policy; 64 "
        "replications so that the bootstrap interval holds some of them", {"bonus_scale": 1e-4},
        {"n_reps": 64}),
    "mdp.ucbvi-hoeffding-regret-vs-K": Mutant(
        "UCBVI-CH with its bonus scaled by 1e-4 (no optimism), 64 replications", {"bonus_scale": 1e-4},
        {"n_reps": 64}),
    "mdp.regularized-optimism-regret-vs-T": Mutant(
        "regularised value iteration with its step size 1e-4 times too small: the softmax policy stays near "
        "uniform (linear regret)", {"eta_scale": 1e-4}, {"horizon": 2000, "n_reps": 4}),
    "mdp.value-iteration-geometric": Mutant(
        "value iteration with the discount 0.8 in place of the MDP's 0.9: it converges, faster, to another "
        "fixed point", {"solver_gamma": 0.8}),
    "mdp.robust-monotone-tv": Mutant(
        "robust value iteration stopped at epsilon = 1e-3: its value at radius 0 misses the nominal optimum",
        {"epsilon": 1e-3}, {"radii": [0.0, 0.1]}),
    "mdp.robust-monotone-kl": Mutant(
        "robust value iteration stopped at epsilon = 1e-3: its value at radius 0 misses the nominal optimum",
        {"epsilon": 1e-3}, {"radii": [0.0, 0.1]}),
    "mdp.robust-monotone-chi2": Mutant(
        "robust value iteration stopped at epsilon = 1e-3: its value at radius 0 misses the nominal optimum",
        {"epsilon": 1e-3}, {"radii": [0.0, 0.1]}),
}

NO_MUTANT_YET = {
    "mdp.epsmix-minimax-regret-vs-K": _MINIMAX_CONSERVATIVE,
    "mdp.regularized-optimism-minimax-regret-vs-T": _MINIMAX_STREAM,
    "mdp.rfe-value-error-vs-H": _RFE_H,
    "mdp.rfe-value-error-vs-H-flat": _RFE_H_FLAT,
    "mdp.rfe-value-error-vs-d": _RFE_D,
    "mdp.rfe-value-error-vs-d-attained": _RFE_D_ATTAINED,
    "mdp.safe-cost-regret-vs-gap": _SAFE_GAP,
    "mdp.stepmix-minimax-regret-vs-K": _MINIMAX_CONSERVATIVE,
    "mdp.ucbvi-minimax-regret-vs-K": _MINIMAX,
    "mdp.ucrl-vtr-regret-vs-K": _UCRL_VTR,
    "mdp.ucrl-vtr-plus-regret-vs-K": _VTR_PLUS,
    "mdp.ucrl-vtr-plus-regret-vs-d": _VTR_PLUS_D,
}
