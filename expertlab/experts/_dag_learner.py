r"""Repeated search-and-stop under a budget: the known-distribution policy and the optimistic learner.

Each replication spends a total budget :math:`B` of search cost on a stream
of independent instances of the same :class:`~expertlab.experts.SearchDAG`.
The stream is the environment :func:`search_stream` (feedback kind
``"search"``, unit ``"episode"``: one instance per engine step); the
learners :func:`dag_greedy` (known distribution) and :func:`dag_optimistic`
(unknown distribution) choose a plan for each instance and stop once they
have spent the budget, which the engine records as their stopping time.

The engine's array path advances every replication by one instance per
Python iteration.  A fused Numba kernel (:func:`_kernel`, replications in
parallel with the instance loop inside) is registered as the ``numba`` fast
path of these learner–environment pairs with
:func:`expertlab.sim.register_fast_path`; it does the same arithmetic in the
same order, and draws the hider of instance :math:`k` of replication
:math:`r` from the same environment round key, so the two paths agree.

Protocol of the ``"search"`` feedback
-------------------------------------
``act(state, None, keys) -> (plan, state)`` with ``plan`` an int64
``(n_reps, n_nodes)`` array: a precedence-feasible sequence of distinct
nodes, padded with -1 (at least one node).  ``update`` receives a
:class:`SearchOutcome` ``(found_at, cost)``: the node where the hider was
found (-1 if the plan did not contain it) and the instance's search cost.
The environment's ``spec`` tells the learner the DAG (``spec.dag``; the
known-distribution policy reads its ``prob``, the optimistic learner only
its ``parents`` and ``cost``) and the budget (``spec.budget``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, NamedTuple

import numpy as np
from numba import njit, prange

from .._backend import asnumpy, get_namespace
from .._random import round_key, stream_key, uniform
from .._validation import as_real_array, check_array_size, check_float, check_int
from ..sim._engine import register_fast_path, replication_keys
from ..sim._protocol import EnvSpec, Environment, Learner, Metric
from ._common import check_record
from ._dag_order import best_plans, ideal_table
from ._dag_search import SearchDAG, brute_force_search, greedy_search

__all__ = ["SearchStream", "SearchOutcome", "SearchState", "search_stream", "dag_greedy", "dag_optimistic"]

_HIDER_STREAM = np.uint64(0x8A5CD789635D2DFF)
#: Most nodes a stream's DAG may have: plans are checked with int64 bitmasks (as brute force requires too).
_MAX_NODES = 62


class SearchOutcome(NamedTuple):
    """What a ``"search"`` learner is told after an instance.

    Attributes
    ----------
    found_at : ndarray of int, shape (n_reps,)
        The node where the hider was found, -1 if the plan did not contain it
        (every node of the plan reveals whether the hider was there).
    cost : ndarray, shape (n_reps,)
        The instance's search cost (up to and including the node where the
        hider was found, else the whole plan).
    """

    found_at: Any
    cost: Any


# ---------------------------------------------------------------------------
# the environment


def _instance(env, plan, keys):
    """Hider, ``(hit, found_at, cost)`` of one instance per replication: the reference arithmetic."""
    xp = _ns(keys)
    n_reps = plan.shape[0]
    with np.errstate(over="ignore"):
        u = uniform(stream_key(keys, _HIDER_STREAM), np.uint64(0))
    hider = xp.searchsorted(xp.asarray(env.cum_prob), u, side="right")  # n_nodes: absent
    cost = xp.asarray(env.dag.cost)
    cum = xp.cumulative_sum(xp.where(plan >= 0, cost[xp.maximum(plan, 0)], 0.0), axis=1)
    at = plan == hider[:, None]                                          # at most one True per row
    hit = xp.any(at, axis=1)
    pos = xp.argmax(xp.astype(at, xp.int8), axis=1)
    cost = xp.where(hit, cum[xp.arange(n_reps), pos], cum[:, -1])
    return hider, hit, xp.where(hit, hider, -1), cost


def _ns(a):
    """The array namespace of the array ``a``: NumPy itself for NumPy arrays."""
    return np if isinstance(a, np.ndarray) else get_namespace(a)


def _as_float(b):
    xp = _ns(b)
    return xp.astype(b, xp.float64)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class SearchStream(Environment):
    r"""A stream of independent search-and-stop instances of one DAG, searched under a budget.

    Build it with :func:`search_stream`.  Each engine step is one instance
    (unit ``"episode"``): the hider is drawn at node :math:`v` with
    probability :math:`\mu_v` (absent with probability
    :math:`1 - \sum_v \mu_v`) from the environment's round key, and the
    learner's plan is searched in order until the hider is found or the plan
    is exhausted.  The budget :math:`B` is told to the learners
    (``spec.budget``); they stop once they have spent it.  A run therefore
    needs a horizon of at least ``max_instances`` instances to spend the
    budget in every replication.

    Notes
    -----
    Metrics, by name (``available_metrics()``; a run that names none records
    ``default_metrics``):

    Over the instances a replication has started (while it has not stopped):

    ``found``
        Hiders found.
    ``cost``
        Search cost spent.
    ``regret``
        :math:`r^* \cdot \text{cost} - \text{found}`, with :math:`r^*` the
        optimal renewal rate (``optimal_rate``, brute force over all
        plans): by Wald's identity the optimal plan finds
        :math:`r^*` hiders per unit of cost in expectation.
    ``found_within_budget``
        Hiders found with a total cost of at most :math:`B`;
        ``final["found_by_budget"]``, shape (n_reps, n_budgets), counts those
        found with a total cost of at most each :math:`b_j` of
        ``budgets`` (the policies never look at the remaining budget, so
        this is also the count of a run with budget :math:`b_j`), and
        ``final["regret_by_budget"]`` is :math:`r^* b_j - \text{found}(b_j)`.
    """

    name: str
    dag: SearchDAG
    budget: float
    budgets: np.ndarray
    optimal_rate: float
    cum_prob: np.ndarray
    params: Mapping[str, Any]

    default_metrics = ("found", "cost", "regret", "found_within_budget")

    def __post_init__(self):
        check_record(self.name, self.params)
        if not isinstance(self.dag, SearchDAG):
            raise TypeError(f"dag must be a SearchDAG, got {type(self.dag).__name__}")
        n = self.dag.n_nodes
        if n > _MAX_NODES:
            raise ValueError(f"dag has {n} nodes; a search stream checks plans with int64 bitmasks, so at most "
                             f"{_MAX_NODES}")
        budget = check_float(self.budget, "budget", positive=True)
        budgets = np.array(as_real_array(self.budgets, "budgets", xp=np), dtype=np.float64)
        if (budgets.ndim != 1 or budgets.size < 1 or not np.all(np.isfinite(budgets)) or budgets[0] <= 0
                or np.any(np.diff(budgets) <= 0) or budgets[-1] != budget):
            raise ValueError(f"budgets must be a finite, positive, increasing 1-D array ending at budget={budget}, "
                             f"got {budgets!r}")
        rate = check_float(self.optimal_rate, "optimal_rate", positive=True)
        cum_prob = np.array(as_real_array(self.cum_prob, "cum_prob", xp=np), dtype=np.float64)
        if cum_prob.shape != (n,) or not np.allclose(cum_prob, np.cumsum(self.dag.prob), rtol=0.0, atol=1e-12):
            raise ValueError(f"cum_prob must be the cumulative sum of dag.prob, shape ({n},)")
        budgets.flags.writeable = False
        cum_prob.flags.writeable = False
        for field, value in (("budget", budget), ("budgets", budgets), ("optimal_rate", rate),
                             ("cum_prob", cum_prob)):
            object.__setattr__(self, field, value)

    @property
    def spec(self) -> EnvSpec:
        return EnvSpec(feedback="search", unit="episode", n_actions=self.dag.n_nodes,
                       info={"dag": self.dag, "n_nodes": self.dag.n_nodes, "budget": self.budget})

    @property
    def max_instances(self) -> int:
        """Instances after which every replication has spent the budget: ``ceil(B / min cost)``."""
        return int(math.ceil(self.budget / float(self.dag.cost.min())))

    def reset(self, n_reps, keys, xp):
        """No state: every hider is a function of the round's key."""
        return None

    def observe(self, env_state, t, keys):
        """What the learner sees before acting in step ``t``: ``None`` (it chooses its plan blind)."""
        return None

    def step(self, env_state, plan, t, keys):
        """Step ``t``: search one instance with the learner's plan; the feedback is a :class:`SearchOutcome`."""
        plan = self._check_plan(plan, keys.shape[0], t)
        _, hit, found_at, cost = _instance(self, plan, keys)
        return env_state, SearchOutcome(found_at, cost), {"hit": hit, "cost": cost}

    def _check_plan(self, plan, n_reps, t):
        n = self.dag.n_nodes
        xp = _ns(plan) if hasattr(plan, "__array_namespace__") else np
        plan = xp.asarray(plan)
        if plan.shape != (n_reps, n) or not xp.isdtype(plan.dtype, "integral"):
            raise ValueError(f"a search learner must return an int plan of shape ({n_reps}, {n}), got "
                             f"{plan.dtype} {plan.shape}")
        seen = xp.zeros(n_reps, dtype=xp.int64)
        ended = xp.zeros(n_reps, dtype=xp.bool)
        bad = (plan[:, 0] < 0) | xp.any(plan < -1, axis=1) | xp.any(plan >= n, axis=1)
        pmask = xp.asarray(self._parent_masks())
        for q in range(n):
            v = xp.astype(plan[:, q], xp.int64)
            live = v >= 0
            bit = xp.bitwise_left_shift(xp.ones_like(v), xp.maximum(v, 0))
            need = pmask[xp.clip(v, 0, n - 1)]
            bad = bad | (live & (ended | ((seen & bit) != 0) | ((need & seen) != need)))
            seen = seen | xp.where(live, bit, 0)
            ended = ended | ~live
        if bool(xp.any(bad)):
            r = int(xp.argmax(xp.astype(bad, xp.int8)))  # the first bad replication
            raise ValueError(f"instance {t}: replication {r} returned the plan {asnumpy(plan[r, :]).tolist()}, "
                             "which is not a "
                             "non-empty precedence-feasible sequence of distinct nodes padded with -1")
        return plan

    def _parent_masks(self):
        return np.array([sum(1 << u for u in p) for p in self.dag.parents], dtype=np.int64)

    def available_metrics(self) -> Mapping[str, Metric]:
        """The metrics this environment can record, by name."""
        r_star = self.optimal_rate

        def active(info):
            a = info.get("active")
            return _ns(info["hit"]).ones(info["hit"].shape, dtype=_ns(info["hit"]).bool) if a is None else a

        def count(name, what):
            return Metric(name, lambda n, xp: xp.zeros(n), lambda acc, info, t: acc + what(info), lambda acc: acc)

        def regret_update(acc, info, t):
            a = active(info)
            return (acc[0] + _as_float(info["hit"] & a), acc[1] + _ns(a).where(a, info["cost"], 0.0))

        return {
            "found": count("found", lambda i: _as_float(i["hit"] & active(i))),
            "cost": count("cost", lambda i: _ns(i["cost"]).where(active(i), i["cost"], 0.0)),
            "regret": Metric("regret", lambda n, xp: (xp.zeros(n), xp.zeros(n)), regret_update,
                             lambda acc: r_star * acc[1] - acc[0]),
            "found_within_budget": _budget_metric(self),
        }


