"""Bad-input cases of the experts family for ``test_bad_inputs.py``.

``LEARNERS`` / ``ENVIRONMENTS``: registered name -> ``[(kwargs, exception, word)]``, the factory
must raise ``exception`` naming ``word`` when called with ``kwargs``.
``EXEMPT``: public name -> why it needs no bad-input test.
"""

import numpy as np  # noqa: F401

from expertlab.experts import search_dag

NAN = float("nan")
INF = float("inf")

# a valid DAG for the search_stream cases (its own bad input is tested in tests/unit/experts)
_DAG = search_dag([[], [0], [0]], [0.5, 0.2, 0.1], [1.0, 2.0, 2.0])

_PRIOR_CASES = [
    (dict(prior=[0.5, 0.6]), ValueError, "prior"),            # not on the simplex
    (dict(prior=[NAN, 1.0]), ValueError, "prior"),
    (dict(prior=[0.5 + 0.5j, 0.5]), TypeError, "prior"),      # complex: was coerced, dropping the imaginary part
    (dict(prior=["0.5", "0.5"]), TypeError, "prior"),         # strings: were parsed
]

LEARNERS = {
    "hedge": [
        (dict(eta=-1.0), ValueError, "eta"),
        (dict(eta=NAN), ValueError, "eta"),
        (dict(horizon=2.5), TypeError, "horizon"),
        (dict(schedule="exponential"), ValueError, "schedule"),
    ],
    # adahedge and ftl take no argument: a rate passed to them is refused, not ignored
    "adahedge": [(dict(eta=0.1), TypeError, "eta"), (dict(horizon=100), TypeError, "horizon")],
    "ftl": [(dict(eta=0.1), TypeError, "eta"), (dict(noise="gumbel"), TypeError, "noise")],
    "fixed_share": [
        (dict(eta=0.1, alpha=1.5), ValueError, "alpha"),
        (dict(eta=0.1, alpha=NAN), ValueError, "alpha"),
        (dict(eta=-1.0), ValueError, "eta"),
        (dict(horizon=10, n_switches=-1), ValueError, "n_switches"),
    ],
    "ftpl": [
        (dict(eta=0.0), ValueError, "eta"),
        (dict(noise="normal"), ValueError, "noise"),
        (dict(horizon=0), ValueError, "horizon"),
    ],
    "squint": _PRIOR_CASES,
    "ml_prod": _PRIOR_CASES[:2] + [(dict(prior=[1.5, -0.5]), ValueError, "prior")],
    "boa": _PRIOR_CASES,
    "adanormalhedge": _PRIOR_CASES[:3] + [(dict(prior=[[0.5], [0.5, 0.0]]), TypeError, "prior")],
    "memory_bounded": [
        (dict(memory=0, epoch=5), ValueError, "memory"),
        (dict(memory=2.5, epoch=5), TypeError, "memory"),
        (dict(memory=2, epoch=0), ValueError, "epoch"),
        (dict(memory=2, epoch=5, eta=NAN), ValueError, "eta"),
    ],
    "memory_adaptive": [
        (dict(memory=0, epoch=5), ValueError, "memory"),
        (dict(memory=2, epoch=0), ValueError, "epoch"),
        (dict(memory=2, horizon=1.5), TypeError, "horizon"),
        (dict(memory=2, horizon=10, epoch=5), ValueError, "epoch"),
    ],
    "sparse_vector_experts": [
        (dict(epsilon=-1.0), ValueError, "epsilon"),
        (dict(delta=0.9), ValueError, "delta"),
        (dict(horizon=2.5), TypeError, "horizon"),
        (dict(noise="no"), TypeError, "noise"),
    ],
    "noisy_ftpl": [
        (dict(epsilon=NAN), ValueError, "epsilon"),
        (dict(delta=-0.1), ValueError, "delta"),
        (dict(horizon=0), ValueError, "horizon"),
        (dict(horizon=10 ** 30), ValueError, "horizon"),      # the accountant's arithmetic overflowed
    ],
    "tree_ftrl": [
        (dict(epsilon=0.0), ValueError, "epsilon"),
        (dict(epsilon="1"), TypeError, "epsilon"),
        (dict(horizon=2.5), TypeError, "horizon"),
    ],
    "small_loss_experts": [
        (dict(epsilon=INF), ValueError, "epsilon"),
        (dict(max_switches=0), ValueError, "max_switches"),
        (dict(threshold=-1.0), ValueError, "threshold"),
        (dict(noise=1), TypeError, "noise"),
    ],
    "groupwise": [
        (dict(group_learner="lasso"), ValueError, "group_learner"),
        (dict(ridge=0.0), ValueError, "ridge"),
        (dict(ridge=NAN), ValueError, "ridge"),
    ],
    "pooled_regression": [
        (dict(group_learner="lasso"), ValueError, "group_learner"),
        (dict(ridge=-1.0), ValueError, "ridge"),
        (dict(ridge="1"), TypeError, "ridge"),
    ],
    "lomar": [
        (dict(rho=-0.5), ValueError, "rho"),
        (dict(rho=NAN), ValueError, "rho"),
        (dict(budget=-1.0), ValueError, "budget"),
        (dict(proposer="oracle"), ValueError, "proposer"),
    ],
    "matching_proposer": [
        (dict(proposer="oracle"), ValueError, "proposer"),
        (dict(proposer=3), TypeError, "proposer"),
        (dict(noise=-1.0), ValueError, "noise"),
    ],
    "mentor_hedge": [
        (dict(n_thresholds=1), ValueError, "n_thresholds"),
        (dict(query_prob=1.5), ValueError, "query_prob"),
        (dict(radius=-0.1), ValueError, "radius"),
        (dict(allow_queries="no"), TypeError, "allow_queries"),
    ],
    "dag_greedy": [
        (dict(stop="no"), TypeError, "stop"),                 # a truthy string must not mean True
        (dict(stop=None), TypeError, "stop"),
    ],
    "dag_optimistic": [
        (dict(bonus=-1.0), ValueError, "bonus"),
        (dict(bonus=NAN), ValueError, "bonus"),
        (dict(replan_every=0), ValueError, "replan_every"),
        (dict(replan_every=1.5), TypeError, "replan_every"),
    ],
}

