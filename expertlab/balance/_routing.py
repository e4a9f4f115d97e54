r"""Routing environments of online load balancing (feedback kind ``"routing"``, unit ``"batch"``).

One step of :func:`expertlab.sim.run` on a routing environment is one batch
of ``n_tokens`` tokens, for all replications at once:

1. the learner acts with its bias vector :math:`b_t` (fixed before the
   batch is seen);
2. the environment takes the batch of router scores :math:`s_t` (a fresh
   batch drawn from the round's environment keys for :func:`routing`, the
   same batch every step for :func:`routing_fixed`), routes every token to
   the top ``k`` experts of :math:`s_t + b_t` and returns the loads
   :math:`L_{t,i}` as a :class:`RoutingFeedback`;
3. the learner updates its bias from the loads.

Tie-breaking: among experts with equal biased score the lowest expert index
wins, i.e. experts are ranked by the pair ``(s_i + b_i, -i)`` in
lexicographic order (as :func:`~expertlab.balance.top_k_route`), on every
backend.

The protocol of ``"routing"`` learners and the metrics of both environments
are listed in the docstring of :class:`Routing`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, NamedTuple

import numpy as np

from .._backend import get_namespace
from .._validation import check_int
from ..sim import EnvSpec, Environment, Metric
from ._batch import AssignmentBatch
from ._problem import AssignmentProblem, top_k_route
from .generators import GENERATORS, ScoreGenerator

__all__ = ["FixedRouting", "Routing", "RoutingFeedback", "TokenMoves", "routing", "routing_fixed", "token_moves"]


class RoutingFeedback(NamedTuple):
    """What a routing learner is told after a batch.

    Attributes
    ----------
    loads : array of int64, shape (n_reps, n_experts)
        Tokens routed to each expert in the batch.
    """

    loads: Any


def route_mask(v, k: int, xp):
    """Top-``k`` membership of each row of ``v`` (last axis), ties to the lowest index (array code)."""
    e = v.shape[-1]
    if hasattr(xp, "partition"):
        tau = xp.partition(v, e - k, axis=-1)[..., e - k:e - k + 1]
    else:  # pragma: no cover - namespaces without partition
        tau = xp.sort(v, axis=-1)[..., e - k:e - k + 1]
    above = v > tau
    tied = v == tau
    room = k - xp.astype(xp.count_nonzero(above, axis=-1, keepdims=True), xp.int64)
    take = tied & (xp.cumulative_sum(xp.astype(tied, xp.int64), axis=-1) <= room)
    return above | take


def _dual(v, mask, bias, cap, xp):
    """``sum of the routed biased scores - C . b`` per replication."""
    return xp.sum(xp.where(mask, v, 0.0), axis=(1, 2)) - xp.sum(bias * cap, axis=1)


class _RoutingBase(Environment):
    """What both routing environments share: the step, the metrics and the spec."""

    default_metrics_base = ("maxvio", "global_maxvio", "dual")

    @property
    def n_experts(self) -> int:
        raise NotImplementedError  # pragma: no cover

    @property
    def mean_load(self) -> float:
        """:math:`\\bar C = N K / E`, the mean load."""
        return self.n_tokens * self.k / self.n_experts

    @property
    def default_metrics(self):
        """Metrics recorded when none are asked for: ``maxvio``, ``global_maxvio``, ``dual`` (and, with a
        comparator, ``regret`` and ``bias_error``)."""
        return self.default_metrics_base + (("regret", "bias_error") if self.has_comparator else ())

    def _spec(self, capacity) -> EnvSpec:
        return EnvSpec(feedback="routing", unit="batch", n_actions=self.n_experts,
                       info={"n_tokens": self.n_tokens, "k": self.k, "capacity": capacity,
                             "mean_load": self.mean_load, "step_work": self.n_tokens * self.n_experts})

    def _check_bias(self, bias, n_reps, xp):
        if not hasattr(bias, "shape") or tuple(bias.shape) != (n_reps, self.n_experts):
            raise ValueError(f"a routing learner's action must be the bias, shape ({n_reps}, {self.n_experts}); "
                             f"got {getattr(bias, 'shape', type(bias).__name__)}")
        return xp.asarray(bias, dtype=xp.float64)

    def _route(self, scores, bias, cap, t):
        xp = get_namespace(scores)
        v = scores + bias[:, None, :]
        mask = route_mask(v, self.k, xp)
        loads = xp.astype(xp.count_nonzero(mask, axis=1), xp.int64)
        info = {"bias": bias, "loads": loads, "dual": _dual(v, mask, bias, cap, xp), "scores": scores,
                "mask": mask, "capacity": cap, "t": t}
        return RoutingFeedback(loads), info

    def comparator_dual(self, scores, t, cap):
        """:math:`g_t(-b^\\star_t)` of each replication's batch (the comparator's dual value)."""
        xp = get_namespace(scores)
        bstar = self.comparator(t, xp)
        w = scores + bstar[:, None, :]
        return _dual(w, route_mask(w, self.k, xp), bstar, cap, xp)

    def available_metrics(self) -> Mapping[str, Metric]:
        """The metrics by name (listed in :class:`Routing`)."""
        out = [_maxvio_metric(self.mean_load), _global_metric(self.mean_load), _dual_metric()]
        if self.has_comparator:
            out += [_regret_metric(self), _bias_error_metric(self)]
        return {m.name: _with_last_batch(m) for m in out}


# --------------------------------------------------------------------------
# online: a fresh batch each step


@dataclasses.dataclass(frozen=True, repr=False, eq=False)
class Routing(_RoutingBase):
    r"""Fresh batches of router scores from a score generator (see :func:`routing`).

    Attributes
    ----------
    generator : ScoreGenerator
    n_tokens, k : int

    Notes
    -----
    **Learner protocol for "routing" feedback.**
    ``init(spec, n_reps, keys, xp)`` with ``spec.n_actions`` experts and
    ``spec.info``: ``n_tokens``, ``k``, ``capacity`` (shape ``(n_experts,)``,
    or ``(n_reps, n_experts)`` for a batch of fixed problems with their own
    capacity rows) and ``mean_load`` (:math:`\bar C = NK/E`);
    ``act(state, None, keys) -> (bias, state)`` with ``bias`` of shape
    ``(n_reps, n_experts)``; ``update(state, bias, feedback, keys)`` with
    ``feedback.loads`` the int64 loads ``(n_reps, n_experts)``.

    **Metrics** (both routing environments).
    Every metric is one number per replication, read after the batch of each
    checkpoint; :math:`b_t` is the bias the batch was routed with.

    ``maxvio``
        Per-batch MaxVio :math:`(\max_i L_{t,i} - \bar C)/\bar C`.
    ``global_maxvio``
        MaxVio of the cumulative loads :math:`\sum_{\tau \le t} L_\tau` against
        :math:`(t + 1) \bar C`; ``final["cumulative_loads"]``.
    ``dual``
        The dual value :math:`g_t(-b_t) = \sum_n \operatorname{top}_K(s_{t,n} + b_t) - \sum_i C_i b_{t,i}`
        of the batch (summed from the routing, exact up to rounding).
    ``regret`` (with a comparator)
        :math:`\sum_{\tau \le t} g_\tau(-b_\tau) - g_\tau(-b^\star_\tau)` against
        the comparator bias :math:`b^\star`: for :func:`routing` the
        generator's closed-form optimum :math:`-m` (dynamic, :math:`-m(t)`, for
        a drifting generator); for :func:`routing_fixed` the ``comparator_bias``
        given (e.g. the LP prices :math:`-p^\star` of
        :func:`~expertlab.balance.solve_exact`).
    ``bias_error`` (with a comparator)
        :math:`\|(b_t - \bar b_t) - (b^\star_t - \bar b^\star_t)\|_\infty`, the
        distance of the centred bias to the centred comparator (the dual is
        shift invariant under balanced capacity).
    ``moves``, ``misdirected_moves`` (:func:`routing_fixed` only; not recorded by default)
        Cumulative counts over consecutive batches of the same tokens: ``moves``
        counts the experts a token leaves; ``misdirected_moves`` counts the pairs
        (expert :math:`i` left, expert :math:`j` joined) of a token with
        :math:`\operatorname{sign}(C_i - L_i) \ge \operatorname{sign}(C_j - L_j)`
        at the earlier batch's loads (zero under the sign rule: the preference
        rule of Han & Zhong).  :func:`token_moves` lists the moves themselves.

    Whatever metrics are recorded, ``final["loads"]`` holds the loads of
    the last batch (and :func:`~expertlab.balance.alf_lb` adds its bias after
    the last update, ``final["bias"]``).  The defaults are ``maxvio``,
    ``global_maxvio``, ``dual`` and, with a comparator, ``regret`` and
    ``bias_error``; these are the metrics of the compiled Numba/CUDA fast path
    of :func:`~expertlab.balance.alf_lb`.
    """

    generator: ScoreGenerator
    n_tokens: int
    k: int

    def __post_init__(self):
        if not isinstance(self.generator, ScoreGenerator):
            raise TypeError(f"generator must be a ScoreGenerator (expertlab.balance.generators), "
                            f"got {type(self.generator).__name__}")
        check_int(self.n_tokens, "n_tokens")
        check_int(self.k, "k", maximum=self.generator.n_experts)

    name = "routing"
    has_comparator = True

    @property
    def n_experts(self) -> int:
        """Number of experts :math:`E`."""
        return self.generator.n_experts

    @property
    def params(self) -> dict:
        """The constructor's settings as JSON data: ``routing(**params)`` rebuilds the environment."""
        return {"generator": self.generator.name, "generator_params": self.generator.settings,
                "n_tokens": self.n_tokens, "k": self.k}

    @property
    def capacity(self) -> np.ndarray:
        """The balanced capacity :math:`NK/E` of every expert, shape ``(n_experts,)``."""
        return np.full(self.n_experts, self.mean_load)

    @property
    def spec(self) -> EnvSpec:
        """Feedback ``"routing"``, unit ``"batch"``; ``info``: ``n_tokens``, ``k``, ``capacity``, ``mean_load``."""
        return self._spec(self.capacity)

    def reset(self, n_reps, keys, xp):
        """The environment state: the capacity row, shape ``(1, n_experts)``."""
        return xp.asarray(self.capacity)[None, :]

    def step(self, cap, bias, t, keys):
        """Draw batch ``t`` from the round ``keys``, route it on ``scores + bias`` and return the loads."""
        xp = get_namespace(keys)
        bias = self._check_bias(bias, keys.shape[0], xp)
        scores = self.generator.scores(keys, t, self.n_tokens)
        feedback, info = self._route(scores, bias, cap, t)
        return cap, feedback, info

    def comparator(self, t, xp=np):
        """The comparator bias of batch ``t``, shape ``(1, n_experts)``: the generator's optimum.

        ``ScoreGenerator.optimal_bias`` (centred :math:`-m`) for a
        stationary generator, :math:`-m(t)` for a drifting one.
        """
        g = self.generator
        b = g.optimal_bias(0) if g.stationary else -g.mean(t)
        return xp.asarray(b)[None, :]


