r"""The complementary error function ``erfc`` and its scaled form ``erfcx`` over any array namespace.

The array API standard has no error function, so code over ``xp`` that needs
one calls :func:`erfc` or :func:`erfcx` here.  NumPy arrays go to
``scipy.special`` and CuPy arrays to ``cupyx.scipy.special`` (their results
are those of SciPy and CuPy); arrays of any other namespace (for example
``array_api_strict``) get a portable implementation written with standard
operations only (``abs``, ``where``, ``trunc``, ``exp``, arithmetic): Cody's
rational Chebyshev approximations, evaluated in float64.  Against a 70-digit
evaluation on a dense grid of the real line its relative error is at most
about 3 ``eps`` wherever the result is a normal double; ``exp(-x^2)`` is
formed from an exact square and a small correction, so large arguments lose
nothing.  SciPy's ``erfc`` (large positive ``x``) and ``erfcx`` (large
negative ``x``) exponentiate the rounded ``x^2`` instead and are off by up to
``x^2 / 2`` units of ``eps`` there (about ``6e-14`` relative at ``|x| = 27``),
so the portable values and SciPy's differ by up to that much.
"""

from __future__ import annotations

import numpy as np

from ._backend import get_namespace
from ._validation import _dtype_kind

__all__ = ["erfc", "erfcx"]

#: ``1/sqrt(pi)``.
_SQRPI = 5.6418958354775628695e-1
#: Boundary between the first interval (``erf`` as ``x`` times a rational in ``x^2``) and the second.
_THRESH = 0.46875
#: Boundary between the second interval (a rational in ``|x|``) and the third (a rational in ``1/x^2``).
_FOUR = 4.0
#: ``erfc(x)`` underflows to 0 beyond this value; the exponential is evaluated at most here.
_ERFC_ZERO = 27.5
#: ``exp(y^2)`` is evaluated at most here (it is finite there); beyond, ``erfcx(-y)`` is ``inf``.
_EXP_SQ_MAX = 26.63
#: ``2 exp(y^2)`` overflows exactly when ``exp(y^2)`` exceeds this value (the largest double over 2).
_HALF_MAX = float(np.finfo(np.float64).max) / 2.0

# Coefficients of Cody (1969) in the layout of his program CALERF, stored here highest degree first for
# Horner's rule (the leading 1.0 of each denominator is written out).
#: First interval: ``erf(x) = x N(x^2) / D(x^2)`` for ``|x| <= 0.46875``.
_A = (1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
      3.20937758913846947e03)
_B = (1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03)
#: Second interval: ``erfcx(y) = N(y) / D(y)`` for ``0.46875 < y <= 4``.
_C = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
      2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03, 2.05107837782607147e03,
      1.23033935479799725e03)
_D = (1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02, 1.62138957456669019e03,
      3.29079923573345963e03, 4.36261909014324716e03, 3.43936767414372164e03, 1.23033935480374942e03)
#: Third interval: ``erfcx(y) = (1/sqrt(pi) - t N(t) / D(t)) / y`` with ``t = 1/y^2`` for ``y > 4``.
_P = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
      1.60837851487422766e-2, 6.58749161529837803e-4)
_Q = (1.0, 2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1, 6.05183413124413191e-2,
      2.33520497626869185e-3)


def erfc(x):
    r"""The complementary error function :math:`\operatorname{erfc}(x) = \frac{2}{\sqrt\pi}\int_x^\infty e^{-t^2} dt`.

    Parameters
    ----------
    x : array of real numbers
        Any shape and namespace; Python numbers and lists become NumPy arrays.

    Returns
    -------
    array
        ``erfc(x)`` elementwise: ``scipy.special.erfc`` for NumPy arrays, ``cupyx.scipy.special.erfc``
        for CuPy arrays, the portable evaluation of the module docstring (float64, or the float32 of a
        float32 ``x``) for any other namespace.  ``erfc(-inf) = 2``, ``erfc(0) = 1``, ``erfc(inf) = 0``
        and NaN gives NaN.

    Raises
    ------
    TypeError
        If ``x`` does not hold real numbers (complex, strings, objects).

    References
    ----------
    .. [1] W. J. Cody, "Rational Chebyshev approximations for the error function", Mathematics of
       Computation 23 (1969), 631-637 (the three approximations on :math:`|x| \le 0.46875`,
       :math:`0.46875 < |x| \le 4` and :math:`|x| > 4`; the coefficients are those of his program
       CALERF for double precision).

    Examples
    --------
    >>> import numpy as np
    >>> erfc(np.array([-np.inf, 0.0, np.inf])).tolist()
    [2.0, 1.0, 0.0]
    """
    x, xp, sp = _dispatch(x)
    if sp is not None:
        return sp.erfc(x)
    return _portable(x, xp, _erfc_float64)


def erfcx(x):
    r"""The scaled complementary error function :math:`\operatorname{erfcx}(x) = e^{x^2} \operatorname{erfc}(x)`.

    Parameters
    ----------
    x : array of real numbers
        Any shape and namespace; Python numbers and lists become NumPy arrays.

    Returns
    -------
    array
        ``erfcx(x)`` elementwise, dispatched as in :func:`erfc`.  ``erfcx(x)`` behaves like
        :math:`1/(x\sqrt\pi)` for large positive ``x`` (``erfcx(inf) = 0``) and overflows to ``inf``
        below about ``-26.63``; NaN gives NaN.

    Raises
    ------
    TypeError
        If ``x`` does not hold real numbers.

    References
    ----------
    .. [1] W. J. Cody, "Rational Chebyshev approximations for the error function", Mathematics of
       Computation 23 (1969), 631-637.

    Examples
    --------
    >>> import numpy as np
    >>> erfcx(np.array([-np.inf, 0.0, np.inf])).tolist()
    [inf, 1.0, 0.0]
    """
    x, xp, sp = _dispatch(x)
    if sp is not None:
        return sp.erfcx(x)
    return _portable(x, xp, _erfcx_float64)


