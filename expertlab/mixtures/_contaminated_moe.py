r"""Softmax-contaminated mixture of experts: model, seeded data generator and batched EM.

The model (Yan et al. 2025, Eq. 1) mixes a frozen, known expert :math:`f_0`
with a trainable Gaussian *prompt* through a sigmoid (two-expert softmax) gate:

.. math::

    p(y \mid x) = \big(1 - g(x)\big)\, f_0\big(y \mid h_0(x, \eta_0), \nu_0\big)
        + g(x)\, \mathcal N\big(y; h(x, \eta), \nu\big), \qquad
    g(x) = \frac{1}{1 + e^{-(\beta^\top x + \tau)}},

with :math:`h(x, \eta) = \phi(\eta^\top x)` (links in :mod:`._moe_links`).
Every array has a leading replication axis ``n_reps``; one call fits
``n_reps`` independent data sets.  Draws come from the counter-based
generator, so replication ``r`` of a batch is the
same data set whatever the batch.  The generator returns NumPy arrays; the EM
runs in the array namespace of its inputs (only the NumPy path is tested).
"""

from __future__ import annotations

import numpy as np

from .._random import LEARNER_STREAM, seed_to_uint64
from .._validation import check_float, check_in, check_int
from ._em import EMResult, run_em
from ._moe_links import FrozenExpert  # noqa: F401  (used by the doctests)
from ._moe_links import (LINKS, ContaminatedMoEParams, _check_expert, _check_params, _check_xy, _gate_step, _lin,
                         _prompt_step, _uniforms, density_quantile, link_value, log_density)

__all__ = ["sample_contaminated_moe", "fit_contaminated_moe", "contaminated_moe_loglik",
           "perturbed_truth"]


def sample_contaminated_moe(n_samples, truth, expert, *, link="tanh", seed=0, first_rep=0):
    r"""Draw ``n_reps`` data sets from the contaminated MoE with parameters ``truth``.

    Parameters
    ----------
    n_samples : int
    truth : ContaminatedMoEParams
        True parameters, leading axis ``n_reps``.
    expert : FrozenExpert
    link : {"tanh", "sigmoid", "gelu", "linear"}
        Link of the prompt's location :math:`h(x, \eta) = \phi(\eta^\top x)`.
    seed : int, numpy.random.SeedSequence or None, default 0
    first_rep : int
        Index of the first replication: a batch drawn with ``first_rep=k`` holds
        replications ``k, k+1, ...`` of the same seed (for sweeps in blocks).

    Returns
    -------
    X : ndarray, shape (n_reps, n_samples, n_features)
        :math:`x \sim \mathcal N(0, I)`.
    y : ndarray, shape (n_reps, n_samples)
    z : ndarray of bool, shape (n_reps, n_samples)
        Whether the point came from the prompt.

    Notes
    -----
    Point ``i`` of replication ``r`` uses the uniforms of round ``i`` of
    stream ``r``: ``n_features`` for :math:`x` (through :math:`\Phi^{-1}`),
    one for the gate draw and one for the response (through the inverse CDF).

    Examples
    --------
    >>> import numpy as np
    >>> e = FrozenExpert(np.array([1.0, 0.0]), 1e-3, "laplace")
    >>> truth = ContaminatedMoEParams.tile([0.7, 0.7], 1.0, [-1.0, 0.0], 1e-3, n_reps=3)
    >>> X, y, z = sample_contaminated_moe(50, truth, e, seed=0)
    >>> X.shape, y.shape, bool(np.all(np.abs(y) < 1.5))
    ((3, 50, 2), (3, 50), True)
    """
    n = check_int(n_samples, "n_samples")
    first_rep = check_int(first_rep, "first_rep", minimum=0)
    check_in(link, "link", LINKS)
    if not isinstance(truth, ContaminatedMoEParams):
        raise TypeError(f"truth must be a ContaminatedMoEParams, got {type(truth).__name__}")
    R, D = np.shape(truth.beta)[0], np.shape(truth.beta)[-1]
    truth = _check_params(truth, R, D, np, name="truth")
    expert = _check_expert(expert, D)
    from scipy.special import ndtri

    u = _uniforms(seed_to_uint64(seed), first_rep, R, n, D + 2)
    X = ndtri(u[..., :D])
    a = np.einsum("rnd,rd->rn", X, truth.beta) + truth.tau[:, None]
    z = u[..., D] < 1.0 / (1.0 + np.exp(-a))
    loc1 = link_value(np.einsum("rnd,rd->rn", X, truth.eta), link)
    y1 = density_quantile(u[..., D + 1], loc1, truth.nu[:, None], "gaussian")
    loc0 = link_value(X @ expert.eta0, expert.link)
    y0 = density_quantile(u[..., D + 1], loc0, expert.nu0, expert.density, expert.df)
    return X, np.where(z, y1, y0), z


