"""Weight-ball robust planning and the offline DR learners (Liu & Xu 2025)."""

import numpy as np
import pytest

from expertlab import mdp
from expertlab.mdp import instances

DIVS = ("tv", "kl", "chi2")
# stay / swap on two states, one action: P_theta(s | s) = theta_0
PHI = np.stack([np.eye(2)[:, None, :], np.eye(2)[::-1][:, None, :]])
R2 = np.array([[0.0], [1.0]])


def _lm(seed=0, n_mdps=None):
    return instances.random_linear_mixture(5, 2, dim=3, branching=3, n_mdps=n_mdps, gamma=0.5, seed=seed)


# -- the operator on a case worked by hand --------------------------------------------------


def test_backup_by_hand_tv():
    # V = (0, 1): from state 0, z = (V0, V1) = (0, 1), the adversary moves 0.2 of weight to "stay";
    # from state 1, z = (1, 0), it moves 0.2 to "swap"
    val, wt = mdp.mixture_robust_backup(PHI, np.array([0.5, 0.5]), np.array([0.0, 1.0]), 0.2, "tv")
    np.testing.assert_allclose(val[:, 0], [0.3, 0.3], atol=1e-12)
    np.testing.assert_allclose(wt[0, 0], [0.7, 0.3], atol=1e-12)
    np.testing.assert_allclose(wt[1, 0], [0.3, 0.7], atol=1e-12)


def test_discounted_by_hand():
    # TV radius 0.25 around (1/2, 1/2), gamma = 1/2: V1 = 1 + (0.75 V0 + 0.25 V1) / 2, V0 = (0.75 V0 + 0.25 V1) / 2
    res = mdp.mixture_robust_value_iteration(PHI, np.array([0.5, 0.5]), R2, 0.5, radius=0.25, epsilon=1e-13)
    a = np.array([[1 - 0.375, -0.125], [-0.375, 1 - 0.125]])
    np.testing.assert_allclose(res.values, np.linalg.solve(a, [0.0, 1.0]), atol=1e-11)
    assert bool(res.converged) and float(res.bellman_residual) < 1e-12
    assert float(res.ball_excess) <= 1e-12


def test_finite_horizon_by_hand():
    r = np.broadcast_to(R2, (3, 2, 1))
    res = mdp.mixture_robust_backward_induction(PHI, np.array([0.5, 0.5]), r, radius=0.25)
    # stage 2: (0, 1); stage 1: (0.25, 1.25); stage 0: 0.75*0.25 + 0.25*1.25 = 0.5 and 1 + 0.75*0.25 + 0.25*1.25
    np.testing.assert_allclose(res.values[:, :], [[0.5, 1.5], [0.25, 1.25], [0.0, 1.0], [0.0, 0.0]], atol=1e-12)
    assert res.q_values.shape == (3, 2, 1) and res.worst_theta.shape == (3, 2, 1, 2)


# -- radius 0, point-mass features, policies ---------------------------------------------------


@pytest.mark.parametrize("div", DIVS)
def test_radius_zero_is_nominal(div):
    m = _lm()
    res = mdp.mixture_robust_value_iteration(m, radius=0.0, divergence=div, epsilon=1e-11)
    np.testing.assert_allclose(res.values, mdp.policy_iteration(m.to_tabular()).values, atol=1e-9)
    r = np.broadcast_to(m.rewards, (4, *m.rewards.shape))
    fh = mdp.mixture_robust_backward_induction(m.features, m.theta, r, radius=0.0, divergence=div)
    ref = mdp.backward_induction(mdp.FiniteHorizonMDP.stationary(m.transitions, m.rewards, 4))
    np.testing.assert_allclose(fh.values, ref.values, atol=1e-12)


