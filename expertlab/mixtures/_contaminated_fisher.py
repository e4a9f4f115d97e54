r"""Fisher information of the softmax-contaminated MoE and the MLE's asymptotic errors.

For one parameter point :math:`\theta = (\beta, \tau, \eta, \nu)` of the model of
:func:`~expertlab.mixtures.fit_contaminated_moe` with covariates :math:`X \sim \mathcal N(0, I_d)`,
:func:`fisher_information` computes :math:`I(\theta) = \mathbb E[s s^\top]`, the expected outer
product of the score of one observation, by quadrature.  With :math:`g = \sigma(\beta^\top x +
\tau)`, the prompt :math:`\varphi_1 = \mathcal N(y; h(x, \eta), \nu)`, the frozen expert
:math:`f_0`, :math:`p = (1 - g) f_0 + g \varphi_1` and the prompt's posterior weight
:math:`r_1 = g \varphi_1 / p` (:math:`r_0 = 1 - r_1`), the score is

.. math::

    \partial_\beta \log p = a_g\, x, \quad \partial_\tau \log p = a_g, \quad
    \partial_\eta \log p = r_1 \frac{y - h}{\nu}\, \phi'(\eta^\top x)\, x, \quad
    \partial_\nu \log p = r_1 \Big(\frac{(y - h)^2}{2 \nu^2} - \frac{1}{2\nu}\Big),

with :math:`a_g = g (1 - g)(\varphi_1 - f_0) / p = (1 - g) r_1 - g r_0`.  The covariates enter the
scalar factors only through :math:`\beta^\top x`, :math:`\eta^\top x` and :math:`\eta_0^\top x`; on
the span :math:`S` of :math:`(\beta, \eta, \eta_0)` (dimension :math:`k \le 3`) the expectation is a
tensor trapezoid rule against the Gaussian weight, and the component of :math:`x` orthogonal to
:math:`S` is independent of those factors, so it contributes :math:`\mathbb E[c_a c_b]\,(I - Q
Q^\top)` to the blocks in :math:`x x^\top` (:math:`Q` an orthonormal basis of :math:`S`).  Given
:math:`x`, the response is integrated per mixture component by a trapezoid rule in units of that
component's scale.  Trapezoid rules, not Gauss–Hermite ones, because the integrands (the tanh link,
the posterior weight :math:`r_1` of two well separated components) have singularities close to the
real axis, where Gauss–Hermite converges slowly (24 nodes leave errors of 3% on this model; the
trapezoid rule at the default spacings agrees with half the spacings to about :math:`10^{-11}`).

:func:`asymptotic_parameter_errors` turns :math:`I(\theta)^{-1} / n` into the mean errors that
:func:`~expertlab.mixtures.parameter_errors` measures, assuming the MLE is asymptotically normal.
"""

from __future__ import annotations

import numpy as np

from .._random import seed_to_uint64
from .._validation import check_array_size, check_float, check_in, check_int
from ._em import _as_array
from ._moe_links import (LINKS, ContaminatedMoEParams, _check_expert, _check_params, link_derivative, link_value,
                         log_density)
from ._voronoi import ContaminatedMoEErrors

__all__ = ["fisher_information", "asymptotic_parameter_errors"]


def _point(params, index):
    """``(beta, tau, eta, nu)`` of replication ``index`` as NumPy arrays and floats."""
    return (np.asarray(params.beta, float)[index], float(np.asarray(params.tau, float)[index]),
            np.asarray(params.eta, float)[index], float(np.asarray(params.nu, float)[index]))


def _trapezoid(half_width, step, log_weight):
    """Nodes on ``[-half_width, half_width]`` with spacing ``step`` and normalised weights ``exp(log_weight)``."""
    t = np.arange(-half_width, half_width + step / 2, step)
    lw = log_weight(t)
    w = np.exp(lw - lw.max())
    return t, w / w.sum()


#: Most integrand evaluations :func:`fisher_information` accepts per parameter point (the defaults need about 1.2e9).
_MAX_NODES = 2**34

