"""Tsallis-INF: follow the regularised leader with the 1/2-Tsallis entropy."""

from __future__ import annotations

import math

import numpy as np
from numba.extending import register_jitable

from .._backend import get_namespace
from .._random import uniform
from .._validation import as_real_array, check_float
from ..sim._bandit_kernels import BanditKernelSpec
from ..sim._arms import rowsum
from ..sim._arms import Pull
from ..sim._protocol import Learner
from ._common import check_feedback, check_init, pull_arm, sample_index
from ._exp3 import Exp3State

__all__ = ["tsallis_inf", "tsallis_weights"]

_NEWTON_ITER = 60
_NEWTON_TOL = 1e-13


@register_jitable
def _k_weights(L, eta, p):
    """FTRL weights ``w_i = 4 / (eta (L_i - x))^2`` normalised by Newton on ``x``; written into ``p``."""
    K = L.shape[0]
    m = L[0]
    for i in range(1, K):
        if L[i] < m:
            m = L[i]
    x = m - 2.0 / eta  # here the best arm alone has weight 1: sum >= 1, right of the root
    for _ in range(_NEWTON_ITER):
        s = 0.0
        s32 = 0.0
        for i in range(K):
            w = 4.0 / (eta * (L[i] - x)) ** 2
            s += w
            s32 += w * math.sqrt(w)
        step = (s - 1.0) / (eta * s32)
        x = x - step
        if step <= _NEWTON_TOL * (1.0 + abs(x)):
            break
    tot = 0.0
    for i in range(K):
        p[i] = 4.0 / (eta * (L[i] - x)) ** 2
        tot += p[i]
    for i in range(K):
        p[i] = p[i] / tot


def tsallis_weights(loss_est, eta):
    r"""The 1/2-Tsallis FTRL distribution for cumulative loss estimates ``loss_est`` ``(n_reps, K)``.

    Solves :math:`\sum_i 4 / (\eta (\hat L_i - x))^2 = 1` for :math:`x < \min_i \hat L_i`
    by Newton's method from :math:`x_0 = \min_i \hat L_i - 2/\eta` (where the
    sum is at least 1; the sum is convex and increasing in :math:`x`, so the
    iterates decrease monotonically to the root), then normalises.

    Parameters
    ----------
    loss_est : array, shape (n_reps, K)
        Finite cumulative loss estimates, ``K >= 1``.
    eta : float or array, shape (n_reps,)
        Learning rates, finite and positive.

    Returns
    -------
    array, shape (n_reps, K)
        One distribution per row, in the namespace of ``loss_est``.

    Raises
    ------
    TypeError
        If ``loss_est`` or ``eta`` does not hold real numbers.
    ValueError
        If a shape is wrong, or a value is NaN, infinite or (``eta``) not positive.

    References
    ----------
    .. [1] J. Zimmert and Y. Seldin, "Tsallis-INF: an optimal algorithm for
       stochastic and adversarial bandits", JMLR 22(28), 2021 (the weights of
       the 1/2-Tsallis regulariser and their computation by Newton's method;
       section not re-checked).

    Examples
    --------
    >>> w = tsallis_weights(np.array([[0.0, 0.0, 0.0]]), 1.0)
    >>> np.allclose(w, 1 / 3)
    True
    """
    loss_est = as_real_array(loss_est, "loss_est")
    xp = get_namespace(loss_est)
    if loss_est.ndim != 2 or loss_est.shape[1] < 1:
        raise ValueError(f"loss_est must have shape (n_reps, K) with K >= 1, got {tuple(loss_est.shape)}")
    if not bool(xp.all(xp.isfinite(loss_est))):
        raise ValueError("loss_est contains NaN or infinite values")
    eta = as_real_array(eta, "eta", xp=xp)
    if eta.ndim > 1 or (eta.ndim == 1 and eta.shape[0] != loss_est.shape[0]):
        raise ValueError(f"eta must be a number or an array of shape ({loss_est.shape[0]},), got {tuple(eta.shape)}")
    if not bool(xp.all(xp.isfinite(eta) & (eta > 0))):
        raise ValueError("eta must be finite and > 0")
    return _weights(loss_est, eta)


def _weights(loss_est, eta):
    """:func:`tsallis_weights` without the checks (the learner's rates and estimates are valid)."""
    xp = get_namespace(loss_est)
    eta = xp.asarray(eta, dtype=xp.float64) + xp.zeros(loss_est.shape[0])
    e = eta[:, None]
    x = xp.min(loss_est, axis=1) - 2.0 / eta
    done = xp.zeros(loss_est.shape[0], dtype=xp.bool)
    for _ in range(_NEWTON_ITER):
        w = 4.0 / (e * (loss_est - x[:, None])) ** 2
        s = rowsum(xp, w)
        s32 = rowsum(xp, w * xp.sqrt(w))
        step = (s - 1.0) / (eta * s32)
        x_new = x - step
        x = xp.where(done, x, x_new)
        done = done | (step <= _NEWTON_TOL * (1.0 + xp.abs(x_new)))
        if bool(xp.all(done)):
            break
    w = 4.0 / (e * (loss_est - x[:, None])) ** 2
    return w / rowsum(xp, w)[:, None]


