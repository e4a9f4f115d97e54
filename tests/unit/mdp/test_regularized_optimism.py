"""Single-stream learners: planners worked by hand, sim.run against a plain loop, shapes, seeding, validation."""

import dataclasses
import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.random import LEARNER_STREAM, rep_key, round_key, seed_to_uint64, stream_key, uniform
from expertlab.mdp import (LinearMixtureMDP, LinearMixtureStream, StreamAction, StreamState, confidence_radius,
                           extended_value_iteration, policy_iteration, regularized_optimism,
                           regularized_value_iteration, safe_trap_mixture, uclk)
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


def test_extended_value_iteration_with_the_true_model_is_value_iteration():
    m = small()
    inv, b = exact_statistics(m)
    pi, v = extended_value_iteration(m.features, m.rewards, m.gamma, inv, b, 0.0, n_iter=200)
    ref = policy_iteration(m.transitions, m.rewards, m.gamma)
    np.testing.assert_allclose(v[0], ref.values, atol=1e-8)
    np.testing.assert_array_equal(pi[0].argmax(axis=-1), ref.policy)
    np.testing.assert_array_equal(pi[0].sum(axis=-1), 1.0)


def test_regularized_one_iteration_by_hand():
    # V_0 = 0 so Q_1 = r: pi_1 = softmax(eta r), V_1 = log(mean exp(eta r)) / eta with eta = sqrt(t ln A) / K
    phi = np.stack([np.eye(2)[:, None, :].repeat(2, axis=1), np.eye(2)[::-1][:, None, :].repeat(2, axis=1)])
    r = np.array([[0.0, 1.0], [0.5, 0.5]])
    pi, v = regularized_value_iteration(phi, r, 0.9, np.eye(2)[None], np.array([[0.5, 0.5]]), 3.0, np.array([100]),
                                        n_iter=1, eta_scale=2.0)
    eta = 2.0 * math.sqrt(100 * math.log(2))
    np.testing.assert_allclose(pi[0, 0], [1 / (1 + math.exp(eta)), math.exp(eta) / (1 + math.exp(eta))])
    np.testing.assert_allclose(pi[0, 1], [0.5, 0.5])
    assert v[0, 0] == pytest.approx(math.log((1 + math.exp(eta)) / 2) / eta)
    assert v[0, 1] == pytest.approx(0.5)


def test_regularized_two_iterations_by_hand():
    # one state, one action, kernel = identity: Q_2 = r + gamma clip(V_1 + beta ||x||, 0, 1/(1-gamma))
    phi = np.ones((1, 1, 1, 1))
    r = np.array([[0.5]])
    pi, v = regularized_value_iteration(phi, r, 0.5, np.array([[[0.25]]]), np.array([[4.0]]), 2.0, np.array([1]),
                                        n_iter=2)
    # theta_hat = 1; V_1 = 0.5; x = 0.5, ||x|| = 0.25; clip(0.5 + 0.5) = 1.0; V_2 = 0.5 + 0.5 * 1.0
    assert v[0, 0] == pytest.approx(1.0) and pi[0, 0, 0] == pytest.approx(1.0)


def test_regularized_tends_to_the_greedy_plan():
    m = small()
    inv, b = exact_statistics(m)
    pi, v = regularized_value_iteration(m.features, m.rewards, m.gamma, inv, b, 0.0, np.array([10 ** 8]), n_iter=200)
    ref = policy_iteration(m.transitions, m.rewards, m.gamma)
    np.testing.assert_array_equal(pi[0].argmax(axis=-1), ref.policy)
    assert pi[0].max(axis=-1).min() > 0.999
    # the regularised value is below the optimal one, by at most ln A / (eta K) / (1 - gamma)
    assert np.all(v[0] <= ref.values + 1e-9)
    assert np.all(ref.values - v[0] <= math.log(2) / math.sqrt(10 ** 8 * math.log(2)) / (1 - m.gamma) + 1e-9)


