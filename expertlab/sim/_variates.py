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
    Marsaglia & Tsang (2000) [1]_.  It owns the draws
    ``g * GAMMA_STRIDE .. (g + 1) * GAMMA_STRIDE - 1``: attempt ``m``
    (``0 <= m < GAMMA_ATTEMPTS``) starts at ``b = base + m * _ATTEMPT_DRAWS``;
    its normal proposal is the ziggurat normal owning draws
    ``b .. b + ZIG_DRAWS - 1`` and its acceptance uniform is draw
    ``b + ZIG_DRAWS`` (accepted when the squeeze ``u < 1 - 0.0331 z^4`` or the
    exact test ``ln u < z^2/2 + d - d v + d ln v`` holds); for ``a < 1`` the
    draw is ``G(a + 1) U^{1/a}`` with ``U`` the last draw of the block.  If
    every attempt is rejected (probability below ``0.05**GAMMA_ATTEMPTS`` for
    shapes ``>= 1``, i.e. never in practice) the draw is ``d = a - 1/3``,
    the mode region of the proposal.
``zig_normal(key, b)``
    Marsaglia & Tsang's ziggurat [3]_ with 128 layers in Doornik's
    formulation [4]_ (``r = 3.442619855899``, layer area
    ``v = 9.91256303526217e-3``).  Try ``t`` (``0 <= t < ZIG_TRIES``) uses
    the whole 64-bit word of draw ``c = b + t * _ZIG_TRY_DRAWS``: its 7 low
    bits pick the layer ``i`` and its 53 high bits give ``u`` uniform on
    (-1, 1) (the uniform of that draw, times 2, minus 1); ``x = u X_i`` is
    returned when ``|u| < X_{i+1} / X_i`` (about 98.8 % of tries).  Otherwise
    layer ``i > 0`` tests the wedge with the uniform of draw ``c + 1``, and
    the base layer samples the tail beyond ``r`` by Marsaglia's method with
    the uniforms of draws ``c + 2 + 2 k``, ``c + 3 + 2 k`` for
    ``k < ZIG_TAIL_TRIES``; a rejected try moves on to the next one.  After
    ``ZIG_TRIES`` rejected tries (probability below ``1e-19``) the normal is
    the Box--Muller normal of the last two draws of the block, which is
    independent of the tries, so the result is still exactly normal.  The
    only departure from the exact law is a tail whose
    ``ZIG_TAIL_TRIES`` proposals are all rejected (probability below
    ``1e-14`` per tail visit, which itself happens once in about 1700
    normals): that try is then rejected instead of resampled.
``beta(key, b, a1, a2)``
    ``X / (X + Y)`` with ``X = gamma(key, 2 b, a1)`` and ``Y = gamma(key, 2 b + 1, a2)``.

The gamma draws take their normal proposals from the ziggurat, and so do
the router scores of :mod:`expertlab.balance.generators`: a ziggurat normal
costs one hash and a table lookup on almost every call instead of two
hashes, a logarithm, a square root and a cosine.  :func:`normal` stays
Box--Muller, so the draws of Gaussian environments are unchanged.

References
----------
.. [1] G. Marsaglia and W. W. Tsang, "A simple method for generating gamma
   variables", ACM Transactions on Mathematical Software 26(3), 2000.
.. [2] G. E. P. Box and M. E. Muller, "A note on the generation of random
   normal deviates", Annals of Mathematical Statistics 29(2), 1958.
.. [3] G. Marsaglia and W. W. Tsang, "The ziggurat method for generating
   random variables", Journal of Statistical Software 5(8), 2000 (the
   method, and ``r`` and ``v`` for 128 layers).
.. [4] J. A. Doornik, "An improved ziggurat method to generate normal random
   samples", University of Oxford, 2005 (one uniform per try for the layer
   and the abscissa; the wedge and tail tests used here).
