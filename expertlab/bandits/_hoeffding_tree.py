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

The functions are array code over the namespace of the state's arrays
(NumPy, CuPy, any array-API namespace).  :func:`hoeffding_tree_update`
writes NumPy states in place and returns the others' updated arrays.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._backend import get_namespace
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


def hoeffding_tree_init(config: HoeffdingTreeConfig, n_reps: int, n_trees: int, *, xp=None) -> HoeffdingTreeState:
    """Empty trees: every tree is one leaf (the root) with no data.

    Parameters
    ----------
    config : HoeffdingTreeConfig
    n_reps, n_trees : int
        Leading axes of the node arrays.
    xp : array namespace, optional
        Namespace of the arrays (NumPy by default; CuPy or another array-API namespace).

    Returns
    -------
    HoeffdingTreeState

    Examples
    --------
    >>> st = hoeffding_tree_init(hoeffding_tree_config(2, n_bins=4, max_depth=1), 3, 2)
    >>> st.hist_n.shape, st.feature[0, 0].tolist(), st.n_nodes[0].tolist()
    ((3, 2, 3, 2, 4), [-1, -1, -1], [1, 1])
    """
    if not isinstance(config, HoeffdingTreeConfig):
        raise TypeError(f"config must be a HoeffdingTreeConfig, got {type(config).__name__}")
    xp = np if xp is None else xp
    R, E, M = check_int(n_reps, "n_reps"), check_int(n_trees, "n_trees"), config.max_nodes
    p, B = config.n_features, config.n_bins
    check_array_size((R, E, M, p, B), ("n_reps", "n_trees", "config"))
    z = lambda: xp.zeros((R, E, M), dtype=xp.float64)  # noqa: E731
    h = lambda: xp.zeros((R, E, M, p, B), dtype=xp.float64)  # noqa: E731
    return HoeffdingTreeState(xp.full((R, E, M), -1, dtype=xp.int64), z(), xp.zeros((R, E, M), dtype=xp.int64),
                              xp.zeros((R, E, M), dtype=xp.int64), xp.ones((R, E), dtype=xp.int64), z(), z(), z(),
                              h(), h(), h())


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
    array of int, shape (n_reps, n_trees)
        In the namespace of the state's arrays.

    Raises
    ------
    TypeError
        If ``config`` or ``state`` is not of its type, or ``x`` does not hold real numbers.
    ValueError
        If ``state`` was built for other settings than ``config``, or ``x`` has the wrong shape or holds
        NaN or infinite values.
    """
    _check_config_state(config, state)
    xp = _ns(state.feature)
    R, E, _ = state.feature.shape
    x = as_real_array(x, "x", xp=xp)
    if x.shape != (R, config.n_features):
        raise ValueError(f"x must have shape ({R}, {config.n_features}), got {x.shape}")
    if not bool(xp.all(xp.isfinite(x))):
        raise ValueError("x contains NaN or infinite values")
    return _leaves(config, state, x)


def _ns(a):
    """The namespace of the array ``a``: NumPy itself for NumPy arrays."""
    return np if isinstance(a, np.ndarray) else get_namespace(a)


def _take(xp, a, flat, n_lead=3):
    """Entries of ``a`` at the indices ``flat`` (any shape) into its first ``n_lead`` axes taken as one."""
    rest = tuple(a.shape[n_lead:])
    if xp is np:  # fancy indexing: the same entries, with less overhead per call
        return a.reshape(-1, *rest)[flat]
    rows = xp.take(xp.reshape(a, (-1, *rest)), xp.reshape(flat, (-1,)), axis=0)
    return xp.reshape(rows, (*flat.shape, *rest))


def _pick(xp, a, i):
    """``a[s, i[s]]`` for every ``s`` (``a`` of shape ``(S, p, ...)``, ``i`` of shape ``(S,)``)."""
    if xp is np:
        return a[np.arange(a.shape[0]), i]
    idx = xp.broadcast_to(xp.reshape(i, (-1, 1) + (1,) * (a.ndim - 2)), (a.shape[0], 1, *a.shape[2:]))
    return xp.take_along_axis(a, idx, axis=1)[:, 0, ...]


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
    xp = _ns(state.feature)
    R, E, M = state.feature.shape
    base = xp.reshape(xp.arange(0, R * E * M, M, dtype=xp.int64), (R, E))
    node = xp.zeros((R, E), dtype=xp.int64)
    for _ in range(config.max_depth):
        k = base + node
        f = _take(xp, state.feature, k)
        go = xp.take_along_axis(x, xp.maximum(f, 0), axis=1) >= _take(xp, state.threshold, k)
        node = xp.where(f >= 0, _take(xp, state.child, k) + xp.astype(go, xp.int64), node)
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
    xp = next((_ns(a) for a in (n1, mean, z) if hasattr(a, "__array_namespace__")), np)
    return (count * mean + 0.5) / n1 + z * (0.5 / xp.sqrt(n1))


def _bins(config, x):
    xp = _ns(x)
    u = (x - config.lower) / (config.upper - config.lower) * config.n_bins
    return xp.astype(xp.clip(xp.floor(u), 0.0, float(config.n_bins - 1)), xp.int64)


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
    if not all(hasattr(a, "__array_namespace__") for a in (hist_n, hist_s, hist_ss)):
        hist_n, hist_s, hist_ss = (np.asarray(a, dtype=np.float64) for a in (hist_n, hist_s, hist_ss))
    xp = _ns(hist_n)
    nl = xp.cumulative_sum(hist_n, axis=-1)[..., :-1]
    sl = xp.cumulative_sum(hist_s, axis=-1)[..., :-1]
    ssl = xp.cumulative_sum(hist_ss, axis=-1)[..., :-1]
    n = xp.sum(hist_n, axis=-1, keepdims=True)
    s = xp.sum(hist_s, axis=-1, keepdims=True)
    ss = xp.sum(hist_ss, axis=-1, keepdims=True)
    nr, sr, ssr = n - nl, s - sl, ss - ssl
    with np.errstate(divide="ignore", invalid="ignore"):
        sse = ss - s * s / n
        sse_l = ssl - sl * sl / nl
        sse_r = ssr - sr * sr / nr
        merit = (sse - sse_l - sse_r) / n
    return xp.where((nl > 0) & (nr > 0), merit, -xp.inf)


def hoeffding_tree_update(config: HoeffdingTreeConfig, state: HoeffdingTreeState, tree, x, y, *, leaves=None
                          ) -> HoeffdingTreeState:
    r"""Add one target per replication to one of its trees; split leaves where the bound allows.

    Parameters
    ----------
    config : HoeffdingTreeConfig
    state : HoeffdingTreeState
        NumPy arrays are updated in place (the arrays are large; a copy per round would dominate the
        cost) and returned.  Arrays of another namespace (CuPy, any array-API namespace) are left as
        they are: the updated arrays are returned, computed with array-API operations only (the same
        numbers).  Use the returned state in either case.
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
        ``state`` itself for NumPy arrays, else a new state.

    Raises
    ------
    TypeError
        If ``config`` or ``state`` is not of its type, or ``x`` or ``y`` does not hold real numbers.
    ValueError
        If ``state`` was built for other settings than ``config``, or ``tree``, ``x``, ``y`` or ``leaves``
        has the wrong shape or type, lies out of range or is not finite (the message names it).

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
    xp = _ns(state.feature)
    R, E, M = state.feature.shape
    p = config.n_features
    if not hasattr(tree, "__array_namespace__"):
        tree = xp.asarray(tree)
    if tree.shape != (R,) or not xp.isdtype(tree.dtype, "integral"):
        raise ValueError(f"tree must be an integer array of shape ({R},)")
    if bool(xp.any(tree < 0)) or bool(xp.any(tree >= E)):
        raise ValueError(f"tree must lie in [0, {E - 1}]")
    x = as_real_array(x, "x", xp=xp)
    y = as_real_array(y, "y", xp=xp)
    if x.shape != (R, p) or not bool(xp.all(xp.isfinite(x))):
        raise ValueError(f"x must be a finite array of shape ({R}, {p}), got shape {x.shape}")
    if y.shape != (R,) or not bool(xp.all(xp.isfinite(y))):
        raise ValueError(f"y must be a finite array of shape ({R},)")
    if leaves is not None:
        if not hasattr(leaves, "__array_namespace__"):
            leaves = xp.asarray(leaves)
        if (leaves.shape != (R, E) or not xp.isdtype(leaves.dtype, "integral") or bool(xp.any(leaves < 0))
                or bool(xp.any(leaves >= M))):
            raise ValueError(f"leaves must be an integer array of shape ({R}, {E}) with nodes in [0, {M - 1}] "
                             "(hoeffding_tree_leaves of x)")
    tree = xp.astype(tree, xp.int64)
    leaves = _leaves(config, state, x) if leaves is None else xp.astype(leaves, xp.int64)
    if xp is np:
        return _update_in_place(config, state, tree, x, y, leaves)
    return _update_arrays(config, state, tree, x, y, leaves)


