"""Reward-free exploration: regression statistics by hand, planning against backward induction, the runner."""

import math

import numpy as np
import pytest

from expertlab.mdp import (EpisodicLinearMixture, FiniteHorizonMDP, RewardFreeState, backward_induction,
                           plan_for_rewards, reward_battery, reward_free_ttr, run_reward_free)
from expertlab.mdp.instances import hard_linear_mixture, random_linear_mixture

STAY_SWAP = np.stack([np.eye(2)[:, None, :].repeat(2, 1), np.eye(2)[::-1][:, None, :].repeat(2, 1)])  # (2, 2, 2, 2)


def _mixture(dim=3, horizon=4, seed=1):
    lm = random_linear_mixture(3, 2, dim=dim, branching=2, seed=seed)
    return EpisodicLinearMixture(np.asarray(lm.features), np.asarray(lm.theta), np.zeros((horizon, 3, 2)))


def test_one_transition_by_hand():
    ex = reward_free_ttr(STAY_SWAP, 2, ridge=1.0, delta=0.1)
    st = ex.update(ex.init(1), np.array([[0, 0, 1]]), np.array([[0, 0]]))  # 0 -> 0 (kernel 1), then 0 -> 1 (kernel 2)
    # each transition from state 0 adds phi_j phi_j^T over j = e_0 e_0^T + e_1 e_1^T = I; b adds phi(s' | 0, a),
    # which is e_0 for s' = 0 (only the stay kernel goes there) and e_1 for s' = 1
    np.testing.assert_allclose(st.gram[0], 3.0 * np.eye(2))
    np.testing.assert_allclose(st.b[0], [1.0, 1.0])
    est = ex.estimate(st)
    np.testing.assert_allclose(est.theta_hat[0], [1 / 3, 1 / 3])
    np.testing.assert_allclose(est.theta[0], [1 / 2, 1 / 2])  # simplex projection shifts both by 1/6
    off = math.sqrt(3.0 * 2 * (1 / 6) ** 2)
    beta0 = math.sqrt(2 * math.log(10) + 2 * math.log(3.0)) + 1.0
    np.testing.assert_allclose(est.beta[0], beta0)
    np.testing.assert_allclose(est.radius[0], beta0 + off)
    assert st.n_samples == 2


def test_update_matches_a_per_sample_loop():
    m = _mixture(dim=3)
    ex = reward_free_ttr(m.features, 4, ridge=0.5)
    rng = np.random.default_rng(0)
    states, actions = rng.integers(0, 3, size=(5, 5)), rng.integers(0, 2, size=(5, 4))
    st = ex.update(ex.init(5), states, actions)
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
    ex = reward_free_ttr(m.features, 4)
    res = run_reward_free(ex, m, 40, 4, seed=3, checkpoints=[40])
    assert np.all(res.confidence_ratio <= 1.0)
    assert res.covered.all()
    assert np.all(res.suboptimality >= -1e-12) and np.all(res.value_error >= 0)


def test_certificate_falls_with_data():
    m = hard_linear_mixture(2, horizon=4, gap=0.1)
    ex = reward_free_ttr(m.features, 4)
    res = run_reward_free(ex, m, 200, 8, seed=0, checkpoints=[10, 200])
    assert res.value_error[1].mean() < res.value_error[0].mean()
    g = np.einsum("isat,jsat->ij", m.features, m.features)  # every pair once
    certs = []
    for c in (1.0, 1e2, 1e4, 1e6):  # c visits of every pair with noiseless data: theta_hat = theta, widths ~ c^-1/2
        gram = np.eye(m.dim) + c * g
        st = RewardFreeState(gram[None], (gram @ m.theta)[None], 0)
        np.testing.assert_allclose(ex.estimate(st).theta_hat[0], m.theta, atol=1e-9)
        certs.append(ex.certificate(st, 0))
    certs = np.array(certs)
    assert np.all(certs <= 2.0) and np.all(certs[-1] < 0.1)
    assert np.all(np.diff(certs[1:], axis=0) < 0)


def test_seeded_and_batch_independent():
    m = _mixture(dim=2)
    ex = reward_free_ttr(m.features, 4)
    a = run_reward_free(ex, m, 30, 4, seed=7, checkpoints=[10, 30])
    b = run_reward_free(ex, m, 30, 4, seed=7, checkpoints=[10, 30])
    np.testing.assert_array_equal(a.value_error, b.value_error)
    np.testing.assert_array_equal(a.certificate, b.certificate)
    one = run_reward_free(ex, m, 30, 1, seed=7, checkpoints=[10, 30], rep_offset=2)
    np.testing.assert_allclose(one.value_error[:, 0], a.value_error[:, 2], rtol=1e-12)
    np.testing.assert_allclose(one.certificate[:, 0], a.certificate[:, 2], rtol=1e-12)
    c = run_reward_free(ex, m, 30, 4, seed=8, checkpoints=[10, 30])
    assert not np.array_equal(a.value_error, c.value_error)


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
        reward_free_ttr(STAY_SWAP, 3, **kwargs)


def test_explorer_rejects_bad_features_and_horizon():
    with pytest.raises(ValueError, match="features"):
        reward_free_ttr(np.ones((2, 2, 2)), 3)
    bad = STAY_SWAP.copy()
    bad[0, 0, 0] = [0.7, 0.7]
    with pytest.raises(ValueError):
        reward_free_ttr(bad, 3)
    with pytest.raises(ValueError, match="horizon"):
        reward_free_ttr(STAY_SWAP, 0)


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


def test_runner_validation():
    m = _mixture(dim=2)
    ex = reward_free_ttr(m.features, 4)
    with pytest.raises(TypeError, match="explorer"):
        run_reward_free(object(), m, 5, 2)
    with pytest.raises(TypeError, match="mixture"):
        run_reward_free(ex, m.to_finite_horizon(), 5, 2)
    with pytest.raises(ValueError, match="horizon"):
        run_reward_free(reward_free_ttr(m.features, 3), m, 5, 2)
    with pytest.raises(ValueError, match="features"):
        run_reward_free(reward_free_ttr(_mixture(dim=3).features, 4), m, 5, 2)
    with pytest.raises(ValueError, match="checkpoints"):
        run_reward_free(ex, m, 5, 2, checkpoints=[3, 2])
    with pytest.raises(ValueError, match="total at most 1"):
        run_reward_free(ex, m, 5, 2, rewards=np.ones((1, 4, 3, 2)))
    with pytest.raises(ValueError, match="initial_state"):
        run_reward_free(ex, m, 5, 2, initial_state=3)


def test_state_is_a_namedtuple_with_replication_axis():
    ex = reward_free_ttr(STAY_SWAP, 2)
    st = ex.init(3)
    assert isinstance(st, RewardFreeState) and st.gram.shape == (3, 2, 2) and st.b.shape == (3, 2)
    assert ex.plan(st).shape == (3, 2, 2) and ex.exploration_values(st).shape == (3, 3, 2)
