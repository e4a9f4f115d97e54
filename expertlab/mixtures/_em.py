r"""Expectation–maximisation cores for Gaussian mixtures, batched over replications.

Pure functions over ``xp`` (NumPy, or CuPy for CuPy inputs) with a leading
replication axis: ``X`` has shape ``(n_reps, n_samples, n_features)`` and one
call runs one EM step of ``n_reps`` independent fits.  The E-step works in
log space; sample weights :math:`s_i` enter both steps; partial supervision
is a prior :math:`\pi_{ic}` on the responsibilities (one-hot for a labelled
point, all ones for an unlabelled one, a simplex row for a soft prior).  EM
does not decrease the objective (``proofs_check/mixtures/check_em_monotone.py``)

.. math::

    \ell(\theta) = \frac{1}{\sum_i s_i} \sum_i s_i
        \log \sum_{c} \pi_{ic}\, w_c\, \mathcal N(x_i; \mu_c, \Sigma_c).
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np

from .._backend import asnumpy, get_namespace, logsumexp
from .._repr import short_repr
from .._validation import _dtype_kind, as_real_array, check_array_size, check_float, check_in, check_int

__all__ = ["COVARIANCE_TYPES", "EMResult", "GaussianMixtureParams", "e_step", "m_step", "log_likelihood",
           "log_prior_from_labels"]

#: Covariance structures understood by :func:`m_step`.
COVARIANCE_TYPES = ("full", "diag", "spherical")


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class GaussianMixtureParams:
    """Parameters of ``n_reps`` Gaussian mixtures (or of one, without the leading axis).

    Attributes
    ----------
    weights : array, shape (n_reps, n_components)
    means : array, shape (n_reps, n_components, n_features)
    covariances : array
        Shape ``(n_reps, n_components, n_features, n_features)`` (``"full"``),
        ``(n_reps, n_components, n_features)`` (``"diag"``) or ``(n_reps, n_components)`` (``"spherical"``).
    covariance_type : {"full", "diag", "spherical"}
    """

    weights: object
    means: object
    covariances: object
    covariance_type: str = "full"

    def select(self, index) -> "GaussianMixtureParams":
        """The parameters of the replications ``index`` (an int drops the leading axis)."""
        return GaussianMixtureParams(self.weights[index], self.means[index], self.covariances[index],
                                     self.covariance_type)


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class EMResult:
    """Outcome of an EM fit.

    Attributes
    ----------
    params : GaussianMixtureParams
        Fitted parameters (leading axis ``n_reps`` for a batched fit).
    loglik_path : ndarray, shape (n_reps, n_steps) or (n_steps,)
        Objective :math:`\\ell(\\theta_{k-1})` evaluated in the E-step of
        iteration ``k``; entries after a replication's last iteration are NaN.
    n_iter : ndarray of int, shape (n_reps,), or int
        EM iterations run.
    converged : ndarray of bool, shape (n_reps,), or bool
        Whether the change of the objective fell below ``tol``.
    message : str
    """

    params: GaussianMixtureParams
    loglik_path: np.ndarray
    n_iter: object
    converged: object
    message: str

    def plot(self, ax=None, *, label: str | None = None, **line_kwargs):
        r"""The objective per EM iteration: ``loglik_path`` against the iteration count.

        Point ``k`` is :math:`\ell(\theta_k)`, the objective of the
        parameters after ``k`` iterations; EM never lowers it (the fits'
        docstrings say where a regularised or generalised step makes that
        hold up to rounding).  A batched fit draws one thin line per
        replication, each ending where that replication stopped.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Default: new axes on a standalone figure (no pyplot state).
        label : str, optional
            Legend label.
        **line_kwargs
            Passed to ``ax.plot``.

        Returns
        -------
        matplotlib.axes.Axes

        Examples
        --------
        >>> import numpy as np
        >>> from expertlab.mixtures import fit_gaussian_mixture
        >>> rng = np.random.default_rng(0)
        >>> X = np.concatenate([rng.normal(0.0, 1.0, (50, 1)), rng.normal(5.0, 1.0, (50, 1))])
        >>> res = fit_gaussian_mixture(X, 2, seed=0)
        >>> ax = res.plot()
        >>> bool(np.array_equal(ax.lines[0].get_ydata(), res.loglik_path)), ax.get_xlabel()
        (True, 'EM iteration k')
        """
        from ..sim._plots import plot_paths

        return plot_paths(self.loglik_path, ax=ax, label=label, xlabel="EM iteration k",
                          ylabel=r"objective $\ell(\theta_k)$", **line_kwargs)


def run_em(step, params, data, *, max_iter, tol, xp):
    """Iterate ``step`` over replications until each one's log-likelihood settles (the loop every batched EM shares).

    Parameters
    ----------
    step : callable
        ``step(data, params) -> (ll, new_params)``: one EM step of the replications still running: their
        average log-likelihood at ``params`` (E-step) and their parameters after the M-step.
    params : dataclass
        Starting parameters; every array field has the replication axis first, and ``params.select(mask)``
        keeps the replications of a boolean mask.
    data : tuple of arrays or None
        Per-replication inputs of ``step`` (replication axis first); ``None`` entries are passed as they are.
    max_iter : int
    tol : float
        A replication stops once its log-likelihood changes by less than ``tol``.
    xp : array namespace

    Returns
    -------
    params, path, n_iter, converged
        The parameters after each replication's last M-step; its log-likelihoods ``(n_reps, steps)`` (NaN
        after it stopped); its number of iterations; whether it stopped on ``tol`` (not on ``max_iter``).

    Notes
    -----
    Only replications still running are computed: each iteration drops the finished ones from ``data``
    and ``params``.  Uses array-API standard operations only (boolean masks, no index arrays), so the
    loop runs in any conforming namespace.
    """
    fields = [f.name for f in dataclasses.fields(params) if hasattr(getattr(params, f.name), "shape")]
    out = {f: xp.asarray(getattr(params, f), copy=True) for f in fields}
    R = out[fields[0]].shape[0]
    dtype = out[fields[0]].dtype
    columns = []
    converged = xp.zeros(R, dtype=xp.bool)
    n_iter = xp.zeros(R, dtype=xp.int64)
    prev = xp.full(R, -math.inf, dtype=dtype)
    active = xp.ones(R, dtype=xp.bool)
    for k in range(max_iter):
        ll, params = step(data, params)
        col = xp.full(R, math.nan, dtype=dtype)
        col[active] = ll
        columns.append(col)
        n_iter = xp.where(active, k + 1, n_iter)
        conv = xp.abs(ll - prev[active]) < tol
        prev[active] = ll
        done = conv if k < max_iter - 1 else xp.ones_like(conv)
        if bool(xp.any(done)):
            fin = xp.zeros(R, dtype=xp.bool)
            fin[active] = done
            for f in fields:
                out[f][fin] = getattr(params, f)[done]
            converged[fin] = conv[done]
            active = active & ~fin
            keep = ~done
            data = tuple(None if a is None else a[keep] for a in data)
            params = params.select(keep)
        if not bool(xp.any(active)):
            break
    path = xp.stack(columns, axis=1) if columns else xp.full((R, 0), math.nan, dtype=dtype)
    return dataclasses.replace(params, **out), path, n_iter, converged


def _as_array(a, name, xp=None):
    if not isinstance(a, (list, tuple, numbers.Real)) and not (hasattr(a, "shape") and hasattr(a, "dtype")):
        raise TypeError(f"{name} must be an array, got {type(a).__name__}")
    a = as_real_array(a, name, xp)
    return (get_namespace(a) if xp is None else xp), a


def _finite(a, name, xp):
    if not bool(xp.all(xp.isfinite(a))):
        raise ValueError(f"{name} contains NaN or infinite values")


def _check_data(X):
    xp, X = _as_array(X, "X")
    if X.ndim != 3 or min(X.shape) < 1:
        raise ValueError(f"X must have shape (n_reps, n_samples, n_features), all >= 1, got {tuple(X.shape)}")
    _finite(X, "X", xp)
    return xp, X


def _per_rep(a, shape, name, xp):
    """Broadcast a per-sample array of shape ``shape[1:]`` to ``shape`` (replications share it)."""
    a = xp.broadcast_to(a[None, ...], shape) if tuple(a.shape) == tuple(shape[1:]) else a
    if tuple(a.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape[1:])} or {tuple(shape)}, got {tuple(a.shape)}")
    return a


def _simplex_rows(a, name, xp, atol=1e-9):
    if bool(xp.any(a < 0)) or not bool(xp.all(xp.abs(xp.sum(a, axis=-1) - 1.0) <= atol * a.shape[-1])):
        raise ValueError(f"{name} rows must lie on the simplex (non-negative, summing to 1)")


def _check_sample_weight(sample_weight, n_reps, n_samples, xp):
    """``None`` or weights of shape (n_samples,) / (n_reps, n_samples) -> (n_reps, n_samples) or None."""
    if sample_weight is None:
        return None
    w = _per_rep(_as_array(sample_weight, "sample_weight", xp)[1], (n_reps, n_samples), "sample_weight", xp)
    _finite(w, "sample_weight", xp)
    if bool(xp.any(w < 0)):
        raise ValueError("sample_weight must be non-negative")
    if not bool(xp.all(xp.sum(w, axis=1) > 0)):
        raise ValueError("sample_weight must have a positive sum in every replication")
    return w


def log_prior_from_labels(labels=None, prior=None, *, n_reps, n_samples, n_components, xp=np):
    r"""Log-prior on the responsibilities from hard labels and/or soft priors.

    Parameters
    ----------
    labels : array of int, shape (n_samples,) or (n_reps, n_samples), optional
        Component of each point, ``-1`` for an unlabelled point.
    prior : array, shape (n_samples, n_components) or (n_reps, n_samples, n_components), optional
        Rows on the simplex: the posterior of point ``i`` is multiplied by
        ``prior[i]``.  Where both are given, a label overrides the prior row.
    n_reps, n_samples, n_components : int
    xp : array namespace

    Returns
    -------
    log_prior : array, shape (n_reps, n_samples, n_components), or None
        ``0`` for unlabelled points, ``0``/``-inf`` for labelled ones,
        ``log prior`` for soft rows; ``None`` when neither is given.

    Examples
    --------
    >>> import numpy as np
    >>> lp = log_prior_from_labels(np.array([1, -1]), n_reps=1, n_samples=2, n_components=2)
    >>> np.exp(lp[0]).tolist()
    [[0.0, 1.0], [1.0, 1.0]]
    """
    n_reps, n_samples = check_int(n_reps, "n_reps"), check_int(n_samples, "n_samples")
    n_components = check_int(n_components, "n_components")
    if labels is None and prior is None:
        return None
    shape = (n_reps, n_samples, n_components)
    check_array_size(shape, ("n_reps", "n_samples", "n_components"))
    out = xp.zeros(shape, dtype=xp.float64)
    if prior is not None:
        p = _per_rep(_as_array(prior, "prior", xp)[1], shape, "prior", xp)
        _finite(p, "prior", xp)
        _simplex_rows(p, "prior", xp)
        with np.errstate(divide="ignore"):
            out = xp.log(p)
    if labels is not None:
        if hasattr(labels, "dtype"):
            lab = labels
        else:
            try:
                lab = np.asarray(labels)
            except ValueError as exc:                                  # ragged nested lists
                raise TypeError(f"labels must be a (rectangular) array of integers: {exc}") from None
        if _dtype_kind(lab) not in ("i", "u"):
            raise TypeError(f"labels must be integers (-1 for unlabelled), got dtype {lab.dtype}")
        lab = _per_rep(xp.asarray(lab, dtype=xp.int64), shape[:2], "labels", xp)
        if bool(xp.any(lab < -1)) or bool(xp.any(lab >= n_components)):
            raise ValueError(f"labels must lie in {{-1, 0, ..., {n_components - 1}}} (-1 = unlabelled)")
        clamped = xp.where(lab[..., None] == xp.arange(n_components)[None, None, :],
                           xp.asarray(0.0, dtype=xp.float64), -xp.inf)
        out = xp.where((lab >= 0)[..., None], clamped, out)
    return out


def _check_params(params, n_reps, n_features, xp, name="params"):
    if not isinstance(params, GaussianMixtureParams):
        raise TypeError(f"{name} must be a GaussianMixtureParams, got {type(params).__name__}")
    kind = check_in(params.covariance_type, f"{name}.covariance_type", COVARIANCE_TYPES)
    _, w = _as_array(params.weights, f"{name}.weights", xp)
    _, mu = _as_array(params.means, f"{name}.means", xp)
    _, cov = _as_array(params.covariances, f"{name}.covariances", xp)
    if w.ndim != 2 or w.shape[0] != n_reps:
        raise ValueError(f"{name}.weights must have shape ({n_reps}, n_components), got {tuple(w.shape)}")
    C = w.shape[1]
    if tuple(mu.shape) != (n_reps, C, n_features):
        raise ValueError(f"{name}.means must have shape {(n_reps, C, n_features)}, got {tuple(mu.shape)}")
    want = {"full": (n_reps, C, n_features, n_features), "diag": (n_reps, C, n_features),
            "spherical": (n_reps, C)}[kind]
    if tuple(cov.shape) != want:
        raise ValueError(f"{name}.covariances must have shape {want} for covariance_type={kind!r}, "
                         f"got {tuple(cov.shape)}")
    for a, nm in ((w, "weights"), (mu, "means"), (cov, "covariances")):
        _finite(a, f"{name}.{nm}", xp)
    _simplex_rows(w, f"{name}.weights", xp)
    if kind == "full":
        c = asnumpy(cov)
        if not np.allclose(c, np.swapaxes(c, -1, -2), rtol=1e-10, atol=1e-12):
            raise ValueError(f"{name}.covariances must be symmetric")
        if np.min(np.linalg.eigvalsh(c)) <= 0:
            raise ValueError(f"{name}.covariances must be positive definite")
    elif bool(xp.any(cov <= 0)):
        raise ValueError(f"{name}.covariances must be positive (variances)")
    return GaussianMixtureParams(w, mu, cov, kind)


def _log_gaussian(X, params, xp):
    """``log N(x_i; mu_c, Sigma_c)``, shape (n_reps, n_samples, n_components)."""
    D = X.shape[-1]
    mu, cov = params.means, params.covariances
    if params.covariance_type == "full":
        try:                   # NumPy raises LinAlgError; CuPy may return NaN instead
            L = xp.linalg.cholesky(cov)
            ok = bool(xp.all(xp.isfinite(L))) and bool(xp.all(xp.linalg.diagonal(L) > 0))
        except Exception:
            ok = False
        if not ok:
            raise ValueError("a covariance matrix is not positive definite; increase reg_covar")
        P = xp.matrix_transpose(xp.linalg.inv(L))                     # precision Cholesky factor, (R, C, D, D)
        y = X[:, None, :, :] @ P - mu[:, :, None, :] @ P              # (R, C, n, D)
        log_det = xp.sum(xp.log(xp.linalg.diagonal(P)), axis=-1)             # (R, C)
    else:
        var = cov if params.covariance_type == "diag" else xp.broadcast_to(cov[..., None], mu.shape)
        prec = 1.0 / xp.sqrt(var)                                      # (R, C, D)
        y = (X[:, None, :, :] - mu[:, :, None, :]) * prec[:, :, None, :]
        log_det = xp.sum(xp.log(prec), axis=-1)
    quad = xp.sum(y * y, axis=-1)                                      # (R, C, n)
    logp = -0.5 * (D * math.log(2 * math.pi) + quad) + log_det[:, :, None]
    return xp.matrix_transpose(logp)


def _weighted_mean(v, w, xp):
    return xp.mean(v, axis=1) if w is None else xp.sum(w * v, axis=1) / xp.sum(w, axis=1)


def _e_step(X, params, w, log_prior, xp):
    with np.errstate(divide="ignore"):                                 # log 0 = -inf is meant here
        joint = _log_gaussian(X, params, xp) + xp.log(params.weights)[:, None, :]
        joint = joint if log_prior is None else joint + log_prior
        norm = logsumexp(joint, axis=-1)                               # (R, n)
    if not bool(xp.all(xp.isfinite(norm))):
        raise ValueError("a point has zero probability under every component allowed by its label or prior")
    return joint - norm[..., None], _weighted_mean(norm, w, xp)


def _m_step(X, resp, w, covariance_type, reg_covar, xp):
    wr = resp if w is None else resp * w[..., None]                    # (R, n, C)
    nk = xp.sum(wr, axis=1) + 10 * float(np.finfo(np.float64).eps)          # (R, C)
    means = xp.matrix_transpose(wr) @ X / nk[..., None]                  # (R, C, D)
    if covariance_type == "full":
        diff = X[:, None, :, :] - means[:, :, None, :]                 # (R, C, n, D)
        wd = diff * xp.matrix_transpose(wr)[..., None]
        cov = xp.matrix_transpose(wd) @ diff / nk[..., None, None]
        cov = cov + reg_covar * xp.eye(X.shape[-1], dtype=xp.float64)
    else:
        avg_x2 = xp.matrix_transpose(wr) @ (X * X) / nk[..., None]
        avg_xm = means * (xp.matrix_transpose(wr) @ X) / nk[..., None]
        cov = avg_x2 - 2 * avg_xm + means ** 2 + reg_covar
        if covariance_type == "spherical":
            cov = xp.mean(cov, axis=-1)
    weights = nk / xp.sum(nk, axis=1, keepdims=True)
    return GaussianMixtureParams(weights, means, cov, covariance_type)


def e_step(X, params, *, sample_weight=None, labels=None, prior=None):
    r"""E-step: log-responsibilities and the objective at ``params``.

    Parameters
    ----------
    X : array, shape (n_reps, n_samples, n_features)
    params : GaussianMixtureParams
        Batched parameters (leading axis ``n_reps``).
    sample_weight : array, shape (n_samples,) or (n_reps, n_samples), optional
        Non-negative weights (default: all ones).
    labels : array of int, shape (n_samples,) or (n_reps, n_samples), optional
        Known components, ``-1`` for unlabelled points (see :func:`log_prior_from_labels`).
    prior : array, shape (n_samples, n_components) or (n_reps, n_samples, n_components), optional
        Soft priors on the components (rows on the simplex).

    Returns
    -------
    log_resp : array, shape (n_reps, n_samples, n_components)
        :math:`\log r_{ic}`, each row normalised in log space.
    loglik : array, shape (n_reps,)
        Weighted average log-likelihood :math:`\ell(\theta)`.

    Notes
    -----
    .. math::

        \log r_{ic} = \log \pi_{ic} + \log w_c + \log \mathcal N(x_i; \mu_c, \Sigma_c)
            - \operatorname{logsumexp}_{c'}(\cdot),

    computed from each covariance's Cholesky factor, never leaving log space.

    References
    ----------
    .. [1] A. P. Dempster, N. M. Laird, D. B. Rubin, "Maximum likelihood from
       incomplete data via the EM algorithm", JRSS B 39(1), 1977.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[[-1.0], [1.0]]])
    >>> p = GaussianMixtureParams(np.array([[0.5, 0.5]]), np.array([[[-1.0], [1.0]]]),
    ...                           np.array([[1.0, 1.0]]), "spherical")
    >>> log_resp, ll = e_step(X, p)
    >>> np.round(np.exp(log_resp[0, 0]), 4).tolist()    # 1 / (1 + e^-2) for the nearer component
    [0.8808, 0.1192]
    """
    xp, X = _check_data(X)
    R, n, D = X.shape
    params = _check_params(params, R, D, xp)
    w = _check_sample_weight(sample_weight, R, n, xp)
    lp = log_prior_from_labels(labels, prior, n_reps=R, n_samples=n, n_components=params.weights.shape[1], xp=xp)
    return _e_step(X, params, w, lp, xp)


def m_step(X, resp, *, sample_weight=None, covariance_type="full", reg_covar=1e-6):
    r"""M-step: weighted maximum-likelihood parameters given responsibilities.

    Parameters
    ----------
    X : array, shape (n_reps, n_samples, n_features)
    resp : array, shape (n_reps, n_samples, n_components)
        Responsibilities (rows on the simplex; ``exp`` of :func:`e_step`'s output).
    sample_weight : array, shape (n_samples,) or (n_reps, n_samples), optional
    covariance_type : {"full", "diag", "spherical"}
    reg_covar : float
        Non-negative floor added to the diagonal of every covariance.

    Returns
    -------
    GaussianMixtureParams

    Notes
    -----
    With :math:`n_c = \sum_i s_i r_{ic}` (plus ``10 eps``, as scikit-learn does,
    so that an empty component keeps finite parameters):

    .. math::

        w_c = \frac{n_c}{\sum_{c'} n_{c'}}, \qquad
        \mu_c = \frac{1}{n_c}\sum_i s_i r_{ic} x_i, \qquad
        \Sigma_c = \frac{1}{n_c}\sum_i s_i r_{ic} (x_i - \mu_c)(x_i - \mu_c)^\top + \lambda I.

    ``"diag"`` keeps the diagonal of :math:`\Sigma_c`, ``"spherical"`` its mean.
    With the floor :math:`\lambda` = ``reg_covar`` > 0 the step is a regularised,
    not an exact, maximiser (EM is monotone for ``reg_covar = 0``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[[0.0], [2.0], [10.0]]])
    >>> resp = np.array([[[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]])
    >>> p = m_step(X, resp, covariance_type="diag", reg_covar=0.0)
    >>> [np.round(a, 6).tolist() for a in (p.weights[0], p.means[0, :, 0], p.covariances[0, 0])]
    [[0.666667, 0.333333], [1.0, 10.0], [1.0]]
    """
    xp, X = _check_data(X)
    R, n, D = X.shape
    kind = check_in(covariance_type, "covariance_type", COVARIANCE_TYPES)
    reg = check_float(reg_covar, "reg_covar", minimum=0.0)
    _, r = _as_array(resp, "resp", xp)
    if r.ndim != 3 or r.shape[:2] != (R, n) or r.shape[2] < 1:
        raise ValueError(f"resp must have shape ({R}, {n}, n_components), got {tuple(r.shape)}")
    _finite(r, "resp", xp)
    _simplex_rows(r, "resp", xp, atol=1e-8)
    w = _check_sample_weight(sample_weight, R, n, xp)
    return _m_step(X, r, w, kind, reg, xp)


def log_likelihood(X, params, *, sample_weight=None, labels=None, prior=None):
    r"""The EM objective :math:`\ell(\theta)` of each replication (the average log-likelihood without priors).

    Parameters
    ----------
    X, params, sample_weight, labels, prior
        As in :func:`e_step`.

    Returns
    -------
    array, shape (n_reps,)

    Examples
    --------
    >>> import numpy as np
    >>> p = GaussianMixtureParams(np.array([[1.0]]), np.array([[[0.0]]]), np.array([[1.0]]), "spherical")
    >>> print(round(float(log_likelihood(np.zeros((1, 3, 1)), p)[0]), 6))    # -log(2 pi) / 2
    -0.918939
    """
    return e_step(X, params, sample_weight=sample_weight, labels=labels, prior=prior)[1]
