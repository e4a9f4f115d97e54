"""Exact assignment solvers: agreement, certificates, closed forms and errors.

The truth is brute force over every feasible 0/1 routing (tiny problems),
agreement between independent solvers (HiGHS primal, linear assignment,
min-cost flow, the dual LP in cvxpy), and a closed form: when every token
has the same score row ``m`` and the capacity is balanced, every expert is
full, the optimum is ``C * sum(m)`` and the optimal prices are ``m`` up to a
common shift (so the smallest non-negative ones are ``m - min(m)``).
"""

import itertools

import numpy as np
import pytest

from expertlab.balance._exact import AssignmentResult, solve_exact
from expertlab.balance._problem import AssignmentProblem, dual_objective

try:
    import ortools  # noqa: F401

    HAVE_ORTOOLS = True
except ImportError:  # optional dependency
    HAVE_ORTOOLS = False

needs_ortools = pytest.mark.skipif(not HAVE_ORTOOLS, reason="OR-Tools (optional) is not installed")


def brute_force(scores, k, capacity):
    """Best objective over all 0/1 routings with k experts per token and loads <= capacity."""
    n, e = scores.shape
    best = -np.inf
    for choice in itertools.product(list(itertools.combinations(range(e), k)), repeat=n):
        load = np.zeros(e)
        value = 0.0
        for t, sub in enumerate(choice):
            load[list(sub)] += 1
            value += sum(scores[t, i] for i in sub)
        if np.all(load <= capacity):
            best = max(best, value)
    return best


def methods_for(prob):
    out = ["highs", "cvxpy"]
    if prob.integral_capacity:
        if HAVE_ORTOOLS:
            out.append("flow")
        if prob.k == 1:
            out.append("assignment")
    return out


def assert_certified(res, prob, tol=1e-8):
    assert isinstance(res, AssignmentResult)
    assert res.assignment.shape == (prob.n_tokens, prob.n_experts)
    assert res.prices.shape == (prob.n_experts,)
    assert res.token_duals.shape == (prob.n_tokens,)
    assert res.primal_residual <= tol
    assert res.dual_residual <= tol
    assert res.complementary_slackness <= tol
    assert abs(res.duality_gap) <= tol
    # the certificate quantities are recomputed independently here
    x = np.asarray(res.assignment, dtype=float)
    assert np.all(x.sum(axis=1) == prob.k)
    assert np.all(x.sum(axis=0) <= prob.capacity + 1e-9)
    assert float((x * prob.scores).sum()) == pytest.approx(res.objective, rel=1e-12, abs=1e-12)
    assert np.all(res.prices >= -tol)