#: Standardised response rules of each density (trapezoid; exponentially accurate for the smooth,
#: rapidly decaying integrands here, and second order at a Laplace centre, which is a node).
_RULES = {"gaussian": (10.0, lambda t: -0.5 * t * t), "laplace": (40.0, lambda t: -np.abs(t))}


def _y_moments(x_chunk, beta, tau, eta, nu, expert, link, y_step):
    """``E[F_a F_b | x]`` of the three scalar score factors at each covariate node, shape (n, 3, 3)."""
    a = x_chunk @ beta + tau
    g = 1.0 / (1.0 + np.exp(-a))
    lg1, lg0 = -np.logaddexp(0.0, -a), -np.logaddexp(0.0, a)
    m1 = link_value(x_chunk @ eta, link)
    dh = link_derivative(x_chunk @ eta, link)
    m0 = link_value(x_chunk @ np.asarray(expert.eta0, float), expert.link)
    out = np.zeros((x_chunk.shape[0], 3, 3))
    for density, loc, nu_c, weight in ((expert.density, m0, expert.nu0, 1.0 - g), ("gaussian", m1, nu, g)):
        half, lw = _RULES[density]
        t, wy = _trapezoid(half, y_step, lw)
        y = loc[:, None] + np.sqrt(nu_c) * t[None]                        # (n, m)
        l0 = lg0[:, None] + log_density(y, m0[:, None], expert.nu0, expert.density, expert.df)
        l1 = lg1[:, None] + log_density(y, m1[:, None], nu, "gaussian")
        r1 = np.exp(l1 - np.logaddexp(l0, l1))
        res = y - m1[:, None]
        F = np.stack([(1.0 - g)[:, None] * r1 - g[:, None] * (1.0 - r1),      # a_g
                      r1 * res / nu * dh[:, None],                           # a_h
                      r1 * (res * res / (2 * nu * nu) - 0.5 / nu)], axis=-1)  # a_nu
        out += weight[:, None, None] * np.einsum("m,nma,nmb->nab", wy, F, F)
    return out


def _one(beta, tau, eta, nu, expert, link, x_step, y_step, chunk=2048):
    d = beta.shape[0]
    u, sv, _ = np.linalg.svd(np.stack([beta, eta, np.asarray(expert.eta0, float)], axis=1), full_matrices=False)
    Q = u[:, sv > 1e-12 * max(sv.max(), 1.0)]                              # (d, k) basis of the span
    if Q.shape[1] == 0:
        Q = np.eye(d)[:, :1]
    k = Q.shape[1]
    t, wt = _trapezoid(9.0, x_step, lambda v: -0.5 * v * v)
    grid = np.stack(np.meshgrid(*([t] * k), indexing="ij"), -1).reshape(-1, k)       # (N, k) coordinates in S
    wx = np.prod(np.stack(np.meshgrid(*([wt] * k), indexing="ij"), -1).reshape(-1, k), axis=1)
    keep = np.sum(grid * grid, axis=1) <= 8.5 ** 2                    # the ball outside holds mass < 1e-14
    grid, wx = grid[keep], wx[keep] / wx[keep].sum()
    e0, e1, e2 = np.zeros((3, 3)), np.zeros((3, 3, k)), np.zeros((3, 3, k, k))
    for i0 in range(0, len(wx), chunk):                                    # E over y, then over S
        s, w = grid[i0:i0 + chunk], wx[i0:i0 + chunk]
        H = w[:, None, None] * _y_moments(s @ Q.T, beta, tau, eta, nu, expert, link, y_step)
        e0 += H.sum(0)
        e1 += np.einsum("nab,ni->abi", H, s)
        e2 += np.einsum("nab,ni,nj->abij", H, s, s)
    perp = np.eye(d) - Q @ Q.T
    P = 2 * d + 2
    out = np.empty((P, P))
    vec = {0: slice(0, d), 1: slice(d + 1, 2 * d + 1)}                     # a_g -> beta, a_h -> eta
    sca = {0: d, 2: P - 1}                                                  # a_g -> tau, a_nu -> nu
    for i, si in vec.items():
        for j, sj in vec.items():
            out[si, sj] = Q @ e2[i, j] @ Q.T + e0[i, j] * perp
        for j, sj in sca.items():
            out[si, sj] = Q @ e1[i, j]
            out[sj, si] = out[si, sj]
    for i, si in sca.items():
        for j, sj in sca.items():
            out[si, sj] = e0[i, j]
    return 0.5 * (out + out.T)