def routing(generator, *, n_tokens, k, generator_params=None) -> Routing:
    r"""Online routing: a fresh batch of ``n_tokens`` router scores at every step.

    Parameters
    ----------
    generator : ScoreGenerator or str
        The law of a batch (:mod:`expertlab.balance.generators`), or the name
        of a generator factory (``"iid_gaussian"``, ``"iid_plus_offset"``,
        ``"drifting"``) called with ``generator_params``: the form a sweep
        config uses, e.g. ``routing(generator="iid_plus_offset",
        generator_params={"means": [1, 0, -1]}, n_tokens=256, k=1)``.
    n_tokens : int
        Tokens per batch :math:`N`.
    k : int
        Experts per token, ``1 <= k <= n_experts``.
    generator_params : mapping, optional
        Keyword arguments of the named generator (only with a name).

    Returns
    -------
    Routing
        A ``"routing"`` environment in unit ``"batch"`` with the balanced
        capacity :math:`C_i = NK/E` and the generator's closed-form optimum
        as comparator (its metrics are listed in :class:`Routing`).

    Notes
    -----
    The batch of step :math:`t` of replication ``r`` is
    ``ScoreGenerator.scores`` of the environment round key the engine
    derives from ``(seed, rep_offset + r, t)``: replication ``r`` sees the
    same batches alone, in a batch of replications and on every backend.
    With balanced capacity the expected dual of a batch is minimised at
    :math:`b^\star = -m(t)` (module notes of
    :mod:`expertlab.balance.generators`), which is the comparator of the
    ``regret`` and ``bias_error`` metrics.

    References
    ----------
    .. [1] X. Y. Han and Y. Zhong, "A theoretical framework for
       auxiliary-loss-free load balancing of sparse mixture-of-experts in
       large-scale AI models", arXiv:2512.03915, 2025: the online stochastic
       setting and the regret on the dual objective (section not re-checked).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.balance import alf_lb, generators, routing
    >>> env = routing(generators.iid_plus_offset([1.0, 0.0, -1.0]), n_tokens=300, k=1)
    >>> env.spec
    EnvSpec(feedback='routing', unit='batch', n_actions=3, horizon=None, info=[n_tokens, k, capacity, mean_load, step_work])
    >>> res = sim.run(alf_lb(step=0.05, rule="sign"), env, horizon=200, n_reps=4, seed=0, backend="numpy")
    >>> res.metrics["maxvio"].shape, sorted(res.final)
    ((24, 4), ['bias', 'cumulative_loads', 'loads'])
    >>> bool(res.metrics["bias_error"][-1].max() < 0.2)  # the bias approaches -m (centred)
    True
    """
    if isinstance(generator, str):
        if generator not in GENERATORS:
            raise ValueError(f"generator must be a ScoreGenerator or one of {sorted(GENERATORS)}, got {generator!r}")
        if generator_params is not None and not isinstance(generator_params, Mapping):
            raise TypeError(f"generator_params must be a mapping of keyword arguments, "
                            f"got {type(generator_params).__name__}")
        generator = GENERATORS[generator](**dict(generator_params or {}))
    elif isinstance(generator, ScoreGenerator):
        if generator_params is not None:
            raise ValueError("generator_params is only used with a generator name, not with a ScoreGenerator")
    else:
        raise TypeError(f"generator must be a ScoreGenerator (expertlab.balance.generators) or a generator name, "
                        f"got {type(generator).__name__}")
    n_tokens = check_int(n_tokens, "n_tokens")
    k = check_int(k, "k", maximum=generator.n_experts)
    return Routing(generator, n_tokens, k)


