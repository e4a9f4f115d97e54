"""Routing baselines: auxiliary loss, BASE, Sinkhorn and expert choice.

Expected values come from hand-worked cases, central finite differences
(the auxiliary-loss gradient), brute force over balanced routings (BASE),
the exact balanced LP (``solve_exact``) and the transport LP solved by
``scipy.optimize.linprog`` (Sinkhorn's zero-temperature limit).
"""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from expertlab.balance._baselines import (
    AuxLossResult,
    RouteResult,
    SinkhornResult,
    aux_loss,
    base_route,
    expert_choice_route,
    sinkhorn_route,
)
from expertlab.balance._exact import solve_exact
from expertlab.balance._problem import AssignmentProblem, top_k_route

# -- auxiliary loss -----------------------------------------------------------------


def test_aux_loss_hand_worked():
    # p_0 = (3/4, 1/4), p_1 = (1/2, 1/2); both tokens pick expert 0 (tie -> lower index)
    res = aux_loss([[np.log(3.0), 0.0], [0.0, 0.0]], k=1)
    assert isinstance(res, AuxLossResult)
    np.testing.assert_allclose(res.fraction, [1.0, 0.0])
    np.testing.assert_allclose(res.mean_prob, [0.625, 0.375])
    assert res.loss == pytest.approx(2 * 0.625)
    # (E / N) p_tj (f_j - sum_i f_i p_ti) with E / N = 1
    np.testing.assert_allclose(res.grad, [[0.1875, -0.1875], [0.25, -0.25]], atol=1e-15)


