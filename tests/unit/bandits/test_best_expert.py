"""Best-expert identification on the engine, and a plain-Python reference of the pairwise comparison and of
both searches (one batch of queries per step, tasks from the learner's round key, noise from the
environment's)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from expertlab import sim
from expertlab.random import LEARNER_STREAM, rep_key, round_key, stream_key, uniform
from expertlab.bandits import (best_expert, cluster_below_best_means, compare_experts, dense_gap_means,
                               expert_tasks, one_task_gap_means)
from expertlab.sim._variates import normal

H = 100_000  # batches: far more than any run below needs


def run(learner, M, n_reps, seed, sigma=1.0, **kw):
    env = expert_tasks(M, sigma=sigma)
    res = sim.run(learner, env, horizon=kw.pop("horizon", H), n_reps=n_reps, seed=seed, **kw)
    return env, res


class Ref:
    """One replication's keys and step counter."""

    def __init__(self, seed, rep):
        self.rk = rep_key(np.uint64(seed), np.uint64(rep))
        self.lk = stream_key(self.rk, LEARNER_STREAM)
        self.t = 0


def _compare(M, a, b, lq0, sigma, ref, cap):
    """The comparison schedule of the ``active_ranking`` docstring, stopped before a level exceeds ``cap``.

    Each level is one step ``t`` of the run.  Returns (sign, queries); sign 0 when the cap stops it.
    """
    d = M.shape[1]
    top = math.ceil(math.log2(d)) if d > 1 else 0
    queries, r = 0, 0
    while True:
        levels = list(range(max(0, r - top), r + 1))
        lam = lq0 + math.log(math.pi ** 2 / 6 * (r + 1) ** 2 * 2 * len(levels))
        for lev in levels:
            h, m = 2 ** lev, 2 ** (r - lev)
            sweep = m >= d
            m = min(m, d)
            if queries + 2 * h * m > cap:
                return 0, queries
            ek = round_key(ref.rk, np.uint64(ref.t))
            kt = round_key(ref.lk, np.uint64(ref.t))
            sums = []
            for q in range(m):
                j = q if sweep else min(int(uniform(kt, np.uint64(q)) * d), d - 1)
                z = float(normal(ek, np.uint64(q)))
                sums.append(h * (M[a, j] - M[b, j]) + sigma * math.sqrt(2 * h) * z)
            ref.t += 1
            queries += 2 * h * m
            cands = [(abs(x) / (sigma * math.sqrt(4 * h * (lam + math.log(m)))), x) for x in sums]
            cands.append((abs(sum(sums)) / (sigma * math.sqrt(4 * h * m * lam)), sum(sums)))
            z, x = max(cands, key=lambda c: c[0])
            if z > 1:
                return (1 if x > 0 else -1), queries
        r += 1


@pytest.mark.parametrize("M", [one_task_gap_means(2, 5, 0.8, task=3), dense_gap_means(2, 3, 0.3),
                               np.array([[0.4, 0.1, 0.0, 0.2], [0.0, 0.0, -0.1, 0.2]])])
def test_comparison_matches_plain_python(M):
    env, res = run(compare_experts(delta=0.1), M, 12, 7)
    with np.errstate(over="ignore"):  # the counter-based generator wraps 64-bit products by design
        ref = []
        for r in range(12):
            k = Ref(7, r)
            s, q = _compare(M, 0, 1, math.log(10.0), 1.0, k, math.inf)
            ref.append((0 if s > 0 else 1, q, k.t))
    assert res.final["answer"].tolist() == [a for a, _, _ in ref]
    assert res.metrics["queries"][-1].tolist() == [q for _, q, _ in ref]
    assert res.final["stopping_time"].tolist() == [t for _, _, t in ref]


def _reference_doubling(M, delta, sigma, seed, rep, first_cap):
    """The capped max search written from the ``best_expert`` docstring."""
    n = M.shape[0]
    ref = Ref(seed, rep)
    alive, champ, used, comps, phase, cap = set(range(n)), 0, 0, 0, 0, first_cap
    while len(alive) > 1:
        lq = math.log((n - 1) / delta) + math.log(math.pi ** 2 / 6 * (phase + 1) ** 2)
        for i in range(n):
            if i not in alive or i == champ:
                continue
            s, q = _compare(M, i, champ, lq, sigma, ref, cap)
            used += q
            comps += 1
            if s > 0:
                alive.discard(champ)
                champ = i
            elif s < 0:
                alive.discard(i)
        phase += 1
        cap *= 2
    return champ, used, comps, ref.t


@pytest.mark.parametrize("M", [cluster_below_best_means(5, 3, 0.5, 0.05), one_task_gap_means(4, 6, 0.7)[::-1],
                               dense_gap_means(3, 2, 0.4)])
def test_doubling_search_matches_plain_python(M):
    seed = 9
    env, res = run(best_expert(delta=0.1, first_cap=4), M, 6, seed)
    with np.errstate(over="ignore"):
        ref = [_reference_doubling(M, 0.1, 1.0, seed, r, 4) for r in range(6)]
    assert res.final["answer"].tolist() == [b for b, _, _, _ in ref]
    assert res.metrics["queries"][-1].tolist() == [q for _, q, _, _ in ref]
    assert res.metrics["comparisons"][-1].tolist() == [c for _, _, c, _ in ref]
    assert res.final["stopping_time"].tolist() == [t for _, _, _, t in ref]


def _reference_sequential(M, delta, sigma, seed, rep):
    n = M.shape[0]
    ref = Ref(seed, rep)
    champ, used = 0, 0
    for i in range(1, n):
        s, q = _compare(M, i, champ, math.log((n - 1) / delta), sigma, ref, math.inf)
        used += q
        if s > 0:
            champ = i
    return champ, used


