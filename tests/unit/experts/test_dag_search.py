"""Search-and-stop on a DAG: hand-worked plans and orders, brute force, the batched simulation, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import (SearchDAG, SearchOutcome, brute_force_search, dag_greedy, dag_optimistic, greedy_search,
                               plan_value, random_dag, random_out_forest, random_series_parallel, search_dag,
                               search_stream)
from expertlab.experts._dag_order import is_series_parallel

LEARNERS = {"greedy": dag_greedy, "full": lambda: dag_greedy(stop=False), "optimistic": dag_optimistic}


def _run(learner, dag, budget, n_reps, seed=0, n_budgets=20, backend="numpy", rep_offset=0, **kw):
    env = search_stream(dag, budget, n_budgets)
    return env, sim.run(learner, env, horizon=env.max_instances, n_reps=n_reps, seed=seed, backend=backend,
                        rep_offset=rep_offset, **kw)


def _found(res):
    """``found(b_j)`` as (n_budgets, n_reps), the layout of the budget grid."""
    return res.final["found_by_budget"].T


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
    for make in LEARNERS.values():
        env, res = _run(make(), dag, 101.0, 3, n_budgets=5)
        np.testing.assert_array_equal(_found(res), np.floor(env.budgets / 2.0)[:, None] * np.ones((1, 3)))
        assert env.optimal_rate == 0.5 and res.final["stopping_time"].tolist() == [51] * 3
        assert res.final["stopped"].all() and res.metrics["found"][-1].tolist() == [51] * 3
        np.testing.assert_array_equal(res.metrics["cost"][-1], 102.0)


def test_known_policy_binomial_counts():
    # one node, mu = 0.3, cost 1: every instance costs 1, so found(B) ~ Binomial(B, 0.3)
    dag = search_dag([[]], [0.3], [1.0])
    _, res = _run(dag_greedy(), dag, 400.0, 2000, seed=7, n_budgets=3)
    last = _found(res)[-1]
    assert abs(last.mean() - 120.0) < 4 * np.sqrt(400 * 0.3 * 0.7 / 2000)
    assert last.var(ddof=1) == pytest.approx(400 * 0.3 * 0.7, rel=0.15)
    np.testing.assert_array_equal(res.metrics["found_within_budget"][-1], last)


def test_wald_bound_for_the_greedy_policy():
    # E[found(B)] lies in [r* B - 1, r* (B + C_max)] (Wald's identity on the instance that crosses B)
    dag = random_out_forest(6, seed=2)
    g = greedy_search(dag)
    c_max = float(dag.cost[list(g.plan)].sum())
    _, res = _run(dag_greedy(), dag, 300.0, 2000, seed=3, backend="auto")
    last = _found(res)[-1]
    m, se = last.mean(), last.std(ddof=1) / np.sqrt(2000)
    assert g.rate * 300.0 - 1 - 4 * se <= m <= g.rate * (300.0 + c_max) + 4 * se


def test_stopping_beats_searching_everything():
    dag = search_dag([[], [0], [0]], [0.6, 0.1, 0.1], [1.0, 1.0, 1.0])
    _, greedy = _run(dag_greedy(), dag, 2000.0, 200, seed=1)
    _, full = _run(dag_greedy(stop=False), dag, 2000.0, 200, seed=1)
    g, f = _found(greedy)[-1], _found(full)[-1]
    se = np.sqrt(f.var() / 200 + g.var() / 200)
    # rates 0.6 and 0.8 / 1.7: the gap is (0.6 - 0.47) * 2000 = 259 hiders, far beyond 5 standard errors
    assert g.mean() - f.mean() > 259 - 5 * se


def test_optimistic_learner_finds_the_stop():
    # root mu = 0.6 (cost 1), two leaves mu = 0.1 (cost 3): searching everything has rate 0.8 / 3.1 and loses
    # (0.6 - 0.8 / 3.1) B, linear in B.  Adding a leaf pays only while its upper bound exceeds
    # 0.6 * 2.2 - 0.6 = 0.72, which takes O(ln k) pulls, so the learner's regret is a small fraction of that
    dag = search_dag([[], [0], [0]], [0.6, 0.1, 0.1], [1.0, 3.0, 3.0])
    _, res = _run(dag_optimistic(), dag, 4000.0, 40, seed=2, n_budgets=4)
    _, full = _run(dag_greedy(stop=False), dag, 4000.0, 40, seed=2, n_budgets=4)
    reg, reg_full = res.final["regret_by_budget"].mean(axis=0), full.final["regret_by_budget"].mean(axis=0)
    assert reg_full[-1] == pytest.approx((0.6 - 0.8 / 3.1) * 4000.0, rel=0.05)
    assert reg[-1] < 0.05 * reg_full[-1]
    assert (res.final["answer"] == [0, -1, -1]).all()    # every replication ends searching the root only


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_batching_and_seeds(backend):
    dag = random_series_parallel(5, seed=3)
    for make in LEARNERS.values():
        _, a = _run(make(), dag, 150.0, 8, seed=4, backend=backend)
        _, b = _run(make(), dag, 150.0, 3, seed=4, rep_offset=5, backend=backend)
        for k in a.metrics:
            np.testing.assert_array_equal(a.metrics[k][:, 5:], b.metrics[k])
        for k in a.final:
            np.testing.assert_array_equal(a.final[k][5:], b.final[k])
        _, c = _run(make(), dag, 150.0, 8, seed=4, backend=backend)
        np.testing.assert_array_equal(_found(a), _found(c))
    _, d = _run(dag_optimistic(), dag, 150.0, 8, seed=5, backend=backend)
    assert not np.array_equal(_found(a), _found(d))


@pytest.mark.parametrize("make", [random_out_forest, random_series_parallel, random_dag])
def test_numba_fast_path_equals_the_array_path(make):
    # the registered fast path does the same arithmetic in the same order: every metric, the budget grid,
    # the stopping times and the answers agree with the engine's array path to 1e-10
    dag = make(6, seed=1)
    for make_learner in LEARNERS.values():
        env, a = _run(make_learner(), dag, 400.0, 16, seed=9, backend="numpy")
        _, b = _run(make_learner(), dag, 400.0, 16, seed=9, backend="numba")
        assert (a.backend, b.backend) == ("numpy", "numba")
        assert set(a.metrics) == set(b.metrics) and set(a.final) == set(b.final)
        for k in a.metrics:
            np.testing.assert_allclose(b.metrics[k], a.metrics[k], rtol=0, atol=1e-10)
        for k in a.final:
            np.testing.assert_allclose(b.final[k], a.final[k], rtol=0, atol=1e-10)


def test_fast_path_with_a_short_horizon_matches_too():
    # a horizon too short to spend the budget: nothing stops, stopping_time is the horizon on both paths
    dag = random_out_forest(5, seed=0)
    env = search_stream(dag, 500.0)
    for make_learner in LEARNERS.values():
        a = sim.run(make_learner(), env, horizon=37, n_reps=5, seed=1, backend="numpy")
        b = sim.run(make_learner(), env, horizon=37, n_reps=5, seed=1, backend="numba")
        assert not a.final["stopped"].any() and a.final["stopping_time"].tolist() == [37] * 5
        for k in a.final:
            np.testing.assert_allclose(b.final[k], a.final[k], rtol=0, atol=1e-10)
        for k in a.metrics:
            np.testing.assert_allclose(b.metrics[k], a.metrics[k], rtol=0, atol=1e-10)


def test_result_shapes():
    env, res = _run(dag_optimistic(), random_out_forest(4, seed=0), 100.0, 5, n_budgets=7)
    assert env.budgets.shape == (7,) and env.budgets[-1] == 100.0
    assert res.final["found_by_budget"].shape == res.final["regret_by_budget"].shape == (5, 7)
    np.testing.assert_allclose(res.final["regret_by_budget"], env.optimal_rate * env.budgets[None, :] - _found(res).T)
    assert np.all(np.diff(_found(res), axis=0) >= 0)
    assert res.unit == "episode" and res.final["answer"].shape == (5, 4)
    np.testing.assert_allclose(res.metrics["regret"], env.optimal_rate * res.metrics["cost"] - res.metrics["found"])


def test_environment_step_and_plan_checks():
    env = search_stream(search_dag([[], [0]], [0.25, 0.5], [1.0, 2.0]), 10.0)
    keys = np.arange(3, dtype=np.uint64)
    _, out, info = env.step(None, np.array([[0, 1], [0, -1], [0, 1]]), 0, keys)
    assert isinstance(out, SearchOutcome)
    # the cost stops at the node where the hider is, else the whole plan
    expected = np.where(out.found_at == 0, 1.0, np.where(out.found_at == 1, 3.0, [3.0, 1.0, 3.0]))
    np.testing.assert_allclose(out.cost, expected)
    for bad in ([[1, 0]] * 3, [[-1, 0]] * 3, [[0, 0]] * 3, [[0, 2]] * 3, [[-1, -1]] * 3):
        with pytest.raises(ValueError, match="precedence-feasible"):
            env.step(None, np.array(bad), 0, keys)
    with pytest.raises(ValueError, match="int plan"):
        env.step(None, np.zeros((3, 2)), 0, keys)


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
    for f in (greedy_search, brute_force_search, search_stream):
        with pytest.raises(TypeError, match="SearchDAG"):
            f([[], [0]])
    with pytest.raises(ValueError, match="max_ideals"):
        brute_force_search(search_dag([[]] * 6, [0.1] * 6, [1.0] * 6), max_ideals=10)
    bad = [(lambda: search_stream(dag, budget=0.0), ValueError, "budget"),
           (lambda: search_stream(dag, budget=float("nan")), ValueError, "budget"),
           (lambda: search_stream(dag, n_budgets=1), ValueError, "n_budgets"),
           (lambda: dag_optimistic(bonus=-1.0), ValueError, "bonus"),
           (lambda: dag_optimistic(replan_every=0), ValueError, "replan_every"),
           (lambda: dag_greedy(stop="yes"), TypeError, "stop"),
           (lambda: sim.run(dag_greedy(), search_stream(dag), horizon=5, n_reps=0), ValueError, "n_reps"),
           (lambda: sim.run(dag_greedy(), search_stream(dag), horizon=5, seed=-1), ValueError, "seed"),
           (lambda: sim.run(dag_greedy(), search_stream(dag), horizon=5, backend="cuda"), ValueError, "cuda"),
           (lambda: sim.run(dag_greedy(), search_stream(dag), horizon=2.5), TypeError, "horizon")]
    for make, exc, match in bad:
        with pytest.raises(exc, match=match):
            make()
    with pytest.raises(ValueError, match="absent"):
        random_out_forest(4, absent=1.5)
    with pytest.raises(ValueError, match="edge_prob"):
        random_dag(4, edge_prob=-0.1)
    assert isinstance(dag, SearchDAG)
