"""Score generators: determinism, backend agreement, moments, closed-form optimum."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit
from scipy import stats

from expertlab.random import rep_key, round_key, seed_to_uint64
from expertlab.balance.generators import (
    drifting,
    iid_gaussian,
    iid_plus_offset,
    mean_at,
    score_at,
)


@njit
def _scalar_batch(params, n_experts, seed, rep, t, n_tokens):
    out = np.empty((n_tokens, n_experts))
    key = round_key(rep_key(seed, np.uint64(rep)), np.uint64(t))
    for n in range(n_tokens):
        for i in range(n_experts):
            out[n, i] = score_at(params, n_experts, key, t, n, i)
    return out


def test_draw_is_a_pure_function_of_seed_rep_round():
    g = iid_plus_offset([0.3, -0.1, 0.0], sigma=0.7)
    a = g.draw(5, [0, 1, 2], t=4, n_tokens=6)
    assert a.shape == (3, 6, 3)
    np.testing.assert_array_equal(a, g.draw(5, [0, 1, 2], t=4, n_tokens=6))
    # one replication alone == the same replication inside a batch
    np.testing.assert_array_equal(g.draw(5, [2], t=4, n_tokens=6)[0], a[2])
    # fewer tokens == a prefix of the batch (draw j = n E + i does not depend on N)
    np.testing.assert_array_equal(g.draw(5, [1], t=4, n_tokens=2)[0], a[1, :2])
    # other seed / round / replication -> different numbers
    assert not np.any(g.draw(6, [0], t=4, n_tokens=6)[0] == a[0])
    assert not np.any(g.draw(5, [0], t=5, n_tokens=6)[0] == a[0])
    assert not np.any(a[0] == a[1])


@pytest.mark.parametrize("make", [
    lambda: iid_gaussian(5, 2.0),
    lambda: iid_plus_offset(np.linspace(-1, 1, 5), 0.5),
    lambda: drifting(np.zeros(5), np.linspace(-0.01, 0.01, 5), 1.0, mode="sine", period=50.0),
])
def test_numpy_draw_equals_scalar_kernel_form(make):
    g = make()
    seed = 123
    for rep, t in [(0, 0), (3, 17)]:
        ref = g.draw(seed, [rep], t, n_tokens=40)[0]
        got = _scalar_batch(g.params.copy(), g.n_experts, seed_to_uint64(seed), rep, t, 40)
        np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-13)


def test_noise_is_the_ziggurat_normal_of_the_documented_draw_block():
    """Score (n, i) of a round is m_i + sigma z with z the ziggurat normal owning draws (n E + i) ZIG_DRAWS ...

    Rejects another layout (e.g. consecutive blocks per expert, or the Box--Muller normal of the same
    round), which would give other numbers.
    """
    from expertlab.sim import _variates as V

    m = np.array([0.5, -1.0, 2.0])
    g = iid_plus_offset(m, 0.3)
    s = g.draw(21, [4], t=6, n_tokens=7)[0]
    with np.errstate(over="ignore"):
        key = round_key(rep_key(seed_to_uint64(21), np.uint64(4)), np.uint64(6))
        n, i = np.meshgrid(np.arange(7, dtype=np.uint64), np.arange(3, dtype=np.uint64), indexing="ij")
        z = V.zig_normal_array(np, np.full(n.shape, key), (n * np.uint64(3) + i) * np.uint64(V.ZIG_DRAWS))
        swapped = V.zig_normal_array(np, np.full(n.shape, key), (i * np.uint64(7) + n) * np.uint64(V.ZIG_DRAWS))
        box_muller = V.normal_array(np, np.full(n.shape, key), n * np.uint64(3) + i)
    np.testing.assert_array_equal(s, m + 0.3 * z)
    other = n != np.uint64(3) * i  # where the two layouts name different blocks
    assert other.sum() == 18 and not np.any(np.isclose(s, m + 0.3 * swapped)[other])
    assert not np.any(np.isclose(s, m + 0.3 * box_muller))


def test_moments_and_normality_of_the_noise():
    m = np.array([1.5, -0.5, 0.0, 2.0])
    sigma = 0.8
    g = iid_plus_offset(m, sigma)
    s = g.draw(9, np.arange(4), t=1, n_tokens=5000).reshape(-1, 4)  # 20000 per expert
    n = s.shape[0]
    assert np.all(np.abs(s.mean(axis=0) - m) < 5 * sigma / math.sqrt(n))
    # sd of the sample sd of a normal sample is about sigma / sqrt(2n)
    assert np.all(np.abs(s.std(axis=0, ddof=1) - sigma) < 5 * sigma / math.sqrt(2 * n))
    z = ((s - m) / sigma).ravel()
    assert stats.kstest(z, "norm").pvalue > 1e-3
    assert np.all(np.isfinite(z)) and np.abs(z).max() < 8.6


def test_optimal_bias_balances_the_expected_load():
    """Closed form: with b = -m the biased scores are iid, so each expert is in a
    token's top K with probability exactly K/E (checked within 5 binomial SE)."""
    m = np.array([2.0, 1.0, 0.5, 0.0, -0.5, -3.0])
    g = iid_plus_offset(m, 1.0)
    k, e = 2, 6
    b = g.optimal_bias(0)
    np.testing.assert_allclose(b - b.mean(), -(m - m.mean()), atol=1e-15)
    s = g.draw(1, np.arange(8), t=0, n_tokens=2500).reshape(-1, e)
    top = np.argsort(-(s + b), axis=1)[:, :k]
    freq = np.bincount(top.ravel(), minlength=e) / s.shape[0]
    se = math.sqrt((k / e) * (1 - k / e) / s.shape[0])
    assert np.all(np.abs(freq - k / e) < 5 * se)
    # without the bias the offsets dominate: expert 5 is almost never chosen
    top0 = np.argsort(-s, axis=1)[:, :k]
    assert np.bincount(top0.ravel(), minlength=e)[5] / s.shape[0] < 0.01


