"""Normal, gamma and beta variates from the counter-based uniforms.

Every variate is a pure function of a round key and a draw index, written
twice with the same floating-point operations in the same order: a scalar
version (``register_jitable``: plain Python, Numba CPU and CUDA) and an array
version over ``xp`` for the reference code path.  The two agree to the last
bit except where NumPy's and the compiled ``log``/``cos``/``sqrt`` differ in
the last ulp.

Fixed draw layout
-----------------
``normal(key, j)``
    Box--Muller, cosine branch only: uniforms ``j0 = 2 j`` and ``j0 + 1``,
    :math:`z = \\sqrt{-2 \\ln u_1} \\cos(2 \\pi u_2)`.
``gamma(key, g, a)``
    Gamma draw number ``g`` with shape ``a > 0`` and unit scale, by
    Marsaglia & Tsang (2000).  It owns the uniforms
    ``g * GAMMA_STRIDE .. (g + 1) * GAMMA_STRIDE - 1``: attempt ``m``
    (``0 <= m < GAMMA_ATTEMPTS``) uses the normal built from uniforms
    ``base + 3m``, ``base + 3m + 1`` and the acceptance uniform ``base + 3m + 2``
    (accepted when the squeeze ``u < 1 - 0.0331 z^4`` or the exact test
    ``ln u < z^2/2 + d - d v + d ln v`` holds);
    for ``a < 1`` the draw is ``G(a + 1) U^{1/a}`` with ``U`` the last uniform
    ``base + 3 GAMMA_ATTEMPTS``.  If every attempt is rejected (probability
    below ``0.05**GAMMA_ATTEMPTS`` for shapes ``>= 1``, i.e. never in practice)
    the draw is ``d = a - 1/3``, the mode region of the proposal.
``beta(key, b, a1, a2)``
    ``X / (X + Y)`` with ``X = gamma(key, 2 b, a1)`` and ``Y = gamma(key, 2 b + 1, a2)``.

References
----------
.. [1] G. Marsaglia and W. W. Tsang, "A simple method for generating gamma
   variables", ACM Transactions on Mathematical Software 26(3), 2000.
.. [2] G. E. P. Box and M. E. Muller, "A note on the generation of random
   normal deviates", Annals of Mathematical Statistics 29(2), 1958.
"""

from __future__ import annotations

import math

import numpy as np
from numba.extending import overload, register_jitable

from .._random import uniform

__all__ = ["GAMMA_ATTEMPTS", "GAMMA_STRIDE", "normal", "gamma", "beta", "normal_array", "gamma_array",
           "beta_array"]

#: Proposals tried per gamma draw before the fallback.
GAMMA_ATTEMPTS = 16
#: Uniforms owned by one gamma draw.
GAMMA_STRIDE = 3 * GAMMA_ATTEMPTS + 1
_TWO_PI = 2.0 * math.pi


@register_jitable
def _box_muller(u1, u2):
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(_TWO_PI * u2)


@register_jitable
def _normal_scalar(key, j):
    j0 = np.uint64(2) * np.uint64(j)
    u1 = uniform(key, j0)
    u2 = uniform(key, j0 + np.uint64(1))
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(_TWO_PI * u2)


def normal(key, j):
    """Standard normal draw ``j`` (int) of the round keyed ``key`` (uses uniforms ``2j``, ``2j + 1``).

    It also broadcasts over arrays of keys and indices (instances call it in
    the array path): NumPy arrays take the scalar code, arrays of another
    namespace :func:`normal_array`, which makes the same draws.
    """
    if all(isinstance(a, (np.ndarray, np.generic, int)) for a in (key, j)):
        return _normal_scalar(key, j)
    from .._backend import get_namespace

    return normal_array(get_namespace(key), key, j)


@overload(normal)
def _ov_normal(key, j):
    return lambda key, j: _normal_scalar(key, j)


@register_jitable
def gamma(key, g, a):
    """Gamma(``a``, 1) draw number ``g`` (int) of the round keyed ``key``, Marsaglia--Tsang."""
    base = g * GAMMA_STRIDE
    aa = a if a >= 1.0 else a + 1.0
    d = aa - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    out = d
    for m in range(GAMMA_ATTEMPTS):
        j = base + 3 * m
        z = _box_muller(uniform(key, np.uint64(j)), uniform(key, np.uint64(j + 1)))
        v = 1.0 + c * z
        if v > 0.0:
            v = v * v * v
            u = uniform(key, np.uint64(j + 2))
            z2 = z * z
            if u < 1.0 - 0.0331 * (z2 * z2) or math.log(u) < 0.5 * z2 + d - d * v + d * math.log(v):
                out = d * v
                break
    if a < 1.0:
        out = out * math.exp(math.log(uniform(key, np.uint64(base + 3 * GAMMA_ATTEMPTS))) / a)
    return out


@register_jitable
def beta(key, b, a1, a2):
    """Beta(``a1``, ``a2``) draw number ``b`` (int): ``X / (X + Y)`` from gamma draws ``2b``, ``2b + 1``."""
    x = gamma(key, 2 * b, a1)
    y = gamma(key, 2 * b + 1, a2)
    return x / (x + y)


def normal_array(xp, key, j):
    """Array version of :func:`normal`: ``key`` uint64 and ``j`` int arrays, broadcast."""
    j0 = xp.astype(xp.asarray(j), xp.uint64) * 2
    u1 = uniform(key, j0)
    u2 = uniform(key, j0 + 1)
    return xp.sqrt(-2.0 * xp.log(u1)) * xp.cos(_TWO_PI * u2)


def gamma_array(xp, key, g, a):
    """Array version of :func:`gamma` (same draws, element by element)."""
    a = xp.asarray(a, dtype=xp.float64)
    key, g, a = xp.broadcast_arrays(xp.asarray(key), xp.asarray(g), a)
    base = xp.astype(g, xp.uint64) * GAMMA_STRIDE
    aa = xp.where(a >= 1.0, a, a + 1.0)
    d = aa - 1.0 / 3.0
    c = 1.0 / xp.sqrt(9.0 * d)
    out = d
    pending = xp.ones(a.shape, dtype=xp.bool)
    for m in range(GAMMA_ATTEMPTS):
        j = base + 3 * m
        z = xp.sqrt(-2.0 * xp.log(uniform(key, j))) * xp.cos(_TWO_PI * uniform(key, j + 1))
        v = 1.0 + c * z
        pos = v > 0.0
        v = xp.where(pos, v * v * v, 1.0)
        u = uniform(key, j + 2)
        z2 = z * z
        acc = pending & pos & ((u < 1.0 - 0.0331 * (z2 * z2)) | (xp.log(u) < 0.5 * z2 + d - d * v + d * xp.log(v)))
        out = xp.where(acc, d * v, out)
        pending = pending & ~acc
        if not bool(xp.any(pending)):
            break
    small = a < 1.0
    if bool(xp.any(small)):
        us = uniform(key, base + 3 * GAMMA_ATTEMPTS)
        out = xp.where(small, out * xp.exp(xp.log(us) / xp.where(small, a, 1.0)), out)
    return out


def beta_array(xp, key, b, a1, a2):
    """Array version of :func:`beta`."""
    b = xp.asarray(b)
    x = gamma_array(xp, key, 2 * b, a1)
    y = gamma_array(xp, key, 2 * b + 1, a2)
    return x / (x + y)
