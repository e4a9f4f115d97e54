"""Safe UCRL-VTR with a learned cost: certification worked by hand, the ladder as an environment, validation."""

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.mdp import (LearnedCostSafeMixture, certified_action_sets, cost_noise, cost_radius, pessimistic_costs,
                           safe_cost_ladder, safe_learned_cost_vtr, safe_trap_mixture)

LADDER, CALIB, UNSAFE = range(3)
TOP, LURE, BEST, A0 = range(4)  # rungs t = 1, 2/3, 1/3, 0


def test_ladder_costs_and_optimal_value_by_hand():
    tau, gap = 0.6, 0.12
    m = safe_cost_ladder(4, safety_gap=gap, threshold=tau)
    np.testing.assert_allclose(m.costs[LADDER], [tau + gap, tau + gap / 3, tau - gap / 3, tau - gap])
    np.testing.assert_allclose(m.costs[CALIB], [tau + gap, tau + gap, tau + gap, 2 * gap])
    np.testing.assert_allclose(m.costs[UNSAFE], 1.0)
    assert m.safe_action == A0 and m.safe_states.tolist() == [True, True, False]
    # best safe policy: rung t = 1/3 (reward 0.5) at the ladder, visited at h = 0, 2 (H = 4) or 0, 2, 4 (H = 5)
    for horizon, v_star in ((4, 1.0), (5, 1.5)):
        mh = safe_cost_ladder(horizon, safety_gap=gap, threshold=tau)
        assert mh.optimal_safe_value == pytest.approx(v_star)


def test_spec_hides_the_cost_parameter():
    m = safe_cost_ladder(4)
    spec = m.spec
    assert (spec.feedback, spec.unit, spec.episode_length) == ("noisy_cost_episode", "episode", 4)
    np.testing.assert_array_equal(spec.cost_features, m.cost_features)
    np.testing.assert_array_equal(spec.safe_states, m.safe_states)
    assert spec.noise_scale == m.noise_scale and spec.threshold == m.threshold
    assert "costs" not in spec.info and "cost_param" not in spec.info


def test_observed_costs_are_the_true_costs_plus_noise():
    m = safe_cost_ladder(4, noise_scale=0.5)
    keys = np.arange(3, dtype=np.uint64) * np.uint64(101)
    policy = np.full((3, 4, 3), m.safe_action, dtype=np.int64)
    _, traj, info = m.step(None, policy, 0, keys)
    np.testing.assert_allclose(traj.costs, m.costs[traj.states[:, :-1], traj.actions] + 0.5 * cost_noise(keys, 4))
    np.testing.assert_array_equal(info["states"], traj.states)


def test_pessimistic_costs_by_hand():
    # Lambda = [[2, 1], [1, 2]] -> Lambda^-1 = [[2, -1], [-1, 2]] / 3; b = (3, 0) -> mu_hat = (2, -1)
    inv = np.array([[[2.0, -1.0], [-1.0, 2.0]]]) / 3.0
    psi = np.array([[[1.0, 0.0], [1.0, 1.0]]])
    pc = pessimistic_costs(psi, inv, np.array([[3.0, 0.0]]), 0.5)
    # psi = (1, 0): 2 + 0.5 sqrt(2/3);  psi = (1, 1): 1 + 0.5 sqrt(2/3)
    np.testing.assert_allclose(pc[0, 0], [2 + 0.5 * math.sqrt(2 / 3), 1 + 0.5 * math.sqrt(2 / 3)])
    np.testing.assert_allclose(pessimistic_costs(psi, inv, np.array([[3.0, 0.0]]), 0.0)[0, 0], [2.0, 1.0])


def test_cost_radius_by_hand():
    # sigma sqrt(2 ln(1/delta) + d ln(1 + N L^2 / (lam d))) + sqrt(lam) S
    expected = 0.5 * math.sqrt(2 * math.log(20) + 3 * math.log(1 + 100 * 4 / (0.25 * 3))) + 0.5 * 2.0
    assert cost_radius(0.5, 0.05, 100, 3, 0.25, 2.0, 2.0) == pytest.approx(expected)


