"""Bad-input cases of the mixtures family for ``test_bad_inputs.py``.

``LEARNERS`` / ``ENVIRONMENTS``: registered name -> ``[(kwargs, exception, word)]``, the factory
must raise ``exception`` naming ``word`` when called with ``kwargs``.
``EXEMPT``: public name -> why it needs no bad-input test.
"""

import numpy as np  # noqa: F401

LEARNERS = {}

ENVIRONMENTS = {}

EXEMPT = {
    "expertlab.mixtures.ClusteredSample":
        "the draws sample_clustered_single_index returns: users read them and never construct one",
    "expertlab.mixtures.ContaminatedMoEErrors":
        "a result record returned by parameter_errors and asymptotic_parameter_errors, never built by users",
    "expertlab.mixtures.KLRisk":
        "a result record the library returns (kl_risk): users read it and never construct one",
    "expertlab.mixtures.MetricEstimate":
        "a result record returned by estimate_metrics and the SSME baselines, never built by users",
    "expertlab.mixtures.MoETimeFit":
        "a result record the library returns (fit_moe_time_model): users read it and never construct one",
    "expertlab.mixtures.PolyParameterCount":
        "a result record the library returns (parameter_count): users read it and never construct one",
    "expertlab.mixtures.SSMEParams":
        "the fitted parameters inside the SSMEResult of fit_ssme; no function takes them as input",
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
