r"""Episodic learners in tabular MDPs and the driver that runs them, batched over replications.

An episodic learner is a record of pure functions (:class:`EpisodicLearner`):
``init(spec, n_reps, seed)`` builds the state from what the learner may know
(:class:`EpisodeSpec`: sizes, the known mean rewards, the start state, the
number of episodes), ``plan(state)`` returns one deterministic Markov policy
per replication and ``update(state, states, actions, rewards)`` absorbs one
episode of every replication.  :func:`run_episodes` is the one place that
loops over episodes: it samples all replications' trajectories at once from
the counter-based generator of :mod:`expertlab._random` and records the
realised and the exact expected regret on a log-spaced checkpoint grid.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable

import numpy as np

from .._random import rep_key, round_key, seed_to_uint64, uniform
from .._validation import check_int
from ._models import FiniteHorizonMDP
from ._planning import backward_induction

__all__ = ["EpisodeSpec", "EpisodicLearner", "EpisodeResult", "run_episodes", "evaluate_markov_policy",
           "sample_episodes"]


@dataclasses.dataclass(frozen=True)
class EpisodeSpec:
    """What an episodic learner is told about the MDP before the first episode.

    Attributes
    ----------
    n_states, n_actions, horizon : int
    rewards : ndarray, shape (H, S, A)
        Mean rewards, known to the learner (the transitions are not).
    initial_state : int
        Every episode starts in this state.
    n_episodes : int
        Number of episodes ``K`` to be played (enters confidence widths
        through ``T = K H``).
    """

    n_states: int
    n_actions: int
    horizon: int
    rewards: np.ndarray
    initial_state: int
    n_episodes: int


@dataclasses.dataclass(frozen=True)
class EpisodicLearner:
    """An episodic learner: a name, a dictionary of settings and three pure functions.

    Attributes
    ----------
    name : str
    params : dict
        Settings the factory was called with (reported in results).
    init : callable ``(spec: EpisodeSpec, n_reps: int, seed) -> state``
        The state is a ``NamedTuple`` whose batched arrays have leading
        axis ``n_reps`` (constants shared by all replications may be
        unbatched).
    plan : callable ``(state) -> policy``
        Integer array ``(n_reps, H, S)``: the action of each replication at
        each stage and state in the coming episode.
    update : callable ``(state, states, actions, rewards) -> state``
        ``states (n_reps, H + 1)`` (``states[:, 0]`` is the start state),
        ``actions (n_reps, H)``, ``rewards (n_reps, H)`` of the episode just
        played.
    """

    name: str
    params: dict
    init: Callable
    plan: Callable
    update: Callable


def _rep_mean(field: str, kind: str) -> property:
    """Read-only property of a result: the ``(n_checkpoints, n_reps)`` array ``field`` averaged over replications.

    Shared by the result records of the episodic drivers (:class:`EpisodeResult`, ``ConservativeResult``).
    """

    def mean(self) -> np.ndarray:
        return getattr(self, field).mean(axis=1)

    return property(mean, doc=f"Mean {kind} regret over the replications, shape ``(n_checkpoints,)``.")


@dataclasses.dataclass(frozen=True)
class EpisodeResult:
    r"""Regret of a batch of replications on a checkpoint grid of episodes.

    Attributes
    ----------
    learner : str
    checkpoints : ndarray of int, shape (n_checkpoints,)
        Episode counts ``k`` after which the regret was recorded.
    regret : ndarray, shape (n_checkpoints, n_reps)
        Exact expected regret :math:`\sum_{j \le k} (V^\star_1(s_1) - V^{\pi_j}_1(s_1))`,
        each policy evaluated with the true model; non-negative.
    realised_regret : ndarray, shape (n_checkpoints, n_reps)
        :math:`\sum_{j \le k} (V^\star_1(s_1) - \sum_h r_h(s^j_h, a^j_h))`: the
        optimal value minus the realised returns (same expectation).
    optimal_value : float
        :math:`V^\star_1(s_1)`.
    n_episodes, n_reps, horizon : int
    seed : int
        The ``uint64`` seed used (also when ``seed=None`` was passed).
    wall_time : float
        Seconds spent in the episode loop.
    rep_offset : int
        Index of the first replication.
    """

    learner: str
    checkpoints: np.ndarray
    regret: np.ndarray
    realised_regret: np.ndarray
    optimal_value: float
    n_episodes: int
    n_reps: int
    horizon: int
    seed: int
    wall_time: float
    rep_offset: int = 0

    mean_regret = _rep_mean("regret", "expected")
    mean_realised_regret = _rep_mean("realised_regret", "realised")


def _check_single(mdp) -> FiniteHorizonMDP:
    if not isinstance(mdp, FiniteHorizonMDP):
        raise TypeError(f"mdp must be a FiniteHorizonMDP, got {type(mdp).__name__}")
    if mdp.batch_shape != ():
        raise ValueError(f"mdp must be a single MDP (no batch axes), got batch shape {mdp.batch_shape}")
    return mdp


def evaluate_markov_policy(mdp: FiniteHorizonMDP, policy) -> np.ndarray:
    r"""Exact values of deterministic Markov policies, one per replication, by backward induction.

    Parameters
    ----------
    mdp : FiniteHorizonMDP
        A single MDP (no batch axes).
    policy : integer array, shape (n_reps, H, S)

    Returns
    -------
    ndarray, shape (n_reps, H + 1, S)
        :math:`V^\pi_h(s)`, with :math:`V^\pi_H = 0`.

    Notes
    -----
    :math:`V^\pi_h(s) = r_h(s, \pi_h(s)) + \sum_t P_h(t | s, \pi_h(s)) V^\pi_{h+1}(t)`.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> m = FiniteHorizonMDP.stationary(p, np.array([[0.0, 0.0], [1.0, 1.0]]), 2)
    >>> evaluate_markov_policy(m, np.array([[[1, 0], [0, 0]]]))[0, 0]
    array([1., 2.])
    """
    mdp = _check_single(mdp)
    h_, s_ = mdp.horizon, mdp.n_states
    pi = np.asarray(policy)
    if pi.ndim != 3 or pi.shape[1:] != (h_, s_) or not np.issubdtype(pi.dtype, np.integer):
        raise ValueError(f"policy must be an integer array of shape (n_reps, {h_}, {s_}), got "
                         f"{pi.dtype} {pi.shape}")
    if pi.size and (pi.min() < 0 or pi.max() >= mdp.n_actions):
        raise ValueError(f"policy must hold actions in [0, {mdp.n_actions - 1}]")
    p, r = np.asarray(mdp.transitions), np.asarray(mdp.rewards)
    idx = np.arange(s_)
    v = np.zeros((pi.shape[0], h_ + 1, s_))
    for h in range(h_ - 1, -1, -1):
        a = pi[:, h]  # (R, S)
        p_pi = p[h][idx[None, :], a]  # (R, S, S)
        v[:, h] = r[h][idx[None, :], a] + np.einsum("rst,rt->rs", p_pi, v[:, h + 1])
    return v


def sample_episodes(mdp: FiniteHorizonMDP, policy, keys, initial_state: int):
    r"""One episode of every replication under ``policy``, from the counter-based generator.

    Parameters
    ----------
    mdp : FiniteHorizonMDP
    policy : integer array, shape (n_reps, H, S)
    keys : uint64 array, shape (n_reps,)
        Episode keys; draw ``h`` of key ``keys[r]`` picks the state after stage ``h``.
    initial_state : int

    Returns
    -------
    states : ndarray (n_reps, H + 1) of int
    actions : ndarray (n_reps, H) of int
    rewards : ndarray (n_reps, H)

    Notes
    -----
    The next state is the inverse CDF of :math:`P_h(\cdot | s_h, a_h)` at the
    uniform :math:`u_{r,h}`: the number of cumulative probabilities strictly
    below :math:`u` (capped at :math:`S - 1` against rounding).
    """
    p, rew = np.asarray(mdp.transitions), np.asarray(mdp.rewards)
    n_reps = keys.shape[0]
    h_, s_ = mdp.horizon, mdp.n_states
    rows = np.arange(n_reps)
    states = np.empty((n_reps, h_ + 1), dtype=np.int64)
    actions = np.empty((n_reps, h_), dtype=np.int64)
    rewards = np.empty((n_reps, h_))
    states[:, 0] = initial_state
    cdf = np.cumsum(p, axis=-1)  # (H, S, A, S)
    for h in range(h_):
        s = states[:, h]
        a = policy[rows, h, s]
        actions[:, h] = a
        rewards[:, h] = rew[h, s, a]
        u = uniform(keys, np.full(n_reps, h, dtype=np.uint64))
        nxt = (cdf[h, s, a] < u[:, None]).sum(axis=1)
        states[:, h + 1] = np.minimum(nxt, s_ - 1)
    return states, actions, rewards


def _default_checkpoints(n_episodes: int) -> np.ndarray:
    n = max(2, min(25, n_episodes))
    grid = np.unique(np.round(np.exp(np.linspace(0.0, math.log(n_episodes), n))).astype(np.int64))
    return grid


def _check_checkpoints(checkpoints, n_episodes: int, *, default: str = "grid") -> np.ndarray:
    """Checkpoints as strictly increasing ``int64`` episode counts in ``[1, n_episodes]``.

    ``None`` gives the log-spaced grid of :func:`run_episodes` (``default="grid"``) or ``[n_episodes]``
    (``default="last"``).  Shared by the episodic drivers.
    """
    if checkpoints is None:
        return _default_checkpoints(n_episodes) if default == "grid" else np.array([n_episodes], dtype=np.int64)
    ck = np.asarray(checkpoints)
    if (ck.ndim != 1 or ck.size == 0 or not np.issubdtype(ck.dtype, np.integer) or ck.min() < 1
            or ck.max() > n_episodes or np.any(np.diff(ck) <= 0)):
        raise ValueError(f"checkpoints must be strictly increasing integers in [1, {n_episodes}]")
    return ck.astype(np.int64)


def run_episodes(learner: EpisodicLearner, mdp: FiniteHorizonMDP, n_episodes: int, n_reps: int, seed=0, *,
                 checkpoints=None, initial_state: int = 0, rep_offset: int = 0) -> EpisodeResult:
    r"""Play ``n_episodes`` episodes of ``mdp`` with ``learner`` in ``n_reps`` replications at once.

    Parameters
    ----------
    learner : EpisodicLearner
    mdp : FiniteHorizonMDP
        A single MDP (no batch axes); its rewards are the learner's known
        mean rewards and also the realised ones (deterministic rewards).
    n_episodes : int
        Number of episodes ``K``.
    n_reps : int
        Replications, advanced together.
    seed : int, SeedSequence or None
        Replication ``r`` depends on ``(seed, r)`` only.
    checkpoints : sequence of int, optional
        Episode counts at which the regret is recorded (sorted, in
        ``[1, n_episodes]``); up to 25 log-spaced counts by default (fewer where they
        round to the same integer), always ending at ``n_episodes``.
    initial_state : int
        Start state :math:`s_1` of every episode.
    rep_offset : int
        Index of the first replication: the run holds replications
        ``rep_offset, ..., rep_offset + n_reps - 1``, each the same as in any
        other batch (for deterministic learners; a randomised learner draws
        from the ``seed`` it is given).

    Returns
    -------
    EpisodeResult

    Notes
    -----
    In episode :math:`k` the learner's policy :math:`\pi_k` is fixed before
    the episode; the driver adds :math:`V^\star_1(s_1) - V^{\pi_k}_1(s_1)`
    (exact, :func:`evaluate_markov_policy`) to the expected regret and
    :math:`V^\star_1(s_1) - \sum_h r_h(s_h, a_h)` to the realised regret.
    The transitions of episode :math:`k` of replication :math:`r` use the
    uniforms of ``round_key(rep_key(seed, r), k)``.

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.mdp import ucbvi
    >>> p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> m = FiniteHorizonMDP.stationary(p, np.array([[0.0, 0.0], [1.0, 1.0]]), 3)
    >>> res = run_episodes(ucbvi(), m, n_episodes=50, n_reps=4, seed=0)
    >>> res.regret.shape, bool((res.regret >= 0).all())
    ((19, 4), True)
    """
    if not all(callable(getattr(learner, f, None)) for f in ("init", "plan", "update")):
        raise TypeError(f"learner must be an EpisodicLearner (init, plan, update), got {type(learner).__name__}")
    mdp = _check_single(mdp)
    n_episodes = check_int(n_episodes, "n_episodes")
    n_reps = check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    s0 = check_int(initial_state, "initial_state", minimum=0, maximum=mdp.n_states - 1)
    ck = _check_checkpoints(checkpoints, n_episodes)
    seed64 = seed_to_uint64(seed)
    h_, s_ = mdp.horizon, mdp.n_states
    spec = EpisodeSpec(s_, mdp.n_actions, h_, np.asarray(mdp.rewards), s0, n_episodes)
    v_star = float(np.asarray(backward_induction(mdp).values)[0, s0])
    rkeys = rep_key(np.full(n_reps, seed64), np.arange(rep_offset, rep_offset + n_reps, dtype=np.uint64))
    state = learner.init(spec, n_reps, seed64)
    regret = np.zeros(n_reps)
    realised = np.zeros(n_reps)
    out_exp = np.empty((ck.size, n_reps))
    out_real = np.empty((ck.size, n_reps))
    j = 0
    t0 = time.perf_counter()
    for k in range(n_episodes):
        policy = np.asarray(learner.plan(state))
        if policy.shape != (n_reps, h_, s_):
            raise ValueError(f"learner {learner.name!r} returned a policy of shape {policy.shape}, expected "
                             f"{(n_reps, h_, s_)}")
        regret += v_star - evaluate_markov_policy(mdp, policy)[:, 0, s0]
        keys = round_key(rkeys, np.full(n_reps, k, dtype=np.uint64))
        states, actions, rewards = sample_episodes(mdp, policy, keys, s0)
        realised += v_star - rewards.sum(axis=1)
        state = learner.update(state, states, actions, rewards)
        if k + 1 == ck[j]:
            out_exp[j], out_real[j] = regret, realised
            j += 1
            if j == ck.size:  # nothing is recorded after the last checkpoint
                break
    wall = time.perf_counter() - t0
    return EpisodeResult(learner.name, ck, out_exp, out_real, v_star, n_episodes, n_reps, h_, int(seed64), wall,
                         rep_offset)
