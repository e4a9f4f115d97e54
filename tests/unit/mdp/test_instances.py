"""Instances: valid kernels, seeding, batch = one at a time, hand-checked structure."""

import numpy as np
import pytest

from expertlab.mdp import policy_iteration
from expertlab.mdp.instances import (INSTANCES, forest, garnet, greedy_trap_mixture, gridworld, random_linear_mixture,
                                     river_swim, two_point_lower_bound)


def test_garnet_structure_and_seeding():
    m = garnet(10, 3, 4, n_mdps=6, seed=5)
    assert m.transitions.shape == (6, 10, 3, 10)
    assert np.all((m.transitions > 0).sum(axis=-1) == 4)
    assert np.all((m.rewards >= 0) & (m.rewards <= 1))
    single = garnet(10, 3, 4, seed=5)
    np.testing.assert_array_equal(single.transitions, m.transitions[0])  # MDP 0 depends on (seed, 0) only
    np.testing.assert_array_equal(garnet(10, 3, 4, n_mdps=6, seed=5).transitions, m.transitions)
    assert not np.array_equal(garnet(10, 3, 4, seed=6).transitions, single.transitions)
    with pytest.raises(ValueError, match="branching"):
        garnet(3, 2, 4)


def test_gridworld_by_hand():
    m = gridworld(2, 2, slip=0.2, gamma=0.9)
    # from cell 0 (top-left) "up" hits the wall: stays with 1 - 0.2 + 0.2 * 2/4 (up and left both stay)
    np.testing.assert_allclose(m.transitions[0, 0], [0.9, 0.05, 0.05, 0.0])
    np.testing.assert_allclose(m.transitions[3, 2], [0, 0, 0, 1.0])  # goal is absorbing
    v = policy_iteration(m).values
    assert v[3] == pytest.approx(1 / (1 - 0.9))
    with pytest.raises(ValueError, match="slip"):
        gridworld(2, 2, slip=1.5)


def test_river_swim_optimal_policy_swims_right():
    res = policy_iteration(river_swim(6, gamma=0.95))
    assert np.all(res.policy == 1)


def test_forest_by_hand():
    m = forest(3, r1=4, r2=2, p=0.1)
    np.testing.assert_allclose(m.transitions[:, 0], [[0.1, 0.9, 0], [0.1, 0, 0.9], [0.1, 0, 0.9]])
    np.testing.assert_allclose(m.transitions[:, 1], [[1, 0, 0]] * 3)
    np.testing.assert_allclose(m.rewards, [[0, 0], [0, 1], [4, 2]])


def test_random_linear_mixture():
    lm = random_linear_mixture(6, 2, dim=3, n_mdps=4, seed=1)
    assert lm.features.shape == (3, 6, 2, 6)
    np.testing.assert_allclose(lm.theta.sum(axis=-1), 1.0)
    one = random_linear_mixture(6, 2, dim=3, seed=1)
    np.testing.assert_array_equal(one.theta, lm.theta[0])
    np.testing.assert_allclose(lm.transitions[2], np.einsum("i,isat->sat", lm.theta[2], lm.features))


def test_registry():
    assert set(INSTANCES) == {"gridworld", "river_swim", "garnet", "forest", "random_linear_mixture",
                              "hard_linear_mixture"}


def test_greedy_trap_mixture_structure_and_values():
    m = greedy_trap_mixture(0.9, 0.3, gamma=0.75)
    phi = m.features
    assert phi.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(phi.sum(axis=-1), 1.0)
    differ = np.argwhere(np.any(phi[0] != phi[1], axis=-1))
    assert differ.tolist() == [[0, 1]]  # the kernels disagree only on moving from the start
    np.testing.assert_allclose(m.transitions[0, 1], [0.0, 0.9, 0.1])
    np.testing.assert_allclose(m.transitions[1:, :, 0], 1.0)  # states 1 and 2 return to the start
    # moving forever from 0 is worth gamma p / (1 - gamma^2), staying r0 / (1 - gamma)
    move, stay = 0.75 * 0.9 / (1 - 0.75 ** 2), 0.3 / 0.25
    assert move > stay
    sol = policy_iteration(m.to_tabular())
    assert sol.values[0] == pytest.approx(move) and sol.policy[0] == 1
    # under theta = (1/2, 1/2), the estimate a learner that only stays converges to, staying is better
    half = policy_iteration(greedy_trap_mixture(0.5, 0.3, gamma=0.75).to_tabular())
    assert half.values[0] == pytest.approx(stay) and half.policy[0] == 0


@pytest.mark.parametrize("kwargs, name", [({"p_good": 0.0}, "p_good"), ({"p_good": 1.0}, "p_good"),
                                          ({"stay_reward": 1.5}, "stay_reward"), ({"gamma": 1.0}, "gamma"),
                                          ({"gamma": -0.1}, "gamma")])
def test_greedy_trap_mixture_names_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        greedy_trap_mixture(**kwargs)


def test_two_point_lower_bound_loses_the_gap_per_stage_for_every_wrong_first_action():
    from expertlab.mdp import backward_induction

    gap, H = 0.05, 4
    m = two_point_lower_bound(gap, n_actions=3, horizon=H)
    assert m.transitions.shape == (H, 3, 3, 3)
    np.testing.assert_allclose(m.transitions.sum(axis=-1), 1.0)
    sol = backward_induction(m)
    # by hand: the last action earns (1/2 + gap)(H - 1) from the start, the others (H - 1)/2
    assert sol.values[0, 0] == pytest.approx((0.5 + gap) * (H - 1), abs=1e-12)
    assert sol.policy[0, 0] == 2
    q_wrong = 0.5 * (H - 1)
    assert sol.values[0, 0] - q_wrong == pytest.approx(gap * (H - 1), abs=1e-12)
    # the wrong variant: with no gap every action is optimal and nothing is lost
    assert backward_induction(two_point_lower_bound(0.0, n_actions=3, horizon=H)).values[0, 0] == pytest.approx(
        0.5 * (H - 1))


@pytest.mark.parametrize("kwargs, name", [({"gap": -0.1}, "gap"), ({"gap": 0.6}, "gap"),
                                          ({"gap": 0.1, "n_actions": 1}, "n_actions"),
                                          ({"gap": 0.1, "horizon": 1}, "horizon")])
def test_two_point_lower_bound_names_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        two_point_lower_bound(**kwargs)
