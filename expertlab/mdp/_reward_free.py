r"""Reward-free exploration in episodic linear mixtures, batched over replications.

Exploration sees transitions only: a pseudo-reward equal to the width of the
confidence set on the mixture weight drives an optimistic policy, and the
weight is fitted by transition-targeted ridge regression
(:func:`reward_free_ttr`, an online learner of :func:`expertlab.sim.run`).
Afterwards :func:`plan_for_rewards` (an offline solver) plans on the fitted
model for any reward whose total over an episode is at most 1, and the
explorer's certificate bounds the suboptimality of those plans for every such
reward at once.  A :class:`RewardFreeMixture` environment measures, at each
checkpoint, the certificate, the true suboptimality and the value error on a
battery of rewards (:func:`reward_battery`) by exact evaluation.

Learner protocol for ``"reward_free"`` feedback (unit ``"episode"``)
--------------------------------------------------------------------
``init(spec, n_reps, keys, xp)`` with ``spec.n_states``, ``spec.n_actions``,
``spec.episode_length`` (:math:`H`), the known base kernels ``spec.features``
``(d, S, A, S)`` and ``spec.initial_state`` (no rewards); ``spec.horizon`` is
the exploration budget :math:`K` in episodes;
``act(state, None, keys) -> (Exploration(policy, estimate), state)``: the
integer policy ``(n_reps, H, S)`` of the coming episode and the explorer's
current :class:`RewardFreeEstimate` (fitted on the episodes played so far);
``update(state, exploration, episode, keys)`` with a :class:`RewardFreeEpisode`
(``states (n_reps, H + 1)``, ``actions (n_reps, H)``, no rewards);
``final(state)`` gives the fitted weight :math:`\tilde\theta` ``(n_reps, d)``
after the last episode, which :func:`expertlab.sim.run` returns in
``final["theta"]`` for :func:`plan_for_rewards`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, NamedTuple

import numpy as np

from .._random import seed_to_uint64
from .._repr import short_repr
from .._validation import check_array_size, check_float, check_int, check_open_unit
from ..sim import EnvSpec, Environment, Learner, Metric
from ._checks import real_array
from ._dr_offline import _project_simplex
from ._episodic import sample_episodes
from ._ucrl_vtr import EpisodicLinearMixture, _check_features

__all__ = ["RewardFreeState", "RewardFreeEstimate", "Exploration", "RewardFreeEpisode", "RewardFreeMixture",
           "reward_free_ttr", "plan_for_rewards", "reward_battery"]


class RewardFreeState(NamedTuple):
    r"""Regression statistics of every replication (leading axis ``n_reps``) and what the explorer was told.

    ``gram (n_reps, d, d)``: :math:`\Lambda = \lambda I + \sum_n \sum_{j} \phi(j | s_n, a_n) \phi(j | s_n, a_n)^\top`;
    ``b (n_reps, d)``: :math:`\sum_n \phi(s'_n | s_n, a_n)`; ``features (d, S, A, S)``: the known base
    kernels; ``episode_length``: :math:`H`; ``n_samples``: transitions absorbed per replication;
    ``n_episodes``: episodes absorbed.
    """

    gram: np.ndarray
    b: np.ndarray
    features: np.ndarray
    episode_length: int
    n_samples: int = 0
    n_episodes: int = 0


@short_repr
class RewardFreeEstimate(NamedTuple):
    r"""The fitted weight, its confidence set and the exploration values, per replication.

    ``theta (n_reps, d)``: :math:`\tilde\theta`, the ridge estimate projected on the simplex;
    ``theta_hat (n_reps, d)``: the ridge estimate :math:`\hat\theta`; ``gram_inv (n_reps, d, d)``;
    ``beta (n_reps,)``: the self-normalised radius :math:`\beta_0` of :math:`\|\theta - \hat\theta\|_\Lambda`;
    ``radius (n_reps,)``: :math:`\beta = \beta_0 + \|\hat\theta - \tilde\theta\|_\Lambda`, which bounds
    :math:`\|\theta - \tilde\theta\|_\Lambda`; ``gram (n_reps, d, d)``: :math:`\Lambda`;
    ``values (n_reps, H + 1, S)``: the exploration values :math:`W` (clipped at 1), so that the
    certificate is :math:`2 W_1(s_1)`.
    """

    theta: np.ndarray
    theta_hat: np.ndarray
    gram_inv: np.ndarray
    beta: np.ndarray
    radius: np.ndarray
    gram: np.ndarray
    values: np.ndarray


class Exploration(NamedTuple):
    """A reward-free explorer's action: the policy of the coming episode and its current estimate."""

    policy: Any
    estimate: RewardFreeEstimate


