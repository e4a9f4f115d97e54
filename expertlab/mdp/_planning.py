r"""Planning in known tabular MDPs, batched over a leading axis of MDPs.

Value iteration (sup-norm or span stop), exact policy evaluation by a linear solve,
policy iteration and backward induction (KL-regularised value iteration is
a separate solver of :mod:`expertlab.mdp`).  Every solver works on arrays ``transitions (..., S, A, S)`` and
``rewards (..., S, A)`` whose leading axes index MDPs, advances all of them
in one array operation per iteration (an MDP that has met its stopping rule
is frozen, so its result is the one it would get alone), and returns a frozen
result with certificates.  On a CPU, value iteration advances the batch in
blocks of MDPs small enough to stay in cache, each to its own stop; the
results are those of the whole batch at once.  A kernel whose rows have few
nonzero entries (at most ``S / 8``) is backed up by gathering those entries
rather than by dense matrix products.  For NumPy float64 arrays, value
iteration runs instead in one compiled call (:mod:`._vi_kernel`) that iterates
every MDP of the batch in parallel, with the same stops and results.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._backend import asnumpy, get_namespace
from .._repr import short_repr
from .._validation import check_float, check_in, check_int
from ._models import FiniteHorizonMDP, TabularMDP, _array, check_kernel

__all__ = ["PlanningResult", "FiniteHorizonResult", "value_iteration", "policy_iteration", "policy_evaluation",
           "backward_induction", "bellman_backup"]


@short_repr
@dataclasses.dataclass(frozen=True)
class PlanningResult:
    r"""Solution of a discounted MDP (or a batch), with certificates.

    Attributes
    ----------
    values : array (..., S)
        The returned value estimate :math:`V`.
    q_values : array (..., S, A)
        :math:`r + \gamma P V`.
    policy : array (..., S) of int
        Greedy policy with respect to ``values`` (first maximiser).
    policy_values : array (..., S), or None
        Exact value :math:`V^\pi` of ``policy``, by a linear solve (``None``
        when :func:`value_iteration` ran with ``evaluate_policy=False``).
    bellman_residual : array (...)
        :math:`\|TV - V\|_\infty`; then :math:`\|V - V^\star\|_\infty \le`
        ``residual / (1 - gamma)`` and
        :math:`\|V^\pi - V^\star\|_\infty \le 2\,` ``residual / (1 - gamma)``.
    policy_residual : array (...), or None
        :math:`\|TV^\pi - V^\pi\|_\infty`; as :math:`V^\pi \le V^\star`,
        :math:`0 \le V^\star - V^\pi \le` ``policy_residual / (1 - gamma)``
        (``None`` with ``policy_values``).
    n_iter : array (...) of int
        Iterations each MDP took.
    converged : array (...) of bool
    gamma : float
    residual_path : ndarray of shape (n_steps,), or None
        The convergence trace: entry ``k - 1`` is the Bellman residual
        :math:`\|TV - V\|_\infty` of the value estimate that iteration
        ``k`` starts from (the largest over the MDPs of a batch still
        iterating).  For value iteration it is
        :math:`\|V_k - V_{k-1}\|_\infty` and falls at least as fast as
        :math:`\gamma^{k-1}` times the first entry; for policy iteration it
        is the residual of the ``k``-th policy's exact value.  Drawn by
        :meth:`plot`.
    """

    values: object
    q_values: object
    policy: object
    policy_values: object
    bellman_residual: object
    policy_residual: object
    n_iter: object
    converged: object
    gamma: float
    residual_path: object = None

    @property
    def gap_bound(self):
        """Certified bound on :math:`\\|V^\\star - V^\\pi\\|_\\infty` (the tighter of the two certificates).

        Without ``policy_residual`` (``evaluate_policy=False``) it is ``2 bellman_residual / (1 - gamma)``.
        """
        xp = get_namespace(self.bellman_residual)
        if self.policy_residual is None:
            return 2.0 * self.bellman_residual / (1.0 - self.gamma)
        return xp.minimum(2.0 * self.bellman_residual, self.policy_residual) / (1.0 - self.gamma)

    def plot(self, ax=None, *, label: str | None = None, **line_kwargs):
        r"""The Bellman residual per iteration (``residual_path``), on a log scale.

        The dashed line :math:`\gamma^{k-1}` times the first residual is the
        rate of a :math:`\gamma`-contraction: value iteration's trace stays
        below it, as :math:`\|TV_k - V_k\|_\infty \le \gamma \|V_k - V_{k-1}\|_\infty`
        for a :math:`\gamma`-contraction :math:`T` (Puterman 1994, Sec. 6.2:
        the Bellman operator contracts the sup norm); policy iteration's
        usually falls much faster.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Default: new axes on a standalone figure (no pyplot state).
        label : str, optional
            Legend label of the trace.
        **line_kwargs
            Passed to ``ax.plot``.

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        ValueError
            If the result holds no ``residual_path``.

        Examples
        --------
        >>> import numpy as np
        >>> P = np.array([[[0.5, 0.5], [1.0, 0.0]], [[0.0, 1.0], [0.5, 0.5]]])
        >>> r = np.array([[0.0, 0.1], [1.0, 0.0]])
        >>> res = value_iteration(P, r, 0.9)
        >>> ax = res.plot()
        >>> bool((ax.lines[0].get_ydata() == res.residual_path).all()), ax.get_yscale()
        (True, 'log')
        """
        return plot_residual_path(self.residual_path, ax=ax, label=label, gamma=self.gamma, **line_kwargs)


class ResidualPlot:
    """``plot()`` of a planning result that records ``residual_path`` (soft and robust planning)."""

    def plot(self, ax=None, *, label: str | None = None, **line_kwargs):
        """The residual of the operator per iteration (``residual_path``), on a log scale.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Default: new axes on a standalone figure (no pyplot state).
        label : str, optional
            Legend label of the trace.
        **line_kwargs
            Passed to ``ax.plot``.

        Returns
        -------
        matplotlib.axes.Axes
        """
        return plot_residual_path(self.residual_path, ax=ax, label=label, **line_kwargs)


def plot_residual_path(path, *, ax=None, label=None, gamma=None, **line_kwargs):
    r"""Draw a planning result's ``residual_path`` (with the :math:`\gamma^{k-1}` rate when ``gamma`` is given)."""
    from ..sim._plots import plot_paths

    if path is None:
        raise ValueError("this result holds no residual_path to plot (it was built without one)")
    path = np.asarray(path, dtype=np.float64)
    ax = plot_paths(path, ax=ax, label="Bellman residual" if label is None else label, xlabel="iteration k",
                    ylabel=r"$\|TV - V\|_\infty$ at the start of iteration k", logy=True, start=1,
                    **line_kwargs)
    if gamma is not None and 0 < gamma and path.size > 1 and path[0] > 0:
        k = np.arange(1, path.size + 1)
        ax.plot(k, path[0] * float(gamma) ** (k - 1), "k--", lw=1.0,
                label=rf"$\gamma^{{k-1}}\times$ first ($\gamma$ = {float(gamma):g})")
    ax.legend(fontsize="small")
    return ax