def test_aux_loss_equals_k_when_dispatch_is_uniform():
    # 4 tokens, 4 experts, k = 2: the top-2 sets {0,1}, {2,3}, {0,2}, {1,3} hit each expert twice
    z = np.array([[3.0, 2.0, 0.0, -1.0], [0.0, -1.0, 3.0, 2.0],
                  [2.0, 0.1, 1.5, 0.0], [0.0, 2.0, -1.0, 1.0]])
    res = aux_loss(z, k=2)
    np.testing.assert_allclose(res.fraction, 0.5)
    assert res.loss == pytest.approx(2.0)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_aux_loss_gradient_matches_finite_differences(k):
    rng = np.random.default_rng(k)
    n, e = 12, 6
    z = rng.normal(size=(n, e))
    res = aux_loss(z, k=k)
    h = 1e-6
    fd = np.zeros_like(z)
    for t, i in itertools.product(range(n), range(e)):
        zp, zm = z.copy(), z.copy()
        zp[t, i] += h
        zm[t, i] -= h
        # the dispatch must not change under the perturbation (random logits: gaps >> h)
        assert np.array_equal(top_k_route(zp, k=k), top_k_route(zm, k=k))
        fd[t, i] = (aux_loss(zp, k=k).loss - aux_loss(zm, k=k).loss) / (2 * h)
    np.testing.assert_allclose(res.grad, fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(res.grad.sum(axis=-1), 0.0, atol=1e-15)  # softmax is shift invariant


def test_aux_loss_batched():
    rng = np.random.default_rng(5)
    z = rng.normal(size=(3, 7, 4))
    res = aux_loss(z, k=2)
    assert res.loss.shape == (3,) and res.grad.shape == z.shape
    for r in range(3):
        one = aux_loss(z[r], k=2)
        assert res.loss[r] == pytest.approx(one.loss, rel=1e-14)
        np.testing.assert_allclose(res.grad[r], one.grad, rtol=1e-14, atol=1e-16)


# -- BASE -----------------------------------------------------------------------------


def best_balanced(s, k, cap):
    n, e = s.shape
    best = -np.inf
    for choice in itertools.product(list(itertools.combinations(range(e), k)), repeat=n):
        load = np.zeros(e)
        for sub in choice:
            load[list(sub)] += 1
        if np.all(load <= cap):
            best = max(best, sum(s[t, i] for t, sub in enumerate(choice) for i in sub))
    return best


@pytest.mark.parametrize("n, e, k", [(4, 2, 1), (6, 3, 2), (5, 2, 1), (5, 3, 2)])
def test_base_route_is_the_best_balanced_routing(n, e, k):
    rng = np.random.default_rng(n * 10 + e + k)
    s = rng.normal(size=(n, e))
    res = base_route(s, k)
    assert isinstance(res, RouteResult) and res.method == "base"
    cap = -(-n * k // e)
    x = res.assignment
    assert np.all(x.sum(axis=1) == k) and np.all(res.loads <= cap)
    assert res.score == pytest.approx(best_balanced(s, k, cap), abs=1e-9)
    if n * k % e == 0:
        assert np.all(res.loads == n * k // e) and res.max_vio == 0.0


def test_base_route_hand_worked_and_batched():
    # batch 0: top-1 sends both tokens to e0; balanced: t0->e1, t1->e0 (2.5 + 2.0 = 4.5 > 3.0 + 0.0)
    # batch 1: t0->e0, t1->e1 (0.0 + 5.0 = 5.0 > 1.0 + 0.0)
    s = np.array([[[3.0, 2.5], [2.0, 0.0]], [[0.0, 1.0], [0.0, 5.0]]])
    res = base_route(s, 1)
    np.testing.assert_array_equal(res.assignment, [[[0, 1], [1, 0]], [[1, 0], [0, 1]]])
    np.testing.assert_allclose(res.score, [4.5, 5.0])
    np.testing.assert_array_equal(res.n_unrouted, [0, 0])


# -- Sinkhorn -------------------------------------------------------------------------


def transport_optimum(s, k):
    """max <s, x> with row sums k, column sums N k / E, x >= 0 (no upper bound)."""
    n, e = s.shape
    rows = sp.kron(sp.eye(n), np.ones((1, e)))
    cols = sp.kron(np.ones((1, n)), sp.eye(e))
    a_eq = sp.vstack([rows, cols]).tocsr()
    b_eq = np.r_[np.full(n, float(k)), np.full(e, n * k / e)]
    res = linprog(-s.ravel(), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    assert res.status == 0
    return -res.fun


def test_sinkhorn_marginals_converge():
    rng = np.random.default_rng(0)
    n, e, k = 30, 5, 2
    s = rng.normal(size=(n, e))
    errs = []
    for n_iter in (1, 5, 20, 200):
        res = sinkhorn_route(s, k, n_iter=n_iter, temperature=0.5, tol=0.0)
        assert res.n_iter == n_iter
        errs.append(res.row_error)
        np.testing.assert_allclose(res.plan.sum(axis=0), n * k / e, rtol=1e-12)  # columns exact after each step
        assert res.row_error == pytest.approx(np.abs(res.plan.sum(axis=1) - k).max(), abs=1e-14)
    assert errs[0] > errs[1] > errs[2] > errs[3] and errs[3] < 1e-10
    res = sinkhorn_route(s, k, temperature=0.5, tol=1e-10)
    assert isinstance(res, SinkhornResult) and res.converged and res.n_iter < 1000
    assert max(res.row_error, res.col_error) <= 1e-10
    assert np.all(res.assignment.sum(axis=1) == k)


def test_sinkhorn_uniform_scores_give_the_uniform_plan():
    res = sinkhorn_route(np.zeros((6, 3)), 2, temperature=1.0)
    np.testing.assert_allclose(res.plan, 2 / 3, rtol=1e-12)


@pytest.mark.parametrize("k", [1, 2])
def test_sinkhorn_value_approaches_the_lp_as_temperature_falls(k):
    rng = np.random.default_rng(10 + k)
    n, e = 8, 4
    s = rng.uniform(size=(n, e))
    if k == 1:  # the balanced assignment LP; integral since E divides N
        opt = solve_exact(AssignmentProblem(s, 1), method="highs").objective
        assert opt == pytest.approx(transport_optimum(s, 1), abs=1e-9)
    else:
        opt = transport_optimum(s, k)
    gaps = []
    for tau in (1.0, 0.3, 0.1, 0.03):
        res = sinkhorn_route(s, k, temperature=tau, n_iter=50_000, tol=1e-11)
        assert res.converged
        gap = opt - res.plan_value
        assert -1e-8 <= gap <= tau * n * k * np.log(e) + 1e-8  # entropic bound (see Notes)
        gaps.append(gap)
    assert gaps[0] > gaps[1] > gaps[2] > gaps[3]
    assert gaps[-1] < 0.05 * gaps[0]


def test_sinkhorn_batched_equals_one_by_one():
    rng = np.random.default_rng(4)
    s = rng.normal(size=(2, 10, 5))
    res = sinkhorn_route(s, 2, n_iter=50, temperature=0.7, tol=0.0)
    for r in range(2):
        one = sinkhorn_route(s[r], 2, n_iter=50, temperature=0.7, tol=0.0)
        np.testing.assert_allclose(res.plan[r], one.plan, rtol=1e-13)
        np.testing.assert_array_equal(res.assignment[r], one.assignment)
        assert res.max_vio[r] == pytest.approx(one.max_vio)


# -- expert choice ------------------------------------------------------------------


def test_expert_choice_hand_worked():
    s = np.array([[0.5, 0.1], [0.5, 0.9], [0.2, 0.9], [0.1, 0.3]])
    res = expert_choice_route(s, capacity=2)
    # expert 0: t0, t1 (tie at .5, both fit); expert 1: t1, t2 (.9, .9); t3 gets nobody
    np.testing.assert_array_equal(res.assignment, [[1, 0], [1, 1], [0, 1], [0, 0]])
    np.testing.assert_array_equal(res.loads, [2, 2])
    assert res.n_unrouted == 1 and res.max_vio == 0.0 and res.score == pytest.approx(2.8)
    # a tie that does not fit: expert 0 with capacity 1 takes the lower token index
    res = expert_choice_route(s, capacity=1)
    np.testing.assert_array_equal(res.assignment, [[1, 0], [0, 1], [0, 0], [0, 0]])


def test_expert_choice_batched():
    rng = np.random.default_rng(2)
    s = rng.uniform(size=(3, 9, 4))
    res = expert_choice_route(s, capacity=3)
    assert np.all(res.loads == 3)
    for r in range(3):
        order = np.argsort(-s[r], axis=0, kind="stable")[:3]  # independent sort-based reference
        ref = np.zeros((9, 4), dtype=int)
        np.put_along_axis(ref, order, 1, axis=0)
        np.testing.assert_array_equal(res.assignment[r], ref)


# -- bad input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, exc, word",
    [
        (lambda: aux_loss([[np.nan, 0.0]]), ValueError, "logits"),
        (lambda: aux_loss([[np.inf, 0.0]]), ValueError, "logits"),
        (lambda: aux_loss([[0.0, 0.0]], k=3), ValueError, "k"),
        (lambda: aux_loss([0.0, 0.0]), ValueError, "logits"),
        (lambda: base_route([[np.nan, 0.0]]), ValueError, "scores"),
        (lambda: base_route([[0.0, 0.0]], k=3), ValueError, "k"),
        (lambda: base_route([[0.0, 0.0]], method="lp"), ValueError, "method"),
        (lambda: sinkhorn_route([[0.0, np.inf]]), ValueError, "scores"),
        (lambda: sinkhorn_route([[0.0, 0.0]], k=3), ValueError, "k"),
        (lambda: sinkhorn_route([[0.0, 0.0]], temperature=0.0), ValueError, "temperature"),
        (lambda: sinkhorn_route([[0.0, 0.0]], temperature=-1.0), ValueError, "temperature"),
        (lambda: sinkhorn_route([[0.0, 0.0]], n_iter=0), ValueError, "n_iter"),
        (lambda: sinkhorn_route([[0.0, 0.0]], n_iter=2.5), TypeError, "n_iter"),
        (lambda: sinkhorn_route([[0.0, 0.0]], tol=-1.0), ValueError, "tol"),
        (lambda: expert_choice_route([[0.0, 0.0]], capacity=2), ValueError, "capacity"),
        (lambda: expert_choice_route([[0.0, 0.0]], capacity=0), ValueError, "capacity"),
        (lambda: expert_choice_route([[np.nan, 0.0]], capacity=1), ValueError, "scores"),
        (lambda: expert_choice_route([[0.0, 0.0]], capacity=1.0), TypeError, "capacity"),
    ],
)
def test_bad_input(call, exc, word):
    with pytest.raises(exc, match=word):
        call()