# --------------------------------------------------------------------------
# deterministic: the same batch every step


@dataclasses.dataclass(frozen=True, repr=False, eq=False)
class FixedRouting(_RoutingBase):
    """The same batch of router scores at every step (see :func:`routing_fixed`; metrics in :class:`Routing`).

    Attributes
    ----------
    scores : ndarray, shape (n_problems, n_tokens, n_experts)
        Read-only; one problem shared by every replication (``n_problems = 1``)
        or problem ``r`` for replication ``r``.
    k : int
    capacity_rows : ndarray, shape (n_problems or 1, n_experts)
    comparator_bias : ndarray, shape (n_problems or 1, n_experts), or None
    """

    scores: np.ndarray
    k: int
    capacity_rows: np.ndarray
    comparator_bias: np.ndarray | None = None

    def __post_init__(self):
        scores = self.scores
        if not isinstance(scores, np.ndarray) or scores.ndim != 3 or scores.dtype != np.float64:
            raise ValueError("scores must be a float64 array of shape (n_problems, n_tokens, n_experts); "
                             "build the environment with routing_fixed(...)")
        if not np.all(np.isfinite(scores)):
            raise ValueError("scores contains NaN or infinite values")
        e = scores.shape[2]
        check_int(self.k, "k", maximum=e)
        for name in ("capacity_rows", "comparator_bias"):
            rows = getattr(self, name)
            if rows is None and name == "comparator_bias":
                continue
            rows = np.asarray(rows)
            if rows.ndim != 2 or rows.shape[1] != e or rows.shape[0] not in (1, scores.shape[0]):
                raise ValueError(f"{name} must have shape (1, {e}) or ({scores.shape[0]}, {e}), got {rows.shape}")
            if not np.all(np.isfinite(rows)):
                raise ValueError(f"{name} contains NaN or infinite values")
        if np.any(np.asarray(self.capacity_rows) < 0):
            raise ValueError("capacity_rows must be non-negative")

    name = "routing_fixed"

    @property
    def has_comparator(self) -> bool:
        """Whether a ``comparator_bias`` was given (then ``regret`` and ``bias_error`` are recorded)."""
        return self.comparator_bias is not None

    @property
    def n_problems(self) -> int:
        """Number of problems: 1 (shared by every replication) or one per replication."""
        return int(self.scores.shape[0])

    @property
    def n_tokens(self) -> int:
        """Tokens per batch :math:`N`."""
        return int(self.scores.shape[1])

    @property
    def n_experts(self) -> int:
        """Number of experts :math:`E`."""
        return int(self.scores.shape[2])

    @property
    def capacity(self) -> np.ndarray:
        """Capacities, shape ``(n_experts,)`` when shared, else ``(n_problems, n_experts)``."""
        c = self.capacity_rows
        return c[0] if c.shape[0] == 1 else c

    @property
    def params(self) -> dict:
        """The constructor's settings: ``routing_fixed(**params)`` rebuilds the environment."""
        out = {"problem": self.scores if self.n_problems > 1 else self.scores[0], "k": self.k,
               "capacity": self.capacity}
        if self.comparator_bias is not None:
            cb = self.comparator_bias
            out["comparator_bias"] = cb[0] if cb.shape[0] == 1 else cb
        return out

    @property
    def spec(self) -> EnvSpec:
        """Feedback ``"routing"``, unit ``"batch"``; ``info``: ``n_tokens``, ``k``, ``capacity``, ``mean_load``."""
        return self._spec(self.capacity)

    def check_n_reps(self, n_reps: int) -> None:
        """Refuse a run whose replications do not match the problems one to one."""
        if self.n_problems > 1 and n_reps != self.n_problems:
            raise ValueError(f"routing_fixed holds {self.n_problems} problems, one per replication, so n_reps must "
                             f"be {self.n_problems}; got n_reps={n_reps}")

    def reset(self, n_reps, keys, xp):
        """The environment state: the scores of every replication and the capacity rows."""
        self.check_n_reps(n_reps)
        scores = xp.asarray(self.scores)
        if self.n_problems == 1:
            scores = xp.broadcast_to(scores, (n_reps,) + tuple(self.scores.shape[1:]))
        return scores, xp.asarray(self.capacity_rows)

    def step(self, env_state, bias, t, keys):
        """Route the fixed batch on ``scores + bias`` and return the loads."""
        scores, cap = env_state
        xp = get_namespace(scores)
        bias = self._check_bias(bias, scores.shape[0], xp)
        feedback, info = self._route(scores, bias, cap, t)
        return env_state, feedback, info

    def comparator(self, t, xp=np):
        """The comparator bias, shape ``(n_problems or 1, n_experts)``."""
        return xp.asarray(self.comparator_bias)

    def available_metrics(self) -> Mapping[str, Metric]:
        """The metrics of :class:`Routing` and ``moves``, ``misdirected_moves``."""
        out = dict(super().available_metrics())
        for m in (_moves_metric(misdirected=False), _moves_metric(misdirected=True)):
            out[m.name] = _with_last_batch(m)
        return out


