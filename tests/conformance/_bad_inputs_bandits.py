"""Bad-input cases of the bandits family for ``test_bad_inputs.py``.

``LEARNERS`` / ``ENVIRONMENTS``: registered name -> ``[(kwargs, exception, word)]``, the factory
must raise ``exception`` naming ``word`` when called with ``kwargs``.
``EXEMPT``: public name -> why it needs no bad-input test.
"""

import numpy as np  # noqa: F401

LEARNERS = {
    "ucb1": [
        (dict(c=0.0), ValueError, "c"), (dict(c=np.nan), ValueError, "c"), (dict(c="2"), TypeError, "c"),
    ],
    "ucb_alpha": [
        (dict(alpha=2.0), ValueError, "alpha"), (dict(alpha=np.inf), ValueError, "alpha"),
        (dict(alpha=None), TypeError, "alpha"),
    ],
    "moss": [
        (dict(horizon=0), ValueError, "horizon"), (dict(horizon=2.5), TypeError, "horizon"),
        (dict(horizon="10"), TypeError, "horizon"),
    ],
    "kl_ucb": [
        (dict(c=-1.0), ValueError, "c"), (dict(kind="poisson"), ValueError, "kind"),
        (dict(kind="gaussian", sigma=0.0), ValueError, "sigma"), (dict(c=np.nan), ValueError, "c"),
    ],
    "thompson_sampling": [
        (dict(kind="poisson"), ValueError, "kind"), (dict(prior=(0.0, 1.0)), ValueError, "prior"),
        (dict(prior=(1.0,)), TypeError, "prior"), (dict(sigma=np.nan), ValueError, "sigma"),
    ],
    "exp3": [
        (dict(eta=-1.0), ValueError, "eta"), (dict(horizon=10), ValueError, "n_arms"),
        (dict(horizon=10, n_arms=1), ValueError, "n_arms"), (dict(horizon=10.0, n_arms=3), TypeError, "horizon"),
    ],
    "exp3_ix": [
        (dict(horizon=0, n_arms=3), ValueError, "horizon"), (dict(horizon=10, n_arms=1), ValueError, "n_arms"),
        (dict(horizon=10, n_arms="3"), TypeError, "n_arms"),
    ],
    "tsallis_inf": [
        (dict(scale=0.0), ValueError, "scale"), (dict(scale=np.nan), ValueError, "scale"),
        (dict(scale="2"), TypeError, "scale"),
    ],
    "explore_then_commit": [
        (dict(m=0), ValueError, "m"), (dict(m=2.5), TypeError, "m"), (dict(m=True), TypeError, "m"),
    ],
    "successive_elimination": [
        (dict(delta=0.0), ValueError, "delta"), (dict(delta=1.0), ValueError, "delta"),
        (dict(delta=np.nan), ValueError, "delta"), (dict(delta="0.1"), TypeError, "delta"),
    ],
    "exp4": [
        (dict(eta=0.0), ValueError, "eta"), (dict(eta=np.inf), ValueError, "eta"), (dict(eta="1"), TypeError, "eta"),
    ],
    "expertise_trees": [
        (dict(max_depth=13), ValueError, "max_depth"), (dict(n_bins=1), ValueError, "n_bins"),
        (dict(n_bins=2**40), ValueError, "n_bins"), (dict(delta=1.0), ValueError, "delta"),
    ],
    # no settings: the tree settings of expertise_trees are refused, not silently dropped
    "global_thompson": [
        (dict(max_depth=3), TypeError, "max_depth"), (dict(n_bins=16), TypeError, "n_bins"),
    ],
    "knn_experts": [
        (dict(k=0), ValueError, "k"), (dict(memory=5), ValueError, "memory"),
        (dict(memory=2**40), ValueError, "memory"), (dict(k=2.5), TypeError, "k"),
    ],
    "linfact": [
        (dict(eps=0.0), ValueError, "eps"), (dict(eps=np.nan), ValueError, "eps"),
        (dict(eps=0.1, delta=1.0), ValueError, "delta"), (dict(eps=0.1, n_design_iter=-1), ValueError, "n_design_iter"),
    ],
    "unstructured_all_eps_good": [
        (dict(eps=-0.1), ValueError, "eps"), (dict(eps=np.inf), ValueError, "eps"),
        (dict(eps=0.1, delta=0.0), ValueError, "delta"), (dict(eps="0.1"), TypeError, "eps"),
    ],
    "active_ranking": [
        (dict(delta=0.0), ValueError, "delta"), (dict(max_queries=0), ValueError, "max_queries"),
        (dict(max_queries=2**63), ValueError, "max_queries"), (dict(schedule="greedy"), ValueError, "schedule"),
    ],
    "best_expert": [
        (dict(method="bisection"), ValueError, "method"), (dict(first_cap=1), ValueError, "first_cap"),
        (dict(first_cap=2**63), ValueError, "first_cap"), (dict(max_queries=10.5), TypeError, "max_queries"),
    ],
    "compare_experts": [
        (dict(delta=1.0), ValueError, "delta"), (dict(max_queries=-1), ValueError, "max_queries"),
        (dict(schedule=None), ValueError, "schedule"), (dict(max_queries=2**70), ValueError, "max_queries"),
    ],
    "pascombucb": [
        (dict(n_warmup=0), ValueError, "n_warmup"), (dict(n_warmup=2.5), TypeError, "n_warmup"),
        (dict(n_warmup=2**41), ValueError, "n_warmup"), (dict(oracle="random"), ValueError, "oracle"),
    ],
    "cucb": [
        (dict(oracle="random"), ValueError, "oracle"), (dict(oracle=None), ValueError, "oracle"),
        (dict(oracle="AUTO"), ValueError, "oracle"),
    ],
}

