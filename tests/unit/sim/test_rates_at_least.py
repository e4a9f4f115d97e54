"""The ``at_least`` law of :func:`expertlab.sim.check_rate`: one-sided Clopper–Pearson lower bounds."""

import math

import numpy as np
import pytest
from scipy.stats import binom

from expertlab.sim import RateClaim, check_rate


def _claim(predicted=0.95, tolerance=0.0, level=0.95):
    return RateClaim("test.at-least", "zero-violation indicator", "replication", "at_least", predicted, tolerance,
                     source="test", level=level)


def _y(successes, n):
    y = np.zeros((1, n))
    y[0, :successes] = 1.0
    return y


def test_all_successes_lower_bound_is_alpha_to_the_one_over_n():
    # P(n successes | p) = p**n = alpha at p = alpha**(1/n): the exact one-sided bound in closed form
    for n in (20, 59, 200):
        chk = check_rate(_claim(), [1.0], _y(n, n))
        assert chk.fitted == 1.0
        assert chk.ci_low == pytest.approx(0.05 ** (1.0 / n), rel=1e-10)
        assert chk.ci_high == 1.0
    # 0.95 is certified from 59 straight successes (0.05**(1/59) = 0.9505) but not from 58
    assert check_rate(_claim(), [1.0], _y(59, 59)).passed
    assert not check_rate(_claim(), [1.0], _y(58, 58)).passed


@pytest.mark.parametrize("s,n", [(190, 200), (7, 10), (1, 30)])
def test_lower_bound_solves_the_binomial_tail_equation(s, n):
    lo = check_rate(_claim(), [1.0], _y(s, n)).ci_low
    # at p = lo, seeing s or more successes has probability exactly 1 - level
    assert binom.sf(s - 1, n, lo) == pytest.approx(0.05, rel=1e-8)


def test_zero_successes_gives_zero_and_fails():
    chk = check_rate(_claim(predicted=0.01), [1.0], _y(0, 40))
    assert chk.ci_low == 0.0 and not chk.passed


def test_frequency_below_the_claim_fails_and_tolerance_is_additive():
    y = _y(180, 200)  # 0.90 observed, lower bound about 0.86
    chk = check_rate(_claim(), [1.0], y)
    assert not chk.passed and chk.ci_low < 0.9
    assert check_rate(_claim(tolerance=0.95 - chk.ci_low + 1e-12), [1.0], y).passed


def test_only_the_last_point_is_read_and_indicators_are_required():
    y = np.vstack([np.full(50, 0.3), np.ones(50)])
    chk = check_rate(_claim(), [1.0, 2.0], y)
    assert chk.window.tolist() == [False, True]
    assert math.isclose(chk.ci_low, 0.05 ** (1 / 50))
    with pytest.raises(ValueError, match="0/1 indicators"):
        check_rate(_claim(), [1.0], np.full((1, 10), 0.5))


# --------------------------------------------------------------------------
# the power_at_most law: an O(x**b) upper bound on the fitted exponent


def _power_claim(predicted, tolerance=0.0):
    return RateClaim("test.at-most", "regret", "T", "power_at_most", predicted, tolerance, source="test")


def test_power_at_most_passes_at_or_above_the_exponent_and_fails_below():
    rng = np.random.default_rng(1)
    x = np.array([10.0, 100.0, 1000.0, 10000.0])
    y = np.sqrt(x)[:, None] * rng.uniform(0.5, 1.5, size=(1, 300))  # exact exponent 0.5 in every column
    assert check_rate(_power_claim(0.5), x, y).passed
    assert check_rate(_power_claim(0.8), x, y).passed
    chk = check_rate(_power_claim(0.3), x, y)
    assert not chk.passed and chk.fitted == pytest.approx(0.5, abs=1e-12)
    assert check_rate(_power_claim(0.3, tolerance=0.2 + 1e-9), x, y).passed


def test_power_at_most_reads_a_logarithm_as_exponent_at_most_zero_and_a_line_as_more():
    rng = np.random.default_rng(2)
    x = np.array([1e3, 1e4, 1e5, 1e6])
    noise = rng.uniform(0.9, 1.1, size=(1, 200))
    # increments of a + b ln x over a fixed ratio are constant: exponent 0
    assert check_rate(_power_claim(0.0), x, np.full((4, 1), 3.0) * noise).passed
    assert not check_rate(_power_claim(0.0), x, x[:, None] * noise).passed  # linear growth