def test_certified_sets_respect_reachability():
    m = safe_cost_ladder(4)
    cert = np.ones((2, 3, 4), dtype=bool)
    cert[1, UNSAFE] = False  # replication 1: the unsafe state has no certified action
    sets = certified_action_sets(m.features, m.mixture.theta[None].repeat(2, 0), cert, 4)
    assert sets[0].all()
    # the upper rungs reach the unsafe state: allowed only at the last stage
    assert not sets[1, :3, LADDER, :2].any() and sets[1, 3, LADDER].all()
    assert sets[1, :, LADDER, 2:].all() and not sets[1, :, UNSAFE].any()
    free = certified_action_sets(m.features, m.mixture.theta[None].repeat(2, 0), cert, 4, reachability=False)
    np.testing.assert_array_equal(free, np.broadcast_to(cert[:, None], free.shape))
    # with all weight on the escaping kernel the upper rungs never reach the unsafe state
    assert certified_action_sets(m.features, np.array([[0.0, 1.0]]), cert[1:], 4)[0, :, LADDER].all()


def _certification_episode(m, lam_c):
    """Noise-free ridge in closed form: first episode k whose plan certifies the rung t = 1/3."""
    tau, gap, h_ = m.threshold, m.safety_gap, m.mixture.horizon
    n_obs_total = 50 * h_  # K H with K = 50 below
    beta = cost_radius(0.0, 0.05, n_obs_total, 3, lam_c, math.sqrt(2.0), math.sqrt(3.0))  # sigma = 0
    for k in range(1, 50):
        n = k * h_ // 2  # visits of each safe state before episode k + 1
        mean = n / (lam_c + n) * (tau - gap / 3)  # <psi, mu_hat> with mu_hat = n mu* / (lam + n) on two coords
        width = beta * math.sqrt((1 + 1 / 9) / (lam_c + n))
        if mean + width <= tau:
            return k
    raise AssertionError("not certified within 50 episodes")


@pytest.mark.parametrize("gap", [0.2, 0.1])
def test_certified_exactly_when_width_below_slack(gap):
    m = safe_cost_ladder(4, safety_gap=gap, noise_scale=0.0)
    k_cert = _certification_episode(m, 0.01)
    assert 2 <= k_cert < 49
    learner = safe_learned_cost_vtr(cost_lam=0.01)
    ck = np.arange(1, 51)
    res = sim.run(learner, m, 50, 2, seed=3, checkpoints=ck)
    # a_0 at the ladder (regret 0.3 at each of the two ladder steps) in episodes 1..k_cert, the best rung after
    per_episode = np.diff(np.concatenate([[0.0], res.metrics["regret"][:, 0]]))
    np.testing.assert_allclose(per_episode, np.where(ck <= k_cert, 0.6, 0.0), atol=1e-12)
    assert res.metrics["violations"].max() == 0


def test_batch_independence_and_seeds():
    m = safe_cost_ladder(4, safety_gap=0.2, noise_scale=0.05)  # certification after about 34 episodes
    learner = safe_learned_cost_vtr()
    batch = sim.run(learner, m, 60, 3, seed=11)
    regret = batch.metrics["regret"]
    assert len(set(regret[-1].tolist())) > 1  # the noise makes the replications differ
    for r in range(3):
        alone = sim.run(learner, m, 60, 1, seed=11, rep_offset=r)
        np.testing.assert_allclose(alone.metrics["regret"][:, 0], regret[:, r], atol=1e-9)
        np.testing.assert_array_equal(alone.metrics["violations"][:, 0], batch.metrics["violations"][:, r])
    again = sim.run(learner, m, 60, 3, seed=11)
    np.testing.assert_array_equal(again.metrics["regret"], regret)
    other = sim.run(learner, m, 60, 3, seed=12)
    assert not np.array_equal(other.metrics["regret"], regret)


def test_safe_learner_never_violates_and_point_estimate_does():
    m = safe_cost_ladder(4, safety_gap=0.15)
    safe = sim.run(safe_learned_cost_vtr(), m, 40, 8, seed=1)
    assert safe.metrics["violations"].max() == 0 and np.all(safe.metrics["regret"] >= -1e-12)
    point = sim.run(safe_learned_cost_vtr(pessimistic=False), m, 5, 8, seed=1)
    assert np.all(point.metrics["violations"][-1] > 0)  # the top rung is played in episode 1 (mu_hat = 0)
    assert point.learner == "safe_learned_cost_vtr" and point.learner_params["pessimistic"] is False


