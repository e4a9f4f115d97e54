r"""Policies of conservative exploration: baselines and their mixtures with the optimistic policy.

A :class:`ConservativeBaseline` is the policy a conservative learner falls
back to, with the value credited to it and the reference of the constraint;
:func:`known_baseline` evaluates a given policy exactly and
:func:`learned_baseline` clones one from offline trajectories with a Hoeffding
interval on its value.  The decision rules combine the greedy optimistic policy
with the baseline: :func:`mix_policies` forms the per-step mixture, whose
StepMix weight :func:`stepmix_weight` finds by batched bisection on the
pessimistic value, and :func:`epsmix_probability` gives the EpsMix probability
of playing the optimistic policy for a whole episode in closed form.  A
:class:`MixedPlan` is what a conservative learner plays in an episode; the
learner draws its coins from its own keys (:func:`sample_mixed_policy`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._random import rep_key, round_key, seed_to_uint64, uniform
from .._repr import short_repr
from .._validation import check_int, check_open_unit
from ._conservative import _check_stochastic, _evaluate, _pessimistic_eval, _pessimistic_model
from ._episodic import _check_single, sample_episodes
from ._models import FiniteHorizonMDP

__all__ = ["ConservativeBaseline", "MixedPlan", "known_baseline", "learned_baseline", "mix_policies",
           "sample_mixed_policy", "stepmix_weight", "epsmix_probability"]


@short_repr
@dataclasses.dataclass(frozen=True)
class ConservativeBaseline:
    r"""A baseline policy and the two numbers the conservative constraint needs.

    Attributes
    ----------
    policy : ndarray, shape (H, S, A)
        The (possibly stochastic) policy played when the learner falls back.
    value : float
        Lower bound on the value of ``policy`` from the start state (exact if known).
    reference : float
        Upper bound on :math:`V^{\pi_b}_1(s_1)` in :math:`V^{\pi_k}_1(s_1) \ge (1 - \alpha) V^{\pi_b}_1(s_1)`
        (exact if known).
    n_samples : int
        Offline trajectories it was learned from (0 if known).
    """

    policy: np.ndarray
    value: float
    reference: float
    n_samples: int = 0


@short_repr
@dataclasses.dataclass(frozen=True)
class MixedPlan:
    r"""The play of one episode of every replication: a conservative learner's action.

    The episode follows the :math:`w`-mixture of the greedy optimistic policy
    and the baseline with probability :math:`\epsilon`, else the baseline;
    ``policy`` is the deterministic policy drawn from that law for the
    episode (:func:`sample_mixed_policy`), which the environment rolls out,
    while the exact value of the mixture (coins included) is what the
    environment's regret and constraint metrics evaluate.

    Attributes
    ----------
    optimistic : ndarray of int, shape (n_reps, H, S)
        Greedy policy of the optimistic Q-values.
    step_weight : ndarray, shape (n_reps,)
        :math:`w`: each step takes the optimistic action w.p. :math:`w`, else a baseline one.
    episode_prob : ndarray, shape (n_reps,)
        :math:`\epsilon`: the episode follows the :math:`w`-mixture w.p. :math:`\epsilon`, else the baseline.
    credit : ndarray, shape (n_reps,)
        Lower bound on the expected value of the episode (added to the budget).
    policy : ndarray of int, shape (n_reps, H, S), or None
        The deterministic policy drawn for the episode (``None`` before the draw).
    """

    optimistic: np.ndarray
    step_weight: np.ndarray
    episode_prob: np.ndarray
    credit: np.ndarray
    policy: np.ndarray | None = None


def sample_mixed_policy(plan: MixedPlan, baseline_policy, keys) -> np.ndarray:
    r"""Draw the deterministic policy of one episode from a :class:`MixedPlan`, one per replication.

    Parameters
    ----------
    plan : MixedPlan
    baseline_policy : array, shape (H, S, A)
        The (possibly stochastic) baseline :math:`\pi_b`.
    keys : uint64 array, shape (n_reps,)
        The learner's round keys (the engine's ``keys_t``).

    Returns
    -------
    ndarray of int64, shape (n_reps, H, S)

    Notes
    -----
    Draw 0 of a key is the episode coin (mixture iff below :math:`\epsilon`),
    draw :math:`1 + hS + s` the step coin of :math:`(h, s)` (optimistic
    action iff below :math:`w`), draw :math:`1 + HS + hS + s` the baseline
    action of :math:`(h, s)` (inverse CDF of :math:`\pi_b(\cdot | s)` at
    stage :math:`h`).  An episode visits one state per stage, so drawing the
    action of every :math:`(h, s)` in advance gives the trajectory the law of
    drawing the coins as the states are visited.

    Examples
    --------
    >>> import numpy as np
    >>> plan = MixedPlan(np.ones((2, 1, 1), dtype=np.int64), np.ones(2), np.array([1.0, 0.0]), np.zeros(2))
    >>> sample_mixed_policy(plan, np.array([[[1.0, 0.0]]]), np.arange(2, dtype=np.uint64))[:, 0, 0]
    array([1, 0])
    """
    opt = np.asarray(plan.optimistic)
    n_reps, h_, s_ = opt.shape
    base = np.asarray(baseline_policy, dtype=np.float64)
    a_ = base.shape[-1]
    u = uniform(np.asarray(keys)[:, None], np.arange(1 + 2 * h_ * s_, dtype=np.uint64)[None, :])
    chosen = u[:, 0] < np.asarray(plan.episode_prob)
    step = u[:, 1:1 + h_ * s_].reshape(n_reps, h_, s_) < np.asarray(plan.step_weight)[:, None, None]
    ub = u[:, 1 + h_ * s_:].reshape(n_reps, h_, s_)
    a_b = np.minimum((np.cumsum(base, axis=-1)[None] < ub[..., None]).sum(axis=-1), a_ - 1)
    return np.where(chosen[:, None, None] & step, opt, a_b).astype(np.int64)


def known_baseline(mdp: FiniteHorizonMDP, policy, initial_state: int = 0) -> ConservativeBaseline:
    r"""A baseline whose policy is known, with its exact value from the start state.

    Parameters
    ----------
    mdp : FiniteHorizonMDP
    policy : array, shape (H, S) of int or (H, S, A) of probabilities
    initial_state : int

    Returns
    -------
    ConservativeBaseline
        ``value == reference ==`` :math:`V^{\pi_b}_1(s_1)`.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> m = FiniteHorizonMDP.stationary(p, np.array([[0.0, 0.0], [1.0, 1.0]]), 2)
    >>> known_baseline(m, np.array([[1, 0], [0, 0]])).value
    1.0
    """
    mdp = _check_single(mdp)
    s0 = check_int(initial_state, "initial_state", minimum=0, maximum=mdp.n_states - 1)
    pi, (h_, s_, a_) = np.asarray(policy), (mdp.horizon, mdp.n_states, mdp.n_actions)
    if pi.shape == (h_, s_) and np.issubdtype(pi.dtype, np.integer):
        if pi.min() < 0 or pi.max() >= a_:
            raise ValueError(f"policy must hold actions in [0, {a_ - 1}]")
        pi = (pi[..., None] == np.arange(a_)).astype(np.float64)
    elif pi.shape != (h_, s_, a_):
        raise ValueError(f"policy must have shape ({h_}, {s_}) (actions) or ({h_}, {s_}, {a_}) (probabilities), "
                         f"got {pi.shape}")
    pi = _check_stochastic(mdp, pi[None])
    v = float(_evaluate(mdp, pi)[0, 0, s0])
    return ConservativeBaseline(pi[0], v, v, 0)


def learned_baseline(mdp: FiniteHorizonMDP, behaviour, n_trajectories: int, *, delta: float = 0.05, seed=0,
                     initial_state: int = 0) -> ConservativeBaseline:
    r"""A baseline learned from offline trajectories of an unknown behaviour policy.

    Parameters
    ----------
    mdp : FiniteHorizonMDP
        Generates the offline data (the learner never sees its transitions).
    behaviour : integer array, shape (H, S)
        The deterministic policy that collected the data (:math:`\pi_b`).
    n_trajectories : int
        ``N`` offline episodes from ``initial_state``.
    delta : float in (0, 1)
        Confidence of the value interval.
    seed, initial_state : int

    Returns
    -------
    ConservativeBaseline
        ``policy``: the empirical action frequencies at each visited
        ``(h, s)`` (behaviour cloning), else the stage's most frequent action;
        ``value``, ``reference``: the mean offline return :math:`\hat V` minus
        and plus :math:`H \sqrt{\ln(2/\delta) / (2N)}`.

    Notes
    -----
    By Hoeffding, :math:`|V^{\pi_b}_1(s_1) - \hat V| \le H\sqrt{\ln(2/\delta)/(2N)}`
    with probability :math:`1 - \delta`.  The clone equals :math:`\pi_b` on
    every visited ``(h, s)``, so crediting it with the lower end is exact once
    the data covers the pairs the baseline reaches, and a simplification for
    small ``N``.  The estimator is a reconstruction (the paper learns the
    baseline offline and needs enough data; its estimator is not copied here).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> m = FiniteHorizonMDP.stationary(p, np.array([[0.0, 0.0], [1.0, 1.0]]), 2)
    >>> b = learned_baseline(m, np.array([[1, 0], [0, 0]]), 100)
    >>> b.policy[0, 0], round(b.reference - b.value, 4)
    (array([0., 1.]), 0.5432)
    """
    mdp, n = _check_single(mdp), check_int(n_trajectories, "n_trajectories")
    delta = check_open_unit(delta, "delta")
    s0 = check_int(initial_state, "initial_state", minimum=0, maximum=mdp.n_states - 1)
    pi_b, (h_, s_, a_) = np.asarray(behaviour), (mdp.horizon, mdp.n_states, mdp.n_actions)
    if pi_b.shape != (h_, s_) or not np.issubdtype(pi_b.dtype, np.integer) or pi_b.min() < 0 or pi_b.max() >= a_:
        raise ValueError(f"behaviour must be an integer array of shape ({h_}, {s_}) with actions in [0, {a_ - 1}]")
    keys = round_key(rep_key(np.full(n, seed_to_uint64(seed)), np.arange(n, dtype=np.uint64)),
                     np.zeros(n, dtype=np.uint64))
    states, actions, rewards = sample_episodes(mdp, np.broadcast_to(pi_b, (n, h_, s_)), keys, s0)
    freq = np.zeros((h_, s_, a_))
    np.add.at(freq, (np.tile(np.arange(h_), n), states[:, :-1].ravel(), actions.ravel()), 1.0)
    seen = freq.sum(axis=-1, keepdims=True)
    fallback = freq.sum(axis=1).argmax(axis=-1)  # (H,)
    default = np.broadcast_to((fallback[:, None, None] == np.arange(a_)).astype(np.float64), freq.shape)
    policy = np.where(seen > 0, freq / np.maximum(seen, 1.0), default)
    mean, width = float(rewards.sum(axis=1).mean()), h_ * math.sqrt(math.log(2.0 / delta) / (2.0 * n))
    return ConservativeBaseline(policy, mean - width, mean + width, n)


def mix_policies(optimistic, baseline, weight) -> np.ndarray:
    r"""Per-step mixture :math:`w\, \pi^{\rm opt} + (1 - w)\, \pi_b` of a greedy and a baseline policy.

    Parameters
    ----------
    optimistic : integer array, shape (n_reps, H, S)
    baseline : array, shape (H, S, A) or (n_reps, H, S, A)
    weight : array, shape (n_reps,)
        Mixing weights in [0, 1].

    Returns
    -------
    ndarray, shape (n_reps, H, S, A)

    Examples
    --------
    >>> import numpy as np
    >>> mix_policies(np.array([[[1]]]), np.array([[[1.0, 0.0]]]), np.array([0.25]))[0, 0, 0]
    array([0.75, 0.25])
    """
    w = np.asarray(weight, dtype=np.float64)[:, None, None, None]
    base = np.asarray(baseline, dtype=np.float64)
    return w * (np.asarray(optimistic)[..., None] == np.arange(base.shape[-1])) + (1.0 - w) * base


def stepmix_weight(counts, rewards, optimistic, baseline, threshold, initial_state, *, log_term, scale=1.0,
                   stationary=False, n_bisect=12):
    r"""The StepMix weight: the largest mixing weight whose pessimistic value meets the threshold.

    Parameters
    ----------
    counts, rewards
        As in :func:`pessimistic_values`.
    optimistic : integer array, shape (n_reps, H, S)
    baseline : array, shape (H, S, A)
    threshold : float
        :math:`(1 - \alpha) V^{\pi_b}_1(s_1)`.
    initial_state : int
    log_term, scale, stationary
        As in :func:`pessimistic_values`.
    n_bisect : int
        Bisection steps (precision :math:`2^{-n}`).

    Returns
    -------
    weight : ndarray, shape (n_reps,)
    lower : ndarray, shape (n_reps,)
        Pessimistic value :math:`\underline V_1(s_1)` of the mixture at ``weight``
        (``nan`` where the weight is 0: the baseline's own value is then used).

    Notes
    -----
    With :math:`g(w) = \underline V^{\pi_w}_1(s_1)` (:func:`mix_policies`): :math:`w = 1` if
    :math:`g(1) \ge` ``threshold``; else 0 if :math:`g(0) <` ``threshold`` (small weights fail too,
    :math:`g` being continuous); else bisection on :math:`[0, 1]`, batched, keeping a feasible lower
    end (0, the baseline, is feasible: its true value meets the threshold) and returning it.  So
    :math:`g(w) \ge` ``threshold`` or :math:`w = 0`; for monotone :math:`g`, :math:`w` is within
    :math:`2^{-n}` of the largest such weight.
    """
    opt = np.asarray(optimistic)
    n_reps = opt.shape[0]
    model = _pessimistic_model(counts, rewards, opt.shape[1], log_term=log_term, scale=scale, stationary=stationary)
    base = np.asarray(baseline, dtype=np.float64)
    diff = (opt[..., None] == np.arange(base.shape[-1])) - base  # pi_w = base + w * diff

    def g(w):
        return _pessimistic_eval(model, base + w[:, None, None, None] * diff)[:, 0, initial_state]

    g1 = g(np.ones(n_reps))
    ok1 = g1 >= threshold
    lo, hi, glo = np.zeros(n_reps), np.ones(n_reps), np.full(n_reps, np.nan)
    todo = ~ok1
    if todo.any():
        todo &= g(np.zeros(n_reps)) >= threshold
    if todo.any():
        for _ in range(n_bisect):
            mid = 0.5 * (lo + hi)
            gm = g(mid)
            good = gm >= threshold
            lo = np.where(todo & good, mid, lo)
            glo = np.where(todo & good, gm, glo)
            hi = np.where(todo & ~good, mid, hi)
    return np.where(ok1, 1.0, lo), np.where(ok1, g1, glo)


def epsmix_probability(lower, baseline_value, alpha, reference=None):
    r"""The EpsMix probability of playing the optimistic policy for a whole episode.

    Parameters
    ----------
    lower : array, shape (n_reps,)
        Pessimistic value :math:`\underline V^{\rm opt}_1(s_1)` of the optimistic policy.
    baseline_value : float
        Value :math:`V_b` credited to the baseline.
    alpha : float in (0, 1)
    reference : float, optional
        :math:`V^{\rm ref}` of the constraint (default ``baseline_value``: a known baseline).

    Returns
    -------
    ndarray, shape (n_reps,)

    Notes
    -----
    The expected value of the episode is :math:`\epsilon V^{\rm opt} + (1 - \epsilon) V_b`;
    replacing :math:`V^{\rm opt}` by its lower bound, the largest
    :math:`\epsilon \in [0, 1]` with
    :math:`\epsilon \underline V + (1 - \epsilon) V_b \ge (1 - \alpha) V^{\rm ref}` is

    .. math::

        \epsilon = \min\Big(1, \frac{V_b - (1 - \alpha) V^{\rm ref}}{V_b - \underline V}\Big)
        \quad (\underline V < V_b), \qquad \epsilon = 1 \text{ otherwise},

    i.e. :math:`\min(1, \alpha V_b / (V_b - \underline V))` for a known baseline
    (:math:`V^{\rm ref} = V_b`), and 0 when :math:`V_b < (1 - \alpha) V^{\rm ref}`.

    Examples
    --------
    >>> import numpy as np
    >>> epsmix_probability(np.array([0.0, 0.5, 2.0]), 1.0, 0.2)
    array([0.2, 0.4, 1. ])
    """
    lower = np.asarray(lower, dtype=np.float64)
    ref = baseline_value if reference is None else reference
    thr, gap = (1.0 - alpha) * ref, baseline_value - lower
    eps = np.where(gap > 0, max(baseline_value - thr, 0.0) / np.where(gap > 0, gap, 1.0), 0.0)
    return np.clip(np.where(lower >= thr, 1.0, eps), 0.0, 1.0)
