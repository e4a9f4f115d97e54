r"""Softmax-gated Gaussian mixture of experts by batched EM, and the scikit-learn-style MoE estimators.

:func:`fit_softmax_moe` fits ``n_reps`` data sets at once of the model

.. math::

    p(y \mid x) = \sum_{k=1}^{K} \pi_k(x)\, \mathcal N(y; a_k^\top x + b_k, \sigma_k), \qquad
    \pi_k(x) = \frac{e^{\beta_{1k}^\top x + \beta_{0k}}}{\sum_l e^{\beta_{1l}^\top x + \beta_{0l}}},

with the gate written in the gauge :math:`(\beta_{0K}, \beta_{1K}) = 0` (the
softmax is unchanged by a common translation), and any experts frozen.
:class:`SoftmaxGatedMoE` and :class:`SoftmaxContaminatedMoE` are thin
estimator shells (``__init__`` stores settings, ``fit`` returns ``self``,
fitted attributes end in ``_``, randomness from ``seed``).
"""

from __future__ import annotations

import numpy as np

from .._backend import logsumexp
from .._estimator import EstimatorMixin
from .._random import LEARNER_STREAM, seed_to_uint64
from .._validation import as_real_array, check_float, check_in, check_int
from ._contaminated_moe import _joint, fit_contaminated_moe
from ._em import EMResult
from ._moe_links import (LINKS, ContaminatedMoEParams, FrozenExpert, _backtrack, _check_xy, _solve, _uniforms,
                         link_value, log_density)
from ._voronoi import SoftmaxMoEParams, _check, _joint_k, _log_gate
from ._voronoi import sample_softmax_moe  # noqa: F401  (used by the doctests)

__all__ = ["fit_softmax_moe", "SoftmaxGatedMoE", "SoftmaxContaminatedMoE"]


def _gate_newton(X, Xt, r, p, xp):
    """One damped Newton step on ``sum_ik r_ik log pi_k(x_i)`` in the gates of experts 1..K-1 (expert K fixed at 0)."""
    R, n, q = Xt.shape
    m = r.shape[-1] - 1
    theta = xp.concatenate([p.gate_weight[:, :m], p.gate_bias[:, :m, None]], axis=-1).reshape(R, m * q)

    def unpack(th):
        t = xp.concatenate([th.reshape(R, m, q), xp.zeros((R, 1, q))], axis=1)
        return SoftmaxMoEParams(t[..., -1], t[..., :-1], p.expert_weight, p.expert_bias, p.variance)

    def objective(th):
        return xp.sum(r * _log_gate(X, unpack(th), xp), axis=(1, 2))

    P = xp.exp(_log_gate(X, p, xp))[..., :m]
    A = (P[..., :, None] * Xt[..., None, :]).reshape(R, n, m * q)
    B = (xp.swapaxes(A, 1, 2) @ Xt).reshape(R, m, q, q)                       # sum_i pi_ik x_i x_i^T
    H = xp.einsum("rkab,kl->rkalb", B, xp.eye(m)).reshape(R, m * q, m * q) - xp.swapaxes(A, 1, 2) @ A
    grad = (xp.swapaxes(r[..., :m] - P, 1, 2) @ Xt).reshape(R, m * q)
    new = unpack(_backtrack(theta, _solve(H, grad, xp), objective, xp))
    return new.gate_bias, new.gate_weight


def _experts_wls(Xt, y, r, p, frozen, min_var, xp):
    R, n, q = Xt.shape
    K = r.shape[-1]
    A = (xp.swapaxes((r[..., :, None] * Xt[..., None, :]).reshape(R, n, K * q), 1, 2) @ Xt).reshape(R * K, q, q)
    rhs = (xp.swapaxes(r * y[..., None], 1, 2) @ Xt).reshape(R * K, q)
    coef = _solve(A, rhs, xp).reshape(R, K, q)
    res2 = (y[..., None] - Xt @ xp.swapaxes(coef, 1, 2)) ** 2
    var = xp.maximum(xp.sum(r * res2, axis=1) / xp.maximum(xp.sum(r, axis=1), 1e-300), min_var)
    keep = xp.asarray(frozen)[None, :]
    return (xp.where(keep[..., None], p.expert_weight, coef[..., :-1]), xp.where(keep, p.expert_bias, coef[..., -1]),
            xp.where(keep, p.variance, var))


