r"""Building blocks of PASCombUCB: the problem record, the LIL radius, absolutely safe sizes, enumeration, GreedySplit.

The scalar pieces (:func:`_cr`, :func:`_split`) are Numba functions shared by
the kernel of :mod:`expertlab.bandits._pascombucb`; the public wrappers take
and return plain Python/NumPy values.  Only exact enumeration of the super
arms is provided (at most 200 000 of them); no approximate oracle.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
from numba import njit

from .._validation import check_float, check_int, check_open_unit

__all__ = ["SafeCombInstance", "safe_comb_instance", "lil_radius", "absolutely_safe_size", "super_arms",
           "greedy_split"]

_C_LIL = 1.0 + math.sqrt(0.5)
_MAX_SUPER_ARMS = 200_000


# --------------------------------------------------------------------------
# instances


@dataclasses.dataclass(frozen=True)
class SafeCombInstance:
    """A safe combinatorial semi-bandit: item means and variances, budget and cardinality.

    Samples of item ``i`` are ``b_i * Bernoulli(p_i)`` with
    ``b_i = (mu_i**2 + var_i) / mu_i`` and ``p_i = mu_i**2 / (mu_i**2 + var_i)``:
    a scaled two-point law on ``{0, b_i}`` with mean ``mu_i`` and variance
    ``var_i`` exactly, supported in ``[0, 1]`` (so 1/2-sub-Gaussian) whenever
    ``var_i <= mu_i (1 - mu_i)``.  Build it with :func:`safe_comb_instance`.
    """

    means: np.ndarray
    variances: np.ndarray
    budget: float
    k: int
    variance_bound: float = 0.25
    delta: float = 0.05

    @property
    def n_items(self) -> int:
        return int(self.means.size)


def safe_comb_instance(means, variances, budget, k, *, variance_bound=0.25, delta=0.05) -> SafeCombInstance:
    """Validate and build a :class:`SafeCombInstance`.

    Parameters
    ----------
    means, variances : array_like, shape (n_items,)
        ``means`` in ``(0, 1]``; ``variances`` in ``[0, min(variance_bound, mu (1 - mu))]``.
    budget : float
        Variance budget ``bar sigma^2``; at least ``variance_bound`` so that every
        single item is a safe super arm whatever its variance.
    k : int
        Largest number of items in a super arm, ``1 <= k <= n_items``.
    variance_bound : float
        Known upper bound ``sigma^2`` on every item variance, in ``(0, 1/4]``.
    delta : float
        Allowed probability of ever pulling an unsafe super arm, in ``(0, 1)``.
    """
    means = _vector(means, "means")
    variances = _vector(variances, "variances")
    if variances.shape != means.shape:
        raise ValueError(f"variances must have the shape of means {means.shape}, got {variances.shape}")
    variance_bound = check_float(variance_bound, "variance_bound", positive=True, maximum=0.25)
    budget = check_float(budget, "budget", positive=True)
    delta = check_open_unit(delta, "delta")
    k = check_int(k, "k", minimum=1)
    if k > means.size:
        raise ValueError(f"k must be <= the number of items L = {means.size}, got {k}")
    if np.any(means <= 0.0) or np.any(means > 1.0):
        raise ValueError(f"means must lie in (0, 1], got values in [{means.min()}, {means.max()}]")
    if np.any(variances < 0.0) or np.any(variances > variance_bound):
        raise ValueError(f"variances must lie in [0, variance_bound={variance_bound}], got values in "
                         f"[{variances.min()}, {variances.max()}]")
    if np.any(variances > means * (1.0 - means) + 1e-15):
        raise ValueError("variances must satisfy var_i <= mu_i (1 - mu_i) (samples in [0, 1])")
    if budget < variance_bound:
        raise ValueError(f"budget must be >= variance_bound={variance_bound} so that a single item is "
                         f"absolutely safe; with budget={budget} no super arm can be certified safe")
    means.flags.writeable = False
    variances.flags.writeable = False
    return SafeCombInstance(means=means, variances=variances, budget=budget, k=k,
                            variance_bound=variance_bound, delta=delta)


def _vector(a, name):
    if isinstance(a, (str, bytes)) or not hasattr(a, "__len__") and not isinstance(a, np.ndarray):
        raise TypeError(f"{name} must be a 1-D array of reals, got {type(a).__name__}")
    a = np.array(a, dtype=np.float64)
    if a.ndim != 1 or a.size < 1:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return a


# --------------------------------------------------------------------------
# building blocks


def lil_radius(n, rho):
    r"""LIL confidence radius ``(1 + sqrt(1/2)) sqrt(0.75 / n * ln(ln(1.5 n) / rho))``.

    The lil'UCB bound of Jamieson et al. (2014) with ``epsilon = 1/2`` for
    1/2-sub-Gaussian samples; ``n >= 1`` samples, ``rho`` in ``(0, 1)``.
    The argument of the outer logarithm is floored at ``e`` (for ``n = 1``,
    ``ln(1.5) / rho`` can fall below ``e`` only when ``rho > 0.15``).

    Examples
    --------
    >>> round(float(lil_radius(100, 0.05)), 6)
    0.317332
    """
    n = np.asarray(n, dtype=np.float64)
    if np.any(n < 1):
        raise ValueError("n must be >= 1")
    rho = check_float(rho, "rho", positive=True, maximum=1.0)
    return _C_LIL * np.sqrt(0.75 / n * np.log(np.maximum(np.log(1.5 * n) / rho, math.e)))


@njit(cache=True)
def _cr(n, rho):
    a = math.log(1.5 * n) / rho
    if a < math.e:
        a = math.e
    return _C_LIL * math.sqrt(0.75 / n * math.log(a))


def absolutely_safe_size(budget: float, variance_bound: float, k: int) -> int:
    """Largest ``m <= k`` with ``m * variance_bound <= budget``: super arms that are safe whatever the variances.

    Computed from the condition itself (not ``floor(budget / variance_bound)``,
    which rounding can push across an integer).

    Examples
    --------
    >>> absolutely_safe_size(0.6, 0.25, 3), absolutely_safe_size(0.751, 0.25, 3), absolutely_safe_size(0.75, 0.25, 5)
    (2, 3, 3)
    """
    m = 0
    while m < k and (m + 1) * variance_bound <= budget:
        m += 1
    return m


def super_arms(n_items: int, k: int) -> np.ndarray:
    """All super arms of 1..k items, shape ``(n_arms, k)``, padded with -1, in size then lexicographic order."""
    n_arms = sum(math.comb(n_items, s) for s in range(1, k + 1))
    if n_arms > _MAX_SUPER_ARMS:
        raise ValueError(f"{n_arms} super arms exceed the exact-enumeration limit {_MAX_SUPER_ARMS}; "
                         "reduce n_items or k")
    out = np.full((n_arms, k), -1, dtype=np.int64)
    row = 0
    for s in range(1, k + 1):
        for c in itertools.combinations(range(n_items), s):
            out[row, :s] = c
            row += 1
    return out


@njit(cache=True)
def _split(items, n_items, ucb_v, budget, k, piece):
    """Next-fit GreedySplit: ``piece[j]`` gets the piece index of ``items[j]``; returns the number of pieces."""
    n_pieces = 0
    load = 0.0
    size = 0
    for j in range(n_items):
        v = ucb_v[items[j]]
        if size > 0 and size < k and load + v < budget:
            load += v
            size += 1
        else:
            n_pieces += 1
            load = v
            size = 1
        piece[j] = n_pieces - 1
    return n_pieces


def greedy_split(items, ucb_variance, budget: float, k: int) -> tuple[tuple[int, ...], ...]:
    """Split a super arm into pieces of at most ``k`` items whose ``ucb_variance`` sums stay below ``budget``.

    Items are taken in the given order; an item joins the open piece when the
    piece has fewer than ``k`` items and its variance UCB sum stays strictly
    below ``budget``, otherwise it opens a new piece (a single item is always
    a piece: it is absolutely safe when ``budget >= variance_bound``).

    Examples
    --------
    >>> greedy_split([0, 1, 2, 3], [0.25, 0.25, 0.05, 0.3], 0.6, 3)
    ((0, 1, 2), (3,))
    >>> greedy_split([0, 1, 2], [0.25, 0.25, 0.12], 0.6, 3)
    ((0, 1), (2,))
    """
    items = np.asarray(items, dtype=np.int64)
    ucb = np.asarray(ucb_variance, dtype=np.float64)
    piece = np.zeros(items.size, dtype=np.int64)
    n = _split(items, items.size, ucb, float(budget), int(k), piece)
    return tuple(tuple(int(i) for i in items[piece == p]) for p in range(n))
