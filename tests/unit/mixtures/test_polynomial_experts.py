"""Mixtures of polynomial experts: features and counts by hand, exact KL values, EM pieces, batches, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from expertlab.mixtures import (PolyMoEParams, SmoothRegressionTarget, fit_polynomial_moe, kl_risk, parameter_count,
                                poly_moe_log_density, polynomial_features, sample_polynomial_moe,
                                sample_smooth_regression)


def truth(n_reps=3):
    return PolyMoEParams(np.tile([1.0, 0.0], (n_reps, 1)), np.tile([[[3.0], [0.0]]], (n_reps, 1, 1)),
                         np.tile([[[0.5, 0.0, 1.0], [-0.5, 1.0, 0.0]]], (n_reps, 1, 1)),
                         np.tile([0.1, 0.2], (n_reps, 1)), degree=2)


def single(mean, var, degree=0):
    """One Gaussian expert with constant mean (the other coefficients zero) on one input."""
    coef = np.zeros((1, 1, degree + 1))
    coef[0, 0, 0] = mean
    return PolyMoEParams(np.zeros((1, 1)), np.zeros((1, 1, 1)), coef, np.full((1, 1), var), degree=degree)


def select(p, r):
    return PolyMoEParams(p.gate_bias[r:r + 1], p.gate_weight[r:r + 1], p.coef[r:r + 1], p.variance[r:r + 1],
                         degree=p.degree)


def test_polynomial_features_by_hand():
    # x = (2, 3), degree 2: 1, x1, x2, x1^2, x1 x2, x2^2
    assert polynomial_features(np.array([[2.0, 3.0]]), 2).tolist() == [[1.0, 2.0, 3.0, 4.0, 6.0, 9.0]]
    assert polynomial_features(np.zeros((4, 5, 3)), 0).shape == (4, 5, 1)


def test_parameter_count_by_hand():
    c = parameter_count(2, 3, 2)                 # J = C(5, 3) = 10, v = 1 * 3, variances 2
    assert (c.per_expert, c.gate, c.variances, c.total) == (10, 3, 2, 25)
    assert parameter_count(1, 0, 4).total == 2   # one constant expert and its variance, no gate


def test_kl_exact_for_single_gaussians():
    # KL(N(0, 1) || N(d, v)) = (1 + d^2) / (2 v) - 1/2 + log(v) / 2, whatever x is
    for d, v in ((0.7, 1.0), (0.0, 2.5), (-0.3, 0.4)):
        exact = (1.0 + d * d) / (2.0 * v) - 0.5 + 0.5 * math.log(v)
        r = kl_risk(single(d, v), single(0.0, 1.0), n_mc=10)
        assert r.mean[0] == pytest.approx(exact, rel=1e-10)
        assert r.stderr[0] == pytest.approx(0.0, abs=1e-12)


def test_kl_zero_at_truth_and_positive_elsewhere():
    t = truth(2)
    assert np.allclose(kl_risk(t, t, n_mc=200).mean, 0.0, atol=1e-12)
    other = PolyMoEParams(t.gate_bias, t.gate_weight, t.coef + 0.1, t.variance, degree=2)
    assert np.all(kl_risk(other, t, n_mc=200).mean > 1e-3)


def test_kl_against_smooth_target_is_the_mean_error_for_a_matching_variance():
    # one linear expert, target sin(pi x) + N(0, s^2), same variance: KL = E (f(x) - c0 - c1 x)^2 / (2 s^2)
    tg = SmoothRegressionTarget(noise_var=0.25)
    p = PolyMoEParams(np.zeros((1, 1)), np.zeros((1, 1, 1)), np.array([[[0.1, 0.8]]]), np.full((1, 1), 0.25), 1)
    r = kl_risk(p, tg, n_mc=20000)
    exact = (0.5 + 0.01 + 0.64 / 3.0 - 2 * 0.8 / math.pi) / (2 * 0.25)   # E sin^2 = 1/2, E x sin(pi x) = 1/pi
    assert abs(r.mean[0] - exact) < 4 * r.stderr[0]


def test_log_density_normalises_over_y():
    t = truth(1)
    X = np.array([[[-0.5], [0.3]]])
    y = np.linspace(-6, 6, 4001)
    dens = np.exp(poly_moe_log_density(X, np.broadcast_to(y, (1, 2, y.size)), t))
    assert np.allclose(np.trapezoid(dens, y, axis=-1), 1.0, atol=1e-8)


def test_single_expert_fit_is_least_squares():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (50, 1))
    y = 1 + 2 * X[:, 0] - X[:, 0] ** 2 + rng.normal(size=50)
    res = fit_polynomial_moe(X, y, 1, 2)
    Phi = np.column_stack([np.ones(50), X[:, 0], X[:, 0] ** 2])
    beta = np.linalg.lstsq(Phi, y, rcond=None)[0]
    assert np.allclose(res.params.coef[0, 0], beta, atol=1e-8)
    assert res.params.variance[0, 0] == pytest.approx(np.mean((y - Phi @ beta) ** 2))


def test_loglik_never_decreases_and_batch_independence():
    t = truth(3)
    X, y, _ = sample_polynomial_moe(400, t, seed=3)
    res = fit_polynomial_moe(X, y, 2, 2, batched=True, max_iter=60, tol=0.0)
    assert np.all(np.diff(res.loglik_path, axis=1) >= -1e-10)
    for r in range(3):
        alone = fit_polynomial_moe(X[r], y[r], 2, 2, max_iter=60, tol=0.0)
        assert np.allclose(alone.params.coef[0], res.params.coef[r], atol=1e-10)
        assert np.allclose(alone.loglik_path, res.loglik_path[r], atol=1e-12)


def test_sampler_reproducible_blockwise_and_follows_gate():
    t = truth(2)
    X, y, z = sample_polynomial_moe(20000, t, seed=5)
    X2, y2, z2 = sample_polynomial_moe(20000, select(t, 1), seed=5, first_rep=1)
    assert np.array_equal(X[1], X2[0]) and np.array_equal(y[1], y2[0]) and np.array_equal(z[1], z2[0])
    assert np.all(np.abs(X) <= 1)
    pi0 = 1.0 / (1.0 + np.exp(-(1.0 + 3.0 * X[..., 0])))
    d = (z == 0) - pi0                         # mean zero, each term bounded by 1
    assert np.all(np.abs(d.mean(axis=1)) < 4 * d.std(axis=1) / math.sqrt(20000))
    res = y[0][z[0] == 1] - (-0.5 + X[0, z[0] == 1, 0])
    assert res.var() == pytest.approx(0.2, rel=0.05)        # 4 se of a variance estimate on ~ 9000 points


def test_smooth_sampler_residuals():
    tg = SmoothRegressionTarget(noise_var=0.25)
    X, y, _ = sample_smooth_regression(20000, 2, tg, seed=1)
    e = y - np.sin(np.pi * X[..., 0])
    assert np.all(np.abs(e.mean(axis=1)) < 4 * 0.5 / math.sqrt(20000))
    assert np.allclose(e.var(axis=1), 0.25, rtol=0.04)


def test_explicit_init_and_slice_start_recover_truth():
    t = truth(2)
    X, y, _ = sample_polynomial_moe(4000, t, seed=2)
    for init in (t, "slices"):
        res = fit_polynomial_moe(X, y, 2, 2, init=init, batched=True)
        assert np.all(kl_risk(res.params, t, n_mc=500).mean < 0.02)


@pytest.mark.parametrize("kwargs, err", [
    (dict(X=np.full((10, 1), np.nan)), ValueError),
    (dict(X=np.zeros(10)), ValueError),
    (dict(y=np.zeros(9)), ValueError),
    (dict(degree=-1), ValueError),
    (dict(n_experts=0), ValueError),
    (dict(init="kmeans"), ValueError),
    (dict(init=3), TypeError),
    (dict(batched=1), TypeError),
    (dict(min_var=0.0), ValueError),
])
def test_fit_validation(kwargs, err):
    args = dict(X=np.zeros((10, 1)), y=np.zeros(10), n_experts=2, degree=1)
    args.update(kwargs)
    with pytest.raises(err):
        fit_polynomial_moe(args.pop("X"), args.pop("y"), args.pop("n_experts"), args.pop("degree"), **args)


def test_params_and_risk_validation():
    t = truth(1)
    with pytest.raises(ValueError, match="variance"):
        PolyMoEParams(t.gate_bias, t.gate_weight, t.coef, -t.variance, degree=2)
    with pytest.raises(ValueError, match="coef"):
        PolyMoEParams(t.gate_bias, t.gate_weight, t.coef, t.variance, degree=1)
    with pytest.raises(ValueError, match="NaN"):
        PolyMoEParams(t.gate_bias * np.nan, t.gate_weight, t.coef, t.variance, degree=2)
    with pytest.raises(ValueError, match="features"):
        kl_risk(t, SmoothRegressionTarget(n_features=2))
    with pytest.raises(TypeError, match="truth"):
        kl_risk(t, "sine")
    with pytest.raises(ValueError, match="replications"):
        fit_polynomial_moe(np.zeros((2, 10, 1)), np.zeros((2, 10)), 2, 2, init=t, batched=True)
    with pytest.raises(ValueError, match="noise_var"):
        SmoothRegressionTarget(noise_var=0.0)


def test_log_density_validation():
    t = truth(1)
    with pytest.raises(ValueError, match="X must"):
        poly_moe_log_density(np.zeros((2, 3, 1)), np.zeros((2, 3)), t)
    with pytest.raises(ValueError, match="y must"):
        poly_moe_log_density(np.zeros((1, 3, 1)), np.zeros((1, 4)), t)
    with pytest.raises(TypeError, match="params"):
        poly_moe_log_density(np.zeros((1, 3, 1)), np.zeros((1, 3)), "t")


def test_smooth_target_mean_by_hand():
    tg = SmoothRegressionTarget(amplitude=0.0, abs_weight=2.0, alpha=1.5, n_features=2)
    # f(x) = 2 * mean_j |x_j|^1.5 at x = (-0.25, 1): 2 * (0.125 + 1) / 2
    assert tg.mean(np.array([[-0.25, 1.0]])).tolist() == [1.125]
    assert SmoothRegressionTarget().mean(np.array([[0.5]])).tolist() == [1.0]       # sin(pi / 2)


def test_kl_single_truth_broadcasts_like_a_tiled_truth():
    t = truth(3)
    p = PolyMoEParams(t.gate_bias, t.gate_weight, t.coef + np.arange(3)[:, None, None] * 0.05, t.variance, 2)
    assert np.allclose(kl_risk(p, select(t, 0), n_mc=100).mean, kl_risk(p, t, n_mc=100).mean, rtol=1e-12)
    assert np.allclose(kl_risk(select(p, 2), select(t, 0), n_mc=100).mean, kl_risk(p, t, n_mc=100).mean[2],
                       rtol=1e-12)                                          # replication alone == in the batch
