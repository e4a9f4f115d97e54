r"""Exact solvers of the assignment LP, with dual prices and optimality certificates.

:func:`solve_exact` solves the routing problem of an
:class:`~expertlab.balance.AssignmentProblem` by HiGHS (scipy),
column-replicated linear assignment (scipy, ``k = 1``), min-cost flow
(OR-Tools, optional) or the dual LP in cvxpy, and returns an
:class:`AssignmentResult` whose certificates (primal and dual residuals,
complementary slackness, duality gap) are recomputed here from the returned
primal and dual vectors, never taken from a solver's report.
"""

from __future__ import annotations

import dataclasses
import importlib.util

import numpy as np

from .._validation import check_in
from ._problem import AssignmentProblem

__all__ = ["AssignmentResult", "solve_exact", "METHODS"]

#: Methods of :func:`solve_exact`.
METHODS = ("auto", "highs", "assignment", "flow", "cvxpy")

#: ``auto`` uses HiGHS up to this many variables ``n_tokens * n_experts``.
AUTO_HIGHS_MAX = 20_000


@dataclasses.dataclass(frozen=True, eq=False)
class AssignmentResult:
    r"""Solution of the assignment LP with its dual and certificates.

    Attributes
    ----------
    assignment : ndarray, shape (n_tokens, n_experts)
        Optimal routing :math:`x`: int8 0/1 when ``integral`` (always the case
        for integer capacities), otherwise the float64 LP optimum.
    objective : float
        Primal value :math:`\sum_{t,i} s_{t,i} x_{t,i}`.
    dual_objective : float
        :math:`k \sum_t u_t + \sum_i C_i p_i + \sum_{t,i} w_{t,i}`.
    prices : ndarray, shape (n_experts,)
        Dual prices :math:`p \ge 0` of the capacity constraints.
    token_duals : ndarray, shape (n_tokens,)
        Duals :math:`u` of the constraints :math:`\sum_i x_{t,i} = k`.
    bound_duals : ndarray, shape (n_tokens, n_experts)
        Duals :math:`w \ge 0` of the bounds :math:`x_{t,i} \le 1`.
    primal_residual : float
        Largest violation of :math:`\sum_i x_{t,i} = k`,
        :math:`\sum_t x_{t,i} \le C_i`, :math:`0 \le x \le 1`.
    dual_residual : float
        Largest violation of :math:`u_t + p_i + w_{t,i} \ge s_{t,i}`,
        :math:`p \ge 0`, :math:`w \ge 0`.
    complementary_slackness : float
        Largest of :math:`|x_{t,i}(u_t + p_i + w_{t,i} - s_{t,i})|`,
        :math:`|p_i (C_i - \sum_t x_{t,i})|` and :math:`|w_{t,i}(1 - x_{t,i})|`.
    duality_gap : float
        ``(dual_objective - objective) / scale`` with
        ``scale = max(|dual_objective|, k * sum_t max_i |s_{t,i}|)`` (the
        largest value the objective can take in absolute value; 1 if zero).
        Non-negative up to rounding by weak duality.
    integral : bool
        Whether ``assignment`` is 0/1.
    method : str
        The method actually used (``auto`` resolved).
    message : str
    capacity : ndarray, shape (n_experts,), or None
        The problem's capacities :math:`C_i` (drawn by :meth:`plot`).
    """

    assignment: np.ndarray
    objective: float
    dual_objective: float
    prices: np.ndarray
    token_duals: np.ndarray
    bound_duals: np.ndarray
    primal_residual: float
    dual_residual: float
    complementary_slackness: float
    duality_gap: float
    integral: bool
    method: str
    message: str
    capacity: np.ndarray | None = None

    def plot(self, ax=None, *, title: str = ""):
        """Tokens per expert of the optimal routing, with the capacities and the balanced load.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Default: new axes on a standalone figure (no pyplot state).
        title : str

        Returns
        -------
        matplotlib.axes.Axes
            Bars: :math:`\\sum_t x_{t,i}`; red: the capacities; dashed: the
            mean load :math:`N k / E`.

        Examples
        --------
        >>> import numpy as np
        >>> from expertlab.balance import AssignmentProblem, solve_exact
        >>> res = solve_exact(AssignmentProblem([[1.0, 0.0], [0.9, 0.0], [0.8, 0.2]], k=1, capacity=2))
        >>> ax = res.plot()
        >>> [float(b.get_height()) for b in ax.patches]
        [2.0, 1.0]
        """
        from ..sim._plots import plot_loads

        loads = np.asarray(self.assignment, dtype=np.float64).sum(axis=0)
        return plot_loads(loads, ax=ax, capacity=self.capacity, title=title)

    def __repr__(self) -> str:
        return (f"AssignmentResult(method={self.method!r}, objective={self.objective:.12g}, "
                f"duality_gap={self.duality_gap:.3g}, primal_residual={self.primal_residual:.3g}, "
                f"dual_residual={self.dual_residual:.3g}, "
                f"complementary_slackness={self.complementary_slackness:.3g}, integral={self.integral})")


