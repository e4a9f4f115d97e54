"""Reward-free exploration: regression statistics by hand, planning against backward induction, the environment."""

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.mdp import (EpisodicLinearMixture, Exploration, FiniteHorizonMDP, RewardFreeEpisode, RewardFreeMixture,
                           RewardFreeState, backward_induction, plan_for_rewards, reward_battery, reward_free_ttr,
                           safe_trap_mixture, safe_ucrl_vtr)
from expertlab.mdp.instances import hard_linear_mixture, random_linear_mixture

STAY_SWAP = np.stack([np.eye(2)[:, None, :].repeat(2, 1), np.eye(2)[::-1][:, None, :].repeat(2, 1)])  # (2, 2, 2, 2)
KEYS = np.zeros(1, dtype=np.uint64)


def _mixture(dim=3, horizon=4, seed=1):
    lm = random_linear_mixture(3, 2, dim=dim, branching=2, seed=seed)
    return EpisodicLinearMixture(np.asarray(lm.features), np.asarray(lm.theta), np.zeros((horizon, 3, 2)))


def _env(features, horizon):
    """A reward-free environment on ``features`` (the weight is irrelevant to what the explorer is told)."""
    theta = np.full(features.shape[0], 1.0 / features.shape[0])
    return RewardFreeMixture(EpisodicLinearMixture(features, theta, np.zeros((horizon, *features.shape[1:3]))))


def _estimate(ex, state):
    action, _ = ex.act(state, None, np.zeros(state.b.shape[0], dtype=np.uint64))
    assert isinstance(action, Exploration)
    return action.estimate


def test_one_transition_by_hand():
    ex = reward_free_ttr(ridge=1.0, delta=0.1)
    st0 = ex.init(_env(STAY_SWAP, 2).spec, 1, KEYS, np)
    # 0 -> 0 (kernel 1), then 0 -> 1 (kernel 2)
    st = ex.update(st0, None, RewardFreeEpisode(np.array([[0, 0, 1]]), np.array([[0, 0]])), KEYS)
    # each transition from state 0 adds phi_j phi_j^T over j = e_0 e_0^T + e_1 e_1^T = I; b adds phi(s' | 0, a),
    # which is e_0 for s' = 0 (only the stay kernel goes there) and e_1 for s' = 1
    np.testing.assert_allclose(st.gram[0], 3.0 * np.eye(2))
    np.testing.assert_allclose(st.b[0], [1.0, 1.0])
    est = _estimate(ex, st)
    np.testing.assert_allclose(est.theta_hat[0], [1 / 3, 1 / 3])
    np.testing.assert_allclose(est.theta[0], [1 / 2, 1 / 2])  # simplex projection shifts both by 1/6
    off = math.sqrt(3.0 * 2 * (1 / 6) ** 2)
    beta0 = math.sqrt(2 * math.log(10) + 2 * math.log(3.0)) + 1.0
    np.testing.assert_allclose(est.beta[0], beta0)
    np.testing.assert_allclose(est.radius[0], beta0 + off)
    assert st.n_samples == 2 and st.n_episodes == 1
    np.testing.assert_array_equal(st0.gram[0], np.eye(2))  # the update returns a new state


def test_update_matches_a_per_sample_loop():
    m = _mixture(dim=3)
    ex = reward_free_ttr(ridge=0.5)
    rng = np.random.default_rng(0)
    states, actions = rng.integers(0, 3, size=(5, 5)), rng.integers(0, 2, size=(5, 4))
    keys = np.zeros(5, dtype=np.uint64)
    st = ex.update(ex.init(RewardFreeMixture(m).spec, 5, keys, np), None, RewardFreeEpisode(states, actions), keys)
    phi = m.features
    for r in range(5):
        gram, b = 0.5 * np.eye(3), np.zeros(3)
        for h in range(4):
            s, a, t = states[r, h], actions[r, h], states[r, h + 1]
            for j in range(3):
                gram += np.outer(phi[:, s, a, j], phi[:, s, a, j])
            b += phi[:, s, a, t]
        np.testing.assert_allclose(st.gram[r], gram)
        np.testing.assert_allclose(st.b[r], b)


