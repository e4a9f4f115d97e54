r"""Mixtures of polynomial experts: the :math:`(m, k)` family, parameter counts and batched EM.

A member of the :math:`(m, k)` family on :math:`x \in [-1, 1]^s` has :math:`m`
Gaussian regression experts whose means are polynomials of total degree at
most :math:`k` in :math:`x`, and a softmax gate that is linear in
:math:`(1, x)`:

.. math::

    p(y \mid x) = \sum_{j=1}^{m} \pi_j(x)\, \mathcal N\big(y; \phi_k(x)^\top c_j, \sigma^2_j\big), \qquad
    \pi_j(x) = \frac{e^{\beta_{0j} + \beta_{1j}^\top x}}{\sum_l e^{\beta_{0l} + \beta_{1l}^\top x}},

with :math:`\phi_k(x)` the :math:`J_k = \binom{s + k}{k}` monomials of total
degree :math:`\le k` and the gate in the gauge :math:`(\beta_{0m}, \beta_{1m}) = 0`.
The gate therefore has :math:`v_m = (m - 1)(s + 1)` free parameters.  Data
generators and the Monte Carlo KL risk: :func:`~expertlab.mixtures.kl_risk`.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from .._backend import logsumexp
from .._random import LEARNER_STREAM, seed_to_uint64
from .._repr import short_repr
from .._validation import check_array_size, check_float, check_in, check_int
from ._em import EMResult, _as_array, _finite
from ._moe_links import _check_xy, _solve, _uniforms
from ._softmax_moe import _gate_newton
from ._voronoi import SoftmaxMoEParams

__all__ = ["PolyMoEParams", "PolyParameterCount", "polynomial_features", "monomial_exponents", "parameter_count",
           "fit_polynomial_moe", "poly_moe_log_density"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
#: Most entries of the exponent table :func:`monomial_exponents` builds.
_MAX_MONOMIAL_ENTRIES = 2**24


def monomial_exponents(n_features, degree):
    """Exponent vectors of the monomials of total degree ``<= degree``, shape (J_k, n_features), by degree.

    Examples
    --------
    >>> monomial_exponents(2, 2).tolist()
    [[0, 0], [1, 0], [0, 1], [2, 0], [1, 1], [0, 2]]
    """
    s, k = check_int(n_features, "n_features"), check_int(degree, "degree", minimum=0)
    # built row by row in Python: a tighter limit than for plain arrays
    check_array_size((math.comb(s + k, k), s), ("n_features", "degree"), max_elements=_MAX_MONOMIAL_ENTRIES)
    rows = [np.bincount(np.asarray(c, dtype=int), minlength=s) for d in range(k + 1)
            for c in itertools.combinations_with_replacement(range(s), d)]
    return np.asarray(rows, dtype=int).reshape(len(rows), s)


def polynomial_features(X, degree):
    r"""The feature map :math:`\phi_k(x)`: all monomials of total degree :math:`\le k`.

    Parameters
    ----------
    X : array, shape (..., n_samples, n_features)
    degree : int
        :math:`k \ge 0`.

    Returns
    -------
    ndarray, shape (..., n_samples, J_k), :math:`J_k = \binom{s + k}{k}`; column 0 is the constant.

    Raises
    ------
    TypeError
        If ``X`` does not hold real numbers or ``degree`` is not an integer.
    ValueError
        If ``X`` has fewer than two axes, holds NaN or infinite values, or the features would not
        fit in memory; or ``degree < 0``.

    Examples
    --------
    >>> polynomial_features(np.array([[2.0]]), 3).tolist()
    [[1.0, 2.0, 4.0, 8.0]]
    """
    _, X = _as_array(X, "X")
    if X.ndim < 2:
        raise ValueError(f"X must have shape (..., n_samples, n_features), got {tuple(X.shape)}")
    _finite(X, "X", np)
    E = monomial_exponents(X.shape[-1], degree)
    check_array_size(tuple(X.shape) + E.shape[:1], ("X", "degree"))
    return np.prod(X[..., None, :] ** E, axis=-1)


@short_repr
@dataclasses.dataclass(frozen=True)
class PolyParameterCount:
    r"""Free parameters of the :math:`(m, k)` family: ``per_expert`` :math:`J_k`, ``gate`` :math:`v_m`,
    ``variances`` :math:`m`, ``total`` :math:`m J_k + v_m + m`."""

    per_expert: int
    gate: int
    variances: int
    total: int


def parameter_count(n_experts, degree, n_features) -> PolyParameterCount:
    r"""Parameter count of the :math:`(m, k)` family on :math:`s` inputs.

    Parameters
    ----------
    n_experts, degree, n_features : int
        :math:`m \ge 1`, :math:`k \ge 0`, :math:`s \ge 1`.

    Returns
    -------
    PolyParameterCount

    Notes
    -----
    :math:`J_k = \binom{s + k}{k}` (monomials of total degree :math:`\le k`),
    :math:`v_m = (m - 1)(s + 1)` (gate linear in :math:`(1, x)`, one gate fixed
    by the gauge); the :math:`m` expert variances are counted separately,
    since the estimation term of the source bound is stated with :math:`m J_k + v_m`.

    Examples
    --------
    >>> parameter_count(3, 2, 1)
    PolyParameterCount(per_expert=3, gate=4, variances=3, total=16)
    """
    m, k, s = check_int(n_experts, "n_experts"), check_int(degree, "degree", minimum=0), check_int(n_features,
                                                                                                  "n_features")
    J = math.comb(s + k, k)
    v = (m - 1) * (s + 1)
    return PolyParameterCount(J, v, m, m * J + v + m)


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class PolyMoEParams:
    """Parameters of ``n_reps`` mixtures of ``n_experts`` polynomial experts of total degree ``degree``.

    Attributes
    ----------
    gate_bias : array, shape (n_reps, n_experts)
    gate_weight : array, shape (n_reps, n_experts, n_features)
    coef : array, shape (n_reps, n_experts, J_k)
        Coefficients on :func:`polynomial_features` (column order of :func:`monomial_exponents`).
    variance : array, shape (n_reps, n_experts), positive
    degree : int
    """

    gate_bias: object
    gate_weight: object
    coef: object
    variance: object
    degree: int

    def __post_init__(self):
        k = check_int(self.degree, "degree", minimum=0)
        arrs = [_as_array(getattr(self, f), f)[1] for f in ("gate_bias", "gate_weight", "coef", "variance")]
        if arrs[0].ndim != 2:
            raise ValueError(f"gate_bias must have shape (n_reps, n_experts), got {tuple(arrs[0].shape)}")
        R, m = arrs[0].shape
        s = arrs[1].shape[-1] if arrs[1].ndim == 3 else 0
        want = ((R, m), (R, m, s), (R, m, math.comb(s + k, k)), (R, m))
        for f, a, w in zip(("gate_bias", "gate_weight", "coef", "variance"), arrs, want):
            if tuple(a.shape) != w or s < 1:
                raise ValueError(f"{f} must have shape {w}, got {tuple(a.shape)}")
            _finite(a, f, np)
        if np.any(arrs[3] <= 0):
            raise ValueError("variance must be positive")
        for f, a in zip(("gate_bias", "gate_weight", "coef", "variance"), arrs):
            object.__setattr__(self, f, a)

    @property
    def n_reps(self):
        return self.gate_bias.shape[0]


def _gauss(y, mean, var):
    return -0.5 * (y - mean) ** 2 / var - _LOG_SQRT_2PI - 0.5 * np.log(var)


def _log_gate(X, gb, gw):
    logits = X @ np.swapaxes(gw, 1, 2) + gb[:, None, :]
    return logits - logsumexp(logits, axis=-1)[..., None]


def _components(X, p):
    """Log gate and expert means, both (n_reps, n, m)."""
    return _log_gate(X, p.gate_bias, p.gate_weight), polynomial_features(X, p.degree) @ np.swapaxes(p.coef, 1, 2)


def poly_moe_log_density(X, y, params):
    r"""Conditional log-density :math:`\log p(y \mid x)` of ``n_reps`` polynomial MoEs.

    Parameters
    ----------
    X : array, shape (n_reps, n_samples, n_features)
    y : array, shape (n_reps, n_samples) or (n_reps, n_samples, n_points)
    params : PolyMoEParams

    Returns
    -------
    ndarray, the shape of ``y``
    """
    if not isinstance(params, PolyMoEParams):
        raise TypeError(f"params must be a PolyMoEParams, got {type(params).__name__}")
    _, X = _as_array(X, "X")
    _, y = _as_array(y, "y")
    if X.ndim != 3 or X.shape[0] != params.n_reps or X.shape[2] != params.gate_weight.shape[-1]:
        raise ValueError(f"X must have shape ({params.n_reps}, n_samples, {params.gate_weight.shape[-1]}), "
                         f"got {tuple(X.shape)}")
    if y.ndim not in (2, 3) or tuple(y.shape[:2]) != tuple(X.shape[:2]):
        raise ValueError(f"y must have shape {tuple(X.shape[:2])} or {tuple(X.shape[:2])} + (n_points,), "
                         f"got {tuple(y.shape)}")
    lg, mu = _components(X, params)
    y3 = y if y.ndim == 3 else y[..., None]
    out = logsumexp(lg[:, :, None, :] + _gauss(y3[..., None], mu[:, :, None, :], params.variance[:, None, None, :]),
                    axis=-1)
    return out if y.ndim == 3 else out[..., 0]


def _experts_wls(Phi, y, r, min_var):
    """Weighted least squares of every expert on the features, and the weighted residual variance."""
    R, n, J = Phi.shape
    m = r.shape[-1]
    A = np.swapaxes((r[..., :, None] * Phi[..., None, :]).reshape(R, n, m * J), 1, 2) @ Phi     # (R, m J, J)
    rhs = np.swapaxes(r * y[..., None], 1, 2) @ Phi
    coef = _solve(A.reshape(R * m, J, J), rhs.reshape(R * m, J), np).reshape(R, m, J)
    res2 = (y[..., None] - Phi @ np.swapaxes(coef, 1, 2)) ** 2
    var = np.maximum(np.sum(r * res2, axis=1) / np.maximum(np.sum(r, axis=1), 1e-300), min_var)
    return coef, var


def _init_resp(X, m, init, seed):
    R, n, s = X.shape
    if init == "random":
        r = _uniforms(seed_to_uint64(seed), 0, R, n, m, salt=LEARNER_STREAM)
        return r / np.sum(r, axis=-1, keepdims=True)
    direction = np.ones(s) / math.sqrt(s)
    rank = np.argsort(np.argsort(X @ direction, axis=1), axis=1)           # equal-count slices along sum(x)
    return np.eye(m)[np.minimum(rank * m // n, m - 1)]


def fit_polynomial_moe(X, y, n_experts, degree, *, init="slices", max_iter=500, tol=1e-8, min_var=1e-6, seed=0,
                       batched=False) -> EMResult:
    r"""Maximum-likelihood fit of the :math:`(m, k)` polynomial-expert family by EM, optionally batched.

    Parameters
    ----------
    X : array, shape (n_samples, n_features), or (n_reps, n_samples, n_features) with ``batched=True``
    y : array, shape (n_samples,), or (n_reps, n_samples)
    n_experts : int
        :math:`m \ge 1`.
    degree : int
        :math:`k \ge 0`, total degree of the expert polynomials.
    init : {"slices", "random"} or PolyMoEParams
        ``"slices"``: hard responsibilities from ``n_experts`` equal-count
        slices of the data along :math:`\sum_j x_j`, uniform gate;
        ``"random"``: random soft responsibilities (seeded); explicit
        parameters (batched like the data) start there.
    max_iter, tol : int, float
        Stop a replication when its mean log-likelihood changes by less than ``tol``.
    min_var : float
        Positive floor of the expert variances (keeps the likelihood bounded).
    seed : int, numpy.random.SeedSequence or None, default 0
        Seed of ``init="random"``.
    batched : bool

    Returns
    -------
    EMResult
        ``params`` is a :class:`PolyMoEParams`, whose leading axis has length 1 when ``batched=False``.

    Notes
    -----
    E-step :math:`r_{ij} \propto \pi_j(x_i)\, \mathcal N(y_i; \phi_k(x_i)^\top c_j, \sigma^2_j)`;
    M-step: one damped Newton step on :math:`\sum_{ij} r_{ij} \log \pi_j(x_i)`
    in the gate (the step of :func:`fit_softmax_moe`, halved until the objective
    does not fall) and, per expert,

    .. math::

        c_j = \Big(\sum_i r_{ij} \phi_k(x_i) \phi_k(x_i)^\top\Big)^{-1} \sum_i r_{ij} y_i \phi_k(x_i), \qquad
        \sigma^2_j = \max\Big(\frac{\sum_i r_{ij} (y_i - \phi_k(x_i)^\top c_j)^2}{\sum_i r_{ij}}, \sigma^2_{\min}\Big).

    *Reconstructed*: the source paper studies the MLE (its rate is for the
    maximiser over the :math:`(m, k)` family) without an algorithm; EM with this Newton
    gate step and the slice start are the choices made here, so a fit can stop
    at a local maximum.

    [validated-rates]

    References
    ----------
    .. [1] E. F. Mendes, W. Jiang, "Convergence rates for mixture-of-experts",
       arXiv 1110.2058 (Neural Computation 24(11), 2012), main rate theorem
       (theorem number not confirmed here): the KL risk of the MLE in the
       :math:`(m, k)` family is
       :math:`O(m^{-2(\alpha \wedge (k+1))/s} + (m J_k + v_m) \log n / n)`.

    Examples
    --------
    >>> t = PolyMoEParams(np.array([[2.0, 0.0]]), np.array([[[4.0], [0.0]]]), np.array([[[1.0, 0.0, 1.0],
    ...                   [-1.0, 1.0, 0.0]]]), np.array([[0.01, 0.01]]), degree=2)
    >>> from expertlab.mixtures import sample_polynomial_moe
    >>> X, y, _ = sample_polynomial_moe(3000, t, seed=0)
    >>> res = fit_polynomial_moe(X, y, 2, 2, init=t, batched=True)
    >>> bool(res.converged[0]), (np.round(res.params.coef[0], 1) + 0.0).tolist()
    (True, [[1.0, 0.0, 1.0], [-1.0, 1.0, 0.0]])
    """
    if not isinstance(batched, (bool, np.bool_)):
        raise TypeError(f"batched must be a bool, got {type(batched).__name__}")
    if not batched:
        X, y = (a if hasattr(a, "shape") else np.asarray(a) for a in (X, y))
        if X.ndim != 2:
            raise ValueError(f"X must have shape (n_samples, n_features), got {tuple(X.shape)}")
        X, y = X[None], y[None]
    _, X, y = _check_xy(X, y)
    X, y = np.asarray(X), np.asarray(y)
    R, n, s = X.shape
    m, k = check_int(n_experts, "n_experts"), check_int(degree, "degree", minimum=0)
    max_iter, tol = check_int(max_iter, "max_iter"), check_float(tol, "tol", minimum=0.0)
    min_var = check_float(min_var, "min_var", positive=True)
    Phi = polynomial_features(X, k)
    Xt = np.concatenate([X, np.ones((R, n, 1))], axis=-1)
    if isinstance(init, PolyMoEParams):
        if init.n_reps != R or init.gate_bias.shape[1] != m or init.gate_weight.shape[2] != s or init.degree != k:
            raise ValueError(f"init must hold {R} replications of {m} experts of degree {k} on {s} features")
        gb, gw = init.gate_bias - init.gate_bias[:, -1:], init.gate_weight - init.gate_weight[:, -1:]
        coef, var = init.coef, init.variance
    elif isinstance(init, str):
        check_in(init, "init", ("slices", "random"))
        gb, gw = np.zeros((R, m)), np.zeros((R, m, s))
        coef, var = _experts_wls(Phi, y, _init_resp(X, m, init, seed), min_var)
    else:
        raise TypeError(f"init must be 'slices', 'random' or a PolyMoEParams, got {type(init).__name__}")

    path = np.full((R, max_iter), np.nan)
    converged, n_iter, prev = np.zeros(R, dtype=bool), np.zeros(R, dtype=np.int64), np.full(R, -np.inf)
    state = [gb, gw, coef, var]
    out = [np.array(a, copy=True) for a in state]
    idx, Xa, Xta, Pa, ya = np.arange(R), X, Xt, Phi, y
    steps = 0
    for it in range(max_iter):
        gb, gw, coef, var = state
        joint = _log_gate(Xa, gb, gw) + _gauss(ya[..., None], Pa @ np.swapaxes(coef, 1, 2), var[:, None, :])
        norm = logsumexp(joint, axis=-1)
        ll = np.mean(norm, axis=1)
        r = np.exp(joint - norm[..., None])
        if m > 1:
            gb, gw = _gate_newton(Xa, Xta, r, SoftmaxMoEParams(gb, gw, gw, gb, var), np)
        coef, var = _experts_wls(Pa, ya, r, min_var)
        state = [gb, gw, coef, var]
        path[idx, it], n_iter[idx] = ll, it + 1
        conv = np.abs(ll - prev[idx]) < tol
        prev[idx] = ll
        steps = it + 1
        done = conv if it < max_iter - 1 else np.ones_like(conv)
        if np.any(done):
            fin = idx[done]
            for o, a in zip(out, state):
                o[fin] = a[done]
            converged[fin] = conv[done]
            keep = ~done
            idx, Xa, Xta, Pa, ya = idx[keep], Xa[keep], Xta[keep], Pa[keep], ya[keep]
            state = [a[keep] for a in state]
        if idx.shape[0] == 0:
            break
    params = PolyMoEParams(*out, degree=k)
    n_bad = int(R - converged.sum())
    message = (f"converged in {int(n_iter.max())} iterations or fewer" if n_bad == 0 else
               f"{n_bad} of {R} replications did not converge in max_iter={max_iter} iterations")
    if batched:
        return EMResult(params, path[:, :steps], n_iter, converged, message)
    return EMResult(params, path[0, :steps], int(n_iter[0]), bool(converged[0]), message)


