"""AssignmentProblem validation, top-K routing and the dual function g(p).

Expected values come from hand-worked cases, from sort-based references
written here (``np.argsort`` with a stable sort, Python sums) and from brute
force over all feasible 0/1 routings of tiny problems.
"""

import itertools

import numpy as np
import pytest

from expertlab.balance._problem import AssignmentProblem, dual_objective, top_k_route


def feasible_routings(n_tokens, n_experts, k, capacity):
    """Every 0/1 routing with k experts per token and loads <= capacity."""
    subsets = list(itertools.combinations(range(n_experts), k))
    for choice in itertools.product(subsets, repeat=n_tokens):
        x = np.zeros((n_tokens, n_experts), dtype=int)
        for t, sub in enumerate(choice):
            x[t, list(sub)] = 1
        if np.all(x.sum(axis=0) <= np.asarray(capacity) + 1e-12):
            yield x


def reference_route(v, k):
    """Top-k by a stable descending sort: ties go to the lowest index."""
    out = np.zeros(v.shape, dtype=int)
    for idx in np.ndindex(v.shape[:-1]):
        order = sorted(range(v.shape[-1]), key=lambda i: (-v[idx][i], i))
        out[idx + (order[:k],)] = 1
    return out


# -- AssignmentProblem -----------------------------------------------------------


def test_default_capacity_is_balanced_and_fields_are_read_only():
    prob = AssignmentProblem(np.zeros((6, 4)), k=2)
    assert prob.n_tokens == 6 and prob.n_experts == 4 and prob.k == 2
    np.testing.assert_array_equal(prob.capacity, [3.0, 3.0, 3.0, 3.0])  # 6 * 2 / 4
    assert prob.integral_capacity
    with pytest.raises(ValueError):
        prob.scores[0, 0] = 1.0
    with pytest.raises(ValueError):
        prob.capacity[0] = 1.0


def test_fractional_balanced_capacity_and_scalar_capacity():
    prob = AssignmentProblem(np.zeros((5, 2)), k=1)
    np.testing.assert_array_equal(prob.capacity, [2.5, 2.5])
    assert not prob.integral_capacity
    prob = AssignmentProblem(np.zeros((5, 2)), k=1, capacity=4)
    np.testing.assert_array_equal(prob.capacity, [4.0, 4.0])


def test_scores_are_copied():
    s = np.ones((2, 2))
    prob = AssignmentProblem(s, k=1)
    s[0, 0] = 7.0
    assert prob.scores[0, 0] == 1.0


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_scores_rejected(bad):
    s = np.zeros((3, 2))
    s[1, 1] = bad
    with pytest.raises(ValueError, match="scores"):
        AssignmentProblem(s, k=1)


@pytest.mark.parametrize("shape", [(4,), (2, 3, 4), (0, 3), (3, 0)])
def test_wrong_score_shapes_rejected(shape):
    with pytest.raises(ValueError, match="scores"):
        AssignmentProblem(np.zeros(shape), k=1)


def test_non_array_scores_rejected():
    with pytest.raises(TypeError, match="scores"):
        AssignmentProblem("abc", k=1)


@pytest.mark.parametrize("k", [0, -1, 4])
def test_k_out_of_range_rejected(k):
    with pytest.raises(ValueError, match="k"):
        AssignmentProblem(np.zeros((3, 3)), k=k)


@pytest.mark.parametrize("k", [1.0, True, "2"])
def test_k_wrong_type_rejected(k):
    with pytest.raises(TypeError, match="k"):
        AssignmentProblem(np.zeros((3, 3)), k=k)


@pytest.mark.parametrize("capacity, k", [
    (-1.0, 1),                     # negative
    ([2.0, -0.5, 5.0], 1),         # one negative
    ([np.nan, 2.0, 2.0], 1),       # NaN
    ([1.0, 1.0], 1),               # wrong shape
    (np.ones((3, 1)), 1),          # wrong shape
    (1.0, 1),                      # 3 slots < 4 tokens * k = 1
    ([4.0, 4.0, 3.0], 3),          # 11 slots < 4 tokens * k = 3
])
def test_bad_capacity_rejected(capacity, k):
    with pytest.raises(ValueError, match="capacity"):
        AssignmentProblem(np.zeros((4, 3)), k=k, capacity=capacity)


def test_capacity_beyond_n_tokens_does_not_count():
    # 4 tokens, k = 2: sum of capacities is 10 >= 8, but expert 0 can take each token once only,
    # so the usable capacity is min(9, 4) + 1 = 5 < 8
    with pytest.raises(ValueError, match="capacity"):
        AssignmentProblem(np.zeros((4, 2)), k=2, capacity=[9.0, 1.0])
    AssignmentProblem(np.zeros((4, 2)), k=2, capacity=[4.0, 4.0])  # exactly enough


def test_capacity_wrong_type_rejected():
    with pytest.raises(TypeError, match="capacity"):
        AssignmentProblem(np.zeros((2, 2)), k=1, capacity="big")


# -- top_k_route -------------------------------------------------------------------


