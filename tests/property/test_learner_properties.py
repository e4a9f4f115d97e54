"""Hypothesis invariants of every registered full-information learner.

The suite is parametrised over the registered full-information aggregators
(``expertlab.sim.learners()``, feedback ``"full"``, family experts) at collection
time, each learner built with its factory's default arguments, so a learner
added to the registry is covered without editing this file.  A learner counts
as *randomised* when it plays a one-hot vector in every row of its initial
state (where any deterministic aggregator of three experts hedges); such
learners are exempt from permutation equivariance, which holds for them only
in distribution.

Invariants:

* plays are probability vectors (finite, non-negative, summing to one) for
  arbitrary losses in [0, 1], with and without ``awake`` masks, and asleep
  experts get exactly zero;
* relabelling the experts relabels the plays (deterministic learners);
* replications are independent: a batch equals its replications run alone,
  also when single-replication states are stacked row-wise mid-run;
* Hedge stays finite and on the simplex for learning rates from 1e-8 to 1e8
  and in states built as if after 10**7 rounds;
* ``update`` rejects bad input (NaN, infinities, losses outside [0, 1], wrong
  shapes, an ``awake`` row with no awake expert) with a ``ValueError`` that
  names the offending argument.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from expertlab.random import LEARNER_STREAM, rep_key, round_key, stream_key
from expertlab import sim
from expertlab.experts import HedgeState, hedge
from expertlab.testing.strategies import awake_masks, loss_matrices, sleeping_losses

#: Full-information learners these invariants do not describe, with the reason.
EXEMPT = {
    "memory_bounded": "plays from a pool of experts: relabelling and awake masks do not apply (own tests)",
    "memory_adaptive": "plays against an adaptive adversary (own tests)",
    "noisy_ftpl": "private learner, calibrated to a horizon (own tests)",
    "tree_ftrl": "private learner, calibrated to a horizon (own tests)",
    "sparse_vector_experts": "private learner for the realizable regime (own tests)",
    "small_loss_experts": "private learner for the small-loss regime (own tests)",
}
LEARNERS = {n: r.factory for n, r in sim.learners().items()
            if r.feedback == "full" and r.family == "experts" and n not in EXEMPT}
NAMES = sorted(LEARNERS)
SEED = np.uint64(12345)

# --------------------------------------------------------------------------
# driving a learner


def learner_keys(rep_ids, t):
    """The learner's round-``t`` keys for the given replication indices (as ``sim.run`` derives them)."""
    reps = np.asarray(rep_ids, dtype=np.uint64)
    with np.errstate(over="ignore"):  # uint64 hashing wraps by design
        rk = rep_key(np.full(reps.shape, SEED, dtype=np.uint64), reps)
        return round_key(stream_key(rk, LEARNER_STREAM), np.uint64(t))


def drive(learner, losses, awake=None, rep_ids=None, state=None, t0=0):
    """Run ``losses`` of shape (T, R, N) through ``learner``; return (plays (T, R, N), final state)."""
    horizon, n_reps, n = losses.shape
    if rep_ids is None:
        rep_ids = np.arange(n_reps)
    if state is None:
        state = learner.init(n, n_reps)
    plays = np.empty_like(losses)
    for t in range(horizon):
        aw = None if awake is None else awake[t]
        p = learner.act(state, aw, learner_keys(rep_ids, t0 + t))[0]
        plays[t] = np.asarray(p)
        state = learner.update(state, p, (losses[t], aw))
    return plays, state


def state_fields(state):
    return list(state._asdict().items()) if hasattr(state, "_asdict") else list(enumerate(state))


def stack_states(states):
    """Stack single-replication states row-wise into one batch state."""
    first = states[0]
    parts = []
    for i, (_, value) in enumerate(state_fields(first)):
        column = [state_fields(s)[i][1] for s in states]
        if hasattr(value, "shape") and np.ndim(value) >= 1:
            parts.append(np.concatenate([np.asarray(c) for c in column], axis=0))
        else:
            parts.append(value)
    return first._make(parts) if hasattr(first, "_make") else type(first)(parts)


def is_randomised(learner):
    state = learner.init(3, 4)
    p = np.asarray(learner.act(state, None, learner_keys(np.arange(4), 0))[0])
    return bool(np.all(np.sum(p == 1.0, axis=1) == 1) and np.all((p == 0.0) | (p == 1.0)))


def assert_on_simplex(p, awake=None):
    p = np.asarray(p)
    assert np.all(np.isfinite(p)), f"non-finite play {p}"
    assert np.all(p >= 0.0), f"negative play {p}"
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=0, atol=1e-9 * p.shape[-1])
    if awake is not None:
        assert np.all(p[~awake] == 0.0), f"asleep experts got weight: {p[~awake]}"


# --------------------------------------------------------------------------
# strategies

