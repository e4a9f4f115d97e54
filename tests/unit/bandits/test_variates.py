"""Counter-based gamma, beta and normal variates: distribution and scalar/array agreement."""

import numpy as np
import pytest
from scipy import stats

from expertlab.sim import _variates as V

N = 20_000
# Kolmogorov-Smirnov at level 1e-3 on a seeded sample: a correct sampler fails with probability 1e-3
# (fixed keys, so the verdict is deterministic); the power checks below show the test rejects wrong laws.
ALPHA = 1e-3


def _keys(n, salt=0):
    with np.errstate(over="ignore"):
        return (np.arange(n, dtype=np.uint64) + np.uint64(salt)) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(1)


@pytest.mark.parametrize("a, b", [(1.0, 1.0), (2.0, 5.0), (30.0, 3.0), (1.0, 200.0), (0.5, 0.7)])
def test_beta_matches_scipy(a, b):
    with np.errstate(over="ignore"):
        x = V.beta_array(np, _keys(N), 3, a, b)
    assert stats.kstest(x, stats.beta(a, b).cdf).pvalue > ALPHA


@pytest.mark.parametrize("a", [0.3, 1.0, 4.5, 100.0])
def test_gamma_matches_scipy(a):
    with np.errstate(over="ignore"):
        x = V.gamma_array(np, _keys(N, 7), 0, a)
    assert stats.kstest(x, stats.gamma(a).cdf).pvalue > ALPHA


def test_normal_matches_scipy():
    with np.errstate(over="ignore"):
        x = V.normal_array(np, _keys(N, 11), 5)
    assert stats.kstest(x, stats.norm.cdf).pvalue > ALPHA


def test_ks_has_power_against_a_wrong_shape():
    with np.errstate(over="ignore"):
        x = V.beta_array(np, _keys(N), 3, 2.0, 5.0)
    assert stats.kstest(x, stats.beta(2.2, 5.0).cdf).pvalue < ALPHA


def test_draws_are_independent_across_indices():
    with np.errstate(over="ignore"):
        x = V.beta_array(np, _keys(N), 0, 2.0, 2.0)
        y = V.beta_array(np, _keys(N), 1, 2.0, 2.0)
    assert abs(np.corrcoef(x, y)[0, 1]) < 4 / np.sqrt(N)


def test_scalar_equals_array():
    keys = _keys(300, 5)
    with np.errstate(over="ignore"):
        arr = V.beta_array(np, keys, 2, 3.5, 0.8)
        sc = np.array([V.beta(k, 2, 3.5, 0.8) for k in keys])
        garr = V.gamma_array(np, keys, 4, 0.4)
        gsc = np.array([V.gamma(k, 4, 0.4) for k in keys])
        narr = V.normal_array(np, keys, 9)
        nsc = np.array([V.normal(k, 9) for k in keys])
    np.testing.assert_allclose(sc, arr, rtol=1e-13)
    np.testing.assert_allclose(gsc, garr, rtol=1e-13)
    np.testing.assert_allclose(nsc, narr, rtol=1e-13, atol=1e-15)


# --- the ziggurat normal inside the gamma draws -------------------------------------------------------------

_ZIG_B = np.uint64(7)  # first draw owned by the normal under test


def _zig_variant(old, new):
    """The array ziggurat with one line of its source replaced (a wrong sampler for the power checks)."""
    import inspect
    import textwrap

    src = textwrap.dedent(inspect.getsource(V._zig_normal_array))
    assert src.count(old) == 1, f"the sampler no longer contains {old!r}: update the wrong variant"
    ns = dict(vars(V))
    exec(src.replace(old, new), ns)
    return ns["_zig_normal_array"]


def _chi2_pvalue(z, bins=200):
    edges = stats.norm.ppf(np.linspace(0.0, 1.0, bins + 1)[1:-1])
    counts = np.bincount(np.searchsorted(edges, z), minlength=bins)
    return stats.chisquare(counts).pvalue


_WEDGE = "acc = wedge & (f0 + uniform(key, c + 1) * (f1 - f0) < 1.0)"
_TAIL = "acc = tail & (-2.0 * y >= e * e)"


@pytest.fixture(scope="module")
def zig_keys():
    with np.errstate(over="ignore"):
        return _keys(400_000, 13)


def test_ziggurat_normal_law(zig_keys):
    """KS and a 200-bin chi-square against N(0, 1), and the mass beyond the base layer's edge r."""
    with np.errstate(over="ignore"):
        z = V._zig_normal_array(np, zig_keys, _ZIG_B)
    assert np.isfinite(z).all()
    assert stats.kstest(z, stats.norm.cdf).pvalue > ALPHA
    assert _chi2_pvalue(z) > ALPHA
    expected = 2.0 * stats.norm.sf(V._ZIG_R) * z.size  # about 232 draws beyond r
    assert abs((np.abs(z) > V._ZIG_R).sum() - expected) < 4.0 * np.sqrt(expected)


@pytest.mark.parametrize("new", ["acc = wedge", "acc = wedge & False"], ids=["wedge-always", "wedge-never"])
def test_ziggurat_chi_square_rejects_a_wrong_wedge(zig_keys, new):
    wrong = _zig_variant(_WEDGE, new)
    with np.errstate(over="ignore"):
        z = wrong(np, zig_keys, _ZIG_B)
    assert _chi2_pvalue(z) < ALPHA


@pytest.fixture(scope="module")
def tail_keys():
    """Keys whose first ziggurat try lands in the base layer outside its rectangle (the tail branch)."""
    with np.errstate(over="ignore"):
        keys = _keys(8_000_000, 17)
        w = V.word(keys, _ZIG_B)
    u = 2.0 * (((w >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53) - 1.0
    return keys[((w & np.uint64(127)) == 0) & (np.abs(u) >= V._ZR[0])]


def _tail_cdf(x):
    return 1.0 - stats.norm.sf(x) / stats.norm.sf(V._ZIG_R)


def test_ziggurat_tail_is_the_normal_tail(tail_keys):
    keys = tail_keys
    assert keys.size > 4000
    with np.errstate(over="ignore"):
        z = V._zig_normal_array(np, keys, _ZIG_B)
        wrong = _zig_variant(_TAIL, "acc = tail")(np, keys, _ZIG_B)  # exponential proposals, never rejected
    assert (np.abs(z) > V._ZIG_R).all()
    assert stats.kstest(np.abs(z), _tail_cdf).pvalue > ALPHA
    assert abs(np.mean(z > 0) - 0.5) < 4.0 * 0.5 / np.sqrt(z.size)
    assert stats.kstest(np.abs(wrong), _tail_cdf).pvalue < ALPHA


def test_ziggurat_compiled_equals_array(tail_keys):
    """The Numba-compiled scalar normal makes the array path's draws, slow paths included."""
    import numba

    keys = np.concatenate([_keys(5_000, 19), tail_keys[:500]])

    @numba.njit
    def compiled(keys, b):
        out = np.empty(keys.size)
        for n in range(keys.size):
            out[n] = V._zig_normal(keys[n], b)
        return out

    with np.errstate(over="ignore"):
        arr = V._zig_normal_array(np, keys, _ZIG_B)
    got = compiled(keys, int(_ZIG_B))
    np.testing.assert_allclose(got, arr, rtol=1e-13, atol=0.0)
