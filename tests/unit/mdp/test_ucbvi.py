"""UCBVI: a hand-worked plan, the bonuses, batching, regret against uniform play, a loop transcription."""

import dataclasses
import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.random import rep_key, round_key
from expertlab.mdp import (FiniteHorizonMDP, Trajectory, backward_induction, optimistic_q_values, sample_episodes,
                           ucbvi, ucbvi_bonus)
from expertlab.mdp.instances import garnet


def small(seed=3, s=3, a=2, h=3):
    g = garnet(s, a, min(3, s), seed=seed)
    return FiniteHorizonMDP.stationary(g.transitions, g.rewards, h)


def spec_of(m, n_episodes=100):
    """The spec sim.run gives a learner on ``m`` for ``n_episodes`` episodes."""
    return dataclasses.replace(m.spec, horizon=n_episodes)


def spec_from(rewards, n_episodes):
    """A tabular episodic spec from the known rewards ``(H, S, A)`` alone (the learner never sees P)."""
    h_, s_, a_ = rewards.shape
    return sim.EnvSpec("tabular_episode", "episode", a_, horizon=n_episodes,
                       info={"n_states": s_, "episode_length": h_, "rewards": rewards, "initial_state": 0})


def plan(learner, state):
    return learner.act(state, None, None)[0]


def test_hand_worked_plan_rlberry():
    # one state, two actions, H = 2; every pair seen 4 times; c = 0.2
    # stage 1 (v = 1): b = min(0.2/2 + 1/4, 1) = 0.35; Q = min(1, [0.5, 0.1] + 0.35) = [0.85, 0.45]
    # stage 0 (v = 2): b = 0.1 + 2/4 = 0.6; Q = [0.1, 0.5] + 0.85 + 0.6 = [1.55, 1.95]
    rewards = np.array([[[0.1, 0.5]], [[0.5, 0.1]]])
    spec = spec_from(rewards, 10)
    learner = ucbvi("rlberry", bonus_scale=0.2)
    st = learner.init(spec, 1)
    st = st._replace(counts=np.full((1, 2, 1, 2, 1), 4.0), visits=np.full((1, 2, 1), 8.0))
    q = optimistic_q_values(st, "rlberry", bonus_scale=0.2)
    np.testing.assert_allclose(q[0, :, 0], [[1.55, 1.95], [0.85, 0.45]])
    np.testing.assert_array_equal(plan(learner, st)[0], [[1], [0]])


def test_hand_worked_plan_hoeffding_two_states():
    # S = 2, A = 1, H = 1... H = 2 with known counts: from (0, 0) seen 2 -> 0 and 2 -> 1; stage 1 all clipped
    rewards = np.zeros((2, 2, 1))
    rewards[:, 1] = 1.0
    spec = spec_from(rewards, 10)
    st = ucbvi("hoeffding", bonus_scale=1e-3).init(spec, 1)
    counts = np.zeros((1, 2, 2, 1, 2))
    counts[0, 0, 0, 0] = [2.0, 2.0]
    counts[0, 1, :, 0, 1] = 100.0  # stage 1: both states go to 1, seen 100 times
    st = st._replace(counts=counts)
    L = math.log(5 * 2 * 1 * 10 * 2 / 0.1)
    b = lambda n: 1e-3 * 7 * 2 * L / math.sqrt(n)  # noqa: E731
    q = optimistic_q_values(st, "hoeffding", bonus_scale=1e-3)
    q1 = np.minimum([0.0 + b(100), 1.0 + b(100)], 1.0)
    np.testing.assert_allclose(q[0, 1, :, 0], q1)
    np.testing.assert_allclose(q[0, 0, 0, 0], min(2.0, 0.5 * q1[0] + 0.5 * q1[1] + b(4)))
    np.testing.assert_allclose(q[0, 0, 1, 0], 2.0)  # unvisited: H - h


@pytest.mark.parametrize("kind", ["hoeffding", "bernstein", "rlberry"])
def test_bonus_decreases_with_counts(kind):
    n = np.arange(1, 2000, dtype=float)
    s = 4
    p_hat = np.full((n.size, s), 1.0 / s)
    v = np.array([0.0, 1.0, 2.0, 0.5])
    kw = dict(p_hat=p_hat, v_next=v, visits_next=np.full(s, 50.0), n_states=s, n_actions=2)
    b = ucbvi_bonus(kind, n, 0, 3, log_term=5.0, **kw)
    assert np.all(np.diff(b) < 0) and np.all(b > 0)
    if kind == "hoeffding":
        np.testing.assert_allclose(b * np.sqrt(n), 7 * 3 * 5.0)
    if kind == "rlberry":
        assert np.all(b <= 3.0)
        np.testing.assert_allclose(b[n >= 9], 1 / np.sqrt(n[n >= 9]) + 3 / n[n >= 9])


