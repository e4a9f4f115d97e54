"""UCRL-VTR and UCRL-VTR+: the model record, the hard instance, Sherman–Morrison, loop transcriptions."""

import dataclasses
import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.random import rep_key, round_key
from expertlab.mdp import (EpisodicLinearMixture, backward_induction, episodic, sample_episodes, sherman_morrison,
                           ucrl_vtr, ucrl_vtr_plus)
from expertlab.mdp.instances import hard_linear_mixture, random_linear_mixture


def spec_of(m, n_episodes):
    """The spec sim.run gives a learner on the mixture ``m`` for ``n_episodes`` episodes."""
    return dataclasses.replace(m.spec, horizon=n_episodes)


def stay_swap(h=3):
    phi = np.stack([np.eye(2)[:, None, :].repeat(2, axis=1), np.eye(2)[::-1][:, None, :].repeat(2, axis=1)])
    phi[1, :, 1] = phi[0, :, 1]  # action 1 always stays under both kernels
    r = np.zeros((h, 2, 2))
    r[:, 1] = 1.0
    return EpisodicLinearMixture(phi, np.array([0.3, 0.7]), r)


def test_model_by_hand():
    m = stay_swap()
    p = m.to_finite_horizon().transitions
    assert p.shape == (3, 2, 2, 2) and m.dim == 2 and m.horizon == 3
    np.testing.assert_allclose(p[0, 0, 0], [0.3, 0.7])  # action 0 from 0: stay 0.3, swap 0.7
    np.testing.assert_allclose(p[2, 1, 1], [0.0, 1.0])


def test_model_validation():
    m = stay_swap()
    with pytest.raises(ValueError, match="simplex"):
        EpisodicLinearMixture(m.features, np.array([0.5, 0.6]), m.rewards)
    with pytest.raises(ValueError, match="simplex"):
        EpisodicLinearMixture(m.features, np.array([np.nan, 1.0]), m.rewards)
    with pytest.raises(ValueError, match="theta must have shape"):
        EpisodicLinearMixture(m.features, np.array([1.0]), m.rewards)
    with pytest.raises(ValueError, match="features"):
        EpisodicLinearMixture(m.features[:, :, :, :1], m.theta, m.rewards)
    with pytest.raises(ValueError, match="features"):
        EpisodicLinearMixture(m.features * 2.0, m.theta, m.rewards)
    with pytest.raises(ValueError, match="rewards"):
        EpisodicLinearMixture(m.features, m.theta, m.rewards + 1.5)
    with pytest.raises(ValueError, match="rewards"):
        EpisodicLinearMixture(m.features, m.theta, m.rewards[0])
    with pytest.raises(TypeError, match="theta"):
        EpisodicLinearMixture(m.features, [0.5, 0.5], m.rewards)


def test_hard_instance_by_hand():
    h, n_coords, gap = 5, 3, 0.05
    signs = np.array([1.0, -1.0, 1.0])
    m = hard_linear_mixture(n_coords, h, gap=gap, signs=signs)
    assert m.dim == 6 and m.features.shape == (6, 2, 8, 2)
    assert abs(m.theta.sum() - 1) < 1e-12 and m.theta.min() >= 0
    p = m.to_finite_horizon().transitions[0]
    for j in range(8):
        a = np.array([1.0 if (j >> i) & 1 else -1.0 for i in range(n_coords)])
        assert math.isclose(p[0, j, 1], 1 / h + gap * float(a @ signs), abs_tol=1e-12)
        assert p[1, j, 1] == 1.0
    best = int(np.asarray(backward_induction(m.to_finite_horizon()).policy)[0, 0])
    assert best == 0b101  # a = signs
    k = 400
    default = hard_linear_mixture(2, 4, n_episodes=k)
    np.testing.assert_allclose(default.to_finite_horizon().transitions[0, 0, 3, 1],
                               0.25 + 2 * math.sqrt(0.25 / k) / (4 * math.sqrt(2)))


def test_hard_instance_validation():
    with pytest.raises(ValueError, match="gap must be at most"):
        hard_linear_mixture(2, 4, gap=0.2)
    with pytest.raises(ValueError, match="gap or n_episodes"):
        hard_linear_mixture(2, 4)
    with pytest.raises(ValueError, match="horizon"):
        hard_linear_mixture(2, 1, gap=0.1)
    with pytest.raises(ValueError, match="signs"):
        hard_linear_mixture(2, 4, gap=0.1, signs=[1.0, 0.5])
    with pytest.raises(ValueError, match="gap"):
        hard_linear_mixture(2, 4, gap=-0.1)


