"""Rate claims of PASCombUCB and the unsafe CUCB baseline (checked by ``simulations/bandits/pascombucb.py``)."""

from __future__ import annotations

from ..sim._rates import RateClaim, register_claims

_HTZ = "Hou, Tan & Zhong, ICML 2023"

CLAIMS = (
    RateClaim(
        name="bandits.pascombucb-anytime-safe",
        quantity="indicator of zero violations over the horizon", variable="replication", law="at_least",
        predicted=0.95, tolerance=0.0, level=0.95,
        source=f"{_HTZ}: probably anytime-safe guarantee of PASCombUCB, delta = 0.05 (theorem number not "
               "re-checked)",
        learner="pascombucb",
        description="Each replication is a Bernoulli trial: did PASCombUCB pull only safe super arms over the "
                    "whole horizon?  The claim is one-sided (the success probability is at least 1 - delta), "
                    "checked with the exact one-sided Clopper-Pearson lower bound at level 0.95.  Run on the "
                    "binding variant of the published instance at budget 0.6, where the optimistic arm {1, 2, 3} "
                    "is unsafe (variance 0.68), so the possibly safe set and GreedySplit are what keeps the "
                    "pulls safe.  (On the published instance itself every super arm is safe.)",
    ),
    RateClaim(
        name="bandits.pascombucb-regret-log-T",
        quantity="regret added per half decade of horizon, R(sqrt(10) T) - R(T)", variable="T",
        law="power_at_most", predicted=0.0, tolerance=0.0, fit_decades=1.0,
        source=f"{_HTZ}: O(log T) problem-dependent regret of PASCombUCB (theorem number not re-checked)",
        learner="pascombucb",
        description="Published instance, budget 0.751 (3 items are absolutely safe).  Regret O(log T) means "
                    "that the regret added over a fixed ratio of horizons does not grow with T: the power-law "
                    "exponent of the half-decade increment is at most 0 (one-sided; linear regret would give "
                    "1, sqrt(T) regret 0.5).  Each horizon is a separate run with its own confidence levels "
                    "1/T^2 and delta/T^2, with the same seeds.  Exactly linear growth in ln T (exponent 0) is "
                    "only asymptotic: on 1e5..3.2e6 the increments still fall (976, 861, 718 per half decade; "
                    "exponent -0.13) towards the value about 400 that the radius predicts once the optimal "
                    "items' radii are negligible.  At budget 0.6 the claim is not checked: there the optimum "
                    "must first be certified safe as one piece, which takes about 1.8e5 samples of item 3 at "
                    "T = 1e6, so up to T = 1e6 the per-pull regret is still in its linear certification "
                    "stage.",
    ),
    RateClaim(
        name="bandits.cucb-violates",
        quantity="indicator that most pulls of unsafe CUCB violate the budget", variable="replication",
        law="at_least", predicted=0.95, tolerance=0.0, level=0.95,
        source=f"{_HTZ}: experiments, CUCB ignores the variance budget and pulls unsafe super arms",
        learner="cucb",
        description="Binding variant of the published instance at budget 0.6: CUCB converges to the "
                    "unconstrained optimum {1, 2, 3} (variance 0.68 > 0.6), so its violating pulls are all "
                    "but O(log T) of them.  The claim is that in at least 1 - delta = 95% of the replications "
                    "more than half of the T = 1e5 pulls violate the budget (one-sided Clopper-Pearson), the "
                    "mirror image of PASCombUCB's guarantee.  The violation count does grow faster than "
                    "linearly on T <= 1e6 (local exponent 1.17 then 1.07) because the violating fraction is "
                    "still rising towards 1 (0.72 at 1e5, 0.95 at 1e6), so no exponent-1 claim is made.",
),
)

register_claims(*CLAIMS)


def _document():
    from ..sim._rates import document_claims
    from ._pascombucb import cucb, pascombucb

    document_claims(pascombucb, "pascombucb")
    document_claims(cucb, "cucb")


_document()
