"""Memory-bounded experts against an adaptive adversary: the attack environment, the cycling pool, bad input."""

import numpy as np
import pytest

from expertlab import sim
from expertlab.random import round_key
from expertlab.experts import AdaptiveAdversary, instances, memory_adaptive, memory_bounded, recent_plays_attack


def _fixed(expert):
    """A full-information learner that always plays ``expert`` (one-hot)."""
    def init(spec, n_reps, keys, xp=np):
        return (np.zeros((n_reps, spec.n_actions)),)

    def act(state, awake=None, keys=None):
        p = state[0].copy()
        p[:, expert] = 1.0
        return p, state

    return sim.Learner("fixed", "full", init, act, lambda state, p, feedback, keys=None: state, {})


def keys(n_reps, t=0):
    with np.errstate(over="ignore"):
        return round_key(np.arange(n_reps, dtype=np.uint64), np.uint64(t))


def step(L, s, loss, t=0):
    n_reps = loss.shape[0]
    p, s = L.act(s, None, keys(n_reps, t))
    return L.update(s, p, sim.FullFeedback(loss), keys(n_reps, t)), p


def test_attack_defaults_and_validation():
    assert recent_plays_attack(64).window == 8 and recent_plays_attack(65).window == 9
    assert recent_plays_attack(10, window=3).window == 3
    adv = recent_plays_attack(10, window=3)
    assert isinstance(adv, AdaptiveAdversary) and isinstance(adv, sim.Environment)
    assert adv.spec.feedback == "full" and adv.spec.n_actions == 10 and "recent_plays_attack" in repr(adv)
    assert sim.get_environment("recent_plays_attack").factory is recent_plays_attack
    with pytest.raises(ValueError, match="window"):
        recent_plays_attack(10, window=11)
    with pytest.raises(ValueError, match="n_experts"):
        recent_plays_attack(1)


def test_attack_by_hand_with_a_fixed_learner():
    """Always expert 2, window 1: from round 2 on expert 2 loses 1 every round, so every play but the first hits."""
    T = 200
    r = sim.run(_fixed(2), recent_plays_attack(5, window=1), T, n_reps=30, seed=4, checkpoints=[1, T],
                metrics=["regret", "hits", "mixture_regret"])
    np.testing.assert_array_equal(r.metrics["hits"], np.tile([[0], [T - 1]], (1, 30)))
    # expert 2's total loss equals the learner's; the best other coin loses about T/2, so the regret is ~T/2
    reg = r.metrics["regret"][-1]
    assert np.all(reg >= 0) and np.all(reg > 0.3 * T)
    np.testing.assert_array_equal(r.metrics["mixture_regret"], r.metrics["regret"])  # one-hot play
    np.testing.assert_allclose(r.final["expert_regret"][:, 2], 0.0)


def test_environment_step_by_hand():
    """Window 2: the losses mark the last two plays; a play drawn from p; the state is not mutated."""
    env = recent_plays_attack(4, window=2)
    k = np.arange(3, dtype=np.uint64)
    s0 = env.reset(3, k, np)
    p = np.zeros((3, 4))
    p[:, 1] = 1.0
    s1, fb, info = env.step(s0, p, 0, k)
    np.testing.assert_array_equal(s0.recent, -1)
    np.testing.assert_array_equal(info["play"], 1)
    assert not info["hit"].any() and fb.awake is None
    p2 = np.zeros((3, 4))
    p2[:, 3] = 1.0
    s2, fb, info = env.step(s1, p2, 1, k)
    np.testing.assert_array_equal(fb.loss[:, 1], 1.0)  # expert 1 was played last round
    s3, fb, info = env.step(s2, p, 2, k)
    np.testing.assert_array_equal(fb.loss[:, [1, 3]], 1.0)
    assert info["hit"].all()
    np.testing.assert_array_equal(s3.recent, [[1, 3]] * 3)  # round 2 overwrote slot 0
    # a spread p: the play is drawn from it (uniform over two experts, both seen over replications)
    q = np.zeros((400, 4))
    q[:, [0, 2]] = 0.5
    kk = np.arange(400, dtype=np.uint64)
    _, _, info = env.step(env.reset(400, kk, np), q, 0, kk)
    assert set(info["play"].tolist()) == {0, 2} and 120 < int((info["play"] == 0).sum()) < 280


def test_cycle_plays_each_member_once_per_pool_length():
    S, n, B = 5, 40, 20
    L = memory_adaptive(S, epoch=B)
    s = L.init(n, 3, np.arange(3, dtype=np.uint64), np)
    assert np.all([len(set(row)) == S for row in s.pool.tolist()])
    plays = []
    for t in range(2 * B):
        s, p = step(L, s, np.full((3, n), 0.5), t)
        assert np.all(p.sum(axis=1) == 1.0) and np.all((p == 0) | (p == 1))
        plays.append(np.argmax(p, axis=1))
    plays = np.array(plays)  # (2B, 3)
    for e in range(2):
        block = plays[e * B:(e + 1) * B]
        # inside an epoch the play is periodic with period S and covers S distinct experts
        np.testing.assert_array_equal(block[S:], block[:-S])
        assert all(len(set(block[:S, r])) == S for r in range(3))


