"""Bad-input cases of the mixtures family for ``test_bad_inputs.py``.

``LEARNERS`` / ``ENVIRONMENTS``: registered name -> ``[(kwargs, exception, word)]``, the factory
must raise ``exception`` naming ``word`` when called with ``kwargs``.
``EXEMPT``: public name -> why it needs no bad-input test.
"""

import numpy as np  # noqa: F401

LEARNERS = {}

ENVIRONMENTS = {}

EXEMPT = {
    "expertlab.mixtures.ClusterTrainResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mixtures.DawidSkeneResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mixtures.EMResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mixtures.PPIResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mixtures.SSMEResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mixtures.ShapleyResult":
        "a result record the library returns: users read it and never construct one",
}