def _log_gate(a, xp):
    """``(log g, log(1 - g))`` for the sigmoid gate of score ``a``, without overflow."""
    sp = xp.logaddexp(0.0, -a)
    return -sp, -a - sp


def _joint(X, y, lf0, p, link, xp):
    a = (X @ p.beta[:, :, None])[..., 0] + p.tau[:, None]
    lg1, lg0 = _log_gate(a, xp)
    u = (X @ p.eta[:, :, None])[..., 0]
    lphi = log_density(y, link_value(u, link), p.nu[:, None], "gaussian")
    return lg0 + lf0, lg1 + lphi


def contaminated_moe_loglik(X, y, params, expert, *, link="tanh"):
    r"""Average log-likelihood :math:`\frac1n \sum_i \log p(y_i \mid x_i)` of each replication.

    Parameters
    ----------
    X : array, shape (n_reps, n_samples, n_features)
    y : array, shape (n_reps, n_samples)
    params : ContaminatedMoEParams
    expert : FrozenExpert
    link : {"tanh", "sigmoid", "gelu", "linear"}

    Returns
    -------
    array, shape (n_reps,)

    Examples
    --------
    >>> import numpy as np
    >>> e = FrozenExpert(np.array([1.0]), 1.0, "gaussian", link="linear")
    >>> p = ContaminatedMoEParams.tile([0.0], -50.0, [0.0], 1.0, n_reps=1)    # gate closed: f0 alone
    >>> print(round(float(contaminated_moe_loglik(np.zeros((1, 1, 1)), np.zeros((1, 1)), p, e,
    ...                                           link="linear")[0]), 6))
    -0.918939
    """
    check_in(link, "link", LINKS)
    xp, X, y = _check_xy(X, y)
    R, n, D = X.shape
    params = _check_params(params, R, D, xp)
    expert = _check_expert(expert, D)
    lf0 = log_density(y, link_value(X @ xp.asarray(expert.eta0), expert.link), expert.nu0, expert.density,
                      expert.df)
    j0, j1 = _joint(X, y, lf0, params, link, xp)
    return xp.mean(xp.logaddexp(j0, j1), axis=1)


def perturbed_truth(truth, *, scale=0.1, seed=0, first_rep=0) -> ContaminatedMoEParams:
    r"""The warm start near the truth used by the source paper's simulations (reconstructed).

    Parameters
    ----------
    truth : ContaminatedMoEParams
        Leading axis ``n_reps``.
    scale : float
        Size :math:`\epsilon \ge 0` of the perturbation.
    seed : int, numpy.random.SeedSequence or None, default 0
    first_rep : int
        Index of the first replication (as in :func:`sample_contaminated_moe`).

    Returns
    -------
    ContaminatedMoEParams

    Notes
    -----
    With iid :math:`u \sim \mathrm{U}(-1, 1)` per coordinate (from a stream
    disjoint from the data's):

    .. math::

        \beta^{(0)} = \beta^* + \epsilon u_\beta, \quad \tau^{(0)} = \tau^* + \epsilon u_\tau, \quad
        \eta^{(0)} = \eta^* + \epsilon u_\eta, \quad \nu^{(0)} = \nu^* e^{\epsilon u_\nu}.

    *Reconstructed*: the paper says only that EM starts near the true
    parameters; the uniform additive perturbation (multiplicative for the
    variance, so that it stays positive) is the choice made here.

    Examples
    --------
    >>> t = ContaminatedMoEParams.tile([0.5], 1.0, [-1.0], 1e-3, n_reps=2)
    >>> p = perturbed_truth(t, scale=0.1, seed=3)
    >>> bool(np.all(np.abs(p.beta - t.beta) <= 0.1)), bool(np.all(p.nu > 0))
    (True, True)
    """
    if not isinstance(truth, ContaminatedMoEParams):
        raise TypeError(f"truth must be a ContaminatedMoEParams, got {type(truth).__name__}")
    scale = check_float(scale, "scale", minimum=0.0)
    first_rep = check_int(first_rep, "first_rep", minimum=0)
    R, D = np.shape(truth.beta)
    truth = _check_params(truth, R, D, np, name="truth")
    u = 2.0 * _uniforms(seed_to_uint64(seed), first_rep, R, 1, 2 * D + 2, salt=LEARNER_STREAM)[:, 0, :] - 1.0
    return ContaminatedMoEParams(truth.beta + scale * u[:, :D], truth.tau + scale * u[:, D],
                                 truth.eta + scale * u[:, D + 1:2 * D + 1], truth.nu * np.exp(scale * u[:, -1]))