def _dispatch(x):
    """``(x, xp, sp)``: ``x`` as an array of real numbers, its namespace and its special-function module (or None)."""
    if isinstance(x, np.ndarray) and x.dtype.kind in "biuf":  # the common case, without the namespace look-up
        import scipy.special as sp  # imported here: scipy is slow to import

        return x, np, sp
    if isinstance(x, (str, bytes)) or not hasattr(x, "shape") or not hasattr(x, "dtype"):
        if isinstance(x, (str, bytes)):
            raise TypeError(f"x must be a real number or an array of real numbers, got {type(x).__name__} {x!r}")
        x = np.asarray(x)
    kind = _dtype_kind(x)
    if kind is None or kind not in "biuf":
        raise TypeError(f"x must hold real numbers (bool, int or float), got dtype {x.dtype}")
    xp = get_namespace(x)
    from array_api_compat import is_cupy_namespace, is_numpy_namespace

    if is_numpy_namespace(xp):
        import scipy.special as sp  # imported here: scipy is slow to import

        return x, xp, sp
    if is_cupy_namespace(xp):  # pragma: no cover - needs a GPU
        try:
            import cupyx.scipy.special as sp
        except ImportError:
            return x, xp, None
        return x, xp, sp
    return x, xp, None


def _portable(x, xp, fn):
    """``fn`` (a float64 evaluation) on ``x``, returned in float32 when ``x`` is float32, else in float64."""
    single = x.dtype == xp.float32
    out = fn(xp.astype(x, xp.float64, copy=False), xp)
    return xp.astype(out, xp.float32) if single else out


def _horner(coefs, t):
    acc = coefs[0] * t + coefs[1]
    for c in coefs[2:]:
        acc = acc * t + c
    return acc


def _exp_square(y, xp, sign):
    """``exp(sign * y^2)`` for finite ``y >= 0``, free of the rounding error of ``y^2``.

    ``y = y_s + d`` with ``y_s = trunc(16 y) / 16``, whose square is exact, and
    ``y^2 = y_s^2 + (y - y_s)(y + y_s)`` (Cody's splitting).
    """
    ys = xp.trunc(16.0 * y) / 16.0
    return xp.exp(sign * (ys * ys)) * xp.exp(sign * ((y - ys) * (y + ys)))


def _pieces(x, xp):
    """The three approximations of Cody, each evaluated only where it applies (elsewhere at a safe point).

    Returns ``(y, small, erf_small, scaled)``: ``y = |x|``, the mask ``|x| <= 0.46875``, ``erf(x)`` there
    (0 elsewhere) and ``erfcx(|x|)`` where ``|x| > 0.46875`` (NaN for NaN; a finite dummy where small).
    """
    y = xp.abs(x)
    small = y <= _THRESH
    mid = (y > _THRESH) & (y <= _FOUR)
    # first interval: erf(x) = x A(x^2) / B(x^2)
    xs = xp.where(small, x, 0.0)
    t = xs * xs
    erf_small = xs * _horner(_A, t) / _horner(_B, t)
    # second interval: erfcx(y) = C(y) / D(y)
    ym = xp.where(mid, y, 1.0)
    scaled_mid = _horner(_C, ym) / _horner(_D, ym)
    # third interval: erfcx(y) = (1/sqrt(pi) - t P(t) / Q(t)) / y with t = 1/y^2 (t = 0 at y = inf)
    yt = xp.where(small | mid, _FOUR, y)
    inv = 1.0 / yt
    t = inv * inv
    scaled_tail = (_SQRPI - t * _horner(_P, t) / _horner(_Q, t)) / yt
    return y, small, erf_small, xp.where(mid, scaled_mid, scaled_tail)


def _erfc_float64(x, xp):
    y, small, erf_small, scaled = _pieces(x, xp)
    # erfc(|x|) = exp(-y^2) erfcx(|x|) outside the first interval; exp(-y^2) is 0 beyond 27.5
    ye = xp.where(small | ~(y < _ERFC_ZERO), _ERFC_ZERO, y)  # also NaN -> 27.5: NaN comes back through `scaled`
    upper = _exp_square(ye, xp, -1.0) * scaled
    out = xp.where(small, 1.0 - erf_small, xp.where(x < 0.0, 2.0 - upper, upper))
    return xp.where(xp.isnan(x), x, out)


def _erfcx_float64(x, xp):
    y, small, erf_small, scaled = _pieces(x, xp)
    inside = small | (y <= _EXP_SQ_MAX)
    # the first interval: exp(x^2) (1 - erf(x)); the second and third for x < 0: 2 exp(x^2) - erfcx(|x|)
    yn = xp.where(inside, y, _EXP_SQ_MAX)
    e = _exp_square(yn, xp, 1.0)
    overflow = ~(e <= _HALF_MAX)  # 2 exp(x^2) is beyond the largest double (and NaN stays out of the sum)
    e_safe = xp.where(overflow, 0.0, e)
    negative = xp.where(overflow, xp.inf, (e_safe + e_safe) - scaled)
    out = xp.where(small, e * (1.0 - erf_small), xp.where(x < 0.0, negative, scaled))
    return xp.where(xp.isnan(x), x, out)
