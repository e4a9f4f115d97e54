import dataclasses

import numpy as np
import pytest

from expertlab import sim
from expertlab.sim import RateClaim, check_rate


def _claim(**kw):
    base = dict(name="test.demo", quantity="regret", variable="T", law="power", predicted=0.5, tolerance=0.02,
                source="synthetic")
    return RateClaim(**(base | kw))


def _power_data(b, n_reps=300, seed=0, noise=0.3):
    rng = np.random.default_rng(seed)
    x = np.logspace(1, 4, 13)
    y = 3.0 * x[:, None] ** b * np.exp(noise * rng.standard_normal((1, n_reps)))
    return x, y


def test_power_law_recovered_and_wrong_claim_fails():
    x, y = _power_data(0.5)
    ok = check_rate(_claim(), x, y)
    assert ok.passed and ok.ci_low <= 0.5 <= ok.ci_high
    assert abs(ok.fitted - 0.5) < 1e-9  # each replication is an exact power law times a constant
    bad = check_rate(_claim(predicted=0.6), x, y)
    assert not bad.passed


def test_ci_reflects_replication_noise():
    """Independent noise per point: the CI is wide with few replications and shrinks with many."""
    rng = np.random.default_rng(1)
    x = np.logspace(1, 3, 9)
    few = x[:, None] ** 0.5 * (1 + 0.5 * rng.standard_normal((9, 20)))
    many = x[:, None] ** 0.5 * (1 + 0.5 * rng.standard_normal((9, 2000)))
    c = _claim(tolerance=0.0)
    w_few = check_rate(c, x, np.abs(few))
    w_many = check_rate(c, x, np.abs(many))
    assert (w_many.ci_high - w_many.ci_low) < 0.5 * (w_few.ci_high - w_few.ci_low)


def test_fit_window_uses_the_last_decades():
    x = np.logspace(0, 4, 17)
    # slope 1 below x=100, slope 0.5 above
    curve = np.where(x < 100, x, 10 * np.sqrt(x))
    y = curve[:, None] * np.linspace(0.9, 1.1, 50)[None, :]
    assert check_rate(_claim(fit_decades=2.0), x, y).passed
    assert not check_rate(_claim(fit_decades=None), x, y).passed


def test_log_law():
    x = np.logspace(2, 5, 10)
    rng = np.random.default_rng(3)
    y = 2.0 + 7.5 * np.log(x)[:, None] + rng.normal(0, 1.0, size=(10, 400))
    chk = check_rate(_claim(law="log", predicted=7.5, tolerance=0.1), x, y)
    assert chk.passed and chk.fitted == pytest.approx(7.5, abs=0.1)


def test_value_law_three_standard_errors():
    rng = np.random.default_rng(4)
    y = rng.normal(10.0, 2.0, size=(1, 10000))
    c = _claim(law="value", predicted=10.0, tolerance=0.0, level=0.997)
    assert check_rate(c, [1.0], y).passed
    assert not check_rate(dataclasses.replace(c, predicted=10.2), [1.0], y).passed


def test_bad_inputs():
    x, y = _power_data(0.5)
    with pytest.raises(ValueError, match="y must have shape"):
        check_rate(_claim(), x, y[:-1])
    with pytest.raises(ValueError, match="at least 2 replications"):
        check_rate(_claim(), x, y[:, :1])
    with pytest.raises(ValueError, match="finite"):
        check_rate(_claim(), x, np.where(y > 0, np.nan, y))
    with pytest.raises(ValueError, match="law"):
        _claim(law="exp")
    with pytest.raises(ValueError, match="source"):
        _claim(source="")
    with pytest.raises(TypeError, match="claim"):
        check_rate("hedge", x, y)


def test_registry_rejects_conflicting_claims():
    c = _claim(name="test.registry")
    sim.register_claims(c)
    sim.register_claims(c)  # same claim again is fine
    with pytest.raises(ValueError, match="already registered"):
        sim.register_claims(_claim(name="test.registry", predicted=1.0))
    assert sim.get_claim("test.registry") == c


@pytest.mark.parametrize("law", ["power", "power_at_most", "power_at_least"])
@pytest.mark.parametrize("b", [0.5, 1.0, 1.0 / 3.0, 2.0, -0.5, -1.0])
def test_exact_power_law_with_zero_tolerance_passes_despite_rounding(law, b):
    """An exactly constant power law fits its exponent to within rounding (1e-16), which tolerance 0 must accept."""
    for x in (np.array([10.0, 100.0, 1000.0, 10000.0]), np.geomspace(3.0, 3e4, 9),
              np.array([1000.0, 2000.0, 4000.0, 8000.0, 16000.0, 32000.0])):
        y = np.repeat((3.7 * x ** b)[:, None], 4, axis=1)
        chk = check_rate(RateClaim("t.exact", "regret", "T", law, b, 0.0, source="test"), x, y)
        assert abs(chk.fitted - b) < 1e-14
        assert chk.passed, (law, b, chk.fitted)


@pytest.mark.parametrize("b_true, law", [(0.5 + 1e-6, "power"), (0.5 + 1e-6, "power_at_most"),
                                         (0.5 - 1e-6, "power"), (0.5 - 1e-6, "power_at_least")])
def test_zero_tolerance_still_rejects_a_slightly_wrong_exponent(b_true, law):
    x = np.geomspace(10.0, 1e4, 7)
    y = np.repeat((2.0 * x ** b_true)[:, None], 4, axis=1)
    chk = check_rate(RateClaim("t.off", "regret", "T", law, 0.5, 0.0, source="test"), x, y)
    assert not chk.passed, chk.fitted
