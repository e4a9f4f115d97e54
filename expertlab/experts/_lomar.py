r"""LOMAR: learning-augmented online bipartite matching that stays close to an expert.

Edge-weighted online bipartite matching: ``n_offline`` nodes wait, online
nodes arrive one per round with edge weights :math:`w_t \in [0, w_{\max}]^{n_{\rm off}}`
(zero: no edge) and are matched irrevocably to a free offline node, or
skipped.  A *proposer* (any policy, typically a learned one) suggests an
action each round; LOMAR follows it only while a reservation inequality
keeps its reward provably within :math:`\rho` of an *expert* algorithm's.

The arrival sequence is the environment (:func:`random_bipartite`,
:func:`fixed_bipartite`; feedback kind ``"matching"``, one arrival per
round).  It also runs the expert alone on the same arrivals, as the
benchmark of the robustness guarantee, and tells the learner the expert's
move each round.  The learners are :func:`lomar` and the proposer run alone
(:func:`matching_proposer`); both run through :func:`expertlab.sim.run`.
Everything is array code over replications; random weights are a pure
function of the environment's round key, and random proposers draw from the
learner's round key (the package's counter-based generator).

Protocol of the ``"matching"`` feedback
---------------------------------------
``observe`` gives an :class:`Arrival`; ``act`` returns a :class:`Match`
(the node taken, ``-1`` to skip; it must be free and have an edge);
``update`` receives a :class:`MatchFeedback` (the learner's and the
expert's gains).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from .._backend import get_namespace
from .._random import round_key, stream_key, uniform
from .._validation import as_real_array, check_array_size, check_float, check_in, check_int
from ..sim._protocol import EnvSpec, Environment, Learner, Metric
from ._common import check_record

__all__ = ["BipartiteArrivals", "Arrival", "Match", "MatchFeedback", "LOMARState", "lomar", "matching_proposer",
           "random_bipartite", "fixed_bipartite", "PROPOSERS", "MATCHING_EXPERTS"]

_EDGE_STREAM = np.uint64(0x3C6EF372FE94F82B)


def _ns(a):
    """The array namespace of the array ``a``: NumPy itself for NumPy arrays."""
    return np if isinstance(a, np.ndarray) else get_namespace(a)


def _one_hot(node, n):
    """``(n_reps, n)`` mask of the node of each row (``-1``, no node, marks nothing)."""
    xp = _ns(node)
    return node[:, None] == xp.arange(n)[None, :]


# ---------------------------------------------------------------------------
# experts and proposers: batched policies (n_reps, n_offline) -> (n_reps,) node or -1


def _best_free(w, free, threshold=0.0):
    """Free node of largest weight above ``threshold`` (lowest index on ties), else -1."""
    xp = _ns(w)
    score = xp.where(free & (w > threshold), w, -xp.inf)
    u = xp.argmax(score, axis=1)
    return xp.where(xp.isfinite(score[xp.arange(w.shape[0]), u]), u, -1)


def _expert_greedy(w, free, threshold):
    return _best_free(w, free)


def _expert_threshold(w, free, threshold):
    return _best_free(w, free, threshold)


#: Expert algorithms: ``greedy`` (the free neighbour of largest weight) and
#: ``threshold`` (the same among weights at least ``threshold``).
MATCHING_EXPERTS = {"greedy": _expert_greedy, "threshold": _expert_threshold}


def _prop_random(t, w, free, ctx):
    """Uniform over the free neighbours and "skip"."""
    xp = _ns(w)
    ok = free & (w > 0)
    with np.errstate(over="ignore"):
        u = uniform(ctx["key"][:, None], xp.arange(w.shape[1] + 1, dtype=xp.uint64)[None, :])
    score = xp.where(xp.concat([ok, xp.ones((w.shape[0], 1), dtype=xp.bool)], axis=1), u, -1.0)
    c = xp.argmax(score, axis=1)
    return xp.where(c == w.shape[1], -1, c)


def _prop_min_weight(t, w, free, ctx):
    """The free neighbour of smallest weight (an adversarial proposer)."""
    xp = _ns(w)
    score = xp.where(free & (w > 0), -w, -xp.inf)
    u = xp.argmax(score, axis=1)
    return xp.where(xp.isfinite(score[xp.arange(w.shape[0]), u]), u, -1)


def _prop_spoiler(t, w, free, ctx):
    """The free neighbour the expert will take soonest in the future (an adversary that knows the expert)."""
    nxt = ctx["expert_next_use"]
    xp = _ns(w)
    score = xp.where(free & (w > 0) & (nxt > t), -xp.astype(nxt, xp.float64), -xp.inf)
    u = xp.argmax(score, axis=1)
    return xp.where(xp.isfinite(score[xp.arange(w.shape[0]), u]), u, -1)


def _prop_noisy_greedy(t, w, free, ctx):
    """Greedy on weights perturbed by uniform noise of width ``noise`` (a stand-in for a learned policy)."""
    xp = _ns(w)
    with np.errstate(over="ignore"):
        z = uniform(ctx["key"][:, None], xp.arange(w.shape[1], dtype=xp.uint64)[None, :]) - 0.5
    return _best_free(xp.where(w > 0, w + ctx["noise"] * z, 0.0), free & (w > 0), -xp.inf)


#: Built-in proposers, by name.  A proposer is a callable
#: ``proposer(t, w, free, ctx) -> (n_reps,) int`` (``-1``: skip) given the
#: round, its weights ``(n_reps, n_offline)``, the free mask of the
#: matching it proposes for, and a context with the learner's uint64 round
#: ``key`` per replication, ``expert_next_use`` (the round at which the
#: environment's expert takes each node, ``n_online`` if never: future
#: knowledge, for adversarial proposers) and ``noise``.
PROPOSERS = {"random": _prop_random, "min_weight": _prop_min_weight, "spoiler": _prop_spoiler,
             "noisy_greedy": _prop_noisy_greedy}


# ---------------------------------------------------------------------------
# the environment


class Arrival(NamedTuple):
    """What a ``"matching"`` learner sees when an online node arrives.

    Attributes
    ----------
    weights : ndarray, shape (n_reps, n_offline)
        The arrival's edge weights (0: no edge).
    free : ndarray of bool, shape (n_reps, n_offline)
        The offline nodes the learner has not matched yet.
    expert_node : ndarray of int, shape (n_reps,)
        The node the expert (run alone) takes in this round, ``-1`` if none.
    expert_used : ndarray of bool, shape (n_reps, n_offline)
        The nodes the expert took in earlier rounds.
    expert_next_use : ndarray of int, shape (n_reps, n_offline)
        The round at which the expert takes each node (``n_online`` if
        never): future knowledge, read only by adversarial proposers.
    """

    weights: Any
    free: Any
    expert_node: Any
    expert_used: Any
    expert_next_use: Any


class Match(NamedTuple):
    """A ``"matching"`` learner's action.

    Attributes
    ----------
    node : ndarray of int, shape (n_reps,)
        The offline node matched to the arrival, ``-1`` to skip.
    followed : ndarray of bool, shape (n_reps,), optional
        Whether LOMAR followed its proposer (the ``followed`` metric).
    slack : ndarray, shape (n_reps,), optional
        LOMAR's running minimum of its robustness invariant (the ``min_slack`` metric).
    """

    node: Any
    followed: Any = None
    slack: Any = None


class MatchFeedback(NamedTuple):
    """After a round: the learner's gain and the expert's move and gain, each ``(n_reps,)``."""

    gain: Any
    expert_node: Any
    expert_gain: Any


class _MatchingState(NamedTuple):
    free: Any        # the learner's free nodes
    expert_free: Any
    next_use: Any


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class BipartiteArrivals(Environment):
    r"""Offline nodes, a sequence of arrivals and an expert run alone on them.

    Build it with :func:`random_bipartite` or :func:`fixed_bipartite`, or directly
    with a weights function of your own (the sizes, ``w_max``, ``expert`` and
    ``threshold`` are checked as those factories check them).
    ``weights(keys, t) -> (n_reps, n_offline)`` gives round ``t``'s weights
    of every replication from the round's environment keys; ``w_max`` bounds
    every weight.  ``expert`` (with ``threshold``) is the expert algorithm of
    :data:`MATCHING_EXPERTS` whose reward the robustness guarantee compares
    with: at ``reset`` the environment runs it alone over all arrivals (to
    know when it takes each node), and each round it reports the expert's
    move in the :class:`Arrival`.  The horizon is at most ``n_online``.

    Notes
    -----
    Metrics, by name (``available_metrics()``; a run that names none records
    ``default_metrics``):

    ``reward``
        The learner's matched weight so far.
    ``expert_reward``
        The expert's (run alone) matched weight so far.
    ``followed`` (on request; learners that report it, such as :func:`lomar`)
        Rounds in which the learner followed its proposer.
    ``min_slack`` (on request; :func:`lomar`)
        :math:`\min_t [R_t - \rho (R^E_t + D_t w_{\max}) + B]` so far, the
        margin of LOMAR's robustness invariant (never negative).
    """

    name: str
    n_offline: int
    n_online: int
    w_max: float
    weights: Callable
    expert: str
    threshold: float
    params: Mapping[str, Any]

    default_metrics = ("reward", "expert_reward")

    def __post_init__(self):
        check_record(self.name, self.params)
        n_off = check_int(self.n_offline, "n_offline")
        n_on = check_int(self.n_online, "n_online")
        check_array_size((n_off,), "n_offline")
        if not callable(self.weights):
            raise TypeError(f"weights must be a callable weights(keys, t) -> (n_reps, n_offline), got "
                            f"{type(self.weights).__name__}")
        expert, threshold = _check_expert(self.expert, self.threshold)
        for field, value in (("n_offline", n_off), ("n_online", n_on),
                             ("w_max", check_float(self.w_max, "w_max", positive=True)),
                             ("expert", expert), ("threshold", threshold)):
            object.__setattr__(self, field, value)

    @property
    def spec(self) -> EnvSpec:
        return EnvSpec(feedback="matching", unit="round", n_actions=self.n_offline, max_horizon=self.n_online,
                       info={"n_offline": self.n_offline, "n_online": self.n_online, "w_max": self.w_max,
                             "expert": self.expert, "threshold": self.threshold})

    def _weights(self, keys, t):
        xp = _ns(keys)
        with np.errstate(over="ignore"):
            w = xp.asarray(self.weights(keys, t))
        w = xp.astype(w, xp.float64)
        n_reps = keys.shape[0]
        if w.shape != (n_reps, self.n_offline):
            raise ValueError(f"round {t}: weights of shape {w.shape}, expected {(n_reps, self.n_offline)}")
        if not bool(xp.all(xp.isfinite(w))) or bool(xp.any(w < 0)) or bool(xp.any(w > self.w_max)):
            raise ValueError(f"round {t}: weights must lie in [0, w_max={self.w_max}]")
        return w

    def _expert_move(self, w, free):
        return MATCHING_EXPERTS[self.expert](w, free, self.threshold)

    def reset(self, n_reps, keys, xp):
        """Fresh matchings; the expert is run alone over every arrival to know when it takes each node."""
        free = xp.ones((n_reps, self.n_offline), dtype=xp.bool)
        next_use = xp.full((n_reps, self.n_offline), self.n_online, dtype=xp.int64)
        for t in range(self.n_online):
            with np.errstate(over="ignore"):
                kt = round_key(keys, np.uint64(t))  # the engine's round keys (expertlab.sim.run)
            taken = _one_hot(self._expert_move(self._weights(kt, t), free), self.n_offline)
            free = free & ~taken
            next_use = xp.where(taken, t, next_use)
        if isinstance(next_use, np.ndarray):
            next_use.flags.writeable = False
        return _MatchingState(xp.ones((n_reps, self.n_offline), dtype=xp.bool),
                              xp.ones((n_reps, self.n_offline), dtype=xp.bool), next_use)

    def observe(self, state, t, keys):
        """What the learner sees before acting in step ``t``: the arriving node as an :class:`Arrival`."""
        w = self._weights(keys, t)
        return Arrival(w, state.free, self._expert_move(w, state.expert_free), ~state.expert_free, state.next_use)

    def step(self, state, action, t, keys):
        """Step ``t``: apply the learner's :class:`Match`; the feedback is a :class:`MatchFeedback`."""
        if not isinstance(action, Match):
            raise TypeError(f"a matching learner must return a Match(node, ...), got {type(action).__name__}")
        w = self._weights(keys, t)
        n_reps = keys.shape[0]
        xp = _ns(w)
        rows = xp.arange(n_reps)
        u = xp.asarray(action.node)
        if u.shape != (n_reps,) or not xp.isdtype(u.dtype, "integral"):
            raise ValueError(f"Match.node must be an int array of shape ({n_reps},), got {u.dtype} {u.shape}")
        uc = xp.clip(u, 0, self.n_offline - 1)
        bad = (u >= self.n_offline) | ((u >= 0) & ~(state.free[rows, uc] & (w[rows, uc] > 0))) | (u < -1)
        if bool(xp.any(bad)):
            r = int(xp.argmax(xp.astype(bad, xp.int8)))  # the first bad replication
            raise ValueError(f"round {t}: replication {r} matched node {int(u[r])}, which is not a free neighbour "
                             f"of the arrival (use -1 to skip)")
        e = self._expert_move(w, state.expert_free)
        take, he = u >= 0, e >= 0
        gain = xp.where(take, w[rows, uc], 0.0)
        expert_gain = xp.where(he, w[rows, xp.maximum(e, 0)], 0.0)
        free = state.free & ~_one_hot(u, self.n_offline)
        expert_free = state.expert_free & ~_one_hot(e, self.n_offline)
        info = {"gain": gain, "expert_gain": expert_gain, "match": action}
        return state._replace(free=free, expert_free=expert_free), MatchFeedback(gain, e, expert_gain), info

    def available_metrics(self) -> Mapping[str, Metric]:
        """The metrics this environment can record, by name."""
        return {"reward": _sum_metric("reward", "gain"), "expert_reward": _sum_metric("expert_reward", "expert_gain"),
                "followed": _followed_metric(), "min_slack": _slack_metric()}


