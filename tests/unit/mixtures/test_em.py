"""EM cores: hand-worked E- and M-steps, weights, label priors, batch independence, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from expertlab.mixtures import GaussianMixtureParams, e_step, log_likelihood, log_prior_from_labels, m_step


def spherical_1d(w=(0.5, 0.5), mu=(-1.0, 1.0), var=(1.0, 1.0)):
    return GaussianMixtureParams(np.array([w]), np.array([[[mu[0]], [mu[1]]]]), np.array([var]), "spherical")


def random_params(rng, n_reps, C, D):
    A = rng.normal(size=(n_reps, C, D, D))
    cov = A @ np.swapaxes(A, -1, -2) + 0.5 * np.eye(D)
    w = rng.dirichlet(np.ones(C), size=n_reps)
    return GaussianMixtureParams(w, rng.normal(size=(n_reps, C, D)), cov, "full")


def test_e_step_by_hand():
    X = np.array([[[-1.0], [0.0], [3.0]]])
    log_resp, ll = e_step(X, spherical_1d())
    # equal weights and variances: r_1(x) = 1 / (1 + exp(-2x)) for means -1, +1
    r1 = 1 / (1 + np.exp(-2 * np.array([-1.0, 0.0, 3.0])))
    np.testing.assert_allclose(np.exp(log_resp[0, :, 1]), r1, rtol=1e-14)
    dens = 0.5 * (np.exp(-0.5 * (X[0, :, 0] + 1) ** 2) + np.exp(-0.5 * (X[0, :, 0] - 1) ** 2)) / math.sqrt(2 * math.pi)
    assert ll[0] == pytest.approx(np.mean(np.log(dens)), rel=1e-14)


def test_full_covariance_log_density_matches_scipy():
    rng = np.random.default_rng(0)
    p = random_params(rng, 2, 3, 3)
    X = rng.normal(size=(2, 7, 3))
    ll = log_likelihood(X, p)
    for r in range(2):
        dens = sum(p.weights[r, c] * multivariate_normal(p.means[r, c], p.covariances[r, c]).pdf(X[r])
                   for c in range(3))
        assert ll[r] == pytest.approx(np.mean(np.log(dens)), rel=1e-12)


def test_m_step_by_hand():
    X = np.array([[[0.0, 0.0], [2.0, 0.0], [1.0, 3.0], [10.0, 10.0]]])
    resp = np.array([[[1.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]])
    p = m_step(X, resp, reg_covar=0.0)
    np.testing.assert_allclose(p.weights, [[0.75, 0.25]], atol=1e-14)
    np.testing.assert_allclose(p.means[0, 0], [1.0, 1.0], atol=1e-14)
    # centred points (-1,-1), (1,-1), (0,2): scatter [[2, 0], [0, 6]] / 3
    np.testing.assert_allclose(p.covariances[0, 0], [[2 / 3, 0.0], [0.0, 2.0]], atol=1e-13)
    np.testing.assert_allclose(p.covariances[0, 1], 0.0, atol=1e-12)
    reg = m_step(X, resp, reg_covar=0.1)
    np.testing.assert_allclose(reg.covariances - p.covariances, np.broadcast_to(0.1 * np.eye(2), (1, 2, 2, 2)),
                               atol=1e-13)
    diag = m_step(X, resp, covariance_type="diag", reg_covar=0.0)
    sph = m_step(X, resp, covariance_type="spherical", reg_covar=0.0)
    np.testing.assert_allclose(diag.covariances[0, 0], [2 / 3, 2.0], atol=1e-13)
    np.testing.assert_allclose(sph.covariances[0], diag.covariances[0].mean(axis=-1), atol=1e-13)


def test_integer_sample_weights_equal_repeated_points():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1, 6, 2))
    counts = np.array([1, 3, 2, 1, 4, 2])
    Xrep = np.repeat(X, counts, axis=1)
    p = random_params(rng, 1, 2, 2)
    lr_w, ll_w = e_step(X, p, sample_weight=counts)
    lr_rep, ll_rep = e_step(Xrep, p)
    assert ll_w[0] == pytest.approx(ll_rep[0], rel=1e-13)
    np.testing.assert_allclose(np.repeat(lr_w, counts, axis=1), lr_rep, atol=1e-13)
    a = m_step(X, np.exp(lr_w), sample_weight=counts)
    b = m_step(Xrep, np.exp(lr_rep))
    for u, v in ((a.weights, b.weights), (a.means, b.means), (a.covariances, b.covariances)):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-13)


def test_hard_labels_clamp_and_soft_priors_multiply():
    X = np.array([[[-1.0], [0.5], [3.0]]])
    p = spherical_1d(w=(0.3, 0.7))
    free, _ = e_step(X, p)
    clamped, ll = e_step(X, p, labels=np.array([1, -1, 0]))
    np.testing.assert_allclose(np.exp(clamped[0, 0]), [0.0, 1.0], atol=0)
    np.testing.assert_allclose(np.exp(clamped[0, 2]), [1.0, 0.0], atol=0)
    np.testing.assert_allclose(clamped[0, 1], free[0, 1], atol=1e-14)       # the unlabelled point is untouched
    # objective: labelled points contribute log(w_y N(x; y)), the unlabelled one its mixture density
    g = lambda x, m: np.exp(-0.5 * (x - m) ** 2) / math.sqrt(2 * math.pi)   # noqa: E731
    want = np.mean(np.log([0.7 * g(-1, 1), 0.3 * g(0.5, -1) + 0.7 * g(0.5, 1), 0.3 * g(3, -1)]))
    assert ll[0] == pytest.approx(want, rel=1e-13)
    prior = np.array([[0.5, 0.5], [0.9, 0.1], [0.2, 0.8]])
    soft, _ = e_step(X, p, prior=prior)
    want = np.exp(free[0]) * prior
    np.testing.assert_allclose(np.exp(soft[0]), want / want.sum(axis=1, keepdims=True), rtol=1e-13)
    both, _ = e_step(X, p, labels=np.array([-1, 0, -1]), prior=prior)   # a label overrides its prior row
    np.testing.assert_allclose(np.exp(both[0, 1]), [1.0, 0.0], atol=0)
    np.testing.assert_allclose(both[0, [0, 2]], soft[0, [0, 2]], atol=1e-14)


def test_log_prior_from_labels_shapes():
    lp = log_prior_from_labels(np.array([[0, -1], [-1, 1]]), n_reps=2, n_samples=2, n_components=2)
    assert lp.shape == (2, 2, 2)
    assert np.exp(lp).tolist() == [[[1.0, 0.0], [1.0, 1.0]], [[1.0, 1.0], [0.0, 1.0]]]
    assert log_prior_from_labels(None, None, n_reps=1, n_samples=3, n_components=2) is None


def test_batch_is_independent_replications():
    rng = np.random.default_rng(2)
    p = random_params(rng, 3, 2, 2)
    X = rng.normal(size=(3, 9, 2))
    w = rng.uniform(0.5, 2.0, size=(3, 9))
    lr, ll = e_step(X, p, sample_weight=w)
    pm = m_step(X, np.exp(lr), sample_weight=w)
    for r in range(3):
        one = GaussianMixtureParams(*(a[r:r + 1] for a in (p.weights, p.means, p.covariances)))
        lr1, ll1 = e_step(X[r:r + 1], one, sample_weight=w[r])
        np.testing.assert_allclose(lr1[0], lr[r], atol=1e-14)
        assert ll1[0] == pytest.approx(ll[r], rel=1e-14)
        pm1 = m_step(X[r:r + 1], np.exp(lr1), sample_weight=w[r])
        np.testing.assert_allclose(pm1.covariances[0], pm.covariances[r], atol=1e-14)


def test_e_step_is_log_space_stable_far_from_every_component():
    X = np.array([[[1e3], [-2e3]]])
    log_resp, ll = e_step(X, spherical_1d())
    assert np.all(np.isfinite(log_resp)) and np.all(np.isfinite(ll))
    np.testing.assert_allclose(np.exp(log_resp[0]), [[0.0, 1.0], [1.0, 0.0]], atol=1e-300)


def _p(cov, kind="full", w=((0.5, 0.5),)):
    return GaussianMixtureParams(np.array(w), np.zeros((1, 2, 2)), np.asarray(cov, dtype=float), kind)


@pytest.mark.parametrize("params, match", [
    (_p([[[[1.0, 0.0], [0.0, -1.0]], [[1.0, 0.0], [0.0, 1.0]]]]), "positive definite"),
    (_p([[[[1.0, 0.5], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]]]), "symmetric"),
    (_p([[[1.0, 1.0], [1.0, 0.0]]], "diag"), "positive"),
    (_p([[1.0, 1.0]], "full"), "covariances must have shape"),
    (_p(np.ones((1, 2)), "spherical", w=((0.7, 0.7),)), "simplex"),
    (_p(np.ones((1, 2)), "spherical", w=((1.5, -0.5),)), "simplex"),
    (_p(np.ones((1, 2)), "spherical", w=((np.nan, 0.5),)), "NaN"),
])
def test_bad_params_are_rejected(params, match):
    with pytest.raises(ValueError, match=match):
        e_step(np.zeros((1, 3, 2)), params)


def test_bad_inputs_name_the_argument():
    p = spherical_1d()
    X = np.zeros((1, 3, 1))
    with pytest.raises(ValueError, match="X must have shape"):
        e_step(np.zeros((3, 1)), p)
    with pytest.raises(ValueError, match="X contains NaN"):
        e_step(np.array([[[np.nan], [0.0], [1.0]]]), p)
    with pytest.raises(ValueError, match="X contains NaN"):
        e_step(np.array([[[np.inf], [0.0], [1.0]]]), p)
    with pytest.raises(ValueError, match="weights must have shape"):
        e_step(np.zeros((2, 3, 1)), p)
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        e_step(X, p, sample_weight=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="sample_weight contains NaN"):
        e_step(X, p, sample_weight=[1.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        e_step(X, p, sample_weight=[1.0, 1.0])
    with pytest.raises(ValueError, match="positive sum"):
        e_step(X, p, sample_weight=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="prior rows must lie on the simplex"):
        e_step(X, p, prior=np.array([[0.5, 0.6], [0.5, 0.5], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="prior rows must lie on the simplex"):
        e_step(X, p, prior=np.array([[1.5, -0.5], [0.5, 0.5], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="prior must have shape"):
        e_step(X, p, prior=np.full((3, 3), 1 / 3))
    with pytest.raises(ValueError, match="labels must lie in"):
        e_step(X, p, labels=np.array([0, 2, -1]))
    with pytest.raises(TypeError, match="labels must be integers"):
        e_step(X, p, labels=np.array([0.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="labels must have shape"):
        e_step(X, p, labels=np.array([0, 1]))
    with pytest.raises(TypeError, match="params must be a GaussianMixtureParams"):
        e_step(X, {"weights": 1})
    with pytest.raises(ValueError, match="resp rows must lie on the simplex"):
        m_step(X, np.full((1, 3, 2), 0.6))
    with pytest.raises(ValueError, match="resp must have shape"):
        m_step(X, np.full((1, 2, 2), 0.5))
    with pytest.raises(ValueError, match="reg_covar must be >= 0"):
        m_step(X, np.full((1, 3, 2), 0.5), reg_covar=-1.0)
    with pytest.raises(ValueError, match="covariance_type must be one of"):
        m_step(X, np.full((1, 3, 2), 0.5), covariance_type="tied")
    dead = GaussianMixtureParams(np.array([[1.0, 0.0]]), np.zeros((1, 2, 1)), np.ones((1, 2)), "spherical")
    with pytest.raises(ValueError, match="zero probability"):     # labelled to a component of weight 0
        e_step(X, dead, labels=np.array([1, -1, -1]))
