"""Stochastic and adversarial multi-armed bandits, pure exploration and safe combinatorial semi-bandits.

Regret learners declare ``feedback == "bandit"``: each round every replication
pulls one arm and sees only that arm's outcome (contract:
:mod:`expertlab.sim._bandit_run`).  :data:`LEARNERS` maps registered names to
factories and :data:`instances.INSTANCES` does the same for arm sets.  The
pure-exploration procedures (active ranking of experts, LinFACT)
and PASCombUCB have their own batched drivers and return frozen results.
The contextual learners with expert advice (Exp4; expertise trees over
in-house Hoeffding regression trees, with kNN and global Thompson baselines)
declare ``feedback == "advice"`` and run on the environments
:func:`contextual_policies` and :func:`partitioned_expertise` through
:func:`expertlab.sim.run` (contract: :mod:`expertlab.bandits._advice`).
"""

from ..sim._rates import document_claims as _document_claims
from . import _claims, _claims_exploration, _claims_safe, _claims_trees, instances  # noqa: F401  (register claims)
from ._active_ranking import (ActiveRankingResult, active_ranking, compare_experts, comparison_budget,
                              dense_gap_means, one_task_gap_means)
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
from ._linfact import (LinFACTResult, eps_good_set, linfact, two_level_linear_arms, unstructured_all_eps_good,
                       xy_optimal_design)
from ._pascombucb import PASCombUCBResult, cucb, hou_tan_zhong_instance, pascombucb
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
    "ActiveRankingResult",
    "active_ranking",
    "best_expert",
    "cluster_below_best_means",
    "compare_experts",
    "comparison_budget",
    "dense_gap_means",
    "one_task_gap_means",
    # all eps-best arms in linear bandits
    "LinFACTResult",
    "eps_good_set",
    "linfact",
    "two_level_linear_arms",
    "unstructured_all_eps_good",
    "xy_optimal_design",
    # safe combinatorial semi-bandits
    "PASCombUCBResult",
    "cucb",
    "hou_tan_zhong_instance",
    "pascombucb",
]
