r"""Weak and strong duality of the routing assignment LP, and integrality of its optimum.

Statements checked
------------------
Let :math:`s \in \mathbb R^{N\times E}` be scores, :math:`1 \le k \le E`, and
:math:`C \in \mathbb R_{\ge 0}^E` capacities with
:math:`\sum_i \min(C_i, N) \ge Nk`.  The primal is

.. math::

    P^\star = \max_x \sum_{t,i} s_{t,i} x_{t,i} \quad\text{s.t.}\quad
    \sum_i x_{t,i} = k,\; \sum_t x_{t,i} \le C_i,\; 0 \le x \le 1,

and the dual function (capacity constraints dualised with :math:`p \ge 0`)

.. math::

    g(p) = \sum_t \operatorname{top-}k\operatorname{-sum}_i (s_{t,i} - p_i) + \sum_i C_i p_i .

**(W) Weak duality.**  :math:`g(p) \ge \sum_{t,i} s_{t,i} x_{t,i}` for every
:math:`p \ge 0` and every feasible :math:`x`.

**(S) Strong duality.**  :math:`\min_{p \ge 0} g(p) = P^\star`; with integer
capacities :math:`P^\star` is also the best 0/1 routing, so the prices
returned by ``expertlab.balance._exact.solve_exact`` must give
:math:`g(p^\star)` equal to the brute-force optimum over all 0/1 routings.

**(I) Integrality.**  The constraint matrix (token rows and expert rows of
the bipartite incidence structure) is totally unimodular, so with integer
capacities the LP optimum is attained at a 0/1 vertex and the LP value equals
the integer optimum.

Source: standard LP duality (e.g. Schrijver, *Theory of Linear and Integer
Programming*, 1986, Sec. 7.4; Thm 19.3 for the total unimodularity of
bipartite incidence matrices), applied to the primal-dual formulation of
auxiliary-loss-free load balancing in Han & Zhong, arXiv 2512.03915 (as
summarised in section F of the project's papers notes; the paper's equation
numbers were not checked here).

How the checks work
-------------------
Hypothesis draws tiny instances (:math:`N \le 4`, :math:`E \le 3`,
:math:`k \le E`), scores in :math:`[-10, 10]` (half of the draws on a coarse
grid so that ties occur), integer or fractional capacities satisfying the
feasibility condition, and prices in :math:`[0, 20]` including zeros.  The
dual function and the brute-force optimum are computed here with plain
Python sorting and enumeration; (W) compares them, (S) compares the brute
force with :math:`g` at the library's prices for every exact method, and (I)
solves the LP with an independently built dense constraint matrix.  Total
unimodularity itself is checked exhaustively (every square submatrix has
determinant in :math:`\{-1, 0, 1\}`) for all :math:`N, E \le 3`.

Self-tests: (W) fails for negative prices when :math:`\sum C > Nk` (the
domain :math:`p \ge 0` matters); the TU test rejects the incidence matrix of
a triangle (determinant 2); a dual function that forgets the capacity term
fails (S).
"""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

from expertlab.balance._exact import solve_exact
from expertlab.balance._problem import AssignmentProblem, dual_objective
from expertlab.testing import strategies

pytestmark = pytest.mark.proof

try:
    import ortools  # noqa: F401

    EXACT_METHODS = ("highs", "flow", "cvxpy")
except ImportError:  # optional dependency
    EXACT_METHODS = ("highs", "cvxpy")


# -- independent references ----------------------------------------------------------


def g_reference(s, p, k, cap):
    """g(p) with Python sorting."""
    rows = sum(sum(sorted((s[t, i] - p[i] for i in range(s.shape[1])), reverse=True)[:k])
               for t in range(s.shape[0]))
    return rows + sum(c * q for c, q in zip(cap, p))


def routings(n, e, k, cap):
    """Values of all feasible 0/1 routings."""
    out = []
    subsets = list(itertools.combinations(range(e), k))
    for choice in itertools.product(subsets, repeat=n):
        load = [0] * e
        for sub in choice:
            for i in sub:
                load[i] += 1
        if all(load[i] <= cap[i] + 1e-12 for i in range(e)):
            out.append(choice)
    return out


def value(s, choice):
    return sum(s[t, i] for t, sub in enumerate(choice) for i in sub)


def constraint_matrix(n, e):
    """Rows: one per token (sum_i x_ti), one per expert (sum_t x_ti); columns x_ti, t-major."""
    a = np.zeros((n + e, n * e))
    for t in range(n):
        for i in range(e):
            a[t, t * e + i] = 1.0
            a[n + i, t * e + i] = 1.0
    return a


