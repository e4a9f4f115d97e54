r"""Expertise trees: which expert to follow, learnt region by region of the context space.

Contextual bandit with expert advice (Abels, Lenaerts, Trianni & Nowé,
ICML 2023): each round a context :math:`x_t \in [0, 1]^p` arrives, each of
:math:`N` experts recommends an arm, the learner follows one expert, plays
its arm and sees that arm's reward only.  The experts' accuracy depends on
the region of the context space, so the benchmark is the *region-wise
oracle*, which follows in every region the expert that is accurate there.

One batched driver (array code over replications, a loop over rounds); the
context is draws ``0 .. p-1`` and the reward draw ``p`` of the round's key.
"""

from __future__ import annotations

import dataclasses
import time
from typing import NamedTuple

import numpy as np

from .. import _random
from .._validation import check_float, check_int
from ..sim._engine import checkpoint_grid
from ..sim._variates import normal_array
from ._exp4 import AdviceInstance, exp4
from ._hoeffding_tree import HoeffdingTreeState, hoeffding_tree_config, hoeffding_tree_init, \
    hoeffding_tree_leaves, hoeffding_tree_update, leaf_thompson_scores

__all__ = ["PartitionedExpertise", "partitioned_expertise", "ExpertAdviceResult", "expertise_trees",
           "global_thompson", "knn_experts", "exp4_experts"]


class PartitionedExpertise(NamedTuple):
    r"""Contexts uniform on :math:`[0, 1]^p`, a grid of cells (:func:`partitioned_expertise`).

    ``means[c, a]``: mean (Bernoulli) reward of arm ``a`` in cell ``c``;
    ``advice[j, c]``: expert ``j``'s arm there; ``owner[c]``: the expert that recommends the best arm.
    """

    name: str
    n_features: int
    n_split_features: int
    cells_per_axis: int
    means: np.ndarray
    advice: np.ndarray
    owner: np.ndarray
    params: dict

    @property
    def n_arms(self) -> int:
        return self.means.shape[1]

    @property
    def n_experts(self) -> int:
        return self.advice.shape[0]

    def cell(self, x, *, check: bool = True) -> np.ndarray:
        """Cell index of contexts ``x``, shape ``(..., n_features)``, in :math:`[0, 1]` (``check=False``: trusted)."""
        x = np.asarray(x, dtype=np.float64)
        if check and (x.ndim < 1 or x.shape[-1] != self.n_features):
            raise ValueError(f"x must have shape (..., {self.n_features}), got {x.shape}")
        if check and (not np.all(np.isfinite(x)) or np.any(x < 0) or np.any(x > 1)):
            raise ValueError("x must be finite and lie in [0, 1]")
        m = self.cells_per_axis
        k = np.minimum((x[..., :self.n_split_features] * m).astype(np.int64), m - 1)
        return (k * m ** np.arange(self.n_split_features)).sum(axis=-1)

    def expert_means(self) -> np.ndarray:
        """``(n_experts, n_cells)``: mean reward of following each expert in each cell."""
        return np.take_along_axis(self.means.T, self.advice, axis=0)

    def oracle_means(self) -> np.ndarray:
        """``(n_cells,)``: mean reward of the region-wise oracle (the best expert of each cell)."""
        return self.expert_means().max(axis=0)

    def as_advice_instance(self) -> AdviceInstance:
        """The same problem seen by a learner that only uses the advice (cells are equally likely)."""
        return AdviceInstance(self.name, self.means, self.advice, dict(self.params))


