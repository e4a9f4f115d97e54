"""Bad-input cases of the mdp family for ``test_bad_inputs.py``.

``LEARNERS`` / ``ENVIRONMENTS``: registered name -> ``[(kwargs, exception, word)]``, the factory
must raise ``exception`` naming ``word`` when called with ``kwargs``.
``EXEMPT``: public name -> why it needs no bad-input test.
"""

import numpy as np  # noqa: F401

LEARNERS = {}

ENVIRONMENTS = {}

EXEMPT = {
    "expertlab.mdp.ConservativeState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.DROfflineResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.FiniteHorizonResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.MixtureRobustFiniteResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.MixtureRobustResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.PlanningResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.RewardFreeState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.RobustPlanningResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.SafeCostState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.SafeVTRState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.SoftPlanningResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.StreamState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.UCBVIState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.VTRState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.WorstCaseResult":
        "a result record the library returns: users read it and never construct one",
}