# -- certificates -------------------------------------------------------------


def _complete_dual(s, p, k):
    """Best ``u, w`` for given prices: ``u_t`` = k-th largest of ``s_t - p``, ``w = (s - p - u)_+``."""
    v = s - p
    e = s.shape[1]
    u = np.partition(v, e - k, axis=1)[:, e - k]
    w = np.maximum(v - u[:, None], 0.0)
    return u, w


def _result(problem, x, u, p, w, integral, method, message):
    s, k, cap = problem.scores, problem.k, problem.capacity
    xf = np.asarray(x, dtype=np.float64)
    load = xf.sum(axis=0)
    primal_res = max(
        float(np.abs(xf.sum(axis=1) - k).max()),
        float(np.maximum(load - cap, 0.0).max()),
        float(np.maximum(-xf, 0.0).max()),
        float(np.maximum(xf - 1.0, 0.0).max()),
    )
    red = u[:, None] + p[None, :] + w - s  # >= 0 when dual feasible
    dual_res = max(float(np.maximum(-red, 0.0).max()), float(np.maximum(-p, 0.0).max()),
                   float(np.maximum(-w, 0.0).max()))
    cs = max(float(np.abs(xf * red).max()), float(np.abs(p * (cap - load)).max()),
             float(np.abs(w * (1.0 - xf)).max()))
    objective = float(np.einsum("ti,ti->", s, xf))
    dual_obj = float(k * u.sum() + p @ cap + w.sum())
    scale = max(abs(dual_obj), k * float(np.abs(s).max(axis=1).sum()))
    gap = (dual_obj - objective) / (scale if scale > 0 else 1.0)
    if integral:
        x = np.rint(xf).astype(np.int8)
    x.flags.writeable = False
    cap = np.array(np.broadcast_to(cap, p.shape), dtype=np.float64)
    for a in (p, u, w, cap):
        a.flags.writeable = False
    return AssignmentResult(assignment=x, objective=objective, dual_objective=dual_obj, prices=p,
                            token_duals=u, bound_duals=w, primal_residual=primal_res,
                            dual_residual=dual_res, complementary_slackness=cs, duality_gap=float(gap),
                            integral=bool(integral), method=method, message=message,
                            capacity=cap)


# -- prices of an integral routing: shortest paths on the expert graph ---------


def _exchange_costs(s, x):
    """``c[i, j] = min_t {s_ti - s_tj : x_ti = 1, x_tj = 0}`` (inf when no such token)."""
    n_experts = s.shape[1]
    c = np.full((n_experts, n_experts), np.inf)
    on = x.astype(bool)
    for i in range(n_experts):
        rows = np.flatnonzero(on[:, i])
        if rows.size == 0:
            continue
        diff = s[rows, i][:, None] - s[rows]
        diff[on[rows]] = np.inf
        c[i] = diff.min(axis=0)
    return c


def _bellman_ford(weights, tol):
    """Shortest distances from a virtual source with 0-arcs to every node.

    Returns ``(d, cycle)``: ``cycle`` is ``None`` or a list of nodes of a
    negative cycle (in path order).
    """
    n = weights.shape[0]
    d = np.zeros(n)
    pred = np.full(n, -1)
    for it in range(n + 1):
        cand = d[:, None] + weights
        arg = cand.argmin(axis=0)
        best = cand[arg, np.arange(n)]
        better = best < d - tol
        if not better.any():
            return d, None
        d = np.where(better, best, d)
        pred = np.where(better, arg, pred)
    # still relaxing after n + 1 rounds: a negative cycle; find one in the predecessor graph
    for start in np.flatnonzero(better):
        seen = {}
        v = int(start)
        while v >= 0 and v not in seen:
            seen[v] = len(seen)
            v = int(pred[v])
        if v >= 0:
            path = list(seen)
            cycle = path[seen[v]:]
            cycle.reverse()  # pred points backwards; return the cycle in arc order
            return d, cycle
    return d, None


