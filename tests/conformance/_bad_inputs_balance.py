"""Bad-input cases of the balance family for ``test_bad_inputs.py``.

``LEARNERS`` / ``ENVIRONMENTS``: registered name -> ``[(kwargs, exception, word)]``, the factory
must raise ``exception`` naming ``word`` when called with ``kwargs``.
``EXEMPT``: public name -> why it needs no bad-input test.
"""

import numpy as np

_S = np.array([[0.9, 0.1, 0.3], [0.2, 0.8, 0.4], [0.5, 0.6, 0.7], [0.1, 0.3, 0.2]])
_GEN = dict(generator="iid_gaussian", generator_params={"n_experts": 3})

LEARNERS = {
    "alf_lb": [
        (dict(step=-1.0), ValueError, "step"),
        (dict(step=float("nan")), ValueError, "step"),
        (dict(rule="softmax"), ValueError, "rule"),
        (dict(bias0=[np.nan, 0.0]), ValueError, "bias0"),
    ],
}

ENVIRONMENTS = {
    "routing": [
        (dict(generator="gauss", n_tokens=8, k=1), ValueError, "generator"),
        (dict(generator=3, n_tokens=8, k=1), TypeError, "generator"),
        (dict(_GEN, n_tokens=0, k=1), ValueError, "n_tokens"),
        (dict(_GEN, n_tokens=8, k=4), ValueError, "k"),
        (dict(_GEN, n_tokens=8.5, k=1), TypeError, "n_tokens"),
    ],
    "routing_fixed": [
        (dict(problem=_S), TypeError, "k"),
        (dict(problem=_S, k=0), ValueError, "k"),
        (dict(problem=np.where(_S > 0.8, np.nan, _S), k=1), ValueError, "scores"),
        (dict(problem=_S, k=1, comparator_bias=[1.0]), ValueError, "comparator_bias"),
    ],
}

EXEMPT = {
    "expertlab.balance.ALFLBState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.balance.AssignmentResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.balance.AuxLossResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.balance.BatchAssignmentResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.balance.CapacityRouteResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.balance.RouteResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.balance.SinkhornResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.balance.TokenMoves":
        "a result record token_moves returns: users read it and never construct one",
    "expertlab.balance.RoutingFeedback":
        "the observation record the routing environments build after each batch; never built by users",
    "expertlab.balance.generators.mean_at":
        "scalar arithmetic compiled into the routing kernels; its arguments come from a validated ScoreGenerator",
    "expertlab.balance.generators.score_at":
        "scalar arithmetic compiled into the routing kernels; its arguments come from a validated ScoreGenerator",
}
