"""Rate claims of the private experts learners (:mod:`expertlab.experts._private`).

Checked by ``simulations/experts/private.py``.
"""

from __future__ import annotations

from ..sim._rates import RateClaim, document_claims, register_claims
from ._private import sparse_vector_experts

_AFKT = ("Asi, Feldman, Koren & Talwar, ICML 2023 (arXiv:2302.14154): realizable DP experts regret "
         "O~(eps^-1 log^1.5 d) (theorem number not re-checked)")

PRIVATE_CLAIMS = (
    RateClaim(
        name="experts.private-flat-in-T",
        quantity="regret", variable="T", law="power", predicted=0.0, tolerance=0.05, fit_decades=1.0,
        source=_AFKT, learner="sparse_vector_experts",
        description="Realizable instance (one perfect expert, the others Bernoulli(1/2)), eps = 4, d = 8: "
                    "once the sparse vector has dropped the dead experts the perfect one is followed for good, "
                    "so over the last decade of rounds the regret does not grow (exponent 0).  Private FTPL "
                    "with per-round report-noisy-min, drawn on the same plot, grows with T.",
    ),
    RateClaim(
        name="experts.private-inverse-epsilon",
        quantity="final regret", variable="eps", law="power", predicted=-1.0, tolerance=0.2,
        source=_AFKT, learner="sparse_vector_experts",
        description="Same instance, eps in {2, 4, 8, 16}: every noise scale and the threshold are "
                    "proportional to 1/eps, so the regret is (c/eps) ln(C T eps): the dead expert is dropped "
                    "when its loss plus the query noise first crosses the noisy threshold, and the maximum of "
                    "the Laplace query noise over the ~tau/p rounds near the crossing is about "
                    "b2 ln(tau/p), giving R ~ b2 ln(4 p T K / tau).  Its local exponent in eps is "
                    "-1 + 1/ln(4pTK/tau), about -0.85 on this range (T = 3000, K = 6); the tolerance 0.2 "
                    "admits that log factor (the O~ of the paper) and still rejects eps^-0.5 and eps^-1.5.",
    ),
    RateClaim(
        name="experts.private-polylog-d",
        quantity="final regret", variable="d", law="power_at_most", predicted=0.5, tolerance=0.0,
        source=_AFKT, learner="sparse_vector_experts",
        description="Same instance, eps = 4, d in {4, ..., 64}: with K = log2 d + 3 switches the regret is "
                    "O(K^2 log(TK)/eps), polylogarithmic in d, so its log-log slope in d is small (local "
                    "exponent about 2/ln(2K) ~ 0.3 at these d, decreasing in d).  Claim: the exponent is at "
                    "most 1/2, ruling out sqrt(d) growth.  DP-FTRL with the tree mechanism, drawn on the plot, "
                    "grows about linearly in d (its node noise must cover an L1 sensitivity of d).",
    ),
)

register_claims(*PRIVATE_CLAIMS)
document_claims(sparse_vector_experts, "sparse_vector_experts")
