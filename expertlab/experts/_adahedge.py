"""AdaHedge: Hedge with the learning rate tuned by the cumulative mixability gap."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba.extending import register_jitable

from .._backend import get_namespace
from ..sim._protocol import KernelSpec, Learner
from ._common import check_init, check_round, instant_regret, log_n, masked_softmax
from ._ftl import _TIE_RTOL, _k_add_regret, _k_leaders, leader_weights

__all__ = ["adahedge", "AdaHedgeState"]


class AdaHedgeState(NamedTuple):
    """State of :func:`adahedge` (leading axis: replications).

    Attributes
    ----------
    t : array of int, shape (n_reps,)
        Rounds seen.
    regret : array, shape (n_reps, n_experts)
        Sleeping regret ``R_i`` of each expert (``L_hat - L_i`` when all awake).
    gap : array, shape (n_reps,)
        Cumulative mixability gap ``Delta``; ``eta = ln N / Delta`` (infinite
        while ``Delta = 0``).
    """

    t: object
    regret: object
    gap: object


#: A cumulative gap below ``ln N * _TINY_GAP`` (a rate above 1e280) counts as zero: the learner
#: follows the leader, the limit of the update, so that ``eta * R`` can never overflow.
_TINY_GAP = 1e-280


def _rate(gap, n):
    """``(ftl, eta)``: rows still at ``eta = inf`` and the finite rate of the others (1 where infinite)."""
    xp = get_namespace(gap)
    ftl_rows = ~(gap > log_n(n) * _TINY_GAP)
    eta = log_n(n) / xp.where(ftl_rows, 1.0, gap)
    return ftl_rows, xp.where(ftl_rows, 1.0, eta)


def _mixability_gap(regret, loss, awake, t, gap):
    """``delta_t = h_t - m_t`` for every replication, computed stably (see :func:`adahedge`)."""
    xp = get_namespace(regret)
    n = regret.shape[1]
    ftl_rows, eta = _rate(gap, n)
    eta = eta[:, None]
    big = xp.where(awake, loss, xp.inf) if awake is not None else loss
    lmin = xp.min(big, axis=1, keepdims=True)
    d = loss - lmin
    if awake is not None:
        d = xp.where(awake, d, 0.0)
    # finite eta: log-weights a = eta R over awake experts
    a = eta * regret
    if awake is not None:
        a = xp.where(awake, a, -xp.inf)
    c1 = xp.max(a, axis=1, keepdims=True)
    e = xp.exp(a - c1)
    z1 = xp.sum(e, axis=1)
    hz = xp.sum(e * d, axis=1)
    b = a - eta * d
    c2 = xp.max(b, axis=1, keepdims=True)
    z2 = xp.sum(xp.exp(b - c2), axis=1)
    delta_soft = hz / z1 + (xp.log(z2) + c2[:, 0] - xp.log(z1) - c1[:, 0]) / eta[:, 0]
    # eta = infinity: uniform over the leaders, m_t = min loss over the leaders
    w = leader_weights(regret, awake, t)
    h_ftl = xp.sum(w * d, axis=1)
    m_ftl = xp.min(xp.where(w > 0.0, d, xp.inf), axis=1)
    delta = xp.where(ftl_rows, h_ftl - m_ftl, delta_soft)
    return xp.where(delta > 0.0, delta, 0.0)


# -- scalar step functions -------------------------------------------------------
# prm = [0]; S = [R]; s = [Delta, ln N]


@register_jitable
def _k_init(prm, S, s):
    n = S.shape[1]
    s[0] = 0.0
    s[1] = math.log(n) if n > 1 else 0.0


@register_jitable
def _k_act(prm, S, s, t, key, awake, p):
    if not s[0] > s[1] * _TINY_GAP:
        _k_leaders(S, t, awake, p)
        return
    eta = s[1] / s[0]
    n = S.shape[1]
    mx = -np.inf
    for i in range(n):
        if awake[i]:
            v = eta * S[0, i]
            if v > mx:
                mx = v
    z = 0.0
    for i in range(n):
        if awake[i]:
            w = math.exp(eta * S[0, i] - mx)
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
    lmin = np.inf
    for i in range(n):
        if awake[i] and loss[i] < lmin:
            lmin = loss[i]
    if not s[0] > s[1] * _TINY_GAP:
        # eta = infinity: uniform weights over the leaders (as in _k_leaders)
        top = -np.inf
        for i in range(n):
            if awake[i] and S[0, i] > top:
                top = S[0, i]
        thr = top - _TIE_RTOL * (1.0 + t)
        k = 0
        h = 0.0
        m = np.inf
        for i in range(n):
            if awake[i] and S[0, i] >= thr:
                k += 1
                h += loss[i] - lmin
                if loss[i] - lmin < m:
                    m = loss[i] - lmin
        delta = h / k - m
    else:
        eta = s[1] / s[0]
        c1 = -np.inf
        c2 = -np.inf
        for i in range(n):
            if awake[i]:
                a = eta * S[0, i]
                if a > c1:
                    c1 = a
                b = a - eta * (loss[i] - lmin)
                if b > c2:
                    c2 = b
        z1 = 0.0
        hz = 0.0
        z2 = 0.0
        for i in range(n):
            if awake[i]:
                a = eta * S[0, i]
                e = math.exp(a - c1)
                z1 += e
                hz += e * (loss[i] - lmin)
                z2 += math.exp(a - eta * (loss[i] - lmin) - c2)
        delta = hz / z1 + (math.log(z2) + c2 - math.log(z1) - c1) / eta
    if delta > 0.0:
        s[0] += delta
    _k_add_regret(S, loss, awake, p)


def adahedge() -> Learner:
    r"""AdaHedge: Hedge whose learning rate is set by the cumulative mixability gap.

    Returns
    -------
    Learner
        A parameter-free full-information learner with a fused Numba/CUDA
        kernel; ``act`` returns an array of shape ``(n_reps, n_experts)``.

    Notes
    -----
    With :math:`R_{t-1,i}` the regret to expert :math:`i` (all experts
    awake: :math:`\hat L_{t-1} - L_{t-1,i}`), round :math:`t` plays

    .. math::

        \eta_t = \frac{\ln N}{\Delta_{t-1}}, \qquad
        w_{t,i} = \frac{e^{\eta_t R_{t-1,i}}}{\sum_j e^{\eta_t R_{t-1,j}}},

    then, with :math:`h_t = \langle w_t, \ell_t\rangle` (the Hedge loss) and
    :math:`m_t = -\eta_t^{-1} \ln \sum_i w_{t,i} e^{-\eta_t \ell_{t,i}}`
    (the mix loss), accumulates the mixability gap

    .. math::

        \delta_t = h_t - m_t \ge 0, \qquad \Delta_t = \Delta_{t-1} + \delta_t .

    **Convention for** :math:`\Delta_0 = 0`: :math:`\eta_t = \infty` while
    :math:`\Delta_{t-1} = 0`.  Then :math:`w_t` is uniform over the leaders
    (the experts of largest :math:`R_{t-1,i}`: FTL, with the tie tolerance
    of :func:`expertlab.experts.ftl`) and :math:`m_t` is its
    :math:`\eta \to \infty` limit, the smallest loss among the leaders.
    Since :math:`\delta_s = 0` forces all leaders to suffer the same loss,
    :math:`\Delta_{t-1} = 0` means that every awake expert has had the same
    losses so far; the leaders are then all awake experts and
    :math:`\delta_t = h_t - \min_i \ell_{t,i}`.  The first round with
    unequal losses makes :math:`\Delta > 0` and :math:`\eta` finite.

    **Numerics.**  :math:`\delta_t` is evaluated as
    :math:`\sum_i w_i d_i + \eta_t^{-1}\bigl(\operatorname{LSE}_i(\eta_t R_i - \eta_t d_i)
    - \operatorname{LSE}_i(\eta_t R_i)\bigr)` with
    :math:`d_i = \ell_{t,i} - \min_j \ell_{t,j}`: no weight underflows, and a
    round with equal losses gives exactly :math:`\delta_t = 0` (rounding
    cannot make :math:`\Delta` a tiny positive number and :math:`\eta` huge).
    Negative rounding residues are clipped to 0.  :math:`h_t` uses the
    weights AdaHedge issued, recomputed from the state (equal to ``p`` when
    ``p`` comes from ``act``); :math:`R` is updated with the ``p`` passed in.

    **Sleeping experts** (``awake`` mask): the softmax, :math:`h_t`, :math:`m_t`
    and the leaders run over the awake experts, with the sleeping regret in
    place of :math:`-L_i` (the specialists reduction of the
    sleeping-experts convention of :mod:`expertlab.experts`); :math:`\ln N` keeps the total number of
    experts (uniform prior over all of them).  This extension is ours, not
    the paper's.  With :math:`N = 1`, :math:`\ln N = 0`, every
    :math:`\delta_t = 0` and the weight is trivially 1.

    Guarantee (losses in :math:`[0, 1]`, all awake, :math:`L^*_T` the loss
    of the best expert), [1]_ Theorem 8:

    .. math::

        R_T \le 2\sqrt{\frac{L^*_T (T - L^*_T)}{T} \ln N}
        + \Bigl(\frac{16}{3}\ln N + 2\Bigr),

    so the regret is :math:`O(\ln N)`, flat in :math:`T`, when a perfect
    expert exists, and :math:`O(\sqrt{T \ln N})` in the worst case.

    [validated-rates]

    References
    ----------
    .. [1] S. de Rooij, T. van Erven, P. D. Grünwald and W. M. Koolen,
       "Follow the leader if you can, hedge if you must", JMLR 15,
       1281--1316, 2014, Section 2.2 (AdaHedge) and Theorem 8 (regret in
       terms of :math:`L^*`; theorem number and constants not re-checked
       against the published text).
    .. [2] N. Cesa-Bianchi, Y. Mansour and G. Stoltz, "Improved second-order
       bounds for prediction with expert advice", Machine Learning 66, 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.experts import adahedge
    >>> learner = adahedge()
    >>> state = learner.init(2, n_reps=1)
    >>> p, state = learner.act(state)
    >>> p
    array([[0.5, 0.5]])
    >>> state = learner.update(state, p, (np.array([[0.0, 1.0]]), None))
    >>> float(state.gap[0])  # delta_1 = 1/2 - min(0, 1)
    0.5
    >>> learner.act(state)[0].round(6)  # eta = 2 ln 2: weights prop. to (2, 1/2)
    array([[0.8, 0.2]])
    """

    def init(spec, n_reps, keys=None, xp=np):
        n_reps, n_experts = check_init(n_reps, spec)
        return AdaHedgeState(t=xp.zeros(n_reps, dtype=xp.int64), regret=xp.zeros((n_reps, n_experts)),
                             gap=xp.zeros(n_reps))

    def act(state, awake=None, key=None):
        xp = get_namespace(state.regret)
        ftl_rows, eta = _rate(state.gap, state.regret.shape[1])
        soft = masked_softmax(eta[:, None] * state.regret, awake)
        lead = leader_weights(state.regret, awake, state.t)
        return xp.where(ftl_rows[:, None], lead, soft), state

    def update(state, p, feedback, key=None):
        loss, awake = feedback
        check_round(state.regret, p, loss, awake)
        delta = _mixability_gap(state.regret, loss, awake, state.t, state.gap)
        r, _ = instant_regret(p, loss, awake)
        return AdaHedgeState(t=state.t + 1, regret=state.regret + r, gap=state.gap + delta)

    kernel = KernelSpec(n_rows=1, n_scalars=2, params=np.zeros(1), init=_k_init, act=_k_act,
                        update=_k_update)
    return Learner(name="adahedge", feedback="full", init=init, act=act, update=update, params={},
                   kernel=kernel)
