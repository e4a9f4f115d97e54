r"""KL-regularised (soft) value iteration, batched over a leading axis of MDPs."""

from __future__ import annotations

import dataclasses

import numpy as np

from .._backend import get_namespace, logsumexp
from .._repr import short_repr
from .._validation import check_float, check_int
from ._models import check_kernel
from ._planning import _as_arrays, _backup, ResidualPlot, largest_active

__all__ = ["SoftPlanningResult", "soft_value_iteration"]


@short_repr
@dataclasses.dataclass(frozen=True)
class SoftPlanningResult(ResidualPlot):
    r"""KL-regularised value iteration: ``values (..., S)``, ``q_values (..., S, A)``, the
    softmax policy ``policy (..., S, A)`` (probabilities), ``policy_values (..., S)`` (the
    regularised value of that policy by a linear solve), ``bellman_residual (...)`` of the soft
    operator, ``n_iter (...)`` and ``converged (...)``; ``residual_path (n_steps,)``: the soft
    operator's residual :math:`\|T_\tau V_{k-1} - V_{k-1}\|_\infty` in iteration ``k`` (the largest over
    the MDPs of a batch still iterating)."""

    values: object
    q_values: object
    policy: object
    policy_values: object
    bellman_residual: object
    n_iter: object
    converged: object
    residual_path: object = None


def soft_value_iteration(transitions, rewards=None, gamma=None, *, temperature: float = 1.0, reference=None,
                         epsilon: float = 1e-6, max_iter: int = 100_000) -> SoftPlanningResult:
    r"""KL-regularised (soft) value iteration with a reference policy.

    Parameters
    ----------
    transitions : array (..., S, A, S) or TabularMDP
    rewards : array (..., S, A)
    gamma : float in [0, 1)
    temperature : float > 0
        :math:`\tau`, the weight of the KL penalty.
    reference : array (..., S, A), optional
        Reference policy :math:`\pi_0` (uniform by default); zero entries
        forbid their actions.
    epsilon, max_iter
        Stop at :math:`\|V_{k+1} - V_k\|_\infty < \epsilon (1-\gamma)/(2\gamma)`
        (the soft operator is also a :math:`\gamma`-contraction).

    Returns
    -------
    SoftPlanningResult

    Notes
    -----
    The regularised objective is
    :math:`E\sum_t \gamma^t (r(s_t, a_t) - \tau \,\mathrm{KL}(\pi(\cdot|s_t) \| \pi_0(\cdot|s_t)))`;
    its Bellman operator is

    .. math::

        (T_\tau V)(s) = \tau \log \sum_a \pi_0(a|s) \exp(Q(s, a)/\tau),\quad
        Q = r + \gamma P V,

    computed with a stable log-sum-exp, with maximiser
    :math:`\pi(a|s) \propto \pi_0(a|s) \exp(Q(s,a)/\tau)`.
    As :math:`\tau \to 0` this tends to value iteration.

    References
    ----------
    Geist, Scherrer & Pietquin, "A theory of regularized Markov decision
    processes", ICML 2019 (the regularised Bellman operator and its
    contraction, Sec. 2-3; theorem numbers not re-checked).

    Examples
    --------
    >>> import numpy as np
    >>> P = np.ones((1, 2, 1)); r = np.array([[0.0, 1.0]])
    >>> res = soft_value_iteration(P, r, 0.0, temperature=1.0)
    >>> bool(np.isclose(res.values[0], np.log((1 + np.e) / 2)))
    True
    """
    p, r, gamma = _as_arrays(transitions, rewards, gamma)
    tau = check_float(temperature, "temperature", positive=True)
    epsilon = check_float(epsilon, "epsilon", positive=True)
    max_iter = check_int(max_iter, "max_iter")
    xp = get_namespace(p)
    if reference is None:
        logp0 = xp.full(r.shape, -float(xp.log(xp.asarray(float(p.shape[-2])))), dtype=p.dtype)
        allowed = None
    else:
        if tuple(reference.shape) != tuple(r.shape):
            raise ValueError(f"reference must have shape {tuple(r.shape)}, got {tuple(reference.shape)}")
        check_kernel(reference, "reference")
        allowed = reference > 0
        logp0 = xp.log(xp.where(allowed, reference, 1.0))

    def soft_max(q):
        return tau * logsumexp(q / tau + logp0, axis=-1, where=allowed)

    tol = epsilon * (1.0 - gamma) / (2.0 * gamma) if gamma > 0 else xp.inf
    v = xp.zeros(p.shape[:-2], dtype=p.dtype)
    active = xp.ones(p.shape[:-3], dtype=xp.bool)
    n_iter = xp.zeros(p.shape[:-3], dtype=xp.int64)
    path = []
    for _ in range(max_iter):
        v_new = soft_max(_backup(p, r, gamma, v))
        delta = xp.max(xp.abs(v_new - v), axis=-1)
        path.append(largest_active(delta, active, xp))
        v = xp.where(active[..., None], v_new, v)
        n_iter = n_iter + xp.astype(active, xp.int64)
        active = active & ~(delta < tol)
        if not bool(xp.any(active)):
            break
    q = _backup(p, r, gamma, v)
    v_soft = soft_max(q)
    res = xp.max(xp.abs(v_soft - v), axis=-1)
    logits = q / tau + logp0
    if allowed is not None:
        logits = xp.where(allowed, logits, -xp.inf)
    pi = xp.exp(logits - logsumexp(logits, axis=-1)[..., None])
    # regularised value of pi: (I - gamma P_pi) V = r_pi - tau KL(pi || pi0)
    kl = xp.sum(xp.where(pi > 0, pi * (xp.log(xp.where(pi > 0, pi, 1.0)) - logp0), 0.0), axis=-1)
    r_pi = xp.sum(pi * r, axis=-1) - tau * kl
    p_pi = xp.sum(pi[..., None] * p, axis=-2)
    lhs = xp.eye(p.shape[-1], dtype=p.dtype) - gamma * p_pi
    vp = xp.linalg.solve(lhs, r_pi[..., None])[..., 0]
    return SoftPlanningResult(v, q, pi, vp, res, n_iter, ~active, np.asarray(path, dtype=np.float64))
