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
from numba.extending import register_jitable

__all__ = [
    "GAMMA",
    "LEARNER_STREAM",
    "mix64",
    "round_key",
    "rep_key",
    "stream_key",
    "uniform",
    "seed_to_uint64",
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


@register_jitable
def mix64(z):
    """SplitMix64 finaliser: a bijection of 64-bit words with full avalanche."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@register_jitable
def rep_key(seed, rep):
    """Key of replication ``rep`` under ``seed`` (both ``uint64``)."""
    return mix64(mix64(seed + GAMMA) ^ ((rep + _ONE) * _M2))


@register_jitable
def round_key(rkey, t):
    """Key of round ``t`` (``uint64``) in the replication keyed ``rkey``."""
    return mix64(rkey ^ ((t + _ONE) * GAMMA))


@register_jitable
def stream_key(key, salt):
    """Derive an independent stream from ``key`` with a ``uint64`` salt."""
    return mix64(key ^ salt)


@register_jitable
def uniform(key, j):
    """Draw ``j`` (``uint64``) of the round keyed ``key``, uniform on (0, 1).

    The 53 high bits of the hash are mapped to the midpoints
    ``(k + 1/2) 2**-53``, so the result is never exactly 0 or 1 and
    ``log(u)``, ``log(1 - u)`` are always finite.
    """
    h = mix64(key ^ ((j + _ONE) * GAMMA))
    return ((h >> _S11) * 1.0 + 0.5) * _TWO53_INV


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