def test_planning_matches_backward_induction():
    m = _mixture(dim=3, horizon=5)
    rewards = reward_battery(3, 2, 5, n_random=3, seed=4)
    theta = np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]])
    pi, v = plan_for_rewards(m.features, theta, rewards)
    for r in range(2):
        p = np.tensordot(theta[r], m.features, axes=1)
        for b in range(rewards.shape[0]):
            ref = backward_induction(FiniteHorizonMDP(np.broadcast_to(p, (5, 3, 2, 3)), rewards[b]))
            np.testing.assert_allclose(v[r, b], ref.values, atol=1e-12)
            # the chosen action attains the optimal value (ties may break differently)
            q = rewards[b] + np.einsum("sat,ht->hsa", p, ref.values[1:])
            np.testing.assert_allclose(np.take_along_axis(q, pi[r, b][..., None], -1)[..., 0], ref.values[:-1],
                                       atol=1e-12)


def test_exploration_values_bound_model_error_of_random_policies():
    """W_1 >= |V^pi_theta - V^pi_theta_tilde| for every policy and reward with total <= 1 (on the event)."""
    m = _mixture(dim=3, horizon=4)
    res = sim.run(reward_free_ttr(), RewardFreeMixture(m), 41, 4, seed=3, checkpoints=[1, 11, 41])
    cert, sub, err = (res.metrics[k] for k in ("certificate", "suboptimality", "value_error"))
    assert np.all(res.metrics["confidence_ratio"] <= 1.0)
    assert np.all((cert >= sub) & (cert >= err))
    assert np.all(sub >= -1e-12) and np.all(err >= 0)


def test_certificate_falls_with_data():
    m = hard_linear_mixture(2, horizon=4, gap=0.1)
    env = RewardFreeMixture(m)
    ex = reward_free_ttr()
    res = sim.run(ex, env, 201, 8, seed=0, checkpoints=[11, 201])
    assert res.metrics["value_error"][1].mean() < res.metrics["value_error"][0].mean()
    st0 = ex.init(env.spec, 1, KEYS, np)
    g = np.einsum("isat,jsat->ij", m.features, m.features)  # every pair once
    certs = []
    for c in (1.0, 1e2, 1e4, 1e6):  # c visits of every pair with noiseless data: theta_hat = theta, widths ~ c^-1/2
        gram = np.eye(m.dim) + c * g
        est = _estimate(ex, st0._replace(gram=gram[None], b=(gram @ m.theta)[None]))
        np.testing.assert_allclose(est.theta_hat[0], m.theta, atol=1e-9)
        certs.append(2.0 * est.values[:, 0, 0])
    certs = np.array(certs)
    assert np.all(certs <= 2.0) and np.all(certs[-1] < 0.1)
    assert np.all(np.diff(certs[1:], axis=0) < 0)


def test_seeded_and_batch_independent():
    env = RewardFreeMixture(_mixture(dim=2))
    ex = reward_free_ttr()
    a = sim.run(ex, env, 30, 4, seed=7, checkpoints=[10, 30])
    b = sim.run(ex, env, 30, 4, seed=7, checkpoints=[10, 30])
    for k in ("value_error", "certificate"):
        np.testing.assert_array_equal(a.metrics[k], b.metrics[k])
    one = sim.run(ex, env, 30, 1, seed=7, checkpoints=[10, 30], rep_offset=2)
    for k in ("value_error", "certificate", "confidence_ratio"):
        np.testing.assert_allclose(one.metrics[k][:, 0], a.metrics[k][:, 2], rtol=1e-12)
    np.testing.assert_allclose(one.final["theta"][0], a.final["theta"][2], rtol=1e-12)
    c = sim.run(ex, env, 30, 4, seed=8, checkpoints=[10, 30])
    assert not np.array_equal(a.metrics["value_error"], c.metrics["value_error"])


def test_final_theta_is_the_model_after_the_last_episode():
    """final["theta"] of a K-episode run is the weight the metrics evaluate at step K + 1 (fitted on K episodes)."""
    m = _mixture(dim=3)
    env = RewardFreeMixture(m)
    k = 25
    short = sim.run(reward_free_ttr(), env, k, 3, seed=4)
    assert set(short.final) == {"theta"}
    theta = short.final["theta"]
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    longer = sim.run(reward_free_ttr(), env, k + 1, 3, seed=4, checkpoints=[k + 1])
    pi, v_hat = plan_for_rewards(m.features, theta, env.rewards)
    p = m.to_finite_horizon().transitions
    v_true = np.zeros((3, env.rewards.shape[0], m.horizon + 1, 3))
    for h in range(m.horizon - 1, -1, -1):
        a = pi[:, :, h]
        q = env.rewards[None, :, h] + np.einsum("sat,rbt->rbsa", p[h], v_true[:, :, h + 1])
        v_true[:, :, h] = np.take_along_axis(q, a[..., None], axis=-1)[..., 0]
    err = np.abs(v_hat[:, :, 0, 0] - v_true[:, :, 0, 0]).max(axis=1)
    np.testing.assert_allclose(longer.metrics["value_error"][-1], err, atol=1e-12)


