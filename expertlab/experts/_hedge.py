"""Hedge (exponential weights) with fixed, anytime and doubling-trick rates."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba.extending import register_jitable

from .._backend import get_namespace
from .._validation import check_float, check_in, check_int
from ..sim._kernels import exp_nonpos, kdot, kmax, ksum
from ..sim._protocol import KernelSpec, Learner
from ._common import check_init, check_round, instant_regret, log_n, masked_softmax

__all__ = ["hedge", "HedgeState"]

_SCHEDULES = ("fixed", "anytime", "doubling")
_MODE = {"fixed": 0.0, "anytime": 1.0, "doubling": 2.0, "tuned": 0.0}


class HedgeState(NamedTuple):
    """State of :func:`hedge` (leading axis: replications).

    Attributes
    ----------
    t : array of int, shape (n_reps,)
        Rounds seen.
    regret : array, shape (n_reps, n_experts)
        Sleeping regret ``R_i`` of each expert (``L_hat - L_i`` when all awake).
    base : array, shape (n_reps, n_experts)
        ``R_i`` at the start of the current doubling epoch (zero otherwise).
    """

    t: object
    regret: object
    base: object


@register_jitable
def _eta_at(mode, eta, ln_n, t):
    """Learning rate used in round ``t`` (0-based)."""
    if mode == 0.0:
        return eta
    if mode == 1.0:
        return math.sqrt(8.0 * ln_n / (t + 1.0))
    epoch_len = 2.0 ** math.floor(math.log2(t + 1.0))
    return math.sqrt(8.0 * ln_n / epoch_len)


def _is_epoch_start(t_next):
    """True where round ``t_next`` (0-based) opens a doubling epoch: ``t_next + 1`` is a power of 2."""
    m = t_next + 1
    return (m & (m - 1)) == 0


# -- scalar step functions for the compiled drivers ------------------------
# prm = [mode, eta, horizon]; S = [R, base]; s = [ln N, fixed eta]; the driver's extra slots:
# s[2] = <p_t, l_t> before update, s[3] = 1.0 when every expert is awake in every round.


@register_jitable
def _k_init(prm, S, s):
    n = S.shape[1]
    s[0] = math.log(n) if n > 1 else 0.0
    if prm[2] > 0.0:  # rate tuned to the horizon
        s[1] = math.sqrt(8.0 * s[0] / prm[2])
    else:
        s[1] = prm[1]


@register_jitable(forceinline=True, _nrt=False)
def _all_awake(s):
    """Whether the driver says that every expert is awake in every round (its slot ``s[3]``)."""
    return s.shape[0] > 3 and s[3] == 1.0


@register_jitable(forceinline=True, _nrt=False)
def _k_act(prm, S, s, t, key, awake, p):
    eta = _eta_at(prm[0], s[1], s[0], t)
    n = S.shape[1]
    if _all_awake(s):
        # the same numbers as the masked loops below, without the mask's selects; outside the
        # doubling schedule base is 0, so the logits are the row R itself (R_i - 0 == R_i)
        if prm[0] == 2.0:
            for i in range(n):
                p[i] = S[0, i] - S[1, i]
            mx = kmax(p, n)
            for i in range(n):
                p[i] = exp_nonpos(eta * (p[i] - mx))
        else:
            R = S[0]
            mx = kmax(R, n)
            for i in range(n):
                p[i] = exp_nonpos(eta * (R[i] - mx))
        inv = 1.0 / ksum(p, n)
        for i in range(n):
            p[i] *= inv
        return
    # p holds the logits R_i - base_i first (-inf when asleep); every loop
    # below is branch-free so that it vectorises
    for i in range(n):
        p[i] = S[0, i] - S[1, i] if awake[i] else -np.inf
    mx = kmax(p, n)
    for i in range(n):
        w = exp_nonpos(eta * (p[i] - mx))
        p[i] = w if awake[i] else 0.0
    inv = 1.0 / ksum(p, n)
    for i in range(n):
        p[i] *= inv


@register_jitable(forceinline=True, _nrt=False)
def _k_update(prm, S, s, t, loss, awake, p):
    n = S.shape[1]
    if s.shape[0] > 2:  # the driver's mix slot s[n_scalars] holds <p, loss>
        mix = s[2]
    else:
        mix = kdot(p, loss, n)
    if _all_awake(s):
        for i in range(n):
            S[0, i] += mix - loss[i]
    else:
        for i in range(n):
            if awake[i]:
                S[0, i] += mix - loss[i]
    if prm[0] == 2.0:
        m = t + 2  # round t+1 opens an epoch iff t+2 is a power of two
        if (m & (m - 1)) == 0:
            for i in range(n):
                S[1, i] = S[0, i]


def parse_schedule(eta, schedule, horizon):
    """Check the rate arguments shared by Hedge-style learners.

    Returns ``(eta, schedule, horizon, mode_name)`` with ``mode_name`` one of
    ``"fixed"`` (a given eta), ``"tuned"`` (fixed, tuned to ``horizon``),
    ``"anytime"`` or ``"doubling"``.
    """
    if eta is not None:
        eta = check_float(eta, "eta", positive=True)
        if schedule not in (None, "fixed"):
            raise ValueError(f"schedule must be 'fixed' (or omitted) when eta is given; got {schedule!r}")
        if horizon is not None:
            raise ValueError("give either eta or horizon, not both")
        return eta, "fixed", None, "fixed"
    if schedule is None:
        schedule = "fixed" if horizon is not None else "anytime"
    check_in(schedule, "schedule", _SCHEDULES)
    if schedule == "fixed":
        if horizon is None:
            raise ValueError("schedule='fixed' needs eta or horizon")
        return None, schedule, check_int(horizon, "horizon"), "tuned"
    if horizon is not None:
        raise ValueError(f"horizon is only used by the tuned fixed rate, not by schedule={schedule!r}")
    return None, schedule, None, schedule


def eta_vector(mode_name, eta, horizon, t, n_experts, xp):
    """Rate of each replication in its round ``t`` (array code; see :func:`_eta_at`)."""
    ln_n = log_n(n_experts)
    if mode_name == "tuned":
        return xp.full(t.shape, math.sqrt(8.0 * ln_n / horizon))
    if mode_name == "fixed":
        return xp.full(t.shape, eta)
    tf = xp.astype(t, xp.float64) + 1.0
    if mode_name == "anytime":
        return xp.sqrt(8.0 * ln_n / tf)
    return xp.sqrt(8.0 * ln_n / 2.0 ** xp.floor(xp.log2(tf)))


def hedge(eta=None, *, schedule=None, horizon=None) -> Learner:
    r"""Hedge / exponential weights over experts.

    Parameters
    ----------
    eta : float, optional
        A fixed learning rate :math:`\eta > 0`.  Implies ``schedule="fixed"``.
    schedule : {"anytime", "fixed", "doubling"}, optional
        ``"anytime"`` (the default when neither ``eta`` nor ``horizon`` is
        given): :math:`\eta_t = \sqrt{8 \ln N / t}` in round :math:`t \ge 1`.
        ``"fixed"`` with ``horizon``: the tuned rate
        :math:`\eta = \sqrt{8 \ln N / T}`.  ``"doubling"``: restart on epochs
        of length :math:`1, 2, 4, \dots` with the rate tuned to each epoch.
    horizon : int, optional
        The horizon :math:`T` for the tuned fixed rate.

    Returns
    -------
    Learner
        A full-information learner with a fused Numba/CUDA kernel.

    Notes
    -----
    The weights are

    .. math::

        p_{t,i} = \frac{\exp(-\eta_t L_{t-1,i})}{\sum_j \exp(-\eta_t L_{t-1,j})},

    computed as a softmax of :math:`\eta_t R_{t-1,i}` with
    :math:`R_{t-1,i} = \hat L_{t-1} - L_{t-1,i}`, which is shift-invariant and
    stays finite for :math:`\eta` from 1e-8 to 1e8.  With an ``awake`` mask
    the softmax runs over awake experts and only their :math:`R_i` move
    (sleeping experts, Freund et al. 1997), which bounds each expert's regret
    on its own awake rounds.  With the tuned fixed rate the regret satisfies
    :math:`R_T \le \sqrt{(T/2) \ln N}` (Cesa-Bianchi & Lugosi 2006, Thm 2.2);
    the anytime rate gives :math:`R_T \le \sqrt{2 T \ln N} + \sqrt{\ln N / 8}`
    (Thm 2.3 there), and the doubling trick loses at most a factor
    :math:`\sqrt 2 / (\sqrt 2 - 1)` over the tuned rate [4]_.

    [validated-rates]

    References
    ----------
    .. [1] N. Littlestone and M. Warmuth, "The weighted majority algorithm",
       Information and Computation 108(2), 1994.
    .. [2] Y. Freund and R. Schapire, "A decision-theoretic generalization of
       on-line learning and an application to boosting", JCSS 55(1), 1997.
    .. [3] N. Cesa-Bianchi and G. Lugosi, *Prediction, Learning, and Games*,
       Cambridge University Press, 2006, Theorems 2.2 and 2.3.
    .. [4] N. Cesa-Bianchi, Y. Freund, D. Haussler, D. Helmbold, R. Schapire
       and M. Warmuth, "How to use expert advice", JACM 44(3), 1997.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import hedge, instances
    >>> res = sim.run(hedge(), instances.fair_coins(10), horizon=1000, n_reps=200, seed=1)
    >>> res.metrics["regret"].shape  # (checkpoints, replications)
    (28, 200)
    >>> exact = instances.fair_coins(10).exact_expected_regret(1000)
    >>> bool(abs(res.mean()[-1] - exact) < 3 * res.stderr()[-1])
    True
    """
    eta, schedule, horizon, mode_name = parse_schedule(eta, schedule, horizon)
    params = {"eta": eta, "schedule": schedule, "horizon": horizon}
    params = {k: v for k, v in params.items() if v is not None}
    mode = _MODE[mode_name]

    def init(spec, n_reps, keys=None, xp=np):
        n_reps, n_experts = check_init(n_reps, spec)
        z = xp.zeros((n_reps, n_experts), dtype=xp.float32 if getattr(spec, "dtype", None) == "float32" else
                     xp.float64)
        return HedgeState(t=xp.zeros(n_reps, dtype=xp.int64), regret=z, base=xp.zeros_like(z))

    def act(state, awake=None, key=None):
        xp = get_namespace(state.regret)
        e = eta_vector(mode_name, eta, horizon, state.t, state.regret.shape[1], xp)[:, None]
        e = xp.astype(e, state.regret.dtype)  # float32 state stays float32
        return masked_softmax(e * (state.regret - state.base), awake), state

    def update(state, p, feedback, key=None):
        loss, awake = feedback
        check_round(state.regret, p, loss, awake)
        xp = get_namespace(state.regret)
        r, _ = instant_regret(p, loss, awake)
        regret = state.regret + r
        t = state.t + 1
        base = state.base
        if mode == 2.0:
            base = xp.where(_is_epoch_start(t)[:, None], regret, base)
        return HedgeState(t=t, regret=regret, base=base)

    kernel = KernelSpec(
        n_rows=2,
        n_scalars=2,
        params=np.array([mode, eta if eta is not None else 0.0, float(horizon or 0)]),
        init=_k_init,
        act=_k_act,
        update=_k_update,
    )
    return Learner(name="hedge", feedback="full", init=init, act=act, update=update, params=params,
                   kernel=kernel, float_dtypes=("float64", "float32"))

