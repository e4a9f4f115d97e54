"""Tabular MDP models: discounted, finite-horizon and linear-mixture.

Every model is a frozen dataclass whose arrays may carry leading *batch* axes
(many MDPs of one size stacked together, e.g. one per replication); the last
axes are always ``(S, A, S)`` for a kernel and ``(S, A)`` for rewards.  The
constructors validate their arguments and raise a :class:`ValueError` naming
the argument; they never copy or convert the arrays, so NumPy and CuPy arrays
both work.
"""

from __future__ import annotations

import dataclasses

from .._backend import get_namespace
from .._repr import short_repr
from .._validation import check_float, check_int
from ..sim._protocol import Environment

__all__ = ["TabularMDP", "FiniteHorizonMDP", "LinearMixtureMDP", "EpisodeEnvironment", "check_kernel",
           "check_rewards"]

#: Absolute tolerance on each row sum of a transition kernel.
KERNEL_ATOL = 1e-8


def _array(a, name):
    if not hasattr(a, "shape") or not hasattr(a, "dtype"):
        raise TypeError(f"{name} must be an array (NumPy or CuPy), got {type(a).__name__}")
    xp = get_namespace(a)
    if not xp.isdtype(a.dtype, "real floating"):
        raise TypeError(f"{name} must have a real floating dtype, got {a.dtype}")
    return xp


def check_kernel(p, name: str = "transitions", atol: float = KERNEL_ATOL):
    """Check that the last axis of ``p`` holds probability vectors.

    Raises
    ------
    ValueError
        If ``p`` has NaN/inf, negative entries or rows whose sum differs
        from 1 by more than ``atol``, or if ``atol`` is not a finite number >= 0.
    """
    atol = check_float(atol, "atol", minimum=0.0)
    xp = _array(p, name)
    if p.ndim < 1 or p.shape[-1] < 1:
        raise ValueError(f"{name} must have a non-empty last axis, got shape {tuple(p.shape)}")
    if not bool(xp.all(xp.isfinite(p))):
        raise ValueError(f"{name} contains NaN or infinite values")
    if bool(xp.any(p < 0)):
        raise ValueError(f"{name} has negative probabilities (smallest {float(xp.min(p))})")
    dev = float(xp.max(xp.abs(xp.sum(p, axis=-1) - 1.0)))
    if dev > atol:
        raise ValueError(f"{name}: every row (last axis) must sum to 1; the largest deviation is {dev:.3g}")
    return p


def check_rewards(r, shape, name: str = "rewards", reward_range=None):
    """Check a reward array: shape ``shape``, finite, and within ``reward_range`` when given."""
    xp = _array(r, name)
    if tuple(r.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(r.shape)}")
    if not bool(xp.all(xp.isfinite(r))):
        raise ValueError(f"{name} contains NaN or infinite values")
    if reward_range is not None:
        lo, hi = reward_range
        if bool(xp.any(r < lo)) or bool(xp.any(r > hi)):
            raise ValueError(f"{name} must lie in [{lo}, {hi}]; got values in "
                             f"[{float(xp.min(r))}, {float(xp.max(r))}]")
    return r


def _check_range(reward_range):
    if reward_range is None:
        return None
    if len(reward_range) != 2:
        raise ValueError(f"reward_range must be a pair (low, high), got {reward_range!r}")
    lo = check_float(reward_range[0], "reward_range[0]")
    hi = check_float(reward_range[1], "reward_range[1]")
    if lo > hi:
        raise ValueError(f"reward_range must have low <= high, got {reward_range!r}")
    return (lo, hi)


def check_gamma(gamma) -> float:
    """Check a discount factor: a real number in [0, 1)."""
    g = check_float(gamma, "gamma", minimum=0.0)
    if g >= 1.0:
        raise ValueError(f"gamma must lie in [0, 1), got {g}")
    return g


class _KernelShape:
    """``n_states``, ``n_actions`` and ``batch_shape`` read off ``transitions`` (``_kernel_axes`` trailing axes)."""

    _kernel_axes = 3

    @property
    def n_states(self) -> int:
        return int(self.transitions.shape[-1])

    @property
    def n_actions(self) -> int:
        return int(self.transitions.shape[-2])

    @property
    def batch_shape(self) -> tuple:
        return tuple(self.transitions.shape[:-self._kernel_axes])