def _sum_metric(name, key) -> Metric:
    def init(n_reps, xp):
        return xp.zeros(n_reps)

    def update(acc, info, t):
        return acc + info[key]

    return Metric(name, init, update, lambda acc: acc)


def _reported(info, field, metric):
    v = getattr(info["match"], field)
    if v is None:
        raise ValueError(f"metric {metric!r} needs a learner that reports Match.{field}, such as "
                         f"expertlab.experts.lomar()")
    xp = _ns(info["gain"])
    v = xp.asarray(v)
    return xp.astype(v, xp.float64) if v.dtype == xp.bool else v


def _followed_metric() -> Metric:
    def init(n_reps, xp):
        return xp.zeros(n_reps)

    def update(acc, info, t):
        return acc + _reported(info, "followed", "followed")

    return Metric("followed", init, update, lambda acc: acc)


def _slack_metric() -> Metric:
    def init(n_reps, xp):
        return xp.full(n_reps, xp.nan)

    def update(acc, info, t):
        return _reported(info, "slack", "min_slack") + 0.0

    return Metric("min_slack", init, update, lambda acc: acc)


def random_bipartite(n_offline: int, n_online: int, edge_prob: float = 0.5, w_max: float = 1.0, *,
                     expert: str = "greedy", threshold: float = 0.5) -> BipartiteArrivals:
    r"""Random bipartite graph: each (arrival, offline node) edge is present with probability
    ``edge_prob`` and has a weight uniform on :math:`(0, w_{\max})`.

    Parameters
    ----------
    n_offline, n_online : int
        Offline nodes, and arrivals (the longest horizon).
    edge_prob : float in (0, 1]
    w_max : float > 0
    expert : {"greedy", "threshold"}
        The expert algorithm (:data:`MATCHING_EXPERTS`) run alone as the benchmark.
    threshold : float >= 0
        Weight threshold of the ``threshold`` expert.

    Returns
    -------
    BipartiteArrivals
        An environment with feedback kind ``"matching"``.

    Examples
    --------
    >>> env = random_bipartite(4, 6, edge_prob=0.5)
    >>> w = env.observe(env.reset(3, np.arange(3, dtype=np.uint64), np), 0, np.arange(3, dtype=np.uint64)).weights
    >>> w.shape, bool(((w >= 0) & (w < 1)).all()), env.spec.max_horizon
    ((3, 4), True, 6)
    """
    n_offline = check_int(n_offline, "n_offline")
    check_array_size((n_offline,), "n_offline")
    n_online = check_int(n_online, "n_online")
    edge_prob = check_float(edge_prob, "edge_prob", minimum=0.0, maximum=1.0)
    if edge_prob == 0.0:
        raise ValueError("edge_prob must be > 0: a graph without edges has no feasible match")
    w_max = check_float(w_max, "w_max", positive=True)
    expert, threshold = _check_expert(expert, threshold)

    def weights(keys, t):
        xp = _ns(keys)
        idx = xp.arange(n_offline, dtype=xp.uint64)[None, :]
        k = stream_key(keys, _EDGE_STREAM)[:, None]
        edge = uniform(k, idx) < edge_prob
        w = w_max * uniform(k, idx + n_offline)
        return xp.where(edge, w, 0.0)

    return BipartiteArrivals("random_bipartite", n_offline, n_online, w_max, weights, expert, threshold,
                             dict(n_offline=n_offline, n_online=n_online, edge_prob=edge_prob, w_max=w_max,
                                  expert=expert, threshold=threshold))


