r"""Active ranking of experts from noisy (expert, task) queries, on the engine.

``n`` experts are evaluated on ``d`` tasks; a query of (expert ``i``, task
``j``) returns ``M[i, j] + sigma * z`` with ``z`` standard normal.  Under the
monotonicity assumption every pair of experts is ordered the same way on all
tasks, so the ranking is well defined.  The learner chooses its queries
adaptively and must return the exact ranking (or the best expert) with
probability at least ``1 - delta``.

The query oracle is the environment :class:`ExpertTasks` (feedback kind
``"expert-queries"``, unit ``"batch"``): one step of :func:`expertlab.sim.run`
is one *batch* of queries, a level of a pairwise comparison (``m`` tasks,
``h`` repetitions of both experts on each).  The procedures here
(:func:`active_ranking`, :func:`compare_experts` and
:func:`~expertlab.bandits.best_expert`) are :class:`expertlab.sim.Learner`
records with a stopping time: each replication stops when it can answer,
and the engine records ``final["stopping_time"]`` (batches),
``final["stopped"]`` and ``final["answer"]``; ``env.correct(answer)`` says
which answers are right.  Replications advance together, one batch each per
step; the tasks a level samples come from the learner's keys, the query
noise from the environment's.  A registered Numba fast path (``prange`` over
replications) runs the same steps on the same keys, for the long runs of the
rate claims.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from .._backend import get_namespace
from .._random import LEARNER_STREAM, rep_key, round_key, stream_key, uniform
from .._validation import as_real_array, check_float, check_in, check_int, check_open_unit
from ..sim._engine import register_fast_path
from ..sim._protocol import EnvSpec, Environment, Learner, Metric
from ..sim._variates import normal, normal_array

__all__ = ["ExpertTasks", "ExpertQueryState", "QueryBatch", "active_ranking", "compare_experts", "expert_tasks",
           "dense_gap_means", "one_task_gap_means", "comparison_budget"]

_PI2_6 = math.pi ** 2 / 6.0
#: Query budget standing for "no budget" (every count stays far below it).
_NO_BUDGET = 2 ** 62
_SCHEDULES = ("adaptive", "uniform")


# ---------------------------------------------------------------------------
# the environment: the query oracle


class QueryBatch(NamedTuple):
    """One batch of paired queries, the action of an ``"expert-queries"`` learner.

    Attributes
    ----------
    a, b : int array, shape (n_reps,)
        The two experts compared.
    tasks : int array, shape (n_reps, m_max)
        The tasks queried, ``-1`` padded (a row of ``-1`` asks nothing).
    h : int array, shape (n_reps,)
        Repetitions: each task is queried ``h`` times for ``a`` and ``h`` times for ``b``.
    new : bool array, shape (n_reps,)
        True where the batch opens a comparison (read by the metric ``comparisons``).
    """

    a: Any
    b: Any
    tasks: Any
    h: Any
    new: Any


@dataclasses.dataclass(frozen=True, repr=False, eq=False)
class ExpertTasks(Environment):
    r"""Experts evaluated on tasks with Gaussian query noise: the oracle of the ranking procedures.

    Build it with :func:`expert_tasks`.  Per step each replication sends a
    :class:`QueryBatch`: experts ``a``, ``b``, tasks :math:`j_1, \dots,
    j_m` and repetitions ``h``.  The feedback is the ``(n_reps, m_max)``
    array of the sums of the ``h`` paired differences on each task,

    .. math::

        D_q = h (M_{a j_q} - M_{b j_q}) + \sigma\sqrt{2h}\, z_q,

    (0 on padding), with :math:`z_q` the standard normal draw ``q`` of the
    round's environment key: the sum of the ``h`` Gaussian queries of each
    expert drawn as one normal variable with the same law.  ``spec.info``
    tells the learner ``n_tasks`` and ``sigma``; ``spec.n_actions`` is the
    number of experts.

    Attributes
    ----------
    means : ndarray, shape (n_experts, n_tasks)
    sigma : float

    Notes
    -----
    Metrics (both by default):

    ``queries``
        (expert, task) queries so far, :math:`2hm` per batch.
    ``comparisons``
        Pairwise comparisons begun so far (batches with ``new``).

    The oracles ``ranking`` (best first), ``best`` and
    ``correct(answer)`` give the truth the answers are checked against.
    """

    means: np.ndarray
    sigma: float = 1.0
    name: str = "expert_tasks"

    #: Metrics recorded when ``sim.run`` is given none.
    default_metrics = ("queries", "comparisons")

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str, got {type(self.name).__name__}")
        M = _check_means(self.means, 2)
        M.flags.writeable = False
        object.__setattr__(self, "means", M)
        object.__setattr__(self, "sigma", check_float(self.sigma, "sigma", positive=True))

    @property
    def params(self) -> Mapping[str, Any]:
        """The constructor's settings."""
        return {"means": self.means, "sigma": self.sigma}

    @property
    def n_experts(self) -> int:
        """Number of experts ``n``."""
        return int(self.means.shape[0])

    @property
    def n_tasks(self) -> int:
        """Number of tasks ``d``."""
        return int(self.means.shape[1])

    @property
    def spec(self) -> EnvSpec:
        """Feedback ``"expert-queries"``, one batch of queries per step; the learner is told ``n_tasks``, ``sigma``."""
        return EnvSpec(feedback="expert-queries", unit="batch", n_actions=self.n_experts,
                       info={"n_tasks": self.n_tasks, "sigma": self.sigma})

    @property
    def ranking(self) -> np.ndarray:
        """The true ranking, best first (row sums order a monotone matrix)."""
        return np.argsort(-self.means.sum(axis=1), kind="stable").astype(np.int64)

    @property
    def best(self) -> int:
        """The best expert."""
        return int(self.ranking[0])

    def correct(self, answer) -> np.ndarray:
        """Which answers are right: a ranking ``(n_reps, n_experts)`` equal to ``ranking``, or a best
        expert ``(n_reps,)`` equal to ``best`` (``-1``, no answer, is never right)."""
        ans = np.asarray(answer)
        if ans.ndim == 2 and ans.shape[1] == self.n_experts:
            return np.all(ans == self.ranking[None, :], axis=1)
        if ans.ndim == 1:
            return ans == self.best
        raise ValueError(f"answer must be a ranking (n_reps, {self.n_experts}) or a best expert (n_reps,), "
                         f"got shape {ans.shape}")

    def reset(self, n_reps, keys, xp):
        """The means as an ``xp`` array (nothing changes between batches)."""
        return xp.asarray(self.means)

    def step(self, M, batch, t, keys):
        """Answer one :class:`QueryBatch` per replication; the feedback is the paired sums ``D``."""
        if not isinstance(batch, QueryBatch):
            raise TypeError(f"an expert-queries learner's act must return a QueryBatch, got {type(batch).__name__}")
        xp = _ns(keys)
        n_reps = keys.shape[0]
        _check_batch(batch, n_reps, self.n_experts, self.n_tasks)
        tasks = batch.tasks
        valid = tasks >= 0
        if tasks.shape[1] == 0:
            D = xp.zeros((n_reps, 0))
        else:
            tj = xp.where(valid, tasks, 0)
            diff = M[batch.a[:, None], tj] - M[batch.b[:, None], tj]
            z = normal_array(xp, keys[:, None], xp.arange(tasks.shape[1], dtype=xp.uint64)[None, :])
            hf = xp.astype(batch.h, xp.float64)[:, None]
            D = xp.where(valid, hf * diff + self.sigma * xp.sqrt(2.0 * hf) * z, 0.0)
        queries = 2 * batch.h * xp.sum(xp.astype(valid, xp.int64), axis=1)
        return M, D, {"queries": queries, "new": batch.new}

    def available_metrics(self) -> Mapping[str, Metric]:
        """``queries`` and ``comparisons`` (see the Notes of the class)."""

        def zeros(n_reps, xp):
            return xp.zeros(n_reps, dtype=xp.int64)

        return {"queries": Metric("queries", zeros, lambda acc, info, t: acc + info["queries"], lambda acc: acc),
                "comparisons": Metric("comparisons", zeros, _count_new, lambda acc: acc)}


