"""Active ranking of experts: hand-worked schedules, batching and bad input.

The plain-Python reference of the pairwise comparison is in ``test_best_expert.py``.
"""

from __future__ import annotations


import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from expertlab.bandits import active_ranking, compare_experts, comparison_budget, dense_gap_means, one_task_gap_means


def test_comparison_budget_counts_binary_insertion():
    # sum_{i=2}^n ceil(log2 i): 0, 1, 1+2, 1+2+2, 1+2+2+3
    assert [comparison_budget(n) for n in range(1, 6)] == [0, 1, 3, 5, 8]


def test_noiseless_dense_comparisons_cost_two_queries_each():
    # sigma -> 0 and gap 1 on every task: round 0 (one task, one repetition) decides every comparison.
    M = dense_gap_means(5, 3, 1.0)
    res = active_ranking(M, sigma=1e-9, n_reps=4, seed=3)
    assert res.correct.all()
    # experts arrive in truth order (each worse than all before): binary insertion at the end
    # costs 1, 1, 2, 2 comparisons for i = 1..4
    assert res.n_comparisons.tolist() == [6] * 4
    assert res.n_queries.tolist() == [12] * 4
    # reversed order: each new expert is the best so far, the worst case sum ceil(log2 i) = 8
    rev = active_ranking(M[::-1], sigma=1e-9, n_reps=4, seed=3)
    assert rev.correct.all() and rev.ranking[0].tolist() == [4, 3, 2, 1, 0]
    assert rev.n_comparisons.tolist() == [comparison_budget(5)] * 4


def test_noiseless_one_task_gap_follows_the_schedule():
    # d = 4: round 0 samples 1 task (cost 2); round 1 has levels (m=2, h=1) and (m=1, h=2), cost 4 each;
    # round 2 starts with the sweep of all 4 tasks (cost 8), which always finds the informative task.
    M = one_task_gap_means(2, 4, 1.0, task=2)
    res = compare_experts(M, sigma=1e-9, n_reps=400, seed=0)
    assert res.correct.all()
    assert set(res.n_queries.tolist()) <= {2, 6, 10, 18}
    # the first sampled task is the informative one with probability 1/4
    hits = int((res.n_queries == 2).sum())
    lo, hi = beta_dist.ppf([0.0005, 0.9995], [hits, hits + 1], [400 - hits + 1, 400 - hits])
    assert lo <= 0.25 <= hi


def test_replications_do_not_depend_on_batching():
    M = one_task_gap_means(4, 6, 0.7)
    full = active_ranking(M, n_reps=10, seed=11)
    part = active_ranking(M, n_reps=4, seed=11, rep_offset=6)
    np.testing.assert_array_equal(full.ranking[6:], part.ranking)
    np.testing.assert_array_equal(full.n_queries[6:], part.n_queries)


def test_ranking_is_exact_with_probability_at_least_one_minus_delta():
    # a harder instance: six experts, gaps on two of eight tasks, delta = 0.2
    M = np.zeros((6, 8))
    M[:, :2] = -0.25 * np.arange(6)[:, None]
    res = active_ranking(M, delta=0.2, n_reps=300, seed=5)
    k = int(res.correct.sum())
    lower = beta_dist.ppf(0.001, k, 300 - k + 1) if k < 300 else 0.001 ** (1 / 300)
    upper = 1.0 if k == 300 else beta_dist.ppf(0.999, k + 1, 300 - k)
    assert upper >= 0.8, f"success {k}/300 is significantly below 1 - delta"
    assert lower > 0.5


def test_adaptive_schedule_beats_uniform_sweeps_on_a_one_task_gap():
    # uniform sweeps need about d^2 / gap^2 queries here, the adaptive schedule about d / gap^2 (times logs)
    M = one_task_gap_means(2, 64, 1.0)
    a = compare_experts(M, n_reps=50, seed=4)
    u = compare_experts(M, n_reps=50, seed=4, schedule="uniform")
    assert a.correct.all() and u.correct.all()
    assert u.n_queries.mean() > 10 * a.n_queries.mean()


def test_budget_exhaustion_is_reported():
    res = active_ranking(dense_gap_means(3, 4, 0.05), n_reps=5, seed=0, max_queries=50)
    assert not res.finished.any() and not res.correct.any()
    assert (res.n_queries <= 50).all()


@pytest.mark.parametrize("means, match", [
    (np.array([[1.0, 0.0], [0.0, 1.0]]), "not monotone"),
    (np.array([[1.0, np.nan], [0.0, 0.0]]), "finite"),
    (np.array([[1.0, 0.5], [1.0, 0.5], [0.0, 0.0]]), "identical"),
    (np.zeros(3), "shape"),
    (np.ones((1, 3)), "at least 2 experts"),
])
def test_bad_means(means, match):
    with pytest.raises(ValueError, match=match):
        active_ranking(means)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(delta=0.0), ValueError, "delta"), (dict(delta=1.0), ValueError, "delta"),
    (dict(delta=float("nan")), ValueError, "delta"), (dict(sigma=0.0), ValueError, "sigma"),
    (dict(n_reps=0), ValueError, "n_reps"), (dict(schedule="greedy"), ValueError, "schedule"),
    (dict(max_queries=0), ValueError, "max_queries"), (dict(delta="0.1"), TypeError, "delta"),
])
def test_bad_arguments(kw, exc, match):
    with pytest.raises(exc, match=match):
        active_ranking(dense_gap_means(3, 2, 1.0), **kw)


def test_compare_needs_two_experts_and_instances_validate():
    with pytest.raises(ValueError, match="exactly 2"):
        compare_experts(dense_gap_means(3, 2, 1.0))
    with pytest.raises(TypeError, match="means"):
        active_ranking(np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(ValueError, match="gap"):
        dense_gap_means(3, 2, -1.0)
    with pytest.raises(ValueError, match="task"):
        one_task_gap_means(3, 2, 1.0, task=2)