def fixed_bipartite(weights, w_max: float | None = None, *, expert: str = "greedy",
                    threshold: float = 0.5) -> BipartiteArrivals:
    """A fixed weight matrix of shape ``(n_online, n_offline)``, the same in every replication.

    Parameters
    ----------
    weights : array_like, shape (n_online, n_offline)
        Non-negative; 0 means no edge.
    w_max : float, optional
        The bound on the weights (default their maximum).
    expert, threshold
        As in :func:`random_bipartite`.

    Returns
    -------
    BipartiteArrivals

    Examples
    --------
    >>> fixed_bipartite([[1.0, 0.0], [0.5, 0.5]]).n_online
    2
    """
    W = np.array(as_real_array(weights, "weights", xp=np), dtype=np.float64)
    if W.ndim != 2 or W.shape[0] < 1 or W.shape[1] < 1:
        raise ValueError(f"weights must have shape (n_online, n_offline), got {W.shape}")
    if not np.all(np.isfinite(W)) or np.any(W < 0):
        raise ValueError("weights must be finite and non-negative (0 means no edge)")
    if not np.any(W > 0):
        raise ValueError("weights has no edge: the graph has no feasible match")
    w_max = float(W.max()) if w_max is None else check_float(w_max, "w_max", positive=True)
    if W.max() > w_max:
        raise ValueError(f"w_max={w_max} is below the largest weight {W.max()}")
    expert, threshold = _check_expert(expert, threshold)
    W.flags.writeable = False

    def weights_fn(keys, t):
        xp = _ns(keys)
        return xp.broadcast_to(xp.asarray(W[t]), (keys.shape[0], W.shape[1]))

    return BipartiteArrivals("fixed_bipartite", W.shape[1], W.shape[0], w_max, weights_fn, expert, threshold,
                             dict(n_offline=W.shape[1], n_online=W.shape[0], w_max=w_max, expert=expert,
                                  threshold=threshold))


