"""Counter-based random numbers shared by every backend.

Every random draw in expertlab is a pure function of
``(seed, replication, round, index)``.  The functions below are written once
in 64-bit unsigned integer arithmetic and use only operators that mean the same
thing on NumPy/CuPy ``uint64`` arrays (vectorised), on Numba scalars (inside
``@njit`` kernels) and on Numba-CUDA scalars (inside device functions).  The
same seed therefore produces bit-identical streams on every backend, for any
split of the replications into blocks or workers.

The mixing function is the SplitMix64 finaliser (Steele, Lea & Flood,
"Fast splittable pseudorandom number generators", OOPSLA 2014), used here as
a keyed hash: a stream key is derived from the seed, the replication and the
round by chaining the finaliser, and draw ``j`` of that round is the finaliser
applied to ``key ^ (j * GAMMA)``.

Streams
-------
Instances (the environment) and learners draw from disjoint streams: a learner
hashes its key with :data:`LEARNER_STREAM` so that adding randomness to a
learner never changes the losses an instance reveals.
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload, register_jitable

__all__ = [
    "GAMMA",
    "LEARNER_STREAM",
    "mix64",
    "round_key",
    "rep_key",
    "stream_key",
    "uniform",
    "word",
    "seed_to_uint64",
    "f64",
]

#: Odd Weyl increment of SplitMix64 (2**64 / golden ratio).
GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
_TWO53_INV = 1.0 / 9007199254740992.0  # 2**-53
#: Salt that separates a learner's stream from the instance's stream.
LEARNER_STREAM = np.uint64(0xD1B54A32D192ED03)


# Each function is written once, as a body over its constants: compiled code
# (Numba CPU and CUDA, through ``overload``) and NumPy inputs use the
# ``numpy.uint64`` constants; arrays of another namespace (CuPy,
# ``array_api_strict``) get them as Python ints, which the array API promotes
# to the array's ``uint64`` dtype.
_C_NP = (GAMMA, _M1, _M2, _S30, _S27, _S31, _S11, _ONE)
_C_INT = tuple(int(c) for c in _C_NP)


def _is_numpy(*xs):
    return all(isinstance(x, (np.ndarray, np.generic, int)) for x in xs)


def _consts(*xs):
    """The constants for inputs ``xs``, and ``xs`` with scalars as 0-d ``uint64`` arrays of another namespace."""
    if _is_numpy(*xs):
        return _C_NP, xs
    from ._backend import get_namespace

    xp = get_namespace(*[x for x in xs if not isinstance(x, (np.generic, int))])
    return _C_INT, tuple(xp.asarray(int(x), dtype=xp.uint64) if isinstance(x, (np.generic, int)) else x
                         for x in xs)


@register_jitable
def _mix64(z, c):
    z = (z ^ (z >> c[3])) * c[1]
    z = (z ^ (z >> c[4])) * c[2]
    return z ^ (z >> c[5])


@register_jitable
def _rep_key(seed, rep, c):
    return _mix64(_mix64(seed + c[0], c) ^ ((rep + c[7]) * c[2]), c)


@register_jitable
def _round_key(rkey, t, c):
    return _mix64(rkey ^ ((t + c[7]) * c[0]), c)


@register_jitable
def _stream_key(key, salt, c):
    return _mix64(key ^ salt, c)


@register_jitable
def _word(key, j, c):
    return _mix64(key ^ ((j + c[7]) * c[0]), c)


@register_jitable
def _uniform_bits(key, j, c):
    return _word(key, j, c) >> c[6]


def mix64(z):
    """SplitMix64 finaliser: a bijection of 64-bit words with full avalanche."""
    c, (z,) = _consts(z)
    return _mix64(z, c)


def rep_key(seed, rep):
    """Key of replication ``rep`` under ``seed`` (both ``uint64``)."""
    c, (seed, rep) = _consts(seed, rep)
    return _rep_key(seed, rep, c)


def round_key(rkey, t):
    """Key of round ``t`` (``uint64``) in the replication keyed ``rkey``."""
    c, (rkey, t) = _consts(rkey, t)
    return _round_key(rkey, t, c)


def stream_key(key, salt):
    """Derive an independent stream from ``key`` with a ``uint64`` salt."""
    c, (key, salt) = _consts(key, salt)
    return _stream_key(key, salt, c)


def _as_uint64_index(j):
    if not isinstance(j, (np.generic, int)) and not _is_numpy(j):
        from ._backend import get_namespace

        xpj = get_namespace(j)
        return xpj.astype(j, xpj.uint64)
    if isinstance(j, np.ndarray):
        return j.astype(np.uint64, copy=False)
    return j


def word(key, j):
    """The whole 64-bit hash behind draw ``j`` of the round keyed ``key``.

    :func:`uniform` keeps its 53 high bits; the 11 low bits are independent
    of them (the finaliser is a bijection with full avalanche), so a sampler
    may take a small table index from the low bits and a uniform from the
    high bits of one word.
    """
    c, (key, j) = _consts(key, j)
    return _word(key, _as_uint64_index(j), c)


def uniform(key, j):
    """Draw ``j`` (a non-negative integer, taken as ``uint64``) of the round keyed ``key``, uniform on (0, 1).

    The 53 high bits of the hash are mapped to the midpoints
    ``(k + 1/2) 2**-53``, so the result is never exactly 0 or 1 and
    ``log(u)``, ``log(1 - u)`` are always finite.
    """
    c, (key, j) = _consts(key, j)
    bits = _uniform_bits(key, _as_uint64_index(j), c)
    if _is_numpy(bits):
        return (bits * 1.0 + 0.5) * _TWO53_INV
    from ._backend import get_namespace

    xp = get_namespace(bits)
    return (xp.astype(bits, xp.float64) + 0.5) * _TWO53_INV


def f64(x):
    """``x`` (a bool or number, or an array of them) as ``float64``, in compiled code and over any ``xp``.

    The array API does no arithmetic on booleans, so ``(u < p) * 1.0`` is
    written ``f64(u < p)`` in code shared by every backend.
    """
    if _is_numpy(x) or isinstance(x, (bool, float, np.bool_)):
        return x * 1.0
    from ._backend import get_namespace

    xp = get_namespace(x)
    return xp.astype(x, xp.float64)


@overload(f64)
def _ov_f64(x):
    return lambda x: x * 1.0


@overload(mix64)
def _ov_mix64(z):
    return lambda z: _mix64(z, _C_NP)


@overload(rep_key)
def _ov_rep_key(seed, rep):
    return lambda seed, rep: _rep_key(seed, rep, _C_NP)


@overload(round_key)
def _ov_round_key(rkey, t):
    return lambda rkey, t: _round_key(rkey, t, _C_NP)


@overload(stream_key)
def _ov_stream_key(key, salt):
    return lambda key, salt: _stream_key(key, salt, _C_NP)


@overload(word)
def _ov_word(key, j):
    return lambda key, j: _word(key, np.uint64(j), _C_NP)


@overload(uniform)
def _ov_uniform(key, j):
    return lambda key, j: (_uniform_bits(key, np.uint64(j), _C_NP) * 1.0 + 0.5) * _TWO53_INV


def seed_to_uint64(seed) -> np.uint64:
    """Turn a user seed (int, ``SeedSequence`` or ``None``) into a ``uint64``.

    ``None`` draws fresh entropy; the value used is reported in every result
    so that the run can be repeated.
    """
    if seed is None:
        seed = np.random.SeedSequence().entropy
    if isinstance(seed, np.random.SeedSequence):
        return np.uint64(seed.generate_state(1, dtype=np.uint64)[0])
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, a numpy SeedSequence or None, got {type(seed).__name__}")
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    return np.uint64(seed % (1 << 64))
