"""Random instances of search-and-stop on a DAG: out-forests, series-parallel DAGs and general DAGs.

Each generator draws the graph, the hider law and the costs from
``numpy.random.default_rng(SeedSequence(seed))``, so an instance is a pure
function of its arguments.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._validation import check_array_size, check_float, check_int
from ._dag_search import SearchDAG, search_dag

__all__ = ["random_out_forest", "random_series_parallel", "random_dag"]


def _rng(seed) -> np.random.Generator:
    """``default_rng(SeedSequence(seed))`` for an int ``seed >= 0``, or ``default_rng(seed)`` for a SeedSequence."""
    if not isinstance(seed, np.random.SeedSequence):
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
            raise TypeError(f"seed must be a non-negative int or a numpy SeedSequence, got {type(seed).__name__} "
                            f"{seed!r}")
        seed = np.random.SeedSequence(check_int(seed, "seed", minimum=0))
    return np.random.default_rng(seed)


def _law(rng, n, absent):
    mu = rng.exponential(size=n) ** 2
    return (1.0 - absent) * mu / mu.sum(), rng.uniform(0.5, 2.0, size=n)


def random_out_forest(n_nodes: int, n_roots: int = 1, absent: float = 0.2, seed=0) -> SearchDAG:
    """Random out-forest: each node ``v >= n_roots`` has one parent drawn uniformly among the nodes before it.

    Parameters
    ----------
    n_nodes, n_roots : int
    absent : float in [0, 0.99]
        Probability that the hider is absent.  The rest is spread as normalised squared exponentials
        (a few likely nodes); the costs are uniform on [0.5, 2].
    seed : int or SeedSequence
        Everything is a pure function of the seed (the same law for the other generators).

    Returns
    -------
    SearchDAG

    Examples
    --------
    >>> dag = random_out_forest(6, seed=1)
    >>> all(len(p) == 1 for p in dag.parents[1:]), round(float(dag.prob.sum()), 6)
    (True, 0.8)
    """
    n_nodes = check_int(n_nodes, "n_nodes")
    check_array_size((n_nodes,), "n_nodes")
    n_roots = check_int(n_roots, "n_roots", maximum=n_nodes)
    absent = check_float(absent, "absent", minimum=0.0, maximum=0.99)
    rng = _rng(seed)
    parents = [[] if v < n_roots else [int(rng.integers(v))] for v in range(n_nodes)]
    mu, c = _law(rng, n_nodes, absent)
    return search_dag(parents, mu, c, name=f"out_forest(n={n_nodes}, roots={n_roots})")


def random_series_parallel(n_nodes: int, p_series: float = 0.5, absent: float = 0.2, seed=0) -> SearchDAG:
    """Random series-parallel DAG: merge random pairs of components in series or in parallel.

    A series merge (probability ``p_series``) adds an edge from every sink of the first component to
    every source of the second (the Hasse diagram of the series composition).

    Parameters
    ----------
    n_nodes : int
    p_series : float in [0, 1]
    absent, seed
        As in :func:`random_out_forest`.

    Returns
    -------
    SearchDAG

    Examples
    --------
    >>> from expertlab.experts import greedy_search
    >>> dag = random_series_parallel(7, seed=2)
    >>> dag.n_nodes, len(greedy_search(dag).order)
    (7, 7)
    """
    n_nodes = check_int(n_nodes, "n_nodes")
    check_array_size((n_nodes, n_nodes), "n_nodes")  # a series merge may add an edge between any two nodes
    p_series = check_float(p_series, "p_series", minimum=0.0, maximum=1.0)
    absent = check_float(absent, "absent", minimum=0.0, maximum=0.99)
    rng = _rng(seed)
    parents = [set() for _ in range(n_nodes)]
    comps = [({v}, {v}, {v}) for v in range(n_nodes)]         # (nodes, sources, sinks)
    while len(comps) > 1:
        i, j = rng.choice(len(comps), size=2, replace=False)
        (a, sa, ta), (b, sb, tb) = comps[i], comps[j]
        if rng.uniform() < p_series:
            for v in sb:
                parents[v] |= ta
            merged = (a | b, sa, tb)
        else:
            merged = (a | b, sa | sb, ta | tb)
        comps = [comp for k, comp in enumerate(comps) if k not in (i, j)] + [merged]
    mu, c = _law(rng, n_nodes, absent)
    return search_dag([sorted(p) for p in parents], mu, c, name=f"series_parallel(n={n_nodes})")


def random_dag(n_nodes: int, edge_prob: float = 0.3, absent: float = 0.2, seed=0) -> SearchDAG:
    """Random DAG: each edge ``u -> v`` with ``u < v`` is present independently with probability ``edge_prob``.

    Parameters
    ----------
    n_nodes : int
    edge_prob : float in [0, 1]
    absent, seed
        As in :func:`random_out_forest`.

    Returns
    -------
    SearchDAG

    Examples
    --------
    >>> dag = random_dag(5, edge_prob=1.0)
    >>> dag.parents[4]
    (0, 1, 2, 3)
    """
    n_nodes = check_int(n_nodes, "n_nodes")
    check_array_size((n_nodes, n_nodes), "n_nodes")  # the uniforms of the edges
    edge_prob = check_float(edge_prob, "edge_prob", minimum=0.0, maximum=1.0)
    absent = check_float(absent, "absent", minimum=0.0, maximum=0.99)
    rng = _rng(seed)
    edges = np.triu(rng.uniform(size=(n_nodes, n_nodes)) < edge_prob, k=1)
    mu, c = _law(rng, n_nodes, absent)
    return search_dag([np.flatnonzero(edges[:, v]).tolist() for v in range(n_nodes)], mu, c,
                      name=f"random_dag(n={n_nodes}, p={edge_prob:g})")