def _budget_metric(env) -> Metric:
    budgets, r_star = env.budgets, env.optimal_rate

    def init(n_reps, xp):
        return (xp.zeros(n_reps), xp.zeros((n_reps, budgets.size), dtype=xp.int64))

    def update(acc, info, t):
        spent, found = acc
        xp = _ns(spent)
        a = info.get("active")
        a = xp.ones(spent.shape, dtype=xp.bool) if a is None else a
        t_find = spent + info["cost"]
        within = (a & info["hit"])[:, None] & (t_find[:, None] <= xp.asarray(budgets)[None, :])
        return (xp.where(a, t_find, spent), found + xp.astype(within, xp.int64))

    def final(acc):
        xp = _ns(acc[1])
        return {"found_by_budget": acc[1], "regret_by_budget": r_star * xp.asarray(budgets)[None, :] - _as_float(acc[1])}

    return Metric("found_within_budget", init, update, lambda acc: _as_float(acc[1][:, -1]), final)


def search_stream(dag: SearchDAG, budget: float = 1000.0, n_budgets: int = 20) -> SearchStream:
    r"""Independent instances of ``dag`` searched until a total budget of search cost is spent.

    Parameters
    ----------
    dag : SearchDAG
    budget : float > 0
        Total search cost :math:`B`, told to the learners (``spec.budget``).
    n_budgets : int >= 2
        Log-spaced budgets :math:`b_1 < \dots < b_m = B` at which
        ``final["found_by_budget"]`` counts the hiders found (from
        :math:`B / 1000`, or the least node cost if larger, to :math:`B`).

    Returns
    -------
    SearchStream
        An environment with feedback kind ``"search"`` and unit ``"episode"``.

    Examples
    --------
    >>> from expertlab.experts import random_out_forest, search_stream
    >>> env = search_stream(random_out_forest(5, seed=0), budget=200.0, n_budgets=8)
    >>> env.budgets.shape, env.budgets[-1], env.spec.unit
    ((8,), np.float64(200.0), 'episode')
    """
    if not isinstance(dag, SearchDAG):
        raise TypeError(f"dag must be a SearchDAG, got {type(dag).__name__}")
    budget = check_float(budget, "budget", positive=True)
    n_budgets = check_int(n_budgets, "n_budgets", minimum=2)
    check_array_size((n_budgets,), "n_budgets")
    cost = np.asarray(dag.cost)
    lo = max(budget / 1000.0, float(cost.min()))
    budgets = np.unique(np.geomspace(min(lo, budget), budget, n_budgets))
    budgets[-1] = budget
    budgets.flags.writeable = False
    cum_prob = np.cumsum(np.asarray(dag.prob))
    cum_prob.flags.writeable = False
    try:
        r_star = float(brute_force_search(dag).rate)
    except ValueError as err:  # too many nodes or initial sets for the exact optimal rate
        raise ValueError(f"dag is too large for search_stream, which computes the optimal rate by brute force: "
                         f"{err}") from None
    return SearchStream("search_stream", dag, budget, budgets, r_star, cum_prob,
                        dict(dag=dag.name, n_nodes=dag.n_nodes, budget=budget, n_budgets=n_budgets))