def _update_in_place(config, state, tree, x, y, leaves):
    """:func:`hoeffding_tree_update` of NumPy arrays: writes through index arrays."""
    R, p = x.shape
    r = np.arange(R)
    leaf = leaves[r, tree]
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
        s, f1, b, children = _split_decision(config, state.hist_n[idx][due], state.hist_s[idx][due],
                                             state.hist_ss[idx][due], seen[due])
        if s.size:
            r, e, leaf = r[due][s], tree[due][s], leaf[due][s]
            c = state.n_nodes[r, e]
            state.n_nodes[r, e] = c + 2
            state.feature[r, e, leaf] = f1
            state.threshold[r, e, leaf] = _threshold(config, b)
            state.child[r, e, leaf] = c
            for side, (cn, mean, m2) in enumerate(children):
                node = (r, e, c + side)
                state.depth[node] = state.depth[r, e, leaf] + 1
                state.count[node] = cn
                state.mean[node] = mean
                state.m2[node] = m2
    return state


def _update_arrays(config, state, tree, x, y, leaves):
    """:func:`hoeffding_tree_update` in array-API operations only: one-hot masks and ``where`` instead of
    writes, so the input arrays are left as they are (the same numbers as :func:`_update_in_place`)."""
    xp = _ns(state.feature)
    R, E, M = state.feature.shape
    B = config.n_bins
    leaf = xp.take_along_axis(leaves, tree[:, None], axis=1)[:, 0]
    flat = (xp.arange(R, dtype=xp.int64) * E + tree) * M + leaf
    # the one updated node of each replication, as a mask over (n_reps, n_trees, max_nodes)
    at_tree = xp.arange(E, dtype=xp.int64)[None, :] == tree[:, None]
    at_leaf = at_tree[:, :, None] & (xp.arange(M, dtype=xp.int64)[None, None, :] == leaf[:, None, None])
    n = _take(xp, state.count, flat) + 1.0
    mean0 = _take(xp, state.mean, flat)
    d = y - mean0
    mean = mean0 + d / n
    m2 = _take(xp, state.m2, flat) + d * (y - mean)
    count = xp.where(at_leaf, n[:, None, None], state.count)
    mean_all = xp.where(at_leaf, mean[:, None, None], state.mean)
    m2_all = xp.where(at_leaf, m2[:, None, None], state.m2)
    # the leaf's histograms, updated at the bin of each feature, then written back
    at_bin = xp.arange(B, dtype=xp.int64)[None, None, :] == _bins(config, x)[:, :, None]
    yb = y[:, None, None]
    hn, hs, hss = (_take(xp, h, flat) for h in (state.hist_n, state.hist_s, state.hist_ss))
    hn = xp.where(at_bin, hn + 1.0, hn)
    hs = xp.where(at_bin, hs + yb, hs)
    hss = xp.where(at_bin, hss + yb * yb, hss)
    at_hist = at_leaf[:, :, :, None, None]
    state = state._replace(count=count, mean=mean_all, m2=m2_all,
                           hist_n=xp.where(at_hist, hn[:, None, None, :, :], state.hist_n),
                           hist_s=xp.where(at_hist, hs[:, None, None, :, :], state.hist_s),
                           hist_ss=xp.where(at_hist, hss[:, None, None, :, :], state.hist_ss))
    seen = xp.sum(hn[:, 0, :], axis=-1)
    depth = _take(xp, state.depth, flat)
    due = (seen % config.grace_period == 0) & (depth < config.max_depth)
    if not bool(xp.any(due)):
        return state
    ok, f1, b, children = _split_decision(config, hn, hs, hss, xp.where(due, seen, 1.0), due=due)
    if not bool(xp.any(ok)):
        return state
    c = _take(xp, state.n_nodes, xp.arange(R, dtype=xp.int64) * E + tree, n_lead=2)
    split_leaf = at_leaf & ok[:, None, None]
    out = dict(n_nodes=xp.where(at_tree & ok[:, None], (c + 2)[:, None], state.n_nodes),
               feature=xp.where(split_leaf, f1[:, None, None], state.feature),
               threshold=xp.where(split_leaf, _threshold(config, b)[:, None, None], state.threshold),
               child=xp.where(split_leaf, c[:, None, None], state.child))
    depth_all, count_all, mean_all, m2_all = state.depth, state.count, state.mean, state.m2
    nodes = xp.arange(M, dtype=xp.int64)[None, None, :]
    for side, (cn, cmean, cm2) in enumerate(children):
        at = at_tree[:, :, None] & ok[:, None, None] & (nodes == (c + side)[:, None, None])
        depth_all = xp.where(at, (depth + 1)[:, None, None], depth_all)
        count_all = xp.where(at, cn[:, None, None], count_all)
        mean_all = xp.where(at, cmean[:, None, None], mean_all)
        m2_all = xp.where(at, cm2[:, None, None], m2_all)
    return state._replace(depth=depth_all, count=count_all, mean=mean_all, m2=m2_all, **out)


