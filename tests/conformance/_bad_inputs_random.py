"""Bad-input cases of ``expertlab.random`` for ``test_bad_inputs.py`` (tested in ``tests/unit/test_random.py``)."""

LEARNERS = {}

ENVIRONMENTS = {}

EXEMPT = {
    "expertlab.random.EngineKeys":
        "the record engine_keys returns (environment and learner keys); users read it and never construct one",
}
