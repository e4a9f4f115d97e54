"""Fused drivers for bandit learners: the round loop of one replication compiled.

As for the full-information drivers, the body
of one replication is written once (:func:`_make_body`) from the learner's
and the instance's scalar functions and compiled twice: in an
``@njit(parallel=True)`` driver with ``prange`` over replications, and in a
``numba.cuda`` kernel with one thread per replication (tested on the CPU
under ``NUMBA_ENABLE_CUDASIM=1``).  The CPU driver is cached on disk as in
:mod:`expertlab.sim._kernels`.

Scalar contract of a bandit learner (:class:`BanditKernelSpec`)
---------------------------------------------------------------
``S`` is a ``(n_rows, n_arms)`` float64 work array and ``s`` an
``(n_scalars,)`` float64 work array, both zero on entry to ``init``; ``prm``
is the float64 vector ``params``.  The functions are ``register_jitable``.

``init(prm, S, s)``
``act(prm, S, s, t, key, p) -> arm``
    Returns the arm (int) pulled in round ``t`` (0-based); ``key`` is the
    learner's uint64 key of the round.  A randomised learner
    (``randomised=True``) writes the distribution it sampled from into
    ``p`` (length ``n_arms``); others leave ``p`` alone.
``update(prm, S, s, t, arm, reward, p)``
    Folds the pulled arm's reward in.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from .._random import LEARNER_STREAM, rep_key, round_key, stream_key
from ._kernels import cuda_launch

__all__ = ["BanditKernelSpec", "numba_driver", "cuda_driver"]


class BanditKernelSpec(NamedTuple):
    """Scalar step functions of a bandit learner (see the module docstring)."""

    n_rows: int
    n_scalars: int
    params: Any
    init: Callable
    act: Callable
    update: Callable
    randomised: bool = False
    cuda_ok: bool = True


_CACHE: dict = {}
_cuda = None


def _make_body(spec, instance):
    k_init, k_act, k_update = spec.init, spec.act, spec.update
    reward_fn, mean_fn = instance.reward, instance.mean
    stationary = bool(instance.stationary)
    adversarial = bool(instance.adversarial)
    randomised = bool(spec.randomised)

    @register_jitable
    def body(prm, data, seed, rep, horizon, ckpts, S, s, p, gap, M, X, out_regret, out_reward, out_expected,
             out_realised, out_dynamic, out_pulls, col):
        K = p.shape[0]
        k_init(prm, S, s)
        rk = rep_key(seed, np.uint64(rep))
        lk = stream_key(rk, LEARNER_STREAM)
        if stationary:
            best = -np.inf
            for i in range(K):
                gap[i] = mean_fn(data, 0, i)
                if gap[i] > best:
                    best = gap[i]
            for i in range(K):
                gap[i] = best - gap[i]
        cum_x = 0.0
        pseudo = 0.0
        expct = 0.0
        dyn = 0.0
        cum_mu = 0.0
        cum_pmu = 0.0
        c = 0
        n_ck = ckpts.shape[0]
        for t in range(horizon):
            key = round_key(rk, np.uint64(t))
            a = k_act(prm, S, s, t, round_key(lk, np.uint64(t)), p)
            x = reward_fn(data, key, t, a)
            cum_x += x
            out_pulls[col, a] += 1
            if stationary:
                pseudo += gap[a]
                if randomised:
                    e = 0.0
                    for i in range(K):
                        e += p[i] * gap[i]
                    expct += e
            else:
                mx = -np.inf
                e = 0.0
                for i in range(K):
                    mu = mean_fn(data, t, i)
                    M[i] += mu
                    if mu > mx:
                        mx = mu
                    if randomised:
                        e += p[i] * mu
                mua = mean_fn(data, t, a)
                cum_mu += mua
                dyn += mx - mua
                cum_pmu += e
            if adversarial:
                for i in range(K):
                    X[i] += reward_fn(data, key, t, i)
            k_update(prm, S, s, t, a, x, p)
            if c < n_ck and t + 1 == ckpts[c]:
                out_reward[c, col] = cum_x
                if stationary:
                    out_regret[c, col] = pseudo
                    out_expected[c, col] = expct
                else:
                    best = -np.inf
                    for i in range(K):
                        if M[i] > best:
                            best = M[i]
                    out_regret[c, col] = best - cum_mu
                    out_expected[c, col] = best - cum_pmu
                    out_dynamic[c, col] = dyn
                if adversarial:
                    bx = -np.inf
                    for i in range(K):
                        if X[i] > bx:
                            bx = X[i]
                    out_realised[c, col] = bx - cum_x
                c += 1

    return body


def _key(kind, spec, instance):
    return (kind, spec.init, spec.act, spec.update, spec.n_rows, spec.n_scalars, spec.randomised,
            instance.reward, instance.mean, instance.stationary, instance.adversarial)


def numba_driver(spec, instance):
    """Compiled CPU driver: ``drive(prm, data, seed, rep0, horizon, ckpts, K, *outs)``."""
    key = _key("numba", spec, instance)
    if key in _CACHE:
        return _CACHE[key]
    from . import _kernel_cache

    body = _make_body(spec, instance)
    drive = _make_drive(body, spec.n_rows, spec.n_scalars)
    fn = _kernel_cache.cached_njit("bandit", drive, helpers=(body,), options=_DRIVE_OPTIONS,
                                   extra_modules=_CACHE_MODULES)
    if fn is None:  # a step function that is not importable by name, or no writable cache folder
        fn = njit(**_DRIVE_OPTIONS)(drive)
    _CACHE[key] = fn
    return fn


_DRIVE_OPTIONS = {"parallel": True, "nogil": True}
#: Modules whose sources enter the hash of a cached driver whatever the pair.
_CACHE_MODULES = ("expertlab._random", "expertlab.sim._kernels", "expertlab.sim._bandit_kernels")


def _make_drive(body, k_rows, k_scal):
    """The CPU driver (plain Python, compiled by the caller): ``prange`` over replications around ``body``."""

    def drive(prm, data, seed, rep0, horizon, ckpts, K, out_regret, out_reward, out_expected, out_realised,
              out_dynamic, out_pulls):
        n_reps = out_regret.shape[1]
        for r in prange(n_reps):
            S = np.zeros((k_rows, K))
            s = np.zeros(max(k_scal, 1))
            p = np.zeros(K)
            gap = np.zeros(K)
            M = np.zeros(K)
            X = np.zeros(K)
            body(prm, data, seed, rep0 + r, horizon, ckpts, S, s, p, gap, M, X, out_regret, out_reward,
                 out_expected, out_realised, out_dynamic, out_pulls, r)

    return drive


def cuda_driver(spec, instance):
    """``launch(prm, data, seed, rep0, horizon, ckpts, K, *outs, dtype="float64")`` on CUDA, one thread per replication.

    ``dtype="float32"``: the learner's work arrays ``S``, ``s`` and ``p`` are
    float32 (see :func:`expertlab.sim._kernels.cuda_driver`).
    """
    global _cuda
    from numba import cuda

    _cuda = cuda  # read through a module global, as in expertlab.sim._kernels
    if not spec.cuda_ok:
        raise ValueError("this learner's kernel does not support the CUDA backend")
    key = _key("cuda", spec, instance)
    if key in _CACHE:
        return _CACHE[key]
    body = _make_body(spec, instance)
    k_rows, k_scal = spec.n_rows, spec.n_scalars

    @cuda.jit
    def kern(prm, data, seed, rep0, horizon, ckpts, S, s, p, gap, M, X, out_regret, out_reward, out_expected,
             out_realised, out_dynamic, out_pulls):
        r = _cuda.grid(1)
        if r < out_regret.shape[1]:
            body(prm, data, seed, rep0 + r, horizon, ckpts, S[r], s[r], p[r], gap[r], M[r], X[r], out_regret,
                 out_reward, out_expected, out_realised, out_dynamic, out_pulls, r)

    def launch(prm, data, seed, rep0, horizon, ckpts, K, out_regret, out_reward, out_expected, out_realised,
               out_dynamic, out_pulls, threads_per_block=128, dtype="float64"):
        n_reps = out_regret.shape[1]
        d = cuda.to_device
        dt = np.dtype(dtype)  # the learner's work arrays and p; gaps and sums over rounds stay float64
        work = [d(np.zeros((n_reps, k_rows, K), dtype=dt)), d(np.zeros((n_reps, max(k_scal, 1)), dtype=dt)),
                d(np.zeros((n_reps, K), dtype=dt))]
        work += [d(np.zeros((n_reps, K))) for _ in range(3)]
        cuda_launch(cuda, kern, n_reps, threads_per_block, (prm, data, seed, rep0, horizon, ckpts), work,
                    (out_regret, out_reward, out_expected, out_realised, out_dynamic, out_pulls))

    _CACHE[key] = launch
    return launch
