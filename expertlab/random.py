r"""Counter-based random numbers: the keys the engine derives and the draws made from them.

Every random draw of :func:`expertlab.sim.run` is a pure function of
``(seed, replication, round, index)``.  This module is the public surface of
that generator, for code of one's own that must draw the way the library does
(an environment or a learner written outside the library, a test oracle that
replays a run round by round, a reference implementation in plain Python):

========================  ===========================================================
:func:`seed_to_uint64`    a user seed (``int`` or ``numpy.random.SeedSequence``) as a ``uint64``
:func:`rep_key`           the key of replication ``rep`` under a seed
:func:`stream_key`        an independent stream of a key (learners use :data:`LEARNER_STREAM`)
:func:`round_key`         the key of round ``t`` of a replication
:func:`uniform`           draw ``j`` of a round, uniform on :math:`(0, 1)`
:func:`normal`            standard normal draw ``j`` of a round (Box--Muller)
:func:`engine_keys`       the keys ``sim.run`` hands the environment and the learner
========================  ===========================================================

How ``sim.run`` derives the keys
--------------------------------

With ``s = seed_to_uint64(seed)`` and replication ``r`` (counted from
``rep_offset``):

.. code-block:: text

    env key of replication r       e_r = rep_key(s, r)                     -> env.reset
    learner key of replication r   l_r = stream_key(e_r, LEARNER_STREAM)   -> learner.init
    keys of round t                round_key(e_r, t), round_key(l_r, t)    -> env.observe / step,
                                                                              learner.act / update

and draw ``j`` of a round keyed ``k`` is ``uniform(k, j)``.  Nothing else
enters a draw, so replication ``r`` sees the same numbers alone, in a batch,
in any block of a sweep and on any backend, and the learner's stream never
changes what the environment reveals.  :func:`engine_keys` returns both keys
of every replication at once.

Arithmetic and backends
-----------------------
Keys are ``uint64`` (NumPy or CuPy arrays, or NumPy scalars); Python and
non-negative NumPy integers are accepted and converted, anything else is
refused with a :class:`TypeError` or :class:`ValueError` naming the argument.
The hashing wraps modulo :math:`2^{64}` by design; the functions here
silence NumPy's overflow warnings for that.  Every function except
:func:`seed_to_uint64` and :func:`engine_keys` can also be called inside a
``numba.njit`` function or a CUDA device function (where arguments must
already be ``uint64``), and compiles to the same operations as the engine's
kernels, so a compiled environment of one's own draws bit-identical numbers.

The mixing function is the SplitMix64 finaliser [1]_, used as a keyed hash
of the counters in the manner of counter-based generators [2]_; normal draws
are Box--Muller transforms of two uniforms [3]_.

References
----------
.. [1] G. L. Steele, D. Lea and C. H. Flood, "Fast splittable pseudorandom
   number generators", OOPSLA 2014 (the SplitMix64 finaliser and its
   golden-ratio increment).
.. [2] J. K. Salmon, M. A. Moraes, R. O. Dror and D. E. Shaw, "Parallel
   random numbers: as easy as 1, 2, 3", SC 2011 (counter-based generation:
   a draw as a keyed function of its counter).
.. [3] G. E. P. Box and M. E. Muller, "A note on the generation of random
   normal deviates", Annals of Mathematical Statistics 29(2), 1958.

Examples
--------
The learner's keys of round 5 of replications 0..2 under seed 7 are the ones
``sim.run(..., seed=7)`` passes to ``learner.act``:

>>> from expertlab.random import engine_keys, uniform
>>> keys = engine_keys(7, n_reps=3, t=5)
>>> keys.learner.dtype, keys.learner.shape
(dtype('uint64'), (3,))
>>> u = uniform(keys.env, 0)          # draw 0 of the round, one per replication
>>> bool(((u > 0) & (u < 1)).all())
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba.extending import overload

from . import _random
from ._validation import check_int
from .sim import replication_keys as _replication_keys
from .sim._variates import normal as _normal

__all__ = ["LEARNER_STREAM", "EngineKeys", "engine_keys", "normal", "rep_key", "round_key", "seed_to_uint64",
           "stream_key", "uniform"]

#: Salt of the learners' stream: ``stream_key(rep_key(s, r), LEARNER_STREAM)`` is learner ``r``'s key.
LEARNER_STREAM = _random.LEARNER_STREAM

_TWO64 = 1 << 64


def _as_uint64(x, name):
    """``x`` as ``uint64`` (a NumPy scalar, or an array of its own namespace), refusing anything else."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be a non-negative integer or a uint64 array, got {type(x).__name__}")
    if isinstance(x, (int, np.integer)):
        v = int(x)
        if not 0 <= v < _TWO64:
            raise ValueError(f"{name} must lie in [0, 2**64), got {v}")
        return np.uint64(v)
    if isinstance(x, (list, tuple)):
        try:
            x = np.asarray(x)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a non-negative integer or a uint64 array, got a ragged "
                            f"{type(x).__name__}") from None
    if not (hasattr(x, "dtype") and hasattr(x, "shape")):
        raise TypeError(f"{name} must be a non-negative integer or a uint64 array, got {type(x).__name__}")
    kind = np.dtype(x.dtype).kind
    if kind == "u":
        return x if x.dtype == np.uint64 else x.astype(np.uint64)
    if kind == "i":
        if x.size and bool((x < 0).any()):
            raise ValueError(f"{name} must be non-negative, got a minimum of {int(x.min())}")
        return x.astype(np.uint64)
    raise TypeError(f"{name} must hold unsigned integers (uint64 keys), got dtype {x.dtype}")