# ---------------------------------------------------------------------------
# the learners


class SearchState(NamedTuple):
    """State of :func:`dag_greedy` and :func:`dag_optimistic` (leading axis: replications).

    Attributes
    ----------
    k : ndarray of int, shape (n_reps,)
        Instances started.
    spent : ndarray, shape (n_reps,)
        Search cost spent; the learner is done once it reaches ``budget``.
    plan : ndarray of int, shape (n_reps, n_nodes)
        The plan searched in each instance (padded with -1).
    pulls, hits : ndarray, shape (n_reps, n_nodes)
        :math:`N_v` and :math:`H_v` (the optimistic learner only; zeros otherwise).
    next_plan : ndarray of int, shape (n_reps,)
        The instance at which the optimistic plan is recomputed.
    budget : float
    cost : ndarray, shape (n_nodes,)
        The DAG's search costs.
    table : tuple or None
        The initial closed sets (ideals) of the DAG, for the optimistic plan's dynamic programme.
    """

    k: Any
    spent: Any
    plan: Any
    pulls: Any
    hits: Any
    next_plan: Any
    budget: float
    cost: Any
    table: Any


class _SearchKernel(NamedTuple):
    """Settings of a search learner read by the fused Numba kernel."""

    learn: bool
    stop: bool
    bonus: float
    replan_every: int


