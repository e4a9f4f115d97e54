"""UCB1 and MOSS: optimistic indices built from Hoeffding confidence radii."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba.extending import register_jitable

from .._backend import get_namespace
from .._validation import check_float, check_int
from ..sim._bandit_kernels import BanditKernelSpec
from ..sim._arms import Pull
from ..sim._protocol import Learner
from ._common import argmax_first, check_feedback, check_init, first_unpulled, k_first_unpulled, pull_arm

__all__ = ["ucb1", "ucb_alpha", "moss", "IndexState"]


class IndexState(NamedTuple):
    """State of the index learners (leading axis: replications).

    Attributes
    ----------
    counts : array, shape (n_reps, n_arms)
        Pulls :math:`N_i` of each arm (float64).
    sums : array, shape (n_reps, n_arms)
        Sum of the rewards observed on each arm.
    t : array of int, shape (n_reps,)
        Rounds played.
    """

    counts: object
    sums: object
    t: object


#: Pull counts are exact in float32 up to this many rounds.
FLOAT32_MAX_ROUNDS = 2 ** 24


def index_init(spec, n_reps, keys=None, xp=np):
    n_reps, n_arms = check_init(n_reps, spec)
    dt = xp.float64
    if getattr(spec, "dtype", None) == "float32":
        horizon = getattr(spec, "horizon", None)
        if horizon is not None and horizon > FLOAT32_MAX_ROUNDS:
            raise ValueError(f"dtype='float32' counts pulls exactly up to 2**24 = {FLOAT32_MAX_ROUNDS} rounds, "
                             f"got horizon={horizon}; use dtype='float64'")
        dt = xp.float32
    return IndexState(counts=xp.zeros((n_reps, n_arms), dtype=dt), sums=xp.zeros((n_reps, n_arms), dtype=dt),
                      t=xp.zeros(n_reps, dtype=xp.int64))


def index_update(state, pull, reward, key=None):
    """Add one pull of ``pull.arm`` with ``reward`` to :class:`IndexState` (pure: returns a new state)."""
    arm = pull_arm(pull)
    check_feedback(state.counts, arm, reward)
    xp = get_namespace(state.counts)
    onehot = xp.arange(state.counts.shape[1])[None, :] == arm[:, None]
    return IndexState(counts=state.counts + xp.astype(onehot, state.counts.dtype),
                      sums=state.sums + xp.where(onehot, reward[:, None], 0.0),
                      t=state.t + 1)


def pick(xp, state, index):
    """Unpulled arms first (lowest index), then the first maximiser of ``index``."""
    has, first = first_unpulled(xp, state.counts)
    return xp.astype(xp.where(has, first, xp.argmax(index, axis=1)), xp.int64)


@register_jitable(forceinline=True, _nrt=False)
def k_index_init(prm, S, s):
    pass


@register_jitable(forceinline=True, _nrt=False)
def k_index_update(prm, S, s, t, arm, reward, p):
    S[0, arm] += 1.0
    S[1, arm] += reward


@register_jitable(forceinline=True, _nrt=False)
def _k_ucb_update(prm, S, s, t, arm, reward, p):
    S[0, arm] += 1.0
    S[1, arm] += reward
    S[2, arm] = S[1, arm] / S[0, arm]
    S[3, arm] = 1.0 / math.sqrt(S[0, arm])


# prm = [mode (0: UCB, 1: MOSS tuned to T, 2: anytime MOSS), c, T]


@register_jitable(forceinline=True, _nrt=False)
def _k_act(prm, S, s, t, key, p):
    K = S.shape[1]
    a = k_first_unpulled(S, K)
    if a >= 0:
        return a
    if prm[0] == 0.0:
        # rows 2, 3 cache mean_i and 1 / sqrt(N_i) (see _k_ucb_update): one sqrt per round
        b = math.sqrt(prm[1] * math.log(t))
        for i in range(K):
            p[i] = S[2, i] + b * S[3, i]
    else:
        big = prm[2] if prm[0] == 1.0 else t * 1.0
        for i in range(K):
            n = S[0, i]
            p[i] = S[1, i] / n + math.sqrt(max(math.log(big / (K * n)), 0.0) / n)
    return argmax_first(p, K)


def ucb1(c=2.0) -> Learner:
    r"""UCB1: pull the arm with the largest upper confidence bound.

    Parameters
    ----------
    c : float
        Coefficient of the exploration bonus, :math:`c > 0`; ``c = 2`` is
        UCB1 of Auer, Cesa-Bianchi & Fischer (2002).

    Returns
    -------
    Learner
        A deterministic bandit learner with a fused Numba/CUDA kernel.

    Notes
    -----
    Each arm is pulled once (lowest index first); afterwards, in round
    :math:`t + 1` (after :math:`t` pulls in all),

    .. math::

        a_{t+1} = \arg\max_i \; \hat\mu_i + \sqrt{\frac{c \ln t}{N_i}},

    ties broken towards the lowest index (computed as
    :math:`\hat\mu_i + \sqrt{c \ln t} \cdot N_i^{-1/2}`, the same on every backend).  For rewards in [0, 1] and
    ``c = 2`` the expected regret is at most
    :math:`\sum_{i:\Delta_i>0} 8 \ln T / \Delta_i + (1 + \pi^2/3) \sum_i \Delta_i`
    (Theorem 1 of [1]_), logarithmic in :math:`T` with a larger constant than
    the Lai--Robbins bound.

    [validated-rates]

    References
    ----------
    .. [1] P. Auer, N. Cesa-Bianchi and P. Fischer, "Finite-time analysis of
       the multiarmed bandit problem", Machine Learning 47, 2002, Theorem 1.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import ucb1, instances
    >>> res = sim.run(ucb1(), instances.bernoulli([0.2, 0.8]), horizon=200, n_reps=4, seed=0)
    >>> res.final["pulls"].sum(axis=1).tolist()
    [200, 200, 200, 200]
    >>> bool((res.final["pulls"][:, 1] > res.final["pulls"][:, 0]).all())
    True
    """
    c = check_float(c, "c", positive=True)

    def act(state, obs=None, key=None):
        xp = get_namespace(state.counts)
        n = xp.where(state.counts > 0, state.counts, 1.0)
        b = xp.astype(xp.sqrt(c * xp.log(xp.astype(xp.maximum(state.t, 1), xp.float64))), n.dtype)
        index = state.sums / n + b[:, None] * (1.0 / xp.sqrt(n))
        return Pull(pick(xp, state, index)), state

    kernel = BanditKernelSpec(n_rows=4, n_scalars=0, params=np.array([0.0, c, 0.0]), init=k_index_init,
                              act=_k_act, update=_k_ucb_update)
    return Learner(name="ucb1", feedback="bandit", init=index_init, act=act, update=index_update,
                   params={"c": c}, kernel=kernel, float_dtypes=("float64", "float32"))


def ucb_alpha(alpha=3.0) -> Learner:
    r"""UCB(:math:`\alpha`): the index :math:`\hat\mu_i + \sqrt{\alpha \ln t / (2 N_i)}`, :math:`\alpha > 2`.

    Parameters
    ----------
    alpha : float
        Exploration parameter, :math:`\alpha > 2` (the bound below needs it).

    Returns
    -------
    Learner
        :func:`ucb1` with ``c = alpha / 2`` (the same kernel), registered
        under its own name.

    Notes
    -----
    With rewards in [0, 1] (1/2-sub-Gaussian, :math:`\psi^*(\varepsilon) =
    2\varepsilon^2`), the pseudo-regret satisfies

    .. math::

        \bar R_T \le \sum_{i:\Delta_i>0} \Big(\frac{2\alpha}{\Delta_i}\ln T
        + \frac{\alpha}{\alpha - 2}\Big),

    Theorem 2.1 of [1]_ (written there for a general convex
    :math:`\psi`; theorem number not re-checked).  The index crosses the
    best mean once :math:`N_i \approx \alpha \ln t / (2\Delta_i^2)`, so
    the slope of the regret against :math:`\ln T` tends to
    :math:`\sum_i \alpha/(2\Delta_i)`, a quarter of the bound's.

    [validated-rates]

    References
    ----------
    .. [1] S. Bubeck and N. Cesa-Bianchi, "Regret Analysis of Stochastic and
       Nonstochastic Multi-armed Bandit Problems", Foundations and Trends in
       Machine Learning 5(1), 2012, Section 2.2.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import ucb1, ucb_alpha, instances
    >>> a = sim.run(ucb_alpha(4.0), instances.bernoulli([0.3, 0.7]), horizon=300, n_reps=3, seed=2)
    >>> b = sim.run(ucb1(c=2.0), instances.bernoulli([0.3, 0.7]), horizon=300, n_reps=3, seed=2)
    >>> bool((a.metrics["regret"] == b.metrics["regret"]).all())
    True
    """
    alpha = check_float(alpha, "alpha")
    if not alpha > 2.0:
        raise ValueError(f"alpha must be > 2 (the regret bound of UCB(alpha) needs it), got {alpha}")
    base = ucb1(c=alpha / 2.0)
    return base._replace(name="ucb_alpha", params={"alpha": alpha})


def moss(horizon=None) -> Learner:
    r"""MOSS (Minimax Optimal Strategy in the Stochastic case), tuned to ``horizon`` or anytime.

    Parameters
    ----------
    horizon : int, optional
        The horizon :math:`T`.  Without it the anytime variant is used, with
        :math:`T` replaced by the current round :math:`t`.

    Returns
    -------
    Learner
        A deterministic bandit learner with a fused Numba/CUDA kernel.

    Notes
    -----
    After one pull of each arm,

    .. math::

        a_{t+1} = \arg\max_i \; \hat\mu_i + \sqrt{\frac{\ln^+\!\big(T / (K N_i)\big)}{N_i}},
        \qquad \ln^+ x = \max(\ln x, 0).

    With rewards in [0, 1] the tuned version has expected regret at most
    :math:`49 \sqrt{KT}` (Audibert & Bubeck 2009, Thm 5; theorem number not
    re-checked), removing UCB1's :math:`\sqrt{\ln T}` factor in the minimax
    rate.  The anytime variant uses :math:`\ln^+(t / (K N_i))`, the simplest
    form of the anytime MOSS index of Degenne & Perchet (2016) (their index
    carries an extra constant factor inside the square root; that factor is
    not reproduced here).

    [validated-rates]

    References
    ----------
    .. [1] J.-Y. Audibert and S. Bubeck, "Minimax policies for adversarial
       and stochastic bandits", COLT 2009.
    .. [2] R. Degenne and V. Perchet, "Anytime optimal algorithms in
       stochastic multi-armed bandits", ICML 2016.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import moss, instances
    >>> res = sim.run(moss(horizon=500), instances.minimax(5, 500), horizon=500, n_reps=8, seed=0)
    >>> bool(res.mean()[-1] < 500 * res.environment_params["eps"])  # below always pulling a 1/2 arm
    True
    """
    T = None if horizon is None else check_int(horizon, "horizon")

    def act(state, obs=None, key=None):
        xp = get_namespace(state.counts)
        K = state.counts.shape[1]
        n = xp.where(state.counts > 0, state.counts, 1.0)
        big = (xp.full(state.t.shape, float(T)) if T is not None else xp.astype(state.t, xp.float64))[:, None]
        with np.errstate(divide="ignore"):  # round 0 of the anytime index: log 0, arms unpulled
            index = state.sums / n + xp.sqrt(xp.maximum(xp.log(big / (K * n)), 0.0) / n)
        return Pull(pick(xp, state, index)), state

    kernel = BanditKernelSpec(n_rows=2, n_scalars=0, params=np.array([1.0 if T else 2.0, 0.0, float(T or 0)]),
                              init=k_index_init, act=_k_act, update=k_index_update)
    return Learner(name="moss", feedback="bandit", init=index_init, act=act, update=index_update,
                   params={} if T is None else {"horizon": T}, kernel=kernel)
