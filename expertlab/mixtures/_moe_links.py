r"""Link functions and frozen-expert densities of the softmax-contaminated mixture of experts.

An expert's location is a link of a linear score, :math:`h(x, \eta) = \phi(\eta^\top x)`.
Each link in :data:`LINKS` comes with its derivative (the Gauss–Newton
steps of the prompt need :math:`\phi'`).  The frozen expert :math:`f_0` is a
location–scale density in :data:`DENSITIES`; its scale parameter
:math:`\nu_0` is the *squared* scale:

.. math::

    \text{gaussian: } \mathcal N(y; m, \nu_0), \qquad
    \text{laplace: } \frac{1}{2\sqrt{\nu_0}} e^{-|y - m| / \sqrt{\nu_0}}, \qquad
    \text{student\_t: } \frac{1}{\sqrt{\nu_0}}\, t_{\mathrm{df}}\Big(\frac{y - m}{\sqrt{\nu_0}}\Big).

Reading :math:`\nu_0` as the squared scale (not the variance) of the Laplace
and Student t densities is a choice made here: the source paper uses
:math:`\nu_0 = 0.001` for both Gaussian and Laplace :math:`f_0` without
fixing the parametrisation.  All functions are array code over ``xp``.
Draws are inverse-CDF transforms of uniforms, so the data generator can use
the package's counter-based generator.

The module also holds the records :class:`FrozenExpert` and
:class:`ContaminatedMoEParams` of the contaminated MoE, and the
batched damped (Gauss–)Newton steps shared by the EM M-steps: a Newton step
on a soft-label logistic likelihood (the gate) and a Gauss–Newton step on a
weighted squared error (an expert's location), each halved until its
objective does not fall.
"""

from __future__ import annotations

import math

import dataclasses

import numpy as np

from .._backend import get_namespace
from .._random import rep_key, round_key, stream_key, uniform
from .._repr import short_repr
from .._special import erfc
from .._validation import as_real_array, check_float, check_in, check_int
from ._em import _as_array, _finite

__all__ = ["LINKS", "DENSITIES", "FrozenExpert", "ContaminatedMoEParams", "link_value", "link_derivative",
           "log_density", "density_quantile"]

#: Link functions :math:`\phi` understood by :func:`link_value`.
LINKS = ("tanh", "sigmoid", "gelu", "linear")
#: Frozen-expert densities understood by :func:`log_density`.
DENSITIES = ("laplace", "gaussian", "student_t")

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _special(xp):
    if "cupy" in getattr(xp, "__name__", ""):      # pragma: no cover - needs CuPy
        import cupyx.scipy.special as sp
    else:
        import scipy.special as sp
    return sp


def _normal_cdf(z):
    return 0.5 * erfc(-z / _SQRT2)


def _real(u, name):
    """``u`` as a float64 array of its own namespace (NumPy for numbers and lists), refusing non-real data."""
    if isinstance(u, np.ndarray) and u.dtype == np.float64:          # the fast path of the EM loops
        return u
    return as_real_array(u, name)


def link_value(u, link):
    r"""The link :math:`\phi(u)` applied elementwise.

    Parameters
    ----------
    u : array_like of real numbers
        Linear scores :math:`\eta^\top x` (NaN entries give NaN).
    link : {"tanh", "sigmoid", "gelu", "linear"}
        ``"gelu"`` is the exact :math:`u\,\Phi(u)` (:math:`\Phi` the standard normal CDF).

    Returns
    -------
    array, the shape of ``u``

    Raises
    ------
    TypeError
        If ``u`` does not hold real numbers (complex, strings, ragged lists).
    ValueError
        If ``link`` is not one of ``LINKS`` (``"tanh"``, ``"sigmoid"``, ``"gelu"``, ``"linear"``).

    Examples
    --------
    >>> import numpy as np
    >>> np.round(link_value(np.array([0.0, 1.0]), "gelu"), 4).tolist()
    [0.0, 0.8413]
    """
    check_in(link, "link", LINKS)
    u = _real(u, "u")
    xp = get_namespace(u)
    if link == "tanh":
        return xp.tanh(u)
    if link == "sigmoid":
        return 0.5 * (1.0 + xp.tanh(0.5 * u))
    if link == "gelu":
        return u * _normal_cdf(u)
    return u