def fit_softmax_moe(X, y, n_experts, *, init="random", frozen=None, max_iter=200, tol=1e-8, gate_steps=1,
                    min_var=1e-12, seed=0, batched=False) -> EMResult:
    r"""Maximum-likelihood fit of a softmax-gated Gaussian MoE by EM, optionally batched.

    Parameters
    ----------
    X : array, shape (n_samples, n_features), or (n_reps, n_samples, n_features) with ``batched=True``
    y : array, shape (n_samples,), or (n_reps, n_samples)
    n_experts : int
    init : "random" or SoftmaxMoEParams
        ``"random"``: uniform gate and expert regressions fitted to random
        responsibilities.  Explicit parameters (batched with ``batched=True``)
        start there; their last gate is moved to the gauge (subtracted from every gate).
    frozen : array of bool, shape (n_experts,), optional
        Experts whose :math:`(a_k, b_k, \sigma_k)` are never updated (the gate still is).
    max_iter, tol
        As in :func:`fit_contaminated_moe`.
    gate_steps : int
        Damped Newton steps on the gate per M-step.
    min_var : float
        Positive floor of the expert variances.
    seed, batched
        As in :func:`fit_contaminated_moe`.

    Returns
    -------
    EMResult
        ``params`` is a :class:`SoftmaxMoEParams` in the gauge :math:`(\beta_{0K}, \beta_{1K}) = 0`.

    Notes
    -----
    E-step :math:`r_{ik} \propto \pi_k(x_i) \mathcal N(y_i; a_k^\top x_i + b_k, \sigma_k)` in log
    space; M-step: weighted least squares and the weighted residual variance
    for every free expert, and ``gate_steps`` Newton steps on the multinomial
    logistic objective :math:`\sum_{ik} r_{ik} \log \pi_k(x_i)`, each halved
    until the objective does not fall (generalised EM, so the likelihood never
    decreases).  *Reconstructed*: the source paper fits the MLE by EM without
    fixing the gate solver; the Newton step is the choice made here.

    [validated-rates]

    References
    ----------
    .. [1] H. Nguyen, T. Nguyen, N. Ho, "Demystifying softmax gating function in
       Gaussian mixture of experts", NeurIPS 2023, Thm 1 (exact-fit rate of the
       Voronoi loss :math:`D_1`).

    Examples
    --------
    >>> import numpy as np
    >>> t = SoftmaxMoEParams(np.array([[0.5, 0.0]]), np.array([[[2.0], [0.0]]]), np.array([[[1.0], [-1.0]]]),
    ...                      np.array([[1.0, -1.0]]), np.array([[0.1, 0.1]]))
    >>> X, y, _ = sample_softmax_moe(2000, t, seed=0)
    >>> res = fit_softmax_moe(X, y, 2, init=t, batched=True)
    >>> bool(res.converged[0]), np.round(res.params.expert_bias[0], 1).tolist()
    (True, [1.0, -1.0])
    """
    if not isinstance(batched, (bool, np.bool_)):
        raise TypeError(f"batched must be a bool, got {type(batched).__name__}")
    if not batched:
        X, y = (a if hasattr(a, "shape") else np.asarray(a) for a in (X, y))
        if X.ndim != 2:
            raise ValueError(f"X must have shape (n_samples, n_features), got {tuple(X.shape)}")
        X, y = X[None], y[None]
    xp, X, y = _check_xy(X, y)
    R, n, D = X.shape
    K = check_int(n_experts, "n_experts", minimum=2)
    max_iter, gate_steps = check_int(max_iter, "max_iter"), check_int(gate_steps, "gate_steps")
    tol = check_float(tol, "tol", minimum=0.0)
    min_var = check_float(min_var, "min_var", positive=True)
    frozen = np.zeros(K, dtype=bool) if frozen is None else np.asarray(frozen)
    if frozen.shape != (K,) or frozen.dtype != bool:
        raise ValueError(f"frozen must be a boolean array of shape ({K},), got {frozen.dtype} {frozen.shape}")
    Xt = xp.concatenate([X, xp.ones((R, n, 1))], axis=-1)
    if isinstance(init, SoftmaxMoEParams):
        arrs, b = _check(init, "init")
        if b != batched or arrs[0].shape != (R, K) or arrs[1].shape[-1] != D:
            raise ValueError(f"init must hold {K} experts with {D} features" + (f" for {R} replications"
                                                                                  if batched else ""))
        p = SoftmaxMoEParams(arrs[0] - arrs[0][:, -1:], arrs[1] - arrs[1][:, -1:], *arrs[2:])
    elif isinstance(init, str):
        check_in(init, "init", ("random",))
        resp = xp.asarray(_uniforms(seed_to_uint64(seed), 0, R, n, K, salt=LEARNER_STREAM))
        resp = resp / xp.sum(resp, axis=-1, keepdims=True)
        zero = SoftmaxMoEParams(xp.zeros((R, K)), xp.zeros((R, K, D)), xp.zeros((R, K, D)), xp.zeros((R, K)),
                                xp.ones((R, K)))
        p = SoftmaxMoEParams(zero.gate_bias, zero.gate_weight, *_experts_wls(Xt, y, resp, zero, np.zeros(K, bool),
                                                                             min_var, xp))
    else:
        raise TypeError(f"init must be 'random' or a SoftmaxMoEParams, got {type(init).__name__}")

    path = xp.full((R, max_iter), xp.nan)
    converged, n_iter = xp.zeros(R, dtype=bool), xp.zeros(R, dtype=xp.int64)
    prev = xp.full(R, -xp.inf)
    fields = ("gate_bias", "gate_weight", "expert_weight", "expert_bias", "variance")
    out = [xp.asarray(getattr(p, f), copy=True) for f in fields]
    idx, X_a, Xt_a, y_a = xp.arange(R), X, Xt, y
    steps = 0
    for k in range(max_iter):
        joint = _joint_k(X_a, y_a, p, xp)
        norm = logsumexp(joint, axis=-1)
        ll = xp.mean(norm, axis=1)
        r = xp.exp(joint - norm[..., None])
        for _ in range(gate_steps):
            gb, gw = _gate_newton(X_a, Xt_a, r, p, xp)
            p = SoftmaxMoEParams(gb, gw, p.expert_weight, p.expert_bias, p.variance)
        p = SoftmaxMoEParams(p.gate_bias, p.gate_weight, *_experts_wls(Xt_a, y_a, r, p, frozen, min_var, xp))
        path[idx, k], n_iter[idx] = ll, k + 1
        conv = xp.abs(ll - prev[idx]) < tol
        prev[idx] = ll
        steps = k + 1
        done = conv if k < max_iter - 1 else xp.ones_like(conv)
        if bool(xp.any(done)):
            fin = idx[done]
            for o, f in zip(out, fields):
                o[fin] = getattr(p, f)[done]
            converged[fin] = conv[done]
            keep = ~done
            idx, X_a, Xt_a, y_a = idx[keep], X_a[keep], Xt_a[keep], y_a[keep]
            p = SoftmaxMoEParams(*(getattr(p, f)[keep] for f in fields))
        if idx.shape[0] == 0:
            break
    params, path = SoftmaxMoEParams(*out), path[:, :steps]
    n_bad = int(R - int(xp.sum(converged)))
    message = (f"converged in {int(xp.max(n_iter))} iterations or fewer" if n_bad == 0 else
               f"{n_bad} of {R} replications did not converge in max_iter={max_iter} iterations")
    if batched:
        return EMResult(params, path, n_iter, converged, message)
    return EMResult(SoftmaxMoEParams(*(a[0] for a in out)), path[0], int(n_iter[0]), bool(converged[0]), message)


