"""Fixed share (Herbster & Warmuth 1998): exponential weights with a uniform share step."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba.extending import register_jitable

from .._backend import get_namespace, logsumexp
from .._validation import check_float, check_int
from ..sim._protocol import KernelSpec, Learner
from ._common import check_init, check_round, log_n, masked_softmax

__all__ = ["fixed_share", "FixedShareState"]

# rate modes: 0 fixed, 1 anytime, 2 tuned to (horizon, n_switches)
_FIXED, _ANYTIME, _TUNED = 0.0, 1.0, 2.0


class FixedShareState(NamedTuple):
    """State of :func:`fixed_share` (leading axis: replications).

    Attributes
    ----------
    t : array of int, shape (n_reps,)
        Rounds seen.
    log_w : array, shape (n_reps, n_experts)
        Logarithm of the normalised weights over all experts (asleep ones
        included).
    """

    t: object
    log_w: object


def _binary_entropy(x: float) -> float:
    """Binary entropy in nats, with ``0 ln 0 = 0``."""
    if x <= 0.0 or x >= 1.0:
        return 0.0
    return -x * math.log(x) - (1.0 - x) * math.log1p(-x)


def tuned_rates(horizon: int, n_switches: int, n_experts: int):
    """``(eta, alpha, bound)`` of the tuned fixed share for ``horizon`` rounds and ``n_switches`` switches.

    ``alpha = m / (T - 1)``, ``C = (m + 1) ln N + (T - 1) H(alpha)``,
    ``eta = sqrt(8 C / T)`` and the tracking-regret bound ``sqrt(T C / 2)``.
    """
    horizon = check_int(horizon, "horizon")
    n_switches = check_int(n_switches, "n_switches", minimum=0, maximum=horizon - 1)
    n_experts = check_int(n_experts, "n_experts")
    alpha = n_switches / (horizon - 1) if n_switches > 0 else 0.0
    c = (n_switches + 1) * log_n(n_experts) + (horizon - 1) * _binary_entropy(alpha)
    return math.sqrt(8.0 * c / horizon), alpha, math.sqrt(horizon * c / 2.0)


@register_jitable
def _k_entropy(x):
    if x <= 0.0 or x >= 1.0:
        return 0.0
    return -x * math.log(x) - (1.0 - x) * math.log1p(-x)


@register_jitable
def _k_logaddexp(a, b):
    m = a if a > b else b
    if m == -np.inf:
        return -np.inf
    return m + math.log1p(math.exp(-abs(a - b)))


@register_jitable
def _k_rates(prm, s, t):
    """``(eta, alpha)`` for the update that closes round ``t`` (0-based)."""
    eta = s[1]
    if prm[0] == 1.0:
        eta = math.sqrt(8.0 * s[0] / (t + 1.0))
    alpha = s[2]
    if prm[2] == 1.0:
        alpha = 1.0 / (t + 2.0)
    return eta, alpha


# prm = [eta_mode, eta, alpha_mode, alpha, horizon, n_switches]; S = [log w]; s = [ln N, eta, alpha]


@register_jitable
def _k_init(prm, S, s):
    n = S.shape[1]
    s[0] = math.log(n) if n > 1 else 0.0
    s[1] = prm[1]
    s[2] = prm[3]
    if prm[0] == 2.0:
        T = prm[4]
        m = prm[5]
        a = m / (T - 1.0) if m > 0.0 else 0.0
        c = (m + 1.0) * s[0] + (T - 1.0) * _k_entropy(a)
        s[1] = math.sqrt(8.0 * c / T)
        s[2] = a
    lw0 = -math.log(n)
    for i in range(n):
        S[0, i] = lw0


@register_jitable
def _k_act(prm, S, s, t, key, awake, p):
    n = S.shape[1]
    mx = -np.inf
    for i in range(n):
        if awake[i] and S[0, i] > mx:
            mx = S[0, i]
    z = 0.0
    for i in range(n):
        if awake[i]:
            w = math.exp(S[0, i] - mx)
            p[i] = w
            z += w
        else:
            p[i] = 0.0
    inv = 1.0 / z
    for i in range(n):
        p[i] *= inv


@register_jitable
def _k_update(prm, S, s, t, loss, awake, p):
    n = S.shape[1]
    eta, alpha = _k_rates(prm, s, t)
    # 1. exponential update of the awake experts, keeping their total mass
    c1 = -np.inf
    c2 = -np.inf
    for i in range(n):
        if awake[i]:
            if S[0, i] > c1:
                c1 = S[0, i]
            b = S[0, i] - eta * loss[i]
            if b > c2:
                c2 = b
    z1 = 0.0
    z2 = 0.0
    for i in range(n):
        if awake[i]:
            z1 += math.exp(S[0, i] - c1)
            z2 += math.exp(S[0, i] - eta * loss[i] - c2)
    shift = (math.log(z1) + c1) - (math.log(z2) + c2)
    for i in range(n):
        if awake[i]:
            S[0, i] = S[0, i] - eta * loss[i] + shift
    # 2. renormalise over all experts
    c = -np.inf
    for i in range(n):
        if S[0, i] > c:
            c = S[0, i]
    z = 0.0
    for i in range(n):
        z += math.exp(S[0, i] - c)
    lz = math.log(z) + c
    for i in range(n):
        S[0, i] = S[0, i] - lz
    # 3. share: w <- alpha / N + (1 - alpha) w
    if alpha > 0.0:
        la = math.log(alpha / n)
        l1a = math.log1p(-alpha) if alpha < 1.0 else -np.inf
        for i in range(n):
            S[0, i] = _k_logaddexp(la, l1a + S[0, i])


def fixed_share(eta=None, alpha=None, *, horizon=None, n_switches=None) -> Learner:
    r"""Fixed share: track the best *sequence* of experts with a uniform share step.

    Parameters
    ----------
    eta : float, optional
        Fixed learning rate :math:`\eta > 0`.  Default (and when only
        ``alpha`` is given): the anytime rate :math:`\eta_t = \sqrt{8 \ln N / t}`.
    alpha : float, optional
        Fixed share rate :math:`\alpha \in [0, 1]` (``alpha=0`` is Hedge).
        Default (and when only ``eta`` is given): :math:`\alpha_t = 1/(t + 1)`.
    horizon : int, optional
        Horizon :math:`T` for the tuned rates; needs ``n_switches`` and
        excludes ``eta`` and ``alpha``.
    n_switches : int, optional
        Number :math:`m \in [0, T - 1]` of switches of the comparator
        sequence the tuning aims at.

    Returns
    -------
    Learner
        A full-information learner with a fused Numba/CUDA kernel; ``act``
        returns an array of shape ``(n_reps, n_experts)``.

    Notes
    -----
    Starting from :math:`w_1 = (1/N, \dots, 1/N)`, play :math:`p_t = w_t`
    and after the losses :math:`\ell_t` are revealed

    .. math::

        v_{t,i} = \frac{w_{t,i} e^{-\eta_t \ell_{t,i}}}{\sum_j w_{t,j} e^{-\eta_t \ell_{t,j}}},
        \qquad
        w_{t+1,i} = \frac{\alpha_t}{N} + (1 - \alpha_t) v_{t,i}.

    This is the form of Cesa-Bianchi & Lugosi [2]_, Section 5.2, where the
    shared mass also returns to the expert it came from.  Herbster &
    Warmuth's fixed share [1]_ pools :math:`\alpha' v_{t,i}` to the other
    :math:`N - 1` experts only; the two coincide with
    :math:`\alpha = \alpha' N / (N - 1)`.

    **Tuned rates** (``horizon``, ``n_switches``): with
    :math:`H(x) = -x \ln x - (1 - x)\ln(1 - x)`,

    .. math::

        \alpha = \frac{m}{T - 1}, \qquad
        C = (m + 1) \ln N + (T - 1) H\Bigl(\frac{m}{T - 1}\Bigr), \qquad
        \eta = \sqrt{8 C / T},

    and for every sequence of experts with at most :math:`m` switches the
    tracking regret is at most :math:`\sqrt{T C / 2}` ([2]_, Corollary 5.1,
    from the bound :math:`C/\eta + \eta T / 8` of Section 5.2).
    Reconstructed: we could not check the book's statement and re-derived
    :math:`C` from that potential argument (the prior weight of a sequence
    with :math:`m` switches is at least
    :math:`N^{-(m+1)} \alpha^m (1 - \alpha)^{T - m - 1}`);
    :math:`(T - 1) H(m/(T-1)) \le m \ln(e (T - 1)/m)`.  The tuned values
    and the bound are computed when the learner is built.

    **Default (anytime) rates**, our choice, not from the papers: the update
    closing round :math:`t` uses :math:`\eta_t = \sqrt{8 \ln N / t}` and
    :math:`\alpha_t = 1/(t + 1)`.  With a fixed :math:`\eta` this
    :math:`\alpha_t` costs at most :math:`\ln T` per switch plus
    :math:`\ln T` in total for the rounds without a switch (the product
    :math:`\prod_t (1 - \alpha_t) = 1/T` telescopes), so no knowledge of
    :math:`T` or :math:`m` is needed; the time-varying :math:`\eta_t` is a
    heuristic with no proven bound here.

    **Sleeping experts** (``awake`` mask): the exponential step moves only
    the awake experts and keeps their total mass (specialists: asleep
    weights are frozen), then the share step mixes over all :math:`N`
    experts; :math:`p_t` is :math:`w_t` restricted to the awake experts and
    renormalised.  Weights are stored as normalised log-weights, so nothing
    underflows even with :math:`\alpha = 0`.

    [validated-rates]

    References
    ----------
    .. [1] M. Herbster and M. K. Warmuth, "Tracking the best expert",
       Machine Learning 32(2), 151--178, 1998 (fixed share, Section 3).
    .. [2] N. Cesa-Bianchi and G. Lugosi, *Prediction, Learning, and Games*,
       Cambridge University Press, 2006, Section 5.2 and Corollary 5.1
       (tracking regret of fixed share).

    Examples
    --------
    >>> import math
    >>> import numpy as np
    >>> from expertlab.experts import fixed_share
    >>> learner = fixed_share(eta=math.log(2), alpha=0.5)
    >>> state = learner.init(2, n_reps=1)
    >>> p, state = learner.act(state)
    >>> state = learner.update(state, p, (np.array([[0.0, 1.0]]), None))
    >>> learner.act(state)[0] * 12  # v = (2/3, 1/3); w = 1/4 + v/2 = (7/12, 5/12)
    array([[7., 5.]])
    """
    if horizon is not None or n_switches is not None:
        if horizon is None or n_switches is None:
            raise ValueError("horizon and n_switches must be given together")
        if eta is not None or alpha is not None:
            raise ValueError("give either eta/alpha or horizon/n_switches, not both")
        horizon = check_int(horizon, "horizon")
        n_switches = check_int(n_switches, "n_switches", minimum=0, maximum=horizon - 1)
        eta_mode = alpha_mode = _TUNED
    else:
        eta_mode = _ANYTIME if eta is None else _FIXED
        alpha_mode = _ANYTIME if alpha is None else _FIXED
        if eta is not None:
            eta = check_float(eta, "eta", positive=True)
        if alpha is not None:
            alpha = check_float(alpha, "alpha", minimum=0.0, maximum=1.0)
    params = {"eta": eta, "alpha": alpha, "horizon": horizon, "n_switches": n_switches}
    params = {k: v for k, v in params.items() if v is not None}

    def _rates(t, n, xp):
        """``(eta, alpha)`` of shape ``(n_reps, 1)`` for the update closing round ``t + 1``."""
        tf = xp.astype(t, xp.float64)
        if eta_mode == _TUNED:
            e, a, _ = tuned_rates(horizon, n_switches, n)
            return xp.full((t.shape[0], 1), e), xp.full((t.shape[0], 1), a)
        e = xp.sqrt(8.0 * log_n(n) / (tf + 1.0)) if eta_mode == _ANYTIME else xp.full(t.shape, eta)
        a = 1.0 / (tf + 2.0) if alpha_mode == _ANYTIME else xp.full(t.shape, alpha)
        return e[:, None], a[:, None]

    def init(spec, n_reps, keys=None, xp=np):
        n_reps, n_experts = check_init(n_reps, spec)
        return FixedShareState(t=xp.zeros(n_reps, dtype=xp.int64),
                               log_w=xp.full((n_reps, n_experts), -math.log(n_experts)))

    def act(state, awake=None, key=None):
        return masked_softmax(state.log_w, awake), state

    def update(state, p, feedback, key=None):
        loss, awake = feedback
        check_round(state.log_w, p, loss, awake)
        xp = get_namespace(state.log_w)
        n = state.log_w.shape[1]
        e, a = _rates(state.t, n, xp)
        lw = state.log_w
        b = lw - e * loss
        shift = logsumexp(lw, axis=1, where=awake) - logsumexp(b, axis=1, where=awake)
        lw = b + shift[:, None] if awake is None else xp.where(awake, b + shift[:, None], lw)
        lw = lw - logsumexp(lw, axis=1)[:, None]
        pos = a > 0.0
        la = xp.where(pos, xp.log(xp.where(pos, a, 1.0) / n), -xp.inf)
        below = a < 1.0
        l1a = xp.where(below, xp.log1p(-xp.where(below, a, 0.0)), -xp.inf)
        lw = xp.where(pos, xp.logaddexp(la, l1a + lw), lw)
        return FixedShareState(t=state.t + 1, log_w=lw)

    prm = np.array([eta_mode, eta or 0.0, alpha_mode, alpha or 0.0, float(horizon or 0),
                    float(n_switches or 0)])
    kernel = KernelSpec(n_rows=1, n_scalars=3, params=prm, init=_k_init, act=_k_act, update=_k_update)
    return Learner(name="fixed_share", feedback="full", init=init, act=act, update=update, params=params,
                   kernel=kernel)
