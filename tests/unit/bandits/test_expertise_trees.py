"""Expertise trees and their baselines on the engine: the instance by hand, a plain-Python reference, the metrics,
batching, purity and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.random import LEARNER_STREAM, rep_key, round_key, stream_key, uniform
from expertlab.bandits import (PartitionedExpertise, contextual_policies, exp4, expertise_trees, global_thompson,
                               knn_experts, partitioned_expertise)
from expertlab.sim._variates import normal


def test_instance_structure():
    inst = partitioned_expertise(n_features=3, n_arms=3, n_experts=3, cells_per_axis=3, n_split_features=1,
                                 gap=0.2, seed=4)
    C = 3
    assert inst.means.shape == (C, 3) and inst.advice.shape == (3, C)
    assert sorted(inst.owner.tolist()) == [0, 1, 2]
    best = inst.means.argmax(axis=1)
    for c in range(C):
        for j in range(3):
            a = inst.advice[j, c]
            assert (a == best[c]) == (inst.owner[c] == j)
    np.testing.assert_allclose(inst.oracle_means(), 0.7)
    np.testing.assert_allclose(inst.expert_means().sum(axis=0), 0.7 + 2 * 0.5)
    # cells are the thirds of feature 0; features 1 and 2 do not matter
    x = np.array([[0.1, 0.9, 0.5], [0.5, 0.0, 1.0], [0.99, 0.3, 0.3], [1.0, 0.0, 0.0]])
    assert inst.cell(x).tolist() == [0, 1, 2, 2]
    two = partitioned_expertise()
    assert two.cell(np.array([[0.2, 0.2], [0.7, 0.2], [0.2, 0.7], [0.7, 0.7]])).tolist() == [0, 1, 2, 3]
    np.testing.assert_allclose(two.expert_values(), 0.575)
    assert isinstance(two, PartitionedExpertise) and isinstance(two, sim.Environment)
    assert two.spec.feedback == "advice" and two.spec.n_features == 2 and two.spec.n_experts == 4


def _global_reference(inst, T, seed, rep):
    """Plain-Python Gaussian Thompson sampling over experts (one leaf each), one replication."""
    p, N = inst.n_features, inst.n_experts
    rk = rep_key(np.uint64(seed), np.uint64(rep))
    lk = stream_key(rk, LEARNER_STREAM)
    n, s = [0.0] * N, [0.0] * N
    regret = 0.0
    for t in range(T):
        key = round_key(rk, np.uint64(t))
        x = np.array([uniform(key, np.uint64(i)) for i in range(p)])
        c = int(inst.cell(x[None])[0])
        lkt = round_key(lk, np.uint64(t))
        score = [(s[j] + 0.5) / (n[j] + 1) + normal(lkt, np.uint64(j)) * 0.5 / math.sqrt(n[j] + 1) for j in range(N)]
        e = int(np.argmax(score))
        mu = inst.means[c, inst.advice[e, c]]
        y = 1.0 if uniform(key, np.uint64(p)) < mu else 0.0
        n[e] += 1
        s[e] += y
        regret += inst.oracle_means()[c] - mu
    return regret


def test_global_thompson_matches_plain_python():
    inst = partitioned_expertise(n_experts=3, gap=0.25, seed=2)
    res = sim.run(global_thompson(), inst, horizon=120, n_reps=3, seed=5, checkpoints=[120])
    with np.errstate(over="ignore"):
        ref = [_global_reference(inst, 120, 5, r) for r in range(3)]
    np.testing.assert_allclose(res.metric("regret")[-1], ref, rtol=1e-9, atol=1e-9)
    assert res.learner == "global_thompson" and res.backend == "numpy"


@pytest.mark.parametrize("learner, horizon", [(expertise_trees(grace_period=50), 600),
                                              (knn_experts(k=5, memory=40), 300)], ids=["trees", "knn"])
def test_batching_and_seeds(learner, horizon):
    inst = partitioned_expertise()
    run = lambda **kw: sim.run(learner, inst, horizon=horizon, **kw).metric("regret")  # noqa: E731
    a = run(n_reps=5, seed=3)
    np.testing.assert_array_equal(a[:, 3:], run(n_reps=2, seed=3, rep_offset=3))
    np.testing.assert_array_equal(a, run(n_reps=5, seed=3))
    assert not np.array_equal(a, run(n_reps=5, seed=4))
    assert np.all(np.diff(a, axis=0) >= 0)       # the oracle is the best expert of every cell


def test_context_blind_baselines_are_linear_in_expectation():
    # every expert owns one of four equally likely cells: P(follow the accurate one) = 1/4 exactly
    inst = partitioned_expertise(gap=0.3)
    T = 1500
    for L, n_reps, metric in ((global_thompson(), 20, "regret"), (exp4(), 200, "expected_regret")):
        y = sim.run(L, inst, horizon=T, n_reps=n_reps, seed=1, checkpoints=[T], metrics=[metric]).metric(metric)[-1]
        assert abs(y.mean() - 0.3 * 0.75 * T) < 4 * y.std(ddof=1) / math.sqrt(y.size), L.name


def test_metrics_of_the_advice_environment():
    inst = partitioned_expertise(n_experts=2, seed=1)     # two experts own two cells each
    ms = ["regret", "best_expert_regret", "reward", "expected_regret", "expected_best_expert_regret",
          "oracle_follows"]
    res = sim.run(exp4(), inst, horizon=500, n_reps=3, seed=2, metrics=ms)
    m = res.metrics
    # both comparisons differ by the same realised sum of (oracle - best expert) over the cells drawn
    np.testing.assert_allclose(m["regret"] - m["best_expert_regret"],
                               m["expected_regret"] - m["expected_best_expert_regret"], atol=1e-9)
    assert inst.oracle_means().mean() - inst.expert_values().max() == pytest.approx(0.3 / 2)
    assert np.all(m["oracle_follows"] <= res.checkpoints[:, None] + 1e-9) and np.all(m["oracle_follows"] >= 0)
    # a follower's oracle_follows counts the rounds whose expert was accurate, so its regret is gap * the rest
    gl = sim.run(global_thompson(), inst, horizon=500, n_reps=3, seed=2, metrics=["regret", "oracle_follows"])
    np.testing.assert_allclose(gl.metric("regret"), 0.3 * (gl.checkpoints[:, None] - gl.metric("oracle_follows")),
                               atol=1e-9)
    with pytest.raises(ValueError, match="distribution p"):
        sim.run(global_thompson(), inst, horizon=5, n_reps=2, metrics=["expected_regret"])


def test_trees_learn_the_partition():
    inst = partitioned_expertise(gap=0.3)
    ck = [2500, 5000]
    ms = ["regret", "oracle_follows"]
    tr = sim.run(expertise_trees(), inst, horizon=5000, n_reps=12, seed=0, checkpoints=ck, metrics=ms)
    gl = sim.run(global_thompson(), inst, horizon=5000, n_reps=12, seed=0, checkpoints=ck, metrics=ms)
    late_tr = np.diff(tr.metric("regret"), axis=0)[0].mean()
    late_gl = np.diff(gl.metric("regret"), axis=0)[0].mean()
    assert late_gl == pytest.approx(0.225 * 2500, rel=0.1)
    assert late_tr < 0.3 * late_gl
    # in the second half the trees follow the expert accurate in the context in most rounds (measured 0.89),
    # the context-blind learner in a quarter of them
    assert np.diff(tr.metric("oracle_follows"), axis=0)[0].mean() > 0.8 * 2500
    assert np.diff(gl.metric("oracle_follows"), axis=0)[0].mean() == pytest.approx(0.25 * 2500, rel=0.1)


def test_knn_beats_context_blind():
    inst = partitioned_expertise(gap=0.3)
    kn = sim.run(knn_experts(k=10, memory=150), inst, horizon=1500, n_reps=8, seed=0, checkpoints=[1500])
    assert kn.mean()[-1] < 0.6 * 0.225 * 1500


@pytest.mark.parametrize("learner", [expertise_trees(grace_period=5, max_depth=2, tie_threshold=1.0),
                                     knn_experts(k=3, memory=5)], ids=["trees", "knn"])
def test_update_is_pure(learner):
    inst = partitioned_expertise()
    R = 3
    spec = sim.EnvSpec("advice", "round", inst.n_arms, horizon=40, info=inst.spec.info)
    keys = np.arange(1, R + 1, dtype=np.uint64)
    state = learner.init(spec, R, keys, np)
    env_state = inst.reset(R, keys, np)
    with np.errstate(over="ignore"):
        for t in range(40):
            kt = round_key(keys, np.uint64(t))
            obs = inst.observe(env_state, t, kt)
            choice, state = learner.act(state, obs, kt)
            np.testing.assert_array_equal(choice.arm, obs.advice[np.arange(R), choice.expert])
            _, y, _ = inst.step(env_state, choice, t, kt)
            before = [np.array(a, copy=True) for a in state]
            new = learner.update(state, choice, y, kt)
            for a, b in zip(before, state):
                np.testing.assert_array_equal(a, b)
            state = new
    if learner.name == "expertise_trees":
        assert new.trees.n_nodes.max() > 1          # grace period 5: the trees have split


@pytest.mark.parametrize("call, exc, match", [
    (lambda: sim.run(expertise_trees(), contextual_policies(), horizon=10, n_reps=2), ValueError, "n_features"),
    (lambda: sim.run(knn_experts(), contextual_policies(), horizon=10, n_reps=2), ValueError, "n_features"),
    (lambda: sim.run(expertise_trees(), partitioned_expertise(), horizon=0), ValueError, "horizon"),
    (lambda: sim.run(expertise_trees(), partitioned_expertise(), horizon=10, checkpoints=[11]), ValueError,
     "checkpoints"),
    (lambda: sim.run(global_thompson(), partitioned_expertise(), horizon=10, n_reps=0), ValueError, "n_reps"),
    (lambda: sim.run(expertise_trees(), partitioned_expertise(), horizon=10, backend="numba"), ValueError,
     "compiled"),
    (lambda: expertise_trees(delta=0.0), ValueError, "delta"),
    (lambda: knn_experts(k=5, memory=3), ValueError, "memory"),
    (lambda: partitioned_expertise(n_experts=5), ValueError, "n_experts"),
    (lambda: partitioned_expertise(n_features=1), ValueError, "n_split_features"),
    (lambda: partitioned_expertise(gap=0.6), ValueError, "gap"),
    (lambda: partitioned_expertise(n_arms=1), ValueError, "n_arms"),
    (lambda: partitioned_expertise().cell(np.array([[0.5, 1.5]])), ValueError, "x"),
    (lambda: partitioned_expertise().cell(np.array([[0.5, np.nan]])), ValueError, "x"),
    (lambda: partitioned_expertise().cell(np.array([[0.5, 0.5, 0.5]])), ValueError, "x"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_registered():
    for name in ("expertise_trees", "global_thompson", "knn_experts"):
        reg = sim.get_learner(name)
        assert reg.family == "bandits" and reg.feedback == "advice"
        L, env, horizon = reg.example()
        assert L.name == name and sim.run(L, env, horizon=horizon, n_reps=2).metric("regret").shape[1] == 2
    assert sim.get_environment("partitioned_expertise").feedback == "advice"