class _MoERegressor(EstimatorMixin):
    """What the two MoE estimators share: scikit-learn's regressor kind, the log-likelihood scores, BIC and AIC."""

    _estimator_type = "regressor"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True    # score is the mean log-likelihood, not scikit-learn's R^2
        return tags

    def score(self, X, y):
        r"""Mean conditional log-likelihood :math:`\frac1n \sum_i \log p(y_i \mid x_i)`.

        Not the :math:`R^2` of scikit-learn's regressors: like a mixture's
        ``score``, larger is better, so model selection by ``score``
        maximises the held-out likelihood.
        """
        self._check_fitted("score")
        return float(np.mean(self.score_samples(X, y)))

    def bic(self, X, y):
        r"""Bayesian information criterion :math:`-2 \log L + p \log n` on ``(X, y)`` (lower is better)."""
        self._check_fitted("bic")
        s = self.score_samples(X, y)
        return float(-2.0 * np.sum(s) + self.n_parameters() * np.log(s.shape[0]))

    def aic(self, X, y):
        r"""Akaike information criterion :math:`-2 \log L + 2 p` on ``(X, y)`` (lower is better)."""
        self._check_fitted("aic")
        s = self.score_samples(X, y)
        return float(-2.0 * np.sum(s) + 2.0 * self.n_parameters())


