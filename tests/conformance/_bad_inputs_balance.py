"""Bad-input cases of the balance family for ``test_bad_inputs.py``.

``LEARNERS`` / ``ENVIRONMENTS``: registered name -> ``[(kwargs, exception, word)]``, the factory
must raise ``exception`` naming ``word`` when called with ``kwargs``.
``EXEMPT``: public name -> why it needs no bad-input test.
"""

import numpy as np  # noqa: F401

LEARNERS = {}

ENVIRONMENTS = {}

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
}
