"""Bad input to the public callables of :mod:`expertlab.mixtures` raises an error naming the argument."""

import numpy as np
import pytest

from expertlab._validation import as_real_array
from expertlab.mixtures import (ClusterMoEParams, ContaminatedMoEParams, FrozenExpert, GaussianMixtureParams,
                                MoETimeModel, PolyMoEParams, SmoothRegressionTarget, SoftmaxMoEParams, alr,
                                alr_inverse, asymptotic_parameter_errors, average_precision, classifier_pool,
                                cluster_codes, cluster_moe_loss, cluster_overlap, cluster_signs,
                                contaminated_moe_loglik, draw_labels, expected_calibration_error,
                                fisher_information, fit_moe_time_model, hermite_link, kl_risk, link_derivative,
                                link_value, log_density, log_likelihood, log_prior_from_labels, majority_vote,
                                monomial_exponents, parameter_count, parameter_errors, polynomial_features,
                                pseudo_labels, roc_auc, routing_accuracy, sample_polynomial_moe,
                                sample_smooth_regression, shapley_exact, shapley_mc, silverman_bandwidth,
                                simulate_activated_experts, table_game, top_label_calibration_error, voronoi_cells,
                                voronoi_loss_overfit)
from expertlab.mixtures._ssme_metrics import metric

P2 = np.array([[0.5, 0.5], [0.2, 0.8], [0.7, 0.3]])
P3 = np.full((3, 3), 1.0 / 3.0)


@pytest.mark.parametrize("labels", [np.array([1, 1, 1]), np.array([0, 0, 0])])
def test_roc_auc_needs_both_classes(labels):
    with pytest.raises(ValueError, match="labels must contain both classes"):
        roc_auc(labels, P2)


def test_roc_auc_counts_only_points_of_positive_weight():
    with pytest.raises(ValueError, match="labels must contain both classes"):
        roc_auc(np.array([0, 1, 1]), P2, sample_weight=np.array([0.0, 1.0, 1.0]))


def test_roc_auc_needs_both_classes_in_every_row_of_a_batch():
    with pytest.raises(ValueError, match="labels"):
        roc_auc(np.array([[0, 1, 1], [1, 1, 1]]), P2)


def test_roc_auc_multiclass_needs_every_class():
    with pytest.raises(ValueError, match="labels must contain every class 0, ..., 2"):
        roc_auc(np.array([0, 1, 1]), P3)


def test_metric_auc_keeps_nan_for_the_batched_estimators():
    v = metric("auc", np.array([[0, 1, 1], [1, 1, 1]]), P2)
    assert not np.isnan(v[0]) and np.isnan(v[1])


@pytest.mark.parametrize("eps", [2.0, 1.0, 0.51, float("nan"), float("inf"), 0.0, -1e-12])
def test_alr_rejects_a_bad_eps(eps):
    with pytest.raises(ValueError, match="eps"):
        alr(np.array([0.25, 0.75]), eps=eps)


def test_alr_eps_bound_is_one_over_the_number_of_classes():
    np.testing.assert_allclose(alr(np.array([0.25, 0.75]), eps=0.5), [np.log(0.5 / 0.75)])
    with pytest.raises(ValueError, match=r"eps must lie in \(0, 1 / n_classes\]"):
        alr(np.array([0.2, 0.3, 0.5]), eps=0.4)


def test_alr_rejects_complex_probs():
    with pytest.raises(TypeError, match="probs"):
        alr(np.array([0.25, 0.75]) + 0j)


@pytest.mark.parametrize("bad", ["1.0", np.array([1.0]) + 1j, np.array(["1.0"]), np.array([1.0], dtype=object),
                                 [[1.0], [1.0, 2.0]], None])
def test_as_real_array_rejects_non_real_data(bad):
    with pytest.raises(TypeError, match="weights"):
        as_real_array(bad, "weights")


def test_as_real_array_accepts_real_data():
    assert as_real_array([1, 2], "x").dtype == np.float64
    assert as_real_array(np.array([True]), "x").tolist() == [1.0]
    assert as_real_array(0.5, "x", np, np.float32).dtype == np.float32


@pytest.mark.parametrize("X", [np.ones((6, 2)) + 1j, np.ones((6, 2)).astype(str)], ids=["complex", "str"])
def test_gaussian_mixture_rejects_non_real_data_through_the_shared_helper(X):
    from expertlab.mixtures import GaussianMixture

    with pytest.raises(TypeError, match="X must hold real numbers"):
        GaussianMixture(1).fit(X)


# ----------------------------------------------------------------------------- clustered single-index data

def test_cluster_codes_and_signs_refuse_bad_cluster_counts():
    with pytest.raises(ValueError, match="n_clusters must be a power of two"):
        cluster_codes(6)
    with pytest.raises(TypeError, match="n_clusters must be an integer"):
        cluster_codes(4.0)
    with pytest.raises(ValueError, match="n_clusters too large"):
        cluster_codes(2**40)                      # 2**40 codes cannot be allocated
    with pytest.raises(ValueError, match="n_clusters must be >= 2"):
        cluster_signs(1)
    with pytest.raises(ValueError, match="n_clusters must be a power of two"):
        cluster_signs(12)


@pytest.mark.parametrize("t, exc", [(np.array([0.5 + 1j]), TypeError), (np.array(["0.5"]), TypeError),
                                    ("0.5", TypeError), ([[0.5], [0.5, 1.0]], TypeError)],
                         ids=["complex", "str-array", "str", "ragged"])
