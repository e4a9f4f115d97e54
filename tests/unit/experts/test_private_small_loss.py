"""Small-loss private experts: the phase rule by hand, the accountant, the audit, batching, regret, bad input."""

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.random import round_key
from expertlab.experts import (audit_private, hedge, instances, privacy_cost, realizable, small_loss_experts,
                               small_loss_instance, sparse_vector_experts)
from expertlab.experts._private_run import played_experts


def keys(n_reps, t=0):
    with np.errstate(over="ignore"):
        return round_key(np.arange(n_reps, dtype=np.uint64), np.uint64(t))


def step(L, s, row, t=0):
    """One round of ``L`` by hand on the loss vector ``row`` (the same in every replication)."""
    n_reps, n = s.cum.shape
    p, s = L.act(s, None, keys(n_reps, t))
    return L.update(s, p, sim.FullFeedback(np.tile(np.asarray(row, dtype=float), (n_reps, 1))), keys(n_reps, t))


def start(L, n_reps, n):
    return L.init(n, n_reps, np.arange(n_reps, dtype=np.uint64), np)


def final_regret(L, inst, T, n_reps, seed, checkpoints=None):
    ck = [T] if checkpoints is None else checkpoints
    return sim.run(L, inst, T, n_reps, seed, metrics=["regret"], checkpoints=ck).metrics["regret"]


def test_the_last_phase_is_frozen():
    """theta = 4, T = 8: P = 2 (2 theta >= T).  In phase 2 a dead expert is switched away from; in phase 3, none."""
    L = small_loss_experts(1.0, 8, threshold=4.0, max_switches=1, noise=False)
    s = start(L, 4, 3)
    s = s._replace(cur=np.zeros(4, dtype=np.int64), cum=np.tile([7.0, 0.0, 0.0], (4, 1)))
    live = step(L, s._replace(phase=np.full(4, 2)), [1.0, 0.0, 0.0])
    assert np.all(live.cur != 0) and np.all(live.phase == 3)   # cum 8 >= tau_2 = 8: switch to a leader
    frozen = step(L, s._replace(phase=np.full(4, 3)), [1.0, 0.0, 0.0])
    assert np.all(frozen.cur == 0) and np.all(frozen.phase == 3)


def test_phases_by_hand_without_noise():
    """noise=False, theta = 1, K = 2: tau_k = 1, 2, 4; two "above" answers close a phase."""
    L = small_loss_experts(1.0, 10, threshold=1.0, max_switches=2, noise=False)
    s = start(L, 16, 2)
    phases, switches = [], []
    for t, row in enumerate(([1.0, 1.0], [1.0, 1.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0])):
        s = step(L, s, row, t)
        phases.append(s.phase.copy())
        switches.append(s.switches.copy())
    # cum (1,1) >= 1: above; (2,2) >= 1: above, phase 2; (2,2) >= 2: above; again: phase 3; 2 < 4: none
    np.testing.assert_array_equal(np.array(phases), np.tile([[1], [2], [2], [3], [3]], (1, 16)))
    np.testing.assert_array_equal(np.array(switches), np.tile([[1], [0], [1], [0], [0]], (1, 16)))


