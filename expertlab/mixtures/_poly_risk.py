r"""Data for mixtures of polynomial experts and the Monte Carlo KL risk of a fitted member.

Samplers draw from a true member of the :math:`(m, k)` family
(:func:`sample_polynomial_moe`) or from a smooth regression target outside it
(:func:`sample_smooth_regression`); :func:`kl_risk` compares a fitted
conditional density with the true one on fresh inputs.  The family itself and
its EM fit are documented with the polynomial experts of :mod:`expertlab.mixtures`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._backend import logsumexp
from .._random import seed_to_uint64
from .._repr import short_repr
from .._validation import check_array_size, check_float, check_int
from ._moe_links import _uniforms
from ._polynomial_experts import PolyMoEParams, _components, _gauss, poly_moe_log_density

__all__ = ["SmoothRegressionTarget", "KLRisk", "sample_polynomial_moe", "sample_smooth_regression", "kl_risk"]

_X_STREAM = np.uint64(0x5851F42D4C957F2D)      # salt of the fresh inputs of the Monte Carlo KL risk


@short_repr
@dataclasses.dataclass(frozen=True)
class SmoothRegressionTarget:
    r"""The misspecified target :math:`y = f(x) + \varepsilon`, :math:`\varepsilon \sim \mathcal N(0, \sigma^2)`,
    :math:`f(x) = a\, s^{-1} \sum_j \sin(\omega x_j) + b\, s^{-1} \sum_j |x_j|^{\alpha}` on :math:`[-1, 1]^s`.

    For non-integer ``alpha`` and ``b != 0``, :math:`f` has Hölder smoothness
    exactly :math:`\alpha` (at :math:`x_j = 0`); the sine part is analytic.
    """

    noise_var: float = 0.25
    amplitude: float = 1.0
    frequency: float = math.pi
    abs_weight: float = 0.0
    alpha: float = 1.5
    n_features: int = 1

    def __post_init__(self):
        check_float(self.noise_var, "noise_var", positive=True)
        for f in ("amplitude", "frequency", "abs_weight"):
            check_float(getattr(self, f), f)
        check_float(self.alpha, "alpha", positive=True)
        check_int(self.n_features, "n_features")

    def mean(self, X):
        """:math:`f(x)` for ``X`` of shape (..., n_features)."""
        return (self.amplitude * np.mean(np.sin(self.frequency * X), axis=-1)
                + self.abs_weight * np.mean(np.abs(X) ** self.alpha, axis=-1))


def sample_polynomial_moe(n_samples, truth, *, seed=0, first_rep=0):
    r"""Draw ``n_reps`` data sets from ``truth``, :math:`x \sim \mathrm{Uniform}[-1, 1]^s`.

    Parameters
    ----------
    n_samples : int
    truth : PolyMoEParams
    seed : int, numpy.random.SeedSequence or None, default 0
        Row ``i`` of replication ``r`` is a pure function of ``(seed, first_rep + r, i)``.
    first_rep : int
        Index of the first replication (for drawing a batch in blocks).

    Returns
    -------
    X : ndarray, shape (n_reps, n_samples, n_features)
    y : ndarray, shape (n_reps, n_samples)
    z : ndarray of int, shape (n_reps, n_samples), the expert of each point
    """
    if not isinstance(truth, PolyMoEParams):
        raise TypeError(f"truth must be a PolyMoEParams, got {type(truth).__name__}")
    n = check_int(n_samples, "n_samples")
    R, s = truth.n_reps, truth.gate_weight.shape[-1]
    check_array_size((R, n, max(s + 2, truth.coef.shape[-1], truth.gate_bias.shape[-1])), ("n_samples", "truth"))
    u = _uniforms(seed_to_uint64(seed), check_int(first_rep, "first_rep", minimum=0), R, n, s + 2)
    X = 2.0 * u[..., :s] - 1.0
    lg, mu = _components(X, truth)
    z = np.sum(np.cumsum(np.exp(lg), axis=-1) < u[..., s:s + 1], axis=-1)
    z = np.minimum(z, lg.shape[-1] - 1)
    sd = np.sqrt(np.take_along_axis(np.broadcast_to(truth.variance[:, None, :], mu.shape), z[..., None], -1)[..., 0])
    from scipy.special import ndtri  # imported here: scipy is slow to import

    y = np.take_along_axis(mu, z[..., None], -1)[..., 0] + sd * ndtri(u[..., s + 1])
    return X, y, z


def sample_smooth_regression(n_samples, n_reps, target, *, seed=0, first_rep=0):
    r"""Draw ``n_reps`` data sets from a :class:`SmoothRegressionTarget`, :math:`x \sim \mathrm{Uniform}[-1, 1]^s`.

    Parameters
    ----------
    n_samples, n_reps : int
    target : SmoothRegressionTarget
    seed, first_rep
        As in :func:`sample_polynomial_moe`.

    Returns
    -------
    X : ndarray, shape (n_reps, n_samples, n_features)
    y : ndarray, shape (n_reps, n_samples)
    z : None
        No latent expert (kept for the signature of :func:`sample_polynomial_moe`).
    """
    if not isinstance(target, SmoothRegressionTarget):
        raise TypeError(f"target must be a SmoothRegressionTarget, got {type(target).__name__}")
    n, R, s = check_int(n_samples, "n_samples"), check_int(n_reps, "n_reps"), target.n_features
    check_array_size((R, n, s + 1), ("n_samples", "n_reps", "target.n_features"))
    u = _uniforms(seed_to_uint64(seed), check_int(first_rep, "first_rep", minimum=0), R, n, s + 1)
    X = 2.0 * u[..., :s] - 1.0
    from scipy.special import ndtri  # imported here: scipy is slow to import

    return X, target.mean(X) + math.sqrt(target.noise_var) * ndtri(u[..., s]), None


@short_repr
@dataclasses.dataclass(frozen=True)
class KLRisk:
    """Monte Carlo KL risk: ``mean`` and ``stderr`` (over the fresh inputs), each of shape (n_reps,)."""

    mean: np.ndarray
    stderr: np.ndarray
    n_mc: int
    n_quad: int


def _true_components(X, truth):
    """True log-weights, means and variances, each (R, n, M*)."""
    if isinstance(truth, SmoothRegressionTarget):
        mu = truth.mean(X)[..., None]
        return np.zeros_like(mu), mu, np.full_like(mu, truth.noise_var)
    lg, mu = _components(X, truth)
    return lg, mu, np.broadcast_to(truth.variance[:, None, :], mu.shape)


def kl_risk(params, truth, *, n_mc=2000, n_quad=24, seed=0) -> KLRisk:
    r"""KL risk :math:`E_x\, \mathrm{KL}(p^*(\cdot \mid x) \,\|\, \hat p(\cdot \mid x))` of fitted polynomial MoEs.

    Parameters
    ----------
    params : PolyMoEParams
        Fitted models, ``n_reps`` of them.
    truth : PolyMoEParams (``n_reps`` or 1 replications) or SmoothRegressionTarget
    n_mc : int
        Fresh inputs :math:`x \sim \mathrm{Uniform}[-1, 1]^s` (the same for every replication).
    n_quad : int
        Gauss–Hermite nodes per true component.
    seed : int, numpy.random.SeedSequence or None, default 0
        Seed of the fresh inputs (a stream separate from the data generators).

    Returns
    -------
    KLRisk
        Per replication the Monte Carlo mean over :math:`x` and its standard error.

    Notes
    -----
    The inner expectation over :math:`y` is computed by Gauss–Hermite
    quadrature under each true Gaussian component :math:`(w^*_l, \mu^*_l, \sigma^{*2}_l)`:

    .. math::

        \mathrm{KL}(x) \approx \sum_l w^*_l(x) \sum_q \frac{\omega_q}{\sqrt\pi}
            \Big[\log p^*(y_{lq} \mid x) - \log \hat p(y_{lq} \mid x)\Big], \qquad
        y_{lq} = \mu^*_l(x) + \sqrt 2\, \sigma^*_l t_q,

    exact for polynomial integrands of degree :math:`< 2 q`; the outer
    expectation over :math:`x` is a plain Monte Carlo mean.

    Examples
    --------
    >>> t = PolyMoEParams(np.zeros((1, 2)), np.zeros((1, 2, 1)), np.array([[[1.0, 0.0], [-1.0, 0.0]]]),
    ...                   np.ones((1, 2)), degree=1)
    >>> float(kl_risk(t, t, n_mc=50).mean[0])
    0.0
    """
    if not isinstance(params, PolyMoEParams):
        raise TypeError(f"params must be a PolyMoEParams, got {type(params).__name__}")
    if not isinstance(truth, (PolyMoEParams, SmoothRegressionTarget)):
        raise TypeError(f"truth must be a PolyMoEParams or a SmoothRegressionTarget, got {type(truth).__name__}")
    n_mc, n_quad = check_int(n_mc, "n_mc", minimum=2), check_int(n_quad, "n_quad")
    R, s = params.n_reps, params.gate_weight.shape[-1]
    ts = truth.n_features if isinstance(truth, SmoothRegressionTarget) else truth.gate_weight.shape[-1]
    if ts != s:
        raise ValueError(f"truth has {ts} features, params have {s}")
    if isinstance(truth, PolyMoEParams) and truth.n_reps not in (1, R):
        raise ValueError(f"truth must have 1 or {R} replications, got {truth.n_reps}")
    m_true = 1 if isinstance(truth, SmoothRegressionTarget) else truth.gate_bias.shape[1]
    m_fit, n_coef = params.gate_bias.shape[1], params.coef.shape[-1]
    # the quadrature responses against every fitted and true component, and the fitted features
    check_array_size((R, n_mc, m_true * n_quad, max(m_true, m_fit, n_coef)), ("n_mc", "n_quad", "params"))
    check_array_size((n_quad, n_quad), "n_quad")                     # the Gauss-Hermite eigenproblem
    u = _uniforms(seed_to_uint64(seed), 0, 1, n_mc, s, salt=_X_STREAM)
    X = np.broadcast_to(2.0 * u - 1.0, (R, n_mc, s))
    lw, mu, var = (np.broadcast_to(a, (R,) + a.shape[1:]) for a in _true_components(X, truth))
    nodes, weights = np.polynomial.hermite.hermgauss(n_quad)
    Y = mu[..., None] + np.sqrt(2.0 * var)[..., None] * nodes                 # (R, n, M*, Q)
    Y = Y.reshape(R, n_mc, -1)
    lp_true = logsumexp(lw[:, :, None, :] + _gauss(Y[..., None], mu[:, :, None, :], var[:, :, None, :]), axis=-1)
    diff = (lp_true - poly_moe_log_density(X, Y, params)).reshape(mu.shape + (n_quad,))
    kl_x = np.sum(np.exp(lw) * (diff @ (weights / math.sqrt(math.pi))), axis=-1)     # (R, n)
    return KLRisk(np.mean(kl_x, axis=1), np.std(kl_x, axis=1, ddof=1) / math.sqrt(n_mc), n_mc, n_quad)