def random_problem(rng, n, e, k, kind):
    s = rng.normal(size=(n, e))
    if kind == "balanced":
        cap = None
    elif kind == "loose":
        cap = rng.integers(int(np.ceil(n * k / e)), n + 1, size=e)
    else:  # tight integer capacities that differ between experts
        base = np.full(e, n * k // e)
        base[: n * k - base.sum()] += 1
        cap = base + rng.integers(0, 2, size=e)
    return AssignmentProblem(s, k, cap)


# -- brute force ---------------------------------------------------------------------


@pytest.mark.parametrize("n, e, k", [(1, 1, 1), (2, 2, 1), (3, 2, 1), (4, 3, 1), (3, 3, 2), (4, 3, 2), (4, 2, 2)])
def test_all_methods_match_brute_force(n, e, k):
    rng = np.random.default_rng(100 * n + 10 * e + k)
    for trial in range(3):
        s = np.round(rng.normal(size=(n, e)), 1) if trial == 2 else rng.normal(size=(n, e))  # trial 2: ties
        cap = rng.integers(1, n + 1, size=e)
        while np.minimum(cap, n).sum() < n * k:
            cap[rng.integers(e)] += 1
        prob = AssignmentProblem(s, k, cap)
        truth = brute_force(s, k, cap)
        for method in methods_for(prob):
            res = solve_exact(prob, method)
            assert res.method == method
            assert res.integral
            assert res.objective == pytest.approx(truth, rel=1e-9, abs=1e-12), method
            assert dual_objective(s, res.prices, k, cap) == pytest.approx(truth, rel=1e-9, abs=1e-12), method
            assert_certified(res, prob)


# -- agreement and certificates on random problems ----------------------------------


@pytest.mark.parametrize("n, e, k, kind", [
    (60, 6, 1, "balanced"), (45, 7, 1, "tight"), (80, 8, 2, "balanced"),
    (50, 5, 3, "tight"), (40, 6, 2, "loose"), (30, 4, 4, "balanced"),
])
def test_exact_methods_agree_and_certificates_close(n, e, k, kind):
    rng = np.random.default_rng(n * e * k)
    prob = random_problem(rng, n, e, k, kind)
    results = {m: solve_exact(prob, m) for m in methods_for(prob)}
    ref = results["highs"].objective
    for method, res in results.items():
        assert res.objective == pytest.approx(ref, rel=1e-9), method
        assert_certified(res, prob)
        # strong duality through the E-dimensional dual, evaluated independently of the result
        assert dual_objective(prob.scores, res.prices, k, prob.capacity) == pytest.approx(ref, rel=1e-9), method


def test_highs_lp_optimum_is_integral_with_integer_capacities():
    rng = np.random.default_rng(11)
    for k, cap in [(1, [3, 5, 2, 4]), (2, [4, 4, 4, 5]), (3, [6, 6, 6, 6])]:
        prob = AssignmentProblem(rng.normal(size=(8, 4)), k, cap)
        res = solve_exact(prob, "highs")
        assert res.integral
        assert res.assignment.dtype == np.int8
        assert set(np.unique(res.assignment)) <= {0, 1}


# -- closed forms ------------------------------------------------------------------


@pytest.mark.parametrize("e, k, c", [(4, 1, 3), (5, 2, 4), (6, 3, 2)])
def test_identical_rows_closed_form(e, k, c):
    rng = np.random.default_rng(e + k)
    m = rng.normal(size=e)
    n = c * e // k
    prob = AssignmentProblem(np.tile(m, (n, 1)), k)  # balanced C = n k / e = c
    assert np.all(prob.capacity == c)
    for method in methods_for(prob):
        res = solve_exact(prob, method)
        assert res.objective == pytest.approx(c * m.sum(), rel=1e-12), method
        assert np.all(res.assignment.sum(axis=0) == c)  # every expert is full
        # optimal prices equal m up to a common shift
        spread = res.prices - m
        assert np.ptp(spread) <= 1e-7, method
        assert_certified(res, prob)
    for method in {"assignment", "flow"} & set(methods_for(prob)):
        # the combinatorial methods return the smallest optimal prices: m - min(m)
        np.testing.assert_allclose(solve_exact(prob, method).prices, m - m.min(), atol=1e-12)


def test_unconstrained_capacity_routes_to_argmax_with_zero_prices():
    rng = np.random.default_rng(12)
    s = rng.normal(size=(20, 5))
    prob = AssignmentProblem(s, 2, capacity=20)
    truth = np.sort(s, axis=1)[:, -2:].sum()
    for method in methods_for(prob):
        res = solve_exact(prob, method)
        assert res.objective == pytest.approx(truth, rel=1e-12)
        np.testing.assert_allclose(res.prices, 0.0, atol=1e-9)


def test_fractional_capacity_lp_hand_case():
    # 5 tokens all prefer expert 0 by 1; C = 5/2: the LP puts 2.5 units on expert 0
    prob = AssignmentProblem(np.tile([1.0, 0.0], (5, 1)), 1)
    res = solve_exact(prob, "auto")
    assert res.method == "highs"
    assert not res.integral
    assert res.objective == pytest.approx(2.5, rel=1e-12)
    assert res.assignment.sum(axis=0) == pytest.approx([2.5, 2.5])
    # dual: p = (1, 0) makes both experts equally attractive; g = 5 * 0 + 2.5 * 1
    assert dual_objective(prob.scores, res.prices, 1, prob.capacity) == pytest.approx(2.5, rel=1e-12)
    assert abs(res.duality_gap) <= 1e-12 and res.complementary_slackness <= 1e-12
    cv = solve_exact(prob, "cvxpy")
    assert cv.objective == pytest.approx(2.5, rel=1e-9)
    for method in ("assignment", "flow"):
        with pytest.raises(ValueError, match="capacity"):
            solve_exact(prob, method)


def test_all_equal_scores_certify():
    prob = AssignmentProblem(np.zeros((6, 3)), 2)
    for method in methods_for(prob):
        res = solve_exact(prob, method)
        assert res.objective == 0.0
        assert_certified(res, prob)


@needs_ortools
def test_auto_uses_flow_for_large_integer_problems():
    rng = np.random.default_rng(13)
    prob = AssignmentProblem(rng.normal(size=(2048, 16)), 2)  # 32768 > 2e4 variables
    res = solve_exact(prob, "auto")
    assert res.method == "flow"
    assert_certified(res, prob, tol=1e-9)
    assert res.objective == pytest.approx(solve_exact(prob, "highs").objective, rel=1e-9)


def test_exchange_polish_turns_a_poor_routing_into_an_optimal_one():
    # the price recovery of the combinatorial methods cancels improving exchange cycles;
    # start it from the worst feasible routing and compare with brute force
    from expertlab.balance._exact import _integral_result

    rng = np.random.default_rng(14)
    for k, cap in [(1, [2, 1, 1]), (2, [3, 2, 3])]:
        s = rng.normal(size=(4, 3))
        prob = AssignmentProblem(s, k, cap)
        worst = -solve_exact(AssignmentProblem(-s, k, cap), "highs").objective
        start = solve_exact(AssignmentProblem(-s, k, cap), "highs").assignment
        assert float((s * start).sum()) == pytest.approx(worst)
        res = _integral_result(prob, start, "test", "")
        assert "exchange" in res.message
        assert res.objective == pytest.approx(brute_force(s, k, np.array(cap)), rel=1e-12)
        assert_certified(res, prob)


# -- errors ---------------------------------------------------------------------------


def test_solve_exact_errors():
    prob = AssignmentProblem(np.zeros((4, 2)), 2)
    with pytest.raises(ValueError, match="method"):
        solve_exact(prob, "simplex")
    with pytest.raises(ValueError, match="k"):
        solve_exact(prob, "assignment")
    with pytest.raises(TypeError, match="problem"):
        solve_exact(np.zeros((4, 2)), "highs")