class EpisodeEnvironment(Environment):
    """The environment protocol of an episodic model: one episode per step of :func:`expertlab.sim.run`.

    A single model (no batch axes) runs as :func:`expertlab.mdp.episodic` of
    itself, every episode starting in state 0; that function documents the
    protocol and the metrics, and wraps a model to start elsewhere.
    """

    #: Metrics recorded when ``sim.run`` is given none.
    default_metrics = ("regret", "realised_regret")

    def _episodes(self):
        from ._episodic import episodic

        return episodic(self)

    name = property(lambda self: self._episodes().name, doc="Reported in run results.")
    params = property(lambda self: self._episodes().params, doc="Sizes and initial state, reported in results.")
    spec = property(lambda self: self._episodes().spec, doc="The :class:`expertlab.sim.EnvSpec` of a run.")

    def reset(self, n_reps, keys, xp):
        return self._episodes().reset(n_reps, keys, xp)

    def step(self, env_state, action, t, keys):
        return self._episodes().step(env_state, action, t, keys)

    def available_metrics(self):
        return self._episodes().available_metrics()

    def optimal_value(self) -> float:
        """:math:`V^\\star_1(s_1)` from state 0, by backward induction."""
        return self._episodes().optimal_value()

    def policy_value(self, policy):
        """Exact values from state 0 of deterministic policies ``(n_reps, H, S)``."""
        return self._episodes().policy_value(policy)


@short_repr
@dataclasses.dataclass(frozen=True)
class TabularMDP(_KernelShape):
    """A discounted tabular MDP, or a batch of them.

    Parameters
    ----------
    transitions : array, shape (..., S, A, S)
        ``transitions[..., s, a, t]`` is the probability of moving to ``t``
        after action ``a`` in state ``s``; leading axes index MDPs.
    rewards : array, shape (..., S, A)
        Expected reward of ``(s, a)``.
    gamma : float
        Discount factor in [0, 1).
    reward_range : (float, float), optional
        When given, every reward must lie in it.

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[[1.0, 0.0]], [[0.5, 0.5]]])      # S = 2, A = 1
    >>> m = TabularMDP(P, np.array([[1.0], [0.0]]), gamma=0.5)
    >>> m.n_states, m.n_actions, m.batch_shape
    (2, 1, ())
    """

    transitions: object
    rewards: object
    gamma: float
    reward_range: tuple | None = None

    def __post_init__(self):
        p = self.transitions
        _array(p, "transitions")
        if p.ndim < 3 or p.shape[-3] != p.shape[-1]:
            raise ValueError(f"transitions must have shape (..., S, A, S), got {tuple(p.shape)}")
        check_kernel(p, "transitions")
        object.__setattr__(self, "reward_range", _check_range(self.reward_range))
        check_rewards(self.rewards, p.shape[:-1], "rewards", self.reward_range)
        object.__setattr__(self, "gamma", check_gamma(self.gamma))

    _kernel_axes = 3  # (S, A, S) after the batch axes


@short_repr
@dataclasses.dataclass(frozen=True)
class FiniteHorizonMDP(_KernelShape, EpisodeEnvironment):
    """An episodic tabular MDP with stage-dependent transitions, or a batch of them.

    A single one (no batch axes) is also an environment of
    :func:`expertlab.sim.run` (feedback ``"tabular_episode"``, one episode per
    step, every episode from state 0; :func:`expertlab.mdp.episodic` starts
    elsewhere): ``sim.run(mdp.ucbvi(), m, horizon=K, ...)``.

    Parameters
    ----------
    transitions : array, shape (..., H, S, A, S)
        ``transitions[..., h, s, a, t]``: probability of ``t`` after ``(s, a)``
        at stage ``h`` (``h = 0, ..., H - 1``).
    rewards : array, shape (..., H, S, A)
    reward_range : (float, float), optional

    See Also
    --------
    FiniteHorizonMDP.stationary : repeat one kernel ``(S, A, S)`` over ``H`` stages.
    """

    transitions: object
    rewards: object
    reward_range: tuple | None = None

    def __post_init__(self):
        p = self.transitions
        _array(p, "transitions")
        if p.ndim < 4 or p.shape[-3] != p.shape[-1]:
            raise ValueError(f"transitions must have shape (..., H, S, A, S), got {tuple(p.shape)}")
        check_kernel(p, "transitions")
        object.__setattr__(self, "reward_range", _check_range(self.reward_range))
        check_rewards(self.rewards, p.shape[:-1], "rewards", self.reward_range)

    @classmethod
    def stationary(cls, transitions, rewards, horizon: int, reward_range=None) -> "FiniteHorizonMDP":
        """The same kernel ``(..., S, A, S)`` and rewards ``(..., S, A)`` at each of ``horizon`` stages."""
        horizon = check_int(horizon, "horizon")
        _array(transitions, "transitions")
        _array(rewards, "rewards")
        if transitions.ndim < 3:
            raise ValueError(f"transitions must have shape (..., S, A, S), got {tuple(transitions.shape)}")
        xp = get_namespace(transitions)
        b = transitions.shape[:-3]
        p = xp.broadcast_to(transitions[..., None, :, :, :], (*b, horizon, *transitions.shape[-3:]))
        if tuple(rewards.shape) != tuple(transitions.shape[:-1]):
            raise ValueError(f"rewards must have shape {tuple(transitions.shape[:-1])}, got {tuple(rewards.shape)}")
        r = xp.broadcast_to(rewards[..., None, :, :], (*b, horizon, *rewards.shape[-2:]))
        return cls(p, r, reward_range)

    @property
    def horizon(self) -> int:
        return int(self.transitions.shape[-4])

    _kernel_axes = 4  # (H, S, A, S) after the batch axes