def test_sherman_morrison_equals_direct_inverse():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(5, 4, 4))
    sigma = np.einsum("rij,rkj->rik", a, a) + np.eye(4)
    inv = np.linalg.inv(sigma)
    for _ in range(20):
        x = rng.normal(size=(5, 4))
        sigma = sigma + x[:, :, None] * x[:, None, :]
        inv = sherman_morrison(inv, x)
    np.testing.assert_allclose(inv, np.linalg.inv(sigma), rtol=1e-9, atol=1e-12)


def reference_run(m, n_episodes, plus, beta_scale, seed=4):
    """One replication with plain loops and Gram matrices inverted from scratch each episode."""
    phi, rew = m.features, m.rewards
    d, s_, a_, _ = phi.shape
    h_ = m.horizon
    fh = m.to_finite_horizon()
    k_, lam, delta = n_episodes, 1.0, 0.1
    if plus:
        iota = math.log(4 * k_ ** 2 / delta)
        lk = math.log(1 + k_ / lam)
        b_hat = beta_scale * (8 * math.sqrt(d * lk * iota) + 4 * math.sqrt(d) * iota + 1)
        b_chk = beta_scale * (8 * d * math.sqrt(lk * iota) + 4 * math.sqrt(d) * iota + 1)
        b_til = beta_scale * (8 * h_ ** 2 * math.sqrt(d * math.log(1 + k_ * h_ ** 4 / d) * iota)
                              + 4 * h_ ** 2 * iota + 1)
    else:
        b_hat = beta_scale * (h_ / 2 * math.sqrt(d * math.log((1 + k_ * h_ ** 3 * d) / delta)) + 1)
    gram, mom = np.eye(d), np.zeros(d)
    gram2, mom2 = np.eye(d), np.zeros(d)
    rkey = rep_key(np.full(1, np.uint64(seed)), np.zeros(1, dtype=np.uint64))
    policies = []
    for k in range(n_episodes):
        inv = np.linalg.inv(gram)
        theta = inv @ mom
        v = np.zeros((h_ + 1, s_))
        pol = np.zeros((h_, s_), dtype=np.int64)
        for h in reversed(range(h_)):
            for s in range(s_):
                qs = []
                for a in range(a_):
                    x = np.array([sum(phi[i, s, a, t] * v[h + 1, t] for t in range(s_)) for i in range(d)])
                    qs.append(min(h_ - h, rew[h, s, a] + theta @ x + b_hat * math.sqrt(x @ inv @ x)))
                pol[h, s] = int(np.argmax(qs))
                v[h, s] = max(qs)
        policies.append(pol)
        st, ac, _ = sample_episodes(fh, pol[None], round_key(rkey, np.full(1, k, dtype=np.uint64)), 0)
        inv2 = np.linalg.inv(gram2)
        theta2 = inv2 @ mom2
        upd = []
        for h in range(h_):
            s, a, nxt = st[0, h], ac[0, h], st[0, h + 1]
            x = phi[:, s, a] @ v[h + 1]
            x2 = phi[:, s, a] @ v[h + 1] ** 2
            y = v[h + 1, nxt]
            w = 1.0
            if plus:
                var = (min(max(x2 @ theta2, 0), h_ ** 2) - min(max(x @ theta, 0), h_) ** 2
                       + min(h_ ** 2, 2 * h_ * b_chk * math.sqrt(x @ inv @ x))
                       + min(h_ ** 2, b_til * math.sqrt(x2 @ inv2 @ x2)))
                w = 1.0 / max(h_ ** 2 / d, var)
            upd.append((x, x2, y, w))
        for x, x2, y, w in upd:
            gram += w * np.outer(x, x)
            mom += w * x * y
            gram2 += np.outer(x2, x2)
            mom2 += x2 * y ** 2
    return policies


@pytest.mark.parametrize("plus,scale", [(False, 0.3), (False, 0.01), (True, 0.01), (True, 0.001)])
def test_against_loop_transcription(plus, scale):
    lm = random_linear_mixture(3, 2, dim=3, branching=2, seed=1)
    m = EpisodicLinearMixture(lm.features, lm.theta, np.broadcast_to(lm.rewards, (3, 3, 2)).copy())
    n_ep = 25
    ref = reference_run(m, n_ep, plus, scale)
    learner = (ucrl_vtr_plus if plus else ucrl_vtr)(beta_scale=scale)
    st = learner.init(spec_of(m, n_ep), 1)
    rkey = rep_key(np.full(1, np.uint64(4)), np.zeros(1, dtype=np.uint64))
    fh = m.to_finite_horizon()
    changed = False
    for k in range(n_ep):
        pol, st = learner.act(st, None, None)
        np.testing.assert_array_equal(pol[0], ref[k], err_msg=f"episode {k}")
        changed |= bool(k and not np.array_equal(ref[k], ref[0]))
        traj = sample_episodes(fh, pol, round_key(rkey, np.full(1, k, dtype=np.uint64)), 0)
        st = learner.update(st, pol, traj, None)
    assert changed  # the comparison covered more than the initial policy


