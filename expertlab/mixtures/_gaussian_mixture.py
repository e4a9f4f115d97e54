r"""Gaussian mixtures by EM: a batched functional core and a scikit-learn-style estimator.

:func:`fit_gaussian_mixture` runs EM (:func:`~expertlab.mixtures.e_step`, :func:`~expertlab.mixtures.m_step`) on one
data set or, with ``batched=True``, on ``n_reps`` data sets at once; each
replication stops updating when it has converged, so replication ``r`` of a
batch is exactly the fit of its data alone.  :class:`GaussianMixture` is a
thin shell over it for notebook use.  Initialisations come from the
counter-based generator, keyed by the seed and the
replication index.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from .._backend import asnumpy, logsumexp
from .._estimator import EstimatorMixin
from .._random import rep_key, round_key, seed_to_uint64, stream_key, uniform
from .._validation import as_real_array, check_float, check_in, check_int
from ._em import (COVARIANCE_TYPES, EMResult, GaussianMixtureParams, _check_data, _check_params, run_em,
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
    centres = []
    d2 = None
    for k in range(n_components):
        if d2 is None:
            score = ww
        else:
            score = ww * d2
            score = xp.where(xp.sum(score, axis=1, keepdims=True) > 0, score, ww)   # all points on the centres
        cum = xp.cumulative_sum(score, axis=1)
        idx = xp.count_nonzero(cum < (u[:, k] * cum[:, -1])[:, None], axis=1)
        idx = xp.minimum(idx, n - 1)
        c = xp.take_along_axis(X, idx[:, None, None], axis=1)[:, 0, :]          # (R, D)
        centres.append(c)
        dk = xp.sum((X - c[:, None, :]) ** 2, axis=-1)
        d2 = dk if d2 is None else xp.minimum(d2, dk)
    dist = xp.stack([xp.sum((X - c[:, None, :]) ** 2, axis=-1) for c in centres], axis=-1)   # (R, n, C)
    nearest = xp.argmin(dist, axis=-1)
    return xp.astype(nearest[..., None] == xp.arange(n_components)[None, None, :], xp.float64)


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
    seed : int, numpy.random.SeedSequence or None, default 0
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

    def step(data, p):
        X_a, w_a, lp_a = data
        log_resp, ll = _e_step(X_a, p, w_a, lp_a, xp)
        return ll, _m_step(X_a, xp.exp(log_resp), w_a, kind, reg, xp)

    params, path, n_iter, converged = run_em(step, params, (X, w, lp), max_iter=max_iter, tol=tol, xp=xp)
    n_bad = int(R - int(xp.sum(xp.astype(converged, xp.int64))))
    if n_bad == 0:
        message = f"converged in {int(xp.max(n_iter))} iterations or fewer"
    else:
        message = f"{n_bad} of {R} replications did not converge in max_iter={max_iter} iterations"
    if batched:
        return EMResult(params, path, n_iter, converged, message)
    return EMResult(params.select(0), path[0], int(n_iter[0]), bool(converged[0]), message)


#: Salt of the stream :meth:`GaussianMixture.sample` draws from (disjoint from the initialisation's).
_SAMPLE_STREAM = np.uint64(0x8CB92BA72F3D8DD7)


def _n_parameters(n_components, n_features, covariance_type):
    """Free parameters of a Gaussian mixture: weights (one fewer than components), means, covariances."""
    C, D = n_components, n_features
    cov = {"full": C * D * (D + 1) // 2, "diag": C * D, "spherical": C}[covariance_type]
    return (C - 1) + C * D + cov


class GaussianMixture(EstimatorMixin):
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
    seed : int, numpy.random.SeedSequence or None, default 0
        Seed of the initialisation (see :ref:`mixtures-randomness`): the same
        seed gives the same fit; ``None`` draws a fresh one, kept in ``seed_``.

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
    n_features_in_ : int
    seed_ : int
        The seed the fit used: ``GaussianMixture(..., seed=seed_)`` repeats it.
    result_ : EMResult

    Notes
    -----
    ``fit(X, labels=labels)`` with ``labels`` holding ``-1`` for unlabelled
    points fits the semi-supervised mixture in which labelled points are
    clamped to their component.  The ``y`` of ``fit(X, y)`` is ignored, as
    in scikit-learn's unsupervised estimators.  See
    :func:`fit_gaussian_mixture` for the update rule and what is simplified.

    :meth:`bic` and :meth:`aic` count
    :math:`(C - 1) + C d + C\,d(d + 1)/2` free parameters for ``"full"``
    covariances, :math:`C d` covariance parameters for ``"diag"`` and
    :math:`C` for ``"spherical"`` (:math:`C` components, :math:`d` features).

    References
    ----------
    .. [1] G. Schwarz, "Estimating the dimension of a model", Ann. Statist.
       6(2), 1978 (the BIC).
    .. [2] H. Akaike, "A new look at the statistical model identification",
       IEEE Trans. Automat. Control 19(6), 1974 (the AIC).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(-3, 1, (100, 2)), rng.normal(3, 1, (100, 2))])
    >>> gm = GaussianMixture(2).fit(X)
    >>> gm
    GaussianMixture(n_components=2, seed=0)
    >>> bool(gm.converged_), gm.predict(np.array([[-3.0, -3.0], [3.0, 3.0]])).tolist() in ([0, 1], [1, 0])
    (True, True)
    >>> bool(gm.bic(X) < GaussianMixture(1).fit(X).bic(X))
    True
    """

    _estimator_type = "density_estimator"

    def __init__(self, n_components=1, *, covariance_type="full", tol=1e-3, reg_covar=1e-6, max_iter=100,
                 init_params="kmeans++", weights_init=None, means_init=None, covariances_init=None, seed=0):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.tol = tol
        self.reg_covar = reg_covar
        self.max_iter = max_iter
        self.init_params = init_params
        self.weights_init = weights_init
        self.means_init = means_init
        self.covariances_init = covariances_init
        self.seed = seed

    def _init(self, n_components, n_features, kind):
        """The ``init`` of :func:`fit_gaussian_mixture`: ``init_params`` or the checked initial parameters."""
        if not isinstance(self.init_params, str):
            raise TypeError(f"init_params must be one of {INITS}, got {type(self.init_params).__name__}")
        check_in(self.init_params, "init_params", INITS)
        given = [a is not None for a in (self.weights_init, self.means_init, self.covariances_init)]
        if any(given) and not all(given):
            raise ValueError("weights_init, means_init and covariances_init must be given together (or none)")
        if not all(given):
            return self.init_params
        C, D = n_components, n_features
        want = {"weights_init": (C,), "means_init": (C, D),
                "covariances_init": {"full": (C, D, D), "diag": (C, D), "spherical": (C,)}[kind]}
        arrs = {}
        for name, shape in want.items():
            a = as_real_array(getattr(self, name), name, np)
            if a.shape != shape:
                raise ValueError(f"{name} must have shape {shape} (n_components={C}, {D} features, "
                                 f"covariance_type={kind!r}), got {a.shape}")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"{name} contains NaN or infinite values")
            arrs[name] = a
        w, cov = arrs["weights_init"], arrs["covariances_init"]
        if np.any(w < 0) or abs(np.sum(w) - 1.0) > 1e-9 * C:
            raise ValueError("weights_init must lie on the simplex (non-negative, summing to 1)")
        if kind == "full":
            if not np.allclose(cov, np.swapaxes(cov, -1, -2), rtol=1e-10, atol=1e-12):
                raise ValueError("covariances_init must be symmetric")
            if np.min(np.linalg.eigvalsh(cov)) <= 0:
                raise ValueError("covariances_init must be positive definite")
        elif np.any(cov <= 0):
            raise ValueError("covariances_init must be positive (variances)")
        return GaussianMixtureParams(w, arrs["means_init"], cov, kind)

    def fit(self, X, y=None, *, labels=None, sample_weight=None, prior=None):
        """Fit by EM; returns ``self``.

        Parameters
        ----------
        X : array, shape (n_samples, n_features)
        y : ignored
            Present for scikit-learn's API (an unsupervised estimator takes ``y`` and ignores it).
        labels : array of int, shape (n_samples,), optional
            Partial labels, ``-1`` for unlabelled points (the semi-supervised fit).
        sample_weight : array, shape (n_samples,), optional
        prior : array, shape (n_samples, n_components), optional
            Soft priors that multiply each point's posterior.
        """
        X = self._validate_X(X)
        if sample_weight is not None:
            sample_weight = as_real_array(sample_weight, "sample_weight", np)
            if sample_weight.shape == (X.shape[0],) and not np.any(sample_weight):
                raise ValueError("sample_weight is zero for every point; at least one weight must be positive")
        C = check_int(self.n_components, "n_components")
        kind = check_in(self.covariance_type, "covariance_type", COVARIANCE_TYPES)
        init = self._init(C, X.shape[1], kind)
        seed = int(seed_to_uint64(self.seed))
        res = fit_gaussian_mixture(X, C, covariance_type=kind, init=init, max_iter=self.max_iter, tol=self.tol,
                                   reg_covar=self.reg_covar, sample_weight=sample_weight, labels=labels,
                                   prior=prior, seed=seed)
        p = res.params
        self.weights_ = asnumpy(p.weights)
        self.means_ = asnumpy(p.means)
        self.covariances_ = asnumpy(p.covariances)
        self.converged_ = res.converged
        self.n_iter_ = res.n_iter
        self.loglik_path_ = asnumpy(res.loglik_path)
        self.lower_bound_ = float(self.loglik_path_[-1])
        self.n_features_in_ = X.shape[1]
        self.seed_ = seed
        self.result_ = res
        return self

    def _estep(self, X, method):
        self._check_fitted(method)
        X = self._validate_X(X, fitted=True)
        p = GaussianMixtureParams(self.weights_[None], self.means_[None], self.covariances_[None],
                                  self.covariance_type)
        joint = _log_gaussian(X[None], p, np)
        with np.errstate(divide="ignore"):                     # a component of weight 0 has log-weight -inf
            joint = joint + np.log(p.weights)[:, None, :]
        norm = logsumexp(joint, axis=-1)
        return (joint - norm[..., None])[0], norm[0]

    def predict_proba(self, X):
        """Posterior component probabilities, shape (n_samples, n_components)."""
        return np.exp(self._estep(X, "predict_proba")[0])

    def predict(self, X):
        """Most probable component of each point, shape (n_samples,)."""
        return np.argmax(self._estep(X, "predict")[0], axis=1)

    def score_samples(self, X):
        """Log-density :math:`\\log p(x_i)` of each point, shape (n_samples,)."""
        return self._estep(X, "score_samples")[1]

    def score(self, X, y=None, sample_weight=None):
        """Mean (weighted) log-likelihood per point; ``y`` is ignored."""
        s = self._estep(X, "score")[1]
        if sample_weight is None:
            return float(np.mean(s))
        w = asnumpy(_check_sample_weight(sample_weight, 1, s.shape[0], np)[0])
        return float(np.sum(w * s) / np.sum(w))

    def n_parameters(self):
        """Number of free parameters of the fitted mixture (the count :meth:`bic` and :meth:`aic` use)."""
        self._check_fitted("n_parameters")
        return _n_parameters(self.weights_.shape[0], self.n_features_in_, self.covariance_type)

    def bic(self, X):
        r"""Bayesian information criterion :math:`-2 \log L + p \log n` on ``X`` (lower is better)."""
        self._check_fitted("bic")
        n = self._validate_X(X).shape[0]
        return float(-2.0 * self.score(X) * n + self.n_parameters() * np.log(n))

    def aic(self, X):
        r"""Akaike information criterion :math:`-2 \log L + 2 p` on ``X`` (lower is better)."""
        self._check_fitted("aic")
        n = self._validate_X(X).shape[0]
        return float(-2.0 * self.score(X) * n + 2.0 * self.n_parameters())

    def sample(self, n_samples=1, *, seed=0):
        """Draw points from the fitted mixture.

        Parameters
        ----------
        n_samples : int
        seed : int, numpy.random.SeedSequence or None, default 0
            Row ``i`` is a function of ``(seed, i)`` only, so a longer sample
            under the same seed extends a shorter one.

        Returns
        -------
        X : ndarray, shape (n_samples, n_features)
        labels : ndarray of int, shape (n_samples,)
            The component of each point, in draw order (scikit-learn's
            ``sample`` sorts the points by component).
        """
        self._check_fitted("sample")
        n = check_int(n_samples, "n_samples")
        seed_u = seed_to_uint64(seed)
        D, C = self.n_features_in_, self.weights_.shape[0]
        with np.errstate(over="ignore"):
            k = stream_key(rep_key(np.full(1, seed_u, dtype=np.uint64), np.zeros(1, dtype=np.uint64)),
                           _SAMPLE_STREAM)
            keys = round_key(k, np.arange(n, dtype=np.uint64))
            u = uniform(keys[:, None], np.arange(D + 1, dtype=np.uint64)[None, :])
        cum = np.cumsum(self.weights_)
        labels = np.minimum(np.searchsorted(cum / cum[-1], u[:, 0], side="right"), C - 1)
        z = ndtri(u[:, 1:])
        cov = self.covariances_
        if self.covariance_type == "full":
            shift = np.einsum("nij,nj->ni", np.linalg.cholesky(cov)[labels], z)
        elif self.covariance_type == "diag":
            shift = np.sqrt(cov)[labels] * z
        else:
            shift = np.sqrt(cov)[labels][:, None] * z
        return self.means_[labels] + shift, labels