def link_derivative(u, link):
    r"""The derivative :math:`\phi'(u)` of :func:`link_value`.

    Parameters and errors as in :func:`link_value`.

    Examples
    --------
    >>> import numpy as np
    >>> link_derivative(np.array([0.0]), "tanh").tolist(), link_derivative(np.array([0.0]), "sigmoid").tolist()
    ([1.0], [0.25])
    """
    check_in(link, "link", LINKS)
    u = _real(u, "u")
    xp = get_namespace(u)
    if link == "tanh":
        return 1.0 - xp.tanh(u) ** 2
    if link == "sigmoid":
        s = 0.5 * (1.0 + xp.tanh(0.5 * u))
        return s * (1.0 - s)
    if link == "gelu":
        return _normal_cdf(u) + u * xp.exp(-0.5 * u * u - _LOG_SQRT_2PI)
    return xp.ones_like(u)


def _check_df(density, df):
    if density == "student_t":
        return check_float(df, "df", positive=True)
    return df


def log_density(y, loc, nu, density, df=3.0):
    r"""Log-density :math:`\log f(y \mid m, \nu)` of a location–scale family.

    Parameters
    ----------
    y, loc : array_like of real numbers
        Responses and locations (broadcastable; NaN entries give NaN).
    nu : float or array
        Squared scale (the variance for ``"gaussian"``), positive and finite, broadcastable with ``y``.
    density : {"laplace", "gaussian", "student_t"}
    df : float
        Degrees of freedom of ``"student_t"`` (ignored otherwise).

    Returns
    -------
    array

    Raises
    ------
    TypeError
        If ``y``, ``loc`` or ``nu`` does not hold real numbers.
    ValueError
        If ``nu`` is not positive and finite, the shapes do not broadcast, ``density`` is unknown or
        ``df`` is not positive.

    Examples
    --------
    >>> import numpy as np
    >>> print(round(float(log_density(np.array(0.0), np.array(0.0), 1.0, "laplace")), 6))    # log(1/2)
    -0.693147
    """
    check_in(density, "density", DENSITIES)
    df = _check_df(density, df)
    y, loc = _real(y, "y"), _real(loc, "loc")
    xp = get_namespace(y)
    if isinstance(nu, (bool, np.bool_, float, int, np.floating, np.integer)):
        nu = check_float(nu, "nu", positive=True)
    else:
        nu = _real(nu, "nu")
        if not bool(xp.all(xp.isfinite(nu))) or not bool(xp.all(nu > 0)):
            raise ValueError("nu must be positive and finite (a squared scale)")
    try:
        np.broadcast_shapes(tuple(y.shape), tuple(loc.shape), tuple(np.shape(nu)))
    except ValueError:
        raise ValueError(f"y, loc and nu must broadcast together, got shapes {tuple(y.shape)}, "
                         f"{tuple(loc.shape)} and {tuple(np.shape(nu))}") from None
    z2 = (y - loc) ** 2 / nu
    if density == "gaussian":
        return -0.5 * z2 - _LOG_SQRT_2PI - 0.5 * xp.log(nu * xp.ones_like(z2))
    if density == "laplace":
        return -xp.sqrt(z2) - math.log(2.0) - 0.5 * xp.log(nu * xp.ones_like(z2))
    const = math.lgamma(0.5 * (df + 1.0)) - math.lgamma(0.5 * df) - 0.5 * math.log(df * math.pi)
    return const - 0.5 * xp.log(nu * xp.ones_like(z2)) - 0.5 * (df + 1.0) * xp.log1p(z2 / df)