def _ns(a):
    """The array namespace of the array ``a``: NumPy itself for NumPy arrays."""
    return np if isinstance(a, np.ndarray) else get_namespace(a)


def _count_new(acc, info, t):
    xp = _ns(acc)
    return acc + xp.astype(info["new"], xp.int64)


def _check_batch(batch, n_reps, n_experts, n_tasks):
    """Shapes, dtypes and ranges of a :class:`QueryBatch` (the oracle indexes the means with them)."""
    xp = _ns(batch.tasks) if hasattr(batch.tasks, "dtype") else np
    for field in ("a", "b", "tasks", "h"):
        v = getattr(batch, field)
        if not hasattr(v, "dtype") or not xp.isdtype(v.dtype, "integral"):
            raise TypeError(f"QueryBatch.{field} must be an integer array, got "
                            f"{getattr(v, 'dtype', type(v).__name__)}")
    for field in ("a", "b", "h"):
        if getattr(batch, field).shape != (n_reps,):
            raise ValueError(f"QueryBatch.{field} must have shape ({n_reps},), got {getattr(batch, field).shape}")
    if batch.tasks.ndim != 2 or batch.tasks.shape[0] != n_reps:
        raise ValueError(f"QueryBatch.tasks must have shape ({n_reps}, m), got {batch.tasks.shape}")
    new = batch.new
    if not hasattr(new, "dtype") or new.dtype != xp.bool or new.shape != (n_reps,):
        raise ValueError(f"QueryBatch.new must be a boolean array of shape ({n_reps},)")
    for field in ("a", "b"):
        v = getattr(batch, field)
        if bool(xp.any(v < 0)) or bool(xp.any(v >= n_experts)):
            raise ValueError(f"QueryBatch.{field} must hold experts in [0, {n_experts - 1}]")
    if bool(xp.any(batch.tasks < -1)) or bool(xp.any(batch.tasks >= n_tasks)):
        raise ValueError(f"QueryBatch.tasks must hold tasks in [0, {n_tasks - 1}] or the padding -1")
    if bool(xp.any(batch.h < 1)):
        raise ValueError("QueryBatch.h must be >= 1 (repetitions of each query)")


def _check_means(means, n_min):
    M = as_real_array(means, "means")
    if M.ndim != 2:
        raise ValueError(f"means must have shape (n_experts, n_tasks), got {M.shape}")
    if M.shape[0] < n_min or M.shape[1] < 1:
        raise ValueError(f"means needs at least {n_min} experts and 1 task, got shape {M.shape}")
    if not np.all(np.isfinite(M)):
        raise ValueError("means must be finite (no NaN or inf)")
    # An expert that dominates another comes first in decreasing lexicographic order, and dominance is
    # transitive: every pair is ordered iff each expert dominates the next one in that order.  O(n d)
    # memory instead of the (n, n, d) table of all pairs.
    order = np.lexsort(tuple(-M[:, j] for j in range(M.shape[1] - 1, -1, -1)))
    diff = M[order[:-1]] - M[order[1:]]
    cross = diff.min(axis=1) < 0
    if cross.any():
        q = int(np.argmax(cross))
        i, k = sorted((int(order[q]), int(order[q + 1])))
        raise ValueError(f"means is not monotone: experts {i} and {k} are each better on some task "
                         "(the ranking assumes one dominates the other on every task)")
    tie = np.all(diff == 0, axis=1)
    if tie.any():
        q = int(np.argmax(tie))
        i, k = sorted((int(order[q]), int(order[q + 1])))
        raise ValueError(f"experts {i} and {k} have identical means on every task; the ranking is not defined")
    return np.ascontiguousarray(M)


