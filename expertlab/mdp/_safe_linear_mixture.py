r"""Safe UCRL-VTR with unsafe states and instantaneous hard constraints, batched over replications.

A :class:`SafeLinearMixture` is an episodic linear mixture with a known cost
:math:`c(s, a)` and threshold :math:`\tau` (a step with :math:`c > \tau` is a
violation; a state where every action violates is unsafe).  :func:`safe_ucrl_vtr`
plans optimistically over action sets built backward from :math:`h = H`;
:func:`run_safe_episodes` records unsafe visits and the exact regret against
the best safe policy.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from .._random import rep_key, round_key, seed_to_uint64
from .._validation import check_float, check_int, check_open_unit
from ._episodic import EpisodeSpec, EpisodicLearner, _check_checkpoints, evaluate_markov_policy, sample_episodes
from ._ucrl_vtr import EpisodicLinearMixture, _check_features, _init_factory, _norm, _trajectory_features, \
    sherman_morrison

__all__ = ["SafeLinearMixture", "SafeEpisodeResult", "safe_action_sets", "safe_trap_mixture", "safe_ucrl_vtr",
           "run_safe_episodes"]


@dataclasses.dataclass(frozen=True)
class SafeLinearMixture:
    r"""An episodic linear mixture with a known cost, a threshold and a known safe action.

    Parameters
    ----------
    mixture : EpisodicLinearMixture
        Transitions :math:`P_\theta = \sum_i \theta_i \phi_i` (``theta`` unknown to the learner) and rewards.
    costs : ndarray, shape (S, A)
        Known costs :math:`c(s, a)` in [0, 1].
    threshold : float
        :math:`\tau`; the constraint is :math:`c(s_h, a_h) \le \tau` at every step.
    safe_action : int
        The action :math:`a_0` known to be safe in the safe states.
    safety_gap : float
        :math:`\Delta_c = \tau - \max_{s\ \mathrm{safe}} c(s, a_0) > 0`, the slack of the safe action.
    """

    mixture: EpisodicLinearMixture
    costs: np.ndarray
    threshold: float
    safe_action: int
    safety_gap: float

    def __post_init__(self):
        if not isinstance(self.mixture, EpisodicLinearMixture):
            raise TypeError(f"mixture must be an EpisodicLinearMixture, got {type(self.mixture).__name__}")
        s_, a_ = self.mixture.features.shape[1:3]
        c = np.asarray(self.costs)
        if c.shape != (s_, a_) or not np.all(np.isfinite(c)) or c.min() < 0 or c.max() > 1:
            raise ValueError(f"costs must be finite in [0, 1] with shape ({s_}, {a_}), got shape {c.shape}")
        check_float(self.threshold, "threshold", minimum=0.0, maximum=1.0)
        check_int(self.safe_action, "safe_action", minimum=0, maximum=a_ - 1)
        check_float(self.safety_gap, "safety_gap", positive=True)

    @property
    def features(self) -> np.ndarray:
        """The base kernels, shape ``(d, S, A, S)``."""
        return self.mixture.features


def safe_trap_mixture(horizon: int = 4, *, p_goal: float = 0.5, stay_reward: float = 0.3, threshold: float = 0.5,
                      safety_gap: float = 0.2) -> SafeLinearMixture:
    r"""Four states, three actions, :math:`d = 2`: a goal reached by learning and a lure into a trap.

    Parameters
    ----------
    horizon : int >= 3
    p_goal : float in (0, 1)
        :math:`\theta = (p, 1 - p)`.
    stay_reward : float in [0, 1]
        Reward of the safe action :math:`a_0` in the start state.
    threshold, safety_gap : float
        :math:`\tau \in (0, 1)` and :math:`\Delta_c \in (0, \tau]`: the unsafe state
        costs 1, every other pair :math:`\tau - \Delta_c`.

    Returns
    -------
    SafeLinearMixture

    Notes
    -----
    States: 0 start, 1 goal (absorbing), 2 trap, 3 unsafe (absorbing, cost 1).
    Kernel :math:`\phi_1`: from 0, :math:`a_0` stays, :math:`a_1` goes to the goal,
    :math:`a_2` to the trap; the trap moves to the unsafe state.  Kernel
    :math:`\phi_2`: as :math:`\phi_1` but :math:`a_1` stays in 0 and the trap stays
    in the trap.  Rewards are 1 everywhere except :math:`r(0, a_0)` =
    ``stay_reward`` and :math:`r(0, a_1) = 0`.  Every pair outside the unsafe
    state meets the constraint, so a learner that checks only that takes the
    lure (return :math:`H`, the unconstrained optimum) and, lured at
    :math:`h = 0`, falls into the unsafe state with probability
    :math:`1 - (1 - p)^{H - 2}`; the backward sets allow the lure only from
    stage :math:`H - 2` on.

    Examples
    --------
    >>> m = safe_trap_mixture(4)
    >>> m.costs[3].tolist(), m.safe_action
    ([1.0, 1.0, 1.0], 0)
    """
    horizon, p_goal = check_int(horizon, "horizon", minimum=3), check_open_unit(p_goal, "p_goal")
    stay_reward = check_float(stay_reward, "stay_reward", minimum=0.0, maximum=1.0)
    threshold = check_open_unit(threshold, "threshold")
    safety_gap = check_float(safety_gap, "safety_gap", positive=True, maximum=threshold)
    phi = np.zeros((2, 4, 3, 4))
    for i, (goal, trap) in enumerate(((1, 3), (0, 2))):  # where a_1 leads from 0 and the trap leads
        phi[i, 0, 0, 0] = phi[i, 0, 1, goal] = phi[i, 0, 2, 2] = phi[i, 1, :, 1] = phi[i, 2, :, trap] = 1.0
        phi[i, 3, :, 3] = 1.0
    rewards, costs = np.ones((horizon, 4, 3)), np.full((4, 3), threshold - safety_gap)
    rewards[:, 0, 0], rewards[:, 0, 1], costs[3] = stay_reward, 0.0, 1.0
    mix = EpisodicLinearMixture(phi, np.array([p_goal, 1.0 - p_goal]), rewards)
    return SafeLinearMixture(mix, costs, threshold, 0, safety_gap)


def safe_action_sets(features, weights, costs, threshold, horizon: int, *, reachability: bool = True):
    r"""Action sets built backward from :math:`h = H`, batched over weight vectors.

    Parameters
    ----------
    features : ndarray, shape (d, S, A, S)
    weights : ndarray, shape (n_reps, d)
        Non-negative weights: :math:`s'` counts as reachable from :math:`(s, a)`
        when :math:`\sum_i w_i \phi_i(s' | s, a) > 0`.
    costs : ndarray, shape (S, A)
    threshold : float
    horizon : int
    reachability : bool
        ``False`` keeps only the instantaneous condition :math:`c(s, a) \le \tau`.

    Returns
    -------
    ndarray of bool, shape (n_reps, H, S, A)

    Notes
    -----
    The last stage needs only the instantaneous condition (the episode ends):

    .. math::

        \mathcal A_{H-1}(s) = \{a : c(s, a) \le \tau\}, \qquad
        \mathcal A_h(s) = \{a : c(s, a) \le \tau,\ \mathcal A_{h+1}(s') \ne \emptyset
        \text{ for all } s' \text{ with } \textstyle\sum_i w_i \phi_i(s' | s, a) > 0\}.

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.zeros((1, 2, 1, 2)); phi[0, :, 0, 1] = 1.0  # everything moves to state 1
    >>> safe_action_sets(phi, np.ones((1, 1)), np.array([[0.0], [1.0]]), 0.5, 2)[0, :, :, 0]
    array([[False, False],
           [ True, False]])
    """
    phi, w = np.asarray(features, dtype=np.float64), np.asarray(weights, dtype=np.float64)
    inst = np.asarray(costs) <= threshold  # (S, A)
    reach = np.einsum("ri,isat->rsat", w, phi) > 0  # (R, S, A, S)
    sets = np.empty((w.shape[0], horizon, *inst.shape), dtype=bool)
    sets[:, horizon - 1] = inst
    for h in range(horizon - 2, -1, -1):
        dead = ~sets[:, h + 1].any(axis=-1) & reachability  # (R, S): no safe action at h + 1
        sets[:, h] = inst & ~np.any(reach & dead[:, None, None, :], axis=-1)
    return sets


def _masked_pass(state, beta, mask):
    """Optimistic backward induction over the allowed actions; ``(q, v)`` with ``q`` -inf where not allowed."""
    phi, rew, n_reps, d = state.features, state.rewards, state.b.shape[0], state.features.shape[0]
    h_, s_, a_ = rew.shape
    theta = np.einsum("rij,rj->ri", state.inv, state.b)
    phi_flat = phi.reshape(-1, s_)
    v, q = np.zeros((n_reps, h_ + 1, s_)), np.empty((n_reps, h_, s_, a_))
    for h in range(h_ - 1, -1, -1):
        x = np.moveaxis(np.matmul(phi_flat, v[:, h + 1].T).reshape(d, s_, a_, n_reps), (0, 3), (3, 0))
        qh = np.minimum(rew[h] + np.einsum("rsai,ri->rsa", x, theta) + beta * _norm(state.inv, x), float(h_ - h))
        empty = ~mask[:, h].any(axis=-1, keepdims=True)  # states without an allowed action keep all actions
        q[:, h] = np.where(mask[:, h] | empty, qh, -np.inf)
        v[:, h] = q[:, h].max(axis=-1)
    return q, v


def safe_ucrl_vtr(features, costs, threshold: float, *, safe_action: int = 0, reachability: bool = True,
                  delta: float = 0.1, lam: float = 1.0, beta_scale: float = 1.0) -> EpisodicLearner:
    r"""UCRL-VTR restricted to safe action sets built backward with pessimistic reachability.

    Parameters
    ----------
    features : ndarray, shape (d, S, A, S)
        Known base kernels :math:`\phi_i`.
    costs : ndarray, shape (S, A)
        Known costs :math:`c(s, a)`.
    threshold : float
        :math:`\tau`.
    safe_action : int
        :math:`a_0`, played where no action is allowed.
    reachability : bool
        ``False``: the ablation that checks only :math:`c(s, a) \le \tau`.
    delta : float in (0, 1)
    lam : float > 0
    beta_scale : float > 0
        Multiplies the radius of :func:`ucrl_vtr`.

    Returns
    -------
    EpisodicLearner
        State :class:`~expertlab.mdp.VTRState`.

    Notes
    -----
    Before each episode, with :math:`\hat\theta = \Sigma^{-1} b` and the radius
    :math:`\beta` of :func:`ucrl_vtr`, the upper confidence weights
    :math:`\theta^+_i = \max(0, \hat\theta_i + \beta \sqrt{(\Sigma^{-1})_{ii}})`
    overestimate the support of :math:`P_\theta` (pessimism about reachability:
    every :math:`s'` that some :math:`\theta` of the confidence set reaches counts
    as reachable); the sets of :func:`safe_action_sets` with these weights
    restrict the optimistic backward induction

    .. math::

        Q_h(s, a) = \min\big(H - h,\; r_h + \langle \hat\theta, x_h \rangle + \beta \|x_h\|_{\Sigma^{-1}}\big),
        \quad a \in \mathcal A_h(s), \qquad V_h(s) = \max_{a \in \mathcal A_h(s)} Q_h(s, a),

    and the ridge statistics are updated as in :func:`ucrl_vtr` with these values.

    Simplified relative to the paper: the cost is known and only the transitions
    are learned, so the safety gap :math:`\Delta_c` does not enter the learner
    (the paper's safety value is linear in an unknown parameter, estimated with its
    own confidence set, which makes the regret grow like :math:`1/\Delta_c`); a
    violation is a step with :math:`c(s_h, a_h) > \tau`.

    [validated-rates]

    References
    ----------
    Shi, Liang & Shroff, "A near-optimal algorithm for safe reinforcement
    learning under instantaneous hard constraints", ICML 2023: the linear-mixture
    algorithm with unsafe states and its main theorem (zero violations w.h.p.,
    regret :math:`\tilde O(d H^3 \sqrt{dK}/\Delta_c)`); numbering not checked.

    Examples
    --------
    >>> m = safe_trap_mixture(horizon=4)
    >>> res = run_safe_episodes(safe_ucrl_vtr(m.features, m.costs, m.threshold), m, 20, 2, seed=0)
    >>> int(res.unsafe_visits.max())
    0
    """
    features = _check_features(features)
    s_, a_ = features.shape[1:3]
    costs = np.asarray(costs, dtype=np.float64)
    if costs.shape != (s_, a_) or not np.all(np.isfinite(costs)):
        raise ValueError(f"costs must be a finite array of shape ({s_}, {a_}), got shape {costs.shape}")
    threshold = check_float(threshold, "threshold")
    safe_action = check_int(safe_action, "safe_action", minimum=0, maximum=a_ - 1)
    if not isinstance(reachability, bool):
        raise TypeError(f"reachability must be a bool, got {type(reachability).__name__}")
    delta = check_open_unit(delta, "delta")
    lam, beta_scale = check_float(lam, "lam", positive=True), check_float(beta_scale, "beta_scale", positive=True)
    init0 = _init_factory(lam, plus=False)

    def beta_of(state):
        h_, d, k = state.rewards.shape[0], state.b.shape[1], state.n_episodes
        return beta_scale * (h_ / 2 * math.sqrt(d * math.log((1 + k * h_ ** 3 * d / lam) / delta)) + math.sqrt(lam))

    def passes(state):
        beta = beta_of(state)
        width = np.sqrt(np.maximum(np.diagonal(state.inv, axis1=1, axis2=2), 0.0))
        upper = np.maximum(np.einsum("rij,rj->ri", state.inv, state.b) + beta * width, 0.0)  # theta^+
        mask = safe_action_sets(features, upper, costs, threshold, state.rewards.shape[0], reachability=reachability)
        return (*_masked_pass(state, beta, mask), mask)

    def plan(state):
        q, _, mask = passes(state)
        return np.where(mask.any(axis=-1) | (not reachability), q.argmax(axis=-1), safe_action)

    def update(state, states, actions, rewards):
        v = passes(state)[1]
        x = _trajectory_features(state.features, v, states, actions)
        y = v[np.arange(states.shape[0])[:, None], np.arange(1, states.shape[1]), states[:, 1:]]
        inv = state.inv
        for h in range(x.shape[1]):
            inv = sherman_morrison(inv, x[:, h])
        return state._replace(inv=inv, b=state.b + np.einsum("rhi,rh->ri", x, y),
                              n_episodes_seen=state.n_episodes_seen + 1)

    name = "safe-ucrl-vtr" if reachability else "safe-ucrl-vtr-instantaneous"
    return EpisodicLearner(name, {"threshold": threshold, "safe_action": safe_action, "reachability": reachability,
                                  "delta": delta, "lam": lam, "beta_scale": beta_scale},
                           lambda spec, n_reps, seed=None: init0(spec, n_reps, seed, features=features), plan, update)


@dataclasses.dataclass(frozen=True)
class SafeEpisodeResult:
    r"""Regret against the best safe policy and unsafe visits on a checkpoint grid of episodes.

    Attributes
    ----------
    learner : str
    checkpoints : ndarray of int, shape (n_checkpoints,)
    regret : ndarray, shape (n_checkpoints, n_reps)
        :math:`\sum_{j \le k} (V^{\star}_{\mathrm{safe}} - V^{\pi_j}_1(s_1))`, exact; negative
        entries are possible for a learner that leaves the safe sets.
    unsafe_visits : ndarray of int, shape (n_checkpoints, n_reps)
        Steps :math:`(j, h)`, :math:`j \le k`, with :math:`c(s^j_h, a^j_h) > \tau`.
    optimal_safe_value : float
        Value of the best policy within the true backward safe sets.
    n_episodes, n_reps, horizon, seed : int
    wall_time : float
    """

    learner: str
    checkpoints: np.ndarray
    regret: np.ndarray
    unsafe_visits: np.ndarray
    optimal_safe_value: float
    n_episodes: int
    n_reps: int
    horizon: int
    seed: int
    wall_time: float

    @property
    def mean_regret(self) -> np.ndarray:
        """Mean regret over the replications, shape ``(n_checkpoints,)``."""
        return self.regret.mean(axis=1)


def _optimal_safe_value(m: SafeLinearMixture, s0: int) -> float:
    fh, h_ = m.mixture.to_finite_horizon(), m.mixture.horizon
    mask = safe_action_sets(m.features, m.mixture.theta[None], m.costs, m.threshold, h_)[0]
    p, r = np.asarray(fh.transitions), np.asarray(fh.rewards)
    v = np.zeros((h_ + 1, fh.n_states))
    for h in range(h_ - 1, -1, -1):
        q = np.where(mask[h], r[h] + p[h] @ v[h + 1], -np.inf)
        v[h] = np.where(mask[h].any(axis=-1), q.max(axis=-1), 0.0)  # dead states are never reached
    if not mask[0, s0].any():
        raise ValueError("the start state has no safe action")
    return float(v[0, s0])


def run_safe_episodes(learner: EpisodicLearner, instance: SafeLinearMixture, n_episodes: int, n_reps: int, seed=0,
                      *, checkpoints=None, initial_state: int = 0, rep_offset: int = 0) -> SafeEpisodeResult:
    r"""Play ``n_episodes`` episodes of a :class:`SafeLinearMixture` in ``n_reps`` replications at once.

    Parameters
    ----------
    learner : EpisodicLearner
    instance : SafeLinearMixture
    n_episodes, n_reps : int
    seed : int, SeedSequence or None
        Replication ``r`` depends on ``(seed, r)`` only (the generator of :func:`run_episodes`).
    checkpoints : sequence of int, optional
        Strictly increasing episode counts in ``[1, n_episodes]``; by default ``[n_episodes]``.
    initial_state : int
    rep_offset : int
        Index of the first replication (replication ``r`` is the same in every batch).

    Returns
    -------
    SafeEpisodeResult

    Notes
    -----
    The regret of episode :math:`k` is :math:`V^\star_{\mathrm{safe}} - V^{\pi_k}_1(s_1)`
    (exact policy evaluation with the true model), where :math:`V^\star_{\mathrm{safe}}`
    maximises over the sets of :func:`safe_action_sets` with the true :math:`\theta`.
    """
    if not isinstance(instance, SafeLinearMixture):
        raise TypeError(f"instance must be a SafeLinearMixture, got {type(instance).__name__}")
    fh = instance.mixture.to_finite_horizon()
    s0 = check_int(initial_state, "initial_state", minimum=0, maximum=fh.n_states - 1)
    return _drive_safe(learner, fh, np.asarray(instance.costs) > instance.threshold, _optimal_safe_value(instance, s0),
                       n_episodes, n_reps, seed, checkpoints, s0, rep_offset)


def _drive_safe(learner, fh, violates, v_star, n_episodes, n_reps, seed, checkpoints, s0, rep_offset, observe=None):
    """The episode loop of the safe runners; ``observe(keys, states, actions)`` adds a fifth argument to ``update``."""
    n_episodes, n_reps = check_int(n_episodes, "n_episodes"), check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    ck = _check_checkpoints(checkpoints, n_episodes, default="last")
    seed64, h_ = seed_to_uint64(seed), fh.horizon
    spec = EpisodeSpec(fh.n_states, fh.n_actions, h_, np.asarray(fh.rewards), s0, n_episodes)
    rkeys = rep_key(np.full(n_reps, seed64), np.arange(rep_offset, rep_offset + n_reps, dtype=np.uint64))
    state = learner.init(spec, n_reps, seed64)
    regret, visits = np.zeros(n_reps), np.zeros(n_reps, dtype=np.int64)
    out_r, out_v = np.empty((ck.size, n_reps)), np.empty((ck.size, n_reps), dtype=np.int64)
    j, t0 = 0, time.perf_counter()
    for k in range(int(ck[-1])):
        policy = np.asarray(learner.plan(state))
        regret += v_star - evaluate_markov_policy(fh, policy)[:, 0, s0]
        keys = round_key(rkeys, np.full(n_reps, k, np.uint64))
        states, actions, rewards = sample_episodes(fh, policy, keys, s0)
        visits += violates[states[:, :-1], actions].sum(axis=1)
        if observe is None:
            state = learner.update(state, states, actions, rewards)
        else:
            state = learner.update(state, states, actions, rewards, observe(keys, states, actions))
        if k + 1 == ck[j]:
            out_r[j], out_v[j] = regret, visits
            j += 1
    return SafeEpisodeResult(learner.name, ck, out_r, out_v, v_star, n_episodes, n_reps, h_, int(seed64),
                             time.perf_counter() - t0)