def density_quantile(u, loc, nu, density, df=3.0):
    r"""Inverse CDF: the draw of :math:`f(\cdot \mid m, \nu)` at uniforms ``u`` in (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> density_quantile(np.array([0.5]), np.array([2.0]), 4.0, "student_t").tolist()
    [2.0]
    """
    check_in(density, "density", DENSITIES)
    df = _check_df(density, df)
    xp = get_namespace(u)
    sp = _special(xp)
    s = nu ** 0.5
    if density == "gaussian":
        z = sp.ndtri(u)
    elif density == "laplace":
        c = u - 0.5
        z = -xp.sign(c) * xp.log1p(-2.0 * xp.abs(c))
    else:
        z = sp.stdtrit(df, u)
    return loc + s * z


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class FrozenExpert:
    """The known expert :math:`f_0(y \\mid h_0(x, \\eta_0), \\nu_0)` of a contaminated MoE.

    Attributes
    ----------
    eta0 : array, shape (n_features,)
    nu0 : float
        Squared scale (the variance for ``"gaussian"``), positive.
    density : {"laplace", "gaussian", "student_t"}
    link : {"tanh", "sigmoid", "gelu", "linear"}
    df : float
        Degrees of freedom of ``"student_t"``.
    """

    eta0: object
    nu0: float
    density: str = "laplace"
    link: str = "tanh"
    df: float = 3.0

    def __post_init__(self):
        check_in(self.density, "density", DENSITIES)
        check_in(self.link, "link", LINKS)
        check_float(self.nu0, "nu0", positive=True)
        check_float(self.df, "df", positive=True)
        _, e = _as_array(self.eta0, "eta0")
        if e.ndim != 1 or e.shape[0] < 1:
            raise ValueError(f"eta0 must have shape (n_features,), got {tuple(e.shape)}")
        _finite(e, "eta0", get_namespace(e))
        object.__setattr__(self, "eta0", e)


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class ContaminatedMoEParams:
    """Trainable parameters of ``n_reps`` contaminated MoEs.

    Attributes
    ----------
    beta : array, shape (n_reps, n_features)
        Gate slope.
    tau : array, shape (n_reps,)
        Gate intercept.
    eta : array, shape (n_reps, n_features)
        Prompt location parameter.
    nu : array, shape (n_reps,)
        Prompt variance.
    """

    beta: object
    tau: object
    eta: object
    nu: object

    def select(self, index) -> "ContaminatedMoEParams":
        """The parameters of the replications ``index``."""
        return ContaminatedMoEParams(self.beta[index], self.tau[index], self.eta[index], self.nu[index])

    @classmethod
    def tile(cls, beta, tau, eta, nu, n_reps):
        """One parameter set (``beta``, ``eta`` of shape (n_features,), scalars ``tau``, ``nu``) repeated."""
        n_reps = check_int(n_reps, "n_reps")
        b, e = as_real_array(beta, "beta", np), as_real_array(eta, "eta", np)
        t, v = as_real_array(tau, "tau", np), as_real_array(nu, "nu", np)
        if t.ndim or v.ndim:
            raise ValueError(f"tau and nu must be scalars, got shapes {t.shape} and {v.shape}")
        return cls(np.tile(b, (n_reps, 1)), np.full(n_reps, float(t)), np.tile(e, (n_reps, 1)),
                   np.full(n_reps, float(v)))


def _check_params(params, n_reps, n_features, xp, name="params"):
    if not isinstance(params, ContaminatedMoEParams):
        raise TypeError(f"{name} must be a ContaminatedMoEParams, got {type(params).__name__}")
    out = []
    for field, shape in (("beta", (n_reps, n_features)), ("tau", (n_reps,)), ("eta", (n_reps, n_features)),
                         ("nu", (n_reps,))):
        _, a = _as_array(getattr(params, field), f"{name}.{field}", xp)
        if tuple(a.shape) != shape:
            raise ValueError(f"{name}.{field} must have shape {shape}, got {tuple(a.shape)}")
        _finite(a, f"{name}.{field}", xp)
        out.append(a)
    if bool(xp.any(out[3] <= 0)):
        raise ValueError(f"{name}.nu must be positive (a variance)")
    return ContaminatedMoEParams(*out)


def _check_xy(X, y):
    xp, X = _as_array(X, "X")
    if X.ndim != 3 or min(X.shape) < 1:
        raise ValueError(f"X must have shape (n_reps, n_samples, n_features), got {tuple(X.shape)}")
    _, y = _as_array(y, "y", xp)
    if tuple(y.shape) != tuple(X.shape[:2]):
        raise ValueError(f"y must have shape {tuple(X.shape[:2])}, got {tuple(y.shape)}")
    _finite(X, "X", xp)
    _finite(y, "y", xp)
    return xp, X, y