def test_battery_totals_at_most_one():
    r = reward_battery(4, 3, 6, n_random=5, seed=1)
    assert r.shape == (9, 6, 4, 3)
    assert np.all(r.max(axis=(2, 3)).sum(axis=1) <= 1.0 + 1e-12)
    np.testing.assert_array_equal(r[2, 5, 2], 1.0)
    assert r[:4, :5].sum() == 0.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(delta=0.0), "delta"), (dict(delta=1.5), "delta"), (dict(ridge=0.0), "ridge"),
    (dict(beta_scale=-1.0), "beta_scale"),
])
def test_explorer_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        reward_free_ttr(**kwargs)


def test_explorer_runs_only_without_rewards():
    m = _mixture(dim=2)
    with pytest.raises(ValueError, match="feedback"):  # a safe environment shows rewards
        sim.run(reward_free_ttr(), safe_trap_mixture(4), 5, 2)
    with pytest.raises(ValueError, match="feedback"):  # nor a learner that needs rewards on a reward-free one
        sim.run(safe_ucrl_vtr(), RewardFreeMixture(m), 5, 2)


def test_planning_validation():
    r = np.zeros((3, 2, 2))
    with pytest.raises(ValueError, match="theta"):
        plan_for_rewards(STAY_SWAP, np.array([[0.7, 0.7]]), r)
    with pytest.raises(ValueError, match="theta"):
        plan_for_rewards(STAY_SWAP, np.array([0.5, 0.5]), r)
    with pytest.raises(ValueError, match="total at most 1"):
        plan_for_rewards(STAY_SWAP, np.array([[0.5, 0.5]]), np.full((3, 2, 2), 0.5))
    with pytest.raises(ValueError, match="finite"):
        plan_for_rewards(STAY_SWAP, np.array([[0.5, 0.5]]), np.full((3, 2, 2), np.nan))
    with pytest.raises(ValueError, match="shape"):
        plan_for_rewards(STAY_SWAP, np.array([[0.5, 0.5]]), np.zeros((3, 2, 3)))


def test_environment_validation():
    m = _mixture(dim=2)
    with pytest.raises(TypeError, match="mixture"):
        RewardFreeMixture(m.to_finite_horizon())
    with pytest.raises(ValueError, match="total at most 1"):
        RewardFreeMixture(m, rewards=np.ones((1, 4, 3, 2)))
    with pytest.raises(ValueError, match="shape"):
        RewardFreeMixture(m, rewards=np.zeros((1, 3, 3, 2)))
    with pytest.raises(ValueError, match="initial_state"):
        RewardFreeMixture(m, initial_state=3)
    env = RewardFreeMixture(m)
    with pytest.raises(ValueError, match="checkpoints"):
        sim.run(reward_free_ttr(), env, 5, 2, checkpoints=[6])
    with pytest.raises(TypeError, match="Exploration"):
        env.step(None, np.zeros((2, 4, 3), dtype=np.int64), 0, np.zeros(2, dtype=np.uint64))
    assert "rewards" not in env.spec.info and env.spec.feedback == "reward_free"


def test_state_is_a_namedtuple_with_replication_axis():
    ex = reward_free_ttr()
    keys = np.zeros(3, dtype=np.uint64)
    st = ex.init(_env(STAY_SWAP, 2).spec, 3, keys, np)
    assert isinstance(st, RewardFreeState) and st.gram.shape == (3, 2, 2) and st.b.shape == (3, 2)
    action, _ = ex.act(st, None, keys)
    assert action.policy.shape == (3, 2, 2) and action.estimate.values.shape == (3, 3, 2)
    assert ex.final(st)["theta"].shape == (3, 2) and ex.done is None