def fisher_information(params, expert, *, link="tanh", x_step=0.2, y_step=0.05):
    r"""Fisher information of one observation of the contaminated MoE with :math:`X \sim \mathcal N(0, I_d)`.

    Parameters
    ----------
    params : ContaminatedMoEParams
        ``n_reps`` parameter points; each gets its own quadrature (no Monte Carlo).
    expert : FrozenExpert
        Gaussian or Laplace :math:`f_0`.
    link : {"tanh", "sigmoid", "gelu", "linear"}
        The prompt's link.
    x_step : float
        Spacing of the trapezoid rule in each direction of the span of :math:`(\beta, \eta, \eta_0)`,
        in standard deviations of :math:`X` (nodes in the ball of radius 8.5).
    y_step : float
        Spacing of the response rule of each mixture component, in units of its scale
        :math:`\sqrt{\nu}` (on :math:`[-10, 10]` for a Gaussian, :math:`[-40, 40]` for a Laplace).

    Returns
    -------
    ndarray, shape (n_reps, 2 d + 2, 2 d + 2)
        Coordinates in the order :math:`(\beta_1, \dots, \beta_d, \tau, \eta_1, \dots, \eta_d, \nu)`.

    Notes
    -----
    Derived here from the model; the source paper states rates, not the information matrix.
    The expectation is over :math:`X \sim \mathcal N(0, I_d)` only (the design of its
    simulations).  Where the prompt and :math:`f_0` coincide (Gaussian :math:`f_0`,
    :math:`\eta = \eta_0`, :math:`\nu = \nu_0`) the gate scores vanish and the matrix is singular.

    References
    ----------
    .. [1] F. Yan, H. Nguyen, D. Le, P. Akbarian, N. Ho and A. Rinaldo, "On minimax estimation of
       parameters in softmax-contaminated mixture of experts", NeurIPS 2025 (arXiv 2505.18455),
       Eq. 1 (the model).

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.mixtures import ContaminatedMoEParams, FrozenExpert
    >>> e = FrozenExpert(np.array([1.0, 0.0]), 1.0, "gaussian")
    >>> p = ContaminatedMoEParams.tile([0.0, 0.0], 0.0, [-1.0, 0.0], 1.0, n_reps=1)
    >>> I = fisher_information(p, e)
    >>> I.shape, bool(np.all(np.linalg.eigvalsh(I[0]) > 0))
    ((1, 6, 6), True)
    """
    check_in(link, "link", LINKS)
    x_step = check_float(x_step, "x_step", positive=True)
    y_step = check_float(y_step, "y_step", positive=True)
    if not isinstance(params, ContaminatedMoEParams):
        raise TypeError(f"params must be a ContaminatedMoEParams, got {type(params).__name__}")
    beta = _as_array(params.beta, "params.beta", np)[1]
    if beta.ndim != 2:
        raise ValueError(f"params.beta must have shape (n_reps, n_features), got {beta.shape}")
    R, d = beta.shape
    params = _check_params(params, R, d, np)            # shapes, real and finite values, nu > 0
    expert = _check_expert(expert, d)
    if expert.density not in ("gaussian", "laplace"):
        raise ValueError(f"expert.density must be 'gaussian' or 'laplace' for the quadrature, got "
                         f"{expert.density!r}")
    # nodes per direction of the span (dimension <= 3) times response nodes per component
    n_nodes = (int(18.0 / x_step) + 1) ** min(d, 3) * (2 * int(_RULES[expert.density][0] / y_step) + 1)
    if n_nodes > _MAX_NODES:
        raise ValueError(f"x_step and y_step too small: the quadrature would evaluate the integrand at {n_nodes:.3g} "
                         f"nodes per parameter point, more than {_MAX_NODES:.3g}")
    pts = [_point(params, r) for r in range(R)]
    return np.stack([_one(*p, expert, link, x_step, y_step) for p in pts])


