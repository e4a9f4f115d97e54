r"""Incremental Hoeffding regression trees, batched over replications and trees.

A forest of ``n_reps * n_trees`` regression trees over contexts in a box
:math:`[\ell, u]^p` is held as fixed-capacity node arrays with leading axes
``(n_reps, n_trees)``: split feature and threshold, first child (the second
child is the next node), depth, the leaf model (count, running mean and sum
of squared deviations, Welford's update) and, at every leaf, histogram
statistics (count, sum, sum of squares of the targets) of each feature over
``n_bins`` equal-width bins.  One update routes one observation per
replication into one of its trees, with array code over the replications
(a loop over depth for the routing), and decides splits with the Hoeffding
bound.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._validation import as_real_array, check_array_size, check_float, check_int

#: Merits below this (times ``value_range**2``) are round-off of an exactly constant target, not a split.
_ROUND_OFF = 1e-12

__all__ = ["HoeffdingTreeConfig", "HoeffdingTreeState", "hoeffding_tree_config", "hoeffding_tree_init",
           "hoeffding_tree_leaves", "hoeffding_tree_update", "leaf_thompson_scores", "split_merits"]


class _ConfigFields(NamedTuple):
    n_features: int
    n_bins: int
    lower: float
    upper: float
    max_depth: int
    grace_period: int
    delta: float
    tie_threshold: float
    value_range: float


class HoeffdingTreeConfig(_ConfigFields):
    """Settings of a batch of Hoeffding regression trees (see :func:`hoeffding_tree_config`).

    Built directly, with ``_replace`` or with :func:`hoeffding_tree_config`,
    the settings are checked the same way (a bad one raises a
    :class:`ValueError` or :class:`TypeError` naming it).
    """

    __slots__ = ()

    def __new__(cls, n_features, n_bins, lower, upper, max_depth, grace_period, delta, tie_threshold, value_range):
        p = check_int(n_features, "n_features")
        B = check_int(n_bins, "n_bins", minimum=2)
        lo, hi = check_float(lower, "lower"), check_float(upper, "upper")
        if not hi > lo:
            raise ValueError(f"upper must be > lower, got lower={lo}, upper={hi}")
        D = check_int(max_depth, "max_depth", minimum=0, maximum=12)
        g = check_int(grace_period, "grace_period")
        d = check_float(delta, "delta", positive=True)
        if d >= 1.0:
            raise ValueError(f"delta must lie in (0, 1), got {d}")
        tau = check_float(tie_threshold, "tie_threshold", minimum=0.0)
        R = check_float(value_range, "value_range", positive=True)
        # the histograms of one tree: max_nodes x n_features x n_bins
        check_array_size((2 ** (D + 1) - 1, p, B), ("max_depth", "n_features", "n_bins"))
        return super().__new__(cls, p, B, lo, hi, D, g, d, tau, R)

    @classmethod
    def _make(cls, iterable):
        return cls(*iterable)

    def _replace(self, **changes):
        unknown = set(changes) - set(self._fields)
        if unknown:
            raise TypeError(f"HoeffdingTreeConfig has no fields {sorted(unknown)}")
        return type(self)(**{**self._asdict(), **changes})

    @property
    def max_nodes(self) -> int:
        return 2 ** (self.max_depth + 1) - 1


class HoeffdingTreeState(NamedTuple):
    """Node arrays of ``n_reps * n_trees`` trees; ``M = max_nodes``, ``p = n_features``, ``B = n_bins``.

    Attributes
    ----------
    feature : ndarray of int, shape (n_reps, n_trees, M)
        Split feature of an internal node, ``-1`` at leaves and unused nodes.
    threshold : ndarray, shape (n_reps, n_trees, M)
        A context goes to the first child when ``x[feature] < threshold``.
    child : ndarray of int, shape (n_reps, n_trees, M)
        First child (the second is ``child + 1``).
    depth : ndarray of int, shape (n_reps, n_trees, M)
    n_nodes : ndarray of int, shape (n_reps, n_trees)
    count, mean, m2 : ndarray, shape (n_reps, n_trees, M)
        Leaf model: number of targets, their running mean and sum of squared deviations.
    hist_n, hist_s, hist_ss : ndarray, shape (n_reps, n_trees, M, p, B)
        Per leaf, feature and bin: count, sum and sum of squares of the
        targets seen since the leaf was created.
    """

    feature: np.ndarray
    threshold: np.ndarray
    child: np.ndarray
    depth: np.ndarray
    n_nodes: np.ndarray
    count: np.ndarray
    mean: np.ndarray
    m2: np.ndarray
    hist_n: np.ndarray
    hist_s: np.ndarray
    hist_ss: np.ndarray


def hoeffding_tree_config(n_features: int, *, n_bins: int = 16, lower: float = 0.0, upper: float = 1.0,
                          max_depth: int = 3, grace_period: int = 200, delta: float = 1e-7,
                          tie_threshold: float = 0.05, value_range: float = 1.0) -> HoeffdingTreeConfig:
    """Check and record the settings of a Hoeffding regression tree.

    Parameters
    ----------
    n_features : int
        Dimension ``p`` of the contexts.
    n_bins : int
        Equal-width bins per feature on ``[lower, upper]``; the candidate
        thresholds are the ``n_bins - 1`` inner bin edges.
    lower, upper : float
        The box that holds the contexts (values outside are clipped into the end bins).
    max_depth : int
        Depth cap (the root has depth 0; ``0`` gives a single leaf per tree).
    grace_period : int
        A leaf considers splitting each time it has seen a multiple of this many targets.
    delta : float
        Confidence of the Hoeffding bound, in (0, 1).
    tie_threshold : float
        Split anyway once the bound is below this (two near-equal candidates).
    value_range : float
        Width of the interval that holds the targets (1 for rewards in [0, 1]).

    Raises
    ------
    TypeError, ValueError
        Naming the setting that is not a number of the right kind or lies
        out of range (``max_depth`` at most 12), or the settings whose one
        tree's histograms would exceed the array size limit.

    Examples
    --------
    >>> hoeffding_tree_config(2, max_depth=2).max_nodes
    7
    """
    return HoeffdingTreeConfig(n_features, n_bins, lower, upper, max_depth, grace_period, delta, tie_threshold,
                               value_range)


def hoeffding_tree_init(config: HoeffdingTreeConfig, n_reps: int, n_trees: int) -> HoeffdingTreeState:
    """Empty trees: every tree is one leaf (the root) with no data."""
    if not isinstance(config, HoeffdingTreeConfig):
        raise TypeError(f"config must be a HoeffdingTreeConfig, got {type(config).__name__}")
    R, E, M = check_int(n_reps, "n_reps"), check_int(n_trees, "n_trees"), config.max_nodes
    p, B = config.n_features, config.n_bins
    check_array_size((R, E, M, p, B), ("n_reps", "n_trees", "config"))
    z = lambda: np.zeros((R, E, M))  # noqa: E731
    h = lambda: np.zeros((R, E, M, p, B))  # noqa: E731
    return HoeffdingTreeState(np.full((R, E, M), -1, np.int64), z(), np.zeros((R, E, M), np.int64),
                              np.zeros((R, E, M), np.int64), np.ones((R, E), np.int64), z(), z(), z(), h(), h(),
                              h())


def hoeffding_tree_leaves(config: HoeffdingTreeConfig, state: HoeffdingTreeState, x) -> np.ndarray:
    """Leaf of every tree that each replication's context falls in.

    Parameters
    ----------
    config : HoeffdingTreeConfig
    state : HoeffdingTreeState
        Trees built for ``config`` (:func:`hoeffding_tree_init`).
    x : array, shape (n_reps, n_features)
        Finite contexts (values outside ``[lower, upper]`` go where the end bins would).

    Returns
    -------
    ndarray of int, shape (n_reps, n_trees)

    Raises
    ------
    TypeError
        If ``config`` or ``state`` is not of its type, or ``x`` does not hold real numbers.
    ValueError
        If ``state`` was built for other settings than ``config``, or ``x`` has the wrong shape or holds
        NaN or infinite values.
    """
    _check_config_state(config, state)
    R, E, _ = state.feature.shape
    x = np.asarray(as_real_array(x, "x"))
    if x.shape != (R, config.n_features):
        raise ValueError(f"x must have shape ({R}, {config.n_features}), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x contains NaN or infinite values")
    return _leaves(config, state, x)


def _check_config_state(config, state):
    if not isinstance(config, HoeffdingTreeConfig):
        raise TypeError(f"config must be a HoeffdingTreeConfig, got {type(config).__name__}")
    if not isinstance(state, HoeffdingTreeState):
        raise TypeError(f"state must be a HoeffdingTreeState (from hoeffding_tree_init), got {type(state).__name__}")
    R, E, M = state.feature.shape
    if (M, *state.hist_n.shape[3:]) != (config.max_nodes, config.n_features, config.n_bins):
        raise ValueError(f"state was built for other settings than config: {M} nodes, histograms "
                         f"{tuple(state.hist_n.shape[3:])} per node; config has {config.max_nodes} nodes, "
                         f"({config.n_features}, {config.n_bins})")


def _leaves(config, state, x):
    """:func:`hoeffding_tree_leaves` without the checks."""
    R, E, M = state.feature.shape
    base = np.arange(0, R * E * M, M).reshape(R, E)
    feature, threshold, child = state.feature.reshape(-1), state.threshold.reshape(-1), state.child.reshape(-1)
    node = np.zeros((R, E), np.int64)
    for _ in range(config.max_depth):
        k = base + node
        f = feature[k]
        go = np.take_along_axis(x, np.maximum(f, 0), axis=1) >= threshold[k]
        node = np.where(f >= 0, child[k] + go, node)
    return node


def leaf_thompson_scores(count, mean, z):
    r"""Gaussian Thompson draws of leaf means: :math:`\tilde m + z / (2 \sqrt{n + 1})`.

    Parameters
    ----------
    count, mean, z : array, broadcast together (e.g. shape (n_reps, n_trees))
        Leaf counts :math:`n`, leaf means :math:`\hat m` and standard normal draws.

    Notes
    -----
    With one prior pseudo-observation at :math:`\tfrac12`,
    :math:`\tilde m = (n \hat m + \tfrac12)/(n + 1)`; the variance proxy
    :math:`\tfrac14` bounds the variance of any reward in :math:`[0, 1]`.
    """
    n1 = count + 1.0
    return (count * mean + 0.5) / n1 + z * (0.5 / np.sqrt(n1))


def _bins(config, x):
    u = (x - config.lower) / (config.upper - config.lower) * config.n_bins
    return np.clip(np.floor(u), 0, config.n_bins - 1).astype(np.int64)


def split_merits(hist_n, hist_s, hist_ss):
    r"""Variance reduction of every candidate split from histogram statistics.

    Parameters
    ----------
    hist_n, hist_s, hist_ss : array, shape (..., n_features, n_bins)

    Returns
    -------
    ndarray, shape (..., n_features, n_bins - 1)
        Entry ``b - 1`` is the reduction for the threshold between bins
        ``b - 1`` and ``b``, :math:`(\mathrm{SSE}(S) - \mathrm{SSE}(S_L) - \mathrm{SSE}(S_R))/|S|`;
        ``-inf`` where a side is empty.
    """
    nl = np.cumsum(hist_n, axis=-1)[..., :-1]
    sl = np.cumsum(hist_s, axis=-1)[..., :-1]
    ssl = np.cumsum(hist_ss, axis=-1)[..., :-1]
    n = hist_n.sum(axis=-1, keepdims=True)
    s = hist_s.sum(axis=-1, keepdims=True)
    ss = hist_ss.sum(axis=-1, keepdims=True)
    nr, sr, ssr = n - nl, s - sl, ss - ssl
    with np.errstate(divide="ignore", invalid="ignore"):
        sse = ss - s * s / n
        sse_l = ssl - sl * sl / nl
        sse_r = ssr - sr * sr / nr
        merit = (sse - sse_l - sse_r) / n
    return np.where((nl > 0) & (nr > 0), merit, -np.inf)


def hoeffding_tree_update(config: HoeffdingTreeConfig, state: HoeffdingTreeState, tree, x, y, *, leaves=None
                          ) -> HoeffdingTreeState:
    r"""Add one target per replication to one of its trees; split leaves where the bound allows.

    Parameters
    ----------
    config : HoeffdingTreeConfig
    state : HoeffdingTreeState
        Updated in place (the arrays are large; a copy per round would dominate the cost) and returned.
    tree : array of int, shape (n_reps,)
        Which tree of each replication receives the observation.
    x : array, shape (n_reps, n_features)
    y : array, shape (n_reps,)
        Targets, within an interval of width ``config.value_range``.
    leaves : array of int, shape (n_reps, n_trees), optional
        :func:`hoeffding_tree_leaves` of ``x`` on this state, when the caller already has it.

    Returns
    -------
    HoeffdingTreeState

    Notes
    -----
    The leaf model and the leaf's histograms are updated; when the leaf's
    count is a multiple of the grace period and its depth is below the cap,
    the variance reduction :math:`G` of every candidate (feature, bin edge)
    is computed from the histograms (``split_merits``).  With
    :math:`G_1` the best candidate, :math:`G_2` the best candidate on another
    feature (or :math:`0`, the merit of not splitting, when :math:`p = 1`)
    and the Hoeffding bound

    .. math::

        \epsilon = R \sqrt{\frac{\ln(1/\delta)}{2 n}},

    with :math:`R` the range of :math:`G` (a variance of targets in an
    interval of width ``value_range`` is at most ``value_range**2 / 4``), the
    leaf splits on the best candidate when :math:`G_1 - G_2 > \epsilon` or
    :math:`\epsilon < \tau` (tie threshold), and :math:`G_1 > 0` (beyond round-off).  The two
    children start with the leaf models of the two sides of the split (from
    the histograms of the chosen feature) and empty histograms.

    This is the split rule of the Hoeffding tree of Domingos & Hulten [1]_
    (with the null attribute of its pre-pruning), applied to variance
    reduction as in the regression trees of Ikonomovska et al. [2]_ (who
    use the ratio of standard-deviation reductions instead of the
    difference).  Simplified relative to [2]_: candidate thresholds are the
    edges of a fixed equal-width histogram rather than every observed value
    (an extended binary search tree), and the leaves hold a mean, not a
    linear model.  The defaults :math:`n_{\min} = 200`, :math:`\delta = 10^{-7}`,
    :math:`\tau = 0.05` are the settings of the experiments of [1]_ (not re-checked).

    References
    ----------
    .. [1] P. Domingos and G. Hulten, "Mining high-speed data streams", KDD 2000 (Table 1, the Hoeffding
       tree algorithm; Equation 1, the Hoeffding bound; numbers not re-checked).
    .. [2] E. Ikonomovska, J. Gama and S. Džeroski, "Learning model trees from evolving data streams",
       Data Mining and Knowledge Discovery 23(1), 2011 (FIMT-DD, split selection; section not re-checked).

    Examples
    --------
    >>> cfg = hoeffding_tree_config(1, n_bins=4, max_depth=1, grace_period=100, tie_threshold=0.0)
    >>> st = hoeffding_tree_init(cfg, 1, 1)
    >>> for i in range(200):
    ...     x = np.array([[(i % 8) / 8 + 1 / 16]])
    ...     st = hoeffding_tree_update(cfg, st, np.array([0]), x, np.array([float(x[0, 0] >= 0.5)]))
    >>> int(st.feature[0, 0, 0]), float(st.threshold[0, 0, 0]), st.mean[0, 0, 1:3].tolist()
    (0, 0.5, [0.0, 1.0])
    """
    _check_config_state(config, state)
    R, E, M = state.feature.shape
    p, B = config.n_features, config.n_bins
    tree = np.asarray(tree)
    if tree.shape != (R,) or not np.issubdtype(tree.dtype, np.integer):
        raise ValueError(f"tree must be an integer array of shape ({R},)")
    if np.any(tree < 0) or np.any(tree >= E):
        raise ValueError(f"tree must lie in [0, {E - 1}]")
    x = np.asarray(as_real_array(x, "x"))
    y = np.asarray(as_real_array(y, "y"))
    if x.shape != (R, p) or not np.all(np.isfinite(x)):
        raise ValueError(f"x must be a finite array of shape ({R}, {p}), got shape {x.shape}")
    if y.shape != (R,) or not np.all(np.isfinite(y)):
        raise ValueError(f"y must be a finite array of shape ({R},)")
    if leaves is not None:
        leaves = np.asarray(leaves)
        if leaves.shape != (R, E) or leaves.dtype.kind not in "iu" or np.any(leaves < 0) or np.any(leaves >= M):
            raise ValueError(f"leaves must be an integer array of shape ({R}, {E}) with nodes in [0, {M - 1}] "
                             "(hoeffding_tree_leaves of x)")
    r = np.arange(R)
    leaf = (_leaves(config, state, x) if leaves is None else leaves)[r, tree]
    idx = (r, tree, leaf)
    n = state.count[idx] + 1.0
    d = y - state.mean[idx]
    state.count[idx] = n
    state.mean[idx] += d / n
    state.m2[idx] += d * (y - state.mean[idx])
    rr, ff = np.repeat(r, p), np.tile(np.arange(p), R)
    hidx = (rr, tree[rr], leaf[rr], ff, _bins(config, x).ravel())
    yy = y[rr]
    state.hist_n[hidx] += 1.0
    state.hist_s[hidx] += yy
    state.hist_ss[hidx] += yy * yy
    seen = state.hist_n[idx][:, 0, :].sum(axis=-1)
    due = np.flatnonzero((seen % config.grace_period == 0) & (state.depth[idx] < config.max_depth))
    if due.size:
        _try_split(config, state, r[due], tree[due], leaf[due], seen[due])
    return state


def _try_split(config, state, r, e, leaf, n):
    idx = (r, e, leaf)
    hn, hs, hss = state.hist_n[idx], state.hist_s[idx], state.hist_ss[idx]  # (S, p, B)
    merit = split_merits(hn, hs, hss)  # (S, p, B - 1)
    best_b = np.argmax(merit, axis=-1)  # (S, p)
    per_f = np.take_along_axis(merit, best_b[..., None], axis=-1)[..., 0]  # (S, p)
    order = np.argsort(-per_f, axis=-1, kind="stable")
    f1 = order[:, 0]
    g1 = per_f[np.arange(r.size), f1]
    g2 = per_f[np.arange(r.size), order[:, 1]] if config.n_features > 1 else np.zeros(r.size)
    g2 = np.maximum(g2, 0.0)
    eps = config.value_range ** 2 / 4.0 * np.sqrt(math.log(1.0 / config.delta) / (2.0 * n))
    tie = eps < config.tie_threshold
    ok = np.isfinite(g1) & (g1 > _ROUND_OFF * config.value_range ** 2) & ((g1 - g2 > eps) | tie)
    if not np.any(ok):
        return
    s = np.flatnonzero(ok)
    r, e, leaf, f1 = r[s], e[s], leaf[s], f1[s]
    b = best_b[s, f1] + 1  # children: bins < b and bins >= b
    c = state.n_nodes[r, e]
    state.n_nodes[r, e] = c + 2
    state.feature[r, e, leaf] = f1
    state.threshold[r, e, leaf] = config.lower + (config.upper - config.lower) * b / config.n_bins
    state.child[r, e, leaf] = c
    left = np.arange(config.n_bins)[None, :] < b[:, None]
    for side, mask in ((0, left), (1, ~left)):
        cn = np.where(mask, hn[s, f1], 0.0).sum(axis=-1)
        cs = np.where(mask, hs[s, f1], 0.0).sum(axis=-1)
        css = np.where(mask, hss[s, f1], 0.0).sum(axis=-1)
        node = (r, e, c + side)
        state.depth[node] = state.depth[r, e, leaf] + 1
        state.count[node] = cn
        state.mean[node] = cs / cn
        state.m2[node] = np.maximum(css - cs * cs / cn, 0.0)
