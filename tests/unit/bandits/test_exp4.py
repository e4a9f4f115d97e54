"""Exp4 on the engine: a plain-Python transcription, the compiled path against the array path, its regret bound,
batching, purity and bad input."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.random import LEARNER_STREAM, rep_key, round_key, stream_key, uniform
from expertlab.bandits import (AdviceChoice, AdviceInstance, contextual_policies, exp4, instances,
                               partitioned_expertise)

METRICS = ["regret", "best_expert_regret", "reward", "expected_regret", "expected_best_expert_regret",
           "oracle_follows"]


def _reference(inst, T, eta, seed, rep):
    """Plain-Python Exp4 (loss-based) on one replication, written from the update rule."""
    C, K = inst.means.shape
    N = inst.policies.shape[0]
    best = int(np.argmax(inst.expert_values()))
    rk = rep_key(np.uint64(seed), np.uint64(rep))
    lk = stream_key(rk, LEARNER_STREAM)
    L = [0.0] * N
    regret = 0.0
    for t in range(T):
        key = round_key(rk, np.uint64(t))
        ctx = min(int(uniform(key, np.uint64(K)) * C), C - 1)
        lo = min(L)
        w = [math.exp(-eta * (x - lo)) for x in L]
        q = [x / sum(w) for x in w]
        p = [0.0] * K
        for j in range(N):
            p[inst.policies[j, ctx]] += q[j]
        u = uniform(round_key(lk, np.uint64(t)), np.uint64(0))
        acc, a = 0.0, K - 1
        for i in range(K):
            acc += p[i]
            if u < acc and p[i] > 0:
                a = i
                break
        reward = 1.0 if uniform(key, np.uint64(a)) < inst.means[ctx, a] else 0.0
        for j in range(N):
            if inst.policies[j, ctx] == a:
                L[j] += (1.0 - reward) / p[a]
        regret += inst.means[ctx, inst.policies[best, ctx]] - sum(p[i] * inst.means[ctx, i] for i in range(K))
    return regret


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_matches_plain_python(backend):
    inst = contextual_policies(3, 3, 5, gap=0.25, seed=1)
    with np.errstate(over="ignore"):
        ref = [_reference(inst, 150, 0.1, 9, r) for r in range(4)]
    res = sim.run(exp4(eta=0.1), inst, horizon=150, n_reps=4, seed=9, backend=backend, checkpoints=[150],
                  metrics=["expected_best_expert_regret"])
    assert res.backend == backend
    np.testing.assert_allclose(res.metric("expected_best_expert_regret")[-1], ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("env", [contextual_policies(3, 4, 6, gap=0.3, seed=2), partitioned_expertise(seed=3)],
                         ids=["contextual_policies", "partitioned_expertise"])
@pytest.mark.parametrize("eta", [None, 0.3])
def test_numba_equals_numpy(env, eta):
    a = sim.run(exp4(eta), env, horizon=200, n_reps=5, seed=4, backend="numpy", metrics=METRICS)
    b = sim.run(exp4(eta), env, horizon=200, n_reps=5, seed=4, backend="numba", metrics=METRICS)
    assert b.backend == "numba"
    for k in METRICS:
        np.testing.assert_allclose(b.metrics[k], a.metrics[k], rtol=0, atol=1e-10, err_msg=k)
    np.testing.assert_array_equal(b.final["pulls"], a.final["pulls"])
    np.testing.assert_array_equal(a.final["pulls"].sum(axis=1), np.full(5, 200))


def test_regret_is_below_the_bound_and_the_best_expert_wins():
    K, N, T = 3, 16, 5000
    inst = contextual_policies(4, K, N, gap=0.2)
    res = sim.run(exp4(), inst, horizon=T, n_reps=100, seed=0, backend="numba",
                  metrics=["expected_best_expert_regret", "oracle_follows", "regret", "best_expert_regret"])
    y = res.metric("expected_best_expert_regret")[-1]
    assert y.mean() + 3 * y.std(ddof=1) / 10 <= math.sqrt(2 * T * K * math.log(N))
    # expert 0 (the optimal policy) is also the region-wise oracle here: the two regrets coincide
    np.testing.assert_array_equal(res.metric("regret"), res.metric("best_expert_regret"))
    # the weight on experts that agree with the oracle grows: more than half of the late rounds
    f = res.metric("oracle_follows")
    i = np.searchsorted(res.checkpoints, T // 2)
    late = (f[-1] - f[i]) / (T - res.checkpoints[i])
    assert late.mean() > 0.5


def test_the_two_regrets_differ_by_the_oracle_s_edge_where_the_best_expert_is_not_the_oracle():
    # On contextual_policies the optimal policy is both the best expert and the region-wise oracle, so the two
    # regrets coincide there; here they must not.  Expert 0 (arm 0 everywhere) is the best single expert
    # (mean (0.9 + 0.4) / 2 against (0.1 + 0.6) / 2), but in context 1 expert 1's arm pays 0.6 against 0.4:
    # regret - best_expert_regret = 0.2 * (rounds in context 1), whatever the learner pulls.
    inst = AdviceInstance("two-contexts", np.array([[0.9, 0.1], [0.4, 0.6]]), np.array([[0, 0], [1, 1]]))
    T = 400
    for backend in ("numpy", "numba"):
        res = sim.run(exp4(), inst, horizon=T, n_reps=6, seed=1, backend=backend, checkpoints=[T],
                      metrics=["regret", "best_expert_regret", "expected_regret", "expected_best_expert_regret"])
        rounds = (res.metric("regret")[-1] - res.metric("best_expert_regret")[-1]) / 0.2
        np.testing.assert_allclose(rounds, np.round(rounds), atol=1e-9)
        assert np.all((rounds > 0.3 * T) & (rounds < 0.7 * T)), rounds  # about T / 2 rounds in context 1
        np.testing.assert_allclose(res.metric("expected_regret")[-1] - res.metric("expected_best_expert_regret")[-1],
                                   0.2 * rounds, atol=1e-9)


def test_eta_is_tuned_to_the_run():
    inst = contextual_policies(4, 3, 16)
    spec = dataclasses.replace(inst.spec, horizon=5000)
    st = exp4().init(spec, 2, np.zeros(2, np.uint64), np)
    np.testing.assert_allclose(st.eta, math.sqrt(2 * math.log(16) / (5000 * 3)))
    assert exp4(0.2).init(spec, 2, np.zeros(2, np.uint64), np).eta.tolist() == [0.2, 0.2]
    assert exp4().params == {} and exp4(0.2).params == {"eta": 0.2}


def test_batching_does_not_change_replications():
    inst = contextual_policies(2, 2, 4)
    for backend in ("numpy", "numba"):
        a = sim.run(exp4(), inst, horizon=300, n_reps=6, seed=3, backend=backend)
        b = sim.run(exp4(), inst, horizon=300, n_reps=2, seed=3, rep_offset=4, backend=backend)
        np.testing.assert_array_equal(a.metric("regret")[:, 4:], b.metric("regret"))


def test_update_is_pure():
    inst = contextual_policies(3, 3, 5)
    L = exp4()
    spec = sim.EnvSpec("advice", "round", 3, horizon=20, info=inst.spec.info)
    keys = np.arange(1, 4, dtype=np.uint64)
    state = L.init(spec, 3, keys, np)
    env_state = inst.reset(3, keys, np)
    with np.errstate(over="ignore"):
        for t in range(10):
            kt = round_key(keys, np.uint64(t))
            choice, state = L.act(state, inst.observe(env_state, t, kt), kt)
            assert isinstance(choice, AdviceChoice) and choice.arm.shape == (3,)
            np.testing.assert_allclose(choice.p.sum(axis=1), 1.0)
            np.testing.assert_allclose(choice.q.sum(axis=1), 1.0)
            _, y, _ = inst.step(env_state, choice, t, kt)
            before = [np.array(a, copy=True) for a in state]
            new = L.update(state, choice, y, kt)
            for a, b in zip(before, state):
                np.testing.assert_array_equal(a, b)
            state = new


def test_instance_best_expert_is_the_optimal_policy():
    inst = contextual_policies(5, 4, 10, gap=0.1, seed=2)
    v = inst.expert_values()
    assert inst.best_expert() == 0 and v[0] == pytest.approx(0.6)
    assert np.all(v[1:] < v[0])
    np.testing.assert_allclose(inst.oracle_means(), 0.6)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: exp4(eta=-1.0), ValueError, "eta"),
    (lambda: sim.run(exp4(), instances.bernoulli([0.2, 0.5]), horizon=10, n_reps=2), ValueError, "feedback"),
    (lambda: sim.run(exp4(), contextual_policies(2, 2, 3), horizon=0), ValueError, "horizon"),
    (lambda: sim.run(exp4(), contextual_policies(2, 2, 3), horizon=10, checkpoints=[11]), ValueError,
     "checkpoints"),
    (lambda: sim.run(exp4(), contextual_policies(2, 2, 3), horizon=10, metrics=["pseudo_regret"]), ValueError,
     "metric"),
    (lambda: contextual_policies(2, 1, 3), ValueError, "n_arms"),
    (lambda: contextual_policies(2, 2, 1), ValueError, "n_experts"),
    (lambda: contextual_policies(2, 2, 3, gap=0.7), ValueError, "gap"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_instance_is_an_environment():
    inst = contextual_policies(2, 2, 3)
    assert isinstance(inst, AdviceInstance) and isinstance(inst, sim.Environment)
    assert inst.n_arms == 2 and inst.n_experts == 3 and inst.spec.feedback == "advice"
    assert inst.spec.n_experts == 3 and "contextual_policies" in repr(inst)
    assert sim.get_learner("exp4").feedback == "advice"
    assert sim.get_environment("contextual_policies").feedback == "advice"