def test_incremental_inverse_matches_direct():
    m = hard_linear_mixture(2, 3, gap=0.1)
    learner = ucrl_vtr()
    st = learner.init(spec_of(m, 50), 3)
    fh = m.to_finite_horizon()
    rk = rep_key(np.full(3, np.uint64(2)), np.arange(3, dtype=np.uint64))
    for k in range(15):
        pol, st = learner.act(st, None, None)
        st = learner.update(st, pol, sample_episodes(fh, pol, round_key(rk, np.full(3, k, dtype=np.uint64)), 0), None)
    gram = np.linalg.inv(st.inv)
    np.testing.assert_allclose(gram, np.swapaxes(gram, 1, 2), atol=1e-8)
    assert np.all(np.linalg.eigvalsh(gram) >= 1.0 - 1e-8)  # lambda I plus a Gram matrix
    assert st.n_episodes_seen == 15


@pytest.mark.parametrize("factory,scale", [(ucrl_vtr, 1.0), (ucrl_vtr_plus, 0.01)])
def test_batch_independence_and_regret(factory, scale):
    m = hard_linear_mixture(1, 4, gap=0.125)
    learner = factory(beta_scale=scale)
    full = sim.run(learner, m, horizon=60, n_reps=4, seed=3)
    one = sim.run(learner, m, horizon=60, n_reps=1, seed=3, rep_offset=1)
    assert full.unit == "episode" and full.environment == "linear_mixture"
    np.testing.assert_array_equal(one.metrics["regret"][:, 0], full.metrics["regret"][:, 1])
    regret = full.metrics["regret"]
    assert np.all(regret >= 0) and np.all(np.diff(regret, axis=0) >= 0)
    # the same learner from another start state: the spec tells it the start, the regret is from there
    other = sim.run(learner, episodic(m, initial_state=1), horizon=20, n_reps=2, seed=3)
    assert np.all(other.metrics["regret"] == 0.0)  # state 1 is absorbing and pays 1 whatever the action


def test_beats_uniform_play():
    m = hard_linear_mixture(1, 4, gap=0.125)
    fh = m.to_finite_horizon()
    p, r = np.asarray(fh.transitions), np.asarray(fh.rewards)
    v = np.zeros(2)
    for h in range(3, -1, -1):
        v = (r[h] + p[h] @ v).mean(axis=-1)
    k = 600
    uniform_regret = k * (float(np.asarray(backward_induction(fh).values)[0, 0]) - v[0])
    for learner in (ucrl_vtr(), ucrl_vtr_plus(beta_scale=0.01)):
        res = sim.run(learner, m, horizon=k, n_reps=4, seed=0)
        assert res.metrics["regret"][-1].max() < uniform_regret, learner.name


def test_validation():
    m = stay_swap()
    spec = spec_of(m, 5)
    for factory in (ucrl_vtr, ucrl_vtr_plus):
        with pytest.raises(TypeError):
            factory(m.features)  # the base kernels come from the environment (spec.features)
        with pytest.raises(ValueError, match="delta"):
            factory(delta=0.0)
        with pytest.raises(ValueError, match="lam"):
            factory(lam=-1.0)
        with pytest.raises(ValueError, match="beta_scale"):
            factory(beta_scale=0.0)
        info = dict(spec.info, n_states=3, rewards=np.zeros((3, 3, 2)))
        with pytest.raises(ValueError, match="features must have shape"):
            factory().init(dataclasses.replace(spec, info=info), 1)
        with pytest.raises(ValueError, match="features"):
            factory().init(dataclasses.replace(spec, info=dict(spec.info, features=m.features * 0.5)), 1)
        with pytest.raises(ValueError, match=r"rewards in \[0, 1\]"):
            factory().init(dataclasses.replace(spec, info=dict(spec.info, rewards=np.full((3, 2, 2), 2.0))), 1)
        with pytest.raises(ValueError, match="base kernels"):
            factory().init(dataclasses.replace(m.to_finite_horizon().spec, horizon=5), 1)
        reg = sim.get_learner(factory.__name__)
        assert reg.family == "mdp" and reg.feedback == "linear_mixture_episode"
        learner, env, horizon = reg.example()
        assert learner.name == factory.__name__
        assert sim.run(learner, env, horizon=horizon, n_reps=2, seed=0).metrics["regret"].shape[1] == 2
