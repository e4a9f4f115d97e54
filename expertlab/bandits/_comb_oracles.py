r"""The safe combinatorial semi-bandit environment and the building blocks of PASCombUCB.

:class:`SafeCombInstance` is the environment (feedback kind
``"semi-bandit"``): the learner pulls a super arm, a set of at most ``K``
items, and sees the sample of every pulled item.  The building blocks (LIL
radius, absolutely safe sizes, enumeration of the super arms, GreedySplit)
are shared by :func:`~expertlab.bandits.pascombucb` and :func:`~expertlab.bandits.cucb`; the
scalar pieces (``_cr``, ``_split``) are Numba functions that the
compiled fast path calls; the public wrappers take and return plain
Python/NumPy values.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any, Mapping, NamedTuple

import numpy as np
from numba import njit

from .._backend import get_namespace
from .._random import uniform
from .._validation import as_real_array, check_float, check_int, check_open_unit
from ..sim._protocol import EnvSpec, Environment, Metric

__all__ = ["SafeCombInstance", "SuperArm", "safe_comb_instance", "lil_radius", "absolutely_safe_size", "super_arms",
           "greedy_split", "n_super_arms"]

_C_LIL = 1.0 + math.sqrt(0.5)
_MAX_SUPER_ARMS = 200_000


def _ns(a):
    """The array namespace of ``a``: NumPy itself for NumPy arrays (the wrapper costs more than a small step)."""
    return np if isinstance(a, np.ndarray) else get_namespace(a)


# --------------------------------------------------------------------------
# the environment


class SuperArm(NamedTuple):
    """A semi-bandit learner's action: the items pulled this round.

    Attributes
    ----------
    items : int array, shape (n_reps, k)
        The pulled items of each replication, in the learner's order, padded
        with ``-1``.
    n_possible : int array, shape (n_reps,), or None
        What the learner reports for the metric ``possibly_safe``: the size of
        the possibly safe set its current choice came from (``-1`` when it
        does not list that set).
    """

    items: Any
    n_possible: Any = None


def n_super_arms(n_items: int, k: int) -> int:
    r"""Number of super arms of 1 to ``k`` items out of ``n_items``: :math:`\sum_{s=1}^{k}\binom{L}{s}`."""
    return sum(math.comb(n_items, s) for s in range(1, k + 1))


@dataclasses.dataclass(frozen=True, repr=False, eq=False)
class SafeCombInstance(Environment):
    r"""A safe combinatorial semi-bandit: item means and variances, budget and cardinality.

    Samples of item ``i`` are ``b_i * Bernoulli(p_i)`` with
    ``b_i = (mu_i**2 + var_i) / mu_i`` and ``p_i = mu_i**2 / (mu_i**2 + var_i)``:
    a scaled two-point law on ``{0, b_i}`` with mean ``mu_i`` and variance
    ``var_i`` exactly, supported in ``[0, 1]`` (so 1/2-sub-Gaussian) whenever
    ``var_i <= mu_i (1 - mu_i)``.  Item ``i``'s sample in round ``t`` is
    ``b_i`` when uniform draw ``i`` of the round's environment key is below
    ``p_i``: a pure function of ``(seed, replication, t, i)``, whichever
    items are pulled.  Build it with :func:`safe_comb_instance` (the same
    checks apply when it is built directly).

    A super arm :math:`A` (at most ``k`` items) is *safe* when
    :math:`\sum_{i \in A}\sigma_i^2 \le \bar\sigma^2` (``budget``).

    Attributes
    ----------
    means, variances : ndarray, shape (n_items,)
    budget : float
    k : int
    variance_bound : float
        Known upper bound :math:`\sigma^2` on every variance.
    delta : float
        Allowed probability of ever pulling an unsafe super arm.
    best_safe_arm : tuple of int
        :math:`A^\star`: by enumeration (first maximiser in size-then-
        lexicographic order) up to 200 000 super arms, else by a 0/1 program.
        Computed when the instance is built; one given to the constructor
        must be a best safe super arm (else :class:`ValueError`).
    best_safe_mean : float
        :math:`\mu(A^\star)`, computed (one given must agree).

    Notes
    -----
    Feedback kind ``"semi-bandit"``, unit ``"round"``.  ``spec.n_actions``
    is the number of super arms; ``spec.info`` tells the learner
    ``n_items``, ``k``, ``budget``, ``variance_bound`` and ``delta`` (never
    the means or variances).  The learner's ``act`` returns a
    :class:`SuperArm`; the feedback is the ``(n_reps, k)`` array of the
    pulled items' samples, aligned with ``SuperArm.items`` (0 on padding).

    Metrics (``regret`` and ``violations`` by default):

    ``regret``
        :math:`\sum_{s \le t} (\mu(A^\star) - \mu(A_s))` against the best
        safe super arm :math:`A^\star` (``best_safe_arm``), one term per
        pull.  ``final["pulls"]``: samples of each item, int64
        ``(n_reps, n_items)``.
    ``violations``
        Pulls so far of super arms whose true variance sum exceeds the budget.
    ``possibly_safe``
        The learner's latest ``SuperArm.n_possible`` (the size of its possibly
        safe set; ``-1`` where it reports none).
    """

    means: np.ndarray
    variances: np.ndarray
    budget: float
    k: int
    variance_bound: float = 0.25
    delta: float = 0.05
    best_safe_arm: tuple = ()
    best_safe_mean: float = float("nan")
    name: str = "safe_comb"

    #: Metrics recorded when ``sim.run`` is given none.
    default_metrics = ("regret", "violations")

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str, got {type(self.name).__name__}")
        means = _vector(self.means, "means")
        variances = _vector(self.variances, "variances")
        if variances.shape != means.shape:
            raise ValueError(f"variances must have the shape of means {means.shape}, got {variances.shape}")
        variance_bound = check_float(self.variance_bound, "variance_bound", positive=True, maximum=0.25)
        budget = check_float(self.budget, "budget", positive=True)
        delta = check_open_unit(self.delta, "delta")
        k = check_int(self.k, "k", minimum=1)
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
        if n_super_arms(means.size, k) <= _MAX_SUPER_ARMS:
            best, arg = _best_safe(means, variances, budget, super_arms(means.size, k))
        else:
            best, arg = _best_safe_milp(means, variances, budget, k)
        given, given_mean = self.best_safe_arm, self.best_safe_mean
        if isinstance(given_mean, (float, np.floating)) and math.isnan(given_mean):
            given_mean = None  # the default: computed here
        else:
            given_mean = check_float(given_mean, "best_safe_mean")
        if not (isinstance(given, tuple) and given == ()) or given_mean is not None:
            # given: it must be a best safe super arm
            arg = _check_best(given, given_mean, best, means, variances, budget, k) or arg
        for field, value in (("means", means), ("variances", variances), ("budget", budget), ("k", k),
                             ("variance_bound", variance_bound), ("delta", delta), ("best_safe_arm", arg),
                             ("best_safe_mean", best)):
            object.__setattr__(self, field, value)

    @property
    def n_items(self) -> int:
        """Number of ground items ``L``."""
        return int(self.means.size)

    @property
    def params(self) -> Mapping[str, Any]:
        """The constructor's settings."""
        return {"means": self.means, "variances": self.variances, "budget": self.budget, "k": self.k,
                "variance_bound": self.variance_bound, "delta": self.delta}

    @property
    def spec(self) -> EnvSpec:
        """Feedback ``"semi-bandit"``, one super arm per round; the learner is told the sizes, budget and delta."""
        return EnvSpec(feedback="semi-bandit", unit="round", n_actions=n_super_arms(self.n_items, self.k),
                       info={"n_items": self.n_items, "k": self.k, "budget": self.budget,
                             "variance_bound": self.variance_bound, "delta": self.delta})

    @property
    def two_point(self):
        """``(b, p)``: the support top and the probability of the two-point law of every item."""
        mu, var = self.means, self.variances
        return np.where(mu > 0, (mu * mu + var) / mu, 0.0), mu * mu / (mu * mu + var)

    def reset(self, n_reps, keys, xp):
        """The item laws ``(means, variances, b, p)`` as ``xp`` arrays (nothing changes between rounds)."""
        b, p = self.two_point
        return tuple(xp.asarray(a) for a in (self.means, self.variances, b, p))

    def step(self, env_state, action, t, keys):
        """Sample the pulled items of every replication; the feedback is their samples ``(n_reps, k)``."""
        if not isinstance(action, SuperArm):
            raise TypeError(f"a semi-bandit learner's act must return a SuperArm(items, n_possible), "
                            f"got {type(action).__name__}")
        mu, var, b, p = env_state
        xp = _ns(keys)
        items = action.items
        if items.ndim != 2 or items.shape[0] != keys.shape[0] or items.shape[1] > self.k:
            raise ValueError(f"SuperArm.items must have shape (n_reps, <= {self.k}), got {items.shape}")
        if bool(xp.any((items < -1) | (items >= self.n_items))):
            raise ValueError(f"SuperArm.items must hold items in [0, {self.n_items - 1}] or the padding -1")
        valid = items >= 0
        if items.shape[1] > 1:
            srt = xp.sort(items, axis=1)
            if bool(xp.any((srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0))):
                raise ValueError("SuperArm.items must not repeat an item within a row (a super arm is a set)")
        ii = xp.where(valid, items, 0)
        u = uniform(keys[:, None], xp.astype(ii, xp.uint64))
        x = xp.where(valid & (u < p[ii]), b[ii], 0.0)
        m = xp.zeros(keys.shape[0])
        v = xp.zeros(keys.shape[0])
        for j in range(items.shape[1]):  # sums in the pulled order (the compiled path's order)
            m = m + xp.where(valid[:, j], mu[ii[:, j]], 0.0)
            v = v + xp.where(valid[:, j], var[ii[:, j]], 0.0)
        info = {"items": items, "valid": valid, "mean": m, "var": v, "n_possible": action.n_possible}
        return env_state, x, info

    def available_metrics(self) -> Mapping[str, Metric]:
        """``regret``, ``violations`` and ``possibly_safe`` (see the Notes of the class)."""
        return {"regret": _regret_metric(self), "violations": _violation_metric(self.budget),
                "possibly_safe": _possible_metric()}


