"""Full-information experts: Hedge and its adaptive variants, sleeping experts, and research algorithms.

Every learner is a :class:`expertlab.sim.Learner` built by a factory named
after the algorithm and registered with :func:`expertlab.sim.register_learner`;
the loss sequences of :mod:`expertlab.experts.instances` are
:class:`expertlab.sim.LossSequence` environments, registered likewise.  All
run through :func:`expertlab.sim.run`.
"""

from ..sim._rates import document_claims as _document_claims
from . import (_claims, _claims_dag, _claims_memory, _claims_mentor, _claims_private,  # noqa: F401  (register claims)
               instances)
from ._adahedge import AdaHedgeState, adahedge
from ._adanormalhedge import AdaNormalHedgeState, adanormalhedge
from ._boa import BOAState, boa
from ._dag_instances import random_dag, random_out_forest, random_series_parallel
from ._dag_learner import SearchOutcome, SearchState, SearchStream, dag_greedy, dag_optimistic, search_stream
from ._dag_search import SearchDAG, SearchPlan, brute_force_search, greedy_search, plan_value, search_dag
from ._fixed_share import FixedShareState, fixed_share
from ._ftl import FTLState, FTPLState, ftl, ftpl
from ._groupwise import (GROUP_NAMES, GroupContext, GroupFeedback, GroupPrediction, GroupRegression, GroupwiseState,
                         groupwise, intersecting_groups, linear_grid, pooled_regression)
from ._hedge import HedgeState, hedge
from ._lomar import (MATCHING_EXPERTS, PROPOSERS, Arrival, BipartiteArrivals, LOMARState, Match, MatchFeedback,
                     fixed_bipartite, lomar, matching_proposer, random_bipartite)
from ._memory_bounded import MemoryBoundedState, memory_bounded, state_nbytes
from ._memory_adaptive import (AdaptiveAdversary, AttackState, MemoryAdaptiveState, memory_adaptive,
                               recent_plays_attack)
from ._mentor import MentorHedgeState, mentor_hedge
from ._mentor_instances import INPUT_KINDS as _MENTOR_INPUT_KINDS
from ._mentor_instances import MentorAction, MentorFeedback, ThresholdMentor, threshold_mentor
from ._mlprod import MLProdState, ml_prod
from ._privacy import AuditResult, PrivacyCost, privacy_audit
from ._private import (NoisyFTPLState, SparseVectorState, TreeFTRLState, audit_private, noisy_ftpl, privacy_cost,
                       realizable, sparse_vector_experts, tree_ftrl)
from ._private_small_loss import (SmallLossSchedule, SmallLossState, small_loss_experts, small_loss_instance,
                                  small_loss_schedule)
from ._squint import SquintState, squint

#: Names of the built-in input sequences of :func:`threshold_mentor`.
MENTOR_INPUT_KINDS = _MENTOR_INPUT_KINDS

