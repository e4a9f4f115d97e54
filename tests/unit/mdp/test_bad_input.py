"""Bad input to the MDP planners, models and instances raises an error naming the argument (no silent wrong answer)."""

import numpy as np
import pytest

from expertlab._validation import MAX_ARRAY_ELEMENTS, check_array_size
from expertlab.mdp import check_kernel, policy_evaluation, policy_iteration, robust_value_iteration, worst_case
from expertlab.mdp.instances import forest, garnet, gridworld, random_linear_mixture, river_swim


def chain():
    """Two states, two actions: action 0 stays, action 1 swaps; reward 1 in state 0."""
    p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]])
    r = np.array([[1.0, 1.0], [0.0, 0.0]])
    return p, r


# --- policy_evaluation shares the checks of TabularMDP / value_iteration ----------------------------------------

@pytest.mark.parametrize("gamma", [1.5, 1.0, -0.1, float("nan"), float("inf")])
def test_policy_evaluation_rejects_a_bad_gamma(gamma):
    p, r = chain()
    with pytest.raises(ValueError, match="gamma"):
        policy_evaluation(p, r, gamma, np.array([0, 0]))


def test_policy_evaluation_rejects_a_non_numeric_gamma():
    p, r = chain()
    with pytest.raises(TypeError, match="gamma"):
        policy_evaluation(p, r, "0.5", np.array([0, 0]))


@pytest.mark.parametrize("policy", [np.array([-1, 0]), np.array([0, 2]), [-1, 0]])
def test_policy_evaluation_rejects_an_action_out_of_range(policy):
    p, r = chain()
    with pytest.raises(ValueError, match=r"policy must hold actions in \[0, 1\]"):
        policy_evaluation(p, r, 0.5, policy)


def test_policy_evaluation_rejects_a_float_policy():
    p, r = chain()
    with pytest.raises(TypeError, match="policy must be an integer array"):
        policy_evaluation(p, r, 0.5, np.array([1.7, 0.0]))


def test_policy_evaluation_rejects_a_policy_of_the_wrong_shape():
    p, r = chain()
    with pytest.raises(ValueError, match="policy must have shape"):
        policy_evaluation(p, r, 0.5, np.array([0, 0, 0]))


def test_policy_evaluation_rejects_a_bad_kernel_and_bad_rewards():
    p, r = chain()
    with pytest.raises(ValueError, match="transitions.*sum to 1"):
        policy_evaluation(0.5 * p, r, 0.5, np.array([0, 0]))
    with pytest.raises(ValueError, match="rewards contains NaN"):
        policy_evaluation(p, np.full_like(r, np.nan), 0.5, np.array([0, 0]))


def test_policy_evaluation_still_accepts_a_list_policy():
    p, r = chain()
    np.testing.assert_allclose(policy_evaluation(p, r, 0.5, [0, 1]), [2.0, 1.0])


def test_policy_iteration_rejects_a_float_policy0():
    p, r = chain()
    with pytest.raises(TypeError, match="policy0 must be an integer array"):
        policy_iteration(p, r, 0.5, policy0=np.array([0.0, 1.0]))


# --- check_kernel(atol) -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("atol", [float("nan"), float("inf"), -1.0])
def test_check_kernel_rejects_a_bad_atol(atol):
    p, _ = chain()
    with pytest.raises(ValueError, match="atol"):
        check_kernel(p, atol=atol)


def test_check_kernel_rejects_a_non_numeric_atol():
    p, _ = chain()
    with pytest.raises(TypeError, match="atol"):
        check_kernel(p, atol="1e-8")


# --- radius must be real numbers --------------------------------------------------------------------------------

@pytest.mark.parametrize("radius", ["0.1", b"0.1", 0.1 + 0j, np.array(["0.1"]), np.array([0.1], dtype=object)])
def test_worst_case_rejects_a_non_real_radius(radius):
    with pytest.raises(TypeError, match="radius"):
        worst_case(np.array([0.0, 1.0]), np.array([0.5, 0.5]), radius)


def test_robust_value_iteration_rejects_a_string_radius():
    p, r = chain()
    with pytest.raises(TypeError, match="radius"):
        robust_value_iteration(p, r, 0.5, radius="0.1")


# --- instance sizes are bounded before anything is allocated ----------------------------------------------------

@pytest.mark.parametrize("make, names", [
    (lambda: garnet(10**6, 3, 3), "n_states, n_actions, n_mdps"),
    (lambda: garnet(100, 3, 3, n_mdps=10**6), "n_states, n_actions, n_mdps"),
    (lambda: gridworld(10**5, 10), "n_rows, n_cols"),
    (lambda: river_swim(10**6), "n_states"),
    (lambda: forest(10**6), "n_states"),
    (lambda: random_linear_mixture(10**5, 3), "n_states, n_actions, dim"),
    (lambda: random_linear_mixture(4, 2, dim=10**5, n_mdps=10**5), "n_mdps, dim"),
])
def test_instances_refuse_sizes_beyond_the_array_limit(make, names):
    with pytest.raises(ValueError, match=f"{names} too large"):
        make()


def test_check_array_size():
    check_array_size((2**16, 2**15), "n")  # exactly at the limit
    with pytest.raises(ValueError, match=r"n, m too large: .*shape \(65536, 32769\).*GiB"):
        check_array_size((2**16, 2**15 + 1), ("n", "m"))
    with pytest.raises(ValueError, match="rows too large"):
        check_array_size((11,), "rows", max_elements=10)
    assert MAX_ARRAY_ELEMENTS == 2**31
