"""MoESD cost model: N(t) by hand and against Monte Carlo routing, efficiency and speedup, least-squares fit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from expertlab.mixtures import (MoETimeModel, acceptance_length, expected_activated_experts, fit_moe_time_model,
                                sd_speedup, simulate_activated_experts, target_efficiency)


def test_activated_experts_by_hand():
    N = expected_activated_experts(np.array([0, 1, 2, 3]), 8, 2)
    # each expert is missed by one token w.p. 3/4: N(t) = 8 (1 - (3/4)^t)
    np.testing.assert_allclose(N, [0.0, 2.0, 3.5, 8 * (1 - 27 / 64)], rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(expected_activated_experts([0, 1, 5], 4, 4), [0.0, 4.0, 4.0])
    assert expected_activated_experts(1, 1, 1) == 1.0


@pytest.mark.parametrize("t, E, K", [(1, 64, 8), (3, 64, 8), (16, 64, 8), (40, 60, 4), (5, 8, 2)])
def test_expectation_matches_uniform_top_k_routing(t, E, K):
    R = 4000
    n = simulate_activated_experts(t, E, K, R, seed=11)
    assert n.shape == (R,) and np.all((n >= min(K, E)) & (n <= min(E, t * K)))
    exact = float(expected_activated_experts(t, E, K))
    se = n.std(ddof=1) / math.sqrt(R)
    # exact expectation: the Monte Carlo mean lies within 4 standard errors (a two-sided 6e-5 event otherwise)
    assert abs(n.mean() - exact) <= 4 * se + 1e-12
    if t == 1:
        assert np.all(n == K)                                       # one token always hits exactly K experts


def test_monte_carlo_variance_matches_the_occupancy_formula():
    # Var = E q^t (1 - E q^t) + E (E - 1) r^t with q = 1 - K/E and r = P(two given experts both missed)
    E, K, t, R = 16, 2, 6, 20000
    q = 1 - K / E
    r = (E - K) * (E - K - 1) / (E * (E - 1))
    miss = E * q ** t
    var = miss * (1 - miss) + E * (E - 1) * r ** t
    n = simulate_activated_experts(t, E, K, R, seed=3)
    # sample variance of R draws: relative standard error about sqrt(2 / R) (1 %); allow 5 %
    assert n.var(ddof=1) == pytest.approx(var, rel=0.05)


def test_simulation_streams_are_per_replication():
    a = simulate_activated_experts(7, 32, 4, 10, seed=5)
    b = simulate_activated_experts(7, 32, 4, 4, seed=5)
    np.testing.assert_array_equal(a[:4], b)
    assert not np.array_equal(a, simulate_activated_experts(7, 32, 4, 10, seed=6))
    assert simulate_activated_experts(0, 32, 4, 3).tolist() == [0, 0, 0]


def test_acceptance_length():
    assert acceptance_length(0.0, 5) == 1.0
    assert acceptance_length(0.8, 3) == pytest.approx(1 + 0.8 + 0.64 + 0.512)
    assert acceptance_length(1.0, 4) == 5.0


def test_efficiency_and_speedup_by_hand():
    m = MoETimeModel(fixed=2.0, per_expert=0.5, per_token=0.1, n_experts=8, top_k=2)
    # T(t) = 2 + 0.5 * 8 (1 - 0.75^t) + 0.1 t
    T = lambda t: 2 + 4 * (1 - 0.75 ** t) + 0.1 * t   # noqa: E731
    np.testing.assert_allclose(m.time(np.array([1, 4])), [T(1), T(4)], rtol=1e-14)
    assert target_efficiency(m, 2, 1) == pytest.approx(T(2) / T(4))
    assert target_efficiency(m, 3, 0) == 1.0
    sigma = 1 + 0.6 + 0.36
    assert sd_speedup(m, 2, 2, 0.6, 0.3) == pytest.approx(sigma * T(2) / (2 * 0.3 + T(6)))
    # speculative decoding with a free draft and alpha = 1 gains exactly (gamma + 1) times the efficiency
    assert sd_speedup(m, 2, 3, 1.0, 0.0) == pytest.approx(4 * target_efficiency(m, 2, 3))
    assert 0 < target_efficiency(m, 1, 7) < 1


def test_fit_recovers_parameters_from_noiseless_data():
    truth = MoETimeModel(fixed=1.3, per_expert=0.04, per_token=0.002, n_experts=64, top_k=6)
    t = np.array([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128, 256])
    fit = fit_moe_time_model(t, truth.time(t), 64, 6)
    assert fit.success
    got = [fit.model.fixed, fit.model.per_expert, fit.model.per_token]
    np.testing.assert_allclose(got, [1.3, 0.04, 0.002], rtol=1e-8)
    assert fit.cost < 1e-20 and np.all(np.abs(fit.residuals) < 1e-10)


def test_fit_recovers_parameters_from_noisy_data_with_calibrated_errors():
    truth = MoETimeModel(fixed=1.0, per_expert=0.05, per_token=0.004, n_experts=32, top_k=4)
    t = np.unique(np.round(np.geomspace(1, 400, 24))).astype(int)
    mean = truth.time(t)
    want = np.array([1.0, 0.05, 0.004])
    rng = np.random.default_rng(0)
    n_fits, z = 300, []
    for _ in range(n_fits):
        fit = fit_moe_time_model(t, mean + rng.normal(0.0, 0.01, size=t.size), 32, 4)
        est = np.array([fit.model.fixed, fit.model.per_expert, fit.model.per_token])
        z.append((est - want) / fit.stderr)
    z = np.abs(np.array(z))
    assert np.all(z < 6)
    # +-2 standard errors of a t-statistic with ~20 degrees of freedom cover about 94 %;
    # 300 fits give a binomial standard error of 1.4 %, so the coverage lies in [0.88, 0.99]
    cover = np.mean(z < 2, axis=0)
    assert np.all((cover > 0.88) & (cover < 0.99)), cover


def test_bad_arguments():
    with pytest.raises(ValueError, match="top_k must be at most n_experts"):
        expected_activated_experts(3, 4, 5)
    with pytest.raises(ValueError, match="tokens must be non-negative"):
        expected_activated_experts(-1, 4, 2)
    with pytest.raises(ValueError, match="tokens contains NaN"):
        expected_activated_experts([np.nan], 4, 2)
    with pytest.raises(TypeError, match="n_experts must be an integer"):
        expected_activated_experts(3, 4.5, 2)
    with pytest.raises(ValueError, match="alpha must be <= 1"):
        acceptance_length(1.5, 2)
    with pytest.raises(ValueError, match="per_expert must be >= 0"):
        MoETimeModel(1.0, -0.1, 0.0, 8, 2)
    m = MoETimeModel(1.0, 0.1, 0.0, 8, 2)
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        target_efficiency(m, 0, 1)
    with pytest.raises(TypeError, match="model must be a MoETimeModel"):
        sd_speedup("model", 1, 1, 0.5, 0.1)
    with pytest.raises(ValueError, match="draft_time must be >= 0"):
        sd_speedup(m, 1, 1, 0.5, -0.1)
    with pytest.raises(ValueError, match="at least 3 distinct"):
        fit_moe_time_model([1, 1, 2, 2], [1.0, 1.0, 2.0, 2.0], 8, 2)
    with pytest.raises(ValueError, match="same length"):
        fit_moe_time_model([1, 2, 3], [1.0, 2.0], 8, 2)
    with pytest.raises(ValueError, match="times contains NaN"):
        fit_moe_time_model([1, 2, 3], [1.0, np.inf, 2.0], 8, 2)