def largest_active(values, active, xp) -> float:
    """The largest of ``values (...)`` over the MDPs still ``active``, as a float (0 if none is)."""
    return float(xp.max(xp.where(active, values, 0.0)))


def _as_arrays(transitions, rewards, gamma):
    if isinstance(transitions, TabularMDP):
        if rewards is not None or gamma is not None:
            raise TypeError("pass either a TabularMDP or (transitions, rewards, gamma), not both")
        m = transitions
    else:
        if rewards is None or gamma is None:
            raise TypeError("rewards and gamma are required when transitions is an array")
        m = TabularMDP(transitions, rewards, gamma)
    return m.transitions, m.rewards, m.gamma


def bellman_backup(transitions, rewards, gamma, values):
    r"""``Q = r + gamma P V``: shape ``(..., S, A)`` for ``values`` of shape ``(..., S)``.

    Parameters
    ----------
    transitions : array (..., S, A, S)
        Rows (last axis) on the simplex.
    rewards : array (..., S, A)
    gamma : float in [0, 1]
        ``1`` is the undiscounted backup of a finite-horizon stage.
    values : array (..., S)

    Returns
    -------
    array (..., S, A)
        The leading axes of the three arrays broadcast together.

    Raises
    ------
    TypeError
        If an array is not a NumPy or CuPy array of a real floating dtype, or ``gamma`` is not a real number.
    ValueError
        If ``transitions`` is not a kernel, ``rewards`` or ``values`` has the wrong trailing shape or a NaN or
        infinite value, the leading axes do not broadcast, or ``gamma`` lies outside [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])   # S = A = 2
    >>> bellman_backup(p, np.zeros((2, 2)), 0.5, np.array([0.0, 2.0]))
    array([[0., 1.],
           [1., 1.]])
    """
    check_kernel(transitions, "transitions")
    if transitions.ndim < 3 or transitions.shape[-3] != transitions.shape[-1]:
        raise ValueError(f"transitions must have shape (..., S, A, S), got {tuple(transitions.shape)}")
    gamma = check_float(gamma, "gamma", minimum=0.0, maximum=1.0)
    s, a = transitions.shape[-3], transitions.shape[-2]
    for arr, name, tail in ((rewards, "rewards", (s, a)), (values, "values", (s,))):
        xp = _array(arr, name)
        if tuple(arr.shape[arr.ndim - len(tail):]) != tail or arr.ndim < len(tail):
            raise ValueError(f"{name} must have shape (..., {', '.join(map(str, tail))}), got {tuple(arr.shape)}")
        if not bool(xp.all(xp.isfinite(arr))):
            raise ValueError(f"{name} contains NaN or infinite values")
    try:
        xp.broadcast_shapes(tuple(transitions.shape[:-3]), tuple(rewards.shape[:-2]), tuple(values.shape[:-1]))
    except ValueError:
        raise ValueError(f"the leading (batch) axes of transitions {tuple(transitions.shape[:-3])}, rewards "
                         f"{tuple(rewards.shape[:-2])} and values {tuple(values.shape[:-1])} do not "
                         "broadcast") from None
    return _backup(transitions, rewards, gamma, values)


def _backup(transitions, rewards, gamma, values, xp=None):
    """:func:`bellman_backup` without the checks (the planners' inner loops; they pass their ``xp``)."""
    xp = get_namespace(transitions, values) if xp is None else xp
    s, a = transitions.shape[-3], transitions.shape[-2]
    flat = xp.reshape(transitions, (*transitions.shape[:-3], s * a, s))  # one matrix-vector product per MDP
    pv = xp.matmul(flat, values[..., :, None])[..., 0]
    return rewards + gamma * xp.reshape(pv, (*pv.shape[:-1], s, a))