@short_repr
@dataclasses.dataclass(frozen=True)
class LinearMixtureMDP:
    r"""A discounted linear-mixture MDP :math:`P_\theta = \sum_i \theta_i \phi_i`.

    Parameters
    ----------
    features : array, shape (d, S, A, S)
        ``d`` base kernels; each ``features[i]`` is itself a valid kernel,
        so that every :math:`\theta` on the simplex gives a valid kernel.
    theta : array, shape (..., d)
        Mixture weights on the simplex; leading axes index MDPs.
    rewards : array, shape (S, A)
    gamma : float
    reward_range : (float, float), optional

    Notes
    -----
    The weight is kept separate from the features (never fold
    :math:`\theta^\star` into the features); :attr:`transitions` forms the
    mixture on demand.

    References
    ----------
    Ayoub, Jia, Szepesvári, Wang & Yang, "Model-based reinforcement learning
    with value-targeted regression", ICML 2020 (the linear-mixture model,
    Sec. 2).

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.stack([np.eye(2)[:, None, :], np.eye(2)[::-1][:, None, :]])  # stay / swap, A = 1
    >>> m = LinearMixtureMDP(phi, np.array([0.25, 0.75]), np.zeros((2, 1)), gamma=0.9)
    >>> m.transitions[0, 0]
    array([0.25, 0.75])
    """

    features: object
    theta: object
    rewards: object
    gamma: float
    reward_range: tuple | None = None

    def __post_init__(self):
        phi = self.features
        _array(phi, "features")
        if phi.ndim != 4 or phi.shape[1] != phi.shape[3]:
            raise ValueError(f"features must have shape (d, S, A, S), got {tuple(phi.shape)}")
        check_kernel(phi, "features")
        th = self.theta
        xp = _array(th, "theta")
        if th.ndim < 1 or th.shape[-1] != phi.shape[0]:
            raise ValueError(f"theta must have shape (..., d) with d = {phi.shape[0]}, got {tuple(th.shape)}")
        if not bool(xp.all(xp.isfinite(th))):
            raise ValueError("theta contains NaN or infinite values")
        if bool(xp.any(th < 0)) or float(xp.max(xp.abs(xp.sum(th, axis=-1) - 1.0))) > KERNEL_ATOL:
            raise ValueError("theta must lie on the probability simplex (non-negative, summing to 1)")
        object.__setattr__(self, "reward_range", _check_range(self.reward_range))
        check_rewards(self.rewards, phi.shape[1:3], "rewards", self.reward_range)
        object.__setattr__(self, "gamma", check_gamma(self.gamma))

    @property
    def dim(self) -> int:
        return int(self.features.shape[0])

    @property
    def n_states(self) -> int:
        return int(self.features.shape[1])

    @property
    def n_actions(self) -> int:
        return int(self.features.shape[2])

    @property
    def transitions(self):
        """The mixture kernel, shape ``(..., S, A, S)``."""
        xp = get_namespace(self.features)
        d = self.dim
        flat = xp.reshape(self.features, (d, -1))
        return xp.reshape(self.theta @ flat, (*self.theta.shape[:-1], *self.features.shape[1:]))

    def value_features(self, values):
        r"""``z[..., s, a, i] = sum_t features[i, s, a, t] values[..., t]``: the regression features of
        value-targeted regression, shape ``(..., S, A, d)``."""
        xp = get_namespace(self.features, values)
        z = xp.matmul(self.features, values[..., None, None, :, None])[..., 0]  # (..., d, S, A)
        return xp.moveaxis(z, -3, -1)

    def to_tabular(self) -> TabularMDP:
        """The discounted tabular MDP with kernel :attr:`transitions` (rewards broadcast over the batch)."""
        xp = get_namespace(self.rewards)
        p = self.transitions
        r = xp.broadcast_to(self.rewards, p.shape[:-1])
        return TabularMDP(p, r, self.gamma, self.reward_range)