def _check_expert(expert, threshold):
    check_in(expert, "expert", tuple(MATCHING_EXPERTS))
    return expert, check_float(threshold, "threshold", minimum=0.0)


# ---------------------------------------------------------------------------
# learners


def _check_proposer(proposer):
    if isinstance(proposer, str):
        check_in(proposer, "proposer", tuple(PROPOSERS))
        return PROPOSERS[proposer], proposer
    if callable(proposer):
        return proposer, getattr(proposer, "__name__", "custom")
    raise TypeError(f"proposer must be a name in {sorted(PROPOSERS)} or a callable, got {type(proposer).__name__}")


def _proposal(u, w, free):
    """A proposer's output as a valid action: a free neighbour, else -1 (skip)."""
    n_reps, n_off = w.shape
    xp = _ns(w)
    u = xp.asarray(u)
    if u.shape != (n_reps,) or not xp.isdtype(u.dtype, "integral"):
        raise ValueError(f"a proposer must return an int array of shape ({n_reps},), got {u.dtype} {u.shape}")
    ok = (u >= 0) & (u < n_off)
    uc = xp.clip(u, 0, n_off - 1)
    rows = xp.arange(n_reps)
    ok = ok & free[rows, uc] & (w[rows, uc] > 0)
    return xp.where(ok, u, -1)


