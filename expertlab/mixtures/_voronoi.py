r"""Softmax-gated Gaussian MoE parameters, their seeded generator, and parameter losses of mixtures of experts.

The losses are the Voronoi losses :math:`D_1`, :math:`D_2` below and
:func:`parameter_errors`, the per-parameter errors of a fitted
softmax-contaminated MoE (one set of atoms, no matching needed).
:func:`sample_softmax_moe` draws data from :class:`SoftmaxMoEParams`.

A softmax-gated Gaussian mixture of experts with :math:`k` experts has

.. math::

    p(y \mid x) = \sum_{i=1}^{k} \frac{e^{\beta_{1i}^\top x + \beta_{0i}}}{\sum_{l} e^{\beta_{1l}^\top x + \beta_{0l}}}
        \mathcal N(y; a_i^\top x + b_i, \sigma_i).

A fitted set of atoms :math:`\theta_i = (\beta_{1i}, a_i, b_i, \sigma_i)`
is compared with the true atoms :math:`\theta^*_j` through the Voronoi cells

.. math::

    \mathcal A_j = \{ i : \|\theta_i - \theta^*_j\| \le \|\theta_i - \theta^*_l\| \ \forall l \ne j \}

(a fitted atom equidistant from several true atoms joins the one of lowest
index), so that the losses do not depend on the order of the fitted atoms.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from .._backend import get_namespace, logsumexp
from .._random import seed_to_uint64
from .._repr import short_repr
from .._validation import as_real_array, check_float, check_int
from ._moe_links import ContaminatedMoEParams, _check_params, _uniforms, density_quantile, log_density
from ._em import _as_array

__all__ = ["SoftmaxMoEParams", "voronoi_cells", "voronoi_loss_exact", "voronoi_loss_overfit", "R_BAR",
           "ContaminatedMoEErrors", "parameter_errors", "sample_softmax_moe"]

#: :math:`\bar r(m)` of Nguyen, Nguyen & Ho (2023) for a cell holding ``m`` fitted atoms (the values derived there).
R_BAR = {2: 4, 3: 6}


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class SoftmaxMoEParams:
    """Parameters of softmax-gated Gaussian MoEs with ``n_experts`` experts, optionally batched.

    Attributes
    ----------
    gate_bias : array, shape (n_reps, n_experts) or (n_experts,)
        :math:`\\beta_{0i}`.
    gate_weight : array, shape (n_reps, n_experts, n_features) or (n_experts, n_features)
        :math:`\\beta_{1i}`.
    expert_weight : array, shape like ``gate_weight``
        :math:`a_i`.
    expert_bias : array, shape like ``gate_bias``
        :math:`b_i`.
    variance : array, shape like ``gate_bias``
        :math:`\\sigma_i > 0`.
    """

    gate_bias: object
    gate_weight: object
    expert_weight: object
    expert_bias: object
    variance: object


def _check(p, name):
    if not isinstance(p, SoftmaxMoEParams):
        raise TypeError(f"{name} must be a SoftmaxMoEParams, got {type(p).__name__}")
    arrs = [as_real_array(getattr(p, f), f"{name}.{f}", np) for f in
            ("gate_bias", "gate_weight", "expert_weight", "expert_bias", "variance")]
    b0 = arrs[0]
    if b0.ndim not in (1, 2) or b0.shape[-1] < 1:
        raise ValueError(f"{name}.gate_bias must have shape (n_experts,) or (n_reps, n_experts), got {b0.shape}")
    batched = b0.ndim == 2
    if not batched:
        arrs = [a[None] for a in arrs]
    R, K = arrs[0].shape
    D = arrs[1].shape[-1] if arrs[1].ndim == 3 else -1
    want = {"gate_weight": (R, K, D), "expert_weight": (R, K, D), "expert_bias": (R, K), "variance": (R, K)}
    for f, a in zip(("gate_weight", "expert_weight", "expert_bias", "variance"), arrs[1:]):
        if a.shape != want[f] or D < 1:
            raise ValueError(f"{name}.{f} must have shape {want[f] if batched else want[f][1:]}, got "
                             f"{a.shape if batched else a.shape[1:]}")
    for f, a in zip(("gate_bias", "gate_weight", "expert_weight", "expert_bias", "variance"), arrs):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name}.{f} contains NaN or infinite values")
    if np.any(arrs[4] <= 0):
        raise ValueError(f"{name}.variance must be positive")
    return arrs, batched


def _pair(fitted, true):
    f, bf = _check(fitted, "fitted")
    t, bt = _check(true, "true")
    if bf != bt:
        raise ValueError("fitted and true must both be batched (leading n_reps axis) or both not")
    if f[0].shape[0] != t[0].shape[0]:
        raise ValueError(f"fitted has {f[0].shape[0]} replications, true has {t[0].shape[0]}")
    if f[1].shape[-1] != t[1].shape[-1]:
        raise ValueError(f"fitted has {f[1].shape[-1]} features, true has {t[1].shape[-1]}")
    return f, t, bf


def _atoms(arrs):
    """``theta_i = (beta_1i, a_i, b_i, sigma_i)``, shape (n_reps, n_experts, 2 n_features + 2)."""
    return np.concatenate([arrs[1], arrs[2], arrs[3][..., None], arrs[4][..., None]], axis=-1)


def _cells(f, t):
    d = np.linalg.norm(_atoms(f)[:, :, None, :] - _atoms(t)[:, None, :, :], axis=-1)     # (R, k, k*)
    return np.argmin(d, axis=-1)


def _batched(p, name):
    arrs, batched = _check(p, name)
    if not batched:
        raise ValueError(f"{name} must be batched (leading n_reps axis)")
    return SoftmaxMoEParams(*arrs)


def sample_softmax_moe(n_samples, truth, *, seed=0, first_rep=0):
    r"""Draw ``n_reps`` data sets from softmax-gated Gaussian MoEs (``truth`` batched), :math:`x \sim \mathcal N(0, I)`.

    Returns
    -------
    X : ndarray, shape (n_reps, n_samples, n_features)
    y : ndarray, shape (n_reps, n_samples)
    z : ndarray of int, shape (n_reps, n_samples)
        The expert of each point.

    Examples
    --------
    >>> import numpy as np
    >>> t = SoftmaxMoEParams(np.zeros((2, 2)), np.zeros((2, 2, 1)), np.array([[[1.0], [-1.0]]] * 2),
    ...                      np.zeros((2, 2)), np.full((2, 2), 0.1))
    >>> X, y, z = sample_softmax_moe(100, t, seed=0)
    >>> X.shape, sorted(set(z.ravel().tolist()))
    ((2, 100, 1), [0, 1])
    """
    n = check_int(n_samples, "n_samples")
    first_rep = check_int(first_rep, "first_rep", minimum=0)
    truth = _batched(truth, "truth")
    R, K, D = np.shape(truth.gate_weight)
    from scipy.special import ndtri

    u = _uniforms(seed_to_uint64(seed), first_rep, R, n, D + 2)
    X = ndtri(u[..., :D])
    logits = X @ np.swapaxes(truth.gate_weight, 1, 2) + truth.gate_bias[:, None, :]
    cum = np.cumsum(np.exp(logits - logsumexp(logits, axis=-1)[..., None]), axis=-1)
    z = np.minimum(np.sum(cum < u[..., D, None], axis=-1), K - 1)
    mean = X @ np.swapaxes(truth.expert_weight, 1, 2) + truth.expert_bias[:, None, :]
    pick = lambda a: np.take_along_axis(a, z[..., None], axis=-1)[..., 0]  # noqa: E731
    var = np.broadcast_to(truth.variance[:, None, :], mean.shape)
    return X, density_quantile(u[..., D + 1], pick(mean), pick(var), "gaussian"), z


def _log_gate(X, p, xp):
    logits = X @ xp.swapaxes(p.gate_weight, 1, 2) + p.gate_bias[:, None, :]
    return logits - logsumexp(logits, axis=-1)[..., None]


def _joint_k(X, y, p, xp):
    mean = X @ xp.swapaxes(p.expert_weight, 1, 2) + p.expert_bias[:, None, :]
    return _log_gate(X, p, xp) + log_density(y[..., None], mean, p.variance[:, None, :], "gaussian")


def voronoi_cells(fitted, true):
    r"""The true atom whose Voronoi cell holds each fitted atom.

    Parameters
    ----------
    fitted, true : SoftmaxMoEParams
        Both batched or both not; the numbers of experts may differ.

    Returns
    -------
    ndarray of int, shape (n_reps, n_fitted) or (n_fitted,)

    Examples
    --------
    >>> import numpy as np
    >>> t = SoftmaxMoEParams(np.zeros(2), np.zeros((2, 1)), np.array([[-1.0], [1.0]]), np.zeros(2), np.ones(2))
    >>> f = SoftmaxMoEParams(np.zeros(3), np.zeros((3, 1)), np.array([[0.9], [-1.2], [1.1]]), np.zeros(3),
    ...                      np.ones(3))
    >>> voronoi_cells(f, t).tolist()
    [1, 0, 1]
    """
    f, t, batched = _pair(fitted, true)
    cells = _cells(f, t)
    return cells if batched else cells[0]


def _terms(f, t, cells):
    """Mass term per replication, and per fitted atom ``exp(beta_0i)`` and the four deviations to its true atom."""
    R, k = cells.shape
    kstar = t[0].shape[1]
    onehot = cells[..., None] == np.arange(kstar)[None, None, :]                          # (R, k, k*)
    w = np.exp(f[0])                                                                      # (R, k)
    mass = np.sum(np.abs(np.einsum("rk,rkj->rj", w, onehot) - np.exp(t[0])), axis=-1)
    take = lambda a: np.take_along_axis(a, cells.reshape(cells.shape + (1,) * (a.ndim - 2)), axis=1)  # noqa: E731
    dev = (np.linalg.norm(f[1] - take(t[1]), axis=-1), np.linalg.norm(f[2] - take(t[2]), axis=-1),
           np.abs(f[3] - take(t[3])), np.abs(f[4] - take(t[4])))
    size = np.take_along_axis(np.sum(onehot, axis=1), cells, axis=1)                      # |A_j| of each atom's cell
    return mass, w, dev, size


def voronoi_loss_exact(fitted, true):
    r"""Exact-fit Voronoi loss :math:`D_1(G, G_*)`.

    Parameters
    ----------
    fitted, true : SoftmaxMoEParams

    Returns
    -------
    ndarray, shape (n_reps,), or float

    Notes
    -----
    .. math::

        D_1(G, G_*) = \sum_{j} \Big| \sum_{i \in \mathcal A_j} e^{\beta_{0i}} - e^{\beta^*_{0j}} \Big|
            + \sum_j \sum_{i \in \mathcal A_j} e^{\beta_{0i}} \big( \|\Delta\beta_{1ij}\| + \|\Delta a_{ij}\|
            + |\Delta b_{ij}| + |\Delta\sigma_{ij}| \big),

    :math:`\Delta\beta_{1ij} = \beta_{1i} - \beta^*_{1j}` and so on.
    *Simplified*: the softmax gate is identified only up to a common
    translation of :math:`(\beta_{0i}, \beta_{1i})`; the loss is evaluated on
    the parameters as given (no infimum over translations), so both sets must
    be written in the same gauge (for instance with the last expert's gate
    parameters at zero).

    References
    ----------
    .. [1] H. Nguyen, T. Nguyen, N. Ho, "Demystifying softmax gating function in
       Gaussian mixture of experts", NeurIPS 2023, Thm 1 (exact-fit
       rate :math:`D_1(\hat G_n, G_*) = O_P(\sqrt{\log n / n})`).

    Examples
    --------
    >>> import numpy as np
    >>> t = SoftmaxMoEParams(np.zeros(2), np.zeros((2, 1)), np.array([[-1.0], [1.0]]), np.zeros(2), np.ones(2))
    >>> f = SoftmaxMoEParams(np.log([2.0, 1.0]), np.zeros((2, 1)), np.array([[1.0], [-1.5]]), np.zeros(2),
    ...                      np.ones(2))
    >>> print(voronoi_loss_exact(f, t))    # mass |1 - 1| + |2 - 1|, deviations 1 * 0.5
    1.5
    """
    f, t, batched = _pair(fitted, true)
    mass, w, dev, _ = _terms(f, t, _cells(f, t))
    out = mass + np.sum(w * sum(dev), axis=-1)
    return out if batched else float(out[0])


def voronoi_loss_overfit(fitted, true, *, r_bar=None):
    r"""Over-fit Voronoi loss :math:`D_2(G, G_*)`.

    Parameters
    ----------
    fitted, true : SoftmaxMoEParams
        ``fitted`` may have more experts than ``true``.
    r_bar : dict, optional
        :math:`\bar r(m)` for cells holding ``m >= 2`` atoms; default ``R_BAR``
        (the values 4 and 6 for ``m = 2, 3`` derived in the paper).  A cell with
        more atoms than the mapping covers raises ``ValueError``.

    Returns
    -------
    ndarray, shape (n_reps,), or float

    Notes
    -----
    With :math:`\bar r_j = \bar r(|\mathcal A_j|)`:

    .. math::

        D_2(G, G_*) = \sum_{j} \Big| \sum_{i \in \mathcal A_j} e^{\beta_{0i}} - e^{\beta^*_{0j}} \Big|
            + \sum_{j : |\mathcal A_j| = 1} \sum_{i \in \mathcal A_j} e^{\beta_{0i}} \big( \|\Delta\beta_{1ij}\|
            + \|\Delta a_{ij}\| + |\Delta b_{ij}| + |\Delta\sigma_{ij}| \big) \\
            + \sum_{j : |\mathcal A_j| > 1} \sum_{i \in \mathcal A_j} e^{\beta_{0i}} \big(
              \|\Delta\beta_{1ij}\|^{\bar r_j} + \|\Delta a_{ij}\|^{\bar r_j / 2} + |\Delta b_{ij}|^{\bar r_j}
              + |\Delta\sigma_{ij}|^{\bar r_j / 2} \big).

    When every cell holds one fitted atom (an exact fit, matched one to one)
    :math:`D_2 = D_1`.  Gauge as in :func:`voronoi_loss_exact`.

    References
    ----------
    .. [1] H. Nguyen, T. Nguyen, N. Ho, NeurIPS 2023, Thm 2 (over-fit rate
       :math:`D_2(\hat G_n, G_*) = O_P(\sqrt{\log n / n})`).

    Examples
    --------
    >>> import numpy as np
    >>> t = SoftmaxMoEParams(np.zeros(1), np.zeros((1, 1)), np.ones((1, 1)), np.zeros(1), np.ones(1))
    >>> f = SoftmaxMoEParams(np.log([0.5, 0.5]), np.zeros((2, 1)), np.array([[0.5], [1.5]]), np.zeros(2),
    ...                      np.ones(2))
    >>> print(voronoi_loss_overfit(f, t))    # two atoms in one cell: 0.5 * 0.5^2 + 0.5 * 0.5^2
    0.25
    """
    f, t, batched = _pair(fitted, true)
    if r_bar is not None and not isinstance(r_bar, Mapping):
        raise TypeError(f"r_bar must be a dict from cell sizes to exponents, got {type(r_bar).__name__}")
    table = dict(R_BAR if r_bar is None else r_bar)
    for m, r in table.items():
        check_int(m, "r_bar key", minimum=2)
        check_float(r, f"r_bar[{m}]", positive=True)
    cells = _cells(f, t)
    mass, w, dev, size = _terms(f, t, cells)
    too_big = sorted({int(s) for s in np.unique(size) if s >= 2 and int(s) not in table})
    if too_big:
        raise ValueError(f"a Voronoi cell holds {too_big} fitted atoms; r_bar has no value for that "
                         f"(known: {sorted(table)})")
    rbar = np.vectorize(lambda s: float(table.get(int(s), 1.0)), otypes=[float])(size)
    single = size == 1
    lin = sum(dev)
    powed = dev[0] ** rbar + dev[1] ** (rbar / 2) + dev[2] ** rbar + dev[3] ** (rbar / 2)
    out = mass + np.sum(w * np.where(single, lin, powed), axis=-1)
    return out if batched else float(out[0])


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class ContaminatedMoEErrors:
    r"""Per-parameter errors :math:`|e^{\hat\tau} - e^{\tau^*}|`, :math:`\|\hat\beta - \beta^*\|`,
    :math:`\|\hat\eta - \eta^*\|`, :math:`|\hat\nu - \nu^*|`, each of shape (n_reps,)."""

    exp_tau: object
    beta: object
    eta: object
    nu: object


def parameter_errors(params, truth) -> ContaminatedMoEErrors:
    r"""Per-parameter errors of fitted against true parameters (batched).

    Parameters
    ----------
    params, truth : ContaminatedMoEParams
        Same shapes (leading axis ``n_reps``).

    Returns
    -------
    ContaminatedMoEErrors

    Notes
    -----
    The gate intercept enters as :math:`e^{\tau}`, the quantity whose rate the
    source paper states (Yan et al. 2025, the rate theorems of Sec. 3).

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.mixtures import ContaminatedMoEParams
    >>> t = ContaminatedMoEParams.tile([0.0, 0.0], 0.0, [1.0, 0.0], 1.0, n_reps=1)
    >>> p = ContaminatedMoEParams.tile([3.0, 4.0], np.log(2.0), [1.0, 0.0], 1.5, n_reps=1)
    >>> e = parameter_errors(p, t)
    >>> [float(np.round(v[0], 12)) for v in (e.exp_tau, e.beta, e.eta, e.nu)]
    [1.0, 5.0, 0.0, 0.5]
    """
    if not isinstance(truth, ContaminatedMoEParams):
        raise TypeError(f"truth must be a ContaminatedMoEParams, got {type(truth).__name__}")
    beta = _as_array(truth.beta, "truth.beta")[1]
    if beta.ndim != 2:
        raise ValueError(f"truth.beta must have shape (n_reps, n_features), got {tuple(beta.shape)}")
    R, D = beta.shape
    xp = get_namespace(beta)
    truth = _check_params(truth, R, D, xp, name="truth")
    params = _check_params(params, R, D, xp)
    with np.errstate(over="ignore"):              # a gate driven to the boundary has an infinite error
        exp_tau = xp.abs(xp.exp(params.tau) - xp.exp(truth.tau))
    return ContaminatedMoEErrors(
        exp_tau=exp_tau,
        beta=xp.sqrt(xp.sum((params.beta - truth.beta) ** 2, axis=-1)),
        eta=xp.sqrt(xp.sum((params.eta - truth.eta) ** 2, axis=-1)),
        nu=xp.abs(params.nu - truth.nu))
