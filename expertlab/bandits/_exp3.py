"""EXP3 and EXP3-IX: exponential weights on importance-weighted loss estimates."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba.extending import register_jitable

from .._backend import get_namespace
from .._random import uniform
from .._validation import check_float, check_int
from ..sim._bandit_kernels import BanditKernelSpec
from ..sim._arms import rowsum
from ..sim._arms import Pull
from ..sim._protocol import Learner
from ._common import check_feedback, check_init, pull_arm, sample_index

__all__ = ["exp3", "exp3_ix", "Exp3State"]


class Exp3State(NamedTuple):
    """State of :func:`exp3` and :func:`exp3_ix` (leading axis: replications).

    Attributes
    ----------
    loss_est : array, shape (n_reps, n_arms)
        Cumulative loss estimates :math:`\\tilde L_{t,i}`.
    t : array of int, shape (n_reps,)
        Rounds played.
    """

    loss_est: object
    t: object


# prm = [mode (0: fixed eta, 1: anytime eta_t = sqrt(ln K / (t K))), eta, gamma]


@register_jitable
def _k_init(prm, S, s):
    pass


@register_jitable
def _k_act(prm, S, s, t, key, p):
    K = S.shape[1]
    eta = prm[1] if prm[0] == 0.0 else math.sqrt(math.log(K) / ((t + 1.0) * K))
    m = S[0, 0]
    for i in range(1, K):
        if S[0, i] < m:
            m = S[0, i]
    tot = 0.0
    for i in range(K):
        p[i] = math.exp(-eta * (S[0, i] - m))
        tot += p[i]
    for i in range(K):
        p[i] = p[i] / tot
    return sample_index(p, K, uniform(key, np.uint64(0)))


@register_jitable
def _k_update(prm, S, s, t, arm, reward, p):
    S[0, arm] += (1.0 - reward) / (p[arm] + prm[2])


def arms_check(name, params):
    """``check_spec`` of a learner whose rate was tuned for ``params["n_arms"]`` arms."""

    def check_spec(spec):
        K = params.get("n_arms")
        if K is not None and hasattr(spec, "n_actions") and spec.n_actions != K:
            raise ValueError(f"n_arms: {name} was tuned for n_arms={K} but the environment has "
                             f"{spec.n_actions} arms")

    return check_spec


def _factory(name, mode, eta, gamma, params):
    check_spec = arms_check(name, params)

    def init(spec, n_reps, keys=None, xp=np):
        check_spec(spec)
        n_reps, n_arms = check_init(n_reps, spec)
        return Exp3State(loss_est=xp.zeros((n_reps, n_arms)), t=xp.zeros(n_reps, dtype=xp.int64))

    def act(state, obs=None, key=None):
        xp = get_namespace(state.loss_est)
        K = state.loss_est.shape[1]
        if mode == 0.0:
            e = xp.full(state.t.shape, eta)
        else:
            e = xp.sqrt(math.log(K) / ((xp.astype(state.t, xp.float64) + 1.0) * K))
        w = xp.exp(-e[:, None] * (state.loss_est - xp.min(state.loss_est, axis=1, keepdims=True)))
        p = w / rowsum(xp, w)[:, None]
        u = uniform(key, np.uint64(0))
        below = xp.count_nonzero(xp.cumulative_sum(p, axis=1) <= u[:, None], axis=1)
        arm = xp.astype(xp.minimum(below, K - 1), xp.int64)
        return Pull(arm, p), state

    def update(state, pull, reward, key=None):
        arm, p = pull_arm(pull), pull.p
        check_feedback(state.loss_est, arm, reward)
        if p is None or tuple(p.shape) != tuple(state.loss_est.shape):
            raise ValueError(f"{name}.update needs the distribution p returned by act, of shape "
                             f"{tuple(state.loss_est.shape)}")
        xp = get_namespace(state.loss_est)
        rows = xp.arange(arm.shape[0])
        onehot = xp.arange(state.loss_est.shape[1])[None, :] == arm[:, None]
        inc = (1.0 - reward) / (p[rows, arm] + gamma)
        return Exp3State(loss_est=state.loss_est + xp.where(onehot, inc[:, None], 0.0), t=state.t + 1)

    kernel = BanditKernelSpec(n_rows=1, n_scalars=0, params=np.array([mode, eta, gamma]), init=_k_init,
                              act=_k_act, update=_k_update, randomised=True)
    return Learner(name=name, feedback="bandit", init=init, act=act, update=update, params=params, kernel=kernel,
                   check_spec=check_spec)


def exp3(horizon=None, *, n_arms=None, eta=None) -> Learner:
    r"""EXP3 (loss-based): exponential weights on importance-weighted loss estimates.

    Parameters
    ----------
    horizon, n_arms : int, optional
        Give both for the rate :math:`\eta = \sqrt{2 \ln K / (T K)}` tuned to
        the horizon.  Without them (and without ``eta``) the anytime rate
        :math:`\eta_t = \sqrt{\ln K / (t K)}` is used in round :math:`t \ge 1`.
    eta : float, optional
        A fixed learning rate instead.

    Returns
    -------
    Learner
        A randomised bandit learner with a fused Numba/CUDA kernel; ``act``
        returns the distribution :math:`p_t` with the sampled arm.

    Notes
    -----
    With losses :math:`\ell_{t,i} = 1 - x_{t,i}` (rewards :math:`x \in [0, 1]`),

    .. math::

        p_{t,i} \propto \exp(-\eta_t \tilde L_{t-1,i}), \qquad
        \tilde L_{t,i} = \tilde L_{t-1,i} + \frac{\ell_{t,i}}{p_{t,i}} \mathbb 1\{a_t = i\},

    the arm drawn by inverse CDF from one uniform of the round's learner key
    (first arm whose cumulative probability exceeds it).  Theorem 3.1 of [2]_:
    with the tuned rate the pseudo-regret is at most :math:`\sqrt{2 T K \ln K}`;
    with the anytime rate at most :math:`2 \sqrt{T K \ln K}`.  This is the
    loss-based form analysed there, without the uniform exploration mixture
    of the original EXP3 of [1]_.

    [validated-rates]

    References
    ----------
    .. [1] P. Auer, N. Cesa-Bianchi, Y. Freund and R. Schapire, "The
       nonstochastic multiarmed bandit problem", SIAM Journal on Computing
       32(1), 2002.
    .. [2] S. Bubeck and N. Cesa-Bianchi, "Regret analysis of stochastic and
       nonstochastic multi-armed bandit problems", Foundations and Trends in
       Machine Learning 5(1), 2012, Theorem 3.1.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import exp3, instances
    >>> inst = instances.minimax(4, 1000)
    >>> res = sim.run(exp3(1000, n_arms=4), inst, horizon=1000, n_reps=50, seed=0, metrics=["expected_regret"])
    >>> bool(res.mean("expected_regret")[-1] <= (2 * 1000 * 4 * np.log(4)) ** 0.5)
    True
    """
    if eta is not None:
        if horizon is not None or n_arms is not None:
            raise ValueError("give either eta or (horizon, n_arms), not both")
        eta = check_float(eta, "eta", positive=True)
        return _factory("exp3", 0.0, eta, 0.0, {"eta": eta})
    if (horizon is None) != (n_arms is None):
        raise ValueError("the tuned rate needs both horizon and n_arms")
    if horizon is None:
        return _factory("exp3", 1.0, 0.0, 0.0, {})
    T = check_int(horizon, "horizon")
    K = check_int(n_arms, "n_arms", minimum=2)
    return _factory("exp3", 0.0, math.sqrt(2.0 * math.log(K) / (T * K)), 0.0, {"horizon": T, "n_arms": K})


def exp3_ix(horizon, n_arms) -> Learner:
    r"""EXP3-IX: EXP3 with implicit exploration, :math:`\ell / (p + \gamma)` estimates.

    Parameters
    ----------
    horizon, n_arms : int
        Tune :math:`\eta = \sqrt{2 \ln K / (K T)}` and :math:`\gamma = \eta / 2`.

    Returns
    -------
    Learner
        A randomised bandit learner with a fused Numba/CUDA kernel.

    Notes
    -----
    As :func:`exp3` with the biased, lower-variance estimate
    :math:`\tilde\ell_{t,i} = \ell_{t,i} \mathbb 1\{a_t = i\} / (p_{t,i} + \gamma)`.
    With this tuning, Theorem 1 of [1]_ bounds the regret by
    :math:`2 \sqrt{2 K T \ln K} + (\sqrt{2KT / \ln K} + 1) \ln(2/\delta)` with
    probability at least :math:`1 - \delta` (theorem number not re-checked).

    [validated-rates]

    References
    ----------
    .. [1] G. Neu, "Explore no more: improved high-probability regret bounds
       for non-stochastic bandits", NeurIPS 2015.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import exp3_ix, instances
    >>> res = sim.run(exp3_ix(500, 3), instances.bernoulli([0.2, 0.5, 0.8]), horizon=500, n_reps=20, seed=0)
    >>> bool(res.final["pulls"][:, 2].mean() > 250)
    True
    """
    T = check_int(horizon, "horizon")
    K = check_int(n_arms, "n_arms", minimum=2)
    eta = math.sqrt(2.0 * math.log(K) / (K * T))
    return _factory("exp3_ix", 0.0, eta, eta / 2.0, {"horizon": T, "n_arms": K})