def _check_expert(expert, n_features):
    if not isinstance(expert, FrozenExpert):
        raise TypeError(f"expert must be a FrozenExpert, got {type(expert).__name__}")
    if expert.eta0.shape[0] != n_features:
        raise ValueError(f"expert.eta0 has {expert.eta0.shape[0]} features, the data have {n_features}")
    return expert


def _uniforms(seed_u, first_rep, n_reps, n_rows, n_cols, salt=None):
    """Uniforms ``(n_reps, n_rows, n_cols)``: row ``i`` of replication ``first_rep + r`` is round ``i`` of its stream"""
    with np.errstate(over="ignore"):
        k = rep_key(np.uint64(seed_u), np.arange(first_rep, first_rep + n_reps, dtype=np.uint64))
        if salt is not None:
            k = stream_key(k, salt)
        k = round_key(k[:, None], np.arange(n_rows, dtype=np.uint64)[None, :])
        return uniform(k[..., None], np.arange(n_cols, dtype=np.uint64)[None, None, :])


# ---------------------------------------------------------------------------
# batched damped Newton steps

def _lin(X, w, xp):
    """Batched scores ``X_r w_r``: (n_reps, n, k) and (n_reps, k) -> (n_reps, n)."""
    return (X @ w[:, :, None])[..., 0]


def _tmul(X, v, xp):
    """Batched ``X_r^T v_r``: (n_reps, n, k) and (n_reps, n) -> (n_reps, k)."""
    return (v[:, None, :] @ X)[:, 0, :]


def _solve(A, b, xp):
    """Batched ``A^{-1} b`` with a relative ridge; non-finite steps become zero."""
    k = A.shape[-1]
    ridge = 1e-10 * (1.0 + xp.mean(xp.abs(xp.linalg.diagonal(A)), axis=-1))
    step = xp.linalg.solve(A + ridge[:, None, None] * xp.eye(k, dtype=A.dtype), b[..., None])[..., 0]
    return xp.where(xp.isfinite(step), step, 0.0)


def _backtrack(theta, step, objective, xp, n_halving=30):
    """Largest ``t = 2^-j`` with ``objective(theta + t step) >= objective(theta)``, per replication (else stay)."""
    q0 = objective(theta)
    t = xp.ones(theta.shape[0], dtype=theta.dtype)
    new, done = theta, xp.zeros(theta.shape[0], dtype=xp.bool)
    for _ in range(n_halving):
        cand = theta + t[:, None] * step
        ok = (objective(cand) >= q0) & ~done
        new = xp.where(ok[:, None], cand, new)
        done = done | ok
        if bool(xp.all(done)):
            break
        t = xp.where(done, t, 0.5 * t)
    return new


def _gate_step(Xt, r, theta, xp):
    """One damped Newton step on the soft-label logistic likelihood ``sum_i r_i a_i - log(1 + e^{a_i})``."""
    def objective(th):
        a = _lin(Xt, th, xp)
        return xp.sum(r * a - xp.logaddexp(0.0, a), axis=1)

    a = _lin(Xt, theta, xp)
    g = xp.exp(-xp.logaddexp(0.0, -a))
    grad = _tmul(Xt, r - g, xp)
    H = xp.permute_dims(Xt * (g * (1.0 - g))[..., None], (0, 2, 1)) @ Xt
    return _backtrack(theta, _solve(H, grad, xp), objective, xp)


def _prompt_step(X, y, r, eta, link, xp):
    """One damped Gauss–Newton step on the weighted squared error ``sum_i r_i (y_i - phi(eta^T x_i))^2``."""
    def objective(e):
        return -xp.sum(r * (y - link_value(_lin(X, e, xp), link)) ** 2, axis=1)

    u = _lin(X, eta, xp)
    J = X * link_derivative(u, link)[..., None]
    A = xp.permute_dims(J * r[..., None], (0, 2, 1)) @ J
    b = _tmul(J, r * (y - link_value(u, link)), xp)
    return _backtrack(eta, _solve(A, b, xp), objective, xp)