def partitioned_expertise(n_features: int = 2, n_arms: int = 4, n_experts: int = 4, *, cells_per_axis: int = 2,
                          n_split_features: int = 2, gap: float = 0.3, seed: int = 0) -> PartitionedExpertise:
    r"""A partitioned-expertise instance: each expert is accurate in its own cells only.

    In every cell one arm (drawn with a NumPy generator seeded by ``seed``)
    has mean :math:`\tfrac12 + \Delta`, the others :math:`\tfrac12`.  The
    cells are dealt to the experts in a random order, round robin, so each
    expert owns at least one cell (``n_cells >= n_experts`` is required); in
    its cells an expert recommends the best arm, elsewhere a fixed suboptimal
    arm.  Any single expert is then :math:`\Delta` worse than the oracle
    outside its own cells.

    Parameters
    ----------
    n_features : int
        Dimension ``p`` of the contexts.
    n_arms, n_experts : int
    cells_per_axis : int
        Equal intervals each split coordinate is cut into.
    n_split_features : int
        The first ``n_split_features`` coordinates define the cells; the others are irrelevant.
    gap : float
        :math:`\Delta \in (0, \tfrac12]`.
    seed : int
        Seed of the construction (best arms, owners, wrong advice); returns a :class:`PartitionedExpertise`.

    Notes
    -----
    Reconstructed: the ICML paper partitions the problem space into regions
    of differing expertise; the axis-aligned grid, Bernoulli rewards and the
    deterministic advice are this library's choices.

    Examples
    --------
    >>> inst = partitioned_expertise()
    >>> inst.means.shape, inst.advice.shape, sorted(inst.owner.tolist())
    ((4, 4), (4, 4), [0, 1, 2, 3])
    >>> inst.oracle_means().tolist()
    [0.8, 0.8, 0.8, 0.8]
    """
    p = check_int(n_features, "n_features")
    s = check_int(n_split_features, "n_split_features", maximum=p)
    m = check_int(cells_per_axis, "cells_per_axis", minimum=2)
    K = check_int(n_arms, "n_arms", minimum=2)
    N = check_int(n_experts, "n_experts", minimum=2)
    gap = check_float(gap, "gap", positive=True, maximum=0.5)
    C = m ** s
    if C < N:
        raise ValueError(f"n_experts must be <= the number of cells {C}, got {N}")
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    best = rng.integers(0, K, size=C)
    means = np.full((C, K), 0.5)
    means[np.arange(C), best] += gap
    owner = rng.permutation(np.arange(C) % N)
    wrong = (best + rng.integers(1, K, size=(N, C))) % K
    advice = np.where(owner[None, :] == np.arange(N)[:, None], best[None, :], wrong).astype(np.int64)
    return PartitionedExpertise("partitioned_expertise", p, s, m, means, advice, owner.astype(np.int64),
                                dict(n_features=p, n_split_features=s, cells_per_axis=m, n_arms=K, n_experts=N,
                                     gap=gap, seed=seed))


@dataclasses.dataclass(frozen=True, eq=False)
class ExpertAdviceResult:
    r"""Regret against the region-wise oracle, on a checkpoint grid.

    Attributes
    ----------
    checkpoints : ndarray of int
    regret : ndarray, shape (n_checkpoints, n_reps)
        :math:`\sum_{s \le t} \big(\mu^\star(x_s) - \mu(x_s, a_s)\big)`: oracle mean minus the mean
        of the arm played, both in the context of the round.
    method : str
    trees : HoeffdingTreeState or None
        The final trees (``expertise_trees``, ``global_thompson``), else ``None``.
    seed : int
    wall_time : float
    """

    checkpoints: np.ndarray
    regret: np.ndarray
    method: str
    trees: HoeffdingTreeState | None
    seed: int
    wall_time: float


def _check_run(instance, horizon, n_reps, rep_offset, checkpoints):
    if not isinstance(instance, PartitionedExpertise):
        raise TypeError(f"instance must be a PartitionedExpertise, got {type(instance).__name__}")
    T, n_reps = check_int(horizon, "horizon"), check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    ck = checkpoint_grid(T) if checkpoints is None else np.unique(np.asarray(checkpoints, dtype=np.int64))
    if ck.size == 0 or ck[0] < 1 or ck[-1] > T:
        raise ValueError(f"checkpoints must be a non-empty set of rounds in [1, {T}]")
    return T, n_reps, rep_offset, ck


