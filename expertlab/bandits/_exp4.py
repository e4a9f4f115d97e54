r"""Exp4: exponential weights over experts that give advice, with bandit feedback.

Each round :math:`N` experts each recommend a distribution
:math:`\xi_{j,t} \in \Delta_K` over the :math:`K` arms (on the
environments :func:`~expertlab.bandits.contextual_policies` and
:func:`~expertlab.bandits.partitioned_expertise`: the indicator of the arm
their policy picks in this round's context).  The learner plays an arm and
sees only its reward; regret is measured against the best expert.  The
array path is the reference; a fused Numba kernel (``prange`` over
replications, the round loop inside) is registered as the ``numba`` fast
path of Exp4 on :class:`~expertlab.bandits.AdviceInstance` and
:class:`~expertlab.bandits.PartitionedExpertise` and draws from the same keys
in the same order.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .._backend import get_namespace
from .._random import LEARNER_STREAM, rep_key, round_key, stream_key, uniform
from .._validation import check_float
from ..sim._arms import rowsum
from ..sim._engine import register_fast_path
from ..sim._protocol import Learner
from ._advice import AdviceChoice, AdviceInstance, PartitionedExpertise
from ._common import check_feedback, sample_index

__all__ = ["exp4", "Exp4State"]


class Exp4State(NamedTuple):
    r"""State of :func:`exp4` (leading axis: replications).

    Attributes
    ----------
    loss_est : array, shape (n_reps, n_experts)
        Cumulative loss estimates :math:`\tilde L_{t,j}` of the experts.
    eta : array, shape (n_reps,)
        The learning rate.
    advice : array of int, shape (n_reps, n_experts)
        The advice of the current round (kept by ``act`` for ``update``).
    p : array, shape (n_reps, n_arms)
        The distribution over arms played in the current round (zero before the first).
    """

    loss_est: object
    eta: object
    advice: object
    p: object


class Exp4Kernel(NamedTuple):
    """Marks a learner as Exp4 for its compiled fast path; ``eta`` is ``None`` when tuned to the run."""

    eta: float | None


def _tuned_eta(horizon: int, n_arms: int, n_experts: int) -> float:
    return math.sqrt(2.0 * math.log(n_experts) / (horizon * n_arms))


def _experts(spec) -> int:
    n = spec.info.get("n_experts")
    if n is None:
        raise ValueError(f"exp4 needs an environment with expert advice (spec.n_experts), got {spec!r}")
    return int(n)


def exp4(eta: float | None = None) -> Learner:
    r"""Exp4 (loss-based, no explicit exploration): exponential weights over experts, bandit feedback.

    Parameters
    ----------
    eta : float, optional
        Learning rate; default :math:`\sqrt{2\ln N/(TK)}` with :math:`T` the
        run's horizon (the tuning of the bound below).

    Returns
    -------
    Learner
        A randomised ``"advice"`` learner; ``act`` returns the arm with the
        distributions :math:`p_t` over arms and :math:`q_t` over experts
        (:class:`~expertlab.bandits.AdviceChoice`).  A fused Numba kernel is
        registered for it on :func:`contextual_policies` and
        :func:`partitioned_expertise` environments.

    Notes
    -----
    With :math:`q_t \propto \exp(-\eta \tilde L_{t-1})` over experts, play
    :math:`A_t \sim p_t = \sum_j q_{t,j}\xi_{j,t}`, estimate the losses
    :math:`\tilde\ell_{t,i} = \ell_{t,i}\mathbb 1[A_t = i]/p_{t,i}` and charge
    expert :math:`j` with :math:`\tilde y_{t,j} = \langle \xi_{j,t}, \tilde\ell_t\rangle`.
    Then the expected regret against the best expert is at most
    :math:`\ln N/\eta + \eta T K/2`, which is :math:`\sqrt{2TK\ln N}` at the
    default :math:`\eta` (Theorem 4.2 of [2]_, the loss-based version of
    Exp4 of [1]_; theorem number not re-checked).  The loss is one minus the
    reward; the arm is drawn by inverse CDF from uniform 0 of the round's
    learner key (the first arm whose cumulative probability exceeds it).

    [validated-rates]

    References
    ----------
    .. [1] P. Auer, N. Cesa-Bianchi, Y. Freund, R. E. Schapire, "The
       nonstochastic multiarmed bandit problem", SIAM J. Computing 32(1), 2002 (Exp4).
    .. [2] S. Bubeck and N. Cesa-Bianchi, "Regret Analysis of Stochastic and
       Nonstochastic Multi-armed Bandit Problems", Foundations and Trends in
       Machine Learning 5(1), 2012, Section 4.2, Theorem 4.2.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import contextual_policies, exp4
    >>> inst = contextual_policies(4, 3, 16, gap=0.3)
    >>> res = sim.run(exp4(), inst, horizon=2000, n_reps=20, seed=0,
    ...               metrics=["expected_best_expert_regret", "oracle_follows"])
    >>> bool(res.mean("expected_best_expert_regret")[-1] < 2000 * 0.3 / 2)
    True
    >>> bool(res.mean("oracle_follows")[-1] > 0.5 * 2000)
    True
    """
    eta = None if eta is None else check_float(eta, "eta", positive=True)

    def init(spec, n_reps, keys=None, xp=np):
        K, N = spec.n_actions, _experts(spec)
        e = _tuned_eta(spec.horizon, K, N) if eta is None else eta
        return Exp4State(loss_est=xp.zeros((n_reps, N)), eta=xp.full(n_reps, e),
                         advice=xp.zeros((n_reps, N), dtype=xp.int64), p=xp.zeros((n_reps, K)))

    def act(state, obs, keys):
        xp = get_namespace(state.loss_est)
        L = state.loss_est
        n_reps, N = L.shape
        adv = obs.advice
        if tuple(adv.shape) != (n_reps, N):
            raise ValueError(f"exp4: the advice must have shape ({n_reps}, {N}), got {tuple(adv.shape)}")
        K = state.p.shape[1]
        lo = xp.min(L, axis=1)
        w = xp.exp(-state.eta[:, None] * (L - lo[:, None]))
        q = w / rowsum(xp, w)[:, None]
        # p_i = sum of q_j over the experts advising arm i, added in expert order (as in the kernel; the
        # zeros of the other experts add exactly nothing)
        onehot = adv[:, :, None] == xp.arange(K)[None, None, :]
        p = xp.cumulative_sum(xp.where(onehot, q[:, :, None], 0.0), axis=1)[:, N - 1, :]
        u = uniform(keys, np.uint64(0))
        below = xp.count_nonzero(xp.cumulative_sum(p, axis=1) <= u[:, None], axis=1)
        arm = xp.astype(xp.minimum(below, K - 1), xp.int64)
        return AdviceChoice(arm, None, p, q), state._replace(advice=adv, p=p)

    def update(state, choice, reward, keys=None):
        xp = get_namespace(state.loss_est)
        arm = choice.arm
        check_feedback(state.p, arm, reward)
        rows = xp.arange(arm.shape[0])
        est = (1.0 - reward) / state.p[rows, arm]
        return state._replace(loss_est=state.loss_est + xp.where(state.advice == arm[:, None], est[:, None], 0.0))

    return Learner(name="exp4", feedback="advice", init=init, act=act, update=update,
                   params={} if eta is None else {"eta": eta}, kernel=Exp4Kernel(eta), doc=exp4.__doc__)


# --------------------------------------------------------------------------
# the compiled fast path: Exp4 on an advice environment, one fused kernel


@njit(parallel=True, cache=True)
def _exp4_kernel(kind, means, table, oracle, best_means, accurate, n_features, n_split, cells_per_axis, eta, seed,
                 rep_offset, horizon, ck, out_regret, out_best, out_reward, out_expected, out_expected_best,
                 out_follows, pulls):
    C, K = means.shape
    N = table.shape[0]
    m = cells_per_axis
    for r in prange(out_regret.shape[1]):
        rk = rep_key(seed, np.uint64(rep_offset + r))
        lk = stream_key(rk, LEARNER_STREAM)
        L = np.zeros(N)
        q = np.zeros(N)
        p = np.zeros(K)
        regret = 0.0
        best = 0.0
        cum_y = 0.0
        expected = 0.0
        expected_best = 0.0
        follows = 0.0
        c_idx = 0
        for t in range(horizon):
            key = round_key(rk, np.uint64(t))
            if kind == 0:  # AdviceInstance: context index from uniform K
                ctx = int(uniform(key, np.uint64(K)) * C)
                if ctx > C - 1:
                    ctx = C - 1
            else:  # PartitionedExpertise: the cell of x_i = uniform i, i < n_features
                ctx = 0
                mult = 1
                for i in range(n_split):
                    k = int(uniform(key, np.uint64(i)) * m)
                    if k > m - 1:
                        k = m - 1
                    ctx += k * mult
                    mult *= m
            lo = L[0]
            for j in range(1, N):
                if L[j] < lo:
                    lo = L[j]
            tot = 0.0
            for j in range(N):
                q[j] = math.exp(-eta * (L[j] - lo))
                tot += q[j]
            for i in range(K):
                p[i] = 0.0
            for j in range(N):
                q[j] = q[j] / tot
                p[table[j, ctx]] += q[j]
            a = sample_index(p, K, uniform(round_key(lk, np.uint64(t)), np.uint64(0)))
            if kind == 0:
                u = uniform(key, np.uint64(a))
            else:
                u = uniform(key, np.uint64(n_features))
            mu = means[ctx, a]
            y = 1.0 if u < mu else 0.0
            est = (1.0 - y) / p[a]
            for j in range(N):
                if table[j, ctx] == a:
                    L[j] += est
            pulls[r, a] += 1
            regret += oracle[ctx] - mu
            best += best_means[ctx] - mu
            cum_y += y
            mix = 0.0
            for i in range(K):
                mix += p[i] * means[ctx, i]
            expected += oracle[ctx] - mix
            expected_best += best_means[ctx] - mix
            fol = 0.0
            for j in range(N):
                fol += q[j] * accurate[j, ctx]
            follows += fol
            if c_idx < ck.shape[0] and t + 1 == ck[c_idx]:
                out_regret[c_idx, r] = regret
                out_best[c_idx, r] = best
                out_reward[c_idx, r] = cum_y
                out_expected[c_idx, r] = expected
                out_expected_best[c_idx, r] = expected_best
                out_follows[c_idx, r] = follows
                c_idx += 1


_FAST_METRICS = ("regret", "best_expert_regret", "reward", "expected_regret", "expected_best_expert_regret",
                 "oracle_follows")


def _supports(learner, env) -> bool:
    return isinstance(learner.kernel, Exp4Kernel) and isinstance(env, (AdviceInstance, PartitionedExpertise))


def _drive(learner, env, horizon, n_reps, seed_u, rep_offset, ckpts):
    spec = env.spec
    K, N = spec.n_actions, spec.n_experts
    eta = learner.kernel.eta if learner.kernel.eta is not None else _tuned_eta(horizon, K, N)
    means, table, oracle, best_means, accurate = env._tables()
    if isinstance(env, AdviceInstance):
        kind, p, s, m = 0, 0, 0, 1
    else:
        kind, p, s, m = 1, env.n_features, env.n_split_features, env.cells_per_axis
    outs = [np.zeros((ckpts.size, n_reps)) for _ in _FAST_METRICS]
    pulls = np.zeros((n_reps, K), dtype=np.int64)
    _exp4_kernel(np.int64(kind), means, np.ascontiguousarray(table, dtype=np.int64), oracle, best_means,
                 np.ascontiguousarray(accurate), np.int64(p), np.int64(s), np.int64(m), float(eta), np.uint64(seed_u),
                 np.int64(rep_offset), np.int64(horizon), np.ascontiguousarray(ckpts, dtype=np.int64), *outs, pulls)
    return dict(zip(_FAST_METRICS, outs)), {"pulls": pulls}


register_fast_path("numba", "exp4-advice", supports=_supports, metrics=_FAST_METRICS, driver=_drive)
