r"""Reward-free exploration in episodic linear mixtures, batched over replications.

Exploration sees transitions only: a pseudo-reward equal to the width of the
confidence set on the mixture weight drives an optimistic policy, and the
weight is fitted by transition-targeted ridge regression.  Afterwards
:func:`plan_for_rewards` plans on the fitted model for any reward whose total
over an episode is at most 1, and the explorer's certificate bounds the
suboptimality of those plans for every such reward at once.
:func:`run_reward_free` measures the certificate, the true suboptimality and the
value error on a battery of rewards (:func:`reward_battery`) by exact
evaluation.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable, NamedTuple

import numpy as np

from .._random import rep_key, round_key, seed_to_uint64
from .._validation import check_float, check_int, check_open_unit
from ._dr_offline import simplex_projection
from ._episodic import _check_checkpoints, sample_episodes
from ._ucrl_vtr import EpisodicLinearMixture, _check_features

__all__ = ["RewardFreeState", "RewardFreeEstimate", "RewardFreeExplorer", "RewardFreeResult", "reward_free_ttr",
           "plan_for_rewards", "reward_battery", "run_reward_free"]


class RewardFreeState(NamedTuple):
    r"""Regression statistics of every replication (leading axis ``n_reps``).

    ``gram (n_reps, d, d)``: :math:`\Lambda = \lambda I + \sum_n \sum_{j} \phi(j | s_n, a_n) \phi(j | s_n, a_n)^\top`;
    ``b (n_reps, d)``: :math:`\sum_n \phi(s'_n | s_n, a_n)`; ``n_samples``: transitions absorbed per replication.
    """

    gram: np.ndarray
    b: np.ndarray
    n_samples: int


class RewardFreeEstimate(NamedTuple):
    r"""The fitted weight and its confidence set, per replication.

    ``theta (n_reps, d)``: :math:`\tilde\theta`, the ridge estimate projected on the simplex;
    ``theta_hat (n_reps, d)``: the ridge estimate :math:`\hat\theta`; ``gram_inv (n_reps, d, d)``;
    ``beta (n_reps,)``: the self-normalised radius :math:`\beta_0` of :math:`\|\theta - \hat\theta\|_\Lambda`;
    ``radius (n_reps,)``: :math:`\beta = \beta_0 + \|\hat\theta - \tilde\theta\|_\Lambda`, which bounds
    :math:`\|\theta - \tilde\theta\|_\Lambda`.
    """

    theta: np.ndarray
    theta_hat: np.ndarray
    gram_inv: np.ndarray
    beta: np.ndarray
    radius: np.ndarray


class RewardFreeExplorer(NamedTuple):
    """A reward-free explorer: a name, its settings and pure functions of a :class:`RewardFreeState`.

    ``init(n_reps)``; ``plan(state) -> (n_reps, H, S)`` exploration policy;
    ``update(state, states, actions)`` absorbs one episode of every replication;
    ``estimate(state) -> RewardFreeEstimate``;
    ``exploration_values(state) -> (n_reps, H + 1, S)``; ``certificate(state, initial_state) -> (n_reps,)``.
    """

    name: str
    params: dict
    features: np.ndarray
    horizon: int
    init: Callable
    plan: Callable
    update: Callable
    estimate: Callable
    exploration_values: Callable
    certificate: Callable


def _kernels(features, theta):
    """Per-replication kernels ``(n_reps, S, A, S)`` of weights ``theta (n_reps, d)``."""
    return np.einsum("ri,isat->rsat", theta, features)


def reward_free_ttr(features, horizon: int, *, delta: float = 0.1, ridge: float = 1.0,
                    beta_scale: float = 1.0) -> RewardFreeExplorer:
    r"""Reward-free exploration with an uncertainty pseudo-reward and transition-targeted regression.

    Parameters
    ----------
    features : ndarray, shape (d, S, A, S)
        The known base kernels :math:`\phi_i` of :math:`P_\theta = \sum_i \theta_i \phi_i`.
    horizon : int >= 1
        :math:`H`.
    delta : float in (0, 1)
        The certificate holds for every reward simultaneously with probability at least :math:`1 - \delta`.
    ridge : float > 0
        :math:`\lambda`.
    beta_scale : float >= 0
        Multiplies the self-normalised radius (the certificate is proved for 1).

    Returns
    -------
    RewardFreeExplorer

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
    >>> import numpy as np
    >>> from expertlab.mdp.instances import hard_linear_mixture
    >>> m = hard_linear_mixture(2, horizon=4, gap=0.1)
    >>> ex = reward_free_ttr(m.features, 4)
    >>> st = ex.init(3)
    >>> ex.plan(st).shape, ex.certificate(st, 0).shape
    ((3, 4, 2), (3,))
    """
    features = _check_features(features)
    horizon = check_int(horizon, "horizon", minimum=1)
    delta = check_open_unit(delta, "delta")
    ridge = check_float(ridge, "ridge", positive=True)
    beta_scale = check_float(beta_scale, "beta_scale", minimum=0.0)
    d, n_s, n_a = features.shape[:3]
    gram_sa = np.einsum("isat,jsat->saij", features, features)  # (S, A, d, d)
    flat = np.moveaxis(features, 0, -1).reshape(-1, d)  # rows phi(t | s, a), index (s, a, t)

    def init(n_reps: int) -> RewardFreeState:
        n_reps = check_int(n_reps, "n_reps")
        return RewardFreeState(np.broadcast_to(ridge * np.eye(d), (n_reps, d, d)).copy(), np.zeros((n_reps, d)), 0)

    def estimate(state: RewardFreeState):
        inv = np.linalg.inv(state.gram)
        theta_hat = np.einsum("rij,rj->ri", inv, state.b)
        theta = simplex_projection(theta_hat)
        dev = theta_hat - theta
        off = np.sqrt(np.maximum(np.einsum("ri,rij,rj->r", dev, state.gram, dev), 0.0))
        logdet = np.linalg.slogdet(state.gram)[1] - d * math.log(ridge)
        beta = beta_scale * (np.sqrt(2.0 * math.log(1.0 / delta) + np.maximum(logdet, 0.0)) + math.sqrt(ridge))
        return RewardFreeEstimate(theta, theta_hat, inv, beta, beta + off)

    def widths(inv):
        q = np.einsum("nd,rde,ne->rn", flat, inv, flat)
        return 0.5 * np.sqrt(np.maximum(q, 0.0)).reshape(-1, n_s, n_a, n_s).sum(axis=-1)  # (R, S, A)

    def passes(state: RewardFreeState):
        theta, _, inv, _, radius = estimate(state)
        p = _kernels(features, theta)
        bonus = 2.0 * radius[:, None, None] * widths(inv)
        n_reps = theta.shape[0]
        v = np.zeros((n_reps, horizon + 1, n_s))
        q = np.empty((n_reps, horizon, n_s, n_a))  # before the clip at 1, which would make saturated ties
        for h in range(horizon - 1, -1, -1):
            q[:, h] = bonus + np.einsum("rsat,rt->rsa", p, v[:, h + 1])
            v[:, h] = np.minimum(1.0, q[:, h].max(axis=-1))
        return q, v

    def plan(state):
        return passes(state)[0].argmax(axis=-1)

    def exploration_values(state):
        return passes(state)[1]

    def certificate(state, initial_state: int):
        s0 = check_int(initial_state, "initial_state", minimum=0, maximum=n_s - 1)
        return 2.0 * exploration_values(state)[:, 0, s0]

    def update(state: RewardFreeState, states, actions) -> RewardFreeState:
        states, actions = np.asarray(states), np.asarray(actions)
        s, a, nxt = states[:, :-1], actions, states[:, 1:]
        gram = state.gram + gram_sa[s, a].sum(axis=1)
        b = state.b + np.moveaxis(features[:, s, a, nxt], 0, -1).sum(axis=1)
        return RewardFreeState(gram, b, state.n_samples + s.shape[1])

    params = {"delta": delta, "ridge": ridge, "beta_scale": beta_scale}
    return RewardFreeExplorer("reward-free-ttr", params, features, horizon, init, plan, update, estimate,
                              exploration_values, certificate)


def _check_battery(rewards, horizon, n_s, n_a):
    r = np.asarray(rewards, dtype=np.float64)
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
        Weights on the simplex, e.g. ``estimate(state).theta`` of a :class:`RewardFreeExplorer`.
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
    theta = np.asarray(theta, dtype=np.float64)
    d, n_s, n_a = features.shape[:3]
    if theta.ndim != 2 or theta.shape[1] != d:
        raise ValueError(f"theta must have shape (n_reps, {d}), got {theta.shape}")
    if not np.all(np.isfinite(theta)) or theta.min() < 0 or np.any(np.abs(theta.sum(axis=1) - 1.0) > 1e-8):
        raise ValueError("theta must lie on the probability simplex (finite, non-negative, rows summing to 1)")
    r = np.asarray(rewards, dtype=np.float64)
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

    Examples
    --------
    >>> r = reward_battery(3, 2, 4, n_random=2)
    >>> r.shape, float(r[1, 3, 1, 0]), bool((r.max(axis=(2, 3)).sum(axis=1) <= 1).all())
    ((5, 4, 3, 2), 1.0, True)
    """
    n_s, n_a = check_int(n_states, "n_states"), check_int(n_actions, "n_actions")
    horizon, n_random = check_int(horizon, "horizon"), check_int(n_random, "n_random", minimum=0)
    reach = np.zeros((n_s, horizon, n_s, n_a))
    reach[np.arange(n_s), horizon - 1, np.arange(n_s)] = 1.0
    dense = np.random.default_rng(seed).uniform(size=(n_random, horizon, n_s, n_a)) / horizon
    return np.concatenate([reach, dense])