@pytest.mark.parametrize("div", DIVS)
def test_point_mass_features_equal_rectangular(div):
    # phi_i(s'|s,a) = 1{s' = i}: P_theta(.|s,a) = theta, so the weight ball is the kernel ball
    s, a = 3, 2
    phi = np.broadcast_to(np.eye(s)[:, None, None, :], (s, s, a, s)).copy()
    theta = np.array([0.2, 0.3, 0.5])
    r = np.array([[0.0, 0.3], [1.0, 0.2], [0.5, 0.9]])
    mix = mdp.mixture_robust_value_iteration(phi, theta, r, 0.7, radius=0.1, divergence=div, epsilon=1e-11)
    p = np.broadcast_to(theta, (s, a, s))
    rect = mdp.robust_value_iteration(p, r, 0.7, radius=0.1, divergence=div, epsilon=1e-11)
    np.testing.assert_allclose(mix.values, rect.values, atol=1e-8)


@pytest.mark.parametrize("div", DIVS)
def test_less_conservative_and_monotone(div):
    m = _lm(seed=2)
    rho = np.array([0.0, 0.05, 0.3])
    th = np.broadcast_to(m.theta, (3, 3))
    mix = mdp.mixture_robust_value_iteration(m.features, th, m.rewards, m.gamma, radius=rho[:, None, None],
                                             divergence=div, epsilon=1e-11).values
    p = np.broadcast_to(m.transitions, (3, *m.transitions.shape))
    rect = mdp.robust_value_iteration(p, np.broadcast_to(m.rewards, p.shape[:-1]), m.gamma,
                                      radius=rho[:, None, None], divergence=div, epsilon=1e-11).values
    assert np.all(mix >= rect - 1e-8)
    assert np.all(mix[1:] > rect[1:] + 1e-4)  # strictly less conservative on this instance
    assert np.all(np.diff(mix, axis=0) <= 1e-8)


def test_policy_evaluation():
    m = _lm(seed=3)
    opt = mdp.mixture_robust_value_iteration(m, radius=0.2, divergence="kl", epsilon=1e-10)
    ev = mdp.mixture_robust_value_iteration(m, radius=0.2, divergence="kl", policy=opt.policy, epsilon=1e-10)
    np.testing.assert_allclose(ev.values, opt.values, atol=1e-8)
    other = mdp.mixture_robust_value_iteration(m, radius=0.2, divergence="kl", policy=np.zeros(5, dtype=np.int64),
                                               epsilon=1e-10)
    assert np.all(other.values <= opt.values + 1e-8)
    r = np.broadcast_to(m.rewards, (3, *m.rewards.shape))
    pols = np.stack([np.zeros((3, 5), dtype=np.int64), np.ones((3, 5), dtype=np.int64)])
    sub = mdp.robust_suboptimality(m.features, m.theta, r, pols, radius=0.2, divergence="kl")
    assert sub.shape == (2,) and np.all(sub >= -1e-12)
    best = mdp.mixture_robust_backward_induction(m.features, m.theta, r, radius=0.2, divergence="kl")
    assert float(mdp.robust_suboptimality(m.features, m.theta, r, best.policy, radius=0.2, divergence="kl")) \
        == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("div", DIVS)
def test_batch_independence_planning(div):
    m = _lm(seed=4, n_mdps=3)
    rho = np.array([0.0, 0.1, 0.5])[:, None, None]
    batch = mdp.mixture_robust_value_iteration(m, radius=rho, divergence=div, epsilon=1e-10)
    for i in range(3):
        one = mdp.mixture_robust_value_iteration(m.features, m.theta[i], m.rewards, m.gamma, radius=rho[i, 0, 0],
                                                 divergence=div, epsilon=1e-10)
        np.testing.assert_allclose(one.values, batch.values[i], atol=1e-13)
        assert int(one.n_iter) == int(batch.n_iter[i])
    assert batch.worst_theta.shape == (3, 5, 2, 3) and np.all(batch.ball_excess <= 1e-6)


# -- offline data and learners ------------------------------------------------------------------


