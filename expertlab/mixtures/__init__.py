"""Mixture-model estimators and the numerical cores around mixtures of experts.

- EM cores as pure, batched functions (:func:`e_step`, :func:`m_step`,
  :func:`log_likelihood`) with sample weights and hard or soft label priors,
  and the Gaussian mixture built on them (:func:`fit_gaussian_mixture`, the
  scikit-learn-style :class:`GaussianMixture`), which fits many replications
  at once.
- Shapley values of the experts of a mixture, exactly on small games and by
  permutation sampling (plain, truncated, or importance-weighted by the
  router) on large ones.
- SSME, semi-supervised evaluation of several classifiers from a few labels
  and many unlabelled scores (:func:`fit_ssme`, :class:`SSME`,
  :func:`estimate_metrics`), its baselines, the Scott, Silverman and
  improved Sheather–Jones bandwidths, and a pool of classifiers scored on
  scikit-learn's data sets (:func:`classifier_pool`).
- The MoE speculative-decoding cost model: expected activated experts under
  top-K routing, target efficiency, speedup, and a least-squares fit of the
  time model.
- The softmax-contaminated mixture of experts (a frozen expert plus a
  trainable Gaussian prompt, :func:`fit_contaminated_moe`,
  :class:`SoftmaxContaminatedMoE`) fitted by batched EM, with its per-parameter
  errors; the softmax-gated Gaussian MoE with frozen experts allowed
  (:func:`fit_softmax_moe`, :class:`SoftmaxGatedMoE`) and its Voronoi losses.
  The contaminated model's Fisher information by quadrature
  (:func:`fisher_information`) gives the MLE's asymptotic errors
  (:func:`asymptotic_parameter_errors`).
- Mixtures of polynomial experts, the :math:`(m, k)` family of Mendes & Jiang:
  parameter counts, batched EM (:func:`fit_polynomial_moe`) and the Monte
  Carlo KL risk (:func:`kl_risk`) against a true MoE or a smooth target.
- Clustered single-index data whose pooled task has a higher information exponent than each cluster's
  (:func:`sample_clustered_single_index`), with online SGD of a small MoE (:func:`train_cluster_moe`) and of
  one two-layer network (:func:`train_single_network`) and their overlap metrics.
"""

from . import _claims, _claims_em, _claims_moe, _claims_poly, _claims_ssme  # noqa: F401  (register claims)
from . import _claims_cluster  # noqa: F401  (register claims)
from ._cluster_training import (ClusterMoEParams, ClusterTrainResult, cluster_moe_loss, cluster_overlap,
                                routing_accuracy, train_cluster_moe, train_single_network)
from ._clustered_single_index import (ClusteredSample, cluster_codes, cluster_signs, hermite_link,
                                      sample_clustered_single_index)
from ._bandwidth import bandwidth, isj_bandwidth, scott_bandwidth, silverman_bandwidth
from ._contaminated_moe import (ContaminatedMoEParams, contaminated_moe_loglik, fit_contaminated_moe, perturbed_truth,
                                sample_contaminated_moe)
from ._em import EMResult, GaussianMixtureParams, e_step, log_likelihood, log_prior_from_labels, m_step
from ._gaussian_mixture import GaussianMixture, fit_gaussian_mixture
from ._moe_links import FrozenExpert, link_derivative, link_value, log_density
from ._moesd import (MoETimeFit, MoETimeModel, acceptance_length, expected_activated_experts, fit_moe_time_model,
                     sd_speedup, simulate_activated_experts, target_efficiency)
from ._poly_risk import KLRisk, SmoothRegressionTarget, kl_risk, sample_polynomial_moe, sample_smooth_regression
from ._polynomial_experts import (PolyMoEParams, PolyParameterCount, fit_polynomial_moe, monomial_exponents,
                                  parameter_count, poly_moe_log_density, polynomial_features)
from ._shapley import ShapleyResult, shapley_exact, shapley_mc, table_game
from ._softmax_moe import SoftmaxContaminatedMoE, SoftmaxGatedMoE, fit_softmax_moe
from ._ssme import SSME, fit_ssme
from ._contaminated_fisher import asymptotic_parameter_errors, fisher_information
from ._ssme_data import POOL_DATASETS, classifier_pool
from ._ssme_baselines import labeled_only, majority_vote, pseudo_labels
from ._ssme_inference import DawidSkeneResult, PPIResult, dawid_skene, ppi_accuracy
from ._ssme_model import SSMEParams, SSMEResult, alr, alr_inverse
from ._ssme_estimate import MetricEstimate, draw_labels, estimate_metrics
from ._ssme_metrics import (accuracy, average_precision, expected_calibration_error, roc_auc,
                            top_label_calibration_error)
from ._voronoi import (ContaminatedMoEErrors, SoftmaxMoEParams, parameter_errors, sample_softmax_moe, voronoi_cells,
                       voronoi_loss_exact, voronoi_loss_overfit)

__all__ = [
    # clustered single-index demonstration (MoE vs single network)
    "ClusteredSample", "ClusterMoEParams", "ClusterTrainResult", "cluster_codes", "cluster_signs", "hermite_link",
    "sample_clustered_single_index", "cluster_moe_loss", "cluster_overlap", "routing_accuracy", "train_cluster_moe",
    "train_single_network",
    # mixtures of polynomial experts
    "PolyMoEParams", "PolyParameterCount", "SmoothRegressionTarget", "KLRisk", "fit_polynomial_moe", "kl_risk",
    "monomial_exponents", "parameter_count", "poly_moe_log_density", "polynomial_features", "sample_polynomial_moe",
    "sample_smooth_regression",
    # softmax-contaminated mixture of experts and Voronoi losses
    "FrozenExpert", "ContaminatedMoEParams", "ContaminatedMoEErrors", "SoftmaxContaminatedMoE",
    "fit_contaminated_moe", "sample_contaminated_moe", "contaminated_moe_loglik", "parameter_errors",
    "perturbed_truth", "link_value", "link_derivative", "log_density", "fisher_information",
    "asymptotic_parameter_errors",
    "SoftmaxMoEParams", "voronoi_cells", "voronoi_loss_exact", "voronoi_loss_overfit",
    "SoftmaxGatedMoE", "fit_softmax_moe", "sample_softmax_moe",
    # EM cores and the Gaussian mixture
    "EMResult", "GaussianMixtureParams", "e_step", "m_step", "log_likelihood", "log_prior_from_labels",
    "GaussianMixture", "fit_gaussian_mixture",
    # Shapley values of experts
    "ShapleyResult", "shapley_exact", "shapley_mc", "table_game",
    # SSME: semi-supervised model evaluation, its baselines, metrics and bandwidths
    "SSME", "SSMEParams", "SSMEResult", "alr", "alr_inverse", "fit_ssme", "MetricEstimate", "estimate_metrics",
    "draw_labels", "accuracy", "roc_auc", "average_precision", "expected_calibration_error",
    "top_label_calibration_error", "DawidSkeneResult", "PPIResult", "labeled_only", "pseudo_labels", "dawid_skene",
    "majority_vote", "ppi_accuracy", "classifier_pool", "POOL_DATASETS", "bandwidth", "scott_bandwidth",
    "silverman_bandwidth", "isj_bandwidth",
    # MoE speculative-decoding cost model
    "MoETimeFit", "MoETimeModel", "acceptance_length", "expected_activated_experts", "fit_moe_time_model",
    "sd_speedup", "simulate_activated_experts", "target_efficiency",
]
