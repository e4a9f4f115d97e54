"""Stochastic and adversarial multi-armed bandits, pure exploration and safe combinatorial semi-bandits.

Regret learners declare ``feedback == "bandit"``: each round every replication
pulls one arm and sees only that arm's outcome on a
:class:`expertlab.sim.Arms` environment (:mod:`expertlab.bandits.instances`).
Every learner and environment is registered with :func:`expertlab.sim.register_learner`
and :func:`expertlab.sim.register_environment`.  The
pure-exploration procedures (active ranking of experts, best-expert search,
LinFACT) are learners with a stopping time on the query oracles
:func:`expert_tasks` (feedback ``"expert-queries"``) and :func:`linear_arms`
(``"linear"``); PASCombUCB and CUCB take ``"semi-bandit"`` feedback from
:func:`safe_comb_instance`; all run through :func:`expertlab.sim.run`.
The contextual learners with expert advice (Exp4; expertise trees over
in-house Hoeffding regression trees, with kNN and global Thompson baselines)
declare ``feedback == "advice"`` and run on the environments
:func:`contextual_policies` and :func:`partitioned_expertise` through
:func:`expertlab.sim.run` (observations :class:`Advice`, actions :class:`AdviceChoice`).
"""

from ..sim._rates import document_claims as _document_claims
from . import _claims, _claims_exploration, _claims_safe, _claims_trees, instances  # noqa: F401  (register claims)
from ._active_ranking import (ExpertQueryState, ExpertTasks, QueryBatch, active_ranking, compare_experts,
                              comparison_budget, dense_gap_means, expert_tasks, one_task_gap_means)
from ._best_expert import best_expert, cluster_below_best_means
from ._elimination import EliminationState, successive_elimination
from ._etc import etc_expected_regret, explore_then_commit
from ._exp3 import Exp3State, exp3, exp3_ix
from ._advice import (Advice, AdviceChoice, AdviceInstance, PartitionedExpertise, contextual_policies,
                      partitioned_expertise)
from ._exp4 import Exp4State, exp4
from ._expertise_trees import ExpertiseTreesState, KnnExpertsState, expertise_trees, global_thompson, knn_experts
from ._hoeffding_tree import (HoeffdingTreeConfig, HoeffdingTreeState, hoeffding_tree_config, hoeffding_tree_init,
                              hoeffding_tree_leaves, hoeffding_tree_update)
from ._kl_ucb import kl_ucb, kl_ucb_index
from ._linfact import (LinearArms, LinFACTState, eps_good_set, linear_arms, linfact, two_level_linear_arms,
                       unstructured_all_eps_good, xy_optimal_design)
from ._pascombucb import (SafeCombInstance, SafeCombState, SuperArm, cucb, hou_tan_zhong_instance, pascombucb,
                          safe_comb_instance)
from ._thompson import thompson_sampling
from ._tsallis import tsallis_inf, tsallis_weights
from ._ucb import IndexState, moss, ucb1, ucb_alpha

def _register() -> None:
    from .. import sim

    def example(factory, arms=(0.3, 0.5, 0.7)):
        return lambda: (factory(), instances.bernoulli(list(arms)), 40)

    for name, factory in (("ucb1", ucb1), ("ucb_alpha", ucb_alpha), ("kl_ucb", kl_ucb),
                          ("thompson_sampling", thompson_sampling), ("exp3", exp3), ("moss", moss),
                          ("tsallis_inf", tsallis_inf), ("explore_then_commit", explore_then_commit),
                          ("successive_elimination", successive_elimination)):
        sim.register_learner(name, factory, family="bandits", feedback="bandit", example=example(factory))
        _document_claims(factory, name)
    sim.register_learner("exp3_ix", exp3_ix, family="bandits", feedback="bandit",
                         example=lambda: (exp3_ix(40, 3), instances.bernoulli([0.3, 0.5, 0.7]), 40))
    _document_claims(exp3_ix, "exp3_ix")
    # contextual bandits with expert advice (feedback "advice")
    sim.register_learner("exp4", exp4, family="bandits", feedback="advice",
                         example=lambda: (exp4(), contextual_policies(3, 3, 4), 40))
    for name, factory in (("expertise_trees", expertise_trees), ("global_thompson", global_thompson),
                          ("knn_experts", knn_experts)):
        sim.register_learner(name, factory, family="bandits", feedback="advice",
                             example=lambda f=factory: (f(), partitioned_expertise(), 40))
    for name, factory in (("contextual_policies", contextual_policies),
                          ("partitioned_expertise", partitioned_expertise)):
        sim.register_environment(name, factory, family="bandits", feedback="advice")
    for name, factory in instances.INSTANCES.items():
        sim.register_environment(name, factory, family="bandits", feedback="bandit")


