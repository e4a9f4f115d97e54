"""Successive elimination: round-robin over the surviving arms, dropping those confidently worse."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba.extending import register_jitable

from .._backend import get_namespace
from .._validation import check_open_unit
from ..sim._bandit_kernels import BanditKernelSpec
from ..sim._arms import Pull
from ..sim._protocol import Learner
from ._common import check_feedback, check_init, pull_arm

__all__ = ["successive_elimination", "EliminationState"]


class EliminationState(NamedTuple):
    """State of :func:`successive_elimination` (leading axis: replications).

    Attributes
    ----------
    counts, sums : array, shape (n_reps, n_arms)
        Pulls and reward sums of each arm.
    active : bool array, shape (n_reps, n_arms)
        Arms not eliminated yet.
    t : array of int, shape (n_reps,)
    """

    counts: object
    sums: object
    active: object
    t: object


@register_jitable
def _radius(r, K, delta):
    return math.sqrt(math.log(4.0 * K * r * r / delta) / (2.0 * r))


@register_jitable
def _k_init(prm, S, s):
    for i in range(S.shape[1]):
        S[2, i] = 1.0


@register_jitable
def _k_act(prm, S, s, t, key, p):
    K = S.shape[1]
    a = -1
    for i in range(K):
        if S[2, i] == 1.0 and (a < 0 or S[0, i] < S[0, a]):
            a = i
    return a


@register_jitable
def _k_update(prm, S, s, t, arm, reward, p):
    K = S.shape[1]
    S[0, arm] += 1.0
    S[1, arm] += reward
    lo = np.inf
    hi = -np.inf
    best = -np.inf
    for i in range(K):
        if S[2, i] == 1.0:
            lo = min(lo, S[0, i])
            hi = max(hi, S[0, i])
            best = max(best, S[1, i] / S[0, i])
    if lo == hi:  # a phase is complete: every surviving arm has r pulls
        thr = best - 2.0 * _radius(lo, K, prm[0])
        for i in range(K):
            if S[2, i] == 1.0 and S[1, i] / S[0, i] < thr:
                S[2, i] = 0.0


def successive_elimination(delta=0.05) -> Learner:
    r"""Successive elimination with confidence ``delta``.

    Parameters
    ----------
    delta : float
        Confidence level in (0, 1): with probability at least
        :math:`1 - \delta` the best arm is never eliminated.

    Returns
    -------
    Learner
        A deterministic bandit learner with a fused Numba/CUDA kernel.

    Notes
    -----
    The surviving arms are pulled in turn (the surviving arm with the fewest
    pulls, lowest index on ties).  When every survivor has :math:`r` pulls,
    arm :math:`i` is eliminated if

    .. math::

        \hat\mu_i < \max_{j \text{ active}} \hat\mu_j - 2 c_r, \qquad
        c_r = \sqrt{\frac{\ln(4 K r^2 / \delta)}{2 r}},

    the Hoeffding radius with a union bound over arms and phases
    (:math:`\sum_r \delta / (2 K r^2) \cdot 2K \le \delta`).  Each arm with gap
    :math:`\Delta_i` is eliminated after :math:`O(\ln(K / (\delta \Delta_i)) / \Delta_i^2)`
    pulls (Even-Dar, Mannor & Mansour 2006, the successive elimination
    algorithm and its sample-complexity theorem; theorem number not
    re-checked), so the pseudo-regret stops growing once only the best arm
    is left.  The radius is reconstructed from the Hoeffding union bound
    above; the paper's constants may differ.

    [validated-rates]

    References
    ----------
    .. [1] E. Even-Dar, S. Mannor and Y. Mansour, "Action elimination and
       stopping conditions for the multi-armed bandit and reinforcement
       learning problems", JMLR 7, 2006.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import successive_elimination, instances
    >>> res = sim.run(successive_elimination(0.05), instances.bernoulli([0.1, 0.9]), horizon=2000, n_reps=4,
    ...               seed=0)
    >>> res.final["pulls"][:, 0].max() < 100  # arm 0 is dropped early
    np.True_
    """
    delta = check_open_unit(delta, "delta")

    def init(spec, n_reps, keys=None, xp=np):
        n_reps, n_arms = check_init(n_reps, spec)
        z = xp.zeros((n_reps, n_arms))
        return EliminationState(counts=z, sums=xp.zeros_like(z), active=xp.ones((n_reps, n_arms), dtype=xp.bool),
                                t=xp.zeros(n_reps, dtype=xp.int64))

    def act(state, obs=None, key=None):
        xp = get_namespace(state.counts)
        return Pull(xp.astype(xp.argmin(xp.where(state.active, state.counts, xp.inf), axis=1), xp.int64)), state

    def update(state, pull, reward, key=None):
        arm = pull_arm(pull)
        check_feedback(state.counts, arm, reward)
        xp = get_namespace(state.counts)
        K = state.counts.shape[1]
        onehot = xp.arange(K)[None, :] == arm[:, None]
        counts = state.counts + xp.astype(onehot, state.counts.dtype)
        sums = state.sums + xp.where(onehot, reward[:, None], 0.0)
        act_ = state.active
        lo = xp.min(xp.where(act_, counts, xp.inf), axis=1)
        hi = xp.max(xp.where(act_, counts, -xp.inf), axis=1)
        mean = sums / xp.where(counts > 0, counts, 1.0)
        best = xp.max(xp.where(act_, mean, -xp.inf), axis=1)
        r = xp.where(lo == hi, lo, 1.0)
        rad = xp.sqrt(xp.log(4.0 * K * r * r / delta) / (2.0 * r))
        thr = best - 2.0 * rad
        drop = (lo == hi)[:, None] & act_ & (mean < thr[:, None])
        return EliminationState(counts=counts, sums=sums, active=act_ & ~drop, t=state.t + 1)

    kernel = BanditKernelSpec(n_rows=3, n_scalars=0, params=np.array([delta]), init=_k_init, act=_k_act,
                              update=_k_update)
    return Learner(name="successive_elimination", feedback="bandit", init=init, act=act, update=update,
                   params={"delta": delta}, kernel=kernel)
