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


def test_power_at_least_passes_at_or_below_the_exponent_and_fails_above():
    rng = np.random.default_rng(4)
    x = np.array([2.0, 4.0, 8.0, 16.0])
    y = x[:, None] * rng.uniform(0.5, 1.5, size=(1, 300))  # exact exponent 1 in every column

    def claim(predicted, tolerance=0.0):
        return RateClaim("test.at-least-power", "regret", "d", "power_at_least", predicted, tolerance, source="test")

    assert check_rate(claim(1.0), x, y).passed
    assert check_rate(claim(0.5), x, y).passed
    chk = check_rate(claim(1.3), x, y)
    assert not chk.passed and chk.fitted == pytest.approx(1.0, abs=1e-12)
    assert check_rate(claim(1.3, tolerance=0.3 + 1e-9), x, y).passed
    assert math.isnan(chk.slack)     # a lower bound has no companion rule
    # the upper-bound law reads the same data the other way round
    assert not check_rate(_power_claim(0.5), x, y).passed


def test_slack_is_the_room_under_an_upper_bound_and_nan_for_other_laws():
    rng = np.random.default_rng(3)
    x = np.array([10.0, 100.0, 1000.0, 10000.0])
    y = np.sqrt(x)[:, None] * rng.uniform(0.5, 1.5, size=(1, 300))
    assert check_rate(_power_claim(0.8), x, y).slack == pytest.approx(0.3, abs=1e-12)
    assert check_rate(_power_claim(0.3), x, y).slack == pytest.approx(-0.2, abs=1e-12)
    two_sided = RateClaim("test.power", "regret", "T", "power", 0.5, 0.05, source="test")
    assert math.isnan(check_rate(two_sided, x, y).slack)
    assert check_rate(_power_claim(0.8), x, y).to_dict()["slack"] == pytest.approx(0.3, abs=1e-12)


def test_sharpened_by_names_other_claims():
    c = RateClaim("test.bound", "regret", "T", "power_at_most", 0.5, 0.0, source="test",
                  sharpened_by=("test.attained",))
    assert c.sharpened_by == ("test.attained",)
    with pytest.raises(TypeError, match="sharpened_by"):
        RateClaim("test.bound", "regret", "T", "power_at_most", 0.5, 0.0, source="test",
                  sharpened_by="test.attained")
    with pytest.raises(TypeError, match="sharpened_by"):
        RateClaim("test.bound", "regret", "T", "power_at_most", 0.5, 0.0, source="test", sharpened_by=("",))
    with pytest.raises(ValueError, match="sharpened_by"):
        RateClaim("test.bound", "regret", "T", "power_at_most", 0.5, 0.0, source="test",
                  sharpened_by=("test.bound",))


# ------------------------------------------------------------ the detectable violation rate

def test_detectable_rate_when_every_run_must_succeed():
    # 32 runs certify 0.9 only when all succeed (0.05**(1/32) = 0.911 >= 0.9, 0.05-quantile with 31 is below);
    # the check then fails with probability 1 - (1 - v)**32, equal to 0.8 at v = 1 - 0.2**(1/32)
    from expertlab.sim import detectable_violation_rate

    c = _claim(predicted=0.9)
    v = detectable_violation_rate(c, 32)
    assert v == pytest.approx(1 - 0.2 ** (1 / 32), rel=1e-10)
    chk = check_rate(c, [1.0], _y(32, 32))
    assert chk.detectable_violation == v
    assert "detects a failure rate >= 0.0491" in chk.summary()


@pytest.mark.parametrize("predicted,n,power", [(0.9, 200, 0.8), (0.5, 40, 0.8), (0.95, 120, 0.9), (0.3, 7, 0.5)])
def test_detectable_rate_is_where_the_failure_probability_reaches_the_power(predicted, n, power):
    # brute force over the binomial: the check fails with probability `power` at the returned rate,
    # and with less at any smaller rate
    from expertlab.sim import detectable_violation_rate

    c = _claim(predicted=predicted)
    passes = np.array([check_rate(c, [1.0], _y(s, n)).passed for s in range(n + 1)])
    s_min = int(np.argmax(passes))
    assert passes[s_min:].all() and not passes[:s_min].any()  # passing is monotone in the successes
    v = detectable_violation_rate(c, n, power=power)
    assert binom.cdf(s_min - 1, n, 1 - v) == pytest.approx(power, rel=1e-8)
    assert binom.cdf(s_min - 1, n, 1 - v + 0.01) < power


def test_detectable_rate_edge_cases_and_non_at_least_claims():
    from expertlab.sim import detectable_violation_rate

    # 10 runs can never certify 0.99 at level 0.95 (0.05**(1/10) = 0.74): every data set fails
    assert detectable_violation_rate(_claim(predicted=0.99), 10) == 0.0
    assert not check_rate(_claim(predicted=0.99), [1.0], _y(10, 10)).passed
    # a claim of probability 0 passes with any data: only a certain failure is "detected"
    assert detectable_violation_rate(_claim(predicted=0.0), 10) == 1.0
    # the burden of proof is on passing: once 0.9 can be certified at all (29 runs: 0.05**(1/29) = 0.9019),
    # the check fails with probability 0.8 already below the allowed failure rate 0.1, and approaches it as
    # the runs grow (the pass threshold s_min / n falls towards 0.9)
    c = _claim(predicted=0.9)
    assert detectable_violation_rate(c, 28) == 0.0
    rates = [detectable_violation_rate(c, n) for n in (29, 100, 1000, 10_000)]
    assert all(0.0 < v < 0.1 for v in rates)
    assert rates[-1] > 0.097
    power = RateClaim("test.pow", "regret", "T", "power", 0.5, 0.05, source="test")
    x = np.array([10.0, 100.0])
    assert math.isnan(check_rate(power, x, np.outer(np.sqrt(x), np.ones(5))).detectable_violation)
    assert check_rate(power, x, np.outer(np.sqrt(x), np.ones(5))).to_dict()["detectable_violation"] is None


def test_detectable_rate_refuses_bad_input_naming_it():
    from expertlab.sim import detectable_violation_rate

    power = RateClaim("test.pow", "regret", "T", "power", 0.5, 0.05, source="test")
    with pytest.raises(ValueError, match="at_least"):
        detectable_violation_rate(power, 10)
    with pytest.raises(TypeError, match="claim"):
        detectable_violation_rate("test.at-least", 10)
    with pytest.raises((TypeError, ValueError), match="n_reps"):
        detectable_violation_rate(_claim(), 0)
    with pytest.raises((TypeError, ValueError), match="n_reps"):
        detectable_violation_rate(_claim(), 2.5)
    for bad in (0.0, 1.0, 1.5, math.nan):
        with pytest.raises(ValueError, match="power"):
            detectable_violation_rate(_claim(), 10, power=bad)
