r"""Single-stream learning in discounted linear-mixture MDPs: regularised optimism and UCLK.

A :class:`LinearMixtureStream` is one discounted linear-mixture MDP played as
a single trajectory per replication (no resets); it is an environment of
:func:`expertlab.sim.run` with feedback kind ``"discounted_stream"`` and unit
``"step"`` (one transition per replication per step).  Both learners share
value-targeted ridge regression on :math:`x_t = \sum_{s'} \phi(s' | s_t, a_t)
V(s')` with Sherman–Morrison inverses, and epochs that end when
:math:`\det \Sigma` has doubled.  They differ only in the planner run at the
start of an epoch: regularised approximate value iteration with a log-sum-exp
(mirror-descent) policy update (:func:`regularized_optimism`, planner
:func:`regularized_value_iteration`) or optimistic extended value iteration
with greedy policies (:func:`uclk`, planner :func:`extended_value_iteration`).

Learner protocol for ``"discounted_stream"`` feedback
-----------------------------------------------------
``init(spec, n_reps, keys, xp)`` with ``spec.n_states``, ``spec.n_actions``,
the known rewards ``spec.rewards`` ``(S, A)``, the known base kernels
``spec.features`` ``(d, S, A, S)``, ``spec.gamma`` and ``spec.initial_state``;
``spec.horizon`` is the number of steps :math:`T`;
``act(state, s, keys) -> (StreamAction(action, policy, replanned), state)``:
``s`` the current states ``(n_reps,)``; ``action`` the actions ``(n_reps,)``,
drawn from ``policy`` ``(n_reps, S, A)`` (the stochastic policy in force) with
the learner's key; ``replanned`` (bool ``(n_reps,)``) marks the replications
whose policy changed at this step (all of them at the first step);
``update(state, action, s_next, keys)`` with the next states ``(n_reps,)``.

The next state is the inverse CDF of :math:`P_{\theta^\star}(\cdot | s_t, a_t)`
at draw 0 of the environment's round key.  The environment computes with
NumPy whatever the array namespace of the run.

Metrics
-------
``regret``
    :math:`\sum_{u < t} (V^\star(s_u) - V^{\pi_u}(s_u))`, exact given the
    visited states: :math:`V^{\pi_u}` is the exact value of the policy played
    at step :math:`u` (a linear solve with the true model when a replication
    replans) and :math:`V^\star` comes from policy iteration (the regret of a
    discounted stream of Zhou, He & Gu, ICML 2021, Sec. 3).
``epochs``
    The number of epochs (planner calls) so far, including the first.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, NamedTuple

import numpy as np

from .._random import uniform
from .._validation import check_float, check_int, check_open_unit
from ..sim import EnvSpec, Environment, Learner, Metric
from ._models import LinearMixtureMDP, check_gamma
from ._planning import policy_iteration
from ._ucrl_vtr import _sherman_morrison

__all__ = ["LinearMixtureStream", "StreamAction", "StreamState", "regularized_optimism", "uclk",
           "regularized_value_iteration", "extended_value_iteration", "confidence_radius"]

#: Draw of the environment's round key that picks the next state.
_TRANSITION_DRAW = 0


class StreamAction(NamedTuple):
    """A stream learner's action: the actions ``(n_reps,)``, the policy in force and where it changed."""

    action: Any
    policy: Any
    replanned: Any


class StreamState(NamedTuple):
    """State of the stream learners (leading axis ``n_reps``).

    ``inv (n_reps, d, d)``, ``b (n_reps, d)``: the value-targeted ridge regression; ``logdet``:
    :math:`\\ln\\det(\\Sigma/\\lambda)`, and ``logdet_epoch`` its value when the epoch began;
    ``policy (n_reps, S, A)`` and its row-wise CDF ``cdf``; ``values (n_reps, S)``: the planner's
    values (the regression targets of the epoch); ``s (n_reps,)``: the state of the last action;
    ``t``: steps played.  Shared constants told by the environment: ``features (d, S, A, S)``,
    ``rewards (S, A)``, ``gamma``; and ``beta``, the confidence radius fixed from the number of steps
    of the run.
    """

    inv: np.ndarray
    b: np.ndarray
    logdet: np.ndarray
    logdet_epoch: np.ndarray
    policy: np.ndarray
    cdf: np.ndarray
    values: np.ndarray
    s: np.ndarray
    t: int
    features: np.ndarray
    rewards: np.ndarray
    gamma: float
    beta: float