class SoftmaxContaminatedMoE(_MoERegressor):
    r"""Softmax-contaminated mixture of experts (scikit-learn conventions) over :func:`fit_contaminated_moe`.

    Parameters
    ----------
    eta0 : array, shape (n_features,)
        Location parameter of the frozen expert.
    nu0 : float
        Squared scale of the frozen expert.
    density : {"laplace", "gaussian", "student_t"}
        Family of the frozen expert :math:`f_0`.
    link0, link : {"tanh", "sigmoid", "gelu", "linear"}
        Links of the frozen expert and of the prompt.
    df : float
        Degrees of freedom of a Student t :math:`f_0`.
    init : {"random", "perturbed_truth"} or ContaminatedMoEParams
        As in :func:`fit_contaminated_moe` (explicit parameters without the replication axis).
    truth : ContaminatedMoEParams, optional
        For ``init="perturbed_truth"`` (without the replication axis).
    init_scale, max_iter, tol, gate_steps, prompt_steps : see :func:`fit_contaminated_moe`
    seed : int, numpy.random.SeedSequence or None, default 0
        Seed of the initialisation (see :ref:`mixtures-randomness`).

    Attributes
    ----------
    beta_ : ndarray, shape (n_features,)
    tau_ : float
    eta_ : ndarray, shape (n_features,)
    nu_ : float
    converged_ : bool
    n_iter_ : int
    loglik_path_ : ndarray, shape (n_iterations,)
    n_features_in_ : int
    seed_ : int
        The seed the fit used.
    result_ : EMResult

    Notes
    -----
    A regressor in scikit-learn's sense (:meth:`predict` is the conditional
    mean), whose ``score`` is the mean conditional log-likelihood.
    ``bic`` and ``aic`` count the :math:`2 d + 2` trainable
    parameters :math:`(\beta, \tau, \eta, \nu)`; the frozen expert is known.

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.mixtures import sample_contaminated_moe
    >>> e = FrozenExpert(np.array([1.0, 0.0]), 1e-3, "laplace")
    >>> truth = ContaminatedMoEParams.tile([0.7, 0.7], 1.0, [-1.0, 0.0], 1e-3, n_reps=1)
    >>> X, y, _ = sample_contaminated_moe(2000, truth, e, seed=0)
    >>> m = SoftmaxContaminatedMoE([1.0, 0.0], 1e-3, init="perturbed_truth", truth=truth.select(0))
    >>> m
    SoftmaxContaminatedMoE(eta0=[1.0, 0.0], nu0=0.001, init='perturbed_truth',
                           truth=ContaminatedMoEParams(...), seed=0)
    >>> m = m.fit(X[0], y[0])
    >>> bool(m.converged_), np.round(m.eta_, 1).tolist(), m.gate_proba(np.zeros((1, 2))).round(1).tolist()
    (True, [-1.0, 0.0], [0.7])
    """

    def __init__(self, eta0, nu0, *, density="laplace", link0="tanh", link="tanh", df=3.0, init="random",
                 truth=None, init_scale=0.1, max_iter=200, tol=1e-8, gate_steps=1, prompt_steps=1, seed=0):
        self.eta0 = eta0
        self.nu0 = nu0
        self.density = density
        self.link0 = link0
        self.link = link
        self.df = df
        self.init = init
        self.truth = truth
        self.init_scale = init_scale
        self.max_iter = max_iter
        self.tol = tol
        self.gate_steps = gate_steps
        self.prompt_steps = prompt_steps
        self.seed = seed

    def _expert(self, n_features):
        if not isinstance(self.link0, str):
            raise TypeError(f"link0 must be one of {LINKS}, got {type(self.link0).__name__}")
        check_in(self.link0, "link0", LINKS)
        eta0 = as_real_array(self.eta0, "eta0", np)
        if eta0.shape != (n_features,):
            raise ValueError(f"eta0 must have shape ({n_features},), one entry per feature of X, got {eta0.shape}")
        return FrozenExpert(eta0, self.nu0, self.density, self.link0, self.df)

    def fit(self, X, y):
        """Fit by EM on ``X`` of shape (n_samples, n_features) and ``y`` of shape (n_samples,). Returns ``self``."""
        X = self._validate_X(X)
        y = self._validate_y(y, X.shape[0])
        expert = self._expert(X.shape[1])
        init_scale = check_float(self.init_scale, "init_scale", minimum=0.0)
        seed = int(seed_to_uint64(self.seed))
        res = fit_contaminated_moe(X, y, expert, link=self.link, init=self.init, truth=self.truth,
                                   init_scale=init_scale, max_iter=self.max_iter, tol=self.tol,
                                   gate_steps=self.gate_steps, prompt_steps=self.prompt_steps, seed=seed)
        p = res.params
        self.beta_, self.eta_ = np.asarray(p.beta), np.asarray(p.eta)
        self.tau_, self.nu_ = float(p.tau), float(p.nu)
        self.converged_, self.n_iter_ = res.converged, res.n_iter
        self.loglik_path_ = np.asarray(res.loglik_path)
        self.n_features_in_ = X.shape[1]
        self.seed_ = seed
        self.result_ = res
        return self

    def _X(self, X, method):
        self._check_fitted(method)
        return self._validate_X(X, fitted=True)

    def gate_proba(self, X):
        r"""Prompt weight :math:`g(x) = \sigma(\beta^\top x + \tau)`, shape (n_samples,)."""
        X = self._X(X, "gate_proba")
        return 1.0 / (1.0 + np.exp(-(X @ self.beta_ + self.tau_)))

    def predict(self, X):
        r"""Conditional mean :math:`(1 - g(x)) h_0(x, \eta_0) + g(x) h(x, \eta)` (every :math:`f_0` is symmetric;
        a Student t :math:`f_0` needs ``df > 1``), shape (n_samples,)."""
        X = self._X(X, "predict")
        g = 1.0 / (1.0 + np.exp(-(X @ self.beta_ + self.tau_)))
        e = self._expert(self.n_features_in_)
        return (1.0 - g) * link_value(X @ e.eta0, e.link) + g * link_value(X @ self.eta_, self.link)

    def score_samples(self, X, y):
        r"""Log-density :math:`\log p(y_i \mid x_i)` of each point, shape (n_samples,)."""
        X = self._X(X, "score_samples")
        y = self._validate_y(y, X.shape[0])
        p = ContaminatedMoEParams(self.beta_[None], np.array([self.tau_]), self.eta_[None], np.array([self.nu_]))
        _, X3, y2 = _check_xy(X[None], y[None])
        e = self._expert(self.n_features_in_)
        lf0 = log_density(y2, link_value(X3 @ e.eta0, e.link), e.nu0, e.density, e.df)
        j0, j1 = _joint(X3, y2, lf0, p, self.link, np)
        return np.logaddexp(j0, j1)[0]

    def n_parameters(self):
        """Number of trainable parameters, :math:`2 d + 2` (the count ``bic`` and ``aic`` use)."""
        self._check_fitted("n_parameters")
        return 2 * self.n_features_in_ + 2


