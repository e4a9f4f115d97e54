"""Squint (Koolen & van Erven 2015) with the uniform prior on the learning rate.

Besides the learner, this module holds three small helpers shared by the
prior-weighted aggregators of this family (Squint, ML-Prod, BOA,
AdaNormalHedge): checking a ``prior`` argument, laying it out as a
``(n_reps, n_experts)`` array of log-weights, and a softmax that falls back to
the prior when every awake logit is ``-inf``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._backend import get_namespace
from .._special import erfcx
from ..sim._protocol import Learner
from ._common import _check_prior, _log_prior, _prior_softmax, check_init, check_round, instant_regret

__all__ = ["squint", "SquintState", "log_squint_evidence"]


# --------------------------------------------------------------------------
# the Squint evidence  I(R, V) = int_0^{1/2} eta exp(eta R - eta^2 V) d eta

#: Gauss-Legendre rule on [0, 1] used where the integrand varies by at most
#: ``exp(_GL_RANGE)``; 10 nodes integrate such pieces to ~1e-17 relative.
_GL_X, _GL_W = np.polynomial.legendre.leggauss(10)
_GL_X = 0.5 * (_GL_X + 1.0)
_GL_W = 0.5 * _GL_W
_GL_RANGE = 4.0
#: Above this value of u = alpha / (2 sqrt(b)) the half-line moments use the
#: asymptotic series of the Mills ratio instead of ``erfcx``.
_U_SERIES = 10.0
_N_SERIES = 14


def _mills_tail(z, xp):
    """``g(u) = 2 u^2 (1 - sqrt(pi) u erfcx(u))`` as a series in ``z = 1/(2u^2)`` (u >= 10)."""
    # g = sum_{k>=1} (-1)^{k+1} (2k-1)!! z^{k-1}; Horner from the highest term.
    coefs = []
    dfact = 1.0
    for k in range(1, _N_SERIES + 1):
        dfact *= 2 * k - 1
        coefs.append((-1.0) ** (k + 1) * dfact)
    acc = xp.zeros_like(z)
    for c in reversed(coefs):
        acc = acc * z + c
    return acc


def _half_line(alpha, b, xp):
    """``(F0, F1)``: ``int_0^inf x^k exp(-alpha x - b x^2) dx`` for k = 0, 1 (alpha, b >= 0, not both 0)."""
    pos_b = b > 0
    sb = xp.sqrt(xp.where(pos_b, b, 1.0))
    u = xp.where(pos_b, alpha / (2.0 * sb), xp.inf)
    small = u <= _U_SERIES
    # b-scaled form (u <= 10, so b > 0)
    u_s = xp.where(small, u, 0.0)
    ex = erfcx(u_s)
    f0_b = (math.sqrt(math.pi) / 2.0) * ex / sb
    f1_b = (1.0 - math.sqrt(math.pi) * u_s * ex) / (2.0 * xp.where(pos_b, b, 1.0))
    # alpha-scaled form (u > 10, so alpha > 0); z = 1/(2u^2) = 2b/alpha^2
    a_s = xp.where(small, 1.0, alpha)
    z = xp.where(small, 0.0, 2.0 * b / (a_s * a_s))
    g = _mills_tail(z, xp)
    f0_a = (1.0 - z * g) / a_s
    f1_a = g / (a_s * a_s)
    return xp.where(small, f0_b, f0_a), xp.where(small, f1_b, f1_a)


def _moments(alpha, b, length, xp):
    """``(P0, P1)``: ``int_0^L x^k exp(-alpha x - b x^2) dx`` for k = 0, 1 with alpha, b, L >= 0."""
    # Inputs are 1-D; each branch is evaluated only on the entries that use it.
    rho = alpha * length + b * length * length
    quad = rho <= _GL_RANGE
    p0 = xp.zeros_like(rho)
    p1 = xp.zeros_like(rho)
    if bool(xp.any(quad)):  # Gauss-Legendre on [0, L]
        xs = xp.asarray(_GL_X)
        ws = xp.asarray(_GL_W)
        a_q, b_q, l_q = alpha[quad], b[quad], length[quad]
        tau_l = l_q[:, None] * xs
        e = ws * xp.exp(-(a_q[:, None] * tau_l + b_q[:, None] * tau_l * tau_l))
        p0[quad] = l_q * xp.sum(e, axis=-1)
        p1[quad] = l_q * l_q * xp.sum(e * xs, axis=-1)
    far = ~quad
    if bool(xp.any(far)):  # closed form: half line minus the tail beyond L
        a_c, b_c, l_c = alpha[far], b[far], length[far]
        f0, f1 = _half_line(a_c, b_c, xp)
        g0, g1 = _half_line(a_c + 2.0 * b_c * l_c, b_c, xp)
        damp = xp.exp(-rho[far])
        p0[far] = f0 - damp * g0
        p1[far] = f1 - damp * (l_c * g0 + g1)
    return p0, p1


def log_squint_evidence(regret, variance):
    r"""``log`` of :math:`\int_0^{1/2} \eta\, e^{\eta R - \eta^2 V}\, d\eta`, elementwise.

    Parameters
    ----------
    regret : array
        Cumulative regrets :math:`R` (any real values).
    variance : array, same shape
        Cumulative squared regrets :math:`V \ge 0`.

    Returns
    -------
    array
        The log-evidence, finite for all finite inputs.

    Notes
    -----
    With :math:`s = 2\eta` the integral is :math:`\tfrac14 \int_0^1 s\,
    e^{g(s)} ds` with the concave quadratic :math:`g(s) = (R/2) s - (V/4) s^2`.
    The interval is split at the maximiser :math:`s^*` of :math:`g`; on each
    side the integrand is :math:`e^{g(s^*)}` times a monotone piece
    :math:`(s^* \mp x) e^{-\alpha x - b x^2}` with :math:`\alpha, b \ge 0`,
    whose moments are computed by a 10-point Gauss-Legendre rule when the
    exponent varies by at most 4 over the piece, and otherwise from the
    half-line moments (``erfcx``, or its asymptotic series for large
    :math:`\alpha/\sqrt b`) minus the tail.  No step subtracts nearly equal
    numbers, so the relative error stays near machine precision for
    :math:`|R|, V` from 0 to beyond :math:`10^6`.

    Examples
    --------
    >>> import numpy as np
    >>> round(float(np.exp(log_squint_evidence(np.array(0.0), np.array(0.0)))), 12)  # int_0^{1/2} eta d eta
    0.125
    """
    xp = get_namespace(regret, variance)
    regret = xp.asarray(regret, dtype=xp.float64)
    variance = xp.asarray(variance, dtype=xp.float64)
    regret, variance = xp.broadcast_arrays(regret, variance)
    shape = regret.shape
    with np.errstate(all="ignore"):  # discarded xp.where branches may overflow
        a = 0.5 * xp.reshape(regret, (-1,))
        b = 0.25 * xp.reshape(variance, (-1,))
        pos_b = b > 0
        s_int = xp.clip(a / (2.0 * xp.where(pos_b, b, 1.0)), 0.0, 1.0)
        s_star = xp.where(pos_b, s_int, xp.astype(a > 0, xp.float64))
        g_star = a * s_star - b * s_star * s_star
        slope = a - 2.0 * b * s_star  # g'(s*): >= 0 when s* = 1, <= 0 when s* = 0, 0 inside
        alpha_left = xp.maximum(slope, 0.0)
        alpha_right = xp.maximum(-slope, 0.0)
        l0, l1 = _moments(alpha_left, b, s_star, xp)
        r0, r1 = _moments(alpha_right, b, 1.0 - s_star, xp)
        total = (s_star * l0 - l1) + (s_star * r0 + r1)
        return xp.reshape(math.log(0.25) + g_star + xp.log(total), shape)


# --------------------------------------------------------------------------
# the learner


class SquintState(NamedTuple):
    """State of :func:`squint` (leading axis: replications).

    Attributes
    ----------
    t : array of int, shape (n_reps,)
        Rounds seen.
    regret : array, shape (n_reps, n_experts)
        Sleeping regret :math:`R_i` (``L_hat - L_i`` when every expert is awake).
    variance : array, shape (n_reps, n_experts)
        :math:`V_i = \\sum r_i^2` over the rounds where expert ``i`` was awake.
    log_prior : array, shape (n_reps, n_experts)
        ``log(prior)``, constant.
    """

    t: object
    regret: object
    variance: object
    log_prior: object


def squint(prior=None) -> Learner:
    r"""Squint: second-order quantile aggregation with a prior on the learning rate.

    Parameters
    ----------
    prior : array_like of shape (n_experts,), optional
        Prior weights :math:`\pi` on the experts (finite, non-negative, summing
        to 1).  Default: uniform.  Its length is checked against ``n_experts``
        in ``init``.

    Returns
    -------
    Learner
        A full-information learner (array code over NumPy/CuPy; no compiled
        kernel).  ``init(n_reps, n_experts, xp)`` returns a
        :class:`SquintState`; ``act(state, key, awake)`` returns
        ``p`` of shape ``(n_reps, n_experts)``; ``update(state, p, loss,
        awake=None, *, check=True)`` returns the next state.

    Notes
    -----
    With :math:`r_{t,i} = \langle p_t, \ell_t\rangle - \ell_{t,i}`,
    :math:`R_{t,i} = \sum_{s \le t} r_{s,i}` and
    :math:`V_{t,i} = \sum_{s \le t} r_{s,i}^2`, Squint plays

    .. math::

        p_{t+1,i} \propto \pi_i\, \mathbb E_{\eta \sim \gamma}
        \bigl[\eta\, e^{\eta R_{t,i} - \eta^2 V_{t,i}}\bigr],
        \qquad \gamma = \mathrm{Uniform}[0, 1/2],

    i.e. :math:`p_{t+1,i} \propto \pi_i \int_0^{1/2} \eta\, e^{\eta R - \eta^2 V} d\eta`.
    This is the paper's uniform prior on :math:`[0, 1/2]`, for which the
    integral has a closed form in the error function; it is *not* the improper
    prior :math:`\gamma(\eta) \propto 1/\eta` of the paper's other closed form.
    The closed form is evaluated here in log space by the cancellation-free
    route of ``log_squint_evidence`` rather than by the paper's
    difference of ``erf`` terms, so weights stay exact to rounding for regrets
    up to :math:`10^6` and beyond.

    The paper's potential lemma gives, for every expert :math:`k` and every
    :math:`T`, :math:`\sum_i \pi_i\, 2\!\int_0^{1/2} e^{\eta R_{T,i} - \eta^2
    V_{T,i}} d\eta \le 1`, whence
    :math:`R_{T,k} = O\bigl(\sqrt{V_{T,k}\,(\ln(1/\pi_k) + \ln V_{T,k})}
    + \ln(1/\pi_k) + \ln V_{T,k}\bigr)` for the uniform prior (its mass
    near the best rate :math:`R/(2V)` is of order :math:`V^{-1/2}`, hence
    :math:`\ln V` rather than the :math:`\ln\ln` of the paper's other
    priors).  It is a second-order bound that also holds for quantiles:
    replace :math:`\pi_k` by the prior mass :math:`\pi(K)` of a set
    :math:`K` of good experts and :math:`R, V` by their :math:`\pi`-averages
    over :math:`K`.  With an ``awake`` mask the instantaneous regret of an asleep
    expert is 0, so its :math:`R_i, V_i` are frozen and it gets no probability
    (the specialists reduction); the lemma then bounds each expert's regret
    on its own awake rounds.  Rows whose awake experts all have prior 0 fall
    back to the uniform distribution on the awake experts.

    [validated-rates]

    References
    ----------
    .. [1] W. M. Koolen and T. van Erven, "Second-order quantile methods for
       experts and combinatorial games", COLT 2015 (arXiv:1502.08009),
       Lemma 1 (the potential never increases) and the regret bound for the
       uniform prior on :math:`\eta \in [0, 1/2]` in Section 3 (Theorem 3 of
       the arXiv version; the theorem number was not re-checked against the
       paper's text for this implementation).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import instances
    >>> from expertlab.experts import squint
    >>> learner = squint(prior=[0.5, 0.25, 0.25])
    >>> state = learner.init(3, n_reps=2)
    >>> print(learner.act(state)[0][0])
    [0.5  0.25 0.25]
    >>> inst = instances.fair_coins(4)  # every learner's expected regret is known exactly
    >>> res = sim.run(squint(), inst, horizon=100, n_reps=400, seed=1)
    >>> bool(abs(res.mean()[-1] - inst.exact_expected_regret(100)) < 3 * res.stderr()[-1])
    True
    """
    prior = _check_prior(prior)
    params = {} if prior is None else {"prior": prior.tolist()}

    def init(spec, n_reps, keys=None, xp=np):
        n_reps, n_experts = check_init(n_reps, spec)
        z = xp.zeros((n_reps, n_experts))
        return SquintState(t=xp.zeros(n_reps, dtype=xp.int64), regret=z, variance=xp.zeros_like(z),
                           log_prior=_log_prior(prior, n_reps, n_experts, xp))

    def act(state, awake=None, key=None):
        logits = state.log_prior + log_squint_evidence(state.regret, state.variance)
        return _prior_softmax(logits, state.log_prior, awake), state

    def update(state, p, feedback, key=None):
        loss, awake = feedback
        check_round(state.regret, p, loss, awake)
        r, _ = instant_regret(p, loss, awake)
        return SquintState(t=state.t + 1, regret=state.regret + r, variance=state.variance + r * r,
                           log_prior=state.log_prior)

    return Learner(name="squint", feedback="full", init=init, act=act, update=update, params=params,
                   kernel=None)