def test_hermite_link_refuses_non_real_t(t, exc):
    with pytest.raises(exc, match="^t must"):
        hermite_link(t, 2)


def test_hermite_link_refuses_a_bad_degree():
    with pytest.raises(ValueError, match="degree must be >= 1"):
        hermite_link(np.zeros(3), 0)
    with pytest.raises(TypeError, match="degree must be an integer"):
        hermite_link(np.zeros(3), 2.0)


def _moe_params(n_reps=1, n_experts=2, n_neurons=1, dim=2):
    th = np.ones((n_reps, n_experts, n_neurons, dim)) / np.sqrt(dim)
    return th, np.ones((n_reps, n_experts, n_neurons)), np.zeros((n_reps, n_experts, dim))


def test_cluster_moe_loss_refuses_params_of_inconsistent_shapes():
    th, a, r = _moe_params()
    x, y = np.zeros((1, 3, 2)), np.ones((1, 3))
    with pytest.raises(ValueError, match=r"params.output must have shape \(1, 2, 1\)"):
        cluster_moe_loss(ClusterMoEParams(th, np.ones((1, 3, 1)), r), x, y)
    with pytest.raises(ValueError, match=r"params.router must have shape \(1, 2, 2\)"):
        cluster_moe_loss(ClusterMoEParams(th, a, np.zeros((1, 2, 3))), x, y)
    with pytest.raises(ValueError, match="params.first_layer must have shape"):
        cluster_moe_loss(ClusterMoEParams(th[0], a, r), x, y)
    with pytest.raises(ValueError, match="params.first_layer contains NaN"):
        cluster_moe_loss(ClusterMoEParams(th * np.nan, a, r), x, y)
    with pytest.raises(TypeError, match="params must be a ClusterMoEParams"):
        cluster_moe_loss((th, a, r), x, y)


def test_cluster_moe_loss_refuses_bad_data_and_routing():
    p = ClusterMoEParams(*_moe_params())
    with pytest.raises(ValueError, match=r"x must have shape \(1, batch, 2\)"):
        cluster_moe_loss(p, np.zeros((1, 3, 5)), np.ones((1, 3)))           # wrong dimension
    with pytest.raises(ValueError, match=r"x must have shape \(1, batch, 2\)"):
        cluster_moe_loss(p, np.zeros((2, 3, 2)), np.ones((2, 3)))           # wrong number of replications
    with pytest.raises(ValueError, match=r"y must have shape \(1, 3\)"):
        cluster_moe_loss(p, np.zeros((1, 3, 2)), np.ones((1, 4)))
    with pytest.raises(ValueError, match="x contains NaN"):
        cluster_moe_loss(p, np.full((1, 3, 2), np.nan), np.ones((1, 3)))
    with pytest.raises(TypeError, match="x must hold real numbers"):
        cluster_moe_loss(p, np.zeros((1, 3, 2)) + 0j, np.ones((1, 3)))
    with pytest.raises(ValueError, match=r"cluster must lie in \{0, ..., 1\}"):
        cluster_moe_loss(p, np.zeros((1, 3, 2)), np.ones((1, 3)), cluster=np.array([[0, 1, 2]]))
    with pytest.raises(ValueError, match=r"cluster must lie in \{0, ..., 1\}"):
        cluster_moe_loss(p, np.zeros((1, 3, 2)), np.ones((1, 3)), cluster=np.array([[0, -1, 1]]))
    with pytest.raises(TypeError, match="cluster must be an array of integers"):
        cluster_moe_loss(p, np.zeros((1, 3, 2)), np.ones((1, 3)), cluster=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="balance must be finite"):
        cluster_moe_loss(p, np.zeros((1, 3, 2)), np.ones((1, 3)), balance=np.nan)