def _check_spec(spec, who):
    if spec.feedback != "search":
        raise ValueError(f"{who} runs on search environments (expertlab.experts.search_stream), got feedback "
                         f"{spec.feedback!r}")


def _fixed_plan(dag, stop):
    g = greedy_search(dag)
    seq = g.plan if stop else g.order
    fixed = np.full(dag.n_nodes, -1, dtype=np.int64)
    fixed[:len(seq)] = seq
    return fixed


def _init_state(spec, n_reps, plan, table, xp):
    n_reps = check_int(n_reps, "n_reps")
    n = spec.n_nodes
    return SearchState(k=xp.zeros(n_reps, dtype=xp.int64), spent=xp.zeros(n_reps),
                       plan=xp.asarray(xp.broadcast_to(xp.asarray(plan), (n_reps, n)), copy=True),
                       pulls=xp.zeros((n_reps, n)), hits=xp.zeros((n_reps, n)),
                       next_plan=xp.ones(n_reps, dtype=xp.int64), budget=float(spec.budget),
                       cost=xp.asarray(spec.dag.cost), table=table)


def _update(state, plan, outcome, learn):
    """Fold one instance into the replications that had not spent their budget before it."""
    xp = _ns(state.spent)
    active = state.spent < state.budget
    pulls, hits = state.pulls, state.hits
    if learn:
        n = plan.shape[1]
        node = xp.arange(n)
        inplan = xp.any(plan[:, :, None] == node[None, None, :], axis=1)  # padding (-1) is no node
        pulls = pulls + _as_float(inplan & active[:, None])
        hits = hits + _as_float(inplan & active[:, None] & (node[None, :] == outcome.found_at[:, None]))
    return state._replace(k=state.k + xp.astype(active, xp.int64),
                          spent=xp.where(active, state.spent + outcome.cost, state.spent), pulls=pulls, hits=hits)


