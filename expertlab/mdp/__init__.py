"""Markov decision processes: models, instances, planning and robust planning.

Models (:class:`TabularMDP`, :class:`FiniteHorizonMDP`,
:class:`LinearMixtureMDP`) are validated frozen records whose arrays may carry
leading batch axes (many MDPs of one size); the planners
(:func:`value_iteration`, :func:`policy_iteration`,
:func:`backward_induction`, :func:`soft_value_iteration`,
:func:`robust_value_iteration`) solve a whole batch in one array loop and
return results with certificates (Bellman residuals, exact policy values).
:func:`worst_case` solves the inner problems of robust planning for TV, L1,
KL and chi-square balls.  Instances live in :mod:`expertlab.mdp.instances`.
"""

from . import _claims, instances  # noqa: F401  (_claims registers the rate claims)
from ._models import FiniteHorizonMDP, LinearMixtureMDP, TabularMDP, check_kernel
from ._planning import (FiniteHorizonResult, PlanningResult, backward_induction, bellman_backup, policy_evaluation,
                        policy_iteration, value_iteration)
from ._soft import SoftPlanningResult, soft_value_iteration
from ._robust import DIVERGENCES, RobustPlanningResult, WorstCaseResult, robust_value_iteration, worst_case
from ..sim._rates import document_claims as _document_claims

_document_claims(value_iteration, "value_iteration")
_document_claims(robust_value_iteration, "robust_value_iteration")

__all__ = [
    "TabularMDP",
    "FiniteHorizonMDP",
    "LinearMixtureMDP",
    "check_kernel",
    "PlanningResult",
    "FiniteHorizonResult",
    "SoftPlanningResult",
    "value_iteration",
    "policy_iteration",
    "policy_evaluation",
    "backward_induction",
    "soft_value_iteration",
    "bellman_backup",
    "DIVERGENCES",
    "WorstCaseResult",
    "RobustPlanningResult",
    "worst_case",
    "robust_value_iteration",
    "instances",
]