# ---------------------------------------------------------------------------
# EM

#: Initialisations of :func:`fit_contaminated_moe` (or pass a :class:`ContaminatedMoEParams`).
INITS = ("random", "perturbed_truth")
#: Engines of :func:`fit_contaminated_moe`.
ENGINES = ("auto", "compiled", "array")


def _m_step(X, Xt, y, r, p, link, gate_steps, prompt_steps, min_nu, xp):
    theta = xp.concat([p.beta, p.tau[:, None]], axis=1)
    for _ in range(gate_steps):
        theta = _gate_step(Xt, r, theta, xp)
    eta = p.eta
    for _ in range(prompt_steps):
        eta = _prompt_step(X, y, r, eta, link, xp)
    res2 = (y - link_value(_lin(X, eta, xp), link)) ** 2
    nu = xp.sum(r * res2, axis=1) / xp.maximum(xp.sum(r, axis=1), 1e-300)
    return ContaminatedMoEParams(theta[:, :-1], theta[:, -1], eta, xp.maximum(nu, min_nu))


def _random_init(X, y, seed_u, xp):
    R, _, D = X.shape
    u = xp.asarray(_uniforms(seed_u, 0, R, 1, D, salt=LEARNER_STREAM)[:, 0, :])
    eta = (2.0 * u - 1.0) / np.sqrt(D)
    nu = xp.maximum(xp.var(y, axis=1), 1e-12)
    return ContaminatedMoEParams(xp.zeros((R, D)), xp.zeros(R), eta, nu)


def _em_array(X, y, lf0, p, link, max_iter, tol, gate_steps, prompt_steps, min_nu, xp):
    """The EM in the array namespace ``xp``: every active replication advances one step per iteration."""
    R, n, _ = X.shape
    Xt = xp.concat([X, xp.ones((R, n, 1), dtype=X.dtype)], axis=-1)

    def step(data, params):
        X_a, Xt_a, y_a, lf0_a = data
        j0, j1 = _joint(X_a, y_a, lf0_a, params, link, xp)
        norm = xp.logaddexp(j0, j1)
        new = _m_step(X_a, Xt_a, y_a, xp.exp(j1 - norm), params, link, gate_steps, prompt_steps, min_nu, xp)
        return xp.mean(norm, axis=1), new

    return run_em(step, p, (X, Xt, y, lf0), max_iter=max_iter, tol=tol, xp=xp)


def _em_fused(X, y, lf0, p, link, max_iter, tol, gate_steps, prompt_steps, min_nu):
    """The EM of every replication in one compiled kernel (NumPy inputs), step for step as :func:`_em_array`."""
    from ._contaminated_kernel import LINK_CODES, fit_batch

    R, _, D = X.shape
    theta = np.ascontiguousarray(np.concatenate([p.beta, p.tau[:, None]], axis=1), dtype=np.float64)
    eta = np.array(p.eta, dtype=np.float64, order="C")
    nu = np.array(p.nu, dtype=np.float64)
    path = np.full((R, max_iter), np.nan)
    n_iter = np.zeros(R, dtype=np.int64)
    converged = np.zeros(R, dtype=bool)
    fit_batch(np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y, dtype=np.float64),
              np.ascontiguousarray(lf0, dtype=np.float64), theta, eta, nu, LINK_CODES[link], max_iter, tol,
              gate_steps, prompt_steps, min_nu, path, n_iter, converged)
    steps = int(n_iter.max())
    return ContaminatedMoEParams(theta[:, :D], theta[:, D], eta, nu), path[:, :steps], n_iter, converged