def expert_tasks(means, sigma: float = 1.0) -> ExpertTasks:
    """The query oracle of ``n`` experts on ``d`` tasks: :class:`ExpertTasks`.

    Parameters
    ----------
    means : array, shape (n_experts, n_tasks)
        Mean performance :math:`M_{ij}` of expert ``i`` on task ``j``
        (larger is better), monotone: for every pair one expert is at least
        as good on every task and strictly better on one.
    sigma : float
        Standard deviation of the Gaussian query noise (known to the learner).

    Examples
    --------
    >>> env = expert_tasks(dense_gap_means(3, 2, 0.5))
    >>> env.ranking.tolist(), env.best, env.spec.n_tasks
    ([0, 1, 2], 0, 2)
    """
    return ExpertTasks(means=means, sigma=sigma)


def comparison_budget(n_experts: int) -> int:
    r"""Worst-case number of comparisons of binary insertion sort: :math:`\sum_{i=2}^{n} \lceil \log_2 i \rceil`.

    Examples
    --------
    >>> [comparison_budget(n) for n in (1, 2, 3, 4, 5, 8)]
    [0, 1, 3, 5, 8, 17]
    """
    n_experts = check_int(n_experts, "n_experts")
    # closed form in integers: with c = ceil(log2 n), the sum is n c - 2^c + 1
    c = (n_experts - 1).bit_length()
    return n_experts * c - 2 ** c + 1


# ---------------------------------------------------------------------------
# the learners: one adaptive pairwise comparison driven by an outer procedure


class _QStatic(NamedTuple):
    n: int
    d: int
    top: int
    sigma: float
    uniform: bool
    max_queries: int
    log_inv: float


class ExpertQueryState(NamedTuple):
    r"""State of the ranking procedures (leading axis: replications).

    The running comparison of experts ``a`` and ``b`` is at round ``r``,
    level ``lev``, has made ``cq`` queries of its cap ``cap`` and runs at
    :math:`\ln(1/\delta_c)` = ``lq0``.  The procedure's own fields:
    ``order`` (binary insertion: the sorted prefix, best first), ``i``,
    ``lo``, ``hi`` (the expert being inserted and its search interval),
    ``champ`` and ``alive`` (max searches), ``phase`` and ``pcap`` (the
    capped search's phase and cap), ``cut`` (the comparison's cap is the
    budget's, not the phase's).  ``used``: queries so far; ``done``: stopped;
    ``ok``: stopped with an answer.  ``static`` holds the constants derived
    from the spec.
    """

    a: Any
    b: Any
    r: Any
    lev: Any
    cq: Any
    cap: Any
    lq0: Any
    new: Any
    order: Any
    alive: Any
    champ: Any
    i: Any
    lo: Any
    hi: Any
    phase: Any
    pcap: Any
    cut: Any
    used: Any
    done: Any
    ok: Any
    static: Any


class _Procedure(NamedTuple):
    name: str
    log_inv: Callable       # (n, delta) -> ln(1 / delta_c) of the comparisons
    start: Callable         # (fields, sel) -> None: set the first comparison (or done) of the replications sel
    on_result: Callable     # (fields, sel, s) -> None: a comparison of sel ended with sign s (0: cap reached)
    answer: Callable        # (state) -> (n_reps, ...)
    code: int               # the compiled path's procedure (_RANK, _COMPARE_ONE, _SEQUENTIAL, _DOUBLING)
    first_cap: int = 0      # first phase's cap of the doubling search


#: Procedure codes of the compiled path.
_RANK, _COMPARE_ONE, _SEQUENTIAL, _DOUBLING = 0, 1, 2, 3


class _QueryKernel(NamedTuple):
    """What the compiled path needs to know about a procedure."""

    code: int
    uniform: bool
    max_queries: int
    delta: float
    first_cap: int
    log_inv: Callable


def _level(st, r, lev):
    """``(h, m, sweep, lq_extra)`` of level ``lev`` of round ``r`` (vectorised)."""
    xp = _ns(r)
    lo = r if st.uniform else xp.maximum(r - st.top, 0)
    n_levels = r - lo + 1
    h = xp.bitwise_left_shift(xp.ones_like(lev), lev)
    m = xp.bitwise_left_shift(xp.ones_like(r), r - lev)
    sweep = (m >= st.d) | st.uniform
    m = xp.where(sweep, st.d, m)
    rf = xp.astype(r, xp.float64)
    extra = xp.log(_PI2_6 * (rf + 1.0) ** 2 * 2.0 * xp.astype(n_levels, xp.float64))
    return h, m, sweep, extra


def _first_level(st, r):
    return r if st.uniform else _ns(r).maximum(r - st.top, 0)


def _put(f, name, sel, value):
    """Set field ``name`` to ``value`` on the replications ``sel`` (a mask), keeping the others."""
    xp = _ns(sel)
    old = f[name]
    f[name] = xp.where(sel[:, None] if old.ndim == 2 else sel, value, old)