def _as_problems(problem, k, capacity):
    """``(scores (P, N, E), k, capacity rows (P or 1, E))`` from a problem, a batch or a score array."""
    if isinstance(problem, (AssignmentProblem, AssignmentBatch)):
        if k is not None and check_int(k, "k") != problem.k:
            raise ValueError(f"k={k} differs from the problem's k={problem.k}")
        if capacity is not None:
            raise ValueError("capacity comes from the problem; give it to AssignmentProblem/AssignmentBatch")
    else:
        if k is None:
            raise TypeError("k (experts per token) is required when scores are given as an array")
        if isinstance(problem, (str, bytes)) or not hasattr(problem, "__len__") and not hasattr(problem, "shape"):
            raise TypeError(f"problem must be an AssignmentProblem, an AssignmentBatch or an array of scores of "
                            f"shape (n_tokens, n_experts) or (n_reps, n_tokens, n_experts), "
                            f"got {type(problem).__name__}")
        ndim = np.ndim(problem)
        if ndim == 2:
            problem = AssignmentProblem(problem, k, capacity=capacity)
        elif ndim == 3:
            problem = AssignmentBatch(problem, k, capacity=capacity)
        else:
            raise ValueError(f"scores must have shape (n_tokens, n_experts) or (n_reps, n_tokens, n_experts), "
                             f"got {np.shape(problem)}")
    if isinstance(problem, AssignmentProblem):
        return problem.scores[None], problem.k, problem.capacity[None]
    cap = problem.capacity
    if np.all(cap == cap[0]):
        cap = cap[:1]
    return problem.scores, problem.k, cap


