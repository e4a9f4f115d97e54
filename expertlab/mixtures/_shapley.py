r"""Shapley values of experts: exact enumeration and permutation-sampling Monte Carlo.

A cooperative game on ``n`` players (the experts of a mixture) is given by
its value function :math:`v(S)` on coalitions :math:`S \subseteq [n]`, for
instance the accuracy of the mixture when only the experts in :math:`S` are
routed to.  The Shapley value of player :math:`i` is its marginal
contribution averaged over the :math:`n!` orders in which players join,

.. math::

    \phi_i = \frac{1}{n!} \sum_{\pi} \big[v(P^\pi_i \cup \{i\}) - v(P^\pi_i)\big],

with :math:`P^\pi_i` the players before :math:`i` in :math:`\pi`.

Value functions are *batched*: ``value(masks)`` takes a boolean array of
coalitions of shape ``(m, n)`` and returns their ``m`` values, so that one
call evaluates a whole sweep of coalitions.  Random permutations come from
the counter-based generator, so an estimate is a
pure function of ``(seed, permutation index)``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import numpy as np

from .._random import rep_key, seed_to_uint64, uniform
from .._repr import short_repr
from .._validation import as_real_array, check_array_size, check_float, check_int

__all__ = ["ShapleyResult", "shapley_exact", "shapley_mc", "table_game"]


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class ShapleyResult:
    """Shapley estimates with their Monte Carlo uncertainty.

    Attributes
    ----------
    values : ndarray, shape (n_players,)
        Estimated Shapley values.
    stderr : ndarray, shape (n_players,)
        Standard errors (zero for exact values; for importance sampling the
        delta-method error of the self-normalised ratio).
    n_permutations : int
        Permutations used (``n!`` for exact enumeration).
    n_evaluations : int
        Coalition values computed (calls of the value function, summed over rows).
    effective_sample_size : float
        :math:`(\\sum w)^2 / \\sum w^2` of the importance weights (the number of
        permutations for plain sampling).
    method : str
    """

    values: np.ndarray
    stderr: np.ndarray
    n_permutations: int
    n_evaluations: int
    effective_sample_size: float
    method: str


def _check_value(value, n):
    if not callable(value):
        raise TypeError(f"value must be a callable masks (m, n_players) -> (m,), got {type(value).__name__}")
    probe = as_real_array(value(np.zeros((1, n), dtype=bool)), "value(masks)", np)
    if probe.shape != (1,):
        raise ValueError(f"value(masks) must return one value per coalition, shape (m,); got {probe.shape}")


def _call(value, masks):
    out = as_real_array(value(masks), "value(masks)", np)
    if out.shape != (masks.shape[0],):
        raise ValueError(f"value(masks) returned shape {out.shape}, expected ({masks.shape[0]},)")
    if not np.all(np.isfinite(out)):
        raise ValueError("value(masks) returned a non-finite value")
    return out


def shapley_exact(value: Callable, n_players: int) -> ShapleyResult:
    r"""Exact Shapley values by the subset formula (for up to 20 players).

    :math:`\phi_i = \sum_{S \not\ni i} \frac{|S|!\,(n-|S|-1)!}{n!}\,[v(S\cup\{i\}) - v(S)]`,
    with all :math:`2^n` coalition values computed in one batched call.

    Examples
    --------
    >>> import numpy as np
    >>> # glove game: players 0, 1 hold left gloves, player 2 the right one; a pair is worth 1
    >>> value = lambda m: np.minimum(m[:, :2].sum(axis=1), m[:, 2])
    >>> np.round(shapley_exact(value, 3).values * 6).tolist()
    [1.0, 1.0, 4.0]
    """
    n = check_int(n_players, "n_players", maximum=20)
    _check_value(value, n)
    codes = np.arange(2 ** n)
    masks = ((codes[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)
    v = _call(value, masks)
    size = masks.sum(axis=1)
    fact = np.array([math.factorial(k) for k in range(n + 1)], dtype=np.float64)
    phi = np.zeros(n)
    for i in range(n):
        without = ~masks[:, i]
        s = size[without]
        w = fact[s] * fact[n - s - 1] / fact[n]
        phi[i] = np.sum(w * (v[codes[without] | (1 << i)] - v[without]))
    return ShapleyResult(phi, np.zeros(n), math.factorial(n), 2 ** n, float(math.factorial(n)), "exact")


def _permutations(seed_u, n_perm, n, log_weights=None):
    """``n_perm`` permutations of ``n`` players (rows), uniform or Plackett--Luce.

    Uniform: argsort of iid uniforms.  Plackett--Luce with log-weights ``s``:
    argsort of ``-(s + G)`` with iid Gumbel ``G`` (the Gumbel-max trick gives the
    sequential draw proportional to ``exp(s)`` among the players left).
    """
    with np.errstate(over="ignore"):
        k = rep_key(np.uint64(seed_u), np.arange(n_perm, dtype=np.uint64))[:, None]
        u = uniform(k, np.arange(n, dtype=np.uint64)[None, :])
    if log_weights is None:
        return np.argsort(u, axis=1, kind="stable")
    gumbel = -np.log(-np.log(u))
    return np.argsort(-(log_weights[None, :] + gumbel), axis=1, kind="stable")


def _plackett_luce_logpdf(perms, log_weights):
    """log Q(pi) = sum_k [s_{pi_k} - log sum_{j >= k} exp(s_{pi_j})]."""
    s = log_weights[perms]                                   # (m, n) in permutation order
    tail = np.logaddexp.accumulate(s[:, ::-1], axis=1)[:, ::-1]
    return np.sum(s - tail, axis=1)


def shapley_mc(value: Callable, n_players: int, n_permutations: int = 200, *, seed=0,
               truncation: float | None = None, proposal=None, n_reps: int | None = None) -> ShapleyResult:
    r"""Shapley values by permutation sampling, optionally truncated and importance-weighted.

    Parameters
    ----------
    value : callable
        ``value(masks) -> values``, masks of shape ``(m, n_players)``.
    n_players : int
    n_permutations : int
        Sampled permutations; each costs ``n_players + 1`` coalition values
        (fewer with truncation).
    seed : int, numpy.random.SeedSequence or None, default 0
    truncation : float, optional
        Stop scanning a permutation once :math:`|v([n]) - v(S)| \le`
        ``truncation``: the next player in the order takes the remaining
        difference :math:`v([n]) - v(S)` (at most ``truncation``), the others
        get zero, and efficiency still holds.
    proposal : array, shape (n_players,), optional
        Positive weights (for example the router's mean gate probabilities)
        of a Plackett--Luce proposal over orders: high-weight experts tend to
        join first.  The estimate is then self-normalised with weights
        :math:`w(\pi) = (1/n!)/Q(\pi)`, computed in log space.  It is
        consistent for any positive weights; whether it lowers the variance
        depends on the game (on the coverage game of the gallery, weights
        equal to the experts' skills raise it).
    n_reps : int, optional
        Independent replications of the whole estimate, drawn in one batch
        (replication ``r`` uses permutations ``r m .. (r+1) m - 1`` of the
        seed's stream); ``values`` and ``stderr`` then have shape
        ``(n_reps, n_players)``.

    Returns
    -------
    ShapleyResult

    Notes
    -----
    Each permutation gives every player one marginal contribution, so the
    plain estimate is a mean of :math:`m` iid vectors, with standard errors
    :math:`s_i/\sqrt m` and mean squared error :math:`\propto 1/m`.  The
    contributions of one permutation sum to :math:`v([n]) - v(\emptyset)`
    (efficiency holds exactly for every sample, without truncation).  Under
    importance sampling the standard error is the delta-method error of the
    ratio :math:`\sum w\Delta / \sum w`.  Truncation biases the estimate by
    at most ``truncation`` per player and permutation, and saves the
    evaluations of the large coalitions whose value is already that of the
    grand coalition.

    *Reconstructed*: the router-guided proposal as a Plackett--Luce law over
    orders with the gate weights, and TMC-style truncation, are this
    library's reading of "router-guided importance sampling" and "early
    truncation" in Shapley-MoE.

    References
    ----------
    .. [1] L. S. Shapley, "A value for n-person games", 1953.
    .. [2] J. Castro, D. Gómez, J. Tejada, "Polynomial calculation of the
       Shapley value based on sampling", Computers & OR 36(5), 2009
       (permutation sampling).
    .. [3] A. Ghorbani, J. Zou, "Data Shapley", ICML 2019 (truncated Monte Carlo).
    .. [4] Shapley-MoE, NeurIPS 2025 (Shapley values of experts with router-guided
       sampling; section not re-checked).

    Examples
    --------
    >>> import numpy as np
    >>> value = lambda m: np.minimum(m[:, :2].sum(axis=1), m[:, 2])
    >>> res = shapley_mc(value, 3, n_permutations=3000, seed=0)
    >>> bool(np.all(np.abs(res.values - [1/6, 1/6, 2/3]) < 4 * res.stderr + 1e-12))
    True
    """
    n = check_int(n_players, "n_players")
    m = check_int(n_permutations, "n_permutations", minimum=2)
    _check_value(value, n)
    if truncation is not None:
        truncation = check_float(truncation, "truncation", minimum=0.0)
    log_w = None
    if proposal is not None:
        q = as_real_array(proposal, "proposal", np)
        if q.shape != (n,) or not np.all(np.isfinite(q)) or np.any(q <= 0):
            raise ValueError(f"proposal must be {n} positive finite weights, got {q}")
        log_w = np.log(q)
    R = 1 if n_reps is None else check_int(n_reps, "n_reps")
    check_array_size((R * m, n + 1, n), ("n_permutations", "n_players", "n_reps"))   # the prefix coalitions
    seed_u = seed_to_uint64(seed)
    total = R * m
    perms = _permutations(seed_u, total, n, log_w)
    # coalitions along each permutation: prefix k holds perms[:, :k]
    rank = np.empty_like(perms)
    rank[np.arange(total)[:, None], perms] = np.arange(n)[None, :]
    prefix = rank[:, None, :] < np.arange(n + 1)[None, :, None]           # (total, n+1, n)
    full_value = _call(value, np.ones((1, n), dtype=bool))[0]
    if truncation is None:
        vals = _call(value, prefix.reshape(-1, n)).reshape(total, n + 1)
        n_eval = total * (n + 1)
    else:
        vals = np.full((total, n + 1), full_value)
        vals[:, 0] = _call(value, prefix[:, 0])
        live = np.abs(full_value - vals[:, 0]) > truncation
        n_eval = total + 1
        for k in range(1, n + 1):           # one batched call per prefix length, over live permutations
            if not live.any():
                break
            vals[live, k] = _call(value, prefix[live, k])
            n_eval += int(live.sum())
            live &= np.abs(full_value - vals[:, k]) > truncation
    marg = np.diff(vals, axis=1)                                           # marg[r, k] of player perms[r, k]
    contrib = np.zeros((total, n))
    contrib[np.arange(total)[:, None], perms] = marg
    contrib = contrib.reshape(R, m, n)
    if log_w is None:
        phi = contrib.mean(axis=1)
        se = contrib.std(axis=1, ddof=1) / math.sqrt(m)
        ess = np.full(R, float(m))
        method = "permutation" if truncation is None else "truncated"
    else:
        log_iw = (-math.lgamma(n + 1) - _plackett_luce_logpdf(perms, log_w)).reshape(R, m)
        w = np.exp(log_iw - log_iw.max(axis=1, keepdims=True))
        wn = w / w.sum(axis=1, keepdims=True)
        phi = np.einsum("rm,rmn->rn", wn, contrib)
        se = np.sqrt(np.sum((wn[:, :, None] * (contrib - phi[:, None, :])) ** 2, axis=1))
        ess = 1.0 / np.sum(wn ** 2, axis=1)
        method = "importance"
    if n_reps is None:
        return ShapleyResult(phi[0], se[0], m, n_eval, float(ess[0]), method)
    return ShapleyResult(phi, se, m, n_eval, float(ess.mean()), method)


def table_game(values) -> Callable:
    """A value function from a table of ``2**n`` coalition values (bit ``i`` of the index is player ``i``).

    Examples
    --------
    >>> import numpy as np
    >>> v = table_game([0.0, 1.0, 2.0, 4.0])   # players 0 and 1: v({0}) = 1, v({1}) = 2, v({0,1}) = 4
    >>> v(np.array([[True, False], [True, True]])).tolist()
    [1.0, 4.0]
    """
    table = as_real_array(values, "values", np)
    n = int(round(math.log2(table.size))) if table.size > 0 else -1
    if table.ndim != 1 or n < 1 or 2 ** n != table.size:
        raise ValueError(f"values must hold 2**n coalition values for n >= 1 players, got shape {table.shape}")
    if not np.all(np.isfinite(table)):
        raise ValueError("values must be finite")
    weights = 1 << np.arange(n)

    def value(masks):
        masks = np.asarray(masks)
        if masks.dtype.kind not in "biu":
            raise TypeError(f"masks must be a boolean (or 0/1 integer) array, got dtype {masks.dtype}")
        if masks.ndim != 2 or masks.shape[1] != n:
            raise ValueError(f"masks must have shape (m, {n}), one row per coalition of the {n} players, "
                             f"got {masks.shape}")
        if masks.dtype.kind != "b" and (np.any(masks < 0) or np.any(masks > 1)):
            raise ValueError("masks must hold 0/1 (or boolean) entries")
        return table[masks.astype(np.int64) @ weights]

    return value

