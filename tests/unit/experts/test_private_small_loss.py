"""Small-loss private experts: the phase rule by hand, the accountant, the audit, batching, regret, bad input."""

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import (audit_private, hedge, realizable, run_private, small_loss_experts, small_loss_instance,
                               sparse_vector_experts)


def test_the_last_phase_is_frozen():
    """theta = 4, T = 8: P = 2 (2 theta >= T).  In phase 2 a dead expert is switched away from; in phase 3, none."""
    L = small_loss_experts(1.0, 8, threshold=4.0, max_switches=1, noise=False)
    s = L.init(4, 3, np.arange(4, dtype=np.uint64))
    s = s._replace(cur=np.zeros(4, dtype=np.int64), cum=np.tile([7.0, 0.0, 0.0], (4, 1)))
    live = L.update(s._replace(phase=np.full(4, 2)), np.tile([1.0, 0.0, 0.0], (4, 1)))
    assert np.all(live.cur != 0) and np.all(live.phase == 3)   # cum 8 >= tau_2 = 8: switch to a leader
    frozen = L.update(s._replace(phase=np.full(4, 3)), np.tile([1.0, 0.0, 0.0], (4, 1)))
    assert np.all(frozen.cur == 0) and np.all(frozen.phase == 3)


def test_phases_by_hand_without_noise():
    """noise=False, theta = 1, K = 2: tau_k = 1, 2, 4; two "above" answers close a phase."""
    L = small_loss_experts(1.0, 10, threshold=1.0, max_switches=2, noise=False)
    s = L.init(16, 2, np.arange(16, dtype=np.uint64))
    phases, switches = [], []
    for row in ([1.0, 1.0], [1.0, 1.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]):
        s = L.update(s, np.tile(row, (16, 1)))
        phases.append(s.phase.copy())
        switches.append(s.switches.copy())
    # cum (1,1) >= 1: above; (2,2) >= 1: above, phase 2; (2,2) >= 2: above; again: phase 3; 2 < 4: none
    np.testing.assert_array_equal(np.array(phases), np.tile([[1], [2], [2], [3], [3]], (1, 16)))
    np.testing.assert_array_equal(np.array(switches), np.tile([[1], [0], [1], [0], [0]], (1, 16)))


def test_without_noise_a_switch_goes_to_a_leader():
    L = small_loss_experts(1.0, 10, threshold=1.0, max_switches=5, noise=False)
    s = L.init(64, 3, np.arange(64, dtype=np.uint64))
    s = s._replace(cur=np.zeros(64, dtype=np.int64))
    s = L.update(s, np.tile([1.0, 1.0, 0.0], (64, 1)))
    np.testing.assert_array_equal(s.cur, 2)  # expert 0 crossed tau_1 = 1; the only leader is expert 2


def test_accountant():
    eps, T = 2.0, 600
    d = 8
    K = math.ceil(math.log2(d)) + 3
    m1 = 8.0 / (eps / 2 / K) * math.log(2 * T * K)   # phase 1: eps / 2 over K switches, b2 = 8 / eps_0
    P = 1 + max(0, math.ceil(math.log2(T / m1)))
    c = small_loss_experts(eps, T).privacy(d)
    # phase k costs eps / (k (k + 1)); the sum over the P switching phases telescopes to eps P / (P + 1)
    assert c.epsilon == pytest.approx(eps * P / (P + 1), rel=1e-12) and c.epsilon < eps and c.delta == 0.0
    # K = 6 switches: advanced composition does not beat basic, which the accountant then keeps
    assert small_loss_experts(eps, T, delta=1e-6).privacy(d) == c
    # K = 5000 switches, theta = 2500: P = 3 phases (2^2 theta >= T), each composed by advanced composition
    # with delta_k = delta / (k (k + 1)); the deltas sum to 3/4 delta
    c2 = small_loss_experts(eps, 10_000, delta=1e-6, max_switches=5000, threshold=2500.0).privacy(d)
    assert c2.epsilon == pytest.approx(eps * 3 / 4, rel=1e-6) and c2.delta == pytest.approx(1e-6 * 3 / 4, rel=1e-9)
    # the default thresholds with T = 10^4 allow few phases, so the accountant is fast even with delta > 0
    assert small_loss_experts(eps, 10_000, delta=1e-6).privacy(d).epsilon < eps
    assert math.isinf(small_loss_experts(eps, T, noise=False).privacy(d).epsilon)


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
    full = run_private(L, inst, 300, n_reps=6, seed=11, record_choices=True)
    alone = run_private(L, inst, 300, n_reps=1, seed=11, rep_offset=4, record_choices=True)
    np.testing.assert_array_equal(alone.choices[0], full.choices[4])
    again = run_private(L, inst, 300, n_reps=6, seed=11, record_choices=True)
    np.testing.assert_array_equal(again.choices, full.choices)
    s = L.init(3, 4, np.arange(3, dtype=np.uint64))
    before = [np.array(x, copy=True) for x in s]
    L.update(s, np.ones((3, 4)))
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
    a = run_private(small_loss_experts(eps, T), inst, T, 150, seed=0, checkpoints=[T]).regret[-1]
    b = run_private(sparse_vector_experts(eps, T), inst, T, 150, seed=0, checkpoints=[T]).regret[-1]
    assert a.mean() < 2.5 * b.mean()


def test_beyond_the_realizable_threshold():
    """L* = 256 > the realizable threshold: that learner ends on a Bernoulli expert, regret ~ T/2 - L*."""
    T, eps, d = 4000, 8.0, 8
    inst = small_loss_instance(d, 0.5, best_loss=256)
    a = run_private(small_loss_experts(eps, T), inst, T, 60, seed=3, checkpoints=[T // 2, T]).regret
    b = run_private(sparse_vector_experts(eps, T), inst, T, 30, seed=3, checkpoints=[T]).regret[-1]
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
    s = L.init(2, 3, np.arange(2, dtype=np.uint64))
    with pytest.raises(ValueError, match="loss"):
        L.update(s, np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match="loss"):
        L.update(s, np.zeros((2, 4)))
    with pytest.raises(ValueError, match="key"):
        L.init(2, 3, np.arange(3, dtype=np.uint64))
    s = L.update(L.update(s, np.zeros((2, 3))), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="horizon"):
        L.update(s, np.zeros((2, 3)))