def _regret_metric(env) -> Metric:
    best = float(env.best_safe_mean)

    def init(n_reps, xp):
        return {"reg": xp.zeros(n_reps), "pulls": xp.zeros((n_reps, env.n_items), dtype=xp.int64)}

    def update(acc, info, t):
        xp = _ns(info["mean"])
        pulls = acc["pulls"]
        all_items = xp.arange(pulls.shape[1])[None, :]
        for j in range(info["items"].shape[1]):  # padding (-1) matches no item
            pulls = pulls + xp.astype(info["items"][:, j:j + 1] == all_items, xp.int64)
        return {"reg": acc["reg"] + (best - info["mean"]), "pulls": pulls}

    return Metric("regret", init, update, lambda acc: acc["reg"], lambda acc: {"pulls": acc["pulls"]})


def _violation_metric(budget) -> Metric:
    def init(n_reps, xp):
        return xp.zeros(n_reps, dtype=xp.int64)

    def update(acc, info, t):
        xp = _ns(info["var"])
        return acc + xp.astype(info["var"] > budget, xp.int64)

    return Metric("violations", init, update, lambda acc: acc)


def _possible_metric() -> Metric:
    def init(n_reps, xp):
        return xp.full(n_reps, -1, dtype=xp.int64)

    def update(acc, info, t):
        n = info["n_possible"]
        if n is None:
            raise ValueError("metric 'possibly_safe' needs SuperArm.n_possible, and this learner reports None")
        return n + 0

    return Metric("possibly_safe", init, update, lambda acc: acc)