def _done(state):
    return state.spent >= state.budget


def _answer(state):
    return state.plan


def dag_greedy(stop: bool = True) -> Learner:
    r"""The known-distribution policy: the greedy-by-density order with the optimal stop, every instance.

    Parameters
    ----------
    stop : bool
        ``True``: search the prefix of largest rate of the greedy order
        (:func:`~expertlab.experts.greedy_search`'s ``plan``).  ``False``:
        search the whole greedy order (``order``), never giving up on an
        instance early: the baseline that shows what stopping buys.

    Returns
    -------
    Learner
        A ``"search"`` learner with a stopping time (it is done once it has
        spent ``spec.budget``; its ``answer`` is the plan), deterministic,
        with a fused Numba fast path.

    Notes
    -----
    By the renewal-reward theorem a stationary plan :math:`\sigma` finds
    :math:`r(\sigma) = F(\sigma)/C(\sigma)` hiders per unit of cost in the
    long run, and by Wald's identity a run with budget :math:`b` finds
    between :math:`r b - 1` and :math:`r (b + C_{\max})` hiders in
    expectation (:math:`C_{\max}` the plan's full cost), so even the optimal
    policy's regret :math:`r^* b - \text{found}(b)` is :math:`O(1)`, not 0.
    On series-parallel DAGs (out-forests included) the greedy plan's rate is
    the optimum :math:`r^*`.

    References
    ----------
    .. [1] P. Perrault, V. Perchet, M. Valko, "Finding the bandit in a graph:
       Sequential search-and-stop", AISTATS 2019 (the known-distribution
       greedy strategy, section number not re-checked).
    .. [2] J. B. Sidney, "Decomposition algorithms for single-machine
       sequencing with precedence relations and deferral costs", Operations
       Research 23(2), 1975.

    [validated-rates]

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import dag_greedy, random_out_forest, search_stream
    >>> env = search_stream(random_out_forest(5, seed=0), budget=200.0)
    >>> res = sim.run(dag_greedy(), env, horizon=env.max_instances, n_reps=50, seed=1)
    >>> res.final["found_by_budget"].shape, bool(res.final["stopped"].all())
    ((50, 20), True)
    >>> bool(np.all(np.diff(res.final["found_by_budget"], axis=1) >= 0))
    True
    """
    if not isinstance(stop, (bool, np.bool_)):
        raise TypeError(f"stop must be a bool, got {type(stop).__name__}")
    stop = bool(stop)

    def init(spec, n_reps, keys=None, xp=np):
        _check_spec(spec, "dag_greedy")
        return _init_state(spec, n_reps, _fixed_plan(spec.dag, stop), None, xp)

    def act(state, obs=None, keys=None):
        return state.plan, state

    def update(state, plan, outcome, keys=None):
        return _update(state, plan, outcome, False)

    return Learner(name="dag_greedy", feedback="search", init=init, act=act, update=update, params={"stop": stop},
                   kernel=_SearchKernel(False, stop, 0.0, 1), done=_done, answer=_answer, doc=dag_greedy.__doc__,
                   check_spec=lambda spec: _check_spec(spec, "dag_greedy"))