def _jit_as(private):
    """Compile calls of the decorated public function, inside Numba code, as the engine's ``private`` one."""

    def register(public):
        @overload(public, strict=False)
        def _impl(*args):
            # a compiled call of the private function, which resolves through its own overload
            # (returning ``private`` itself would make Numba compile its Python body)
            if len(args) == 1:
                return lambda a: private(a)
            if len(args) == 2:
                return lambda a, b: private(a, b)
            if len(args) == 3:
                return lambda a, b, c: private(a, b, c)
            return None

        return public

    return register


@_jit_as(_random.rep_key)
def rep_key(seed, rep):
    """Key of replication ``rep`` under the ``uint64`` seed ``seed``: what ``env.reset`` receives.

    Parameters
    ----------
    seed : int or uint64 array
        The run's seed as a ``uint64`` (see :func:`seed_to_uint64`).
    rep : int or uint64 array
        Replication index (``rep_offset + r`` in ``sim.run``); broadcasts
        against ``seed``.

    Returns
    -------
    numpy.uint64 or uint64 array
        :math:`m(m(s + \\gamma) \\oplus (r + 1) M_2)` with :math:`m` the
        SplitMix64 finaliser, :math:`\\gamma` its odd increment and
        :math:`M_2` its second multiplier.

    Examples
    --------
    >>> import numpy as np
    >>> keys = rep_key(7, np.arange(3, dtype=np.uint64))
    >>> keys.dtype, len(set(keys.tolist()))
    (dtype('uint64'), 3)
    """
    seed, rep = _as_uint64(seed, "seed"), _as_uint64(rep, "rep")
    with np.errstate(over="ignore"):
        return _random.rep_key(seed, rep)


@_jit_as(_random.round_key)
def round_key(key, t):
    """Key of round ``t`` in the replication (or stream) keyed ``key``: what ``act``, ``observe`` and ``step`` get.

    Parameters
    ----------
    key : int or uint64 array
        A replication key (:func:`rep_key`) or a stream of one (:func:`stream_key`).
    t : int or uint64 array
        Round (step, episode, batch) index from 0; broadcasts against ``key``.

    Returns
    -------
    numpy.uint64 or uint64 array

    Examples
    --------
    >>> k = rep_key(1, 0)
    >>> bool(round_key(k, 0) != round_key(k, 1))
    True
    """
    key, t = _as_uint64(key, "key"), _as_uint64(t, "t")
    with np.errstate(over="ignore"):
        return _random.round_key(key, t)


@_jit_as(_random.stream_key)
def stream_key(key, salt):
    """An independent stream of ``key``: the finaliser of ``key XOR salt``.

    The engine keys every learner with ``stream_key(rep_key(s, r),
    LEARNER_STREAM)`` so that a learner's draws never coincide with the
    environment's; code of one's own that needs further streams uses other
    salts.

    Parameters
    ----------
    key : int or uint64 array
    salt : int or uint64 array
        Any fixed 64-bit word, e.g. :data:`LEARNER_STREAM`.

    Returns
    -------
    numpy.uint64 or uint64 array

    Examples
    --------
    >>> k = rep_key(1, 0)
    >>> bool(stream_key(k, LEARNER_STREAM) != k)
    True
    """
    key, salt = _as_uint64(key, "key"), _as_uint64(salt, "salt")
    with np.errstate(over="ignore"):
        return _random.stream_key(key, salt)


@_jit_as(_random.uniform)
def uniform(key, j):
    r"""Draw ``j`` of the round keyed ``key``, uniform on the open interval :math:`(0, 1)`.

    Parameters
    ----------
    key : int or uint64 array
        A round key (:func:`round_key`).
    j : int or uint64 array
        Draw index; broadcasts against ``key``.  By the library's convention
        draw ``i`` of an environment's round belongs to expert or arm ``i``.

    Returns
    -------
    float or float64 array
        :math:`(\lfloor h / 2^{11} \rfloor + 1/2)\, 2^{-53}` with :math:`h` the
        hash of ``key`` and ``j``: one of the :math:`2^{53}` midpoints, so
        never 0 or 1 and :math:`\log u`, :math:`\log(1 - u)` are finite.

    Examples
    --------
    >>> import numpy as np
    >>> u = uniform(round_key(rep_key(3, 0), 0), np.arange(4, dtype=np.uint64))
    >>> u.shape, bool(((u > 0) & (u < 1)).all())
    ((4,), True)
    """
    key, j = _as_uint64(key, "key"), _as_uint64(j, "j")
    with np.errstate(over="ignore"):
        return _random.uniform(key, j)