def _check_policy(policy, shape, n_actions: int, name: str, xp):
    """``policy`` as int64 after checking that it is an integer array of ``shape`` with actions in ``[0, n_actions)``."""
    if isinstance(policy, (list, tuple)):
        policy = xp.asarray(policy)
    if not hasattr(policy, "shape") or not hasattr(policy, "dtype"):
        raise TypeError(f"{name} must be an integer array of shape {tuple(shape)}, got {type(policy).__name__}")
    if not xp.isdtype(policy.dtype, "integral"):
        raise TypeError(f"{name} must be an integer array (one action index per state), got dtype {policy.dtype}")
    if tuple(policy.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)} (..., S), got {tuple(policy.shape)}")
    if bool(xp.any(policy < 0)) or bool(xp.any(policy >= n_actions)):
        raise ValueError(f"{name} must hold actions in [0, {n_actions - 1}], got values in "
                         f"[{int(xp.min(policy))}, {int(xp.max(policy))}]")
    return xp.astype(policy, xp.int64)


def policy_evaluation(transitions, rewards, gamma, policy):
    r"""Exact value of a deterministic policy: solve :math:`(I - \gamma P_\pi) V = r_\pi`.

    Parameters
    ----------
    transitions : array (..., S, A, S)
    rewards : array (..., S, A)
    gamma : float in [0, 1)
    policy : integer array (..., S)
        Action of each state, in ``[0, A - 1]``.

    Returns
    -------
    array (..., S)

    Raises
    ------
    ValueError
        If ``transitions``, ``rewards`` or ``gamma`` fail the checks of
        :class:`TabularMDP` (rows on the simplex, finite rewards,
        ``0 <= gamma < 1``), or ``policy`` has the wrong shape or an action
        out of range.
    TypeError
        If ``policy`` is not an integer array.

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[[0.0, 1.0]], [[0.0, 1.0]]]); r = np.array([[1.0], [0.0]])
    >>> policy_evaluation(P, r, 0.5, np.zeros(2, dtype=int))
    array([1., 0.])
    """
    p, r, gamma = _as_arrays(transitions, rewards, gamma)
    pi = _check_policy(policy, p.shape[:-2], p.shape[-2], "policy", get_namespace(p))
    return _evaluate(p, r, gamma, pi)


def _evaluate(transitions, rewards, gamma, pi):
    """:func:`policy_evaluation` on checked arguments (``pi`` int64); the solvers call it in their loops."""
    xp = get_namespace(transitions)
    batch, s, a = tuple(transitions.shape[:-3]), transitions.shape[-3], transitions.shape[-2]
    # the rows (s, pi(s)) of every MDP as indices into the kernels stacked as (n S A, S): one row gather
    n = math.prod(batch)
    rows = (xp.reshape(pi, (n, s)) + a * xp.arange(s, dtype=xp.int64)
            + (s * a) * xp.arange(n, dtype=xp.int64)[:, None])
    rows = xp.reshape(rows, (n * s,))
    p_pi = xp.reshape(xp.take(xp.reshape(transitions, (n * s * a, s)), rows, axis=0), (*batch, s, s))
    r_pi = xp.reshape(xp.take(xp.reshape(rewards, (n * s * a,)), rows, axis=0), (*batch, s))
    lhs = xp.eye(s, dtype=transitions.dtype) - gamma * p_pi
    return xp.linalg.solve(lhs, r_pi[..., None])[..., 0]


class _Gather:
    r"""A kernel ``(n, S, A, S)`` whose rows have at most ``k`` nonzero entries, kept as those entries.

    ``cols (k, A, n, S)`` holds, for the row of ``(mdp, s, a)``, the flat
    indices ``mdp S + t`` of the ``k`` states ``t`` it can reach, and
    ``probs (k, A, n, S)`` holds ``gamma`` times their probabilities (a row
    with fewer than ``k`` nonzero entries is padded with zero
    probabilities); ``rewards_t (A, n, S)``.  The discounted expectation
    :math:`\gamma P V` is then ``k`` gathers from the values instead of a
    product with a dense ``S x S`` matrix per action, and the maximum over
    actions runs over the leading axis.
    """

    def __init__(self, cols, probs, rewards_t):
        self.cols, self.probs, self.rewards_t = cols, probs, rewards_t

    def block(self, start, stop, xp):
        """The MDPs ``start:stop`` alone (their own copy, indices rebased)."""
        s = self.cols.shape[-1]

        def own(x):  # a contiguous copy of the slice, so the loop's reshapes are views
            return xp.reshape(xp.reshape(x, (-1,)), x.shape)

        return _Gather(own(self.cols[:, :, start:stop, :] - start * s), own(self.probs[:, :, start:stop, :]),
                       own(self.rewards_t[:, start:stop, :]))

    def take(self, sel, xp):
        """The MDPs of index ``sel`` (an integer array), in that order, indices rebased."""
        s = self.cols.shape[-1]
        offset = (xp.arange(sel.shape[0], dtype=xp.int64) - sel) * s
        return _Gather(xp.take(self.cols, sel, axis=2) + offset[:, None], xp.take(self.probs, sel, axis=2),
                       xp.take(self.rewards_t, sel, axis=1))

    def backup_t(self, v, xp):
        """``r + gamma P V`` of ``v (n, S)`` as an array ``(A, n, S)`` (actions first)."""
        k, (a, n, s) = self.probs.shape[0], self.rewards_t.shape
        gathered = xp.reshape(xp.take(xp.reshape(v, (n * s,)), xp.reshape(self.cols, (-1,))), self.probs.shape)
        return self.rewards_t + xp.sum(gathered * self.probs, axis=0)


#: A kernel is iterated as gathers (:class:`_Gather`) when its rows have at most ``S / _SPARSE_FACTOR`` nonzeros.
_SPARSE_FACTOR = 8