def test_cluster_overlap_refuses_bad_input():
    th = np.array([[[[1.0, 0.0]], [[0.6, 0.8]]]])
    w = np.array([[0.0, 1.0]])
    with pytest.raises(ValueError, match=r"assignment must lie in \{0, ..., 1\}"):
        cluster_overlap(th, w, np.array([[0, 2]]))
    with pytest.raises(ValueError, match=r"assignment must lie in \{0, ..., 1\}"):
        cluster_overlap(th, w, np.array([[0, -1]]))                      # wrapped to the last expert before
    with pytest.raises(TypeError, match="assignment must be an array of integers"):
        cluster_overlap(th, w, np.array([[0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"direction must have shape \(1, 2\)"):
        cluster_overlap(th, np.array([[0.0, 1.0, 0.0]]), np.array([[0, 1]]))
    with pytest.raises(ValueError, match="non-zero rows"):
        cluster_overlap(th, np.zeros((1, 2)), np.array([[0, 1]]))
    with pytest.raises(ValueError, match="first_layer contains NaN"):
        cluster_overlap(th * np.nan, w, np.array([[0, 1]]))
    with pytest.raises(TypeError, match="first_layer must hold real numbers"):
        cluster_overlap(th + 0j, w, np.array([[0, 1]]))


def test_routing_accuracy_refuses_bad_input():
    r = np.array([[[1.0], [-1.0]]])
    x = np.array([[[2.0], [-1.0], [3.0]]])
    with pytest.raises(ValueError, match=r"cluster must lie in \{0, ..., 1\}"):
        routing_accuracy(r, x, np.array([[1, 0, 2]]), 2)
    with pytest.raises(ValueError, match=r"cluster must lie in \{0, ..., 1\}"):
        routing_accuracy(r, x, np.array([[1, 0, -1]]), 2)                # counted as cluster 1 before
    with pytest.raises(ValueError, match=r"router must have shape \(n_reps, 3, dim\)"):
        routing_accuracy(r, x, np.array([[1, 0, 1]]), 3)                 # n_experts is not the router's
    with pytest.raises(ValueError, match="n_experts must be <= 8"):
        routing_accuracy(np.zeros((1, 9, 1)), x, np.array([[1, 0, 1]]), 9)   # 9! matchings
    with pytest.raises(TypeError, match="n_experts must be an integer"):
        routing_accuracy(r, x, np.array([[1, 0, 1]]), 2.0)
    with pytest.raises(ValueError, match=r"x must have shape \(1, n_samples, 1\)"):
        routing_accuracy(r, np.zeros((1, 3, 2)), np.array([[1, 0, 1]]), 2)
    with pytest.raises(ValueError, match="x contains NaN"):
        routing_accuracy(r, x * np.nan, np.array([[1, 0, 1]]), 2)
    with pytest.raises(ValueError, match=r"cluster must have shape \(1, 3\)"):
        routing_accuracy(r, x, np.array([[1, 0]]), 2)


# ---------------------------------------------------------------------------- mixtures of polynomial experts

def test_monomial_exponents_and_parameter_count_refuse_bad_sizes():
    with pytest.raises(ValueError, match="n_features must be >= 1"):
        monomial_exponents(0, 2)
    with pytest.raises(ValueError, match="degree must be >= 0"):
        monomial_exponents(2, -1)
    with pytest.raises(TypeError, match="degree must be an integer"):
        monomial_exponents(2, "2")
    with pytest.raises(ValueError, match="n_features, degree too large"):
        monomial_exponents(100, 10)               # 4.7e13 monomials
    with pytest.raises(ValueError, match="n_experts must be >= 1"):
        parameter_count(0, 1, 1)
    with pytest.raises(ValueError, match="degree must be >= 0"):
        parameter_count(2, -1, 1)
    with pytest.raises(TypeError, match="n_features must be an integer"):
        parameter_count(2, 1, 1.0)


def test_polynomial_features_refuses_bad_x():
    with pytest.raises(ValueError, match=r"X must have shape \(..., n_samples, n_features\)"):
        polynomial_features(np.array([1.0, 2.0]), 2)
    with pytest.raises(ValueError, match="X contains NaN"):
        polynomial_features(np.array([[np.nan]]), 2)                     # gave NaN features before
    with pytest.raises(TypeError, match="X must hold real numbers"):
        polynomial_features(np.array([[1.0 + 1j]]), 2)
    with pytest.raises(ValueError, match="degree must be >= 0"):
        polynomial_features(np.ones((2, 1)), -1)
    with pytest.raises(ValueError, match="X, degree too large"):
        polynomial_features(np.ones((10**5, 30)), 4)                     # 4.6e4 monomials per point


def _poly_truth():
    return PolyMoEParams(np.zeros((1, 2)), np.zeros((1, 2, 1)), np.array([[[1.0, 0.0], [-1.0, 0.0]]]),
                         np.ones((1, 2)), degree=1)


def test_polynomial_moe_samplers_refuse_bad_input():
    t = _poly_truth()
    with pytest.raises(ValueError, match="n_samples must be >= 1"):
        sample_polynomial_moe(0, t)
    with pytest.raises(TypeError, match="truth must be a PolyMoEParams"):
        sample_polynomial_moe(5, SmoothRegressionTarget())
    with pytest.raises(ValueError, match="first_rep must be >= 0"):
        sample_polynomial_moe(5, t, first_rep=-1)
    with pytest.raises(ValueError, match="n_samples, truth too large"):
        sample_polynomial_moe(10**12, t)
    with pytest.raises(ValueError, match="n_reps must be >= 1"):
        sample_smooth_regression(5, 0, SmoothRegressionTarget())
    with pytest.raises(TypeError, match="target must be a SmoothRegressionTarget"):
        sample_smooth_regression(5, 1, t)
    with pytest.raises(TypeError, match="seed must be an int"):
        sample_smooth_regression(5, 1, SmoothRegressionTarget(), seed=0.5)
    with pytest.raises(ValueError, match="n_samples, n_reps, target.n_features too large"):
        sample_smooth_regression(10**7, 10**6, SmoothRegressionTarget())


def test_kl_risk_refuses_bad_input():
    t = _poly_truth()
    with pytest.raises(ValueError, match="n_mc must be >= 2"):
        kl_risk(t, t, n_mc=1)
    with pytest.raises(TypeError, match="truth must be a PolyMoEParams or a SmoothRegressionTarget"):
        kl_risk(t, "truth")
    with pytest.raises(ValueError, match="truth has 2 features, params have 1"):
        kl_risk(t, SmoothRegressionTarget(n_features=2))
    with pytest.raises(ValueError, match="n_quad too large"):
        kl_risk(t, t, n_mc=2, n_quad=10**5)       # a 1e5 x 1e5 eigenproblem


# ------------------------------------------------------------------ contaminated MoE: links, densities, errors

@pytest.mark.parametrize("u", [np.array([0.5 + 1j]), np.array(["0.5"]), "0.5", None],
                         ids=["complex", "str-array", "str", "None"])
def test_links_refuse_non_real_scores(u):
    with pytest.raises(TypeError, match="^u must"):
        link_value(u, "tanh")
    with pytest.raises(TypeError, match="^u must"):
        link_derivative(u, "sigmoid")


def test_links_refuse_an_unknown_link_and_accept_numbers_and_lists():
    with pytest.raises(ValueError, match="link must be one of"):
        link_value(np.zeros(2), "relu")
    with pytest.raises(ValueError, match="link must be one of"):
        link_derivative(np.zeros(2), "relu")
    np.testing.assert_allclose(link_value([0.0, 1.0], "tanh"), [0.0, np.tanh(1.0)], rtol=1e-15)
    assert float(link_derivative(0.0, "tanh")) == 1.0


@pytest.mark.parametrize("nu", [-1.0, 0.0, np.nan, np.inf, np.array([1.0, -1.0]), np.array([1.0, np.nan])],
                         ids=["negative", "zero", "nan", "inf", "array-negative", "array-nan"])
def test_log_density_refuses_a_bad_nu(nu):
    with pytest.raises(ValueError, match="^nu must"):
        log_density(np.zeros(2), np.zeros(2), nu, "gaussian")            # NaN or a warning before


def test_log_density_refuses_bad_responses_and_settings():
    with pytest.raises(TypeError, match="y must hold real numbers"):
        log_density(np.array([1j]), np.zeros(1), 1.0, "gaussian")         # a complex "density" before
    with pytest.raises(TypeError, match="loc must hold real numbers"):
        log_density(np.zeros(1), np.array(["0"]), 1.0, "laplace")
    with pytest.raises(ValueError, match="y, loc and nu must broadcast"):
        log_density(np.zeros(2), np.zeros(3), 1.0, "gaussian")
    with pytest.raises(ValueError, match="density must be one of"):
        log_density(np.zeros(2), np.zeros(2), 1.0, "cauchy")
    with pytest.raises(ValueError, match="df must be > 0"):
        log_density(np.zeros(2), np.zeros(2), 1.0, "student_t", df=-1.0)


def _cm(beta=(0.0, 0.0), tau=0.0, eta=(1.0, 0.0), nu=1.0, n_reps=1):
    return ContaminatedMoEParams.tile(list(beta), tau, list(eta), nu, n_reps=n_reps)


def test_parameter_errors_refuses_bad_parameters():
    t = _cm()
    with pytest.raises(ValueError, match=r"truth.beta must have shape \(n_reps, n_features\)"):
        parameter_errors(t, ContaminatedMoEParams(np.zeros(2), 0.0, np.zeros(2), 1.0))   # a raw unpack error before
    with pytest.raises(ValueError, match=r"params.beta must have shape \(1, 2\)"):
        parameter_errors(_cm(beta=(0.0, 0.0, 0.0), eta=(1.0, 0.0, 0.0)), t)
    with pytest.raises(ValueError, match=r"params.beta must have shape \(1, 2\)"):
        parameter_errors(_cm(n_reps=2), t)
    with pytest.raises(ValueError, match="params.nu must be positive"):
        parameter_errors(ContaminatedMoEParams(np.zeros((1, 2)), np.zeros(1), np.zeros((1, 2)), -np.ones(1)), t)
    with pytest.raises(TypeError, match="truth.beta must hold real numbers"):
        parameter_errors(t, ContaminatedMoEParams(np.zeros((1, 2)) + 0j, np.zeros(1), np.zeros((1, 2)), np.ones(1)))
    with pytest.raises(TypeError, match="params must be a ContaminatedMoEParams"):
        parameter_errors("params", t)


def test_contaminated_moe_loglik_refuses_bad_input():
    e = FrozenExpert(np.array([1.0, 0.0]), 1.0, "laplace")
    X, y, p = np.zeros((1, 4, 2)), np.zeros((1, 4)), _cm()
    with pytest.raises(ValueError, match=r"y must have shape \(1, 4\)"):
        contaminated_moe_loglik(X, np.zeros((1, 3)), p, e)
    with pytest.raises(ValueError, match="X contains NaN"):
        contaminated_moe_loglik(X * np.nan, y, p, e)
    with pytest.raises(ValueError, match="expert.eta0 has 1 features"):
        contaminated_moe_loglik(X, y, p, FrozenExpert(np.array([1.0]), 1.0, "laplace"))
    with pytest.raises(ValueError, match=r"params.eta must have shape \(1, 2\)"):
        contaminated_moe_loglik(X, y, ContaminatedMoEParams(np.zeros((1, 2)), np.zeros(1), np.zeros((1, 3)),
                                                            np.ones(1)), e)
    with pytest.raises(ValueError, match="link must be one of"):
        contaminated_moe_loglik(X, y, p, e, link="relu")


def test_fisher_information_refuses_mismatched_parameters_and_too_fine_grids():
    e = FrozenExpert(np.array([1.0]), 1.0, "laplace")
    with pytest.raises(ValueError, match=r"params.tau must have shape \(1,\)"):
        fisher_information(ContaminatedMoEParams(np.zeros((1, 1)), np.zeros(2), -np.ones((1, 1)), np.ones(1)), e)
    with pytest.raises(TypeError, match="params.beta must hold real numbers"):
        fisher_information(ContaminatedMoEParams(np.zeros((1, 1)) + 1j, np.zeros(1), np.zeros((1, 1)), np.ones(1)),
                           e)                                          # the imaginary part was dropped before
    with pytest.raises(ValueError, match="x_step and y_step too small"):
        fisher_information(_cm(beta=(0.5,), eta=(-1.0,)), e, x_step=1e-6)


def test_asymptotic_parameter_errors_refuses_bad_input():
    e = FrozenExpert(np.array([1.0]), 1.0, "laplace")
    p = _cm(beta=(0.5,), tau=1.0, eta=(-1.0,))
    with pytest.raises(ValueError, match="n_samples must be >= 1"):
        asymptotic_parameter_errors(p, e, 0)
    with pytest.raises(ValueError, match="n_draws must be >= 1"):
        asymptotic_parameter_errors(p, e, 100, n_draws=0)
    with pytest.raises(TypeError, match="seed must be an int"):
        asymptotic_parameter_errors(p, e, 100, seed="0")
    with pytest.raises(ValueError, match=r"params.tau must have shape \(1,\)"):
        asymptotic_parameter_errors(ContaminatedMoEParams(np.zeros((1, 1)), np.zeros(2), -np.ones((1, 1)),
                                                          np.ones(1)), e, 100)   # broadcast silently before
    with pytest.raises(ValueError, match="n_draws, params too large"):
        asymptotic_parameter_errors(p, e, 100, n_draws=10**12)


def test_asymptotic_parameter_errors_refuses_the_singular_point():
    """Prompt equal to a Gaussian frozen expert: the information is singular, the errors were 1e15 before."""
    e = FrozenExpert(np.array([1.0]), 1.0, "gaussian")
    with pytest.raises(ValueError, match="params: the Fisher information is singular"):
        asymptotic_parameter_errors(_cm(beta=(0.5,), tau=1.0, eta=(1.0,), nu=1.0), e, 100)
    # a nearby regular point still gives finite errors that shrink as n^(-1/2)
    a, b = (asymptotic_parameter_errors(_cm(beta=(0.5,), tau=1.0, eta=(-1.0,), nu=1.0), e, n) for n in (100, 400))
    assert np.all(np.isfinite(a.nu)) and abs(a.nu[0] / b.nu[0] - 2.0) < 1e-12


def test_voronoi_cells_refuses_non_real_and_mismatched_atoms():
    t = SoftmaxMoEParams(np.zeros(2), np.zeros((2, 1)), np.array([[-1.0], [1.0]]), np.zeros(2), np.ones(2))
    with pytest.raises(TypeError, match="fitted.gate_bias must hold real numbers"):
        voronoi_cells(SoftmaxMoEParams(np.array(["0", "0"]), np.zeros((2, 1)), np.zeros((2, 1)), np.zeros(2),
                                       np.ones(2)), t)                 # the strings were parsed before
    with pytest.raises(TypeError, match="true.expert_weight must hold real numbers"):
        voronoi_cells(t, SoftmaxMoEParams(np.zeros(2), np.zeros((2, 1)), np.zeros((2, 1)) + 1j, np.zeros(2),
                                          np.ones(2)))
    with pytest.raises(ValueError, match="fitted has 1 features, true has 2"):
        voronoi_cells(t, SoftmaxMoEParams(np.zeros(2), np.zeros((2, 2)), np.zeros((2, 2)), np.zeros(2), np.ones(2)))
    with pytest.raises(ValueError, match="true.variance must be positive"):
        voronoi_cells(t, SoftmaxMoEParams(np.zeros(2), np.zeros((2, 1)), np.zeros((2, 1)), np.zeros(2), -np.ones(2)))
    with pytest.raises(TypeError, match="true must be a SoftmaxMoEParams"):
        voronoi_cells(t, "true")


def test_voronoi_loss_overfit_refuses_a_bad_r_bar():
    t = SoftmaxMoEParams(np.zeros(1), np.zeros((1, 1)), np.ones((1, 1)), np.zeros(1), np.ones(1))
    with pytest.raises(TypeError, match=r"r_bar\[2\] must be a real number"):
        voronoi_loss_overfit(t, t, r_bar={2: "4"})
    with pytest.raises(TypeError, match="r_bar must be a dict"):
        voronoi_loss_overfit(t, t, r_bar=[4, 6])


# ------------------------------------------------------------------------------------------------- EM cores

def _gm():
    return GaussianMixtureParams(np.array([[0.5, 0.5]]), np.array([[[-1.0], [1.0]]]), np.array([[1.0, 1.0]]),
                                 "spherical")


def test_log_likelihood_refuses_bad_input():
    X = np.array([[[-1.0], [1.0]]])
    with pytest.raises(ValueError, match=r"X must have shape \(n_reps, n_samples, n_features\)"):
        log_likelihood(X[0], _gm())
    with pytest.raises(TypeError, match="params must be a GaussianMixtureParams"):
        log_likelihood(X, "params")
    with pytest.raises(ValueError, match="params.weights rows must lie on the simplex"):
        log_likelihood(X, GaussianMixtureParams(np.array([[0.5, 0.6]]), _gm().means, _gm().covariances, "spherical"))
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        log_likelihood(X, _gm(), sample_weight=np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match=r"labels must lie in \{-1, 0, ..., 1\}"):
        log_likelihood(X, _gm(), labels=np.array([2, -1]))
    with pytest.raises(TypeError, match="labels must be a \\(rectangular\\) array of integers"):
        log_likelihood(X, _gm(), labels=[[0], [0, 1]])
    with pytest.raises(ValueError, match="prior rows must lie on the simplex"):
        log_likelihood(X, _gm(), prior=np.array([[0.5, 0.6], [0.5, 0.5]]))


def test_log_prior_from_labels_refuses_bad_sizes_and_labels():
    lab = np.array([1, -1])
    with pytest.raises(ValueError, match="n_components must be >= 1"):
        log_prior_from_labels(lab, n_reps=1, n_samples=2, n_components=0)   # blamed the labels before
    with pytest.raises(TypeError, match="n_components must be an integer"):
        log_prior_from_labels(lab, n_reps=1, n_samples=2, n_components=2.0)
    with pytest.raises(TypeError, match="n_reps must be an integer"):
        log_prior_from_labels(lab, n_reps="1", n_samples=2, n_components=2)
    with pytest.raises(ValueError, match=r"labels must have shape \(3,\) or \(1, 3\)"):
        log_prior_from_labels(lab, n_reps=1, n_samples=3, n_components=2)
    with pytest.raises(TypeError, match="labels must be integers"):
        log_prior_from_labels(np.array([True, False]), n_reps=1, n_samples=2, n_components=2)
    with pytest.raises(TypeError, match="prior must hold real numbers"):
        log_prior_from_labels(None, np.full((1, 2), 0.5) + 0j, n_reps=1, n_samples=1, n_components=2)
    with pytest.raises(ValueError, match="n_reps, n_samples, n_components too large"):
        log_prior_from_labels(None, np.full((1, 2), 0.5), n_reps=10**6, n_samples=10**6, n_components=2)


# ------------------------------------------------------------------------------------------- Shapley values

def _glove(m):
    return np.minimum(m[:, :2].sum(axis=1), m[:, 2]).astype(float)


@pytest.mark.parametrize("out", [np.array(["1.0"]), np.array([1.0 + 1j])], ids=["str", "complex"])
def test_shapley_refuses_a_value_function_of_non_real_values(out):
    """Strings were parsed and the imaginary part dropped before: all-zero Shapley values from "1.0"."""
    with pytest.raises(TypeError, match=r"value\(masks\) must hold real numbers"):
        shapley_exact(lambda m: np.repeat(out, m.shape[0]), 3)
    with pytest.raises(TypeError, match=r"value\(masks\) must hold real numbers"):
        shapley_mc(lambda m: np.repeat(out, m.shape[0]), 3, 10)


def test_shapley_exact_refuses_bad_input():
    with pytest.raises(ValueError, match="n_players must be <= 20"):
        shapley_exact(_glove, 21)
    with pytest.raises(TypeError, match="n_players must be an integer"):
        shapley_exact(_glove, 3.0)
    with pytest.raises(TypeError, match="value must be a callable"):
        shapley_exact([0.0, 1.0], 3)
    with pytest.raises(ValueError, match=r"value\(masks\) must return one value per coalition"):
        shapley_exact(lambda m: m.sum(), 3)
    with pytest.raises(ValueError, match=r"value\(masks\) returned a non-finite value"):
        shapley_exact(lambda m: np.full(m.shape[0], np.nan), 3)


def test_shapley_mc_refuses_bad_input():
    with pytest.raises(ValueError, match="n_permutations must be >= 2"):
        shapley_mc(_glove, 3, 1)
    with pytest.raises(ValueError, match="proposal must be 3 positive finite weights"):
        shapley_mc(_glove, 3, 10, proposal=[1.0, -1.0, 1.0])
    with pytest.raises(TypeError, match="proposal must hold real numbers"):
        shapley_mc(_glove, 3, 10, proposal=["1", "1", "1"])
    with pytest.raises(ValueError, match="truncation must be >= 0"):
        shapley_mc(_glove, 3, 10, truncation=-0.1)
    with pytest.raises(ValueError, match="n_reps must be >= 1"):
        shapley_mc(_glove, 3, 10, n_reps=0)
    with pytest.raises(ValueError, match="n_permutations, n_players, n_reps too large"):
        shapley_mc(_glove, 3, 10**10)


def test_table_game_refuses_bad_tables_and_masks():
    with pytest.raises(ValueError, match=r"values must hold 2\*\*n coalition values"):
        table_game([0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="values must be finite"):
        table_game([0.0, 1.0, np.nan, 3.0])
    with pytest.raises(TypeError, match="values must hold real numbers"):
        table_game(["0", "1", "2", "4"])                                # parsed silently before
    value = table_game([0.0, 1.0, 2.0, 4.0])
    with pytest.raises(ValueError, match=r"masks must have shape \(m, 2\)"):
        value(np.array([[True, False, True]]))                          # a raw matmul error before
    with pytest.raises(ValueError, match=r"masks must have shape \(m, 2\)"):
        value(np.array([True, False]))                                  # one scalar value before
    with pytest.raises(ValueError, match="masks must hold 0/1"):
        value(np.array([[2, 0]]))
    assert value(np.array([[1, 1], [0, 1]])).tolist() == [4.0, 2.0]


# -------------------------------------------------------------------------- SSME: transforms, draws, metrics

@pytest.mark.parametrize("z, exc, msg", [
    (np.array([0.0, 1.0]) + 1j, TypeError, "z must hold real numbers"),
    (np.array(["0.0", "1.0"]), TypeError, "z must hold real numbers"),
    (0.5, ValueError, r"z must have shape \(..., n_classes - 1\)"),
    (np.zeros((2, 0)), ValueError, r"z must have shape \(..., n_classes - 1\)"),
    (np.array([np.nan, 0.0]), ValueError, r"z must not contain NaN or \+inf"),
    (np.array([np.inf, 0.0]), ValueError, r"z must not contain NaN or \+inf")],
    ids=["complex", "str", "scalar", "empty", "nan", "inf"])
def test_alr_inverse_refuses_bad_log_ratios(z, exc, msg):
    with pytest.raises(exc, match=msg):
        alr_inverse(z)


def test_alr_inverse_reads_minus_inf_as_probability_zero():
    np.testing.assert_allclose(alr_inverse(np.array([-np.inf, 0.0])), [0.0, 0.5, 0.5], rtol=1e-15)


POST = np.array([[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]])
LAB = np.array([[1, -1, -1]])


@pytest.mark.parametrize("post", [POST * 0.5, np.array([[[1.5, -0.5], [0.0, 1.0], [0.5, 0.5]]]), POST * np.nan],
                         ids=["sums-to-half", "negative", "nan"])
def test_draw_labels_refuses_a_posterior_off_the_simplex(post):
    with pytest.raises(ValueError, match="posterior rows must lie on the simplex"):
        draw_labels(post, LAB, n_draws=2)                               # drew labels from it before


def test_draw_labels_refuses_bad_labels_and_replication_ids():
    with pytest.raises(TypeError, match="labels must be integers"):
        draw_labels(POST, LAB + 0.5, n_draws=2)
    with pytest.raises(ValueError, match=r"labels must lie in \{-1, 0, ..., 1\}"):
        draw_labels(POST, np.array([[5, -1, -1]]), n_draws=2)          # returned the label 5 before
    with pytest.raises(ValueError, match=r"labels must lie in \{-1, 0, ..., 1\}"):
        draw_labels(POST, np.array([[-3, -1, -1]]), n_draws=2)
    with pytest.raises(ValueError, match="rep_ids must be non-negative"):
        draw_labels(POST, LAB, n_draws=2, rep_ids=[-1])                 # wrapped to 2**64 - 1 before
    with pytest.raises(TypeError, match="rep_ids must be integers"):
        draw_labels(POST, LAB, n_draws=2, rep_ids=[0.5])               # truncated to 0 before
    with pytest.raises(TypeError, match="posterior must hold real numbers"):
        draw_labels(POST + 0j, LAB, n_draws=2)
    with pytest.raises(ValueError, match="n_draws, posterior too large"):
        draw_labels(POST, LAB, n_draws=10**12)


P2 = np.array([[0.9, 0.1], [0.4, 0.6], [0.2, 0.8]])
Y2 = np.array([0, 0, 1])


@pytest.mark.parametrize("fn", [average_precision, expected_calibration_error, top_label_calibration_error],
                         ids=["auprc", "ece", "top-label"])
def test_metrics_refuse_bad_labels_probs_and_weights(fn):
    with pytest.raises(TypeError, match="labels must be integers"):
        fn(Y2.astype(float), P2)
    with pytest.raises(ValueError, match=r"labels must lie in \{0, ..., 1\}"):
        fn(np.array([0, 0, 2]), P2)
    with pytest.raises(ValueError, match=r"labels must have shape \(..., 3\)"):
        fn(np.array([0, 1]), P2)
    with pytest.raises(ValueError, match="probs rows must lie on the simplex"):
        fn(Y2, P2 * 0.5)
    with pytest.raises(TypeError, match="probs must be an array of real numbers"):
        fn(Y2, P2 + 0j)
    with pytest.raises(TypeError, match="sample_weight must hold real numbers"):
        fn(Y2, P2, sample_weight=np.array(["1", "1", "1"]))              # parsed silently before
    with pytest.raises(TypeError, match="sample_weight must hold real numbers"):
        fn(Y2, P2, sample_weight=np.ones(3) + 1j)
    with pytest.raises(ValueError, match="sample_weight must be finite and non-negative"):
        fn(Y2, P2, sample_weight=np.array([1.0, -1.0, 1.0]))


def test_average_precision_refuses_string_weights_and_labels_out_of_range():
    with pytest.raises(TypeError, match="sample_weight must hold real numbers"):
        average_precision(Y2, P2, sample_weight=["0", "1", "1"])
    with pytest.raises(ValueError, match=r"labels must lie in \{0, ..., 1\}"):
        average_precision(np.array([[0, 1, 1], [0, 1, -1]]), P2)


def test_calibration_errors_refuse_bad_bin_counts():
    with pytest.raises(ValueError, match="n_bins must be >= 1"):
        expected_calibration_error(Y2, P2, n_bins=0)
    with pytest.raises(TypeError, match="n_bins must be an integer"):
        top_label_calibration_error(Y2, P2, n_bins=2.5)
    with pytest.raises(ValueError, match="n_bins too large"):
        expected_calibration_error(Y2, P2, n_bins=10**10)


S6 = np.array([0.1, 0.2, 0.8, 0.9, 0.15, 0.85])
PROBS6 = np.stack([1 - S6, S6], -1)[None, :, None, :]
LAB6 = np.array([[0, 0, 1, 1, -1, -1]])


def test_pseudo_labels_refuses_bad_input():
    with pytest.raises(ValueError, match="labels must hold at least one labelled point"):
        pseudo_labels(PROBS6, np.full((1, 6), -1), metrics=("accuracy",))   # an arbitrary 0.5 before
    with pytest.raises(ValueError, match=r"probs must have shape \(n_reps, n_samples, n_classifiers, n_classes\)"):
        pseudo_labels(PROBS6[0], LAB6)
    with pytest.raises(TypeError, match="labels must be integers"):
        pseudo_labels(PROBS6, LAB6.astype(float))
    with pytest.raises(ValueError, match="l2 must be >= 0"):
        pseudo_labels(PROBS6, LAB6, l2=-1.0)
    with pytest.raises(ValueError, match="n_steps must be >= 1"):
        pseudo_labels(PROBS6, LAB6, n_steps=0)
    with pytest.raises(ValueError, match="metrics must be a non-empty tuple"):
        pseudo_labels(PROBS6, LAB6, metrics="accuracy")


def test_majority_vote_refuses_bad_input():
    with pytest.raises(TypeError, match="weighted must be a bool"):
        majority_vote(PROBS6, LAB6, weighted="no")                      # read as True before
    with pytest.raises(ValueError, match=r"labels must lie in \{-1, 0, ..., 1\}"):
        majority_vote(PROBS6, np.array([[0, 0, 1, 2, -1, -1]]))
    with pytest.raises(ValueError, match="probs rows must lie on the simplex"):
        majority_vote(PROBS6 * 0.5, LAB6)
    with pytest.raises(ValueError, match="metrics must be a non-empty tuple"):
        majority_vote(PROBS6, LAB6, metrics=())
    with pytest.raises(ValueError, match="n_bins must be >= 1"):
        majority_vote(PROBS6, LAB6, n_bins=-1)


def test_classifier_pool_refuses_bad_settings():
    pytest.importorskip("sklearn")
    with pytest.raises(ValueError, match="dataset must be one of"):
        classifier_pool("mnist")
    with pytest.raises(ValueError, match=r"train_fraction must lie in \(0, 1\)"):
        classifier_pool("iris", train_fraction=1.0)
    with pytest.raises(ValueError, match="train_fraction=0.001 leaves 0 of the 150 points"):
        classifier_pool("iris", train_fraction=0.001)                    # a scikit-learn message on train_size before
    with pytest.raises(ValueError, match="seed must be non-negative"):
        classifier_pool("iris", seed=-1)
    with pytest.raises(ValueError, match="floor must be below 1 / n_classes"):
        classifier_pool("iris", floor=0.5)


def test_silverman_bandwidth_refuses_bad_input():
    x = np.linspace(-1.0, 1.0, 11)
    with pytest.raises(ValueError, match=r"x must have shape \(..., n_samples\) with n_samples >= 2"):
        silverman_bandwidth(np.array([1.0]))
    with pytest.raises(ValueError, match="silverman_bandwidth: a row has zero spread"):
        silverman_bandwidth(np.ones(5))
    with pytest.raises(ValueError, match="x contains NaN"):
        silverman_bandwidth(np.array([1.0, np.nan, 2.0]))
    with pytest.raises(TypeError, match="x must hold real numbers"):
        silverman_bandwidth(x + 0j)
    with pytest.raises(TypeError, match=r"x must be a \(rectangular\) array"):
        silverman_bandwidth([[1.0, 2.0], [1.0]])
    with pytest.raises(TypeError, match="sample_weight must hold real numbers"):
        silverman_bandwidth(x, sample_weight=np.ones(11).astype(str))  # parsed silently before
    with pytest.raises(ValueError, match=r"sample_weight must have the shape of x \(11,\)"):
        silverman_bandwidth(x, sample_weight=np.ones(10))
    with pytest.raises(ValueError, match="sample_weight must have a positive sum in every row"):
        silverman_bandwidth(x, sample_weight=np.zeros(11))


# ------------------------------------------------------------------------------------------ MoESD cost model

def test_simulate_activated_experts_refuses_bad_input():
    with pytest.raises(TypeError, match="tokens must be an integer"):
        simulate_activated_experts(4.0, 16, 2, 5)
    with pytest.raises(ValueError, match="tokens must be >= 0"):
        simulate_activated_experts(-1, 16, 2, 5)
    with pytest.raises(ValueError, match="top_k must be at most n_experts=2"):
        simulate_activated_experts(4, 2, 3, 5)
    with pytest.raises(ValueError, match="n_reps must be >= 1"):
        simulate_activated_experts(4, 16, 2, 0)
    with pytest.raises(TypeError, match="seed must be an int"):
        simulate_activated_experts(0, 16, 2, 5, seed=1.5)               # ignored when tokens = 0 before
    with pytest.raises(ValueError, match="n_reps, n_experts too large"):
        simulate_activated_experts(1, 10**6, 2, 10**7)


def test_moe_time_model_fit_refuses_non_real_tokens_and_times():
    t = np.array([1, 2, 4, 8])
    with pytest.raises(TypeError, match="times must hold real numbers"):
        fit_moe_time_model(t, ["1", "2", "3", "4"], 8, 2)              # parsed silently before
    with pytest.raises(TypeError, match="tokens must hold real numbers"):
        fit_moe_time_model(t + 0j, np.ones(4), 8, 2)
    with pytest.raises(TypeError, match="tokens must hold real numbers"):
        MoETimeModel(1.0, 1.0, 0.0, n_experts=8, top_k=2).time(np.array(["4"]))
