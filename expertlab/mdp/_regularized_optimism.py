r"""Single-stream learning in discounted linear-mixture MDPs: regularised optimism and UCLK.

Both learners share one driver, :func:`run_stream`: a single trajectory per
replication (no resets), value-targeted ridge regression on
:math:`x_t = \sum_{s'} \phi(s' | s_t, a_t) V(s')` with Sherman–Morrison
inverses, and epochs that end when :math:`\det \Sigma` has doubled.  They
differ only in the planner run at the start of an epoch: regularised
approximate value iteration with a log-sum-exp (mirror-descent) policy update
(:func:`regularized_optimism`) or optimistic extended value iteration with
greedy policies (:func:`uclk`).  The regret of the stream is computed exactly
with the true model.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable, NamedTuple

import numpy as np

from .._random import rep_key, round_key, seed_to_uint64, uniform
from .._validation import check_float, check_int, check_open_unit
from ._models import LinearMixtureMDP, check_gamma
from ._planning import policy_iteration
from ._ucrl_vtr import sherman_morrison

__all__ = ["StreamLearner", "StreamResult", "regularized_optimism", "uclk", "run_stream", "confidence_radius"]


class StreamLearner(NamedTuple):
    """A single-stream learner: ``plan(inv, b, beta, n_steps) -> (policy (n, S, A), values (n, S))``.

    ``inv (n, d, d)``, ``b (n, d)`` and ``n_steps (n,)`` (steps taken so far) are those of ``n`` replications.
    """

    name: str
    params: dict
    plan: Callable


@dataclasses.dataclass(frozen=True)
class StreamResult:
    r"""Regret of single-stream runs.

    Attributes
    ----------
    checkpoints : ndarray, shape (n_checkpoints,)
        Numbers of steps :math:`t` at which the regret is recorded.
    regret : ndarray, shape (n_checkpoints, n_reps)
        :math:`\sum_{u < t} (V^\star(s_u) - V^{\pi_u}(s_u))`, exact given the visited states.
    n_epochs : ndarray, shape (n_reps,)
        Epochs (planner calls) of each replication.
    beta : float
        The confidence radius used.
    seed : int
    wall_time : float
    """

    checkpoints: np.ndarray
    regret: np.ndarray
    n_epochs: np.ndarray
    beta: float
    seed: int
    wall_time: float

    @property
    def mean_regret(self) -> np.ndarray:
        """Mean over replications, shape ``(n_checkpoints,)``."""
        return self.regret.mean(axis=1)


def confidence_radius(dim: int, gamma: float, horizon: int, *, delta: float = 0.1, lam: float = 1.0) -> float:
    r"""Self-normalised radius for value targets in :math:`[0, 1/(1-\gamma)]`.

    .. math::

        \beta = \frac{1}{2(1-\gamma)} \sqrt{d \ln\Big(\big(1 + \frac{T d}{(1-\gamma)^2 \lambda}\big)/\delta\Big)}
        + \sqrt\lambda,

    Abbasi-Yadkori, Pál & Szepesvári (2011, Thm 2) with
    :math:`1/(2(1-\gamma))`-sub-Gaussian noise, :math:`\|x\|_2^2 \le d/(1-\gamma)^2`,
    :math:`\|\theta\|_2 \le 1`, fixed at the planned horizon :math:`T`.

    Examples
    --------
    >>> round(confidence_radius(2, 0.0, 1, delta=0.5, lam=1.0), 4)
    1.9465
    """
    h = 1.0 / (1.0 - gamma)
    return 0.5 * h * math.sqrt(dim * math.log((1.0 + horizon * dim * h * h / lam) / delta)) + math.sqrt(lam)


def _check_features(features):
    if not isinstance(features, np.ndarray) or features.ndim != 4 or features.shape[1] != features.shape[3]:
        raise ValueError(f"features must be an ndarray of shape (d, S, A, S), got {getattr(features, 'shape', None)}")
    return features


def _check_rewards(rewards, features):
    if not isinstance(rewards, np.ndarray) or rewards.shape != features.shape[1:3]:
        raise ValueError(f"rewards must be an ndarray of shape {features.shape[1:3]}, got "
                         f"{getattr(rewards, 'shape', None)}")
    if not np.all(np.isfinite(rewards)) or rewards.min() < 0.0 or rewards.max() > 1.0:
        raise ValueError("rewards must be finite and lie in [0, 1]")
    return rewards.astype(np.float64)


def _optimistic_backup(phi_flat, rewards, gamma, inv, theta, beta, v):
    r"""``r + gamma clip(<theta, x> + beta ||x||_{inv}, 0, 1/(1-gamma))``, ``x = phi v``: shape ``(n, S, A)``.

    ``phi_flat`` is the feature array laid out as ``(d, S A, S)``.
    """
    n = v.shape[0]
    x = np.matmul(phi_flat, v.T[None]).transpose(2, 1, 0)  # (n, S A, d)
    width = np.sqrt(np.maximum(np.einsum("nki,nij,nkj->nk", x, inv, x), 0.0))
    pv = np.clip(np.matmul(x, theta[:, :, None])[..., 0] + beta * width, 0.0, 1.0 / (1.0 - gamma))
    return rewards + gamma * pv.reshape(n, *rewards.shape)


def _logsumexp(z):
    """Stable ``log sum exp`` over the last axis of a finite array."""
    m = z.max(axis=-1)
    return m + np.log(np.exp(z - m[..., None]).sum(axis=-1))


def regularized_optimism(features, rewards, gamma, *, eta_scale: float = 1.0, n_iter: int = 50) -> StreamLearner:
    r"""Optimistic planning by regularised approximate value iteration (RAVI-UCB style).

    Parameters
    ----------
    features : ndarray, shape (d, S, A, S)
        Known base kernels :math:`\phi_i`.
    rewards : ndarray, shape (S, A)
        Known rewards in [0, 1].
    gamma : float in [0, 1)
    eta_scale : float > 0
        :math:`c_\eta` in the step size :math:`\eta_t = c_\eta \sqrt{t \ln A} / K` of an epoch
        starting at step :math:`t`.
    n_iter : int
        Iterations :math:`K` of regularised value iteration per epoch.

    Returns
    -------
    StreamLearner
        Driven by :func:`run_stream`; acts from the softmax policy :math:`\pi_K`.

    Notes
    -----
    With :math:`\hat\theta = \Sigma^{-1} b`, :math:`V_0 = 0`, :math:`\pi_0` uniform,
    and :math:`x_k(s, a) = \sum_{s'} \phi(s'|s,a) V_k(s')`:

    .. math::

        Q_{k+1} = r + \gamma\, \Pi_{[0, 1/(1-\gamma)]}\big(\langle \hat\theta, x_k\rangle
        + \beta \|x_k\|_{\Sigma^{-1}}\big), \qquad
        V_{k+1}(s) = \frac1\eta \log \sum_a \pi_k(a|s)\, e^{\eta Q_{k+1}(s, a)},

    .. math::

        \pi_{k+1}(a|s) = \pi_k(a|s)\, e^{\eta (Q_{k+1}(s,a) - V_{k+1}(s))},

    with :math:`\eta = \eta_t`, i.e. :math:`\pi_{k+1}` maximises
    :math:`\langle \pi, Q_{k+1}\rangle - \mathrm{KL}(\pi\|\pi_k)/\eta` and
    :math:`V_{k+1}` is that maximum (log-sum-exp computed stably).  The
    regression targets of the epoch use :math:`V_K`.

    Reconstructed or simplified: the learner acts from the last iterate
    :math:`\pi_K` of each epoch (not a mixture of the iterates); the step
    size is not the paper's tuning but chosen so that the regularisation bias
    of the last iterate, of order
    :math:`\ln A / (\eta_t K) = \sqrt{\ln A / t}/c_\eta`, falls at the
    :math:`1/\sqrt t` rate that a :math:`\sqrt T` regret allows (:math:`\ln 2`
    replaces :math:`\ln A` when :math:`A = 1`); epochs end when
    :math:`\det\Sigma` doubles, as in UCLK; the projection onto
    :math:`[0, 1/(1-\gamma)]` stands in for the paper's clipping.  The regret
    theorem was not re-checked against the paper's exact statement.

    [validated-rates]

    References
    ----------
    Moulin & Neu, "Optimistic planning by regularized dynamic programming",
    ICML 2023 (RAVI-UCB for discounted linear mixture MDPs, Sec. 5; regret
    :math:`\tilde O(\sqrt T)`, main theorem of that section).

    Examples
    --------
    >>> from expertlab.mdp.instances import random_linear_mixture
    >>> m = random_linear_mixture(3, 2, dim=2, gamma=0.5, seed=0)
    >>> res = run_stream(regularized_optimism(m.features, m.rewards, m.gamma), m, horizon=50, n_reps=2, seed=0)
    >>> res.regret.shape, bool((res.regret >= -1e-9).all())
    ((1, 2), True)
    """
    features = _check_features(features)
    eta_scale = check_float(eta_scale, "eta_scale", positive=True)
    n_iter = check_int(n_iter, "n_iter")
    gamma = check_gamma(gamma)
    rewards = _check_rewards(rewards, features)
    phi_flat = features.reshape(features.shape[0], -1, features.shape[1])

    def plan(inv, b, beta, n_steps):
        n = b.shape[0]
        eta = (eta_scale * np.sqrt(np.maximum(n_steps, 1) * math.log(max(rewards.shape[1], 2))) / n_iter)[:, None, None]
        theta = np.einsum("nij,nj->ni", inv, b)
        v = np.zeros((n, features.shape[1]))
        logpi = np.full((n, *rewards.shape), -math.log(rewards.shape[1]))
        for _ in range(n_iter):
            z = logpi + eta * _optimistic_backup(phi_flat, rewards, gamma, inv, theta, beta, v)
            lse = _logsumexp(z)
            v = lse / eta[..., 0]
            logpi = z - lse[..., None]
        return np.exp(logpi), v

    return StreamLearner("regularized-optimism", {"eta_scale": eta_scale, "n_iter": n_iter}, plan)


def uclk(features, rewards, gamma, *, n_iter: int = 50) -> StreamLearner:
    r"""UCLK-style optimistic extended value iteration with greedy policies (baseline).

    Parameters
    ----------
    features : ndarray, shape (d, S, A, S)
    rewards : ndarray, shape (S, A)
    gamma : float in [0, 1)
    n_iter : int
        Value-iteration sweeps :math:`U` per epoch.

    Returns
    -------
    StreamLearner
        Driven by :func:`run_stream`; acts greedily (a one-hot policy).

    Notes
    -----
    Maximising :math:`\langle\theta, x\rangle` over the ellipsoid
    :math:`\|\theta - \hat\theta\|_\Sigma \le \beta` gives
    :math:`\langle\hat\theta, x\rangle + \beta\|x\|_{\Sigma^{-1}}`, so extended
    value iteration is

    .. math::

        Q_{u+1} = r + \gamma\, \Pi_{[0, 1/(1-\gamma)]}\big(\langle \hat\theta, x_u\rangle
        + \beta \|x_u\|_{\Sigma^{-1}}\big), \qquad V_{u+1}(s) = \max_a Q_{u+1}(s, a),

    from :math:`V_0 = 0`; the epoch plays the greedy policy of :math:`Q_U`.
    Reconstructed: UCLK plays a non-stationary sequence of the iterates inside
    an epoch and drops the projection; here the last greedy policy is kept.

    [validated-rates]

    References
    ----------
    Zhou, He & Gu, "Provably efficient reinforcement learning for discounted
    MDPs with feature mapping", ICML 2021, Alg. 1 (UCLK) and Thm 5.1 (regret
    :math:`\tilde O(d\sqrt T/(1-\gamma)^2)`).

    Examples
    --------
    >>> from expertlab.mdp.instances import random_linear_mixture
    >>> m = random_linear_mixture(3, 2, dim=2, gamma=0.5, seed=0)
    >>> res = run_stream(uclk(m.features, m.rewards, m.gamma), m, horizon=50, n_reps=2, seed=0)
    >>> res.n_epochs.shape
    (2,)
    """
    features = _check_features(features)
    n_iter = check_int(n_iter, "n_iter")
    gamma = check_gamma(gamma)
    rewards = _check_rewards(rewards, features)
    phi_flat = features.reshape(features.shape[0], -1, features.shape[1])

    def plan(inv, b, beta, n_steps):
        theta = np.einsum("nij,nj->ni", inv, b)
        v = np.zeros((b.shape[0], features.shape[1]))
        for _ in range(n_iter):
            q = _optimistic_backup(phi_flat, rewards, gamma, inv, theta, beta, v)
            v = q.max(axis=-1)
        return np.eye(rewards.shape[1])[q.argmax(axis=-1)], v

    return StreamLearner("uclk", {"n_iter": n_iter}, plan)


def _policy_values(p, r, gamma, pi):
    """Exact value of stochastic policies ``pi (n, S, A)`` in the kernel ``p (S, A, S)``: shape ``(n, S)``."""
    p_pi = np.einsum("nsa,sat->nst", pi, p)
    r_pi = np.einsum("nsa,sa->ns", pi, r)
    return np.linalg.solve(np.eye(p.shape[0]) - gamma * p_pi, r_pi[..., None])[..., 0]


def run_stream(learner: StreamLearner, mdp: LinearMixtureMDP, horizon: int, n_reps: int, seed=0, *,
               checkpoints=None, initial_state: int = 0, delta: float = 0.1, lam: float = 1.0,
               beta_scale: float = 1.0) -> StreamResult:
    r"""Run a single-stream learner on one discounted linear-mixture MDP, all replications at once.

    Parameters
    ----------
    learner : StreamLearner
    mdp : LinearMixtureMDP
        One MDP (``theta`` of shape ``(d,)``) with rewards in [0, 1].
    horizon : int
        Steps :math:`T` of the stream.
    n_reps : int
    seed : int or SeedSequence
    checkpoints : sequence of int, optional
        Steps in ``[1, horizon]`` at which the regret is recorded (default: ``horizon``).
    initial_state : int
    delta, lam, beta_scale : float
        :math:`\beta` = ``beta_scale *`` :func:`confidence_radius` ``(d, gamma, horizon, delta, lam)``.

    Returns
    -------
    StreamResult

    Notes
    -----
    At step :math:`t`, if :math:`\ln\det\Sigma_t - \ln\det\Sigma_{\tau} > \ln 2`
    (:math:`\tau` the start of the epoch) a new epoch starts and the learner
    plans :math:`(\pi, V)`.  Then :math:`a_t \sim \pi(\cdot|s_t)`,
    :math:`s_{t+1} \sim P_{\theta^\star}(\cdot|s_t, a_t)` (inverse CDF of the
    counter-based uniforms of ``(seed, replication, t)``), and

    .. math::

        \Sigma \leftarrow \Sigma + x_t x_t^\top, \quad b \leftarrow b + x_t V(s_{t+1}), \quad
        x_t = \sum_{s'} \phi(s'|s_t, a_t) V(s'),

    with :math:`\Sigma_0 = \lambda I`, the inverse by Sherman–Morrison and
    :math:`\ln\det` by :math:`\ln(1 + x^\top\Sigma^{-1}x)` increments.  The
    regret is :math:`R_T = \sum_{t<T} (V^\star(s_t) - V^{\pi_t}(s_t))`, with
    :math:`V^{\pi_t}` the exact value of the policy played at :math:`t` (a
    linear solve at each epoch) and :math:`V^\star` from policy iteration
    (the regret of a discounted stream of Zhou, He & Gu, ICML 2021, Sec. 3).
    """
    if not isinstance(learner, StreamLearner):
        raise TypeError(f"learner must be a StreamLearner, got {type(learner).__name__}")
    if not isinstance(mdp, LinearMixtureMDP):
        raise TypeError(f"mdp must be a LinearMixtureMDP, got {type(mdp).__name__}")
    if mdp.theta.shape != (mdp.dim,):
        raise ValueError(f"mdp.theta must have shape ({mdp.dim},) (one MDP), got {tuple(mdp.theta.shape)}")
    if float(np.min(mdp.rewards)) < 0.0 or float(np.max(mdp.rewards)) > 1.0:
        raise ValueError("mdp.rewards must lie in [0, 1]")
    horizon = check_int(horizon, "horizon")
    n_reps = check_int(n_reps, "n_reps")
    s_, a_, d, gamma = mdp.n_states, mdp.n_actions, mdp.dim, mdp.gamma
    initial_state = check_int(initial_state, "initial_state", minimum=0, maximum=s_ - 1)
    delta = check_open_unit(delta, "delta")
    lam = check_float(lam, "lam", positive=True)
    beta = check_float(beta_scale, "beta_scale", positive=True) * confidence_radius(d, gamma, horizon,
                                                                                     delta=delta, lam=lam)
    ck = np.array([horizon] if checkpoints is None else checkpoints, dtype=np.int64).ravel()
    if ck.size == 0 or np.any(np.diff(ck) <= 0) or ck[0] < 1 or ck[-1] > horizon:
        raise ValueError(f"checkpoints must be strictly increasing integers in [1, {horizon}], got {ck.tolist()}")
    key = seed_to_uint64(seed)
    t0 = time.perf_counter()
    p = np.asarray(mdp.transitions, dtype=np.float64)
    r = np.asarray(mdp.rewards, dtype=np.float64)
    phi = np.asarray(mdp.features, dtype=np.float64)
    cdf = np.cumsum(p, axis=-1)
    v_star = policy_iteration(p, r, gamma).policy_values
    rkeys = rep_key(np.full(n_reps, key), np.arange(n_reps, dtype=np.uint64))
    rows = np.arange(n_reps)
    zeros, ones = np.zeros(n_reps, dtype=np.uint64), np.ones(n_reps, dtype=np.uint64)
    inv = np.broadcast_to(np.eye(d) / lam, (n_reps, d, d)).copy()
    b = np.zeros((n_reps, d))
    logdet = np.zeros(n_reps)
    logdet_epoch = np.zeros(n_reps)
    pi, v = learner.plan(inv, b, beta, np.zeros(n_reps, dtype=np.int64))
    v_pi = _policy_values(p, r, gamma, pi)
    pi_cdf = np.cumsum(pi, axis=-1)
    n_epochs = np.ones(n_reps, dtype=np.int64)
    s = np.full(n_reps, initial_state, dtype=np.int64)
    regret = np.zeros(n_reps)
    out = np.empty((ck.size, n_reps))
    j = 0
    for t in range(horizon):
        new = logdet - logdet_epoch > math.log(2.0)
        if new.any():
            idx = np.flatnonzero(new)
            pi_n, v[idx] = learner.plan(inv[idx], b[idx], beta, np.full(idx.size, t))
            pi_cdf[idx] = np.cumsum(pi_n, axis=-1)
            v_pi[idx] = _policy_values(p, r, gamma, pi_n)
            logdet_epoch[idx] = logdet[idx]
            n_epochs[idx] += 1
        regret += v_star[s] - v_pi[rows, s]
        tk = round_key(rkeys, np.full(n_reps, t, dtype=np.uint64))
        a = np.minimum((pi_cdf[rows, s] < uniform(tk, zeros)[:, None]).sum(axis=-1), a_ - 1)
        s_next = np.minimum((cdf[s, a] < uniform(tk, ones)[:, None]).sum(axis=-1), s_ - 1)
        x = np.einsum("irt,rt->ri", phi[:, s, a, :], v)
        u = np.einsum("rij,rj->ri", inv, x)
        logdet += np.log1p(np.einsum("ri,ri->r", x, u))
        inv = sherman_morrison(inv, x)
        b += x * v[rows, s_next][:, None]
        s = s_next
        if j < ck.size and t + 1 == ck[j]:
            out[j] = regret
            j += 1
    return StreamResult(ck, out, n_epochs, beta, int(key), time.perf_counter() - t0)