def _rounds_first(a):
    """(n_reps, T, N) as drawn by the library's strategies -> (T, n_reps, N) as ``drive`` takes it."""
    return None if a is None else np.ascontiguousarray(np.swapaxes(a, 0, 1))


def episodes(max_t=30, max_n=6, max_reps=3, min_reps=1, sleeping=None):
    """(losses (T, R, N), awake (T, R, N) or None): losses in [0, 1] with their edge values (0, 1/2, 1, the
    largest double below 1, the smallest normal and subnormal doubles) and masks with an awake expert per round."""
    bounds = dict(min_reps=min_reps, max_reps=max_reps, max_horizon=max_t, max_experts=max_n)
    plain = loss_matrices(**bounds).map(lambda losses: (_rounds_first(losses), None))
    asleep = sleeping_losses(**bounds).map(lambda pair: tuple(map(_rounds_first, pair)))
    return {None: st.one_of(plain, asleep), False: plain, True: asleep}[sleeping]


# --------------------------------------------------------------------------
# invariants of every learner


# Losses far below one ulp of 1 (subnormal): a learner that divides by an accumulated
# gap or variance of this size overflows unless it guards against it.
TINY_EPISODE = (np.array([[[0.0, 1e-310]], [[1e-310, 1e-310]], [[0.0, 1.0]], [[1.0, 0.0]]]), None)


@pytest.mark.parametrize("name", NAMES)
@given(episodes())
@example(episode=TINY_EPISODE)
def test_plays_stay_on_the_simplex(name, episode):
    losses, awake = episode
    learner = LEARNERS[name]()
    plays, _ = drive(learner, losses, awake)
    for t in range(losses.shape[0]):
        assert_on_simplex(plays[t], None if awake is None else awake[t])


@pytest.mark.parametrize("name", NAMES)
@given(episodes(), st.data())
def test_relabelling_experts_relabels_plays(name, episode, data):
    learner = LEARNERS[name]()
    if is_randomised(learner):
        pytest.skip(f"{name} samples one expert per round; equivariance holds only in distribution")
    losses, awake = episode
    n = losses.shape[-1]
    perm = np.asarray(data.draw(st.permutations(range(n))), dtype=np.int64)
    plays, _ = drive(learner, losses, awake)
    plays_perm, _ = drive(learner, losses[..., perm], None if awake is None else awake[..., perm])
    np.testing.assert_allclose(plays_perm, plays[..., perm], rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", NAMES)
@given(episodes(min_reps=2), st.data())
def test_batch_equals_replications_run_alone(name, episode, data):
    losses, awake = episode
    horizon, n_reps, _ = losses.shape
    learner = LEARNERS[name]()
    plays, state = drive(learner, losses, awake)
    alone_states = []
    for r in range(n_reps):
        sl = slice(r, r + 1)
        plays_r, state_r = drive(learner, losses[:, sl], None if awake is None else awake[:, sl], rep_ids=[r])
        np.testing.assert_allclose(plays_r[:, 0], plays[:, r], rtol=1e-12, atol=1e-15)
        alone_states.append(state_r)
    # the batch's final state holds the lone states row by row
    stacked = stack_states(alone_states)
    for (field, a), (_, b) in zip(state_fields(state), state_fields(stacked)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-15, equal_nan=True,
                                   err_msg=f"state field {field}")
    # stacking lone states mid-run and continuing as a batch changes nothing
    cut = data.draw(st.integers(0, horizon))
    firsts = []
    for r in range(n_reps):
        sl = slice(r, r + 1)
        _, s = drive(learner, losses[:cut, sl], None if awake is None else awake[:cut, sl], rep_ids=[r])
        firsts.append(s)
    rest, _ = drive(learner, losses[cut:], None if awake is None else awake[cut:], state=stack_states(firsts),
                    t0=cut)
    np.testing.assert_allclose(rest, plays[cut:], rtol=1e-12, atol=1e-15)


# --------------------------------------------------------------------------
# bad input to update


def _started(name, n_reps, n, rounds=2):
    learner = LEARNERS[name]()
    losses = np.full((rounds, n_reps, n), 0.5)
    _, state = drive(learner, losses)
    p = learner.act(state, None, learner_keys(np.arange(n_reps), rounds))[0]
    return learner, state, p


bad_values = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.floats(-10.0, 0.0, exclude_max=True),
    st.floats(1.0, 10.0, exclude_min=True),
)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(st.integers(1, 3), st.integers(1, 6), bad_values, st.data())
def test_update_rejects_bad_loss_values(name, n_reps, n, bad, data):
    learner, state, p = _started(name, n_reps, n)
    loss = np.full((n_reps, n), 0.25)
    r = data.draw(st.integers(0, n_reps - 1))
    i = data.draw(st.integers(0, n - 1))
    loss[r, i] = bad
    with pytest.raises(ValueError, match=r"\bloss\b"):
        learner.update(state, p, (loss, None))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape_of", ["extra_expert", "extra_rep", "missing_rep_axis", "fewer_experts"])
