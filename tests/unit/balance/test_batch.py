"""Batched assignment problems: construction, exact solves over a batch, ALF-LB over a batch, errors.

Truth: hand-worked problems (the optimum of a 2 x 2 problem by enumeration),
and "problem r alone == problem r in a batch" against the single-problem
paths, which are tested against brute force elsewhere.
"""

import numpy as np
import pytest

from expertlab import sim
from expertlab.balance import (AssignmentBatch, AssignmentProblem, BatchAssignmentResult, alf_lb, dual_objective,
                               routing, routing_fixed, solve_exact, token_moves)


def _scores(seed=0, shape=(4, 12, 3)):
    return np.random.default_rng(seed).normal(size=shape)


def test_construction_and_capacity_rows():
    s = _scores()
    b = AssignmentBatch(s, 1)
    assert (len(b), b.n_batch, b.n_tokens, b.n_experts, b.k) == (4, 4, 12, 3, 1)
    assert b.capacity.shape == (4, 3) and np.all(b.capacity == 4.0) and b.shared_capacity and b.integral_capacity
    assert not b.scores.flags.writeable and not b.capacity.flags.writeable
    s[0, 0, 0] = 99.0  # a copy is stored
    assert b.scores[0, 0, 0] != 99.0
    rows = np.array([[4, 4, 4], [6, 3, 3], [12, 0, 0], [5.5, 3.5, 3]])
    b2 = AssignmentBatch(_scores(), 1, capacity=rows)
    assert not b2.shared_capacity and not b2.integral_capacity
    np.testing.assert_array_equal(b2.problem(1).capacity, [6, 3, 3])
    np.testing.assert_array_equal(b2.problem(-1).scores, b2.scores[3])
    b3 = AssignmentBatch.from_problems([b2.problem(r) for r in range(4)])
    np.testing.assert_array_equal(b3.scores, b2.scores)
    np.testing.assert_array_equal(b3.capacity, b2.capacity)


def test_solve_exact_hand_worked_batch():
    # problem 0: s = [[3, 2.5], [2, 0]], C = 1: routes (1, 0) give 2.5 + 2 = 4.5 > 3 + 0
    # problem 1: s = [[0, 1], [1, 0]], C = 1: the diagonal-free routing gives 2
    s = np.array([[[3.0, 2.5], [2.0, 0.0]], [[0.0, 1.0], [1.0, 0.0]]])
    res = solve_exact(AssignmentBatch(s, 1, capacity=1), method="highs")
    assert isinstance(res, BatchAssignmentResult) and len(res) == 2
    np.testing.assert_allclose(res.objective, [4.5, 2.0], atol=1e-12)
    assert res.assignment.dtype == np.int8
    assert res.assignment.tolist() == [[[0, 1], [1, 0]], [[0, 1], [1, 0]]]
    assert np.all(np.abs(res.duality_gap) < 1e-12) and res.integral.all()
    # the prices certify the optimum: g(p*) equals the primal value (strong duality)
    np.testing.assert_allclose(dual_objective(s, res.prices, 1, 1.0), [4.5, 2.0], atol=1e-9)


@pytest.mark.parametrize("method", ["highs", "flow", "assignment", "auto"])
def test_batch_equals_problem_by_problem(method):
    s = _scores(1, (3, 9, 3))
    cap = np.array([[3, 3, 3], [5, 2, 2], [9, 0, 0]], dtype=float)
    batch = AssignmentBatch(s, 1, capacity=cap)
    res = solve_exact(batch, method=method)
    for r in range(3):
        one = solve_exact(AssignmentProblem(s[r], 1, capacity=cap[r]), method=method)
        assert res.objective[r] == pytest.approx(one.objective, abs=1e-10)
        np.testing.assert_array_equal(res.assignment[r], one.assignment)
        np.testing.assert_allclose(res.prices[r], one.prices, atol=1e-10)
        assert res.results[r].method == one.method
    # problem 2 has room only at expert 0: every token goes there
    assert res.assignment[2, :, 0].tolist() == [1] * 9


