"""Bandit feedback for ``sim.run``: the learner sees only the pulled arm's outcome.

:func:`expertlab.sim.run` hands a learner with ``feedback == "bandit"`` to
:func:`run_bandit`.  One round of every replication at once:

1. the learner picks an arm ``a_t`` from its state and the round's learner key;
2. the instance draws the outcome ``x_{t,a_t}`` of that arm only (a pure
   function of ``(seed, replication, round, arm)``, so an arm's outcome in a
   round does not depend on which arm the learner pulls or on the backend);
3. the learner folds ``(a_t, x_{t,a_t})`` into its state.

Bandit learner contract
-----------------------
``init(n_reps, n_arms, xp=numpy) -> state``
    State arrays have the replication axis first.
``act(state, key) -> (arm, p)``
    ``arm``: int64 array ``(n_reps,)``.  ``key``: the ``(n_reps,)`` uint64
    learner keys of the round; a randomised learner draws from them with
    :func:`expertlab._random.uniform` (or the variates of
    :mod:`expertlab.sim._variates`).  ``p``: ``None`` for a deterministic
    (index) learner; for a learner that samples its arm from a distribution
    (EXP3, Tsallis-INF), the ``(n_reps, n_arms)`` distribution ``arm`` was
    drawn from, so that the runner can record the expected regret
    :math:`\\sum_t \\langle p_t, \\Delta_t \\rangle` as well.  Thompson sampling
    returns ``None``: its arm distribution has no closed form.
``update(state, arm, reward, p=None) -> state``
    ``reward``: float64 ``(n_reps,)``, the outcome of the pulled arm (rewards:
    larger is better); ``p`` is what ``act`` returned.

A learner that also ships a :class:`~expertlab.sim.KernelSpec` runs in the
fused drivers of :mod:`expertlab.sim._bandit_kernels` (see there for the
scalar signatures).

Bandit instances
----------------
A :class:`BanditInstance` gives the outcome ``reward(data, key, t, i)`` and
the expected reward ``mean(data, t, i)`` of arm ``i`` in round ``t`` as
``register_jitable`` scalar functions that also broadcast over arrays.

Metrics
-------
With :math:`\\mu_{t,i}` the expected reward of arm ``i`` in round ``t``:

``regret`` and ``metrics["pseudo_regret"]``
    :math:`\\max_i \\sum_{s \\le t} \\mu_{s,i} - \\sum_{s \\le t} \\mu_{s,a_s}`
    (:math:`\\sum_s \\Delta_{a_s}` for stationary instances; on an adversarial
    reward array, whose outcomes are deterministic, this is the realised
    regret against the best arm in hindsight).
``metrics["reward"]``
    The realised cumulative reward :math:`\\sum_s x_{s,a_s}`.
``metrics["expected_regret"]`` (learners that return ``p``)
    :math:`\\max_i \\sum_s \\mu_{s,i} - \\sum_s \\langle p_s, \\mu_s \\rangle`.
``metrics["realised_regret"]`` (instances with ``adversarial=True``)
    :math:`\\max_i \\sum_s x_{s,i} - \\sum_s x_{s,a_s}`, which needs every
    arm's outcome each round.
``metrics["dynamic_regret"]`` (non-stationary instances)
    :math:`\\sum_s (\\max_i \\mu_{s,i} - \\mu_{s,a_s})`.
``final["pulls"]``
    Pull counts, int64 ``(n_reps, n_arms)``.

All sums over arms run sequentially in arm order on every backend, so the
NumPy and compiled paths agree to the last bit on deterministic learners.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from .. import _random
from .._backend import asnumpy, namespace_for_backend

__all__ = ["BanditInstance", "run_bandit", "rowsum"]


class BanditInstance(NamedTuple):
    """Arms of a bandit problem as pure functions.

    Attributes
    ----------
    name : str
    n_arms : int
    reward : callable
        ``reward(data, key, t, i) -> float``, register_jitable: the outcome of
        arm ``i`` in round ``t`` (0-based) from the round's instance ``key``.
        In the array path ``key`` and ``i`` are broadcastable arrays.
    mean : callable
        ``mean(data, t, i) -> float``: the expected reward of arm ``i`` in round ``t``.
    data : tuple
        Arrays and floats the functions read.
    params : mapping
    stationary : bool
        True when ``mean`` does not depend on ``t``.
    adversarial : bool
        True for adversarial (fixed-array) instances: the runner then records
        the realised regret against the best arm in hindsight.
    max_horizon : int or None
        Longest horizon the instance defines (rows of a reward array).
    kind : str
        Reward family: ``"bernoulli"``, ``"gaussian"`` or ``"bounded"``.
    """

    name: str
    n_arms: int
    reward: Callable
    mean: Callable
    data: tuple
    params: Mapping[str, Any] = {}
    stationary: bool = True
    adversarial: bool = False
    max_horizon: int | None = None
    kind: str = "bernoulli"

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{self.name}({args})"


def rowsum(xp, a):
    """``sum(a, axis=1)`` added sequentially in column order (the kernels' order)."""
    out = a[:, 0] + 0.0
    for i in range(1, a.shape[1]):
        out = out + a[:, i]
    return out


def run_bandit(learner, instance, horizon, n_reps, seed_u, backend, rep_offset, ckpts):
    """Run a bandit learner; called by :func:`expertlab.sim.run` (arguments already checked).

    Returns ``(regret, metrics, final, wall_time)``.
    """
    if not isinstance(instance, BanditInstance):
        raise TypeError(f"a bandit learner needs a BanditInstance (e.g. expertlab.bandits.instances.bernoulli), "
                        f"got {type(instance).__name__}")
    if instance.max_horizon is not None and horizon > instance.max_horizon:
        raise ValueError(f"horizon={horizon} exceeds the {instance.max_horizon} rounds instance "
                         f"{instance.name!r} defines")
    K = instance.n_arms
    n_ck = ckpts.size
    randomised = learner.kernel.randomised if learner.kernel is not None else None
    outs = {
        "regret": np.zeros((n_ck, n_reps)),
        "reward": np.zeros((n_ck, n_reps)),
        "expected": np.zeros((n_ck, n_reps)),
        "realised": np.zeros((n_ck, n_reps)) if instance.adversarial else np.zeros((1, 1)),
        "dynamic": np.zeros((n_ck, n_reps)) if not instance.stationary else np.zeros((1, 1)),
        "pulls": np.zeros((n_reps, K), dtype=np.int64),
    }
    t0 = time.perf_counter()
    if backend in ("numba", "cuda"):
        if learner.kernel is None:
            raise ValueError(f"learner {learner.name!r} has no compiled kernel; use backend='numpy' or 'cupy'")
        from . import _bandit_kernels

        spec = learner.kernel
        drive = (_bandit_kernels.numba_driver if backend == "numba" else _bandit_kernels.cuda_driver)(spec, instance)
        prm = np.ascontiguousarray(spec.params, dtype=np.float64)
        data = tuple(np.ascontiguousarray(a) for a in instance.data)
        with np.errstate(over="ignore"):  # uint64 hashing wraps by design
            drive(prm, data, seed_u, np.int64(rep_offset), np.int64(horizon), ckpts, np.int64(K),
                  outs["regret"], outs["reward"], outs["expected"], outs["realised"], outs["dynamic"],
                  outs["pulls"])
    else:
        xp = namespace_for_backend(backend)
        with np.errstate(over="ignore"):
            randomised = _run_array(xp, learner, instance, horizon, n_reps, seed_u, rep_offset, ckpts, outs)
    wall = time.perf_counter() - t0
    metrics = {"pseudo_regret": outs["regret"].copy(), "reward": outs["reward"]}
    if randomised:
        metrics["expected_regret"] = outs["expected"]
    if instance.adversarial:
        metrics["realised_regret"] = outs["realised"]
    if not instance.stationary:
        metrics["dynamic_regret"] = outs["dynamic"]
    return outs["regret"], metrics, {"pulls": outs["pulls"]}, wall


def _run_array(xp, learner, instance, horizon, n_reps, seed_u, rep_offset, ckpts, outs):
    """Reference path: one Python iteration per round for all replications."""
    K = instance.n_arms
    reps = xp.arange(rep_offset, rep_offset + n_reps, dtype=xp.uint64)
    rk = _random.rep_key(xp.asarray([seed_u], dtype=xp.uint64), reps)
    lk = _random.stream_key(rk, _random.LEARNER_STREAM)
    data = tuple(xp.asarray(a) for a in instance.data)
    arms = xp.arange(K, dtype=xp.int64)
    rows = xp.arange(n_reps)
    state = learner.init(n_reps, K, xp)
    pulls = xp.zeros((n_reps, K), dtype=xp.int64)
    cum_x = xp.zeros(n_reps)
    pseudo = xp.zeros(n_reps)
    expct = xp.zeros(n_reps)
    dyn = xp.zeros(n_reps)
    cum_mu = xp.zeros(n_reps)
    cum_pmu = xp.zeros(n_reps)
    M = xp.zeros(K)
    X = xp.zeros((n_reps, K)) if instance.adversarial else None
    cum_xa = xp.zeros(n_reps)
    if instance.stationary:
        mu0 = xp.asarray(instance.mean(data, 0, arms), dtype=xp.float64) + xp.zeros(K)
        gap = float(xp.max(mu0)) - mu0
    randomised = None
    ck = [int(c) for c in ckpts]
    c = 0
    for t in range(horizon):
        tt = np.uint64(t)
        key = _random.round_key(rk, tt)
        arm, p = learner.act(state, _random.round_key(lk, tt))
        if randomised is None:
            randomised = p is not None
        x = xp.asarray(instance.reward(data, key, t, arm), dtype=xp.float64) + xp.zeros(n_reps)
        cum_x = cum_x + x
        pulls[rows, arm] += 1
        if instance.stationary:
            pseudo = pseudo + gap[arm]
            if randomised:
                expct = expct + rowsum(xp, p * gap[None, :])
        else:
            mu = xp.asarray(instance.mean(data, t, arms), dtype=xp.float64) + xp.zeros(K)
            M = M + mu
            mua = mu[arm]
            cum_mu = cum_mu + mua
            dyn = dyn + (float(xp.max(mu)) - mua)
            if randomised:
                cum_pmu = cum_pmu + rowsum(xp, p * mu[None, :])
        if X is not None:
            X = X + (xp.asarray(instance.reward(data, key[:, None], t, arms[None, :]), dtype=xp.float64)
                     + xp.zeros((n_reps, K)))
            cum_xa = cum_xa + x
        state = learner.update(state, arm, x, p)
        if c < len(ck) and t + 1 == ck[c]:
            outs["reward"][c] = asnumpy(cum_x)
            if instance.stationary:
                outs["regret"][c] = asnumpy(pseudo)
                outs["expected"][c] = asnumpy(expct)
            else:
                best = float(xp.max(M))
                outs["regret"][c] = asnumpy(best - cum_mu)
                outs["expected"][c] = asnumpy(best - cum_pmu)
                outs["dynamic"][c] = asnumpy(dyn)
            if X is not None:
                outs["realised"][c] = asnumpy(xp.max(X, axis=1) - cum_xa)
            c += 1
    outs["pulls"][...] = asnumpy(pulls)
    return bool(randomised)

