r"""Safe UCRL-VTR with a learned cost, and the driver that feeds it noisy cost observations.

:func:`safe_learned_cost_vtr` learns the transitions by value-targeted
regression (as :func:`~expertlab.mdp.safe_ucrl_vtr`) and the cost parameter by
ridge regression on the observed costs; it plays only certified actions inside
backward action sets.  :func:`run_learned_cost_episodes` plays a
:class:`~expertlab.mdp.LearnedCostSafeMixture`, draws the cost noise from the
counter-based generator and records violations and the exact regret against
the best safe policy.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._random import stream_key, uniform
from .._validation import check_float, check_int, check_open_unit
from ._episodic import EpisodeSpec, EpisodicLearner
from ._safe_learned_cost import (LearnedCostSafeMixture, _check_cost_features, _check_safe_states,
                                 certified_action_sets, cost_radius, pessimistic_costs)
from ._safe_linear_mixture import SafeEpisodeResult, _drive_safe, _masked_pass, _optimal_safe_value
from ._ucrl_vtr import VTRState, _check_features, _init_factory, _trajectory_features, sherman_morrison

__all__ = ["SafeCostState", "safe_learned_cost_vtr", "run_learned_cost_episodes"]

#: Salt of the cost-noise stream (disjoint from the transition uniforms of the same episode key).
COST_STREAM = np.uint64(0x7F4A7C159E3779B9)


class SafeCostState(NamedTuple):
    """The transition regression (``vtr``) and the cost regression of every replication.

    ``cost_inv (n_reps, d_c, d_c)``: :math:`\\Lambda^{-1}`; ``cost_b (n_reps, d_c)``:
    :math:`\\sum_j \\psi_j y_j`; ``n_cost_obs``: observed steps per replication.
    """

    vtr: VTRState
    cost_inv: np.ndarray
    cost_b: np.ndarray
    n_cost_obs: int


def safe_learned_cost_vtr(features, cost_features, threshold: float, safe_states, *, safe_action: int = 0,
                          noise_scale: float = 0.05, pessimistic: bool = True, reachability: bool = True,
                          delta: float = 0.1, lam: float = 1.0, cost_lam: float = 0.01, param_bound=None,
                          beta_scale: float = 1.0) -> EpisodicLearner:
    r"""UCRL-VTR over backward sets of actions certified by pessimistic learned costs.

    Parameters
    ----------
    features : ndarray, shape (d, S, A, S)
        Known transition kernels :math:`\phi_i`.
    cost_features : ndarray, shape (S, A, d_c)
        Known :math:`\psi(s, a)`.
    threshold : float in (0, 1)
        :math:`\tau`.
    safe_states : ndarray of bool, shape (S,)
        States where :math:`a_0` is known to be safe; it is always allowed there.
    safe_action : int
        :math:`a_0`.
    noise_scale : float >= 0
        Known :math:`\sigma` of the Gaussian cost noise.
    pessimistic : bool
        ``False``: the ablation that certifies with the point estimate :math:`\langle \psi, \hat\mu \rangle \le \tau`.
    reachability : bool
        ``False``: drop the reachability condition of the backward sets.
    delta : float in (0, 1)
        Split evenly between the transition and the cost confidence sets.
    lam, cost_lam : float > 0
        Ridge parameters of the two regressions.
    param_bound : float, optional
        :math:`S \ge \|\mu^\star\|_2`; by default :math:`\sqrt{d_c}` (entries of :math:`\mu^\star` in [0, 1]).
    beta_scale : float > 0
        Multiplies both radii (the guarantee holds for 1).

    Returns
    -------
    EpisodicLearner
        State :class:`SafeCostState`; ``update(state, states, actions, rewards, costs)`` takes the
        observed costs ``(n_reps, H)`` as a fifth argument (use :func:`run_learned_cost_episodes`).

    Notes
    -----
    Before each episode, with :math:`\hat\mu = \Lambda^{-1} b` and the radius
    :math:`\beta_c` of :func:`~expertlab.mdp.cost_radius` (at :math:`\delta/2`,
    :math:`N = K H`, :math:`L = \max \|\psi\|_2`), an action is certified at
    :math:`s` when

    .. math::

        \bar c(s, a) = \langle \psi(s, a), \hat\mu \rangle + \beta_c \|\psi(s, a)\|_{\Lambda^{-1}} \le \tau,

    and :math:`a_0` is certified in the known safe states.  The certified sets
    go into :func:`~expertlab.mdp.certified_action_sets` with the upper
    confidence transition weights :math:`\theta^+` of
    :func:`~expertlab.mdp.safe_ucrl_vtr` (radius at :math:`\delta/2`), and the
    optimistic backward induction runs over the resulting sets.  After the
    episode, each step adds :math:`\psi(s_h, a_h)\psi(s_h, a_h)^\top` to
    :math:`\Lambda` (Sherman–Morrison on :math:`\Lambda^{-1}`) and
    :math:`\psi(s_h, a_h)\, y_h` to :math:`b`, and the transition statistics are
    updated as in :func:`~expertlab.mdp.ucrl_vtr`.  On the intersection of the
    two confidence events (probability at least :math:`1 - \delta`) every played
    action meets the constraint and never leads to a state without one, provided
    (an assumption here) that :math:`a_0` never leads from a safe state to an unsafe one.

    Reconstructed relative to the paper: its safety value is a projection of
    the safety parameter onto the span of the known safe actions plus a
    regularised estimate of the orthogonal part; here the whole parameter is
    estimated by ridge regression and the known safe action is simply always
    allowed in the known safe states.  Cost noise is Gaussian with known
    :math:`\sigma`.  The radii are fixed from the planned :math:`K`.

    [validated-rates]

    References
    ----------
    Shi, Liang & Shroff, "A near-optimal algorithm for safe reinforcement
    learning under instantaneous hard constraints", ICML 2023: the linear-mixture
    algorithm with an unknown safety parameter and its main theorem (zero
    violations w.h.p., regret :math:`\tilde O(d H^3 \sqrt{dK}/\Delta_c)`); numbering not checked.
    Abbasi-Yadkori, Pál & Szepesvári, "Improved algorithms for linear stochastic
    bandits", NeurIPS 2011, Thm 2 (the cost radius).

    Examples
    --------
    >>> from expertlab.mdp import safe_cost_ladder
    >>> m = safe_cost_ladder(4, safety_gap=0.15)
    >>> learner = safe_learned_cost_vtr(m.features, m.cost_features, m.threshold, m.safe_states,
    ...                                 safe_action=m.safe_action, noise_scale=m.noise_scale)
    >>> res = run_learned_cost_episodes(learner, m, 20, 2, seed=0)
    >>> int(res.unsafe_visits.max())
    0
    """
    features = _check_features(features)
    s_, a_ = features.shape[1:3]
    psi = _check_cost_features(cost_features, s_, a_)
    threshold = check_open_unit(threshold, "threshold")
    safe = _check_safe_states(safe_states, s_)
    safe_action = check_int(safe_action, "safe_action", minimum=0, maximum=a_ - 1)
    noise_scale = check_float(noise_scale, "noise_scale", minimum=0.0)
    for flag, name in ((pessimistic, "pessimistic"), (reachability, "reachability")):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
    delta = check_open_unit(delta, "delta")
    lam, cost_lam = check_float(lam, "lam", positive=True), check_float(cost_lam, "cost_lam", positive=True)
    d_c = psi.shape[2]
    param_bound = math.sqrt(d_c) if param_bound is None else check_float(param_bound, "param_bound", positive=True)
    beta_scale = check_float(beta_scale, "beta_scale", positive=True)
    feature_bound = float(np.sqrt((psi ** 2).sum(axis=-1)).max())
    init_vtr = _init_factory(lam, plus=False)

    def init(spec: EpisodeSpec, n_reps: int, seed=None) -> SafeCostState:
        eye = np.broadcast_to(np.eye(d_c) / cost_lam, (n_reps, d_c, d_c)).copy()
        return SafeCostState(init_vtr(spec, n_reps, seed, features=features), eye, np.zeros((n_reps, d_c)), 0)

    def beta_vtr(st: VTRState):
        h_, d, k = st.rewards.shape[0], st.b.shape[1], st.n_episodes
        return beta_scale * (h_ / 2 * math.sqrt(d * math.log((1 + k * h_ ** 3 * d / lam) / (delta / 2)))
                             + math.sqrt(lam))

    def beta_cost(st: VTRState):
        n_obs = st.n_episodes * st.rewards.shape[0]
        return beta_scale * cost_radius(noise_scale, delta / 2, n_obs, d_c, cost_lam, feature_bound, param_bound)

    def passes(state: SafeCostState):
        st = state.vtr
        beta = beta_vtr(st)
        width = np.sqrt(np.maximum(np.diagonal(st.inv, axis1=1, axis2=2), 0.0))
        upper = np.maximum(np.einsum("rij,rj->ri", st.inv, st.b) + beta * width, 0.0)  # theta^+
        bc = beta_cost(st) if pessimistic else 0.0
        cert = pessimistic_costs(psi, state.cost_inv, state.cost_b, bc) <= threshold
        cert[:, safe, safe_action] = True
        mask = certified_action_sets(features, upper, cert, st.rewards.shape[0], reachability=reachability)
        return (*_masked_pass(st, beta, mask), mask)

    def plan(state: SafeCostState):
        q, _, mask = passes(state)
        return np.where(mask.any(axis=-1), q.argmax(axis=-1), safe_action)

    def update(state: SafeCostState, states, actions, rewards, costs):
        st = state.vtr
        v = passes(state)[1]
        x = _trajectory_features(st.features, v, states, actions)
        y = v[np.arange(states.shape[0])[:, None], np.arange(1, states.shape[1]), states[:, 1:]]
        inv, cinv, cb = st.inv, state.cost_inv, state.cost_b
        z = psi[states[:, :-1], actions]  # (R, H, d_c)
        for h in range(x.shape[1]):
            inv = sherman_morrison(inv, x[:, h])
            cinv = sherman_morrison(cinv, z[:, h])
        st = st._replace(inv=inv, b=st.b + np.einsum("rhi,rh->ri", x, y), n_episodes_seen=st.n_episodes_seen + 1)
        return SafeCostState(st, cinv, cb + np.einsum("rhi,rh->ri", z, costs), state.n_cost_obs + x.shape[1])

    name = "safe-learned-cost-vtr" + ("" if pessimistic else "-point-estimate") + ("" if reachability else
                                                                                   "-instantaneous")
    return EpisodicLearner(name, {"threshold": threshold, "safe_action": safe_action, "noise_scale": noise_scale,
                                  "pessimistic": pessimistic, "reachability": reachability, "delta": delta,
                                  "lam": lam, "cost_lam": cost_lam, "param_bound": param_bound,
                                  "beta_scale": beta_scale}, init, plan, update)


def cost_noise(keys, horizon: int) -> np.ndarray:
    """Standard normal draws ``(n_reps, horizon)`` from episode keys, by Box–Muller on the cost stream."""
    n_reps = keys.shape[0]
    ck = stream_key(keys, np.full(n_reps, COST_STREAM, dtype=np.uint64))
    j = np.arange(horizon, dtype=np.uint64)
    u1 = uniform(ck[:, None], 2 * j[None, :])
    u2 = uniform(ck[:, None], 2 * j[None, :] + np.uint64(1))
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def run_learned_cost_episodes(learner: EpisodicLearner, instance: LearnedCostSafeMixture, n_episodes: int,
                              n_reps: int, seed=0, *, checkpoints=None, initial_state: int = 0,
                              rep_offset: int = 0) -> SafeEpisodeResult:
    r"""Play ``n_episodes`` episodes of a :class:`~expertlab.mdp.LearnedCostSafeMixture` in ``n_reps`` replications.

    Parameters
    ----------
    learner : EpisodicLearner
        Its ``update`` takes the observed costs as a fifth argument.
    instance : LearnedCostSafeMixture
    n_episodes, n_reps : int
    seed : int, SeedSequence or None
        Replication ``r`` depends on ``(seed, r)`` only.
    checkpoints : sequence of int, optional
        Strictly increasing episode counts in ``[1, n_episodes]``; by default ``[n_episodes]``.
    initial_state : int
    rep_offset : int
        Index of the first replication.

    Returns
    -------
    SafeEpisodeResult
        ``unsafe_visits`` counts the steps with true cost :math:`c(s_h, a_h) > \tau`.

    Notes
    -----
    Transitions use the uniforms of :func:`~expertlab.mdp.run_safe_episodes`; the
    observed cost of step :math:`h` is :math:`c(s_h, a_h) + \sigma \varepsilon_h`
    with :math:`\varepsilon_h` a Box–Muller normal from the salted key of the same
    episode.  The regret is exact, against the best policy within the true
    backward safe sets.
    """
    if not isinstance(instance, LearnedCostSafeMixture):
        raise TypeError(f"instance must be a LearnedCostSafeMixture, got {type(instance).__name__}")
    fh = instance.mixture.to_finite_horizon()
    s0 = check_int(initial_state, "initial_state", minimum=0, maximum=fh.n_states - 1)
    true_cost, sigma = instance.costs, float(instance.noise_scale)

    def observe(keys, states, actions):
        return true_cost[states[:, :-1], actions] + sigma * cost_noise(keys, fh.horizon)

    return _drive_safe(learner, fh, true_cost > instance.threshold, _optimal_safe_value(instance.to_known_cost(), s0),
                       n_episodes, n_reps, seed, checkpoints, s0, rep_offset, observe)