def _policy_values(p, r, gamma, pi):
    """Exact value of stochastic policies ``pi (n, S, A)`` in the kernel ``p (S, A, S)``: shape ``(n, S)``."""
    p_pi = np.einsum("nsa,sat->nst", pi, p)
    r_pi = np.einsum("nsa,sa->ns", pi, r)
    return np.linalg.solve(np.eye(p.shape[0]) - gamma * p_pi, r_pi[..., None])[..., 0]


@dataclasses.dataclass(frozen=True, repr=False, eq=False)
class LinearMixtureStream(Environment):
    r"""One discounted linear-mixture MDP played as a single stream per replication (an environment).

    Parameters
    ----------
    mdp : LinearMixtureMDP
        One MDP (``theta`` of shape ``(d,)``) with rewards in [0, 1]; the
        learner knows its features, rewards and discount, not ``theta``.
    initial_state : int
        The state :math:`s_0` of every stream.

    Notes
    -----
    An environment of :func:`expertlab.sim.run` with feedback kind
    ``"discounted_stream"`` and unit ``"step"``: each step the learner sees the
    current states ``(n_reps,)`` and returns a :class:`StreamAction` (the
    actions, the stochastic policy in force and where it changed); the next
    states, the inverse CDF of :math:`P_{\theta^\star}(\cdot | s_t, a_t)` at
    draw 0 of the environment's round key, are its feedback.  ``spec`` tells
    the learner the sizes, the ``rewards``, the base kernels ``features``,
    ``gamma`` and the ``initial_state``, not :math:`\theta^\star`.

    Metrics: ``regret``, :math:`\sum_{u < t} (V^\star(s_u) - V^{\pi_u}(s_u))`,
    exact given the visited states (the value of the policy played at step
    :math:`u` by a linear solve with the true model when a replication
    replans; :math:`V^\star` by policy iteration; the regret of a discounted
    stream of Zhou, He & Gu, ICML 2021, Sec. 3); ``epochs``, the number of
    planner calls so far, the first included.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.mdp.instances import random_linear_mixture
    >>> env = LinearMixtureStream(random_linear_mixture(3, 2, dim=2, gamma=0.5, seed=0))
    >>> res = sim.run(uclk(), env, horizon=50, n_reps=2, seed=0)
    >>> res.unit, res.metrics["regret"].shape, bool((res.metrics["regret"] >= -1e-9).all())
    ('step', (15, 2), True)
    """

    mdp: LinearMixtureMDP
    initial_state: int = 0

    name = "linear_mixture_stream"
    default_metrics = ("regret", "epochs")

    def __post_init__(self):
        mdp = self.mdp
        if not isinstance(mdp, LinearMixtureMDP):
            raise TypeError(f"mdp must be a LinearMixtureMDP, got {type(mdp).__name__}")
        if mdp.theta.shape != (mdp.dim,):
            raise ValueError(f"mdp.theta must have shape ({mdp.dim},) (one MDP), got {tuple(mdp.theta.shape)}")
        if float(np.min(mdp.rewards)) < 0.0 or float(np.max(mdp.rewards)) > 1.0:
            raise ValueError("mdp.rewards must lie in [0, 1]")
        check_int(self.initial_state, "initial_state", minimum=0, maximum=mdp.n_states - 1)

    @functools.cached_property
    def _model(self):
        """``(p (S, A, S), r (S, A), cdf, V*)`` of the true model."""
        p = np.asarray(self.mdp.transitions, dtype=np.float64)
        r = np.asarray(self.mdp.rewards, dtype=np.float64)
        return p, r, np.cumsum(p, axis=-1), np.asarray(policy_iteration(p, r, self.mdp.gamma).policy_values)

    @property
    def optimal_values(self) -> np.ndarray:
        r""":math:`V^\star`, shape ``(S,)``."""
        return self._model[3]

    @property
    def params(self):
        m = self.mdp
        return {"n_states": m.n_states, "n_actions": m.n_actions, "dim": m.dim, "gamma": float(m.gamma),
                "initial_state": int(self.initial_state)}

    @property
    def spec(self) -> EnvSpec:
        m = self.mdp
        return EnvSpec(feedback="discounted_stream", unit="step", n_actions=m.n_actions,
                       info={"n_states": m.n_states, "n_actions": m.n_actions, "gamma": float(m.gamma),
                             "rewards": np.asarray(m.rewards, dtype=np.float64),
                             "features": np.asarray(m.features, dtype=np.float64),
                             "initial_state": int(self.initial_state)})

    def reset(self, n_reps, keys, xp):
        """Every stream starts in ``initial_state``; the environment state is the current states ``(n_reps,)``."""
        return np.full(n_reps, self.initial_state, dtype=np.int64)

    def observe(self, s, t, keys):
        """The current states ``(n_reps,)``."""
        return s

    def step(self, s, act, t, keys):
        """One transition per replication from the :class:`StreamAction`; the feedback is the next states."""
        if not isinstance(act, StreamAction):
            raise TypeError(f"a stream learner's act must return a StreamAction(action, policy, replanned), got "
                            f"{type(act).__name__}")
        a = np.asarray(act.action)
        n_s, n_a = self.mdp.n_states, self.mdp.n_actions
        if a.shape != s.shape or not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() >= n_a:
            raise ValueError(f"the actions must be integers in [0, {n_a - 1}] of shape {s.shape}, got {a.dtype} "
                             f"{a.shape}")
        cdf = self._model[2]
        u = uniform(np.asarray(keys), np.full(s.shape[0], _TRANSITION_DRAW, dtype=np.uint64))
        s_next = np.minimum((cdf[s, a] < u[:, None]).sum(axis=-1), n_s - 1)
        info = {"s": s, "a": a, "policy": act.policy, "replanned": np.asarray(act.replanned, dtype=bool)}
        return s_next, s_next, info

    def available_metrics(self):
        """``regret`` and ``epochs`` (see the Notes of the class)."""
        p, r, _, v_star = self._model
        gamma = self.mdp.gamma

        def regret_init(n_reps, xp):
            return (np.zeros(n_reps), None)

        def regret_update(acc, info, t):
            regret, v_pi = acc
            policy, new, s = np.asarray(info["policy"]), info["replanned"], info["s"]
            if v_pi is None:
                v_pi = _policy_values(p, r, gamma, policy)
            elif new.any():
                idx = np.flatnonzero(new)
                v_pi = v_pi.copy()
                v_pi[idx] = _policy_values(p, r, gamma, policy[idx])
            return (regret + (v_star[s] - v_pi[np.arange(s.shape[0]), s]), v_pi)

        return {"regret": Metric("regret", regret_init, regret_update, lambda acc: acc[0]),
                "epochs": Metric("epochs", lambda n_reps, xp: np.zeros(n_reps, dtype=np.int64),
                                 lambda acc, info, t: acc + info["replanned"], lambda acc: acc)}


