"""Bad-input cases of the testing family for ``test_bad_inputs.py``.

``LEARNERS`` / ``ENVIRONMENTS``: registered name -> ``[(kwargs, exception, word)]``, the factory
must raise ``exception`` naming ``word`` when called with ``kwargs``.
``EXEMPT``: public name -> why it needs no bad-input test.
"""

import numpy as np  # noqa: F401

LEARNERS = {}

ENVIRONMENTS = {}

EXEMPT = {
}