def test_sequential_search_matches_plain_python():
    M = one_task_gap_means(4, 3, 0.8)[[1, 0, 3, 2]]
    env, res = run(best_expert(delta=0.1, method="sequential"), M, 5, 2)
    with np.errstate(over="ignore"):
        ref = [_reference_sequential(M, 0.1, 1.0, 2, r) for r in range(5)]
    assert res.final["answer"].tolist() == [b for b, _ in ref]
    assert res.metrics["queries"][-1].tolist() == [q for _, q in ref]


def test_noiseless_doubling_search_on_a_dense_instance():
    # sigma -> 0, gap 1 on every task: every comparison is decided by its first level (2 queries), so
    # phase 0 alone compares expert 0 with experts 1..4 and removes each: 4 comparisons, 8 queries
    env, res = run(best_expert(), dense_gap_means(5, 3, 1.0), 3, 0, sigma=1e-9)
    assert env.correct(res.final["answer"]).all()
    assert res.metrics["comparisons"][-1].tolist() == [4] * 3 and res.metrics["queries"][-1].tolist() == [8] * 3
    # the best expert last: the champion passes down the line, one comparison per expert again
    env, rev = run(best_expert(), dense_gap_means(5, 3, 1.0)[::-1], 3, 0, sigma=1e-9)
    assert env.correct(rev.final["answer"]).all() and env.best == 4
    assert rev.metrics["comparisons"][-1].tolist() == [4] * 3


def test_sequential_search_runs_n_minus_one_comparisons():
    M = one_task_gap_means(6, 5, 0.6)[::-1]  # the best expert is the last row
    env, res = run(best_expert(delta=0.05, method="sequential"), M, 100, 2)
    assert env.best == 5
    assert env.correct(res.final["answer"]).mean() >= 0.95
    assert (res.metrics["comparisons"][-1] == 5).all()


def test_capped_search_does_not_pay_for_the_gaps_between_the_others():
    # with the best Delta = 0.4 above a cluster eta apart, the sequential search pays about d / eta^2
    # (16x from eta = 0.01 to 0.0025) while the capped search pays about n / Delta^2 at every eta
    q = {}
    for eta in (0.01, 0.0025):
        M = cluster_below_best_means(6, 4, 0.4, eta)
        for method in ("doubling", "sequential"):
            env, r = run(best_expert(delta=0.05, method=method), M, 40, 3)
            assert env.correct(r.final["answer"]).all()
            q[method, eta] = r.metrics["queries"][-1].mean()
    assert 0.8 < q["doubling", 0.0025] / q["doubling", 0.01] < 1.25
    assert 8.0 < q["sequential", 0.0025] / q["sequential", 0.01] < 32.0
    assert q["sequential", 0.0025] > 20 * q["doubling", 0.0025]


def test_doubling_search_is_right_with_probability_at_least_one_minus_delta():
    M = cluster_below_best_means(6, 4, 0.15, 0.02)
    env, res = run(best_expert(delta=0.2), M, 300, 4, checkpoints=[H])
    k = int(env.correct(res.final["answer"]).sum())
    upper = 1.0 if k == 300 else beta_dist.ppf(0.999, k + 1, 300 - k)
    assert upper >= 0.8, f"success {k}/300 is significantly below 1 - delta"


@pytest.mark.parametrize("method", ["doubling", "sequential"])
def test_replications_do_not_depend_on_batching(method):
    M = cluster_below_best_means(5, 4, 0.5, 0.1)
    _, full = run(best_expert(method=method), M, 10, 11)
    _, part = run(best_expert(method=method), M, 4, 11, rep_offset=6)
    np.testing.assert_array_equal(full.final["answer"][6:], part.final["answer"])
    np.testing.assert_array_equal(full.metrics["queries"][-1, 6:], part.metrics["queries"][-1])


@pytest.mark.parametrize("method", ["doubling", "sequential"])
def test_budget_exhaustion_is_reported(method):
    env, res = run(best_expert(max_queries=200, method=method), cluster_below_best_means(4, 4, 0.05, 0.01), 5, 0)
    assert res.final["stopped"].all() and (res.final["answer"] == -1).all()
    assert not env.correct(res.final["answer"]).any()
    assert (res.metrics["queries"][-1] <= 200).all()


@pytest.mark.parametrize("kw, exc, match", [
    (dict(method="tournament"), ValueError, "method"), (dict(first_cap=1), ValueError, "first_cap"),
    (dict(first_cap=2.5), TypeError, "first_cap"), (dict(delta=1.0), ValueError, "delta"),
])
def test_bad_arguments(kw, exc, match):
    with pytest.raises(exc, match=match):
        best_expert(**kw)


@pytest.mark.parametrize("args, match", [((1, 3, 1.0, 0.1), "n_experts"), ((3, 0, 1.0, 0.1), "n_tasks"),
                                         ((3, 2, 0.0, 0.1), "gap"), ((3, 2, 1.0, -0.1), "cluster_gap")])
def test_cluster_instance_validates(args, match):
    with pytest.raises(ValueError, match=match):
        cluster_below_best_means(*args)


def test_cluster_instance_is_monotone_with_the_best_last():
    M = cluster_below_best_means(5, 3, 0.3, 0.05)
    assert np.all(M[-1] > M[:-1])  # the best is strictly better on every task
    assert np.all(np.diff(M[:-1, 0]) == pytest.approx(-0.05)) and np.all(M[:-1, 1:] == 0.0)
