"""Load balancing for sparse mixture-of-experts routing.

The assignment problem of routing ``n_tokens`` tokens to ``k`` of
``n_experts`` experts under per-expert capacities, its exact solvers with
optimality certificates, auxiliary-loss-free load balancing (ALF-LB) as a
dual subgradient method, capacity-aware inference (token drop and reroute)
and the routing baselines (auxiliary loss, BASE, Sinkhorn, expert choice).
:func:`alf_lb` is an online learner of :func:`expertlab.sim.run`; its
environments are :func:`routing` (fresh batches from a score generator of
:mod:`expertlab.balance.generators`) and :func:`routing_fixed` (the same
batch every step: the deterministic setting).  :class:`AssignmentBatch`
stacks many problems of one size (one per replication or batch) for
:func:`solve_exact` and :func:`routing_fixed`.
"""

from . import _claims, generators  # noqa: F401  (_claims registers the rate claims)
from ._alf_lb import ALFLBState, alf_lb
from ._batch import AssignmentBatch, BatchAssignmentResult
from ._baselines import (AuxLossResult, RouteResult, SinkhornResult, aux_loss, base_route, expert_choice_route,
                         sinkhorn_route)
from ._capacity import POLICIES, CapacityRouteResult, capacity_from_gamma, capacity_route
from ._exact import METHODS, AssignmentResult, solve_exact
from ._problem import AssignmentProblem, dual_objective, top_k_route
from ._routing import FixedRouting, Routing, RoutingFeedback, TokenMoves, routing, routing_fixed, token_moves
from ..sim._rates import document_claims as _document_claims

_document_claims(alf_lb, "alf_lb")


def _register() -> None:
    from .. import sim

    def example():
        gen = generators.iid_plus_offset([0.5, 0.0, -0.5])
        return alf_lb(step=0.05, rule="sign"), routing(gen, n_tokens=32, k=1), 20

    def fixed_example():
        scores = [[1.0, 0.0, 0.5], [0.9, 0.0, 0.2], [0.8, 0.1, 0.0], [0.3, 0.2, 0.1]]
        return alf_lb(step=1.0, rule="decaying"), routing_fixed(scores, k=1), 20

    sim.register_learner("alf_lb", alf_lb, family="balance", feedback="routing", example=example)
    sim.register_environment("routing", routing, family="balance", feedback="routing", example=example)
    sim.register_environment("routing_fixed", routing_fixed, family="balance", feedback="routing",
                             example=fixed_example)


_document_claims(capacity_route, "capacity_route")
_document_claims(expert_choice_route, "expert_choice_route")
_register()

__all__ = [
    "ALFLBState",
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
    "FixedRouting",
    "Routing",
    "RoutingFeedback",
    "TokenMoves",
    "alf_lb",
    "dual_objective",
    "generators",
    "routing",
    "routing_fixed",
    "solve_exact",
    "token_moves",
    "top_k_route",
]