def test_drift_by_hand():
    g = drifting([1.0, 0.0], [0.5, -0.25], sigma=1.0, mode="linear")
    assert g.mean(4).tolist() == [3.0, -1.0]
    assert not g.stationary
    h = drifting([1.0, 0.0], [0.5, -0.25], sigma=1.0, mode="sine", period=8.0)
    np.testing.assert_allclose(h.mean(2), [1.5, -0.25], atol=1e-15)  # sin(pi/2) = 1
    np.testing.assert_allclose(h.mean(4), [1.0, 0.0], atol=1e-15)  # sin(pi) = 0
    assert mean_at(h.params, 2, 1, 6) == pytest.approx(0.25)  # sin(3 pi / 2) = -1
    assert iid_gaussian(3).stationary and iid_plus_offset([1.0, 2.0]).stationary
    np.testing.assert_array_equal(iid_gaussian(3).optimal_bias(0), np.zeros(3))


def test_bad_input():
    with pytest.raises(ValueError, match="sigma"):
        iid_gaussian(3, sigma=0.0)
    with pytest.raises(ValueError, match="sigma"):
        iid_plus_offset([0.0, 1.0], sigma=-1.0)
    with pytest.raises(ValueError, match="n_experts"):
        iid_gaussian(0)
    with pytest.raises(TypeError, match="n_experts"):
        iid_gaussian(2.5)
    with pytest.raises(ValueError, match="means"):
        iid_plus_offset([0.0, np.nan])
    with pytest.raises(ValueError, match="means"):
        iid_plus_offset([[0.0, 1.0]])
    with pytest.raises(ValueError, match="drift"):
        drifting([0.0, 1.0], [0.1], 1.0)
    with pytest.raises(ValueError, match="mode"):
        drifting([0.0, 1.0], [0.1, 0.1], 1.0, mode="cubic")
    with pytest.raises(ValueError, match="rep_ids"):
        iid_gaussian(2).draw(0, [-1], 0, 3)
    with pytest.raises(ValueError, match="n_tokens"):
        iid_gaussian(2).draw(0, [0], 0, 0)
