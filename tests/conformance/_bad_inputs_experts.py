"""Bad-input cases of the experts family for ``test_bad_inputs.py``.

``LEARNERS`` / ``ENVIRONMENTS``: registered name -> ``[(kwargs, exception, word)]``, the factory
must raise ``exception`` naming ``word`` when called with ``kwargs``.
``EXEMPT``: public name -> why it needs no bad-input test.
"""

import numpy as np  # noqa: F401

LEARNERS = {}

ENVIRONMENTS = {}

EXEMPT = {
    "expertlab.experts.AdaHedgeState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.AdaNormalHedgeState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.AttackState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.AuditResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.experts.BOAState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.FTLState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.FTPLState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.FixedShareState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.GroupwiseState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.HedgeState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.LOMARState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.MLProdState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.MemoryAdaptiveState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.MemoryBoundedState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.MentorHedgeState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.NoisyFTPLState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.SearchState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.SmallLossState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.SparseVectorState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.SquintState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.experts.TreeFTRLState":
        "learner state: built by the learner's init and advanced by update, never by users",
}