def dag_optimistic(bonus: float = 1.5, *, replan_every: int = 1) -> Learner:
    r"""The optimistic learner for an unknown hider distribution: plan with upper confidence bounds.

    Parameters
    ----------
    bonus : float > 0
        :math:`\alpha` of the confidence radius.
    replan_every : int >= 1
        The optimistic plan is recomputed every ``replan_every`` instances.

    Returns
    -------
    Learner
        A ``"search"`` learner with a stopping time (done once it has spent
        ``spec.budget``; its ``answer`` is its last plan), deterministic,
        with a fused Numba fast path.  It reads only the DAG's ``parents``
        and ``cost``, not the hider law.

    Notes
    -----
    Feedback.  Since the hider sits at one node, every node :math:`v` of the
    plan chosen for an instance reveals :math:`1\{\text{hider at } v\}`: it is
    either where the hider was found, or it is known to be empty (the search
    stopped at another node, or it ended without finding).  With
    :math:`N_v` the instances whose plan contained :math:`v` and :math:`H_v`
    those with the hider at :math:`v`, :math:`\hat\mu_v = H_v / N_v` is the
    mean of i.i.d. Bernoulli(:math:`\mu_v`) observations.  The optimistic
    learner plans with

    .. math::

        \bar\mu_v = \min\Big(1,\ \hat\mu_v + \sqrt{\alpha \ln k / N_v}\Big)
        \quad (\bar\mu_v = 1 \text{ if } N_v = 0),

    choosing the plan of largest rate
    :math:`\min(1, \bar\mu(\sigma)) / \sum_i c_{\sigma_i}(1 - \bar\mu(\sigma_{<i}))_+`.
    The rate is non-decreasing in every :math:`\mu_v`, so this is an
    upper-confidence index (the combinatorial semi-bandit template of Chen,
    Wang and Yuan; their radius is :math:`\alpha = 3/2`).

    Reconstructed or simplified relative to the paper: the optimistic
    learner is rebuilt as this plug-in rule (the paper's exact confidence
    terms are not reproduced); the optimistic plan is found by the exact
    dynamic programme over ideals of :func:`~expertlab.experts.brute_force_search`,
    batched over replications (small DAGs only; on series-parallel DAGs its
    rate equals the greedy one); the costs are deterministic and known (the
    paper also allows random costs).  The regret is measured against
    :math:`r^* b` (see :func:`dag_greedy` for why even the optimal policy's
    regret is :math:`O(1)`, not 0).

    [validated-rates]

    References
    ----------
    .. [1] P. Perrault, V. Perchet, M. Valko, "Finding the bandit in a graph:
       Sequential search-and-stop", AISTATS 2019 (the optimistic learner for
       an unknown distribution and its regret bound; theorem number not
       re-checked).
    .. [2] W. Chen, Y. Wang, Y. Yuan, "Combinatorial multi-armed bandit:
       general framework and applications", ICML 2013 (CUCB confidence radius).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import dag_optimistic, search_dag, search_stream
    >>> env = search_stream(search_dag([[], [0], [0]], [0.6, 0.1, 0.1], [1.0, 3.0, 3.0]), budget=500.0)
    >>> res = sim.run(dag_optimistic(), env, horizon=env.max_instances, n_reps=20, seed=2)
    >>> res.final["answer"][0].tolist()   # learnt to stop after the root
    [0, -1, -1]
    """
    bonus = check_float(bonus, "bonus", positive=True)
    replan_every = check_int(replan_every, "replan_every")

    def init(spec, n_reps, keys=None, xp=np):
        _check_spec(spec, "dag_optimistic")
        return _init_state(spec, n_reps, np.full(spec.n_nodes, -1, dtype=np.int64), ideal_table(spec.dag.parents),
                           xp)

    def act(state, obs=None, keys=None):
        xp = _ns(state.spent)
        k = state.k + 1
        replan = (k >= state.next_plan) & (state.spent < state.budget)
        if not bool(xp.any(replan)):
            return state.plan, state
        with np.errstate(divide="ignore", invalid="ignore"):
            log_k = xp.log(xp.astype(k, xp.float64))
            ucb = xp.where(state.pulls > 0,
                           state.hits / state.pulls + xp.sqrt(bonus * log_k[:, None] / state.pulls), 1.0)
        plans, _ = best_plans(state.table, xp.minimum(ucb, 1.0), state.cost)
        plan = xp.where(replan[:, None], plans, state.plan)
        return plan, state._replace(plan=plan, next_plan=xp.where(replan, k + replan_every, state.next_plan))

    def update(state, plan, outcome, keys=None):
        return _update(state, plan, outcome, True)

    return Learner(name="dag_optimistic", feedback="search", init=init, act=act, update=update,
                   params={"bonus": bonus, "replan_every": replan_every},
                   kernel=_SearchKernel(True, True, bonus, replan_every), done=_done, answer=_answer,
                   doc=dag_optimistic.__doc__, check_spec=lambda spec: _check_spec(spec, "dag_optimistic"))


