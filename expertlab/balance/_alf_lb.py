r"""Auxiliary-loss-free load balancing (ALF-LB) as dual (sub)gradient descent.

Deterministic setting: the same batch of router scores every iteration, so
ALF-LB is a fixed-point iteration on the expert biases.  Online setting: a
fresh batch each iteration from a :class:`~expertlab.balance.generators.ScoreGenerator`.
Both run batched over replications in one fused Numba kernel
(``prange`` over replications, the iteration and token loops inside), with
an array reference path in NumPy that routes identically; the same scalar
per-replication body also compiles to a ``numba.cuda`` kernel (one thread
per replication, ``backend="cuda"``), tested on the CPU simulator.

Tie-breaking (both paths): among experts with equal biased score the lowest
expert index wins, i.e. experts are ranked by the pair
``(s_i + b_i, -i)`` in lexicographic order.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from .._random import rep_key, round_key, seed_to_uint64
from .._validation import check_float, check_in, check_int
from ..sim import checkpoint_grid
from ._batch import AssignmentBatch
from ._problem import top_k_route
from .generators import ScoreGenerator, mean_at, score_at

__all__ = ["ALFLBResult", "TokenMoves", "alf_lb"]

_RULES = {"sign": 0, "magnitude": 1, "decaying": 2}


# ---------------------------------------------------------------------------
# results


@dataclasses.dataclass(frozen=True, eq=False)
class TokenMoves:
    """Token moves between consecutive iterations of a deterministic run.

    One row per (replication, iteration, token, expert pair): the token was
    routed to ``source`` in ``iteration`` and to ``target`` in
    ``iteration + 1`` (for ``k > 1`` the experts a token leaves and joins are
    paired in increasing index order).  Loads are those of ``iteration``,
    which decided the bias update in between.

    Attributes
    ----------
    rep, iteration, token, source, target : ndarray of int, shape (n_moves,)
    source_load, target_load : ndarray of int, shape (n_moves,)
    source_overloaded : ndarray of bool, shape (n_moves,)
        ``source_load > capacity[source]``.
    target_underloaded : ndarray of bool, shape (n_moves,)
        ``target_load < capacity[target]``.
    """

    rep: np.ndarray
    iteration: np.ndarray
    token: np.ndarray
    source: np.ndarray
    target: np.ndarray
    source_load: np.ndarray
    target_load: np.ndarray
    source_overloaded: np.ndarray
    target_underloaded: np.ndarray

    def __len__(self) -> int:
        return int(self.rep.shape[0])


@dataclasses.dataclass(frozen=True, eq=False)
class ALFLBResult:
    r"""Trajectory summary of :func:`alf_lb` (leading axis: replications).

    Attributes
    ----------
    bias : ndarray, shape (n_reps, n_experts)
        Bias after the last update.
    dual : ndarray, shape (n_reps, n_iter)
        Dual value :math:`g_t(-b_t)` of the batch routed in iteration ``t``
        with the bias used there (exact: summed from the routing).
    maxvio : ndarray, shape (n_reps, n_iter)
        ``(max_i load_i - mean load) / mean load`` of each batch, with mean
        load :math:`NK/E`.
    checkpoints : ndarray of int, shape (n_checkpoints,)
        1-based iteration counts (log-spaced, see
        :func:`expertlab.sim.checkpoint_grid`) at which the next fields are kept.
    bias_at : ndarray, shape (n_reps, n_checkpoints, n_experts)
        Bias used to route the batch of that iteration.
    loads_at : ndarray of int, shape (n_reps, n_checkpoints, n_experts)
        Loads of that batch.
    global_maxvio : ndarray, shape (n_reps, n_checkpoints)
        MaxVio of the cumulative loads up to that iteration.
    comparator_dual, regret : ndarray, shape (n_reps, n_iter), or None
        Dual value :math:`g_t(-b^\star_t)` of the comparator on the same batch
        and the cumulative regret :math:`\sum_{\tau \le t} g_\tau(-b_\tau) - g_\tau(-b^\star_\tau)`;
        ``None`` without a comparator.
    comparator : {"fixed", "dynamic", None}
        ``"dynamic"`` when the comparator bias moves with ``t`` (drifting scores).
    routes : ndarray of int, shape (n_reps, n_iter, n_tokens, k), or None
        Experts of each token (increasing index) when ``record_moves``.
    moves : TokenMoves or None
        Token moves between consecutive iterations when ``record_moves``.
    capacity : ndarray, shape (n_experts,) or (n_reps, n_experts)
        Shared capacities, or one row per replication.
    k, n_tokens, n_iter, n_reps, seed : int
    rule, backend : str
    step : float
    online : bool
    wall_time : float
    """

    bias: np.ndarray
    dual: np.ndarray
    maxvio: np.ndarray
    checkpoints: np.ndarray
    bias_at: np.ndarray
    loads_at: np.ndarray
    global_maxvio: np.ndarray
    comparator_dual: np.ndarray | None
    regret: np.ndarray | None
    comparator: str | None
    routes: np.ndarray | None
    moves: TokenMoves | None
    capacity: np.ndarray
    k: int
    n_tokens: int
    n_iter: int
    n_reps: int
    seed: int
    rule: str
    step: float
    online: bool
    backend: str
    wall_time: float

    def centred_bias(self) -> np.ndarray:
        """Final bias minus its mean over experts (the dual is shift invariant)."""
        return self.bias - self.bias.mean(axis=-1, keepdims=True)


# ---------------------------------------------------------------------------
# compiled kernel


@register_jitable
def _topk_insert(v, e, k, topv, topi):
    """Top ``k`` of ``v[:e]`` into ``topv``/``topi`` (descending); ties: lowest index first."""
    m = 0
    for i in range(e):
        x = v[i]
        if m < k:
            j = m
            m += 1
        elif x > topv[k - 1]:
            j = k - 1
        else:
            continue
        while j > 0 and topv[j - 1] < x:
            topv[j] = topv[j - 1]
            topi[j] = topi[j - 1]
            j -= 1
        topv[j] = x
        topi[j] = i


@register_jitable
def _rep_body(r, scores, use_gen, gparams, n_tokens, seed, rep_ids, k, capm, cbar, rule, step, bias0,
              n_iter, ckpt_idx, comp_mode, comp_bias, record,
              bias_out, bias_ck, dual_out, comp_out, maxvio_out, loads_ck, gmaxvio_ck, routes_out,
              b, bstar, cum, load, srow, v, topv, topi):
    """One replication of the ALF-LB loop (all iterations, all tokens).

    The scalar body shared by the Numba driver and the CUDA kernel: it
    allocates nothing; ``b, bstar, cum, srow, v`` (float, ``(E,)``), ``load``
    (int, ``(E,)``), ``topv`` (float, ``(K,)``) and ``topi`` (int, ``(K,)``)
    are this replication's work rows.  ``capm`` has one capacity row per
    replication, or a single shared row.
    """
    e = bias0.shape[1]
    n_ck = ckpt_idx.shape[0]
    rs = r if scores.shape[0] > 1 else r - r
    rc = r if capm.shape[0] > 1 else r - r
    for i in range(e):
        b[i] = bias0[r, i]
        bstar[i] = comp_bias[i]
        cum[i] = 0.0
    for j in range(k):
        topi[j] = 0
    rkey = rep_key(seed, np.uint64(rep_ids[r]))
    c = 0
    for it in range(n_iter):
        key = round_key(rkey, np.uint64(it))
        if comp_mode == 2:
            for i in range(e):
                bstar[i] = -mean_at(gparams, e, i, it)
        for i in range(e):
            load[i] = 0
        dual = 0.0
        cdual = 0.0
        for n in range(n_tokens):
            if use_gen:
                for i in range(e):
                    srow[i] = score_at(gparams, e, key, it, n, i)
            else:
                for i in range(e):
                    srow[i] = scores[rs, n, i]
            for i in range(e):
                v[i] = srow[i] + b[i]
            _topk_insert(v, e, k, topv, topi)
            tok = 0.0
            for j in range(k):
                load[topi[j]] += 1
                tok += topv[j]
            dual += tok
            if record:
                for j in range(1, k):  # increasing expert index
                    x = topi[j]
                    q = j
                    while q > 0 and topi[q - 1] > x:
                        topi[q] = topi[q - 1]
                        q -= 1
                    topi[q] = x
                for j in range(k):
                    routes_out[r, it, n, j] = topi[j]
            if comp_mode > 0:
                for i in range(e):
                    v[i] = srow[i] + bstar[i]
                _topk_insert(v, e, k, topv, topi)
                tok = 0.0
                for j in range(k):
                    tok += topv[j]
                cdual += tok
        cb = 0.0
        cs = 0.0
        mx = 0
        for i in range(e):
            cb += capm[rc, i] * b[i]
            cs += capm[rc, i] * bstar[i]
            mx = max(mx, load[i])
            cum[i] += load[i]
        dual_out[r, it] = dual - cb
        if comp_mode > 0:
            comp_out[r, it] = cdual - cs
        maxvio_out[r, it] = (mx - cbar) / cbar
        if c < n_ck and ckpt_idx[c] == it:
            cmx = 0.0
            for i in range(e):
                bias_ck[r, c, i] = b[i]
                loads_ck[r, c, i] = load[i]
                cmx = max(cmx, cum[i])
            tot = cbar * (it + 1.0)
            gmaxvio_ck[r, c] = (cmx - tot) / tot
            c += 1
        if rule == 0:
            for i in range(e):
                d = capm[rc, i] - load[i]
                if d > 0.0:
                    b[i] += step
                elif d < 0.0:
                    b[i] -= step
        else:
            st = step if rule == 1 else step / (it + 1.0)
            for i in range(e):
                b[i] += st * (capm[rc, i] - load[i]) / cbar
    for i in range(e):
        bias_out[r, i] = b[i]


@njit(parallel=True, nogil=True)
def _alf_kernel(scores, use_gen, gparams, n_tokens, seed, rep_ids, k, capm, cbar, rule, step, bias0,
                n_iter, ckpt_idx, comp_mode, comp_bias, record,
                bias_out, bias_ck, dual_out, comp_out, maxvio_out, loads_ck, gmaxvio_ck, routes_out):
    """Run every replication (``prange``); outputs are written in place."""
    e = bias0.shape[1]
    for r in prange(bias0.shape[0]):
        _rep_body(r, scores, use_gen, gparams, n_tokens, seed, rep_ids, k, capm, cbar, rule, step, bias0,
                  n_iter, ckpt_idx, comp_mode, comp_bias, record,
                  bias_out, bias_ck, dual_out, comp_out, maxvio_out, loads_ck, gmaxvio_ck, routes_out,
                  np.empty(e), np.empty(e), np.empty(e), np.zeros(e, np.int64), np.empty(e), np.empty(e),
                  np.empty(k), np.zeros(k, np.int64))


_cuda = None  # numba.cuda, set by _cuda_kernel (the simulator swaps it in a kernel's module globals)
_CUDA_KERNEL = []


def _cuda_kernel():
    """The CUDA kernel (one thread per replication) around :func:`_rep_body`, compiled on first use."""
    global _cuda
    from numba import cuda

    _cuda = cuda
    if _CUDA_KERNEL:
        return _CUDA_KERNEL[0]

    @cuda.jit
    def kern(scores, use_gen, gparams, n_tokens, seed, rep_ids, k, capm, cbar, rule, step, bias0,
             n_iter, ckpt_idx, comp_mode, comp_bias, record,
             bias_out, bias_ck, dual_out, comp_out, maxvio_out, loads_ck, gmaxvio_ck, routes_out,
             wb, wbstar, wcum, wload, wsrow, wv, wtopv, wtopi):
        r = _cuda.grid(1)
        if r < bias0.shape[0]:
            _rep_body(r, scores, use_gen, gparams, n_tokens, seed, rep_ids, k, capm, cbar, rule, step, bias0,
                      n_iter, ckpt_idx, comp_mode, comp_bias, record,
                      bias_out, bias_ck, dual_out, comp_out, maxvio_out, loads_ck, gmaxvio_ck, routes_out,
                      wb[r], wbstar[r], wcum[r], wload[r], wsrow[r], wv[r], wtopv[r], wtopi[r])

    _CUDA_KERNEL.append(kern)
    return kern


def _cuda_run(args, outs, k, threads_per_block=64):
    """Launch :func:`_cuda_kernel` on ``args`` (host arrays and scalars); copy ``outs`` back in place."""
    from numba import cuda

    kern = _cuda_kernel()
    n_reps, e = args[11].shape  # bias0
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    outs_d = [cuda.to_device(o) for o in outs]
    work = [cuda.to_device(np.zeros((n_reps, e))) for _ in range(3)] + [cuda.to_device(np.zeros((n_reps, e), np.int64))]
    work += [cuda.to_device(np.zeros((n_reps, e))) for _ in range(2)]
    work += [cuda.to_device(np.zeros((n_reps, k))), cuda.to_device(np.zeros((n_reps, k), np.int64))]
    blocks = (n_reps + threads_per_block - 1) // threads_per_block
    kern[blocks, threads_per_block](*dev, *outs_d, *work)
    for host, d in zip(outs, outs_d):
        d.copy_to_host(host)


# ---------------------------------------------------------------------------
# NumPy reference path


def _numpy_path(scores, gen, n_tokens, seed_u, rep_ids, k, cap, cbar, rule, step, bias0, n_iter,
                ckpt_idx, comp_mode, comp_bias, record):
    n_reps, e = bias0.shape
    b = bias0.copy()
    cum = np.zeros((n_reps, e))
    dual = np.empty((n_reps, n_iter))
    comp = np.empty((n_reps, n_iter))
    maxvio = np.empty((n_reps, n_iter))
    n_ck = ckpt_idx.shape[0]
    bias_ck = np.empty((n_reps, n_ck, e))
    loads_ck = np.empty((n_reps, n_ck, e), np.int64)
    gmv = np.empty((n_reps, n_ck))
    routes = np.empty((n_reps, n_iter, n_tokens, k), np.int64) if record else None
    c = 0
    for it in range(n_iter):
        s = gen.draw(seed_u, rep_ids, it, n_tokens) if gen is not None else scores
        v = s + b[:, None, :]
        mask = top_k_route(v, None, k).astype(bool)
        load = mask.sum(axis=1)
        dual[:, it] = np.where(mask, v, 0.0).sum(axis=(1, 2)) - (b * cap).sum(axis=-1)
        if comp_mode > 0:
            bstar = -gen.mean(it) if comp_mode == 2 else comp_bias
            w = s + bstar
            cm = top_k_route(w, None, k).astype(bool)
            comp[:, it] = np.where(cm, w, 0.0).sum(axis=(-2, -1)) - (bstar * cap).sum(axis=-1)
        maxvio[:, it] = (load.max(axis=1) - cbar) / cbar
        cum += load
        if record:
            routes[:, it] = np.argsort(~mask, axis=-1, kind="stable")[..., :k]
        if c < n_ck and ckpt_idx[c] == it:
            bias_ck[:, c] = b
            loads_ck[:, c] = load
            tot = cbar * (it + 1.0)
            gmv[:, c] = (cum.max(axis=1) - tot) / tot
            c += 1
        d = cap - load
        if rule == 0:
            b += step * (d > 0) - step * (d < 0)
        else:
            st = step if rule == 1 else step / (it + 1.0)
            b += st * d / cbar
    return b, bias_ck, dual, comp, maxvio, loads_ck, gmv, routes


# ---------------------------------------------------------------------------
# moves


def _token_moves(routes, cap, n_experts) -> TokenMoves:
    n_reps, n_iter, n_tokens, _k = routes.shape
    member = np.zeros((n_reps, n_iter, n_tokens, n_experts), bool)
    np.put_along_axis(member, routes, True, axis=-1)
    loads = member.sum(axis=2)
    left = member[:, :-1] & ~member[:, 1:]
    joined = member[:, 1:] & ~member[:, :-1]
    # pair the j-th expert left with the j-th joined (increasing index) per token
    r, t, n, src = np.nonzero(left)
    _, _, _, tgt = np.nonzero(joined)
    src_load = loads[r, t, src]
    tgt_load = loads[r, t, tgt]
    cap2 = np.broadcast_to(cap, (n_reps, n_experts))
    return TokenMoves(rep=r, iteration=t, token=n, source=src, target=tgt,
                      source_load=src_load, target_load=tgt_load,
                      source_overloaded=src_load > cap2[r, src], target_underloaded=tgt_load < cap2[r, tgt])


# ---------------------------------------------------------------------------
# front end


def _check_scores(scores):
    if not isinstance(scores, np.ndarray):
        scores = np.asarray(scores)
    if scores.dtype == object or not (np.issubdtype(scores.dtype, np.floating) or np.issubdtype(scores.dtype, np.integer)):
        raise TypeError(f"scores must be a real array, got dtype {scores.dtype}")
    scores = scores.astype(np.float64)
    if scores.ndim not in (2, 3) or scores.shape[-1] < 1 or scores.shape[-2] < 1:
        raise ValueError(f"scores must have shape (n_tokens, n_experts) or (n_reps, n_tokens, n_experts), got {scores.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores contains NaN or infinite values")
    return scores


def alf_lb(scores_or_generator, k=None, *, step=0.001, rule="sign", n_iter=100, capacity=None, bias0=None,
           n_reps=None, seed=0, record_moves=False, n_tokens=None, comparator_bias=None, backend="numba"):
    r"""Auxiliary-loss-free load balancing: top-K routing on :math:`s + b` with bias updates.

    Parameters
    ----------
    scores_or_generator : array_like, AssignmentProblem, AssignmentBatch or ScoreGenerator
        Deterministic setting: scores of shape ``(n_tokens, n_experts)``
        (shared by all replications) or ``(n_reps, n_tokens, n_experts)``
        (one fixed batch per replication), an ``AssignmentProblem`` (its
        ``scores``, ``k`` and ``capacity`` are used) or an
        ``AssignmentBatch`` (problem ``r`` is replication ``r``, with its own
        capacity row).  Online setting: a
        :class:`~expertlab.balance.generators.ScoreGenerator`, drawing a fresh
        batch of ``n_tokens`` tokens in each iteration :math:`t` from the
        counter-based generator keyed by ``(seed, replication, t)``.
    k : int
        Experts per token, ``1 <= k <= n_experts`` (taken from the problem
        when one is given).
    step : float
        Step :math:`u > 0` (``"sign"``, ``"magnitude"``) or the constant
        :math:`a > 0` of the decaying step :math:`a/t`.
    rule : {"sign", "magnitude", "decaying"}
        Bias update (see Notes).
    n_iter : int
        Iterations (batches) :math:`T \ge 1`.
    capacity : array_like, shape (n_experts,) or (n_reps, n_experts), optional
        Capacities :math:`C_i > 0` with :math:`\sum_i C_i \ge NK`, shared or
        (deterministic setting) one row per replication; default the
        balanced :math:`C_i = NK/E`.
    bias0 : array_like, shape (n_experts,) or (n_reps, n_experts), optional
        Initial bias (default 0).
    n_reps : int, optional
        Replications :math:`R` (leading axis of every output); default the
        number of score matrices for 3-d scores or a batch, else 1.
    seed : int or numpy.random.SeedSequence
        Root seed of the online batches.
    record_moves : bool
        Deterministic setting only: keep the routing of every iteration
        (memory :math:`R\,T\,N\,K` integers) and the token moves between
        consecutive iterations.
    n_tokens : int, optional
        Tokens per batch :math:`N` (required with a generator).
    comparator_bias : array_like, shape (n_experts,), optional
        Fixed bias :math:`b^\star` to measure regret against.  With a
        generator the default is its closed-form optimum :math:`-m(t)`
        (fixed for stationary generators, dynamic for drifting ones).
    backend : {"numba", "numpy", "cuda"}
        Fused compiled kernel, the NumPy reference path (same routing,
        biases equal to rounding), or the same scalar body as a
        ``numba.cuda`` kernel with one thread per replication (needs a GPU,
        or ``NUMBA_ENABLE_CUDASIM=1`` to run it on the CPU simulator).

    Returns
    -------
    ALFLBResult

    Notes
    -----
    The assignment LP :math:`\max \sum_{t,i} s_{t,i} x_{t,i}` subject to
    :math:`\sum_i x_{t,i} = K`, :math:`\sum_t x_{t,i} \le C_i`,
    :math:`0 \le x \le 1` has the Lagrangian dual function

    .. math::

        g(p) = \sum_t \operatorname{top}_K\big(s_t - p\big) + \sum_i C_i p_i ,

    whose subgradient is :math:`\partial g / \partial p_i = C_i - L_i(p)`, with
    :math:`L_i(p)` the load of expert :math:`i` under top-K routing on
    :math:`s - p`.  With bias :math:`b = -p` each iteration routes on
    :math:`s + b_t`, records :math:`g(-b_t)` and updates

    .. math::

        \text{sign:}\quad & b_{t+1,i} = b_{t,i} + u \operatorname{sign}(C_i - L_{t,i}), \\
        \text{magnitude:}\quad & b_{t+1,i} = b_{t,i} + u\, (C_i - L_{t,i}) / \bar C, \\
        \text{decaying:}\quad & b_{t+1,i} = b_{t,i} + \frac{a}{t}\, (C_i - L_{t,i}) / \bar C,
        \quad t = 1, 2, \dots

    with the normalisation :math:`\bar C = NK/E` (the mean load), chosen so
    that :math:`u` multiplies a dimensionless relative load deviation in
    :math:`[1 - E/K, 1]` and keeps its meaning across batch sizes; it is a
    constant rescaling of the plain subgradient step :math:`u (C - L)`.  The
    sign rule is DeepSeek's (Wang et al. 2024, :math:`u = 0.001` there, with
    the mean load in place of :math:`C_i`); the primal-dual reading is Han &
    Zhong's.  When :math:`\sum_i C_i = NK`, :math:`g(p + c\mathbf 1) = g(p)`,
    so only centred biases are meaningful.  ``MaxVio`` is
    :math:`(\max_i L_i - \bar C)/\bar C`; in the online setting the biased
    scores at the optimum are exchangeable, so per-batch MaxVio keeps a
    sampling floor of about :math:`\sqrt{(E/K)/N}` (Han & Zhong; section not
    re-checked).  Regret is measured on the dual objective of each batch,
    :math:`\sum_t g_t(-b_t) - g_t(-b^\star)`, with :math:`b_t` fixed before
    batch :math:`t` is drawn.

    [validated-rates]

    References
    ----------
    .. [1] L. Wang, H. Gao, C. Zhao, X. Sun and D. Dai, "Auxiliary-loss-free
       load balancing strategy for mixture-of-experts", arXiv:2408.15664,
       2024 (the bias update rule; section not re-checked).
    .. [2] X. Y. Han and Y. Zhong, "A theoretical framework for
       auxiliary-loss-free load balancing of sparse mixture-of-experts in
       large-scale AI models", arXiv:2512.03915, 2025: the primal-dual
       reading, monotone improvement of the Lagrangian under a step-size
       condition, the preference rule, approximate balance, and
       logarithmic regret with :math:`a/t` steps online (theorem numbers not
       re-checked).

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.balance._alf_lb import alf_lb
    >>> s = np.array([[1.0, 0.0], [0.9, 0.0]])
    >>> res = alf_lb(s, 1, step=0.01, n_iter=60, backend="numpy")
    >>> res.loads_at[0, -1].tolist(), round(float(res.dual[0, -1]), 6)
    ([1, 1], 1.0)
    """
    t0 = time.perf_counter()
    check_in(rule, "rule", tuple(_RULES))
    check_in(backend, "backend", ("numba", "numpy", "cuda"))
    step = check_float(step, "step", positive=True)
    n_iter = check_int(n_iter, "n_iter")
    if n_reps is not None:
        n_reps = check_int(n_reps, "n_reps")
    if not isinstance(record_moves, (bool, np.bool_)):
        raise TypeError(f"record_moves must be a bool, got {type(record_moves).__name__}")
    seed_u = seed_to_uint64(seed)

    gen = None
    if isinstance(scores_or_generator, ScoreGenerator):
        gen = scores_or_generator
        if n_tokens is None:
            raise ValueError("n_tokens is required when a score generator is given")
        n_tokens = check_int(n_tokens, "n_tokens")
        if record_moves:
            raise ValueError("record_moves needs the deterministic setting (a fixed score matrix), not a generator")
        e = gen.n_experts
        scores = np.zeros((1, 1, 1))
        n_reps = 1 if n_reps is None else n_reps
    else:
        obj = scores_or_generator
        if hasattr(obj, "scores") and hasattr(obj, "k"):  # an AssignmentProblem or AssignmentBatch
            if k is not None and int(k) != int(obj.k):
                raise ValueError(f"k={k} differs from the problem's k={obj.k}")
            k = obj.k
            if capacity is None:
                capacity = getattr(obj, "capacity", None)
                if isinstance(obj, AssignmentBatch) and obj.shared_capacity:
                    capacity = obj.capacity[0]
            obj = obj.scores
        scores = _check_scores(obj)
        if scores.ndim == 2:
            scores = scores[None]
            n_reps = 1 if n_reps is None else n_reps
        elif n_reps is None:
            n_reps = scores.shape[0]
        elif scores.shape[0] != n_reps:
            raise ValueError(f"scores has {scores.shape[0]} replications but n_reps={n_reps}")
        if n_tokens is not None and check_int(n_tokens, "n_tokens") != scores.shape[1]:
            raise ValueError(f"n_tokens={n_tokens} differs from scores.shape[-2]={scores.shape[1]}")
        n_tokens, e = scores.shape[1], scores.shape[2]
    if k is None:
        raise TypeError("k is required (experts per token)")
    k = check_int(k, "k", maximum=e)

    cbar = n_tokens * k / e
    if capacity is None:
        cap = np.full(e, cbar)
    else:
        cap = np.asarray(capacity, dtype=np.float64)
        if cap.shape != (e,) and (cap.shape != (n_reps, e) or gen is not None):
            want = f"({e},)" if gen is not None else f"({e},) or ({n_reps}, {e})"
            raise ValueError(f"capacity must have shape {want}, got {cap.shape}")
        if not np.all(np.isfinite(cap)) or np.any(cap <= 0):
            raise ValueError("capacity must be finite and positive")
        if np.any(cap.sum(axis=-1) < n_tokens * k * (1 - 1e-12)):
            raise ValueError(f"capacity sums to {np.min(cap.sum(axis=-1))} < n_tokens * k = {n_tokens * k}: "
                             "the experts cannot hold every assignment")
    if bias0 is None:
        b0 = np.zeros((n_reps, e))
    else:
        b0 = np.asarray(bias0, dtype=np.float64)
        if b0.shape == (e,):
            b0 = np.broadcast_to(b0, (n_reps, e))
        if b0.shape != (n_reps, e):
            raise ValueError(f"bias0 must have shape ({e},) or ({n_reps}, {e}), got {b0.shape}")
        if not np.all(np.isfinite(b0)):
            raise ValueError("bias0 contains NaN or infinite values")
        b0 = np.array(b0, dtype=np.float64, order="C")  # writable copy: one kernel signature

    comp_mode, comparator, cb = 0, None, np.zeros(e)
    if comparator_bias is not None:
        cb = np.asarray(comparator_bias, dtype=np.float64)
        if cb.shape != (e,) or not np.all(np.isfinite(cb)):
            raise ValueError(f"comparator_bias must be a finite array of shape ({e},)")
        comp_mode, comparator = 1, "fixed"
    elif gen is not None:
        if gen.stationary:
            cb, comp_mode, comparator = gen.optimal_bias(0), 1, "fixed"
        else:
            comp_mode, comparator = 2, "dynamic"

    ckpts = checkpoint_grid(n_iter)
    ckpt_idx = (ckpts - 1).astype(np.int64)
    rep_ids = np.arange(n_reps, dtype=np.int64)
    rule_code = _RULES[rule]
    if backend in ("numba", "cuda"):
        n_ck = ckpt_idx.shape[0]
        bias = np.empty((n_reps, e))
        bias_ck = np.empty((n_reps, n_ck, e))
        dual = np.empty((n_reps, n_iter))
        comp = np.empty((n_reps, n_iter) if comp_mode else (1, 1))
        maxvio = np.empty((n_reps, n_iter))
        loads_ck = np.empty((n_reps, n_ck, e), np.int64)
        gmv = np.empty((n_reps, n_ck))
        routes = np.empty((n_reps, n_iter, n_tokens, k) if record_moves else (1, 1, 1, k), np.int64)
        gparams = gen.params.copy() if gen is not None else np.zeros(3 + 2 * e)  # writable: one signature
        capm = np.array(np.atleast_2d(cap), dtype=np.float64, order="C")  # writable copy: one kernel signature
        args = (np.ascontiguousarray(scores), gen is not None, gparams, n_tokens, seed_u, rep_ids, k, capm,
                cbar, rule_code, step, b0, n_iter, ckpt_idx, comp_mode, np.array(cb, dtype=np.float64), record_moves)
        outs = (bias, bias_ck, dual, comp, maxvio, loads_ck, gmv, routes)
        if backend == "numba":
            _alf_kernel(*args, *outs)
        else:
            _cuda_run(args, outs, k)
        if not record_moves:
            routes = None
    else:
        bias, bias_ck, dual, comp, maxvio, loads_ck, gmv, routes = _numpy_path(
            scores, gen, n_tokens, seed_u, rep_ids, k, cap, cbar, rule_code, step, b0, n_iter, ckpt_idx,
            comp_mode, cb, record_moves)
    regret = np.cumsum(dual - comp, axis=1) if comp_mode else None
    moves = _token_moves(routes, cap, e) if record_moves else None
    return ALFLBResult(bias=bias, dual=dual, maxvio=maxvio, checkpoints=ckpts, bias_at=bias_ck, loads_at=loads_ck,
                       global_maxvio=gmv, comparator_dual=comp if comp_mode else None, regret=regret,
                       comparator=comparator, routes=routes, moves=moves, capacity=cap, k=k, n_tokens=n_tokens,
                       n_iter=n_iter, n_reps=n_reps, seed=int(seed_u), rule=rule, step=step, online=gen is not None,
                       backend=backend, wall_time=time.perf_counter() - t0)
