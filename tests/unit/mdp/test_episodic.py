"""Episodic MDPs as environments of sim.run: exact policy values by hand, sampling, regret bookkeeping, batching."""

import dataclasses

import numpy as np
import pytest

from expertlab import sim
from expertlab.random import rep_key, round_key, seed_to_uint64
from expertlab.mdp import (EpisodicMDP, FiniteHorizonMDP, Trajectory, backward_induction, episodic,
                           evaluate_markov_policy, garnet_episodic, sample_episodes, ucbvi)
from expertlab.mdp.instances import garnet, hard_linear_mixture


def two_state(horizon=2):
    """State 0: action 0 earns 0 and stays, action 1 earns 0 and moves to 1; state 1 earns 1 and stays."""
    p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    r = np.array([[0.0, 0.0], [1.0, 1.0]])
    return FiniteHorizonMDP.stationary(p, r, horizon)


def coin(horizon=1, q=0.3):
    """From state 0 either action moves to state 1 with probability q; only (1, *) pays."""
    p = np.array([[[1 - q, q], [1 - q, q]], [[0.0, 1.0], [0.0, 1.0]]])
    r = np.array([[0.0, 0.0], [1.0, 1.0]])
    return FiniteHorizonMDP.stationary(p, r, horizon)


def fixed(policy_hs, name="fixed"):
    """A learner that always plays the Markov policy ``policy_hs (H, S)``."""
    pol = np.asarray(policy_hs, dtype=np.int64)
    return sim.Learner(name, "tabular_episode", lambda spec, n, keys=None, xp=None: n,
                       lambda n, obs, keys: (np.broadcast_to(pol, (n, *pol.shape)).copy(), n),
                       lambda st, pi, traj, keys: st, {})


def test_policy_values_by_hand():
    m = two_state(3)
    # move at once: 0 + 1 + 1 from state 0; stay twice then move: 0
    v = evaluate_markov_policy(m, np.array([[[1, 0], [1, 0], [1, 0]], [[0, 0], [0, 0], [1, 0]]]))
    np.testing.assert_array_equal(v[0, 0], [2.0, 3.0])
    np.testing.assert_array_equal(v[1, 0], [0.0, 3.0])
    np.testing.assert_array_equal(v[:, 3], 0.0)
    opt = backward_induction(m)
    np.testing.assert_allclose(evaluate_markov_policy(m, np.asarray(opt.policy)[None]), np.asarray(opt.values)[None])


def test_policy_values_stochastic_by_hand():
    # H = 2 from state 0: reach 1 at stage 1 with prob q, then earn 1: value q
    v = evaluate_markov_policy(coin(2, q=0.3), np.zeros((1, 2, 2), dtype=np.int64))
    np.testing.assert_allclose(v[0, 0], [0.3, 2.0])


def test_sampling_deterministic_and_frequencies():
    m = two_state(3)
    keys = round_key(rep_key(np.full(4, np.uint64(7)), np.arange(4, dtype=np.uint64)), np.zeros(4, dtype=np.uint64))
    pol = np.ones((4, 3, 2), dtype=np.int64)
    s, a, r = sample_episodes(m, pol, keys, 0)
    np.testing.assert_array_equal(s, np.tile([0, 1, 1, 1], (4, 1)))
    np.testing.assert_array_equal(r, np.tile([0.0, 1.0, 1.0], (4, 1)))
    n = 40_000
    keys = rep_key(np.full(n, np.uint64(3)), np.arange(n, dtype=np.uint64))
    traj = sample_episodes(coin(1, 0.3), np.zeros((n, 1, 2), dtype=np.int64), keys, 0)
    assert isinstance(traj, Trajectory)
    freq = traj.states[:, 1].mean()
    assert abs(freq - 0.3) < 5 * np.sqrt(0.3 * 0.7 / n)


