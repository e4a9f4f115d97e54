"""Models: validation of every argument, shapes, the linear-mixture kernel."""

import numpy as np
import pytest

from expertlab.mdp import FiniteHorizonMDP, LinearMixtureMDP, TabularMDP


def _p():
    return np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.5, 0.5], [0.2, 0.8]]])


def test_valid_and_batched():
    m = TabularMDP(_p(), np.zeros((2, 2)), 0.9)
    assert (m.n_states, m.n_actions, m.batch_shape) == (2, 2, ())
    b = TabularMDP(np.stack([_p()] * 3), np.zeros((3, 2, 2)), 0.0)
    assert b.batch_shape == (3,)


@pytest.mark.parametrize("bad, msg", [
    (lambda p: p * 1.1, "sum to 1"),
    (lambda p: p - 0.6 * (p == 0.5) + 0.6 * (p == 0.5) * np.array([0.0, 2.0]), "negative"),
    (lambda p: np.where(p == 1.0, np.nan, p), "NaN"),
])
def test_bad_transitions(bad, msg):
    with pytest.raises(ValueError, match=msg):
        TabularMDP(bad(_p()), np.zeros((2, 2)), 0.9)


def test_negative_entry_even_if_rows_sum_to_one():
    p = _p().copy()
    p[1, 0] = [1.5, -0.5]
    with pytest.raises(ValueError, match="transitions has negative"):
        TabularMDP(p, np.zeros((2, 2)), 0.9)


def test_bad_shapes_and_types():
    with pytest.raises(ValueError, match=r"transitions must have shape \(\.\.\., S, A, S\)"):
        TabularMDP(np.ones((2, 2, 3)) / 3, np.zeros((2, 2)), 0.9)
    with pytest.raises(ValueError, match="rewards must have shape"):
        TabularMDP(_p(), np.zeros((2, 3)), 0.9)
    with pytest.raises(TypeError, match="transitions must be an array"):
        TabularMDP([[[1.0]]], np.zeros((1, 1)), 0.9)
    with pytest.raises(TypeError, match="floating"):
        TabularMDP(np.ones((1, 1, 1), dtype=int), np.zeros((1, 1)), 0.9)


@pytest.mark.parametrize("gamma", [1.0, -0.1, 1.5])
def test_bad_gamma(gamma):
    with pytest.raises(ValueError, match="gamma"):
        TabularMDP(_p(), np.zeros((2, 2)), gamma)


def test_gamma_nan_and_type():
    with pytest.raises(ValueError, match="gamma must be finite"):
        TabularMDP(_p(), np.zeros((2, 2)), float("nan"))
    with pytest.raises(TypeError, match="gamma"):
        TabularMDP(_p(), np.zeros((2, 2)), "0.9")


def test_rewards_checks():
    with pytest.raises(ValueError, match="rewards contains NaN"):
        TabularMDP(_p(), np.array([[0.0, np.inf], [0.0, 0.0]]), 0.9)
    with pytest.raises(ValueError, match=r"rewards must lie in \[0.0, 1.0\]"):
        TabularMDP(_p(), np.array([[0.0, 2.0], [0.0, 0.0]]), 0.9, reward_range=(0.0, 1.0))
    with pytest.raises(ValueError, match="reward_range"):
        TabularMDP(_p(), np.zeros((2, 2)), 0.9, reward_range=(1.0, 0.0))


def test_finite_horizon():
    m = FiniteHorizonMDP.stationary(_p(), np.ones((2, 2)), 4)
    assert (m.horizon, m.n_states, m.batch_shape) == (4, 2, ())
    assert m.transitions.shape == (4, 2, 2, 2)
    with pytest.raises(ValueError, match=r"\(\.\.\., H, S, A, S\)"):
        FiniteHorizonMDP(_p(), np.ones((2, 2)))
    with pytest.raises(ValueError, match="horizon"):
        FiniteHorizonMDP.stationary(_p(), np.ones((2, 2)), 0)
    bad = np.stack([_p(), _p() * 0.5])
    with pytest.raises(ValueError, match="sum to 1"):
        FiniteHorizonMDP(bad, np.ones((2, 2, 2)))


def _phi():
    stay = np.eye(2)[:, None, :].repeat(2, axis=1)  # (S, A, S)
    swap = np.eye(2)[::-1][:, None, :].repeat(2, axis=1)
    return np.stack([stay, swap])


def test_linear_mixture_kernel_by_hand():
    m = LinearMixtureMDP(_phi(), np.array([0.3, 0.7]), np.zeros((2, 2)), 0.5)
    np.testing.assert_allclose(m.transitions[0, 1], [0.3, 0.7])
    np.testing.assert_allclose(m.transitions[1, 0], [0.7, 0.3])
    v = np.array([1.0, 5.0])
    z = m.value_features(v)  # z[s, a, i] = phi_i(.|s, a) . v
    np.testing.assert_allclose(z[0, 0], [1.0, 5.0])
    np.testing.assert_allclose(z[1, 1], [5.0, 1.0])
    np.testing.assert_allclose(z @ m.theta, m.transitions @ v)
    b = LinearMixtureMDP(_phi(), np.array([[1.0, 0.0], [0.5, 0.5]]), np.zeros((2, 2)), 0.5)
    assert b.to_tabular().batch_shape == (2,)
    np.testing.assert_allclose(b.transitions[1], np.full((2, 2, 2), 0.5))


@pytest.mark.parametrize("theta", [np.array([0.5, 0.6]), np.array([1.2, -0.2]), np.array([np.nan, 1.0])])
def test_theta_off_simplex(theta):
    with pytest.raises(ValueError, match="theta"):
        LinearMixtureMDP(_phi(), theta, np.zeros((2, 2)), 0.5)


def test_features_must_be_kernels():
    with pytest.raises(ValueError, match="features"):
        LinearMixtureMDP(_phi() * 0.5, np.array([0.5, 0.5]), np.zeros((2, 2)), 0.5)
    with pytest.raises(ValueError, match="theta must have shape"):
        LinearMixtureMDP(_phi(), np.array([1.0]), np.zeros((2, 2)), 0.5)
