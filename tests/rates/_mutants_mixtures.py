"""Mutants of the claims on mixture-model estimators (see ``test_mutations.py``).

``MUTANTS`` maps a claim to a deliberately wrong variant that its quick run must reject;
``NO_MUTANT_YET`` names every other claim of the family and why it has none.

Measured at seed 0 on the quick settings (fitted value [95% interval] of each mutated run):

- contaminated MoE, EM stopped after one step: distinguishable slopes -0.08 (exp tau), -0.22 (beta),
  -0.05 (eta), -0.23 (nu) against -1/2; non-distinguishable slopes +0.07 ... +0.14 against the upper
  bounds -1/4 and -3/8, and the ratios to the Fisher prediction grow as n^(+0.53 ... +0.63).
- softmax MoE with both experts frozen at the warm start: slope -0.21 [-0.28, -0.14].
- Gaussian mixture, one EM step: slope -0.03 [-0.16, +0.09] (with 50 replications instead of 200 the
  one-step errors are so heavy-tailed that the interval reaches -0.62 and the check passes).
- polynomial experts fitted with one expert: slope -0.02 [-0.03, -0.01]; U-shape judged on the training
  sample: 0 of 20 replications.
- Shapley with self-normalised importance weights: slope -0.75 [-0.78, -0.72].
- SSME replaced by the 20 labels alone: slope +0.02 [-0.02, +0.06].
- clustered single index, router never trained: 0 of 24; the MoE in the single network's place: 0 of 24
  misses.

Wrong variants the claims accept (so not used here): truncated Shapley sampling (slope -0.96 [-0.99, -0.94]:
its bias is below the noise up to m = 1024); one EM step of the softmax MoE from its warm start (slope -0.40
[-0.46, -0.33]: one step already brings the 0.1 perturbation near the sampling error); one EM step of the
polynomial MoE (slope -1.03: it starts at the truth); one of the two softmax experts frozen (-0.36 [-0.43,
-0.28], rejected but only just, so both are frozen).
"""

# ``Mutant`` is provided by the test module that runs this file

_CMOE = "mixtures.contaminated-moe."
_ONE_EM_STEP = ("EM stopped after one step from the warm start: the error keeps most of the initial "
                "perturbation, which does not shrink with n")
_ONE_EM_STEP_FISHER = ("EM stopped after one step from the warm start: the error stays near the initial "
                       "perturbation while the Fisher prediction falls, so the ratio grows with n")

MUTANTS = {
    "mixtures.gmm-mle-error-vs-n": Mutant(
        "EM stopped after one iteration: the estimate keeps its initialisation error, slope about 0",
        {"max_iter": 1}),     # 5.4 s of CPU: 200 replications of up to 12800 points
    **{f"{_CMOE}distinguishable.{k}-vs-n": Mutant(_ONE_EM_STEP, {"max_iter": 1})
       for k in ("exp-tau", "beta", "eta", "nu")},
    # the non-distinguishable runs also compute the Fisher prediction (several seconds of quadrature)
    **{f"{_CMOE}non-distinguishable-eta.{k}-vs-n": Mutant(_ONE_EM_STEP, {"max_iter": 1})
       for k in ("exp-tau", "beta", "eta", "nu")},
    **{f"{_CMOE}non-distinguishable-eta.{k}-over-fisher-vs-n": Mutant(_ONE_EM_STEP_FISHER, {"max_iter": 1},
                                                                       )
       for k in ("exp-tau", "beta", "eta", "nu")},
    "mixtures.softmax-moe.exact-fit-voronoi-d1-vs-n": Mutant(
        "EM that updates only the gate, both experts frozen at the warm start: the experts' part of D1 "
        "does not shrink with n", {"frozen": [True, True]}),
    "mixtures.poly-experts.well-specified-kl-vs-n": Mutant(
        "one quadratic expert fitted to the two-expert truth (a misspecified model): the KL risk levels off "
        "at the approximation error", {"n_experts": 1}),
    "mixtures.poly-experts.u-shape-in-m": Mutant(
        "the risk judged on the training sample (in-sample excess log-loss) instead of on fresh x: it falls "
        "with m, so no intermediate m wins", {"risk": "in-sample"}, size={"n_reps": 20}),
    "mixtures.shapley-mse-vs-budget": Mutant(
        "permutations drawn from the router-guided Plackett-Luce proposal and reweighted by self-normalised "
        "importance weights (weights divided by their sum, not by m): heavy-tailed weights, error falls "
        "slower than 1/m", {"estimator": "importance"}),
    "mixtures.ssme-accuracy-error-vs-n-unlabeled": Mutant(
        "the 20 labelled points alone, the unlabelled scores unused: the error does not fall with n_u",
        {"estimator": "labeled_only"}),
    "mixtures.cluster.moe-recovers-every-cluster": Mutant(
        "router never trained (step 0): it keeps its random start and sends clusters to shared experts",
        {"router_lr": 0.0}),
    "mixtures.cluster.single-network-misses-direction": Mutant(
        "the MoE in the single network's place: it finds w, so the claim that the learner misses w fails",
        {"learner": "moe"}),
}

NO_MUTANT_YET = {}