# ---------------------------------------------------------------------------
# the fused Numba fast path


@njit(parallel=True, nogil=True, cache=True)
def _kernel(rkeys, salt, cum_mu, cost, masks, members, pred_v, pred_j, budget, budgets, bonus, replan_every,
            fixed, learn, horizon, ckpts):
    """The engine's loop for one replication per ``prange`` iteration: instances until the budget is spent.

    Returns the metrics ``found``, ``cost`` and ``found_within_budget`` at the checkpoints (n_ck, n_reps),
    the final ``found_by_budget`` (n_budgets, n_reps), the stopping times, the stopped flags and the plans.
    """
    n_reps, n, n_id, width = rkeys.size, cost.size, masks.size, pred_v.shape[1]
    n_ck, n_b = ckpts.size, budgets.size
    order = np.argsort(masks)
    sorted_masks = masks[order]
    found_ck = np.zeros((n_ck, n_reps))
    cost_ck = np.zeros((n_ck, n_reps))
    within_ck = np.zeros((n_ck, n_reps))
    found_by = np.zeros((n_b, n_reps), dtype=np.int64)
    stop_time = np.full(n_reps, horizon, dtype=np.int64)
    stopped = np.zeros(n_reps, dtype=np.bool_)
    plans = np.empty((n_reps, n), dtype=np.int64)
    for r in prange(n_reps):
        plan = fixed.copy()
        pulls, hits, ub = np.zeros(n), np.zeros(n), np.zeros(n)
        mass, best = np.zeros(n_id), np.zeros(n_id)
        last = np.full(n_id, -1, dtype=np.int64)
        spent, found, k, next_plan, c_idx = 0.0, 0, 0, 1, 0
        for t in range(horizon):
            if spent >= budget:
                break
            k += 1
            if learn and k >= next_plan:
                for v in range(n):
                    ub[v] = 1.0
                    if pulls[v] > 0:
                        ub[v] = min(hits[v] / pulls[v] + np.sqrt(bonus * np.log(k) / pulls[v]), 1.0)
                for i in range(1, n_id):                 # the dynamic programme of best_plans
                    mass[i] = mass[pred_j[i, 0]] + ub[pred_v[i, 0]]
                    best[i] = np.inf
                    for q in range(width):
                        v = pred_v[i, q]
                        if v < 0:
                            break
                        j = pred_j[i, q]
                        cand = best[j] + cost[v] * max(1.0 - mass[j], 0.0)
                        if cand < best[i]:
                            best[i] = cand
                            last[i] = v
                rates = np.empty(n_id - 1)
                for i in range(1, n_id):
                    rates[i - 1] = min(mass[i], 1.0) / best[i]
                top, pick = rates.max(), 1
                for i in range(1, n_id):
                    if rates[i - 1] >= top * (1 - 1e-12):
                        pick = i
                        break
                size = 0
                for v in range(n):
                    size += members[pick, v]
                plan[:] = -1
                m, idx = masks[pick], pick
                for step in range(size):
                    v = last[idx]
                    plan[size - 1 - step] = v
                    m = m ^ (np.int64(1) << v)
                    idx = order[np.searchsorted(sorted_masks, m)]
                next_plan = k + replan_every
            u = uniform(stream_key(round_key(rkeys[r], np.uint64(t)), salt), np.uint64(0))
            hider = np.searchsorted(cum_mu, u, side="right")
            c, hit = 0.0, False
            for q in range(n):
                v = plan[q]
                if v < 0:
                    break
                if learn:
                    pulls[v] += 1.0
                    if v == hider:
                        hits[v] += 1.0
                if not hit:
                    c += cost[v]
                    hit = v == hider
            t_find = spent + c
            if hit:
                found += 1
                for j in range(n_b):
                    if t_find <= budgets[j]:
                        found_by[j, r] += 1
            spent = t_find
            if c_idx < n_ck and t + 1 == ckpts[c_idx]:
                found_ck[c_idx, r], cost_ck[c_idx, r], within_ck[c_idx, r] = found, spent, found_by[n_b - 1, r]
                c_idx += 1
            if spent >= budget:
                stopped[r] = True
                stop_time[r] = t + 1
        while c_idx < n_ck:   # stopped: the metrics keep their last values
            found_ck[c_idx, r], cost_ck[c_idx, r], within_ck[c_idx, r] = found, spent, found_by[n_b - 1, r]
            c_idx += 1
        plans[r, :] = plan
    return found_ck, cost_ck, within_ck, found_by, stop_time, stopped, plans