class RewardFreeEpisode(NamedTuple):
    """One exploration episode of every replication: ``states (n_reps, H + 1)``, ``actions (n_reps, H)``."""

    states: Any
    actions: Any


def _kernels(features, theta):
    """Per-replication kernels ``(n_reps, S, A, S)`` of weights ``theta (n_reps, d)``."""
    return np.einsum("ri,isat->rsat", theta, features)


@dataclasses.dataclass(frozen=True, repr=False, eq=False)
class RewardFreeMixture(Environment):
    r"""An episodic linear mixture explored without rewards, with a battery of rewards to plan for (an environment).

    Parameters
    ----------
    mixture : EpisodicLinearMixture
        The true model; its ``rewards`` are never shown to the explorer.
    rewards : ndarray, shape (n_rewards, H, S, A), optional
        Planning-phase rewards with total at most 1 over an episode; default
        :func:`reward_battery` with ``seed=0``.
    initial_state : int
        Start state :math:`s_1` of every episode.

    Notes
    -----
    An environment of :func:`expertlab.sim.run` with feedback kind
    ``"reward_free"`` and unit ``"episode"``: each step the explorer returns an
    :class:`Exploration` (the integer policy ``(n_reps, H, S)`` of the coming
    episode and its current :class:`RewardFreeEstimate`), the environment
    rolls the policy out (the inverse CDF of the uniforms of its round key,
    :func:`~expertlab.mdp.sample_episodes`) and tells the explorer the
    :class:`RewardFreeEpisode`, without rewards.  ``spec`` tells the sizes,
    ``episode_length`` :math:`H`, the base kernels ``features`` and the
    ``initial_state``, neither :math:`\theta` nor any reward.

    Metrics (``n_reps`` values at each checkpoint).  At step :math:`k` the
    metrics evaluate the estimate the explorer hands over with its policy for
    episode :math:`k`, which is fitted on the first :math:`k - 1` episodes (an
    explorer's update is not visible to the environment until its next action):
    the metrics of a run of :math:`K + 1` episodes at checkpoint :math:`K + 1`
    are those of the model after :math:`K` episodes, and ``final["theta"]`` of
    a run of :math:`K` episodes (the explorer's final state) is that model's
    weight.  With :math:`\hat\pi_b`
    the optimal plan of the fitted model for battery reward :math:`b`
    (:func:`plan_for_rewards`), :math:`\hat V_b` its value there and
    :math:`V^{\hat\pi_b}_b` its exact value in the true model:

    ``value_error``
        :math:`\max_b |\hat V_b - V^{\hat\pi_b}_b|(s_1)`.
    ``suboptimality``
        :math:`\max_b (V^\star_b - V^{\hat\pi_b}_b)(s_1)`.
    ``certificate``
        :math:`2 W_1(s_1)`, the explorer's bound on the suboptimality for every
        reward with total at most 1.
    ``confidence_ratio``
        :math:`\|\theta - \hat\theta\|_\Lambda / \beta_0` (at most 1 on the
        confidence event).

    The metrics are computed at the checkpoints only (each plans for the whole
    battery).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.mdp.instances import hard_linear_mixture
    >>> env = RewardFreeMixture(hard_linear_mixture(2, horizon=4, gap=0.1))
    >>> res = sim.run(reward_free_ttr(), env, horizon=31, n_reps=2, seed=0, checkpoints=[11, 31])
    >>> cert, sub, err = (res.metrics[k] for k in ("certificate", "suboptimality", "value_error"))
    >>> bool(((cert >= sub) & (cert >= err)).all()), bool((cert[1] <= cert[0]).all())
    (True, True)
    >>> res.final["theta"].shape  # the fitted weight after 31 episodes, for plan_for_rewards
    (2, 4)
    """

    mixture: EpisodicLinearMixture
    rewards: Any = None
    initial_state: int = 0

    name = "reward_free_mixture"
    default_metrics = ("value_error", "suboptimality", "certificate", "confidence_ratio")

    def __post_init__(self):
        if not isinstance(self.mixture, EpisodicLinearMixture):
            raise TypeError(f"mixture must be an EpisodicLinearMixture, got {type(self.mixture).__name__}")
        fh = self._fh
        check_int(self.initial_state, "initial_state", minimum=0, maximum=fh.n_states - 1)
        battery = (reward_battery(fh.n_states, fh.n_actions, fh.horizon, seed=0) if self.rewards is None
                   else self.rewards)
        object.__setattr__(self, "rewards", _check_battery(battery, fh.horizon, fh.n_states, fh.n_actions))

    @functools.cached_property
    def _fh(self):
        return self.mixture.to_finite_horizon()

    @functools.cached_property
    def optimal_values(self) -> np.ndarray:
        r""":math:`V^\star_b(s_1)` of every battery reward in the true model, shape ``(n_rewards,)``."""
        pi = plan_for_rewards(self.mixture.features, np.asarray(self.mixture.theta)[None], self.rewards)[0]
        return _evaluate(self._p_true, self.rewards, pi)[0, :, 0, self.initial_state]

    @property
    def _p_true(self):
        return np.asarray(self._fh.transitions)[0]

    @property
    def features(self) -> np.ndarray:
        """The base kernels, shape ``(d, S, A, S)``."""
        return self.mixture.features

    @property
    def params(self):
        fh = self._fh
        return {"n_states": fh.n_states, "n_actions": fh.n_actions, "dim": int(self.mixture.dim),
                "episode_length": fh.horizon, "n_rewards": int(self.rewards.shape[0]),
                "initial_state": int(self.initial_state)}

    @property
    def spec(self) -> EnvSpec:
        fh = self._fh
        return EnvSpec(feedback="reward_free", unit="episode", n_actions=fh.n_actions,
                       info={"n_states": fh.n_states, "n_actions": fh.n_actions, "episode_length": fh.horizon,
                             "features": np.asarray(self.mixture.features), "initial_state": self.initial_state})

    def reset(self, n_reps, keys, xp):
        """Nothing changes between episodes: the environment state is ``None``."""
        return None

    def observe(self, env_state, t, keys):
        """Every episode starts in ``initial_state``, which the spec tells: ``None``."""
        return None

    def step(self, env_state, exploration, t, keys):
        """Roll the exploration policy out for one episode; the feedback is a :class:`RewardFreeEpisode`."""
        if not isinstance(exploration, Exploration):
            raise TypeError(f"a reward-free explorer's act must return an Exploration(policy, estimate), got "
                            f"{type(exploration).__name__}")
        fh = self._fh
        policy = np.asarray(exploration.policy)
        n_reps = np.shape(keys)[0]
        if policy.shape != (n_reps, fh.horizon, fh.n_states) or not np.issubdtype(policy.dtype, np.integer):
            raise ValueError(f"the exploration policy must be an integer array of shape ({n_reps}, {fh.horizon}, "
                             f"{fh.n_states}), got {policy.dtype} {policy.shape}")
        states, actions, _ = sample_episodes(fh, policy, np.asarray(keys), self.initial_state)
        return env_state, RewardFreeEpisode(states, actions), {"estimate": exploration.estimate}

    def available_metrics(self):
        """``value_error``, ``suboptimality``, ``certificate`` and ``confidence_ratio`` (see the Notes)."""
        s0, theta = self.initial_state, np.asarray(self.mixture.theta)
        cache = {}

        def planned(est):
            """``(v_hat, v_true)`` of the fitted plans at the start, ``(n_reps, n_rewards)`` each (last one cached)."""
            if cache.get("est") is not est:
                pi, v_hat = plan_for_rewards(self.mixture.features, est.theta, self.rewards)
                cache.update(est=est, out=(v_hat[:, :, 0, s0], _evaluate(self._p_true, self.rewards, pi)[:, :, 0, s0]))
            return cache["out"]

        def value_error(est):
            v_hat, v_true = planned(est)
            return np.abs(v_hat - v_true).max(axis=1)

        def suboptimality(est):
            return (self.optimal_values[None] - planned(est)[1]).max(axis=1)

        def certificate(est):
            return 2.0 * est.values[:, 0, s0]

        def confidence_ratio(est):
            dev = theta[None] - est.theta_hat
            return np.sqrt(np.einsum("ri,rij,rj->r", dev, est.gram, dev)) / est.beta

        def metric(name, fn):
            return Metric(name, lambda n_reps, xp: None, lambda acc, info, t: info["estimate"], fn)

        return {"value_error": metric("value_error", value_error),
                "suboptimality": metric("suboptimality", suboptimality),
                "certificate": metric("certificate", certificate),
                "confidence_ratio": metric("confidence_ratio", confidence_ratio)}