def routing_fixed(problem, k=None, *, capacity=None, comparator_bias=None) -> FixedRouting:
    r"""Deterministic routing: the same batch of router scores at every step.

    ALF-LB on a fixed batch is a fixed-point iteration on the biases; run
    through :func:`expertlab.sim.run` it is an online learner on an
    environment whose batch never changes.

    Parameters
    ----------
    problem : AssignmentProblem, AssignmentBatch or array_like
        One problem shared by every replication (an ``AssignmentProblem`` or
        scores of shape ``(n_tokens, n_experts)``), or one problem per
        replication (an ``AssignmentBatch`` or scores of shape
        ``(n_reps, n_tokens, n_experts)``: problem ``r`` with its own
        capacity row is replication ``r``, and a run must then have
        ``n_reps`` equal to the number of problems).
    k : int, optional
        Experts per token (required with a score array; taken from a problem).
    capacity : float or array_like, optional
        Capacities for a score array, as :class:`AssignmentProblem` /
        :class:`AssignmentBatch` take them (default the balanced
        :math:`NK/E`); a problem brings its own.
    comparator_bias : array_like, shape (n_experts,) or (n_problems, n_experts), optional
        A bias :math:`b^\star` to measure ``regret`` and ``bias_error``
        against, e.g. ``-solve_exact(problem).prices`` (the LP optimum).

    Returns
    -------
    FixedRouting
        A ``"routing"`` environment in unit ``"batch"`` (metrics as listed in
        :class:`Routing`, with ``moves`` and ``misdirected_moves`` on request).

    Notes
    -----
    A batch of problems is matched to the replications by position: the
    engine hands an environment replication keys, not replication indices,
    so a block of replications run alone (``rep_offset > 0``) cannot pick
    its problems; run a batch of problems in one call, with ``n_reps`` the
    number of problems.  A shared problem has no such restriction (it is
    deterministic, so every replication is the same).

    References
    ----------
    .. [1] X. Y. Han and Y. Zhong, "A theoretical framework for
       auxiliary-loss-free load balancing of sparse mixture-of-experts in
       large-scale AI models", arXiv:2512.03915, 2025: the deterministic
       setting (section not re-checked).

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab import sim
    >>> from expertlab.balance import alf_lb, routing_fixed
    >>> env = routing_fixed(np.array([[1.0, 0.0], [0.9, 0.0]]), k=1)
    >>> res = sim.run(alf_lb(step=0.01), env, horizon=60, n_reps=1, backend="numpy",
    ...               metrics=["dual", "maxvio", "moves", "misdirected_moves"])
    >>> res.final["loads"].tolist(), round(float(res.metrics["dual"][-1, 0]), 6)
    ([[1, 1]], 1.0)
    >>> res.metrics["moves"][-1].tolist(), res.metrics["misdirected_moves"][-1].tolist()  # one move, the right way
    ([1.0], [0.0])
    """
    scores, k, cap = _as_problems(problem, k, capacity)
    e = scores.shape[2]
    cb = None
    if comparator_bias is not None:
        cb = np.array(comparator_bias, dtype=np.float64)
        if cb.ndim == 1:
            cb = cb[None]
        if cb.ndim != 2 or cb.shape[1] != e or cb.shape[0] not in (1, scores.shape[0]):
            want = f"({e},)" if scores.shape[0] == 1 else f"({e},) or ({scores.shape[0]}, {e})"
            raise ValueError(f"comparator_bias must have shape {want}, got {np.shape(comparator_bias)}")
        if not np.all(np.isfinite(cb)):
            raise ValueError("comparator_bias contains NaN or infinite values")
        cb.flags.writeable = False
    cap = np.array(cap, dtype=np.float64)
    cap.flags.writeable = False
    return FixedRouting(scores, k, cap, cb)


