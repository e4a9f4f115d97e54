"""The episodic driver: exact policy values by hand, trajectory sampling, regret bookkeeping, batching."""

import numpy as np
import pytest

from expertlab._random import rep_key, round_key, seed_to_uint64
from expertlab.mdp import (EpisodicLearner, FiniteHorizonMDP, backward_induction, evaluate_markov_policy,
                           run_episodes, sample_episodes)
from expertlab.mdp.instances import garnet


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
    return EpisodicLearner(name, {}, lambda spec, n, seed: n,
                           lambda n: np.broadcast_to(pol, (n, *pol.shape)).copy(), lambda st, s, a, r: st)


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
    s, _, _ = sample_episodes(coin(1, 0.3), np.zeros((n, 1, 2), dtype=np.int64), keys, 0)
    freq = s[:, 1].mean()
    assert abs(freq - 0.3) < 5 * np.sqrt(0.3 * 0.7 / n)


def test_regret_of_fixed_policies_is_exact():
    m = two_state(3)  # V* = 2 from state 0
    res = run_episodes(fixed(np.zeros((3, 2))), m, n_episodes=10, n_reps=3, seed=0, checkpoints=[1, 5, 10])
    np.testing.assert_array_equal(res.regret, np.array([[2.0] * 3, [10.0] * 3, [20.0] * 3]))
    np.testing.assert_array_equal(res.realised_regret, res.regret)  # deterministic MDP
    opt = fixed(np.asarray(backward_induction(m).policy))
    res = run_episodes(opt, m, n_episodes=10, n_reps=3, seed=0)
    assert res.optimal_value == 2.0 and np.all(res.regret == 0.0)


def test_realised_regret_has_mean_of_expected():
    # the optimal policy has zero expected regret; its realised regret is a sum of centred Bernoulli terms
    m = coin(2, 0.3)
    res = run_episodes(fixed(np.zeros((2, 2))), m, n_episodes=50, n_reps=2000, seed=1)
    assert np.all(res.regret == 0.0)
    final = res.realised_regret[-1]
    assert abs(final.mean()) < 5 * final.std() / np.sqrt(final.size)
    assert final.std() > 0


def test_batch_independence_and_reproducibility():
    from expertlab.mdp import ucbvi
    g = garnet(4, 2, 3, seed=2)
    m = FiniteHorizonMDP.stationary(g.transitions, g.rewards, 3)
    learner = ucbvi("rlberry")
    full = run_episodes(learner, m, 40, 5, seed=11)
    again = run_episodes(learner, m, 40, 5, seed=11)
    np.testing.assert_array_equal(full.regret, again.regret)
    for r in (0, 3):
        one = run_episodes(learner, m, 40, 1, seed=11, rep_offset=r)
        np.testing.assert_array_equal(one.regret[:, 0], full.regret[:, r])
        np.testing.assert_array_equal(one.realised_regret[:, 0], full.realised_regret[:, r])
    other = run_episodes(learner, m, 40, 5, seed=12)
    assert not np.array_equal(other.realised_regret, full.realised_regret)
    assert full.seed == int(seed_to_uint64(11))


def test_default_checkpoints_end_at_horizon():
    res = run_episodes(fixed(np.zeros((2, 2))), two_state(2), n_episodes=300, n_reps=1, seed=0)
    assert res.checkpoints[-1] == 300 and res.checkpoints[0] == 1
    assert np.all(np.diff(res.checkpoints) > 0)


def test_validation():
    m = two_state(2)
    learner = fixed(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="learner"):
        run_episodes(object(), m, 5, 1)
    with pytest.raises(TypeError, match="mdp"):
        run_episodes(learner, garnet(2, 2, 2), 5, 1)
    batched = FiniteHorizonMDP(np.stack([m.transitions] * 2), np.stack([m.rewards] * 2))
    with pytest.raises(ValueError, match="single MDP"):
        run_episodes(learner, batched, 5, 1)
    with pytest.raises(ValueError, match="n_episodes"):
        run_episodes(learner, m, 0, 1)
    with pytest.raises(ValueError, match="n_reps"):
        run_episodes(learner, m, 5, 0)
    with pytest.raises(ValueError, match="initial_state"):
        run_episodes(learner, m, 5, 1, initial_state=2)
    for ck in ([0, 3], [3, 2], [1, 6], [1.0, 2.0]):
        with pytest.raises(ValueError, match="checkpoints"):
            run_episodes(learner, m, 5, 1, checkpoints=ck)
    bad = EpisodicLearner("bad", {}, lambda spec, n, seed: n, lambda n: np.zeros((n, 2), dtype=np.int64),
                          lambda st, s, a, r: st)
    with pytest.raises(ValueError, match="policy of shape"):
        run_episodes(bad, m, 5, 1)
    with pytest.raises(ValueError, match="actions in"):
        evaluate_markov_policy(m, np.full((1, 2, 2), 2))
    with pytest.raises(ValueError, match="integer array"):
        evaluate_markov_policy(m, np.zeros((1, 2, 2)))