def _threshold(config, b):
    xp = _ns(b)
    return config.lower + (config.upper - config.lower) * xp.astype(b, xp.float64) / config.n_bins


def _split_decision(config, hn, hs, hss, n, due=None):
    """Which of the leaves with histograms ``hn, hs, hss`` (S, p, B) and ``n`` targets split, and how.

    Returns ``(s, f1, b, children)``: for NumPy (``due`` None) ``s`` are the indices of the splitting
    leaves and the rest is of those leaves only; otherwise ``s`` is a mask (True where ``due`` and
    splitting) and the rest covers every leaf.  ``f1`` is the feature, ``b`` the first bin of the second
    child and ``children`` the ``(count, mean, m2)`` of the two children.
    """
    xp = _ns(hn)
    S = hn.shape[0]
    merit = split_merits(hn, hs, hss)  # (S, p, B - 1)
    best_b = xp.argmax(merit, axis=-1)  # (S, p)
    per_f = xp.take_along_axis(merit, best_b[..., None], axis=-1)[..., 0]  # (S, p)
    order = xp.argsort(-per_f, axis=-1, stable=True)
    f1 = order[:, 0]
    g1 = _pick(xp, per_f, f1)
    g2 = _pick(xp, per_f, order[:, 1]) if config.n_features > 1 else xp.zeros(S, dtype=hn.dtype)
    g2 = xp.maximum(g2, 0.0)
    eps = config.value_range ** 2 / 4.0 * xp.sqrt(math.log(1.0 / config.delta) / (2.0 * n))
    tie = eps < config.tie_threshold
    ok = xp.isfinite(g1) & (g1 > _ROUND_OFF * config.value_range ** 2) & ((g1 - g2 > eps) | tie)
    if due is None:
        s = np.flatnonzero(ok)
        f1, best_b, hn, hs, hss = f1[s], best_b[s], hn[s], hs[s], hss[s]
    else:
        s = ok & due
    b = _pick(xp, best_b, f1) + 1  # children: bins < b and bins >= b
    hn1, hs1, hss1 = (_pick(xp, h, f1) for h in (hn, hs, hss))  # (S, B)
    left = xp.arange(config.n_bins, dtype=xp.int64)[None, :] < b[:, None]
    children = []
    for mask in (left, ~left):
        cn = xp.sum(xp.where(mask, hn1, 0.0), axis=-1)
        cs = xp.sum(xp.where(mask, hs1, 0.0), axis=-1)
        css = xp.sum(xp.where(mask, hss1, 0.0), axis=-1)
        cn_div = cn if due is None else xp.where(s, cn, 1.0)  # a leaf that does not split may have an empty side
        children.append((cn, cs / cn_div, xp.maximum(css - cs * cs / cn_div, 0.0)))
    return s, f1, b, children