def test_bernstein_bonus_grows_with_variance_and_vanishes_at_last_stage_term():
    n = np.array([10.0])
    p = np.array([[0.5, 0.5]])
    kw = dict(log_term=2.0, p_hat=p, visits_next=np.array([5.0, 5.0]), n_states=2, n_actions=1)
    lo = ucbvi_bonus("bernstein", n, 0, 2, v_next=np.array([1.0, 1.0]), **kw)
    hi = ucbvi_bonus("bernstein", n, 0, 2, v_next=np.array([0.0, 2.0]), **kw)
    assert hi > lo
    # last stage: only the first two terms, and V_{h+1} = 0 leaves 14 H L / (3 n)
    last = ucbvi_bonus("bernstein", n, 1, 2, v_next=np.zeros(2), **kw)
    np.testing.assert_allclose(last, 14 * 2 * 2.0 / 30)


def test_batch_independence():
    m = small()
    for learner in (ucbvi("bernstein"), ucbvi("hoeffding", bonus_scale=0.01, stationary=True)):
        full = sim.run(learner, m, horizon=30, n_reps=4, seed=5)
        one = sim.run(learner, m, horizon=30, n_reps=1, seed=5, rep_offset=2)
        np.testing.assert_array_equal(one.metrics["regret"][:, 0], full.metrics["regret"][:, 2])


def test_regret_nonnegative_and_beats_uniform_play():
    m = small(seed=4, s=4)
    p, r = np.asarray(m.transitions), np.asarray(m.rewards)
    v = np.zeros(m.n_states)
    for h in range(m.horizon - 1, -1, -1):  # uniform random play, exactly
        v = (r[h] + p[h] @ v).mean(axis=-1)
    v_star = float(np.asarray(backward_induction(m).values)[0, 0])
    k = 2000
    uniform_regret = k * (v_star - v[0])
    assert uniform_regret > 100
    for learner in (ucbvi("bernstein"), ucbvi("rlberry"), ucbvi("hoeffding", bonus_scale=0.01)):
        res = sim.run(learner, m, horizon=k, n_reps=4, seed=0)
        regret = res.metrics["regret"]
        assert np.all(regret >= 0) and np.all(np.diff(regret, axis=0) >= 0)
        assert regret[-1].max() < uniform_regret, learner.params