def _check_spec(spec, who):
    if spec.feedback != "matching":
        raise ValueError(f"{who} runs on matching environments, got feedback {spec.feedback!r}")


class LOMARState(NamedTuple):
    """State of :func:`lomar` (leading axis: replications).

    Attributes
    ----------
    t : ndarray of int, shape (n_reps,)
        Rounds seen.
    reward, expert_reward : ndarray, shape (n_reps,)
        :math:`R_t` and :math:`R^E_t`.
    slack : ndarray, shape (n_reps,)
        The running minimum of :math:`R_t - \\rho (R^E_t + D_t w_{\\max}) + B` (starts at :math:`B`).
    w_max : float
        The environment's weight bound.
    """

    t: Any
    reward: Any
    expert_reward: Any
    slack: Any
    w_max: float


def lomar(rho: float = 0.5, *, budget: float = 0.0, proposer="noisy_greedy", noise: float = 0.5) -> Learner:
    r"""LOMAR's switching rule between a proposer and the environment's expert.

    Parameters
    ----------
    rho : float in [0, 1]
        Robustness level: LOMAR's reward is at least ``rho`` times the expert's, minus ``budget``.
    budget : float >= 0
        The slack :math:`B`.
    proposer : str or callable
        A name in :data:`PROPOSERS` or a batched policy with that signature.
    noise : float
        Perturbation width of the ``noisy_greedy`` proposer.

    Returns
    -------
    Learner
        A ``"matching"`` learner.  The expert is the environment's
        (``expert=`` of :func:`random_bipartite` / :func:`fixed_bipartite`),
        whose move each round the environment reports.  The proposer's draws
        come from the learner's round keys.  Its :class:`Match` reports
        ``followed`` and ``slack`` (the ``followed`` and ``min_slack``
        metrics).

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

    [validated-rates]

    References
    ----------
    .. [1] P. Li, J. Yang, S. Ren, "Learning for Edge-Weighted Online
       Bipartite Matching with Robustness Guarantees", ICML 2023 (LOMAR; the
       switching rule and its robustness theorem, theorem number not
       re-checked).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import lomar, random_bipartite
    >>> env = random_bipartite(8, 12)
    >>> res = sim.run(lomar(0.8, proposer="min_weight"), env, horizon=12, n_reps=50, seed=0,
    ...               metrics=["reward", "expert_reward", "min_slack"])
    >>> R, RE = res.metrics["reward"][-1], res.metrics["expert_reward"][-1]
    >>> bool((R >= 0.8 * RE - 1e-12).all()), bool((res.metrics["min_slack"] >= -1e-12).all())
    (True, True)
    """
    rho = check_float(rho, "rho", minimum=0.0, maximum=1.0)
    budget = check_float(budget, "budget", minimum=0.0)
    propose, pname = _check_proposer(proposer)
    noise = check_float(noise, "noise", minimum=0.0)
    params = {"rho": rho, "budget": budget, "proposer": pname, "noise": noise}

    def init(spec, n_reps, keys=None, xp=np):
        n_reps = check_int(n_reps, "n_reps")
        _check_spec(spec, "lomar")
        return LOMARState(xp.zeros(n_reps, dtype=xp.int64), xp.zeros(n_reps), xp.zeros(n_reps),
                          xp.full(n_reps, budget, dtype=xp.float64), float(spec.w_max))

    def act(state, obs, keys):
        w, free, e, used_before = obs.weights, obs.free, obs.expert_node, obs.expert_used
        xp = _ns(w)
        n_reps, n_off = w.shape
        rows = xp.arange(n_reps)
        t = int(state.t[0]) if n_reps else 0
        he = e >= 0
        ec = xp.maximum(e, 0)
        RE = state.expert_reward + xp.where(he, w[rows, ec], 0.0)
        used_e = used_before | _one_hot(e, n_off)
        ctx = {"key": keys, "expert_next_use": obs.expert_next_use, "noise": noise}
        u = _proposal(propose(t, w, free, ctx), w, free)
        hu = u >= 0
        uc = xp.maximum(u, 0)
        gain = xp.where(hu, w[rows, uc], 0.0)
        D = xp.sum(xp.astype(~free & ~used_e, xp.int64), axis=1)
        D_u = D + xp.astype(hu & ~used_e[rows, uc], xp.int64)
        follow = state.reward + gain >= rho * (RE + xp.astype(D_u, xp.float64) * state.w_max) - budget
        fallback = ~follow & he & free[rows, ec]
        take = xp.where(follow, u, xp.where(fallback, e, -1))
        ht = take >= 0
        R = state.reward + xp.where(ht, w[rows, xp.maximum(take, 0)], 0.0)
        free_after = free & ~_one_hot(take, n_off)
        D = xp.sum(xp.astype(~free_after & ~used_e, xp.int64), axis=1)
        slack = xp.minimum(state.slack, R - rho * (RE + xp.astype(D, xp.float64) * state.w_max) + budget)
        return Match(take, follow, slack), state

    def update(state, match, feedback, keys=None):
        return state._replace(t=state.t + 1, reward=state.reward + feedback.gain,
                              expert_reward=state.expert_reward + feedback.expert_gain, slack=match.slack)

    return Learner(name="lomar", feedback="matching", init=init, act=act, update=update, params=params,
                   doc=lomar.__doc__, check_spec=lambda spec: _check_spec(spec, "lomar"))


