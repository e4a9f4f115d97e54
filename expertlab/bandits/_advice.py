r"""Contextual bandits with expert advice: the environments (feedback kind ``"advice"``).

Each round, for all replications at once:

1. the environment draws a context and shows it with the experts' advice
   (``observe`` returns an :class:`Advice`): expert :math:`j` recommends the arm
   :math:`\xi_j(c_t)` (advice here is deterministic given the context, a
   one-hot :math:`\xi_{j,t}`);
2. the learner plays an arm (``act`` returns an :class:`AdviceChoice`, which
   may also name the expert it followed or the distributions it drew from);
3. the environment draws the played arm's Bernoulli reward and reveals it
   (``step``'s feedback: the rewards, float ``(n_reps,)``, larger is better).

The context, the rewards and the learner's draws are pure functions of the
engine's keys: an environment draws from the round's environment key, a
learner from its own round key, so a run is a pure function of
``(seed, replication, round, index)``.

Learner protocol for ``"advice"`` feedback
------------------------------------------
``init(spec, n_reps, keys, xp)``: ``spec.n_actions`` arms,
``spec.n_experts`` experts, and for contexts in a box ``spec.n_features``
(absent for contexts given by an index);
``act(state, advice, keys) -> (AdviceChoice(arm, expert, p, q), state)``;
``update(state, choice, reward, keys)``.  A learner that needs the
context or the advice in ``update`` keeps them in its state.

Metrics
-------
With :math:`\mu(c, a)` the mean reward of arm :math:`a` in context :math:`c`,
:math:`\mu^\star(c) = \max_j \mu(c, \xi_j(c))` the mean reward of the
*region-wise oracle* (the expert that is best in the context) and
:math:`j^\star` the best single expert (largest mean reward over contexts;
the first one on ties):

``regret``
    :math:`\sum_{s \le t} \big(\mu^\star(c_s) - \mu(c_s, a_s)\big)`, against the
    region-wise oracle; ``final["pulls"]``: pulls of each arm, int64
    ``(n_reps, n_arms)``.
``best_expert_regret``
    :math:`\sum_{s \le t} \big(\mu(c_s, \xi_{j^\star}(c_s)) - \mu(c_s, a_s)\big)`.
``reward``
    The realised cumulative reward.
``expected_regret``, ``expected_best_expert_regret`` (on request; learners that return ``p``)
    The same with :math:`\langle p_s, \mu(c_s, \cdot)\rangle` in place of
    :math:`\mu(c_s, a_s)`: the arm's draw is averaged out, the context's is not.
``oracle_follows`` (on request; learners that return ``expert`` or ``q``)
    Number of rounds in which the learner followed an expert that is best in
    the round's context: :math:`\sum_s \mathbb 1[\mu(c_s, \xi_{e_s}(c_s)) = \mu^\star(c_s)]`,
    or :math:`\sum_s \sum_j q_{s,j} \mathbb 1[\ldots]` for a learner that
    draws from a distribution :math:`q_s` over experts.

Sums over arms and experts run in index order, as in the compiled path of
:func:`expertlab.bandits.exp4`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, NamedTuple

import numpy as np

from .. import _random
from .._backend import get_namespace
from .._validation import MAX_ARRAY_ELEMENTS, as_real_array, check_array_size, check_float, check_int
from ..sim._arms import rowsum
from ..sim._protocol import EnvSpec, Environment, Metric

__all__ = ["Advice", "AdviceChoice", "AdviceInstance", "PartitionedExpertise", "contextual_policies",
           "partitioned_expertise"]


class Advice(NamedTuple):
    """What an ``"advice"`` learner sees before acting.

    Attributes
    ----------
    context : array
        ``(n_reps, n_features)`` float contexts in a box, or ``(n_reps,)``
        int64 context indices (:class:`AdviceInstance`).
    advice : array of int, shape (n_reps, n_experts)
        The arm each expert recommends in this round's context.
    """

    context: Any
    advice: Any


class AdviceChoice(NamedTuple):
    """An ``"advice"`` learner's action.

    Attributes
    ----------
    arm : array of int, shape (n_reps,)
        The arms played.
    expert : array of int, shape (n_reps,), or None
        The expert followed, for a learner that follows one expert's advice.
    p : array, shape (n_reps, n_arms), or None
        The distribution ``arm`` was drawn from (Exp4).
    q : array, shape (n_reps, n_experts), or None
        The distribution over experts the learner held (Exp4).
    """

    arm: Any
    expert: Any = None
    p: Any = None
    q: Any = None


def _ns(a):
    return get_namespace(a)


class _AdviceEnvironment(Environment):
    """Shared ``reset``/``observe``/``step`` and metrics; subclasses give the tables and the context draw."""

    default_metrics = ("regret", "best_expert_regret", "reward")

    # -- tables (NumPy, computed from means and advice) -----------------------
    def expert_means(self) -> np.ndarray:
        """``(n_experts, n_contexts)``: mean reward of following each expert in each context."""
        return np.take_along_axis(self.means.T, self._table, axis=0)

    def oracle_means(self) -> np.ndarray:
        """``(n_contexts,)``: mean reward of the region-wise oracle (the best expert of each context)."""
        return self.expert_means().max(axis=0)

    def expert_values(self) -> np.ndarray:
        """``(n_experts,)``: expected reward per round of each expert (contexts equally likely)."""
        return self.expert_means().mean(axis=1)

    def best_expert(self) -> int:
        """Index of the best single expert (the first one on ties)."""
        return int(np.argmax(self.expert_values()))

    def _tables(self):
        em = self.expert_means()
        orc = em.max(axis=0)
        return (np.ascontiguousarray(self.means, dtype=np.float64), np.ascontiguousarray(self._table),
                orc, np.ascontiguousarray(em[self.best_expert()]), (em == orc[None, :]).astype(np.float64))

    @property
    def n_arms(self) -> int:
        return self.means.shape[1]

    @property
    def n_experts(self) -> int:
        return self._table.shape[0]

    # -- the environment protocol --------------------------------------------
    def reset(self, n_reps, keys, xp):
        return tuple(xp.asarray(a) for a in self._tables())

    def observe(self, tables, t, keys):
        xp = _ns(keys)
        context, cell = self._context(keys, xp)
        return Advice(context, xp.take(tables[1], cell, axis=1).T)

    def step(self, tables, choice, t, keys):
        if not isinstance(choice, AdviceChoice):
            raise TypeError(f"an advice learner's act must return an AdviceChoice(arm, expert, p, q), got "
                            f"{type(choice).__name__}")
        xp = _ns(keys)
        n_reps = keys.shape[0]
        arm = choice.arm
        if tuple(arm.shape) != (n_reps,) or not xp.isdtype(arm.dtype, "integral"):
            raise ValueError(f"AdviceChoice.arm must be an integer array of shape ({n_reps},)")
        if bool(xp.any((arm < 0) | (arm >= self.n_arms))):
            raise ValueError(f"AdviceChoice.arm must lie in [0, {self.n_arms - 1}]")
        _check_choice(choice, n_reps, self.n_arms, self.n_experts, xp)
        _, cell = self._context(keys, xp)
        mu = tables[0][cell, arm]
        y = xp.astype(self._reward_uniform(keys, arm, xp) < mu, xp.float64)
        info = {"cell": cell, "arm": arm, "mu": mu, "y": y, "p": choice.p, "q": choice.q,
                "expert": choice.expert, "tables": tables}
        return tables, y, info

    def available_metrics(self) -> Mapping[str, Metric]:
        return {"regret": _regret_metric("regret", 2, self.n_arms),
                "best_expert_regret": _regret_metric("best_expert_regret", 3, None),
                "reward": Metric("reward", lambda n_reps, xp: xp.zeros(n_reps), lambda acc, info, t: acc + info["y"],
                                 lambda acc: acc),
                "expected_regret": _expected_metric("expected_regret", 2),
                "expected_best_expert_regret": _expected_metric("expected_best_expert_regret", 3),
                "oracle_follows": _follows_metric()}


def _check_choice(choice, n_reps, n_arms, n_experts, xp):
    """Shapes and ranges of the optional fields of an :class:`AdviceChoice` (the metrics index with them)."""
    e = choice.expert
    if e is not None:
        if tuple(getattr(e, "shape", ())) != (n_reps,) or not xp.isdtype(e.dtype, "integral"):
            raise ValueError(f"AdviceChoice.expert must be None or an integer array of shape ({n_reps},)")
        if bool(xp.any((e < 0) | (e >= n_experts))):
            raise ValueError(f"AdviceChoice.expert must lie in [0, {n_experts - 1}]")
    for field, width in (("p", n_arms), ("q", n_experts)):
        a = getattr(choice, field)
        if a is not None and tuple(getattr(a, "shape", ())) != (n_reps, width):
            raise ValueError(f"AdviceChoice.{field} must be None or an array of shape ({n_reps}, {width}), got "
                             f"{tuple(getattr(a, 'shape', ()))}")


def _table_arrays(means, table, table_name, n_cells, cells_name):
    """Check the arm means ``(n_cells, n_arms)`` in [0, 1] and the advice ``table`` ``(n_experts, n_cells)``
    (arms in range); return them as read-only float64 and int64 arrays."""
    m = np.array(as_real_array(means, "means"), dtype=np.float64)
    if m.ndim != 2 or m.shape[0] < 1 or m.shape[1] < 2:
        raise ValueError(f"means must have shape ({cells_name} >= 1, n_arms >= 2), got {m.shape}")
    if n_cells is not None and m.shape[0] != n_cells:
        raise ValueError(f"means must have one row per cell, {n_cells}, got shape {m.shape}")
    if not np.all(np.isfinite(m)) or np.any(m < 0.0) or np.any(m > 1.0):
        raise ValueError("means must hold Bernoulli means in [0, 1] (no NaN)")
    if isinstance(table, (str, bytes)):
        raise TypeError(f"{table_name} must be an integer array of arms, got {type(table).__name__}")
    try:
        t = np.asarray(table)
    except ValueError:  # ragged nested sequences
        raise TypeError(f"{table_name} must be a (rectangular) integer array of arms") from None
    if t.dtype.kind not in "iu":
        raise TypeError(f"{table_name} must be an integer array of arms, got dtype {t.dtype}")
    if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] != m.shape[0]:
        raise ValueError(f"{table_name} must have shape (n_experts >= 1, {m.shape[0]}), got {t.shape}")
    if np.any(t < 0) or np.any(t >= m.shape[1]):
        raise ValueError(f"{table_name} must hold arms in [0, {m.shape[1] - 1}]")
    m, t = np.ascontiguousarray(m), np.ascontiguousarray(t, dtype=np.int64)
    m.flags.writeable = False
    t.flags.writeable = False
    return m, t


def _regret_metric(name, row, n_arms) -> Metric:
    def init(n_reps, xp):
        return (xp.zeros(n_reps), xp.zeros((n_reps, n_arms), dtype=xp.int64) if n_arms else None)

    def update(acc, info, t):
        cum, pulls = acc
        if pulls is not None:
            xp = _ns(cum)
            pulls = pulls + xp.astype(xp.arange(n_arms)[None, :] == info["arm"][:, None], pulls.dtype)
        return (cum + (info["tables"][row][info["cell"]] - info["mu"]), pulls)

    fin = (lambda acc: {"pulls": acc[1]}) if n_arms else None
    return Metric(name, init, update, lambda acc: acc[0], fin)


def _expected_metric(name, row) -> Metric:
    def update(acc, info, t):
        p = info["p"]
        if p is None:
            raise ValueError(f"metric {name!r} needs the arm distribution p, and this learner's act returns "
                             "AdviceChoice(arm, p=None)")
        xp = _ns(p)
        means = info["tables"][0]
        return acc + (info["tables"][row][info["cell"]] - rowsum(xp, p * xp.take(means, info["cell"], axis=0)))

    return Metric(name, lambda n_reps, xp: xp.zeros(n_reps), update, lambda acc: acc)


def _follows_metric() -> Metric:
    def update(acc, info, t):
        accurate = info["tables"][4]  # (n_experts, n_contexts), 1.0 where the expert is best in the context
        cell = info["cell"]
        if info["q"] is not None:
            xp = _ns(info["q"])
            return acc + rowsum(xp, info["q"] * xp.take(accurate, cell, axis=1).T)
        if info["expert"] is not None:
            return acc + accurate[info["expert"], cell]
        raise ValueError("metric 'oracle_follows' needs the expert followed or the distribution q over experts, "
                         "and this learner's act returns neither")

    return Metric("oracle_follows", lambda n_reps, xp: xp.zeros(n_reps), update, lambda acc: acc)


# --------------------------------------------------------------------------
# contexts given by an index


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class AdviceInstance(_AdviceEnvironment):
    r"""Finitely many contexts, arm means per context and expert policies (feedback ``"advice"``).

    Attributes
    ----------
    name : str
    means : ndarray, shape (n_contexts, n_arms)
        ``means[c, a]``: mean (Bernoulli) reward of arm ``a`` in context ``c``.
    policies : ndarray of int, shape (n_experts, n_contexts)
        Expert ``j`` recommends ``policies[j, c]`` in context ``c``.
    params : mapping

    Notes
    -----
    Draw layout of round ``t`` (environment key :math:`k_t`): the context is
    :math:`c_t = \lfloor C\, u(k_t, K) \rfloor` (uniform over the ``C``
    contexts), the reward of arm ``a`` is :math:`\mathbb 1[u(k_t, a) < \mu(c_t, a)]`.
    The observation's ``context`` is the index :math:`c_t`.  Metrics:
    ``env.available_metrics()`` (``regret`` against the best expert of
    each context, ``best_expert_regret``, ``reward``; on request
    ``expected_regret``, ``expected_best_expert_regret``, ``oracle_follows``).
    """

    name: str
    means: np.ndarray
    policies: np.ndarray
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str, got {type(self.name).__name__}")
        means, policies = _table_arrays(self.means, self.policies, "policies", None, "n_contexts")
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "policies", policies)

    @property
    def _table(self):
        return self.policies

    @property
    def n_contexts(self) -> int:
        return self.means.shape[0]

    @property
    def spec(self) -> EnvSpec:
        return EnvSpec(feedback="advice", unit="round", n_actions=self.n_arms,
                       info={"n_experts": self.n_experts, "n_contexts": self.n_contexts})

    def _context(self, keys, xp):
        C, K = self.means.shape
        c = xp.astype(_random.uniform(keys, np.uint64(K)) * C, xp.int64)
        c = xp.minimum(c, C - 1)
        return c, c

    def _reward_uniform(self, keys, arm, xp):
        return _random.uniform(keys, xp.astype(arm, xp.uint64))


def contextual_policies(n_contexts: int = 4, n_arms: int = 3, n_experts: int = 8, *, gap: float = 0.2,
                        seed: int = 0) -> AdviceInstance:
    r"""A contextual instance: in each context one arm has mean :math:`\tfrac12 + \Delta`, the others :math:`\tfrac12`.

    Expert 0 is the optimal policy; the other ``n_experts - 1`` are random
    policies (a fixed NumPy generator seeded by ``seed`` builds the
    instance; the runs draw from the engine's keys), forced to differ from
    the optimal one in at least one context.  Expert 0 is then both the best
    single expert and the region-wise oracle, so ``regret`` and
    ``best_expert_regret`` coincide.

    Parameters
    ----------
    n_contexts, n_arms, n_experts : int
    gap : float
        :math:`\Delta \in (0, \tfrac12]`.
    seed : int
        Seed of the construction.

    Returns
    -------
    AdviceInstance

    Examples
    --------
    >>> inst = contextual_policies(4, 3, 8, gap=0.2)
    >>> inst.means.shape, inst.policies.shape, inst.best_expert()
    ((4, 3), (8, 4), 0)
    """
    C = check_int(n_contexts, "n_contexts")
    K = check_int(n_arms, "n_arms", minimum=2)
    N = check_int(n_experts, "n_experts", minimum=2)
    gap = check_float(gap, "gap", positive=True, maximum=0.5)
    check_array_size((C, max(N, K)), ("n_contexts", "n_arms", "n_experts"))
    rng = np.random.default_rng(check_int(seed, "seed", minimum=0))
    best = rng.integers(0, K, size=C)
    means = np.full((C, K), 0.5)
    means[np.arange(C), best] += gap
    pol = rng.integers(0, K, size=(N, C))
    pol[0] = best
    for j in range(1, N):
        if np.array_equal(pol[j], best):
            pol[j, 0] = (best[0] + 1) % K
    return AdviceInstance("contextual_policies", means, pol.astype(np.int64),
                          dict(n_contexts=C, n_arms=K, n_experts=N, gap=gap, seed=seed))


# --------------------------------------------------------------------------
# contexts in a box, expertise by region


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class PartitionedExpertise(_AdviceEnvironment):
    r"""Contexts uniform on :math:`[0, 1]^p`, a grid of cells (:func:`partitioned_expertise`); feedback ``"advice"``.

    Attributes
    ----------
    name : str
    n_features, n_split_features, cells_per_axis : int
    means : ndarray, shape (n_cells, n_arms)
        Mean (Bernoulli) reward of arm ``a`` in cell ``c``.
    advice : ndarray of int, shape (n_experts, n_cells)
        Expert ``j``'s arm in each cell.
    owner : ndarray of int, shape (n_cells,)
        The expert that recommends the best arm of each cell.
    params : mapping

    Notes
    -----
    Draw layout of round ``t`` (environment key :math:`k_t`): the context is
    :math:`x_{t,i} = u(k_t, i)`, :math:`i < p`; the reward of arm ``a`` is
    :math:`\mathbb 1[u(k_t, p) < \mu(\mathrm{cell}(x_t), a)]`.  The observation's
    ``context`` is :math:`x_t`, shape ``(n_reps, p)``; the learner is not told
    the cells.  Metrics: ``env.available_metrics()`` (``regret``
    against the region-wise oracle, ``best_expert_regret``, ``reward``; on
    request ``expected_regret``, ``expected_best_expert_regret``,
    ``oracle_follows``).
    """

    name: str
    n_features: int
    n_split_features: int
    cells_per_axis: int
    means: np.ndarray
    advice: np.ndarray
    owner: np.ndarray
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str, got {type(self.name).__name__}")
        p = check_int(self.n_features, "n_features")
        check_array_size((p,), "n_features")
        s = check_int(self.n_split_features, "n_split_features", maximum=p)
        m = check_int(self.cells_per_axis, "cells_per_axis", minimum=2)
        n_cells = _n_cells(m, s)
        means, advice = _table_arrays(self.means, self.advice, "advice", n_cells, "n_cells")
        try:
            owner = np.asarray(self.owner)
        except ValueError:
            raise TypeError("owner must be a 1-D integer array") from None
        if owner.dtype.kind not in "iu" or owner.shape != (n_cells,):
            raise ValueError(f"owner must be an integer array of shape ({n_cells},), got {owner.dtype} {owner.shape}")
        N = advice.shape[0]
        if np.any(owner < 0) or np.any(owner >= N):
            raise ValueError(f"owner must hold experts in [0, {N - 1}]")
        owner = np.ascontiguousarray(owner, dtype=np.int64)
        owner.flags.writeable = False
        for field, value in (("n_features", p), ("n_split_features", s), ("cells_per_axis", m), ("means", means),
                             ("advice", advice), ("owner", owner)):
            object.__setattr__(self, field, value)

    @property
    def _table(self):
        return self.advice

    @property
    def spec(self) -> EnvSpec:
        return EnvSpec(feedback="advice", unit="round", n_actions=self.n_arms,
                       info={"n_experts": self.n_experts, "n_features": self.n_features})

    def cell(self, x, *, check: bool = True):
        """Cell index of contexts ``x``, shape ``(..., n_features)``, in :math:`[0, 1]` (``check=False``: trusted)."""
        if check:
            x = np.asarray(x, dtype=np.float64)
            if x.ndim < 1 or x.shape[-1] != self.n_features:
                raise ValueError(f"x must have shape (..., {self.n_features}), got {x.shape}")
            if not np.all(np.isfinite(x)) or np.any(x < 0) or np.any(x > 1):
                raise ValueError("x must be finite and lie in [0, 1]")
        xp = _ns(x)
        m = self.cells_per_axis
        out = None
        for i in range(self.n_split_features):
            k = xp.minimum(xp.astype(x[..., i] * m, xp.int64), m - 1) * (m ** i)
            out = k if out is None else out + k
        return out

    def _context(self, keys, xp):
        j = xp.arange(self.n_features, dtype=xp.uint64)
        x = _random.uniform(keys[:, None], j[None, :])
        return x, self.cell(x, check=False)

    def _reward_uniform(self, keys, arm, xp):
        return _random.uniform(keys, np.uint64(self.n_features))


def _n_cells(cells_per_axis, n_split_features):
    """``cells_per_axis ** n_split_features``, refused (before any table is allocated) above the array size limit."""
    n = 1
    for _ in range(n_split_features):  # at most 32 steps: cells_per_axis >= 2
        n *= cells_per_axis
        if n > MAX_ARRAY_ELEMENTS:
            raise ValueError(f"cells_per_axis, n_split_features too large: {cells_per_axis}**{n_split_features} "
                             f"cells, more than the limit of {MAX_ARRAY_ELEMENTS:,} table entries")
    return n


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
        Seed of the construction (best arms, owners, wrong advice).

    Returns
    -------
    PartitionedExpertise
        An environment with feedback ``"advice"``.

    Notes
    -----
    Reconstructed: the ICML paper of Abels et al. (2023) partitions the
    problem space into regions of differing expertise; the axis-aligned
    grid, Bernoulli rewards and the deterministic advice are this library's
    choices.

    Examples
    --------
    >>> inst = partitioned_expertise()
    >>> inst.means.shape, inst.advice.shape, sorted(inst.owner.tolist())
    ((4, 4), (4, 4), [0, 1, 2, 3])
    >>> inst.oracle_means().tolist()
    [0.8, 0.8, 0.8, 0.8]
    """
    p = check_int(n_features, "n_features")
    check_array_size((p,), "n_features")
    s = check_int(n_split_features, "n_split_features", maximum=p)
    m = check_int(cells_per_axis, "cells_per_axis", minimum=2)
    K = check_int(n_arms, "n_arms", minimum=2)
    N = check_int(n_experts, "n_experts", minimum=2)
    gap = check_float(gap, "gap", positive=True, maximum=0.5)
    C = _n_cells(m, s)
    check_array_size((max(N, K), C), ("n_experts", "n_arms", "cells_per_axis", "n_split_features"))
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