def reward_free_ttr(*, delta: float = 0.1, ridge: float = 1.0, beta_scale: float = 1.0) -> Learner:
    r"""Reward-free exploration with an uncertainty pseudo-reward and transition-targeted regression.

    Parameters
    ----------
    delta : float in (0, 1)
        The certificate holds for every reward simultaneously with probability at least :math:`1 - \delta`.
    ridge : float > 0
        :math:`\lambda`.
    beta_scale : float >= 0
        Multiplies the self-normalised radius (the certificate is proved for 1).

    Returns
    -------
    Learner
        Feedback kind ``"reward_free"``: runs on a :class:`RewardFreeMixture` through
        :func:`expertlab.sim.run`, which tells it the base kernels :math:`\phi_i` of
        :math:`P_\theta = \sum_i \theta_i \phi_i` and the episode length :math:`H`, never a
        reward.  State :class:`RewardFreeState`; deterministic.  The run returns the fitted weight
        :math:`\tilde\theta` after its last episode in ``final["theta"]`` ``(n_reps, d)``, the model
        :func:`plan_for_rewards` plans on.

    Notes
    -----
    Every observed transition :math:`(s, a, s')` is a vector observation
    :math:`\phi(s' | s, a) \in \mathbb R^d` with mean
    :math:`\sum_j P_\theta(j | s, a) \phi(j | s, a)` and regressor
    :math:`\sum_j \phi(j|s,a)\phi(j|s,a)^\top`:

    .. math::

        \hat\theta = \Lambda^{-1} b, \qquad \tilde\theta = \Pi_{\Delta}(\hat\theta), \qquad
        \beta_0 = \sqrt{2 \ln(1/\delta) + \ln\det(\Lambda / \lambda)} + \sqrt\lambda, \qquad
        \beta = \beta_0 + \|\hat\theta - \tilde\theta\|_{\Lambda}.

    For a unit :math:`w`, :math:`\langle w, \phi(s'|s,a)\rangle` has range at most
    :math:`2 \max_j |\langle w, \phi(j|s,a)\rangle|`, so by Hoeffding's lemma the
    noise is sub-Gaussian with covariance proxy equal to the regressor; the
    self-normalised bound (Abbasi-Yadkori, Pál & Szepesvári 2011, Thm 1) then
    gives :math:`\|\theta - \hat\theta\|_\Lambda \le \beta_0`, hence
    :math:`\|\theta - \tilde\theta\|_\Lambda \le \beta`, at all times with
    probability :math:`1 - \delta` (:math:`\|\theta\|_2 \le 1` on the simplex;
    ``beta_scale`` multiplies :math:`\beta_0`).
    With values in :math:`[0, 1]` (total reward at most 1) and
    :math:`\sum_i (\theta - \tilde\theta)_i = 0`, one step of model error is
    at most :math:`\min(1, \beta g(s, a))` with
    :math:`g(s, a) = \tfrac12 \sum_{s'} \|\phi(s' | s, a)\|_{\Lambda^{-1}}`.
    Exploration plays the greedy policy of the unclipped values (the clip at 1
    would otherwise turn every saturated choice into a tie) in

    .. math::

        W_h(s, a) = \min\Big(1,\; 2 \beta g(s, a) + \sum_{s'} P_{\tilde\theta}(s' | s, a)
        \max_{a'} W_{h+1}(s', a')\Big), \qquad W_H = 0,

    and :math:`W_1(s_1)` bounds, for every policy and every reward with total
    at most 1, the value error of the fitted model; hence the plan on the
    fitted model is :math:`2 W_1(s_1)`-optimal for every such reward (the
    certificate).  Sums over :math:`s'` cost :math:`O(S^2 A d^2)` per
    replication and episode, independent of the episode index.

    Reconstructed and simplified: the protocol (exploration without rewards,
    then planning for any reward with total at most 1) and the claims are
    those of HF-UCRL-RFE++, but the estimator is not.  HF-UCRL-RFE++ uses
    uncertainty-weighted value-targeted regression with a high-order moment
    estimator, which makes its bound horizon-free; that estimator is not
    implemented here.  This explorer regresses on the observed next state
    itself (the transition-targeted form), and its certificate is not
    horizon-free (the per-step widths are summed over :math:`H` steps).

    References
    ----------
    Zhang, Zhang & Gu, "Optimal horizon-free reward-free exploration for
    linear mixture MDPs", ICML 2023 (HF-UCRL-RFE++, Alg. 1; upper bound
    :math:`\tilde O(d^2 \varepsilon^{-2})` episodes for total reward at most 1
    and the matching lower bound; theorem numbers not re-checked).
    Jin, Krishnamurthy, Simchowitz & Yu, "Reward-free exploration for
    reinforcement learning", ICML 2020 (the two-phase protocol).
    Abbasi-Yadkori, Pál & Szepesvári, "Improved algorithms for linear
    stochastic bandits", NeurIPS 2011, Thm 1 (self-normalised bound).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.mdp.instances import hard_linear_mixture
    >>> env = RewardFreeMixture(hard_linear_mixture(2, horizon=4, gap=0.1))
    >>> res = sim.run(reward_free_ttr(), env, horizon=30, n_reps=3, seed=0)
    >>> policy, values = plan_for_rewards(env.features, res.final["theta"], env.rewards)
    >>> policy.shape, bool((res.metrics["certificate"][-1] <= 2.0).all())
    ((3, 10, 4, 2), True)
    """
    delta = check_open_unit(delta, "delta")
    ridge = check_float(ridge, "ridge", positive=True)
    beta_scale = check_float(beta_scale, "beta_scale", minimum=0.0)
    name = "reward_free_ttr"

    def check_spec(spec):
        """What the environment tells, checked: ``(features, episode_length)``."""
        features = _check_features(spec.features)
        if features.shape[1:3] != (spec.n_states, spec.n_actions):
            raise ValueError(f"{name}: spec.features has shape {features.shape}, expected (d, {spec.n_states}, "
                             f"{spec.n_actions}, {spec.n_states})")
        return features, check_int(spec.episode_length, "episode_length")

    def init(spec, n_reps, keys=None, xp=np) -> RewardFreeState:
        features, horizon = check_spec(spec)
        d = features.shape[0]
        n_reps = check_int(n_reps, "n_reps")
        return RewardFreeState(np.broadcast_to(ridge * np.eye(d), (n_reps, d, d)).copy(), np.zeros((n_reps, d)),
                               features, horizon, 0, 0)

    def fit(state: RewardFreeState):
        """``(theta, theta_hat, gram_inv, beta, radius)`` of the ridge regression."""
        d = state.gram.shape[1]
        inv = np.linalg.inv(state.gram)
        theta_hat = np.einsum("rij,rj->ri", inv, state.b)
        theta = _project_simplex(theta_hat)
        dev = theta_hat - theta
        off = np.sqrt(np.maximum(np.einsum("ri,rij,rj->r", dev, state.gram, dev), 0.0))
        logdet = np.linalg.slogdet(state.gram)[1] - d * math.log(ridge)
        beta = beta_scale * (np.sqrt(2.0 * math.log(1.0 / delta) + np.maximum(logdet, 0.0)) + math.sqrt(ridge))
        return theta, theta_hat, inv, beta, beta + off

    def act(state: RewardFreeState, obs, keys):
        features, horizon = state.features, state.episode_length
        d, n_s, n_a = features.shape[:3]
        theta, theta_hat, inv, beta, radius = fit(state)
        p = _kernels(features, theta)
        flat = np.moveaxis(features, 0, -1).reshape(-1, d)  # rows phi(t | s, a), index (s, a, t)
        q = np.einsum("nd,rde,ne->rn", flat, inv, flat)
        widths = 0.5 * np.sqrt(np.maximum(q, 0.0)).reshape(-1, n_s, n_a, n_s).sum(axis=-1)  # (R, S, A)
        bonus = 2.0 * radius[:, None, None] * widths
        n_reps = theta.shape[0]
        v = np.zeros((n_reps, horizon + 1, n_s))
        q = np.empty((n_reps, horizon, n_s, n_a))  # before the clip at 1, which would make saturated ties
        for h in range(horizon - 1, -1, -1):
            q[:, h] = bonus + np.einsum("rsat,rt->rsa", p, v[:, h + 1])
            v[:, h] = np.minimum(1.0, q[:, h].max(axis=-1))
        est = RewardFreeEstimate(theta, theta_hat, inv, beta, radius, state.gram, v)
        return Exploration(q.argmax(axis=-1), est), state

    def update(state: RewardFreeState, exploration, episode, keys) -> RewardFreeState:
        features = state.features
        states, actions = np.asarray(episode.states), np.asarray(episode.actions)
        s, a, nxt = states[:, :-1], actions, states[:, 1:]
        gram_sa = np.einsum("isat,jsat->saij", features, features)  # (S, A, d, d)
        gram = state.gram + gram_sa[s, a].sum(axis=1)
        b = state.b + np.moveaxis(features[:, s, a, nxt], 0, -1).sum(axis=1)
        return state._replace(gram=gram, b=b, n_samples=state.n_samples + s.shape[1],
                              n_episodes=state.n_episodes + 1)

    def final(state: RewardFreeState):
        return {"theta": fit(state)[0]}

    return Learner(name, "reward_free", init, act, update, {"delta": delta, "ridge": ridge,
                                                            "beta_scale": beta_scale},
                   doc=reward_free_ttr.__doc__, check_spec=check_spec, final=final)