def test_without_noise_a_switch_goes_to_a_leader():
    L = small_loss_experts(1.0, 10, threshold=1.0, max_switches=5, noise=False)
    s = start(L, 64, 3)
    s = s._replace(cur=np.zeros(64, dtype=np.int64))
    s = step(L, s, [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(s.cur, 2)  # expert 0 crossed tau_1 = 1; the only leader is expert 2


def test_accountant():
    eps, T = 2.0, 600
    d = 8
    K = math.ceil(math.log2(d)) + 3
    m1 = 8.0 / (eps / 2 / K) * math.log(2 * T * K)   # phase 1: eps / 2 over K switches, b2 = 8 / eps_0
    P = 1 + max(0, math.ceil(math.log2(T / m1)))
    L = small_loss_experts(eps, T)
    c = privacy_cost(L, d, T)
    # phase k costs eps / (k (k + 1)); the sum over the P switching phases telescopes to eps P / (P + 1)
    assert c.epsilon == pytest.approx(eps * P / (P + 1), rel=1e-12) and c.epsilon < eps and c.delta == 0.0
    # K = 6 switches: advanced composition does not beat basic, which the accountant then keeps
    assert privacy_cost(small_loss_experts(eps, T, delta=1e-6), d, T) == c
    # K = 5000 switches, theta = 2500: P = 3 phases (2^2 theta >= T), each composed by advanced composition
    # with delta_k = delta / (k (k + 1)).  One query per round: 10^4 rounds make at most 2 K pairs, phases 1
    # and 2 only, so the run spends eps (1/2 + 1/6) and delta (1/2 + 1/6); all three phases would spend 3/4
    L2 = small_loss_experts(eps, 10_000, delta=1e-6, max_switches=5000, threshold=2500.0)
    c2 = privacy_cost(L2, d, 10_000)
    assert c2.epsilon == pytest.approx(eps * 2 / 3, rel=1e-6) and c2.delta == pytest.approx(1e-6 * 2 / 3, rel=1e-9)
    c3 = privacy_cost(L2, d, 15_000)  # a run the learner refuses: what it would spend
    assert c3.epsilon == pytest.approx(eps * 3 / 4, rel=1e-6) and c3.delta == pytest.approx(1e-6 * 3 / 4, rel=1e-9)
    # the default thresholds with T = 10^4 allow few phases, so the accountant is fast even with delta > 0
    assert privacy_cost(small_loss_experts(eps, 10_000, delta=1e-6), d, 10_000).epsilon < eps
    assert math.isinf(privacy_cost(small_loss_experts(eps, T, noise=False), d, T).epsilon)


def test_accountant_counts_the_pairs_a_run_can_make():
    """One query per round: a run of T' rounds makes at most T' pairs, the a-th in phase ceil(a / K)."""
    eps, d = 2.0, 8
    L = small_loss_experts(eps, 600, max_switches=2, threshold=10.0)  # K = 2, P = 1 + ceil(log2 60) = 7
    e = [eps / (k * (k + 1)) for k in range(1, 8)]                     # phase k: K pairs of e_k / K each
    assert privacy_cost(L, d, 1).epsilon == pytest.approx(e[0] / 2, rel=1e-12)
    assert privacy_cost(L, d, 2).epsilon == pytest.approx(e[0], rel=1e-12)
    assert privacy_cost(L, d, 5).epsilon == pytest.approx(e[0] + e[1] + e[2] / 2, rel=1e-12)
    assert privacy_cost(L, d, 14).epsilon == pytest.approx(sum(e), rel=1e-12)
    assert privacy_cost(L, d, 600).epsilon == pytest.approx(eps * 7 / 8, rel=1e-12)


def test_the_audit():
    a = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    b = a.copy()
    b[1] = [0.0, 1.0]
    L = small_loss_experts(2.0, 6, max_switches=2, threshold=1.0)
    r = audit_private(L, a, b, n_reps=40_000, seed=1)
    assert r.passed and r.outcomes.size > 2
    bad = audit_private(small_loss_experts(2.0, 6, max_switches=2, threshold=1.0, noise=False), a, b,
                        n_reps=40_000, seed=1, epsilon=2.0)
    assert not bad.passed


def test_replication_alone_equals_in_batch_and_update_is_pure():
    L = small_loss_experts(2.0, 300)
    inst = small_loss_instance(5, 0.5, best_loss=30)

    def plays(n_reps, rep_offset=0):
        return sim.run(L, inst, 300, n_reps, seed=11, rep_offset=rep_offset, metrics=[played_experts(300)],
                       checkpoints=[300]).final["plays"]

    full = plays(6)
    np.testing.assert_array_equal(plays(1, rep_offset=4)[0], full[4])
    np.testing.assert_array_equal(plays(6), full)
    s = start(L, 3, 4)
    before = [np.array(x, copy=True) for x in s]
    step(L, s, np.ones(4))
    for x, y in zip(before, s):
        np.testing.assert_array_equal(x, y)


def test_instance():
    inst = small_loss_instance(4, 0.3, best_loss=50, best=1)
    res = sim.run(hedge(), inst, horizon=400, n_reps=100, seed=2)
    er = res.final["expert_regret"]
    L = er[:, [1]] - er + 50.0  # L_i = L_best - (regret_i - regret_best) with L_best = 50
    np.testing.assert_allclose(L[:, 1], 50.0)
    others = np.delete(L, 1, axis=1)
    assert abs(others.mean() - 120.0) < 4 * math.sqrt(84.0 / others.size)  # Bin(400, 0.3)
    np.testing.assert_array_equal(small_loss_instance(3, 0.5).data[0], realizable(3, 0.5).data[0])


def test_realizable_cost_is_about_the_halved_budget():
    """L* = 0: phase 1 is the realizable learner with eps / 2, so every scale doubles (regret ~2x, not 10x)."""
    inst, T, eps = realizable(8, 0.5), 3000, 4.0
    a = final_regret(small_loss_experts(eps, T), inst, T, 150, seed=0)[-1]
    b = final_regret(sparse_vector_experts(eps, T), inst, T, 150, seed=0)[-1]
    assert a.mean() < 2.5 * b.mean()


def test_beyond_the_realizable_threshold():
    """L* = 256 > the realizable threshold: that learner ends on a Bernoulli expert, regret ~ T/2 - L*."""
    T, eps, d = 4000, 8.0, 8
    inst = small_loss_instance(d, 0.5, best_loss=256)
    a = final_regret(small_loss_experts(eps, T), inst, T, 60, seed=3, checkpoints=[T // 2, T])
    b = final_regret(sparse_vector_experts(eps, T), inst, T, 30, seed=3)[-1]
    assert b.mean() > 0.25 * T
    assert a[-1].mean() < 256 * math.log(d)
    np.testing.assert_array_equal(a[0], a[1])  # flat: the best expert is kept once the threshold passed L*


def test_bad_input():
    with pytest.raises(ValueError, match="epsilon"):
        small_loss_experts(0.0)
    with pytest.raises(ValueError, match="threshold"):
        small_loss_experts(1.0, threshold=-1.0)
    with pytest.raises(TypeError, match="noise"):
        small_loss_experts(1.0, noise=1)
    with pytest.raises(ValueError, match="best_loss"):
        small_loss_instance(4, best_loss=-1)
    L = small_loss_experts(1.0, 2)
    s = start(L, 2, 3)
    with pytest.raises(ValueError, match="loss"):
        step(L, s, np.full(3, np.nan))
    with pytest.raises(ValueError, match="loss"):
        L.update(s, np.zeros((2, 3)), sim.FullFeedback(np.zeros((2, 4))), keys(2))
    with pytest.raises(ValueError, match="keys"):
        L.init(3, 2, np.arange(3, dtype=np.uint64), np)
    s = step(L, step(L, s, np.zeros(3), 0), np.zeros(3), 1)
    with pytest.raises(ValueError, match="horizon"):
        step(L, s, np.zeros(3), 2)
    with pytest.raises(ValueError, match="horizon"):
        sim.run(L, instances.fair_coins(3), 3, 2)
