"""BOA: Bernstein Online Aggregation with one adaptive learning rate per expert (Wintenberger 2017)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._backend import get_namespace
from ..sim._protocol import Learner
from ._common import _check_prior, _log_prior, _prior_softmax, check_init, check_round, instant_regret

__all__ = ["boa", "BOAState"]

#: Largest learning rate 1/(2E) with the loss range E = 1 (losses in [0, 1]).
_ETA_MAX = 0.5


class BOAState(NamedTuple):
    """State of :func:`boa` (leading axis: replications).

    Attributes
    ----------
    t : array of int, shape (n_reps,)
        Rounds seen.
    regret : array, shape (n_reps, n_experts)
        Sleeping regret :math:`R_i` (diagnostic; the weights use ``surrogate``).
    variance : array, shape (n_reps, n_experts)
        :math:`V_i = \\sum r_i^2` over the rounds where expert ``i`` was awake.
    eta : array, shape (n_reps, n_experts)
        Current learning rates :math:`\\eta_{i,t}`.
    surrogate : array, shape (n_reps, n_experts)
        Second-order corrected regret :math:`\\tilde R_i = \\sum (r_i - \\eta_i r_i^2)`.
    log_prior : array, shape (n_reps, n_experts)
        ``log(prior)``, constant.
    """

    t: object
    regret: object
    variance: object
    eta: object
    surrogate: object
    log_prior: object


def _rate(variance, log_inv_prior, xp):
    """``min(1/2, sqrt(ln(1/pi_i) / V_i))``, equal to 1/2 while ``V_i = 0``."""
    pos = variance > 0
    ratio = log_inv_prior / xp.where(pos, variance, 1.0)
    return xp.where(pos, xp.minimum(_ETA_MAX, xp.sqrt(ratio)), _ETA_MAX)


def _log_eta(eta, xp):
    pos = eta > 0
    return xp.where(pos, xp.log(xp.where(pos, eta, 1.0)), -xp.inf)


def boa(prior=None) -> Learner:
    r"""BOA: Bernstein Online Aggregation with multiple adaptive learning rates.

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
        kernel).  ``init(n_reps, n_experts, xp)`` returns a :class:`BOAState`;
        ``act(state, key, awake)`` returns ``p`` of shape ``(n_reps,
        n_experts)``; ``update(state, p, loss, awake=None, *, check=True)``
        returns the next state.

    Notes
    -----
    BOA is exponential weights on the regrets with a second-order
    ("Bernstein") correction, each expert with its own rate.  With
    :math:`r_{t,i} = \langle p_t, \ell_t\rangle - \ell_{t,i}`,

    .. math::

        \tilde R_{t,i} = \sum_{s \le t} \bigl(r_{s,i} - \eta_{i,s-1} r_{s,i}^2\bigr),
        \qquad
        \eta_{i,t} = \min\Bigl\{\frac{1}{2E},\ \sqrt{\frac{\ln(1/\pi_i)}{\sum_{s \le t} r_{s,i}^2}}\Bigr\},

    .. math::

        p_{t+1,i} = \frac{\pi_i\, \eta_{i,t} \exp(\eta_{i,t} \tilde R_{t,i})}
                         {\sum_j \pi_j\, \eta_{j,t} \exp(\eta_{j,t} \tilde R_{t,j})},

    with the loss range :math:`E = 1` (losses in :math:`[0,1]`, so
    :math:`|r| \le 1`), :math:`\tilde R_{0,i} = 0` and
    :math:`\eta_{i,0} = 1/(2E) = 1/2` (the rate while
    :math:`\sum r^2 = 0`).  The correction uses the rate
    :math:`\eta_{i,s-1}` with which round :math:`s` was played.  Since
    :math:`e^{x - x^2} \le 1 + x` for :math:`x \ge -1/2`, the potential
    :math:`\sum_i \pi_i e^{\eta_{i,t} \tilde R_{t,i}}` grows only through the
    rate changes, which gives, for every expert :math:`k`,

    .. math::

        R_{T,k} \le \frac{\ln(1/\pi_k) + \ln\bigl(1 + \frac1e \sum_{t}
        \sum_j \pi_j (\eta_{j,t-1}/\eta_{j,t} - 1)\bigr)}{\eta_{k,T}}
        + \sum_{t=1}^T \eta_{k,t-1} r_{t,k}^2
        = O\Bigl(\bigl(\sqrt{\ln(1/\pi_k)} + \tfrac{\ln\ln T}{\sqrt{\ln(1/\pi_k)}}\bigr)
          \sqrt{\textstyle\sum_t r_{t,k}^2} + \ln(1/\pi_k)\Bigr).

    This is the paper's "BOA with multiple learning rates" for a known loss
    range :math:`E`; its fully adaptive version, which also learns
    :math:`E` by a doubling trick on :math:`\max|r|`, is not implemented.
    The weights and rates above are *reconstructed* from the paper's
    description (the text of its adaptive theorem could not be consulted
    here); the bound stated is the one this construction satisfies, proved by
    the potential argument just sketched.  The ``opera`` R package implements
    instead: :math:`E_i \mathrel{+}= 2.2\, r_i^2`,
    :math:`\eta_i = E_i^{-1/2}`, :math:`\tilde r_i = r_i - r_i^2/\sqrt{E_i}`
    with the rate *after* the round; that heuristic drops the
    :math:`\ln(1/\pi_i)` numerator and the cap :math:`1/(2E)`, and is not
    what is implemented here.  With an ``awake`` mask an asleep expert has
    :math:`r_{t,i} = 0`, so its rate and :math:`\tilde R_i` are frozen and it
    gets no probability (the specialists reduction).  If every awake expert
    has weight 0 (prior 0, or :math:`\ln(1/\pi_i) = 0`, i.e. a point-mass
    prior) the learner plays the prior restricted to the awake experts, or
    the uniform distribution on them.

    [validated-rates]

    References
    ----------
    .. [1] O. Wintenberger, "Optimal learning with Bernstein online
       aggregation", Machine Learning 106(1):119-141, 2017
       (arXiv:1404.1356), the BOA with multiple learning rates and its
       second-order regret bound (Section 3; theorem number not re-checked
       against the paper's text for this implementation).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import instances
    >>> from expertlab.experts import boa
    >>> learner = boa(prior=[0.5, 0.25, 0.25])
    >>> state = learner.init(3, n_reps=2)
    >>> print(learner.act(state)[0][0])
    [0.5  0.25 0.25]
    >>> inst = instances.fair_coins(4)  # every learner's expected regret is known exactly
    >>> res = sim.run(boa(), inst, horizon=100, n_reps=400, seed=1)
    >>> bool(abs(res.mean()[-1] - inst.exact_expected_regret(100)) < 3 * res.stderr()[-1])
    True
    """
    prior = _check_prior(prior)
    params = {} if prior is None else {"prior": prior.tolist()}

    def init(spec, n_reps, keys=None, xp=np):
        n_reps, n_experts = check_init(n_reps, spec)
        lp = _log_prior(prior, n_reps, n_experts, xp)
        z = xp.zeros((n_reps, n_experts))
        return BOAState(t=xp.zeros(n_reps, dtype=xp.int64), regret=z, variance=xp.zeros_like(z),
                        eta=xp.full((n_reps, n_experts), _ETA_MAX), surrogate=xp.zeros_like(z),
                        log_prior=lp)

    def act(state, awake=None, key=None):
        xp = get_namespace(state.eta)
        logits = state.log_prior + _log_eta(state.eta, xp) + state.eta * state.surrogate
        return _prior_softmax(logits, state.log_prior, awake), state

    def update(state, p, feedback, key=None):
        loss, awake = feedback
        check_round(state.regret, p, loss, awake)
        xp = get_namespace(state.eta)
        r, _ = instant_regret(p, loss, awake)
        r2 = r * r
        variance = state.variance + r2
        surrogate = state.surrogate + r - state.eta * r2
        eta = _rate(variance, -state.log_prior, xp)
        return BOAState(t=state.t + 1, regret=state.regret + r, variance=variance, eta=eta,
                        surrogate=surrogate, log_prior=state.log_prior)

    return Learner(name="boa", feedback="full", init=init, act=act, update=update, params=params,
                   kernel=None)