def test_cost_noise_is_standard_normal():
    keys = np.arange(4000, dtype=np.uint64) * np.uint64(7919)
    z = cost_noise(keys, 5)
    assert z.shape == (4000, 5) and np.all(np.isfinite(z))
    n = z.size
    assert abs(z.mean()) < 4 / math.sqrt(n)  # four standard errors
    assert abs(z.var() - 1.0) < 4 * math.sqrt(2 / n)
    assert abs(np.mean(z < 0) - 0.5) < 4 * 0.5 / math.sqrt(n)


def test_validation_errors():
    m = safe_cost_ladder(4)
    kw = dict(mixture=m.mixture, cost_features=m.cost_features, cost_param=m.cost_param, threshold=0.6,
              safe_action=3, safety_gap=0.1, safe_states=m.safe_states, noise_scale=0.05)
    LearnedCostSafeMixture(**kw)
    with pytest.raises(ValueError, match="lie in \\[0, 1\\]"):
        LearnedCostSafeMixture(**{**kw, "cost_param": np.array([0.5, 0.2, 1.5])})
    with pytest.raises(ValueError, match="cost_features must have shape"):
        LearnedCostSafeMixture(**{**kw, "cost_features": m.cost_features[:, :3]})
    with pytest.raises(ValueError, match="cost_param must"):
        LearnedCostSafeMixture(**{**kw, "cost_param": np.array([0.5, 0.2])})
    with pytest.raises(ValueError, match="cost_features must be finite"):
        LearnedCostSafeMixture(**{**kw, "cost_features": np.where(m.cost_features > 0, np.nan, 0.0)})
    with pytest.raises(ValueError, match="safety_gap"):
        LearnedCostSafeMixture(**{**kw, "safety_gap": 0.0})
    with pytest.raises(ValueError, match="threshold - safety_gap"):
        LearnedCostSafeMixture(**{**kw, "safety_gap": 0.2})
    for tau in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="threshold"):
            LearnedCostSafeMixture(**{**kw, "threshold": tau})
    with pytest.raises(ValueError, match="safe_states"):
        LearnedCostSafeMixture(**{**kw, "safe_states": np.array([1, 1, 0])})
    with pytest.raises(TypeError, match="mixture"):
        LearnedCostSafeMixture(**{**kw, "mixture": m.to_known_cost()})
    for bad in (0.0, -0.1, 0.25):
        with pytest.raises(ValueError, match="safety_gap"):
            safe_cost_ladder(4, safety_gap=bad)
    for tau in (0.0, 1.0):
        with pytest.raises(ValueError, match="threshold"):
            safe_cost_ladder(4, threshold=tau)
    with pytest.raises(ValueError, match="rung_rewards"):
        safe_cost_ladder(4, rung_rewards=(1.0, 0.5, 2.0, 0.0))
    with pytest.raises(ValueError, match="noise_scale"):
        LearnedCostSafeMixture(**{**kw, "noise_scale": -1.0})
    with pytest.raises(ValueError, match="start state"):
        LearnedCostSafeMixture(**{**kw, "initial_state": 2})  # the unsafe state
    with pytest.raises(TypeError, match="pessimistic"):
        safe_learned_cost_vtr(pessimistic=1)
    with pytest.raises(TypeError, match="reachability"):
        safe_learned_cost_vtr(reachability="yes")
    with pytest.raises(ValueError, match="cost_lam"):
        safe_learned_cost_vtr(cost_lam=0.0)
    with pytest.raises(ValueError, match="param_bound"):
        safe_learned_cost_vtr(param_bound=-1.0)
    learner = safe_learned_cost_vtr()
    with pytest.raises(ValueError, match="feedback"):  # the known-cost environment reveals no noisy costs
        sim.run(learner, m.to_known_cost(), 5, 2)
    with pytest.raises(ValueError, match="feedback"):
        sim.run(learner, safe_trap_mixture(4), 5, 2)
    with pytest.raises(ValueError, match="checkpoints"):
        sim.run(learner, m, 5, 2, checkpoints=[6])
