"""Rate claims of the load-balancing solvers (checked by ``simulations/balance/``)."""

from __future__ import annotations

from ..sim._rates import RateClaim, register_claims

_HZ = "Han & Zhong, arXiv 2512.03915"

CLAIMS = (
    RateClaim(
        name="balance.maxvio-sampling-floor",
        quantity="per-batch MaxVio at the optimal bias", variable="N", law="power", predicted=-0.5,
        tolerance=0.05,
        source=f"{_HZ} and papers.md §F: multinomial sampling floor sqrt((E/K)/N)",
        learner="alf_lb",
        description="Scores m_i + iid noise routed with the optimal bias -m: every expert's load is a "
                    "sum of N independent indicators with mean NK/E, so the per-batch imbalance "
                    "shrinks as N^(-1/2).",
    ),
    RateClaim(
        name="balance.online-regret-log",
        quantity="dual-objective regret (steps a/t)", variable="T", law="power", predicted=0.0,
        tolerance=0.1,
        source=f"{_HZ}, online stochastic setting: O(log T) expected regret with steps a/t "
               "(section not re-checked)",
        learner="alf_lb", fit_decades=1.5,
        description="Fresh iid-plus-offset batches, magnitude rule with decaying steps a/t: the regret "
                    "against the optimal fixed bias grows like log T, so its power-law exponent over "
                    "the last decades is 0 (constant steps, drawn for comparison, keep paying a "
                    "constant excess per batch).",
    ),
    RateClaim(
        name="balance.decaying-reaches-lp-optimum",
        quantity="relative dual gap g(-b_T) / LP optimum - 1", variable="problem", law="value",
        predicted=0.0, tolerance=1e-9, level=0.997,
        source=f"{_HZ}: ALF-LB is a dual subgradient method for the assignment LP; with decaying "
               "steps the bias reaches the dual optimal set",
        learner="alf_lb",
        description="Random 512 x 8 score matrices, K = 2, balanced integer capacities: after ALF-LB "
                    "with steps a/t the dual value at the final bias equals the LP optimum (HiGHS) "
                    "to 1e-9, so the top-K routing on it is an optimal balanced assignment.",
    ),
)

register_claims(*CLAIMS)
