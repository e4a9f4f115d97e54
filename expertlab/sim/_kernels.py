"""Fused drivers: the whole round loop of one replication in compiled code.

The per-replication body is written once (:func:`_make_body`) from the
learner's and the instance's scalar functions, and compiled twice: inside a
``@njit(parallel=True)`` driver with ``prange`` over replications, and inside
a ``numba.cuda`` kernel with one thread per replication (tested on the CPU
under ``NUMBA_ENABLE_CUDASIM=1``).  Compiled drivers are kept per
(learner kernel, instance) pair for the life of the process, and the CPU
driver is also cached on disk (:mod:`expertlab.sim._kernel_cache`) so that
another process loads it instead of compiling it again.

Contract extension (backward compatible)
----------------------------------------
The drivers allocate the scalar work array ``s`` with **two slots more** than
the learner's ``n_scalars``:

``s[n_scalars]``
    Before every call of ``update`` the driver stores the round's mixture
    loss ``<p_t, l_t>`` (as it computed it, with :func:`kdot`) there.  A
    learner may read it instead of recomputing the dot product.
``s[n_scalars + 1]``
    ``1.0`` when the environment has no awake mask (every expert is awake in
    every round of the run), ``0.0`` otherwise; set before ``init`` and
    constant for the run.  A learner may then skip the mask's selects and
    keep quantities across rounds that a changing awake set would
    invalidate (Hedge takes its logits straight from the regret row).

Learners that ignore the slots are unaffected.  A step function that wants to
stay callable with an ``s`` of exactly ``n_scalars`` entries checks
``s.shape[0] > n_scalars`` (``> n_scalars + 1``) first.

Speed notes
-----------
The per-round loops are written so that LLVM vectorises them: no reduction is
carried serially through a loop that also does heavy work.  Sums, dot
products and maxima over experts use :func:`ksum`, :func:`kdot` and
:func:`kmax`, which keep four partial accumulators (a fixed, deterministic
order: the same on every backend, and as accurate as a serial sum).
:func:`exp_nonpos` is ``exp`` for non-positive arguments; on the CPU it is a
polynomial that LLVM vectorises (libm's scalar ``exp`` is not), on CUDA and in
plain Python it is ``math.exp``.  The helpers are compiled with
``forceinline=True, _nrt=False`` (inlined, no reference counting: they
allocate nothing), as are Hedge's step functions; a step function that is
called every round and allocates nothing should do the same, since an
out-of-line call with array arguments costs a few atomic reference-count
updates per round (options the CUDA target ignores).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange
from numba.extending import overload, register_jitable

from .._random import LEARNER_STREAM, rep_key, round_key, stream_key

__all__ = ["numba_driver", "cuda_driver", "exp_nonpos", "ksum", "kdot", "kmax"]


# --------------------------------------------------------------------------
# scalar math helpers for step functions (CPU, CUDA and plain Python)


@register_jitable(forceinline=True, _nrt=False)
def ksum(x, n):
    """``sum(x[:n])`` with four partial sums (vectorisable, fixed order)."""
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    m = n - n % 4
    for i in range(0, m, 4):
        a0 += x[i]
        a1 += x[i + 1]
        a2 += x[i + 2]
        a3 += x[i + 3]
    res = (a0 + a1) + (a2 + a3)
    for i in range(m, n):
        res += x[i]
    return res


@register_jitable(forceinline=True, _nrt=False)
def kdot(x, y, n):
    """``sum(x[:n] * y[:n])`` with four partial sums (vectorisable, fixed order)."""
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    m = n - n % 4
    for i in range(0, m, 4):
        a0 += x[i] * y[i]
        a1 += x[i + 1] * y[i + 1]
        a2 += x[i + 2] * y[i + 2]
        a3 += x[i + 3] * y[i + 3]
    res = (a0 + a1) + (a2 + a3)
    for i in range(m, n):
        res += x[i] * y[i]
    return res


@register_jitable(forceinline=True, _nrt=False)
def kmax(x, n):
    """``max(x[:n])`` ignoring NaN (``-inf`` when ``n == 0``), with four partial maxima."""
    a0 = -np.inf
    a1 = -np.inf
    a2 = -np.inf
    a3 = -np.inf
    m = n - n % 4
    for i in range(0, m, 4):
        v = x[i]
        a0 = v if v > a0 else a0
        v = x[i + 1]
        a1 = v if v > a1 else a1
        v = x[i + 2]
        a2 = v if v > a2 else a2
        v = x[i + 3]
        a3 = v if v > a3 else a3
    a0 = a1 if a1 > a0 else a0
    a2 = a3 if a3 > a2 else a2
    res = a2 if a2 > a0 else a0
    for i in range(m, n):
        v = x[i]
        res = v if v > res else res
    return res


def exp_nonpos(x):
    """``exp(x)`` for ``x <= 0`` (also ``-inf`` and NaN), for step functions.

    In plain Python (and the CUDA simulator) and on CUDA this is
    :func:`math.exp`.  Compiled for the CPU it is a branch-free polynomial
    that LLVM vectorises (libm's ``exp`` is a scalar call, the most expensive
    operation of an exponential-weights round): Cody--Waite reduction
    ``x = k ln 2 + r``, ``|r| <= ln(2)/2``, a polynomial of degree 11
    (relative error below 2e-17 on that interval) evaluated as
    ``1 + (r + r^2 X(r))`` with ``X`` by Estrin's scheme (short dependency
    chains, so that the loop over experts runs at the machine's throughput
    rather than its latency), and ``2**k`` assembled in the exponent bits.
    ``X`` is the Taylor series of ``(e^r - 1 - r) / r^2`` to degree 22,
    Chebyshev-economised to degree 9 on ``|r| <= ln(2)/2`` [1]_: two terms
    fewer than a Taylor polynomial of the same accuracy.
    It agrees with ``math.exp`` to about 1 ulp; results below the smallest
    normal double (``x < -1022 ln 2 = -708.396...``) are flushed to 0 (libm returns a
    subnormal there, below ``2.3e-308``).  Arguments above 709 are outside
    its domain.

    References
    ----------
    .. [1] J.-M. Muller, *Elementary Functions: Algorithms and
       Implementation*, 3rd ed., Birkhauser, 2016, Chapters 3 (polynomial
       approximation, Chebyshev economisation) and 11 (Cody--Waite range
       reduction).
    """
    return math.exp(x)


_LOG2E = 1.4426950408889634
_EXP_SHIFT = 6755399441055744.0  # 1.5 * 2**52: x + shift rounds x to an integer
_LN2_HI = 6.93147180369123816490e-01  # fdlibm split of ln 2: k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_EXP_MIN = -708.3964185322641  # -1022 ln 2: exp(x) >= 2**-1022 from here up
# X(r) = (e^r - 1 - r) / r^2 ~ sum_j _Ej r^(j-2): its Taylor series (coefficients 1/j!) to degree 22 in r, the
# terms of degree 22 down to 10 removed one by one by Chebyshev economisation on |r| <= 1.000001 ln(2)/2, in
# exact rational arithmetic, then rounded to double (tests/backends/test_kernel_math.py derives them again)
_E2 = 0.5000000000000001
_E3 = 0.1666666666666667
_E4 = 0.04166666666662416
_E5 = 0.008333333333326141
_E6 = 0.0013888888917198757
_E7 = 0.00019841269874802374
_E8 = 2.4801521319615554e-05
_E9 = 2.755725542362447e-06
_E10 = 2.7620077041765494e-07
_E11 = 2.510520717094936e-08
_EXP_BIAS = np.int64(1023 << 52)
_S52 = np.int64(52)


def _exp_nonpos_cpu(x):
    m = x * _LOG2E + _EXP_SHIFT
    kf = m - _EXP_SHIFT  # nearest integer to x / ln 2
    r = (x - kf * _LN2_HI) - kf * _LN2_LO
    # exp(r) = 1 + r + r^2 X(r), X of degree 9 by Estrin's scheme: pairs, then powers r^2, r^4 -- six
    # dependent steps instead of Horner's eleven, so that a vectorised loop over experts is not bound by
    # the latency of one long chain
    r2 = r * r
    r4 = r2 * r2
    a = _E2 + _E3 * r
    b = _E4 + _E5 * r
    c = _E6 + _E7 * r
    d = _E8 + _E9 * r
    e = _E10 + _E11 * r
    ab = a + r2 * b
    cd = c + r2 * d
    q = 1.0 + (r + r2 * (ab + r4 * (cd + r4 * e)))
    # the low bits of m hold k (two's complement); shifted into the exponent
    # field they give 2**k (the high bits of m shift out)
    scale = np.int64((np.float64(m).view(np.int64) << _S52) + _EXP_BIAS).view(np.float64)
    y = q * scale
    return 0.0 if x < _EXP_MIN else y


# 'contract' lets LLVM fuse each polynomial step into one FMA (one rounding
# instead of two); it licenses no reassociation and applies to this function
# only, not to the step function that calls it.
@overload(exp_nonpos, target="cpu", jit_options={"fastmath": {"contract"}})
def _ol_exp_nonpos_cpu(x):
    return _exp_nonpos_cpu


@overload(exp_nonpos, target="cuda")
def _ol_exp_nonpos_cuda(x):
    def impl(x):
        return math.exp(x)

    return impl


_CACHE: dict = {}
_cuda = None  # numba.cuda, set by cuda_driver


def _make_body(spec, instance):
    k_init, k_act, k_update = spec.init, spec.act, spec.update
    loss_fn = instance.loss
    has_awake = instance.awake is not None
    awake_fn = instance.awake if has_awake else _never
    has_comp = instance.comparator is not None
    comp_fn = instance.comparator if has_comp else _zero_comp
    has_mean = instance.mean is not None
    mean_fn = instance.mean if has_mean else _zero_mean
    k_scal = spec.n_scalars
    all_awake = 0.0 if has_awake else 1.0

    @register_jitable
    def body(prm, data, seed, rep, horizon, ckpts, S, s, p, l, aw, L, Rs, M,
             out_regret, out_sleep, out_track, out_pseudo, out_expert, col):
        n = p.shape[0]
        for i in range(n):
            aw[i] = True
        s[k_scal + 1] = all_awake  # the driver's second extra slot (see the module docstring)
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
            for i in range(n):
                li = loss_fn(data, key, t, i)
                l[i] = li
                L[i] += li
            mix = kdot(p, l, n)
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
            s[k_scal] = mix  # the first extra slot: <p_t, l_t> for update
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
    from . import _kernel_cache

    body = _make_body(spec, instance)
    drive = _make_drive(body, spec.n_rows, spec.n_scalars)
    fn = _kernel_cache.cached_njit("full", drive, helpers=(body,), options=_DRIVE_OPTIONS,
                                   extra_modules=_CACHE_MODULES)
    if fn is None:  # a step function that is not importable by name, or no writable cache folder
        fn = njit(**_DRIVE_OPTIONS)(drive)
    _CACHE[key] = fn
    return fn


_DRIVE_OPTIONS = {"parallel": True, "nogil": True}
#: Modules whose sources enter the hash of a cached driver whatever the pair.
_CACHE_MODULES = ("expertlab._random", "expertlab.sim._kernels")


def _make_drive(body, k_rows, k_scal):
    """The CPU driver (plain Python, compiled by the caller): ``prange`` over replications around ``body``."""

    def drive(prm, data, seed, rep0, horizon, ckpts, n, out_regret, out_sleep, out_track, out_pseudo,
              out_expert):
        n_reps = out_regret.shape[1]
        for r in prange(n_reps):
            S = np.zeros((k_rows, n))
            s = np.zeros(k_scal + 2)  # + the mix slot and the all-awake slot
            p = np.zeros(n)
            l = np.zeros(n)
            aw = np.ones(n, dtype=np.bool_)
            L = np.zeros(n)
            Rs = np.zeros(n)
            M = np.zeros(n)
            body(prm, data, seed, rep0 + r, horizon, ckpts, S, s, p, l, aw, L, Rs, M,
                 out_regret, out_sleep, out_track, out_pseudo, out_expert, r)

    return drive


def cuda_launch(cuda, kern, n_reps, threads_per_block, head, work, host_outs):
    """Copy ``head = (prm, data, seed, rep0, horizon, ckpts)`` and the outputs to the device, run ``kern`` with
    one thread per replication on ``(*head, *work, *outs)``, and copy the outputs back into ``host_outs``."""
    prm, data, seed, rep0, horizon, ckpts = head
    d = cuda.to_device
    outs = [d(o) for o in host_outs]
    data_d = tuple(d(np.asarray(a)) for a in data)
    blocks = (n_reps + threads_per_block - 1) // threads_per_block
    kern[blocks, threads_per_block](d(prm), data_d, seed, rep0, horizon, d(ckpts), *work, *outs)
    for host, dev in zip(host_outs, outs):
        dev.copy_to_host(host)


def cuda_driver(spec, instance):
    """Return ``launch(prm, data, seed, rep0, horizon, ckpts, n, outs..., dtype="float64")`` running on CUDA.

    One thread per replication; work arrays live in global memory.  Under
    ``NUMBA_ENABLE_CUDASIM=1`` this runs on the CPU simulator.  With
    ``dtype="float32"`` the learner's work arrays ``S``, ``s``, the played
    distribution ``p`` and the round's losses ``l`` are float32 (the kernel
    is specialised for them); the cumulative sums behind the metrics stay
    float64.  Numba types a float64 literal against a float32 value as
    float64, so step functions that mix the two compute those expressions in
    float64 and store the result in float32.
    """
    global _cuda
    from numba import cuda

    # kern reads the module through a module global: the CUDA simulator swaps
    # the numba.cuda module in a kernel's globals, not in its closure cells.
    _cuda = cuda
    key = _key("cuda", spec, instance)
    if key in _CACHE:
        return _CACHE[key]
    body = _make_body(spec, instance)
    k_rows, k_scal = spec.n_rows, spec.n_scalars

    @cuda.jit
    def kern(prm, data, seed, rep0, horizon, ckpts, S, s, p, l, aw, L, Rs, M,
             out_regret, out_sleep, out_track, out_pseudo, out_expert):
        r = _cuda.grid(1)
        if r < out_regret.shape[1]:
            body(prm, data, seed, rep0 + r, horizon, ckpts, S[r], s[r], p[r], l[r], aw[r], L[r], Rs[r], M[r],
                 out_regret, out_sleep, out_track, out_pseudo, out_expert, r)

    def launch(prm, data, seed, rep0, horizon, ckpts, n, out_regret, out_sleep, out_track, out_pseudo,
               out_expert, threads_per_block=128, dtype="float64"):
        n_reps = out_regret.shape[1]
        dt = np.dtype(dtype)  # the learner's work arrays, p and the losses; sums over rounds stay float64
        work = (
            cuda.to_device(np.zeros((n_reps, k_rows, n), dtype=dt)),
            cuda.to_device(np.zeros((n_reps, k_scal + 2), dtype=dt)),  # + the mix and all-awake slots
            cuda.to_device(np.zeros((n_reps, n), dtype=dt)),
            cuda.to_device(np.zeros((n_reps, n), dtype=dt)),
            cuda.to_device(np.ones((n_reps, n), dtype=np.bool_)),
            cuda.to_device(np.zeros((n_reps, n))),
            cuda.to_device(np.zeros((n_reps, n))),
            cuda.to_device(np.zeros((n_reps, n))),
        )
        cuda_launch(cuda, kern, n_reps, threads_per_block, (prm, data, seed, rep0, horizon, ckpts), work,
                    (out_regret, out_sleep, out_track, out_pseudo, out_expert))

    _CACHE[key] = launch
    return launch