def test_update_rejects_loss_of_wrong_shape(name, shape_of):
    n_reps, n = 2, 3
    learner, state, p = _started(name, n_reps, n)
    shape = {"extra_expert": (n_reps, n + 1), "extra_rep": (n_reps + 1, n), "missing_rep_axis": (n,),
             "fewer_experts": (n_reps, n - 1)}[shape_of]
    with pytest.raises(ValueError, match=r"\bloss\b"):
        learner.update(state, p, (np.full(shape, 0.5), None))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(st.integers(1, 3), st.integers(1, 6), st.data())
def test_update_rejects_awake_row_with_nobody_awake(name, n_reps, n, data):
    learner, state, p = _started(name, n_reps, n)
    awake = np.ones((n_reps, n), dtype=bool)
    awake[data.draw(st.integers(0, n_reps - 1))] = False
    with pytest.raises(ValueError, match=r"\bawake\b"):
        learner.update(state, p, (np.full((n_reps, n), 0.5), awake))


@pytest.mark.parametrize("name", NAMES)
def test_update_rejects_awake_of_wrong_shape(name):
    learner, state, p = _started(name, 2, 3)
    with pytest.raises(ValueError, match=r"\bawake\b"):
        learner.update(state, p, (np.full((2, 3), 0.5), np.ones((2, 4), dtype=bool)))


# --------------------------------------------------------------------------
# Hedge: extreme learning rates and long horizons

log_etas = st.floats(-8.0, 8.0)


@given(episodes(), log_etas)
def test_hedge_finite_for_extreme_learning_rates(episode, le):
    losses, awake = episode
    learner = hedge(eta=10.0**le)
    plays, state = drive(learner, losses, awake)
    for t in range(losses.shape[0]):
        assert_on_simplex(plays[t], None if awake is None else awake[t])
    for field, value in state_fields(state):
        assert np.all(np.isfinite(np.asarray(value, dtype=np.float64))), f"state field {field} is not finite"


def test_hedge_large_eta_follows_the_leader_and_small_eta_stays_uniform():
    """Sanity of the extremes: eta = 1e8 puts all weight on the leader, eta = 1e-8 stays near uniform."""
    losses = np.array([[[0.0, 0.5, 1.0]], [[0.0, 0.5, 1.0]]])
    plays_big, _ = drive(hedge(eta=1e8), losses)
    np.testing.assert_array_equal(plays_big[1, 0], [1.0, 0.0, 0.0])
    plays_small, _ = drive(hedge(eta=1e-8), losses)
    np.testing.assert_allclose(plays_small[1, 0], 1.0 / 3.0, rtol=1e-7)


LONG = 10**7
SCHEDULES = {
    "anytime": lambda: hedge(),
    "doubling": lambda: hedge(schedule="doubling"),
    "tuned": lambda: hedge(horizon=2 * LONG),
    "eta=1e-8": lambda: hedge(eta=1e-8),
    "eta=1": lambda: hedge(eta=1.0),
    "eta=1e8": lambda: hedge(eta=1e8),
}


@pytest.mark.parametrize("schedule", sorted(SCHEDULES))
@given(st.data())
def test_hedge_after_ten_million_rounds(schedule, data):
    """States as if after 10**7 rounds: regrets of order 1e7 (|R_i| <= t), possibly asleep experts."""
    learner = SCHEDULES[schedule]()
    n_reps = data.draw(st.integers(1, 3))
    n = data.draw(st.integers(1, 6))
    t = data.draw(st.integers(LONG - 2, LONG + 2))
    regret = data.draw(hnp.arrays(np.float64, (n_reps, n),
                                  elements=st.one_of(st.floats(-t, t), st.sampled_from([-t, 0.0, t]))))
    base = np.zeros_like(regret)
    if schedule == "doubling":  # the epoch started at the last power of two
        base = data.draw(hnp.arrays(np.float64, (n_reps, n), elements=st.floats(-t / 2, t / 2)))
    state = HedgeState(t=np.full(n_reps, t, dtype=np.int64), regret=regret, base=base)
    awake = data.draw(st.none() | awake_masks((n_reps, n)))
    p = learner.act(state, awake, learner_keys(np.arange(n_reps), t))[0]
    assert_on_simplex(p, awake)
    loss = data.draw(loss_matrices(min_reps=n_reps, max_reps=n_reps, max_horizon=1, min_experts=n, max_experts=n))[:, 0]
    new = learner.update(state, p, (loss, awake))
    assert np.all(new.t == t + 1)
    for field, value in state_fields(new):
        assert np.all(np.isfinite(np.asarray(value, dtype=np.float64))), f"state field {field} is not finite"
    assert_on_simplex(learner.act(new, awake, learner_keys(np.arange(n_reps), t + 1))[0], awake)
