"""Exp4: the compiled kernel against a plain-Python transcription, its regret bound, batching and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from expertlab import _random
from expertlab.bandits import AdviceInstance, contextual_policies, exp4


def _reference(inst, T, eta, seed, rep):
    """Plain-Python Exp4 (loss-based) on one replication, written from the update rule."""
    C, K = inst.means.shape
    N = inst.policies.shape[0]
    best = int(np.argmax(inst.expert_values()))
    rk = _random.rep_key(np.uint64(seed), np.uint64(rep))
    lk = _random.stream_key(rk, _random.LEARNER_STREAM)
    L = [0.0] * N
    regret = 0.0
    for t in range(T):
        key = _random.round_key(rk, np.uint64(t))
        ctx = min(int(_random.uniform(key, np.uint64(K)) * C), C - 1)
        lo = min(L)
        w = [math.exp(-eta * (x - lo)) for x in L]
        q = [x / sum(w) for x in w]
        p = [0.0] * K
        for j in range(N):
            p[inst.policies[j, ctx]] += q[j]
        u = _random.uniform(_random.round_key(lk, np.uint64(t)), np.uint64(0))
        acc, a = 0.0, K - 1
        for i in range(K):
            acc += p[i]
            if u < acc and p[i] > 0:
                a = i
                break
        reward = 1.0 if _random.uniform(key, np.uint64(a)) < inst.means[ctx, a] else 0.0
        for j in range(N):
            if inst.policies[j, ctx] == a:
                L[j] += (1.0 - reward) / p[a]
        regret += inst.means[ctx, inst.policies[best, ctx]] - sum(p[i] * inst.means[ctx, i] for i in range(K))
    return regret


def test_kernel_matches_plain_python():
    inst = contextual_policies(3, 3, 5, gap=0.25, seed=1)
    with np.errstate(over="ignore"):
        res = exp4(inst, 150, eta=0.1, n_reps=4, seed=9, checkpoints=[150])
        ref = [_reference(inst, 150, 0.1, 9, r) for r in range(4)]
    np.testing.assert_allclose(res.regret[-1], ref, rtol=1e-12, atol=1e-12)


def test_regret_is_below_the_bound_and_the_best_expert_wins():
    K, N, T = 3, 16, 5000
    inst = contextual_policies(4, K, N, gap=0.2)
    res = exp4(inst, T, n_reps=100, seed=0)
    m, se = res.regret[-1].mean(), res.regret[-1].std(ddof=1) / 10
    assert m + 3 * se <= math.sqrt(2 * T * K * math.log(N))
    assert res.weights[:, 0].mean() > 0.5          # expert 0 is the optimal policy
    assert res.eta == pytest.approx(math.sqrt(2 * math.log(N) / (T * K)))


def test_batching_does_not_change_replications():
    inst = contextual_policies(2, 2, 4)
    a = exp4(inst, 300, n_reps=6, seed=3)
    b = exp4(inst, 300, n_reps=2, seed=3, rep_offset=4)
    np.testing.assert_array_equal(a.regret[:, 4:], b.regret)


def test_instance_best_expert_is_the_optimal_policy():
    inst = contextual_policies(5, 4, 10, gap=0.1, seed=2)
    v = inst.expert_values()
    assert int(np.argmax(v)) == 0 and v[0] == pytest.approx(0.6)
    assert np.all(v[1:] < v[0])


@pytest.mark.parametrize("call, exc, match", [
    (lambda: exp4("advice", 10), TypeError, "AdviceInstance"),
    (lambda: exp4(contextual_policies(2, 2, 3), 0), ValueError, "horizon"),
    (lambda: exp4(contextual_policies(2, 2, 3), 10, eta=-1.0), ValueError, "eta"),
    (lambda: exp4(contextual_policies(2, 2, 3), 10, checkpoints=[11]), ValueError, "checkpoints"),
    (lambda: contextual_policies(2, 1, 3), ValueError, "n_arms"),
    (lambda: contextual_policies(2, 2, 1), ValueError, "n_experts"),
    (lambda: contextual_policies(2, 2, 3, gap=0.7), ValueError, "gap"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_advice_instance_is_a_record():
    inst = contextual_policies(2, 2, 3)
    assert isinstance(inst, AdviceInstance) and inst.n_arms == 2 and inst.n_experts == 3