def _register() -> None:
    from .. import sim

    def example(factory):
        return lambda: (factory(), instances.needle(4, gap=0.2), 40)

    for name, factory in (("hedge", hedge), ("adahedge", adahedge), ("fixed_share", fixed_share), ("ftl", ftl),
                          ("ftpl", ftpl), ("squint", squint), ("ml_prod", ml_prod), ("boa", boa),
                          ("adanormalhedge", adanormalhedge)):
        sim.register_learner(name, factory, family="experts", feedback="full", example=example(factory))
        _document_claims(factory, name)
    sim.register_learner("memory_bounded", memory_bounded, family="experts", feedback="full",
                         example=lambda: (memory_bounded(memory=2, horizon=40), instances.needle(6, gap=0.2), 40))
    _document_claims(memory_bounded, "memory_bounded")
    # memory against an adaptive adversary; private experts (one-hot plays)
    sim.register_learner("memory_adaptive", memory_adaptive, family="experts", feedback="full",
                         example=lambda: (memory_adaptive(4, epoch=8), recent_plays_attack(8, window=2), 40))
    for name, factory, make in (
            ("sparse_vector_experts", sparse_vector_experts, lambda: sparse_vector_experts(2.0, 40)),
            ("noisy_ftpl", noisy_ftpl, lambda: noisy_ftpl(2.0, 40)),
            ("tree_ftrl", tree_ftrl, lambda: tree_ftrl(2.0, 40)),
            ("small_loss_experts", small_loss_experts, lambda: small_loss_experts(2.0, 40))):
        sim.register_learner(name, factory, family="experts", feedback="full",
                             example=lambda make=make: (make(), instances.needle(4, gap=0.2), 40))
    sim.register_environment("recent_plays_attack", recent_plays_attack, family="experts", feedback="full",
                             example=lambda: (memory_adaptive(4, epoch=8), recent_plays_attack(8, window=2), 40))
    sim.register_environment("realizable", realizable, family="experts", feedback="full")
    sim.register_environment("small_loss", small_loss_instance, family="experts", feedback="full")
    # research learners, each on environments of its own feedback kind
    def forest():
        return search_stream(random_out_forest(4, seed=0), budget=20.0)

    for name, factory, feedback, example in (
            ("groupwise", groupwise, "group_regression", lambda: (groupwise(), intersecting_groups(3), 30)),
            ("pooled_regression", pooled_regression, "group_regression",
             lambda: (pooled_regression(), intersecting_groups(3), 30)),
            ("lomar", lomar, "matching", lambda: (lomar(0.5, proposer="random"), random_bipartite(4, 8), 8)),
            ("matching_proposer", matching_proposer, "matching",
             lambda: (matching_proposer("random"), random_bipartite(4, 8), 8)),
            ("mentor_hedge", mentor_hedge, "mentor", lambda: (mentor_hedge(), threshold_mentor(), 50)),
            ("dag_greedy", dag_greedy, "search", lambda: (dag_greedy(), forest(), 40)),
            ("dag_optimistic", dag_optimistic, "search", lambda: (dag_optimistic(), forest(), 40))):
        sim.register_learner(name, factory, family="experts", feedback=feedback, example=example)
    _document_claims(groupwise, "groupwise")
    _document_claims(pooled_regression, "pooled_regression")
    _document_claims(lomar, "lomar")
    for name, factory, feedback, example in (
            ("intersecting_groups", intersecting_groups, "group_regression",
             lambda: (groupwise(), intersecting_groups(3, models="cells"), 30)),
            ("random_bipartite", random_bipartite, "matching", lambda: (lomar(0.5), random_bipartite(4, 8), 8)),
            ("fixed_bipartite", fixed_bipartite, "matching",
             lambda: (lomar(0.5), fixed_bipartite([[1.0, 0.9], [1.0, 0.0]]), 2)),
            ("threshold_mentor", threshold_mentor, "mentor",
             lambda: (mentor_hedge(), threshold_mentor(inputs="boundary"), 50)),
            ("search_stream", search_stream, "search", lambda: (dag_optimistic(), forest(), 40))):
        sim.register_environment(name, factory, family="experts", feedback=feedback, example=example)
    for name, factory in instances.INSTANCES.items():
        sim.register_environment(name, factory, family="experts", feedback="full")


_register()

__all__ = [
    "instances",
    "hedge",
    "HedgeState",
    "adahedge",
    "AdaHedgeState",
    "fixed_share",
    "FixedShareState",
    "ftl",
    "FTLState",
    "ftpl",
    "FTPLState",
    "squint",
    "SquintState",
    "ml_prod",
    "MLProdState",
    "boa",
    "BOAState",
    "adanormalhedge",
    "AdaNormalHedgeState",
    # memory-bounded experts
    "memory_bounded",
    "MemoryBoundedState",
    "state_nbytes",
    "memory_adaptive",
    "MemoryAdaptiveState",
    "AdaptiveAdversary",
    "AttackState",
    "recent_plays_attack",
    # private experts in the realizable regime
    "sparse_vector_experts",
    "SparseVectorState",
    "noisy_ftpl",
    "NoisyFTPLState",
    "tree_ftrl",
    "TreeFTRLState",
    "small_loss_experts",
    "small_loss_schedule",
    "SmallLossSchedule",
    "SmallLossState",
    "small_loss_instance",
    "privacy_cost",
    "audit_private",
    "realizable",
    "PrivacyCost",
    "AuditResult",
    "privacy_audit",
    # groupwise regret
    "GROUP_NAMES",
    "GroupContext",
    "GroupFeedback",
    "GroupPrediction",
    "GroupRegression",
    "GroupwiseState",
    "groupwise",
    "pooled_regression",
    "intersecting_groups",
    "linear_grid",
    # learning-augmented matching
    "Arrival",
    "BipartiteArrivals",
    "LOMARState",
    "MATCHING_EXPERTS",
    "Match",
    "MatchFeedback",
    "PROPOSERS",
    "fixed_bipartite",
    "lomar",
    "matching_proposer",
    "random_bipartite",
    # mentor queries
    "MENTOR_INPUT_KINDS",
    "MentorAction",
    "MentorFeedback",
    "MentorHedgeState",
    "ThresholdMentor",
    "mentor_hedge",
    "threshold_mentor",
    # search-and-stop on DAGs
    "SearchDAG",
    "SearchOutcome",
    "SearchPlan",
    "SearchState",
    "SearchStream",
    "brute_force_search",
    "dag_greedy",
    "dag_optimistic",
    "greedy_search",
    "plan_value",
    "random_dag",
    "random_out_forest",
    "random_series_parallel",
    "search_dag",
    "search_stream",
]
