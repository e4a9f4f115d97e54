"""Memory-bounded experts against an adaptive adversary: the attack, the driver, the cycling pool, bad input."""

import numpy as np
import pytest

from expertlab.experts import (AdaptiveMemoryLearner, memory_adaptive, memory_bounded, recent_plays_attack,
                               run_adaptive)


def _fixed(expert):
    """A learner that always plays ``expert``."""
    return AdaptiveMemoryLearner("fixed", lambda n_reps, n, key: np.zeros(n_reps, dtype=np.int64),
                                 lambda s: s + expert, lambda s, loss: s, {})


def test_attack_defaults_and_validation():
    assert recent_plays_attack(64).window == 8 and recent_plays_attack(65).window == 9
    assert recent_plays_attack(10, window=3).window == 3
    with pytest.raises(ValueError, match="window"):
        recent_plays_attack(10, window=11)
    with pytest.raises(ValueError, match="n_experts"):
        recent_plays_attack(1)


def test_driver_by_hand_with_a_fixed_learner():
    """Always expert 2, window 1: from round 2 on expert 2 loses 1 every round, so every play but the first hits."""
    T = 200
    r = run_adaptive(_fixed(2), recent_plays_attack(5, window=1), T, n_reps=30, seed=4, checkpoints=[1, T])
    np.testing.assert_array_equal(r.hits[:, :], np.tile([[0], [T - 1]], (1, 30)))
    # expert 2's total loss equals the learner's; the best other coin loses about T/2, so the regret is ~T/2
    assert np.all(r.regret[-1] >= 0) and np.all(r.regret[-1] > 0.3 * T)


def test_cycle_plays_each_member_once_per_pool_length():
    S, n, B = 5, 40, 20
    L = memory_adaptive(S, epoch=B)
    s = L.init(3, n, np.arange(3, dtype=np.uint64))
    assert np.all([len(set(row)) == S for row in s.pool.tolist()])
    plays = []
    for t in range(2 * B):
        plays.append(L.act(s))
        s = L.update(s, np.full((3, n), 0.5))
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
    s = L.init(1, n, np.array([3], dtype=np.uint64))
    s = s._replace(pool=np.array([[5, 0, 7, 1]]))
    loss = np.ones((1, n))
    loss[0, [0, 1]] = 0.0
    for _ in range(B):
        s = L.update(s, loss)
    kept = set(s.pool[0].tolist())
    assert {0, 1} <= kept and len(kept) == S and not ({5, 7} <= kept)
    np.testing.assert_array_equal(s.epoch_loss, 0.0)


@pytest.mark.parametrize("S, w", [(9, 8), (16, 8), (8, 8), (4, 8)])
def test_hits_are_bounded_above_the_window_and_certain_at_or_below_it(S, w):
    n, T, n_epochs = 64, 960, 4
    B = T // n_epochs
    r = run_adaptive(memory_adaptive(S, epoch=B), recent_plays_attack(n, window=w), T, n_reps=8, seed=1,
                     checkpoints=[T])
    if S > w:  # only the first w plays of an epoch can repeat an expert the adversary remembers
        assert np.all(r.hits[-1] <= w * (n_epochs - 1))
        assert r.regret[-1].mean() < 0.1 * T
    else:      # every play after the first S of an epoch repeats the expert played S <= w rounds before
        assert np.all(r.hits[-1] >= (B - S) * n_epochs)
        assert r.regret[-1].mean() > 0.3 * T


def test_oblivious_pool_learner_is_hit_almost_always():
    T = 2000
    r = run_adaptive(memory_bounded(4, epoch=T // 8), recent_plays_attack(256), T, n_reps=6, seed=2,
                     checkpoints=[T])
    assert np.all(r.hits[-1] > 0.9 * T) and np.all(r.regret[-1] > 0.35 * T)


def test_batching_and_seeding():
    L, adv = memory_adaptive(12, epoch=50), recent_plays_attack(64)
    a = run_adaptive(L, adv, 300, n_reps=5, seed=9)
    b = run_adaptive(L, adv, 300, n_reps=2, seed=9, rep_offset=3)
    c = run_adaptive(L, adv, 300, n_reps=5, seed=9)
    np.testing.assert_array_equal(a.regret[:, 3:], b.regret)
    np.testing.assert_array_equal(a.regret, c.regret)
    M = memory_bounded(4, epoch=50)
    a = run_adaptive(M, adv, 200, n_reps=4, seed=3)
    b = run_adaptive(M, adv, 200, n_reps=1, seed=3, rep_offset=2)
    np.testing.assert_array_equal(a.regret[:, 2:3], b.regret)


def test_bad_input():
    with pytest.raises(ValueError, match="exactly one"):
        memory_adaptive(4)
    with pytest.raises(ValueError, match="exactly one"):
        memory_adaptive(4, horizon=100, epoch=10)
    with pytest.raises(ValueError, match="memory"):
        memory_adaptive(0, epoch=10)
    L = memory_adaptive(4, epoch=10)
    with pytest.raises(ValueError, match="memory"):
        L.init(2, 3, np.arange(2, dtype=np.uint64))
    with pytest.raises(ValueError, match="key"):
        L.init(2, 8, np.arange(3, dtype=np.uint64))
    s = L.init(2, 8, np.arange(2, dtype=np.uint64))
    with pytest.raises(ValueError, match="loss"):
        L.update(s, np.full((2, 8), np.nan))
    with pytest.raises(TypeError, match="adversary"):
        run_adaptive(L, "attack", 10)
    with pytest.raises(TypeError, match="learner"):
        run_adaptive("pool", recent_plays_attack(8), 10)
    with pytest.raises(ValueError, match="checkpoints"):
        run_adaptive(L, recent_plays_attack(8), 10, checkpoints=[11])