def _drive(instance, T, n_reps, rep_offset, ck, seed, choose, update):
    seed_u = _random.seed_to_uint64(seed)
    p, N = instance.n_features, instance.n_experts
    oracle = instance.oracle_means()
    reps = np.arange(rep_offset, rep_offset + n_reps, dtype=np.uint64)
    jx, je = np.arange(p, dtype=np.uint64), np.arange(N, dtype=np.uint64)
    regret, out, ci = np.zeros(n_reps), np.zeros((ck.size, n_reps)), 0
    t0 = time.perf_counter()
    with np.errstate(over="ignore"):  # uint64 hashing wraps by design
        rk = _random.rep_key(np.asarray([seed_u], dtype=np.uint64), reps)
        lk = _random.stream_key(rk, _random.LEARNER_STREAM)
        for t in range(T):
            tt = np.uint64(t)
            key = _random.round_key(rk, tt)
            x = _random.uniform(key[:, None], jx[None, :])
            cell = instance.cell(x, check=False)
            z = normal_array(np, _random.round_key(lk, tt)[:, None], je[None, :])
            e = choose(x, z)
            arm = instance.advice[e, cell]
            mu = instance.means[cell, arm]
            y = (_random.uniform(key, np.uint64(p)) < mu).astype(np.float64)
            regret += oracle[cell] - mu
            update(e, x, y)
            if t + 1 == ck[ci]:
                out[ci] = regret
                ci += 1
                if ci == ck.size:
                    break
    return out, int(seed_u), time.perf_counter() - t0


def expertise_trees(instance: PartitionedExpertise, horizon: int, *, n_reps: int = 100, seed=0, rep_offset: int = 0,
                    checkpoints=None, max_depth: int = 3, n_bins: int = 16, grace_period: int = 200,
                    delta: float = 1e-7, tie_threshold: float = 0.05) -> ExpertAdviceResult:
    r"""Expertise trees: a Hoeffding regression tree per expert, Thompson sampling over the leaves.

    Parameters
    ----------
    instance : PartitionedExpertise
    horizon : int
    n_reps, seed, rep_offset
        As in :func:`expertlab.sim.run`.
    checkpoints : array of int, optional
        Rounds at which the regret is recorded (default a log-spaced grid).
    max_depth, n_bins, grace_period, delta, tie_threshold
        Settings of the trees (:func:`hoeffding_tree_config`; rewards lie in [0, 1]).

    Returns
    -------
    ExpertAdviceResult

    Notes
    -----
    Expert :math:`j`'s tree regresses the reward obtained when following
    :math:`j` on the context.  In round :math:`t` each tree routes
    :math:`x_t` to a leaf with count :math:`n_j` and mean :math:`\hat m_j`;
    the learner follows

    .. math::

        j_t = \arg\max_j \; \frac{n_j \hat m_j + 1/2}{n_j + 1} + \frac{z_{t,j}}{2\sqrt{n_j + 1}},
        \quad z_{t,j} \sim \mathcal N(0, 1)

    (:func:`leaf_thompson_scores`: Gaussian Thompson sampling as in [2]_,
    with the variance proxy :math:`\tfrac14` of rewards in
    :math:`[0, 1]`), plays the arm :math:`j_t` recommends and adds
    :math:`(x_t, r_t)` to tree :math:`j_t` only (:func:`hoeffding_tree_update`).

    Reconstructed relative to [1]_: the Gaussian leaf posterior with one
    prior pseudo-observation and a fixed variance proxy (the leaf variance
    is kept but not used: with the sample variance an expert whose first
    rewards were all zero is almost never tried again), and the histogram
    Hoeffding tree of :mod:`expertlab.bandits._hoeffding_tree`.  The paper's
    evidence is empirical (its experiments), not a regret theorem.

    [validated-rates]

    References
    ----------
    .. [1] A. Abels, T. Lenaerts, V. Trianni and A. Nowé, "Expertise Trees Resolve Knowledge Limitations in
       Collective Decision-Making", ICML 2023 (expertise trees; the nearest-neighbour approach; sections not
       re-checked).
    .. [2] S. Agrawal and N. Goyal, "Further optimal regret bounds for Thompson sampling", AISTATS 2013
       (Thompson sampling with Gaussian priors).

    Examples
    --------
    >>> inst = partitioned_expertise(gap=0.3)
    >>> tr = expertise_trees(inst, 5000, n_reps=8, seed=0, checkpoints=[5000])
    >>> th = global_thompson(inst, 5000, n_reps=8, seed=0, checkpoints=[5000])
    >>> bool(tr.regret[-1].mean() < th.regret[-1].mean())
    True
    """
    T, n_reps, rep_offset, ck = _check_run(instance, horizon, n_reps, rep_offset, checkpoints)
    cfg = hoeffding_tree_config(instance.n_features, n_bins=n_bins, max_depth=max_depth, grace_period=grace_period,
                                delta=delta, tie_threshold=tie_threshold, value_range=1.0)
    st = hoeffding_tree_init(cfg, n_reps, instance.n_experts)
    rows, cols = np.arange(n_reps)[:, None], np.arange(instance.n_experts)[None, :]
    last = {}

    def choose(x, z):
        last["leaves"] = leaves = hoeffding_tree_leaves(cfg, st, x)
        idx = (rows, cols, leaves)
        return np.argmax(leaf_thompson_scores(st.count[idx], st.mean[idx], z), axis=1)

    out, seed_u, wall = _drive(instance, T, n_reps, rep_offset, ck, seed, choose,
                               lambda e, x, y: hoeffding_tree_update(cfg, st, e, x, y, leaves=last["leaves"]))
    return ExpertAdviceResult(ck, out, "expertise_trees" if max_depth else "global_thompson", st, seed_u, wall)


