"""Fused drivers: the whole round loop of one replication in compiled code.

The per-replication body is written once (:func:`_make_body`) from the
learner's and the instance's scalar functions, and compiled twice: inside a
``@njit(parallel=True)`` driver with ``prange`` over replications, and inside
a ``numba.cuda`` kernel with one thread per replication (tested on the CPU
under ``NUMBA_ENABLE_CUDASIM=1``).  Compiled drivers are cached per
(learner kernel, instance) pair for the life of the process.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from .._random import LEARNER_STREAM, rep_key, round_key, stream_key

__all__ = ["numba_driver", "cuda_driver"]

_CACHE: dict = {}


def _make_body(spec, instance):
    k_init, k_act, k_update = spec.init, spec.act, spec.update
    loss_fn = instance.loss
    has_awake = instance.awake is not None
    awake_fn = instance.awake if has_awake else _never
    has_comp = instance.comparator is not None
    comp_fn = instance.comparator if has_comp else _zero_comp
    has_mean = instance.mean is not None
    mean_fn = instance.mean if has_mean else _zero_mean

    @register_jitable
    def body(prm, data, seed, rep, horizon, ckpts, S, s, p, l, aw, L, Rs, M,
             out_regret, out_sleep, out_track, out_pseudo, out_expert, col):
        n = p.shape[0]
        for i in range(n):
            aw[i] = True
        k_init(prm, S, s)
        rk = rep_key(seed, np.uint64(rep))
        lk = stream_key(rk, LEARNER_STREAM)
        cum = 0.0
        cum_mu = 0.0
        track = 0.0
        c = 0
        n_ck = ckpts.shape[0]
        for t in range(horizon):
            key = round_key(rk, np.uint64(t))
            if has_awake:
                for i in range(n):
                    aw[i] = awake_fn(data, key, t, i)
            k_act(prm, S, s, t, round_key(lk, np.uint64(t)), aw, p)
            mix = 0.0
            for i in range(n):
                li = loss_fn(data, key, t, i)
                l[i] = li
                L[i] += li
                mix += p[i] * li
            cum += mix
            if has_awake:
                for i in range(n):
                    if aw[i]:
                        Rs[i] += mix - l[i]
            if has_comp:
                track += mix - l[int(comp_fn(data, t))]
            if has_mean:
                for i in range(n):
                    mu = mean_fn(data, t, i)
                    M[i] += mu
                    cum_mu += p[i] * mu
            k_update(prm, S, s, t, l, aw, p)
            if c < n_ck and t + 1 == ckpts[c]:
                mn = L[0]
                for i in range(1, n):
                    if L[i] < mn:
                        mn = L[i]
                out_regret[c, col] = cum - mn
                if has_awake:
                    mx = -np.inf
                    for i in range(n):
                        if Rs[i] > mx:
                            mx = Rs[i]
                    out_sleep[c, col] = mx
                if has_comp:
                    out_track[c, col] = track
                if has_mean:
                    mn = M[0]
                    for i in range(1, n):
                        if M[i] < mn:
                            mn = M[i]
                    out_pseudo[c, col] = cum_mu - mn
                c += 1
        for i in range(n):
            if has_awake:
                out_expert[col, i] = Rs[i]
            else:
                out_expert[col, i] = cum - L[i]

    return body


@register_jitable
def _never(data, key, t, i):
    return True


@register_jitable
def _zero_comp(data, t):
    return 0


@register_jitable
def _zero_mean(data, t, i):
    return 0.0


def _key(kind, spec, instance):
    return (kind, spec.init, spec.act, spec.update, spec.n_rows, spec.n_scalars,
            instance.loss, instance.awake, instance.comparator, instance.mean)


def numba_driver(spec, instance):
    """Return the compiled CPU driver for ``(spec, instance)``.

    ``drive(prm, data, seed, rep0, horizon, ckpts, n, out_regret, out_sleep,
    out_track, out_pseudo, out_expert)`` fills the output arrays for replications
    ``rep0 .. rep0 + out_regret.shape[1] - 1``.
    """
    key = _key("numba", spec, instance)
    if key in _CACHE:
        return _CACHE[key]
    body = _make_body(spec, instance)
    k_rows, k_scal = spec.n_rows, spec.n_scalars

    @njit(parallel=True, nogil=True)
    def drive(prm, data, seed, rep0, horizon, ckpts, n, out_regret, out_sleep, out_track, out_pseudo,
              out_expert):
        n_reps = out_regret.shape[1]
        for r in prange(n_reps):
            S = np.zeros((k_rows, n))
            s = np.zeros(max(k_scal, 1))
            p = np.zeros(n)
            l = np.zeros(n)
            aw = np.ones(n, dtype=np.bool_)
            L = np.zeros(n)
            Rs = np.zeros(n)
            M = np.zeros(n)
            body(prm, data, seed, rep0 + r, horizon, ckpts, S, s, p, l, aw, L, Rs, M,
                 out_regret, out_sleep, out_track, out_pseudo, out_expert, r)

    _CACHE[key] = drive
    return drive


def cuda_driver(spec, instance):
    """Return ``launch(prm, data, seed, rep0, horizon, ckpts, n, outs...)`` running on CUDA.

    One thread per replication; work arrays live in global memory.  Under
    ``NUMBA_ENABLE_CUDASIM=1`` this runs on the CPU simulator.
    """
    from numba import cuda

    key = _key("cuda", spec, instance)
    if key in _CACHE:
        return _CACHE[key]
    body = _make_body(spec, instance)
    k_rows, k_scal = spec.n_rows, spec.n_scalars

    @cuda.jit
    def kern(prm, data, seed, rep0, horizon, ckpts, S, s, p, l, aw, L, Rs, M,
             out_regret, out_sleep, out_track, out_pseudo, out_expert):
        r = cuda.grid(1)
        if r < out_regret.shape[1]:
            body(prm, data, seed, rep0 + r, horizon, ckpts, S[r], s[r], p[r], l[r], aw[r], L[r], Rs[r], M[r],
                 out_regret, out_sleep, out_track, out_pseudo, out_expert, r)

    def launch(prm, data, seed, rep0, horizon, ckpts, n, out_regret, out_sleep, out_track, out_pseudo,
               out_expert, threads_per_block=128):
        n_reps = out_regret.shape[1]
        d = cuda.to_device
        work = (
            cuda.to_device(np.zeros((n_reps, k_rows, n))),
            cuda.to_device(np.zeros((n_reps, max(k_scal, 1)))),
            cuda.to_device(np.zeros((n_reps, n))),
            cuda.to_device(np.zeros((n_reps, n))),
            cuda.to_device(np.ones((n_reps, n), dtype=np.bool_)),
            cuda.to_device(np.zeros((n_reps, n))),
            cuda.to_device(np.zeros((n_reps, n))),
            cuda.to_device(np.zeros((n_reps, n))),
        )
        host_outs = (out_regret, out_sleep, out_track, out_pseudo, out_expert)
        outs = [d(o) for o in host_outs]
        data_d = tuple(d(np.asarray(a)) for a in data)
        blocks = (n_reps + threads_per_block - 1) // threads_per_block
        kern[blocks, threads_per_block](d(prm), data_d, seed, rep0, horizon, d(ckpts), *work, *outs)
        for host, dev in zip(host_outs, outs):
            dev.copy_to_host(host)

    _CACHE[key] = launch
    return launch
