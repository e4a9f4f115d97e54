"""Robust inner problems and robust value iteration: hand-worked cases, conventions, bad input."""

import numpy as np
import pytest

from expertlab.mdp import policy_iteration, robust_value_iteration, worst_case
from expertlab.mdp.instances import garnet

V = np.array([0.0, 1.0, 2.0])
Q = np.array([0.2, 0.3, 0.5])


def test_tv_by_hand():
    # radius 0.25: move 0.25 from the value-2 state to the value-0 state
    res = worst_case(V, Q, 0.25, "tv")
    np.testing.assert_allclose(res.distribution, [0.45, 0.3, 0.25])
    assert float(res.value) == pytest.approx(0.3 + 0.5)
    # radius 0.6: 0.5 from state 2, then 0.1 from state 1
    res = worst_case(V, Q, 0.6, "tv")
    np.testing.assert_allclose(res.distribution, [0.8, 0.2, 0.0], atol=1e-15)
    assert float(res.value) == pytest.approx(0.2)
    # radius >= 1 - q_min = 0.8: all mass on the minimum
    assert float(worst_case(V, Q, 0.8, "tv").value) == 0.0
    assert float(worst_case(V, Q, 0.0, "tv").value) == pytest.approx(Q @ V)


def test_l1_is_twice_tv():
    for rho in (0.1, 0.5, 1.2):
        assert float(worst_case(V, Q, rho, "l1").value) == pytest.approx(float(worst_case(V, Q, rho / 2, "tv").value))


def test_kl_two_point_closed_form():
    # v = (0, 1), q = (1/2, 1/2): p = (1/2 + t, 1/2 - t) with KL = rho; value = 1/2 - t
    rho = 0.1
    res = worst_case(np.array([0.0, 1.0]), np.array([0.5, 0.5]), rho, "kl")
    p0 = float(res.distribution[0])
    kl = p0 * np.log(2 * p0) + (1 - p0) * np.log(2 * (1 - p0))
    assert kl == pytest.approx(rho, abs=1e-9)
    assert float(res.value) == pytest.approx(1 - p0, abs=1e-10)


def test_chi2_unclipped_closed_form():
    # small radius: no clipping, value = E v - sqrt(rho Var v) (chi-square without the factor 1/2)
    rho = 0.01
    mean, var = Q @ V, Q @ (V - Q @ V) ** 2
    assert float(worst_case(V, Q, rho, "chi2").value) == pytest.approx(mean - np.sqrt(rho * var), abs=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="radius must be >= 0"):
        worst_case(V, Q, -0.1, "tv")
    with pytest.raises(ValueError, match="divergence"):
        worst_case(V, Q, 0.1, "wasserstein")
    with pytest.raises(ValueError, match="nominal"):
        worst_case(V, Q * 2, 0.1, "kl")
    with pytest.raises(ValueError, match="same shape"):
        worst_case(V, Q[:2], 0.1, "kl")
    with pytest.raises(ValueError, match="values contains NaN"):
        worst_case(np.array([np.nan, 0.0, 1.0]), Q, 0.1, "chi2")
    with pytest.raises(ValueError, match="radius must be finite"):
        worst_case(V, Q, np.inf, "tv")


def test_robust_vi_by_hand():
    # both states go to 0 or 1 with probability 1/2; reward 1 in state 1.  A TV radius 1/2 lets the adversary
    # send everything to state 0 (value 0): V_rob = (0, 1).  Nominal: V(0) = 0.5 * 0.5 (V0 + V1) ...
    p = np.array([[[0.5, 0.5]], [[0.5, 0.5]]])
    r = np.array([[0.0], [1.0]])
    res = robust_value_iteration(p, r, 0.5, radius=0.5, divergence="tv", epsilon=1e-12)
    np.testing.assert_allclose(res.values, [0.0, 1.0], atol=1e-11)
    np.testing.assert_allclose(res.worst_kernel[:, 0], [[1.0, 0.0], [1.0, 0.0]])
    # radius 1/4: the adversary moves 1/4 to state 0, p = (3/4, 1/4) from both states:
    # V0 = 0.5 (0.75 V0 + 0.25 V1), V1 = 1 + the same, so V1 - V0 = 1 and 0.625 V0 = 0.125 (V0 + 1): V0 = 1/4
    res = robust_value_iteration(p, r, 0.5, radius=0.25, divergence="tv", epsilon=1e-12)
    np.testing.assert_allclose(res.values, [0.25, 1.25], atol=1e-10)


@pytest.mark.parametrize("divergence", ["tv", "kl", "chi2"])
def test_robust_vi_batch_and_nominal(divergence):
    m = garnet(5, 2, 3, n_mdps=3, gamma=0.8, seed=4)
    nominal = policy_iteration(m).values
    zero = robust_value_iteration(m, radius=0.0, divergence=divergence, epsilon=1e-10)
    np.testing.assert_allclose(zero.values, nominal, atol=1e-9)
    b = robust_value_iteration(m, radius=0.2, divergence=divergence, epsilon=1e-10)
    assert np.all(b.values <= nominal + 1e-9) and bool(np.all(b.converged))
    for i in range(3):
        one = robust_value_iteration(m.transitions[i], m.rewards[i], 0.8, radius=0.2, divergence=divergence,
                                     epsilon=1e-10)
        np.testing.assert_allclose(one.values, b.values[i], rtol=0, atol=1e-12)
        assert int(one.n_iter) == int(b.n_iter[i])


def test_robust_vi_bad_radius():
    m = garnet(3, 2, 2, seed=0)
    with pytest.raises(ValueError, match="radius"):
        robust_value_iteration(m, radius=-1.0)


def test_radius_shape_is_checked():
    with pytest.raises(ValueError, match="radius must be a scalar or broadcastable"):
        worst_case(V[None].repeat(2, 0), Q[None].repeat(2, 0), np.array([0.1, 0.2, 0.3]), "tv")
    m = garnet(3, 2, 2, seed=0)
    with pytest.raises(ValueError, match="radius must be a scalar or broadcastable"):
        robust_value_iteration(m, radius=np.ones(4))
    with pytest.raises(TypeError, match="not both"):
        robust_value_iteration(m, m.rewards, 0.9, radius=0.1)