@_jit_as(_normal)
def normal(key, j):
    r"""Standard normal draw ``j`` of the round keyed ``key`` (the one Gaussian arms use).

    Box--Muller, cosine branch: :math:`z = \sqrt{-2 \ln u_1} \cos(2 \pi u_2)`
    with :math:`u_1, u_2` the uniforms ``2 j`` and ``2 j + 1`` of the round
    (:func:`uniform`), so normal draws ``j != j'`` share no uniform, but
    normal draw ``j`` and uniform draws ``2 j``, ``2 j + 1`` of the same key
    are not independent: give them different keys or indices.

    Parameters
    ----------
    key : int or uint64 array
        A round key (:func:`round_key`).
    j : int or uint64 array
        Normal-draw index; broadcasts against ``key``.

    Returns
    -------
    float or float64 array

    Examples
    --------
    >>> import numpy as np
    >>> z = normal(round_key(rep_key(3, np.arange(20_000, dtype=np.uint64)), 0), 0)
    >>> bool(abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05)
    True
    """
    key, j = _as_uint64(key, "key"), _as_uint64(j, "j")
    with np.errstate(over="ignore"):
        return _normal(key, j)


def seed_to_uint64(seed) -> np.uint64:
    """The ``uint64`` seed ``sim.run`` derives every key from (reported as ``RunResult.seed``).

    Parameters
    ----------
    seed : int, numpy.random.SeedSequence or None
        A non-negative integer is taken modulo :math:`2^{64}`; a
        ``SeedSequence`` gives its first 64-bit word of state (so that
        ``SeedSequence.spawn`` hands independent tasks their own keys);
        ``None`` draws fresh entropy.

    Returns
    -------
    numpy.uint64

    Raises
    ------
    TypeError
        If ``seed`` is of another type (a bool or a float included).
    ValueError
        If ``seed`` is a negative integer.

    Examples
    --------
    >>> int(seed_to_uint64(2**64 + 5))
    5
    """
    return _random.seed_to_uint64(seed)


class EngineKeys(NamedTuple):
    """The keys ``sim.run`` hands an environment and a learner, one per replication.

    Attributes
    ----------
    env : uint64 array, shape (n_reps,)
        For ``env.reset`` (replication keys) or ``env.observe`` / ``env.step``
        (round keys).
    learner : uint64 array, shape (n_reps,)
        For ``learner.init`` (replication keys) or ``learner.act`` /
        ``learner.update`` (round keys).
    """

    env: np.ndarray
    learner: np.ndarray


def engine_keys(seed, n_reps, *, t=None, rep_offset=0) -> EngineKeys:
    """The keys ``sim.run`` derives for replications ``rep_offset`` to ``rep_offset + n_reps - 1``.

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        The seed given to ``sim.run`` (or the ``seed`` a :class:`~expertlab.sim.RunResult`
        reports, to replay a run started with ``seed=None``).
    n_reps : int
        Number of replications (>= 1).
    t : int, optional
        Round index (>= 0).  ``None`` returns the replication keys (those of
        ``env.reset`` and ``learner.init``); an integer returns the keys of
        round ``t`` (those of ``observe``, ``step``, ``act`` and ``update``).
    rep_offset : int
        Index of the first replication, as in ``sim.run``.

    Returns
    -------
    EngineKeys
        ``(env, learner)``, each a ``uint64`` array of shape ``(n_reps,)``.

    Raises
    ------
    TypeError, ValueError
        Naming the argument: ``seed`` of another type, ``None`` (its keys
        could not be reproduced) or negative; ``n_reps``, ``t`` or
        ``rep_offset`` not an integer in range.

    See Also
    --------
    expertlab.testing.play_losses : drive a full-information learner with these keys.

    Examples
    --------
    Replication 4 of a batch is replication 0 of a block starting at 4:

    >>> import numpy as np
    >>> batch = engine_keys(11, n_reps=6, t=2)
    >>> block = engine_keys(11, n_reps=2, t=2, rep_offset=4)
    >>> np.array_equal(batch.learner[4:], block.learner)
    True
    """
    if seed is None:
        raise ValueError("seed must be an int or a numpy SeedSequence, not None: the keys of fresh entropy "
                         "cannot be reproduced (a run's RunResult.seed gives the seed it used)")
    seed_u = _random.seed_to_uint64(seed)
    n_reps = check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    if rep_offset + n_reps > _TWO64:
        raise ValueError(f"rep_offset + n_reps must be at most 2**64, got {rep_offset + n_reps}")
    with np.errstate(over="ignore"):
        env, learner = _replication_keys(seed_u, rep_offset, n_reps)
        if t is not None:
            tt = np.uint64(check_int(t, "t", minimum=0, maximum=_TWO64 - 1))
            env, learner = _random.round_key(env, tt), _random.round_key(learner, tt)
    return EngineKeys(env, learner)