def test_epoch_end_keeps_the_best_slots():
    """Losses 0 on experts 0 and 1, 1 elsewhere: after an epoch whose pool holds them, both are kept."""
    S, n, B = 4, 12, 8
    L = memory_adaptive(S, epoch=B)
    s = L.init(n, 1, np.array([3], dtype=np.uint64), np)
    s = s._replace(pool=np.array([[5, 0, 7, 1]]))
    loss = np.ones((1, n))
    loss[0, [0, 1]] = 0.0
    before = [np.array(a, copy=True) for a in s]
    s1, _ = step(L, s, loss)
    for a, b in zip(before, s):  # update is pure
        np.testing.assert_array_equal(a, b)
    s = s1
    for t in range(1, B):
        s, _ = step(L, s, loss, t)
    kept = set(s.pool[0].tolist())
    assert {0, 1} <= kept and len(kept) == S and not ({5, 7} <= kept)
    np.testing.assert_array_equal(s.epoch_loss, 0.0)


@pytest.mark.parametrize("S, w", [(9, 8), (16, 8), (8, 8), (4, 8)])
def test_hits_are_bounded_above_the_window_and_certain_at_or_below_it(S, w):
    n, T, n_epochs = 64, 960, 4
    B = T // n_epochs
    r = sim.run(memory_adaptive(S, epoch=B), recent_plays_attack(n, window=w), T, n_reps=8, seed=1,
                checkpoints=[T])
    hits, regret = r.metrics["hits"][-1], r.metrics["regret"][-1]
    if S > w:  # only the first w plays of an epoch can repeat an expert the adversary remembers
        assert np.all(hits <= w * (n_epochs - 1))
        assert regret.mean() < 0.1 * T
    else:      # every play after the first S of an epoch repeats the expert played S <= w rounds before
        assert np.all(hits >= (B - S) * n_epochs)
        assert regret.mean() > 0.3 * T


def test_oblivious_pool_learner_is_hit_almost_always():
    T = 2000
    r = sim.run(memory_bounded(4, epoch=T // 8), recent_plays_attack(256), T, n_reps=6, seed=2, checkpoints=[T])
    assert np.all(r.metrics["hits"][-1] > 0.9 * T) and np.all(r.metrics["regret"][-1] > 0.35 * T)


def test_memory_adaptive_on_an_oblivious_sequence():
    """The learner runs on every loss sequence; on fair coins any learner's expected regret is known exactly."""
    inst = instances.fair_coins(6)
    r = sim.run(memory_adaptive(3, epoch=20), inst, 100, n_reps=2000, seed=3)
    exact = inst.exact_expected_regret(100)
    assert abs(r.mean()[-1] - exact) <= 4 * r.stderr()[-1]


def test_batching_and_seeding():
    L, adv = memory_adaptive(12, epoch=50), recent_plays_attack(64)
    a = sim.run(L, adv, 300, n_reps=5, seed=9)
    b = sim.run(L, adv, 300, n_reps=2, seed=9, rep_offset=3)
    c = sim.run(L, adv, 300, n_reps=5, seed=9)
    for m in ("regret", "hits"):
        np.testing.assert_array_equal(a.metrics[m][:, 3:], b.metrics[m])
        np.testing.assert_array_equal(a.metrics[m], c.metrics[m])
    M = memory_bounded(4, epoch=50)
    a = sim.run(M, adv, 200, n_reps=4, seed=3)
    b = sim.run(M, adv, 200, n_reps=1, seed=3, rep_offset=2)
    np.testing.assert_array_equal(a.metrics["regret"][:, 2:3], b.metrics["regret"])


def test_bad_input():
    with pytest.raises(ValueError, match="exactly one"):
        memory_adaptive(4)
    with pytest.raises(ValueError, match="exactly one"):
        memory_adaptive(4, horizon=100, epoch=10)
    with pytest.raises(ValueError, match="memory"):
        memory_adaptive(0, epoch=10)
    L = memory_adaptive(4, epoch=10)
    with pytest.raises(ValueError, match="memory"):
        L.init(3, 2, np.arange(2, dtype=np.uint64), np)
    with pytest.raises(ValueError, match="keys"):
        L.init(8, 2, np.arange(3, dtype=np.uint64), np)
    s = L.init(8, 2, np.arange(2, dtype=np.uint64), np)
    with pytest.raises(ValueError, match="loss"):
        step(L, s, np.full((2, 8), np.nan))
    with pytest.raises(ValueError, match="awake"):
        sim.run(L, instances.sleeping(instances.fair_coins(8)), 10, 2)
    with pytest.raises(ValueError, match="checkpoints"):
        sim.run(L, recent_plays_attack(8), 10, checkpoints=[11])
    with pytest.raises(ValueError, match="p must have shape"):
        recent_plays_attack(8).step(recent_plays_attack(8).reset(2, np.arange(2, dtype=np.uint64), np),
                                    np.ones((2, 7)) / 7, 0, np.arange(2, dtype=np.uint64))
    with pytest.raises(ValueError, match="metric"):
        sim.run(L, recent_plays_attack(8), 10, metrics=["pseudo_regret"])
