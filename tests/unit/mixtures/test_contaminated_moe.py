"""Softmax-contaminated MoE: links, densities, the generator, EM steps worked by hand, batches, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.integrate import quad

from expertlab.mixtures import (ContaminatedMoEParams, FrozenExpert, SoftmaxContaminatedMoE, asymptotic_parameter_errors,
                                contaminated_moe_loglik, fisher_information, fit_contaminated_moe, link_derivative,
                                link_value, log_density, parameter_errors, perturbed_truth, sample_contaminated_moe)
from expertlab.mixtures._contaminated_moe import _gate_step, _m_step
from expertlab.mixtures._moe_links import density_quantile

D = 2


def setting(n_reps=3, density="laplace", eta=(-1.0, 0.0), tau=1.0):
    expert = FrozenExpert(np.array([1.0, 0.0]), 1e-3, density)
    truth = ContaminatedMoEParams.tile(np.ones(D) / np.sqrt(D), tau, eta, 1e-3, n_reps)
    return truth, expert


@pytest.mark.parametrize("link", ["tanh", "sigmoid", "gelu", "linear"])
def test_link_derivative_matches_central_differences(link):
    u = np.linspace(-3, 3, 13)
    h = 1e-6
    fd = (link_value(u + h, link) - link_value(u - h, link)) / (2 * h)
    np.testing.assert_allclose(link_derivative(u, link), fd, rtol=0, atol=1e-8)


def test_link_values_by_hand():
    np.testing.assert_allclose(link_value(np.array([0.0, 2.0]), "sigmoid"), [0.5, 1 / (1 + math.exp(-2))])
    np.testing.assert_allclose(link_value(np.array([1.0]), "gelu"), [stats.norm.cdf(1.0)])


@pytest.mark.parametrize("density, ref", [
    ("gaussian", lambda m, s: stats.norm(m, s)), ("laplace", lambda m, s: stats.laplace(m, s)),
    ("student_t", lambda m, s: stats.t(3.0, m, s))])
def test_density_against_scipy_and_normalised(density, ref):
    y = np.linspace(-2, 3, 11)
    nu = 0.3
    dist = ref(0.5, math.sqrt(nu))
    np.testing.assert_allclose(log_density(y, 0.5, nu, density), dist.logpdf(y), rtol=1e-12)
    total = quad(lambda t: math.exp(float(log_density(np.array(t), 0.5, nu, density))), -np.inf, np.inf)[0]
    assert total == pytest.approx(1.0, abs=1e-8)
    u = np.array([0.01, 0.3, 0.5, 0.9])
    np.testing.assert_allclose(density_quantile(u, 0.5, nu, density), dist.ppf(u), rtol=1e-10)


def test_sample_shapes_reproducible_and_batch_independent():
    truth, e = setting(n_reps=5)
    X, y, z = sample_contaminated_moe(40, truth, e, seed=7)
    assert X.shape == (5, 40, D) and y.shape == (5, 40) and z.dtype == bool
    X2, y2, _ = sample_contaminated_moe(40, truth, e, seed=7)
    np.testing.assert_array_equal(y, y2)
    Xb, yb, zb = sample_contaminated_moe(40, truth.select(slice(2, 4)), e, seed=7, first_rep=2)
    np.testing.assert_array_equal(Xb, X[2:4])
    np.testing.assert_array_equal(yb, y[2:4])
    assert not np.array_equal(sample_contaminated_moe(40, truth, e, seed=8)[1], y)


def test_sample_gate_extremes_pick_one_expert():
    truth_on, e = setting(n_reps=2, tau=60.0)
    truth_off, _ = setting(n_reps=2, tau=-60.0)
    X, y, z = sample_contaminated_moe(30, truth_on, e, seed=1)
    assert z.all()
    X0, y0, z0 = sample_contaminated_moe(30, truth_off, e, seed=1)
    assert not z0.any()
    np.testing.assert_array_equal(X, X0)                      # covariates do not depend on the parameters
    # the frozen expert's draws sit within its Laplace noise around tanh(x1)
    assert np.median(np.abs(y0 - np.tanh(X0[..., 0]))) < 5 * math.sqrt(1e-3)


def test_loglik_of_one_point_by_hand():
    e = FrozenExpert(np.array([1.0]), 0.5, "laplace", link="linear")
    p = ContaminatedMoEParams(np.array([[2.0]]), np.array([-1.0]), np.array([[-1.0]]), np.array([0.25]))
    x, yv = 0.3, 0.1
    g = 1 / (1 + math.exp(-(2 * x - 1)))
    dens = (1 - g) * stats.laplace(x, math.sqrt(0.5)).pdf(yv) + g * stats.norm(-x, 0.5).pdf(yv)
    ll = contaminated_moe_loglik(np.array([[[x]]]), np.array([[yv]]), p, e, link="linear")
    assert float(ll[0]) == pytest.approx(math.log(dens), rel=1e-12)


def test_prompt_m_step_with_linear_link_is_weighted_least_squares():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1, 50, 2))
    Xt = np.concatenate([X, np.ones((1, 50, 1))], axis=-1)
    y = X[..., 0] * 0.7 - 0.2 * X[..., 1] + rng.normal(size=(1, 50)) * 0.3
    r = rng.uniform(0.05, 1.0, size=(1, 50))
    p0 = ContaminatedMoEParams(np.zeros((1, 2)), np.zeros(1), np.array([[5.0, -3.0]]), np.ones(1))
    p = _m_step(X, Xt, y, r, p0, "linear", 1, 1, 1e-12, np)
    W = np.sqrt(r[0])
    eta = np.linalg.lstsq(X[0] * W[:, None], y[0] * W, rcond=None)[0]
    np.testing.assert_allclose(p.eta[0], eta, rtol=1e-8)
    assert p.nu[0] == pytest.approx(np.sum(r[0] * (y[0] - X[0] @ eta) ** 2) / r[0].sum(), rel=1e-8)


def test_gate_newton_steps_reach_the_soft_label_score_equation():
    rng = np.random.default_rng(1)
    Xt = np.concatenate([rng.normal(size=(2, 80, 2)), np.ones((2, 80, 1))], axis=-1)
    r = rng.uniform(size=(2, 80))
    theta = np.zeros((2, 3))
    for _ in range(25):
        theta = _gate_step(Xt, r, theta, np)
    g = 1 / (1 + np.exp(-np.einsum("rnk,rk->rn", Xt, theta)))
    np.testing.assert_allclose(np.einsum("rnk,rn->rk", Xt, r - g), 0.0, atol=1e-9)


def test_em_is_monotone_converges_and_recovers_the_truth():
    truth, e = setting(n_reps=4)
    X, y, _ = sample_contaminated_moe(3000, truth, e, seed=3)
    res = fit_contaminated_moe(X, y, e, init="perturbed_truth", truth=truth, seed=4, tol=1e-10, batched=True)
    assert res.converged.all()
    for path in res.loglik_path:
        path = path[np.isfinite(path)]
        assert np.all(np.diff(path) >= -1e-12 * (1 + np.abs(path[1:])))
    err = parameter_errors(res.params, truth)
    # the MLE's standard errors are O(n^-1/2) = 0.018 times an O(1) constant; 0.2 is far outside the noise
    assert np.all(err.eta < 0.02) and np.all(err.beta < 0.2) and np.all(err.exp_tau < 0.5)
    assert np.all(err.nu < 1e-3 * 0.2)


def test_replication_alone_equals_replication_in_batch():
    truth, e = setting(n_reps=3, density="student_t")
    X, y, _ = sample_contaminated_moe(400, truth, e, seed=5)
    init = perturbed_truth(truth, scale=0.2, seed=6)
    res = fit_contaminated_moe(X, y, e, init=init, tol=1e-9, batched=True)
    one = fit_contaminated_moe(X[1], y[1], e, init=init.select(1), tol=1e-9)
    for field in ("beta", "tau", "eta", "nu"):
        np.testing.assert_allclose(getattr(one.params, field), getattr(res.params, field)[1], rtol=1e-10, atol=0)
    assert one.n_iter == res.n_iter[1]


@pytest.mark.parametrize("link, density", [("tanh", "laplace"), ("sigmoid", "gaussian"), ("gelu", "student_t"),
                                           ("linear", "gaussian")])
def test_compiled_engine_runs_the_same_em_as_the_array_path(link, density):
    """NumPy inputs run the compiled kernel by default; other namespaces the array path.  Same steps, same iterates."""
    truth, e = setting(n_reps=4, density=density)
    e = FrozenExpert(e.eta0, 1e-2, density)
    X, y, _ = sample_contaminated_moe(600, truth, e, link=link, seed=7)
    init = perturbed_truth(truth, scale=0.3, seed=8)

    def fit(engine, gate_steps=2):
        return fit_contaminated_moe(X, y, e, link=link, init=init, max_iter=60, tol=1e-10, gate_steps=gate_steps,
                                    prompt_steps=2, batched=True, engine=engine)

    ref, got = fit("array"), fit("compiled")
    np.testing.assert_array_equal(got.n_iter, ref.n_iter)
    np.testing.assert_array_equal(got.converged, ref.converged)
    np.testing.assert_allclose(got.loglik_path, ref.loglik_path, rtol=1e-9, atol=1e-12)
    for field in ("beta", "tau", "eta", "nu"):
        np.testing.assert_allclose(getattr(got.params, field), getattr(ref.params, field), rtol=1e-7, atol=1e-10)
        np.testing.assert_array_equal(getattr(fit("auto").params, field), getattr(got.params, field))
    # the wrong variant this rejects: one Newton step fewer on the gate changes the likelihood path far
    # beyond the tolerance above (both reach the same maximum in the end)
    other = fit("compiled", gate_steps=1)
    assert np.max(np.abs(other.loglik_path[:, 1] - ref.loglik_path[:, 1])) > 1e-6


def test_compiled_engine_needs_numpy_and_engine_is_checked():
    import array_api_strict as xps

    truth, e = setting(n_reps=2)
    X, y, _ = sample_contaminated_moe(50, truth, e, seed=1)
    with pytest.raises(ValueError, match="engine"):
        fit_contaminated_moe(xps.asarray(X), xps.asarray(y), e, init=truth, batched=True, engine="compiled")
    with pytest.raises(ValueError, match="engine"):
        fit_contaminated_moe(X, y, e, init=truth, batched=True, engine="numba")


def test_compiled_engine_stops_at_max_iter_and_reports_no_convergence():
    truth, e = setting(n_reps=2)
    X, y, _ = sample_contaminated_moe(300, truth, e, seed=9)
    res = fit_contaminated_moe(X, y, e, init="perturbed_truth", truth=truth, tol=0.0, max_iter=3, batched=True)
    assert res.n_iter.tolist() == [3, 3] and not res.converged.any()
    assert res.loglik_path.shape == (2, 3) and np.isfinite(res.loglik_path).all()
    assert "did not converge" in res.message


def test_random_init_is_seeded_and_runs():
    truth, e = setting(n_reps=2)
    X, y, _ = sample_contaminated_moe(300, truth, e, seed=0)
    a = fit_contaminated_moe(X, y, e, init="random", seed=3, max_iter=20, batched=True)
    b = fit_contaminated_moe(X, y, e, init="random", seed=3, max_iter=20, batched=True)
    np.testing.assert_array_equal(a.params.eta, b.params.eta)
    assert a.loglik_path.shape[0] == 2 and np.all(np.isfinite(a.params.nu))


def test_estimator_shell():
    truth, e = setting(n_reps=1)
    X, y, _ = sample_contaminated_moe(1500, truth, e, seed=2)
    m = SoftmaxContaminatedMoE([1.0, 0.0], 1e-3, init="perturbed_truth", truth=truth.select(0))
    with pytest.raises(AttributeError, match="not fitted"):
        m.predict(X[0])
    assert m.fit(X[0], y[0]) is m
    assert m.score(X[0], y[0]) == pytest.approx(float(m.loglik_path_[-1]), abs=1e-6)
    g = m.gate_proba(X[0])
    mean = (1 - g) * np.tanh(X[0, :, 0]) + g * np.tanh(X[0] @ m.eta_)
    np.testing.assert_allclose(m.predict(X[0]), mean)
    with pytest.raises(ValueError, match="X has 5 features, but SoftmaxContaminatedMoE is expecting 2"):
        m.predict(np.zeros((3, 5)))


def test_bad_input():
    truth, e = setting(n_reps=2)
    X, y, _ = sample_contaminated_moe(20, truth, e, seed=0)
    with pytest.raises(ValueError, match="X contains NaN"):
        fit_contaminated_moe(np.where(X > 1, np.nan, X), y, e, batched=True)
    with pytest.raises(ValueError, match="y must have shape"):
        fit_contaminated_moe(X, y[:, :5], e, batched=True)
    with pytest.raises(ValueError, match="X must have shape"):
        fit_contaminated_moe(X, y, e)
    with pytest.raises(ValueError, match="link must be one of"):
        fit_contaminated_moe(X, y, e, link="relu", batched=True)
    with pytest.raises(ValueError, match="needs truth"):
        fit_contaminated_moe(X, y, e, init="perturbed_truth", batched=True)
    with pytest.raises(TypeError, match="init must be"):
        fit_contaminated_moe(X, y, e, init=3, batched=True)
    with pytest.raises(ValueError, match="init must be one of"):
        fit_contaminated_moe(X, y, e, init="kmeans", batched=True)
    with pytest.raises(TypeError, match="batched must be a bool"):
        fit_contaminated_moe(X, y, e, batched=1)
    with pytest.raises(ValueError, match="eta0 has 3 features"):
        fit_contaminated_moe(X, y, FrozenExpert(np.zeros(3), 1.0), batched=True)
    bad = ContaminatedMoEParams(truth.beta, truth.tau, truth.eta, -truth.nu)
    with pytest.raises(ValueError, match="nu must be positive"):
        fit_contaminated_moe(X, y, e, init=bad, batched=True)
    with pytest.raises(ValueError, match="init.beta must have shape"):
        fit_contaminated_moe(X, y, e, init=ContaminatedMoEParams(truth.beta[:, :1], truth.tau, truth.eta,
                                                                 truth.nu), batched=True)
    with pytest.raises(ValueError, match="density must be one of"):
        FrozenExpert(np.zeros(2), 1.0, "cauchy")
    with pytest.raises(ValueError, match="nu0 must be > 0"):
        FrozenExpert(np.zeros(2), 0.0)
    with pytest.raises(ValueError, match="eta0 contains NaN"):
        FrozenExpert(np.array([np.inf, 0.0]), 1.0)
    with pytest.raises(ValueError, match="tol must be >= 0"):
        fit_contaminated_moe(X, y, e, tol=-1.0, batched=True)
    with pytest.raises(ValueError, match="scale must be >= 0"):
        perturbed_truth(truth, scale=-0.1)
    with pytest.raises(TypeError, match="truth must be a ContaminatedMoEParams"):
        sample_contaminated_moe(10, "truth", e)


def test_parameter_errors_of_a_gate_at_the_boundary_is_infinite_without_warning():
    truth, _ = setting(n_reps=1)
    far = ContaminatedMoEParams(truth.beta, np.array([800.0]), truth.eta, truth.nu)
    assert parameter_errors(far, truth).exp_tau[0] == np.inf


# --- Fisher information ------------------------------------------------------------------------------------

def test_fisher_information_of_an_open_gate_is_that_of_linear_regression():
    """Gate fully open (tau = 30), linear link: p(y | x) = N(y; eta'x, nu), so I_eta = E[x x'] / nu = I / nu,
    I_nu = 1 / (2 nu^2), and the gate and cross terms vanish."""
    d, nu = 2, 0.7
    expert = FrozenExpert(np.array([1.0, 0.0]), 1.0, "gaussian", link="linear")
    p = ContaminatedMoEParams.tile([0.3, -0.2], 30.0, [0.5, -1.0], nu, n_reps=2)
    info = fisher_information(p, expert, link="linear")
    assert info.shape == (2, 2 * d + 2, 2 * d + 2)
    ref = np.zeros((2 * d + 2, 2 * d + 2))
    ref[d + 1:2 * d + 1, d + 1:2 * d + 1] = np.eye(d) / nu
    ref[-1, -1] = 1 / (2 * nu ** 2)
    np.testing.assert_allclose(info, np.broadcast_to(ref, info.shape), rtol=0, atol=1e-9)


def test_asymptotic_errors_are_the_mean_errors_of_the_normal_limit():
    """sqrt(2/pi) sd for the scalars (e^tau by the delta method), E||N(0, block)|| for the vectors (checked
    against an independent Monte Carlo of the normal), and exactly 1/sqrt(n) in n."""
    d, n = 2, 500
    expert = FrozenExpert(np.array([1.0, 0.0]), 0.5, "laplace")
    p = ContaminatedMoEParams.tile([0.4, -0.3], 0.8, [-1.0, 0.5], 0.6, n_reps=1)
    cov = np.linalg.inv(fisher_information(p, expert)[0]) / n
    a = asymptotic_parameter_errors(p, expert, n)
    c = math.sqrt(2 / math.pi)
    assert abs(a.exp_tau[0] - c * math.exp(0.8) * math.sqrt(cov[d, d])) < 1e-12 * a.exp_tau[0]
    assert abs(a.nu[0] - c * math.sqrt(cov[-1, -1])) < 1e-12 * a.nu[0]
    z = np.random.default_rng(5).multivariate_normal(np.zeros(2 * d + 2), cov, size=400_000)
    for got, block in ((a.beta[0], z[:, :d]), (a.eta[0], z[:, d + 1:2 * d + 1])):
        norms = np.linalg.norm(block, axis=1)
        assert abs(got - norms.mean()) < 4 * norms.std() / math.sqrt(len(norms))
    b = asymptotic_parameter_errors(p, expert, 4 * n)
    for key in ("exp_tau", "beta", "eta", "nu"):
        assert abs(getattr(a, key)[0] / getattr(b, key)[0] - 2.0) < 1e-12


def test_fisher_information_bad_input():
    expert = FrozenExpert(np.array([1.0, 0.0]), 1.0, "gaussian")
    p = ContaminatedMoEParams.tile([0.0, 0.0], 0.0, [1.0, 0.5], 1.0, n_reps=1)
    with pytest.raises(TypeError, match="ContaminatedMoEParams"):
        fisher_information({"beta": 0}, expert)
    with pytest.raises(ValueError, match="expert.density"):
        fisher_information(p, FrozenExpert(np.array([1.0, 0.0]), 1.0, "student_t"))
    with pytest.raises(ValueError, match="x_step"):
        fisher_information(p, expert, x_step=0.0)
    with pytest.raises(ValueError, match="link"):
        fisher_information(p, expert, link="relu")
    bad = ContaminatedMoEParams.tile([0.0, 0.0], np.nan, [1.0, 0.5], 1.0, n_reps=1)
    with pytest.raises(ValueError, match="finite"):
        fisher_information(bad, expert)
    with pytest.raises(ValueError, match="eta0"):
        fisher_information(p, FrozenExpert(np.array([1.0]), 1.0, "gaussian"))