def safe_comb_instance(means, variances, budget, k, *, variance_bound=0.25, delta=0.05) -> SafeCombInstance:
    """Validate and build a :class:`SafeCombInstance` (the environment).

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

    Examples
    --------
    >>> env = safe_comb_instance([0.5, 0.4, 0.3], [0.2, 0.2, 0.1], budget=0.35, k=2)
    >>> env.best_safe_arm, round(env.best_safe_mean, 12), env.spec.n_actions
    ((0, 2), 0.8, 6)
    """
    return SafeCombInstance(means=means, variances=variances, budget=budget, k=k, variance_bound=variance_bound,
                            delta=delta)


def _best_safe(means, variances, budget, arms):
    """The first best safe super arm of ``arms`` (size-then-lexicographic order)."""
    valid = arms >= 0
    ii = np.where(valid, arms, 0)
    m = np.zeros(arms.shape[0])
    v = np.zeros(arms.shape[0])
    for j in range(arms.shape[1]):
        m = m + np.where(valid[:, j], means[ii[:, j]], 0.0)
        v = v + np.where(valid[:, j], variances[ii[:, j]], 0.0)
    a = int(np.argmax(np.where(v <= budget, m, -np.inf)))
    return float(m[a]), tuple(int(i) for i in arms[a][valid[a]])


