r"""Exact and pessimistic values of stochastic Markov policies, batched over replications.

Conservative exploration compares the value of the policy a learner is about
to play with that of a baseline.  :func:`evaluate_stochastic_policy` computes
exact values by backward induction on the true model (what the driver uses to
count violations); :func:`pessimistic_values` computes lower confidence bounds
on the empirical model of every replication, with the L1 width of
:func:`pessimism_bonus`, valid for every (data-dependent) policy at once.  The
empirical model and the backward pass are separate private steps, so that the
StepMix bisection (:func:`stepmix_weight`) builds the model once per episode
and evaluates many mixtures on it.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_float, check_int, check_simplex
from ._checks import check_flag, int_array, real_array
from ._episodic import _check_single
from ._models import FiniteHorizonMDP

__all__ = ["evaluate_stochastic_policy", "pessimistic_values", "pessimism_bonus"]


def _check_stochastic(mdp: FiniteHorizonMDP, policy, name="policy") -> np.ndarray:
    shape = (mdp.horizon, mdp.n_states, mdp.n_actions)
    if not hasattr(policy, "shape") or policy.ndim != 4 or tuple(policy.shape[1:]) != shape:
        raise ValueError(f"{name} must be an array of shape (n_reps, {', '.join(map(str, shape))}), got "
                         f"{getattr(policy, 'shape', type(policy).__name__)}")
    return check_simplex(np.asarray(policy, dtype=np.float64), name)


def evaluate_stochastic_policy(mdp: FiniteHorizonMDP, policy) -> np.ndarray:
    r"""Exact values of stochastic Markov policies, one per replication, by backward induction.

    Parameters
    ----------
    mdp : FiniteHorizonMDP
        A single MDP (no batch axes).
    policy : array, shape (n_reps, H, S, A)
        :math:`\pi_h(a | s)`, rows on the simplex.

    Returns
    -------
    ndarray, shape (n_reps, H + 1, S)
        :math:`V^\pi_h(s)`, with :math:`V^\pi_H = 0`.

    Notes
    -----
    .. math::

        V^\pi_h(s) = \sum_a \pi_h(a | s) \Big(r_h(s, a) + \sum_t P_h(t | s, a) V^\pi_{h+1}(t)\Big).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> m = FiniteHorizonMDP.stationary(p, np.array([[0.0, 0.0], [1.0, 1.0]]), 2)
    >>> half = np.full((1, 2, 2, 2), 0.5)
    >>> evaluate_stochastic_policy(m, half)[0, 0]
    array([0.5, 2. ])
    """
    mdp = _check_single(mdp)
    return _evaluate(mdp, _check_stochastic(mdp, policy))


def _evaluate(mdp, pi):
    """:func:`evaluate_stochastic_policy` without the checks (for the driver's inner loop)."""
    p, r = np.asarray(mdp.transitions), np.asarray(mdp.rewards)
    v = np.zeros((pi.shape[0], mdp.horizon + 1, mdp.n_states))
    for h in range(mdp.horizon - 1, -1, -1):
        q = r[h][None] + np.einsum("sat,rt->rsa", p[h], v[:, h + 1])
        v[:, h] = (pi[:, h] * q).sum(axis=-1)
    return v


def pessimism_bonus(n, h, horizon, *, log_term, scale=1.0):
    r"""Width of the lower confidence bound at stage ``h``: :math:`\tfrac{H-h-1}{2}\sqrt{2 L_1 / n}`.

    Parameters
    ----------
    n : array (...)
        Visit counts, at least 1.
    h : int or integer array broadcastable with ``n``
        Stages, in ``[0, horizon - 1]``.
    horizon : int
    log_term : float >= 0
        :math:`L_1 = S \ln 2 + \ln(S A H' T / \delta)`.
    scale : float >= 0
        Multiplies the width (the guarantee needs ``scale >= 1``).

    Returns
    -------
    ndarray, the broadcast shape of ``n`` and ``h``

    Raises
    ------
    TypeError
        If ``n`` does not hold real numbers, or ``h`` or ``horizon`` is not an integer (array).
    ValueError
        If ``n < 1`` or not finite, ``h`` lies outside ``[0, horizon - 1]`` or does not broadcast with ``n``,
        or ``log_term`` or ``scale`` is negative or not finite.

    Notes
    -----
    Weissman et al.'s inequality :math:`\Pr(\|\hat P - P\|_1 \ge \epsilon) \le 2^S e^{-n \epsilon^2 / 2}`
    and a union bound over the count stages, pairs and counts up to :math:`T` give
    :math:`\|\hat P_h - P_h\|_1 \le \sqrt{2 L_1 / n}` everywhere w.p. :math:`1 - \delta`; then
    :math:`|(\hat P_h - P_h) V| \le \tfrac{H - h - 1}{2} \|\hat P_h - P_h\|_1` for every :math:`V` with
    range in :math:`[0, H - h - 1]`, i.e. for every (data-dependent) policy at once.
    """
    horizon = check_int(horizon, "horizon")
    if isinstance(h, numbers.Integral) and not isinstance(h, (bool, np.bool_)):
        h = check_int(h, "h", minimum=0, maximum=horizon - 1)
    else:
        h = int_array(h, "h", low=0, high=horizon - 1)
    n = real_array(n, "n", low=1.0)
    try:
        np.broadcast_shapes(np.shape(n), np.shape(h))
    except ValueError:
        raise ValueError(f"n {np.shape(n)} and h {np.shape(h)} do not broadcast") from None
    log_term = check_float(log_term, "log_term", minimum=0.0)
    scale = check_float(scale, "scale", minimum=0.0)
    return _bonus(n, h, horizon, log_term, scale)


def _bonus(n, h, horizon, log_term, scale):
    """:func:`pessimism_bonus` without the checks."""
    return scale * 0.5 * (horizon - h - 1) * np.sqrt(2.0 * log_term / n)


def pessimistic_values(counts, rewards, policy, *, log_term, scale=1.0, stationary=False) -> np.ndarray:
    r"""Pessimistic values of stochastic policies on the empirical models of every replication.

    Parameters
    ----------
    counts : array, shape (n_reps, H', S, A, S)
        Transition counts, non-negative (``H' = H``, or ``H' = 1`` pooled with ``stationary=True``).
    rewards : array, shape (H, S, A)
        Known mean rewards in [0, 1].
    policy : array, shape (n_reps, H, S, A)
        Rows (last axis) on the simplex.
    log_term, scale : float >= 0
        :math:`L_1` and the scale of :func:`pessimism_bonus`.
    stationary : bool

    Returns
    -------
    ndarray, shape (n_reps, H + 1, S)
        :math:`\underline V_h(s)`, with :math:`\underline V_H = 0`.

    Raises
    ------
    TypeError
        If an array does not hold real numbers or ``stationary`` is not a bool.
    ValueError
        If ``policy`` is not on the simplex, ``rewards`` lies outside [0, 1], ``counts`` is negative, an
        array has a NaN or infinite value or a shape that does not match the others (``counts`` has one
        stage with ``stationary=True``, ``H`` otherwise), or ``log_term`` or ``scale`` is negative.

    Notes
    -----
    From :math:`\underline V_H = 0`, with :math:`b_h` of :func:`pessimism_bonus`,

    .. math::

        \underline Q_h(s, a) = r_h(s, a) + \max\big(0,\; \hat P_h \underline V_{h+1}(s, a) - b_h(s, a)\big),
        \qquad \underline V_h(s) = \sum_a \pi_h(a | s)\, \underline Q_h(s, a),

    and :math:`\underline Q_h(s, a) = r_h(s, a)` for unvisited pairs.  If
    :math:`b_h \ge |(\hat P_h - P_h) V^\pi_{h+1}|` at every visited pair then
    :math:`\underline V_h \le V^\pi_h` (induction down from :math:`H`; the
    clipping at 0 is harmless since :math:`V^\pi_{h+1} \ge 0`).
    """
    pi = real_array(policy, "policy", shape=("n_reps", "H", "S", "A"))
    check_simplex(pi, "policy")
    counts, rewards, log_term, scale, stationary = _check_counts(counts, rewards, pi.shape, log_term, scale,
                                                                 stationary)
    model = _pessimistic_model(counts, rewards, pi.shape[1], log_term=log_term, scale=scale, stationary=stationary)
    return _pessimistic_eval(model, pi)


def _check_counts(counts, rewards, shape, log_term, scale, stationary):
    """The checked ``(counts, rewards, log_term, scale, stationary)`` of policies of ``shape (n_reps, H, S, A)``."""
    n_reps, h_, s_, a_ = shape
    stationary = check_flag(stationary, "stationary")
    rewards = real_array(rewards, "rewards", shape=(h_, s_, a_), low=0.0, high=1.0)
    counts = real_array(counts, "counts", shape=(n_reps, 1 if stationary else h_, s_, a_, s_), low=0.0)
    return (counts, rewards, check_float(log_term, "log_term", minimum=0.0),
            check_float(scale, "scale", minimum=0.0), stationary)


def _pessimistic_model(counts, rewards, horizon, *, log_term, scale, stationary):
    """Empirical kernels, bonuses and visit masks of every stage: what :func:`pessimistic_values` reuses."""
    counts = np.asarray(counts, dtype=np.float64)
    rew = np.asarray(rewards, dtype=np.float64)
    n_all = counts.sum(axis=-1)  # (R, H', S, A)
    n1 = np.maximum(n_all, 1.0)
    p_hat = counts / n1[..., None]
    stages = np.arange(horizon)
    hc = np.zeros(horizon, dtype=np.int64) if stationary else stages
    b = _bonus(n1[:, hc], stages[None, :, None, None], horizon, log_term, scale)
    return rew, p_hat, hc, b, n_all[:, hc] > 0


def _pessimistic_eval(model, pi):
    rew, p_hat, hc, b, seen = model
    n_reps, h_, s_, _ = pi.shape
    v = np.zeros((n_reps, h_ + 1, s_))
    for h in range(h_ - 1, -1, -1):
        pv = np.einsum("rsat,rt->rsa", p_hat[:, hc[h]], v[:, h + 1])
        q = rew[h][None] + np.where(seen[:, h], np.maximum(pv - b[:, h], 0.0), 0.0)
        v[:, h] = (pi[:, h] * q).sum(axis=-1)
    return v