@dataclasses.dataclass(frozen=True)
class RewardFreeResult:
    r"""What :func:`run_reward_free` measured at each checkpoint (number of exploration episodes).

    Attributes
    ----------
    explorer : str
    checkpoints : ndarray of int, shape (n_checkpoints,)
    certificate : ndarray, shape (n_checkpoints, n_reps)
        :math:`2 W_1(s_1)`, the explorer's bound on the suboptimality for every reward with total at most 1.
    suboptimality : ndarray, shape (n_checkpoints, n_reps)
        :math:`\max_b (V^\star_b - V^{\hat\pi_b}_b)(s_1)` over the battery, exact.
    value_error : ndarray, shape (n_checkpoints, n_reps)
        :math:`\max_b |\hat V_b - V^{\hat\pi_b}_b|(s_1)`: the fitted model's value of its own plan against the truth.
    confidence_ratio : ndarray, shape (n_checkpoints, n_reps)
        :math:`\|\theta - \hat\theta\|_\Lambda / \beta_0` (at most 1 on the confidence event), where
        :math:`\beta_0` is the self-normalised radius without the projection term.
    n_rewards, horizon, dim, n_episodes, n_reps, seed : int
    wall_time : float
    """

    explorer: str
    checkpoints: np.ndarray
    certificate: np.ndarray
    suboptimality: np.ndarray
    value_error: np.ndarray
    confidence_ratio: np.ndarray
    n_rewards: int
    horizon: int
    dim: int
    n_episodes: int
    n_reps: int
    seed: int
    wall_time: float

    @property
    def covered(self) -> np.ndarray:
        """Per replication: the certificate bounded the suboptimality and the value error at every checkpoint."""
        return np.all((self.certificate >= self.suboptimality) & (self.certificate >= self.value_error), axis=0)