def _best_safe_milp(means, variances, budget, k):
    """The best safe super arm by a 0/1 program (HiGHS): max mu.x, sum x <= k, var.x <= budget."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    L = means.size
    cons = LinearConstraint(np.vstack([np.ones(L), variances]), -np.inf, [k, budget])
    res = milp(-means, constraints=cons, integrality=np.ones(L), bounds=Bounds(0, 1))
    if not res.success:  # pragma: no cover - every single item is safe, so the program is feasible
        raise RuntimeError(f"the best-safe-arm program failed: {res.message}")
    arg = tuple(int(i) for i in np.flatnonzero(res.x > 0.5))
    return float(means[list(arg)].sum()), arg


def _check_best(given, given_mean, best, means, variances, budget, k):
    """Check a ``best_safe_arm`` (or ``()``) and ``best_safe_mean`` (or None) given to :class:`SafeCombInstance`
    against the best safe mean ``best``; return the given arm as a tuple, or None."""
    tol = 1e-9 * max(1.0, abs(best))
    if given_mean is not None and abs(given_mean - best) > tol:
        raise ValueError(f"best_safe_mean must be the best safe mean {best}, got {given_mean}")
    if isinstance(given, tuple) and given == ():
        return None
    try:
        arm = [int(i) for i in given]
    except (TypeError, ValueError):
        raise TypeError(f"best_safe_arm must be a tuple of item indices, got {given!r}") from None
    if (not arm or len(arm) > k or len(set(arm)) != len(arm) or min(arm) < 0 or max(arm) >= means.size
            or any(int(i) != i for i in given)):
        raise ValueError(f"best_safe_arm must hold 1 to k = {k} distinct items in [0, {means.size - 1}], "
                         f"got {given!r}")
    if float(variances[arm].sum()) > budget or abs(float(means[arm].sum()) - best) > tol:
        raise ValueError(f"best_safe_arm {given!r} is not a best safe super arm (the best safe mean is {best})")
    return tuple(arm)


def _vector(a, name):
    if not isinstance(a, np.ndarray) and not isinstance(a, (str, bytes)) and not hasattr(a, "__len__"):
        raise TypeError(f"{name} must be a 1-D array of reals, got {type(a).__name__}")
    a = np.array(as_real_array(a, name), dtype=np.float64)
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