_register()


def _register_exploration() -> None:
    """Safe semi-bandits and pure exploration: learners and environment constructors."""
    from .. import sim

    sim.register_learner("pascombucb", pascombucb, family="bandits", feedback="semi-bandit",
                         example=lambda: (pascombucb(), hou_tan_zhong_instance(0.6, binding=True), 60))
    sim.register_learner("cucb", cucb, family="bandits", feedback="semi-bandit",
                         example=lambda: (cucb(), hou_tan_zhong_instance(0.6, binding=True), 60))
    sim.register_environment("safe_comb", safe_comb_instance, family="bandits", feedback="semi-bandit")
    sim.register_environment("hou_tan_zhong", hou_tan_zhong_instance, family="bandits", feedback="semi-bandit")
    tasks = lambda: expert_tasks(one_task_gap_means(4, 3, 1.0))  # noqa: E731
    for name, factory in (("active_ranking", active_ranking), ("best_expert", best_expert)):
        sim.register_learner(name, factory, family="bandits", feedback="expert-queries",
                             example=lambda f=factory: (f(), tasks(), 400))
    sim.register_learner("compare_experts", compare_experts, family="bandits", feedback="expert-queries",
                         example=lambda: (compare_experts(), expert_tasks(one_task_gap_means(2, 3, 1.0)), 400))
    sim.register_environment("expert_tasks", expert_tasks, family="bandits", feedback="expert-queries")
    arms = lambda: linear_arms(*two_level_linear_arms(6, 2))  # noqa: E731
    sim.register_learner("linfact", linfact, family="bandits", feedback="linear",
                         example=lambda: (linfact(0.2, n_design_iter=30), arms(), 30))
    sim.register_learner("unstructured_all_eps_good", unstructured_all_eps_good, family="bandits",
                         feedback="linear", example=lambda: (unstructured_all_eps_good(0.2), arms(), 30))
    sim.register_environment("linear_arms", linear_arms, family="bandits", feedback="linear")


_register_exploration()

__all__ = [
    "instances",
    # regret learners
    "ucb1",
    "ucb_alpha",
    "moss",
    "IndexState",
    "kl_ucb",
    "kl_ucb_index",
    "thompson_sampling",
    "exp3",
    "exp3_ix",
    "Exp3State",
    # contextual bandits with expert advice
    "Advice",
    "AdviceChoice",
    "AdviceInstance",
    "contextual_policies",
    "PartitionedExpertise",
    "partitioned_expertise",
    "exp4",
    "Exp4State",
    "expertise_trees",
    "ExpertiseTreesState",
    "global_thompson",
    "knn_experts",
    "KnnExpertsState",
    "HoeffdingTreeConfig",
    "HoeffdingTreeState",
    "hoeffding_tree_config",
    "hoeffding_tree_init",
    "hoeffding_tree_leaves",
    "hoeffding_tree_update",
    "tsallis_inf",
    "tsallis_weights",
    "explore_then_commit",
    "etc_expected_regret",
    "successive_elimination",
    "EliminationState",
    # active ranking of experts
    "ExpertQueryState",
    "ExpertTasks",
    "QueryBatch",
    "expert_tasks",
    "active_ranking",
    "best_expert",
    "cluster_below_best_means",
    "compare_experts",
    "comparison_budget",
    "dense_gap_means",
    "one_task_gap_means",
    # all eps-best arms in linear bandits
    "LinearArms",
    "LinFACTState",
    "linear_arms",
    "eps_good_set",
    "linfact",
    "two_level_linear_arms",
    "unstructured_all_eps_good",
    "xy_optimal_design",
    # safe combinatorial semi-bandits
    "SafeCombInstance",
    "SafeCombState",
    "SuperArm",
    "safe_comb_instance",
    "cucb",
    "hou_tan_zhong_instance",
    "pascombucb",
]