def test_dataset_prefix_seed_and_counts():
    m = _lm()
    big = mdp.sample_offline_dataset(m.features, m.theta, 50, 3, seed=7)
    small = mdp.sample_offline_dataset(m.features, m.theta, 20, 2, seed=7)
    np.testing.assert_array_equal(big.head(20).next_states[:2], small.next_states)
    long = mdp.sample_offline_dataset(m.features, m.theta, 9000, 1, seed=7)  # across sampling blocks
    np.testing.assert_array_equal(long.head(50).states, big.states[:1])
    np.testing.assert_array_equal(mdp.sample_offline_dataset(m.features, m.theta, 5000, 1, seed=7).next_states,
                                  long.head(5000).next_states)
    again = mdp.sample_offline_dataset(m.features, m.theta, 50, 3, seed=7)
    np.testing.assert_array_equal(big.next_states, again.next_states)
    other = mdp.sample_offline_dataset(m.features, m.theta, 50, 3, seed=8)
    assert not np.array_equal(big.states, other.states)
    c = big.counts()
    assert c.shape == (3, 5, 2, 5) and np.all(c.sum(axis=(1, 2, 3)) == 50)
    assert c[1, big.states[1, 0], big.actions[1, 0], big.next_states[1, 0]] >= 1
    # transitions only go where the true kernel has mass
    assert np.all(m.transitions[big.states, big.actions, big.next_states] > 0)