def reference_stream(plan, m, horizon, seed, beta, rep=0):
    """Replication ``rep`` with plain loops, a full inverse and slogdet; ``plan(inv, b, n_steps) -> (pi, v)``.

    The action of step t is drawn with the learner's round key, the next state with draw 0 of the
    environment's round key (the keys of ``sim.run``).
    """
    p, r, d = m.transitions, m.rewards, m.dim
    v_star = policy_iteration(p, r, m.gamma).policy_values
    with np.errstate(over="ignore"):
        key = rep_key(np.full(1, seed_to_uint64(seed)), np.full(1, rep, dtype=np.uint64))
        lkey = stream_key(key, LEARNER_STREAM)
    gram, b = np.eye(d), np.zeros(d)
    pi, v = (a[0] for a in plan(np.eye(d)[None], b[None], np.array([0])))
    epoch_logdet, s, regret, n_epochs = 0.0, 0, 0.0, 1

    def value(pi):
        return np.linalg.solve(np.eye(len(v)) - m.gamma * np.einsum("sa,sat->st", pi, p), (pi * r).sum(-1))

    v_pi = value(pi)
    for t in range(horizon):
        logdet = np.linalg.slogdet(gram)[1]
        if logdet - epoch_logdet > math.log(2):
            pi, v = (a[0] for a in plan(np.linalg.inv(gram)[None], b[None], np.array([t])))
            v_pi, epoch_logdet, n_epochs = value(pi), logdet, n_epochs + 1
        regret += v_star[s] - v_pi[s]
        with np.errstate(over="ignore"):
            ek, lk = round_key(key, np.full(1, t, dtype=np.uint64)), round_key(lkey, np.full(1, t, dtype=np.uint64))
        u_a, u_s = uniform(lk, np.zeros(1, dtype=np.uint64))[0], uniform(ek, np.zeros(1, dtype=np.uint64))[0]
        a = min(int(np.searchsorted(np.cumsum(pi[s]), u_a, side="right")), len(pi[s]) - 1)
        s2 = min(int(np.searchsorted(np.cumsum(p[s, a]), u_s, side="right")), len(v) - 1)
        x = m.features[:, s, a, :] @ v
        gram += np.outer(x, x)
        b += x * v[s2]
        s = s2
    return regret, n_epochs


@pytest.mark.parametrize("kind", ["regularized", "uclk"])
def test_sim_run_matches_plain_loop(kind):
    m = small()
    horizon, beta_scale = 300, 0.2
    beta = beta_scale * confidence_radius(m.dim, m.gamma, horizon)
    if kind == "regularized":
        learner = regularized_optimism(n_iter=20, beta_scale=beta_scale)

        def plan(inv, b, n_steps):
            return regularized_value_iteration(m.features, m.rewards, m.gamma, inv, b, beta, n_steps, n_iter=20)
    else:
        learner = uclk(n_iter=20, beta_scale=beta_scale)

        def plan(inv, b, n_steps):
            return extended_value_iteration(m.features, m.rewards, m.gamma, inv, b, beta, n_iter=20)
    res = sim.run(learner, LinearMixtureStream(m), horizon, 3, seed=5, checkpoints=[horizon])
    for rep in (0, 2):
        regret, n_epochs = reference_stream(plan, m, horizon, 5, beta, rep=rep)
        assert res.metrics["regret"][-1, rep] == pytest.approx(regret, rel=1e-7, abs=1e-9)
        assert res.metrics["epochs"][-1, rep] == n_epochs and n_epochs > 1


def test_shapes_batch_independence_and_seeding():
    env = LinearMixtureStream(small())
    learner = regularized_optimism(n_iter=10, beta_scale=0.3)
    res = sim.run(learner, env, 200, 3, seed=1, checkpoints=[10, 50, 200])
    assert res.unit == "step" and set(res.metrics) == {"regret", "epochs"}
    regret = res.metrics["regret"]
    assert regret.shape == (3, 3) and res.mean("regret").shape == (3,)
    np.testing.assert_array_equal(res.checkpoints, [10, 50, 200])
    assert np.all(np.diff(regret, axis=0) >= -1e-9) and np.all(regret >= -1e-9)
    alone = sim.run(learner, env, 200, 1, seed=1, checkpoints=[10, 50, 200], rep_offset=1)
    np.testing.assert_allclose(alone.metrics["regret"][:, 0], regret[:, 1], rtol=1e-10, atol=1e-12)
    again = sim.run(learner, env, 200, 3, seed=1, checkpoints=[10, 50, 200])
    np.testing.assert_array_equal(again.metrics["regret"], regret)
    other = sim.run(learner, env, 200, 3, seed=2, checkpoints=[10, 50, 200])
    assert not np.array_equal(other.metrics["regret"], regret)
    assert not np.array_equal(regret[:, 0], regret[:, 1])


