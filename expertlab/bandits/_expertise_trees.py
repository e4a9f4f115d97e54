r"""Expertise trees: which expert to follow, learnt region by region of the context space.

Contextual bandit with expert advice (Abels, Lenaerts, Trianni & Nowé,
ICML 2023): each round a context :math:`x_t \in [0, 1]^p` arrives, each of
:math:`N` experts recommends an arm, the learner follows one expert, plays
its arm and sees that arm's reward only.  The experts' accuracy depends on
the region of the context space, so the benchmark is the *region-wise
oracle*, which follows in every region the expert that is accurate there
(metric ``regret`` of the ``"advice"`` environments,
:func:`~expertlab.bandits.partitioned_expertise`).

The learners here are ``"advice"`` learners of the engine
(:func:`expertlab.sim.run`); they follow one expert
(:class:`~expertlab.bandits.AdviceChoice` names it) and draw their standard
normals ``0 .. N-1`` from the round's learner key.  Their array code runs
on any array-API namespace (the Hoeffding trees of
:func:`~expertlab.bandits.hoeffding_tree_update`; one-hot masks instead of
index writes off NumPy).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._backend import get_namespace
from .._validation import check_array_size, check_int
from ..sim._protocol import Learner
from ..sim._variates import normal_array
from ._advice import AdviceChoice
from ._hoeffding_tree import (HoeffdingTreeState, hoeffding_tree_config, hoeffding_tree_init, hoeffding_tree_leaves,
                              hoeffding_tree_update, leaf_thompson_scores)

__all__ = ["expertise_trees", "global_thompson", "knn_experts", "ExpertiseTreesState", "KnnExpertsState"]


class ExpertiseTreesState(NamedTuple):
    """State of :func:`expertise_trees`: the fields of a :class:`HoeffdingTreeState` (one tree per expert),
    then the round's context ``x`` ``(n_reps, n_features)`` and its leaf in every tree ``leaves``
    ``(n_reps, n_experts)`` (kept by ``act`` for ``update``)."""

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
    x: np.ndarray
    leaves: np.ndarray

    @property
    def trees(self) -> HoeffdingTreeState:
        """The trees, as a :class:`HoeffdingTreeState` (views of the same arrays)."""
        return HoeffdingTreeState(*self[:len(HoeffdingTreeState._fields)])


class KnnExpertsState(NamedTuple):
    """State of :func:`knn_experts`: per replication and expert a ring buffer of the last ``memory``
    contexts ``buf_x`` ``(n_reps, n_experts, memory, n_features)`` (NaN where empty) and rewards ``buf_y``,
    the number ``filled`` ``(n_reps, n_experts)`` of pairs ever stored, and the round's context ``x``."""

    buf_x: np.ndarray
    buf_y: np.ndarray
    filled: np.ndarray
    x: np.ndarray


def _box_spec(name, spec):
    p = spec.info.get("n_features")
    if p is None:
        raise ValueError(f"{name} needs contexts in [0, 1]^p (an environment with spec.n_features, e.g. "
                         f"partitioned_expertise()), got {spec!r}")
    return int(p), int(spec.n_experts)


def _ns(a):
    """The namespace of the array ``a``: NumPy itself for NumPy arrays."""
    return np if isinstance(a, np.ndarray) else get_namespace(a)


def _context(name, state_x, obs):
    xp = _ns(state_x)
    x = xp.asarray(obs.context, dtype=xp.float64)
    if x.shape != state_x.shape:
        raise ValueError(f"{name}: the context must have shape {state_x.shape}, got {x.shape}")
    adv = xp.asarray(obs.advice)
    if adv.shape[0] != x.shape[0]:
        raise ValueError(f"{name}: the advice must have one row per replication, got shape {adv.shape}")
    return xp, x, adv


def _normals(xp, keys, n_experts):
    return normal_array(xp, xp.asarray(keys)[:, None], xp.arange(n_experts, dtype=xp.uint64)[None, :])


def _follow(xp, adv, e):
    e = xp.astype(e, xp.int64)
    return AdviceChoice(xp.astype(xp.take_along_axis(adv, e[:, None], axis=1)[:, 0], xp.int64), e)