def test_the_model_is_an_environment():
    m = two_state(3)
    spec = m.spec
    assert isinstance(m, sim.Environment) and sim.is_environment(m)
    assert (spec.feedback, spec.unit, spec.n_actions, spec.horizon) == ("tabular_episode", "episode", 2, None)
    assert spec.n_states == 2 and spec.episode_length == 3 and spec.initial_state == 0
    np.testing.assert_array_equal(spec.rewards, m.rewards)
    assert m.name == "finite_horizon_mdp"
    assert m.params == {"n_states": 2, "n_actions": 2, "episode_length": 3, "initial_state": 0}
    assert m.optimal_value() == 2.0 and episodic(m, 1).optimal_value() == 3.0
    # stepping by hand: the environment rolls the policy out from its keys and returns the trajectory
    keys = rep_key(np.full(2, np.uint64(1)), np.arange(2, dtype=np.uint64))
    data = m.reset(2, keys, np)
    _, traj, info = m.step(data, np.ones((2, 3, 2), dtype=np.int64), 0, keys)
    np.testing.assert_array_equal(traj.states, [[0, 1, 1, 1]] * 2)
    np.testing.assert_array_equal(info["value"], [2.0, 2.0])
    np.testing.assert_array_equal(info["return"], [2.0, 2.0])


def test_regret_of_fixed_policies_is_exact():
    m = two_state(3)  # V* = 2 from state 0
    res = sim.run(fixed(np.zeros((3, 2))), m, horizon=10, n_reps=3, seed=0, checkpoints=[1, 5, 10])
    assert res.unit == "episode" and res.environment == "finite_horizon_mdp"
    np.testing.assert_array_equal(res.metrics["regret"], np.array([[2.0] * 3, [10.0] * 3, [20.0] * 3]))
    np.testing.assert_array_equal(res.metrics["realised_regret"], res.metrics["regret"])  # deterministic MDP
    opt = fixed(np.asarray(backward_induction(m).policy))
    res = sim.run(opt, m, horizon=10, n_reps=3, seed=0)
    assert np.all(res.metrics["regret"] == 0.0)


def test_initial_state_is_an_environment_setting():
    m = two_state(3)
    stay = fixed(np.zeros((3, 2)))
    res = sim.run(stay, episodic(m, initial_state=1), horizon=4, n_reps=2, seed=0)
    assert np.all(res.metrics["regret"] == 0.0)  # state 1 pays 1 at every stage whatever the action
    assert res.environment_params["initial_state"] == 1
    named = episodic(m, 1, name="two_state", params={"h": 3})
    assert sim.run(stay, named, horizon=2, n_reps=1).environment == "two_state"


def test_realised_regret_has_mean_of_expected():
    # the optimal policy has zero expected regret; its realised regret is a sum of centred Bernoulli terms
    m = coin(2, 0.3)
    res = sim.run(fixed(np.zeros((2, 2))), m, horizon=50, n_reps=2000, seed=1)
    assert np.all(res.metrics["regret"] == 0.0)
    final = res.metrics["realised_regret"][-1]
    assert abs(final.mean()) < 5 * final.std() / np.sqrt(final.size)
    assert final.std() > 0


def test_batch_independence_and_reproducibility():
    g = garnet(4, 2, 3, seed=2)
    m = FiniteHorizonMDP.stationary(g.transitions, g.rewards, 3)
    learner = ucbvi("rlberry")
    full = sim.run(learner, m, 40, 5, seed=11)
    again = sim.run(learner, m, 40, 5, seed=11)
    np.testing.assert_array_equal(full.metrics["regret"], again.metrics["regret"])
    for r in (0, 3):
        one = sim.run(learner, m, 40, 1, seed=11, rep_offset=r)
        np.testing.assert_array_equal(one.metrics["regret"][:, 0], full.metrics["regret"][:, r])
        np.testing.assert_array_equal(one.metrics["realised_regret"][:, 0], full.metrics["realised_regret"][:, r])
    other = sim.run(learner, m, 40, 5, seed=12)
    assert not np.array_equal(other.metrics["realised_regret"], full.metrics["realised_regret"])
    assert full.seed == int(seed_to_uint64(11))


