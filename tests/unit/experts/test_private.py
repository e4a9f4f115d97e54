"""Private experts: sparse-vector switching, private FTPL, tree DP-FTRL, the driver and the audit."""

import math

import numpy as np
import pytest

from expertlab import _random, sim
from expertlab.experts import (PrivacyCost, PrivateLearner, audit_private, hedge, noisy_ftpl, realizable, run_private,
                               sparse_vector_experts, tree_ftrl)

LEARNERS = [lambda: sparse_vector_experts(2.0, 200), lambda: noisy_ftpl(2.0, 200), lambda: tree_ftrl(2.0, 200)]


def test_realizable_instance():
    inst = realizable(5, 0.3, best=2)
    res = sim.run(hedge(), inst, horizon=400, n_reps=200, seed=3)
    # expert_regret = L_hat - L_i; the best expert never loses, so its regret is the learner's loss
    # and every other expert's cumulative loss is Bin(400, 0.3): mean 120, sd sqrt(84) per replication
    er = res.final["expert_regret"]
    L = er[:, [2]] - er  # L_i - L_best = L_i
    assert np.all(L[:, 2] == 0)
    others = np.delete(L, 2, axis=1)
    assert abs(others.mean() - 120.0) < 4 * math.sqrt(84.0 / others.size)
    np.testing.assert_allclose(res.regret[-1], er[:, 2])


def test_instance_losses_are_those_of_sim_run():
    """run_private on an Instance sees the losses that sim.run's key derivation gives."""
    inst = realizable(4, 0.5)
    seed, T = 7, 60
    idx = np.arange(4, dtype=np.int64)[None, :]
    with np.errstate(over="ignore"):
        rk = _random.rep_key(np.uint64(seed), np.uint64(2))
        M = np.vstack([inst.loss(inst.data, _random.round_key(np.array([[rk]]), np.uint64(t)), t, idx)[0]
                       for t in range(T)])
    L = noisy_ftpl(1.0, T)
    a = run_private(L, inst, T, n_reps=1, seed=seed, rep_offset=2, record_choices=True)
    b = run_private(L, M, T, n_reps=1, seed=seed, rep_offset=2, record_choices=True)
    np.testing.assert_array_equal(a.choices, b.choices)
    np.testing.assert_array_equal(a.regret, b.regret)


def test_regret_matches_sim_run_for_a_fixed_expert():
    """Always playing expert 1: run_private and sim.run record the same regret (same losses, same metric)."""
    inst = realizable(5, 0.4, best=3)
    fixed = PrivateLearner("fixed", lambda n_reps, n, key: np.zeros(n_reps), lambda s: np.ones(s.size, np.int64),
                           lambda s, loss: s, lambda n: PrivacyCost(0.0), {})
    one_hot = sim.Learner("fixed", "full", lambda n_reps, n, xp=np: np.zeros((n_reps, n)),
                          lambda s, key=None, awake=None: np.tile(np.eye(s.shape[1])[1], (s.shape[0], 1)),
                          lambda s, p, loss, awake=None, check=True: s, {})
    a = run_private(fixed, inst, 300, n_reps=7, seed=5, rep_offset=3)
    b = sim.run(one_hot, inst, horizon=300, n_reps=7, seed=5, rep_offset=3)
    np.testing.assert_array_equal(a.checkpoints, b.checkpoints)
    np.testing.assert_allclose(a.regret, b.regret, rtol=0, atol=1e-12)
    assert np.all(a.regret[-1] > 0.2 * 300)  # expert 1 loses Bernoulli(0.4) every round, the best never


@pytest.mark.parametrize("make", LEARNERS)
def test_replication_alone_equals_in_batch(make):
    L = make()
    full = run_private(L, realizable(5, 0.5), 200, n_reps=6, seed=11, record_choices=True)
    alone = run_private(L, realizable(5, 0.5), 200, n_reps=1, seed=11, rep_offset=4, record_choices=True)
    np.testing.assert_array_equal(alone.choices[0], full.choices[4])
    np.testing.assert_array_equal(alone.regret[:, 0], full.regret[:, 4])


@pytest.mark.parametrize("make", LEARNERS)
def test_update_is_pure(make):
    L = make()
    s = L.init(3, 4, np.arange(3, dtype=np.uint64))
    before = [np.array(a, copy=True) for a in s]
    L.update(s, np.full((3, 4), 1.0))
    for a, b in zip(before, s):
        np.testing.assert_array_equal(a, b)


def test_sparse_vector_without_noise_by_hand():
    """noise=False, tau = 1: the followed expert is dropped right after its first loss."""
    L = sparse_vector_experts(1.0, 5, threshold=1.0, max_switches=3, noise=False)
    M = np.array([[1.0, 0.0]] * 5)
    ch = run_private(L, M, 5, n_reps=64, seed=0, record_choices=True).choices
    start0 = ch[:, 0] == 0
    assert 0 < start0.sum() < 64  # the first expert is uniform
    np.testing.assert_array_equal(ch[start0], [[0, 1, 1, 1, 1]] * int(start0.sum()))
    np.testing.assert_array_equal(ch[~start0], [[1, 1, 1, 1, 1]] * int((~start0).sum()))