def asymptotic_parameter_errors(params, expert, n_samples, *, link="tanh", n_draws=200_000, seed=0, **quadrature):
    r"""Mean errors of an asymptotically normal MLE from ``n_samples`` observations, per parameter.

    The MLE is taken as :math:`\hat\theta \approx \mathcal N(\theta, I(\theta)^{-1} / n)`
    (:func:`fisher_information`).  The scalar errors are :math:`\sqrt{2/\pi}` times their standard
    deviations (:math:`e^{\hat\tau}` by the delta method, :math:`e^{\tau}\, \mathrm{sd}(\hat\tau)`);
    the Euclidean errors of :math:`\beta` and :math:`\eta` are the mean norms of their Gaussian
    blocks, averaged over ``n_draws`` standard normal draws from ``seed`` (an int,
    ``numpy.random.SeedSequence`` or ``None``, default 0).

    Returns
    -------
    ContaminatedMoEErrors
        Fields of shape (n_reps,), the predicted :math:`\mathbb E` of what
        :func:`~expertlab.mixtures.parameter_errors` measures.

    Notes
    -----
    A first-order prediction: it ignores the MLE's bias and higher-order terms, which are small
    only once the errors are small against the distance to the non-distinguishable point.

    References
    ----------
    .. [1] A. W. van der Vaart, *Asymptotic Statistics*, Cambridge University Press, 1998,
       Thm 5.39 (asymptotic normality of the MLE) and Sec. 3.1 (the delta method).

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.mixtures import ContaminatedMoEParams, FrozenExpert
    >>> e = FrozenExpert(np.array([1.0]), 1.0, "laplace")
    >>> p = ContaminatedMoEParams.tile([0.5], 1.0, [-1.0], 1.0, n_reps=1)
    >>> a, b = (asymptotic_parameter_errors(p, e, n) for n in (1000, 4000))
    >>> print(round(float(a.nu[0] / b.nu[0]), 6))                      # the n^(-1/2) rate: 4^(1/2)
    2.0
    """
    n_samples = check_int(n_samples, "n_samples")
    n_draws = check_int(n_draws, "n_draws")
    seed_u = seed_to_uint64(seed)
    info = fisher_information(params, expert, link=link, **quadrature)
    check_array_size((n_draws, info.shape[0], (info.shape[1] - 2) // 2), ("n_draws", "params"))
    eig = np.linalg.eigvalsh(info)
    singular = eig[:, 0] <= 1e-12 * eig[:, -1]
    if np.any(singular):
        raise ValueError(f"params: the Fisher information is singular (to the accuracy of the quadrature) at "
                         f"replication(s) {np.flatnonzero(singular).tolist()}, where the prompt cannot be told "
                         "from the frozen expert; the MLE has no root-n normal limit there")
    cov = np.linalg.inv(info) / n_samples
    R, P, _ = cov.shape
    d = (P - 2) // 2
    z = np.random.default_rng(int(seed_u)).standard_normal((n_draws, d))
    tau = np.asarray(params.tau, float)

    def norm_mean(blocks):                                              # (R, d, d) -> (R,): E||N(0, block)||
        return np.mean(np.linalg.norm(np.einsum("nj,rij->rni", z, np.linalg.cholesky(blocks)), axis=-1), axis=-1)

    c = np.sqrt(2 / np.pi)
    return ContaminatedMoEErrors(
        exp_tau=c * np.exp(tau) * np.sqrt(cov[:, d, d]),
        beta=norm_mean(cov[:, :d, :d]),
        eta=norm_mean(cov[:, d + 1:2 * d + 1, d + 1:2 * d + 1]),
        nu=c * np.sqrt(cov[:, -1, -1]))
