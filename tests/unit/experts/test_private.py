"""Private experts: sparse-vector switching, private FTPL, tree DP-FTRL on the engine, the horizon rule, the audit."""

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.random import rep_key, round_key
from expertlab.experts import (audit_private, hedge, instances, noisy_ftpl, privacy_cost, realizable,
                               small_loss_experts, sparse_vector_experts, tree_ftrl)
from expertlab.experts._private_run import played_experts

LEARNERS = [lambda: sparse_vector_experts(2.0, 200), lambda: noisy_ftpl(2.0, 200), lambda: tree_ftrl(2.0, 200)]
ALL_PRIVATE = {
    "sparse_vector_experts": lambda eps, T: sparse_vector_experts(eps, T),
    "noisy_ftpl": lambda eps, T: noisy_ftpl(eps, T),
    "tree_ftrl": lambda eps, T: tree_ftrl(eps, T),
    "small_loss_experts": lambda eps, T: small_loss_experts(eps, T),
}


def plays(learner, env, horizon, n_reps, seed=0, rep_offset=0):
    """The (n_reps, horizon) experts played in a sim.run of ``learner``."""
    res = sim.run(learner, env, horizon, n_reps, seed, metrics=[played_experts(horizon)], checkpoints=[horizon],
                  rep_offset=rep_offset)
    return res.final["plays"]


def spec(n, horizon=None):
    return sim.EnvSpec("full", "round", n, horizon=horizon)


def feedback(loss):
    return sim.FullFeedback(np.asarray(loss, dtype=np.float64))


def keys(n_reps, t=0):
    with np.errstate(over="ignore"):
        return round_key(np.arange(n_reps, dtype=np.uint64), np.uint64(t))


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
    np.testing.assert_allclose(res.metrics["regret"][-1], er[:, 2])


def test_instance_and_loss_matrix_give_the_same_plays():
    """On an instance the learner sees the losses of the engine's key derivation; the same losses as a matrix
    (every replication) give the same plays, because the learner's keys do not depend on the environment."""
    inst = realizable(4, 0.5)
    seed, T = 7, 60
    idx = np.arange(4, dtype=np.int64)[None, :]
    with np.errstate(over="ignore"):
        rk = rep_key(np.uint64(seed), np.uint64(2))
        M = np.vstack([inst.loss(inst.data, round_key(np.array([[rk]]), np.uint64(t)), t, idx)[0]
                       for t in range(T)])
    L = noisy_ftpl(1.0, T)
    a = plays(L, inst, T, 1, seed, rep_offset=2)
    b = plays(L, instances.loss_matrix(M), T, 1, seed, rep_offset=2)
    np.testing.assert_array_equal(a, b)
    ra = sim.run(L, inst, T, 1, seed, rep_offset=2, metrics=["regret"])
    rb = sim.run(L, instances.loss_matrix(M), T, 1, seed, rep_offset=2)
    np.testing.assert_array_equal(ra.metrics["regret"], rb.metrics["regret"])


def test_regret_of_the_played_experts():
    """The engine's regret of a one-hot learner is that of the played experts, recomputed here from the plays."""
    M = np.random.default_rng(0).integers(0, 2, size=(80, 3)).astype(float)
    L = sparse_vector_experts(4.0, 80, threshold=2.0)
    res = sim.run(L, instances.loss_matrix(M), 80, 9, seed=5, metrics=["regret", played_experts(80)],
                  checkpoints=[80])
    pl = res.final["plays"]
    own = M[np.arange(80)[None, :], pl].sum(axis=1)
    np.testing.assert_allclose(res.metrics["regret"][-1], own - M.sum(axis=0).min())


@pytest.mark.parametrize("make", LEARNERS)
def test_replication_alone_equals_in_batch(make):
    L = make()
    full = plays(L, realizable(5, 0.5), 200, 6, seed=11)
    alone = plays(L, realizable(5, 0.5), 200, 1, seed=11, rep_offset=4)
    np.testing.assert_array_equal(alone[0], full[4])
    a = sim.run(L, realizable(5, 0.5), 200, 6, seed=11).metrics["regret"]
    b = sim.run(L, realizable(5, 0.5), 200, 1, seed=11, rep_offset=4).metrics["regret"]
    np.testing.assert_array_equal(b[:, 0], a[:, 4])


