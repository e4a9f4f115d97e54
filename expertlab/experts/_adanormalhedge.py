"""AdaNormalHedge (Luo & Schapire 2015): parameter-free aggregation, also for sleeping experts."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._backend import get_namespace
from ..sim._protocol import Learner
from ._common import _check_prior, _log_prior, _prior_softmax, check_init, check_round, instant_regret

__all__ = ["adanormalhedge", "AdaNormalHedgeState", "log_adanormalhedge_weight"]


class AdaNormalHedgeState(NamedTuple):
    """State of :func:`adanormalhedge` (leading axis: replications).

    Attributes
    ----------
    t : array of int, shape (n_reps,)
        Rounds seen.
    regret : array, shape (n_reps, n_experts)
        Sleeping regret :math:`R_i` (``L_hat - L_i`` when every expert is awake).
    abs_regret : array, shape (n_reps, n_experts)
        :math:`C_i = \\sum |r_i|` over the rounds where expert ``i`` was awake.
    log_prior : array, shape (n_reps, n_experts)
        ``log(prior)``, constant.
    """

    t: object
    regret: object
    abs_regret: object
    log_prior: object


def log_adanormalhedge_weight(regret, abs_regret):
    r"""``log w(R, C)`` with :math:`w(R, C) = \tfrac12(\Phi(R+1, C+1) - \Phi(R-1, C+1))`.

    Parameters
    ----------
    regret : array
        Cumulative (sleeping) regrets :math:`R`.
    abs_regret : array, same shape
        :math:`C = \sum |r| \ge 0`.

    Returns
    -------
    array
        :math:`\ln w(R, C)`: ``-inf`` exactly where :math:`w = 0`
        (:math:`R \le -1`), finite elsewhere, also when :math:`\Phi` itself
        overflows.

    Notes
    -----
    With :math:`\Phi(R, C) = \exp([R]_+^2 / (3C))`, :math:`a = [R+1]_+^2/(3(C+1))`
    and :math:`b = [R-1]_+^2/(3(C+1))`,
    :math:`\ln w = \ln\tfrac12 + a + \ln(1 - e^{-(a - b)})`, where
    :math:`a - b = 4R/(3(C+1))` for :math:`R \ge 1` is formed without
    subtracting the two squares, and :math:`\ln(1 - e^{-d})` is
    ``log(-expm1(-d))``.

    Examples
    --------
    >>> import numpy as np
    >>> w = np.exp(log_adanormalhedge_weight(np.array([0.0, -1.0]), np.array([0.0, 1.0])))
    >>> bool(np.isclose(w[0], 0.5 * (np.exp(1 / 3) - 1.0))), float(w[1])
    (True, 0.0)
    """
    xp = get_namespace(regret, abs_regret)
    regret = xp.asarray(regret, dtype=xp.float64)
    abs_regret = xp.asarray(abs_regret, dtype=xp.float64)
    c1 = 3.0 * (abs_regret + 1.0)
    up = xp.maximum(regret + 1.0, 0.0)
    a = up * up / c1
    gap = xp.where(regret >= 1.0, 4.0 * regret / c1, a)  # a - b, >= 0
    pos = gap > 0
    log_diff = xp.log(-xp.expm1(-xp.where(pos, gap, 1.0)))
    return xp.where(pos, math.log(0.5) + a + log_diff, -xp.inf)


def adanormalhedge(prior=None) -> Learner:
    r"""AdaNormalHedge: parameter-free, adaptive aggregation of (sleeping) experts.

    Parameters
    ----------
    prior : array_like of shape (n_experts,), optional
        Prior weights :math:`\pi` (finite, non-negative, summing to 1).
        Default: uniform.  Its length is checked against ``n_experts`` in
        ``init``.

    Returns
    -------
    Learner
        A full-information learner (array code over NumPy/CuPy; no compiled
        kernel).  ``init(n_reps, n_experts, xp)`` returns an
        :class:`AdaNormalHedgeState`; ``act(state, key, awake)`` returns ``p``
        of shape ``(n_reps, n_experts)``; ``update(state, p, loss,
        awake=None, *, check=True)`` returns the next state.

    Notes
    -----
    With :math:`\Phi(R, C) = \exp\bigl([R]_+^2 / (3C)\bigr)` and
    :math:`w(R, C) = \tfrac12\bigl(\Phi(R+1, C+1) - \Phi(R-1, C+1)\bigr)`,
    the learner plays

    .. math::

        p_{t,i} \propto \pi_i\, w(R_{t-1,i}, C_{t-1,i}) \quad (i \text{ awake}),
        \qquad
        R_{t,i} = R_{t-1,i} + r_{t,i},\quad C_{t,i} = C_{t-1,i} + |r_{t,i}|,

    with :math:`r_{t,i} = \langle p_t, \ell_t\rangle - \ell_{t,i}` for awake
    experts; asleep experts get probability 0 and keep :math:`R_i, C_i`
    frozen (the paper's sleeping-experts use).  The paper's potential
    argument keeps :math:`\sum_i \pi_i \Phi(R_{T,i}, C_{T,i}) \le B_T`
    below, which yields for every expert :math:`k` and every :math:`T`

    .. math::

        R_{T,k} \le \sqrt{3\, C_{T,k} \ln(B_T/\pi_k)},
        \qquad B_T = 1 + \tfrac32 \sum_i \pi_i \bigl(1 + \ln(1 + C_{T,i})\bigr),

    and, against any comparator distribution :math:`u`, the paper's bound
    :math:`\sqrt{3 (u^\top C_T)(\mathrm{KL}(u\|\pi) + \ln B_T + \ln(1 + \ln N))}`.
    Since :math:`C_{T,k} \le \sum_t |r_{t,k}|`, the bound is small when expert
    :math:`k` agrees with the learner, e.g. :math:`O(\ln N + \ln\ln T)` when a
    perfect expert exists.

    The weights are computed in log space by ``log_adanormalhedge_weight``
    and normalised by subtracting the largest log-weight over the awake
    experts, so :math:`\Phi` never overflows.  When every awake expert has
    :math:`w = 0` (all :math:`R_i \le -1`; the paper lets the learner play
    anything) this implementation plays the prior restricted to the awake
    experts, i.e. the uniform distribution on them for the default prior.

    [validated-rates]

    References
    ----------
    .. [1] H. Luo and R. E. Schapire, "Achieving all with no parameters:
       AdaNormalHedge", COLT 2015 (arXiv:1502.05934), the algorithm and
       Theorem 1 (the regret bound above), and the paper's application to
       sleeping experts (section number not re-checked against the text).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import instances
    >>> from expertlab.experts import adanormalhedge
    >>> learner = adanormalhedge(prior=[0.5, 0.25, 0.25])
    >>> state = learner.init(3, n_reps=2)
    >>> print(learner.act(state)[0][0])
    [0.5  0.25 0.25]
    >>> inst = instances.fair_coins(4)  # every learner's expected regret is known exactly
    >>> res = sim.run(adanormalhedge(), inst, horizon=100, n_reps=400, seed=1)
    >>> bool(abs(res.mean()[-1] - inst.exact_expected_regret(100)) < 3 * res.stderr()[-1])
    True
    """
    prior = _check_prior(prior)
    params = {} if prior is None else {"prior": prior.tolist()}

    def init(spec, n_reps, keys=None, xp=np):
        n_reps, n_experts = check_init(n_reps, spec)
        z = xp.zeros((n_reps, n_experts))
        return AdaNormalHedgeState(t=xp.zeros(n_reps, dtype=xp.int64), regret=z, abs_regret=xp.zeros_like(z),
                                   log_prior=_log_prior(prior, n_reps, n_experts, xp))

    def act(state, awake=None, key=None):
        logits = state.log_prior + log_adanormalhedge_weight(state.regret, state.abs_regret)
        return _prior_softmax(logits, state.log_prior, awake), state

    def update(state, p, feedback, key=None):
        loss, awake = feedback
        check_round(state.regret, p, loss, awake)
        xp = get_namespace(state.regret)
        r, _ = instant_regret(p, loss, awake)
        return AdaNormalHedgeState(t=state.t + 1, regret=state.regret + r, abs_regret=state.abs_regret + xp.abs(r),
                                   log_prior=state.log_prior)

    return Learner(name="adanormalhedge", feedback="full", init=init, act=act, update=update, params=params,
                   kernel=None)
