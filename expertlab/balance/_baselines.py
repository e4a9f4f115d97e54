r"""Routing baselines: auxiliary balancing loss, BASE layers, Sinkhorn routing, expert choice.

* :func:`aux_loss` — the Switch/GShard auxiliary load-balancing loss and its
  analytic gradient with respect to the router logits.
* :func:`base_route` — BASE layers: the exact balanced assignment
  (:func:`expertlab.balance.solve_exact`).
* :func:`sinkhorn_route` — S-BASE: log-domain Sinkhorn balancing of
  :math:`\exp(s/\tau)`, then top-k of the balanced plan.
* :func:`expert_choice_route` — every expert picks its top-C tokens.

All routing functions return a :class:`RouteResult` (Sinkhorn a
:class:`SinkhornResult` with the plan and its marginal errors).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._repr import short_repr
from .._validation import check_float, check_in, check_int
from ._exact import METHODS, solve_exact
from ._problem import AssignmentProblem, _check_k, _check_scores, top_k_route

__all__ = [
    "AuxLossResult",
    "RouteResult",
    "SinkhornResult",
    "aux_loss",
    "base_route",
    "expert_choice_route",
    "sinkhorn_route",
]


def _scores_3d(scores, name="scores"):
    s = _check_scores(scores, name, ndim=None)
    if s.ndim < 2 or s.shape[-2] < 1:
        raise ValueError(f"{name} must have shape (..., n_tokens, n_experts) with n_tokens >= 1, got {s.shape}")
    return s


def _scalar(a):
    return float(a) if np.ndim(a) == 0 else a


def _readonly(*arrays):
    for a in arrays:
        a.flags.writeable = False


# -- auxiliary loss -----------------------------------------------------------------


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class AuxLossResult:
    r"""Auxiliary balancing loss, its gradient and the two per-expert factors.

    Attributes
    ----------
    loss : float or ndarray, shape (...)
        :math:`L = E \sum_i f_i P_i`.
    grad : ndarray, shape (..., n_tokens, n_experts)
        :math:`\partial L / \partial z` with :math:`f` held constant.
    fraction : ndarray, shape (..., n_experts)
        :math:`f_i`, the fraction of tokens whose top-k contains expert
        :math:`i` (sums to ``k``).
    mean_prob : ndarray, shape (..., n_experts)
        :math:`P_i`, the mean router probability (sums to 1).
    """

    loss: float | np.ndarray
    grad: np.ndarray
    fraction: np.ndarray
    mean_prob: np.ndarray


def aux_loss(logits, k: int = 1) -> AuxLossResult:
    r"""Switch/GShard auxiliary load-balancing loss and its gradient.

    Parameters
    ----------
    logits : array_like, shape (..., n_tokens, n_experts)
        Finite router logits :math:`z_{t,i}`; leading axes are batches.
    k : int
        Experts per token used to count the dispatch fractions.

    Returns
    -------
    AuxLossResult

    Notes
    -----
    With :math:`p_t = \operatorname{softmax}(z_t)`,

    .. math::

        f_i = \frac1N \sum_t \mathbb 1[i \in \operatorname{top-}k(z_t)],\qquad
        P_i = \frac1N \sum_t p_{t,i},\qquad L = E \sum_i f_i P_i .

    :math:`f` is piecewise constant in :math:`z` and treated as a constant
    (no gradient flows through the dispatch), as in the papers, so

    .. math::

        \frac{\partial L}{\partial z_{t,j}} = \frac{E}{N}\, p_{t,j}
        \Bigl(f_j - \sum_i f_i p_{t,i}\Bigr) ,

    which is the true derivative wherever the top-k sets do not change.
    Uniform routing gives :math:`L = k` (1 for Switch's top-1); the loss
    coefficient :math:`\alpha` is left to the caller.  For ``k > 1``
    :math:`f` counts all ``k`` choices of a token (GShard counts only the
    first choice).  Top-k ties go to the lower expert index.

    References
    ----------
    .. [1] Fedus, Zoph & Shazeer, "Switch Transformers", JMLR 2022 (arXiv
       2101.03961), Sec. 2.2, Eqs. (4)-(6) (section not re-checked).
    .. [2] Lepikhin et al., "GShard", arXiv 2006.16668, Sec. 2.2, the
       auxiliary loss :math:`\ell_{aux}` (section not re-checked).

    Examples
    --------
    >>> from expertlab.balance import aux_loss
    >>> res = aux_loss([[0.0, 0.0], [0.0, 0.0]], k=1)
    >>> res.fraction.tolist(), res.mean_prob.tolist(), res.loss
    ([1.0, 0.0], [0.5, 0.5], 1.0)
    """
    z = _scores_3d(logits, "logits")
    n_tokens, n_experts = z.shape[-2:]
    k = _check_k(k, n_experts)
    from scipy.special import logsumexp  # imported here: scipy is slow to import

    p = np.exp(z - logsumexp(z, axis=-1, keepdims=True))
    f = top_k_route(z, k=k).mean(axis=-2, dtype=np.float64)
    mean_p = p.mean(axis=-2)
    loss = n_experts * np.einsum("...i,...i->...", f, mean_p)
    fp = np.einsum("...ti,...i->...t", p, f)[..., None]
    grad = (n_experts / n_tokens) * p * (f[..., None, :] - fp)
    _readonly(grad, f, mean_p)
    return AuxLossResult(loss=_scalar(loss), grad=grad, fraction=f, mean_prob=mean_p)


# -- routing results ----------------------------------------------------------------


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class RouteResult:
    r"""A routing and its balance summary.

    Attributes
    ----------
    assignment : ndarray of int8, shape (..., n_tokens, n_experts)
    loads : ndarray of int64, shape (..., n_experts)
    score : float or ndarray, shape (...)
        :math:`\sum_{t,i} s_{t,i} x_{t,i}`.
    max_vio : float or ndarray, shape (...)
        :math:`(\max_i \text{load}_i - \bar\ell)/\bar\ell` with
        :math:`\bar\ell` the mean load over experts.
    n_unrouted : int or ndarray, shape (...)
        Tokens routed to no expert (only expert choice has them).
    method : str
    """

    assignment: np.ndarray
    loads: np.ndarray
    score: float | np.ndarray
    max_vio: float | np.ndarray
    n_unrouted: int | np.ndarray
    method: str

    def plot(self, ax=None, *, title: str | None = None):
        """Tokens per expert, with the balanced load (the mean over experts) as a dashed line.

        For batched routings the bars are the mean over batches and the
        whiskers run from the smallest to the largest load.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Default: new axes on a standalone figure (no pyplot state).
        title : str, optional
            Default: the method and the MaxVio.

        Returns
        -------
        matplotlib.axes.Axes

        Examples
        --------
        >>> from expertlab.balance import base_route
        >>> res = base_route([[1.0, 0.0], [0.9, 0.0], [0.8, 0.1], [0.7, 0.2]])
        >>> ax = res.plot()
        >>> [float(b.get_height()) for b in ax.patches]
        [2.0, 2.0]
        """
        from ..sim._plots import plot_loads

        if title is None:
            vio = np.asarray(self.max_vio, dtype=np.float64)
            title = f"{self.method}: MaxVio {float(vio.mean()):.3g}" + (" (mean)" if vio.ndim else "")
        return plot_loads(self.loads, ax=ax, title=title)


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class SinkhornResult(RouteResult):
    r"""Sinkhorn routing: the routing of :class:`RouteResult` plus the balanced plan.

    Attributes
    ----------
    plan : ndarray, shape (..., n_tokens, n_experts)
        :math:`\pi = \operatorname{diag}(e^{f}) e^{s/\tau}
        \operatorname{diag}(e^{g})`.
    plan_value : float or ndarray, shape (...)
        :math:`\sum s \pi`.
    row_error, col_error : float or ndarray, shape (...)
        Largest absolute error of the row sums (target ``k``) and column
        sums (target ``N k / E``).
    n_iter : int
        Sinkhorn iterations run (each one row and one column update).
    converged : bool
        Whether both errors fell below ``tol`` in every batch.
    """

    plan: np.ndarray = None
    plan_value: float | np.ndarray = None
    row_error: float | np.ndarray = None
    col_error: float | np.ndarray = None
    n_iter: int = 0
    converged: bool = False


def _summary(s, x):
    x = x.astype(np.int8)
    loads = x.sum(axis=-2, dtype=np.int64)
    mean = loads.mean(axis=-1)
    max_vio = np.divide(loads.max(axis=-1) - mean, mean, out=np.zeros(mean.shape), where=mean > 0)
    score = np.einsum("...ti,...ti->...", s, x.astype(np.float64))
    unrouted = (x.sum(axis=-1) == 0).sum(axis=-1)
    _readonly(x, loads)
    n_un = int(unrouted) if np.ndim(unrouted) == 0 else unrouted
    return {"assignment": x, "loads": loads, "score": _scalar(score), "max_vio": _scalar(max_vio), "n_unrouted": n_un}


# -- BASE layers --------------------------------------------------------------------


def base_route(scores, k: int = 1, *, method: str = "auto") -> RouteResult:
    r"""BASE-layer routing: the exact balanced assignment.

    Parameters
    ----------
    scores : array_like, shape (..., n_tokens, n_experts)
        Finite token-expert affinities; leading axes are solved one by one.
    k : int
        Experts per token.
    method : {"auto", "highs", "assignment", "flow", "cvxpy"}
        Passed to :func:`~expertlab.balance.solve_exact`.

    Returns
    -------
    RouteResult

    Notes
    -----
    Solves :math:`\max \sum s x` with :math:`\sum_i x_{t,i} = k`,
    :math:`\sum_t x_{t,i} \le \lceil N k / E \rceil`, :math:`x \in \{0,1\}`.
    The capacity is rounded **up** to an integer so the LP vertex is a 0/1
    routing (total unimodularity).  When :math:`E` divides :math:`N k` every
    expert gets exactly :math:`N k / E` tokens, as in BASE layers; otherwise
    loads are at most :math:`\lceil N k / E \rceil`, so
    ``max_vio <= ceil(Nk/E) / (Nk/E) - 1``.  BASE uses
    ``k = 1``; ``k > 1`` is the natural generalisation.

    References
    ----------
    .. [1] Lewis et al., "BASE Layers: Simplifying Training of Large, Sparse
       Models", ICML 2021 (arXiv 2103.16716), Sec. 3, balanced assignment
       (section not re-checked).

    Examples
    --------
    >>> from expertlab.balance import base_route
    >>> res = base_route([[3.0, 2.5], [2.0, 0.0]], k=1)
    >>> res.assignment.tolist(), res.score
    ([[0, 1], [1, 0]], 4.5)
    """
    s = _scores_3d(scores)
    n_tokens, n_experts = s.shape[-2:]
    k = _check_k(k, n_experts)
    check_in(method, "method", METHODS)
    cap = math.ceil(n_tokens * k / n_experts)
    s3 = s.reshape(-1, n_tokens, n_experts)
    x = np.stack([np.asarray(solve_exact(AssignmentProblem(s3[r], k, capacity=cap), method=method).assignment)
                  for r in range(s3.shape[0])]).reshape(s.shape)
    return RouteResult(method="base", **_summary(s, x))


# -- Sinkhorn -----------------------------------------------------------------------


def sinkhorn_route(scores, k: int = 1, *, n_iter: int = 1000, temperature: float = 1.0,
                   tol: float = 1e-10) -> SinkhornResult:
    r"""S-BASE routing: log-domain Sinkhorn balancing, then top-k of the plan.

    Parameters
    ----------
    scores : array_like, shape (..., n_tokens, n_experts)
        Finite scores :math:`s`; leading axes are independent batches.
    k : int
        Experts per token (row sums of the plan).
    n_iter : int
        Largest number of Sinkhorn iterations, ``>= 1``.
    temperature : float
        Entropic temperature :math:`\tau > 0`.
    tol : float
        Stop when every row and column sum is within ``tol`` of its target
        (checked after each iteration); ``0`` runs all ``n_iter``.

    Returns
    -------
    SinkhornResult

    Notes
    -----
    With potentials :math:`f \in \mathbb R^N`, :math:`g \in \mathbb R^E`
    and :math:`\log \pi_{t,i} = s_{t,i}/\tau + f_t + g_i`, each iteration
    sets

    .. math::

        f_t \leftarrow \log k - \operatorname{logsumexp}_i(s_{t,i}/\tau + g_i),
        \qquad
        g_i \leftarrow \log\tfrac{N k}{E} - \operatorname{logsumexp}_t(s_{t,i}/\tau + f_t),

    so after it the column sums are exact and the row errors are reported.
    The fixed point maximises :math:`\sum s\pi - \tau \sum \pi\log\pi` over
    plans with row sums :math:`k` and column sums :math:`Nk/E`; its value
    :math:`V_\tau` satisfies :math:`0 \le V^* - V_\tau \le \tau N k \log E`,
    :math:`V^*` the transport LP optimum (entropy of a row of sum :math:`k`
    is at most :math:`k \log(E/k)`, and :math:`-\sum x \log x \ge -Nk \log k`
    for entries :math:`\le k`).  For ``k = 1`` :math:`V^*` is the balanced
    assignment LP optimum; for ``k > 1`` the plan may exceed 1 on an entry
    (the transport LP has no bound :math:`x \le 1`) and :math:`V^*` is only
    an upper bound on the assignment LP.

    The routing is :math:`\operatorname{top-}k_i \log\pi_{t,i} =
    \operatorname{top-}k_i (s_{t,i} + \tau g_i)`: Sinkhorn acts as a
    per-expert bias :math:`\tau g`.  It is balanced only approximately.
    Convergence slows down as :math:`\tau \to 0` (the contraction factor of
    Sinkhorn tends to 1); check ``converged``.

    References
    ----------
    .. [1] Clark et al., "Unified Scaling Laws for Routed Language Models",
       ICML 2022 (arXiv 2202.01169), S-BASE: Sinkhorn in place of the BASE
       assignment (section not re-checked).
    .. [2] Cuturi, "Sinkhorn Distances", NeurIPS 2013, Sec. 4 (entropic
       transport and the Sinkhorn fixed point).

    Examples
    --------
    >>> from expertlab.balance import sinkhorn_route
    >>> res = sinkhorn_route([[2.0, 1.0], [2.0, 0.0]], k=1, temperature=0.25)
    >>> res.assignment.tolist(), res.converged
    ([[0, 1], [1, 0]], True)
    >>> res.plan.round(3).tolist()
    [[0.119, 0.881], [0.881, 0.119]]
    """
    s = _scores_3d(scores)
    n_tokens, n_experts = s.shape[-2:]
    k = _check_k(k, n_experts)
    n_iter = check_int(n_iter, "n_iter", minimum=1)
    temperature = check_float(temperature, "temperature", positive=True)
    tol = check_float(tol, "tol", minimum=0.0)
    from scipy.special import logsumexp  # imported here: scipy is slow to import

    a = s / temperature
    log_k = math.log(k)
    log_c = math.log(n_tokens * k / n_experts)
    g = np.zeros(s.shape[:-2] + (1, n_experts))
    it = 0
    row_err = col_err = np.inf
    for it in range(1, n_iter + 1):  # a loop over iterations, vectorised over batches and tokens
        f = log_k - logsumexp(a + g, axis=-1, keepdims=True)
        g = log_c - logsumexp(a + f, axis=-2, keepdims=True)
        log_plan = a + f + g
        plan = np.exp(log_plan)
        row_err = np.abs(plan.sum(axis=-1) - k).max(axis=-1)
        col_err = np.abs(plan.sum(axis=-2) - n_tokens * k / n_experts).max(axis=-1)
        if max(row_err.max(), col_err.max()) <= tol:
            break
    converged = bool(max(np.max(row_err), np.max(col_err)) <= tol)
    x = top_k_route(log_plan, k=k)
    value = np.einsum("...ti,...ti->...", s, plan)
    _readonly(plan)
    return SinkhornResult(method="sinkhorn", plan=plan, plan_value=_scalar(value), row_error=_scalar(row_err),
                          col_error=_scalar(col_err), n_iter=it, converged=converged, **_summary(s, x))


# -- expert choice ------------------------------------------------------------------


def expert_choice_route(scores, capacity: int) -> RouteResult:
    r"""Expert-choice routing: each expert takes its ``capacity`` highest-scoring tokens.

    Parameters
    ----------
    scores : array_like, shape (..., n_tokens, n_experts)
        Finite token-expert scores (in the paper, softmax over experts).
    capacity : int
        Tokens per expert :math:`C`, ``1 <= C <= n_tokens``; the paper sets
        :math:`C = N c / E` with capacity factor :math:`c`.

    Returns
    -------
    RouteResult
        Every load is exactly ``capacity`` (``max_vio`` is 0); a token may
        get no expert (``n_unrouted``) or many.

    Notes
    -----
    :math:`x_{t,i} = 1 \iff t \in \operatorname{top-}C_t(s_{\cdot,i})`, ties to
    the lower token index (top-k routing of the transposed scores).  When
    the columns of the scores are iid up to per-expert offsets (which do not
    change the ranking inside a column), each expert takes a uniform
    :math:`C`-subset of the tokens independently of the others, so a token is
    left unrouted with probability :math:`(1 - C/N)^E`.

    [validated-rates]

    References
    ----------
    .. [1] Zhou et al., "Mixture-of-Experts with Expert Choice Routing",
       NeurIPS 2022 (arXiv 2202.09368), Sec. 3.1 (section not re-checked).

    Examples
    --------
    >>> from expertlab.balance import expert_choice_route
    >>> res = expert_choice_route([[0.9, 0.8], [0.1, 0.2], [0.5, 0.6]], capacity=2)
    >>> res.assignment.tolist(), res.n_unrouted
    ([[1, 1], [0, 0], [1, 1]], 1)
    """
    s = _scores_3d(scores)
    n_tokens = s.shape[-2]
    capacity = check_int(capacity, "capacity", minimum=1, maximum=n_tokens)
    x = np.swapaxes(top_k_route(np.swapaxes(s, -1, -2), k=capacity), -1, -2)
    return RouteResult(method="expert_choice", **_summary(s, np.ascontiguousarray(x)))
