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
replications at once and reports exact expected and realised regret; the
conservative learners (:func:`stepmix`, :func:`epsmix`, the cumulative rule
of :func:`conservative_ucbvi`) keep a baseline's value with high probability
(:func:`run_conservative`).  :func:`mixture_robust_value_iteration` plans
against a divergence ball on the mixture weight of a linear mixture, and
:func:`dr_vtr` / :func:`dr_ttr` learn such robust policies from offline data
with double pessimism.  :func:`run_stream` drives the single-stream
discounted learners :func:`regularized_optimism` and :func:`uclk`;
:func:`safe_ucrl_vtr` keeps to backward safe action sets under an
instantaneous hard constraint (:func:`run_safe_episodes`).  :func:`reward_free_ttr` explores without rewards
and :func:`plan_for_rewards` then plans for any reward with total at most 1 (:func:`run_reward_free`).
Instances live in :mod:`expertlab.mdp.instances`.
"""

from . import _claims, instances  # noqa: F401  (_claims registers the rate claims)
from ._models import FiniteHorizonMDP, LinearMixtureMDP, TabularMDP, check_kernel
from ._planning import (FiniteHorizonResult, PlanningResult, backward_induction, bellman_backup, policy_evaluation,
                        policy_iteration, value_iteration)
from ._soft import SoftPlanningResult, soft_value_iteration
from ._robust import DIVERGENCES, RobustPlanningResult, WorstCaseResult, robust_value_iteration, worst_case
from . import (_claims_conservative, _claims_dr, _claims_learners, _claims_regopt,  # noqa: F401  (register claims)
               _claims_safe)
from . import _claims_safe_cost  # noqa: F401  (registers the learned-cost safety claims)
from ._conservative import evaluate_stochastic_policy, pessimism_bonus, pessimistic_values
from ._conservative_policies import (ConservativeBaseline, epsmix_probability, known_baseline, learned_baseline,
                                     mix_policies, stepmix_weight)
from ._conservative_run import ConservativeResult, run_conservative, sample_mixed_episodes
from ._conservative_ucbvi import ConservativeLearner, ConservativeState, MixedPlan, conservative_ucbvi, epsmix, stepmix
from ._dr_linear_mixture import (MixtureRobustFiniteResult, MixtureRobustResult, mixture_robust_backup,
                                 mixture_robust_backward_induction, mixture_robust_value_iteration,
                                 mixture_value_features, robust_suboptimality)
from ._dr_offline import DROfflineResult, OfflineDataset, dr_ttr, dr_vtr, sample_offline_dataset, simplex_projection
from ._episodic import (EpisodeResult, EpisodeSpec, EpisodicLearner, evaluate_markov_policy, run_episodes,
                        sample_episodes)
from . import _claims_reward_free  # noqa: F401  (registers the reward-free exploration claims)
from ._reward_free import (RewardFreeEstimate, RewardFreeExplorer, RewardFreeResult, RewardFreeState,
                           plan_for_rewards, reward_battery, reward_free_ttr, run_reward_free)
from ._regularized_optimism import (StreamLearner, StreamResult, confidence_radius, regularized_optimism, run_stream,
                                    uclk)
from ._ucbvi import UCBVIState, optimistic_q_values, ucbvi, ucbvi_bonus
from ._ucrl_vtr import EpisodicLinearMixture, VTRState, sherman_morrison, ucrl_vtr, ucrl_vtr_plus
from ._safe_linear_mixture import (SafeEpisodeResult, SafeLinearMixture, run_safe_episodes, safe_action_sets,
                                   safe_trap_mixture, safe_ucrl_vtr)
from ._safe_learned_cost import (LearnedCostSafeMixture, certified_action_sets, cost_radius, pessimistic_costs,
                                 safe_cost_ladder)
from ._safe_learned_cost_run import SafeCostState, run_learned_cost_episodes, safe_learned_cost_vtr
from .instances import conservative_garnet
from ..sim._rates import document_claims as _document_claims

for _factory, _name in ((value_iteration, "value_iteration"), (robust_value_iteration, "robust_value_iteration"),
                        (ucbvi, "ucbvi"), (ucrl_vtr, "ucrl_vtr"), (ucrl_vtr_plus, "ucrl_vtr_plus"),
                        (stepmix, "stepmix"), (epsmix, "epsmix"), (conservative_ucbvi, "conservative_ucbvi"),
                        (mixture_robust_value_iteration, "mixture_robust_value_iteration"), (dr_vtr, "dr_vtr"),
                        (dr_ttr, "dr_ttr"), (regularized_optimism, "regularized_optimism"), (uclk, "uclk"),
                        (reward_free_ttr, "reward_free_ttr"), (safe_ucrl_vtr, "safe_ucrl_vtr"),
                        (safe_learned_cost_vtr, "safe_learned_cost_vtr")):
    _document_claims(_factory, _name)
del _factory, _name

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
    # conservative exploration
    "ConservativeBaseline", "conservative_garnet", "epsmix_probability", "evaluate_stochastic_policy",
    "known_baseline", "learned_baseline", "mix_policies", "pessimism_bonus", "pessimistic_values",
    "stepmix_weight", "ConservativeLearner", "ConservativeResult", "ConservativeState", "MixedPlan",
    "conservative_ucbvi", "epsmix", "run_conservative", "sample_mixed_episodes", "stepmix",
    # distributionally robust linear mixtures
    "MixtureRobustResult", "MixtureRobustFiniteResult", "mixture_value_features", "mixture_robust_backup",
    "mixture_robust_value_iteration", "mixture_robust_backward_induction", "OfflineDataset", "DROfflineResult",
    "sample_offline_dataset", "simplex_projection", "dr_vtr", "dr_ttr", "robust_suboptimality",
    # reward-free exploration
    "RewardFreeEstimate", "RewardFreeExplorer", "RewardFreeResult", "RewardFreeState", "plan_for_rewards",
    "reward_battery", "reward_free_ttr", "run_reward_free",
    # single-stream discounted learners
    "StreamLearner", "StreamResult", "confidence_radius", "regularized_optimism", "run_stream", "uclk",
    # safe RL under instantaneous hard constraints
    "SafeLinearMixture", "SafeEpisodeResult", "safe_action_sets", "safe_trap_mixture", "safe_ucrl_vtr",
    "run_safe_episodes",
    # safe RL with a learned cost
    "LearnedCostSafeMixture", "SafeCostState", "certified_action_sets", "cost_radius", "pessimistic_costs",
    "safe_cost_ladder", "safe_learned_cost_vtr", "run_learned_cost_episodes",
]
