"""Mixture-model estimators and the numerical cores around mixtures of experts.

- EM cores as pure, batched functions (:func:`e_step`, :func:`m_step`,
  :func:`log_likelihood`) with sample weights and hard or soft label priors,
  and the Gaussian mixture built on them (:func:`fit_gaussian_mixture`, the
  scikit-learn-style :class:`GaussianMixture`), which fits many replications
  at once.
- Shapley values of the experts of a mixture, exactly on small games and by
  permutation sampling (plain, truncated, or importance-weighted by the
  router) on large ones.
- The MoE speculative-decoding cost model: expected activated experts under
  top-K routing, target efficiency, speedup, and a least-squares fit of the
  time model.
"""

from . import _claims, _claims_em  # noqa: F401  (register the rate claims)
from ._em import EMResult, GaussianMixtureParams, e_step, log_likelihood, log_prior_from_labels, m_step
from ._gaussian_mixture import GaussianMixture, fit_gaussian_mixture
from ._moesd import (MoETimeFit, MoETimeModel, acceptance_length, expected_activated_experts, fit_moe_time_model,
                     sd_speedup, simulate_activated_experts, target_efficiency)
from ._shapley import ShapleyResult, shapley_exact, shapley_mc, table_game

__all__ = [
    # EM cores and the Gaussian mixture
    "EMResult", "GaussianMixtureParams", "e_step", "m_step", "log_likelihood", "log_prior_from_labels",
    "GaussianMixture", "fit_gaussian_mixture",
    # Shapley values of experts
    "ShapleyResult", "shapley_exact", "shapley_mc", "table_game",
    # MoE speculative-decoding cost model
    "MoETimeFit", "MoETimeModel", "acceptance_length", "expected_activated_experts", "fit_moe_time_model",
    "sd_speedup", "simulate_activated_experts", "target_efficiency",
]
