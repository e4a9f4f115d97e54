r"""Cost model of speculative decoding on a sparse mixture of experts (MoESD).

When a target MoE verifies ``t`` tokens in one forward pass and each token is
routed to ``K`` of ``E`` experts, the pass must load every expert chosen by
at least one token.  Under uniform routing (each token picks a uniformly
random ``K``-subset, independently of the other tokens) expert ``e`` is
missed by one token with probability
:math:`\binom{E-1}{K}/\binom{E}{K} = 1 - K/E`, by all ``t`` tokens with
probability :math:`(1-K/E)^t`, and by linearity of expectation the expected
number of activated experts is

.. math::

    N(t) = E\,\bigl(1 - (1 - K/E)^t\bigr).

:math:`N(0) = 0`, :math:`N(1) = K`, :math:`N(t) \le \min(E, tK)`, and
:math:`N` is non-decreasing (increasing for :math:`K < E`) and concave in :math:`t`
(``proofs_check/mixtures/check_moesd_activation.py``).

The time of one target pass over ``t`` tokens is modelled as a fixed cost, a
cost per loaded expert and a cost per token,

.. math::

    T(t) = c_0 + c_e\, N(t) + c_t\, t,

whose parameters :func:`fit_moe_time_model` fits by least squares to
measured ``(t, time)`` pairs.  With a batch of ``B`` sequences, ``gamma``
draft tokens per sequence and acceptance rate :math:`\alpha`, an iteration
emits :math:`\sigma = (1 - \alpha^{\gamma+1})/(1 - \alpha)` tokens per
sequence on average, the target's *efficiency* is
:math:`\eta = T(B) / T(B(\gamma+1))`, and the speedup over autoregressive
decoding is

.. math::

    S = \frac{\sigma\, T(B)}{\gamma\, T_D(B) + T(B(\gamma+1))}
      = \frac{\sigma}{\gamma\, T_D(B)/T(B) + 1/\eta},

with :math:`T_D(B)` the time of one draft step.

*Reconstructed*: MoESD (NeurIPS 2025) states :math:`N(t)` and defines the
target efficiency and the speedup; the additive form of :math:`T(t)` (fixed
+ expert loading + per-token compute, rather than a roofline maximum) and
the convention that a verification pass processes :math:`\gamma + 1` tokens
per sequence are this library's reading, not re-checked against the paper's
equations.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._random import rep_key, round_key, seed_to_uint64, uniform
from .._repr import short_repr
from .._validation import as_real_array, check_array_size, check_float, check_int

__all__ = ["MoETimeModel", "MoETimeFit", "expected_activated_experts", "simulate_activated_experts",
           "acceptance_length", "target_efficiency", "sd_speedup", "fit_moe_time_model"]


def _check_experts(n_experts, top_k):
    E = check_int(n_experts, "n_experts")
    K = check_int(top_k, "top_k")
    if K > E:
        raise ValueError(f"top_k must be at most n_experts={E}, got {K}")
    return E, K


def _check_tokens(tokens, name="tokens"):
    t = as_real_array(tokens, name, np)
    if not np.all(np.isfinite(t)):
        raise ValueError(f"{name} contains NaN or infinite values")
    if np.any(t < 0):
        raise ValueError(f"{name} must be non-negative (numbers of tokens)")
    return t


def expected_activated_experts(tokens, n_experts, top_k):
    r"""Expected number of distinct experts activated by ``tokens`` tokens under uniform top-K routing.

    Parameters
    ----------
    tokens : float or array
        Tokens in the forward pass, :math:`t \ge 0` (real values interpolate).
    n_experts : int
        Experts :math:`E`.
    top_k : int
        Experts per token :math:`K \le E`.

    Returns
    -------
    ndarray, same shape as ``tokens``
        :math:`N(t) = E(1 - (1 - K/E)^t)`.

    Notes
    -----
    Exact for independent tokens each routed to a uniformly random
    ``K``-subset (see the module notes for the derivation).

    References
    ----------
    .. [1] MoESD: Unveil Speculative Decoding's Potential for Accelerating
       Sparse MoE, NeurIPS 2025 (arXiv 2505.19645): expected activated
       experts under top-K routing (section not re-checked).

    Examples
    --------
    >>> expected_activated_experts([0, 1, 2], n_experts=8, top_k=2).round(12).tolist()   # 8 (1 - 0.75^2) = 3.5
    [0.0, 2.0, 3.5]
    """
    E, K = _check_experts(n_experts, top_k)
    t = _check_tokens(tokens)
    return E * (1.0 - np.power((E - K) / E, t))


def simulate_activated_experts(tokens, n_experts, top_k, n_reps, *, seed=0):
    """Monte Carlo of uniform top-K routing: distinct experts hit by ``tokens`` tokens, shape (n_reps,).

    Token ``i`` of replication ``r`` ranks the experts by the uniforms of
    round ``i`` of stream ``r`` of the counter-based generator and takes the
    ``top_k`` smallest, a uniformly random ``top_k``-subset.

    Examples
    --------
    >>> n = simulate_activated_experts(4, 16, 2, 2000, seed=0)
    >>> bool(abs(n.mean() - expected_activated_experts(4, 16, 2)) < 4 * n.std() / 2000 ** 0.5)
    True
    """
    t = check_int(tokens, "tokens", minimum=0)
    E, K = _check_experts(n_experts, top_k)
    R = check_int(n_reps, "n_reps")
    check_array_size((R, E), ("n_reps", "n_experts"))
    seed_to_uint64(seed)                                   # refuses a bad seed even when there is nothing to draw
    if t == 0:
        return np.zeros(R, dtype=np.int64)
    rows = np.arange(R)[:, None]
    experts = np.arange(E, dtype=np.uint64)[None, :]
    hit = np.zeros((R, E), dtype=bool)
    with np.errstate(over="ignore"):
        rkey = rep_key(seed_to_uint64(seed), np.arange(R, dtype=np.uint64))
        for i in range(t):                                  # one token at a time: memory (n_reps, n_experts)
            u = uniform(round_key(rkey, np.uint64(i))[:, None], experts)            # (R, E)
            hit[rows, np.argpartition(u, K - 1, axis=1)[:, :K]] = True
    return hit.sum(axis=1)


def acceptance_length(alpha, gamma):
    r"""Expected tokens emitted per speculative iteration, :math:`(1-\alpha^{\gamma+1})/(1-\alpha)`.

    ``alpha`` is the per-token acceptance rate in [0, 1], ``gamma`` the
    number of draft tokens (Leviathan, Kalman & Matias, ICML 2023, Eq. 1).

    Examples
    --------
    >>> acceptance_length(0.5, 2), acceptance_length(1.0, 3)
    (1.75, 4.0)
    """
    a = check_float(alpha, "alpha", minimum=0.0, maximum=1.0)
    g = check_int(gamma, "gamma", minimum=0)
    return float(g + 1) if a == 1.0 else (1.0 - a ** (g + 1)) / (1.0 - a)


@short_repr
@dataclasses.dataclass(frozen=True)
class MoETimeModel:
    r"""Time of one target pass over ``t`` tokens: :math:`T(t) = c_0 + c_e N(t) + c_t t`.

    Attributes
    ----------
    fixed : float
        :math:`c_0` (attention, dense layers, launch overheads).
    per_expert : float
        :math:`c_e`, time to load one expert.
    per_token : float
        :math:`c_t`, compute time per token.
    n_experts, top_k : int
    """

    fixed: float
    per_expert: float
    per_token: float
    n_experts: int
    top_k: int

    def __post_init__(self):
        for name in ("fixed", "per_expert", "per_token"):
            check_float(getattr(self, name), name, minimum=0.0)
        _check_experts(self.n_experts, self.top_k)

    def time(self, tokens):
        """Predicted pass time at ``tokens`` (array-valued)."""
        t = _check_tokens(tokens)
        return self.fixed + self.per_expert * expected_activated_experts(t, self.n_experts, self.top_k) \
            + self.per_token * t


def _check_batch(model, batch_size, gamma):
    if not isinstance(model, MoETimeModel):
        raise TypeError(f"model must be a MoETimeModel, got {type(model).__name__}")
    return check_int(batch_size, "batch_size"), check_int(gamma, "gamma", minimum=0)


def target_efficiency(model, batch_size, gamma):
    r"""Target efficiency :math:`\eta = T(B) / T(B(\gamma+1))` in (0, 1].

    How much of the autoregressive step's cost a verification pass of
    ``gamma + 1`` tokens per sequence costs: 1 when verification is free
    (memory-bound with every expert already loaded), lower when extra
    experts or compute are needed.

    Examples
    --------
    >>> m = MoETimeModel(fixed=1.0, per_expert=1.0, per_token=0.0, n_experts=8, top_k=2)
    >>> round(target_efficiency(m, batch_size=1, gamma=1), 6)   # (1 + 2) / (1 + 3.5)
    0.666667
    """
    B, g = _check_batch(model, batch_size, gamma)
    return float(model.time(B) / model.time(B * (g + 1)))


def sd_speedup(model, batch_size, gamma, alpha, draft_time):
    r"""Speedup of speculative decoding over autoregressive decoding.

    :math:`S = \sigma T(B) / (\gamma T_D + T(B(\gamma+1)))` with
    :math:`\sigma` = :func:`acceptance_length` and ``draft_time`` =
    :math:`T_D \ge 0` the time of one draft step of the batch.

    Examples
    --------
    >>> m = MoETimeModel(fixed=1.0, per_expert=0.0, per_token=0.0, n_experts=8, top_k=2)
    >>> sd_speedup(m, 4, gamma=3, alpha=1.0, draft_time=0.0)   # free verification, all accepted
    4.0
    """
    B, g = _check_batch(model, batch_size, gamma)
    td = check_float(draft_time, "draft_time", minimum=0.0)
    return float(acceptance_length(alpha, g) * model.time(B) / (g * td + model.time(B * (g + 1))))


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class MoETimeFit:
    """Least-squares fit of a :class:`MoETimeModel`.

    Attributes
    ----------
    model : MoETimeModel
    stderr : ndarray, shape (3,)
        Standard errors of ``(fixed, per_expert, per_token)`` from the
        Gauss–Newton covariance :math:`s^2 (J^\\top J)^{-1}` (NaN with fewer
        than 4 points).
    residuals : ndarray, shape (n_points,)
        Measured minus fitted times.
    cost : float
        Half the residual sum of squares.
    success : bool
    message : str
    """

    model: MoETimeModel
    stderr: np.ndarray
    residuals: np.ndarray
    cost: float
    success: bool
    message: str


def fit_moe_time_model(tokens, times, n_experts, top_k) -> MoETimeFit:
    r"""Fit :math:`T(t) = c_0 + c_e N(t) + c_t t` to measured pass times by bounded least squares.

    Parameters
    ----------
    tokens : array, shape (n_points,)
        Tokens per pass (at least 3 distinct values).
    times : array, shape (n_points,)
        Measured pass times (finite).
    n_experts, top_k : int

    Returns
    -------
    MoETimeFit

    Notes
    -----
    Minimises :math:`\sum_j (T(t_j) - y_j)^2` over :math:`c \ge 0` with
    ``scipy.optimize.least_squares`` (trust-region reflective, Jacobian
    scaling).  The model is linear in :math:`c`, so noiseless data of the
    model are recovered exactly when the three regressors
    :math:`1, N(t), t` are linearly independent on the measured ``t``.

    Examples
    --------
    >>> import numpy as np
    >>> truth = MoETimeModel(0.5, 0.02, 0.001, n_experts=64, top_k=8)
    >>> t = np.array([1, 2, 4, 8, 16, 32, 64, 128])
    >>> fit = fit_moe_time_model(t, truth.time(t), 64, 8)
    >>> np.round([fit.model.fixed, fit.model.per_expert, fit.model.per_token], 8).tolist()
    [0.5, 0.02, 0.001]
    """
    from scipy.optimize import least_squares

    E, K = _check_experts(n_experts, top_k)
    t = _check_tokens(tokens)
    y = as_real_array(times, "times", np)
    if t.ndim != 1 or y.shape != t.shape:
        raise ValueError(f"tokens and times must be 1-D arrays of the same length, got {t.shape} and {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("times contains NaN or infinite values")
    if np.unique(t).size < 3:
        raise ValueError("tokens needs at least 3 distinct values to identify the 3 parameters")
    A = np.stack([np.ones_like(t), expected_activated_experts(t, E, K), t], axis=1)
    x0 = np.maximum(np.linalg.lstsq(A, y, rcond=None)[0], 0.0)
    res = least_squares(lambda c: A @ c - y, x0, jac=lambda c: A, bounds=(0.0, np.inf), x_scale="jac",
                        method="trf", xtol=1e-15, ftol=1e-15, gtol=1e-15)
    c = np.maximum(res.x, 0.0)
    r = y - A @ c
    dof = t.size - 3
    if dof > 0:
        s2 = float(r @ r) / dof
        stderr = np.sqrt(np.maximum(np.diag(s2 * np.linalg.pinv(A.T @ A)), 0.0))
    else:
        stderr = np.full(3, np.nan)
    model = MoETimeModel(float(c[0]), float(c[1]), float(c[2]), E, K)
    return MoETimeFit(model, stderr, r, float(0.5 * r @ r), bool(res.success), str(res.message))