def test_episodes_use_the_engine_environment_keys():
    # the trajectory of episode k of replication r is sample_episodes under round_key(rep_key(seed, r), k)
    m = two_state(3)
    q = coin(3, 0.4)
    rec = []

    def log(st, pi, traj, keys):
        rec.append(traj.states.copy())
        return st

    learner = sim.Learner("zero", "tabular_episode", lambda spec, n, keys=None, xp=None: n,
                          lambda n, obs, keys: (np.zeros((n, 3, 2), dtype=np.int64), n), log, {})
    sim.run(learner, q, horizon=3, n_reps=4, seed=9, rep_offset=2)
    rk = rep_key(np.full(4, np.uint64(9)), np.arange(2, 6, dtype=np.uint64))
    for k in range(3):
        keys = round_key(rk, np.full(4, k, dtype=np.uint64))
        np.testing.assert_array_equal(rec[k], sample_episodes(q, np.zeros((4, 3, 2), dtype=np.int64), keys, 0)[0])
    assert m.spec.unit == "episode"


def test_default_checkpoints_are_the_engine_grid():
    res = sim.run(fixed(np.zeros((2, 2))), two_state(2), horizon=300, n_reps=1, seed=0)
    np.testing.assert_array_equal(res.checkpoints, sim.checkpoint_grid(300))


def test_registered_garnet_episodic():
    reg = sim.get_environment("garnet_episodic")
    assert reg.family == "mdp" and reg.feedback == "tabular_episode"
    env = reg(n_states=5, n_actions=2, episode_length=4, seed=0)
    assert isinstance(env, EpisodicMDP) and env.model.transitions.shape == (4, 5, 2, 5)
    res = sim.run(sim.get_learner("ucbvi")(bonus="rlberry"), env, horizon=30, n_reps=2, seed=0)
    assert res.environment == "garnet_episodic" and res.environment_params["episode_length"] == 4
    assert res.learner == "ucbvi" and res.learner_params["bonus"] == "rlberry"


def test_feedback_kinds_keep_tabular_and_mixture_learners_apart():
    from expertlab.mdp import ucrl_vtr

    mix = hard_linear_mixture(1, horizon=3, gap=0.1)
    with pytest.raises(ValueError, match="feedback"):
        sim.run(ucbvi(), mix, horizon=5, n_reps=1)
    with pytest.raises(ValueError, match="feedback"):
        sim.run(ucrl_vtr(), mix.to_finite_horizon(), horizon=5, n_reps=1)
    sim.run(ucbvi(), mix.to_finite_horizon(), horizon=5, n_reps=1)  # the tabular view of the mixture is fine


def test_validation():
    m = two_state(2)
    learner = fixed(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="env"):
        sim.run(learner, garnet(2, 2, 2), 5, 1)
    batched = FiniteHorizonMDP(np.stack([m.transitions] * 2), np.stack([m.rewards] * 2))
    with pytest.raises(ValueError, match="single MDP"):
        sim.run(learner, batched, 5, 1)
    with pytest.raises(ValueError, match="single MDP"):
        episodic(batched)
    with pytest.raises(TypeError, match="FiniteHorizonMDP"):
        episodic(garnet(2, 2, 2))
    with pytest.raises(ValueError, match="horizon"):
        sim.run(learner, m, 0, 1)
    with pytest.raises(ValueError, match="n_reps"):
        sim.run(learner, m, 5, 0)
    with pytest.raises(ValueError, match="initial_state"):
        episodic(m, initial_state=2)
    with pytest.raises(ValueError, match="checkpoints"):
        sim.run(learner, m, 5, 1, checkpoints=[0, 3])
    bad = sim.Learner("bad", "tabular_episode", lambda spec, n, keys=None, xp=None: n,
                      lambda n, obs, keys: (np.zeros((n, 2), dtype=np.int64), n), lambda st, pi, tr, keys: st, {})
    with pytest.raises(ValueError, match="policy of shape"):
        sim.run(bad, m, 5, 1)
    out_of_range = fixed(np.full((2, 2), 2))
    with pytest.raises(ValueError, match="actions in"):
        sim.run(out_of_range, m, 5, 1)
    with pytest.raises(ValueError, match="actions in"):
        evaluate_markov_policy(m, np.full((1, 2, 2), 2))
    with pytest.raises(ValueError, match="integer array"):
        evaluate_markov_policy(m, np.zeros((1, 2, 2)))
    with pytest.raises(ValueError, match="number of episodes"):
        ucbvi().init(m.spec, 1)  # spec.horizon is filled in by sim.run
    ucbvi().init(dataclasses.replace(m.spec, horizon=5), 1)