def expertise_trees(*, max_depth: int = 3, n_bins: int = 16, grace_period: int = 200, delta: float = 1e-7,
                    tie_threshold: float = 0.05) -> Learner:
    r"""Expertise trees: a Hoeffding regression tree per expert, Thompson sampling over the leaves.

    Parameters
    ----------
    max_depth, n_bins, grace_period, delta, tie_threshold
        Settings of the trees (:func:`hoeffding_tree_config`; rewards lie
        in [0, 1], contexts in :math:`[0, 1]^p`).

    Returns
    -------
    Learner
        An ``"advice"`` learner for environments with contexts in a box
        (``spec.n_features``), such as :func:`partitioned_expertise`; its
        state is an :class:`ExpertiseTreesState`.

    Notes
    -----
    Expert :math:`j`'s tree regresses the reward obtained when following
    :math:`j` on the context.  In round :math:`t` each tree routes
    :math:`x_t` to a leaf with count :math:`n_j` and mean :math:`\hat m_j`;
    the learner follows

    .. math::

        j_t = \arg\max_j \; \frac{n_j \hat m_j + 1/2}{n_j + 1} + \frac{z_{t,j}}{2\sqrt{n_j + 1}},
        \quad z_{t,j} \sim \mathcal N(0, 1)

    (``leaf_thompson_scores``: Gaussian Thompson sampling as in [2]_,
    with the variance proxy :math:`\tfrac14` of rewards in
    :math:`[0, 1]`), plays the arm :math:`j_t` recommends and adds
    :math:`(x_t, r_t)` to tree :math:`j_t` only (:func:`hoeffding_tree_update`,
    on a copy of the trees: ``update`` leaves its input state untouched,
    at the cost of copying the leaf histograms every round).

    Reconstructed relative to [1]_: the Gaussian leaf posterior with one
    prior pseudo-observation and a fixed variance proxy (the leaf variance
    is kept but not used: with the sample variance an expert whose first
    rewards were all zero is almost never tried again), and the histogram
    Hoeffding tree of :func:`~expertlab.bandits.hoeffding_tree_update`.  The paper's
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
    >>> from expertlab import sim
    >>> from expertlab.bandits import expertise_trees, global_thompson, partitioned_expertise
    >>> inst = partitioned_expertise(gap=0.3)
    >>> tr = sim.run(expertise_trees(), inst, horizon=5000, n_reps=8, seed=0, checkpoints=[5000])
    >>> th = sim.run(global_thompson(), inst, horizon=5000, n_reps=8, seed=0, checkpoints=[5000])
    >>> bool(tr.mean()[-1] < th.mean()[-1])
    True
    """
    base = hoeffding_tree_config(1, n_bins=n_bins, max_depth=max_depth, grace_period=grace_period, delta=delta,
                                 tie_threshold=tie_threshold, value_range=1.0)
    name = "expertise_trees" if max_depth else "global_thompson"

    def init(spec, n_reps, keys=None, xp=np):
        p, N = _box_spec(name, spec)
        n_reps = check_int(n_reps, "n_reps")
        cfg = base._replace(n_features=p)
        return ExpertiseTreesState(*hoeffding_tree_init(cfg, n_reps, N, xp=xp), x=xp.zeros((n_reps, p)),
                                   leaves=xp.zeros((n_reps, N), dtype=xp.int64))

    def act(state, obs, keys):
        xp, x, adv = _context(name, state.x, obs)
        cfg = base._replace(n_features=x.shape[1])
        leaves = hoeffding_tree_leaves(cfg, state.trees, x)
        n_reps, N = leaves.shape
        M = state.count.shape[2]
        # flat index of each tree's leaf into the (n_reps, n_trees, max_nodes) node arrays
        k = xp.reshape((xp.arange(n_reps * N, dtype=xp.int64) * M), (n_reps, N)) + leaves
        count, mean = (xp.reshape(xp.take(xp.reshape(a, (-1,)), xp.reshape(k, (-1,))), (n_reps, N))
                       for a in (state.count, state.mean))
        e = xp.argmax(leaf_thompson_scores(count, mean, _normals(xp, keys, N)), axis=1)
        return _follow(xp, adv, e), state._replace(x=x, leaves=leaves)

    def update(state, choice, reward, keys=None):
        cfg = base._replace(n_features=state.x.shape[1])
        trees = state.trees
        if isinstance(state.count, np.ndarray):  # NumPy trees are updated in place: update a copy
            trees = HoeffdingTreeState(*(a.copy() for a in trees))
        trees = hoeffding_tree_update(cfg, trees, choice.expert, state.x, reward, leaves=state.leaves)
        return ExpertiseTreesState(*trees, x=state.x, leaves=state.leaves)

    params = {} if not max_depth else dict(max_depth=base.max_depth, n_bins=base.n_bins,
                                           grace_period=base.grace_period, delta=base.delta,
                                           tie_threshold=base.tie_threshold)
    return Learner(name=name, feedback="advice", init=init, act=act, update=update, params=params,
                   doc=expertise_trees.__doc__)


def global_thompson() -> Learner:
    r"""Thompson sampling over experts that ignores the context: one Gaussian posterior per expert.

    Returns
    -------
    Learner
        :func:`expertise_trees` with trees of depth 0 (a single leaf each),
        registered under its own name: the "global" baseline of [1]_.  It
        competes with the best single expert, so its regret against the
        region-wise oracle grows linearly when no expert is accurate
        everywhere.

    Notes
    -----
    [validated-rates]

    References
    ----------
    .. [1] A. Abels et al., ICML 2023 (see :func:`expertise_trees`).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import global_thompson, partitioned_expertise
    >>> res = sim.run(global_thompson(), partitioned_expertise(), horizon=500, n_reps=4, checkpoints=[500])
    >>> res.metric("regret").shape, res.learner
    ((1, 4), 'global_thompson')
    """
    return expertise_trees(max_depth=0)._replace(doc=global_thompson.__doc__)


