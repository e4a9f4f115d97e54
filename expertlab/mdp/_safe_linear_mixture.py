r"""Safe UCRL-VTR with unsafe states and instantaneous hard constraints, batched over replications.

A :class:`SafeLinearMixture` is an episodic linear mixture with a known cost
:math:`c(s, a)` and threshold :math:`\tau` (a step with :math:`c > \tau` is a
violation; a state where every action violates is unsafe).  It is an
environment of :func:`expertlab.sim.run` with feedback kind
``"safe_episode"``; :func:`safe_ucrl_vtr` plans optimistically over action sets
built backward from :math:`h = H`.

Learner protocol for ``"safe_episode"`` feedback (unit ``"episode"``)
---------------------------------------------------------------------
``init(spec, n_reps, keys, xp)``: ``spec.horizon`` is the number of episodes
:math:`K` of the run, and ``spec`` holds what the learner may know:
``n_states``, ``n_actions``, ``episode_length`` (:math:`H`), the mean rewards
``rewards`` ``(H, S, A)``, the base kernels ``features`` ``(d, S, A, S)`` (the
mixture weight is unknown), ``initial_state``, the ``threshold`` :math:`\tau`
and the safe action ``safe_action``; a ``"safe_episode"`` environment also
tells the ``costs`` ``(S, A)``;
``act(state, None, keys) -> (policy, state)``: an integer array
``(n_reps, H, S)``, the deterministic Markov policy of the coming episode;
``update(state, policy, trajectory, keys)`` with a :class:`SafeTrajectory`
(``states (n_reps, H + 1)``, ``actions (n_reps, H)``, ``rewards (n_reps, H)``;
``costs`` is ``None``: the cost is known).  The environments of kind
``"noisy_cost_episode"`` (:class:`~expertlab.mdp.LearnedCostSafeMixture`) use the
same protocol with the cost features ``cost_features``, the known safe states
``safe_states`` and the noise scale ``noise_scale`` in place of ``costs``, and
the observed costs in ``trajectory.costs``.

The transitions of episode :math:`k` of replication :math:`r` are the
inverse CDF of the uniforms of the environment's round key (draw :math:`h` picks
the state after stage :math:`h`; :func:`~expertlab.mdp.sample_episodes`).  The
environments compute with NumPy whatever the array namespace of the run.

Metrics
-------
``regret``
    :math:`\sum_{j \le k} (V^\star_{\mathrm{safe}} - V^{\pi_j}_1(s_1))`, exact
    (the policy is evaluated with the true model), where
    :math:`V^\star_{\mathrm{safe}}` maximises over the action sets of
    :func:`safe_action_sets` built with the true :math:`\theta`; negative
    entries are possible for a learner that leaves the safe sets.
``violations``
    The number of played steps :math:`(j, h)`, :math:`j \le k`, with
    :math:`c(s^j_h, a^j_h) > \tau` (every step in an unsafe state), an integer
    count per replication.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, NamedTuple

import numpy as np

from .._validation import check_array_size, check_float, check_int, check_open_unit
from ..sim import EnvSpec, Environment, Learner, Metric
from ._checks import check_flag, real_array
from ._episodic import evaluate_markov_policy, sample_episodes
from ._ucrl_vtr import (EpisodicLinearMixture, _check_features, _norm, _sherman_morrison,
                        _trajectory_features)

__all__ = ["SafeLinearMixture", "SafeTrajectory", "SafeVTRState", "safe_action_sets", "safe_trap_mixture",
           "safe_ucrl_vtr"]


class SafeTrajectory(NamedTuple):
    """One episode of every replication (the feedback of the safe environments).

    ``states (n_reps, H + 1)`` (``states[:, 0]`` is the start state), ``actions (n_reps, H)``,
    ``rewards (n_reps, H)``; ``costs (n_reps, H)``: the observed noisy costs (kind
    ``"noisy_cost_episode"``), ``None`` where the cost is known (kind ``"safe_episode"``).
    """

    states: Any
    actions: Any
    rewards: Any
    costs: Any = None


class _SafeEpisodes(Environment):
    """What the two safe environments share: the rollout, the oracle and the metrics."""

    default_metrics = ("regret", "violations")

    def _check_start(self):
        fh = self._fh
        check_int(self.initial_state, "initial_state", minimum=0, maximum=fh.n_states - 1)
        self._v_star  # noqa: B018  (raises when the start state has no safe action)

    @functools.cached_property
    def _fh(self):
        return self.mixture.to_finite_horizon()

    @functools.cached_property
    def _v_star(self) -> float:
        return _optimal_safe_value(self.mixture, self.true_costs, self.threshold, self.initial_state)

    @property
    def optimal_safe_value(self) -> float:
        r""":math:`V^\star_{\mathrm{safe}}(s_1)`: the value of the best policy within the true backward safe sets."""
        return self._v_star

    def _spec(self, feedback: str, **known) -> EnvSpec:
        fh = self._fh
        return EnvSpec(feedback=feedback, unit="episode", n_actions=fh.n_actions,
                       info={"n_states": fh.n_states, "n_actions": fh.n_actions, "episode_length": fh.horizon,
                             "rewards": np.asarray(fh.rewards, dtype=np.float64),
                             "features": np.asarray(self.mixture.features, dtype=np.float64),
                             "initial_state": int(self.initial_state), "threshold": float(self.threshold),
                             "safe_action": int(self.safe_action), **known})

    def reset(self, n_reps, keys, xp):
        """Nothing changes between episodes: the environment state is ``None``."""
        return None

    def observe(self, env_state, t, keys):
        """Every episode starts in ``initial_state``, which the spec tells: ``None``."""
        return None

    def _rollout(self, policy, keys):
        fh = self._fh
        policy = np.asarray(policy)
        n_reps = np.shape(keys)[0]
        if policy.shape != (n_reps, fh.horizon, fh.n_states) or not np.issubdtype(policy.dtype, np.integer):
            raise ValueError(f"a {self.spec.feedback!r} learner's act must return an integer policy of shape "
                             f"({n_reps}, {fh.horizon}, {fh.n_states}), got {policy.dtype} {policy.shape}")
        keys = np.asarray(keys)
        states, actions, rewards = sample_episodes(fh, policy, keys, self.initial_state)
        return policy, keys, states, actions, rewards

    def available_metrics(self):
        """``regret`` and ``violations`` (see the Notes of the class)."""
        fh, s0, v_star = self._fh, self.initial_state, self._v_star
        violates = np.asarray(self.true_costs) > self.threshold

        def regret(acc, info, t):
            return acc + (v_star - evaluate_markov_policy(fh, info["policy"])[:, 0, s0])

        def violations(acc, info, t):
            return acc + violates[info["states"][:, :-1], info["actions"]].sum(axis=1)

        return {"regret": Metric("regret", lambda n, xp: np.zeros(n), regret, lambda acc: acc),
                "violations": Metric("violations", lambda n, xp: np.zeros(n, dtype=np.int64), violations,
                                     lambda acc: acc)}


@dataclasses.dataclass(frozen=True, repr=False, eq=False)
class SafeLinearMixture(_SafeEpisodes):
    r"""An episodic linear mixture with a known cost, a threshold and a known safe action (an environment).

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
    initial_state : int
        Start state :math:`s_1` of every episode; it must have a safe action.

    Notes
    -----
    An environment of :func:`expertlab.sim.run` with feedback kind
    ``"safe_episode"`` and unit ``"episode"``: in each step the learner returns
    the integer policy ``(n_reps, H, S)`` of the coming episode, the
    environment rolls it out from the start state (the inverse CDF of the
    uniforms of its round key, :func:`~expertlab.mdp.sample_episodes`) and the
    learner is told the :class:`SafeTrajectory` (``costs`` is ``None``).
    ``spec`` tells the learner the sizes, ``episode_length`` :math:`H`, the
    ``rewards``, the base kernels ``features``, the ``costs``, the
    ``threshold``, the ``safe_action`` and the ``initial_state``, not
    :math:`\theta`.

    Metrics: ``regret``, the exact expected regret
    :math:`\sum_{j \le k} (V^\star_{\mathrm{safe}} - V^{\pi_j}_1(s_1))` against
    the best policy within the backward safe sets of the true :math:`\theta`
    (``optimal_safe_value``; negative entries are possible for a learner
    that leaves the safe sets); ``violations``, the number of played steps
    with :math:`c(s_h, a_h) > \tau` (every step in an unsafe state), cumulative.

    Examples
    --------
    >>> m = safe_trap_mixture(4)
    >>> m.spec.feedback, m.spec.episode_length, round(m.optimal_safe_value, 4)
    ('safe_episode', 4, 2.65)
    """

    mixture: EpisodicLinearMixture
    costs: np.ndarray
    threshold: float
    safe_action: int
    safety_gap: float
    initial_state: int = 0

    name = "safe_linear_mixture"

    def __post_init__(self):
        if not isinstance(self.mixture, EpisodicLinearMixture):
            raise TypeError(f"mixture must be an EpisodicLinearMixture, got {type(self.mixture).__name__}")
        s_, a_ = self.mixture.features.shape[1:3]
        c = real_array(self.costs, "costs", finite=False)
        if c.shape != (s_, a_) or not np.all(np.isfinite(c)) or c.min() < 0 or c.max() > 1:
            raise ValueError(f"costs must be finite in [0, 1] with shape ({s_}, {a_}), got shape {c.shape}")
        check_float(self.threshold, "threshold", minimum=0.0, maximum=1.0)
        check_int(self.safe_action, "safe_action", minimum=0, maximum=a_ - 1)
        check_float(self.safety_gap, "safety_gap", positive=True)
        self._check_start()

    @property
    def features(self) -> np.ndarray:
        """The base kernels, shape ``(d, S, A, S)``."""
        return self.mixture.features

    @property
    def true_costs(self) -> np.ndarray:
        """The costs that define a violation, shape ``(S, A)`` (here the known ``costs``)."""
        return np.asarray(self.costs, dtype=np.float64)

    @property
    def params(self):
        return {"n_states": int(self.mixture.features.shape[1]), "n_actions": int(self.mixture.features.shape[2]),
                "dim": int(self.mixture.dim), "episode_length": int(self.mixture.horizon),
                "threshold": float(self.threshold), "safe_action": int(self.safe_action),
                "safety_gap": float(self.safety_gap), "initial_state": int(self.initial_state)}

    @property
    def spec(self) -> EnvSpec:
        return self._spec("safe_episode", costs=self.true_costs)

    def step(self, env_state, policy, t, keys):
        """Roll ``policy`` out for one episode of every replication; the feedback is a :class:`SafeTrajectory`."""
        policy, keys, states, actions, rewards = self._rollout(policy, keys)
        info = {"policy": policy, "states": states, "actions": actions, "rewards": rewards}
        return env_state, SafeTrajectory(states, actions, rewards), info


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
    check_array_size((horizon, 4, 3, 4), "horizon")  # the stage kernels of the tabular model
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

    Raises
    ------
    TypeError
        If an array does not hold real numbers, ``threshold`` is not a real number, ``horizon`` is not an
        integer or ``reachability`` is not a bool.
    ValueError
        If ``features`` is not ``(d, S, A, S)`` with kernel rows, ``weights`` is not ``(n_reps, d)`` and
        non-negative, ``costs`` is not ``(S, A)``, a value is NaN or infinite, or ``horizon < 1``.

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
    phi = _check_features(features)
    w = real_array(weights, "weights", shape=("n_reps", phi.shape[0]), low=0.0)
    costs = real_array(costs, "costs", shape=phi.shape[1:3])
    threshold = check_float(threshold, "threshold")
    horizon = check_int(horizon, "horizon")
    reachability = check_flag(reachability, "reachability")
    return _safe_action_sets(phi, w, costs, threshold, horizon, reachability)


def _safe_action_sets(phi, w, costs, threshold, horizon, reachability=True):
    """:func:`safe_action_sets` without the checks."""
    inst = np.asarray(costs) <= threshold  # (S, A)
    reach = np.einsum("ri,isat->rsat", w, phi) > 0  # (R, S, A, S)
    sets = np.empty((w.shape[0], horizon, *inst.shape), dtype=bool)
    sets[:, horizon - 1] = inst
    for h in range(horizon - 2, -1, -1):
        dead = ~sets[:, h + 1].any(axis=-1) & reachability  # (R, S): no safe action at h + 1
        sets[:, h] = inst & ~np.any(reach & dead[:, None, None, :], axis=-1)
    return sets


def _optimal_safe_value(mixture, costs, threshold, s0: int) -> float:
    fh, h_ = mixture.to_finite_horizon(), mixture.horizon
    mask = _safe_action_sets(np.asarray(mixture.features), np.asarray(mixture.theta)[None], costs, threshold, h_)[0]
    p, r = np.asarray(fh.transitions), np.asarray(fh.rewards)
    v = np.zeros((h_ + 1, fh.n_states))
    for h in range(h_ - 1, -1, -1):
        q = np.where(mask[h], r[h] + p[h] @ v[h + 1], -np.inf)
        v[h] = np.where(mask[h].any(axis=-1), q.max(axis=-1), 0.0)  # dead states are never reached
    if not mask[0, s0].any():
        raise ValueError("the start state has no safe action")
    return float(v[0, s0])


def _masked_pass(features, rewards, inv, b, beta, mask):
    """Optimistic backward induction over the allowed actions; ``(q, v)`` with ``q`` -inf where not allowed."""
    n_reps, d = b.shape
    h_, s_, a_ = rewards.shape
    theta = np.einsum("rij,rj->ri", inv, b)
    phi_flat = features.reshape(-1, s_)
    v, q = np.zeros((n_reps, h_ + 1, s_)), np.empty((n_reps, h_, s_, a_))
    for h in range(h_ - 1, -1, -1):
        x = np.moveaxis(np.matmul(phi_flat, v[:, h + 1].T).reshape(d, s_, a_, n_reps), (0, 3), (3, 0))
        qh = np.minimum(rewards[h] + np.einsum("rsai,ri->rsa", x, theta) + beta * _norm(inv, x), float(h_ - h))
        empty = ~mask[:, h].any(axis=-1, keepdims=True)  # states without an allowed action keep all actions
        q[:, h] = np.where(mask[:, h] | empty, qh, -np.inf)
        v[:, h] = q[:, h].max(axis=-1)
    return q, v


def _upper_weights(inv, b, beta):
    r"""Upper confidence weights :math:`\theta^+_i = \max(0, \hat\theta_i + \beta \sqrt{(\Sigma^{-1})_{ii}})`."""
    width = np.sqrt(np.maximum(np.diagonal(inv, axis1=1, axis2=2), 0.0))
    return np.maximum(np.einsum("rij,rj->ri", inv, b) + beta * width, 0.0)


def _vtr_radius(horizon: int, dim: int, n_episodes: int, lam: float, delta: float) -> float:
    """The UCRL-VTR radius at ``beta_scale = 1`` (see :func:`~expertlab.mdp.ucrl_vtr`)."""
    return horizon / 2 * math.sqrt(dim * math.log((1 + n_episodes * horizon ** 3 * dim / lam) / delta)) + math.sqrt(lam)


def _known(spec, who: str):
    """``(features, rewards, n_episodes)`` that a safe learner reads from ``spec``, checked."""
    features = _check_features(spec.features)
    if features.shape[1:3] != (spec.n_states, spec.n_actions):
        raise ValueError(f"{who}: spec.features has shape {features.shape}, expected (d, {spec.n_states}, "
                         f"{spec.n_actions}, {spec.n_states})")
    rewards = np.asarray(spec.rewards, dtype=np.float64)
    if rewards.shape != (spec.episode_length, spec.n_states, spec.n_actions):
        raise ValueError(f"{who}: spec.rewards must have shape (H, S, A) = ({spec.episode_length}, {spec.n_states}, "
                         f"{spec.n_actions}), got {rewards.shape}")
    if rewards.min() < 0.0 or rewards.max() > 1.0:
        raise ValueError(f"{who} needs rewards in [0, 1]")
    if spec.horizon is None:
        raise ValueError(f"{who}: spec.horizon (the number of episodes, which sets the radius) is None; run the "
                         "learner through expertlab.sim.run")
    return features, rewards, int(spec.horizon)


def _vtr_update(features, inv, b, values, traj):
    """Value-targeted ridge statistics after one episode: ``(inv, b, x)`` (``x (n_reps, H, d)``)."""
    states, actions = np.asarray(traj.states), np.asarray(traj.actions)
    x = _trajectory_features(features, values, states, actions)
    y = values[np.arange(states.shape[0])[:, None], np.arange(1, states.shape[1]), states[:, 1:]]
    for h in range(x.shape[1]):
        inv = _sherman_morrison(inv, x[:, h])
    return inv, b + np.einsum("rhi,rh->ri", x, y)


class SafeVTRState(NamedTuple):
    """State of :func:`safe_ucrl_vtr` (leading axis ``n_reps``) and what the environment told it.

    ``inv (n_reps, d, d)`` and ``b (n_reps, d)``: inverse Gram matrix and moment vector of the
    value-targeted regression; ``values (n_reps, H + 1, S)``: the optimistic values of the last
    plan (the regression targets of the episode it plays); ``n_episodes``: episodes absorbed.
    Shared constants: ``features (d, S, A, S)``, ``rewards (H, S, A)``, ``costs (S, A)``,
    ``threshold``, ``safe_action``, and ``beta``, the radius fixed from the number of episodes of the run.
    """

    inv: np.ndarray
    b: np.ndarray
    values: np.ndarray
    n_episodes: int
    features: np.ndarray
    rewards: np.ndarray
    costs: np.ndarray
    threshold: float
    safe_action: int
    beta: float


def safe_ucrl_vtr(*, reachability: bool = True, delta: float = 0.1, lam: float = 1.0,
                  beta_scale: float = 1.0) -> Learner:
    r"""UCRL-VTR restricted to safe action sets built backward with pessimistic reachability.

    Parameters
    ----------
    reachability : bool
        ``False``: the ablation that checks only :math:`c(s, a) \le \tau`.
    delta : float in (0, 1)
    lam : float > 0
    beta_scale : float > 0
        Multiplies the radius of :func:`ucrl_vtr`.

    Returns
    -------
    Learner
        Feedback kind ``"safe_episode"``: runs on a :class:`SafeLinearMixture` through
        :func:`expertlab.sim.run`, which tells it the base kernels :math:`\phi_i`, the rewards,
        the costs :math:`c(s, a)`, the threshold :math:`\tau` and the safe action :math:`a_0`
        (played where no action is allowed), not the mixture weight.  State
        :class:`SafeVTRState`; deterministic.

    Notes
    -----
    Before each episode, with :math:`\hat\theta = \Sigma^{-1} b` and the radius
    :math:`\beta` of :func:`ucrl_vtr` (fixed from the number of episodes
    :math:`K` of the run), the upper confidence weights
    :math:`\theta^+_i = \max(0, \hat\theta_i + \beta \sqrt{(\Sigma^{-1})_{ii}})`
    overestimate the support of :math:`P_\theta` (pessimism about reachability:
    every :math:`s'` that some :math:`\theta` of the confidence set reaches counts
    as reachable); the sets of :func:`safe_action_sets` with these weights
    restrict the optimistic backward induction

    .. math::

        Q_h(s, a) = \min\big(H - h,\; r_h + \langle \hat\theta, x_h \rangle + \beta \|x_h\|_{\Sigma^{-1}}\big),
        \quad a \in \mathcal A_h(s), \qquad V_h(s) = \max_{a \in \mathcal A_h(s)} Q_h(s, a),

    and the ridge statistics are updated as in :func:`ucrl_vtr` with these values
    (kept from the plan, so an episode costs one backward pass).

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
    >>> from expertlab import sim
    >>> res = sim.run(safe_ucrl_vtr(), safe_trap_mixture(horizon=4), horizon=20, n_reps=2, seed=0)
    >>> int(res.metrics["violations"].max()), bool((res.metrics["regret"] >= 0).all())
    (0, True)
    """
    reachability = check_flag(reachability, "reachability")
    delta = check_open_unit(delta, "delta")
    lam, beta_scale = check_float(lam, "lam", positive=True), check_float(beta_scale, "beta_scale", positive=True)
    name = "safe_ucrl_vtr"

    def check_spec(spec):
        """What the environment tells, checked: ``(features, rewards, n_episodes, costs, threshold, safe_action)``."""
        features, rewards, k = _known(spec, name)
        costs = np.asarray(spec.costs, dtype=np.float64)
        if costs.shape != features.shape[1:3] or not np.all(np.isfinite(costs)):
            raise ValueError(f"{name}: spec.costs must be a finite array of shape {features.shape[1:3]}, got "
                             f"shape {costs.shape}")
        return (features, rewards, k, costs, check_float(spec.threshold, "threshold"),
                check_int(spec.safe_action, "safe_action", minimum=0, maximum=spec.n_actions - 1))

    def init(spec, n_reps, keys=None, xp=np) -> SafeVTRState:
        features, rewards, k, costs, threshold, safe_action = check_spec(spec)
        (d, s_), h_ = features.shape[:2], rewards.shape[0]
        beta = beta_scale * _vtr_radius(h_, d, k, lam, delta)
        return SafeVTRState(np.broadcast_to(np.eye(d) / lam, (n_reps, d, d)).copy(), np.zeros((n_reps, d)),
                            np.zeros((n_reps, h_ + 1, s_)), 0, features, rewards, costs, threshold, safe_action, beta)

    def act(state: SafeVTRState, obs, keys):
        h_ = state.rewards.shape[0]
        upper = _upper_weights(state.inv, state.b, state.beta)
        mask = _safe_action_sets(state.features, upper, state.costs, state.threshold, h_, reachability)
        q, v = _masked_pass(state.features, state.rewards, state.inv, state.b, state.beta, mask)
        policy = np.where(mask.any(axis=-1) | (not reachability), q.argmax(axis=-1), state.safe_action)
        return policy, state._replace(values=v)

    def update(state: SafeVTRState, policy, traj, keys) -> SafeVTRState:
        inv, b = _vtr_update(state.features, state.inv, state.b, state.values, traj)
        return state._replace(inv=inv, b=b, n_episodes=state.n_episodes + 1)

    return Learner(name, "safe_episode", init, act, update,
                   {"reachability": reachability, "delta": delta, "lam": lam, "beta_scale": beta_scale},
                   doc=safe_ucrl_vtr.__doc__, check_spec=check_spec)


def _example_mixture() -> SafeLinearMixture:
    """The small run of the registry: ``hard_linear_mixture(1, horizon=3)`` with one action of the absorbing state
    above the threshold (the learner's choices at the start state, and so its regret, depend on the transitions)."""
    from .instances import hard_linear_mixture

    m = hard_linear_mixture(1, horizon=3, gap=0.1)
    costs = np.full(m.features.shape[1:3], 0.2)
    costs[1, 1] = 0.9
    return SafeLinearMixture(m, costs, 0.5, 0, 0.3)