def matching_proposer(proposer="noisy_greedy", *, noise: float = 0.5) -> Learner:
    r"""A proposer of :func:`lomar` run alone on its own matching (the baseline without the expert).

    Parameters
    ----------
    proposer : str or callable
        A name in :data:`PROPOSERS` or a batched policy with that signature.
    noise : float
        Perturbation width of the ``noisy_greedy`` proposer.

    Returns
    -------
    Learner
        A ``"matching"`` learner that takes the proposal whenever it is a
        free neighbour, else skips.  With the same seed it draws the same
        proposer randomness as :func:`lomar`.

    References
    ----------
    .. [1] P. Li, J. Yang, S. Ren, "Learning for Edge-Weighted Online
       Bipartite Matching with Robustness Guarantees", ICML 2023 (the
       learned policy LOMAR is built around).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import matching_proposer, fixed_bipartite
    >>> res = sim.run(matching_proposer("min_weight"), fixed_bipartite([[1.0, 0.9], [1.0, 0.0]]), horizon=2, n_reps=1)
    >>> float(res.metrics["reward"][-1, 0])
    1.9
    """
    propose, pname = _check_proposer(proposer)
    noise = check_float(noise, "noise", minimum=0.0)
    params = {"proposer": pname, "noise": noise}

    def init(spec, n_reps, keys=None, xp=np):
        _check_spec(spec, "matching_proposer")
        return xp.zeros(check_int(n_reps, "n_reps"), dtype=xp.int64)

    def act(t, obs, keys):
        ctx = {"key": keys, "expert_next_use": obs.expert_next_use, "noise": noise}
        tt = int(t[0]) if t.size else 0
        return Match(_proposal(propose(tt, obs.weights, obs.free, ctx), obs.weights, obs.free)), t

    def update(t, match, feedback, keys=None):
        return t + 1

    return Learner(name="matching_proposer", feedback="matching", init=init, act=act, update=update, params=params,
                   doc=matching_proposer.__doc__, check_spec=lambda spec: _check_spec(spec, "matching_proposer"))
