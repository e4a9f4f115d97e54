"""Bad-input cases of the bandits family for ``test_bad_inputs.py``.

``LEARNERS`` / ``ENVIRONMENTS``: registered name -> ``[(kwargs, exception, word)]``, the factory
must raise ``exception`` naming ``word`` when called with ``kwargs``.
``EXEMPT``: public name -> why it needs no bad-input test.
"""

import numpy as np  # noqa: F401

LEARNERS = {}

ENVIRONMENTS = {}

EXEMPT = {
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
