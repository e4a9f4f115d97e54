r"""The token-to-expert assignment problem, top-K routing and its dual function.

An :class:`AssignmentProblem` holds a score matrix ``s`` of shape
``(n_tokens, n_experts)``, the number ``k`` of experts each token is routed
to, and a capacity per expert.  Its linear-programming relaxation

.. math::

    \max_x \sum_{t,i} s_{t,i} x_{t,i} \quad\text{s.t.}\quad
    \sum_i x_{t,i} = k,\;\; \sum_t x_{t,i} \le C_i,\;\; 0 \le x_{t,i} \le 1

is solved exactly by :func:`expertlab.balance.solve_exact`.
:func:`top_k_route` is the routing rule of auxiliary-loss-free balancing
(top-K of ``s + b``) and :func:`dual_objective` the Lagrangian dual function
``g(p)`` whose subgradient steps it takes.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._validation import as_real_array, check_int

__all__ = ["AssignmentProblem", "top_k_route", "dual_objective"]


def _check_scores(scores, name: str = "scores", ndim: int | None = 2) -> np.ndarray:
    """Return ``scores`` as a finite float64 array of ``ndim`` dimensions (``None``: >= 1)."""
    if isinstance(scores, (str, bytes)) or not hasattr(scores, "__len__") and not hasattr(scores, "shape"):
        raise TypeError(f"{name} must be an array of shape (n_tokens, n_experts), got {type(scores).__name__}")
    arr = as_real_array(scores, name, np)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional (n_tokens, n_experts), got shape {arr.shape}")
    if arr.ndim < 1 or arr.shape[-1] < 1:
        raise ValueError(f"{name} must have at least one expert (last axis), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _check_k(k, n_experts: int) -> int:
    return check_int(k, "k", minimum=1, maximum=n_experts)


def _as_given(value, size: int) -> str:
    """``value`` as the user wrote it, for an error message (its size only when it is long)."""
    return repr(value) if size <= 64 else f"an array of {size} values"


def _check_capacity(capacity, n_tokens: int, n_experts: int, k: int) -> np.ndarray:
    """Capacity as a read-only (n_experts,) float64 array; ``None`` is the balanced ``N k / E``."""
    if capacity is None:
        cap = np.full(n_experts, n_tokens * k / n_experts)
    else:
        if isinstance(capacity, (bool, np.bool_)):
            raise TypeError(f"capacity must be a real number or an array of shape ({n_experts},), "
                            f"got {type(capacity).__name__}")
        cap = as_real_array(capacity, "capacity", np)
        if cap.ndim == 0:
            cap = np.full(n_experts, float(cap))
        elif cap.shape != (n_experts,):
            raise ValueError(f"capacity must be a scalar or have shape ({n_experts},) (one per expert), "
                             f"got shape {cap.shape}: capacity={_as_given(capacity, cap.size)}")
        if not np.all(np.isfinite(cap)):
            raise ValueError("capacity contains NaN or infinite values")
        if np.any(cap < 0):
            raise ValueError(f"capacity must be >= 0, got minimum {cap.min()}")
    need = n_tokens * k
    # an expert takes each token at most once, so only min(C_i, N) of its capacity is usable
    usable = np.minimum(cap, n_tokens).sum()
    if usable < need * (1.0 - 1e-12):
        raise ValueError(f"capacity cannot hold n_tokens * k = {need} assignments: "
                         f"sum of min(capacity, n_tokens) is {usable:g}")
    cap = cap.copy()
    cap.flags.writeable = False
    return cap


@dataclasses.dataclass(frozen=True, eq=False)
class AssignmentProblem:
    r"""Route each token to ``k`` experts under per-expert capacities.

    Parameters
    ----------
    scores : array_like, shape (n_tokens, n_experts)
        Finite router scores :math:`s_{t,i}` (affinities; larger is better).
        Stored as a read-only float64 copy.
    k : int
        Experts per token, ``1 <= k <= n_experts``.
    capacity : float or array_like of shape (n_experts,), optional
        Capacity :math:`C_i \ge 0` of each expert (a scalar is shared by all).
        The default is the balanced capacity :math:`C = N k / E`.  The
        capacities must hold every assignment: since an expert takes a token
        at most once, :math:`\sum_i \min(C_i, N) \ge N k` is required (it is
        also sufficient, by max-flow/min-cut on the bipartite network).

    Attributes
    ----------
    scores : ndarray, shape (n_tokens, n_experts)
    k : int
    capacity : ndarray, shape (n_experts,)
        Read-only float64 array.

    Notes
    -----
    The problem is the linear program

    .. math::

        \max_{x} \sum_{t,i} s_{t,i} x_{t,i} \quad\text{s.t.}\quad
        \sum_{i} x_{t,i} = k \;(t \le N), \qquad
        \sum_{t} x_{t,i} \le C_i \;(i \le E), \qquad 0 \le x_{t,i} \le 1 .

    Its constraint matrix is the incidence matrix of the bipartite graph
    tokens × experts (plus identity rows for the bounds), which is totally
    unimodular; so when every :math:`C_i` is an integer the LP has an
    integral optimal vertex, i.e. an optimal 0/1 routing.  The balanced
    default :math:`N k / E` need not be an integer: the LP is then solved
    with that fractional capacity and its optimum may be fractional (the
    0/1 routings satisfy the rounded-down capacities only when those still
    hold :math:`N k` assignments).

    References
    ----------
    .. [1] Han & Zhong, "A Theoretical Framework for Auxiliary-Loss-Free Load
       Balancing of Sparse Mixture-of-Experts", arXiv 2512.03915, primal
       assignment LP (Sec. 2; the section number is from the paper's
       formulation as summarised in the project notes).

    Examples
    --------
    >>> from expertlab.balance import AssignmentProblem
    >>> prob = AssignmentProblem([[1.0, 0.0], [0.5, 0.2]], k=1)
    >>> prob.n_tokens, prob.n_experts, prob.capacity.tolist()
    (2, 2, [1.0, 1.0])
    """

    scores: np.ndarray
    k: int
    capacity: np.ndarray | float | None = None

    def __post_init__(self):
        scores = _check_scores(self.scores, "scores", ndim=2)
        if scores.shape[0] < 1:
            raise ValueError(f"scores must have at least one token, got shape {scores.shape}")
        k = _check_k(self.k, scores.shape[1])
        cap = _check_capacity(self.capacity, scores.shape[0], scores.shape[1], k)
        scores = scores.copy()
        scores.flags.writeable = False
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "capacity", cap)

    @property
    def n_tokens(self) -> int:
        """Number of tokens ``N`` (rows of ``scores``)."""
        return int(self.scores.shape[0])

    @property
    def n_experts(self) -> int:
        """Number of experts ``E`` (columns of ``scores``)."""
        return int(self.scores.shape[1])

    @property
    def integral_capacity(self) -> bool:
        """Whether every capacity is an integer (then the LP optimum can be taken 0/1)."""
        return bool(np.all(self.capacity == np.round(self.capacity)))

    def __repr__(self) -> str:
        return (f"AssignmentProblem(n_tokens={self.n_tokens}, n_experts={self.n_experts}, k={self.k}, "
                f"{_capacity_text(self.capacity)})")


def _capacity_text(capacity: np.ndarray) -> str:
    """The capacities for a repr or a message, never mistaken for other values.

    ``capacity=4`` when every expert has 4; the values in expert order
    (``capacity=[5, 3, 4]``) when there are at most eight; else their number
    and range (``capacity: 64 values in [3, 5]``).

    Examples
    --------
    >>> import numpy as np
    >>> _capacity_text(np.array([4.0, 4.0])), _capacity_text(np.array([5.0, 3.0, 4.0]))
    ('capacity=4', 'capacity=[5, 3, 4]')
    >>> _capacity_text(np.arange(64.0).reshape(2, 32))
    'capacity: 64 values in [0, 63]'
    """
    cap = np.asarray(capacity)
    if cap.size and np.all(cap == cap.flat[0]):
        return f"capacity={cap.flat[0]:g}"
    if cap.size <= 8:
        def fmt(a):
            return "[" + ", ".join(fmt(x) for x in a) + "]" if np.ndim(a) else f"{a:g}"

        return f"capacity={fmt(cap)}"
    return f"capacity: {cap.size} values in [{cap.min():g}, {cap.max():g}]"


def biased_scores(s, bias):
    """``s + bias`` after checking that ``bias`` is finite and broadcasts to ``s`` without changing its shape."""
    if bias is None:
        return s
    b = _check_scores(bias, "bias", ndim=None)
    try:
        v = s + b
    except ValueError:
        raise ValueError(f"bias of shape {b.shape} does not broadcast to scores of shape {s.shape}") from None
    if v.shape != s.shape:
        raise ValueError(f"bias of shape {b.shape} would change the shape of scores {s.shape}")
    return v


def top_k_route(scores, bias=None, k: int = 1) -> np.ndarray:
    r"""Route each token to the ``k`` experts with the largest ``scores + bias``.

    Parameters
    ----------
    scores : array_like, shape (..., n_tokens, n_experts) or (..., n_experts)
        Finite scores; any leading axes (replications, batches) are kept.
    bias : array_like, broadcastable to ``scores``, optional
        Per-expert bias :math:`b`, typically of shape ``(n_experts,)`` or
        ``(n_reps, 1, n_experts)``.  ``None`` means zero.
    k : int
        Experts per token, ``1 <= k <= n_experts``.

    Returns
    -------
    assignment : ndarray of int8, shape of ``scores``
        ``1`` where the expert is chosen; every row (last axis) sums to ``k``.

    Notes
    -----
    Token :math:`t` goes to :math:`\operatorname{top-}k_i (s_{t,i} + b_i)`.
    Ties are broken towards the **lowest expert index**: with
    :math:`\tau_t` the k-th largest value of :math:`v_t = s_t + b`, every
    expert with :math:`v_{t,i} > \tau_t` is chosen, then the lowest-indexed
    experts with :math:`v_{t,i} = \tau_t` (exact floating-point equality of the
    sums) fill the remaining slots.  The k-th largest value is found with
    ``np.partition`` (linear time per row); no sort and no Python loop.

    References
    ----------
    .. [1] Wang et al., "Auxiliary-Loss-Free Load Balancing Strategy for
       Mixture-of-Experts", arXiv 2408.15664, Sec. 3 (biased top-K gating).

    Examples
    --------
    >>> from expertlab.balance import top_k_route
    >>> top_k_route([[0.3, 0.9, 0.3, 0.1]], [0.0, -1.0, 0.0, 0.0], k=2).tolist()
    [[1, 0, 1, 0]]
    """
    s = _check_scores(scores, "scores", ndim=None)
    n_experts = s.shape[-1]
    k = _check_k(k, n_experts)
    v = biased_scores(s, bias)
    tau = np.partition(v, n_experts - k, axis=-1)[..., n_experts - k : n_experts - k + 1]
    above = v > tau
    tied = v == tau
    room = k - above.sum(axis=-1, keepdims=True)
    take_tied = tied & (np.cumsum(tied, axis=-1) <= room)
    return (above | take_tied).astype(np.int8)


def dual_objective(scores, prices, k: int, capacity=None):
    r"""The Lagrangian dual function :math:`g(p)` of the assignment LP.

    Parameters
    ----------
    scores : array_like, shape (..., n_tokens, n_experts)
        Finite scores; leading axes (e.g. replications) broadcast with
        those of ``prices``.
    prices : array_like, shape (..., n_experts)
        Dual prices :math:`p` of the capacity constraints (the ALF-LB bias is
        :math:`b = -p`).
    k : int
        Experts per token.
    capacity : float or array_like of shape (n_experts,), optional
        Capacities :math:`C_i`; default the balanced :math:`N k / E`.

    Returns
    -------
    g : float or ndarray, shape (...)
        :math:`g(p)`; a Python float when there are no leading axes.

    Notes
    -----
    Dualising the capacity constraints (multipliers :math:`p \ge 0`) and
    minimising out the token constraints gives

    .. math::

        g(p) = \sum_t \operatorname{top-}k\operatorname{-sum}_i
        (s_{t,i} - p_i) + \sum_i C_i p_i ,

    the sum of the ``k`` largest entries of each row of :math:`s - p` plus
    the price of the capacity.  Weak duality: :math:`g(p) \ge \sum s x` for
    every :math:`p \ge 0` and every feasible :math:`x`; strong duality: the
    minimum over :math:`p \ge 0` equals the LP optimum.  When
    :math:`\sum_i C_i = N k` (balanced), :math:`g(p + c\mathbf 1) = g(p)` for
    every real :math:`c`.  The row sums use ``np.partition``, so the value is
    exact up to the rounding of the sums.

    References
    ----------
    .. [1] Han & Zhong, arXiv 2512.03915, the dual function of the assignment
       LP (ALF-LB as a dual subgradient method); standard LP duality.

    Examples
    --------
    >>> from expertlab.balance import dual_objective
    >>> dual_objective([[1.0, 0.0], [1.0, 0.0]], [0.5, 0.0], k=1, capacity=1)
    1.5
    """
    s = _check_scores(scores, "scores", ndim=None)
    if s.ndim < 2:
        raise ValueError(f"scores must have shape (..., n_tokens, n_experts), got {s.shape}")
    n_tokens, n_experts = s.shape[-2:]
    k = _check_k(k, n_experts)
    p = _check_scores(prices, "prices", ndim=None)
    if p.shape[-1] != n_experts:
        raise ValueError(f"prices must have last axis n_experts = {n_experts}, got shape {p.shape}")
    cap = _check_capacity(capacity, n_tokens, n_experts, k)
    v = s - p[..., None, :]
    top = np.partition(v, n_experts - k, axis=-1)[..., n_experts - k :].sum(axis=-1)
    g = top.sum(axis=-1) + p @ cap
    return float(g) if np.ndim(g) == 0 else g
