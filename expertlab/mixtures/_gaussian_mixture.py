r"""Gaussian mixtures by EM: a batched functional core and a scikit-learn-style estimator.

:func:`fit_gaussian_mixture` runs EM (:mod:`expertlab.mixtures._em`) on one
data set or, with ``batched=True``, on ``n_reps`` data sets at once; each
replication stops updating when it has converged, so replication ``r`` of a
batch is exactly the fit of its data alone.  :class:`GaussianMixture` is a
thin shell over it for notebook use.  Initialisations come from the
counter-based generator (:mod:`expertlab._random`), keyed by the seed and the
replication index.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._backend import asnumpy, logsumexp
from .._random import rep_key, round_key, seed_to_uint64, uniform
from .._validation import check_float, check_in, check_int
from ._em import (COVARIANCE_TYPES, EMResult, GaussianMixtureParams, _check_data, _check_params,
                  _check_sample_weight, _e_step, _log_gaussian, _m_step, log_prior_from_labels)

__all__ = ["fit_gaussian_mixture", "GaussianMixture", "INITS"]

#: Initialisations of :func:`fit_gaussian_mixture` (or pass a :class:`GaussianMixtureParams`).
INITS = ("kmeans++", "random")


def _uniforms(seed_u, n_reps, shape):
    """Uniforms of shape ``(n_reps, *shape)``: entry ``[r, i, j]`` is draw ``j`` of round ``i`` of replication ``r``."""
    a, b = shape
    with np.errstate(over="ignore"):
        k = rep_key(np.uint64(seed_u), np.arange(n_reps, dtype=np.uint64))
        k = round_key(k[:, None], np.arange(a, dtype=np.uint64)[None, :])
        return uniform(k[..., None], np.arange(b, dtype=np.uint64)[None, None, :])


def _kmeanspp_resp(X, n_components, w, seed_u, xp):
    """Hard responsibilities from D^2 seeding (Arthur & Vassilvitskii 2007) and one nearest-centre assignment."""
    R, n, _ = X.shape
    u = xp.asarray(_uniforms(seed_u, R, (n_components, 1))[..., 0])              # (R, C)
    ww = xp.ones((R, n), dtype=xp.float64) if w is None else w
    rows = xp.arange(R)
    centres = []
    d2 = None
    for k in range(n_components):
        if d2 is None:
            score = ww
        else:
            score = ww * d2
            score = xp.where(xp.sum(score, axis=1, keepdims=True) > 0, score, ww)   # all points on the centres
        cum = xp.cumsum(score, axis=1)
        idx = xp.sum(cum < (u[:, k] * cum[:, -1])[:, None], axis=1)
        idx = xp.minimum(idx, n - 1)
        c = X[rows, idx]                                                         # (R, D)
        centres.append(c)
        dk = xp.sum((X - c[:, None, :]) ** 2, axis=-1)
        d2 = dk if d2 is None else xp.minimum(d2, dk)
    dist = xp.stack([xp.sum((X - c[:, None, :]) ** 2, axis=-1) for c in centres], axis=-1)   # (R, n, C)
    nearest = xp.argmin(dist, axis=-1)
    return xp.asarray(nearest[..., None] == xp.arange(n_components)[None, None, :], dtype=xp.float64)


def _initial_resp(X, n_components, init, w, log_prior, seed_u, xp):
    R, n, _ = X.shape
    if init == "kmeans++":
        resp = _kmeanspp_resp(X, n_components, w, seed_u, xp)
    else:
        resp = xp.asarray(_uniforms(seed_u, R, (n, n_components)))
    if log_prior is not None:                     # labels clamp, soft priors multiply
        resp = resp * xp.exp(log_prior)
        s = xp.sum(resp, axis=-1, keepdims=True)
        resp = xp.where(s > 0, resp / xp.where(s > 0, s, 1.0), xp.exp(log_prior) / xp.sum(xp.exp(log_prior),
                                                                                            axis=-1, keepdims=True))
    return resp / xp.sum(resp, axis=-1, keepdims=True)


def fit_gaussian_mixture(X, n_components, *, covariance_type="full", init="kmeans++", max_iter=100, tol=1e-3,
                         reg_covar=1e-6, sample_weight=None, labels=None, prior=None, seed=0,
                         batched=False) -> EMResult:
    r"""Fit a Gaussian mixture by EM, optionally to many replications at once.

    Parameters
    ----------
    X : array, shape (n_samples, n_features), or (n_reps, n_samples, n_features) with ``batched=True``
        NumPy or CuPy array (the computation runs in its namespace).
    n_components : int
    covariance_type : {"full", "diag", "spherical"}
    init : {"kmeans++", "random"} or GaussianMixtureParams
        ``"kmeans++"``: :math:`D^2` seeding of ``n_components`` centres, every
        point assigned to its nearest centre, then one M-step.
        ``"random"``: random responsibilities (iid uniforms, normalised),
        then one M-step.  A :class:`GaussianMixtureParams` (batched when
        ``batched=True``) starts EM at those parameters.
    max_iter : int
    tol : float
        Stop a replication when its objective changes by less than ``tol``.
    reg_covar : float
        Non-negative floor added to every covariance diagonal.
    sample_weight : array, shape (n_samples,) or (n_reps, n_samples), optional
    labels : array of int, shape (n_samples,) or (n_reps, n_samples), optional
        Partial labels, ``-1`` for unlabelled points; a labelled point's
        responsibilities are clamped to its component.
    prior : array, shape (n_samples, n_components) or (n_reps, n_samples, n_components), optional
        Soft priors that multiply each point's posterior.
    seed : int, SeedSequence or None
        Seed of the initialisation; replication ``r`` draws from stream ``r``.
    batched : bool
        Whether ``X`` has a leading replication axis.

    Returns
    -------
    EMResult
        Without ``batched``, the leading axis is dropped from every field.

    Notes
    -----
    Iteration :math:`k` computes the E-step at :math:`\theta_{k-1}`, whose
    objective :math:`\ell(\theta_{k-1})` is recorded, and the M-step
    :math:`\theta_k`; a replication stops after the iteration where
    :math:`|\ell(\theta_{k-1}) - \ell(\theta_{k-2})| <` ``tol`` (the loop of
    scikit-learn's ``GaussianMixture`` with ``n_init=1``, whose
    ``lower_bound_`` is the last recorded value).

    *Simplified* relative to scikit-learn: one initialisation (no
    ``n_init``), and ``"kmeans++"`` assigns every point to its nearest seed
    instead of giving responsibility only to the seeds themselves.

    [validated-rates]

    References
    ----------
    .. [1] A. P. Dempster, N. M. Laird, D. B. Rubin, JRSS B 39(1), 1977, Thm 1 (monotonicity).
    .. [2] D. Arthur, S. Vassilvitskii, "k-means++: the advantages of careful
       seeding", SODA 2007 (D^2 seeding).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-4, 1, (200, 1)), rng.normal(4, 1, (200, 1))])
    >>> res = fit_gaussian_mixture(X, 2, seed=1)
    >>> bool(res.converged), np.round(np.sort(res.params.means[:, 0]), 0).tolist()
    (True, [-4.0, 4.0])
    """
    if not isinstance(batched, (bool, np.bool_)):
        raise TypeError(f"batched must be a bool, got {type(batched).__name__}")
    if not batched:
        if not hasattr(X, "shape"):
            X = np.asarray(X)
        if getattr(X, "ndim", None) != 2:
            raise ValueError(f"X must have shape (n_samples, n_features), got {tuple(X.shape)}"
                             " (pass batched=True for (n_reps, n_samples, n_features))")
        X = X[None]
    xp, X = _check_data(X)
    R, n, D = X.shape
    C = check_int(n_components, "n_components")
    if C > n:
        raise ValueError(f"n_components={C} must be at most n_samples={n}")
    kind = check_in(covariance_type, "covariance_type", COVARIANCE_TYPES)
    max_iter = check_int(max_iter, "max_iter")
    tol = check_float(tol, "tol", minimum=0.0)
    reg = check_float(reg_covar, "reg_covar", minimum=0.0)
    w = _check_sample_weight(sample_weight, R, n, xp)
    if labels is not None and not batched and getattr(labels, "ndim", np.ndim(labels)) != 1:
        raise ValueError(f"labels must have shape ({n},), got {np.shape(labels)}")
    lp = log_prior_from_labels(labels, prior, n_reps=R, n_samples=n, n_components=C, xp=xp)
    if isinstance(init, GaussianMixtureParams):
        p0 = init if batched else GaussianMixtureParams(*(xp.asarray(a)[None] for a in
                                                         (init.weights, init.means, init.covariances)),
                                                       init.covariance_type)
        params = _check_params(p0, R, D, xp, name="init")
        if params.weights.shape[1] != C:
            raise ValueError(f"init has {params.weights.shape[1]} components, n_components={C}")
        if params.covariance_type != kind:
            raise ValueError(f"init.covariance_type={params.covariance_type!r} differs from "
                             f"covariance_type={kind!r}")
    else:
        if not isinstance(init, str):
            raise TypeError(f"init must be one of {INITS} or a GaussianMixtureParams, got {type(init).__name__}")
        check_in(init, "init", INITS)
        resp = _initial_resp(X, C, init, w, lp, seed_to_uint64(seed), xp)
        params = _m_step(X, resp, w, kind, reg, xp)

    path = xp.full((R, max_iter), xp.nan)
    converged = xp.zeros(R, dtype=xp.bool)
    n_iter = xp.zeros(R, dtype=xp.int64)
    prev = xp.full(R, -xp.inf)
    out_w, out_m, out_c = (xp.asarray(a, copy=True) for a in (params.weights, params.means, params.covariances))
    # Only the replications still running are computed: ``idx`` lists them, ``*_a`` are their slices.
    idx = xp.arange(R)
    X_a, w_a, lp_a, p_a = X, w, lp, params
    steps = 0
    log_resp, ll = _e_step(X_a, p_a, w_a, lp_a, xp)
    for k in range(max_iter):
        p_a = _m_step(X_a, xp.exp(log_resp), w_a, kind, reg, xp)
        path[idx, k] = ll
        n_iter[idx] = k + 1
        conv = xp.abs(ll - prev[idx]) < tol
        prev[idx] = ll
        steps = k + 1
        done = conv if k < max_iter - 1 else xp.ones_like(conv)
        if bool(xp.any(done)):
            fin = idx[done]
            out_w[fin], out_m[fin], out_c[fin] = p_a.weights[done], p_a.means[done], p_a.covariances[done]
            converged[fin] = conv[done]
            keep = ~done
            idx, X_a, p_a = idx[keep], X_a[keep], p_a.select(keep)
            w_a = None if w_a is None else w_a[keep]
            lp_a = None if lp_a is None else lp_a[keep]
        if idx.shape[0] == 0:
            break
        log_resp, ll = _e_step(X_a, p_a, w_a, lp_a, xp)
    params = GaussianMixtureParams(out_w, out_m, out_c, kind)
    path = path[:, :steps]
    n_bad = int(R - int(xp.sum(converged)))
    if n_bad == 0:
        message = f"converged in {int(xp.max(n_iter))} iterations or fewer"
    else:
        message = f"{n_bad} of {R} replications did not converge in max_iter={max_iter} iterations"
    if batched:
        return EMResult(params, path, n_iter, converged, message)
    return EMResult(params.select(0), path[0], int(n_iter[0]), bool(converged[0]), message)


def _seed_from_rng(rng):
    """SPEC 7: ``None``, an int (or SeedSequence) or a ``numpy.random.Generator`` -> a seed."""
    if rng is None or isinstance(rng, (numbers.Integral, np.random.SeedSequence)) and not isinstance(rng, bool):
        return rng
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(0, 2 ** 63 - 1))
    raise TypeError(f"rng must be None, an int, a SeedSequence or a numpy.random.Generator, got {type(rng).__name__}")


class GaussianMixture:
    r"""Gaussian mixture estimator (scikit-learn conventions) over :func:`fit_gaussian_mixture`.

    Parameters
    ----------
    n_components : int
    covariance_type : {"full", "diag", "spherical"}
    tol : float
    reg_covar : float
    max_iter : int
    init_params : {"kmeans++", "random"}
        Used unless ``weights_init``, ``means_init`` and ``covariances_init`` are all given.
    weights_init : array, shape (n_components,), optional
    means_init : array, shape (n_components, n_features), optional
    covariances_init : array, optional
        In the shape of ``covariance_type`` (covariances, not precisions as in scikit-learn).
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of the initialisation (SciPy SPEC 7); a Generator is advanced once per ``fit``.

    Attributes
    ----------
    weights_ : ndarray, shape (n_components,)
    means_ : ndarray, shape (n_components, n_features)
    covariances_ : ndarray
    converged_ : bool
    n_iter_ : int
    lower_bound_ : float
        Last recorded objective (as in scikit-learn).
    loglik_path_ : ndarray, shape (n_iterations,)
    result_ : EMResult

    Notes
    -----
    ``fit(X, y)`` with ``y`` holding ``-1`` for unlabelled points fits the
    semi-supervised mixture in which labelled points are clamped to their
    component (the convention of scikit-learn's semi-supervised estimators).
    See :func:`fit_gaussian_mixture` for the update rule and what is simplified.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-3, 1, (100, 2)), rng.normal(3, 1, (100, 2))])
    >>> gm = GaussianMixture(2, rng=0).fit(X)
    >>> bool(gm.converged_), gm.predict(np.array([[-3.0, -3.0], [3.0, 3.0]])).tolist() in ([0, 1], [1, 0])
    (True, True)
    """

    def __init__(self, n_components=1, *, covariance_type="full", tol=1e-3, reg_covar=1e-6, max_iter=100,
                 init_params="kmeans++", weights_init=None, means_init=None, covariances_init=None, rng=None):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.tol = tol
        self.reg_covar = reg_covar
        self.max_iter = max_iter
        self.init_params = init_params
        self.weights_init = weights_init
        self.means_init = means_init
        self.covariances_init = covariances_init
        self.rng = rng

    def _init(self):
        given = [a is not None for a in (self.weights_init, self.means_init, self.covariances_init)]
        if any(given) and not all(given):
            raise ValueError("weights_init, means_init and covariances_init must be given together (or none)")
        if all(given):
            return GaussianMixtureParams(np.asarray(self.weights_init, dtype=float),
                                         np.asarray(self.means_init, dtype=float),
                                         np.asarray(self.covariances_init, dtype=float), self.covariance_type)
        return self.init_params

    def fit(self, X, y=None, *, sample_weight=None, prior=None):
        """Fit by EM; ``y`` (optional) holds partial labels with ``-1`` for unlabelled points. Returns ``self``."""
        res = fit_gaussian_mixture(X, self.n_components, covariance_type=self.covariance_type, init=self._init(),
                                   max_iter=self.max_iter, tol=self.tol, reg_covar=self.reg_covar,
                                   sample_weight=sample_weight, labels=y, prior=prior,
                                   seed=_seed_from_rng(self.rng))
        p = res.params
        self.weights_ = asnumpy(p.weights)
        self.means_ = asnumpy(p.means)
        self.covariances_ = asnumpy(p.covariances)
        self.converged_ = res.converged
        self.n_iter_ = res.n_iter
        self.loglik_path_ = asnumpy(res.loglik_path)
        self.lower_bound_ = float(self.loglik_path_[-1])
        self.result_ = res
        self.n_features_in_ = self.means_.shape[1]
        return self

    def _params(self):
        if not hasattr(self, "weights_"):
            raise AttributeError("this GaussianMixture is not fitted yet; call fit first")
        return GaussianMixtureParams(self.weights_[None], self.means_[None], self.covariances_[None],
                                     self.covariance_type)

    def _estep(self, X):
        p = self._params()
        X = np.asarray(X, dtype=float) if not hasattr(X, "shape") else X
        if getattr(X, "ndim", None) != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have shape (n_samples, {self.n_features_in_}), got {np.shape(X)}")
        xp, X3 = _check_data(X[None])
        joint = _log_gaussian(X3, p, xp) + xp.log(xp.asarray(p.weights))[:, None, :]
        norm = logsumexp(joint, axis=-1)
        return asnumpy((joint - norm[..., None])[0]), asnumpy(norm[0])

    def predict_proba(self, X):
        """Posterior component probabilities, shape (n_samples, n_components)."""
        return np.exp(self._estep(X)[0])

    def predict(self, X):
        """Most probable component of each point, shape (n_samples,)."""
        return np.argmax(self._estep(X)[0], axis=1)

    def score_samples(self, X):
        """Log-density :math:`\\log p(x_i)` of each point, shape (n_samples,)."""
        return self._estep(X)[1]

    def score(self, X, y=None, sample_weight=None):
        """Average (weighted) log-likelihood per point."""
        s = self.score_samples(X)
        if sample_weight is None:
            return float(np.mean(s))
        w = asnumpy(_check_sample_weight(sample_weight, 1, s.shape[0], np)[0])
        return float(np.sum(w * s) / np.sum(w))
