r"""Hypothesis strategies that draw valid inputs of expertlab: losses, bandits, MDPs, mixtures, routing problems.

Property-based tests state an invariant "for every input of this kind" and
let Hypothesis search for a counterexample, then shrink it to a minimal one.
The strategies below draw the library's inputs the way its own property
tests do, and draw only *valid* ones: every object passes the library's
validation (the constructors of :mod:`expertlab.mdp`,
:mod:`expertlab.bandits.instances`, :class:`expertlab.balance.AssignmentProblem`,
the checks of :mod:`expertlab.mixtures`) and satisfies the invariant its
docstring states.  Every size bound is a keyword argument; bad bounds raise a
:class:`TypeError` or :class:`ValueError` naming the argument when the
strategy is built, before any example is drawn.

==================================  =======================================================
:func:`loss_matrices`               losses ``(n_reps, horizon, n_experts)`` in [0, 1]
:func:`awake_masks`                 sleeping-experts masks, at least one expert awake per round
:func:`sleeping_losses`             ``(losses, awake)`` pairs
:func:`bandit_means`                arm means (Bernoulli or Gaussian), optionally with a minimum gap
:func:`bandit_arms`                 :class:`~expertlab.sim.Arms` built by :mod:`expertlab.bandits.instances`
:func:`tabular_mdps`                discounted :class:`~expertlab.mdp.TabularMDP`
:func:`episodic_mdps`               episodic :class:`~expertlab.mdp.FiniteHorizonMDP`
:func:`linear_mixture_mdps`         discounted :class:`~expertlab.mdp.LinearMixtureMDP`
:func:`episodic_linear_mixtures`    episodic :class:`~expertlab.mdp.EpisodicLinearMixture`
:func:`gaussian_mixture_params`     batched :class:`~expertlab.mixtures.GaussianMixtureParams`
:func:`gaussian_mixture_samples`    parameters with samples drawn from them
:func:`score_matrices`              router scores ``(n_tokens, n_experts)``
:func:`assignment_problems`         :class:`~expertlab.balance.AssignmentProblem` with a feasible capacity
:func:`learner_names`               names of registered learners (:func:`expertlab.sim.learners`)
:func:`learner_examples`            the registered example ``(learner, env, horizon)`` of a learner
==================================  =======================================================

Importing this module needs Hypothesis (``pip install hypothesis``, or the
``test`` extra of expertlab); the rest of the library never imports it.

Examples
--------
Hedge plays probability vectors on any losses in [0, 1]:

>>> import numpy as np
>>> from hypothesis import given, settings
>>> from expertlab.experts import hedge
>>> from expertlab.testing import play_losses
>>> from expertlab.testing.strategies import loss_matrices
>>> @settings(max_examples=10, deadline=None, database=None)
... @given(loss_matrices(max_horizon=5, max_experts=4))
... def test_plays_on_the_simplex(losses):
...     p, _ = play_losses(hedge(), losses)
...     assert np.allclose(p.sum(axis=-1), 1.0) and (p >= 0).all()
>>> test_plays_on_the_simplex()
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("expertlab.testing.strategies needs Hypothesis, which is not installed: "
                      "pip install hypothesis (or pip install 'expertlab[test]')") from exc

from .._validation import check_float, check_in, check_int

__all__ = [
    "LOSS_EDGE_VALUES",
    "GaussianMixtureSample",
    "assignment_problems",
    "awake_masks",
    "bandit_arms",
    "bandit_means",
    "episodic_linear_mixtures",
    "episodic_mdps",
    "gaussian_mixture_params",
    "gaussian_mixture_samples",
    "learner_examples",
    "learner_names",
    "linear_mixture_mdps",
    "loss_matrices",
    "score_matrices",
    "sleeping_losses",
    "tabular_mdps",
]

#: Loss values where learners break first: the endpoints, a half, the largest double below one,
#: the smallest normal and the smallest subnormal double.
LOSS_EDGE_VALUES = (0.0, 0.5, 1.0, 1.0 - 2.0**-53, 2.0**-1022, 5e-324)


# --------------------------------------------------------------------------
# argument checks


def _size_range(low, high, name_low, name_high, *, minimum=1):
    low = check_int(low, name_low, minimum=minimum)
    high = check_int(high, name_high, minimum=minimum)
    if low > high:
        raise ValueError(f"{name_low} must be <= {name_high}, got {name_low}={low} > {name_high}={high}")
    return low, high


def _float_range(low, high, name_low, name_high, *, minimum=None, maximum=None):
    low = check_float(low, name_low, minimum=minimum, maximum=maximum)
    high = check_float(high, name_high, minimum=minimum, maximum=maximum)
    if low > high:
        raise ValueError(f"{name_low} must be <= {name_high}, got {name_low}={low} > {name_high}={high}")
    return low, high


def _gamma_range(min_gamma, max_gamma):
    low, high = _float_range(min_gamma, max_gamma, "min_gamma", "max_gamma", minimum=0.0)
    if high >= 1.0:
        raise ValueError(f"max_gamma must be < 1 (a discount factor lies in [0, 1)), got {high}")
    return low, high


def _optional_bool(value, name):
    if value is not None and not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True, False or None (either), got {type(value).__name__}")
    return None if value is None else bool(value)


def _draw_flag(draw, flag):
    return draw(st.booleans()) if flag is None else flag


# --------------------------------------------------------------------------
# building blocks


def _probability_rows(draw, shape):
    """Rows (last axis) on the simplex: exact zeros, tiny and ordinary masses, some one-hot."""
    weights = draw(hnp.arrays(np.float64, shape,
                              elements=st.one_of(st.just(0.0), st.floats(0.0, 1.0, allow_subnormal=False))))
    empty = weights.sum(axis=-1) <= 0.0
    if empty.any():  # a row without mass puts it all on one drawn entry
        target = draw(hnp.arrays(np.int64, shape[:-1], elements=st.integers(0, shape[-1] - 1)))
        weights = np.where(empty[..., None] & (np.arange(shape[-1]) == target[..., None]), 1.0, weights)
    return weights / weights.sum(axis=-1, keepdims=True)


def _unit_array(draw, shape):
    return draw(hnp.arrays(np.float64, shape, elements=st.floats(0.0, 1.0)))


def _check_strategy(value, name):
    if value is not None and not isinstance(value, st.SearchStrategy):
        raise TypeError(f"{name} must be a Hypothesis strategy or None, got {type(value).__name__}")
    return value


# --------------------------------------------------------------------------
# experts: losses and awake masks


def _loss_cells():
    return st.one_of(st.floats(0.0, 1.0), st.sampled_from(LOSS_EDGE_VALUES))


@st.composite
def _loss_matrices(draw, reps, horizon, experts, elements):
    shape = (draw(st.integers(*reps)), draw(st.integers(*horizon)), draw(st.integers(*experts)))
    losses = draw(hnp.arrays(np.float64, shape, elements=elements))
    if not (np.all(np.isfinite(losses)) and np.all(losses >= 0.0) and np.all(losses <= 1.0)):
        bad = losses[~((losses >= 0.0) & (losses <= 1.0))]
        raise ValueError(f"elements must draw losses in [0, 1], but it drew {bad[0]!r}")
    return losses


def loss_matrices(*, min_reps=1, max_reps=3, min_horizon=1, max_horizon=20, min_experts=1, max_experts=6,
                  elements=None):
    """Loss arrays ``(n_reps, horizon, n_experts)`` with every entry in [0, 1].

    The layout of :func:`expertlab.testing.play_losses`: replication ``r``
    sees ``losses[r, t]`` in round ``t``.

    Parameters
    ----------
    min_reps, max_reps : int
        Bounds (inclusive, >= 1) on ``n_reps``.
    min_horizon, max_horizon : int
        Bounds on the number of rounds.
    min_experts, max_experts : int
        Bounds on ``n_experts``.
    elements : hypothesis strategy, optional
        Strategy of one loss.  The default mixes arbitrary floats in [0, 1]
        with :data:`LOSS_EDGE_VALUES` (0, 1/2, 1, the largest double below
        1, the smallest normal and subnormal doubles).  Pass e.g.
        ``st.sampled_from([0.0, 0.5, 1.0])`` for losses on a grid (ties);
        a value outside [0, 1] raises a :class:`ValueError` naming
        ``elements`` when it is drawn.

    Returns
    -------
    hypothesis strategy of float64 ndarray, shape (n_reps, horizon, n_experts)

    See Also
    --------
    sleeping_losses : losses with awake masks.

    Examples
    --------
    >>> from hypothesis import find
    >>> losses = find(loss_matrices(max_reps=2), lambda x: x.shape[0] == 2 and x.max() > 0.5)
    >>> losses.shape, losses.dtype
    ((2, 1, 1), dtype('float64'))
    >>> bool(((losses >= 0) & (losses <= 1)).all())
    True
    """
    reps = _size_range(min_reps, max_reps, "min_reps", "max_reps")
    horizon = _size_range(min_horizon, max_horizon, "min_horizon", "max_horizon")
    experts = _size_range(min_experts, max_experts, "min_experts", "max_experts")
    elements = _loss_cells() if _check_strategy(elements, "elements") is None else elements
    return _loss_matrices(reps, horizon, experts, elements)


def _check_shape(shape):
    if isinstance(shape, (int, np.integer)) or not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape must be a tuple of ints (..., n_experts), got {type(shape).__name__}")
    if len(shape) < 1:
        raise ValueError("shape must have at least one axis (n_experts)")
    return tuple(check_int(s, f"shape[{i}]", minimum=0 if i < len(shape) - 1 else 1) for i, s in enumerate(shape))


@st.composite
def _awake_masks(draw, shape):
    awake = draw(hnp.arrays(np.bool_, shape))
    nobody = ~awake.any(axis=-1)
    if nobody.any():  # wake one drawn expert in every round where nobody is awake
        keep = draw(hnp.arrays(np.int64, shape[:-1], elements=st.integers(0, shape[-1] - 1)))
        awake |= nobody[..., None] & (np.arange(shape[-1]) == keep[..., None])
    return awake


def awake_masks(shape):
    """Sleeping-experts masks of a given shape with at least one awake expert in every row.

    Parameters
    ----------
    shape : tuple of int
        ``(..., n_experts)``, e.g. ``losses.shape``; ``n_experts >= 1``.

    Returns
    -------
    hypothesis strategy of bool ndarray of shape ``shape``
        ``mask.any(axis=-1)`` holds everywhere; otherwise any pattern,
        everybody awake and a single awake expert included.

    Examples
    --------
    >>> from hypothesis import find
    >>> mask = find(awake_masks((2, 3, 4)), lambda m: True)
    >>> mask.shape, bool(mask.any(axis=-1).all())
    ((2, 3, 4), True)
    """
    return _awake_masks(_check_shape(shape))


@st.composite
def _sleeping_losses(draw, matrices):
    losses = draw(matrices)
    return losses, draw(_awake_masks(losses.shape))


def sleeping_losses(*, min_reps=1, max_reps=3, min_horizon=1, max_horizon=20, min_experts=1, max_experts=6,
                    elements=None):
    """Pairs ``(losses, awake)``: :func:`loss_matrices` with an :func:`awake_masks` of their shape.

    Parameters
    ----------
    min_reps, max_reps, min_horizon, max_horizon, min_experts, max_experts, elements
        As in :func:`loss_matrices`.

    Returns
    -------
    hypothesis strategy of (ndarray, bool ndarray)
        Both of shape ``(n_reps, horizon, n_experts)``; every round has an
        awake expert.

    Examples
    --------
    >>> from hypothesis import find
    >>> losses, awake = find(sleeping_losses(), lambda la: la[1].shape[-1] == 3)
    >>> losses.shape == awake.shape, bool(awake.any(axis=-1).all())
    (True, True)
    """
    return _sleeping_losses(loss_matrices(min_reps=min_reps, max_reps=max_reps, min_horizon=min_horizon,
                                          max_horizon=max_horizon, min_experts=min_experts,
                                          max_experts=max_experts, elements=elements))


# --------------------------------------------------------------------------
# bandits


def _below(best, gap, low):
    """The largest ``hi >= low`` with ``best - hi >= gap`` in floating point (None if there is none)."""
    hi = min(best - gap, best)
    while hi >= low and best - hi < gap:
        hi = float(np.nextafter(hi, -np.inf))
    return hi if hi >= low else None


@st.composite
def _bandit_means(draw, arms, low, high, min_gap):
    n = draw(st.integers(*arms))
    if min_gap is None:
        return draw(hnp.arrays(np.float64, n, elements=st.floats(low, high)))
    best = draw(st.floats(min(low + min_gap, high), high))
    hi = _below(best, min_gap, low)
    if hi is None:  # rounding left no room under this best: the top of the range always has some
        best = high
        hi = _below(best, min_gap, low)
    others = draw(hnp.arrays(np.float64, n - 1, elements=st.floats(low, hi)))
    return np.insert(others, draw(st.integers(0, n - 1)), best)


def _mean_range(kind, min_mean, max_mean):
    if kind == "bernoulli":
        min_mean = 0.0 if min_mean is None else min_mean
        max_mean = 1.0 if max_mean is None else max_mean
        return _float_range(min_mean, max_mean, "min_mean", "max_mean", minimum=0.0, maximum=1.0)
    min_mean = -1.0 if min_mean is None else min_mean
    max_mean = 1.0 if max_mean is None else max_mean
    return _float_range(min_mean, max_mean, "min_mean", "max_mean")


def _check_gap(min_gap, low, high):
    if min_gap is None:
        return None
    min_gap = check_float(min_gap, "min_gap", positive=True)
    if _below(high, min_gap, low) is None:
        raise ValueError(f"min_gap={min_gap} does not fit in [min_mean, max_mean] = [{low}, {high}]")
    return min_gap


def bandit_means(*, kind="bernoulli", min_arms=2, max_arms=8, min_mean=None, max_mean=None, min_gap=None):
    """Arm means of a stochastic bandit, optionally with a unique best arm ahead by ``min_gap``.

    Parameters
    ----------
    kind : {"bernoulli", "gaussian"}
        Bernoulli means lie in [0, 1]; Gaussian means in ``[min_mean, max_mean]``
        (default [-1, 1]).
    min_arms, max_arms : int
        Bounds on the number of arms (``min_arms >= 2``: the library's bandits
        need two arms).
    min_mean, max_mean : float, optional
        Range of the means (default [0, 1] for Bernoulli, which may only
        narrow it, and [-1, 1] for Gaussian arms).
    min_gap : float, optional
        If given, one arm is the unique best and every other arm's mean is
        at least ``min_gap`` below it (the smallest suboptimality gap
        :math:`\\Delta_{\\min} \\ge` ``min_gap``, exactly in floating point).

    Returns
    -------
    hypothesis strategy of float64 ndarray, shape (n_arms,)

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import find
    >>> means = find(bandit_means(min_gap=0.25), lambda m: m.size == 3)
    >>> top, second = np.sort(means)[::-1][:2]
    >>> bool(top - second >= 0.25), bool(means.min() >= 0 and means.max() <= 1)
    (True, True)
    """
    kind = check_in(kind, "kind", ("bernoulli", "gaussian"))
    arms = _size_range(min_arms, max_arms, "min_arms", "max_arms", minimum=2)
    low, high = _mean_range(kind, min_mean, max_mean)
    return _bandit_means(arms, low, high, _check_gap(min_gap, low, high))


@st.composite
def _bandit_arms(draw, kind, arms, ranges, min_gap, sigma):
    from ..bandits import instances

    kind = draw(st.sampled_from(("bernoulli", "gaussian"))) if kind is None else kind
    low, high = ranges[kind]
    means = draw(_bandit_means(arms, low, high, min_gap))
    if kind == "bernoulli":
        return instances.bernoulli(means)
    return instances.gaussian(means, sigma=draw(st.floats(*sigma)))


def bandit_arms(*, kind=None, min_arms=2, max_arms=8, min_gap=None, min_sigma=0.1, max_sigma=2.0):
    """Stochastic arms built by :func:`expertlab.bandits.instances.bernoulli` or ``gaussian``.

    Parameters
    ----------
    kind : {"bernoulli", "gaussian"} or None
        ``None`` draws either.
    min_arms, max_arms : int
        Bounds on the number of arms (``>= 2``).
    min_gap : float, optional
        Minimum suboptimality gap of the means, as in :func:`bandit_means`
        (Bernoulli means in [0, 1], Gaussian means in [-1, 1]).
    min_sigma, max_sigma : float
        Range of the noise level of Gaussian arms (``> 0``).

    Returns
    -------
    hypothesis strategy of expertlab.sim.Arms
        ``arms.params["means"]`` holds the means; ``arms.kind`` is the family.

    Examples
    --------
    >>> from hypothesis import find
    >>> arms = find(bandit_arms(kind="gaussian", min_gap=0.5), lambda a: a.n_arms == 4)
    >>> arms.kind, arms.n_arms, arms.params["sigma"] >= 0.1
    ('gaussian', 4, True)
    """
    if kind is not None:
        kind = check_in(kind, "kind", ("bernoulli", "gaussian"))
    arms = _size_range(min_arms, max_arms, "min_arms", "max_arms", minimum=2)
    sigma = _float_range(min_sigma, max_sigma, "min_sigma", "max_sigma")
    if sigma[0] <= 0:
        raise ValueError(f"min_sigma must be > 0, got {sigma[0]}")
    ranges = {"bernoulli": (0.0, 1.0), "gaussian": (-1.0, 1.0)}
    if min_gap is not None:
        for k in ("bernoulli", "gaussian") if kind is None else (kind,):
            min_gap = _check_gap(min_gap, *ranges[k])
    return _bandit_arms(kind, arms, ranges, min_gap, sigma)


# --------------------------------------------------------------------------
# MDPs


def _mdp_sizes(min_states, max_states, min_actions, max_actions):
    return (_size_range(min_states, max_states, "min_states", "max_states"),
            _size_range(min_actions, max_actions, "min_actions", "max_actions"))


@st.composite
def _tabular_mdps(draw, states, actions, gamma):
    from ..mdp import TabularMDP

    s, a = draw(st.integers(*states)), draw(st.integers(*actions))
    return TabularMDP(_probability_rows(draw, (s, a, s)), _unit_array(draw, (s, a)), draw(st.floats(*gamma)),
                      reward_range=(0.0, 1.0))


def tabular_mdps(*, min_states=1, max_states=4, min_actions=1, max_actions=3, min_gamma=0.0, max_gamma=0.99):
    """Discounted tabular MDPs built by :class:`expertlab.mdp.TabularMDP`.

    Transition rows are probability vectors with exact zeros, one-hot
    (deterministic) rows and tiny masses among them; rewards lie in [0, 1]
    (``reward_range=(0, 1)`` is set, so the constructor checks it).

    Parameters
    ----------
    min_states, max_states : int
        Bounds on ``S``.
    min_actions, max_actions : int
        Bounds on ``A``.
    min_gamma, max_gamma : float
        Range of the discount factor, within [0, 1) (``max_gamma < 1``).

    Returns
    -------
    hypothesis strategy of expertlab.mdp.TabularMDP
        ``transitions (S, A, S)`` row-stochastic, ``rewards (S, A)``, ``gamma``.

    Examples
    --------
    >>> from hypothesis import find
    >>> m = find(tabular_mdps(max_gamma=0.9), lambda m: m.n_states == 3)
    >>> m.transitions.shape, m.rewards.shape, 0.0 <= m.gamma <= 0.9
    ((3, 1, 3), (3, 1), True)
    """
    states, actions = _mdp_sizes(min_states, max_states, min_actions, max_actions)
    return _tabular_mdps(states, actions, _gamma_range(min_gamma, max_gamma))


@st.composite
def _episodic_mdps(draw, states, actions, length, stationary):
    from ..mdp import FiniteHorizonMDP

    s, a, h = draw(st.integers(*states)), draw(st.integers(*actions)), draw(st.integers(*length))
    if _draw_flag(draw, stationary):
        return FiniteHorizonMDP.stationary(_probability_rows(draw, (s, a, s)), _unit_array(draw, (s, a)), h,
                                           reward_range=(0.0, 1.0))
    return FiniteHorizonMDP(_probability_rows(draw, (h, s, a, s)), _unit_array(draw, (h, s, a)),
                            reward_range=(0.0, 1.0))


def episodic_mdps(*, min_states=1, max_states=4, min_actions=1, max_actions=3, min_episode_length=1,
                  max_episode_length=4, stationary=None):
    """Episodic tabular MDPs built by :class:`expertlab.mdp.FiniteHorizonMDP`, rewards in [0, 1].

    A drawn MDP is also an environment of :func:`expertlab.sim.run` (every
    episode from state 0), e.g. for :func:`expertlab.mdp.ucbvi`.

    Parameters
    ----------
    min_states, max_states, min_actions, max_actions : int
        Bounds on ``S`` and ``A``.
    min_episode_length, max_episode_length : int
        Bounds on the episode length ``H``.
    stationary : bool or None
        ``True``: one kernel and reward table for every stage
        (:meth:`~expertlab.mdp.FiniteHorizonMDP.stationary`); ``False``:
        stage-dependent ones; ``None``: either.

    Returns
    -------
    hypothesis strategy of expertlab.mdp.FiniteHorizonMDP
        ``transitions (H, S, A, S)`` row-stochastic, ``rewards (H, S, A)``.

    Examples
    --------
    >>> from hypothesis import find
    >>> m = find(episodic_mdps(), lambda m: m.horizon == 3 and m.n_states == 2)
    >>> m.transitions.shape, m.rewards.shape
    ((3, 2, 1, 2), (3, 2, 1))
    """
    states, actions = _mdp_sizes(min_states, max_states, min_actions, max_actions)
    length = _size_range(min_episode_length, max_episode_length, "min_episode_length", "max_episode_length")
    return _episodic_mdps(states, actions, length, _optional_bool(stationary, "stationary"))


def _mixture_parts(draw, dims, states, actions):
    d, s, a = draw(st.integers(*dims)), draw(st.integers(*states)), draw(st.integers(*actions))
    return _probability_rows(draw, (d, s, a, s)), _probability_rows(draw, (d,)), (s, a)


@st.composite
def _linear_mixture_mdps(draw, dims, states, actions, gamma):
    from ..mdp import LinearMixtureMDP

    phi, theta, (s, a) = _mixture_parts(draw, dims, states, actions)
    return LinearMixtureMDP(phi, theta, _unit_array(draw, (s, a)), draw(st.floats(*gamma)), reward_range=(0.0, 1.0))


def linear_mixture_mdps(*, min_dim=1, max_dim=3, min_states=1, max_states=4, min_actions=1, max_actions=3,
                        min_gamma=0.0, max_gamma=0.99):
    r"""Discounted linear-mixture MDPs built by :class:`expertlab.mdp.LinearMixtureMDP`.

    ``d`` base kernels, each a valid kernel, and a weight :math:`\theta` on
    the simplex (exact zeros possible), so that :math:`P_\theta = \sum_i
    \theta_i \phi_i` is a kernel; rewards in [0, 1].

    Parameters
    ----------
    min_dim, max_dim : int
        Bounds on the number ``d`` of base kernels.
    min_states, max_states, min_actions, max_actions : int
        Bounds on ``S`` and ``A``.
    min_gamma, max_gamma : float
        Range of the discount factor, within [0, 1).

    Returns
    -------
    hypothesis strategy of expertlab.mdp.LinearMixtureMDP
        ``features (d, S, A, S)``, ``theta (d,)``, ``rewards (S, A)``, ``gamma``.

    Examples
    --------
    >>> from hypothesis import find
    >>> m = find(linear_mixture_mdps(min_dim=2), lambda m: m.n_states == 2)
    >>> m.features.shape, m.theta.shape, m.transitions.shape
    ((2, 2, 1, 2), (2,), (2, 1, 2))
    """
    dims = _size_range(min_dim, max_dim, "min_dim", "max_dim")
    states, actions = _mdp_sizes(min_states, max_states, min_actions, max_actions)
    return _linear_mixture_mdps(dims, states, actions, _gamma_range(min_gamma, max_gamma))


@st.composite
def _episodic_linear_mixtures(draw, dims, states, actions, length):
    from ..mdp import EpisodicLinearMixture

    phi, theta, (s, a) = _mixture_parts(draw, dims, states, actions)
    return EpisodicLinearMixture(phi, theta, _unit_array(draw, (draw(st.integers(*length)), s, a)))


def episodic_linear_mixtures(*, min_dim=1, max_dim=3, min_states=1, max_states=4, min_actions=1, max_actions=3,
                             min_episode_length=1, max_episode_length=4):
    """Episodic linear mixtures built by :class:`expertlab.mdp.EpisodicLinearMixture`.

    Environments of :func:`expertlab.mdp.ucrl_vtr` and
    :func:`expertlab.mdp.ucrl_vtr_plus`: base kernels ``(d, S, A, S)``, a
    weight on the simplex and stage-dependent rewards ``(H, S, A)`` in [0, 1].

    Parameters
    ----------
    min_dim, max_dim : int
        Bounds on ``d``.
    min_states, max_states, min_actions, max_actions : int
        Bounds on ``S`` and ``A``.
    min_episode_length, max_episode_length : int
        Bounds on ``H``.

    Returns
    -------
    hypothesis strategy of expertlab.mdp.EpisodicLinearMixture

    Examples
    --------
    >>> from hypothesis import find
    >>> m = find(episodic_linear_mixtures(), lambda m: m.horizon == 2)
    >>> m.features.shape, m.rewards.shape
    ((1, 1, 1, 1), (2, 1, 1))
    """
    dims = _size_range(min_dim, max_dim, "min_dim", "max_dim")
    states, actions = _mdp_sizes(min_states, max_states, min_actions, max_actions)
    length = _size_range(min_episode_length, max_episode_length, "min_episode_length", "max_episode_length")
    return _episodic_linear_mixtures(dims, states, actions, length)


# --------------------------------------------------------------------------
# Gaussian mixtures

_COVARIANCE_TYPES = ("full", "diag", "spherical")


@st.composite
def _gaussian_mixture_params(draw, reps, components, features, covariance_type, max_abs_mean, variance,
                             min_weight):
    from ..mixtures import GaussianMixtureParams

    r, c, d = draw(st.integers(*reps)), draw(st.integers(*components)), draw(st.integers(*features))
    kind = draw(st.sampled_from(_COVARIANCE_TYPES)) if covariance_type is None else covariance_type
    weights = min_weight + (1.0 - c * min_weight) * _probability_rows(draw, (r, c))
    means = draw(hnp.arrays(np.float64, (r, c, d), elements=st.floats(-max_abs_mean, max_abs_mean)))
    lo, hi = variance
    if kind == "spherical":
        cov = draw(hnp.arrays(np.float64, (r, c), elements=st.floats(lo, hi)))
    elif kind == "diag":
        cov = draw(hnp.arrays(np.float64, (r, c, d), elements=st.floats(lo, hi)))
    else:  # lo I + A A^T: eigenvalues >= lo, diagonal <= hi
        scale = np.sqrt((hi - lo) / d)
        a = draw(hnp.arrays(np.float64, (r, c, d, d), elements=st.floats(-1.0, 1.0))) * scale
        cov = lo * np.eye(d) + a @ np.swapaxes(a, -1, -2)
        cov = 0.5 * (cov + np.swapaxes(cov, -1, -2))
    return GaussianMixtureParams(weights, means, cov, kind)


def _gmm_ranges(min_reps, max_reps, min_components, max_components, min_features, max_features, covariance_type,
                max_abs_mean, min_variance, max_variance, min_weight):
    reps = _size_range(min_reps, max_reps, "min_reps", "max_reps")
    components = _size_range(min_components, max_components, "min_components", "max_components")
    features = _size_range(min_features, max_features, "min_features", "max_features")
    if covariance_type is not None:
        covariance_type = check_in(covariance_type, "covariance_type", _COVARIANCE_TYPES)
    max_abs_mean = check_float(max_abs_mean, "max_abs_mean", minimum=0.0)
    variance = _float_range(min_variance, max_variance, "min_variance", "max_variance")
    if variance[0] < 1e-6:
        raise ValueError(f"min_variance must be >= 1e-6 (so that covariances stay numerically positive definite), "
                         f"got {variance[0]}")
    min_weight = check_float(min_weight, "min_weight", minimum=0.0)
    if min_weight * components[1] > 1.0:
        raise ValueError(f"min_weight * max_components must be <= 1 (the weights sum to 1), "
                         f"got {min_weight} * {components[1]}")
    return reps, components, features, covariance_type, max_abs_mean, variance, min_weight


def gaussian_mixture_params(*, min_reps=1, max_reps=2, min_components=1, max_components=3, min_features=1,
                            max_features=3, covariance_type=None, max_abs_mean=5.0, min_variance=0.05,
                            max_variance=4.0, min_weight=0.0):
    r"""Parameters of ``n_reps`` Gaussian mixtures, as :func:`expertlab.mixtures.e_step` takes them.

    Parameters
    ----------
    min_reps, max_reps : int
        Bounds on the leading replication axis ``n_reps``.
    min_components, max_components : int
        Bounds on ``n_components``.
    min_features, max_features : int
        Bounds on ``n_features``.
    covariance_type : {"full", "diag", "spherical"} or None
        ``None`` draws any of the three.
    max_abs_mean : float
        Every mean coordinate lies in ``[-max_abs_mean, max_abs_mean]``.
    min_variance, max_variance : float
        Variances (``"diag"``, ``"spherical"``) lie in this range; a full
        covariance is :math:`\lambda I + A A^\top` with :math:`\lambda` =
        ``min_variance`` (its smallest eigenvalue is at least that, so it is
        positive definite) and diagonal entries at most ``max_variance``.
        ``min_variance >= 1e-6``.
    min_weight : float
        Every mixture weight is at least this (``min_weight * max_components
        <= 1``); the default 0 lets weights be exactly zero (each row still
        sums to one).

    Returns
    -------
    hypothesis strategy of expertlab.mixtures.GaussianMixtureParams
        ``weights (n_reps, C)``, ``means (n_reps, C, D)`` and covariances of the
        drawn type.

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import find
    >>> p = find(gaussian_mixture_params(covariance_type="full"), lambda p: p.means.shape[-1] == 2)
    >>> p.covariances.shape, bool(np.linalg.eigvalsh(p.covariances).min() >= 0.05 - 1e-12)
    ((1, 1, 2, 2), True)
    """
    return _gaussian_mixture_params(*_gmm_ranges(min_reps, max_reps, min_components, max_components, min_features,
                                                 max_features, covariance_type, max_abs_mean, min_variance,
                                                 max_variance, min_weight))


class GaussianMixtureSample(NamedTuple):
    """Parameters of ``n_reps`` Gaussian mixtures and samples drawn from them.

    Attributes
    ----------
    params : expertlab.mixtures.GaussianMixtureParams
        Leading axis ``n_reps``.
    X : ndarray, shape (n_reps, n_samples, n_features)
        ``X[r]`` is drawn from mixture ``r``.
    labels : ndarray of int64, shape (n_reps, n_samples)
        The component each point was drawn from.
    """

    params: object
    X: np.ndarray
    labels: np.ndarray


def _sample(params, n_samples, seed):
    """``n_samples`` points of each mixture from the counter-based generator, keyed by ``(seed, r, i)``."""
    from .. import random as counter

    w, mu, cov, kind = params.weights, params.means, params.covariances, params.covariance_type
    r, c, d = mu.shape
    keys = counter.round_key(counter.rep_key(seed, np.arange(r, dtype=np.uint64))[:, None],
                        np.arange(n_samples, dtype=np.uint64)[None, :])                       # (R, n)
    u = counter.uniform(keys, 0)                                                                    # component draw
    z = counter.normal(keys[..., None], np.arange(1, d + 1, dtype=np.uint64))                       # uniforms 2..2D+1
    cum = np.cumsum(w, axis=1)
    last = np.array([np.flatnonzero(row > 0)[-1] for row in w])                               # (R,)
    labels = np.minimum((u[..., None] > cum[:, None, :]).sum(axis=-1), last[:, None])
    rows = np.arange(r)[:, None]
    if kind == "full":
        chol = np.linalg.cholesky(cov)[rows, labels]                                           # (R, n, D, D)
        noise = (chol @ z[..., None])[..., 0]
    elif kind == "diag":
        noise = np.sqrt(cov[rows, labels]) * z
    else:
        noise = np.sqrt(cov[rows, labels])[..., None] * z
    return mu[rows, labels] + noise, labels.astype(np.int64)


@st.composite
def _gaussian_mixture_samples(draw, samples, ranges):
    params = draw(_gaussian_mixture_params(*ranges))
    n = draw(st.integers(*samples))
    X, labels = _sample(params, n, draw(st.integers(0, 2**64 - 1)))
    return GaussianMixtureSample(params, X, labels)


def gaussian_mixture_samples(*, min_samples=1, max_samples=50, min_reps=1, max_reps=2, min_components=1,
                             max_components=3, min_features=1, max_features=3, covariance_type=None,
                             max_abs_mean=5.0, min_variance=0.05, max_variance=4.0, min_weight=0.0):
    """Gaussian-mixture parameters together with samples drawn from them.

    The parameters are those of :func:`gaussian_mixture_params`; the points
    come from the library's counter-based generator (:mod:`expertlab.random`)
    under a drawn seed: point ``i`` of mixture ``r`` picks its component by
    inverse CDF from uniform 0 of the key of ``(seed, r, i)`` and its
    Gaussian noise from the normal draws ``1 .. n_features`` of that key, so
    mixture ``r``'s points do not depend on how many mixtures are drawn.

    Parameters
    ----------
    min_samples, max_samples : int
        Bounds on ``n_samples``.
    min_reps, max_reps, min_components, max_components, min_features, max_features : int
        As in :func:`gaussian_mixture_params`.
    covariance_type, max_abs_mean, min_variance, max_variance, min_weight
        As in :func:`gaussian_mixture_params`.

    Returns
    -------
    hypothesis strategy of GaussianMixtureSample
        ``(params, X, labels)``; only components of positive weight appear
        in ``labels``.

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import find
    >>> from expertlab.mixtures import log_likelihood
    >>> params, X, labels = find(gaussian_mixture_samples(min_samples=10), lambda s: s.params.means.shape[1] == 2)
    >>> X.shape, labels.shape
    ((1, 10, 1), (1, 10))
    >>> bool(np.isfinite(log_likelihood(X, params)).all())
    True
    """
    samples = _size_range(min_samples, max_samples, "min_samples", "max_samples")
    return _gaussian_mixture_samples(samples, _gmm_ranges(min_reps, max_reps, min_components, max_components,
                                                          min_features, max_features, covariance_type,
                                                          max_abs_mean, min_variance, max_variance, min_weight))


# --------------------------------------------------------------------------
# load balancing


@st.composite
def _score_matrices(draw, tokens, experts, max_abs, ties, grid):
    shape = (draw(st.integers(*tokens)), draw(st.integers(*experts)))
    if _draw_flag(draw, ties):  # a coarse grid: exact ties and zero margins
        steps = draw(hnp.arrays(np.int64, shape, elements=st.integers(-grid, grid)))
        return steps * (max_abs / grid)
    return draw(hnp.arrays(np.float64, shape, elements=st.floats(-max_abs, max_abs)))


def _score_ranges(min_tokens, max_tokens, min_experts, max_experts, max_abs, ties, grid):
    tokens = _size_range(min_tokens, max_tokens, "min_tokens", "max_tokens")
    experts = _size_range(min_experts, max_experts, "min_experts", "max_experts")
    max_abs = check_float(max_abs, "max_abs", positive=True)
    return tokens, experts, max_abs, _optional_bool(ties, "ties"), check_int(grid, "grid")


def score_matrices(*, min_tokens=1, max_tokens=8, min_experts=1, max_experts=6, max_abs=10.0, ties=None, grid=4):
    """Finite router scores ``(n_tokens, n_experts)`` (larger is better).

    Parameters
    ----------
    min_tokens, max_tokens : int
        Bounds on ``n_tokens``.
    min_experts, max_experts : int
        Bounds on ``n_experts``.
    max_abs : float
        Every score lies in ``[-max_abs, max_abs]``.
    ties : bool or None
        ``True``: scores on the grid ``max_abs * j / grid``, ``j = -grid, ...,
        grid``, so that exact ties and zero margins are common; ``False``:
        arbitrary floats; ``None``: either.
    grid : int
        Steps of the grid on each side of 0 (>= 1).  With ``max_abs / grid``
        a power of two every grid score is a dyadic number, and sums of a few
        of them are exact.

    Returns
    -------
    hypothesis strategy of float64 ndarray, shape (n_tokens, n_experts)

    Examples
    --------
    >>> from hypothesis import find
    >>> s = find(score_matrices(ties=True, max_abs=2.0), lambda s: s.shape == (2, 3) and s.max() > 0)
    >>> s.shape, sorted(set((s * 2).ravel().tolist()) - {-4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0})
    ((2, 3), [])
    """
    return _score_matrices(*_score_ranges(min_tokens, max_tokens, min_experts, max_experts, max_abs, ties, grid))


_CAPACITIES = ("balanced", "integer", "real")


@st.composite
def _assignment_problems(draw, score_ranges, k_range, capacity):
    from ..balance import AssignmentProblem

    tokens, experts, max_abs, ties, grid = score_ranges
    scores = draw(_score_matrices(tokens, (max(experts[0], k_range[0]), experts[1]), max_abs, ties, grid))
    n, e = scores.shape
    k = draw(st.integers(k_range[0], e if k_range[1] is None else min(k_range[1], e)))
    kind = draw(st.sampled_from(_CAPACITIES)) if capacity is None else capacity
    if kind == "balanced":
        return AssignmentProblem(scores, k)
    if kind == "integer":
        cap = draw(hnp.arrays(np.float64, e, elements=st.integers(0, n).map(float)))
    else:
        cap = draw(hnp.arrays(np.float64, e, elements=st.floats(0.0, float(n))))
    # repair rather than filter: raise capacities in a drawn order until N k assignments fit
    for i in draw(st.permutations(range(e))):
        deficit = n * k - np.minimum(cap, n).sum()
        if deficit <= 0:
            break
        cap[i] = min(float(n), cap[i] + deficit)
    return AssignmentProblem(scores, k, capacity=cap)


def assignment_problems(*, min_tokens=1, max_tokens=8, min_experts=1, max_experts=6, min_k=1, max_k=None,
                        max_abs=10.0, ties=None, grid=4, capacity=None):
    r"""Routing problems built by :class:`expertlab.balance.AssignmentProblem`, always feasible.

    Parameters
    ----------
    min_tokens, max_tokens, min_experts, max_experts : int
        As in :func:`score_matrices` (``n_experts`` is at least ``min_k``).
    min_k, max_k : int
        Bounds on the experts per token ``k`` (``max_k=None``: up to
        ``n_experts``; ``k <= n_experts`` always).
    max_abs, ties, grid
        As in :func:`score_matrices`.
    capacity : {"balanced", "integer", "real"} or None
        ``"balanced"``: the default capacity :math:`N k / E`;
        ``"integer"``: integer capacities in ``[0, N]``; ``"real"``: real
        ones in ``[0, N]``; ``None``: any of the three.  Integer and real
        capacities are drawn freely, then raised (one expert at a time, in a
        drawn order, never above :math:`N`) until :math:`\sum_i \min(C_i, N)
        \ge N k`, so every problem has a feasible routing.

    Returns
    -------
    hypothesis strategy of expertlab.balance.AssignmentProblem

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import find
    >>> prob = find(assignment_problems(capacity="integer"), lambda p: p.n_experts == 3 and p.k == 2)
    >>> prob.integral_capacity, bool(np.minimum(prob.capacity, prob.n_tokens).sum() >= prob.n_tokens * prob.k)
    (True, True)
    """
    score_ranges = _score_ranges(min_tokens, max_tokens, min_experts, max_experts, max_abs, ties, grid)
    min_k = check_int(min_k, "min_k")
    if max_k is not None:
        max_k = check_int(max_k, "max_k")
        if max_k < min_k:
            raise ValueError(f"min_k must be <= max_k, got min_k={min_k} > max_k={max_k}")
    if min_k > score_ranges[1][1]:
        raise ValueError(f"min_k must be <= max_experts (k experts per token), got min_k={min_k} > "
                         f"max_experts={score_ranges[1][1]}")
    if capacity is not None:
        capacity = check_in(capacity, "capacity", _CAPACITIES)
    return _assignment_problems(score_ranges, (min_k, max_k), capacity)


# --------------------------------------------------------------------------
# registered learners


def _registered(family, feedback, with_example):
    from .. import sim

    if feedback is not None and not isinstance(feedback, str):
        raise TypeError(f"feedback must be a str or None, got {type(feedback).__name__}")
    table = sim.learners(family)
    names = [n for n, r in table.items()
             if (feedback is None or r.feedback == feedback) and (not with_example or r.example is not None)]
    if not names:
        what = "with an example " if with_example else ""
        raise ValueError(f"no learner {what}is registered for family={family!r} and feedback={feedback!r}; "
                         f"feedback kinds of the family: {sorted({r.feedback for r in table.values()})}")
    return names


def learner_names(*, family=None, feedback=None):
    """Names of registered learners (:func:`expertlab.sim.learners`), for ``sim.get_learner``.

    Parameters
    ----------
    family : str, optional
        ``"experts"``, ``"bandits"``, ``"mdp"``, ``"balance"``, ... (``None``: all).
    feedback : str, optional
        Keep learners of this feedback kind only (e.g. ``"full"``, ``"bandit"``).

    Returns
    -------
    hypothesis strategy of str
        Drawn from the learners registered when the strategy is built.

    Examples
    --------
    >>> from hypothesis import find
    >>> from expertlab import sim
    >>> name = find(learner_names(family="experts", feedback="full"), lambda n: True)
    >>> sim.get_learner(name).feedback
    'full'
    """
    return st.sampled_from(_registered(family, feedback, with_example=False))


def learner_examples(*, family=None, feedback=None):
    """The registered example run ``(learner, env, horizon)`` of a registered learner.

    Each registered learner may carry a small example run (what
    :func:`expertlab.sim.register_learner` was given as ``example``): a
    learner built with its defaults, an environment it runs on and a
    horizon.  This strategy draws one learner and calls its example.

    Parameters
    ----------
    family : str, optional
        Family of the learners (``None``: all).
    feedback : str, optional
        Keep learners of this feedback kind only.

    Returns
    -------
    hypothesis strategy of (expertlab.sim.Learner, environment, int)
        Ready for ``sim.run(learner, env, horizon=horizon, n_reps=...)``.

    Examples
    --------
    >>> from hypothesis import find
    >>> from expertlab import sim
    >>> learner, env, horizon = find(learner_examples(family="bandits"), lambda ex: True)
    >>> learner.feedback == env.spec.feedback, horizon >= 1
    (True, True)
    """
    from .. import sim

    names = _registered(family, feedback, with_example=True)
    return st.sampled_from(names).map(lambda name: sim.get_learner(name).example())