def _prices_from_routing(problem, x, max_cancel=None):
    r"""Minimal optimal prices of an integral routing, cancelling improving cycles first.

    The prices must make every chosen set a top-k set of ``s_t - p``
    (``p_j - p_i >= s_tj - s_ti`` when ``x_ti = 1, x_tj = 0``), be
    non-negative and vanish on experts below capacity.  These are difference
    constraints on ``q = -p``, solved by Bellman-Ford over the ``E + 1`` nodes
    experts plus a root.  A negative cycle is an improving exchange of tokens
    along the cycle; it is applied and the search repeated.
    """
    s, cap = problem.scores, problem.capacity
    n_tokens, n_experts = s.shape
    x = np.array(x, dtype=np.int8)
    scale = float(np.abs(s).max()) or 1.0
    tol = 1e-13 * scale
    root = n_experts
    n_cancel = 0
    max_cancel = 10 * (n_experts + 1) ** 2 if max_cancel is None else max_cancel
    while True:
        wgt = np.full((n_experts + 1, n_experts + 1), np.inf)
        wgt[:n_experts, :n_experts] = _exchange_costs(s, x)
        np.fill_diagonal(wgt, np.inf)
        wgt[root, :n_experts] = 0.0  # q_i <= 0: p_i >= 0
        below = x.sum(axis=0) < cap - 1e-9
        wgt[np.flatnonzero(below), root] = 0.0  # p_i <= 0 where expert i has room
        wgt[root, root] = np.inf
        d, cycle = _bellman_ford(wgt, tol)
        if cycle is None:
            break
        weight = sum(wgt[a, b] for a, b in zip(cycle, cycle[1:] + cycle[:1]))
        if not weight < -tol or n_cancel >= max_cancel:
            msg = f"stopped after {n_cancel} exchanges; a cycle of weight {weight:.3g} remains"
            return x, np.maximum(-(d[:n_experts] - d[root]), 0.0), n_cancel, msg
        for a, b in zip(cycle, cycle[1:] + cycle[:1]):
            if a == root or b == root:
                continue
            cand = np.where((x[:, a] == 1) & (x[:, b] == 0), s[:, a] - s[:, b], np.inf)
            t = int(cand.argmin())
            x[t, a], x[t, b] = 0, 1
        n_cancel += 1
    p = -(d[:n_experts] - d[root])
    return x, np.maximum(p, 0.0), n_cancel, ""


def _integral_result(problem, x, method, message):
    x, p, n_cancel, warn = _prices_from_routing(problem, x)
    u, w = _complete_dual(problem.scores, p, problem.k)
    parts = [message]
    if n_cancel:
        parts.append(f"{n_cancel} improving token exchange(s) applied after the solver")
    if warn:
        parts.append(warn)
    return _result(problem, x, u, p, w, True, method, "; ".join(q for q in parts if q))


# -- methods -------------------------------------------------------------------


def _constraint_matrices(n_tokens, n_experts):
    import scipy.sparse as sp  # imported here (and scipy.optimize below): scipy is slow to import

    rows = sp.kron(sp.eye(n_tokens, format="csr"), np.ones((1, n_experts)), format="csr")
    cols = sp.kron(np.ones((1, n_tokens)), sp.eye(n_experts, format="csr"), format="csr")
    return rows, cols


