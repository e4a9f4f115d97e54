"""Scott, Silverman and improved Sheather–Jones bandwidths: hand cases, reference optima, batching, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from expertlab.mixtures import bandwidth, isj_bandwidth, scott_bandwidth, silverman_bandwidth


def test_scott_by_hand():
    x = np.array([-2.0, 0.0, 2.0, 0.0])                   # population sd sqrt(2), n = 4
    assert scott_bandwidth(x) == pytest.approx(np.sqrt(2.0) * (4 / 12) ** 0.2, rel=1e-14)


def test_silverman_by_hand_uses_the_smaller_spread():
    x = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 10.0])
    sd = x.std()
    iqr = np.quantile(x, 0.75) - np.quantile(x, 0.25)    # 0.75: IQR / 1.349 = 0.56 < sd = 2.84
    assert silverman_bandwidth(x) == pytest.approx(0.9 * min(sd, iqr / 1.349) * 10 ** -0.2, rel=1e-14)


@pytest.mark.parametrize("fn", [scott_bandwidth, silverman_bandwidth, isj_bandwidth])
def test_zero_one_weights_select_a_subset(fn):
    rng = np.random.default_rng(3)
    x = rng.normal(size=300)
    keep = rng.uniform(size=300) < 0.5
    sub = fn(x[keep])
    weighted = fn(x, sample_weight=keep.astype(float))
    if fn is silverman_bandwidth:                         # step vs interpolated quantile: close, not equal
        assert weighted == pytest.approx(sub, rel=0.05)
    elif fn is isj_bandwidth:                             # same points, same range, same histogram
        assert weighted == pytest.approx(sub, rel=1e-6)
    else:
        assert weighted == pytest.approx(sub, rel=1e-12)


def test_isj_close_to_normal_reference_optimum_on_gaussian_data():
    x = np.random.default_rng(0).standard_normal((8, 20000))
    ratio = isj_bandwidth(x) / (4 / (3 * 20000)) ** 0.2   # AMISE optimum for N(0, 1) (sd 1 exactly)
    assert np.all(np.abs(ratio - 1) < 0.12)
    assert abs(ratio.mean() - 1) < 0.05


def test_isj_narrower_than_silverman_on_bimodal_data():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(-3, 0.5, (4, 1000)), rng.normal(3, 0.5, (4, 1000))], axis=-1)
    isj, silv = isj_bandwidth(x), silverman_bandwidth(x)
    assert np.all(isj < 0.5 * silv)
    # each mode alone: normal-reference optimum 0.5 (4 / (3 * 1000))^(1/5) = 0.16
    assert np.all(np.abs(isj / (0.5 * (4 / 3000) ** 0.2) - 1) < 0.3)


@pytest.mark.parametrize("rule", ["isj", "scott", "silverman"])
def test_rows_are_independent(rule):
    x = np.random.default_rng(2).normal(size=(3, 2, 200)) * np.array([1.0, 3.0])[:, None]
    batch = bandwidth(x, rule)
    assert batch.shape == (3, 2)
    for i in range(3):
        np.testing.assert_array_equal(bandwidth(x[i, 1], rule), batch[i, 1])


def test_scale_equivariance():
    x = np.random.default_rng(4).normal(size=500)
    for fn in (scott_bandwidth, silverman_bandwidth, isj_bandwidth):
        assert fn(7.0 * x + 3.0) == pytest.approx(7.0 * fn(x), rel=1e-6)


@pytest.mark.parametrize("bad, match", [
    (np.array([0.0, np.nan, 1.0]), "NaN"),
    (np.array([1.0]), "n_samples >= 2"),
    (np.array([2.0, 2.0, 2.0]), "zero spread"),
    ("abc", "array"),
])
def test_bad_samples(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        isj_bandwidth(bad)


def test_bad_weights_and_rule():
    x = np.arange(5.0)
    with pytest.raises(ValueError, match="shape"):
        scott_bandwidth(x, sample_weight=np.ones(4))
    with pytest.raises(ValueError, match="non-negative"):
        scott_bandwidth(x, sample_weight=-np.ones(5))
    with pytest.raises(ValueError, match="positive sum"):
        scott_bandwidth(x, sample_weight=np.zeros(5))
    with pytest.raises(ValueError, match="rule"):
        bandwidth(x, "botev")
    with pytest.raises(ValueError, match="n_grid"):
        isj_bandwidth(x, n_grid=4)


def test_floor_replaces_degenerate_rows_and_bounds_the_rest():
    x = np.stack([np.random.default_rng(5).normal(size=100), np.full(100, 2.0)])
    for rule in ("isj", "scott", "silverman"):
        h = bandwidth(x, rule, floor=0.05)
        assert h[1] == 0.05 and h[0] == pytest.approx(bandwidth(x[0], rule), rel=1e-12)
        assert bandwidth(x[0], rule, floor=10.0) == 10.0
    with pytest.raises(ValueError, match="floor"):
        bandwidth(x, "scott", floor=0.0)


def test_floor_replaces_rows_whose_weighted_spread_underflows():
    # distinct values, but w (x - mean)^2 = 1e-200 * 1e-200 underflows: the spread is 0 in double precision
    x = np.array([[0.0, 1e-100, 0.0], [0.0, 1.0, 2.0]])
    w = np.array([[1.0, 1e-200, 0.5], [1.0, 1.0, 1.0]])
    for rule in ("isj", "scott", "silverman"):
        h = bandwidth(x, rule, sample_weight=w, floor=0.01)
        assert h[0] == 0.01 and h[1] == pytest.approx(bandwidth(x[1], rule), rel=1e-12)
    with pytest.raises(ValueError, match="zero spread"):
        scott_bandwidth(x[:1], sample_weight=w[:1])
