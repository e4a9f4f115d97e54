"""Bad-input cases of ``expertlab.testing`` for ``test_bad_inputs.py`` (tested in ``tests/unit/sim``)."""

LEARNERS = {}

ENVIRONMENTS = {}

EXEMPT = {}