def test_fractional_batch_keeps_float_assignment():
    s = _scores(2, (2, 5, 2))  # capacity 2.5: the LP optimum may be fractional
    res = solve_exact(AssignmentBatch(s, 1), method="highs")
    assert res.assignment.dtype in (np.int8, np.float64)
    np.testing.assert_allclose(res.assignment.sum(axis=2), 1.0, atol=1e-9)
    assert np.all(res.assignment.sum(axis=1) <= 2.5 + 1e-9)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_alf_lb_over_a_batch_equals_one_run_per_problem(backend):
    s = _scores(3, (3, 20, 4))
    cap = np.array([[5, 5, 5, 5], [8, 4, 4, 4], [2, 6, 6, 6]], dtype=float)
    batch = AssignmentBatch(s, 2, capacity=cap * 2)
    learner = alf_lb(step=0.05, rule="sign")
    kw = {"horizon": 30, "backend": backend}
    env = routing_fixed(batch)
    res = sim.run(learner, env, n_reps=3, **kw)
    assert env.spec.capacity.shape == (3, 4)
    for r in range(3):
        one = sim.run(learner, routing_fixed(batch.problem(r)), n_reps=1, **kw)
        np.testing.assert_array_equal(res.final["loads"][r], one.final["loads"][0])
        np.testing.assert_allclose(res.final["bias"][r], one.final["bias"][0], atol=1e-12)
        np.testing.assert_allclose(res.metrics["dual"][:, r], one.metrics["dual"][:, 0], atol=1e-10)
    # a shared capacity row is passed as one row
    shared = routing_fixed(AssignmentBatch(s, 2))
    assert shared.spec.capacity.shape == (4,) and np.all(shared.spec.capacity == 10.0)
    # 3-d scores are one problem per replication
    assert routing_fixed(s, k=2).n_problems == 3


def test_alf_lb_batch_moves_use_each_problems_capacity():
    # problem 1 has capacity 2 at expert 0, so its first load (2, 0) is at capacity: sign 0 there
    s = np.array([[[1.0, 0.0], [0.9, 0.0]], [[1.0, 0.0], [0.9, 0.0]]])
    batch = AssignmentBatch(s, 1, capacity=np.array([[1.0, 1.0], [2.0, 1.0]]))
    res = sim.run(alf_lb(step=0.01), routing_fixed(batch), horizon=60, n_reps=2, backend="numpy",
                  metrics=["maxvio", "moves", "misdirected_moves"])
    assert res.metrics["moves"][-1].tolist() == [1.0, 0.0]  # problem 1 never moves a token
    assert res.metrics["misdirected_moves"][-1].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(res.final["bias"][1], [0.0, 0.6], atol=1e-12)  # expert 1 underloaded every step
    # the moves of problem 0 between its first biases and its last, with its own capacity row
    path = np.stack([np.zeros((2, 2)), res.final["bias"]], axis=1)
    mv = token_moves(batch, path)
    assert np.all(mv.rep == 0)
    assert mv.source_overloaded.all() and mv.target_underloaded.all()


def test_bad_input():
    s = _scores()
    with pytest.raises(ValueError, match="scores"):
        AssignmentBatch(s[0], 1)  # 2-d
    bad = s.copy()
    bad[1, 2, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        AssignmentBatch(bad, 1)
    bad[1, 2, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        AssignmentBatch(bad, 1)
    with pytest.raises(ValueError, match="k"):
        AssignmentBatch(s, 4)  # K > E
    with pytest.raises(ValueError, match="capacity of problem 2"):
        AssignmentBatch(s, 1, capacity=np.array([[4, 4, 4]] * 2 + [[1, 1, 1]] + [[4, 4, 4]]))
    with pytest.raises(ValueError, match="capacity"):
        AssignmentBatch(s, 1, capacity=np.ones((2, 3)) * 12)
    with pytest.raises(ValueError, match="capacity"):
        AssignmentBatch(s, 1, capacity=1.0)  # 3 * 1 < 12 tokens
    with pytest.raises(TypeError, match="problems"):
        AssignmentBatch.from_problems([])
    with pytest.raises(ValueError, match="share"):
        AssignmentBatch.from_problems([AssignmentProblem(s[0], 1), AssignmentProblem(s[0][:6], 1)])
    b = AssignmentBatch(s, 1)
    with pytest.raises(IndexError):
        b.problem(4)
    with pytest.raises(TypeError):
        b.problem(1.0)
    with pytest.raises(ValueError, match="method"):
        solve_exact(b, method="simplex")
    with pytest.raises(TypeError, match="AssignmentBatch"):
        solve_exact(s)
    with pytest.raises(ValueError, match="n_reps"):
        sim.run(alf_lb(), routing_fixed(b), horizon=3, n_reps=2)  # one replication per problem
    with pytest.raises(ValueError, match="capacity"):
        routing_fixed(s, 1, capacity=np.full((2, 3), 4.0))  # 2 rows for 4 problems
    from expertlab.balance.generators import iid_gaussian

    with pytest.raises(TypeError, match="capacity"):
        routing(iid_gaussian(3), n_tokens=12, k=1, capacity=np.full((4, 3), 4.0))  # online capacity is balanced
    with pytest.raises(ValueError, match="capacity"):
        routing_fixed(s, 1, capacity=np.array([[4.0, 4.0, 4.0]] * 3 + [[1.0, 1.0, 1.0]]))  # a row below N K