def run_reward_free(explorer: RewardFreeExplorer, mixture: EpisodicLinearMixture, n_episodes: int, n_reps: int,
                    seed=0, *, rewards=None, checkpoints=None, initial_state: int = 0,
                    rep_offset: int = 0) -> RewardFreeResult:
    r"""Explore ``mixture`` for ``n_episodes`` episodes, then plan for a battery of rewards at each checkpoint.

    Parameters
    ----------
    explorer : RewardFreeExplorer
    mixture : EpisodicLinearMixture
        The true model; its ``rewards`` are never shown to the explorer.
    n_episodes, n_reps : int
    seed : int, SeedSequence or None
    rewards : ndarray, shape (n_rewards, H, S, A), optional
        Planning-phase rewards with total at most 1; default :func:`reward_battery` with ``seed``.
    checkpoints : sequence of int, optional
        Strictly increasing episode counts in ``[1, n_episodes]``; default ``[n_episodes]``.
    initial_state : int
    rep_offset : int
        Index of the first replication (blocks of a sweep share the seed).

    Returns
    -------
    RewardFreeResult

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.mdp.instances import hard_linear_mixture
    >>> m = hard_linear_mixture(2, horizon=4, gap=0.1)
    >>> res = run_reward_free(reward_free_ttr(m.features, 4), m, 30, 2, seed=0, checkpoints=[10, 30])
    >>> bool(res.covered.all()), bool((res.certificate[1] <= res.certificate[0]).all())
    (True, True)
    """
    if not isinstance(explorer, RewardFreeExplorer):
        raise TypeError(f"explorer must be a RewardFreeExplorer, got {type(explorer).__name__}")
    if not isinstance(mixture, EpisodicLinearMixture):
        raise TypeError(f"mixture must be an EpisodicLinearMixture, got {type(mixture).__name__}")
    if mixture.features.shape != explorer.features.shape or not np.array_equal(mixture.features, explorer.features):
        raise ValueError("the explorer's features differ from the mixture's")
    if mixture.horizon != explorer.horizon:
        raise ValueError(f"the explorer's horizon {explorer.horizon} differs from the mixture's {mixture.horizon}")
    n_episodes, n_reps = check_int(n_episodes, "n_episodes"), check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    fh = mixture.to_finite_horizon()
    h_, n_s, n_a = fh.horizon, fh.n_states, fh.n_actions
    s0 = check_int(initial_state, "initial_state", minimum=0, maximum=n_s - 1)
    seed64 = seed_to_uint64(seed)
    battery = reward_battery(n_s, n_a, h_, seed=int(seed64)) if rewards is None else rewards
    battery = _check_battery(battery, h_, n_s, n_a)
    ck = _check_checkpoints(checkpoints, n_episodes, default="last")
    p_true = np.asarray(fh.transitions)[0]
    v_star = _evaluate(p_true, battery, plan_for_rewards(mixture.features, mixture.theta[None], battery)[0])
    v_star = v_star[0, :, 0, s0]  # (B,)
    rkeys = rep_key(np.full(n_reps, seed64), np.arange(rep_offset, rep_offset + n_reps, dtype=np.uint64))
    state = explorer.init(n_reps)
    out = np.empty((4, ck.size, n_reps))
    j, t0 = 0, time.perf_counter()
    for k in range(int(ck[-1])):
        policy = np.asarray(explorer.plan(state))
        states, actions, _ = sample_episodes(fh, policy, round_key(rkeys, np.full(n_reps, k, np.uint64)), s0)
        state = explorer.update(state, states, actions)
        if k + 1 == ck[j]:
            est = explorer.estimate(state)
            theta, dev = est.theta, mixture.theta[None] - est.theta_hat
            out[3, j] = np.sqrt(np.einsum("ri,rij,rj->r", dev, state.gram, dev)) / est.beta
            pi, v_hat = plan_for_rewards(mixture.features, theta, battery)
            v_true = _evaluate(p_true, battery, pi)[:, :, 0, s0]  # (R, B)
            out[0, j] = explorer.certificate(state, s0)
            out[1, j] = (v_star[None] - v_true).max(axis=1)
            out[2, j] = np.abs(v_hat[:, :, 0, s0] - v_true).max(axis=1)
            j += 1
    return RewardFreeResult(explorer.name, ck.astype(np.int64), out[0], out[1], out[2], out[3], battery.shape[0], h_,
                            mixture.dim, n_episodes, n_reps, int(seed64), time.perf_counter() - t0)
