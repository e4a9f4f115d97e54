"""Memory-bounded experts: hand-worked epochs, Hedge at S = n, state size, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import chisquare

from expertlab import sim
from expertlab.experts import hedge, instances
from expertlab.experts._memory_bounded import PENDING_MIX, POOL_STREAM, memory_bounded, state_nbytes
from expertlab.random import LEARNER_STREAM, rep_key, round_key, stream_key, uniform
from expertlab.testing.strategies import loss_matrices


def _draw(key, j):
    """Uniform draw j of the pool stream of a (1,) learner key."""
    return float(uniform(stream_key(key, POOL_STREAM), np.array([j], dtype=np.uint64))[0])


def _brute_refill(kept, n, key, n_slots):
    """Independent refill: the r-th element of the explicit list of non-members, r = floor(u (n - m))."""
    members = list(kept)
    for j in range(n_slots):
        free = [i for i in range(n) if i not in members]
        members.append(free[int(math.floor(_draw(key, j) * len(free)))])
    return members


def test_epoch_boundary_and_pool_update_by_hand():
    n, eta = 6, 1.0
    learner = memory_bounded(2, epoch=2, eta=eta)
    state = learner.init(n, 1)
    assert state.pool.tolist() == [[-1, -1]]
    k0 = np.array([11], dtype=np.uint64)
    a, b = _brute_refill([], n, k0, 2)
    p = learner.act(state, None, k0)[0]
    expected = np.zeros(n)
    expected[[a, b]] = 0.5  # all regrets 0; the uniform mix leaves 1/2
    np.testing.assert_allclose(p[0], expected, rtol=0, atol=1e-15)
    loss = np.full((1, n), 0.5)
    loss[0, a], loss[0, b] = 0.0, 1.0
    state = learner.update(state, p, (loss, None))
    assert sorted(state.pool[0].tolist()) == sorted([a, b])
    ra = state.regret[0, state.pool[0].tolist().index(a)]
    assert ra == pytest.approx(0.5)  # mix 1/2 - loss 0
    # round 2: Hedge on the pool, p_a = e^{1/2} / (e^{1/2} + e^{-1/2})
    p = learner.act(state, None, np.array([12], dtype=np.uint64))[0]
    pa = 1.0 / (1.0 + math.exp(-1.0))
    assert p[0, a] == pytest.approx(pa, abs=1e-15) and p[0, b] == pytest.approx(1 - pa, abs=1e-15)
    state = learner.update(state, p, (loss, None))
    # end of the epoch: a (epoch regret 1/2 + p_b) beats b; a moves to slot 0, slot 1 is emptied
    assert state.pool.tolist() == [[a, -1]]
    np.testing.assert_allclose(state.regret[0], [0.5 + (1 - pa), 0.0], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(state.epoch_regret, 0.0)
    # round 3 opens the next epoch: one newcomer, the brute-force draw among the 5 non-members
    k2 = np.array([13], dtype=np.uint64)
    c = _brute_refill([a], n, k2, 1)[1]
    p = learner.act(state, None, k2)[0]
    w = np.array([math.exp(eta * (0.5 + 1 - pa)), 1.0])
    q = (1 - PENDING_MIX) * w / w.sum() + PENDING_MIX / 2
    expected = np.zeros(n)
    expected[[a, c]] = q
    np.testing.assert_allclose(p[0], expected, rtol=0, atol=1e-15)
    state = learner.update(state, p, (np.full((1, n), 0.5), None))
    assert state.pool.tolist() == [[a, c]]


def test_refill_draws_distinct_experts_uniformly():
    """The initial pool is a uniform 2-subset of 5 experts: chi-square over the 10 subsets."""
    n, reps = 5, 20_000
    learner = memory_bounded(2, epoch=3)
    state = learner.init(n, reps)
    keys = rep_key(99, np.arange(reps, dtype=np.uint64))  # the replication keys of seed 99
    p = learner.act(state, None, keys)[0]
    support = p > 0
    assert np.all(support.sum(axis=1) == 2)
    codes = [int(i) * n + int(j) for i, j in (np.flatnonzero(r) for r in support)]
    counts = np.bincount(codes, minlength=n * n)
    pairs = [i * n + j for i in range(n) for j in range(i + 1, n)]
    assert counts.sum() == counts[pairs].sum() == reps
    assert chisquare(counts[pairs]).pvalue > 1e-3


def test_pool_stays_distinct_and_in_range():
    rng = np.random.default_rng(3)
    n, reps = 9, 5
    learner = memory_bounded(4, epoch=3)
    state = learner.init(n, reps)
    for t in range(40):
        p = learner.act(state, None, round_key(rep_key(3, np.arange(reps, dtype=np.uint64)), t))[0]
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
        state = learner.update(state, p, (rng.uniform(size=(reps, n)), None))
        full = state.pool[:, 0] >= 0
        for row in state.pool:
            kept = row[row >= 0]
            assert len(set(kept.tolist())) == kept.size and np.all(kept < n)
        assert full.all()


@pytest.mark.parametrize("n", [1, 4, 7])
def test_memory_equal_to_n_is_hedge_exactly(n):
    inst = instances.needle(n, 0.2)
    mine = sim.run(memory_bounded(n, epoch=5, eta=0.7), inst, horizon=200, n_reps=6, seed=4)
    ref = sim.run(hedge(eta=0.7), inst, horizon=200, n_reps=6, seed=4, backend="numpy")
    np.testing.assert_array_equal(mine.metrics["regret"], ref.metrics["regret"])  # the same floating-point operations
    np.testing.assert_array_equal(mine.final["expert_regret"], ref.final["expert_regret"])


def test_default_rates_with_memory_n_are_tuned_hedge():
    """S = n, default epoch B = ceil(n T / (6 n)) = ceil(T / 6), default eta = sqrt(8 ln n / B)."""
    n, T = 5, 120
    inst = instances.needle(n, 0.1)
    mine = sim.run(memory_bounded(n, horizon=T), inst, horizon=T, n_reps=4, seed=2)
    ref = sim.run(hedge(eta=math.sqrt(8 * math.log(n) / 20)), inst, horizon=T, n_reps=4, seed=2,
                  backend="numpy")
    np.testing.assert_array_equal(mine.metrics["regret"], ref.metrics["regret"])


def test_state_size_is_independent_of_n():
    """3 int64 counters + pool, regret and epoch regret: 8 (3 + 3 S) bytes per replication."""
    for S in (1, 8, 33):
        sizes = []
        for n in (S, 10 * S + 1, 100_000):
            learner = memory_bounded(S, epoch=4)
            state = learner.init(n, 3)
            sizes.append(state_nbytes(state))
            for t in range(9):
                p = learner.act(state, None, np.arange(3, dtype=np.uint64) + np.uint64(7 * t))[0]
                state = learner.update(state, p, (np.full((3, n), 0.5), None))
            sizes.append(state_nbytes(state))
        assert sizes == [8.0 * (3 + 3 * S)] * len(sizes)


def test_replication_alone_equals_in_batch():
    learner = memory_bounded(3, epoch=7)
    inst = instances.needle(10, 0.2)
    full = sim.run(learner, inst, horizon=90, n_reps=6, seed=11)
    alone = sim.run(learner, inst, horizon=90, n_reps=1, seed=11, rep_offset=4)
    np.testing.assert_array_equal(alone.metrics["regret"][:, 0], full.metrics["regret"][:, 4])
    np.testing.assert_array_equal(alone.final["expert_regret"][0], full.final["expert_regret"][4])


def test_bad_memory():
    with pytest.raises(ValueError, match="memory"):
        memory_bounded(0, epoch=3)
    with pytest.raises(TypeError, match="memory"):
        memory_bounded(2.5, epoch=3)
    with pytest.raises(TypeError, match="memory"):
        memory_bounded(True, epoch=3)
    with pytest.raises(ValueError, match="memory"):
        memory_bounded(5, epoch=3).init(4, 2)


def test_bad_schedule_arguments():
    with pytest.raises(ValueError, match="horizon"):
        memory_bounded(2)
    with pytest.raises(ValueError, match="epoch"):
        memory_bounded(2, horizon=10, epoch=3)
    with pytest.raises(ValueError, match="epoch"):
        memory_bounded(2, epoch=0)
    with pytest.raises(ValueError, match="eta"):
        memory_bounded(2, epoch=3, eta=-1.0)


def _started(n_reps=2, n=5):
    learner = memory_bounded(2, epoch=3)
    state = learner.init(n, n_reps)
    p = learner.act(state, None, np.arange(n_reps, dtype=np.uint64))[0]
    return learner, state, p


@pytest.mark.parametrize("bad", [math.nan, math.inf, -0.1, 1.5])
def test_bad_loss_values(bad):
    learner, state, p = _started()
    loss = np.full((2, 5), 0.5)
    loss[1, 3] = bad
    with pytest.raises(ValueError, match=r"\bloss\b"):
        learner.update(state, p, (loss, None))


def test_bad_loss_shape_play_key_and_awake():
    learner, state, p = _started()
    with pytest.raises(ValueError, match=r"\bloss\b"):
        learner.update(state, p, (np.full((2, 4), 0.5), None))
    with pytest.raises(ValueError, match=r"\bp\b"):
        learner.update(state, np.full((2, 5), 0.2), (np.full((2, 5), 0.5), None))  # not the play act returned
    with pytest.raises(TypeError, match="key"):
        learner.act(state)[0]
    with pytest.raises(ValueError, match="key"):
        learner.act(state, None, np.arange(3, dtype=np.uint64))[0]
    with pytest.raises(ValueError, match="awake"):
        learner.act(state, np.ones((2, 5), dtype=bool), np.arange(2, dtype=np.uint64))[0]
    with pytest.raises(TypeError, match="state"):
        state_nbytes([1, 2])


# --------------------------------------------------------------------------
# Hypothesis invariants (the shared learner suites, restated for a learner they exempt)

SEED = np.uint64(2024)


def _keys(rep_ids, t):
    reps = np.asarray(rep_ids, dtype=np.uint64)
    with np.errstate(over="ignore"):  # uint64 hashing wraps by design
        rk = rep_key(np.full(reps.shape, SEED, dtype=np.uint64), reps)
        return round_key(stream_key(rk, LEARNER_STREAM), np.uint64(t))


def _drive(learner, losses, rep_ids=None, state=None, t0=0):
    horizon, n_reps, n = losses.shape
    rep_ids = np.arange(n_reps) if rep_ids is None else rep_ids
    state = learner.init(n, n_reps) if state is None else state
    plays = np.empty_like(losses)
    for t in range(horizon):
        plays[t] = learner.act(state, None, _keys(rep_ids, t0 + t))[0]
        state = learner.update(state, plays[t], (losses[t], None))
    return plays, state


@st.composite
def _cases(draw, min_reps=1):
    n = draw(st.integers(1, 6))
    memory = draw(st.integers(1, n))
    epoch = draw(st.integers(1, 5))
    losses = draw(loss_matrices(min_reps=min_reps, max_reps=3, max_horizon=25, min_experts=n, max_experts=n))
    losses = np.ascontiguousarray(np.swapaxes(losses, 0, 1))  # (T, R, N), as _drive takes it
    return memory_bounded(memory, epoch=epoch, eta=draw(st.sampled_from([0.1, 1.0, 30.0]))), losses


@given(_cases())
def test_plays_are_distributions_on_the_pool(case):
    learner, losses = case
    horizon, n_reps, n = losses.shape
    state = learner.init(n, n_reps)
    for t in range(horizon):
        p = learner.act(state, None, _keys(np.arange(n_reps), t))[0]
        assert np.all(np.isfinite(p)) and np.all(p >= 0.0)
        np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        state = learner.update(state, p, (losses[t], None))
        assert np.all(np.sum(p > 0, axis=1) <= learner.params["memory"])
        assert np.all((state.pool >= -1) & (state.pool < n))


@given(_cases(min_reps=2), st.data())
def test_batch_equals_replications_alone_and_restacked(case, data):
    learner, losses = case
    horizon, n_reps, _ = losses.shape
    plays, state = _drive(learner, losses)
    cut = data.draw(st.integers(0, horizon))
    firsts = []
    for r in range(n_reps):
        plays_r, state_r = _drive(learner, losses[:, r:r + 1], rep_ids=[r])
        np.testing.assert_array_equal(plays_r[:, 0], plays[:, r])
        for a, b in zip(state_r, state):
            np.testing.assert_array_equal(np.asarray(a)[0], np.asarray(b)[r])
        firsts.append(_drive(learner, losses[:cut, r:r + 1], rep_ids=[r])[1])
    stacked = type(state)(*[np.concatenate([np.asarray(f[i]) for f in firsts]) for i in range(len(state))])
    rest, _ = _drive(learner, losses[cut:], state=stacked, t0=cut)
    np.testing.assert_array_equal(rest, plays[cut:])
