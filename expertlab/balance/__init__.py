"""Load balancing for sparse mixture-of-experts routing.

The assignment problem of routing ``n_tokens`` tokens to ``k`` of
``n_experts`` experts under per-expert capacities, its exact solvers with
optimality certificates, and auxiliary-loss-free load balancing (ALF-LB) as
a dual subgradient method, deterministic and online; score generators for the
online setting live in :mod:`expertlab.balance.generators`.
"""

from . import _claims, generators  # noqa: F401  (_claims registers the rate claims)
from ._alf_lb import ALFLBResult, TokenMoves, alf_lb
from ._exact import METHODS, AssignmentResult, solve_exact
from ._problem import AssignmentProblem, dual_objective, top_k_route
from ..sim._rates import document_claims as _document_claims

_document_claims(alf_lb, "alf_lb")

__all__ = [
    "ALFLBResult",
    "AssignmentProblem",
    "AssignmentResult",
    "METHODS",
    "TokenMoves",
    "alf_lb",
    "dual_objective",
    "generators",
    "solve_exact",
    "top_k_route",
]