def test_learner_state_and_action():
    env = LinearMixtureStream(small())
    learner = uclk(n_iter=5)
    spec = dataclasses.replace(env.spec, horizon=10)
    keys = np.arange(2, dtype=np.uint64)
    state = learner.init(spec, 2, keys, np)
    assert isinstance(state, StreamState) and state.inv.shape == (2, 2, 2) and state.policy.shape == (2, 4, 2)
    action, new = learner.act(state, env.reset(2, keys, np), keys)
    assert isinstance(action, StreamAction) and action.action.shape == (2,) and action.replanned.all()
    before = [np.array(a, copy=True) for a in new]
    s_next, fb, info = env.step(env.reset(2, keys, np), action, 0, keys)
    after = learner.update(new, action, fb, keys)
    for a, b in zip(before, new):
        np.testing.assert_array_equal(a, b)  # update returns a new state
    assert after.t == 1 and not np.array_equal(after.inv, new.inv)


def test_number_of_epochs_obeys_the_determinant_bound():
    # ln det(Sigma_T / lambda) <= d ln(1 + T L^2 / (d lambda)), L^2 = d / (1 - gamma)^2, and each epoch adds ln 2
    m = small(gamma=0.5)
    res = sim.run(uclk(n_iter=10, beta_scale=0.3), LinearMixtureStream(m), 2000, 4, seed=0, checkpoints=[2000])
    d, l2 = m.dim, m.dim / (1 - m.gamma) ** 2
    assert np.all(res.metrics["epochs"][-1] - 1 <= d * math.log(1 + 2000 * l2 / d) / math.log(2) + 1)


def test_validation():
    m = small()
    phi, r = m.features, m.rewards
    inv, b = exact_statistics(m)
    with pytest.raises(ValueError, match="features"):
        regularized_value_iteration(phi[0], r, 0.9, inv, b, 0.0, np.array([1]))
    with pytest.raises(ValueError, match="rewards"):
        extended_value_iteration(phi, r[:1], 0.9, inv, b, 0.0)
    with pytest.raises(ValueError, match="rewards"):
        extended_value_iteration(phi, np.where(r > 0.5, np.nan, r), 0.9, inv, b, 0.0)
    with pytest.raises(ValueError, match="rewards"):
        regularized_value_iteration(phi, r + 2.0, 0.9, inv, b, 0.0, np.array([1]))
    with pytest.raises(ValueError, match="gamma"):
        regularized_value_iteration(phi, r, 1.0, inv, b, 0.0, np.array([1]))
    with pytest.raises(ValueError, match="inv and b"):
        extended_value_iteration(phi, r, 0.9, inv, b[:, :1], 0.0)
    with pytest.raises(ValueError, match="n_steps"):
        regularized_value_iteration(phi, r, 0.9, inv, b, 0.0, np.array([1, 2]))
    with pytest.raises(ValueError, match="eta_scale"):
        regularized_optimism(eta_scale=0.0)
    with pytest.raises(ValueError, match="n_iter"):
        uclk(n_iter=0)
    with pytest.raises(ValueError, match="beta_scale"):
        uclk(beta_scale=-1.0)
    with pytest.raises(ValueError, match="delta"):
        regularized_optimism(delta=1.5)
    with pytest.raises(TypeError, match="mdp"):
        LinearMixtureStream(m.to_tabular())
    batch = random_linear_mixture(4, 2, dim=2, n_mdps=2, gamma=0.6, seed=3)
    with pytest.raises(ValueError, match="theta"):
        LinearMixtureStream(batch)
    with pytest.raises(ValueError, match="rewards"):
        LinearMixtureStream(LinearMixtureMDP(m.features, m.theta, m.rewards - 1.0, m.gamma))
    with pytest.raises(ValueError, match="initial_state"):
        LinearMixtureStream(m, initial_state=4)
    env, learner = LinearMixtureStream(m), uclk()
    with pytest.raises(ValueError, match="horizon"):
        sim.run(learner, env, 0, 1)
    with pytest.raises(ValueError, match="n_reps"):
        sim.run(learner, env, 10, 0)
    with pytest.raises(ValueError, match="checkpoints"):
        sim.run(learner, env, 10, 1, checkpoints=[11])
    with pytest.raises(TypeError, match="seed"):
        sim.run(learner, env, 10, 1, seed=1.5)
    with pytest.raises(ValueError, match="feedback"):
        sim.run(learner, safe_trap_mixture(4), 10, 1)
    with pytest.raises(TypeError, match="StreamAction"):
        env.step(env.reset(1, None, np), np.zeros(1, dtype=np.int64), 0, np.zeros(1, dtype=np.uint64))
    assert learner.name == "uclk" and learner.feedback == "discounted_stream"
