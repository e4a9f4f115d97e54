"""ML-Prod: Prod with one adaptive learning rate per expert (Gaillard, Stoltz & van Erven 2014)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._backend import get_namespace
from ..sim._protocol import Learner
from ._common import _check_prior, _log_prior, _prior_softmax, check_init, check_round, instant_regret, log_n

__all__ = ["ml_prod", "MLProdState"]

#: Largest learning rate: with losses in [0, 1], |r| <= 1 and 1 + eta r >= 1/2.
_ETA_MAX = 0.5


class MLProdState(NamedTuple):
    """State of :func:`ml_prod` (leading axis: replications).

    Attributes
    ----------
    t : array of int, shape (n_reps,)
        Rounds seen.
    regret : array, shape (n_reps, n_experts)
        Sleeping regret :math:`R_i` (kept for diagnostics; the weights use
        ``log_weight``).
    variance : array, shape (n_reps, n_experts)
        :math:`V_i = \\sum r_i^2` over the rounds where expert ``i`` was awake.
    eta : array, shape (n_reps, n_experts)
        Current learning rates :math:`\\eta_{i,t}`.
    log_weight : array, shape (n_reps, n_experts)
        :math:`\\ln w_{i,t}` (``-inf`` for experts with prior 0).
    log_prior : array, shape (n_reps, n_experts)
        ``log(prior)``, constant.
    """

    t: object
    regret: object
    variance: object
    eta: object
    log_weight: object
    log_prior: object


def _rate(variance, ln_n, xp):
    """``min(1/2, sqrt(ln N / (1 + V)))``; the cap alone when ``N = 1``."""
    if ln_n == 0.0:
        return xp.full(variance.shape, _ETA_MAX)
    return xp.minimum(_ETA_MAX, xp.sqrt(ln_n / (1.0 + variance)))


def ml_prod(prior=None) -> Learner:
    r"""ML-Prod: Prod with multiple, data-dependent learning rates.

    Parameters
    ----------
    prior : array_like of shape (n_experts,), optional
        Initial weights :math:`\pi` (finite, non-negative, summing to 1).
        Default: uniform.  Its length is checked against ``n_experts`` in
        ``init``.

    Returns
    -------
    Learner
        A full-information learner (array code over NumPy/CuPy; no compiled
        kernel).  ``init(n_reps, n_experts, xp)`` returns an
        :class:`MLProdState`; ``act(state, key, awake)`` returns ``p`` of
        shape ``(n_reps, n_experts)``; ``update(state, p, loss, awake=None, *,
        check=True)`` returns the next state.

    Notes
    -----
    Each expert keeps a weight :math:`w_{i,t}` and a rate :math:`\eta_{i,t}`,
    with :math:`w_{i,0} = \pi_i`.  In round :math:`t` the learner plays

    .. math::

        p_{t,i} = \frac{\eta_{i,t-1} w_{i,t-1}}{\sum_j \eta_{j,t-1} w_{j,t-1}},

    observes :math:`r_{t,i} = \langle p_t, \ell_t\rangle - \ell_{t,i}` and updates

    .. math::

        \eta_{i,t} = \min\Bigl\{\tfrac12,\ \sqrt{\frac{\ln N}{1 + \sum_{s \le t} r_{s,i}^2}}\Bigr\},
        \qquad
        w_{i,t} = \bigl(w_{i,t-1}\,(1 + \eta_{i,t-1} r_{t,i})\bigr)^{\eta_{i,t}/\eta_{i,t-1}},

    kept in log space: :math:`\ln w_{i,t} = (\eta_{i,t}/\eta_{i,t-1})
    (\ln w_{i,t-1} + \ln(1 + \eta_{i,t-1} r_{t,i}))`.  The initial rate is
    :math:`\eta_{i,0} = \min\{1/2, \sqrt{\ln N}\}`.  Because
    :math:`\sum_i \eta_{i,t-1} w_{i,t-1} r_{t,i} = 0`, the sum of the weights
    grows only through the rate changes, and the paper's bound is

    .. math::

        R_{T,k} \le \frac{\ln(1/\pi_k)}{\eta_{k,0}} + \sum_{t=1}^T \eta_{k,t-1} r_{t,k}^2
        + \frac{1}{\eta_{k,T}} \ln\Bigl(1 + \frac1e \sum_{t=1}^T \sum_j
        \Bigl(\frac{\eta_{j,t-1}}{\eta_{j,t}} - 1\Bigr)\Bigr),

    and, as the double sum is at most :math:`N \ln(1 + T)` for the rates above,
    :math:`R_{T,k} = O\bigl((\sqrt{\ln N} + \ln\ln T / \sqrt{\ln N})
    \sqrt{1 + \sum_t r_{t,k}^2} + \ln N\bigr)`: a second-order bound in the
    excess losses of expert :math:`k`.

    Departures from other readings: the cap :math:`1/2` assumes losses in
    :math:`[0, 1]` (so :math:`|r| \le 1`), as in the paper; the variant of
    the ``opera`` R package replaces it by
    :math:`1/(2\max_{s \le t}|r_{s,i}|)` and updates
    :math:`\ln w \leftarrow (\eta'/\eta)\ln w + \ln(1 + \eta' r)`, which is not
    the paper's update and is not used here.  With an ``awake`` mask an asleep
    expert has :math:`r_{t,i} = 0`, so its rate and weight are frozen and it
    gets no probability (the specialists reduction); the bound then holds for
    its regret on its own awake rounds.  For ``N = 1`` (:math:`\ln N = 0`) the
    rate is fixed at :math:`1/2`; the single expert gets probability 1 anyway.

    [validated-rates]

    References
    ----------
    .. [1] P. Gaillard, G. Stoltz and T. van Erven, "A second-order bound with
       excess losses", COLT 2014 (arXiv:1402.2044), Algorithm "ML-Prod",
       its regret bound for non-increasing rates :math:`\eta_{i,t} \le 1/2`
       (Theorem 3) and the tuning above (Corollary 4).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import instances
    >>> from expertlab.experts import ml_prod
    >>> learner = ml_prod(prior=[0.5, 0.25, 0.25])
    >>> state = learner.init(3, n_reps=2)
    >>> print(learner.act(state)[0][0])
    [0.5  0.25 0.25]
    >>> inst = instances.fair_coins(4)  # every learner's expected regret is known exactly
    >>> res = sim.run(ml_prod(), inst, horizon=100, n_reps=400, seed=1)
    >>> bool(abs(res.mean()[-1] - inst.exact_expected_regret(100)) < 3 * res.stderr()[-1])
    True
    """
    prior = _check_prior(prior)
    params = {} if prior is None else {"prior": prior.tolist()}

    def init(spec, n_reps, keys=None, xp=np):
        n_reps, n_experts = check_init(n_reps, spec)
        lp = _log_prior(prior, n_reps, n_experts, xp)
        z = xp.zeros((n_reps, n_experts))
        return MLProdState(t=xp.zeros(n_reps, dtype=xp.int64), regret=z, variance=xp.zeros_like(z),
                           eta=_rate(z, log_n(n_experts), xp), log_weight=lp, log_prior=lp)

    def act(state, awake=None, key=None):
        xp = get_namespace(state.eta)
        return _prior_softmax(xp.log(state.eta) + state.log_weight, state.log_prior, awake), state

    def update(state, p, feedback, key=None):
        loss, awake = feedback
        check_round(state.regret, p, loss, awake)
        xp = get_namespace(state.eta)
        r, _ = instant_regret(p, loss, awake)
        variance = state.variance + r * r
        eta = _rate(variance, log_n(state.eta.shape[1]), xp)
        log_weight = (eta / state.eta) * (state.log_weight + xp.log1p(state.eta * r))
        return MLProdState(t=state.t + 1, regret=state.regret + r, variance=variance, eta=eta,
                           log_weight=log_weight, log_prior=state.log_prior)

    return Learner(name="ml_prod", feedback="full", init=init, act=act, update=update, params=params,
                   kernel=None)
