"""Follow the leader (FTL) and follow the perturbed leader (FTPL)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba.extending import register_jitable

from .._backend import get_namespace
from .._random import uniform
from .._validation import check_in
from ..sim._protocol import KernelSpec, Learner
from ._common import check_init, check_round, instant_regret
from ._hedge import _eta_at, _is_epoch_start, eta_vector, parse_schedule

__all__ = ["ftl", "FTLState", "ftpl", "FTPLState"]

#: Relative tolerance of the tie test: after ``t`` rounds two experts are tied
#: when their sleeping regrets differ by at most ``_TIE_RTOL * (1 + t)``.
_TIE_RTOL = 1e-9

_NOISES = ("gumbel", "exponential", "laplace")
_NOISE_CODE = {"gumbel": 0.0, "exponential": 1.0, "laplace": 2.0}
_MODE = {"fixed": 0.0, "anytime": 1.0, "doubling": 2.0, "tuned": 0.0}


# -- leaders (shared with AdaHedge's eta = infinity rounds) -------------------


def leader_mask(regret, awake, t):
    """Boolean ``(n_reps, n_experts)`` mask of the awake experts tied for the largest regret.

    ``t`` is the ``(n_reps,)`` number of rounds seen; the tolerance is
    ``_TIE_RTOL * (1 + t)``.
    """
    xp = get_namespace(regret)
    r = regret if awake is None else xp.where(awake, regret, -xp.inf)
    top = xp.max(r, axis=1, keepdims=True)
    tol = _TIE_RTOL * (1.0 + xp.astype(t, regret.dtype))[:, None]
    return r >= top - tol


def leader_weights(regret, awake, t):
    """Uniform distribution over :func:`leader_mask`."""
    xp = get_namespace(regret)
    w = xp.astype(leader_mask(regret, awake, t), regret.dtype)
    return w / xp.sum(w, axis=1, keepdims=True)


@register_jitable
def _k_leaders(S, t, awake, p):
    """Scalar version of :func:`leader_weights` on row 0 of ``S``; returns the number of leaders."""
    n = S.shape[1]
    top = -np.inf
    for i in range(n):
        if awake[i] and S[0, i] > top:
            top = S[0, i]
    thr = top - _TIE_RTOL * (1.0 + t)
    k = 0
    for i in range(n):
        if awake[i] and S[0, i] >= thr:
            p[i] = 1.0
            k += 1
        else:
            p[i] = 0.0
    inv = 1.0 / k
    for i in range(n):
        p[i] *= inv
    return k


@register_jitable
def _k_add_regret(S, loss, awake, p):
    """``S[0, i] += <p, l> - l_i`` on awake experts."""
    n = S.shape[1]
    mix = 0.0
    for i in range(n):
        mix += p[i] * loss[i]
    for i in range(n):
        if awake[i]:
            S[0, i] += mix - loss[i]


# -- FTL ------------------------------------------------------------------------


class FTLState(NamedTuple):
    """State of :func:`ftl` (leading axis: replications).

    Attributes
    ----------
    t : array of int, shape (n_reps,)
        Rounds seen.
    regret : array, shape (n_reps, n_experts)
        Sleeping regret ``R_i`` (``L_hat - L_i`` when all experts are awake).
    """

    t: object
    regret: object


@register_jitable
def _ftl_k_init(prm, S, s):
    pass


@register_jitable
def _ftl_k_act(prm, S, s, t, key, awake, p):
    _k_leaders(S, t, awake, p)


@register_jitable
def _ftl_k_update(prm, S, s, t, loss, awake, p):
    _k_add_regret(S, loss, awake, p)


def ftl() -> Learner:
    r"""Follow the leader: play the experts with the smallest cumulative loss.

    Returns
    -------
    Learner
        A deterministic full-information learner with a fused Numba/CUDA
        kernel.  ``act`` returns an array of shape ``(n_reps, n_experts)``.

    Notes
    -----
    With :math:`\mathcal L_t = \arg\max_{i \text{ awake}} R_{t-1,i}` the set of
    leaders (all experts awake: :math:`\arg\min_i L_{t-1,i}`),

    .. math::

        p_{t,i} = \frac{\mathbb 1[i \in \mathcal L_t]}{|\mathcal L_t|}.

    Ties are split evenly.  A tie is detected with a tolerance: after
    :math:`t` rounds, expert :math:`i` is a leader when
    :math:`R_{t,i} \ge \max_j R_{t,j} - 10^{-9}(1 + t)`, i.e. a relative
    tolerance of :math:`10^{-9}` on the scale :math:`t` of the largest
    possible cumulative loss.  Without it, rounding in the accumulated
    :math:`R_i` would break exact ties between equal cumulative losses
    (for example :math:`0.1 + 0.2` against :math:`0.3`) at random and
    differently on different backends.  With an ``awake`` mask the leaders
    are the awake experts of largest *sleeping* regret (the sleeping-experts convention of
    :mod:`expertlab.experts`); asleep experts get no probability and
    their :math:`R_i` is frozen.

    FTL has regret :math:`O(1)` on stochastic losses with a unique best
    expert, but :math:`\Omega(T)` in the worst case (two experts with losses
    :math:`(\tfrac12, 0), (0, 1), (1, 0), (0, 1), \dots`), see [1]_, Section 1
    and [2]_, Section 2.1.  This is the :math:`\eta = \infty` member of the
    Hedge family that AdaHedge starts from.

    [validated-rates]

    References
    ----------
    .. [1] S. de Rooij, T. van Erven, P. D. Grünwald and W. M. Koolen,
       "Follow the leader if you can, hedge if you must", JMLR 15, 2014,
       Section 1 (FTL and its worst case).
    .. [2] N. Cesa-Bianchi and G. Lugosi, *Prediction, Learning, and Games*,
       Cambridge University Press, 2006, Section 3.2 (follow the best expert).

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.experts import ftl
    >>> learner = ftl()
    >>> state = learner.init(3, n_reps=1)
    >>> p, state = learner.act(state)
    >>> state = learner.update(state, p, (np.array([[0.5, 0.0, 0.0]]), None))
    >>> learner.act(state)[0]
    array([[0. , 0.5, 0.5]])
    """

    def init(spec, n_reps, keys=None, xp=np):
        n_reps, n_experts = check_init(n_reps, spec)
        return FTLState(t=xp.zeros(n_reps, dtype=xp.int64), regret=xp.zeros((n_reps, n_experts)))

    def act(state, awake=None, key=None):
        return leader_weights(state.regret, awake, state.t), state

    def update(state, p, feedback, key=None):
        loss, awake = feedback
        check_round(state.regret, p, loss, awake)
        r, _ = instant_regret(p, loss, awake)
        return FTLState(t=state.t + 1, regret=state.regret + r)

    kernel = KernelSpec(n_rows=1, n_scalars=1, params=np.zeros(1), init=_ftl_k_init, act=_ftl_k_act,
                        update=_ftl_k_update)
    return Learner(name="ftl", feedback="full", init=init, act=act, update=update, params={}, kernel=kernel)


# -- FTPL -----------------------------------------------------------------------


class FTPLState(NamedTuple):
    """State of :func:`ftpl` (leading axis: replications).

    Attributes
    ----------
    t : array of int, shape (n_reps,)
        Rounds seen.
    regret : array, shape (n_reps, n_experts)
        Sleeping regret ``R_i`` of each expert (``L_hat - L_i`` when all awake),
        with ``L_hat`` the loss of the sampled experts.
    base : array, shape (n_reps, n_experts)
        ``R_i`` at the start of the current doubling epoch (zero otherwise).
    """

    t: object
    regret: object
    base: object


@register_jitable
def _noise(code, u):
    """Standard Gumbel (0), Exp(1) (1) or Laplace(0, 1) (2) by inverse CDF of ``u`` in (0, 1)."""
    if code == 0.0:
        return -math.log(-math.log(u))
    if code == 1.0:
        return -math.log1p(-u)
    if u < 0.5:
        return math.log(2.0 * u)
    return -math.log(2.0 * (1.0 - u))


def _noise_array(code, u):
    xp = get_namespace(u)
    if code == 0.0:
        return -xp.log(-xp.log(u))
    if code == 1.0:
        return -xp.log1p(-u)
    return xp.where(u < 0.5, xp.log(2.0 * u), -xp.log(2.0 * (1.0 - u)))


# prm = [mode, eta, horizon, noise]; S = [R, base]; s = [ln N, fixed eta]


@register_jitable
def _ftpl_k_init(prm, S, s):
    n = S.shape[1]
    s[0] = math.log(n) if n > 1 else 0.0
    if prm[2] > 0.0:
        s[1] = math.sqrt(8.0 * s[0] / prm[2])
    else:
        s[1] = prm[1]


@register_jitable
def _ftpl_k_act(prm, S, s, t, key, awake, p):
    eta = _eta_at(prm[0], s[1], s[0], t)
    n = S.shape[1]
    best = -np.inf
    arg = -1
    for i in range(n):
        p[i] = 0.0
        if awake[i]:
            v = eta * (S[0, i] - S[1, i]) + _noise(prm[3], uniform(key, np.uint64(i)))
            if arg < 0 or v > best:
                best = v
                arg = i
    p[arg] = 1.0


@register_jitable
def _ftpl_k_update(prm, S, s, t, loss, awake, p):
    n = S.shape[1]
    _k_add_regret(S, loss, awake, p)
    if prm[0] == 2.0:
        m = t + 2
        if (m & (m - 1)) == 0:
            for i in range(n):
                S[1, i] = S[0, i]


def ftpl(eta=None, *, noise="gumbel", schedule=None, horizon=None) -> Learner:
    r"""Follow the perturbed leader with a fresh perturbation every round.

    Parameters
    ----------
    eta : float, optional
        A fixed rate :math:`\eta > 0` (the inverse scale of the noise).
        Implies ``schedule="fixed"``.
    noise : {"gumbel", "exponential", "laplace"}
        Law of the iid perturbations :math:`Z_i`: standard Gumbel,
        exponential with mean 1, or Laplace with location 0 and scale 1.
    schedule : {"anytime", "fixed", "doubling"}, optional
        The rate schedule of :func:`expertlab.experts.hedge`: ``"anytime"``
        (default) :math:`\eta_t = \sqrt{8 \ln N / t}`; ``"fixed"`` with
        ``horizon``, :math:`\eta = \sqrt{8 \ln N / T}`; ``"doubling"``
        restarts on epochs of length :math:`1, 2, 4, \dots`.
    horizon : int, optional
        The horizon :math:`T` of the tuned fixed rate.

    Returns
    -------
    Learner
        A randomised full-information learner with a fused Numba/CUDA kernel.
        ``act(state, key, awake)`` needs the ``(n_reps,)`` ``uint64`` learner
        keys and returns a one-hot array of shape ``(n_reps, n_experts)``.

    Notes
    -----
    In round :math:`t` draw :math:`Z_{t,i}` iid and play the single expert

    .. math::

        I_t = \arg\min_{i \text{ awake}} \Bigl(L_{t-1,i} - \frac{Z_{t,i}}{\eta_t}\Bigr)
            = \arg\max_{i \text{ awake}} \bigl(\eta_t R_{t-1,i} + Z_{t,i}\bigr),

    ties broken towards the lowest index.  :math:`Z_{t,i}` is the inverse
    CDF of draw :math:`i` of the learner's key for the round
    (a counter-based uniform, never 0 or 1): Gumbel
    :math:`-\ln(-\ln u)`, exponential :math:`-\ln(1 - u)`, Laplace
    :math:`\ln 2u` for :math:`u < 1/2` and :math:`-\ln(2 - 2u)` otherwise.

    With Gumbel noise, by the Gumbel-max property
    :math:`P(I_t = i) = e^{\eta_t R_{t-1,i}} / \sum_j e^{\eta_t R_{t-1,j}}`:
    FTPL then samples exactly from Hedge's distribution with the same rate,
    so Hedge's bounds hold for its expected regret (Cesa-Bianchi & Lugosi
    2006, Theorems 2.2 and 2.3).  With exponential noise and a fixed
    :math:`\eta` this is the follow-the-perturbed-leading-expert algorithm
    of Kalai & Vempala [1]_ (their Section 1.1; :math:`\epsilon = \eta`),
    whose expected loss is at most :math:`(1 + \eta) L^*_T + O(\ln N / \eta)`;
    Laplace noise is the two-sided perturbation of their FPL*.  Departure:
    the rate schedules are Hedge's for every noise; they are tuned for the
    Gumbel case, not for the constants of [1]_.

    The regret recorded by :func:`expertlab.sim.run` uses the one-hot ``p``,
    i.e. the loss actually incurred, not its expectation.  With an ``awake``
    mask the argmax runs over awake experts and only their :math:`R_i` move.

    [validated-rates]

    References
    ----------
    .. [1] A. Kalai and S. Vempala, "Efficient algorithms for online decision
       problems", JCSS 71(3), 2005, Section 1.1 and Theorem 1.1 (FPL and FPL*
       bounds; numbering not re-checked against the published text).
    .. [2] J. Hannan, "Approximation to Bayes risk in repeated play",
       Contributions to the Theory of Games 3, 1957.
    .. [3] N. Cesa-Bianchi and G. Lugosi, *Prediction, Learning, and Games*,
       Cambridge University Press, 2006, Section 4.3 and Theorems 2.2, 2.3.

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.experts import ftpl
    >>> learner = ftpl(eta=1.0, noise="gumbel")
    >>> state = learner.init(3, n_reps=4)
    >>> p, state = learner.act(state, None, np.arange(4, dtype=np.uint64))
    >>> p.sum(axis=1), ((p == 0) | (p == 1)).all()
    (array([1., 1., 1., 1.]), np.True_)
    """
    check_in(noise, "noise", _NOISES)
    eta, schedule, horizon, mode_name = parse_schedule(eta, schedule, horizon)
    params = {"eta": eta, "noise": noise, "schedule": schedule, "horizon": horizon}
    params = {k: v for k, v in params.items() if v is not None}
    mode = _MODE[mode_name]
    code = _NOISE_CODE[noise]

    def init(spec, n_reps, keys=None, xp=np):
        n_reps, n_experts = check_init(n_reps, spec)
        z = xp.zeros((n_reps, n_experts))
        return FTPLState(t=xp.zeros(n_reps, dtype=xp.int64), regret=z, base=xp.zeros_like(z))

    def act(state, awake=None, key=None):
        if key is None:
            raise TypeError("ftpl is randomised: act needs key, the (n_reps,) uint64 array of learner keys")
        xp = get_namespace(state.regret)
        n_reps, n = state.regret.shape
        key = xp.asarray(key, dtype=xp.uint64)
        if tuple(key.shape) != (n_reps,):
            raise ValueError(f"key must have shape ({n_reps},), got {tuple(key.shape)}")
        j = xp.arange(n, dtype=xp.uint64)[None, :]
        with np.errstate(over="ignore"):  # uint64 hashing wraps by design
            u = uniform(key[:, None], j)
        e = eta_vector(mode_name, eta, horizon, state.t, n, xp)[:, None]
        v = e * (state.regret - state.base) + _noise_array(code, u)
        if awake is not None:
            v = xp.where(awake, v, -xp.inf)
        arg = xp.argmax(v, axis=1)
        return xp.astype(xp.arange(n)[None, :] == arg[:, None], state.regret.dtype), state

    def update(state, p, feedback, key=None):
        loss, awake = feedback
        check_round(state.regret, p, loss, awake)
        xp = get_namespace(state.regret)
        r, _ = instant_regret(p, loss, awake)
        regret = state.regret + r
        t = state.t + 1
        base = state.base
        if mode == 2.0:
            base = xp.where(_is_epoch_start(t)[:, None], regret, base)
        return FTPLState(t=t, regret=regret, base=base)

    kernel = KernelSpec(
        n_rows=2,
        n_scalars=2,
        params=np.array([mode, eta if eta is not None else 0.0, float(horizon or 0), code]),
        init=_ftpl_k_init,
        act=_ftpl_k_act,
        update=_ftpl_k_update,
    )
    return Learner(name="ftpl", feedback="full", init=init, act=act, update=update, params=params,
                   kernel=kernel)
