"""Markov decision processes: models, instances, planning and robust planning.

Models (:class:`TabularMDP`, :class:`FiniteHorizonMDP`,
:class:`LinearMixtureMDP`) are validated frozen records whose arrays may carry
leading batch axes (many MDPs of one size); the planners
(:func:`value_iteration`, :func:`policy_iteration`,
:func:`backward_induction`, :func:`soft_value_iteration`,
:func:`robust_value_iteration`) solve a whole batch in one array loop and
return results with certificates (Bellman residuals, exact policy values).
:func:`worst_case` solves the inner problems of robust planning for TV, L1,
KL and chi-square balls.  An episodic model is an environment of
:func:`expertlab.sim.run` (one episode per step; :func:`episodic` sets the
initial state): the episodic learners (:func:`ucbvi` on a
:class:`FiniteHorizonMDP`, :func:`ucrl_vtr` and :func:`ucrl_vtr_plus` on an
:class:`EpisodicLinearMixture`) return a policy per episode and the runs
record exact expected and realised regret; the conservative learners
(:func:`stepmix`, :func:`epsmix`, the cumulative rule of
:func:`conservative_ucbvi`) keep a baseline's value with high probability on
a :func:`conservative` environment, which also counts the violations.
:func:`mixture_robust_value_iteration` plans
against a divergence ball on the mixture weight of a linear mixture, and
:func:`dr_vtr` / :func:`dr_ttr` learn such robust policies from offline data
with double pessimism.  The single-stream discounted learners
:func:`regularized_optimism` and :func:`uclk` run on a
:class:`LinearMixtureStream` (one transition per step);
:func:`safe_ucrl_vtr` keeps to backward safe action sets under an
instantaneous hard constraint on a :class:`SafeLinearMixture`, and
:func:`safe_learned_cost_vtr` also learns the cost on a
:class:`LearnedCostSafeMixture`.  :func:`reward_free_ttr` explores a
:class:`RewardFreeMixture` without rewards and :func:`plan_for_rewards` then
plans, on the model it returns, for any reward with total at most 1.
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
from ._conservative_policies import (ConservativeBaseline, MixedPlan, epsmix_probability, known_baseline,
                                     learned_baseline, mix_policies, sample_mixed_policy, stepmix_weight)
from ._conservative_env import CONSERVATIVE_EPISODE, ConservativeMDP, conservative
from ._conservative_ucbvi import ConservativeState, conservative_ucbvi, epsmix, stepmix
from ._dr_linear_mixture import (MixtureRobustFiniteResult, MixtureRobustResult, mixture_robust_backup,
                                 mixture_robust_backward_induction, mixture_robust_value_iteration,
                                 mixture_value_features, robust_suboptimality)
from ._dr_offline import DROfflineResult, OfflineDataset, dr_ttr, dr_vtr, sample_offline_dataset, simplex_projection
from ._episodic import (LINEAR_MIXTURE_EPISODE, TABULAR_EPISODE, EpisodicMDP, Trajectory, episodic,
                        evaluate_markov_policy, sample_episodes)
from . import _claims_reward_free  # noqa: F401  (registers the reward-free exploration claims)
from ._reward_free import (Exploration, RewardFreeEpisode, RewardFreeEstimate, RewardFreeMixture, RewardFreeState,
                           plan_for_rewards, reward_battery, reward_free_ttr)
from ._regularized_optimism import (LinearMixtureStream, StreamAction, StreamState, confidence_radius,
                                    extended_value_iteration, regularized_optimism, regularized_value_iteration,
                                    uclk)
from ._ucbvi import UCBVIState, optimistic_q_values, ucbvi, ucbvi_bonus
from ._ucrl_vtr import EpisodicLinearMixture, VTRState, sherman_morrison, ucrl_vtr, ucrl_vtr_plus
from ._safe_linear_mixture import (SafeLinearMixture, SafeTrajectory, SafeVTRState, safe_action_sets,
                                   safe_trap_mixture, safe_ucrl_vtr)
from ._safe_learned_cost import (LearnedCostSafeMixture, certified_action_sets, cost_noise, cost_radius,
                                 pessimistic_costs, safe_cost_ladder)
from ._safe_learned_cost_run import SafeCostState, safe_learned_cost_vtr
from .instances import conservative_garnet, garnet_episodic
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


def _register_episodic() -> None:
    """Register the episodic and conservative learners and their environment constructors with ``sim``."""
    from .. import sim

    def tabular():
        return garnet_episodic(n_states=3, n_actions=2, episode_length=3, seed=0)

    def mixture():
        return instances.hard_linear_mixture(1, horizon=3, gap=0.1)

    def constrained():
        return conservative_garnet(seed=0, alpha=0.3)

    for name, factory, feedback, env in (
            ("ucbvi", ucbvi, TABULAR_EPISODE, tabular),
            ("ucrl_vtr", ucrl_vtr, LINEAR_MIXTURE_EPISODE, mixture),
            ("ucrl_vtr_plus", ucrl_vtr_plus, LINEAR_MIXTURE_EPISODE, mixture),
            ("stepmix", stepmix, CONSERVATIVE_EPISODE, constrained),
            ("epsmix", epsmix, CONSERVATIVE_EPISODE, constrained),
            ("conservative_ucbvi", conservative_ucbvi, CONSERVATIVE_EPISODE, constrained)):
        sim.register_learner(name, factory, family="mdp", feedback=feedback,
                             example=lambda factory=factory, env=env: (factory(), env(), 20))
    sim.register_environment("garnet_episodic", garnet_episodic, family="mdp", feedback=TABULAR_EPISODE)
    sim.register_environment("hard_linear_mixture", instances.hard_linear_mixture, family="mdp",
                             feedback=LINEAR_MIXTURE_EPISODE)
    sim.register_environment("conservative_garnet", conservative_garnet, family="mdp",
                             feedback=CONSERVATIVE_EPISODE)


_register_episodic()


def _register_safe_reward_free_stream() -> None:
    """Register the safe, reward-free and single-stream learners and their environment constructors with ``sim``."""
    from .. import sim
    from ._safe_linear_mixture import _example_mixture

    def ladder():
        return safe_cost_ladder(4, safety_gap=0.2)

    def explored():
        return RewardFreeMixture(instances.hard_linear_mixture(1, horizon=3, gap=0.1))

    def stream():
        return LinearMixtureStream(instances.random_linear_mixture(3, 2, dim=2, gamma=0.5, seed=0))

    for name, factory, feedback, env, horizon in (
            ("safe_ucrl_vtr", safe_ucrl_vtr, "safe_episode", _example_mixture, 20),
            ("safe_learned_cost_vtr", safe_learned_cost_vtr, "noisy_cost_episode", ladder, 20),
            ("reward_free_ttr", reward_free_ttr, "reward_free", explored, 20),
            ("regularized_optimism", regularized_optimism, "discounted_stream", stream, 50),
            ("uclk", uclk, "discounted_stream", stream, 50)):
        sim.register_learner(name, factory, family="mdp", feedback=feedback,
                             example=lambda factory=factory, env=env, horizon=horizon: (factory(), env(), horizon))
    for name, factory, feedback in (("safe_trap_mixture", safe_trap_mixture, "safe_episode"),
                                    ("safe_cost_ladder", safe_cost_ladder, "noisy_cost_episode"),
                                    ("reward_free_mixture", RewardFreeMixture, "reward_free"),
                                    ("linear_mixture_stream", LinearMixtureStream, "discounted_stream")):
        sim.register_environment(name, factory, family="mdp", feedback=feedback)


_register_safe_reward_free_stream()

__all__ = [
    # episodic models as environments of sim.run
    "EpisodicMDP", "Trajectory", "episodic", "garnet_episodic", "sample_episodes", "evaluate_markov_policy",
    "TABULAR_EPISODE", "LINEAR_MIXTURE_EPISODE",
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
    "stepmix_weight", "ConservativeState", "MixedPlan", "conservative_ucbvi", "epsmix", "sample_mixed_policy",
    "stepmix", "ConservativeMDP", "conservative", "CONSERVATIVE_EPISODE",
    # distributionally robust linear mixtures
    "MixtureRobustResult", "MixtureRobustFiniteResult", "mixture_value_features", "mixture_robust_backup",
    "mixture_robust_value_iteration", "mixture_robust_backward_induction", "OfflineDataset", "DROfflineResult",
    "sample_offline_dataset", "simplex_projection", "dr_vtr", "dr_ttr", "robust_suboptimality",
    # reward-free exploration
    "Exploration", "RewardFreeEpisode", "RewardFreeEstimate", "RewardFreeMixture", "RewardFreeState",
    "plan_for_rewards", "reward_battery", "reward_free_ttr",
    # single-stream discounted learners
    "LinearMixtureStream", "StreamAction", "StreamState", "confidence_radius", "extended_value_iteration",
    "regularized_optimism", "regularized_value_iteration", "uclk",
    # safe RL under instantaneous hard constraints
    "SafeLinearMixture", "SafeTrajectory", "SafeVTRState", "safe_action_sets", "safe_trap_mixture",
    "safe_ucrl_vtr",
    # safe RL with a learned cost
    "LearnedCostSafeMixture", "SafeCostState", "certified_action_sets", "cost_noise", "cost_radius",
    "pessimistic_costs", "safe_cost_ladder", "safe_learned_cost_vtr",
]
