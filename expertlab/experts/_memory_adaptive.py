r"""Memory-bounded experts against an adaptive adversary that sees the learner's past choices.

The adversary of :func:`recent_plays_attack` remembers the last ``window``
experts the learner played and gives each of them loss 1; every other expert
loses a fair coin.  A pool learner that concentrates its play on a few
remembered experts (:func:`~expertlab.experts.memory_bounded`) keeps playing
experts it played a moment ago and pays 1 almost every round, while the best
expert in hindsight is an untouched fair coin: linear regret.  The variant
:func:`memory_adaptive` plays its pool in a cyclic order drawn afresh each
epoch, so with a pool larger than the window it never replays an expert the
adversary still remembers (except at the few epoch boundaries), and its
regret is that of fair coins, :math:`O(\sqrt{T\ln n})`.

:func:`run_adaptive` is the driver: the adversary's losses depend on the
sampled plays, which :func:`expertlab.sim.run` (oblivious instances) does not
provide.  It draws every random number from the counter-based generator,
keyed by (seed, replication, round, index).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from .. import _random
from .._validation import check_int
from ..sim._protocol import Learner
from ..sim._engine import checkpoint_grid
from ._memory_bounded import _n_new, _refill

__all__ = ["AdaptiveAdversary", "recent_plays_attack", "memory_adaptive", "MemoryAdaptiveState",
           "AdaptiveMemoryLearner", "AdaptiveRunResult", "run_adaptive"]

_PLAY_STREAM = np.uint64(0x3C6EF372FE94F82B)    # the driver's draw of the play from p (sim.Learner path)
_ORDER_STREAM = np.uint64(0xA54FF53A5F1D36F1)   # memory_adaptive's cyclic order
_ADV_STREAM = np.uint64(0x510E527FADE682D1)     # the adversary's coins


class AdaptiveAdversary(NamedTuple):
    """An adaptive adversary: fair coins, loss 1 on the last ``window`` plays of the learner."""

    name: str
    n_experts: int
    window: int
    params: Mapping[str, Any]


def recent_plays_attack(n_experts: int, window: int | None = None) -> AdaptiveAdversary:
    r"""Loss 1 on every expert the learner played in the last ``window`` rounds; fair coins elsewhere.

    Parameters
    ----------
    n_experts : int >= 2
    window : int, optional
        How many past plays the adversary remembers; default :math:`\lceil\sqrt n\,\rceil`.

    Returns
    -------
    AdaptiveAdversary

    Notes
    -----
    With :math:`I_s` the expert played in round :math:`s` and
    :math:`c_{t,i}\sim\mathrm{Bernoulli}(1/2)` iid,

    .. math::

        \ell_{t,i} = 1 \text{ if } i \in \{I_{t-w}, \dots, I_{t-1}\},
        \qquad \ell_{t,i} = c_{t,i} \text{ otherwise}.

    The losses of round :math:`t` depend on the learner's past choices only,
    not on its current one.  The default window :math:`\sqrt n` puts the
    memory a learner needs to dodge it at :math:`\sqrt n`, the threshold of
    Peng & Rubinstein's adaptive-adversary results; the instance itself is a
    construction of this library, not the paper's lower-bound adversary.

    Examples
    --------
    >>> recent_plays_attack(64).window
    8
    """
    n = check_int(n_experts, "n_experts", minimum=2)
    w = math.isqrt(n - 1) + 1 if window is None else check_int(window, "window", minimum=1, maximum=n)
    return AdaptiveAdversary("recent_plays_attack", n, w, {"n_experts": n, "window": w})


class MemoryAdaptiveState(NamedTuple):
    """State of :func:`memory_adaptive` (leading axis: replications; ``O(memory)`` entries each).

    ``t`` rounds seen (int); ``key`` learner keys; ``pool`` the experts held,
    ``(n_reps, memory)``, in cyclic play order; ``epoch_loss`` each slot's loss
    in the current epoch.
    """

    t: int
    key: Any
    pool: Any
    epoch_loss: Any


class AdaptiveMemoryLearner(NamedTuple):
    """A learner that plays one expert per round: ``init(n_reps, n, key)``, ``act(state) -> (n_reps,)``,
    ``update(state, loss) -> state``."""

    name: str
    init: Callable
    act: Callable
    update: Callable
    params: Mapping[str, Any]


def memory_adaptive(memory: int, *, horizon: int | None = None, epoch: int | None = None) -> AdaptiveMemoryLearner:
    r"""A pool of ``memory`` experts played in a fresh random cyclic order each epoch.

    Parameters
    ----------
    memory : int
        Pool size :math:`S` (``init`` requires :math:`S \le n`).
    horizon : int, optional
        :math:`T`, for the default epoch :math:`B = S\lceil T / (6n)\rceil`
        (about :math:`6n/S` epochs, a multiple of :math:`S` rounds).
    epoch : int, optional
        Epoch length :math:`B`; give exactly one of ``horizon`` and ``epoch``.

    Returns
    -------
    AdaptiveMemoryLearner

    Notes
    -----
    In epoch :math:`e` the pool :math:`(i_1, \dots, i_S)` is played in a cycle,
    round :math:`t` of the epoch playing :math:`i_{\pi_e(t \bmod S)}` with
    :math:`\pi_e` a uniformly random permutation drawn with fresh randomness
    at the start of the epoch.  At the end of the epoch the slots are ranked
    by their loss in the epoch, the best :math:`S - \max(1, \lfloor S/2
    \rfloor)` kept and the others refilled uniformly from the non-members (the
    selection rule of :func:`~expertlab.experts.memory_bounded`).  Between two
    plays of the same expert inside an epoch lie exactly :math:`S - 1` other
    plays, so with :math:`S > w` an adversary that remembers :math:`w` past
    plays (:func:`recent_plays_attack`) can hit the learner only in the
    first :math:`w` rounds of an epoch, :math:`O(w n / S)` times in all, and
    the regret is that of fair coins plus that constant.  With :math:`S \le w`
    every play is of an expert played :math:`S \le w` rounds before, and the
    regret is linear.

    [validated-rates]

    **Simplified.**  Peng & Rubinstein give an algorithm with about
    :math:`\sqrt n` memory and :math:`o(T)` regret against every adaptive
    adversary, and a matching lower bound; neither construction could be
    recovered beyond the abstract.  This learner keeps only the idea that
    the play must not revisit experts the adversary can still exploit.  It
    trades exploitation for that: it plays its pool uniformly, so it does not
    concentrate on a good expert within an epoch (the pool selection alone
    does), and an adversary that knows the algorithm and predicts the cycle
    from the last :math:`S` plays would defeat it.

    References
    ----------
    .. [1] B. Peng and A. Rubinstein, "Near optimal memory-regret tradeoff for
       online learning", FOCS 2023, arXiv:2303.01673 (the adaptive-adversary
       results: about :math:`\sqrt n` memory is necessary and sufficient for
       :math:`o(T)` regret; theorem numbers not re-checked).
    .. [2] B. Peng and F. Zhang, "Online prediction in sub-linear space",
       SODA 2023 (linear memory lower bound against strong adaptive adversaries).

    Examples
    --------
    >>> res = run_adaptive(memory_adaptive(16, horizon=4000), recent_plays_attack(64), 4000, n_reps=20, seed=0)
    >>> bool(res.regret[-1].mean() < 0.05 * 4000)
    True
    """
    memory = check_int(memory, "memory", minimum=1)
    if (horizon is None) == (epoch is None):
        raise ValueError("give exactly one of horizon (for the default epoch length) and epoch")
    horizon = None if horizon is None else check_int(horizon, "horizon")
    epoch = None if epoch is None else check_int(epoch, "epoch")
    params = {k: v for k, v in {"memory": memory, "horizon": horizon, "epoch": epoch}.items() if v is not None}

    def length(n):
        return epoch if epoch is not None else memory * max(1, math.ceil(horizon / (6 * n)))

    def _shuffle(pool, key, e):
        with np.errstate(over="ignore"):
            k = _random.round_key(_random.stream_key(key, _ORDER_STREAM), np.uint64(e))
            u = _random.uniform(k[:, None], np.arange(pool.shape[1], dtype=np.uint64)[None, :])
        return np.take_along_axis(pool, np.argsort(u, axis=1, kind="stable"), axis=1)

    def _epoch_key(key, e):
        with np.errstate(over="ignore"):
            return _random.round_key(key, np.uint64(e))

    def init(n_reps, n_experts, key):
        n_reps, n = check_int(n_reps, "n_reps"), check_int(n_experts, "n_experts")
        key = np.asarray(key, dtype=np.uint64)
        if key.shape != (n_reps,):
            raise ValueError(f"key must have shape ({n_reps},), got {key.shape}")
        if memory > n:
            raise ValueError(f"memory must be <= n_experts = {n}, got memory={memory}")
        pool = _refill(np.full((n_reps, memory), -1, dtype=np.int64), _epoch_key(key, 0), n, np)
        return MemoryAdaptiveState(0, key, _shuffle(pool, key, 0), np.zeros((n_reps, memory)))

    def act(state):
        return state.pool[:, state.t % memory]

    def update(state, loss):
        n_reps = state.pool.shape[0]
        loss = np.asarray(loss, dtype=np.float64)
        if loss.ndim != 2 or loss.shape[0] != n_reps or not np.all(np.isfinite(loss)):
            raise ValueError(f"loss must be a finite array of shape ({n_reps}, n_experts), got shape {loss.shape}")
        n = loss.shape[1]
        rows = np.arange(n_reps)[:, None]
        epoch_loss = state.epoch_loss + loss[rows, state.pool]
        t, pool, B = state.t + 1, state.pool, length(n)
        if t % B == 0:
            e = t // B
            n_new = _n_new(memory, n)
            order = np.argsort(epoch_loss, axis=1, kind="stable")
            pool = np.take_along_axis(pool, order, axis=1)
            if n_new > 0:
                pool[:, memory - n_new:] = -1
                pool = _refill(pool, _epoch_key(state.key, e), n, np)
            pool = _shuffle(pool, state.key, e)
            epoch_loss = np.zeros_like(epoch_loss)
        return MemoryAdaptiveState(t, state.key, pool, epoch_loss)

    return AdaptiveMemoryLearner("memory_adaptive", init, act, update, params)


@dataclasses.dataclass(frozen=True)
class AdaptiveRunResult:
    """Output of :func:`run_adaptive`: ``regret[k, r]`` at ``checkpoints[k]`` in replication ``r``.

    ``hits`` counts the rounds in which the learner played an expert the
    adversary remembered (loss 1 by the attack), same shape as ``regret``.
    """

    learner: str
    checkpoints: np.ndarray
    regret: np.ndarray
    hits: np.ndarray
    wall_time: float


def run_adaptive(learner, adversary: AdaptiveAdversary, horizon: int, n_reps: int = 100, seed=0, *,
                 rep_offset: int = 0, checkpoints=None) -> AdaptiveRunResult:
    r"""Run a learner against an adaptive adversary; one Python iteration per round.

    Parameters
    ----------
    learner : AdaptiveMemoryLearner or expertlab.sim.Learner
        A full-information :class:`~expertlab.sim.Learner` (e.g.
        :func:`~expertlab.experts.memory_bounded`) plays an expert drawn from
        its ``p`` with the driver's own randomness.
    adversary : AdaptiveAdversary
    horizon, n_reps, seed, rep_offset
        As in :func:`expertlab.sim.run`.
    checkpoints : array of int, optional
        Default :func:`expertlab.sim.checkpoint_grid`.

    Returns
    -------
    AdaptiveRunResult
        The regret is :math:`\sum_t \ell_{t,I_t} - \min_i \sum_t \ell_{t,i}` of the played experts.
    """
    if not isinstance(adversary, AdaptiveAdversary):
        raise TypeError(f"adversary must be an AdaptiveAdversary, got {type(adversary).__name__}")
    if not isinstance(learner, (AdaptiveMemoryLearner, Learner)):
        raise TypeError(f"learner must be an AdaptiveMemoryLearner or a sim.Learner, got {type(learner).__name__}")
    horizon, n_reps = check_int(horizon, "horizon"), check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    ck = checkpoint_grid(horizon) if checkpoints is None else np.unique(np.asarray(checkpoints, dtype=np.int64))
    if ck.size < 1 or ck[0] < 1 or ck[-1] > horizon:
        raise ValueError(f"checkpoints must lie in [1, horizon={horizon}]")
    n, w = adversary.n_experts, adversary.window
    with np.errstate(over="ignore"):
        rk = _random.rep_key(np.asarray([_random.seed_to_uint64(seed)], dtype=np.uint64),
                             np.arange(rep_offset, rep_offset + n_reps, dtype=np.uint64))
        lk = _random.stream_key(rk, _random.LEARNER_STREAM)
        ak, pk = _random.stream_key(rk, _ADV_STREAM), _random.stream_key(rk, _PLAY_STREAM)
    plain = isinstance(learner, Learner)
    state = learner.init(n_reps, n) if plain else learner.init(n_reps, n, lk)
    rows = np.arange(n_reps)
    idx = np.arange(n, dtype=np.uint64)[None, :]
    recent = np.full((n_reps, w), -1, dtype=np.int64)
    cum, hit, L = np.zeros(n_reps), np.zeros(n_reps), np.zeros((n_reps, n))
    out, hits = np.zeros((ck.size, n_reps)), np.zeros((ck.size, n_reps))
    c = 0
    t0 = time.perf_counter()
    for t in range(horizon):
        with np.errstate(over="ignore"):
            loss = (_random.uniform(_random.round_key(ak, np.uint64(t))[:, None], idx) < 0.5).astype(np.float64)
            if plain:
                p = learner.act(state, _random.round_key(lk, np.uint64(t)))
                u = _random.uniform(_random.round_key(pk, np.uint64(t)), np.uint64(0))
        marked = recent >= 0
        loss[np.broadcast_to(rows[:, None], recent.shape)[marked], recent[marked]] = 1.0
        if plain:
            i_t = np.minimum((np.cumsum(p, axis=1) < u[:, None] * p.sum(axis=1, keepdims=True)).sum(axis=1), n - 1)
            state = learner.update(state, p, loss)
        else:
            i_t = learner.act(state)
            state = learner.update(state, loss)
        hit += np.any(recent == i_t[:, None], axis=1)
        cum += loss[rows, i_t]
        L += loss
        recent[:, t % w] = i_t
        if c < ck.size and t + 1 == ck[c]:
            out[c], hits[c] = cum - L.min(axis=1), hit
            c += 1
    return AdaptiveRunResult(learner.name, ck, out, hits, time.perf_counter() - t0)