def test_stationary_counts_pool_stages():
    m = small()
    learner = ucbvi("hoeffding", stationary=True)
    st = learner.init(spec_of(m), 3)
    keys = rep_key(np.full(3, np.uint64(1)), np.arange(3, dtype=np.uint64))
    pi = plan(learner, st)
    st = learner.update(st, pi, sample_episodes(m, pi, keys, 0), None)
    assert st.counts.shape == (3, 1, 3, 2, 3)
    np.testing.assert_array_equal(st.counts.sum(axis=(1, 2, 3, 4)), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(st.visits.sum(axis=(1, 2)), [3.0, 3.0, 3.0])


def reference_plan(counts, visits, rewards, bonus, scale, log_term):
    """Single replication, plain loops over stages, states, actions and next states."""
    hh, ss, aa = rewards.shape
    v_next = [0.0] * ss
    policy = [[0] * ss for _ in range(hh)]
    for h in reversed(range(hh)):
        v_h = [0.0] * ss
        for s in range(ss):
            best, best_a = -1.0, 0
            for a in range(aa):
                n = sum(counts[h][s][a])
                vmax = hh - h
                if n == 0:
                    q = float(vmax)
                else:
                    ph = [c / n for c in counts[h][s][a]]
                    pv = sum(ph[t] * v_next[t] for t in range(ss))
                    if bonus == "hoeffding":
                        b = scale * 7 * hh * log_term / math.sqrt(n)
                    elif bonus == "rlberry":
                        b = min(scale / math.sqrt(n) + vmax / n, vmax)
                    else:
                        var = sum(ph[t] * v_next[t] ** 2 for t in range(ss)) - pv ** 2
                        b = math.sqrt(8 * log_term * max(var, 0.0) / n) + 14 * hh * log_term / (3 * n)
                        if h < hh - 1:
                            tot = 0.0
                            for t in range(ss):
                                nv = visits[h + 1][t]
                                big = 1e4 * hh ** 3 * ss ** 2 * aa * log_term ** 2
                                tot += ph[t] * (hh ** 2 if nv == 0 else min(big / nv, hh ** 2))
                            b += math.sqrt(8 * tot / n)
                        b *= scale
                    q = min(float(vmax), rewards[h][s][a] + pv + b)
                if q > best:
                    best, best_a = q, a
            v_h[s] = best
            policy[h][s] = best_a
        v_next = v_h
    return policy


@pytest.mark.parametrize("bonus,scale", [("hoeffding", 0.01), ("bernstein", 1.0), ("bernstein", 0.01),
                                         ("rlberry", 0.5)])
def test_against_loop_transcription(bonus, scale):
    m = small(seed=6, s=3, a=2, h=3)
    spec = spec_of(m, n_episodes=60)
    learner = ucbvi(bonus, bonus_scale=scale)
    st = learner.init(spec, 1)
    log_term = math.log(5 * 3 * 2 * 60 * 3 / 0.1)
    counts = np.zeros((3, 3, 2, 3), dtype=int).tolist()
    visits = np.zeros((3, 3), dtype=int).tolist()
    rkey = rep_key(np.full(1, np.uint64(9)), np.zeros(1, dtype=np.uint64))
    for k in range(60):
        pol = plan(learner, st)
        assert pol[0].tolist() == reference_plan(counts, visits, spec.rewards, bonus, scale, log_term), k
        s, a, r = traj = sample_episodes(m, pol, round_key(rkey, np.full(1, k, dtype=np.uint64)), 0)
        st = learner.update(st, pol, traj, None)
        for h in range(3):
            counts[h][s[0, h]][a[0, h]][s[0, h + 1]] += 1
            visits[h][s[0, h]] += 1


def test_validation():
    with pytest.raises(ValueError, match="bonus"):
        ucbvi("ucb")
    with pytest.raises(ValueError, match="delta"):
        ucbvi(delta=1.0)
    with pytest.raises(ValueError, match="bonus_scale"):
        ucbvi(bonus_scale=0.0)
    with pytest.raises(ValueError, match="bonus_scale"):
        ucbvi(bonus_scale=float("nan"))
    with pytest.raises(TypeError, match="stationary"):
        ucbvi(stationary=1)
    with pytest.raises(ValueError, match=r"rewards in \[0, 1\]"):
        ucbvi().init(spec_from(np.array([[[2.0]]]), 5), 1)
    st = ucbvi().init(spec_from(np.zeros((2, 1, 1)), 5), 1)
    with pytest.raises(ValueError, match="stationary"):
        optimistic_q_values(st, stationary=True)


def test_rlberry_backup_arguments_are_checked():
    with pytest.raises(ValueError, match="backup"):
        ucbvi("rlberry", backup="exact")
    with pytest.raises(ValueError, match="bonus='rlberry'"):
        ucbvi("hoeffding", backup="rlberry")
    with pytest.raises(ValueError, match="stationary=False"):
        ucbvi("rlberry", backup="rlberry", stationary=True)
    st = ucbvi().init(spec_from(np.zeros((2, 1, 1)), 5), 1)  # sums no rewards
    with pytest.raises(ValueError, match="sums the rewards"):
        optimistic_q_values(st, "rlberry", backup="rlberry")


def test_rlberry_backup_by_hand():
    # one state, two actions, H = 2, c = 0.5.  Before any data every pair has the uniform kernel, reward 0
    # and bonus H - h: Q_1 = 1, V_1 = 1; Q_0 = 2 + 1 = 3 (not clipped), V_0 = min(3, H) = 2.
    L = ucbvi("rlberry", bonus_scale=0.5, backup="rlberry")
    st = L.init(spec_from(np.full((2, 1, 2), 0.5), 10), 1)
    np.testing.assert_allclose(optimistic_q_values(st, "rlberry", bonus_scale=0.5, backup="rlberry")[0],
                               [[[3.0, 3.0]], [[1.0, 1.0]]])
    # play action 1 at both stages, observing reward 0.25 then 0.75: n = 1 there, bonus min(0.5 + v, v) = v,
    # Q_1(a=1) = 0.75 + 1 = 1.75; Q_0(a=1) = 0.25 + 2 + V_1 with V_1 = min(max(1, 1.75), 2) = 1.75 -> 4.0
    traj = Trajectory(np.zeros((1, 3), dtype=np.int64), np.ones((1, 2), dtype=np.int64), np.array([[0.25, 0.75]]))
    st = L.update(st, np.ones((1, 2, 1), dtype=np.int64), traj, None)
    q = optimistic_q_values(st, "rlberry", bonus_scale=0.5, backup="rlberry")[0]
    np.testing.assert_allclose(q, [[[2.0 + 1.75, 4.0]], [[1.0, 1.75]]])


def test_learner_record_and_registration():
    L = ucbvi("bernstein", stationary=True)
    assert isinstance(L, sim.Learner) and L.name == "ucbvi" and L.feedback == "tabular_episode"
    assert L.params == {"bonus": "bernstein", "delta": 0.1, "bonus_scale": 1.0, "stationary": True,
                        "backup": "clipped"}
    reg = sim.get_learner("ucbvi")
    assert reg.family == "mdp" and reg.feedback == "tabular_episode"
    learner, env, horizon = reg.example()
    res = sim.run(learner, env, horizon=horizon, n_reps=2, seed=0)
    assert res.metrics["regret"].shape == (res.checkpoints.size, 2)


def test_update_is_pure():
    m = small()
    learner = ucbvi("rlberry", backup="rlberry")
    st = learner.init(spec_of(m, 10), 2)
    keys = rep_key(np.full(2, np.uint64(1)), np.arange(2, dtype=np.uint64))
    pi, st2 = learner.act(st, None, keys)
    assert st2 is st
    before = [np.array(a, copy=True) for a in (st.counts, st.visits, st.reward_sums)]
    new = learner.update(st, pi, sample_episodes(m, pi, keys, 0), keys)
    for a, b in zip(before, (st.counts, st.visits, st.reward_sums)):
        np.testing.assert_array_equal(a, b)
    assert new.counts.sum() == 2 * m.horizon