# --------------------------------------------------------------------------
# metrics


def _with_last_batch(m: Metric) -> Metric:
    """``m`` with the final value every routing metric gives: the loads of the last batch."""

    def init(n_reps, xp):
        return (m.init(n_reps, xp), None)

    def update(acc, info, t):
        return (m.update(acc[0], info, t), info["loads"])

    def final(acc):
        out = {"loads": acc[1]}
        if m.final is not None:
            out.update(m.final(acc[0]))
        return out

    return Metric(m.name, init, update, lambda acc: m.read(acc[0]), final)


def _maxvio_metric(cbar) -> Metric:
    def init(n_reps, xp):
        return None

    def update(acc, info, t):
        loads = info["loads"]
        xp = get_namespace(loads)
        return (xp.astype(xp.max(loads, axis=1), xp.float64) - cbar) / cbar

    return Metric("maxvio", init, update, lambda acc: acc)


def _global_metric(cbar) -> Metric:
    def init(n_reps, xp):
        return None

    def update(acc, info, t):
        loads = info["loads"]
        return (loads + 0 if acc is None else acc[0] + loads, t)

    def read(acc):
        cum, t = acc
        xp = get_namespace(cum)
        tot = cbar * (t + 1.0)
        return (xp.astype(xp.max(cum, axis=1), xp.float64) - tot) / tot

    return Metric("global_maxvio", init, update, read, lambda acc: {"cumulative_loads": acc[0]})