def test_switch_budget_is_respected():
    """threshold -1e9: every query is 'above' until the budget K is spent, then the expert is frozen."""
    L = sparse_vector_experts(1.0, 50, threshold=-1e9, max_switches=4)
    s = L.init(200, 6, np.arange(200, dtype=np.uint64))
    for t in range(10):
        s = L.update(s, np.zeros((200, 6)))
        assert np.all(s.switches == min(t + 1, 4))
        if t == 3:
            frozen = s.cur.copy()
    np.testing.assert_array_equal(s.cur, frozen)


def test_sparse_vector_beats_private_ftpl_on_realizable():
    inst, T, eps = realizable(8, 0.5), 3000, 4.0
    a = run_private(sparse_vector_experts(eps, T), inst, T, 200, seed=0).regret[-1]
    b = run_private(noisy_ftpl(eps, T), inst, T, 200, seed=0).regret[-1]
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert b.mean() - a.mean() > 5 * se
    # noisy min with b = 2 (T-1)/eps ~ 1500 >> the loss gap p t: close to uniform play, regret ~ 7/8 T/2
    assert b.mean() > 0.5 * (7 / 8) * T / 2


# -- the audit on neighbouring loss sequences ------------------------------------------

A = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
B = A.copy()
B[1] = [0.0, 1.0]


@pytest.mark.parametrize("make", [lambda: sparse_vector_experts(2.0, 6, max_switches=2, threshold=1.0),
                                  lambda: sparse_vector_experts(1.0, 6, max_switches=3),
                                  lambda: noisy_ftpl(2.0, 6), lambda: tree_ftrl(2.0, 6)])
def test_private_learners_pass_the_audit(make):
    r = audit_private(make(), A, B, n_reps=40_000, seed=1)
    assert r.passed, r.max_lower_ratio
    assert r.outcomes.size > 2  # the outputs are genuinely random


def test_audit_rejects_the_non_private_variant():
    L = sparse_vector_experts(2.0, 6, max_switches=2, threshold=1.0, noise=False)
    r = audit_private(L, A, B, n_reps=40_000, seed=1, epsilon=2.0)
    assert not r.passed and r.max_lower_ratio > math.exp(2.0)


def test_audit_rejects_non_neighbours():
    C = B.copy()
    C[3] = [0.0, 0.0]
    with pytest.raises(ValueError, match="one round"):
        audit_private(noisy_ftpl(1.0, 6), A, C, n_reps=10)


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("call, exc, match", [
    (lambda: sparse_vector_experts(0.0), ValueError, "epsilon"),
    (lambda: sparse_vector_experts(float("nan")), ValueError, "epsilon"),
    (lambda: sparse_vector_experts(1.0, 0), ValueError, "horizon"),
    (lambda: sparse_vector_experts(1.0, delta=0.9), ValueError, "delta"),
    (lambda: sparse_vector_experts(1.0, max_switches=0), ValueError, "max_switches"),
    (lambda: sparse_vector_experts(1.0, noise=1), TypeError, "noise"),
    (lambda: noisy_ftpl(-1.0), ValueError, "epsilon"),
    (lambda: tree_ftrl(1.0, 1.5), TypeError, "horizon"),
    (lambda: realizable(1), ValueError, "n_experts"),
    (lambda: realizable(3, 1.5), ValueError, "p"),
    (lambda: realizable(3, 0.5, best=3), ValueError, "best"),
    (lambda: run_private(hedge(), realizable(3), 10), TypeError, "PrivateLearner"),
    (lambda: run_private(noisy_ftpl(), np.zeros((5, 3)), 10), ValueError, "horizon"),
    (lambda: run_private(noisy_ftpl(), np.full((10, 3), np.nan), 10), ValueError, "NaN"),
    (lambda: run_private(noisy_ftpl(), np.full((10, 3), 2.0), 10), ValueError, r"\[0.0, 1.0\]"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize("make", LEARNERS)
def test_update_rejects_bad_losses(make):
    L = make()
    s = L.init(2, 3, np.arange(2, dtype=np.uint64))
    with pytest.raises(ValueError, match="shape"):
        L.update(s, np.zeros((2, 4)))
    with pytest.raises(ValueError, match="NaN"):
        L.update(s, np.full((2, 3), np.inf))
    with pytest.raises(ValueError, match="key"):
        L.init(2, 3, np.arange(3, dtype=np.uint64))


def test_tree_rejects_rounds_beyond_its_horizon():
    L = tree_ftrl(1.0, 2)
    s = L.init(1, 2, np.zeros(1, dtype=np.uint64))
    s = L.update(L.update(s, np.zeros((1, 2))), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="horizon"):
        L.update(s, np.zeros((1, 2)))


def test_record():
    L = sparse_vector_experts(1.0, 10)
    assert isinstance(L, PrivateLearner) and "sparse_vector_experts" in repr(L)