# prm = [eta scale c: eta_t = c / sqrt(t)]


@register_jitable
def _k_init(prm, S, s):
    pass


@register_jitable
def _k_act(prm, S, s, t, key, p):
    K = S.shape[1]
    _k_weights(S[0], prm[0] / math.sqrt(t + 1.0), p)
    return sample_index(p, K, uniform(key, np.uint64(0)))


@register_jitable
def _k_update(prm, S, s, t, arm, reward, p):
    S[0, arm] += (1.0 - reward) / p[arm]


def tsallis_inf(scale=2.0) -> Learner:
    r"""Tsallis-INF with the 1/2-Tsallis entropy (best of both worlds).

    Parameters
    ----------
    scale : float
        :math:`c` in the learning rate :math:`\eta_t = c / \sqrt t`; the
        paper's choice is :math:`c = 2`.

    Returns
    -------
    Learner
        A randomised bandit learner with a fused Numba/CUDA kernel; ``act``
        returns the distribution with the sampled arm.

    Notes
    -----
    With losses :math:`\ell = 1 - x` and importance-weighted estimates
    :math:`\hat L_{t,i} = \hat L_{t-1,i} + \ell_{t,i} \mathbb 1\{a_t = i\} / w_{t,i}`,
    round :math:`t` plays the FTRL solution with the regulariser
    :math:`-\sum_i 4 \sqrt{w_i} / \eta_t`,

    .. math::

        w_{t,i} = \frac{4}{\big(\eta_t (\hat L_{t-1,i} - x_t)\big)^2},

    the normaliser :math:`x_t` found by Newton's method
    (:func:`tsallis_weights`), and samples the arm by inverse CDF as
    :func:`exp3` does.  Theorem 1 of [1]_ bounds the pseudo-regret by
    :math:`4 \sqrt{KT} + 1` against any oblivious adversary and by
    :math:`O(\sum_{i \ne i^*} \ln T / \Delta_i)` in the stochastic regime with a
    unique best arm (theorem number and constants not re-checked).  The
    plain importance-weighted estimator is used; the paper's
    reduced-variance estimator (shifting losses by 1/2) is not implemented.

    [validated-rates]

    References
    ----------
    .. [1] J. Zimmert and Y. Seldin, "Tsallis-INF: an optimal algorithm for
       stochastic and adversarial bandits", JMLR 22(28), 2021.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import tsallis_inf, instances
    >>> res = sim.run(tsallis_inf(), instances.minimax(4, 1000), horizon=1000, n_reps=50, seed=0,
    ...               metrics=["expected_regret"])
    >>> bool(res.mean("expected_regret")[-1] <= 4 * (4 * 1000) ** 0.5 + 1)
    True
    """
    c = check_float(scale, "scale", positive=True)

    def init(spec, n_reps, keys=None, xp=np):
        n_reps, n_arms = check_init(n_reps, spec)
        return Exp3State(loss_est=xp.zeros((n_reps, n_arms)), t=xp.zeros(n_reps, dtype=xp.int64))

    def act(state, obs=None, key=None):
        xp = get_namespace(state.loss_est)
        K = state.loss_est.shape[1]
        eta = c / xp.sqrt(xp.astype(state.t, xp.float64) + 1.0)
        p = _weights(state.loss_est, eta)
        u = uniform(key, np.uint64(0))
        below = xp.count_nonzero(xp.cumulative_sum(p, axis=1) <= u[:, None], axis=1)
        arm = xp.astype(xp.minimum(below, K - 1), xp.int64)
        return Pull(arm, p), state

    def update(state, pull, reward, key=None):
        arm, p = pull_arm(pull), pull.p
        check_feedback(state.loss_est, arm, reward)
        if p is None or tuple(p.shape) != tuple(state.loss_est.shape):
            raise ValueError("tsallis_inf.update needs the distribution p returned by act, of shape "
                             f"{tuple(state.loss_est.shape)}")
        xp = get_namespace(state.loss_est)
        rows = xp.arange(arm.shape[0])
        onehot = xp.arange(state.loss_est.shape[1])[None, :] == arm[:, None]
        inc = (1.0 - reward) / p[rows, arm]
        return Exp3State(loss_est=state.loss_est + xp.where(onehot, inc[:, None], 0.0), t=state.t + 1)

    kernel = BanditKernelSpec(n_rows=1, n_scalars=0, params=np.array([c]), init=_k_init, act=_k_act,
                              update=_k_update, randomised=True)
    return Learner(name="tsallis_inf", feedback="bandit", init=init, act=act, update=update,
                   params={"scale": c}, kernel=kernel)
