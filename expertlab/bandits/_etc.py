"""Explore-then-commit: uniform exploration for a fixed budget, then the empirical best arm."""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from .._backend import get_namespace
from .._validation import check_float, check_int
from ..sim._bandit_kernels import BanditKernelSpec
from ..sim._arms import Pull
from ..sim._protocol import Learner
from ._common import argmax_first, check_feedback, pull_arm
from ._ucb import IndexState, index_init

__all__ = ["explore_then_commit", "etc_expected_regret"]


@register_jitable
def _k_init(prm, S, s):
    pass


@register_jitable
def _k_act(prm, S, s, t, key, p):
    K = S.shape[1]
    if t < prm[0] * K:
        return t % K
    return argmax_first(S[1], K)


@register_jitable
def _k_update(prm, S, s, t, arm, reward, p):
    S[0, arm] += 1.0
    if t < prm[0] * S.shape[1]:
        S[1, arm] += reward


def explore_then_commit(m=10) -> Learner:
    r"""Explore-then-commit: pull the arms round-robin ``m`` times each, then commit.

    Parameters
    ----------
    m : int
        Exploration pulls per arm, :math:`m \ge 1`.

    Returns
    -------
    Learner
        A deterministic bandit learner with a fused Numba/CUDA kernel.

    Notes
    -----
    Rounds :math:`t = 0, \dots, mK - 1` pull arm :math:`t \bmod K`; afterwards
    the learner pulls, for ever, the arm with the largest exploration-phase
    mean (lowest index on ties).  Its expected regret is exactly

    .. math::

        R_T = m \sum_i \Delta_i + (T - mK) \sum_i \Delta_i \,
        \mathbb P(\text{commit to } i),

    the decomposition at the start of Chapter 6 of [1]_, which gives the bound
    :math:`R_T \le m \sum_i \Delta_i + (T - mK) \sum_i \Delta_i \exp(-m \Delta_i^2 / 4)`
    for 1-subgaussian rewards (Theorem 6.1 there).  For two Bernoulli arms
    the commit probability is a finite sum of binomial probabilities
    (:func:`etc_expected_regret`).  The state's ``sums`` hold the
    exploration-phase rewards only; ``counts`` count every pull.

    [validated-rates]

    References
    ----------
    .. [1] T. Lattimore and C. Szepesvári, *Bandit Algorithms*, Cambridge
       University Press, 2020, Chapter 6 and Theorem 6.1.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import explore_then_commit, instances
    >>> res = sim.run(explore_then_commit(3), instances.bernoulli([0.2, 0.8]), horizon=10, n_reps=2, seed=0)
    >>> [sorted(row) for row in res.final["pulls"].tolist()]  # 3 + 3 exploration pulls, then 4 on one arm
    [[3, 7], [3, 7]]
    """
    m = check_int(m, "m")

    def act(state, obs=None, key=None):
        xp = get_namespace(state.counts)
        K = state.counts.shape[1]
        explore = state.t < m * K
        return Pull(xp.astype(xp.where(explore, state.t % K, xp.argmax(state.sums, axis=1)), xp.int64)), state

    def update(state, pull, reward, key=None):
        arm = pull_arm(pull)
        check_feedback(state.counts, arm, reward)
        xp = get_namespace(state.counts)
        K = state.counts.shape[1]
        onehot = xp.arange(K)[None, :] == arm[:, None]
        explore = (state.t < m * K)[:, None]
        return IndexState(counts=state.counts + xp.astype(onehot, state.counts.dtype),
                          sums=state.sums + xp.where(onehot & explore, reward[:, None], 0.0), t=state.t + 1)

    kernel = BanditKernelSpec(n_rows=2, n_scalars=0, params=np.array([float(m)]), init=_k_init, act=_k_act,
                              update=_k_update)
    return Learner(name="explore_then_commit", feedback="bandit", init=index_init, act=act, update=update,
                   params={"m": m}, kernel=kernel)


def _binom_pmf(m: int, mu: float) -> np.ndarray:
    """``P(Bin(m, mu) = k)`` for ``k = 0 .. m`` (without SciPy, which is slow to import).

    Ratios of consecutive probabilities, ``p_{k+1} / p_k = (m - k) mu / ((k + 1)(1 - mu))``,
    multiplied outwards from the mode ``floor((m + 1) mu)`` (where every
    factor is at most 1, so nothing overflows and far tails underflow to 0),
    then normalised; a point mass at ``mu`` in {0, 1}.
    """
    if mu == 0.0 or mu == 1.0:
        out = np.zeros(m + 1)
        out[0 if mu == 0.0 else m] = 1.0
        return out
    r = mu / (1.0 - mu)
    mode = min(m, int((m + 1) * mu))
    up = np.arange(mode, m, dtype=np.float64)  # k = mode .. m - 1
    down = np.arange(mode, 0, -1, dtype=np.float64)  # k = mode .. 1
    w = np.concatenate([np.cumprod(down / ((m - down + 1.0) * r))[::-1], [1.0],
                        np.cumprod((m - up) / (up + 1.0) * r)])
    return w / w.sum()


def etc_expected_regret(mu0, mu1, m, horizon) -> float:
    r"""Exact expected regret of :func:`explore_then_commit` on two Bernoulli arms.

    With :math:`S_j \sim \mathrm{Bin}(m, \mu_j)` independent, the learner
    commits to arm 0 when :math:`S_0 \ge S_1` (ties go to the lower index), so

    .. math::

        R_T = m\Delta + (T - 2m)\,\Delta\, \mathbb P(\text{commit to the worse arm}).

    Examples
    --------
    >>> round(etc_expected_regret(0.4, 0.6, 1, 10), 6)  # P(S0 >= S1) = 1 - 0.6 * 0.6 = 0.64
    1.224
    """
    mu0 = check_float(mu0, "mu0", minimum=0.0, maximum=1.0)
    mu1 = check_float(mu1, "mu1", minimum=0.0, maximum=1.0)
    m = check_int(m, "m")
    T = check_int(horizon, "horizon", minimum=2 * m)
    k = np.arange(m + 1)
    p0 = _binom_pmf(m, mu0)
    p1 = _binom_pmf(m, mu1)
    p_commit0 = float(np.sum(p0[:, None] * p1[None, :] * (k[:, None] >= k[None, :])))
    gap = abs(mu1 - mu0)
    p_wrong = p_commit0 if mu1 > mu0 else 1.0 - p_commit0
    return m * gap + (T - 2 * m) * gap * p_wrong