def _highs_primal(problem):
    s, k, cap = problem.scores, problem.k, problem.capacity
    n_tokens, n_experts = s.shape
    a_eq, a_ub = _constraint_matrices(n_tokens, n_experts)
    from scipy.optimize import linprog

    res = linprog(-s.ravel(), A_ub=a_ub, b_ub=cap, A_eq=a_eq, b_eq=np.full(n_tokens, float(k)),
                  bounds=(0.0, 1.0), method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on a feasible assignment LP: {res.message}")
    return res


def _split_integral(problem, x):
    """``(x, integral)``: round to 0/1 when within 1e-9 (always so for vertices with integer capacities)."""
    xr = np.rint(x)
    if np.abs(x - xr).max() <= 1e-9:
        return xr, True
    return np.clip(x, 0.0, 1.0), False


def _solve_highs(problem):
    n_tokens, n_experts = problem.scores.shape
    res = _highs_primal(problem)
    x, integral = _split_integral(problem, res.x.reshape(n_tokens, n_experts))
    # linprog minimises -s.x; its marginals are derivatives of that minimum
    u = -np.asarray(res.eqlin.marginals, dtype=np.float64)
    p = -np.asarray(res.ineqlin.marginals, dtype=np.float64)
    w = -np.asarray(res.upper.marginals, dtype=np.float64).reshape(n_tokens, n_experts)
    return _result(problem, x, u, p, w, integral, "highs", f"HiGHS: {res.message}")


def _require_integral(problem, method):
    if not problem.integral_capacity:
        raise ValueError(f"capacity must be integers for method={method!r} (got "
                         f"{problem.capacity[:4].tolist()}...); use method='highs' for fractional capacities")


def _solve_assignment(problem):
    if problem.k != 1:
        raise ValueError(f"k must be 1 for method='assignment', got k={problem.k}; use 'flow' or 'highs'")
    _require_integral(problem, "assignment")
    s = problem.scores
    n_tokens, n_experts = s.shape
    reps = np.minimum(problem.capacity, n_tokens).astype(np.int64)
    cols = np.repeat(np.arange(n_experts), reps)
    from scipy.optimize import linear_sum_assignment

    row, col = linear_sum_assignment(s[:, cols], maximize=True)
    x = np.zeros((n_tokens, n_experts), dtype=np.int8)
    x[row, cols[col]] = 1
    return _integral_result(problem, x, "assignment",
                            f"linear_sum_assignment on {n_tokens} x {cols.size} replicated columns")


#: OR-Tools scales costs by the node count internally; keep |cost| * (nodes + 1) and the total in int64.
_INT64_SAFE = 2**62


def _solve_flow(problem):
    _require_integral(problem, "flow")
    try:
        from ortools.graph.python import min_cost_flow
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("method='flow' needs OR-Tools: pip install ortools "
                          "(or use method='highs')") from None
    s, k = problem.scores, problem.k
    n_tokens, n_experts = s.shape
    sink = n_tokens + n_experts
    n_nodes = sink + 1
    # per-token shift: every token sends exactly k units, so s_t - max(s_t) has the same optimum
    shifted = s.max(axis=1, keepdims=True) - s  # >= 0
    span = float(shifted.max()) or 1.0
    max_cost = min(_INT64_SAFE // (4 * (n_nodes + 1)), _INT64_SAFE // (n_tokens * k + 1), 2**53)
    tails = np.concatenate([np.repeat(np.arange(n_tokens, dtype=np.int64), n_experts),
                            np.arange(n_tokens, sink, dtype=np.int64)])
    heads = np.concatenate([np.tile(np.arange(n_tokens, sink, dtype=np.int64), n_tokens),
                            np.full(n_experts, sink, dtype=np.int64)])
    caps = np.concatenate([np.ones(n_tokens * n_experts, dtype=np.int64),
                           np.minimum(problem.capacity, n_tokens).astype(np.int64)])
    nodes = np.arange(n_nodes, dtype=np.int64)
    supplies = np.concatenate([np.full(n_tokens, k, dtype=np.int64), np.zeros(n_experts, dtype=np.int64),
                               np.array([-n_tokens * k], dtype=np.int64)])
    for _ in range(8):
        factor = max_cost / span
        costs = np.concatenate([np.rint(shifted.ravel() * factor).astype(np.int64),
                                np.zeros(n_experts, dtype=np.int64)])
        mcf = min_cost_flow.SimpleMinCostFlow()
        mcf.add_arcs_with_capacity_and_unit_cost(tails, heads, caps, costs)
        mcf.set_nodes_supplies(nodes, supplies)
        status = mcf.solve()
        if status != mcf.BAD_COST_RANGE:
            break
        max_cost //= 16
    if status != mcf.OPTIMAL:
        raise RuntimeError(f"OR-Tools min-cost flow returned status {status}")
    flows = mcf.flows(np.arange(n_tokens * n_experts, dtype=np.int64))
    x = flows.reshape(n_tokens, n_experts).astype(np.int8)
    del mcf
    return _integral_result(problem, x, "flow",
                            f"OR-Tools min-cost flow, costs scaled by {factor:.3g} (rounding <= {0.5 / factor:.2g} "
                            "per arc)")


def _solve_cvxpy(problem):
    import cvxpy as cp

    s, k, cap = problem.scores, problem.k, problem.capacity
    n_tokens, n_experts = s.shape
    # the LP is homogeneous in the scores: solve it on s / scale so that the solver's absolute
    # tolerances are relative to the scores, then scale the duals back
    scale = float(np.abs(s).max()) or 1.0
    p = cp.Variable(n_experts)
    u = cp.Variable(n_tokens)
    w = cp.Variable((n_tokens, n_experts))
    lhs = cp.reshape(u, (n_tokens, 1), order="C") @ np.ones((1, n_experts)) \
        + np.ones((n_tokens, 1)) @ cp.reshape(p, (1, n_experts), order="C") + w
    cover = lhs >= s / scale
    prob = cp.Problem(cp.Minimize(k * cp.sum(u) + cap @ p + cp.sum(w)), [cover, w >= 0, p >= 0])
    solver = "HIGHS" if "HIGHS" in cp.installed_solvers() else "CLARABEL"
    prob.solve(solver=solver)
    if prob.status != cp.OPTIMAL:
        raise RuntimeError(f"cvxpy ({solver}) returned status {prob.status!r} on the dual LP")
    prices = np.maximum(np.asarray(p.value, dtype=np.float64) * scale, 0.0)   # p >= 0 up to solver round-off
    x = np.asarray(cover.dual_value, dtype=np.float64)
    note = f"dual LP in cvxpy ({solver}); primal from its constraint duals"
    xr, integral = _split_integral(problem, x)
    feasible = (np.abs(xr.sum(axis=1) - k).max() <= 1e-9
                and (xr.sum(axis=0) - cap).max() <= 1e-9 and xr.min() >= 0 and xr.max() <= 1)
    if not (integral or not problem.integral_capacity) or not feasible:
        res = _highs_primal(problem)
        xr, integral = _split_integral(problem, res.x.reshape(n_tokens, n_experts))
        note = f"dual LP in cvxpy ({solver}); primal by HiGHS (the constraint duals were not a 0/1 routing)"
    uu, ww = _complete_dual(s, prices, k)
    return _result(problem, xr, uu, prices, ww, integral, "cvxpy", note)


def _ortools_available():
    return importlib.util.find_spec("ortools") is not None


def solve_exact(problem, method: str = "auto"):
    r"""Solve the assignment LP exactly and certify the solution.

    Parameters
    ----------
    problem : AssignmentProblem or AssignmentBatch
        Scores of shape ``(n_tokens, n_experts)``, ``k`` and capacities; or a
        batch of such problems (scores ``(n_batch, n_tokens, n_experts)``),
        each solved and certified on its own.
    method : {"auto", "highs", "assignment", "flow", "cvxpy"}
        ``"highs"``: the primal LP by ``scipy.optimize.linprog(method="highs")``
        with sparse constraints; duals from its marginals.
        ``"assignment"``: ``k = 1`` and integer capacities only;
        ``scipy.optimize.linear_sum_assignment`` on the score matrix with
        expert ``i`` replicated ``min(C_i, N)`` times.
        ``"flow"``: integer capacities only; OR-Tools ``SimpleMinCostFlow``
        (optional dependency, imported on use).
        ``"cvxpy"``: the dual LP below, solved in cvxpy (HiGHS when cvxpy has
        it, else Clarabel); its role is the dual value and prices.
        ``"auto"``: ``"highs"`` when ``n_tokens * n_experts <= 2e4`` or the
        capacities are fractional, else ``"flow"`` when OR-Tools is
        installed, else ``"highs"``.

    Returns
    -------
    AssignmentResult or BatchAssignmentResult
        Assignment, primal and dual values, prices ``(n_experts,)``, token
        duals ``(n_tokens,)``, bound duals ``(n_tokens, n_experts)`` and the
        certificates, all recomputed from these vectors.  For a batch, the
        same fields stacked along a leading ``n_batch`` axis (and the
        per-problem results in ``results``).

    Notes
    -----
    Primal and dual (:math:`u` free, :math:`p, w \ge 0`):

    .. math::

        \max_x \sum s_{t,i} x_{t,i}\ \text{s.t.}\ \sum_i x_{t,i} = k,\
        \sum_t x_{t,i} \le C_i,\ 0 \le x \le 1
        \qquad
        \min_{u,p,w} k\sum_t u_t + \sum_i C_i p_i + \sum_{t,i} w_{t,i}\
        \text{s.t.}\ u_t + p_i + w_{t,i} \ge s_{t,i}.

    For fixed :math:`p` the best :math:`u, w` are :math:`u_t` = the k-th
    largest entry of :math:`s_t - p` and :math:`w = (s - p - u)_+`, which
    leaves the E-dimensional dual
    :math:`g(p) = \sum_t \operatorname{top-}k\operatorname{-sum}(s_t - p) +
    C^\top p` (see :func:`~expertlab.balance.dual_objective`).
    With :math:`\sum_i C_i = N k` the constraint :math:`p \ge 0` could be
    dropped and :math:`p` is determined only up to a common shift; the
    ``cvxpy`` method keeps :math:`p \ge 0` in all cases (it is then
    attained, with the same value).  The constraint matrix is totally
    unimodular, so with integer capacities the HiGHS vertex is 0/1.

    *Prices of the combinatorial methods.*  ``linear_sum_assignment`` and
    OR-Tools return no duals.  For the 0/1 routing they find, the prices
    are the smallest :math:`p \ge 0` with :math:`p_i = 0` on experts below
    capacity and :math:`p_j - p_i \ge s_{t,j} - s_{t,i}` whenever token
    :math:`t` uses :math:`i` and not :math:`j` (each chosen set is then a
    top-k set of :math:`s_t - p`, and complementary slackness holds with
    :math:`u, w` completed as above).  These difference constraints are
    solved by Bellman-Ford on the :math:`E + 1` nodes "experts + root" in
    :math:`O(N k E + E^3)`.  A negative cycle is an improving exchange of
    tokens between experts; it is applied and the search repeated, so a
    routing that is optimal only for rounded costs is polished to an optimum
    of the true scores.  For ``"flow"`` the scores are shifted per token
    (:math:`\max_i s_{t,i} - s_{t,i} \ge 0`), scaled so that the largest
    integer cost is about :math:`\min(2^{53}, 2^{60}/(N + E + 2), 2^{62}/(Nk))`
    and rounded: each cost is off by at most half a unit, i.e. a relative
    error of about :math:`10^{-13}` of the score range at
    :math:`N = 65\,536`; the exchange step removes what this rounding costs.
    For ``"highs"`` the duals :math:`u, p, w` are HiGHS's marginals; for the
    other methods :math:`u, w` are completed from :math:`p`.

    *Batches.*  The problems of an :class:`~expertlab.balance.AssignmentBatch`
    are independent LPs; each is solved by one solver call (a loop over
    problems: an LP solve is not vectorisable across problems, and one
    block-diagonal LP would only be slower) and the certificates are stacked.

    References
    ----------
    .. [1] Han & Zhong, "A Theoretical Framework for Auxiliary-Loss-Free Load
       Balancing of Sparse Mixture-of-Experts", arXiv 2512.03915: the
       assignment LP and its dual :math:`g(p)` (primal-dual formulation of
       ALF-LB).
    .. [2] Schrijver, *Theory of Linear and Integer Programming*, 1986,
       Thm 19.3 (total unimodularity of bipartite incidence matrices) and
       Sec. 7.4 (LP duality).

    Examples
    --------
    >>> from expertlab.balance import AssignmentProblem, solve_exact
    >>> prob = AssignmentProblem([[3.0, 2.5], [2.0, 0.0]], k=1, capacity=1)
    >>> res = solve_exact(prob, method="highs")
    >>> res.assignment.tolist(), res.objective
    ([[0, 1], [1, 0]], 4.5)
    >>> abs(res.duality_gap) < 1e-12
    True
    """
    from ._batch import AssignmentBatch, stack_results

    if isinstance(problem, AssignmentBatch):
        check_in(method, "method", METHODS)
        return stack_results(solve_exact(problem.problem(b), method) for b in range(len(problem)))
    if not isinstance(problem, AssignmentProblem):
        raise TypeError(f"problem must be an AssignmentProblem or AssignmentBatch, got {type(problem).__name__}")
    check_in(method, "method", METHODS)
    if method == "auto":
        n_vars = problem.n_tokens * problem.n_experts
        if n_vars <= AUTO_HIGHS_MAX or not problem.integral_capacity or not _ortools_available():
            method = "highs"
        else:
            method = "flow"
    if method == "highs":
        return _solve_highs(problem)
    if method == "assignment":
        return _solve_assignment(problem)
    if method == "flow":
        return _solve_flow(problem)
    return _solve_cvxpy(problem)