def global_thompson(instance: PartitionedExpertise, horizon: int, *, n_reps: int = 100, seed=0, rep_offset: int = 0,
                    checkpoints=None) -> ExpertAdviceResult:
    r"""Thompson sampling over experts that ignores the context: one Gaussian posterior per expert.

    The same learner as :func:`expertise_trees` with trees of depth 0 (a
    single leaf each), the "global" baseline of [1]_; it competes with the
    best single expert, so its regret against the region-wise oracle grows
    linearly when no expert is accurate everywhere.

    [validated-rates]

    References
    ----------
    .. [1] A. Abels et al., ICML 2023 (see :func:`expertise_trees`).

    Examples
    --------
    >>> res = global_thompson(partitioned_expertise(), 500, n_reps=4, checkpoints=[500])
    >>> res.regret.shape, res.method
    ((1, 4), 'global_thompson')
    """
    return expertise_trees(instance, horizon, n_reps=n_reps, seed=seed, rep_offset=rep_offset,
                           checkpoints=checkpoints, max_depth=0)


def knn_experts(instance: PartitionedExpertise, horizon: int, *, k: int = 10, memory: int = 200, n_reps: int = 100,
                seed=0, rep_offset: int = 0, checkpoints=None) -> ExpertAdviceResult:
    r"""The nearest-neighbour baseline: each expert's value from the ``k`` nearest contexts where it was followed.

    Parameters
    ----------
    instance, horizon
        As in :func:`expertise_trees`.
    k : int
        Neighbours per estimate.
    memory : int
        Each expert keeps its last ``memory`` (context, reward) pairs (a ring buffer; ``memory >= k``).
    n_reps, seed, rep_offset, checkpoints
        As in :func:`expertise_trees`; returns an :class:`ExpertAdviceResult`.

    Notes
    -----
    Exploration rule (this library's choice, reconstructed): the
    :math:`n \le k` nearest stored contexts of expert :math:`j` (Euclidean)
    give a count and a mean, scored by the Gaussian Thompson draw of a tree
    leaf (:func:`leaf_thompson_scores`).  The bounded memory is a simplification
    (cost :math:`O(N \cdot \text{memory} \cdot p)` per round and replication).

    References
    ----------
    .. [1] A. Abels et al., ICML 2023, the nearest-neighbour approach (see :func:`expertise_trees`).

    Examples
    --------
    >>> knn_experts(partitioned_expertise(), 300, k=5, memory=50, n_reps=4, checkpoints=[300]).regret.shape
    (1, 4)
    """
    T, n_reps, rep_offset, ck = _check_run(instance, horizon, n_reps, rep_offset, checkpoints)
    k = check_int(k, "k")
    memory = check_int(memory, "memory", minimum=k)
    N, p = instance.n_experts, instance.n_features
    buf_x = np.full((n_reps, N, memory, p), np.nan)
    buf_y = np.zeros((n_reps, N, memory))
    filled = np.zeros((n_reps, N), np.int64)
    rr = np.arange(n_reps)

    def choose(x, z):
        d = ((buf_x - x[:, None, None, :]) ** 2).sum(axis=-1)
        d = np.where(np.isnan(d), np.inf, d)
        near = np.argpartition(d, k - 1, axis=-1)[..., :k]
        ok = np.isfinite(np.take_along_axis(d, near, axis=-1))
        yk = np.take_along_axis(buf_y, near, axis=-1)
        n = ok.sum(axis=-1).astype(np.float64)
        mean = np.where(ok, yk, 0.0).sum(axis=-1) / np.maximum(n, 1.0)
        return np.argmax(leaf_thompson_scores(n, mean, z), axis=1)

    def update(e, x, y):
        slot = filled[rr, e] % memory
        buf_x[rr, e, slot] = x
        buf_y[rr, e, slot] = y
        filled[rr, e] += 1

    out, seed_u, wall = _drive(instance, T, n_reps, rep_offset, ck, seed, choose, update)
    return ExpertAdviceResult(ck, out, "knn", None, seed_u, wall)


