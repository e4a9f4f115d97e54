r"""Differentially private experts: sparse-vector switching and two baselines.

The three learners play one expert per round (a one-hot ``p``) and keep
noise for several rounds (the sparse vector's threshold noise, the tree
mechanism's node noise) in their state.  They are ordinary
:class:`expertlab.sim.Learner` records run by :func:`expertlab.sim.run`;
every draw comes from the learner keys the engine passes (the replication
keys to ``init``, the round keys to ``act`` and ``update``), so an instance
reveals the same losses to a private learner as to any other learner run
with the same seed.  Privacy is with respect to changing the loss vector of
one round; the adversary is oblivious.  Each learner refuses a run longer
than the horizon it was calibrated for, and
:func:`~expertlab.experts.privacy_cost` composes the cost of the releases a
run makes.  The learners are array code over the run's namespace ``xp``
(NumPy, or CuPy with ``backend="cupy"``); they have no compiled kernel.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .. import _random
from .._validation import check_float, check_int
from ..sim._protocol import Learner
from ._common import one_hot, take_rows
from ._common import run_ns as _ns
from ._private_baselines import NoisyFTPLState, TreeFTRLState, noisy_ftpl, tree_ftrl
from ._private_run import (_budget, _check_horizon, _laplace, _no_awake, _round, _start, _total,
                           audit_private, privacy_cost, realizable)
from ._privacy import PrivacyCost, exponential_mechanism_epsilon, per_step_epsilon, sparse_vector_epsilon

__all__ = ["privacy_cost", "audit_private", "realizable", "sparse_vector_experts", "SparseVectorState",
           "noisy_ftpl", "NoisyFTPLState", "tree_ftrl", "TreeFTRLState"]


_INIT_SALT = np.uint64(0x5DEECE66DA3B1C97)


# -- sparse-vector switching -------------------------------------------------


class SparseVectorState(NamedTuple):
    """State of :func:`sparse_vector_experts` (leading axis: replications).

    ``t`` rounds seen ``(n_reps,)``; ``cur`` the followed expert;
    ``switches`` "above" answers so far; ``rho`` threshold noise of the current
    AboveThreshold instance; ``cum`` cumulative losses ``(n_reps, n_experts)``.
    """

    t: Any
    cur: Any
    switches: Any
    rho: Any
    cum: Any


def sparse_vector_experts(epsilon: float = 1.0, horizon: int = 10_000, *, delta: float = 0.0,
                          max_switches: int | None = None, threshold: float | None = None,
                          noise: bool = True) -> Learner:
    r"""Follow a random surviving expert; detect its death privately with the sparse vector technique.

    Parameters
    ----------
    epsilon : float
        Total privacy budget :math:`\varepsilon > 0`.
    horizon : int
        The horizon :math:`T` (sets the default threshold); the learner
        refuses a longer run.
    delta : float
        0: pure :math:`\varepsilon`-DP by basic composition over the switches;
        :math:`> 0`: :math:`(\varepsilon, \delta)`-DP by advanced composition.
    max_switches : int, optional
        The switch budget :math:`K`; default :math:`\lceil\log_2 d\rceil + 3`.
    threshold : float, optional
        The AboveThreshold threshold :math:`\tau`; default
        :math:`b_2 \ln(2TK)` (a perfect expert is flagged with probability
        about :math:`1/(2K)` over the whole run).
    noise : bool
        ``False`` removes every noise draw (uniform tie-breaking excepted):
        the non-private variant used to test the audit; its cost is infinite.

    Returns
    -------
    Learner
        A full-information learner that plays one expert per round (one-hot
        ``p``); :func:`~expertlab.experts.privacy_cost` gives the cost of a run.

    Notes
    -----
    Reconstructed from the paper's description (the paper's own algorithm,
    constants are not reproduced; the small-loss variant is
    :func:`~expertlab.experts.small_loss_experts`).  Let :math:`\varepsilon_0` be the
    per-switch budget (``per_step_epsilon``
    of :math:`\varepsilon` over :math:`K`), split evenly between one
    AboveThreshold instance and one exponential-mechanism draw.  The learner
    starts on a uniformly random expert :math:`I`.  After round :math:`t` the
    query is :math:`q_t = L_{t,I}` (sensitivity 1: changing one round's loss
    vector moves every :math:`L_{t,i}` by at most 1) and the answer is "above"
    when

    .. math::

        q_t + \nu_t \ge \tau + \rho, \quad
        \rho \sim \mathrm{Lap}(b_1),\ \nu_t \sim \mathrm{Lap}(b_2),\quad
        b_1 = \frac{4}{\varepsilon_0},\ b_2 = \frac{8}{\varepsilon_0}

    (Dwork & Roth's scales :math:`2/\varepsilon', 4/\varepsilon'` with
    :math:`\varepsilon' = \varepsilon_0/2`).  On "above" the learner samples
    a new expert by the exponential mechanism,
    :math:`P(i) \propto e^{-\eta L_{t,i}}` with :math:`\eta = \varepsilon_0/4`
    (Gumbel-max), which is nearly uniform over the experts still at zero
    loss, draws a fresh :math:`\rho` and starts a new AboveThreshold
    instance.  After :math:`K` switches it follows its last expert for good.
    Privacy: each switch is an :math:`\varepsilon_0/2`-DP AboveThreshold
    followed by an :math:`\varepsilon_0/2`-DP exponential mechanism; the
    :math:`K` switches compose adaptively (basic composition,
    :math:`K\varepsilon_0 = \varepsilon`, or advanced composition with
    :math:`\delta' = \delta`).  The output is the sequence of played experts,
    a function of these answers and the data-independent first draw.  A run
    of :math:`T' < K` rounds makes at most :math:`T'` pairs, and
    :func:`~expertlab.experts.privacy_cost` composes :math:`\min(K, T')` of them.
    Regret, realizable case: a dead expert is dropped once it has lost
    about :math:`\tau = O(\varepsilon_0^{-1}\log(TK))`, a uniformly random
    survivor outlives about half of the others, so :math:`O(\log d)`
    switches suffice and the regret is
    :math:`O(K\tau) = O(\varepsilon^{-1}\log^2 d \,\log T)` with basic
    composition (:math:`\log^{1.5} d` with advanced composition), flat in
    :math:`T` once the perfect expert is followed.

    [validated-rates]

    References
    ----------
    .. [1] H. Asi, V. Feldman, T. Koren and K. Talwar, "Near-optimal algorithms
       for private online optimization in the realizable regime", ICML 2023
       (arXiv:2302.14154), the realizable experts algorithm and its regret
       bound :math:`\tilde O(\varepsilon^{-1}\log^{1.5} d)` (theorem number not
       re-checked).
    .. [2] C. Dwork and A. Roth, *The Algorithmic Foundations of Differential
       Privacy*, 2014, Algorithm 1 and Theorem 3.23 (AboveThreshold),
       Theorem 3.10 (exponential mechanism), Theorems 3.16 and 3.20
       (composition).

    Examples
    --------
    >>> from expertlab import sim
    >>> L = sparse_vector_experts(epsilon=4.0, horizon=2000)
    >>> res = sim.run(L, realizable(8, 0.5), horizon=2000, n_reps=50, seed=0)
    >>> round(privacy_cost(L, 8, 2000).epsilon, 12), bool(res.mean()[-1] < 400)
    (4.0, True)
    """
    eps, dlt = _budget(epsilon, delta)
    horizon = _check_horizon(horizon)
    if max_switches is not None:
        max_switches = check_int(max_switches, "max_switches")
    if threshold is not None:
        threshold = check_float(threshold, "threshold")
    if not isinstance(noise, (bool, np.bool_)):
        raise TypeError(f"noise must be a bool, got {type(noise).__name__}")
    params = {"epsilon": eps, "horizon": horizon, "delta": dlt, "max_switches": max_switches,
              "threshold": threshold, "noise": bool(noise)}
    name = "sparse_vector_experts"

    def init(spec, n_reps, keys, xp=np):
        n_reps, n_experts, keys = _start(name, horizon, spec, n_reps, keys, xp,
                                         "its default threshold is tuned to that horizon")
        _, b1, _, _, _ = _sv_scales(params, n_experts)
        with np.errstate(over="ignore"):
            k0 = _random.stream_key(keys, _INIT_SALT)
            u = _random.uniform(k0[:, None], xp.arange(2, dtype=xp.uint64)[None, :])
        cur = xp.minimum(xp.astype(u[:, 0] * n_experts, xp.int64), n_experts - 1)
        rho = _laplace(u[:, 1], b1) if noise else xp.zeros(n_reps)
        zeros = xp.zeros(n_reps, dtype=xp.int64)
        return SparseVectorState(zeros, cur, xp.zeros_like(zeros), rho, xp.zeros((n_reps, n_experts)))

    def act(state, awake=None, keys=None):
        _no_awake(name, awake)
        return one_hot(state.cur, state.cum.shape[1]), state

    def update(state, p, feedback, keys):
        n_reps, n = state.cum.shape
        loss = _round(name, horizon, state.t, feedback, (n_reps, n), keys)
        xp = _ns(state.cum)
        k, b1, b2, eta, tau = _sv_scales(params, n)
        cum = state.cum + loss
        with np.errstate(over="ignore"):
            nu = _laplace(_random.uniform(keys, np.uint64(0)), b2) if noise else 0.0
        above = (state.switches < k) & (take_rows(cum, state.cur[:, None])[:, 0] + nu
                                        >= tau + state.rho)
        cur, rho = state.cur, state.rho
        if bool(xp.any(above)):
            # draws 1 (new rho) and 2.. (Gumbels), kept only in the rows that switch (the draws of a row are
            # a function of its key alone, so computing them in every row changes no value)
            with np.errstate(over="ignore"):
                u = _random.uniform(keys[:, None], xp.arange(1, n + 2, dtype=xp.uint64)[None, :])
            if noise:
                score = -eta * cum - xp.log(-xp.log(u[:, 1:]))
            else:  # uniform among the current leaders
                score = xp.where(cum <= xp.min(cum, axis=1, keepdims=True), u[:, 1:], -1.0)
            cur = xp.where(above, xp.astype(xp.argmax(score, axis=1), cur.dtype), cur)
            if noise:
                rho = xp.where(above, _laplace(u[:, 0], b1), rho)
        return SparseVectorState(state.t + 1, cur, state.switches + xp.astype(above, state.switches.dtype), rho,
                                 cum)

    return Learner(name=name, feedback="full", init=init, act=act, update=update, params=params,
                   doc=sparse_vector_experts.__doc__)


def _sv_scales(params, n):
    """``(K, b1, b2, eta, tau)`` of :func:`sparse_vector_experts` with ``n`` experts."""
    k = params["max_switches"] or (math.ceil(math.log2(n)) + 3)
    e0 = per_step_epsilon(params["epsilon"], k, params["delta"])
    b1, b2, eta = 4.0 / e0, 8.0 / e0, e0 / 4.0
    tau = params["threshold"] if params["threshold"] is not None else b2 * math.log(2.0 * params["horizon"] * k)
    return k, b1, b2, eta, tau


def _sv_cost(params, n, horizon) -> PrivacyCost:
    """``min(K, horizon)`` (AboveThreshold, exponential mechanism) pairs at the learner's scales."""
    if not params["noise"]:
        return PrivacyCost(math.inf)
    k, b1, b2, eta, _ = _sv_scales(params, n)
    step = sparse_vector_epsilon(1.0, b1, b2) + exponential_mechanism_epsilon(1.0, eta)
    return _total(PrivacyCost(step), min(k, horizon), params["delta"])
