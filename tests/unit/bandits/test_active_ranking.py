"""Active ranking of experts on the engine: hand-worked schedules, batching, the oracle and bad input.

The plain-Python reference of the pairwise comparison is in ``test_best_expert.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from expertlab import sim
from expertlab.bandits import (QueryBatch, active_ranking, best_expert, cluster_below_best_means, compare_experts,
                               comparison_budget, dense_gap_means, expert_tasks, instances, one_task_gap_means)

H = 100_000  # batches: far more than any run below needs


def run(learner, M, n_reps, seed, sigma=1.0, horizon=H, **kw):
    env = expert_tasks(M, sigma=sigma)
    res = sim.run(learner, env, horizon=horizon, n_reps=n_reps, seed=seed, **kw)
    return env, res


def test_comparison_budget_counts_binary_insertion():
    # sum_{i=2}^n ceil(log2 i): 0, 1, 1+2, 1+2+2, 1+2+2+3
    assert [comparison_budget(n) for n in range(1, 6)] == [0, 1, 3, 5, 8]


def test_noiseless_dense_comparisons_cost_two_queries_each():
    # sigma -> 0 and gap 1 on every task: round 0 (one task, one repetition) decides every comparison.
    M = dense_gap_means(5, 3, 1.0)
    env, res = run(active_ranking(), M, 4, 3, sigma=1e-9)
    assert env.correct(res.final["answer"]).all() and res.final["stopped"].all()
    # experts arrive in truth order (each worse than all before): binary insertion at the end
    # costs 1, 1, 2, 2 comparisons for i = 1..4, one batch of 2 queries each
    assert res.metrics["comparisons"][-1].tolist() == [6] * 4
    assert res.metrics["queries"][-1].tolist() == [12] * 4
    assert res.final["stopping_time"].tolist() == [6] * 4
    # reversed order: each new expert is the best so far, the worst case sum ceil(log2 i) = 8
    env, rev = run(active_ranking(), M[::-1], 4, 3, sigma=1e-9)
    assert env.correct(rev.final["answer"]).all() and rev.final["answer"][0].tolist() == [4, 3, 2, 1, 0]
    assert rev.metrics["comparisons"][-1].tolist() == [comparison_budget(5)] * 4


def test_noiseless_one_task_gap_follows_the_schedule():
    # d = 4: round 0 samples 1 task (cost 2); round 1 has levels (m=2, h=1) and (m=1, h=2), cost 4 each;
    # round 2 starts with the sweep of all 4 tasks (cost 8), which always finds the informative task.
    # (delta = 1e-6: a pure-noise level decides with probability at most delta, so no run errs in practice.)
    M = one_task_gap_means(2, 4, 1.0, task=2)
    env, res = run(compare_experts(delta=1e-6), M, 400, 0, sigma=1e-9)
    assert env.correct(res.final["answer"]).all()
    q = res.metrics["queries"][-1]
    assert set(q.tolist()) <= {2, 6, 10, 18}
    batches = {2: 1, 6: 2, 10: 3, 18: 4}  # one batch per level
    assert [batches[int(x)] for x in q] == res.final["stopping_time"].tolist()
    # the first sampled task is the informative one with probability 1/4
    hits = int((q == 2).sum())
    lo, hi = beta_dist.ppf([0.0005, 0.9995], [hits, hits + 1], [400 - hits + 1, 400 - hits])
    assert lo <= 0.25 <= hi


def test_replications_do_not_depend_on_batching():
    M = one_task_gap_means(4, 6, 0.7)
    _, full = run(active_ranking(), M, 10, 11)
    _, part = run(active_ranking(), M, 4, 11, rep_offset=6)
    np.testing.assert_array_equal(full.final["answer"][6:], part.final["answer"])
    np.testing.assert_array_equal(full.metrics["queries"][-1, 6:], part.metrics["queries"][-1])
    np.testing.assert_array_equal(full.final["stopping_time"][6:], part.final["stopping_time"])


def test_ranking_is_exact_with_probability_at_least_one_minus_delta():
    # a harder instance: six experts, gaps on two of eight tasks, delta = 0.2
    M = np.zeros((6, 8))
    M[:, :2] = -0.25 * np.arange(6)[:, None]
    env, res = run(active_ranking(delta=0.2), M, 300, 5, checkpoints=[H])
    k = int(env.correct(res.final["answer"]).sum())
    lower = beta_dist.ppf(0.001, k, 300 - k + 1) if k < 300 else 0.001 ** (1 / 300)
    upper = 1.0 if k == 300 else beta_dist.ppf(0.999, k + 1, 300 - k)
    assert upper >= 0.8, f"success {k}/300 is significantly below 1 - delta"
    assert lower > 0.5


def test_adaptive_schedule_beats_uniform_sweeps_on_a_one_task_gap():
    # uniform sweeps need about d^2 / gap^2 queries here, the adaptive schedule about d / gap^2 (times logs)
    M = one_task_gap_means(2, 64, 1.0)
    env, a = run(compare_experts(), M, 50, 4)
    _, u = run(compare_experts(schedule="uniform"), M, 50, 4)
    assert env.correct(a.final["answer"]).all() and env.correct(u.final["answer"]).all()
    assert u.metrics["queries"][-1].mean() > 10 * a.metrics["queries"][-1].mean()


def test_budget_exhaustion_and_the_horizon_stop_without_an_answer():
    env, res = run(active_ranking(max_queries=50), dense_gap_means(3, 4, 0.05), 5, 0)
    assert res.final["stopped"].all() and (res.final["answer"] == -1).all()
    assert not env.correct(res.final["answer"]).any()
    assert (res.metrics["queries"][-1] <= 50).all()
    # a horizon of 3 batches stops the run before any replication can answer
    env, cut = run(active_ranking(), dense_gap_means(3, 4, 0.05), 5, 0, horizon=3)
    assert not cut.final["stopped"].any() and (cut.final["answer"] == -1).all()
    assert cut.final["stopping_time"].tolist() == [3] * 5


def test_oracle_metrics_and_registry():
    env = expert_tasks(one_task_gap_means(4, 3, 1.0)[::-1])
    assert env.ranking.tolist() == [3, 2, 1, 0] and env.best == 3
    assert env.correct(np.array([[3, 2, 1, 0], [3, 2, 0, 1], [-1, -1, -1, -1]])).tolist() == [True, False, False]
    assert env.correct(np.array([3, 0, -1])).tolist() == [True, False, False]
    spec = env.spec
    assert spec.feedback == "expert-queries" and spec.unit == "batch" and spec.n_actions == 4 and spec.n_tasks == 3
    res = sim.run(active_ranking(), env, horizon=2000, n_reps=3, seed=0)
    assert set(res.metrics) == {"queries", "comparisons"} and set(res.final) == {"stopped", "stopping_time", "answer"}
    assert res.final["answer"].shape == (3, 4) and res.unit == "batch"
    for name in ("active_ranking", "compare_experts", "best_expert"):
        reg = sim.get_learner(name)
        assert reg.feedback == "expert-queries" and reg.family == "bandits"
        learner, e, horizon = reg.example()
        out = sim.run(learner, e, horizon, n_reps=2, seed=0)
        assert out.final["stopped"].all()
    assert sim.get_environment("expert_tasks").factory(means=dense_gap_means(2, 2, 1.0)).n_experts == 2


def test_learner_is_pure_and_acts_with_query_batches():
    env = expert_tasks(one_task_gap_means(3, 5, 0.5))
    L = active_ranking()
    spec = env.spec.__class__(**{**env.spec.__dict__, "horizon": 50})
    state = L.init(spec, 2, np.arange(2, dtype=np.uint64), np)
    M = env.reset(2, None, np)
    for t in range(6):
        keys = np.arange(2, dtype=np.uint64) + np.uint64(100 * t)
        batch, state = L.act(state, None, keys)
        assert isinstance(batch, QueryBatch) and batch.tasks.shape[0] == 2
        _, D, info = env.step(M, batch, t, keys)
        before = [np.array(a, copy=True) for a in state[:-1]]
        new = L.update(state, batch, D, keys)
        for a, b in zip(before, state[:-1]):
            np.testing.assert_array_equal(a, b)
        state = new


COMPILED_CASES = [
    (lambda: active_ranking(), dense_gap_means(4, 8, 0.5)),
    (lambda: active_ranking(schedule="uniform"), one_task_gap_means(3, 16, 1.0)),
    (lambda: active_ranking(max_queries=500), dense_gap_means(3, 4, 0.2)),
    (lambda: compare_experts(max_queries=30), one_task_gap_means(2, 7, 0.6)),
    (lambda: best_expert(), cluster_below_best_means(6, 4, 0.4, 0.05)),
    (lambda: best_expert(method="sequential"), cluster_below_best_means(5, 3, 0.5, 0.1)),
    (lambda: best_expert(max_queries=300), cluster_below_best_means(5, 3, 0.2, 0.05)),
    (lambda: best_expert(first_cap=2, max_queries=1), dense_gap_means(3, 2, 1.0)),
]


@pytest.mark.parametrize("horizon", [100_000, 7])
@pytest.mark.parametrize("case", range(len(COMPILED_CASES)))
def test_compiled_path_equals_array_path(case, horizon):
    # budgets that run out, horizons that cut the runs, uniform sweeps and both searches: the same numbers
    make, M = COMPILED_CASES[case]
    env = expert_tasks(M)
    a = sim.run(make(), env, horizon, n_reps=12, seed=5, backend="numpy", rep_offset=3)
    b = sim.run(make(), env, horizon, n_reps=12, seed=5, backend="numba", rep_offset=3)
    assert b.backend == "numba"
    for k in a.metrics:
        np.testing.assert_array_equal(a.metrics[k], b.metrics[k], err_msg=k)
    assert set(a.final) == set(b.final)
    for k in a.final:
        np.testing.assert_array_equal(a.final[k], b.final[k], err_msg=k)


@pytest.mark.parametrize("means, match", [
    (np.array([[1.0, 0.0], [0.0, 1.0]]), "not monotone"),
    (np.array([[1.0, np.nan], [0.0, 0.0]]), "finite"),
    (np.array([[1.0, 0.5], [1.0, 0.5], [0.0, 0.0]]), "identical"),
    (np.zeros(3), "shape"),
    (np.ones((1, 3)), "at least 2 experts"),
])
def test_bad_means(means, match):
    with pytest.raises(ValueError, match=match):
        expert_tasks(means)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(delta=0.0), ValueError, "delta"), (dict(delta=1.0), ValueError, "delta"),
    (dict(delta=float("nan")), ValueError, "delta"), (dict(schedule="greedy"), ValueError, "schedule"),
    (dict(max_queries=0), ValueError, "max_queries"), (dict(delta="0.1"), TypeError, "delta"),
])
def test_bad_arguments(kw, exc, match):
    with pytest.raises(exc, match=match):
        active_ranking(**kw)


def test_bad_runs_and_instances():
    with pytest.raises(ValueError, match="sigma"):
        expert_tasks(dense_gap_means(3, 2, 1.0), sigma=0.0)
    with pytest.raises(ValueError, match="n_reps"):
        sim.run(active_ranking(), expert_tasks(dense_gap_means(3, 2, 1.0)), horizon=10, n_reps=0)
    with pytest.raises(ValueError, match="exactly 2"):
        sim.run(compare_experts(), expert_tasks(dense_gap_means(3, 2, 1.0)), horizon=10)
    with pytest.raises(ValueError, match="feedback"):
        sim.run(active_ranking(), instances.bernoulli([0.2, 0.4]), horizon=10)
    with pytest.raises(TypeError, match="means"):
        expert_tasks(np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(ValueError, match="gap"):
        dense_gap_means(3, 2, -1.0)
    with pytest.raises(ValueError, match="task"):
        one_task_gap_means(3, 2, 1.0, task=2)
    env = expert_tasks(dense_gap_means(3, 2, 1.0))
    with pytest.raises(ValueError, match="ranking"):
        env.correct(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(TypeError, match="QueryBatch"):
        env.step(env.reset(1, None, np), np.zeros((1, 2)), 0, np.zeros(1, dtype=np.uint64))
