"""Markov decision processes: models, instances, planning and robust planning.

Models (:class:`TabularMDP`, :class:`FiniteHorizonMDP`,
:class:`LinearMixtureMDP`) are validated frozen records whose arrays may carry
leading batch axes (many MDPs of one size); the planners
(:func:`value_iteration`, :func:`policy_iteration`,
:func:`backward_induction`, :func:`soft_value_iteration`,
:func:`robust_value_iteration`) solve a whole batch in one array loop and
return results with certificates (Bellman residuals, exact policy values).
:func:`worst_case` solves the inner problems of robust planning for TV, L1,
KL and chi-square balls.  The episodic learners (:func:`ucbvi` for tabular
models, :func:`ucrl_vtr` and :func:`ucrl_vtr_plus` for linear mixtures) are
records of pure functions driven by :func:`run_episodes`, which advances all
replications at once and reports exact expected and realised regret.
Instances live in :mod:`expertlab.mdp.instances`.
"""

from . import _claims, instances  # noqa: F401  (_claims registers the rate claims)
from ._models import FiniteHorizonMDP, LinearMixtureMDP, TabularMDP, check_kernel
from ._planning import (FiniteHorizonResult, PlanningResult, backward_induction, bellman_backup, policy_evaluation,
                        policy_iteration, value_iteration)
from ._soft import SoftPlanningResult, soft_value_iteration
from ._robust import DIVERGENCES, RobustPlanningResult, WorstCaseResult, robust_value_iteration, worst_case
from . import _claims_learners  # noqa: F401  (registers the episodic learners' claims)
from ._episodic import (EpisodeResult, EpisodeSpec, EpisodicLearner, evaluate_markov_policy, run_episodes,
                        sample_episodes)
from ._ucbvi import UCBVIState, optimistic_q_values, ucbvi, ucbvi_bonus
from ._ucrl_vtr import EpisodicLinearMixture, VTRState, sherman_morrison, ucrl_vtr, ucrl_vtr_plus
from ..sim._rates import document_claims as _document_claims

_document_claims(value_iteration, "value_iteration")
_document_claims(robust_value_iteration, "robust_value_iteration")
_document_claims(ucbvi, "ucbvi")
_document_claims(ucrl_vtr, "ucrl_vtr")
_document_claims(ucrl_vtr_plus, "ucrl_vtr_plus")

__all__ = [
    "EpisodeSpec", "EpisodicLearner", "EpisodeResult", "run_episodes", "sample_episodes", "evaluate_markov_policy",
    "UCBVIState", "ucbvi", "ucbvi_bonus", "optimistic_q_values",
    "EpisodicLinearMixture", "VTRState", "ucrl_vtr", "ucrl_vtr_plus", "sherman_morrison",
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
