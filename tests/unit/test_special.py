"""``erfc`` and ``erfcx`` over any array namespace: accuracy, special values and dispatch.

The portable evaluation (used for namespaces other than NumPy and CuPy) is
checked twice: against an independent high-precision evaluation (Taylor
series and continued fraction in 70-digit decimal arithmetic) at points
spread over the whole range, and against ``scipy.special`` on a dense grid.
SciPy's ``erfc`` for large positive and ``erfcx`` for large negative
arguments evaluate ``exp(-x^2)`` from the rounded ``x^2`` and are off by up to
``x^2 / 2`` units of ``eps`` (about 360 at ``|x| = 27``), so the grid bound
allows that much there; the decimal check holds the portable evaluation to
4 ``eps`` everywhere.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
import scipy.special

from expertlab import _special
from expertlab._special import erfc, erfcx

EPS = float(np.finfo(np.float64).eps)
TINY = float(np.finfo(np.float64).tiny)
#: Largest relative error of the portable evaluation against the decimal reference (measured: 3.04 eps).
REF_BOUND = 4.0 * EPS

_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628")


def _decimal_pos(x):
    """``(erfc(x), erfcx(x))`` for a Decimal ``x >= 0``, in the current (70-digit) context."""
    sqrt_pi = _PI.sqrt()
    if x <= 3:  # erf(x) = 2/sqrt(pi) sum_n (-1)^n x^(2n+1) / (n! (2n+1)); terms are at most e^9
        term, total, n = x, x, 0
        while abs(term) > Decimal(10) ** -66:
            n += 1
            term = -term * x * x / n
            total += term / (2 * n + 1)
        c = 1 - 2 * total / sqrt_pi
        return c, (x * x).exp() * c
    # erfcx(x) = 1 / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))), evaluated from the tail
    frac = x
    for k in range(400, 0, -1):
        frac = x + Decimal(k) / 2 / frac
    scaled = 1 / sqrt_pi / frac
    return (-x * x).exp() * scaled, scaled


def _decimal_reference(xs):
    """``(erfc, erfcx)`` of each float of ``xs``, correctly rounded to float64."""
    out_c, out_x = [], []
    with localcontext() as ctx:
        ctx.prec = 70
        for x in xs:
            d = Decimal(float(x))
            c, e = _decimal_pos(abs(d))
            if d < 0:  # erfc(-y) = 2 - erfc(y), erfcx(-y) = 2 exp(y^2) - erfcx(y)
                c, e = 2 - c, 2 * (d * d).exp() - e
            out_c.append(float(c))
            out_x.append(float(e))
    return np.array(out_c), np.array(out_x)


# points in every interval of the approximation, at its boundaries, far out on both sides, and where the
# results approach underflow (erfc near 26.5) and overflow (erfcx near -26.6)
_REF_X = np.array([0.0, 1e-300, 1e-9, 0.1, 0.3, 0.46875, 0.46876, 0.7, 1.3, 2.46675, 3.0, 3.9, 4.0, 4.01, 5.5, 8.0,
                   12.3, 17.0, 21.7, 24.607, 26.0, 26.5, 30.0, 1e3, 1e8, 1e150, 1e300])
_REF_X = np.concatenate([_REF_X, -_REF_X[1:21], [-23.65, -25.3742, -26.0, -26.6]])
_REF = _decimal_reference(_REF_X)


def _worst_against_reference():
    """Largest relative error of the portable ``erfc`` and ``erfcx`` at the reference points, in units of REF_BOUND."""
    ref_c, ref_x = _REF
    worst = 0.0
    for fn, ref in ((_special._erfc_float64, ref_c), (_special._erfcx_float64, ref_x)):
        got = fn(_REF_X, np)
        assert np.all(np.isfinite(got)), _REF_X[~np.isfinite(got)]
        ok = np.abs(ref) >= TINY  # results of normal size: a relative error is meaningful
        worst = max(worst, float(np.max(np.abs(got[ok] - ref[ok]) / np.abs(ref[ok]))) / REF_BOUND)
    return worst


_GRID = np.linspace(-27.0, 27.0, 20001)


def _worst_against_scipy():
    """Largest ``|portable - scipy| / (|scipy| bound(x))`` on the grid; bound = (8 + scipy's own x^2/2) eps."""
    worst = 0.0
    for fn, ref, loose in ((_special._erfc_float64, scipy.special.erfc(_GRID), _GRID > 0.46875),
                           (_special._erfcx_float64, scipy.special.erfcx(_GRID), _GRID < -0.46875)):
        got = fn(_GRID, np)
        ok = np.isfinite(ref) & (np.abs(ref) >= TINY)
        bound = (8.0 + np.where(loose, 0.5 * _GRID**2, 0.0)) * EPS
        worst = max(worst, float(np.max(np.abs(got[ok] - ref[ok]) / (np.abs(ref[ok]) * bound[ok]))))
        # where scipy overflows (erfcx) the portable value does too; where it underflows, so does the portable one
        np.testing.assert_array_equal(np.isinf(got), np.isinf(ref))
        tiny_ref = np.isfinite(ref) & (np.abs(ref) < TINY)
        assert np.all(np.abs(got[tiny_ref]) < TINY)
    return worst


def test_portable_matches_a_high_precision_reference():
    ref_c, _ = _REF
    moderate = np.abs(_REF_X) <= 6.0  # the reference itself agrees with the C library there
    np.testing.assert_allclose(ref_c[moderate], [math.erfc(v) for v in _REF_X[moderate]], rtol=1e-15, atol=0.0)
    assert _worst_against_reference() <= 1.0


def test_portable_matches_scipy_on_a_dense_grid():
    assert _worst_against_scipy() <= 1.0


def test_accuracy_checks_reject_a_perturbed_coefficient(monkeypatch):
    """A coefficient of the second interval off by one part in 1e9 fails both accuracy checks."""
    d = list(_special._D)
    d[4] *= 1.0 + 1e-9
    monkeypatch.setattr(_special, "_D", tuple(d))
    assert _worst_against_scipy() > 1e3
    assert _worst_against_reference() > 1e3


def test_reference_check_rejects_the_plain_exponential(monkeypatch):
    """``exp(-x^2)`` from the rounded ``x^2`` (what SciPy's erfc does) fails the decimal check, not the grid check."""
    monkeypatch.setattr(_special, "_exp_square", lambda y, xp, sign: xp.exp(sign * y * y))
    assert _worst_against_reference() > 10.0
    assert _worst_against_scipy() <= 1.0


def test_special_values_on_strict_arrays():
    xps = pytest.importorskip("array_api_strict")
    x = xps.asarray([0.0, -0.0, np.inf, -np.inf, np.nan, -26.6, -26.7, -1e300, 1e300, 27.5, -30.0])
    c = np.asarray(erfc(x))
    e = np.asarray(erfcx(x))
    np.testing.assert_array_equal(c[[0, 1, 2, 3, 8, 9, 10]], [1.0, 1.0, 0.0, 2.0, 0.0, 0.0, 2.0])
    np.testing.assert_array_equal(e[[0, 1, 2, 3, 6, 7]], [1.0, 1.0, 0.0, np.inf, np.inf, np.inf])
    assert np.isnan(c[4]) and np.isnan(e[4])
    assert np.isfinite(e[5]) and e[5] > 1e307
    np.testing.assert_allclose(e[8], 1.0 / (1e300 * np.sqrt(np.pi)), rtol=2 * EPS)


def test_dispatch():
    xps = pytest.importorskip("array_api_strict")
    x = np.linspace(-6.0, 6.0, 97)
    # NumPy: scipy's values, unchanged
    np.testing.assert_array_equal(erfc(x), scipy.special.erfc(x))
    np.testing.assert_array_equal(erfcx(x), scipy.special.erfcx(x))
    # another namespace: the portable evaluation, in that namespace
    got = erfcx(xps.asarray(x))
    assert isinstance(got, type(xps.asarray(0.0)))
    np.testing.assert_array_equal(np.asarray(got), _special._erfcx_float64(x, np))
    np.testing.assert_array_equal(np.asarray(erfc(xps.asarray(x))), _special._erfc_float64(x, np))
    # float32 stays float32; integers and booleans are real numbers
    single = erfc(xps.asarray(x, dtype=xps.float32))
    assert single.dtype == xps.float32
    np.testing.assert_allclose(np.asarray(single), scipy.special.erfc(x.astype(np.float32)), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(erfc(xps.asarray([0, 1]))),
                                  _special._erfc_float64(np.array([0.0, 1.0]), np))
    np.testing.assert_array_equal(np.asarray(erfcx(xps.asarray([False]))), [1.0])


def test_non_real_input_is_refused_naming_x():
    with pytest.raises(TypeError, match="x must hold real numbers"):
        erfc(np.array([1j]))
    with pytest.raises(TypeError, match="x must"):
        erfcx("0.5")


@pytest.mark.gpu
def test_cupy_uses_cupyx_and_the_portable_form_agrees():  # pragma: no cover - needs a GPU
    cp = pytest.importorskip("cupy")
    import array_api_compat.cupy as xp_cupy
    import cupyx.scipy.special

    x = cp.linspace(-27.0, 27.0, 2001)
    cp.testing.assert_array_equal(erfcx(x), cupyx.scipy.special.erfcx(x))
    got = cp.asnumpy(_special._erfcx_float64(x, xp_cupy))
    np.testing.assert_allclose(got, _special._erfcx_float64(cp.asnumpy(x), np), rtol=4 * EPS)
