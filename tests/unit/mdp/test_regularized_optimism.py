"""Single-stream learners: planners worked by hand, the driver against a plain loop, shapes, seeding, validation."""

import math

import numpy as np
import pytest

from expertlab._random import rep_key, round_key, seed_to_uint64, uniform
from expertlab.mdp import (LinearMixtureMDP, StreamLearner, StreamResult, confidence_radius, policy_iteration,
                           regularized_optimism, run_stream, uclk)
from expertlab.mdp.instances import random_linear_mixture


def small(gamma=0.6):
    return random_linear_mixture(4, 2, dim=2, gamma=gamma, seed=3)


def test_confidence_radius_by_hand():
    # gamma = 0.5: 1/(1-gamma) = 2, so beta = sqrt(d ln((1 + 4 T d / lam) / delta)) + sqrt(lam)
    assert confidence_radius(3, 0.5, 10, delta=0.2, lam=2.0) == pytest.approx(
        math.sqrt(3 * math.log((1 + 4 * 10 * 3 / 2.0) / 0.2)) + math.sqrt(2.0), rel=1e-12)


def exact_statistics(m):
    """inv, b with theta_hat = theta* exactly and no bonus."""
    d = m.dim
    return np.eye(d)[None], m.theta[None].copy()


def test_uclk_with_the_true_model_is_value_iteration():
    m = small()
    inv, b = exact_statistics(m)
    pi, v = uclk(m.features, m.rewards, m.gamma, n_iter=200).plan(inv, b, 0.0, np.array([0]))
    ref = policy_iteration(m.transitions, m.rewards, m.gamma)
    np.testing.assert_allclose(v[0], ref.values, atol=1e-8)
    np.testing.assert_array_equal(pi[0].argmax(axis=-1), ref.policy)
    np.testing.assert_array_equal(pi[0].sum(axis=-1), 1.0)


def test_regularized_one_iteration_by_hand():
    # V_0 = 0 so Q_1 = r: pi_1 = softmax(eta r), V_1 = log(mean exp(eta r)) / eta with eta = sqrt(t ln A) / K
    phi = np.stack([np.eye(2)[:, None, :].repeat(2, axis=1), np.eye(2)[::-1][:, None, :].repeat(2, axis=1)])
    r = np.array([[0.0, 1.0], [0.5, 0.5]])
    pi, v = regularized_optimism(phi, r, 0.9, n_iter=1, eta_scale=2.0).plan(
        np.eye(2)[None], np.array([[0.5, 0.5]]), 3.0, np.array([100]))
    eta = 2.0 * math.sqrt(100 * math.log(2))
    np.testing.assert_allclose(pi[0, 0], [1 / (1 + math.exp(eta)), math.exp(eta) / (1 + math.exp(eta))])
    np.testing.assert_allclose(pi[0, 1], [0.5, 0.5])
    assert v[0, 0] == pytest.approx(math.log((1 + math.exp(eta)) / 2) / eta)
    assert v[0, 1] == pytest.approx(0.5)


def test_regularized_two_iterations_by_hand():
    # one state, one action, kernel = identity: Q_2 = r + gamma clip(V_1 + beta ||x||, 0, 1/(1-gamma))
    phi = np.ones((1, 1, 1, 1))
    r = np.array([[0.5]])
    pi, v = regularized_optimism(phi, r, 0.5, n_iter=2).plan(np.array([[[0.25]]]), np.array([[4.0]]), 2.0,
                                                            np.array([1]))
    # theta_hat = 1; V_1 = 0.5; x = 0.5, ||x|| = 0.25; clip(0.5 + 0.5) = 1.0; V_2 = 0.5 + 0.5 * 1.0
    assert v[0, 0] == pytest.approx(1.0) and pi[0, 0, 0] == pytest.approx(1.0)