def exp4_experts(instance: PartitionedExpertise, horizon: int, *, eta: float | None = None, n_reps: int = 100,
                 seed=0, rep_offset: int = 0, checkpoints=None) -> ExpertAdviceResult:
    r"""Exp4 (:func:`expertlab.bandits.exp4`) on a partitioned instance, regret against the region-wise oracle.

    Exp4 uses only the advice, and the advice depends on the context only
    through its cell (equally likely cells), so the run is
    :func:`~expertlab.bandits.exp4` on :meth:`PartitionedExpertise.as_advice_instance`.

    Notes
    -----
    Exp4 reports the regret :math:`R^{\text{best}}_t` against the best single
    expert :math:`j^\star`; the regret against the oracle adds
    :math:`\sum_{s \le t} (\mu^\star(c_s) - \mu_{j^\star}(c_s))`, whose
    expectation :math:`t\,(\bar\mu^\star - \bar\mu_{j^\star})` (cell averages)
    is added here in place of its realisation (same mean, no extra noise).

    [validated-rates]

    Examples
    --------
    >>> inst = partitioned_expertise(gap=0.3)
    >>> res = exp4_experts(inst, 2000, n_reps=8, checkpoints=[2000])
    >>> bool(res.regret[-1].mean() > 0.5 * 0.3 * 0.75 * 2000)
    True
    """
    T, n_reps, rep_offset, ck = _check_run(instance, horizon, n_reps, rep_offset, checkpoints)
    adv = instance.as_advice_instance()
    res = exp4(adv, T, eta=eta, n_reps=n_reps, seed=seed, rep_offset=rep_offset, checkpoints=ck)
    comparator_gap = float(instance.oracle_means().mean() - adv.expert_values().max())
    regret = res.regret + ck[:, None] * comparator_gap
    return ExpertAdviceResult(ck, regret, "exp4", None, res.seed, res.wall_time)