def is_totally_unimodular(a):
    m, n = a.shape
    for r in range(1, min(m, n) + 1):
        for rows in itertools.combinations(range(m), r):
            sub = a[list(rows)]
            for cols in itertools.combinations(range(n), r):
                d = round(float(np.linalg.det(sub[:, list(cols)])))
                if d not in (-1, 0, 1):
                    return False
    return True


def weak_duality_holds(s, p, k, cap):
    g = g_reference(s, p, k, cap)
    return all(g >= value(s, ch) - 1e-9 * (1 + abs(g)) for ch in routings(s.shape[0], s.shape[1], k, cap))


# -- strategies ------------------------------------------------------------------------


def instances(integer_capacity=True):
    """(scores, k, capacity) of a feasible problem: scores in [-10, 10], half of them on the grid 2.5 Z (ties)."""
    problems = strategies.assignment_problems(max_tokens=4, max_experts=3, max_abs=10.0,
                                              capacity="integer" if integer_capacity else "real")
    return problems.map(lambda prob: (np.array(prob.scores), prob.k, np.array(prob.capacity)))


prices = st.lists(st.one_of(st.just(0.0), st.floats(0, 20, allow_nan=False)), min_size=3, max_size=3)


# -- (W) ---------------------------------------------------------------------------------


@given(inst=instances(integer_capacity=False), p=prices)
def test_weak_duality(inst, p):
    s, k, cap = inst
    p = np.array(p[: s.shape[1]])
    g = g_reference(s, p, k, cap)
    assert dual_objective(s, p, k, cap) == pytest.approx(g, rel=1e-12, abs=1e-12)
    for choice in routings(s.shape[0], s.shape[1], k, cap):
        assert g >= value(s, choice) - 1e-9 * (1 + abs(g))


# -- (S) ---------------------------------------------------------------------------------


@given(inst=instances())
def test_strong_duality_against_brute_force(inst):
    s, k, cap = inst
    n, e = s.shape
    best = max(value(s, ch) for ch in routings(n, e, k, cap))
    prob = AssignmentProblem(s, k, cap)
    methods = EXACT_METHODS + (("assignment",) if k == 1 else ())
    for method in methods:
        res = solve_exact(prob, method)
        assert np.all(res.prices >= -1e-9)
        tol = 1e-9 * (1 + abs(best))
        assert abs(g_reference(s, res.prices, k, cap) - best) <= tol, method
        assert abs(res.objective - best) <= tol, method


# -- (I) ---------------------------------------------------------------------------------


@given(inst=instances())
def test_lp_value_equals_integer_optimum(inst):
    s, k, cap = inst
    n, e = s.shape
    a = constraint_matrix(n, e)
    res = linprog(-s.ravel(), A_ub=a[n:], b_ub=cap, A_eq=a[:n], b_eq=np.full(n, float(k)),
                  bounds=(0, 1), method="highs-ds")
    assert res.status == 0
    best = max(value(s, ch) for ch in routings(n, e, k, cap))
    assert -res.fun == pytest.approx(best, rel=1e-9, abs=1e-9)
    # a simplex vertex of a TU system with integer right-hand side is integral
    assert np.abs(res.x - np.round(res.x)).max() <= 1e-9


@pytest.mark.parametrize("n, e", [(n, e) for n in range(1, 4) for e in range(1, 4)])
def test_constraint_matrix_totally_unimodular(n, e):
    a = constraint_matrix(n, e)
    assert is_totally_unimodular(np.vstack([a, np.eye(n * e)]) if n * e <= 4 else a)


# -- self-tests -------------------------------------------------------------------------


def test_self_weak_duality_fails_for_negative_prices_with_slack_capacity():
    s = np.array([[1.0, 0.0], [0.0, 1.0]])
    cap = np.array([2.0, 2.0])  # sum C = 4 > N k = 2
    assert weak_duality_holds(s, np.array([0.0, 0.0]), 1, cap)
    # g(p - L 1) = g(p) - L (sum C - N k) drops below the primal value 2
    assert not weak_duality_holds(s, np.array([-5.0, -5.0]), 1, cap)


def test_self_tu_check_rejects_a_triangle():
    triangle = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])  # det = 2
    assert not is_totally_unimodular(triangle)
    assert is_totally_unimodular(triangle[:2])


def test_self_dual_without_capacity_term_breaks_strong_duality():
    s = np.array([[2.0, 0.0], [2.0, 0.0]])
    prob = AssignmentProblem(s, 1, 1)
    res = solve_exact(prob, "highs")
    best = max(value(s, ch) for ch in routings(2, 2, 1, [1, 1]))
    assert best == 2.0
    assert g_reference(s, res.prices, 1, [1, 1]) == pytest.approx(best)
    wrong = g_reference(s, res.prices, 1, [0, 0])  # the C^T p term dropped
    assert wrong != pytest.approx(best)
