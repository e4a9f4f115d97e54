r"""Greedy-by-density (Sidney) orders of a precedence DAG.

The density of a set :math:`B` of nodes is :math:`\rho(B) = \mu(B) / c(B)`.
A *Sidney decomposition* splits the nodes into blocks
:math:`B_1, B_2, \dots` where each :math:`B_k` is an initial closed set of
maximal density among the nodes not yet in a block; the densities are then
non-increasing.

Series-parallel orders are handled exactly by the chain-merging algorithm on
their decomposition tree (a leaf is one block; a parallel composition merges
the block lists of its parts by density; a series composition concatenates
them and merges adjacent blocks while an earlier one is less dense than the
next).  The output is the block list of an order minimising
:math:`\sum_v \mu_v T_v` (:math:`T_v` the completion time of :math:`v`).

A part of the order that is not series-parallel ("prime": both its
comparability and its incomparability graph are connected) is split by
maximal-density initial sets, found by Dinkelbach's iteration on the
maximum-weight closure linear programme (its constraint matrix is totally
unimodular, so a basic optimum is a 0/1 set); a block that cannot be split
further is ordered by a density-greedy topological sort.

The ground truth for small DAGs is an exact dynamic programme over the
initial closed sets (ideals), batched over rows of hider weights
(:func:`best_plans`); :func:`expertlab.experts.brute_force_search` and the
optimistic learner :func:`expertlab.experts.dag_optimistic` use it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["topological_order", "transitive_closure", "density_blocks", "is_series_parallel", "ideal_table", "best_plans"]


def topological_order(parents):
    """A topological order of the graph given by its parent lists, or None if it has a cycle."""
    n = len(parents)
    indeg = np.array([len(p) for p in parents])
    children = [[] for _ in range(n)]
    for v, pv in enumerate(parents):
        for u in pv:
            children[u].append(v)
    ready = [v for v in range(n) if indeg[v] == 0]
    out = []
    while ready:
        u = ready.pop()
        out.append(u)
        for v in children[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                ready.append(v)
    return out if len(out) == n else None


def transitive_closure(parents) -> np.ndarray:
    """``R[u, v]`` is True when ``u`` must be searched before ``v`` (a path ``u -> ... -> v``)."""
    n = len(parents)
    R = np.zeros((n, n), dtype=bool)
    for v, p in enumerate(parents):
        R[list(p), v] = True
    for k in range(n):                       # Warshall
        R |= R[:, [k]] & R[[k], :]
    return R


def _components(nodes, adj):
    """Connected components of ``adj`` restricted to ``nodes`` (lists, in the order found)."""
    left, out = set(nodes), []
    for s in nodes:
        if s not in left:
            continue
        comp, stack = [], [s]
        left.discard(s)
        while stack:
            u = stack.pop()
            comp.append(u)
            for v in [w for w in left if adj[u, w]]:
                left.discard(v)
                stack.append(v)
        out.append(sorted(comp))
    return out


def _decompose(R, nodes, allow_prime):
    if len(nodes) == 1:
        return ("leaf", nodes[0])
    comp = R | R.T
    parts = _components(nodes, comp)
    kind = "par"
    if len(parts) == 1:
        inc = ~comp
        np.fill_diagonal(inc, False)
        parts = _components(nodes, inc)
        kind = "ser"
        if len(parts) == 1:
            return ("prime", nodes) if allow_prime else None
        # every element of an earlier part precedes every element of a later one
        parts.sort(key=lambda p: -int(R[p[0], nodes].sum()))
    subs = [_decompose(R, p, allow_prime) for p in parts]
    if any(s is None for s in subs):
        return None
    return (kind, subs)


def _denser(a, b):
    """rho(a) > rho(b) for blocks (nodes, mu, c), by cross-multiplication."""
    return a[1] * b[2] > b[1] * a[2]


def _join(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def _chain_merge(blocks):
    """Merge adjacent blocks while an earlier one is strictly less dense than the next."""
    stack = []
    for b in blocks:
        while stack and _denser(b, stack[-1]):
            b = _join(stack.pop(), b)
        stack.append(b)
    return stack


def _blocks(tree, R, mu, c):
    kind, body = tree
    if kind == "leaf":
        return [((body,), float(mu[body]), float(c[body]))]
    if kind == "prime":
        return _sidney(body, R, mu, c)
    lists = [_blocks(t, R, mu, c) for t in body]
    if kind == "ser":
        return _chain_merge([b for lst in lists for b in lst])
    # merge by density, taking the head of one part at a time, so each part keeps its own order
    heads, merged = [0] * len(lists), []
    while True:
        live = [i for i, lst in enumerate(lists) if heads[i] < len(lst)]
        if not live:
            return merged
        top = live[0]
        for i in live[1:]:
            if _denser(lists[i][heads[i]], lists[top][heads[top]]):
                top = i
        merged.append(lists[top][heads[top]])
        heads[top] += 1


def _closure_lp(w, A, fix=None, eps=0.0):
    """Maximum-weight closure (0/1 vector) for weights ``w`` under ``A x <= 0``, optionally with
    ``x[fix] = 1`` and a penalty ``eps`` per node (the least such closure)."""
    from scipy.optimize import linprog

    m = w.size
    bounds = [(1.0, 1.0) if i == fix else (0.0, 1.0) for i in range(m)]
    res = linprog(-(w - eps), A_ub=A if A.size else None, b_ub=np.zeros(A.shape[0]) if A.size else None,
                  bounds=bounds, method="highs-ds")
    return res.x > 0.5


def _max_density_closure(nodes, R, mu, c):
    r"""A minimal initial closed set of ``nodes`` (under ``R``) of maximal density mu/c.

    Dinkelbach's iteration finds the maximal density :math:`\lambda^*`; the closures of weight 0
    under :math:`\mu - \lambda^* c` are then exactly the maximal-density ones, and for each node the
    least of them containing it is found by fixing that node and charging a tiny amount per node.
    """
    nodes = list(nodes)
    m = len(nodes)
    pairs = [(i, j) for i in range(m) for j in range(m) if R[nodes[i], nodes[j]]]   # i before j
    A = np.zeros((len(pairs), m))
    for k, (i, j) in enumerate(pairs):
        A[k, j], A[k, i] = 1.0, -1.0                      # x_j <= x_i
    mu_s, c_s = mu[nodes], c[nodes]
    cur = np.ones(m, dtype=bool)
    while True:
        lam = mu_s[cur].sum() / c_s[cur].sum()
        w = mu_s - lam * c_s
        x = _closure_lp(w, A)
        tol = 1e-12 * max(1.0, float(np.abs(w).sum()))
        if not x.any() or w[x].sum() <= tol:
            break
        cur = x
    tol = 1e-9 * max(1.0, float(np.abs(w).sum()))
    eps = 1e-10 * max(1.0, float(np.abs(w).sum()))
    best = cur
    for v in range(m):
        x = _closure_lp(w, A, fix=v, eps=eps)
        if w[x].sum() >= -tol and x.sum() < best.sum():
            best = x
    return [nodes[i] for i in range(m) if best[i]]


def _topo_greedy(nodes, R, mu, c):
    left, out = list(nodes), []
    while left:
        avail = [v for v in left if not any(R[u, v] for u in left)]
        v = max(avail, key=lambda u: (mu[u] / c[u], -u))
        out.append(v)
        left.remove(v)
    return tuple(out)


def _sidney(nodes, R, mu, c):
    """Sidney decomposition of a prime part: maximal-density initial sets, one after another."""
    left, out = list(nodes), []
    while left:
        B = _max_density_closure(left, R, mu, c)
        if len(B) == len(nodes):             # the prime part itself is indecomposable
            order = _topo_greedy(B, R, mu, c)
        else:
            order = tuple(v for b in _blocks(_decompose(R, sorted(B), True), R, mu, c) for v in b[0])
        out.append((order, float(mu[B].sum()), float(c[B].sum())))
        drop = set(B)
        left = [v for v in left if v not in drop]
    return out


def density_blocks(parents, mu, c):
    """Block list ``[(nodes in order), ...]`` of a greedy-by-density (Sidney) order of the DAG."""
    mu = np.asarray(mu, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    R = transitive_closure(parents)
    tree = _decompose(R, list(range(len(parents))), allow_prime=True)
    return [b[0] for b in _blocks(tree, R, mu, c)]


def is_series_parallel(dag) -> bool:
    """Whether the precedence order of ``dag`` is series-parallel (N-free).

    Examples
    --------
    >>> from expertlab.experts import search_dag
    >>> is_series_parallel(search_dag([[], [], [0, 1], [1]], [0.2] * 4, [1.0] * 4))   # the "N"
    False
    """
    return _decompose(transitive_closure(dag.parents), list(range(dag.n_nodes)), allow_prime=False) is not None


# ---------------------------------------------------------------------------
# exact dynamic programme over ideals


def ideal_table(parents, max_ideals: int = 1 << 16):
    """Every initial closed set (ideal) as a bitmask, by size, with its DP predecessors.

    Returns ``(masks, members, pred_v, pred_j, levels)``: ``masks`` (n_ideals,) int64 in order of size
    with ``masks[0] == 0``; ``members`` (n_ideals, n_nodes) bool; row ``i`` of ``pred_v`` and ``pred_j``
    (n_ideals, max_preds) lists the nodes ``v`` of ideal ``i`` without a child in it (-1: padding) and the
    index of ``ideal i minus v``; ``levels`` (n_nodes + 2,) holds the first index of each size.
    """
    n = len(parents)
    if n > 62:
        raise ValueError(f"brute force needs at most 62 nodes, got {n}")
    pmask = [sum(1 << u for u in p) for p in parents]
    level, index, masks, levels = [0], {0: 0}, [0], [0]
    while level:
        levels.append(len(masks))
        nxt = []
        for m in level:
            for v in range(n):
                if not (m >> v) & 1 and (pmask[v] & m) == pmask[v]:
                    m2 = m | (1 << v)
                    if m2 not in index:
                        index[m2] = len(masks)
                        masks.append(m2)
                        nxt.append(m2)
                        if len(masks) > max_ideals:
                            raise ValueError(f"the DAG has more than max_ideals={max_ideals} initial sets; "
                                             "brute force is for small DAGs")
        level = nxt
    children = [0] * n
    for v, p in enumerate(parents):
        for u in p:
            children[u] |= 1 << v
    members = np.array([[(m >> v) & 1 for v in range(n)] for m in masks], dtype=bool)
    preds = [[(v, index[m ^ (1 << v)]) for v in range(n) if (m >> v) & 1 and not children[v] & m]
             for m in masks]
    width = max(1, max(len(p) for p in preds))
    pred_v = np.full((len(masks), width), -1, dtype=np.int64)
    pred_j = np.zeros((len(masks), width), dtype=np.int64)
    for i, p in enumerate(preds):
        for k, (v, j) in enumerate(p):
            pred_v[i, k], pred_j[i, k] = v, j
    return np.array(masks, dtype=np.int64), members, pred_v, pred_j, np.array(levels[:-1] + [len(masks)])


def best_plans(table, mu, cost):
    r"""Batched dynamic programme over ideals: the best plan of every row of ``mu``.

    ``mu`` (n_reps, n_nodes) may be any non-negative weights (optimistic estimates may sum above 1):
    the factor :math:`1 - \mu(\text{before})` is clipped at 0 and :math:`F` at 1.  Returns
    ``(plans, rate)``: plans (n_reps, n_nodes) int64 padded with -1, rate (n_reps,).  The ideals of one
    size are processed together, so the work in Python is one step per size.
    """
    from .._backend import get_namespace

    xp = np if isinstance(mu, np.ndarray) else get_namespace(mu)
    masks, members, pred_v, pred_j = (xp.asarray(a) for a in table[:4])
    levels = [int(x) for x in table[4]]
    cost = xp.asarray(cost)
    n_reps, n = mu.shape
    n_ideals = masks.shape[0]
    mass = xp.zeros((n_reps, n_ideals))                          # mu of each ideal, summed along the DP
    best = xp.zeros((n_reps, n_ideals))
    last = xp.full((n_reps, n_ideals), -1, dtype=xp.int64)
    step_cost = xp.where(pred_v >= 0, cost[xp.maximum(pred_v, 0)], 0.0)   # (n_ideals, width)
    width = pred_v.shape[1]
    for lo, hi in zip(levels[1:-1], levels[2:]):
        J, V = pred_j[lo:hi, :], pred_v[lo:hi, :]
        mass[:, lo:hi] = xp.take(mass, J[:, 0], axis=1) + xp.take(mu, V[:, 0], axis=1)
        flat = xp.reshape(J, (-1,))
        mass_j = xp.reshape(xp.take(mass, flat, axis=1), (n_reps, hi - lo, width))
        best_j = xp.reshape(xp.take(best, flat, axis=1), (n_reps, hi - lo, width))
        cand = best_j + step_cost[None, lo:hi, :] * xp.maximum(1.0 - mass_j, 0.0)   # (n_reps, L, width)
        cand = xp.where(V[None, ...] >= 0, cand, xp.inf)
        k = xp.argmin(cand, axis=2)                                # first minimum: lowest node on ties
        best[:, lo:hi] = xp.take_along_axis(cand, k[:, :, None], axis=2)[:, :, 0]
        V_rows = xp.broadcast_to(V[None, ...], (n_reps, hi - lo, width))
        last[:, lo:hi] = xp.take_along_axis(V_rows, k[:, :, None], axis=2)[:, :, 0]
    rate = xp.minimum(mass[:, 1:], 1.0) / best[:, 1:]
    top = xp.max(rate, axis=1, keepdims=True)
    pick = xp.argmax(xp.astype(rate >= top * (1 - 1e-12), xp.int8), axis=1) + 1   # smallest ideal among ties
    rows = xp.arange(n_reps)
    by_value = xp.argsort(masks)
    sorted_masks = xp.take(masks, by_value)
    slot = xp.arange(n)[None, :]
    plans = xp.full((n_reps, n), -1, dtype=xp.int64)
    cur = pick
    size = xp.sum(xp.astype(xp.take(members, pick, axis=0), xp.int64), axis=1)
    for step in range(int(xp.max(size))):
        live = step < size
        v = last[rows, cur]
        plans = xp.where(live[:, None] & (slot == (size - 1 - step)[:, None]), v[:, None], plans)
        bit = xp.bitwise_left_shift(xp.ones_like(v), xp.maximum(v, 0))
        nm = xp.take(masks, cur) ^ xp.where(live, bit, 0)
        cur = xp.take(by_value, xp.searchsorted(sorted_masks, nm))
    return plans, top[:, 0]