"""

from __future__ import annotations

import math

import numpy as np
from numba.extending import overload, register_jitable

from .._random import uniform, word

__all__ = ["GAMMA_ATTEMPTS", "GAMMA_STRIDE", "ZIG_TRIES", "ZIG_TAIL_TRIES", "ZIG_DRAWS", "normal", "zig_normal",
           "gamma", "beta", "normal_array", "zig_normal_array", "gamma_array", "beta_array"]

_TWO_PI = 2.0 * math.pi
_TWO53_INV = 1.0 / 9007199254740992.0  # 2**-53

#: Ziggurat tries per normal before the Box--Muller fallback.
ZIG_TRIES = 10
#: Tail proposals per visit of the base layer's tail.
ZIG_TAIL_TRIES = 12
_ZIG_TRY_DRAWS = 2 + 2 * ZIG_TAIL_TRIES
#: Draws owned by one ziggurat normal (its tries, then the two of the fallback).
ZIG_DRAWS = ZIG_TRIES * _ZIG_TRY_DRAWS + 2
#: Proposals tried per gamma draw before the fallback.
GAMMA_ATTEMPTS = 16
_ATTEMPT_DRAWS = ZIG_DRAWS + 1
#: Draws owned by one gamma draw.
GAMMA_STRIDE = GAMMA_ATTEMPTS * _ATTEMPT_DRAWS + 1

_ZIG_R = 3.442619855899
_ZIG_V = 9.91256303526217e-3


def _ziggurat_tables():
    """Layer abscissae ``X_0 > X_1 = r > ... > X_128 = 0`` and the ratios ``X_{i+1} / X_i``."""
    x = np.zeros(129)
    x[0] = _ZIG_V / math.exp(-0.5 * _ZIG_R * _ZIG_R)
    x[1] = _ZIG_R
    for i in range(1, 127):
        x[i + 1] = math.sqrt(-2.0 * math.log(_ZIG_V / x[i] + math.exp(-0.5 * x[i] * x[i])))
    # the recursion closes: the top layer [0, X_127] x [f(X_127), 1] has area v
    assert abs(x[127] * (1.0 - math.exp(-0.5 * x[127] ** 2)) - _ZIG_V) < 1e-10
    return x, np.append(x[1:] / x[:-1], 0.0)


_ZX, _ZR = _ziggurat_tables()
_ZX2 = _ZX * _ZX


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
def _zig_tries(key, b):
    """Every try of the ziggurat normal owning draws ``b ..`` (the rare path of :func:`zig_normal`)."""
    for t in range(ZIG_TRIES):
        c = b + t * _ZIG_TRY_DRAWS
        w = word(key, np.uint64(c))
        i = np.int64(w & np.uint64(127))
        u = 2.0 * (((w >> np.uint64(11)) * 1.0 + 0.5) * _TWO53_INV) - 1.0
        x = u * _ZX[i]
        if abs(u) < _ZR[i]:
            return x
        if i > 0:
            x2 = x * x
            f0 = math.exp(-0.5 * (_ZX2[i] - x2))
            f1 = math.exp(-0.5 * (_ZX2[i + 1] - x2))
            if f0 + uniform(key, np.uint64(c + 1)) * (f1 - f0) < 1.0:
                return x
        else:
            for k in range(ZIG_TAIL_TRIES):
                e = math.log(uniform(key, np.uint64(c + 2 + 2 * k))) / _ZIG_R
                y = math.log(uniform(key, np.uint64(c + 3 + 2 * k)))
                if -2.0 * y >= e * e:
                    return _ZIG_R - e if u > 0.0 else e - _ZIG_R
    c = b + ZIG_TRIES * _ZIG_TRY_DRAWS
    return _box_muller(uniform(key, np.uint64(c)), uniform(key, np.uint64(c + 1)))


@register_jitable
def zig_normal(key, b):
    """Ziggurat normal owning draws ``b .. b + ZIG_DRAWS - 1`` (int) of the round keyed ``key``.

    The first try's rectangle test is written out here so that it inlines
    into the caller; anything else (about 1.2 % of calls) goes through
    :func:`_zig_tries`, which repeats the first try and goes on.
    """
    w = word(key, np.uint64(b))
    i = np.int64(w & np.uint64(127))
    u = 2.0 * (((w >> np.uint64(11)) * 1.0 + 0.5) * _TWO53_INV) - 1.0
    if abs(u) < _ZR[i]:
        return u * _ZX[i]
    return _zig_tries(key, b)


@register_jitable
def _gamma_attempts(key, g, a):
    """Every attempt of :func:`gamma` (its rare path, and shapes below 1)."""
    base = g * GAMMA_STRIDE
    aa = a if a >= 1.0 else a + 1.0
    d = aa - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    out = d
    for m in range(GAMMA_ATTEMPTS):
        j = base + m * _ATTEMPT_DRAWS
        z = zig_normal(key, j)
        v = 1.0 + c * z
        if v > 0.0:
            v = v * v * v
            u = uniform(key, np.uint64(j + ZIG_DRAWS))
            z2 = z * z
            if u < 1.0 - 0.0331 * (z2 * z2) or math.log(u) < 0.5 * z2 + d - d * v + d * math.log(v):
                out = d * v
                break
    if a < 1.0:
        out = out * math.exp(math.log(uniform(key, np.uint64(base + GAMMA_STRIDE - 1))) / a)
    return out


@register_jitable
def gamma(key, g, a):
    """Gamma(``a``, 1) draw number ``g`` (int) of the round keyed ``key``, Marsaglia--Tsang.

    For ``a >= 1`` the first attempt's squeeze test is written out here (it
    decides most draws); anything else goes through :func:`_gamma_attempts`,
    which repeats that attempt with the same draws and goes on.
    """
    if a >= 1.0:
        base = g * GAMMA_STRIDE
        d = a - 1.0 / 3.0
        z = zig_normal(key, base)
        v = 1.0 + (1.0 / math.sqrt(9.0 * d)) * z
        if v > 0.0:
            u = uniform(key, np.uint64(base + ZIG_DRAWS))
            z2 = z * z
            if u < 1.0 - 0.0331 * (z2 * z2):
                return d * (v * v * v)
    return _gamma_attempts(key, g, a)


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


def zig_normal_array(xp, key, b):
    """Array version of :func:`zig_normal`: ``key`` and ``b`` (``uint64``) broadcast; the same draws.

    The first try's rectangle test runs on every element; the elements it
    rejects (about 1.2 %) go through :func:`_zig_tries_array`, which repeats
    that try and goes on, on those elements only.
    """
    key, b = xp.broadcast_arrays(xp.asarray(key), xp.asarray(b))
    shape = key.shape
    key = xp.reshape(key, (-1,))
    b = xp.reshape(b, (-1,))
    w = word(key, b)
    i = xp.astype(w & 127, xp.int64)
    u = 2.0 * ((xp.astype(w >> 11, xp.float64) + 0.5) * _TWO53_INV) - 1.0
    out = u * xp.take(xp.asarray(_ZX), i)
    rest = xp.abs(u) >= xp.take(xp.asarray(_ZR), i)
    if bool(xp.any(rest)):
        out = xp.where(rest, _expand(xp, rest, _zig_tries_array(xp, *_gather(xp, rest, key, b))), out)
    return xp.reshape(out, shape)


def _gather(xp, mask, *arrays):
    """The entries of 1-d ``arrays`` where ``mask`` holds, in order."""
    (idx,) = xp.nonzero(mask)
    return tuple(xp.take(a, idx) for a in arrays)


def _expand(xp, mask, sub):
    """``sub`` (one value per true entry of ``mask``, in order) spread back to ``mask``'s length.

    Entries where ``mask`` is false get an arbitrary entry of ``sub``; callers select with
    ``where(mask, ...)``.  Built from a running count, so it needs no index assignment (which the
    array API lacks).
    """
    rank = xp.cumulative_sum(xp.astype(mask, xp.int64)) - 1
    return xp.take(sub, xp.clip(rank, 0, None))


def _zig_tries_array(xp, key, b):
    """Every try of the ziggurat normals owning draws ``b ..`` (1-d ``key`` and ``b``): :func:`_zig_tries`."""
    zx = xp.asarray(_ZX)
    zr = xp.asarray(_ZR)
    zx2 = xp.asarray(_ZX2)
    shape = key.shape
    out = xp.zeros(shape, dtype=xp.float64)
    pending = xp.ones(shape, dtype=xp.bool)
    for t in range(ZIG_TRIES):
        c = b + t * _ZIG_TRY_DRAWS
        w = word(key, c)
        i = xp.reshape(xp.astype(w & 127, xp.int64), (-1,))
        u = 2.0 * ((xp.astype(w >> 11, xp.float64) + 0.5) * _TWO53_INV) - 1.0
        x = u * xp.reshape(xp.take(zx, i), shape)
        acc = pending & (xp.abs(u) < xp.reshape(xp.take(zr, i), shape))
        out = xp.where(acc, x, out)
        pending = pending & ~acc
        if not bool(xp.any(pending)):
            return out
        i = xp.reshape(i, shape)
        wedge = pending & (i > 0)
        if bool(xp.any(wedge)):
            x2 = x * x
            i_next = xp.reshape(xp.minimum(i + 1, 128), (-1,))
            f0 = xp.exp(-0.5 * (xp.reshape(xp.take(zx2, xp.reshape(i, (-1,))), shape) - x2))
            f1 = xp.exp(-0.5 * (xp.reshape(xp.take(zx2, i_next), shape) - x2))
            acc = wedge & (f0 + uniform(key, c + 1) * (f1 - f0) < 1.0)
            out = xp.where(acc, x, out)
            pending = pending & ~acc
        tail = pending & (i == 0)
        for k in range(ZIG_TAIL_TRIES):
            if not bool(xp.any(tail)):
                break
            e = xp.log(uniform(key, c + (2 + 2 * k))) / _ZIG_R
            y = xp.log(uniform(key, c + (3 + 2 * k)))
            acc = tail & (-2.0 * y >= e * e)
            out = xp.where(acc, xp.where(u > 0.0, _ZIG_R - e, e - _ZIG_R), out)
            pending = pending & ~acc
            tail = tail & ~acc
        if not bool(xp.any(pending)):
            return out
    c = b + ZIG_TRIES * _ZIG_TRY_DRAWS
    z = xp.sqrt(-2.0 * xp.log(uniform(key, c))) * xp.cos(_TWO_PI * uniform(key, c + 1))
    return xp.where(pending, z, out)


def _gamma_attempts_array(xp, key, base, a):
    """Array version of :func:`_gamma_attempts`: ``key``, ``base`` (``uint64``) and ``a`` of one shape."""
    aa = xp.where(a >= 1.0, a, a + 1.0)
    d = aa - 1.0 / 3.0
    c = 1.0 / xp.sqrt(9.0 * d)
    out = d
    pending = xp.ones(a.shape, dtype=xp.bool)
    for m in range(GAMMA_ATTEMPTS):
        j = base + m * _ATTEMPT_DRAWS
        z = zig_normal_array(xp, key, j)
        v = 1.0 + c * z
        pos = v > 0.0
        v = xp.where(pos, v * v * v, 1.0)
        u = uniform(key, j + ZIG_DRAWS)
        z2 = z * z
        acc = pending & pos & ((u < 1.0 - 0.0331 * (z2 * z2)) | (xp.log(u) < 0.5 * z2 + d - d * v + d * xp.log(v)))
        out = xp.where(acc, d * v, out)
        pending = pending & ~acc
        if not bool(xp.any(pending)):
            break
    small = a < 1.0
    if bool(xp.any(small)):
        us = uniform(key, base + (GAMMA_STRIDE - 1))
        out = xp.where(small, out * xp.exp(xp.log(us) / xp.where(small, a, 1.0)), out)
    return out


def gamma_array(xp, key, g, a):
    """Array version of :func:`gamma` (same draws, element by element).

    As in the scalar draw, the first attempt's fast path (ziggurat rectangle,
    squeeze) is evaluated on every entry; the few entries it does not decide
    (and shapes below 1) are gathered and go through every attempt, so the
    rare paths cost work in proportion to the entries that take them.
    """
    a = xp.asarray(a, dtype=xp.float64)
    key, g, a = xp.broadcast_arrays(xp.asarray(key), xp.asarray(g), a)
    shape = a.shape
    key, a = xp.reshape(key, (-1,)), xp.reshape(a, (-1,))
    base = xp.reshape(xp.astype(g, xp.uint64), (-1,)) * GAMMA_STRIDE
    zx, zr = xp.asarray(_ZX), xp.asarray(_ZR)
    big = a >= 1.0
    d = xp.where(big, a, 2.0) - 1.0 / 3.0
    w = word(key, base)
    i = xp.astype(w & 127, xp.int64)
    uz = 2.0 * ((xp.astype(w >> 11, xp.float64) + 0.5) * _TWO53_INV) - 1.0
    z = uz * xp.take(zx, i)
    v = 1.0 + (1.0 / xp.sqrt(9.0 * d)) * z
    u = uniform(key, base + ZIG_DRAWS)
    z2 = z * z
    done = big & (xp.abs(uz) < xp.take(zr, i)) & (v > 0.0) & (u < 1.0 - 0.0331 * (z2 * z2))
    out = d * (v * v * v)
    rest = ~done
    if bool(xp.any(rest)):
        out = xp.where(rest, _expand(xp, rest, _gamma_attempts_array(xp, *_gather(xp, rest, key, base, a))), out)
    return xp.reshape(out, shape)


def beta_array(xp, key, b, a1, a2):
    """Array version of :func:`beta` (both gamma draws in one call of :func:`gamma_array`)."""
    b = xp.asarray(b)
    key, b, a1, a2 = xp.broadcast_arrays(xp.asarray(key), b, xp.asarray(a1, dtype=xp.float64),
                                         xp.asarray(a2, dtype=xp.float64))
    g = gamma_array(xp, xp.stack([key, key]), xp.stack([2 * b, 2 * b + 1]), xp.stack([a1, a2]))
    return g[0, ...] / (g[0, ...] + g[1, ...])