_FAST_METRICS = ("found", "cost", "regret", "found_within_budget")


def _supports(learner, env) -> bool:
    return isinstance(env, SearchStream) and isinstance(learner.kernel, _SearchKernel)


def _driver(learner, env, horizon, n_reps, seed_u, rep_offset, ckpts):
    spec = learner.kernel
    dag = env.dag
    n = dag.n_nodes
    if spec.learn:
        masks, members, pred_v, pred_j, _ = ideal_table(dag.parents)
        fixed = np.full(n, -1, dtype=np.int64)
    else:   # a one-ideal table: the dynamic programme is never run
        masks, members = np.zeros(1, dtype=np.int64), np.zeros((1, n), dtype=bool)
        pred_v, pred_j = np.full((1, 1), -1, dtype=np.int64), np.zeros((1, 1), dtype=np.int64)
        fixed = _fixed_plan(dag, spec.stop)
    rk, _ = replication_keys(seed_u, rep_offset, n_reps)
    found, cost, within, found_by, stop_time, stopped, plans = _kernel(
        rk, _HIDER_STREAM, np.ascontiguousarray(env.cum_prob), np.ascontiguousarray(dag.cost, dtype=np.float64),
        masks, members.astype(np.int64), pred_v, pred_j, float(env.budget), np.ascontiguousarray(env.budgets),
        float(spec.bonus), int(spec.replan_every), fixed, bool(spec.learn), int(horizon),
        np.ascontiguousarray(ckpts, dtype=np.int64))
    r_star = env.optimal_rate
    metrics = {"found": found, "cost": cost, "regret": r_star * cost - found, "found_within_budget": within}
    final = {"found_by_budget": found_by.T.copy(), "regret_by_budget": r_star * env.budgets[None, :] - found_by.T,
             "stopped": stopped, "stopping_time": stop_time, "answer": plans}
    return metrics, final


register_fast_path("numba", "search-and-stop", supports=_supports, metrics=_FAST_METRICS, driver=_driver)