def _set_comparison(f, sel, a, b, cap, lq0):
    """Start a comparison of experts ``a`` and ``b`` for the replications ``sel``."""
    for name, value in (("a", a), ("b", b), ("r", 0), ("lev", 0), ("cq", 0), ("cap", cap), ("lq0", lq0),
                        ("new", True)):
        _put(f, name, sel, value)


def _resolve(f, st, proc, ended, s, check):
    """Run the procedure until every replication has a level to query or is done.

    ``ended``: replications whose comparison just ended with sign ``s``;
    ``check``: replications whose next level must first fit within its cap
    (a level that does not ends the comparison undecided, sign 0).
    """
    xp = _ns(ended)
    while True:
        if bool(xp.any(check)):
            h, m, _, _ = _level(st, f["r"], f["lev"])
            over = check & (f["cq"] + 2 * h * m > f["cap"])
            ended = ended | over
            s = xp.where(over, 0, s)
        if not bool(xp.any(ended)):
            return
        proc.on_result(f, ended, s)
        check = ended & ~f["done"]
        ended = xp.zeros_like(ended)
        s = xp.zeros_like(s)


def _signs(xp, positive):
    """``+1`` where ``positive``, else ``-1`` (int64)."""
    one = xp.ones(positive.shape, dtype=xp.int64)
    return xp.where(positive, one, -one)


def _query_learner(proc: _Procedure, delta, max_queries, schedule, params, doc=None) -> Learner:
    def check_spec(spec):
        if "n_tasks" not in spec.info or "sigma" not in spec.info:
            raise ValueError(f"{proc.name} needs spec.info entries 'n_tasks' and 'sigma' (run it on an "
                             "ExpertTasks environment, expert_tasks(means))")
        n = int(spec.n_actions)
        if n < 2 or (proc.name == "compare_experts" and n != 2):
            raise ValueError(f"{proc.name} needs {'exactly 2' if proc.name == 'compare_experts' else 'at least 2'} "
                             f"experts, the environment has {n}")

    def init(spec, n_reps, keys=None, xp=np):
        n_reps = check_int(n_reps, "n_reps")
        check_spec(spec)
        n, d = int(spec.n_actions), int(spec.n_tasks)
        st = _QStatic(n=n, d=d, top=math.ceil(math.log2(d)) if d > 1 else 0, sigma=float(spec.sigma),
                      uniform=schedule == "uniform", max_queries=max_queries, log_inv=proc.log_inv(n, delta))
        i64 = lambda *shape: xp.zeros(shape, dtype=xp.int64)  # noqa: E731
        no = lambda *shape: xp.zeros(shape, dtype=xp.bool)  # noqa: E731
        f = dict(a=i64(n_reps), b=i64(n_reps), r=i64(n_reps), lev=i64(n_reps), cq=i64(n_reps), cap=i64(n_reps),
                 lq0=xp.zeros(n_reps), new=no(n_reps), order=xp.full((n_reps, n), -1, dtype=xp.int64),
                 alive=xp.ones((n_reps, n), dtype=xp.bool), champ=i64(n_reps), i=i64(n_reps), lo=i64(n_reps),
                 hi=i64(n_reps), phase=i64(n_reps), pcap=i64(n_reps), cut=no(n_reps),
                 used=i64(n_reps), done=no(n_reps), ok=no(n_reps), static=st)
        proc.start(f, xp.ones(n_reps, dtype=xp.bool))
        check = ~f["done"]
        _resolve(f, st, proc, no(n_reps), i64(n_reps), check)
        return ExpertQueryState(**f)

    def act(state, obs=None, keys=None):
        st = state.static
        xp = _ns(state.a)
        live = ~state.done
        h, m, sweep, _ = _level(st, state.r, state.lev)
        m = xp.where(live, m, 0)
        n_reps = m.shape[0]
        m_max = int(xp.max(m)) if n_reps else 0
        q = xp.arange(m_max, dtype=xp.int64)[None, :]
        if m_max and not bool(xp.all(sweep | ~live)):
            with np.errstate(over="ignore"):
                drawn = xp.astype(uniform(keys[:, None], xp.astype(q, xp.uint64)) * st.d, xp.int64)
            drawn = xp.minimum(drawn, st.d - 1)
        else:
            drawn = xp.broadcast_to(q, (n_reps, m_max))
        tasks = xp.where(q < m[:, None], xp.where(sweep[:, None], q, drawn), -1)
        batch = QueryBatch(a=state.a, b=state.b, tasks=tasks, h=xp.where(live, h, 1), new=state.new & live)
        return batch, state._replace(new=xp.zeros_like(state.new))

    def update(state, batch, D, keys=None):
        st = state.static
        xp = _ns(state.a)
        f = state._asdict()  # every field is replaced, never written in place
        tasks = batch.tasks
        asked = xp.any(tasks >= 0, axis=1) & ~state.done
        if D.shape != tasks.shape:
            raise ValueError(f"feedback must have the shape of the batch's tasks {tasks.shape}, got {D.shape}")
        n_reps = asked.shape[0]
        s = xp.zeros(n_reps, dtype=xp.int64)
        if bool(xp.any(asked)):
            h, m, _, extra = _level(st, state.r, state.lev)
            hf, mf = xp.astype(h, xp.float64), xp.astype(m, xp.float64)
            valid = tasks >= 0
            lq = state.lq0 + extra
            absd = xp.abs(D)
            z = absd / (st.sigma * xp.sqrt(4.0 * hf * (lq + xp.log(xp.maximum(mf, 1.0)))))[:, None]
            if st.uniform:
                z = xp.zeros_like(z)
            z = xp.where(valid & (z > 1.0), z, 0.0)
            qb = xp.argmax(z, axis=1) if z.shape[1] else xp.zeros(n_reps, dtype=xp.int64)
            rows = xp.arange(n_reps)
            best = z[rows, qb] if z.shape[1] else xp.zeros(n_reps)
            best_sign = xp.where(best > 0.0, _signs(xp, D[rows, qb] > 0), 0) if z.shape[1] else s
            total = xp.cumulative_sum(D, axis=1)[:, -1] if D.shape[1] else xp.zeros(n_reps)
            zs = xp.abs(total) / (st.sigma * xp.sqrt(4.0 * hf * mf * lq))
            use_sum = (zs > 1.0) & (zs > best)
            sign = xp.where(use_sum, _signs(xp, total > 0), best_sign)
            s = xp.where(asked, sign, 0)
            cost = xp.where(asked, 2 * h * m, 0)
            f["cq"] = f["cq"] + cost
            f["used"] = f["used"] + cost
            # undecided: the next level (the first level of the next round after the last)
            nxt = asked & (s == 0)
            lev = f["lev"] + 1
            r = f["r"]
            roll = lev > r
            f["r"] = xp.where(nxt & roll, r + 1, r)
            f["lev"] = xp.where(nxt, xp.where(roll, _first_level(st, r + 1), lev), f["lev"])
        _resolve(f, st, proc, asked & (s != 0), s, asked & (s == 0))
        return ExpertQueryState(**f)

    def done(state):
        return state.done

    kernel = _QueryKernel(proc.code, schedule == "uniform", max_queries, delta, proc.first_cap, proc.log_inv)
    return Learner(name=proc.name, feedback="expert-queries", init=init, act=act, update=update, params=params,
                   done=done, answer=proc.answer, doc=doc, check_spec=check_spec, kernel=kernel)