def confidence_radius(dim: int, gamma: float, horizon: int, *, delta: float = 0.1, lam: float = 1.0) -> float:
    r"""Self-normalised radius for value targets in :math:`[0, 1/(1-\gamma)]`.

    .. math::

        \beta = \frac{1}{2(1-\gamma)} \sqrt{d \ln\Big(\big(1 + \frac{T d}{(1-\gamma)^2 \lambda}\big)/\delta\Big)}
        + \sqrt\lambda,

    Abbasi-Yadkori, Pál & Szepesvári (2011, Thm 2) with
    :math:`1/(2(1-\gamma))`-sub-Gaussian noise, :math:`\|x\|_2^2 \le d/(1-\gamma)^2`,
    :math:`\|\theta\|_2 \le 1`, fixed at the planned horizon :math:`T`.

    Parameters
    ----------
    dim : int >= 1
        :math:`d`.
    gamma : float in [0, 1)
    horizon : int >= 1
        :math:`T`, the planned number of steps.
    delta : float in (0, 1)
    lam : float > 0
        Ridge parameter :math:`\lambda`.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``dim`` or ``horizon`` is not an integer, or ``gamma``, ``delta`` or ``lam`` is not a real number.
    ValueError
        If an argument lies outside its range above.

    References
    ----------
    Abbasi-Yadkori, Pál & Szepesvári, "Improved algorithms for linear stochastic bandits", NeurIPS 2011, Thm 2.

    Examples
    --------
    >>> round(confidence_radius(2, 0.0, 1, delta=0.5, lam=1.0), 4)
    1.9465
    """
    dim, horizon = check_int(dim, "dim"), check_int(horizon, "horizon")
    gamma, delta = check_gamma(gamma), check_open_unit(delta, "delta")
    lam = check_float(lam, "lam", positive=True)
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


