"""The ``always`` law of :func:`expertlab.sim.check_rate`: a deterministic guarantee on every entry."""

import numpy as np
import pytest

from expertlab.sim import RateClaim, check_rate


def _claim(predicted=0.0, tolerance=0.0):
    return RateClaim("test.always", "slack", "rho", "always", predicted, tolerance, source="test")


def test_passes_only_when_every_entry_meets_the_bound():
    y = np.abs(np.random.default_rng(0).normal(size=(4, 50)))
    chk = check_rate(_claim(), np.arange(1.0, 5.0), y)
    assert chk.passed and chk.fitted == pytest.approx(y.min())
    y[2, 17] = -1e-9                      # one violation anywhere fails the claim...
    assert not check_rate(_claim(), np.arange(1.0, 5.0), y).passed
    assert check_rate(_claim(tolerance=1e-8), np.arange(1.0, 5.0), y).passed   # ...unless within the allowance


def test_one_violation_among_many_replications_is_not_averaged_away():
    y = np.ones((1, 10_000))
    y[0, 0] = -0.5
    chk = check_rate(_claim(), [1.0], y)
    assert not chk.passed and chk.fitted == -0.5