def test_regularized_tends_to_the_greedy_plan():
    m = small()
    inv, b = exact_statistics(m)
    pi, v = regularized_optimism(m.features, m.rewards, m.gamma, n_iter=200).plan(inv, b, 0.0, np.array([10 ** 8]))
    ref = policy_iteration(m.transitions, m.rewards, m.gamma)
    np.testing.assert_array_equal(pi[0].argmax(axis=-1), ref.policy)
    assert pi[0].max(axis=-1).min() > 0.999
    # the regularised value is below the optimal one, by at most ln A / (eta K) / (1 - gamma)
    assert np.all(v[0] <= ref.values + 1e-9)
    assert np.all(ref.values - v[0] <= math.log(2) / math.sqrt(10 ** 8 * math.log(2)) / (1 - m.gamma) + 1e-9)


def reference_stream(learner, m, horizon, seed, beta):
    """One replication (index 0) with plain loops, a full inverse and slogdet."""
    p, r, d = m.transitions, m.rewards, m.dim
    v_star = policy_iteration(p, r, m.gamma).policy_values
    key = rep_key(np.full(1, seed_to_uint64(seed)), np.zeros(1, dtype=np.uint64))
    gram, b = np.eye(d), np.zeros(d)
    pi, v = (a[0] for a in learner.plan(np.eye(d)[None], b[None], beta, np.array([0])))
    epoch_logdet, s, regret, n_epochs = 0.0, 0, 0.0, 1

    def value(pi):
        return np.linalg.solve(np.eye(len(v)) - m.gamma * np.einsum("sa,sat->st", pi, p), (pi * r).sum(-1))

    v_pi = value(pi)
    for t in range(horizon):
        logdet = np.linalg.slogdet(gram)[1]
        if logdet - epoch_logdet > math.log(2):
            pi, v = (a[0] for a in learner.plan(np.linalg.inv(gram)[None], b[None], beta, np.array([t])))
            v_pi, epoch_logdet, n_epochs = value(pi), logdet, n_epochs + 1
        regret += v_star[s] - v_pi[s]
        k = round_key(key, np.full(1, t, dtype=np.uint64))
        u_a, u_s = uniform(k, np.zeros(1, dtype=np.uint64))[0], uniform(k, np.ones(1, dtype=np.uint64))[0]
        a = min(int(np.searchsorted(np.cumsum(pi[s]), u_a, side="right")), len(pi[s]) - 1)
        s2 = min(int(np.searchsorted(np.cumsum(p[s, a]), u_s, side="right")), len(v) - 1)
        x = m.features[:, s, a, :] @ v
        gram += np.outer(x, x)
        b += x * v[s2]
        s = s2
    return regret, n_epochs


@pytest.mark.parametrize("factory", [regularized_optimism, uclk])
def test_driver_matches_plain_loop(factory):
    m = small()
    learner = factory(m.features, m.rewards, m.gamma, n_iter=20)
    res = run_stream(learner, m, 300, 1, seed=5, beta_scale=0.2)
    regret, n_epochs = reference_stream(learner, m, 300, 5, res.beta)
    assert res.regret[-1, 0] == pytest.approx(regret, rel=1e-7, abs=1e-9)
    assert res.n_epochs[0] == n_epochs and n_epochs > 1


def test_shapes_batch_independence_and_seeding():
    m = small()
    learner = regularized_optimism(m.features, m.rewards, m.gamma, n_iter=10)
    res = run_stream(learner, m, 200, 3, seed=1, checkpoints=[10, 50, 200], beta_scale=0.3)
    assert isinstance(res, StreamResult)
    assert res.regret.shape == (3, 3) and res.n_epochs.shape == (3,) and res.mean_regret.shape == (3,)
    np.testing.assert_array_equal(res.checkpoints, [10, 50, 200])
    assert np.all(np.diff(res.regret, axis=0) >= -1e-9) and np.all(res.regret >= -1e-9)
    alone = run_stream(learner, m, 200, 1, seed=1, checkpoints=[10, 50, 200], beta_scale=0.3)
    np.testing.assert_allclose(alone.regret[:, 0], res.regret[:, 0], rtol=1e-10, atol=1e-12)
    again = run_stream(learner, m, 200, 3, seed=1, checkpoints=[10, 50, 200], beta_scale=0.3)
    np.testing.assert_array_equal(again.regret, res.regret)
    other = run_stream(learner, m, 200, 3, seed=2, checkpoints=[10, 50, 200], beta_scale=0.3)
    assert not np.array_equal(other.regret, res.regret)
    assert not np.array_equal(res.regret[:, 0], res.regret[:, 1])


