r"""Private experts beyond the realizable regime: sparse-vector switching with a doubling threshold.

When no expert is perfect, the realizable learner of
:func:`~expertlab.experts.sparse_vector_experts` eventually drops every
expert, spends its switch budget and is stuck with its last choice (linear
regret).  The small-loss variant here runs the same switching rule in
phases: phase :math:`k` declares an expert dead once its (noisy) cumulative
loss passes a threshold :math:`\tau_k` that doubles from phase to phase, and
a phase ends when its switch budget is spent, which, with high probability,
happens only once every expert is dead at the current threshold.  Each phase
has its own share :math:`\varepsilon_k = \varepsilon/(k(k+1))` of the
budget, so the total is at most :math:`\varepsilon` however many phases the
run needs.  A :class:`expertlab.sim.Learner` run by :func:`expertlab.sim.run`;
:func:`~expertlab.experts.privacy_cost` composes the cost of a run.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import numpy as np
from numba.extending import register_jitable

from .. import _random
from .._random import f64, uniform
from .._repr import short_repr
from .._validation import check_float, check_int
from ..sim._losses import LossSequence
from ..sim._protocol import Learner
from ._common import one_hot, take_rows
from ._common import run_ns as _ns
from ._private_run import _budget, _check_horizon, _laplace, _no_awake, _round, _start
from ._privacy import (PrivacyCost, compose_advanced, compose_basic, exponential_mechanism_epsilon, per_step_epsilon,
                       sparse_vector_epsilon)
from .instances import _check_n_experts

__all__ = ["small_loss_experts", "small_loss_schedule", "SmallLossSchedule", "SmallLossState", "small_loss_instance"]

_INIT_SALT = np.uint64(0x2545F4914F6CDD1D)


class SmallLossState(NamedTuple):
    r"""State of :func:`small_loss_experts` (leading axis: replications).

    ``t`` rounds seen ``(n_reps,)``; ``cur`` the followed expert;
    ``phase`` the current phase :math:`k \ge 1`; ``switches`` "above" answers in
    the current phase; ``rho`` threshold noise of the current AboveThreshold
    instance; ``cum`` cumulative losses ``(n_reps, n_experts)``.
    """

    t: Any
    cur: Any
    phase: Any
    switches: Any
    rho: Any
    cum: Any


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class SmallLossSchedule:
    r"""Per-phase noise scales and thresholds of :func:`small_loss_experts`.

    Arrays are indexed by the phase :math:`k = 1, \dots, P + 1` (slot 0 is
    unused; phase :math:`P + 1` is the frozen last phase).

    Attributes
    ----------
    switch_budget : int
        Switches :math:`K` allowed per phase.
    n_phases : int
        Phases :math:`P` before the threshold passes the horizon.
    b1, b2 : ndarray, shape (n_phases + 2,)
        Laplace scales of the AboveThreshold threshold and query noise.
    eta : ndarray, shape (n_phases + 2,)
        Rate of the exponential mechanism that picks the next expert.
    tau : ndarray, shape (n_phases + 2,)
        Loss threshold of each phase.
    """

    switch_budget: int
    n_phases: int
    b1: np.ndarray
    b2: np.ndarray
    eta: np.ndarray
    tau: np.ndarray


def small_loss_schedule(n_experts: int, epsilon: float = 1.0, horizon: int = 10_000, *, delta: float = 0.0,
                        max_switches: int | None = None, threshold: float | None = None) -> SmallLossSchedule:
    r"""The phase schedule :func:`small_loss_experts` uses with ``n_experts`` experts.

    Same arguments as :func:`small_loss_experts` (without ``noise``); the
    learner's privacy cost composes exactly these scales.  See the Notes of
    :func:`small_loss_experts` for the formulas.

    Examples
    --------
    >>> sc = small_loss_schedule(8, epsilon=1.0, horizon=1000)
    >>> sc.switch_budget, bool(sc.tau[1] < sc.tau[2])
    (6, True)
    """
    eps, dlt = _budget(epsilon, delta)
    n_experts = check_int(n_experts, "n_experts")
    horizon = _check_horizon(horizon)
    if max_switches is not None:
        max_switches = check_int(max_switches, "max_switches")
    if threshold is not None:
        threshold = check_float(threshold, "threshold", positive=True)
    k = max_switches or (math.ceil(math.log2(n_experts)) + 3)

    def e0(j):
        return per_step_epsilon(eps / (j * (j + 1)), k, dlt / (j * (j + 1)))

    base = threshold if threshold is not None else 8.0 / e0(1) * math.log(2.0 * horizon * k)
    ratio = horizon / base
    # the first P with 2^(P-1) base >= T (a tiny threshold overflows the ratio: take the difference of logs)
    doublings = math.log2(ratio) if math.isfinite(ratio) else math.log2(horizon) - math.log2(base)
    n_phases = 1 + max(0, math.ceil(doublings))
    ph = np.arange(n_phases + 2, dtype=np.float64)
    ph[0] = 1.0  # unused slot
    e = np.array([e0(j) for j in ph])
    b1, b2, eta = 4.0 / e, 8.0 / e, e / 4.0
    if threshold is None:
        margin = b2 * math.log(2.0 * horizon * k)
        tau = margin + (2.0 ** (ph - 1.0) - 1.0) * base
    else:
        tau = np.ldexp(base, ph.astype(np.int64) - 1)  # base 2^(k-1), exact where 2.0 ** (k-1) would overflow
    return SmallLossSchedule(k, n_phases, b1, b2, eta, tau)


def small_loss_experts(epsilon: float = 1.0, horizon: int = 10_000, *, delta: float = 0.0,
                       max_switches: int | None = None, threshold: float | None = None,
                       noise: bool = True) -> Learner:
    r"""Sparse-vector switching with a threshold that doubles whenever every expert is dead.

    Parameters
    ----------
    epsilon : float
        Total privacy budget :math:`\varepsilon > 0`.
    horizon : int
        The horizon :math:`T` (sets the noise margin and the number of
        phases :math:`P`); the learner refuses a longer run.
    delta : float
        0: pure :math:`\varepsilon`-DP; :math:`> 0`: each phase composes its
        switches by advanced composition with :math:`\delta_k = \delta/(k(k+1))`.
    max_switches : int, optional
        The per-phase switch budget :math:`K`; default :math:`\lceil\log_2 d\rceil + 3`.
    threshold : float, optional
        Replaces the default thresholds by :math:`\tau_k = 2^{k-1}\theta`
        (and :math:`m_1` by :math:`\theta` in the choice of :math:`P`).
    noise : bool
        ``False`` removes every noise draw (uniform tie-breaking among the
        leaders excepted): a non-private variant for testing; its cost is infinite.

    Returns
    -------
    Learner
        Plays one expert per round (one-hot ``p``).

    Notes
    -----
    Phase :math:`k = 1, 2, \dots` has budget
    :math:`\varepsilon_k = \varepsilon / (k(k+1))` and per-switch budget
    :math:`\varepsilon_{0,k}` (``per_step_epsilon``
    of :math:`\varepsilon_k` over :math:`K`), split evenly between one
    AboveThreshold instance and one exponential-mechanism draw, with the
    scales of :func:`~expertlab.experts.sparse_vector_experts`:
    :math:`b_{1,k} = 4/\varepsilon_{0,k}`, :math:`b_{2,k} = 8/\varepsilon_{0,k}`,
    :math:`\eta_k = \varepsilon_{0,k}/4`.  With the noise margin
    :math:`m_k = b_{2,k}\ln(2TK)` the threshold of phase :math:`k` is

    .. math::

        \tau_k = m_k + (2^{k-1} - 1)\, m_1 .

    After round :math:`t` the query is the followed expert's cumulative loss
    :math:`L_{t,I}` (sensitivity 1), "above" when
    :math:`L_{t,I} + \nu_t \ge \tau_k + \rho`,
    :math:`\nu_t\sim\mathrm{Lap}(b_{2,k})`, :math:`\rho\sim\mathrm{Lap}(b_{1,k})`.
    On "above" a new expert is drawn with
    :math:`P(i)\propto e^{-\eta_k L_{t,i}}` (Gumbel-max); the :math:`K`-th
    "above" of a phase also starts phase :math:`k+1`, and every "above" draws
    a fresh :math:`\rho` at the scale of the phase that follows it.

    Only phases :math:`k \le P` switch, :math:`P` the first phase with
    :math:`2^{P-1} m_1 \ge T` (its threshold exceeds any loss a run can
    reach); after phase :math:`P` has spent its budget the learner follows
    its last expert for good.

    *Privacy (the accountant's cost).*  Phase :math:`k` is :math:`K` adaptive
    (AboveThreshold, exponential mechanism) pairs, each
    :math:`\varepsilon_{0,k}`-DP, so :math:`\varepsilon_k`-DP by basic
    composition (:math:`(\varepsilon_k, \delta_k)` by advanced); the phase
    boundaries are functions of the "above" answers, so the run is
    :math:`\sum_{k\le P}\varepsilon_k = \varepsilon P/(P+1) < \varepsilon`-DP
    (basic composition over phases).  A run of :math:`T'` rounds makes at
    most :math:`A = \min(T', KP)` pairs (one query per round; the
    :math:`a`-th pair belongs to phase :math:`\lceil a/K\rceil`), and
    :func:`~expertlab.experts.privacy_cost` composes exactly those: the sum
    above when :math:`T' \ge KP`.

    *Regret.*  While :math:`\tau_k` exceeds :math:`L^\star` by the noise
    margin, the best expert is not declared dead with probability about
    :math:`1 - 1/(2K)` and, as in the realizable analysis, a random survivor
    outlives half of the others, so the phase does not end; the phases end at
    the first :math:`k^\star` with :math:`\tau_{k^\star} \gtrsim L^\star`, and
    :math:`\tau_{k^\star} \le 2L^\star + O(m_{k^\star})`.  Each switch costs
    at most the threshold plus the noise, so the regret is
    :math:`O(K \sum_{k\le k^\star}\tau_k) = O(K L^\star + K k^\star m_{k^\star})`,
    that is :math:`O(L^\star\log d + \varepsilon^{-1}\,\mathrm{polylog}(d, T, L^\star))`.

    **Reconstructed.**  The paper's small-loss algorithm could not be
    consulted beyond its abstract (regret
    :math:`O(L^\star\log d + \varepsilon^{-1}\log^{1.5} d)`).  The doubling
    threshold, the rule "a phase ends when its switch budget is spent", the
    schedule :math:`\varepsilon_k = \varepsilon/(k(k+1))` and all constants
    are choices made here; the bound reached by this analysis has the
    :math:`L^\star\log d` term with constant about 4 but a privacy term
    :math:`K^2 (k^\star)^3\ln(TK)/\varepsilon` (basic composition; :math:`m_k = m_1 k(k+1)/2`) rather
    than the paper's :math:`\log^{1.5} d/\varepsilon`.  In the realizable
    case (:math:`L^\star = 0`) phase 1 is the realizable learner with half
    the budget, so its regret is at most about twice that of
    :func:`~expertlab.experts.sparse_vector_experts` (measured: 132 against
    82 at :math:`\varepsilon = 4`, :math:`T = 3000`, :math:`d = 8`).

    [validated-rates]

    References
    ----------
    .. [1] H. Asi, V. Feldman, T. Koren and K. Talwar, "Near-optimal algorithms
       for private online optimization in the realizable regime", ICML 2023
       (arXiv:2302.14154), the adaptive small-loss experts algorithm, regret
       :math:`O(L^\star\log d + \varepsilon^{-1}\log^{1.5} d)` (theorem number
       not re-checked).
    .. [2] C. Dwork and A. Roth, *The Algorithmic Foundations of Differential
       Privacy*, 2014, Theorem 3.23 (AboveThreshold), Theorem 3.10
       (exponential mechanism), Theorems 3.16 and 3.20 (composition).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import privacy_cost
    >>> L = small_loss_experts(epsilon=4.0, horizon=2000)
    >>> res = sim.run(L, small_loss_instance(8, 0.5, best_loss=200), 2000, n_reps=20, seed=0)
    >>> bool(privacy_cost(L, 8, 2000).epsilon < 4.0), bool(res.mean()[-1] < 0.25 * 2000)
    (True, True)
    """
    eps, dlt = _budget(epsilon, delta)
    horizon = _check_horizon(horizon)
    if max_switches is not None:
        max_switches = check_int(max_switches, "max_switches")
    if threshold is not None:
        threshold = check_float(threshold, "threshold", positive=True)
    if not isinstance(noise, (bool, np.bool_)):
        raise TypeError(f"noise must be a bool, got {type(noise).__name__}")
    params = {"epsilon": eps, "horizon": horizon, "delta": dlt, "max_switches": max_switches,
              "threshold": threshold, "noise": bool(noise)}
    name = "small_loss_experts"

    def init(spec, n_reps, keys, xp=np):
        n_reps, n_experts, keys = _start(name, horizon, spec, n_reps, keys, xp,
                                         "its thresholds and number of phases are tuned to that horizon")
        b1 = _schedule(params, n_experts).b1
        with np.errstate(over="ignore"):
            k0 = _random.stream_key(keys, _INIT_SALT)
            u = _random.uniform(k0[:, None], xp.arange(2, dtype=xp.uint64)[None, :])
        cur = xp.minimum(xp.astype(u[:, 0] * n_experts, xp.int64), n_experts - 1)
        rho = _laplace(u[:, 1], float(b1[1])) if noise else xp.zeros(n_reps)
        zeros = xp.zeros(n_reps, dtype=xp.int64)
        return SmallLossState(zeros, cur, zeros + 1, xp.zeros_like(zeros), rho, xp.zeros((n_reps, n_experts)))

    def act(state, awake=None, keys=None):
        _no_awake(name, awake)
        return one_hot(state.cur, state.cum.shape[1]), state

    def update(state, p, feedback, keys):
        n_reps, n = state.cum.shape
        loss = _round(name, horizon, state.t, feedback, (n_reps, n), keys)
        xp = _ns(state.cum)
        sc = _schedule(params, n)
        k, n_phases = sc.switch_budget, sc.n_phases
        # the phase tables, read at each replication's phase (NumPy arrays of n_phases + 2 entries)
        b1, b2, eta, tau = (v if xp is np else xp.asarray(v) for v in (sc.b1, sc.b2, sc.eta, sc.tau))
        cum = state.cum + loss
        ph = state.phase
        with np.errstate(over="ignore"):
            nu = _laplace(uniform(keys, np.uint64(0)), xp.take(b2, ph)) if noise else 0.0
        above = (ph <= n_phases) & (take_rows(cum, state.cur[:, None])[:, 0] + nu
                                    >= xp.take(tau, ph) + state.rho)
        cur, phase, switches, rho = state.cur, ph, state.switches, state.rho
        if bool(xp.any(above)):
            # draws 1 (new rho) and 2.. (Gumbels), kept only in the rows that switch (the draws of a row are
            # a function of its key alone, so computing them in every row changes no value)
            with np.errstate(over="ignore"):
                u = uniform(keys[:, None], xp.arange(1, n + 2, dtype=xp.uint64)[None, :])
            if noise:
                score = -xp.take(eta, ph)[:, None] * cum - xp.log(-xp.log(u[:, 1:]))
            else:
                score = xp.where(cum <= xp.min(cum, axis=1, keepdims=True), u[:, 1:], -1.0)
            cur = xp.where(above, xp.astype(xp.argmax(score, axis=1), cur.dtype), cur)
            done = switches + 1 >= k
            switches = xp.where(above, xp.where(done, 0, switches + 1), switches)
            phase = xp.where(above & done, ph + 1, ph)
            if noise:
                rho = xp.where(above, _laplace(u[:, 0], xp.take(b1, phase)), rho)
        return SmallLossState(state.t + 1, cur, phase, switches, rho, cum)

    return Learner(name=name, feedback="full", init=init, act=act, update=update, params=params,
                   doc=small_loss_experts.__doc__)


_SCHEDULES: dict = {}


def _schedule(params, n) -> SmallLossSchedule:
    """:func:`small_loss_schedule` for a learner's ``params`` and ``n`` experts (cached)."""
    key = (params["epsilon"], params["horizon"], params["delta"], params["max_switches"], params["threshold"], n)
    if key not in _SCHEDULES:
        if len(_SCHEDULES) > 256:
            _SCHEDULES.clear()
        _SCHEDULES[key] = small_loss_schedule(n, params["epsilon"], params["horizon"], delta=params["delta"],
                                              max_switches=params["max_switches"], threshold=params["threshold"])
    return _SCHEDULES[key]


def _small_loss_cost(params, n, horizon) -> PrivacyCost:
    """Phase by phase, the pairs a run of ``horizon`` rounds can make, composed at that phase's scales."""
    if not params["noise"]:
        return PrivacyCost(math.inf)
    sc = _schedule(params, n)
    k = sc.switch_budget
    dlt = params["delta"]
    pairs = min(horizon, k * sc.n_phases)
    costs = []
    for j in range(1, sc.n_phases + 1):
        kj = min(k, pairs - (j - 1) * k)
        if kj <= 0:
            break
        step = PrivacyCost(sparse_vector_epsilon(1.0, sc.b1[j], sc.b2[j])
                           + exponential_mechanism_epsilon(1.0, sc.eta[j]))
        basic = compose_basic([step] * kj)
        if dlt > 0.0:
            adv = compose_advanced(step, kj, dlt / (j * (j + 1)))
            basic = adv if adv.epsilon < basic.epsilon else basic
        costs.append(basic)
    return compose_basic(costs)



@register_jitable
def _small_loss_hit(data, t, i):
    b = data[1]  # (best, best_loss)
    return f64(i == b[0]) * f64(t < b[1])


@register_jitable
def _small_loss_loss(data, key, t, i):
    return f64(uniform(key, i) < data[0][i]) + _small_loss_hit(data, t, i)


@register_jitable
def _small_loss_mean(data, t, i):
    return data[0][i] * 1.0 + _small_loss_hit(data, t, i)


def small_loss_instance(n_experts: int = 8, p: float = 0.5, *, best_loss: int = 0, best: int = 0) -> LossSequence:
    r"""Expert ``best`` loses in each of its first ``best_loss`` rounds, never after; the others lose ``Bernoulli(p)``.

    On horizons :math:`T > L^\star/p` (``L^\star = best_loss``) the best
    expert is ``best`` with total loss :math:`L^\star`, but in the first
    :math:`L^\star/p` rounds it is the worst: a learner that drops it for
    good (the realizable learner, once :math:`L^\star` exceeds its
    threshold) ends on a Bernoulli(p) expert and has linear regret.
    ``best_loss = 0`` is :func:`~expertlab.experts.realizable`.

    Examples
    --------
    >>> import numpy as np
    >>> inst = small_loss_instance(3, 0.0, best_loss=2)
    >>> key = np.zeros((1, 1), dtype=np.uint64)
    >>> [inst.loss(inst.data, key, t, np.arange(3)[None, :])[0].tolist() for t in range(3)]
    [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    n = _check_n_experts(n_experts, minimum=2)
    p = check_float(p, "p", minimum=0.0, maximum=1.0)
    best_loss = check_int(best_loss, "best_loss", minimum=0)
    best = check_int(best, "best", minimum=0, maximum=n - 1)
    probs = np.full(n, p)
    probs[best] = 0.0
    return LossSequence(name="small_loss", n_experts=n, loss=_small_loss_loss,
                    data=(probs, np.array([best, best_loss], dtype=np.int64)), mean=_small_loss_mean,
                    params={"n_experts": n, "p": p, "best_loss": best_loss, "best": best})
