r"""Batches of assignment problems: one score matrix per replication or batch.

An :class:`AssignmentBatch` holds ``n_batch`` independent routing problems
of the same size (``n_tokens`` tokens, ``n_experts`` experts, ``k`` experts
per token) as one array of shape ``(n_batch, n_tokens, n_experts)``, with
capacities shared or per problem.  It is what Monte Carlo studies over many
batches of router scores pass around: :func:`~expertlab.balance.routing_fixed`
makes it the environment of deterministic ALF-LB
(:func:`~expertlab.balance.alf_lb` through :func:`expertlab.sim.run`, all
problems in one fused kernel; problem ``r`` is replication ``r``),
:func:`~expertlab.balance.solve_exact` solves each LP
and stacks the certificates in a :class:`BatchAssignmentResult`, and
:func:`~expertlab.balance.dual_objective` broadcasts over the leading axis.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._validation import as_real_array
from ._problem import AssignmentProblem, _as_given, _capacity_text, _check_capacity, _check_k, _check_scores

__all__ = ["AssignmentBatch", "BatchAssignmentResult"]


@dataclasses.dataclass(frozen=True, eq=False)
class AssignmentBatch:
    r"""``n_batch`` assignment problems of one size, stacked along a leading axis.

    Parameters
    ----------
    scores : array_like, shape (n_batch, n_tokens, n_experts)
        Finite scores; problem ``b`` is ``scores[b]``.  Stored as a read-only
        float64 copy.
    k : int
        Experts per token, ``1 <= k <= n_experts`` (shared).
    capacity : float, array_like of shape (n_experts,) or (n_batch, n_experts), optional
        Capacities, shared or one row per problem; default the balanced
        :math:`N k / E`.  Every row must satisfy the feasibility condition of
        :class:`~expertlab.balance.AssignmentProblem`,
        :math:`\sum_i \min(C_i, N) \ge N k`.

    Attributes
    ----------
    scores : ndarray, shape (n_batch, n_tokens, n_experts)
    k : int
    capacity : ndarray, shape (n_batch, n_experts)
        Read-only; one row per problem (equal rows when shared).

    Notes
    -----
    Problem ``b`` is the LP of :class:`~expertlab.balance.AssignmentProblem`
    with ``scores[b]`` and ``capacity[b]``; the problems share nothing but
    their sizes and ``k``.  :meth:`problem` returns one of them.

    References
    ----------
    .. [1] Han & Zhong, "A Theoretical Framework for Auxiliary-Loss-Free Load
       Balancing of Sparse Mixture-of-Experts", arXiv 2512.03915: the
       per-batch assignment LP (section number not re-checked).

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.balance import AssignmentBatch
    >>> batch = AssignmentBatch(np.zeros((3, 4, 2)), k=1)
    >>> len(batch), batch.n_tokens, batch.n_experts, batch.capacity.tolist()
    (3, 4, 2, [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]])
    >>> batch.problem(1)
    AssignmentProblem(n_tokens=4, n_experts=2, k=1, capacity=2)
    """

    scores: np.ndarray
    k: int
    capacity: np.ndarray | float | None = None

    def __post_init__(self):
        s = _check_scores(self.scores, "scores", ndim=None)
        if s.ndim != 3:
            raise ValueError(f"scores must have shape (n_batch, n_tokens, n_experts), got {s.shape}")
        n_batch, n_tokens, n_experts = s.shape
        if n_batch < 1 or n_tokens < 1:
            raise ValueError(f"scores must hold at least one problem and one token, got shape {s.shape}")
        k = _check_k(self.k, n_experts)
        cap = self.capacity
        if cap is not None and not isinstance(cap, (bool, np.bool_, str, bytes)) and np.ndim(cap) == 2:
            arr = as_real_array(cap, "capacity", np)
            if arr.shape != (n_batch, n_experts):
                raise ValueError(f"capacity must be a scalar or have shape ({n_experts},) or ({n_batch}, {n_experts}), "
                                 f"got shape {arr.shape}: capacity={_as_given(cap, arr.size)}")
            rows = []
            for b in range(n_batch):  # validation only: n_batch small checks of E numbers
                try:
                    rows.append(_check_capacity(arr[b], n_tokens, n_experts, k))
                except ValueError as exc:
                    raise ValueError(f"capacity of problem {b}: {exc}") from None
            full = np.stack(rows)
        else:
            row = _check_capacity(cap, n_tokens, n_experts, k)
            full = np.broadcast_to(row, (n_batch, n_experts)).copy()
        s = s.copy()
        for a in (s, full):
            a.flags.writeable = False
        object.__setattr__(self, "scores", s)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "capacity", full)

    @classmethod
    def from_problems(cls, problems) -> "AssignmentBatch":
        """Stack :class:`~expertlab.balance.AssignmentProblem` objects of equal size and ``k``."""
        problems = list(problems)
        if not problems or not all(isinstance(p, AssignmentProblem) for p in problems):
            raise TypeError("problems must be a non-empty sequence of AssignmentProblem objects")
        shapes = {p.scores.shape for p in problems}
        ks = {p.k for p in problems}
        if len(shapes) != 1 or len(ks) != 1:
            raise ValueError(f"problems must share (n_tokens, n_experts) and k; got shapes {sorted(shapes)} "
                             f"and k in {sorted(ks)}")
        return cls(np.stack([p.scores for p in problems]), problems[0].k,
                   capacity=np.stack([p.capacity for p in problems]))

    def __len__(self) -> int:
        return int(self.scores.shape[0])

    @property
    def n_batch(self) -> int:
        """Number of problems."""
        return len(self)

    @property
    def n_tokens(self) -> int:
        """Tokens per problem ``N``."""
        return int(self.scores.shape[1])

    @property
    def n_experts(self) -> int:
        """Experts ``E``."""
        return int(self.scores.shape[2])

    @property
    def shared_capacity(self) -> bool:
        """Whether every problem has the same capacity row."""
        return bool(np.all(self.capacity == self.capacity[:1]))

    @property
    def integral_capacity(self) -> bool:
        """Whether every capacity of every problem is an integer."""
        return bool(np.all(self.capacity == np.round(self.capacity)))

    def problem(self, b: int) -> AssignmentProblem:
        """Problem ``b`` as an :class:`~expertlab.balance.AssignmentProblem`."""
        if isinstance(b, (bool, np.bool_)) or not isinstance(b, (int, np.integer)):
            raise TypeError(f"b must be an integer, got {type(b).__name__}")
        if not -len(self) <= b < len(self):
            raise IndexError(f"problem index {b} out of range for a batch of {len(self)}")
        return AssignmentProblem(self.scores[b], self.k, capacity=self.capacity[b])

    def __repr__(self) -> str:
        return (f"AssignmentBatch(n_batch={self.n_batch}, n_tokens={self.n_tokens}, n_experts={self.n_experts}, "
                f"k={self.k}, {_capacity_text(self.capacity)})")


@dataclasses.dataclass(frozen=True, eq=False)
class BatchAssignmentResult:
    r"""Solutions of the problems of an :class:`AssignmentBatch`, stacked (leading axis: problem).

    Attributes
    ----------
    assignment : ndarray, shape (n_batch, n_tokens, n_experts)
        int8 0/1 when every solution is integral, else float64.
    objective, dual_objective : ndarray, shape (n_batch,)
    prices : ndarray, shape (n_batch, n_experts)
    token_duals : ndarray, shape (n_batch, n_tokens)
    bound_duals : ndarray, shape (n_batch, n_tokens, n_experts)
    primal_residual, dual_residual, complementary_slackness, duality_gap : ndarray, shape (n_batch,)
        The certificates of :class:`~expertlab.balance.AssignmentResult`, per problem.
    integral : ndarray of bool, shape (n_batch,)
    method : str
        The method used (``auto`` resolved per problem; the distinct methods
        joined by ``"+"`` if they differ).
    results : tuple of AssignmentResult
        The per-problem results the arrays were stacked from.
    """

    assignment: np.ndarray
    objective: np.ndarray
    dual_objective: np.ndarray
    prices: np.ndarray
    token_duals: np.ndarray
    bound_duals: np.ndarray
    primal_residual: np.ndarray
    dual_residual: np.ndarray
    complementary_slackness: np.ndarray
    duality_gap: np.ndarray
    integral: np.ndarray
    method: str
    results: tuple

    def __len__(self) -> int:
        return len(self.results)

    def __repr__(self) -> str:
        return (f"BatchAssignmentResult(n_batch={len(self)}, method={self.method!r}, "
                f"max |duality_gap|={np.abs(self.duality_gap).max():.3g}, "
                f"max primal_residual={self.primal_residual.max():.3g}, integral={bool(self.integral.all())})")


def stack_results(results) -> BatchAssignmentResult:
    """Stack per-problem :class:`~expertlab.balance.AssignmentResult` objects."""
    results = tuple(results)
    integral = np.array([r.integral for r in results])
    dtype = np.int8 if integral.all() else np.float64
    fields = {}
    for name in ("objective", "dual_objective", "primal_residual", "dual_residual", "complementary_slackness",
                 "duality_gap"):
        fields[name] = np.array([getattr(r, name) for r in results], dtype=np.float64)
    fields["assignment"] = np.stack([np.asarray(r.assignment, dtype=dtype) for r in results])
    for name in ("prices", "token_duals", "bound_duals"):
        fields[name] = np.stack([getattr(r, name) for r in results])
    methods = list(dict.fromkeys(r.method for r in results))
    for a in (*fields.values(), integral):
        a.flags.writeable = False
    return BatchAssignmentResult(integral=integral, method="+".join(methods), results=results, **fields)
