r"""Exp4: exponential weights over experts that give advice, with bandit feedback.

Each round :math:`N` experts each recommend a distribution
:math:`\xi_{j,t} \in \Delta_K` over the :math:`K` arms (for a contextual
problem: the arm their policy picks in this round's context).  The learner
plays an arm and sees only its loss; regret is measured against the best
expert.  The advice and the losses are an :class:`AdviceInstance`, drawn
from the counter-based generator, so a run is a pure function of
``(seed, replication, round, index)``; replications run in one compiled
kernel (``prange`` over replications, the round loop inside).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .._random import LEARNER_STREAM, rep_key, round_key, seed_to_uint64, stream_key, uniform
from .._validation import check_float, check_int
from ..sim._engine import checkpoint_grid
from ._common import sample_index

__all__ = ["AdviceInstance", "Exp4Result", "exp4", "contextual_policies"]


class AdviceInstance(NamedTuple):
    r"""Contexts, arm means per context and expert policies.

    ``means[c, a]`` is the mean reward of arm ``a`` in context ``c`` (contexts
    uniform over ``n_contexts``); expert ``j`` plays ``policies[j, c]`` in
    context ``c``, so its advice is that arm's indicator.
    """

    name: str
    means: np.ndarray
    policies: np.ndarray
    params: dict

    @property
    def n_arms(self) -> int:
        return self.means.shape[1]

    @property
    def n_experts(self) -> int:
        return self.policies.shape[0]

    def expert_values(self) -> np.ndarray:
        """Expected reward per round of each expert (contexts uniform)."""
        c = np.arange(self.means.shape[0])
        return self.means[c[None, :], self.policies].mean(axis=1)


def contextual_policies(n_contexts: int, n_arms: int, n_experts: int, *, gap: float = 0.2, seed: int = 0
                        ) -> AdviceInstance:
    r"""A contextual instance: in each context one arm has mean :math:`\tfrac12 + \Delta`, the others :math:`\tfrac12`.

    Expert 0 is the optimal policy; the other ``n_experts - 1`` are random
    policies (a fixed NumPy generator seeded by ``seed``), forced to differ
    from the optimal one in at least one context.

    Examples
    --------
    >>> inst = contextual_policies(4, 3, 8, gap=0.2)
    >>> inst.means.shape, inst.policies.shape, int(np.argmax(inst.expert_values()))
    ((4, 3), (8, 4), 0)
    """
    C = check_int(n_contexts, "n_contexts")
    K = check_int(n_arms, "n_arms", minimum=2)
    N = check_int(n_experts, "n_experts", minimum=2)
    gap = check_float(gap, "gap", positive=True, maximum=0.5)
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


@dataclasses.dataclass(frozen=True, eq=False)
class Exp4Result:
    r"""Regret of :func:`exp4` against the best expert, on a checkpoint grid.

    Attributes
    ----------
    checkpoints : ndarray of int
    regret : ndarray, shape (n_checkpoints, n_reps)
        Expected regret against the best expert in expectation:
        :math:`\sum_t \big(\mu_{c_t}(\pi^\star(c_t)) - \langle p_t, \mu_{c_t}\rangle\big)`
        with :math:`\pi^\star` the expert of largest mean reward.
    weights : ndarray, shape (n_reps, n_experts)
        The final distribution over experts.
    eta : float
    seed : int
    wall_time : float
    """

    checkpoints: np.ndarray
    regret: np.ndarray
    weights: np.ndarray
    eta: float
    seed: int
    wall_time: float


def exp4(instance: AdviceInstance, horizon: int, *, eta: float | None = None, n_reps: int = 100, seed=0,
         rep_offset: int = 0, checkpoints=None) -> Exp4Result:
    r"""Exp4 (loss-based, no explicit exploration) on an advice instance.

    Parameters
    ----------
    instance : AdviceInstance
        :func:`contextual_policies`.
    horizon : int
    eta : float, optional
        Learning rate; default :math:`\sqrt{2\ln N/(TK)}`, the tuning of the bound below.
    n_reps, seed, rep_offset
        As in :func:`expertlab.sim.run`.
    checkpoints : array of int, optional

    Returns
    -------
    Exp4Result

    Notes
    -----
    With :math:`q_t \propto \exp(-\eta \tilde L_{t-1})` over experts, play
    :math:`A_t \sim p_t = \sum_j q_{t,j}\xi_{j,t}`, estimate the losses
    :math:`\tilde\ell_{t,i} = \ell_{t,i}\mathbb 1[A_t = i]/p_{t,i}` and charge
    expert :math:`j` with :math:`\tilde y_{t,j} = \langle \xi_{j,t}, \tilde\ell_t\rangle`.
    Then the expected regret against the best expert is at most
    :math:`\ln N/\eta + \eta T K/2`, which is :math:`\sqrt{2TK\ln N}` at the
    default :math:`\eta` (Theorem 4.2 of [2]_, the loss-based version of
    Exp4 of [1]_; theorem number not re-checked).  Rewards are Bernoulli
    draws of the context's arm means; the loss is one minus the reward.

    References
    ----------
    .. [1] P. Auer, N. Cesa-Bianchi, Y. Freund, R. E. Schapire, "The
       nonstochastic multiarmed bandit problem", SIAM J. Computing 32(1), 2002 (Exp4).
    .. [2] S. Bubeck and N. Cesa-Bianchi, "Regret Analysis of Stochastic and
       Nonstochastic Multi-armed Bandit Problems", 2012, Section 4.2.

    Examples
    --------
    >>> from expertlab.bandits import contextual_policies, exp4
    >>> inst = contextual_policies(4, 3, 16, gap=0.3)
    >>> res = exp4(inst, 2000, n_reps=20, seed=0)
    >>> bool(res.weights[:, 0].mean() > 0.5), bool(res.regret[-1].mean() < 2000 * 0.3 / 2)
    (True, True)
    """
    if not isinstance(instance, AdviceInstance):
        raise TypeError(f"instance must be an AdviceInstance, got {type(instance).__name__}")
    T = check_int(horizon, "horizon")
    n_reps = check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    K, N = instance.n_arms, instance.n_experts
    C = instance.means.shape[0]
    eta = math.sqrt(2.0 * math.log(N) / (T * K)) if eta is None else check_float(eta, "eta", positive=True)
    ck = checkpoint_grid(T) if checkpoints is None else np.unique(np.asarray(checkpoints, dtype=np.int64))
    if ck.size == 0 or ck[0] < 1 or ck[-1] > T:
        raise ValueError(f"checkpoints must be a non-empty set of rounds in [1, {T}]")
    seed_u = seed_to_uint64(seed)
    best = int(np.argmax(instance.expert_values()))
    out = np.zeros((ck.size, n_reps))
    weights = np.zeros((n_reps, N))
    t0 = time.perf_counter()
    with np.errstate(over="ignore"):
        _exp4_kernel(np.ascontiguousarray(instance.means), np.ascontiguousarray(instance.policies), best, eta,
                     seed_u, np.int64(rep_offset), np.int64(T), ck, out, weights)
    wall = time.perf_counter() - t0
    return Exp4Result(ck, out, weights, eta, int(seed_u), wall)


@njit(parallel=True, cache=False)
def _exp4_kernel(means, policies, best, eta, seed, rep_offset, T, ck, out, weights):
    C, K = means.shape
    N = policies.shape[0]
    for r in prange(out.shape[1]):
        rk = rep_key(seed, np.uint64(rep_offset + r))
        lk = stream_key(rk, LEARNER_STREAM)
        L = np.zeros(N)
        q = np.zeros(N)
        p = np.zeros(K)
        regret = 0.0
        c_idx = 0
        for t in range(T):
            key = round_key(rk, np.uint64(t))
            ctx = int(uniform(key, np.uint64(K)) * C)
            if ctx >= C:
                ctx = C - 1
            lo = L.min()
            tot = 0.0
            for j in range(N):
                q[j] = math.exp(-eta * (L[j] - lo))
                tot += q[j]
            p[:] = 0.0
            for j in range(N):
                q[j] /= tot
                p[policies[j, ctx]] += q[j]
            a = sample_index(p, K, uniform(round_key(lk, np.uint64(t)), np.uint64(0)))
            reward = 1.0 if uniform(key, np.uint64(a)) < means[ctx, a] else 0.0
            est = (1.0 - reward) / p[a]
            for j in range(N):
                if policies[j, ctx] == a:
                    L[j] += est
            mix = 0.0
            for i in range(K):
                mix += p[i] * means[ctx, i]
            regret += means[ctx, policies[best, ctx]] - mix
            if c_idx < ck.shape[0] and t + 1 == ck[c_idx]:
                out[c_idx, r] = regret
                c_idx += 1
        lo = L.min()
        tot = 0.0
        for j in range(N):
            q[j] = math.exp(-eta * (L[j] - lo))
            tot += q[j]
        for j in range(N):
            weights[r, j] = q[j] / tot
