r"""LOMAR: learning-augmented online bipartite matching that stays close to an expert.

Edge-weighted online bipartite matching: ``n_offline`` nodes wait, online
nodes arrive one per round with edge weights :math:`w_t \in [0, w_{\max}]^{n_{\rm off}}`
(zero: no edge) and are matched irrevocably to a free offline node, or
skipped.  A *proposer* (any policy, typically a learned one) suggests an
action each round; LOMAR follows it only while a reservation inequality
keeps its reward provably within :math:`\rho` of an *expert* algorithm's.

The simulation is array code over replications (one Python iteration per
arrival, every replication at once); random weights are a pure function of
``(seed, replication, round, node)`` (:mod:`expertlab._random`).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable, NamedTuple

import numpy as np

from .._random import rep_key, round_key, seed_to_uint64, stream_key, uniform
from .._validation import check_float, check_in, check_int

__all__ = ["BipartiteInstance", "LOMARResult", "lomar", "random_bipartite", "fixed_bipartite", "PROPOSERS",
           "MATCHING_EXPERTS"]

_EDGE_STREAM = np.uint64(0x3C6EF372FE94F82B)
_PROP_STREAM = np.uint64(0xA54FF53A5F1D36F1)


class BipartiteInstance(NamedTuple):
    """Offline nodes, arrivals and the law of the edge weights.

    ``weights(seed_u, reps, t) -> (n_reps, n_offline)`` gives round ``t``'s
    weights of every replication; ``w_max`` bounds every weight.
    """

    name: str
    n_offline: int
    n_online: int
    w_max: float
    weights: Callable
    params: dict


def random_bipartite(n_offline: int, n_online: int, edge_prob: float = 0.5, w_max: float = 1.0) -> BipartiteInstance:
    r"""Random bipartite graph: each (arrival, offline node) edge is present with probability
    ``edge_prob`` and has a weight uniform on :math:`(0, w_{\max})`.

    Examples
    --------
    >>> inst = random_bipartite(4, 6, edge_prob=0.5)
    >>> w = inst.weights(np.uint64(0), np.arange(3, dtype=np.uint64), 0)
    >>> w.shape, bool(((w >= 0) & (w < 1)).all())
    ((3, 4), True)
    """
    n_offline = check_int(n_offline, "n_offline")
    n_online = check_int(n_online, "n_online")
    edge_prob = check_float(edge_prob, "edge_prob", minimum=0.0, maximum=1.0)
    if edge_prob == 0.0:
        raise ValueError("edge_prob must be > 0: a graph without edges has no feasible match")
    w_max = check_float(w_max, "w_max", positive=True)
    idx = np.arange(n_offline, dtype=np.uint64)[None, :]

    def weights(seed_u, reps, t):
        with np.errstate(over="ignore"):
            k = stream_key(round_key(rep_key(np.uint64(seed_u), reps), np.uint64(t)), _EDGE_STREAM)[:, None]
            edge = uniform(k, idx) < edge_prob
            w = w_max * uniform(k, idx + np.uint64(n_offline))
        return np.where(edge, w, 0.0)

    return BipartiteInstance("random_bipartite", n_offline, n_online, w_max, weights,
                             dict(n_offline=n_offline, n_online=n_online, edge_prob=edge_prob, w_max=w_max))


def fixed_bipartite(weights, w_max: float | None = None) -> BipartiteInstance:
    """A fixed weight matrix of shape ``(n_online, n_offline)``, the same in every replication.

    Examples
    --------
    >>> fixed_bipartite([[1.0, 0.0], [0.5, 0.5]]).n_online
    2
    """
    W = np.asarray(weights, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] < 1 or W.shape[1] < 1:
        raise ValueError(f"weights must have shape (n_online, n_offline), got {W.shape}")
    if not np.all(np.isfinite(W)) or np.any(W < 0):
        raise ValueError("weights must be finite and non-negative (0 means no edge)")
    if not np.any(W > 0):
        raise ValueError("weights has no edge: the graph has no feasible match")
    w_max = float(W.max()) if w_max is None else check_float(w_max, "w_max", positive=True)
    if W.max() > w_max:
        raise ValueError(f"w_max={w_max} is below the largest weight {W.max()}")

    def weights_fn(seed_u, reps, t):
        return np.broadcast_to(W[t], (reps.size, W.shape[1]))

    return BipartiteInstance("fixed_bipartite", W.shape[1], W.shape[0], w_max, weights_fn,
                             dict(n_offline=W.shape[1], n_online=W.shape[0], w_max=w_max))


# ---------------------------------------------------------------------------
# experts and proposers: batched policies (n_reps, n_offline) -> (n_reps,) node or -1


def _best_free(w, free, threshold=0.0):
    """Free node of largest weight above ``threshold`` (lowest index on ties), else -1."""
    score = np.where(free & (w > threshold), w, -np.inf)
    u = np.argmax(score, axis=1)
    return np.where(np.isfinite(score[np.arange(w.shape[0]), u]), u, -1)


def _expert_greedy(w, free, threshold):
    return _best_free(w, free)


def _expert_threshold(w, free, threshold):
    return _best_free(w, free, threshold)


#: Expert algorithms: ``greedy`` (the free neighbour of largest weight) and
#: ``threshold`` (the same among weights at least ``threshold``).
MATCHING_EXPERTS = {"greedy": _expert_greedy, "threshold": _expert_threshold}


def _prop_random(t, w, free, ctx):
    """Uniform over the free neighbours and "skip"."""
    ok = free & (w > 0)
    u = uniform(ctx["key"][:, None], np.arange(w.shape[1] + 1, dtype=np.uint64)[None, :])
    score = np.where(np.concatenate([ok, np.ones((w.shape[0], 1), bool)], axis=1), u, -1.0)
    c = np.argmax(score, axis=1)
    return np.where(c == w.shape[1], -1, c)


def _prop_min_weight(t, w, free, ctx):
    """The free neighbour of smallest weight (an adversarial proposer)."""
    score = np.where(free & (w > 0), -w, -np.inf)
    u = np.argmax(score, axis=1)
    return np.where(np.isfinite(score[np.arange(w.shape[0]), u]), u, -1)


def _prop_spoiler(t, w, free, ctx):
    """The free neighbour the expert will take soonest in the future (an adversary that knows the expert)."""
    nxt = ctx["expert_next_use"]
    score = np.where(free & (w > 0) & (nxt > t), -nxt.astype(np.float64), -np.inf)
    u = np.argmax(score, axis=1)
    return np.where(np.isfinite(score[np.arange(w.shape[0]), u]), u, -1)


def _prop_noisy_greedy(t, w, free, ctx):
    """Greedy on weights perturbed by uniform noise of width ``noise`` (a stand-in for a learned policy)."""
    z = uniform(ctx["key"][:, None], np.arange(w.shape[1], dtype=np.uint64)[None, :]) - 0.5
    return _best_free(np.where(w > 0, w + ctx["noise"] * z, 0.0), free & (w > 0), -np.inf)


#: Built-in proposers, by name.  A proposer is a callable
#: ``proposer(t, w, free, ctx) -> (n_reps,) int`` (``-1``: skip) given the
#: round, its weights ``(n_reps, n_offline)``, the free mask of the
#: matching it proposes for, and a context with the round's uint64 ``key``
#: per replication, ``expert_next_use`` (the round at which the expert takes
#: each node, ``n_online`` if never) and ``noise``.
PROPOSERS = {"random": _prop_random, "min_weight": _prop_min_weight, "spoiler": _prop_spoiler,
             "noisy_greedy": _prop_noisy_greedy}


# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, eq=False)
class LOMARResult:
    """Outcome of :func:`lomar`.

    Attributes
    ----------
    reward, expert_reward, proposer_reward : ndarray, shape (n_reps,)
        Total matched weight of LOMAR, of the expert run alone, and of the
        proposer run alone on its own matching.
    followed : ndarray of int, shape (n_reps,)
        Rounds in which LOMAR took the proposer's action.
    min_slack : ndarray, shape (n_reps,)
        :math:`\\min_t [R_t - \\rho (R^E_t + D_t w_{\\max}) + B]` over the rounds
        (the robustness invariant; never negative).
    rho, budget : float
    seed : int
    wall_time : float
    """

    reward: np.ndarray
    expert_reward: np.ndarray
    proposer_reward: np.ndarray
    followed: np.ndarray
    min_slack: np.ndarray
    rho: float
    budget: float
    seed: int
    wall_time: float


def lomar(instance: BipartiteInstance, *, rho: float = 0.5, budget: float = 0.0, expert: str = "greedy",
          proposer="noisy_greedy", threshold: float = 0.5, noise: float = 0.5, n_reps: int = 100, seed=0,
          rep_offset: int = 0) -> LOMARResult:
    r"""LOMAR's switching rule between a proposer and an expert, on every replication at once.

    Parameters
    ----------
    instance : BipartiteInstance
        :func:`random_bipartite` or :func:`fixed_bipartite`.
    rho : float in [0, 1]
        Robustness level: LOMAR's reward is at least ``rho`` times the expert's, minus ``budget``.
    budget : float >= 0
        The slack :math:`B`.
    expert : {"greedy", "threshold"}
        The expert algorithm (:data:`MATCHING_EXPERTS`), run on its own matching as if alone.
    proposer : str or callable
        A name in :data:`PROPOSERS` or a batched policy with that signature.
    threshold : float
        Weight threshold of the ``threshold`` expert.
    noise : float
        Perturbation width of the ``noisy_greedy`` proposer.
    n_reps, seed, rep_offset
        Replications, seeding and blocking as in :func:`expertlab.sim.run`.

    Returns
    -------
    LOMARResult

    Notes
    -----
    Let :math:`R_t` be LOMAR's reward after round :math:`t`, :math:`R^E_t`
    the expert's (run alone), and :math:`D_t` the number of offline nodes
    LOMAR has used that the expert has not.  In round :math:`t` the expert
    makes its own move first.  The proposal :math:`u` (a free neighbour,
    else a skip) is followed when

    .. math::

        R_{t-1} + w_{t,u} \;\ge\; \rho\,\big(R^E_t + D^{u}_t\, w_{\max}\big) - B,

    with :math:`D^{u}_t` the count after taking :math:`u`.  Otherwise LOMAR
    takes the expert's node if it is still free for LOMAR, and skips if not.
    Each such node may later be wanted by the expert, and the reservation
    :math:`D_t w_{\max}` prices them.  By induction
    :math:`R_t \ge \rho(R^E_t + D_t w_{\max}) - B` after every round, for
    any proposer and any instance (``min_slack`` records the margin).  In
    particular :math:`R_T \ge \rho R^E_T - B`.  Taking the expert's node adds
    the same weight to both sides, and :math:`\rho \le 1`.  Finding it taken
    by LOMAR removes it from :math:`D`, which pays for the expert's gain
    :math:`\le w_{\max}`.

    The ``threshold`` expert matches greedily among edges of weight at
    least ``threshold``.  It stands in for the paper's other expert (an
    optimal-stopping-style rule) and is not that algorithm.

    References
    ----------
    .. [1] P. Li, J. Yang, S. Ren, "Learning for Edge-Weighted Online
       Bipartite Matching with Robustness Guarantees", ICML 2023 (LOMAR; the
       switching rule and its robustness theorem, theorem number not
       re-checked).

    Examples
    --------
    >>> from expertlab.experts import lomar, random_bipartite
    >>> res = lomar(random_bipartite(8, 12), rho=0.8, budget=0.0, proposer="min_weight", n_reps=50, seed=0)
    >>> bool((res.reward >= 0.8 * res.expert_reward - 1e-12).all()), bool((res.min_slack >= -1e-12).all())
    (True, True)
    """
    if not isinstance(instance, BipartiteInstance):
        raise TypeError(f"instance must be a BipartiteInstance, got {type(instance).__name__}")
    rho = check_float(rho, "rho", minimum=0.0, maximum=1.0)
    budget = check_float(budget, "budget", minimum=0.0)
    check_in(expert, "expert", tuple(MATCHING_EXPERTS))
    if isinstance(proposer, str):
        check_in(proposer, "proposer", tuple(PROPOSERS))
        propose = PROPOSERS[proposer]
    elif callable(proposer):
        propose = proposer
    else:
        raise TypeError(f"proposer must be a name in {sorted(PROPOSERS)} or a callable, got {type(proposer).__name__}")
    threshold = check_float(threshold, "threshold", minimum=0.0)
    noise = check_float(noise, "noise", minimum=0.0)
    n_reps = check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    seed_u = seed_to_uint64(seed)
    reps = np.arange(rep_offset, rep_offset + n_reps, dtype=np.uint64)
    n_off, T, w_max = instance.n_offline, instance.n_online, instance.w_max
    pick_expert = MATCHING_EXPERTS[expert]
    rows = np.arange(n_reps)
    t0 = time.perf_counter()

    # the expert alone, first: its moves and the round at which it takes each node
    free_e = np.ones((n_reps, n_off), dtype=bool)
    moves = np.empty((T, n_reps), dtype=np.int64)
    next_use = np.full((n_reps, n_off), T, dtype=np.int64)
    for t in range(T):
        w = _check_round(instance.weights(seed_u, reps, t), n_reps, n_off, w_max, t)
        e = pick_expert(w, free_e, threshold)
        moves[t] = e
        hit = e >= 0
        free_e[rows[hit], e[hit]] = False
        next_use[rows[hit], e[hit]] = t

    free_l = np.ones((n_reps, n_off), dtype=bool)       # LOMAR's matching
    used_e = np.zeros((n_reps, n_off), dtype=bool)      # expert's nodes so far
    free_p = np.ones((n_reps, n_off), dtype=bool)       # the proposer alone
    R = np.zeros(n_reps)
    RE = np.zeros(n_reps)
    RP = np.zeros(n_reps)
    followed = np.zeros(n_reps, dtype=np.int64)
    slack = np.full(n_reps, budget)
    with np.errstate(over="ignore"):
        pkey = stream_key(rep_key(np.uint64(seed_u), reps), _PROP_STREAM)
    for t in range(T):
        w = instance.weights(seed_u, reps, t)
        e = moves[t]
        he = e >= 0
        RE[he] += w[rows[he], e[he]]
        used_e[rows[he], e[he]] = True
        with np.errstate(over="ignore"):
            ctx = {"key": round_key(pkey, np.uint64(t)), "expert_next_use": next_use, "noise": noise}
        u = _proposal(propose(t, w, free_l, ctx), w, free_l, n_reps, n_off)
        hu = u >= 0
        gain = np.where(hu, w[rows, np.maximum(u, 0)], 0.0)
        D = np.sum(~free_l & ~used_e, axis=1)
        D_u = D + (hu & ~used_e[rows, np.maximum(u, 0)])
        follow = R + gain >= rho * (RE + D_u * w_max) - budget
        fallback = ~follow & he & free_l[rows, np.maximum(e, 0)]
        take = np.where(follow, u, np.where(fallback, e, -1))
        ht = take >= 0
        R[ht] += w[rows[ht], take[ht]]
        free_l[rows[ht], take[ht]] = False
        followed += follow
        D = np.sum(~free_l & ~used_e, axis=1)
        slack = np.minimum(slack, R - rho * (RE + D * w_max) + budget)
        # the proposer on its own matching, for comparison
        up = _proposal(propose(t, w, free_p, ctx), w, free_p, n_reps, n_off)
        hp = up >= 0
        RP[hp] += w[rows[hp], up[hp]]
        free_p[rows[hp], up[hp]] = False
    wall = time.perf_counter() - t0
    return LOMARResult(R, RE, RP, followed, slack, rho, budget, int(seed_u), wall)


def _check_round(w, n_reps, n_off, w_max, t):
    if w.shape != (n_reps, n_off):
        raise ValueError(f"round {t}: weights of shape {w.shape}, expected {(n_reps, n_off)}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(w > w_max):
        raise ValueError(f"round {t}: weights must lie in [0, w_max={w_max}]")
    return w


def _proposal(u, w, free, n_reps, n_off):
    """A proposer's output as a valid action: a free neighbour, else -1 (skip)."""
    u = np.asarray(u)
    if u.shape != (n_reps,) or u.dtype.kind not in "iu":
        raise ValueError(f"a proposer must return an int array of shape ({n_reps},), got {u.dtype} {u.shape}")
    ok = (u >= 0) & (u < n_off)
    uc = np.clip(u, 0, n_off - 1)
    rows = np.arange(n_reps)
    ok &= free[rows, uc] & (w[rows, uc] > 0)
    return np.where(ok, u, -1)