@pytest.mark.parametrize("make", LEARNERS)
def test_update_is_pure_and_plays_are_one_hot(make):
    L = make()
    s = L.init(spec(4, 200), 3, np.arange(3, dtype=np.uint64), np)
    p, s1 = L.act(s, None, keys(3))
    assert p.shape == (3, 4) and np.all(p.sum(axis=1) == 1.0) and np.all((p == 0) | (p == 1))
    before = [np.array(a, copy=True) for a in s]
    L.update(s, p, feedback(np.full((3, 4), 1.0)), keys(3))
    for a, b in zip(before, s):
        np.testing.assert_array_equal(a, b)
    assert all(np.shape(a)[0] == 3 for a in s)  # the replication axis first


def test_sparse_vector_without_noise_by_hand():
    """noise=False, tau = 1: the followed expert is dropped right after its first loss."""
    L = sparse_vector_experts(1.0, 5, threshold=1.0, max_switches=3, noise=False)
    ch = plays(L, instances.loss_matrix(np.array([[1.0, 0.0]] * 5)), 5, 64)
    start0 = ch[:, 0] == 0
    assert 0 < start0.sum() < 64  # the first expert is uniform
    np.testing.assert_array_equal(ch[start0], [[0, 1, 1, 1, 1]] * int(start0.sum()))
    np.testing.assert_array_equal(ch[~start0], [[1, 1, 1, 1, 1]] * int((~start0).sum()))


def test_switch_budget_is_respected():
    """threshold -1e9: every query is 'above' until the budget K is spent, then the expert is frozen."""
    L = sparse_vector_experts(1.0, 50, threshold=-1e9, max_switches=4)
    s = L.init(spec(6, 50), 200, np.arange(200, dtype=np.uint64), np)
    for t in range(10):
        p, s = L.act(s, None, keys(200, t))
        s = L.update(s, p, feedback(np.zeros((200, 6))), keys(200, t))
        assert np.all(s.switches == min(t + 1, 4))
        if t == 3:
            frozen = s.cur.copy()
    np.testing.assert_array_equal(s.cur, frozen)


def test_sparse_vector_beats_private_ftpl_on_realizable():
    inst, T, eps = realizable(8, 0.5), 3000, 4.0
    a = sim.run(sparse_vector_experts(eps, T), inst, T, 200, seed=0, checkpoints=[T]).metrics["regret"][-1]
    b = sim.run(noisy_ftpl(eps, T), inst, T, 200, seed=0, checkpoints=[T]).metrics["regret"][-1]
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert b.mean() - a.mean() > 5 * se
    # noisy min with b = 2 (T-1)/eps ~ 1500 >> the loss gap p t: close to uniform play, regret ~ 7/8 T/2
    assert b.mean() > 0.5 * (7 / 8) * T / 2


def test_runs_on_any_experts_instance():
    for L in (sparse_vector_experts(2.0, 100), noisy_ftpl(2.0, 100), tree_ftrl(2.0, 100),
              small_loss_experts(2.0, 100)):
        for env in (instances.fair_coins(5), instances.needle(5, 0.2), instances.piecewise_best(5, 30),
                    instances.anti_correlated()):
            res = sim.run(L, env, 100, 3, seed=1)
            assert res.metrics["regret"].shape == (res.checkpoints.size, 3)


# -- the horizon rule and the accountant (the "Reliability" finding) ----------------------


@pytest.mark.parametrize("name", sorted(ALL_PRIVATE))
def test_a_run_longer_than_the_calibrated_horizon_is_refused(name):
    """Old behaviour: noisy_ftpl(epsilon=1, horizon=10) ran 200 rounds (199 releases, eps ~ 22) and reported
    eps = 1; sparse_vector_experts likewise ran past the horizon its threshold is tuned to."""
    L = ALL_PRIVATE[name](1.0, 10)
    with pytest.raises(ValueError, match="horizon"):
        sim.run(L, instances.fair_coins(4), horizon=200, n_reps=2)
    with pytest.raises(ValueError, match="horizon"):
        sim.run(L, instances.fair_coins(4), horizon=11, n_reps=2)
    sim.run(L, instances.fair_coins(4), horizon=10, n_reps=2)  # the calibrated horizon runs
    sim.run(L, instances.fair_coins(4), horizon=3, n_reps=2)   # and so does a shorter run