def test_top_k_route_hand_case_with_ties():
    s = np.array([[0.5, 0.2, 0.5, 0.5],    # three-way tie for 2 slots: experts 0 and 2
                  [0.1, 0.9, 0.9, 0.0]])   # clear top 2
    x = top_k_route(s, None, k=2)
    np.testing.assert_array_equal(x, [[1, 0, 1, 0], [0, 1, 1, 0]])
    x = top_k_route(s, np.array([0.0, 0.0, 0.0, 0.1]), k=2)  # bias lifts expert 3
    np.testing.assert_array_equal(x, [[1, 0, 0, 1], [0, 1, 1, 0]])


@pytest.mark.parametrize("k", [1, 2, 5, 6])
def test_top_k_route_matches_stable_sort_on_tied_integers(k):
    rng = np.random.default_rng(3)
    s = rng.integers(0, 4, size=(3, 7, 6)).astype(float)  # many ties
    b = rng.integers(-1, 2, size=(6,)).astype(float)
    x = top_k_route(s, b, k)
    np.testing.assert_array_equal(x, reference_route(s + b, k))
    assert np.all(x.sum(axis=-1) == k)


def test_top_k_route_batch_equals_loop():
    rng = np.random.default_rng(4)
    s = rng.normal(size=(4, 10, 5))
    b = rng.normal(size=(4, 1, 5))
    batched = top_k_route(s, b, 2)
    for r in range(4):
        np.testing.assert_array_equal(batched[r], top_k_route(s[r], b[r, 0], 2))


def test_top_k_route_errors():
    with pytest.raises(ValueError, match="k"):
        top_k_route(np.zeros((2, 3)), None, 4)
    with pytest.raises(ValueError, match="scores"):
        top_k_route(np.array([[np.nan, 0.0]]), None, 1)
    with pytest.raises(ValueError, match="bias"):
        top_k_route(np.zeros((2, 3)), np.zeros(4), 1)
    with pytest.raises(ValueError, match="bias"):
        top_k_route(np.zeros((2, 3)), np.zeros((5, 2, 3)), 1)
    with pytest.raises(ValueError, match="bias"):
        top_k_route(np.zeros((2, 3)), np.array([0.0, np.inf, 0.0]), 1)


# -- dual_objective ------------------------------------------------------------------


def test_dual_objective_hand_case():
    # s - p = [[1, 2, -1], [0, 3, 3]] with p = (1, 0, 2); k = 2: top-2 sums 3 and 6; C = (1, 2, 1)
    s = np.array([[2.0, 2.0, 1.0], [1.0, 3.0, 5.0]])
    p = np.array([1.0, 0.0, 2.0])
    assert dual_objective(s, p, 2, [1.0, 2.0, 1.0]) == pytest.approx(3 + 6 + (1 + 0 + 2))


def test_dual_objective_batched_matches_python_reference():
    rng = np.random.default_rng(5)
    s = rng.normal(size=(3, 6, 4))
    p = rng.uniform(0, 1, size=(3, 4))
    cap = np.array([3.0, 4.0, 2.0, 3.0])
    g = dual_objective(s, p, 2, cap)
    assert g.shape == (3,)
    for r in range(3):
        ref = sum(sum(sorted(s[r, t] - p[r], reverse=True)[:2]) for t in range(6)) + float(cap @ p[r])
        assert g[r] == pytest.approx(ref, rel=1e-13)


def test_dual_objective_shift_invariant_when_balanced():
    rng = np.random.default_rng(6)
    s = rng.normal(size=(8, 4))
    p = rng.uniform(0, 2, size=4)
    g0 = dual_objective(s, p, 3)  # balanced: C = 8 * 3 / 4 = 6, C * E = N * k
    for c in (-5.0, 0.3, 11.0):
        assert dual_objective(s, p + c, 3) == pytest.approx(g0, rel=1e-12)
    # not invariant when capacities exceed N k: g(p + c) - g(p) = c (sum C - N k)
    cap = np.full(4, 7.0)
    assert dual_objective(s, p + 1.0, 3, cap) - dual_objective(s, p, 3, cap) == pytest.approx(4 * 7 - 8 * 3)


def test_dual_objective_upper_bounds_every_feasible_routing():
    rng = np.random.default_rng(7)
    s = rng.normal(size=(3, 3))
    cap = np.array([1.0, 2.0, 2.0])
    best = max(float((s * x).sum()) for x in feasible_routings(3, 3, 1, cap))
    for _ in range(50):
        p = rng.exponential(1.0, size=3)
        assert dual_objective(s, p, 1, cap) >= best - 1e-12


def test_dual_objective_errors():
    s = np.zeros((2, 3))
    with pytest.raises(ValueError, match="prices"):
        dual_objective(s, np.zeros(2), 1)
    with pytest.raises(ValueError, match="prices"):
        dual_objective(s, np.array([0.0, np.nan, 0.0]), 1)
    with pytest.raises(ValueError, match="k"):
        dual_objective(s, np.zeros(3), 4)
    with pytest.raises(ValueError, match="capacity"):
        dual_objective(s, np.zeros(3), 2, capacity=1.0)
    with pytest.raises(ValueError, match="scores"):
        dual_objective(np.zeros(3), np.zeros(3), 1)