def test_number_of_epochs_obeys_the_determinant_bound():
    # ln det(Sigma_T / lambda) <= d ln(1 + T L^2 / (d lambda)), L^2 = d / (1 - gamma)^2, and each epoch adds ln 2
    m = small(gamma=0.5)
    res = run_stream(uclk(m.features, m.rewards, m.gamma, n_iter=10), m, 2000, 4, seed=0, beta_scale=0.3)
    d, l2 = m.dim, m.dim / (1 - m.gamma) ** 2
    assert np.all(res.n_epochs - 1 <= d * math.log(1 + 2000 * l2 / d) / math.log(2) + 1)


def test_validation():
    m = small()
    phi, r = m.features, m.rewards
    with pytest.raises(ValueError, match="features"):
        regularized_optimism(phi[0], r, 0.9)
    with pytest.raises(ValueError, match="rewards"):
        uclk(phi, r[:1], 0.9)
    with pytest.raises(ValueError, match="rewards"):
        uclk(phi, np.where(r > 0.5, np.nan, r), 0.9)
    with pytest.raises(ValueError, match="rewards"):
        regularized_optimism(phi, r + 2.0, 0.9)
    with pytest.raises(ValueError, match="gamma"):
        regularized_optimism(phi, r, 1.0)
    with pytest.raises(ValueError, match="eta_scale"):
        regularized_optimism(phi, r, 0.9, eta_scale=0.0)
    with pytest.raises(ValueError, match="n_iter"):
        uclk(phi, r, 0.9, n_iter=0)
    learner = uclk(phi, r, m.gamma)
    with pytest.raises(TypeError, match="learner"):
        run_stream(learner.plan, m, 10, 1)
    with pytest.raises(TypeError, match="mdp"):
        run_stream(learner, m.to_tabular(), 10, 1)
    batch = random_linear_mixture(4, 2, dim=2, n_mdps=2, gamma=0.6, seed=3)
    with pytest.raises(ValueError, match="theta"):
        run_stream(learner, batch, 10, 1)
    neg = LinearMixtureMDP(m.features, m.theta, m.rewards - 1.0, m.gamma)
    with pytest.raises(ValueError, match="rewards"):
        run_stream(learner, neg, 10, 1)
    with pytest.raises(ValueError, match="horizon"):
        run_stream(learner, m, 0, 1)
    with pytest.raises(ValueError, match="n_reps"):
        run_stream(learner, m, 10, 0)
    with pytest.raises(ValueError, match="checkpoints"):
        run_stream(learner, m, 10, 1, checkpoints=[5, 3])
    with pytest.raises(ValueError, match="checkpoints"):
        run_stream(learner, m, 10, 1, checkpoints=[11])
    with pytest.raises(ValueError, match="beta_scale"):
        run_stream(learner, m, 10, 1, beta_scale=-1.0)
    with pytest.raises(ValueError, match="delta"):
        run_stream(learner, m, 10, 1, delta=1.5)
    with pytest.raises(ValueError, match="initial_state"):
        run_stream(learner, m, 10, 1, initial_state=4)
    with pytest.raises(TypeError, match="seed"):
        run_stream(learner, m, 10, 1, seed=1.5)
    assert isinstance(learner, StreamLearner) and learner.name == "uclk"