def _dual_metric() -> Metric:
    def init(n_reps, xp):
        return None

    def update(acc, info, t):
        return info["dual"]

    return Metric("dual", init, update, lambda acc: acc)


def _regret_metric(env) -> Metric:
    def init(n_reps, xp):
        return xp.zeros(n_reps)

    def update(acc, info, t):
        return acc + (info["dual"] - env.comparator_dual(info["scores"], t, info["capacity"]))

    return Metric("regret", init, update, lambda acc: acc)


def _centred(b, xp):
    return b - xp.mean(b, axis=1, keepdims=True)


def _bias_error_metric(env) -> Metric:
    def init(n_reps, xp):
        return None

    def update(acc, info, t):
        b = info["bias"]
        xp = get_namespace(b)
        return xp.max(xp.abs(_centred(b, xp) - _centred(env.comparator(t, xp), xp)), axis=1)

    return Metric("bias_error", init, update, lambda acc: acc)


def _moves_metric(misdirected: bool) -> Metric:
    name = "misdirected_moves" if misdirected else "moves"

    def init(n_reps, xp):
        return (None, None, xp.zeros(n_reps))

    def update(acc, info, t):
        prev, sigma, count = acc
        mask = info["mask"]
        xp = get_namespace(mask)
        if prev is not None:
            left = prev & ~mask
            if not misdirected:
                count = count + xp.sum(xp.astype(left, xp.float64), axis=(1, 2))
            else:
                joined = mask & ~prev
                n_left = [xp.sum(xp.astype(left & (sigma == a)[:, None, :], xp.float64), axis=2) for a in (-1, 0, 1)]
                n_join = [xp.sum(xp.astype(joined & (sigma == a)[:, None, :], xp.float64), axis=2) for a in (-1, 0, 1)]
                bad = sum(n_left[a] * n_join[b] for a in range(3) for b in range(3) if a >= b)
                count = count + xp.sum(bad, axis=1)
        sigma = xp.sign(info["capacity"] - info["loads"])
        return (mask, sigma, count)

    return Metric(name, init, update, lambda acc: acc[2])


# --------------------------------------------------------------------------
# token moves of a trajectory (an analysis of given biases, not a run)


