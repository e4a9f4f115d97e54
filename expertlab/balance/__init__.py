"""Load balancing for sparse mixture-of-experts routing.

The assignment problem of routing ``n_tokens`` tokens to ``k`` of
``n_experts`` experts under per-expert capacities, its exact solvers with
optimality certificates, auxiliary-loss-free load balancing (ALF-LB) as a
dual subgradient method, deterministic and online, capacity-aware inference
(token drop and reroute) and the routing baselines (auxiliary loss, BASE,
Sinkhorn, expert choice); score generators for the online setting live in
:mod:`expertlab.balance.generators`.  :class:`AssignmentBatch` stacks many
problems of one size (one per replication or batch) for :func:`solve_exact`
and deterministic :func:`alf_lb`.
"""

from . import _claims, generators  # noqa: F401  (_claims registers the rate claims)
from ._alf_lb import ALFLBResult, TokenMoves, alf_lb
from ._batch import AssignmentBatch, BatchAssignmentResult
from ._baselines import (AuxLossResult, RouteResult, SinkhornResult, aux_loss, base_route, expert_choice_route,
                         sinkhorn_route)
from ._capacity import POLICIES, CapacityRouteResult, capacity_from_gamma, capacity_route
from ._exact import METHODS, AssignmentResult, solve_exact
from ._problem import AssignmentProblem, dual_objective, top_k_route
from ..sim._rates import document_claims as _document_claims

_document_claims(alf_lb, "alf_lb")
_document_claims(capacity_route, "capacity_route")
_document_claims(expert_choice_route, "expert_choice_route")

__all__ = [
    "ALFLBResult",
    "AssignmentBatch",
    "BatchAssignmentResult",
    "AuxLossResult",
    "CapacityRouteResult",
    "POLICIES",
    "RouteResult",
    "SinkhornResult",
    "aux_loss",
    "base_route",
    "capacity_from_gamma",
    "capacity_route",
    "expert_choice_route",
    "sinkhorn_route",
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
