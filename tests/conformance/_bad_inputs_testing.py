"""Bad-input cases of ``expertlab.testing`` for ``test_bad_inputs.py`` (tested in ``tests/unit/sim``)."""

LEARNERS = {}

ENVIRONMENTS = {}

EXEMPT = {
    "expertlab.testing.strategies.GaussianMixtureSample":
        "the record gaussian_mixture_samples draws (points, labels, parameters); never built by users",
}