def fit_contaminated_moe(X, y, expert, *, link="tanh", init="random", truth=None, init_scale=0.1, max_iter=200,
                         tol=1e-8, gate_steps=1, prompt_steps=1, min_nu=1e-12, seed=0, batched=False,
                         engine="auto") -> EMResult:
    r"""Maximum-likelihood fit of the softmax-contaminated MoE by EM, optionally batched.

    Parameters
    ----------
    X : array, shape (n_samples, n_features), or (n_reps, n_samples, n_features) with ``batched=True``
    y : array, shape (n_samples,), or (n_reps, n_samples)
    expert : FrozenExpert
        The known expert :math:`f_0` (never updated).
    link : {"tanh", "sigmoid", "gelu", "linear"}
        Link of the prompt's location.
    init : {"random", "perturbed_truth"} or ContaminatedMoEParams
        ``"random"``: :math:`\beta = 0`, :math:`\tau = 0`, :math:`\eta` uniform on
        :math:`[-d^{-1/2}, d^{-1/2}]^d`, :math:`\nu` the variance of ``y``.
        ``"perturbed_truth"``: :func:`perturbed_truth` of ``truth`` with
        ``init_scale`` (the warm start of the source paper's simulations).
        Explicit parameters (batched when ``batched=True``) start EM there.
    truth : ContaminatedMoEParams, optional
        Needed for ``init="perturbed_truth"`` only.
    init_scale : float
    max_iter : int
    tol : float
        Stop a replication when its average log-likelihood changes by less than ``tol``.
    gate_steps, prompt_steps : int
        Newton steps on the gate and Gauss–Newton steps on the prompt per M-step.
    min_nu : float
        Positive floor of the prompt variance.
    seed : int, numpy.random.SeedSequence or None, default 0
        Seed of the initialisation; replication ``r`` uses stream ``r``.
    batched : bool
    engine : {"auto", "compiled", "array"}
        ``"compiled"``: every replication's EM in one compiled kernel
        (replications in parallel; NumPy inputs only).  ``"array"``: the EM
        in the array namespace of the inputs, all active replications one
        step at a time (the path CuPy arrays take).  ``"auto"``: compiled for
        NumPy inputs, else array.  Both run the same steps; their iterates
        agree to rounding.

    Returns
    -------
    EMResult
        ``params`` is a :class:`ContaminatedMoEParams`; without ``batched`` the
        leading axis is dropped from every field.

    Notes
    -----
    E-step, in log space, with :math:`a_i = \beta^\top x_i + \tau`:

    .. math::

        r_i = \frac{g(x_i)\,\mathcal N(y_i; h(x_i, \eta), \nu)}
                   {(1 - g(x_i)) f_0(y_i \mid h_0(x_i, \eta_0), \nu_0) + g(x_i)\,\mathcal N(y_i; h(x_i, \eta), \nu)}.

    M-step (generalised EM): ``gate_steps`` Newton steps on
    :math:`\sum_i r_i a_i - \log(1 + e^{a_i})` in :math:`(\beta, \tau)` (IRLS
    with soft labels), ``prompt_steps`` Gauss–Newton steps on
    :math:`\sum_i r_i (y_i - h(x_i, \eta))^2` in :math:`\eta`, then the exact
    :math:`\nu = \sum_i r_i (y_i - h(x_i, \eta))^2 / \sum_i r_i`.  Each step is
    halved until its objective does not fall, so the likelihood never
    decreases (``proofs_check/mixtures/check_contaminated_em_monotone.py``).
    *Simplified*: the source paper maximises the M-step numerically without
    naming a method; the damped (Gauss–)Newton steps are the choice made here.

    [validated-rates]

    References
    ----------
    .. [1] F. Yan, H. Nguyen, D. Le, P. Akbarian, N. Ho, A. Rinaldo, "On minimax
       estimation of parameters in softmax-contaminated mixture of experts",
       NeurIPS 2025 (arXiv 2505.18455), Eq. (1); the rate theorems of Sec. 3
       for the distinguishable and non-distinguishable cases (their numbers are
       not confirmed here), and the simulation protocol of Sec. 4.
    .. [2] A. P. Dempster, N. M. Laird, D. B. Rubin, JRSS B 39(1), 1977 (generalised EM).

    Examples
    --------
    >>> import numpy as np
    >>> e = FrozenExpert(np.array([1.0, 0.0]), 1e-3, "laplace")
    >>> truth = ContaminatedMoEParams.tile([0.7, 0.7], 1.0, [-1.0, 0.0], 1e-3, n_reps=1)
    >>> X, y, _ = sample_contaminated_moe(2000, truth, e, seed=0)
    >>> res = fit_contaminated_moe(X[0], y[0], e, init="perturbed_truth", truth=truth.select(0), seed=0)
    >>> bool(res.converged), np.round(res.params.eta, 1).tolist()
    (True, [-1.0, 0.0])
    """
    check_in(link, "link", LINKS)
    check_in(engine, "engine", ENGINES)
    if not isinstance(batched, (bool, np.bool_)):
        raise TypeError(f"batched must be a bool, got {type(batched).__name__}")
    if not batched:
        X, y = (a if hasattr(a, "shape") else np.asarray(a) for a in (X, y))
        if X.ndim != 2:
            raise ValueError(f"X must have shape (n_samples, n_features), got {tuple(X.shape)}"
                             " (pass batched=True for (n_reps, n_samples, n_features))")
        X, y = X[None], y[None]
    xp, X, y = _check_xy(X, y)
    if engine == "compiled" and not isinstance(X, np.ndarray):
        raise ValueError(f"engine='compiled' needs NumPy arrays, got X of type {type(X).__name__} "
                         "(engine='array' runs in any array namespace)")
    R, n, D = X.shape
    expert = _check_expert(expert, D)
    max_iter = check_int(max_iter, "max_iter")
    gate_steps = check_int(gate_steps, "gate_steps")
    prompt_steps = check_int(prompt_steps, "prompt_steps")
    tol = check_float(tol, "tol", minimum=0.0)
    min_nu = check_float(min_nu, "min_nu", positive=True)
    lift = (lambda p: p) if batched else (lambda p: ContaminatedMoEParams(   # noqa: E731
        *(xp.asarray(a, dtype=xp.float64)[None] for a in (p.beta, p.tau, p.eta, p.nu))))
    if isinstance(init, ContaminatedMoEParams):
        p = _check_params(lift(init), R, D, xp, name="init")
    elif init == "perturbed_truth":
        if not isinstance(truth, ContaminatedMoEParams):
            raise ValueError("init='perturbed_truth' needs truth, a ContaminatedMoEParams")
        p = perturbed_truth(_check_params(lift(truth), R, D, xp, name="truth"), scale=init_scale, seed=seed)
        p = _check_params(p, R, D, xp, name="init")
    elif isinstance(init, str):
        check_in(init, "init", INITS)
        p = _random_init(X, y, seed_to_uint64(seed), xp)
    else:
        raise TypeError(f"init must be one of {INITS} or a ContaminatedMoEParams, got {type(init).__name__}")

    lf0 = log_density(y, link_value(X @ xp.asarray(expert.eta0), expert.link), expert.nu0, expert.density,
                      expert.df)
    if engine == "compiled" or (engine == "auto" and isinstance(X, np.ndarray)):
        params, path, n_iter, converged = _em_fused(X, y, lf0, p, link, max_iter, tol, gate_steps, prompt_steps,
                                                    min_nu)
    else:
        params, path, n_iter, converged = _em_array(X, y, lf0, p, link, max_iter, tol, gate_steps, prompt_steps,
                                                    min_nu, xp)
    n_bad = int(R - int(xp.sum(xp.astype(converged, xp.int64))))
    message = (f"converged in {int(xp.max(n_iter))} iterations or fewer" if n_bad == 0 else
               f"{n_bad} of {R} replications did not converge in max_iter={max_iter} iterations")
    if batched:
        return EMResult(params, path, n_iter, converged, message)
    return EMResult(params.select(0), path[0], int(n_iter[0]), bool(converged[0]), message)
