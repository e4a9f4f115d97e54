"""Best-expert identification, and a plain-Python reference of the pairwise comparison and of both searches."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from expertlab import _random
from expertlab.bandits import (best_expert, cluster_below_best_means, compare_experts, dense_gap_means,
                               one_task_gap_means)
from expertlab.sim._variates import normal

_TASK = np.uint64(0x6A09E667F3BCC909)
_NOISE = np.uint64(0xBB67AE8584CAA73B)


def _compare(M, a, b, lq0, sigma, keys, draw, cap):
    """The comparison schedule of the ``active_ranking`` docstring, stopped before a level exceeds ``cap``.

    Returns (sign, queries, next draw index); sign 0 when the cap stops it.
    """
    ktask, knoise = keys
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
                return 0, queries, draw
            sums = []
            for q in range(m):
                j = q if sweep else min(int(_random.uniform(ktask, np.uint64(draw)) * d), d - 1)
                z = float(normal(knoise, np.uint64(draw)))
                sums.append(h * (M[a, j] - M[b, j]) + sigma * math.sqrt(2 * h) * z)
                draw += 1
            queries += 2 * h * m
            cands = [(abs(x) / (sigma * math.sqrt(4 * h * (lam + math.log(m)))), x) for x in sums]
            cands.append((abs(sum(sums)) / (sigma * math.sqrt(4 * h * m * lam)), sum(sums)))
            z, x = max(cands, key=lambda c: c[0])
            if z > 1:
                return (1 if x > 0 else -1), queries, draw
        r += 1


@pytest.mark.parametrize("M", [one_task_gap_means(2, 5, 0.8, task=3), dense_gap_means(2, 3, 0.3),
                               np.array([[0.4, 0.1, 0.0, 0.2], [0.0, 0.0, -0.1, 0.2]])])
def test_compiled_comparison_matches_plain_python(M):
    with np.errstate(over="ignore"):
        res = compare_experts(M, delta=0.1, n_reps=12, seed=7)
        ref = []
        for r in range(12):
            rk = _random.rep_key(np.uint64(7), np.uint64(r))
            keys = (_random.stream_key(rk, _TASK), _random.stream_key(rk, _NOISE))
            ref.append(_compare(M, 0, 1, math.log(10.0), 1.0, keys, 0, math.inf))
    assert res.ranking.tolist() == [s for s, _, _ in ref]
    assert res.n_queries.tolist() == [q for _, q, _ in ref]


def _reference_doubling(M, delta, sigma, seed, rep, first_cap):
    """The capped max search written from the ``best_expert`` docstring."""
    n = M.shape[0]
    rk = _random.rep_key(np.uint64(seed), np.uint64(rep))
    keys = (_random.stream_key(rk, _TASK), _random.stream_key(rk, _NOISE))
    alive, champ, draw, used, comps, phase, cap = set(range(n)), 0, 0, 0, 0, 0, first_cap
    while len(alive) > 1:
        lq = math.log((n - 1) / delta) + math.log(math.pi ** 2 / 6 * (phase + 1) ** 2)
        for i in range(n):
            if i not in alive or i == champ:
                continue
            s, q, draw = _compare(M, i, champ, lq, sigma, keys, draw, cap)
            used += q
            comps += 1
            if s > 0:
                alive.discard(champ)
                champ = i
            elif s < 0:
                alive.discard(i)
        phase += 1
        cap *= 2
    return champ, used, comps


@pytest.mark.parametrize("M", [cluster_below_best_means(5, 3, 0.5, 0.05), one_task_gap_means(4, 6, 0.7)[::-1],
                               dense_gap_means(3, 2, 0.4)])
def test_compiled_doubling_search_matches_plain_python(M):
    seed = 9
    res = best_expert(M, delta=0.1, n_reps=6, seed=seed, first_cap=4)
    with np.errstate(over="ignore"):  # the counter-based generator wraps 64-bit products by design
        ref = [_reference_doubling(M, 0.1, 1.0, seed, r, 4) for r in range(6)]
    assert res.ranking.tolist() == [b for b, _, _ in ref]
    assert res.n_queries.tolist() == [q for _, q, _ in ref]
    assert res.n_comparisons.tolist() == [c for _, _, c in ref]


def test_noiseless_doubling_search_on_a_dense_instance():
    # sigma -> 0, gap 1 on every task: every comparison is decided by its first level (2 queries), so
    # phase 0 alone compares expert 0 with experts 1..4 and removes each: 4 comparisons, 8 queries
    res = best_expert(dense_gap_means(5, 3, 1.0), sigma=1e-9, n_reps=3, seed=0)
    assert res.correct.all()
    assert res.n_comparisons.tolist() == [4] * 3 and res.n_queries.tolist() == [8] * 3
    # the best expert last: the champion passes down the line, one comparison per expert again
    rev = best_expert(dense_gap_means(5, 3, 1.0)[::-1], sigma=1e-9, n_reps=3, seed=0)
    assert rev.correct.all() and int(rev.truth) == 4 and rev.n_comparisons.tolist() == [4] * 3


def test_sequential_search_runs_n_minus_one_comparisons():
    M = one_task_gap_means(6, 5, 0.6)[::-1]  # the best expert is the last row
    res = best_expert(M, delta=0.05, n_reps=100, seed=2, method="sequential")
    assert int(res.truth) == 5
    assert res.success_rate >= 0.95
    assert (res.n_comparisons == 5).all()


def test_capped_search_does_not_pay_for_the_gaps_between_the_others():
    # with the best Delta = 0.4 above a cluster eta apart, the sequential search pays about d / eta^2
    # (16x from eta = 0.01 to 0.0025) while the capped search pays about n / Delta^2 at every eta
    q = {}
    for eta in (0.01, 0.0025):
        M = cluster_below_best_means(6, 4, 0.4, eta)
        for method in ("doubling", "sequential"):
            r = best_expert(M, delta=0.05, n_reps=40, seed=3, method=method)
            assert r.correct.all()
            q[method, eta] = r.n_queries.mean()
    assert 0.8 < q["doubling", 0.0025] / q["doubling", 0.01] < 1.25
    assert 8.0 < q["sequential", 0.0025] / q["sequential", 0.01] < 32.0
    assert q["sequential", 0.0025] > 20 * q["doubling", 0.0025]


def test_doubling_search_is_right_with_probability_at_least_one_minus_delta():
    M = cluster_below_best_means(6, 4, 0.15, 0.02)
    res = best_expert(M, delta=0.2, n_reps=300, seed=4)
    k = int(res.correct.sum())
    upper = 1.0 if k == 300 else beta_dist.ppf(0.999, k + 1, 300 - k)
    assert upper >= 0.8, f"success {k}/300 is significantly below 1 - delta"


@pytest.mark.parametrize("method", ["doubling", "sequential"])
def test_replications_do_not_depend_on_batching(method):
    M = cluster_below_best_means(5, 4, 0.5, 0.1)
    full = best_expert(M, n_reps=10, seed=11, method=method)
    part = best_expert(M, n_reps=4, seed=11, rep_offset=6, method=method)
    np.testing.assert_array_equal(full.ranking[6:], part.ranking)
    np.testing.assert_array_equal(full.n_queries[6:], part.n_queries)


@pytest.mark.parametrize("method", ["doubling", "sequential"])
def test_budget_exhaustion_is_reported(method):
    res = best_expert(cluster_below_best_means(4, 4, 0.05, 0.01), n_reps=5, seed=0, max_queries=200, method=method)
    assert not res.finished.any() and not res.correct.any()
    assert (res.n_queries <= 200).all()


@pytest.mark.parametrize("kw, exc, match", [
    (dict(method="tournament"), ValueError, "method"), (dict(first_cap=1), ValueError, "first_cap"),
    (dict(first_cap=2.5), TypeError, "first_cap"), (dict(delta=1.0), ValueError, "delta"),
])
def test_bad_arguments(kw, exc, match):
    with pytest.raises(exc, match=match):
        best_expert(dense_gap_means(3, 2, 1.0), **kw)


@pytest.mark.parametrize("args, match", [((1, 3, 1.0, 0.1), "n_experts"), ((3, 0, 1.0, 0.1), "n_tasks"),
                                         ((3, 2, 0.0, 0.1), "gap"), ((3, 2, 1.0, -0.1), "cluster_gap")])
def test_cluster_instance_validates(args, match):
    with pytest.raises(ValueError, match=match):
        cluster_below_best_means(*args)


def test_cluster_instance_is_monotone_with_the_best_last():
    M = cluster_below_best_means(5, 3, 0.3, 0.05)
    assert np.all(M[-1] > M[:-1])  # the best is strictly better on every task
    assert np.all(np.diff(M[:-1, 0]) == pytest.approx(-0.05)) and np.all(M[:-1, 1:] == 0.0)