def _check_battery(rewards, horizon, n_s, n_a):
    r = real_array(rewards, "rewards", finite=False)
    if r.ndim == 3:
        r = r[None]
    if r.ndim != 4 or r.shape[1:] != (horizon, n_s, n_a):
        raise ValueError(f"rewards must have shape (n_rewards, {horizon}, {n_s}, {n_a}), got {np.shape(rewards)}")
    if not np.all(np.isfinite(r)) or r.min() < 0:
        raise ValueError("rewards must be finite and non-negative")
    if np.any(r.max(axis=(2, 3)).sum(axis=1) > 1.0 + 1e-12):
        raise ValueError("rewards must have total at most 1 over an episode (sum over h of max_{s,a} r_h <= 1)")
    return r


def plan_for_rewards(features, theta, rewards):
    r"""Optimal policies of the fitted models for a batch of rewards (the planning phase).

    Parameters
    ----------
    features : ndarray, shape (d, S, A, S)
    theta : ndarray, shape (n_reps, d)
        Weights on the simplex, e.g. ``final["theta"]`` of a run of :func:`reward_free_ttr`.
    rewards : ndarray, shape (n_rewards, H, S, A) or (H, S, A)
        Non-negative, with :math:`\sum_h \max_{s,a} r_h(s, a) \le 1`.

    Returns
    -------
    policy : ndarray of int, shape (n_reps, n_rewards, H, S)
    values : ndarray, shape (n_reps, n_rewards, H + 1, S)
        Optimal values in the fitted models.

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.stack([np.eye(2)[:, None, :].repeat(2, 1), np.eye(2)[::-1][:, None, :].repeat(2, 1)])
    >>> r = np.zeros((2, 2, 2)); r[1, 1, 0] = 1.0
    >>> pi, v = plan_for_rewards(phi, np.array([[0.0, 1.0]]), r)
    >>> v[0, 0, 0].tolist()
    [1.0, 0.0]
    """
    features = _check_features(features)
    theta = real_array(theta, "theta", finite=False)
    d, n_s, n_a = features.shape[:3]
    if theta.ndim != 2 or theta.shape[1] != d:
        raise ValueError(f"theta must have shape (n_reps, {d}), got {theta.shape}")
    if not np.all(np.isfinite(theta)) or theta.min() < 0 or np.any(np.abs(theta.sum(axis=1) - 1.0) > 1e-8):
        raise ValueError("theta must lie on the probability simplex (finite, non-negative, rows summing to 1)")
    r = real_array(rewards, "rewards", finite=False)
    r = _check_battery(r, r.shape[-3] if r.ndim >= 3 else 0, n_s, n_a)
    p = _kernels(features, theta)
    n_reps, (n_b, horizon) = theta.shape[0], r.shape[:2]
    v = np.zeros((n_reps, n_b, horizon + 1, n_s))
    pi = np.empty((n_reps, n_b, horizon, n_s), dtype=np.int64)
    for h in range(horizon - 1, -1, -1):
        q = r[None, :, h] + np.einsum("rsat,rbt->rbsa", p, v[:, :, h + 1])
        pi[:, :, h] = q.argmax(axis=-1)
        v[:, :, h] = q.max(axis=-1)
    return pi, v


