r"""UCRL-VTR and UCRL-VTR+ in episodic linear-mixture MDPs, batched over replications.

The model (:class:`EpisodicLinearMixture`) has stage-free kernels
:math:`P_\theta(s' | s, a) = \sum_i \theta_i \phi_i(s' | s, a)` with each
:math:`\phi_i` a kernel and :math:`\theta` on the simplex; it is an
environment of :func:`expertlab.sim.run` with feedback
``"linear_mixture_episode"`` (the learners are told the base kernels
:math:`\phi`, ``spec.features``, and the rewards, not :math:`\theta`).  Both
learners regress the observed next-state values on the value features
:math:`x = \sum_{s'} \phi(s' | s, a) V_{h+1}(s')`; the ridge inverses are
kept up to date by Sherman–Morrison rank-one updates, so the cost of an
episode does not grow with the episode index.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np

from .._validation import check_float, check_open_unit
from ._checks import real_array
from ..sim._protocol import Learner
from ._episodic import LINEAR_MIXTURE_EPISODE, episode_sizes, n_episodes_of
from ._models import EpisodeEnvironment, FiniteHorizonMDP, _array, check_kernel, check_rewards

__all__ = ["EpisodicLinearMixture", "VTRState", "ucrl_vtr", "ucrl_vtr_plus", "sherman_morrison"]


@dataclasses.dataclass(frozen=True, repr=False)
class EpisodicLinearMixture(EpisodeEnvironment):
    r"""An episodic linear-mixture MDP with stage-free kernels :math:`P_\theta = \sum_i \theta_i \phi_i`.

    It is an environment of :func:`expertlab.sim.run` (feedback
    ``"linear_mixture_episode"``, one episode per step, every episode from
    state 0; :func:`expertlab.mdp.episodic` starts elsewhere), run by
    :func:`ucrl_vtr` and :func:`ucrl_vtr_plus`, which are told ``features``
    and ``rewards`` but not ``theta``.  Metrics ``regret`` (exact expected
    regret) and ``realised_regret``, as for a
    :class:`~expertlab.mdp.FiniteHorizonMDP`.

    Parameters
    ----------
    features : ndarray, shape (d, S, A, S)
        Base kernels; each ``features[i]`` is a valid kernel.
    theta : ndarray, shape (d,)
        Mixture weight on the simplex (unknown to the learners).
    rewards : ndarray, shape (H, S, A)
        Known mean rewards in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.stack([np.eye(2)[:, None, :], np.eye(2)[::-1][:, None, :]])  # stay / swap, A = 1
    >>> m = EpisodicLinearMixture(phi, np.array([0.25, 0.75]), np.zeros((3, 2, 1)))
    >>> m.to_finite_horizon().transitions[1, 0, 0]
    array([0.25, 0.75])
    """

    features: np.ndarray
    theta: np.ndarray
    rewards: np.ndarray

    def __post_init__(self):
        phi, th, r = self.features, self.theta, self.rewards
        _array(phi, "features")
        if phi.ndim != 4 or phi.shape[1] != phi.shape[3]:
            raise ValueError(f"features must have shape (d, S, A, S), got {tuple(phi.shape)}")
        check_kernel(phi, "features")
        _array(th, "theta")
        if th.shape != (phi.shape[0],):
            raise ValueError(f"theta must have shape ({phi.shape[0]},), got {tuple(th.shape)}")
        if not np.all(np.isfinite(th)) or np.any(th < 0) or abs(float(th.sum()) - 1.0) > 1e-8:
            raise ValueError("theta must lie on the probability simplex (finite, non-negative, summing to 1)")
        _array(r, "rewards")
        if r.ndim != 3:
            raise ValueError(f"rewards must have shape (H, S, A), got {tuple(r.shape)}")
        check_rewards(r, (r.shape[0], *phi.shape[1:3]), "rewards", (0.0, 1.0))

    @property
    def dim(self) -> int:
        return int(self.features.shape[0])

    @property
    def horizon(self) -> int:
        return int(self.rewards.shape[0])

    def to_finite_horizon(self) -> FiniteHorizonMDP:
        """The tabular episodic MDP with kernel ``sum_i theta_i features[i]`` at every stage."""
        p = np.tensordot(self.theta, self.features, axes=1)
        p = np.broadcast_to(p, (self.horizon, *p.shape))
        return FiniteHorizonMDP(p, self.rewards, reward_range=(0.0, 1.0))


def sherman_morrison(inv, x):
    r"""Batched rank-one update :math:`(\Sigma + x x^\top)^{-1}` from :math:`\Sigma^{-1}`.

    Parameters
    ----------
    inv : ndarray, shape (..., d, d)
        Symmetric :math:`\Sigma^{-1}`.
    x : ndarray, shape (..., d)

    Returns
    -------
    ndarray, shape (..., d, d)

    Raises
    ------
    TypeError
        If ``inv`` or ``x`` does not hold real numbers.
    ValueError
        If ``inv`` is not a stack of symmetric square matrices, ``x`` does
        not match it, either holds NaN or infinite values, or
        :math:`1 + x^\top \Sigma^{-1} x \le 0` (``inv`` is not positive definite).

    Notes
    -----
    .. math::

        (\Sigma + x x^\top)^{-1} = \Sigma^{-1} - \frac{\Sigma^{-1} x x^\top \Sigma^{-1}}{1 + x^\top \Sigma^{-1} x}.

    References
    ----------
    Sherman & Morrison, "Adjustment of an inverse matrix corresponding to a
    change in one element of a given matrix", Ann. Math. Statist. 21, 1950.

    Examples
    --------
    >>> import numpy as np
    >>> sherman_morrison(np.eye(2), np.array([1.0, 0.0]))
    array([[0.5, 0. ],
           [0. , 1. ]])
    """
    inv = real_array(inv, "inv")
    if inv.ndim < 2 or inv.shape[-1] != inv.shape[-2]:
        raise ValueError(f"inv must have shape (..., d, d), got {inv.shape}")
    if not np.allclose(inv, np.swapaxes(inv, -1, -2), rtol=1e-9, atol=1e-12):
        raise ValueError("inv must be symmetric (the inverse of a Gram matrix)")
    x = real_array(x, "x")
    if x.ndim < 1 or x.shape[-1] != inv.shape[-1]:
        raise ValueError(f"x must have shape (..., {inv.shape[-1]}) to match inv {inv.shape}, got {x.shape}")
    try:
        np.broadcast_shapes(inv.shape[:-2], x.shape[:-1])
    except ValueError:
        raise ValueError(f"the leading axes of inv {inv.shape[:-2]} and x {x.shape[:-1]} do not broadcast") from None
    if np.any(1.0 + np.einsum("...i,...ij,...j->...", x, inv, x) <= 0.0):
        raise ValueError("inv must be positive definite: 1 + x^T inv x <= 0 for some x")
    return _sherman_morrison(inv, x)


def _sherman_morrison(inv, x):
    """:func:`sherman_morrison` without the checks (the learners' own ridge statistics)."""
    u = np.einsum("...ij,...j->...i", inv, x)
    return inv - u[..., :, None] * u[..., None, :] / (1.0 + np.einsum("...i,...i->...", x, u))[..., None, None]


class VTRState(NamedTuple):
    """Ridge statistics of every replication (leading axis ``n_reps``) and the known model parts.

    ``inv (n_reps, d, d)`` and ``b (n_reps, d)``: inverse Gram matrix and
    moment vector of the (weighted, for UCRL-VTR+) value regression;
    ``inv2``/``b2``: those of the second-moment regression (UCRL-VTR+; empty
    for UCRL-VTR); ``n_episodes_seen``: episodes absorbed; ``features``,
    ``rewards`` and ``n_episodes`` are shared constants.
    """

    inv: np.ndarray
    b: np.ndarray
    inv2: np.ndarray
    b2: np.ndarray
    n_episodes_seen: int
    features: np.ndarray
    rewards: np.ndarray
    n_episodes: int


def _norm(inv, x):
    """``||x||_{inv}`` for ``inv (R, d, d)`` and ``x (R, ..., d)``."""
    r = inv.shape[0]
    xf = x.reshape(r, -1, x.shape[-1])
    q = np.sum(np.matmul(xf, inv) * xf, axis=-1)
    return np.sqrt(np.maximum(q, 0.0)).reshape(x.shape[:-1])


def _optimistic_pass(state: VTRState, beta: float):
    """Backward induction with the optimistic values; ``(q (R, H, S, A), v (R, H + 1, S))``."""
    phi, rew = state.features, state.rewards
    n_reps = state.b.shape[0]
    h_, s_, a_ = rew.shape
    theta = np.einsum("rij,rj->ri", state.inv, state.b)
    d = phi.shape[0]
    phi_flat = phi.reshape(-1, s_)  # (d S A, S)
    v = np.zeros((n_reps, h_ + 1, s_))
    q = np.empty((n_reps, h_, s_, a_))
    for h in range(h_ - 1, -1, -1):
        x = np.moveaxis(np.matmul(phi_flat, v[:, h + 1].T).reshape(d, s_, a_, n_reps), (0, 3), (3, 0))
        q[:, h] = np.minimum(rew[h] + np.einsum("rsai,ri->rsa", x, theta) + beta * _norm(state.inv, x),
                             float(h_ - h))
        v[:, h] = q[:, h].max(axis=-1)
    return q, v


def _trajectory_features(phi, v, states, actions, power=1):
    """``sum_t phi(t | s_h, a_h) V_{h+1}(t)**power``, shape ``(n_reps, H, d)``."""
    f = phi[:, states[:, :-1], actions, :]  # (d, R, H, S)
    return np.einsum("irht,rht->rhi", f, v[:, 1:] ** power)


def _spec_features(spec):
    """The checked base kernels ``spec.features`` ``(d, S, A, S)`` of a linear-mixture spec."""
    features = getattr(spec, "features", None)
    if features is None:
        raise ValueError("the value-targeted learners need the base kernels: run them on an EpisodicLinearMixture "
                         "(spec.features)")
    features = _check_features(features)
    if features.shape[1:] != (spec.n_states, spec.n_actions, spec.n_states):
        raise ValueError(f"features must have shape (d, {spec.n_states}, {spec.n_actions}, {spec.n_states}), "
                         f"got {features.shape}")
    return features


def _check_vtr_spec(spec) -> None:
    """``check_spec`` of the value-targeted learners: known rewards in [0, 1], base kernels, a number of episodes."""
    episode_sizes(spec, "UCRL-VTR")
    _spec_features(spec)
    n_episodes_of(spec)


def _init_factory(lam, plus):
    """``init(spec, n_reps, keys=None, xp=None)`` of the value-targeted learners (base kernels ``spec.features``)."""

    def init(spec, n_reps: int, keys=None, xp=None) -> VTRState:
        r = episode_sizes(spec, "UCRL-VTR")[3]
        features = _spec_features(spec)
        d = features.shape[0]
        eye = np.broadcast_to(np.eye(d) / lam, (n_reps, d, d)).copy()
        zero = np.zeros((n_reps, d))
        inv2, b2 = (eye.copy(), zero.copy()) if plus else (np.zeros((n_reps, 0, 0)), np.zeros((n_reps, 0)))
        return VTRState(eye, zero, inv2, b2, 0, features, r, n_episodes_of(spec))
    return init


def _check_features(features):
    features = real_array(features, "features")
    if features.ndim != 4 or features.shape[1] != features.shape[3]:
        raise ValueError(f"features must have shape (d, S, A, S), got {features.shape}")
    check_kernel(features, "features")
    return features


def _check_args(delta, lam, beta_scale):
    """The checked ``(delta, lam, beta_scale)`` of :func:`ucrl_vtr` and :func:`ucrl_vtr_plus`."""
    return (check_open_unit(delta, "delta"), check_float(lam, "lam", positive=True),
            check_float(beta_scale, "beta_scale", positive=True))


def _vtr_update(state, v, trajectory):
    """``(states, actions, x, y)`` of the episode just played: value features ``x (R, H, d)``, targets ``y (R, H)``."""
    states, actions = np.asarray(trajectory.states), np.asarray(trajectory.actions)
    x = _trajectory_features(state.features, v, states, actions)  # (R, H, d)
    y = v[np.arange(states.shape[0])[:, None], np.arange(1, states.shape[1]), states[:, 1:]]  # (R, H)
    return states, actions, x, y


def ucrl_vtr(*, delta: float = 0.1, lam: float = 1.0, beta_scale: float = 1.0) -> Learner:
    r"""UCRL-VTR: optimism from value-targeted ridge regression (episodic, stage-free :math:`\theta`).

    Parameters
    ----------
    delta : float in (0, 1)
    lam : float > 0
        Ridge parameter :math:`\lambda`.
    beta_scale : float > 0
        Multiplies the confidence radius (the theorem holds for 1).

    Returns
    -------
    Learner
        Feedback ``"linear_mixture_episode"``: runs on an
        :class:`EpisodicLinearMixture` through :func:`expertlab.sim.run`,
        whose ``horizon`` counts episodes; told the base kernels
        :math:`\phi_i` (``spec.features``) and the rewards.  Deterministic;
        state :class:`VTRState`.

    Notes
    -----
    Before episode :math:`k` (:math:`n = (k - 1) H` regression samples),
    :math:`\hat\theta = \Sigma^{-1} b` and, from :math:`V_H = 0`,

    .. math::

        x_h(s, a) = \sum_{s'} \phi(s' | s, a) V_{h+1}(s'), \qquad
        Q_h = \min\big(H - h,\; r_h + \langle \hat\theta, x_h \rangle + \beta \|x_h\|_{\Sigma^{-1}}\big).

    After the episode, for each stage, :math:`\Sigma \leftarrow \Sigma + x x^\top`
    (Sherman–Morrison on :math:`\Sigma^{-1}`) and :math:`b \leftarrow b + x\, V_{h+1}(s_{h+1})`
    with :math:`x = x_h(s_h, a_h)`.  The radius is the self-normalised bound
    of Abbasi-Yadkori et al. (2011, Thm 2) for noise in :math:`[0, H]`
    (:math:`H/2`-sub-Gaussian), :math:`\|x\|^2 \le d H^2` and
    :math:`\|\theta\|_2 \le 1`:

    .. math::

        \beta = \tfrac{H}{2} \sqrt{d \ln\big((1 + K H^3 d / \lambda) / \delta\big)} + \sqrt{\lambda},

    fixed from the planned number of episodes :math:`K` (the run's
    ``horizon``; the paper lets it grow with :math:`k`).  ``update`` repeats
    the backward pass of ``act`` (the state keeps no values), so an episode
    costs two passes.  Reconstructed: the paper is stated for the
    discounted and the episodic setting with a generic radius; this is the
    episodic algorithm with the stage-free :math:`\theta` of the model here.

    [validated-rates]

    References
    ----------
    Ayoub, Jia, Szepesvári, Wang & Yang, "Model-based reinforcement learning
    with value-targeted regression", ICML 2020, Alg. 1 (UCRL-VTR) and Thm 1
    (regret :math:`\tilde O(d \sqrt{H^3 T})`).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.mdp.instances import hard_linear_mixture
    >>> m = hard_linear_mixture(2, horizon=4, gap=0.1)
    >>> res = sim.run(ucrl_vtr(), m, horizon=20, n_reps=2, seed=0)
    >>> res.unit, bool((res.metrics["regret"] >= 0).all())
    ('episode', True)
    """
    delta, lam, beta_scale = _check_args(delta, lam, beta_scale)
    init = _init_factory(lam, plus=False)

    def beta_of(state):
        h_, d = state.rewards.shape[0], state.b.shape[1]
        k = state.n_episodes
        return beta_scale * (h_ / 2 * math.sqrt(d * math.log((1 + k * h_ ** 3 * d / lam) / delta)) + math.sqrt(lam))

    def act(state, obs=None, keys=None):
        return _optimistic_pass(state, beta_of(state))[0].argmax(axis=-1), state

    def update(state, policy, trajectory, keys=None):
        v = _optimistic_pass(state, beta_of(state))[1]
        _, _, x, y = _vtr_update(state, v, trajectory)
        inv = state.inv
        for h in range(x.shape[1]):
            inv = _sherman_morrison(inv, x[:, h])
        return state._replace(inv=inv, b=state.b + np.einsum("rhi,rh->ri", x, y),
                              n_episodes_seen=state.n_episodes_seen + 1)

    return Learner("ucrl_vtr", LINEAR_MIXTURE_EPISODE, init, act, update,
                   {"delta": delta, "lam": lam, "beta_scale": beta_scale}, doc=ucrl_vtr.__doc__,
                   check_spec=_check_vtr_spec)


def ucrl_vtr_plus(*, delta: float = 0.1, lam: float = 1.0, beta_scale: float = 1.0) -> Learner:
    r"""UCRL-VTR+: variance-weighted value-targeted regression with Bernstein-type radii.

    Parameters
    ----------
    delta : float in (0, 1)
    lam : float > 0
        Ridge parameter (:math:`1/B^2` in the paper with :math:`B = 1`).
    beta_scale : float > 0
        Multiplies the three radii (the theorem holds for 1).

    Returns
    -------
    Learner
        Feedback ``"linear_mixture_episode"`` (as :func:`ucrl_vtr`);
        deterministic; state :class:`VTRState`.

    Notes
    -----
    Planning is that of :func:`ucrl_vtr` with the weighted estimate
    :math:`\hat\theta = \hat\Sigma^{-1} \hat b` and radius :math:`\hat\beta`.
    After episode :math:`k`, with :math:`x = \sum_{s'}\phi(s'|s_h,a_h) V_{h+1}(s')`,
    :math:`x^{(2)}` the same with :math:`V_{h+1}^2`, and :math:`\tilde\theta = \tilde\Sigma^{-1} \tilde b`:

    .. math::

        \bar\sigma_h^2 = \max\Big(\frac{H^2}{d},\; [\langle x^{(2)}, \tilde\theta\rangle]_{[0, H^2]}
        - [\langle x, \hat\theta\rangle]_{[0, H]}^2
        + \min(H^2, 2 H \check\beta \|x\|_{\hat\Sigma^{-1}})
        + \min(H^2, \tilde\beta \|x^{(2)}\|_{\tilde\Sigma^{-1}})\Big),

    then :math:`\hat\Sigma \mathrel{+}= x x^\top / \bar\sigma_h^2`,
    :math:`\hat b \mathrel{+}= x V_{h+1}(s_{h+1}) / \bar\sigma_h^2`,
    :math:`\tilde\Sigma \mathrel{+}= x^{(2)} x^{(2)\top}`,
    :math:`\tilde b \mathrel{+}= x^{(2)} V_{h+1}(s_{h+1})^2` (inverses by
    Sherman–Morrison).  With :math:`\iota = \ln(4 K^2 / \delta)`,

    .. math::

        \hat\beta = 8 \sqrt{d \ln(1 + K/\lambda)\, \iota} + 4 \sqrt d\, \iota + \sqrt\lambda, \quad
        \check\beta = 8 d \sqrt{\ln(1 + K/\lambda)\, \iota} + 4 \sqrt d\, \iota + \sqrt\lambda,

    .. math::

        \tilde\beta = 8 H^2 \sqrt{d \ln(1 + K H^4 / (d\lambda))\, \iota} + 4 H^2 \iota + \sqrt\lambda.

    Reconstructed: the radii are as recalled from Thm 5.1 of the paper and
    fixed at the planned :math:`K` (the run's ``horizon``; the paper uses
    the running index); the variance estimates of an episode use the
    statistics from its start; the values are clipped at :math:`H - h`
    rather than :math:`H`.

    [validated-rates]

    References
    ----------
    Zhou, Gu & Szepesvári, "Nearly minimax optimal reinforcement learning
    for linear mixture Markov decision processes", COLT 2021, Alg. 1
    (UCRL-VTR+), Thm 5.1 (regret :math:`\tilde O(d H \sqrt{T})`) and
    Thm 5.6 (lower bound :math:`\Omega(d H \sqrt T)`).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.mdp.instances import hard_linear_mixture
    >>> m = hard_linear_mixture(2, horizon=4, gap=0.1)
    >>> res = sim.run(ucrl_vtr_plus(), m, horizon=20, n_reps=2, seed=0)
    >>> bool((res.metrics["regret"] >= 0).all())
    True
    """
    delta, lam, beta_scale = _check_args(delta, lam, beta_scale)
    init = _init_factory(lam, plus=True)

    def radii(state):
        h_, d, k = state.rewards.shape[0], state.b.shape[1], state.n_episodes
        iota = math.log(4 * k ** 2 / delta)
        lk = math.log(1 + k / lam)
        hat = 8 * math.sqrt(d * lk * iota) + 4 * math.sqrt(d) * iota + math.sqrt(lam)
        check = 8 * d * math.sqrt(lk * iota) + 4 * math.sqrt(d) * iota + math.sqrt(lam)
        tilde = (8 * h_ ** 2 * math.sqrt(d * math.log(1 + k * h_ ** 4 / (d * lam)) * iota) + 4 * h_ ** 2 * iota
                 + math.sqrt(lam))
        return beta_scale * hat, beta_scale * check, beta_scale * tilde

    def act(state, obs=None, keys=None):
        return _optimistic_pass(state, radii(state)[0])[0].argmax(axis=-1), state

    def update(state, policy, trajectory, keys=None):
        hat, check, tilde = radii(state)
        v = _optimistic_pass(state, hat)[1]
        h_, d = state.rewards.shape[0], state.b.shape[1]
        states, actions, x, y = _vtr_update(state, v, trajectory)
        x2 = _trajectory_features(state.features, v, states, actions, power=2)
        theta = np.einsum("rij,rj->ri", state.inv, state.b)
        theta2 = np.einsum("rij,rj->ri", state.inv2, state.b2)
        second = np.clip(np.einsum("rhi,ri->rh", x2, theta2), 0.0, h_ ** 2)
        first = np.clip(np.einsum("rhi,ri->rh", x, theta), 0.0, h_)
        err = (np.minimum(h_ ** 2, 2 * h_ * check * _norm(state.inv, x))
               + np.minimum(h_ ** 2, tilde * _norm(state.inv2, x2)))
        var = np.maximum(h_ ** 2 / d, second - first ** 2 + err)  # (R, H)
        inv, inv2 = state.inv, state.inv2
        xw = x / np.sqrt(var)[..., None]
        for h in range(h_):
            inv = _sherman_morrison(inv, xw[:, h])
            inv2 = _sherman_morrison(inv2, x2[:, h])
        return state._replace(inv=inv, b=state.b + np.einsum("rhi,rh->ri", x, y / var), inv2=inv2,
                              b2=state.b2 + np.einsum("rhi,rh->ri", x2, y ** 2),
                              n_episodes_seen=state.n_episodes_seen + 1)

    return Learner("ucrl_vtr_plus", LINEAR_MIXTURE_EPISODE, init, act, update,
                   {"delta": delta, "lam": lam, "beta_scale": beta_scale}, doc=ucrl_vtr_plus.__doc__,
                   check_spec=_check_vtr_spec)