def _check_common(delta, max_queries, schedule):
    check_in(schedule, "schedule", _SCHEDULES)
    delta = check_open_unit(delta, "delta")
    max_queries = _NO_BUDGET if max_queries is None else check_int(max_queries, "max_queries", maximum=_NO_BUDGET)
    return delta, max_queries


# -- binary insertion sort ---------------------------------------------------


def _rank_start(f, sel):
    xp = _ns(sel)
    first = xp.arange(f["static"].n)[None, :] == 0
    f["order"] = xp.where(sel[:, None] & first, 0, f["order"])
    _put(f, "i", sel, 1)
    _put(f, "lo", sel, 0)
    _put(f, "hi", sel, 1)
    _rank_next(f, sel)


def _rank_next(f, sel):
    xp = _ns(sel)
    st = f["static"]
    mid = xp.clip((f["lo"] + f["hi"]) // 2, 0, st.n - 1)
    other = xp.take_along_axis(f["order"], mid[:, None], axis=1)[:, 0]
    _set_comparison(f, sel, f["i"], other, st.max_queries - f["used"], st.log_inv)


def _rank_result(f, sel, s):
    xp = _ns(sel)
    n = f["static"].n
    f["done"] = f["done"] | (sel & (s == 0))
    sel = sel & (s != 0)
    lo, hi = f["lo"], f["hi"]
    mid = (lo + hi) // 2
    hi = xp.where(s > 0, mid, hi)
    lo = xp.where(s < 0, mid + 1, lo)
    _put(f, "lo", sel, lo)
    _put(f, "hi", sel, hi)
    ins = sel & (lo >= hi)
    if bool(xp.any(ins)):
        i, pos = f["i"], xp.clip(lo, 0, n - 1)
        j = xp.arange(n)[None, :]
        old = f["order"]
        src = xp.where(j < pos[:, None], j, xp.maximum(j - 1, 0))
        moved = xp.take_along_axis(old, src, axis=1)
        new = xp.where(j == pos[:, None], i[:, None], moved)
        _put(f, "order", ins, xp.where(j <= i[:, None], new, old))
        _put(f, "i", ins, i + 1)
        _put(f, "lo", ins, 0)
        _put(f, "hi", ins, i + 1)
        fin = ins & (i + 1 >= n)
        f["done"] = f["done"] | fin
        f["ok"] = f["ok"] | fin
    rest = sel & ~f["done"]
    if bool(xp.any(rest)):
        _rank_next(f, rest)


def _rank_answer(state):
    xp = _ns(state.order)
    return xp.where(state.ok[:, None], state.order, -1)


_RANKING = _Procedure("active_ranking", lambda n, delta: math.log(comparison_budget(n) / delta), _rank_start,
                      _rank_result, _rank_answer, _RANK)


# -- one comparison --------------------------------------------------------


def _cmp_start(f, sel):
    st = f["static"]
    _set_comparison(f, sel, 0, 1, st.max_queries, st.log_inv)


def _cmp_result(f, sel, s):
    xp = _ns(sel)
    f["done"] = f["done"] | sel
    _put(f, "ok", sel, s != 0)
    _put(f, "champ", sel, xp.where(s > 0, 0, xp.ones_like(s)))


def _champ_answer(state):
    return _ns(state.champ).where(state.ok, state.champ, -1)


_COMPARE = _Procedure("compare_experts", lambda n, delta: math.log(1.0 / delta), _cmp_start, _cmp_result,
                      _champ_answer, _COMPARE_ONE)


# ---------------------------------------------------------------------------
# compiled fast path: the same steps, one replication per prange iteration


@register_jitable
def _k_level(r, lev, unif, top, d):
    lo = r if unif else max(r - top, 0)
    n_levels = r - lo + 1
    h = 1 << lev
    m = 1 << (r - lev)
    sweep = m >= d or unif
    if sweep:
        m = d
    return h, m, sweep, math.log(_PI2_6 * (r + 1.0) ** 2 * 2.0 * n_levels)


@njit(parallel=True, cache=True)
def _query_kernel(M, sigma, code, unif, top, max_q, log_inv, first_cap, seed, rep_offset, horizon, ck, q_out, c_out,
                  stop_out, stopped_out, ans_out):
    n, d = M.shape
    n_ck = ck.size
    for rep in prange(q_out.shape[1]):
        rk = rep_key(seed, np.uint64(rep_offset + rep))
        lk = stream_key(rk, LEARNER_STREAM)
        order = np.full(n, -1, dtype=np.int64)
        alive = np.ones(n, dtype=np.bool_)
        # the running comparison (iv: a, b, r, lev, cq, cap) and the procedure (iv: champ, i, lo, hi, phase, pcap)
        a = 0
        b = 0
        r = 0
        lev = 0
        cq = 0
        cap = 0
        lq0 = 0.0
        new = False
        champ = 0
        i = 0
        lo = 0
        hi = 0
        phase = 0
        pcap = first_cap
        cut = False
        used = 0
        comps = 0
        done = False
        ok = False
        # start (ended = True with the pseudo-result 2 runs the procedure's start)
        ended = True
        s = 2
        check = False
        t = 0
        c = 0
        while True:
            # -- resolve: run the procedure until a level fits its cap or the replication is done
            while True:
                if check:
                    h, m, sweep, extra = _k_level(r, lev, unif, top, d)
                    if cq + 2 * h * m > cap:
                        ended = True
                        s = 0
                    check = False
                if not ended:
                    break
                nxt = False  # the procedure wants its next comparison (next_candidate for the doubling search)
                if code == 0:  # binary insertion sort
                    if s == 2:
                        order[0] = 0
                        i = 1
                        lo = 0
                        hi = 1
                        nxt = True
                    elif s == 0:
                        done = True
                    else:
                        mid = (lo + hi) // 2
                        if s > 0:
                            hi = mid
                        else:
                            lo = mid + 1
                        if lo >= hi:
                            for k in range(i, lo, -1):
                                order[k] = order[k - 1]
                            order[lo] = i
                            i += 1
                            lo = 0
                            hi = i
                            if i >= n:
                                done = True
                                ok = True
                        nxt = not done
                    if nxt:
                        a, b, cap, lq0 = i, order[(lo + hi) // 2], max_q - used, log_inv
                elif code == 1:  # one comparison
                    if s == 2:
                        a, b, cap, lq0 = 0, 1, max_q, log_inv
                        nxt = True
                    else:
                        done = True
                        ok = s != 0
                        champ = 0 if s > 0 else 1
                elif code == 2:  # sequential champion search
                    if s == 2:
                        champ = 0
                        i = 1
                        nxt = True
                    elif s == 0:
                        done = True
                    else:
                        if s > 0:
                            champ = i
                        i += 1
                        if i >= n:
                            done = True
                            ok = True
                        nxt = not done
                    if nxt:
                        a, b, cap, lq0 = i, champ, max_q - used, log_inv
                else:  # max search with doubling caps
                    if s == 2:
                        champ = 0
                        phase = 0
                        pcap = first_cap
                        i = 0
                        nxt = True
                    elif s == 0 and cut:
                        done = True
                    else:
                        if s > 0:
                            alive[champ] = False
                            champ = i
                        elif s < 0:
                            alive[i] = False
                        i += 1
                        nxt = True
                    while nxt:
                        j = i
                        while j < n and (not alive[j] or j == champ):
                            j += 1
                        if j < n:
                            i = j
                            left = max_q - used
                            a, b = j, champ
                            cap = pcap if pcap < left else left
                            lq0 = log_inv + math.log(_PI2_6 * (phase + 1.0) ** 2)
                            cut = left < pcap
                            break
                        phase += 1
                        pcap = 2 * pcap if pcap < _NO_BUDGET // 2 else _NO_BUDGET  # no int64 overflow
                        i = 0
                        n_alive = 0
                        for k in range(n):
                            n_alive += alive[k]
                        if n_alive <= 1:
                            done = True
                            ok = True
                            nxt = False
                if nxt:
                    r = 0
                    lev = 0
                    cq = 0
                    new = True
                check = not done
                ended = False
                s = 0
            if done or t >= horizon:
                break
            # -- one step: one level of the running comparison
            h, m, sweep, extra = _k_level(r, lev, unif, top, d)
            lq = lq0 + extra
            ek = round_key(rk, np.uint64(t))
            kt = round_key(lk, np.uint64(t))
            hh = float(h)
            thr_one = sigma * math.sqrt(4.0 * h * (lq + math.log(m)))
            total = 0.0
            best = 0.0
            best_sign = 0
            for q in range(m):
                if sweep:
                    j = q
                else:
                    j = int(uniform(kt, np.uint64(q)) * d)
                    if j >= d:
                        j = d - 1
                x = hh * (M[a, j] - M[b, j]) + sigma * math.sqrt(2.0 * hh) * normal(ek, q)
                total += x
                z = abs(x) / thr_one
                if not unif and z > 1.0 and z > best:
                    best = z
                    best_sign = 1 if x > 0 else -1
            if new:
                comps += 1
                new = False
            cq += 2 * h * m
            used += 2 * h * m
            zs = abs(total) / (sigma * math.sqrt(4.0 * h * m * lq))
            s = best_sign
            if zs > 1.0 and zs > best:
                s = 1 if total > 0 else -1
            if s == 0:
                lev += 1
                if lev > r:
                    r += 1
                    lev = r if unif else max(r - top, 0)
                check = True
            else:
                ended = True
            t += 1
            while c < n_ck and ck[c] == t:
                q_out[c, rep] = used
                c_out[c, rep] = comps
                c += 1
        while c < n_ck:
            q_out[c, rep] = used
            c_out[c, rep] = comps
            c += 1
        stopped_out[rep] = done
        stop_out[rep] = (t if t > 0 else 1) if done else horizon
        for k in range(n):
            ans_out[rep, k] = -1
        if ok:
            if code == 0:
                for k in range(n):
                    ans_out[rep, k] = order[k]
            else:
                ans_out[rep, 0] = champ


def _supports(learner, env) -> bool:
    return isinstance(env, ExpertTasks) and isinstance(learner.kernel, _QueryKernel)


def _drive(learner, env, horizon, n_reps, seed_u, rep_offset, ckpts):
    ks = learner.kernel
    n, d = env.n_experts, env.n_tasks
    n_ck = ckpts.size
    q_out = np.zeros((n_ck, n_reps))
    c_out = np.zeros((n_ck, n_reps))
    stop = np.zeros(n_reps, dtype=np.int64)
    stopped = np.zeros(n_reps, dtype=np.bool_)
    ans = np.zeros((n_reps, n), dtype=np.int64)
    _query_kernel(np.ascontiguousarray(env.means), float(env.sigma), np.int64(ks.code), bool(ks.uniform),
                  np.int64(math.ceil(math.log2(d)) if d > 1 else 0), np.int64(ks.max_queries),
                  float(ks.log_inv(n, ks.delta)), np.int64(ks.first_cap), np.uint64(seed_u), np.uint64(rep_offset),
                  np.int64(horizon), np.ascontiguousarray(ckpts, dtype=np.int64), q_out, c_out, stop, stopped, ans)
    answer = ans if ks.code == _RANK else ans[:, 0].copy()
    return {"queries": q_out, "comparisons": c_out}, {"stopped": stopped, "stopping_time": stop, "answer": answer}


register_fast_path("numba", "expert-queries", supports=_supports, metrics=("queries", "comparisons"),
                   driver=_drive)


def active_ranking(delta: float = 0.05, *, max_queries: int | None = None, schedule: str = "adaptive") -> Learner:
    r"""Rank experts from noisy queries by binary insertion sort over adaptive comparisons.

    Parameters
    ----------
    delta : float in (0, 1)
        Target error probability of the whole ranking.
    max_queries : int, optional
        Per-replication query budget, at most ``2**62``; a replication that
        exhausts it stops without an answer (``-1``).
    schedule : {"adaptive", "uniform"}
        ``"adaptive"``: the task/repetition schedule below.  ``"uniform"``:
        the non-adaptive baseline that sweeps every task equally often
        (round :math:`r` queries each task :math:`2^r` times and keeps only
        the sum test), which needs about :math:`d^2\Delta^{-2}` queries when
        one task carries the gap.

    Returns
    -------
    Learner
        A procedure with a stopping time for an :class:`ExpertTasks`
        environment (:func:`expert_tasks`; the noise level ``sigma`` the
        thresholds use is the environment's).  ``final["answer"]`` is the
        ranking, best first, shape ``(n_reps, n_experts)`` (``-1`` rows where
        it stopped without one); ``env.correct(answer)`` says which are
        exact; the metrics ``queries`` and ``comparisons`` count the cost.

    Notes
    -----
    Each comparison of experts :math:`a, b` runs rounds :math:`r = 0, 1,
    \dots`; round :math:`r` tries every split of a budget :math:`2^r` into
    :math:`m = 2^{r-\ell}` tasks times :math:`h = 2^\ell` repetitions,
    :math:`\ell = \max(0, r - \lceil\log_2 d\rceil), \dots, r` (with
    :math:`m` capped at :math:`d`, where all tasks are swept instead of
    sampled).  At level :math:`\ell` the tasks are drawn uniformly with
    replacement, and each is queried :math:`h` times for both experts; with
    :math:`D_j` the sum of the :math:`h` paired differences on task
    :math:`j`, the level declares a winner by the sign of

    * the largest :math:`|D_j|` above :math:`\sigma\sqrt{4h(\lambda_r + \ln m)}`
      (a few tasks carry the gap), or
    * :math:`|\sum_j D_j|` above :math:`\sigma\sqrt{4hm\lambda_r}` (the gap is spread),

    with :math:`\lambda_r = \ln(1/\delta_c) + \ln(\pi^2 (r+1)^2 \cdot 2 L_r / 6)`,
    :math:`L_r` the number of levels of round :math:`r` and :math:`\delta_c`
    the comparison's share of :math:`\delta`.  A wrong decision needs a
    :math:`\sqrt 2\sigma\sqrt h`-sub-Gaussian sum to cross its threshold, so
    by union bounds over tasks, tests, levels and rounds
    (:math:`\sum_r 6/(\pi^2 (r+1)^2) = 1`) a comparison errs with probability
    at most :math:`\delta_c`.  Level :math:`\ell` with :math:`m \approx d/s`
    catches a gap :math:`\Delta_{(s)}` carried by :math:`s` tasks once
    :math:`h \gtrsim \lambda/\Delta_{(s)}^2`, which gives the adaptive cost
    :math:`\min_s d/(s\Delta_{(s)}^2)` (up to logarithms) of the paper: about
    :math:`\Delta^{-2}` queries when every task has gap :math:`\Delta`, and
    :math:`d\Delta^{-2}` when one task does.

    The ranking inserts experts one at a time into the sorted list by binary
    search; each of the at most :func:`comparison_budget` comparisons runs at
    :math:`\delta_c = \delta / \text{comparison\_budget}(n)`, so the whole
    ranking is exact with probability at least :math:`1 - \delta`.

    One step of the run is one level (a batch of :math:`2hm` queries); the
    sum of :math:`h` Gaussian queries is drawn by the environment as one
    normal variable with the same law, and the metric ``queries`` counts the
    :math:`2hm` queries it stands for.  The tasks of a sampled level are
    uniform draws ``0 .. m-1`` of the learner's round key.

    *Reconstructed*: the paper's pairwise procedure samples tasks and
    repetitions on a doubling schedule; its exact schedule, thresholds and
    constants were not available here, so the schedule above and its union
    bound are this library's reading.  The guarantees tested are the
    paper's: exact ranking with probability :math:`\ge 1 - \delta`, and query
    counts linear in :math:`\ln(1/\delta)`, :math:`\propto \Delta^{-2}` for
    dense gaps and :math:`\propto d\Delta^{-2}` for a gap on one task, up to
    logarithmic factors.

    References
    ----------
    .. [1] E. M. Saad, N. Verzelen, A. Carpentier, "Active Ranking of Experts
       Based on their Performances in Many Tasks", ICML 2023 (PMLR 202).
       The two-expert comparison and its instance-dependent bound, and the
       ranking by binary insertion sort (Algorithm 3, "Active-ranking");
       theorem numbers not re-checked.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import active_ranking, dense_gap_means, expert_tasks
    >>> env = expert_tasks(dense_gap_means(4, 8, gap=0.5))
    >>> res = sim.run(active_ranking(delta=0.05), env, horizon=10_000, n_reps=50, seed=1)
    >>> env.ranking.tolist(), float(env.correct(res.final["answer"]).mean()), bool(res.final["stopped"].all())
    ([0, 1, 2, 3], 1.0, True)
    """
    delta, max_queries = _check_common(delta, max_queries, schedule)
    params = {"delta": delta, "schedule": schedule}
    if max_queries != _NO_BUDGET:
        params["max_queries"] = max_queries
    return _query_learner(_RANKING, delta, max_queries, schedule, params)


def compare_experts(delta: float = 0.05, *, max_queries: int | None = None, schedule: str = "adaptive") -> Learner:
    r"""The adaptive pairwise comparison of :func:`active_ranking` on two experts.

    Runs on an :class:`ExpertTasks` environment with exactly two experts;
    ``final["answer"]`` is the expert declared better (0 or 1; ``-1`` where
    ``max_queries`` ran out first), and the comparison errs with probability
    at most ``delta``.  Arguments as in :func:`active_ranking`.

    References
    ----------
    .. [1] E. M. Saad, N. Verzelen, A. Carpentier, ICML 2023, the two-expert
       case; theorem numbers not re-checked.

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab import sim
    >>> from expertlab.bandits import compare_experts, expert_tasks
    >>> env = expert_tasks(np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]))
    >>> res = sim.run(compare_experts(), env, horizon=1000, n_reps=10, seed=0)
    >>> env.best, float(env.correct(res.final["answer"]).mean())
    (0, 1.0)
    """
    delta, max_queries = _check_common(delta, max_queries, schedule)
    params = {"delta": delta, "schedule": schedule}
    if max_queries != _NO_BUDGET:
        params["max_queries"] = max_queries
    return _query_learner(_COMPARE, delta, max_queries, schedule, params)


# ---------------------------------------------------------------------------
# instances


def dense_gap_means(n_experts: int, n_tasks: int, gap: float) -> np.ndarray:
    r"""Means with the same gap on every task: :math:`M_{ij} = -i\,\Delta`.

    Expert 0 is the best; consecutive experts differ by ``gap`` on all
    ``n_tasks`` tasks (the dense regime: about :math:`\Delta^{-2}` queries
    per comparison).

    Examples
    --------
    >>> dense_gap_means(3, 2, 0.5).tolist()
    [[0.0, 0.0], [-0.5, -0.5], [-1.0, -1.0]]
    """
    n_experts = check_int(n_experts, "n_experts", minimum=2)
    n_tasks = check_int(n_tasks, "n_tasks")
    gap = check_float(gap, "gap", positive=True)
    return 0.0 - gap * np.repeat(np.arange(n_experts, dtype=np.float64)[:, None], n_tasks, axis=1)


def one_task_gap_means(n_experts: int, n_tasks: int, gap: float, task: int = 0) -> np.ndarray:
    r"""Means that differ on one task only: :math:`M_{ij} = -i\,\Delta\,[j = \text{task}]`.

    Expert 0 is the best; the ranking is visible on task ``task`` alone (the
    sparse regime: about :math:`d\Delta^{-2}` queries per comparison, since
    the informative task must first be found).

    Examples
    --------
    >>> one_task_gap_means(3, 3, 1.0, task=1).tolist()
    [[0.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, -2.0, 0.0]]
    """
    n_experts = check_int(n_experts, "n_experts", minimum=2)
    n_tasks = check_int(n_tasks, "n_tasks")
    gap = check_float(gap, "gap", positive=True)
    task = check_int(task, "task", minimum=0, maximum=n_tasks - 1)
    M = np.zeros((n_experts, n_tasks))
    M[:, task] = 0.0 - gap * np.arange(n_experts, dtype=np.float64)
    return M