ENVIRONMENTS = {
    # anti_correlated has no argument: a size passed to it is refused, not ignored
    "anti_correlated": [(dict(n_experts=3), TypeError, "n_experts"), (dict(gap=0.1), TypeError, "gap")],
    "fair_coins": [
        (dict(n_experts=0), ValueError, "n_experts"),
        (dict(n_experts=2.5), TypeError, "n_experts"),
        (dict(n_experts=10 ** 12), ValueError, "n_experts"),  # cannot be allocated
    ],
    "iid_uniform": [
        (dict(n_experts=-1), ValueError, "n_experts"),
        (dict(n_experts="3"), TypeError, "n_experts"),
        (dict(n_experts=10 ** 12), ValueError, "n_experts"),
    ],
    "iid_bernoulli": [
        (dict(means=[0.5, 1.5]), ValueError, "means"),
        (dict(means=[NAN, 0.5]), ValueError, "means"),
        (dict(means=[0.5 + 1j]), TypeError, "means"),
        (dict(means=0.5), ValueError, "means"),               # a scalar was taken for one expert
    ],
    "needle": [
        (dict(gap=0.6), ValueError, "gap"),
        (dict(gap=NAN), ValueError, "gap"),
        (dict(n_experts=0), ValueError, "n_experts"),
        (dict(n_experts=10 ** 12), ValueError, "n_experts"),  # was a MemoryError
    ],
    "piecewise_best": [
        (dict(period=0), ValueError, "period"),
        (dict(period=2.5), TypeError, "period"),
        (dict(gap=-0.1), ValueError, "gap"),
    ],
    "loss_matrix": [
        (dict(losses=[0.5, 0.5]), ValueError, "losses"),      # 1-D
        (dict(losses=[[1.5, 0.5]]), ValueError, "losses"),
        (dict(losses=[[NAN, 0.5]]), ValueError, "losses"),
        (dict(losses=[[0.5], [0.5, 0.1]]), TypeError, "losses"),
    ],
    "realizable": [
        (dict(n_experts=1), ValueError, "n_experts"),
        (dict(p=1.5), ValueError, "p"),
        (dict(best=8), ValueError, "best"),
        (dict(n_experts=10 ** 12), ValueError, "n_experts"),  # was a MemoryError
    ],
    "small_loss": [
        (dict(p=NAN), ValueError, "p"),
        (dict(best_loss=-1), ValueError, "best_loss"),
        (dict(best=-1), ValueError, "best"),
        (dict(n_experts=10 ** 12), ValueError, "n_experts"),  # was a MemoryError
    ],
    "recent_plays_attack": [
        (dict(n_experts=1), ValueError, "n_experts"),
        (dict(n_experts=8, window=0), ValueError, "window"),
        (dict(n_experts=8, window=9), ValueError, "window"),
        (dict(n_experts=8, window=2.5), TypeError, "window"),
    ],
    "intersecting_groups": [
        (dict(dim=1), ValueError, "dim"),
        (dict(noise=-1.0), ValueError, "noise"),
        (dict(betas=np.zeros((4, 3)) + 0j), TypeError, "betas"),          # was cast, dropping the imaginary part
        (dict(hypotheses=[[0.0, 0.0, 0.0], [0.0, 0.0]]), TypeError, "hypotheses"),  # was a raw numpy error
    ],
    "random_bipartite": [
        (dict(n_offline=0, n_online=4), ValueError, "n_offline"),
        (dict(n_offline=4, n_online=2.5), TypeError, "n_online"),
        (dict(n_offline=4, n_online=4, edge_prob=1.5), ValueError, "edge_prob"),
        (dict(n_offline=4, n_online=4, w_max=NAN), ValueError, "w_max"),
    ],
    "fixed_bipartite": [
        (dict(weights=[[1.0], [1.0, 0.5]]), TypeError, "weights"),        # was a raw numpy error
        (dict(weights=[["1", "0.5"]]), TypeError, "weights"),             # strings were parsed
        (dict(weights=[[-1.0, 0.5]]), ValueError, "weights"),
        (dict(weights=[[1.0, 0.5]], w_max=0.5), ValueError, "w_max"),
    ],
    "threshold_mentor": [
        (dict(threshold=1.5), ValueError, "threshold"),
        (dict(lipschitz=0.0), ValueError, "lipschitz"),
        (dict(inputs="adversarial"), ValueError, "inputs"),
        (dict(inputs=["0.2", "0.7"]), TypeError, "inputs"),               # strings were parsed
    ],
    "search_stream": [
        (dict(dag=[[], [0]]), TypeError, "dag"),
        (dict(dag=_DAG, budget=0.0), ValueError, "budget"),
        (dict(dag=_DAG, n_budgets=1), ValueError, "n_budgets"),
        (dict(dag=_DAG, n_budgets=10 ** 12), ValueError, "n_budgets"),  # was a MemoryError
    ],
}

