"""Search-and-stop on a DAG: hand-worked plans and orders, brute force, the batched simulation, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from expertlab.experts import (DAG_POLICIES, SearchDAG, brute_force_search, dag_search, greedy_search, plan_value,
                               random_dag, random_out_forest, random_series_parallel, search_dag)
from expertlab.experts._dag_order import is_series_parallel


def test_plan_value_by_hand():
    dag = search_dag([[], [0]], [0.25, 0.5], [1.0, 2.0])
    assert plan_value(dag, [0]) == (0.25, 1.0)
    F, C = plan_value(dag, [0, 1])           # 1 + 2 * (1 - 0.25)
    assert F == pytest.approx(0.75) and C == pytest.approx(2.5)


def test_block_merging_and_full_plan_by_hand():
    # 0 -> 1 with mu = (0, 0.5) and a lone node 2 with mu = 0.3, unit costs.  The chain {0, 1} has density
    # 0.25 < 0.3, so node 2 goes first; prefixes: {2}: 0.3, {2, 0}: 0.3 / 1.7, all: 0.8 / (1 + 0.7 + 0.7)
    dag = search_dag([[], [0], []], [0.0, 0.5, 0.3], [1.0, 1.0, 1.0])
    g = greedy_search(dag)
    assert g.order == (2, 0, 1) and g.blocks == ((2,), (0, 1))
    assert g.plan == (2, 0, 1) and g.rate == pytest.approx(0.8 / 2.4)
    # the other orders: (0, 1, 2) 0.8 / 2.5, (0, 2, 1) 0.8 / 2.7, (0, 1) 0.5 / 2: the greedy one is optimal
    assert brute_force_search(dag).rate == pytest.approx(0.8 / 2.4)


def test_optimal_stop_by_hand():
    # root mu = 0.6 with two leaves of 0.1 each, unit costs: {0}: 0.6, {0, 1}: 0.7 / 1.4 = 0.5,
    # {0, 1, 2}: 0.8 / (1 + 0.4 + 0.3) = 0.47: stop after the root
    dag = search_dag([[], [0], [0]], [0.6, 0.1, 0.1], [1.0, 1.0, 1.0])
    g = greedy_search(dag)
    assert g.plan == (0,) and g.rate == pytest.approx(0.6) and len(g.order) == 3
    assert brute_force_search(dag).plan == (0,)


def test_prime_dag_blocks_by_hand():
    # the "N" 0 -> 2 <- 1 -> 3 with mu = (0, 0, 0.5, 0.4), costs (3, 2, 2, 2): {1, 3} and the whole set both
    # have density 0.1, the least such block {1, 3} comes first; then 0, 2: cost 2 + 2 + 0.6 * 3 + 0.6 * 2
    dag = search_dag([[], [], [0, 1], [1]], [0.0, 0.0, 0.5, 0.4], [3.0, 2.0, 2.0, 2.0])
    assert not is_series_parallel(dag)
    g = greedy_search(dag)
    assert g.blocks == ((1, 3), (0, 2))
    assert g.expected_cost == pytest.approx(7.0) and g.rate == pytest.approx(0.9 / 7.0)
    assert brute_force_search(dag).rate == pytest.approx(0.9 / 7.0)


def _enumerate_rate(dag):
    best = 0.0

    def rec(seq, seen):
        nonlocal best
        if seq:
            F, C = plan_value(dag, seq)
            best = max(best, F / C)
        for v in range(dag.n_nodes):
            if v not in seen and all(u in seen for u in dag.parents[v]):
                rec(seq + [v], seen | {v})

    rec([], set())
    return best


@pytest.mark.parametrize("make", [random_out_forest, random_series_parallel, random_dag])
def test_brute_force_against_enumeration_and_greedy(make):
    for seed in range(6):
        dag = make(6, seed=seed)
        b = brute_force_search(dag)
        assert b.rate == pytest.approx(_enumerate_rate(dag), rel=1e-12)
        g = greedy_search(dag)
        assert g.rate <= b.rate * (1 + 1e-12)
        if make is not random_dag:
            assert is_series_parallel(dag)
            assert g.rate == pytest.approx(b.rate, rel=1e-9)


def test_generators_are_seeded_and_valid():
    for make in (random_out_forest, random_series_parallel, random_dag):
        a, b, c = make(7, seed=4), make(7, seed=4), make(7, seed=5)
        assert a.parents == b.parents and np.array_equal(a.prob, b.prob) and np.array_equal(a.cost, b.cost)
        assert not np.array_equal(a.prob, c.prob)
        assert a.prob.sum() == pytest.approx(0.8) and a.cost.min() >= 0.5 and a.cost.max() <= 2.0
    forest = random_out_forest(9, n_roots=3, seed=1)
    assert [len(p) for p in forest.parents[:3]] == [0, 0, 0] and all(len(p) == 1 for p in forest.parents[3:])
    assert not dag_is_writable(forest)


def dag_is_writable(dag):
    return dag.prob.flags.writeable or dag.cost.flags.writeable


def test_single_node_deterministic_counts():
    # the hider is always at the only node, cost 2: exactly floor(b / 2) found by budget b
    dag = search_dag([[]], [1.0], [2.0])
    for policy in DAG_POLICIES:
        res = dag_search(dag, policy=policy, budget=101.0, n_checkpoints=5, n_reps=3, seed=0)
        np.testing.assert_array_equal(res.found, np.floor(res.budgets / 2.0)[:, None] * np.ones((1, 3)))
        assert res.optimal_rate == 0.5 and res.n_instances.tolist() == [51] * 3


def test_known_policy_binomial_counts():
    # one node, mu = 0.3, cost 1: every instance costs 1, so found(B) ~ Binomial(B, 0.3)
    dag = search_dag([[]], [0.3], [1.0])
    res = dag_search(dag, budget=400.0, n_checkpoints=3, n_reps=2000, seed=7)
    last = res.found[-1]
    assert abs(last.mean() - 120.0) < 4 * np.sqrt(400 * 0.3 * 0.7 / 2000)
    assert last.var(ddof=1) == pytest.approx(400 * 0.3 * 0.7, rel=0.15)


def test_wald_bound_for_the_greedy_policy():
    # E[found(B)] lies in [r* B - 1, r* (B + C_max)] (Wald's identity on the instance that crosses B)
    dag = random_out_forest(6, seed=2)
    g = greedy_search(dag)
    c_max = float(dag.cost[list(g.plan)].sum())
    res = dag_search(dag, budget=300.0, n_reps=2000, seed=3)
    m, se = res.found[-1].mean(), res.found[-1].std(ddof=1) / np.sqrt(2000)
    assert g.rate * 300.0 - 1 - 4 * se <= m <= g.rate * (300.0 + c_max) + 4 * se


def test_stopping_beats_searching_everything():
    dag = search_dag([[], [0], [0]], [0.6, 0.1, 0.1], [1.0, 1.0, 1.0])
    kw = dict(budget=2000.0, n_reps=200, seed=1)
    greedy, full = dag_search(dag, policy="greedy", **kw), dag_search(dag, policy="full", **kw)
    se = np.sqrt(full.found[-1].var() / 200 + greedy.found[-1].var() / 200)
    # rates 0.6 and 0.8 / 1.7: the gap is (0.6 - 0.47) * 2000 = 259 hiders, far beyond 5 standard errors
    assert greedy.found[-1].mean() - full.found[-1].mean() > 259 - 5 * se


def test_optimistic_learner_finds_the_stop():
    # root mu = 0.6 (cost 1), two leaves mu = 0.1 (cost 3): searching everything has rate 0.8 / 3.1 and loses
    # (0.6 - 0.8 / 3.1) B, linear in B.  Adding a leaf pays only while its upper bound exceeds
    # 0.6 * 2.2 - 0.6 = 0.72, which takes O(ln k) pulls, so the learner's regret is a small fraction of that
    dag = search_dag([[], [0], [0]], [0.6, 0.1, 0.1], [1.0, 3.0, 3.0])
    kw = dict(budget=4000.0, n_checkpoints=4, n_reps=40, seed=2)
    res, full = dag_search(dag, policy="optimistic", **kw), dag_search(dag, policy="full", **kw)
    reg, reg_full = res.regret.mean(axis=1), full.regret.mean(axis=1)
    assert reg_full[-1] == pytest.approx((0.6 - 0.8 / 3.1) * 4000.0, rel=0.05)
    assert reg[-1] < 0.05 * reg_full[-1]


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_batching_and_seeds(backend):
    dag = random_series_parallel(5, seed=3)
    for policy in DAG_POLICIES:
        a = dag_search(dag, policy=policy, budget=150.0, n_reps=8, seed=4, backend=backend)
        b = dag_search(dag, policy=policy, budget=150.0, n_reps=3, seed=4, rep_offset=5, backend=backend)
        np.testing.assert_array_equal(a.found[:, 5:], b.found)
        np.testing.assert_array_equal(a.n_instances[5:], b.n_instances)
        c = dag_search(dag, policy=policy, budget=150.0, n_reps=8, seed=4, backend=backend)
        np.testing.assert_array_equal(a.found, c.found)
    d = dag_search(dag, policy="optimistic", budget=150.0, n_reps=8, seed=5, backend=backend)
    assert not np.array_equal(a.found, d.found)


@pytest.mark.parametrize("make", [random_out_forest, random_series_parallel, random_dag])
def test_numba_kernel_equals_numpy_path(make):
    # same arithmetic in the same order: identical counts for every policy
    dag = make(6, seed=1)
    for policy in DAG_POLICIES:
        kw = dict(policy=policy, budget=400.0, n_reps=16, seed=9)
        a, b = dag_search(dag, backend="numpy", **kw), dag_search(dag, backend="numba", **kw)
        np.testing.assert_array_equal(a.found, b.found)
        np.testing.assert_array_equal(a.n_instances, b.n_instances)
        assert (a.backend, b.backend) == ("numpy", "numba")


def test_result_shapes():
    res = dag_search(random_out_forest(4, seed=0), policy="optimistic", budget=100.0, n_checkpoints=7, n_reps=5)
    assert res.budgets.shape == (7,) and res.budgets[-1] == 100.0
    assert res.found.shape == res.regret.shape == (7, 5)
    np.testing.assert_allclose(res.regret, res.optimal_rate * res.budgets[:, None] - res.found)
    assert np.all(np.diff(res.found, axis=0) >= 0)


@pytest.mark.parametrize("args, exc, match", [
    (([[1], [0]], [0.5, 0.5], [1.0, 1.0]), ValueError, "cycle"),
    (([[0]], [0.5], [1.0]), ValueError, "self-loop"),
    (([[2], []], [0.5, 0.5], [1.0, 1.0]), ValueError, r"parents\[0\]"),
    (([[0.5], []], [0.5, 0.5], [1.0, 1.0]), TypeError, r"parents\[0\]"),
    (([], [], []), ValueError, "at least one node"),
    ((3, [0.5], [1.0]), TypeError, "parents"),
    (([[], []], [0.7, 0.6], [1.0, 1.0]), ValueError, "at most 1"),
    (([[], []], [0.7, -0.1], [1.0, 1.0]), ValueError, "non-negative"),
    (([[], []], [0.0, 0.0], [1.0, 1.0]), ValueError, "positive entry"),
    (([[], []], [np.nan, 0.1], [1.0, 1.0]), ValueError, "NaN"),
    (([[], []], [0.1, 0.1], [1.0, np.inf]), ValueError, "NaN or infinite"),
    (([[], []], [0.1, 0.1, 0.1], [1.0, 1.0]), ValueError, r"shape \(2,\)"),
    (([[], []], [0.1, 0.1], [1.0, 0.0]), ValueError, "cost must be positive"),
    (([[], []], "ab", [1.0, 1.0]), TypeError, "prob"),
])
def test_bad_dags(args, exc, match):
    with pytest.raises(exc, match=match):
        search_dag(*args)


def test_bad_plans_and_arguments():
    dag = search_dag([[], [0]], [0.25, 0.5], [1.0, 2.0])
    with pytest.raises(ValueError, match="before its parent"):
        plan_value(dag, [1, 0])
    with pytest.raises(ValueError, match="twice"):
        plan_value(dag, [0, 0])
    with pytest.raises(ValueError, match="at least one node"):
        plan_value(dag, [])
    with pytest.raises(ValueError, match="plan entry"):
        plan_value(dag, [5])
    for f in (greedy_search, brute_force_search, dag_search):
        with pytest.raises(TypeError, match="SearchDAG"):
            f([[], [0]])
    with pytest.raises(ValueError, match="max_ideals"):
        brute_force_search(search_dag([[]] * 6, [0.1] * 6, [1.0] * 6), max_ideals=10)
    bad = [(dict(policy="oracle"), ValueError, "policy"), (dict(budget=0.0), ValueError, "budget"),
           (dict(budget=float("nan")), ValueError, "budget"), (dict(n_reps=0), ValueError, "n_reps"),
           (dict(n_checkpoints=1), ValueError, "n_checkpoints"), (dict(bonus=-1.0), ValueError, "bonus"),
           (dict(replan_every=0), ValueError, "replan_every"), (dict(seed=-1), ValueError, "seed"),
           (dict(backend="cuda"), ValueError, "backend"),
           (dict(n_reps=2.5), TypeError, "n_reps")]
    for kw, exc, match in bad:
        with pytest.raises(exc, match=match):
            dag_search(dag, **kw)
    with pytest.raises(ValueError, match="absent"):
        random_out_forest(4, absent=1.5)
    with pytest.raises(ValueError, match="edge_prob"):
        random_dag(4, edge_prob=-0.1)
    assert isinstance(dag, SearchDAG)