@dataclasses.dataclass(frozen=True, eq=False)
class TokenMoves:
    """Token moves between consecutive iterations of a deterministic trajectory.

    One row per (replication, iteration, token, expert pair): the token was
    routed to ``source`` in ``iteration`` and to ``target`` in
    ``iteration + 1`` (for ``k > 1`` the experts a token leaves and joins are
    paired in increasing index order).  Loads are those of ``iteration``,
    which decided the bias update in between.

    Attributes
    ----------
    rep, iteration, token, source, target : ndarray of int, shape (n_moves,)
    source_load, target_load : ndarray of int, shape (n_moves,)
    source_overloaded : ndarray of bool, shape (n_moves,)
        ``source_load > capacity[source]``.
    target_underloaded : ndarray of bool, shape (n_moves,)
        ``target_load < capacity[target]``.
    """

    rep: np.ndarray
    iteration: np.ndarray
    token: np.ndarray
    source: np.ndarray
    target: np.ndarray
    source_load: np.ndarray
    target_load: np.ndarray
    source_overloaded: np.ndarray
    target_underloaded: np.ndarray

    def __len__(self) -> int:
        return int(self.rep.shape[0])

    def __repr__(self) -> str:
        return f"TokenMoves({len(self)} moves)"


def token_moves(problem, biases, k=None, *, capacity=None) -> TokenMoves:
    r"""The token moves between consecutive routings of fixed scores under a sequence of biases.

    An analysis of a trajectory of biases (for instance the initial bias and
    the ``final["bias"]`` of a run of :func:`~expertlab.balance.alf_lb`, or
    the biases a custom :class:`~expertlab.sim.Metric` keeps): it routes the
    same batch under each bias and lists every change.

    Parameters
    ----------
    problem : AssignmentProblem, AssignmentBatch or array_like
        As for :func:`routing_fixed`: one problem (scores ``(n_tokens,
        n_experts)``) or one per replication.
    biases : array_like, shape (n_iter, n_experts) or (n_reps, n_iter, n_experts)
        The bias of each iteration (one problem: 2-d, or 3-d for several
        trajectories on it; a batch: 3-d with one trajectory per problem).
    k : int, optional
        Experts per token (required with a score array).
    capacity : float or array_like, optional
        Capacities for a score array (default balanced).

    Returns
    -------
    TokenMoves

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.balance import token_moves
    >>> s = np.array([[1.0, 0.0], [0.9, 0.0]])
    >>> mv = token_moves(s, [[0.0, 0.0], [-0.47, 0.47]], k=1)  # token 1 moves to expert 1
    >>> len(mv), int(mv.token[0]), int(mv.source[0]), int(mv.target[0]), bool(mv.source_overloaded[0])
    (1, 1, 0, 1, True)
    """
    scores, k, cap = _as_problems(problem, k, capacity)
    b = np.asarray(biases, dtype=np.float64)
    e = scores.shape[2]
    if b.ndim == 2:
        b = b[None]
    if b.ndim != 3 or b.shape[2] != e or (scores.shape[0] > 1 and b.shape[0] != scores.shape[0]):
        raise ValueError(f"biases must have shape (n_iter, {e}) or (n_reps, n_iter, {e}) with n_reps the number "
                         f"of problems ({scores.shape[0]}), got {np.shape(biases)}")
    if not np.all(np.isfinite(b)):
        raise ValueError("biases contains NaN or infinite values")
    n_reps = b.shape[0]
    member = top_k_route(scores[:, None] + b[:, :, None, :], None, k).astype(bool)  # (R, T, N, E)
    loads = member.sum(axis=2)
    left = member[:, :-1] & ~member[:, 1:]
    joined = member[:, 1:] & ~member[:, :-1]
    # pair the j-th expert left with the j-th joined (increasing index) per token
    r, t, n, src = np.nonzero(left)
    _, _, _, tgt = np.nonzero(joined)
    src_load = loads[r, t, src]
    tgt_load = loads[r, t, tgt]
    cap2 = np.broadcast_to(cap, (n_reps, e))
    return TokenMoves(rep=r, iteration=t, token=n, source=src, target=tgt, source_load=src_load,
                      target_load=tgt_load, source_overloaded=src_load > cap2[r, src],
                      target_underloaded=tgt_load < cap2[r, tgt])