def _check_statistics(inv, b, features):
    d = features.shape[0]
    inv, b = np.asarray(inv, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if b.ndim != 2 or b.shape[1] != d or inv.shape != (b.shape[0], d, d):
        raise ValueError(f"inv and b must have shapes (n, {d}, {d}) and (n, {d}), got {inv.shape} and {b.shape}")
    return inv, b


def _regularized_plan(phi_flat, rewards, gamma, inv, b, beta, n_steps, eta_scale, n_iter):
    n = b.shape[0]
    n_a = rewards.shape[1]
    eta = (eta_scale * np.sqrt(np.maximum(n_steps, 1) * math.log(max(n_a, 2))) / n_iter)[:, None, None]
    theta = np.einsum("nij,nj->ni", inv, b)
    v = np.zeros((n, rewards.shape[0]))
    logpi = np.full((n, *rewards.shape), -math.log(n_a))
    for _ in range(n_iter):
        z = logpi + eta * _optimistic_backup(phi_flat, rewards, gamma, inv, theta, beta, v)
        lse = _logsumexp(z)
        v = lse / eta[..., 0]
        logpi = z - lse[..., None]
    return np.exp(logpi), v


def _extended_plan(phi_flat, rewards, gamma, inv, b, beta, n_iter):
    theta = np.einsum("nij,nj->ni", inv, b)
    v = np.zeros((b.shape[0], rewards.shape[0]))
    for _ in range(n_iter):
        q = _optimistic_backup(phi_flat, rewards, gamma, inv, theta, beta, v)
        v = q.max(axis=-1)
    return np.eye(rewards.shape[1])[q.argmax(axis=-1)], v


def regularized_value_iteration(features, rewards, gamma, inv, b, beta: float, n_steps, *, eta_scale: float = 1.0,
                                n_iter: int = 50):
    r"""The planner of :func:`regularized_optimism`: regularised optimistic value iteration, batched.

    Parameters
    ----------
    features : ndarray, shape (d, S, A, S)
    rewards : ndarray, shape (S, A)
        Rewards in [0, 1].
    gamma : float in [0, 1)
    inv : ndarray, shape (n, d, d)
        :math:`\Sigma^{-1}` of ``n`` regressions.
    b : ndarray, shape (n, d)
        Their moment vectors (:math:`\hat\theta = \Sigma^{-1} b`).
    beta : float >= 0
        Confidence radius.
    n_steps : int array, shape (n,)
        Steps :math:`t` taken before the epoch (they set the step size :math:`\eta_t`).
    eta_scale : float > 0
    n_iter : int

    Returns
    -------
    policy : ndarray, shape (n, S, A)
        The softmax policies :math:`\pi_K`.
    values : ndarray, shape (n, S)
        :math:`V_K`.

    Notes
    -----
    The update rules are in :func:`regularized_optimism`.

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.ones((1, 1, 2, 1))  # one state, two actions
    >>> pi, v = regularized_value_iteration(phi, np.array([[0.0, 1.0]]), 0.5, np.eye(1)[None], np.ones((1, 1)),
    ...                                     0.0, np.array([10 ** 6]), n_iter=20)
    >>> bool(pi[0, 0, 1] > 0.99), bool(abs(v[0, 0] - 2.0) < 0.01)
    (True, True)
    """
    features = _check_features(features)
    rewards = _check_rewards(rewards, features)
    gamma = check_gamma(gamma)
    inv, b = _check_statistics(inv, b, features)
    beta = check_float(beta, "beta", minimum=0.0)
    n_steps = np.asarray(n_steps)
    if n_steps.shape != (b.shape[0],):
        raise ValueError(f"n_steps must have shape ({b.shape[0]},), got {n_steps.shape}")
    phi_flat = features.reshape(features.shape[0], -1, features.shape[1])
    return _regularized_plan(phi_flat, rewards, gamma, inv, b, beta, n_steps,
                             check_float(eta_scale, "eta_scale", positive=True), check_int(n_iter, "n_iter"))


def extended_value_iteration(features, rewards, gamma, inv, b, beta: float, *, n_iter: int = 50):
    r"""The planner of :func:`uclk`: optimistic extended value iteration with a greedy policy, batched.

    Parameters
    ----------
    features : ndarray, shape (d, S, A, S)
    rewards : ndarray, shape (S, A)
    gamma : float in [0, 1)
    inv : ndarray, shape (n, d, d)
    b : ndarray, shape (n, d)
    beta : float >= 0
    n_iter : int
        Sweeps :math:`U`.

    Returns
    -------
    policy : ndarray, shape (n, S, A)
        One-hot greedy policies of :math:`Q_U`.
    values : ndarray, shape (n, S)
        :math:`V_U`.

    Notes
    -----
    The update rule is in :func:`uclk`.

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.ones((1, 1, 2, 1))
    >>> pi, v = extended_value_iteration(phi, np.array([[0.0, 1.0]]), 0.5, np.eye(1)[None], np.ones((1, 1)), 0.0)
    >>> pi[0, 0].tolist(), round(float(v[0, 0]), 6)
    ([0.0, 1.0], 2.0)
    """
    features = _check_features(features)
    rewards = _check_rewards(rewards, features)
    gamma = check_gamma(gamma)
    inv, b = _check_statistics(inv, b, features)
    beta = check_float(beta, "beta", minimum=0.0)
    phi_flat = features.reshape(features.shape[0], -1, features.shape[1])
    return _extended_plan(phi_flat, rewards, gamma, inv, b, beta, check_int(n_iter, "n_iter"))


def _stream_learner(name, plan, params, delta, lam, beta_scale, doc) -> Learner:
    """The shared regression and epochs of the stream learners.

    ``plan(phi_flat, rewards, gamma, inv, b, beta, n_steps) -> (pi, v)`` with ``phi_flat`` the
    features laid out as ``(d, S A, S)``.
    """
    params = dict(params, delta=check_open_unit(delta, "delta"), lam=check_float(lam, "lam", positive=True),
                  beta_scale=check_float(beta_scale, "beta_scale", positive=True))
    delta, lam, beta_scale = params["delta"], params["lam"], params["beta_scale"]

    def replan(state, inv, b, n_steps):
        f = state.features
        return plan(f.reshape(f.shape[0], -1, f.shape[1]), state.rewards, state.gamma, inv, b, state.beta, n_steps)

    def check_spec(spec):
        """What the environment tells, checked: ``(features, rewards, gamma)``."""
        features = _check_features(np.asarray(spec.features, dtype=np.float64))
        if features.shape[1:3] != (spec.n_states, spec.n_actions):
            raise ValueError(f"{name}: spec.features has shape {features.shape}, expected (d, {spec.n_states}, "
                             f"{spec.n_actions}, {spec.n_states})")
        rewards = _check_rewards(np.asarray(spec.rewards, dtype=np.float64), features)
        if spec.horizon is None:
            raise ValueError(f"{name}: spec.horizon (the number of steps, which sets the radius) is None; run the "
                             "learner through expertlab.sim.run")
        return features, rewards, check_gamma(spec.gamma)

    def init(spec, n_reps, keys=None, xp=np) -> StreamState:
        features, rewards, gamma = check_spec(spec)
        d = features.shape[0]
        beta = beta_scale * confidence_radius(d, gamma, spec.horizon, delta=delta, lam=lam)
        inv = np.broadcast_to(np.eye(d) / lam, (n_reps, d, d)).copy()
        b = np.zeros((n_reps, d))
        state = StreamState(inv, b, np.zeros(n_reps), np.zeros(n_reps), None, None, None,
                            np.full(n_reps, spec.initial_state, dtype=np.int64), 0, features, rewards, gamma, beta)
        pi, v = replan(state, inv, b, np.zeros(n_reps, dtype=np.int64))
        return state._replace(policy=pi, cdf=np.cumsum(pi, axis=-1), values=v)

    def act(state: StreamState, s, keys):
        s = np.asarray(s)
        n_reps, n_a = s.shape[0], state.rewards.shape[1]
        new = state.logdet - state.logdet_epoch > math.log(2.0)
        policy, cdf, v, logdet_epoch = state.policy, state.cdf, state.values, state.logdet_epoch
        if new.any():
            idx = np.flatnonzero(new)
            pi_n, v_n = replan(state, state.inv[idx], state.b[idx], np.full(idx.size, state.t))
            policy, cdf, v = policy.copy(), cdf.copy(), v.copy()
            policy[idx], cdf[idx], v[idx] = pi_n, np.cumsum(pi_n, axis=-1), v_n
            logdet_epoch = np.where(new, state.logdet, logdet_epoch)
        u = uniform(np.asarray(keys), np.zeros(n_reps, dtype=np.uint64))
        a = np.minimum((cdf[np.arange(n_reps), s] < u[:, None]).sum(axis=-1), n_a - 1)
        replanned = new | (state.t == 0)
        return StreamAction(a, policy, replanned), state._replace(policy=policy, cdf=cdf, values=v,
                                                                  logdet_epoch=logdet_epoch, s=s)

    def update(state: StreamState, action: StreamAction, s_next, keys) -> StreamState:
        s, a, v = state.s, np.asarray(action.action), state.values
        rows = np.arange(s.shape[0])
        x = np.einsum("irt,rt->ri", state.features[:, s, a, :], v)
        u = np.einsum("rij,rj->ri", state.inv, x)
        return state._replace(inv=_sherman_morrison(state.inv, x), b=state.b + x * v[rows, s_next][:, None],
                              logdet=state.logdet + np.log1p(np.einsum("ri,ri->r", x, u)), t=state.t + 1)

    return Learner(name, "discounted_stream", init, act, update, params, doc=doc, check_spec=check_spec)


def regularized_optimism(*, eta_scale: float = 1.0, n_iter: int = 50, delta: float = 0.1, lam: float = 1.0,
                         beta_scale: float = 1.0) -> Learner:
    r"""Optimistic planning by regularised approximate value iteration (RAVI-UCB style).

    Parameters
    ----------
    eta_scale : float > 0
        :math:`c_\eta` in the step size :math:`\eta_t = c_\eta \sqrt{t \ln A} / K` of an epoch
        starting at step :math:`t`.
    n_iter : int
        Iterations :math:`K` of regularised value iteration per epoch.
    delta, lam, beta_scale : float
        The radius :math:`\beta` = ``beta_scale *`` :func:`confidence_radius` ``(d, gamma, T, delta, lam)``
        with :math:`T` the number of steps of the run; ``lam`` is also the ridge parameter :math:`\lambda`.

    Returns
    -------
    Learner
        Feedback kind ``"discounted_stream"``: runs on a :class:`LinearMixtureStream` through
        :func:`expertlab.sim.run`, which tells it the base kernels :math:`\phi_i`, the rewards (in
        [0, 1]) and :math:`\gamma`, not the mixture weight.  State :class:`StreamState`; acts from the
        softmax policy :math:`\pi_K` of the epoch, drawing the action from the learner's key.

    Notes
    -----
    At step :math:`t`, if :math:`\ln\det\Sigma_t - \ln\det\Sigma_{\tau} > \ln 2`
    (:math:`\tau` the start of the epoch) a new epoch starts and the learner plans
    :math:`(\pi, V)` with :func:`regularized_value_iteration`; it plays
    :math:`a_t \sim \pi(\cdot|s_t)` and, after observing :math:`s_{t+1}`,

    .. math::

        \Sigma \leftarrow \Sigma + x_t x_t^\top, \quad b \leftarrow b + x_t V(s_{t+1}), \quad
        x_t = \sum_{s'} \phi(s'|s_t, a_t) V(s'),

    with :math:`\Sigma_0 = \lambda I`, the inverse by Sherman–Morrison and
    :math:`\ln\det` by :math:`\ln(1 + x^\top\Sigma^{-1}x)` increments.
    The planner, with :math:`\hat\theta = \Sigma^{-1} b`, :math:`V_0 = 0`, :math:`\pi_0` uniform,
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
    >>> from expertlab import sim
    >>> from expertlab.mdp.instances import random_linear_mixture
    >>> m = random_linear_mixture(3, 2, dim=2, gamma=0.5, seed=0)
    >>> res = sim.run(regularized_optimism(), LinearMixtureStream(m), horizon=50, n_reps=2, seed=0, checkpoints=[50])
    >>> res.metrics["regret"].shape, bool((res.metrics["regret"] >= -1e-9).all())
    ((1, 2), True)
    """
    eta_scale = check_float(eta_scale, "eta_scale", positive=True)
    n_iter = check_int(n_iter, "n_iter")

    def plan(phi_flat, rewards, gamma, inv, b, beta, n_steps):
        return _regularized_plan(phi_flat, rewards, gamma, inv, b, beta, n_steps, eta_scale, n_iter)

    return _stream_learner("regularized_optimism", plan, {"eta_scale": eta_scale, "n_iter": n_iter}, delta, lam,
                           beta_scale, regularized_optimism.__doc__)


def uclk(*, n_iter: int = 50, delta: float = 0.1, lam: float = 1.0, beta_scale: float = 1.0) -> Learner:
    r"""UCLK-style optimistic extended value iteration with greedy policies (baseline).

    Parameters
    ----------
    n_iter : int
        Value-iteration sweeps :math:`U` per epoch.
    delta, lam, beta_scale : float
        The radius, as for :func:`regularized_optimism`.

    Returns
    -------
    Learner
        Feedback kind ``"discounted_stream"`` (a :class:`LinearMixtureStream`, which tells it the base
        kernels, the rewards and :math:`\gamma`); state :class:`StreamState`; acts greedily (a
        one-hot policy, so deterministically).

    Notes
    -----
    The regression and the epochs are those of :func:`regularized_optimism`; the
    planner is :func:`extended_value_iteration`.  Maximising :math:`\langle\theta, x\rangle` over the ellipsoid
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
    >>> from expertlab import sim
    >>> from expertlab.mdp.instances import random_linear_mixture
    >>> m = random_linear_mixture(3, 2, dim=2, gamma=0.5, seed=0)
    >>> res = sim.run(uclk(), LinearMixtureStream(m), horizon=50, n_reps=2, seed=0)
    >>> res.metrics["epochs"][-1].tolist()  # planner calls per stream
    [7.0, 7.0]
    """
    n_iter = check_int(n_iter, "n_iter")

    def plan(phi_flat, rewards, gamma, inv, b, beta, n_steps):
        return _extended_plan(phi_flat, rewards, gamma, inv, b, beta, n_iter)

    return _stream_learner("uclk", plan, {"n_iter": n_iter}, delta, lam, beta_scale, uclk.__doc__)