def _evaluate(p, rewards, policy):
    """Exact values ``(n_reps, n_rewards, H + 1, S)`` of ``policy (R, B, H, S)`` in the kernel ``p (S, A, S)``."""
    n_reps, n_b, horizon, n_s = policy.shape
    v = np.zeros((n_reps, n_b, horizon + 1, n_s))
    for h in range(horizon - 1, -1, -1):
        a = policy[:, :, h]  # (R, B, S)
        cont = np.einsum("sat,rbt->rbsa", p, v[:, :, h + 1])
        v[:, :, h] = np.take_along_axis(rewards[None, :, h] + cont, a[..., None], axis=-1)[..., 0]
    return v


def reward_battery(n_states: int, n_actions: int, horizon: int, *, n_random: int = 8, seed=0) -> np.ndarray:
    r"""Rewards with total at most 1: reach each state at the last stage, plus dense random rewards.

    Parameters
    ----------
    n_states, n_actions, horizon : int
    n_random : int >= 0
        Dense rewards :math:`r_h(s, a) = U_{h,s,a} / H` with :math:`U` uniform on [0, 1].
    seed : int or SeedSequence

    Returns
    -------
    ndarray, shape (n_states + n_random, H, S, A)
        Reward ``j < S`` pays 1 in state ``j`` at the last stage and nothing else.

    Raises
    ------
    TypeError
        If a size is not an integer or ``seed`` is not an int, a ``SeedSequence`` or ``None``.
    ValueError
        If a size is below its minimum, ``seed`` is negative, or the battery would have more than
        2**31 entries (the library's limit on one array).

    Examples
    --------
    >>> r = reward_battery(3, 2, 4, n_random=2)
    >>> r.shape, float(r[1, 3, 1, 0]), bool((r.max(axis=(2, 3)).sum(axis=1) <= 1).all())
    ((5, 4, 3, 2), 1.0, True)
    """
    n_s, n_a = check_int(n_states, "n_states"), check_int(n_actions, "n_actions")
    horizon, n_random = check_int(horizon, "horizon"), check_int(n_random, "n_random", minimum=0)
    check_array_size((n_s + n_random, horizon, n_s, n_a), ("n_states", "n_actions", "horizon", "n_random"))
    seed_to_uint64(seed)  # refuses what is not a seed, naming it
    reach = np.zeros((n_s, horizon, n_s, n_a))
    reach[np.arange(n_s), horizon - 1, np.arange(n_s)] = 1.0
    dense = np.random.default_rng(seed).uniform(size=(n_random, horizon, n_s, n_a)) / horizon
    return np.concatenate([reach, dense])