def knn_experts(k: int = 10, memory: int = 200) -> Learner:
    r"""The nearest-neighbour baseline: each expert's value from the ``k`` nearest contexts where it was followed.

    Parameters
    ----------
    k : int
        Neighbours per estimate.
    memory : int
        Each expert keeps its last ``memory`` (context, reward) pairs (a ring buffer; ``memory >= k``).

    Returns
    -------
    Learner
        An ``"advice"`` learner for environments with contexts in a box
        (``spec.n_features``); its state is a :class:`KnnExpertsState`.

    Notes
    -----
    Exploration rule (this library's choice, reconstructed): the
    :math:`n \le k` nearest stored contexts of expert :math:`j` (Euclidean)
    give a count and a mean, scored by the Gaussian Thompson draw of a tree
    leaf (``leaf_thompson_scores``).  The bounded memory is a simplification
    (cost :math:`O(N \cdot \text{memory} \cdot p)` per round and replication).

    References
    ----------
    .. [1] A. Abels et al., ICML 2023, the nearest-neighbour approach (see :func:`expertise_trees`).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import knn_experts, partitioned_expertise
    >>> res = sim.run(knn_experts(k=5, memory=50), partitioned_expertise(), horizon=300, n_reps=4,
    ...               checkpoints=[300])
    >>> res.metric("regret").shape
    (1, 4)
    """
    k = check_int(k, "k")
    memory = check_int(memory, "memory", minimum=k)
    check_array_size((memory,), "memory")

    def init(spec, n_reps, keys=None, xp=np):
        p, N = _box_spec("knn_experts", spec)
        n_reps = check_int(n_reps, "n_reps")
        check_array_size((n_reps, N, memory, p), ("n_reps", "memory"))
        return KnnExpertsState(buf_x=xp.full((n_reps, N, memory, p), xp.nan),
                               buf_y=xp.zeros((n_reps, N, memory), dtype=xp.float64),
                               filled=xp.zeros((n_reps, N), dtype=xp.int64), x=xp.zeros((n_reps, p)))

    def act(state, obs, keys):
        xp, x, adv = _context("knn_experts", state.x, obs)
        d = xp.sum((state.buf_x - x[:, None, None, :]) ** 2, axis=-1)
        d = xp.where(xp.isnan(d), xp.inf, d)
        # the k nearest slots, nearest first (a stable sort: among equal distances the lower slot)
        near = xp.argsort(d, axis=-1, stable=True)[..., :k]
        ok = xp.isfinite(xp.take_along_axis(d, near, axis=-1))
        yk = xp.take_along_axis(state.buf_y, near, axis=-1)
        n = xp.astype(xp.count_nonzero(ok, axis=-1), xp.float64)
        mean = xp.sum(xp.where(ok, yk, 0.0), axis=-1) / xp.maximum(n, 1.0)
        e = xp.argmax(leaf_thompson_scores(n, mean, _normals(xp, keys, n.shape[1])), axis=1)
        return _follow(xp, adv, e), state._replace(x=x)

    def update(state, choice, reward, keys=None):
        xp = _ns(state.buf_y)
        e = xp.astype(xp.asarray(choice.expert), xp.int64)
        n_reps, N, m = state.buf_y.shape
        at_expert = xp.arange(N, dtype=xp.int64)[None, :] == e[:, None]
        slot = xp.take_along_axis(state.filled, e[:, None], axis=1)[:, 0] % memory
        reward = xp.astype(xp.asarray(reward), state.buf_y.dtype)
        if xp is np:  # the same writes through index arrays, on copies (cheaper than masks over the buffers)
            rr = np.arange(n_reps)
            buf_x, buf_y, filled = state.buf_x.copy(), state.buf_y.copy(), state.filled.copy()
            buf_x[rr, e, slot] = state.x
            buf_y[rr, e, slot] = reward
            filled[rr, e] += 1
            return KnnExpertsState(buf_x, buf_y, filled, state.x)
        at = at_expert[:, :, None] & (xp.arange(m, dtype=xp.int64)[None, None, :] == slot[:, None, None])
        return KnnExpertsState(xp.where(at[..., None], state.x[:, None, None, :], state.buf_x),
                               xp.where(at, reward[:, None, None], state.buf_y),
                               state.filled + xp.astype(at_expert, xp.int64), state.x)

    return Learner(name="knn_experts", feedback="advice", init=init, act=act, update=update,
                   params={"k": k, "memory": memory}, doc=knn_experts.__doc__)