class SoftmaxGatedMoE(_MoERegressor):
    r"""Softmax-gated Gaussian mixture of experts (scikit-learn conventions) over :func:`fit_softmax_moe`.

    Parameters
    ----------
    n_experts : int
    init : "random" or SoftmaxMoEParams
        Explicit parameters without the replication axis.
    frozen : array of bool, shape (n_experts,), optional
    max_iter, tol, gate_steps : see :func:`fit_softmax_moe`
    seed : int, numpy.random.SeedSequence or None, default 0
        Seed of the initialisation (see :ref:`mixtures-randomness`).

    Attributes
    ----------
    params_ : SoftmaxMoEParams
        Fitted parameters (no replication axis), last gate at zero.
    converged_, n_iter_, loglik_path_, result_
    n_features_in_ : int
    seed_ : int
        The seed the fit used.

    Notes
    -----
    A regressor in scikit-learn's sense (:meth:`predict` is the conditional
    mean), whose ``score`` is the mean conditional log-likelihood.
    ``bic`` and ``aic`` count :math:`(K - 1)(d + 1)` gate parameters
    (the last gate is fixed at zero) and :math:`d + 2` for each of the
    :math:`K` experts that is not frozen.

    Examples
    --------
    >>> import numpy as np
    >>> t = SoftmaxMoEParams(np.array([[0.0, 0.0]]), np.array([[[3.0], [0.0]]]), np.array([[[1.0], [-1.0]]]),
    ...                      np.array([[2.0, -2.0]]), np.array([[0.1, 0.1]]))
    >>> X, y, _ = sample_softmax_moe(1000, t, seed=0)
    >>> m = SoftmaxGatedMoE(2).fit(X[0], y[0])
    >>> sorted(np.round(m.params_.expert_bias, 0).tolist())
    [-2.0, 2.0]
    >>> m.n_parameters(), bool(m.bic(X[0], y[0]) < SoftmaxGatedMoE(3).fit(X[0], y[0]).bic(X[0], y[0]))
    (8, True)
    """

    def __init__(self, n_experts=2, *, init="random", frozen=None, max_iter=200, tol=1e-8, gate_steps=1, seed=0):
        self.n_experts = n_experts
        self.init = init
        self.frozen = frozen
        self.max_iter = max_iter
        self.tol = tol
        self.gate_steps = gate_steps
        self.seed = seed

    def fit(self, X, y):
        """Fit by EM on ``X`` of shape (n_samples, n_features) and ``y`` of shape (n_samples,). Returns ``self``."""
        X = self._validate_X(X)
        y = self._validate_y(y, X.shape[0])
        seed = int(seed_to_uint64(self.seed))
        res = fit_softmax_moe(X, y, self.n_experts, init=self.init, frozen=self.frozen, max_iter=self.max_iter,
                              tol=self.tol, gate_steps=self.gate_steps, seed=seed)
        self.params_, self.converged_, self.n_iter_ = res.params, res.converged, res.n_iter
        self.loglik_path_ = np.asarray(res.loglik_path)
        self.n_features_in_ = X.shape[1]
        self.seed_ = seed
        self.result_ = res
        return self

    def _batched_params(self):
        return SoftmaxMoEParams(*(np.asarray(a)[None] for a in (self.params_.gate_bias, self.params_.gate_weight,
                                                                 self.params_.expert_weight, self.params_.expert_bias,
                                                                 self.params_.variance)))

    def gate_proba(self, X):
        r"""Gate probabilities :math:`\pi_k(x)`, shape (n_samples, n_experts)."""
        self._check_fitted("gate_proba")
        X = self._validate_X(X, fitted=True)
        return np.exp(_log_gate(X[None], self._batched_params(), np))[0]

    def predict(self, X):
        r"""Conditional mean :math:`\sum_k \pi_k(x) (a_k^\top x + b_k)`, shape (n_samples,)."""
        self._check_fitted("predict")
        X = self._validate_X(X, fitted=True)
        g = np.exp(_log_gate(X[None], self._batched_params(), np))[0]
        return np.sum(g * (X @ self.params_.expert_weight.T + self.params_.expert_bias), axis=1)

    def score_samples(self, X, y):
        r"""Log-density :math:`\log p(y_i \mid x_i)` of each point, shape (n_samples,)."""
        self._check_fitted("score_samples")
        X = self._validate_X(X, fitted=True)
        y = self._validate_y(y, X.shape[0])
        return logsumexp(_joint_k(X[None], y[None], self._batched_params(), np), axis=-1)[0]

    def n_parameters(self):
        """Number of free parameters (the count ``bic`` and ``aic`` use)."""
        self._check_fitted("n_parameters")
        K, D = self.params_.gate_bias.shape[0], self.n_features_in_
        n_free = K if self.frozen is None else K - int(np.sum(np.asarray(self.frozen)))
        return (K - 1) * (D + 1) + n_free * (D + 2)
