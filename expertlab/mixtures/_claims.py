"""Rate claims of the mixture-model estimators (checked by ``simulations/mixtures/``)."""

from __future__ import annotations

from ..sim._rates import RateClaim, register_claims

CLAIMS = (
    RateClaim(
        name="mixtures.shapley-mse-vs-budget",
        quantity="squared error of permutation-sampling Shapley values", variable="permutations m",
        law="power", predicted=-1.0, tolerance=0.05,
        source="Castro, Gómez & Tejada 2009: the permutation estimate is a mean of m iid marginal-"
               "contribution vectors, unbiased, with variance sigma_i^2 / m (Shapley-MoE, NeurIPS 2025, "
               "uses it for experts)",
        learner="shapley_mc",
        description="A coverage game on 10 experts, v(S) = 1 - prod_{i in S} (1 - a_i) (the chance that some "
                    "expert of S is right), exact Shapley values by the subset formula: the summed squared "
                    "error of the plain estimate falls as 1/m.  The estimate is exactly unbiased, so the "
                    "law holds at every m; the tolerance 0.05 covers the sampling noise of the fitted slope.",
    ),
)

register_claims(*CLAIMS)
