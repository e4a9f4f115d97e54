r"""Planning in known tabular MDPs, batched over a leading axis of MDPs.

Value iteration (sup-norm stop), exact policy evaluation by a linear solve,
policy iteration and backward induction (KL-regularised value iteration is
a separate solver of :mod:`expertlab.mdp`).  Every solver works on arrays ``transitions (..., S, A, S)`` and
``rewards (..., S, A)`` whose leading axes index MDPs, advances all of them
in one array operation per iteration (an MDP that has met its stopping rule
is frozen, so its result is the one it would get alone), and returns a frozen
result with certificates.  On a CPU, value iteration advances the batch in
blocks of MDPs small enough to stay in cache, each to its own stop; the
results are those of the whole batch at once.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._backend import asnumpy, get_namespace
from .._repr import short_repr
from .._validation import check_float, check_int
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
    policy_values : array (..., S)
        Exact value :math:`V^\pi` of ``policy``, by a linear solve.
    bellman_residual : array (...)
        :math:`\|TV - V\|_\infty`; then :math:`\|V - V^\star\|_\infty \le`
        ``residual / (1 - gamma)`` and
        :math:`\|V^\pi - V^\star\|_\infty \le 2\,` ``residual / (1 - gamma)``.
    policy_residual : array (...)
        :math:`\|TV^\pi - V^\pi\|_\infty`; as :math:`V^\pi \le V^\star`,
        :math:`0 \le V^\star - V^\pi \le` ``policy_residual / (1 - gamma)``.
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
        """Certified bound on :math:`\\|V^\\star - V^\\pi\\|_\\infty` (the tighter of the two certificates)."""
        xp = get_namespace(self.bellman_residual)
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


def _certify(p, r, gamma, v, n_iter, converged, path):
    xp = get_namespace(p)
    q = _backup(p, r, gamma, v)
    pi = xp.argmax(q, axis=-1)
    res = xp.max(xp.abs(xp.max(q, axis=-1) - v), axis=-1)
    vp = _evaluate(p, r, gamma, pi)
    pres = xp.max(xp.abs(xp.max(_backup(p, r, gamma, vp), axis=-1) - vp), axis=-1)
    return PlanningResult(v, q, pi, vp, res, pres, n_iter, converged, gamma, np.asarray(path, dtype=np.float64))


#: Bytes of kernel per block of MDPs that value iteration iterates together on a CPU (the block stays in cache).
_CPU_BLOCK_BYTES = 4 << 20


def _block_size(p, xp) -> int:
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
    return max(1, _CPU_BLOCK_BYTES // max(per_mdp, 1))


def _vi_loop(p, r, gamma, v, tol, max_iter, xp):
    """Value iteration on checked arrays: ``(values, n_iter, active, residual_path)``.

    The residuals are kept on the device until the loop ends (one transfer,
    not one per iteration); the loop checks once per iteration whether any
    MDP is still active.
    """
    active = xp.ones(p.shape[:-3], dtype=xp.bool)
    n_iter = xp.zeros(p.shape[:-3], dtype=xp.int64)
    path = []
    for _ in range(max_iter):
        v_new = xp.max(_backup(p, r, gamma, v, xp), axis=-1)
        delta = xp.max(xp.abs(v_new - v), axis=-1)
        path.append(xp.max(xp.where(active, delta, 0.0)))
        v = xp.where(active[..., None], v_new, v)
        n_iter = n_iter + xp.astype(active, xp.int64)
        active = active & ~(delta < tol)
        if not bool(xp.any(active)):
            break
    path = asnumpy(xp.stack(path)) if path else np.zeros(0)
    return v, n_iter, active, np.asarray(path, dtype=np.float64)


def value_iteration(transitions, rewards=None, gamma=None, *, epsilon: float = 1e-6, max_iter: int = 100_000,
                    values0=None) -> PlanningResult:
    r"""Value iteration with the sup-norm stopping rule that certifies :math:`\epsilon`-optimality.

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

    Returns
    -------
    PlanningResult

    Notes
    -----
    :math:`V_{k+1} = T V_k` with :math:`(TV)(s) = \max_a r(s,a) + \gamma \sum_t P(t|s,a) V(t)`,
    stopped at the first :math:`k` with
    :math:`\|V_{k+1} - V_k\|_\infty < \epsilon (1 - \gamma) / (2\gamma)`.
    Then :math:`\|V_{k+1} - V^\star\|_\infty < \epsilon/2` and the greedy
    policy is :math:`\epsilon`-optimal.  Each MDP of a batch stops on its own
    (it is frozen afterwards); ``gamma = 0`` stops after one iteration.

    [validated-rates]

    References
    ----------
    Puterman, *Markov Decision Processes*, Wiley 1994, Thm 6.3.1 (the
    stopping rule and its :math:`\epsilon`-optimality guarantee).

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> r = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> res = value_iteration(P, r, 0.5, epsilon=1e-10)
    >>> res.policy, np.round(res.policy_values, 8)
    (array([1, 0]), array([1., 2.]))
    """
    p, r, gamma = _as_arrays(transitions, rewards, gamma)
    epsilon = check_float(epsilon, "epsilon", positive=True)
    max_iter = check_int(max_iter, "max_iter")
    xp = get_namespace(p)
    v = xp.zeros(p.shape[:-2], dtype=p.dtype)
    if values0 is not None:
        if not hasattr(values0, "shape") or tuple(values0.shape) != tuple(v.shape):
            raise ValueError(f"values0 must be an array of shape {tuple(v.shape)}, got "
                             f"{getattr(values0, 'shape', type(values0).__name__)}")
        if not bool(xp.all(xp.isfinite(values0))):
            raise ValueError("values0 contains NaN or infinite values")
        v = v + values0
    tol = epsilon * (1.0 - gamma) / (2.0 * gamma) if gamma > 0 else xp.inf
    batch = tuple(p.shape[:-3])
    n_mdps = math.prod(batch)
    size = _block_size(p, xp)
    if len(batch) == 0 or size >= n_mdps:
        v, n_iter, active, path = _vi_loop(p, r, gamma, v, tol, max_iter, xp)
    else:  # cache blocking: each block of MDPs iterates to its own stop while its kernels stay in cache
        tail_p, tail_r = tuple(p.shape[-3:]), tuple(r.shape[-2:])
        pf, rf = xp.reshape(p, (n_mdps, *tail_p)), xp.reshape(r, (n_mdps, *tail_r))
        vf = xp.reshape(v, (n_mdps, v.shape[-1]))
        parts = [_vi_loop(pf[i:i + size, ...], rf[i:i + size, ...], gamma, vf[i:i + size, ...], tol, max_iter, xp)
                 for i in range(0, n_mdps, size)]
        v = xp.reshape(xp.concat([q[0] for q in parts], axis=0), v.shape)
        n_iter = xp.reshape(xp.concat([q[1] for q in parts], axis=0), batch)
        active = xp.reshape(xp.concat([q[2] for q in parts], axis=0), batch)
        # a block that stopped earlier contributes nothing to later entries (residuals are >= 0)
        path = np.zeros(max(q[3].size for q in parts))
        for q in parts:
            path[:q[3].size] = np.maximum(path[:q[3].size], q[3])
    return _certify(p, r, gamma, v, n_iter, ~active, path)


def policy_iteration(transitions, rewards=None, gamma=None, *, max_iter: int = 10_000, policy0=None,
                     tol: float = 1e-12) -> PlanningResult:
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

    Returns
    -------
    PlanningResult
        ``values`` equals ``policy_values``: the exact value of the final policy.

    Notes
    -----
    The values strictly increase until the policy is stable, and there are
    finitely many deterministic policies, so the loop ends with an optimal
    policy (up to ``tol``).

    References
    ----------
    Howard, *Dynamic Programming and Markov Processes*, MIT Press 1960;
    Puterman 1994, Thm 6.4.2 (finite convergence to an optimal policy).

    Examples
    --------
    >>> import numpy as np
    >>> P = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> r = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> res = policy_iteration(P, r, 0.5)
    >>> res.policy, res.values
    (array([1, 0]), array([1., 2.]))
    """
    p, r, gamma = _as_arrays(transitions, rewards, gamma)
    max_iter = check_int(max_iter, "max_iter")
    tol = check_float(tol, "tol", minimum=0.0)
    xp = get_namespace(p)
    pi = xp.zeros(p.shape[:-2], dtype=xp.int64)
    if policy0 is not None:
        pi = _check_policy(policy0, pi.shape, p.shape[-2], "policy0", xp)
    active = xp.ones(p.shape[:-3], dtype=xp.bool)
    n_iter = xp.zeros(p.shape[:-3], dtype=xp.int64)
    path = []
    stable = False
    for _ in range(max_iter):
        v = _evaluate(p, r, gamma, pi)
        q = _backup(p, r, gamma, v, xp)
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
        q = _backup(p, r, gamma, v)
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