_STATE = "learner state: built by the learner's init and advanced by update, never by users"
_RESULT = "a result record the library returns: users read it and never construct one"
_OBS = "an observation the environment builds each round for the learner: users never construct one"
_FEEDBACK = "a feedback record the environment builds each round for the learner: users never construct one"

EXEMPT = {
    "expertlab.experts.AdaHedgeState": _STATE,
    "expertlab.experts.AdaNormalHedgeState": _STATE,
    "expertlab.experts.AttackState":
        "environment state: built by AdaptiveAdversary.reset and advanced by its step, never by users",
    "expertlab.experts.AuditResult": _RESULT,
    "expertlab.experts.BOAState": _STATE,
    "expertlab.experts.FTLState": _STATE,
    "expertlab.experts.FTPLState": _STATE,
    "expertlab.experts.FixedShareState": _STATE,
    "expertlab.experts.GroupwiseState": _STATE,
    "expertlab.experts.HedgeState": _STATE,
    "expertlab.experts.LOMARState": _STATE,
    "expertlab.experts.MLProdState": _STATE,
    "expertlab.experts.MemoryAdaptiveState": _STATE,
    "expertlab.experts.MemoryBoundedState": _STATE,
    "expertlab.experts.MentorHedgeState": _STATE,
    "expertlab.experts.NoisyFTPLState": _STATE,
    "expertlab.experts.SearchState": _STATE,
    "expertlab.experts.SmallLossState": _STATE,
    "expertlab.experts.SparseVectorState": _STATE,
    "expertlab.experts.SquintState": _STATE,
    "expertlab.experts.TreeFTRLState": _STATE,
    "expertlab.experts.SmallLossSchedule":
        "a result record small_loss_schedule returns (and small_loss_experts computes): users read it",
    "expertlab.experts.SearchPlan":
        "a result record greedy_search and brute_force_search return: users read it and never construct one",
    "expertlab.experts.GroupContext": _OBS,
    "expertlab.experts.Arrival": _OBS,
    "expertlab.experts.GroupFeedback": _FEEDBACK,
    "expertlab.experts.MatchFeedback": _FEEDBACK,
    "expertlab.experts.MentorFeedback": _FEEDBACK,
    "expertlab.experts.SearchOutcome": _FEEDBACK,
}