def test_simplex_projection():
    np.testing.assert_allclose(mdp.simplex_projection(np.array([0.8, 0.6, -0.2])), [0.6, 0.4, 0.0])
    x = np.array([[0.2, 0.3, 0.5], [2.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    np.testing.assert_allclose(mdp.simplex_projection(x), [[0.2, 0.3, 0.5], [1, 0, 0], [1 / 3, 1 / 3, 1 / 3]])


def _hand_data():
    # state 0: three "stay", one "swap"; state 1: three "stay", one "swap" (so the empirical weight is (3/4, 1/4))
    s = np.array([[0, 0, 0, 0, 1, 1, 1, 1]])
    nxt = np.array([[0, 0, 0, 1, 1, 1, 1, 0]])
    return mdp.OfflineDataset(s, np.zeros_like(s), nxt, 2, 1)


def test_ttr_by_hand():
    # Lambda = (ridge + 8) I, b = 6 e_stay + 2 e_swap; with ridge = 1: (6, 2) / 9, projected to (13, 5) / 18
    res = mdp.dr_ttr(PHI, np.broadcast_to(R2, (2, 2, 1)), _hand_data(), radius=0.0, beta_scale=0.0, ridge=1.0)
    np.testing.assert_allclose(res.theta_hat[0, 0], [13 / 18, 5 / 18], atol=1e-12)


def test_vtr_by_hand():
    # stage 1: V = 0, theta_hat = projection of 0 = (1/2, 1/2); stage 0: V_1 = (0, 1), z(0) = (0, 1), z(1) = (1, 0),
    # Lambda = (ridge + 4) I, b = (3, 1) -> theta_hat ~ (3/4, 1/4); Q_0 = (0 + 1/4, 1 + 3/4)
    res = mdp.dr_vtr(PHI, np.broadcast_to(R2, (2, 2, 1)), _hand_data(), radius=0.0, beta_scale=0.0, ridge=1e-10)
    np.testing.assert_allclose(res.theta_hat[0], [[0.75, 0.25], [0.5, 0.5]], atol=1e-9)
    np.testing.assert_allclose(res.values[0, 0], [0.25, 1.75], atol=1e-9)
    # the penalty lowers the values and keeps them in [0, H - h]
    pen = mdp.dr_vtr(PHI, np.broadcast_to(R2, (2, 2, 1)), _hand_data(), radius=0.0, ridge=1e-10)
    assert np.all(pen.values <= res.values + 1e-12) and np.all(pen.values >= 0)
    assert pen.beta[-1] == 0.0 and pen.beta[0] > 0


@pytest.mark.parametrize("learner", [mdp.dr_vtr, mdp.dr_ttr])
def test_learner_batch_independence_and_pessimism(learner):
    m = _lm(seed=5)
    r = np.broadcast_to(m.rewards, (3, *m.rewards.shape))
    data = mdp.sample_offline_dataset(m.features, m.theta, 400, 3, seed=1)
    batch = learner(m.features, r, data, radius=0.1, divergence="tv")
    for i in range(3):
        one = mdp.OfflineDataset(data.states[i:i + 1], data.actions[i:i + 1], data.next_states[i:i + 1], 5, 2)
        solo = learner(m.features, r, one, radius=0.1, divergence="tv")
        np.testing.assert_allclose(solo.values[0], batch.values[i], atol=1e-12)
        np.testing.assert_array_equal(solo.policy[0], batch.policy[i])
    own = mdp.mixture_robust_backward_induction(m.features, m.theta, r, radius=0.1, policy=batch.policy)
    assert np.all(batch.values[:, 0] <= own.values[:, 0] + 1e-9)  # pessimism on this seeded case


# -- validation ----------------------------------------------------------------------------------


def test_validation():
    th = np.array([0.5, 0.5])
    with pytest.raises(ValueError, match="theta"):
        mdp.mixture_robust_value_iteration(PHI, np.array([0.7, 0.7]), R2, 0.5, radius=0.1)
    with pytest.raises(ValueError, match="theta"):
        mdp.mixture_robust_value_iteration(PHI, np.array([np.nan, 1.0]), R2, 0.5, radius=0.1)
    with pytest.raises(ValueError, match="theta"):
        mdp.mixture_robust_value_iteration(PHI, np.array([1.0]), R2, 0.5, radius=0.1)
    with pytest.raises(ValueError, match="features"):
        mdp.mixture_robust_value_iteration(PHI[:, :, :, :1], th, R2, 0.5, radius=0.1)
    with pytest.raises(ValueError, match="radius"):
        mdp.mixture_robust_value_iteration(PHI, th, R2, 0.5, radius=-0.1)
    with pytest.raises(ValueError, match="radius"):
        mdp.mixture_robust_backward_induction(PHI, th, np.broadcast_to(R2, (2, 2, 1)), radius=np.inf)
    with pytest.raises(ValueError, match="divergence"):
        mdp.mixture_robust_value_iteration(PHI, th, R2, 0.5, radius=0.1, divergence="hellinger")
    with pytest.raises(ValueError, match="gamma"):
        mdp.mixture_robust_value_iteration(PHI, th, R2, 1.0, radius=0.1)
    with pytest.raises(ValueError, match="rewards"):
        mdp.mixture_robust_value_iteration(PHI, th, np.array([[np.inf], [0.0]]), 0.5, radius=0.1)
    with pytest.raises(ValueError, match="policy"):
        mdp.mixture_robust_value_iteration(PHI, th, R2, 0.5, radius=0.1, policy=np.array([0, 1]))
    with pytest.raises(TypeError, match="policy"):
        mdp.mixture_robust_value_iteration(PHI, th, R2, 0.5, radius=0.1, policy=np.array([0.0, 0.0]))
    with pytest.raises(TypeError):
        mdp.mixture_robust_value_iteration(PHI, th, R2, radius=0.1)
    r = np.broadcast_to(R2, (2, 2, 1))
    data = _hand_data()
    with pytest.raises(ValueError, match="rewards"):
        mdp.dr_vtr(PHI, 2.0 * r, data, radius=0.1)
    with pytest.raises(TypeError, match="data"):
        mdp.dr_ttr(PHI, r, (data.states, data.actions, data.next_states), radius=0.1)
    with pytest.raises(ValueError, match="delta"):
        mdp.dr_vtr(PHI, r, data, radius=0.1, delta=1.5)
    with pytest.raises(ValueError, match="n_samples"):
        data.head(9)
    with pytest.raises(ValueError, match="next_states"):
        mdp.OfflineDataset(data.states, data.actions, data.next_states + 5, 2, 1)
    with pytest.raises(ValueError, match="behaviour"):
        mdp.sample_offline_dataset(PHI, th, 5, 1, behaviour=np.ones((2, 1)))
    with pytest.raises(ValueError, match="initial"):
        mdp.robust_suboptimality(PHI, th, r, np.zeros((2, 2), dtype=np.int64), radius=0.1, initial=np.ones(3) / 3)