def _gather_kernel(p, r, gamma, xp):
    """The kernel ``p (n, S, A, S)`` as a :class:`_Gather`, or ``None`` if its rows have too many nonzero entries.

    One pass finds the nonzero entries (``nonzero`` returns them in row-major
    order); when every row has the same count ``k`` (a Garnet kernel, say)
    they are the ``k`` entries of each row in turn, otherwise each row is
    padded with its first zero entries up to the largest count.
    """
    n, s, a = p.shape[0], p.shape[1], p.shape[2]
    n_rows = n * s * a
    if s < 2 * _SPARSE_FACTOR:
        return None
    mask = xp.reshape(p, (n_rows, s)) != 0
    nnz = int(xp.count_nonzero(mask))
    if nnz * _SPARSE_FACTOR > n_rows * s:
        return None
    k = nnz // n_rows
    row = xp.arange(n_rows, dtype=xp.int64)
    pos = xp.nonzero(xp.reshape(mask, (n_rows * s,)))[0]
    exact = k * n_rows == nnz
    if exact:  # positions are increasing: row i holds all its k if its first and last lie in row i
        pos = xp.reshape(pos, (n_rows, k))
        exact = bool(xp.all(pos[:, 0] >= row * s)) and bool(xp.all(pos[:, k - 1] < (row + 1) * s))
    if not exact:
        counts = xp.sum(xp.astype(mask, xp.int64), axis=-1)
        k = int(xp.max(counts))
        if k * _SPARSE_FACTOR > s:
            return None
        zero_rank = xp.cumulative_sum(xp.astype(~mask, xp.int64), axis=-1)  # 1, 2, ... over a row's zeros
        padded = mask | (~mask & (zero_rank <= (k - counts)[:, None]))
        pos = xp.reshape(xp.nonzero(xp.reshape(padded, (n_rows * s,)))[0], (n_rows, k))
    probs = gamma * xp.take(xp.reshape(p, (n_rows * s,)), xp.reshape(pos, (n_rows * k,)))
    # row (mdp, s, a) starts at row * S in the flat kernel; its states index the values at mdp * S
    cols = pos + ((row // (s * a)) * s - row * s)[:, None]

    def action_major(x):  # (n S A, k) -> (k, A, n, S)
        return xp.permute_dims(xp.reshape(x, (n, s, a, k)), (3, 2, 0, 1))

    rewards_t = xp.permute_dims(xp.reshape(r, (n, s, a)), (2, 0, 1))
    return _Gather(action_major(cols), action_major(probs), rewards_t).block(0, n, xp)


def _q_of(g, batch, xp):
    """``backup(v) -> Q (..., S, A)`` by the gathers of ``g`` (``None`` if ``g`` is)."""
    if g is None:
        return None
    n, s, a = g.rewards_t.shape[1], g.rewards_t.shape[2], g.rewards_t.shape[0]
    return lambda v: xp.reshape(xp.permute_dims(g.backup_t(xp.reshape(v, (n, s)), xp), (1, 2, 0)), (*batch, s, a))


def _planner_backup(p, r, gamma, xp):
    """``backup(v) -> Q (..., S, A)`` for the planners' loops: gathers for a sparse kernel, else one matmul."""
    batch, s, a = tuple(p.shape[:-3]), p.shape[-3], p.shape[-2]
    n = math.prod(batch)
    g = _gather_kernel(xp.reshape(p, (n, s, a, s)), xp.reshape(r, (n, s, a)), gamma, xp)
    return _q_of(g, batch, xp) or (lambda v: _backup(p, r, gamma, v, xp))


def _certify(p, r, gamma, v, n_iter, converged, path, backup=None, evaluate_policy=True, greedy=None):
    """The result of values ``v`` with its certificates.

    ``greedy``: ``(q, policy, residual)`` of ``v`` when already computed, else ``backup(v)`` gives them.
    """
    xp = get_namespace(p)
    if backup is None:
        backup = _planner_backup(p, r, gamma, xp)
    if greedy is None:
        q = backup(v)
        pi = xp.argmax(q, axis=-1)
        res = xp.max(xp.abs(xp.max(q, axis=-1) - v), axis=-1)
    else:
        q, pi, res = greedy
    vp = pres = None
    if evaluate_policy:
        vp = _evaluate(p, r, gamma, pi)
        pres = xp.max(xp.abs(xp.max(backup(vp), axis=-1) - vp), axis=-1)
    return PlanningResult(v, q, pi, vp, res, pres, n_iter, converged, gamma, np.asarray(path, dtype=np.float64))


#: Bytes of kernel per block of MDPs that value iteration iterates together on a CPU (the block stays in cache).
_CPU_BLOCK_BYTES = 4 << 20


def _block_size(p, xp, g=None) -> int:
    """How many MDPs of ``p (..., S, A, S)`` value iteration advances together.

    On a CPU (NumPy, or the strict reference namespace) the batch is cut into
    blocks whose kernels fit in about :data:`_CPU_BLOCK_BYTES`: a block then
    stays in cache over its iterations instead of the whole batch streaming
    from memory at every iteration.  Elsewhere (a GPU) the whole batch is one
    block.  The blocks change no result: every MDP iterates on its own.
    """
    from array_api_compat import is_array_api_strict_namespace, is_numpy_namespace

    n_mdps = math.prod(p.shape[:-3])
    if not (is_numpy_namespace(xp) or is_array_api_strict_namespace(xp)):
        return max(n_mdps, 1)
    per_mdp = math.prod(p.shape[-3:]) * (xp.finfo(p.dtype).bits // 8)
    if g is not None:  # the gathers' indices and probabilities, 16 bytes an entry
        per_mdp = math.prod(g.probs.shape) // max(n_mdps, 1) * 16
    return max(1, _CPU_BLOCK_BYTES // max(per_mdp, 1))


#: The stopping rules of :func:`value_iteration`.
_STOP_RULES = ("sup", "span")


def _vi_tol(gamma, epsilon, stop) -> float:
    """The threshold of ``stop``'s rule at target ``epsilon`` (infinite for ``gamma = 0``: one iteration)."""
    if gamma == 0:
        return math.inf
    if stop == "sup":
        return epsilon * (1.0 - gamma) / (2.0 * gamma)
    return epsilon * (1.0 - gamma) / gamma


def _vi_loop(p, r, gamma, v, epsilon, max_iter, xp, stop="sup", g=None):
    """Value iteration on checked arrays ``p (n, S, A, S)``: ``(values, n_iter, active, residual_path)``.

    The residuals are kept on the device until the loop ends (one transfer,
    not one per iteration); the loop checks once per iteration whether any
    MDP is still active.  A sparse kernel is iterated by gathers
    (:class:`_Gather`), actions first, so the maximum over actions runs over
    the leading axis; once at most a quarter of its MDPs are still active,
    those go on alone (the others are no longer backed up).  With a gathered
    kernel ``g`` the dense ``p`` and ``r`` are not used (they may be
    ``None``); ``epsilon`` is the target of ``stop``'s rule.
    """
    n = v.shape[0]
    active = xp.ones((n,), dtype=xp.bool)
    n_iter = xp.zeros((n,), dtype=xp.int64)
    tol = _vi_tol(gamma, epsilon, stop)
    shift = xp.zeros((n,), dtype=v.dtype)  # the span rule's midpoint of MacQueen's bounds, set when an MDP stops
    path = []
    for _ in range(max_iter):
        if g is None:
            v_new = xp.max(_backup(p, r, gamma, v, xp), axis=-1)
        else:
            v_new = xp.max(g.backup_t(v, xp), axis=0)
        diff = v_new - v
        hi, lo = xp.max(diff, axis=-1), xp.min(diff, axis=-1)
        delta = xp.maximum(hi, -lo)
        path.append(xp.max(xp.where(active, delta, 0.0)))
        v = xp.where(active[:, None], v_new, v)
        n_iter = n_iter + xp.astype(active, xp.int64)
        done = active & ((delta if stop == "sup" else hi - lo) < tol)
        if stop == "span" and gamma > 0:
            shift = xp.where(done, (gamma / (1.0 - gamma)) * (0.5 * (hi + lo)), shift)
        active = active & ~done
        n_active = int(xp.count_nonzero(active))
        if n_active == 0:
            break
        if g is not None and 4 * n_active <= n and len(path) < max_iter:
            # compaction: the active MDPs iterate on alone, and their results are put back in place
            sel = xp.nonzero(active)[0]
            sub_v, sub_iter, sub_active, sub_path = _vi_loop(
                None, None, gamma, xp.take(v, sel, axis=0), epsilon, max_iter - len(path), xp, stop, g.take(sel, xp))
            slot = xp.cumulative_sum(xp.astype(active, xp.int64)) - 1  # an active MDP's row in the sub-results
            slot = xp.where(active, slot, 0)
            v = xp.where(active[:, None], xp.take(sub_v, slot, axis=0), v)
            n_iter = n_iter + xp.where(active, xp.take(sub_iter, slot), 0)
            active = active & xp.take(sub_active, slot)
            path = np.concatenate([asnumpy(xp.stack(path)), sub_path])
            break
    if stop == "span":
        v = v + shift[:, None]
    if isinstance(path, list):
        path = asnumpy(xp.stack(path)) if path else np.zeros(0)
    return v, n_iter, active, np.asarray(path, dtype=np.float64)


#: The engines of :func:`value_iteration`.
ENGINES = ("auto", "compiled", "array")

#: Residuals the compiled engine's first call keeps (``steps`` times the MDPs), and its fewest ``steps``.
_COMPILED_PATH_ENTRIES = 1 << 15
_COMPILED_MIN_STEPS = 64


def _vi_compiled(p, r, gamma, v, tol, stop, max_iter):
    """Value iteration of ``p (n, S, A, S)`` by the compiled kernel: ``(values, q_values, policy, residual, n_iter,
    active, path)``.

    The kernel runs at most ``steps`` iterations per call and keeps their
    residuals; the MDPs still iterating are advanced again, from their
    current values, with twice as many, until each has stopped or run
    ``max_iter`` iterations.  ``path`` is the largest residual over the MDPs
    still iterating, as in :func:`_vi_loop`.
    """
    from ._vi_kernel import advance

    n, s, a = r.shape
    p, r = (np.ascontiguousarray(x).view() for x in (p, r))
    p.flags.writeable = r.flags.writeable = False  # one compiled version for read-only and writeable inputs
    v = np.array(v, dtype=np.float64, order="C")
    q = np.zeros((n, s, a))
    pi = np.zeros((n, s), dtype=np.int64)
    res = np.zeros(n)
    n_iter = np.zeros(n, dtype=np.int64)
    done = np.zeros(n, dtype=bool)
    idx = np.arange(n, dtype=np.int64)
    steps = min(max_iter, max(_COMPILED_MIN_STEPS, _COMPILED_PATH_ENTRIES // max(n, 1)))
    spent, chunks = 0, []
    while idx.size:
        last = spent + steps >= max_iter
        path = np.zeros((idx.size, steps))
        advance(p, r, idx, float(gamma), float(tol), stop == "span", steps, last, v, path, n_iter, done, q, pi, res)
        chunks.append(path.max(axis=0))
        spent += steps
        if last:
            break
        idx = idx[~done[idx]]
        steps = min(max_iter - spent, 2 * steps)
    path = np.concatenate(chunks)[:int(n_iter.max(initial=0))] if chunks else np.zeros(0)
    return v, q, pi, res, n_iter, ~done, path


def value_iteration(transitions, rewards=None, gamma=None, *, epsilon: float = 1e-6, max_iter: int = 100_000,
                    values0=None, stop: str = "sup", evaluate_policy: bool = True,
                    engine: str = "auto") -> PlanningResult:
    r"""Value iteration, stopped by a rule that certifies an :math:`\epsilon`-optimal greedy policy.

    Parameters
    ----------
    transitions : array (..., S, A, S) or TabularMDP
    rewards : array (..., S, A)
    gamma : float in [0, 1)
    epsilon : float > 0
        Target accuracy of the greedy policy.
    max_iter : int
    values0 : array (..., S), optional
        Starting values (zeros by default).
    stop : {"sup", "span"}
        The stopping rule.  ``"sup"`` (default): stop when
        :math:`\|V_{k+1} - V_k\|_\infty < \epsilon (1 - \gamma) / (2\gamma)`
        and return :math:`V_{k+1}`.  ``"span"``: stop when the span
        :math:`\operatorname{sp}(V_{k+1} - V_k) = \max_s (V_{k+1} - V_k)(s) - \min_s (V_{k+1} - V_k)(s)
        < \epsilon (1 - \gamma) / \gamma` and return the midpoint of
        MacQueen's bounds on :math:`V^\star` (see Notes); it stops earlier
        (the span of the differences shrinks faster than their sup norm
        when the chains mix) with the same guarantee on the policy.
    evaluate_policy : bool
        Whether to compute the exact value of the greedy policy
        (``policy_values`` and ``policy_residual``, one linear solve of size
        ``S`` per MDP); without it both are ``None`` and the guarantee of the
        stopping rule stands alone.
    engine : {"auto", "compiled", "array"}
        ``"compiled"``: the whole iteration of every MDP in one compiled
        call, the MDPs in parallel (NumPy float64 arrays only; see Notes).
        ``"array"``: the iteration in the array namespace of the inputs, the
        whole batch one backup at a time (the path CuPy arrays take).
        ``"auto"`` (default): compiled for NumPy float64 arrays, else array.
        Both run the same iterations and stop at the same ones; their results
        agree to rounding.

    Returns
    -------
    PlanningResult

    Raises
    ------
    ValueError
        If ``stop`` is not ``"sup"`` or ``"span"``, ``epsilon`` is not positive, ``values0`` has the wrong shape
        or a NaN or infinite value, the MDP fails the checks of :class:`TabularMDP`, ``engine`` is not one of the
        three, or ``engine="compiled"`` is given arrays that are not NumPy float64 arrays.
    TypeError
        If ``evaluate_policy`` is not a bool.

    Notes
    -----
    :math:`V_{k+1} = T V_k` with :math:`(TV)(s) = \max_a r(s,a) + \gamma \sum_t P(t|s,a) V(t)`.

    With ``stop="sup"`` the loop stops at the first :math:`k` with
    :math:`\|V_{k+1} - V_k\|_\infty < \epsilon (1 - \gamma) / (2\gamma)`;
    then :math:`\|V_{k+1} - V^\star\|_\infty < \epsilon/2` and the greedy
    policy is :math:`\epsilon`-optimal (Puterman, Thm 6.3.1).

    With ``stop="span"``, write :math:`\Delta = V_{k+1} - V_k`.  MacQueen's
    bounds :math:`V_{k+1} + \frac{\gamma}{1-\gamma}\min_s \Delta(s) \le V^\star
    \le V_{k+1} + \frac{\gamma}{1-\gamma}\max_s \Delta(s)` hold at every
    :math:`k`, and the greedy policy :math:`\pi` satisfies the same lower
    bound.  The loop stops at the first :math:`k` with
    :math:`\operatorname{sp}(\Delta) < \epsilon (1 - \gamma) / \gamma`, and
    returns the midpoint :math:`V_{k+1} + \frac{\gamma}{1-\gamma}
    \frac{\max_s \Delta(s) + \min_s \Delta(s)}{2}`: then
    :math:`\|V - V^\star\|_\infty < \epsilon / 2` and
    :math:`0 \le V^\star - V^\pi < \epsilon` (Puterman, Sec. 6.6.3,
    Prop. 6.6.5 and Thm 6.6.6).  The returned values differ from
    :math:`V_{k+1}` by a constant, so the greedy policy is that of
    :math:`V_{k+1}`.

    Each MDP of a batch stops on its own (it is frozen afterwards);
    ``gamma = 0`` stops after one iteration.  On a CPU the batch is iterated
    in blocks of MDPs whose kernels stay in cache; a kernel whose rows have
    at most ``S / 8`` nonzero entries is iterated by gathering those entries
    (the blocks and the gathers change no result beyond rounding).

    The compiled engine runs the same loop one MDP at a time, the MDPs in
    parallel: one pass over an MDP's kernel keeps the nonzero entries of
    each row (an MDP with more than a quarter of its entries nonzero keeps
    its dense rows), then each iteration is one pass over the states that
    backs up, takes the maximum over actions, and updates the largest and
    smallest difference for the stopping rule, with no temporary array.  A
    row's sum runs over its states in increasing order, as the array
    engine's gathers do: on kernels that both iterate by their nonzero
    entries the two engines agree to the last bit, otherwise to rounding
    (about :math:`10^{-14}` on values of order 10).  The exact evaluation of
    the policy (``evaluate_policy``) runs in the array code for both.

    [validated-rates]

    References
    ----------
    Puterman, *Markov Decision Processes*, Wiley 1994, Thm 6.3.1 (the
    sup-norm stopping rule and its :math:`\epsilon`-optimality guarantee)
    and Sec. 6.6.3, Prop. 6.6.5 and Thm 6.6.6 (the span stopping rule and
    its bounds; these two numbers not re-checked against the book, the
    bounds are stated in the Notes and tested).
    MacQueen, "A modified dynamic programming method for Markovian decision
    problems", *J. Math. Anal. Appl.* 14 (1966) 38-43 (the bounds on
    :math:`V^\star`).

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> r = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> res = value_iteration(P, r, 0.5, epsilon=1e-10)
    >>> res.policy, np.round(res.policy_values, 8)
    (array([1, 0]), array([1., 2.]))
    >>> span = value_iteration(P, r, 0.5, epsilon=1e-10, stop="span")
    >>> span.policy, np.round(span.values, 8), bool(span.n_iter < res.n_iter)
    (array([1, 0]), array([1., 2.]), True)
    """
    p, r, gamma = _as_arrays(transitions, rewards, gamma)
    epsilon = check_float(epsilon, "epsilon", positive=True)
    max_iter = check_int(max_iter, "max_iter")
    if not isinstance(stop, str) or stop not in _STOP_RULES:
        raise ValueError(f"stop must be one of {_STOP_RULES}, got {stop!r}")
    if not isinstance(evaluate_policy, bool):
        raise TypeError(f"evaluate_policy must be a bool, got {type(evaluate_policy).__name__}")
    check_in(engine, "engine", ENGINES)
    plain = isinstance(p, np.ndarray) and isinstance(r, np.ndarray) and p.dtype == r.dtype == np.float64
    if engine == "compiled" and not plain:
        raise ValueError(f"engine='compiled' needs NumPy float64 arrays, got transitions of type {type(p).__name__} "
                         f"and dtype {p.dtype} (engine='array' runs in any array namespace)")
    xp = get_namespace(p)
    v = xp.zeros(p.shape[:-2], dtype=p.dtype)
    if values0 is not None:
        if not hasattr(values0, "shape") or tuple(values0.shape) != tuple(v.shape):
            raise ValueError(f"values0 must be an array of shape {tuple(v.shape)}, got "
                             f"{getattr(values0, 'shape', type(values0).__name__)}")
        if not bool(xp.all(xp.isfinite(values0))):
            raise ValueError("values0 contains NaN or infinite values")
        v = v + values0
    batch = tuple(p.shape[:-3])
    n_mdps = math.prod(batch)
    tail_p, tail_r = tuple(p.shape[-3:]), tuple(r.shape[-2:])
    pf, rf = xp.reshape(p, (n_mdps, *tail_p)), xp.reshape(r, (n_mdps, *tail_r))
    vf = xp.reshape(v, (n_mdps, v.shape[-1]))
    if engine == "compiled" or (engine == "auto" and plain and v.dtype == np.float64):
        out = _vi_compiled(pf, rf, gamma, vf, _vi_tol(gamma, epsilon, stop), stop, max_iter)
        v, q, pi, res, n_iter, active = (np.reshape(x, shape) for x, shape in zip(
            out[:6], (v.shape, r.shape, v.shape, batch, batch, batch)))
        return _certify(p, r, gamma, v, n_iter, ~active, out[6], lambda u: _backup(p, r, gamma, u, np),
                        evaluate_policy, (q, pi, res))
    g = _gather_kernel(pf, rf, gamma, xp)
    size = _block_size(p, xp, g)
    # cache blocking: each block of MDPs iterates to its own stop while its kernels stay in cache
    ends = [(i, min(i + size, n_mdps)) for i in range(0, n_mdps, size)]
    parts = [_vi_loop(pf[i:j, ...], rf[i:j, ...], gamma, vf[i:j, ...], epsilon, max_iter, xp, stop,
                      None if g is None else g.block(i, j, xp))
             for i, j in ends]
    v = xp.reshape(xp.concat([q[0] for q in parts], axis=0), v.shape)
    n_iter = xp.reshape(xp.concat([q[1] for q in parts], axis=0), batch)
    active = xp.reshape(xp.concat([q[2] for q in parts], axis=0), batch)
    # a block that stopped earlier contributes nothing to later entries (residuals are >= 0)
    path = np.zeros(max(q[3].size for q in parts))
    for q in parts:
        path[:q[3].size] = np.maximum(path[:q[3].size], q[3])
    backup = _q_of(g, batch, xp) or (lambda u: _backup(p, r, gamma, u, xp))
    return _certify(p, r, gamma, v, n_iter, ~active, path, backup, evaluate_policy)


def policy_iteration(transitions, rewards=None, gamma=None, *, max_iter: int = 10_000, policy0=None,
                     tol: float = 1e-12, warm_start: float | None = None) -> PlanningResult:
    r"""Howard's policy iteration: exact evaluation, greedy improvement, until the policy is stable.

    Parameters
    ----------
    transitions : array (..., S, A, S) or TabularMDP
    rewards : array (..., S, A)
    gamma : float in [0, 1)
    max_iter : int
    policy0 : integer array (..., S), optional
        Starting policy (action 0 everywhere by default).
    tol : float
        An action replaces the current one only if it improves its Q-value by
        more than ``tol`` (guards against cycling on floating-point ties).
    warm_start : float > 0, optional
        Start from the greedy policy of value iteration run first with the
        span stopping rule at this ``epsilon`` (see :func:`value_iteration`;
        that policy is ``warm_start``-optimal) instead of ``policy0``.  The
        loop still ends with a stable policy and its exact value, usually
        after one or two exact evaluations instead of about five: on a
        sparse kernel value iteration's backups cost far less than the
        linear solves.  ``n_iter`` and ``residual_path`` count the policy
        iterations only.

    Returns
    -------
    PlanningResult
        ``values`` equals ``policy_values``: the exact value of the final policy.

    Raises
    ------
    ValueError
        If the MDP fails the checks of :class:`TabularMDP`, ``policy0`` has the wrong shape or an action out of
        range, ``tol`` is negative, or ``warm_start`` is not positive.
    TypeError
        If ``policy0`` is not an integer array, or both ``policy0`` and ``warm_start`` are given.

    Notes
    -----
    The values strictly increase until the policy is stable, and there are
    finitely many deterministic policies, so the loop ends with an optimal
    policy (up to ``tol``).

    References
    ----------
    Howard, *Dynamic Programming and Markov Processes*, MIT Press 1960;
    Puterman 1994, Thm 6.4.2 (finite convergence to an optimal policy; it
    holds from any starting policy, so also from the warm start) and Sec. 6.6.3,
    Thm 6.6.6 (the warm start's span rule).

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> r = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> res = policy_iteration(P, r, 0.5)
    >>> res.policy, res.values
    (array([1, 0]), array([1., 2.]))
    >>> warm = policy_iteration(P, r, 0.5, warm_start=0.1)
    >>> warm.policy, warm.values, int(warm.n_iter)
    (array([1, 0]), array([1., 2.]), 1)
    """
    p, r, gamma = _as_arrays(transitions, rewards, gamma)
    max_iter = check_int(max_iter, "max_iter")
    tol = check_float(tol, "tol", minimum=0.0)
    xp = get_namespace(p)
    pi = xp.zeros(p.shape[:-2], dtype=xp.int64)
    if policy0 is not None:
        if warm_start is not None:
            raise TypeError("pass policy0 or warm_start, not both")
        pi = _check_policy(policy0, pi.shape, p.shape[-2], "policy0", xp)
    batch, s, a = tuple(p.shape[:-3]), p.shape[-3], p.shape[-2]
    n = math.prod(batch)
    g = _gather_kernel(xp.reshape(p, (n, s, a, s)), xp.reshape(r, (n, s, a)), gamma, xp)
    backup = _q_of(g, batch, xp) or (lambda v: _backup(p, r, gamma, v, xp))  # gathers for a sparse kernel
    if warm_start is not None:
        warm_start = check_float(warm_start, "warm_start", positive=True)
        v0 = _vi_loop(xp.reshape(p, (n, s, a, s)), xp.reshape(r, (n, s, a)), gamma, xp.zeros((n, s), dtype=p.dtype),
                      warm_start, 100_000, xp, "span", g)[0]
        pi = xp.astype(xp.argmax(backup(xp.reshape(v0, (*batch, s))), axis=-1), xp.int64)
    active = xp.ones(p.shape[:-3], dtype=xp.bool)
    n_iter = xp.zeros(p.shape[:-3], dtype=xp.int64)
    path = []
    stable = False
    for _ in range(max_iter):
        v = _evaluate(p, r, gamma, pi)
        q = backup(v)
        q_max = xp.max(q, axis=-1)
        q_cur = xp.take_along_axis(q, pi[..., None], axis=-1)[..., 0]
        res = xp.max(xp.abs(q_max - v), axis=-1)
        path.append(xp.max(xp.where(active, res, 0.0)))
        improve = q_max > q_cur + tol
        new_pi = xp.where(improve & active[..., None], xp.argmax(q, axis=-1), pi)
        n_iter = n_iter + xp.astype(active, xp.int64)
        active = active & xp.any(improve, axis=-1)
        pi = new_pi
        if not bool(xp.any(active)):
            stable = True  # no policy changed in this iteration: v, q and res are those of the final pi
            break
    if not stable:
        v = _evaluate(p, r, gamma, pi)
        q = backup(v)
        res = xp.max(xp.abs(xp.max(q, axis=-1) - v), axis=-1)
    path = asnumpy(xp.stack(path)) if path else np.zeros(0)
    return PlanningResult(v, q, pi, v, res, res, n_iter, ~active, gamma, np.asarray(path, dtype=np.float64))


@short_repr
@dataclasses.dataclass(frozen=True)
class FiniteHorizonResult:
    """Backward induction: ``values (..., H + 1, S)`` (``values[..., H, :] = 0``),
    ``q_values (..., H, S, A)`` and the optimal Markov policy ``policy (..., H, S)``."""

    values: object
    q_values: object
    policy: object


def backward_induction(mdp: FiniteHorizonMDP) -> FiniteHorizonResult:
    r"""Optimal values and policy of an episodic MDP by backward induction.

    Notes
    -----
    :math:`V_H = 0`, :math:`Q_h = r_h + P_h V_{h+1}`, :math:`V_h = \max_a Q_h`,
    for :math:`h = H-1, \dots, 0` (no discounting).  Exact up to rounding.

    References
    ----------
    Puterman 1994, Sec. 4.5 (the backward induction algorithm, Thm 4.5.1).

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> r = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> backward_induction(FiniteHorizonMDP.stationary(P, r, 3)).values[0]
    array([2., 3.])
    """
    if not isinstance(mdp, FiniteHorizonMDP):
        raise TypeError(f"mdp must be a FiniteHorizonMDP, got {type(mdp).__name__}")
    p, r = mdp.transitions, mdp.rewards
    xp = get_namespace(p)
    v = xp.zeros((*mdp.batch_shape, mdp.n_states), dtype=p.dtype)
    vs, qs = [v], []
    for h in range(mdp.horizon - 1, -1, -1):
        q = _backup(p[..., h, :, :, :], r[..., h, :, :], 1.0, v)
        v = xp.max(q, axis=-1)
        vs.append(v)
        qs.append(q)
    values = xp.stack(vs[::-1], axis=-2)
    q_values = xp.stack(qs[::-1], axis=-3)
    return FiniteHorizonResult(values, q_values, xp.argmax(q_values, axis=-1))