@pytest.mark.parametrize("name", sorted(ALL_PRIVATE))
def test_update_refuses_rounds_beyond_the_horizon_when_driven_by_hand(name):
    L = ALL_PRIVATE[name](1.0, 2)
    s = L.init(2, 1, np.zeros(1, dtype=np.uint64), np)  # spec given as the number of experts: no run horizon
    for t in range(2):
        p, s = L.act(s, None, keys(1, t))
        s = L.update(s, p, feedback(np.zeros((1, 2))), keys(1, t))
    p, s = L.act(s, None, keys(1, 2))
    with pytest.raises(ValueError, match="horizon"):
        L.update(s, p, feedback(np.zeros((1, 2))), keys(1, 2))


def test_privacy_cost_counts_the_releases_of_the_run():
    # noisy_ftpl(1, 10): b = 2 / (1/9) = 18, each release 2/b = 1/9; a run of T' rounds makes T' - 1 releases
    L = noisy_ftpl(1.0, 10)
    assert privacy_cost(L, instances.fair_coins(4), 10).epsilon == pytest.approx(1.0, rel=1e-12)
    assert privacy_cost(L, 4, 200).epsilon == pytest.approx(199 / 9, rel=1e-12)  # what the old run spent
    assert privacy_cost(L, 4, 5).epsilon == pytest.approx(4 / 9, rel=1e-12)
    assert privacy_cost(L, 4, 1).epsilon == 0.0  # the first play ignores the data
    # sparse vector, d = 8: K = 6 pairs of eps0 = eps / 6; a run of T' < K rounds makes at most T' pairs
    S = sparse_vector_experts(3.0, 1000)
    assert privacy_cost(S, 8, 1000).epsilon == pytest.approx(3.0, rel=1e-12)
    assert privacy_cost(S, 8, 4).epsilon == pytest.approx(2.0, rel=1e-12)
    # tree, T = 1000 (10 levels), d = 4: b = 10 * 4 / eps; a run of 100 rounds touches 7 levels
    R = tree_ftrl(2.0, 1000)
    assert privacy_cost(R, 4, 1000).epsilon == pytest.approx(2.0, rel=1e-12)
    assert privacy_cost(R, 4, 100).epsilon == pytest.approx(1.4, rel=1e-12)
    with pytest.raises(ValueError, match="horizon"):
        privacy_cost(R, 4, 1001)
    with pytest.raises(ValueError, match="accountant"):
        privacy_cost(hedge(), 4, 10)
    with pytest.raises(TypeError, match="env"):
        privacy_cost(L, "four", 10)


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


def test_audit_refuses_a_learner_calibrated_for_fewer_rounds():
    with pytest.raises(ValueError, match="horizon"):
        audit_private(noisy_ftpl(1.0, 3), A, B, n_reps=10)


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
    (lambda: sim.run(noisy_ftpl(1.0, 10), instances.sleeping(instances.fair_coins(3)), 10, 2), ValueError,
     "sleeping"),
    (lambda: sim.run(noisy_ftpl(1.0, 10), instances.fair_coins(3), 10, 2, backend="numba"), ValueError,
     "compiled"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize("make", LEARNERS)
def test_update_rejects_bad_losses(make):
    L = make()
    s = L.init(spec(3, 200), 2, np.arange(2, dtype=np.uint64), np)
    p, _ = L.act(s, None, keys(2))
    with pytest.raises(ValueError, match="shape"):
        L.update(s, p, feedback(np.zeros((2, 4))), keys(2))
    with pytest.raises(ValueError, match="NaN"):
        L.update(s, p, feedback(np.full((2, 3), np.inf)), keys(2))
    with pytest.raises(ValueError, match="keys"):
        L.init(spec(3), 2, np.arange(3, dtype=np.uint64), np)
    with pytest.raises(ValueError, match="keys"):
        L.init(spec(3), 2, np.arange(2), np)  # int64, not the engine's uint64 keys


def test_record():
    L = sparse_vector_experts(1.0, 10)
    assert isinstance(L, sim.Learner) and L.feedback == "full" and "sparse_vector_experts" in repr(L)
    for name in ALL_PRIVATE:
        assert sim.get_learner(name).family == "experts"
        learner, env, horizon = sim.get_learner(name).example()
        assert sim.run(learner, env, horizon, 2).metrics["regret"].shape[1] == 2