_MONOTONE = [[1.0, 1.0], [0.0, 0.0]]
_SAFE = dict(means=[0.5, 0.4, 0.3], variances=[0.2, 0.2, 0.1], budget=0.35, k=2)

ENVIRONMENTS = {
    "bernoulli": [
        (dict(means=[0.2, 1.5]), ValueError, "means"), (dict(means=["0.1", "0.2"]), TypeError, "means"),
        (dict(means=[0.5]), ValueError, "means"), (dict(means=[0.2, np.nan]), ValueError, "means"),
    ],
    "gaussian": [
        (dict(means=[0.0, np.inf]), ValueError, "means"), (dict(means=[0.0, 1.0], sigma=0.0), ValueError, "sigma"),
        (dict(means=[0.0, 1j]), TypeError, "means"),
    ],
    "minimax": [
        (dict(n_arms=1, horizon=10), ValueError, "n_arms"), (dict(n_arms=3, horizon=0), ValueError, "horizon"),
        (dict(n_arms=2**40, horizon=10), ValueError, "n_arms"), (dict(n_arms=3.0, horizon=10), TypeError, "n_arms"),
    ],
    "reward_array": [
        (dict(rewards=[[0.0, 1.5]]), ValueError, "rewards"), (dict(rewards=[[0.1, 0.2], [0.3]]), TypeError, "rewards"),
        (dict(rewards=[[np.nan, 0.5]]), ValueError, "rewards"), (dict(rewards=[["0", "1"]]), TypeError, "rewards"),
    ],
    "piecewise_bernoulli": [
        (dict(means=[[0.9, 0.1], [0.1, 0.9]], change_points=[0]), ValueError, "change_points"),
        (dict(means=[[0.9, 0.1], [0.1, 0.9]], change_points=[50.0]), TypeError, "change_points"),
        (dict(means=[[0.9, 1.2], [0.1, 0.9]], change_points=[50]), ValueError, "means"),
        (dict(means=[[0.9, 0.1], [0.1]], change_points=[50]), TypeError, "means"),
    ],
    "contextual_policies": [
        (dict(n_contexts=0), ValueError, "n_contexts"), (dict(gap=0.6), ValueError, "gap"),
        (dict(n_contexts=10**6, n_experts=10**6), ValueError, "n_contexts"), (dict(seed=1.5), TypeError, "seed"),
    ],
    "partitioned_expertise": [
        (dict(n_split_features=3), ValueError, "n_split_features"), (dict(n_experts=5), ValueError, "n_experts"),
        (dict(cells_per_axis=10**5), ValueError, "cells_per_axis"), (dict(gap=np.nan), ValueError, "gap"),
    ],
    "expert_tasks": [
        (dict(means=[[1.0, 0.0], [0.0, 1.0]]), ValueError, "means"), (dict(means=[["1"], ["0"]]), TypeError, "means"),
        (dict(means=_MONOTONE, sigma=0.0), ValueError, "sigma"), (dict(means=[[1.0], [0.0, 1.0]]), TypeError, "means"),
    ],
    "linear_arms": [
        (dict(arms=np.eye(2), theta=["1", "0"]), TypeError, "theta"),
        (dict(arms=[[1.0, 1.0], [2.0, 2.0]], theta=[1.0, 0.0]), ValueError, "arms"),
        (dict(arms=np.eye(2), theta=[1.0, 0.0], misspecification=[0.1]), ValueError, "misspecification"),
        (dict(arms=np.eye(2), theta=[1.0, 0.0], sigma=-1.0), ValueError, "sigma"),
    ],
    "safe_comb": [
        (_SAFE | dict(means=["0.5", "0.4", "0.3"]), TypeError, "means"), (_SAFE | dict(budget=0.2), ValueError, "budget"),
        (_SAFE | dict(k=4), ValueError, "k"), (_SAFE | dict(variances=[0.2, 0.1, np.nan]), ValueError, "variances"),
    ],
    "hou_tan_zhong": [
        (dict(budget=0.1), ValueError, "budget"), (dict(binding="no"), TypeError, "binding"),
        (dict(budget="0.6"), TypeError, "budget"),
    ],
}

EXEMPT = {
    "expertlab.bandits.Advice":
        "observation record: the advice environments build it each round for the learner, users never do",
    "expertlab.bandits.EliminationState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.bandits.Exp3State":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.bandits.Exp4State":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.bandits.ExpertQueryState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.bandits.ExpertiseTreesState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.bandits.HoeffdingTreeState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.bandits.IndexState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.bandits.KnnExpertsState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.bandits.LinFACTState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.bandits.SafeCombState":
        "learner state: built by the learner's init and advanced by update, never by users",
}
