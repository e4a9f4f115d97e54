r"""Auxiliary-loss-free load balancing (ALF-LB) as an online learner of the one engine.

:func:`alf_lb` is a :class:`~expertlab.sim.Learner` of ``"routing"``
feedback: it acts with a bias vector, the environment
(:func:`~expertlab.balance.routing` for fresh batches,
:func:`~expertlab.balance.routing_fixed` for the deterministic setting)
routes a batch top-K on biased scores and returns the loads, and the bias
moves against them.  :func:`expertlab.sim.run` drives it; the array code
below is the reference path.

The pair (``alf_lb``, routing environment) also has compiled fast paths,
registered with :func:`expertlab.sim.register_fast_path`: one fused Numba
kernel (``prange`` over replications, the batch and token loops inside) and
the same scalar per-replication body as a ``numba.cuda`` kernel (one thread
per replication), tested on the CPU simulator.  They draw every score from
the same environment round keys as the array path
(:func:`~expertlab.balance.generators.score_at` of
``round_key(rep_key(seed, rep_offset + r), t)``), break ties the same way
(lowest expert index) and apply the same update, so the numbers agree to
rounding.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import math

import numpy as np
from numba import njit, prange
from numba.extending import register_jitable

from .._backend import get_namespace
from .._random import rep_key, round_key
from .._validation import as_real_array, check_float, check_in
from ..sim import Learner, register_fast_path
from ._routing import FixedRouting, Routing
from ..sim._variates import ZIG_DRAWS, zig_normal
from .generators import mean_at

__all__ = ["ALFLBState", "alf_lb"]

_RULES = {"sign": 0, "magnitude": 1, "decaying": 2}


class ALFLBState(NamedTuple):
    """State of :func:`alf_lb` (leading axis: replications).

    Attributes
    ----------
    t : array of int64, shape (n_reps,)
        Batches seen (bias updates made).
    bias : array, shape (n_reps, n_experts)
        The bias the next batch is routed with.
    capacity : array, shape (1, n_experts) or (n_reps, n_experts)
        Capacities :math:`C_i` (from the environment's spec), shared or one
        row per replication.
    mean_load : array, shape (n_reps,)
        :math:`\\bar C = NK/E`.
    """

    t: Any
    bias: Any
    capacity: Any
    mean_load: Any


class ALFLBKernel(NamedTuple):
    """The settings the compiled paths read: rule code, step and the initial bias (or None)."""

    rule: int
    step: float
    bias0: Any


def _bias0_rows(b0, n_reps, e, xp=np):
    """The initial bias as a fresh ``(n_reps, e)`` float64 array."""
    if b0 is None:
        return xp.zeros((n_reps, e))
    if b0.shape not in ((e,), (n_reps, e)):
        raise ValueError(f"bias0 must have shape ({e},) or (n_reps, {e}) = ({n_reps}, {e}), got {b0.shape}")
    return xp.asarray(np.array(np.broadcast_to(b0, (n_reps, e)), dtype=np.float64))


def alf_lb(step=0.001, rule="sign", *, bias0=None) -> Learner:
    r"""Auxiliary-loss-free load balancing: top-K routing on :math:`s + b` with bias updates.

    Parameters
    ----------
    step : float
        Step :math:`u > 0` (``"sign"``, ``"magnitude"``) or the constant
        :math:`a > 0` of the decaying step :math:`a/t`.
    rule : {"sign", "magnitude", "decaying"}
        Bias update (see Notes).
    bias0 : array_like, shape (n_experts,) or (n_reps, n_experts), optional
        Initial bias (default 0); a 2-d bias gives row ``r`` to replication
        ``r`` of the run (which must then have that many replications).

    Returns
    -------
    Learner
        A ``"routing"`` learner: it runs on :func:`~expertlab.balance.routing`
        (fresh batches from a score generator) and
        :func:`~expertlab.balance.routing_fixed` (the same batch every step,
        the deterministic setting), through :func:`expertlab.sim.run`, with
        a fused Numba kernel and a CUDA kernel registered as fast paths
        (``backend="numba"``, ``"cuda"``; the engine's ``"auto"`` picks the
        Numba kernel for runs of at least about 2e7 token-expert operations).  The metrics
        (``maxvio``, ``global_maxvio``, ``dual``, ``regret``,
        ``bias_error``, ...) are the environment's; ``final["bias"]`` is the
        bias after the last update, shape ``(n_reps, n_experts)``.

    Notes
    -----
    The assignment LP :math:`\max \sum_{t,i} s_{t,i} x_{t,i}` subject to
    :math:`\sum_i x_{t,i} = K`, :math:`\sum_t x_{t,i} \le C_i`,
    :math:`0 \le x \le 1` has the Lagrangian dual function

    .. math::

        g(p) = \sum_t \operatorname{top}_K\big(s_t - p\big) + \sum_i C_i p_i ,

    whose subgradient is :math:`\partial g / \partial p_i = C_i - L_i(p)`, with
    :math:`L_i(p)` the load of expert :math:`i` under top-K routing on
    :math:`s - p`.  With bias :math:`b = -p` each batch is routed on
    :math:`s + b_t` and the bias is updated by

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
    batch :math:`t` is drawn.  The learner is deterministic: it draws no
    random numbers (its keys are unused).

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
    Deterministic: two tokens that both prefer expert 0 end up split.

    >>> import numpy as np
    >>> from expertlab import sim
    >>> from expertlab.balance import alf_lb, generators, routing, routing_fixed
    >>> env = routing_fixed(np.array([[1.0, 0.0], [0.9, 0.0]]), k=1)
    >>> res = sim.run(alf_lb(step=0.01), env, horizon=60, n_reps=1, backend="numpy")
    >>> res.final["loads"].tolist(), round(float(res.metrics["dual"][-1, 0]), 6)
    ([[1, 1]], 1.0)

    Online, decaying steps: regret against the optimal bias :math:`-m`.

    >>> gen = generators.iid_plus_offset(np.linspace(-1.0, 1.0, 4))
    >>> res = sim.run(alf_lb(step=1.0, rule="decaying"), routing(gen, n_tokens=128, k=2),
    ...               horizon=300, n_reps=8, seed=0, backend="numpy")
    >>> res.unit, res.metrics["regret"].shape
    ('batch', (24, 8))
    """
    rule = check_in(rule, "rule", tuple(_RULES))
    step = check_float(step, "step", positive=True)
    b0 = None
    if bias0 is not None:
        b0 = np.array(as_real_array(bias0, "bias0", np), dtype=np.float64)
        if b0.ndim not in (1, 2) or b0.shape[-1] < 1:
            raise ValueError(f"bias0 must have shape (n_experts,) or (n_reps, n_experts), got {b0.shape}")
        if not np.all(np.isfinite(b0)):
            raise ValueError("bias0 contains NaN or infinite values")
        b0.flags.writeable = False
    params = {"step": step, "rule": rule}
    if b0 is not None:
        params["bias0"] = b0
    code = _RULES[rule]

    def check_spec(spec):
        e = spec.n_actions
        info = spec.info
        if spec.feedback != "routing" or "capacity" not in info or "mean_load" not in info:
            raise ValueError("alf_lb runs on routing environments (expertlab.balance.routing, routing_fixed), "
                             "whose spec gives the capacity and the mean load")
        cap_shape = np.shape(info["capacity"])
        if len(cap_shape) not in (1, 2) or cap_shape[-1] != e:
            raise ValueError(f"the environment's capacity has shape {cap_shape}; alf_lb needs ({e},) or "
                             f"(n_reps, {e})")
        if b0 is not None and b0.shape[-1] != e:
            raise ValueError(f"bias0 has {b0.shape[-1]} entries per row but the environment has {e} experts")

    def init(spec, n_reps, keys=None, xp=np):
        check_spec(spec)
        e = spec.n_actions
        cap = xp.asarray(spec.info["capacity"], dtype=xp.float64)  # (E,) or one row per replication
        if b0 is not None and b0.ndim == 2 and b0.shape[0] != n_reps:
            # refused by act (the engine also builds a one-replication state to learn the names of final)
            bias = xp.asarray(np.array(b0))
        else:
            bias = _bias0_rows(b0, n_reps, e, xp)
        return ALFLBState(t=xp.zeros(n_reps, dtype=xp.int64), bias=bias,
                          capacity=cap if cap.ndim == 2 else cap[None, :],
                          mean_load=xp.full(n_reps, float(spec.info["mean_load"])))

    def act(state, obs=None, keys=None):
        if state.bias.shape[0] != state.t.shape[0]:
            raise ValueError(f"bias0 must have shape ({state.bias.shape[1]},) or (n_reps, {state.bias.shape[1]}) "
                             f"= ({state.t.shape[0]}, {state.bias.shape[1]}), got {tuple(state.bias.shape)}")
        return state.bias, state

    def update(state, bias, feedback, keys=None):
        xp = get_namespace(state.bias)
        d = state.capacity - xp.astype(feedback.loads, state.capacity.dtype)
        if tuple(d.shape) != tuple(state.bias.shape):
            raise ValueError(f"alf_lb: loads of shape {tuple(feedback.loads.shape)} and capacities of shape "
                             f"{tuple(state.capacity.shape)} do not match the bias {tuple(state.bias.shape)}")
        if code == 0:
            b = state.bias + step * xp.astype(d > 0, xp.float64) - step * xp.astype(d < 0, xp.float64)
        else:
            st = step if code == 1 else (step / (xp.astype(state.t, xp.float64) + 1.0))[:, None]
            b = state.bias + st * d / state.mean_load[:, None]
        return ALFLBState(t=state.t + 1, bias=b, capacity=state.capacity, mean_load=state.mean_load)

    def final(state):
        return {"bias": state.bias}

    return Learner(name="alf_lb", feedback="routing", init=init, act=act, update=update, params=params,
                   kernel=ALFLBKernel(code, step, b0), doc=alf_lb.__doc__, check_spec=check_spec, final=final)


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
def _block_max(v, lo, hi):
    """The largest of ``v[lo:hi]`` (``lo < hi``)."""
    m = v[lo]
    for i in range(lo + 1, hi):
        if v[i] > m:
            m = v[i]
    return m


@register_jitable
def _topk_select(v, e, k, topv, topi, bm, o):
    r"""Top ``min(k, e)`` of ``v[:e]`` into ``topv``/``topi`` by selection; the lists of :func:`_topk_insert`.

    A two-level tournament: ``v[:e]`` is cut into blocks of ``g`` entries, ``g`` the least with
    :math:`g^2 \ge e`, whose maxima go to the scratch ``bm[o:o + ceil(e / g)]``.  Pass ``r`` takes the
    largest block maximum (the lowest block on ties, by a strict comparison in block order), the
    first entry of that block equal to it, overwrites that entry with ``-inf`` (``v`` is consumed) and
    recomputes the block's maximum: about :math:`e + 2k\sqrt{e}` comparisons instead of the :math:`ke`
    of plain selection.  Blocks are in index order, so each pick is the largest value left, the lowest
    index among equal ones: the picks are the first ``min(k, e)`` entries in the order value
    descending, index ascending, which is what :func:`_topk_insert` keeps, for finite values (a taken
    entry then never beats one left).  Returns ``min(k, e)``.
    """
    kk = min(k, e)
    g = 1
    while g * g < e:
        g += 1
    nb = (e + g - 1) // g
    for j in range(nb):
        bm[o + j] = _block_max(v, j * g, min(j * g + g, e))
    for r in range(kk):
        best = bm[o]
        jb = 0
        for j in range(1, nb):
            if bm[o + j] > best:
                best = bm[o + j]
                jb = j
        lo = jb * g
        hi = min(lo + g, e)
        i0 = lo
        while i0 < hi - 1 and v[i0] != best:
            i0 += 1
        topv[r] = best
        topi[r] = i0
        v[i0] = -np.inf
        bm[o + jb] = _block_max(v, lo, hi)
    return kk


#: Weight of the latest token in the running mean and variance of a list's K-th value.
_TRACK_WEIGHT = 1.0 / 16.0
#: A list's threshold lies this many running standard deviations below the running mean of its K-th value.
_TRACK_WIDTH = 2.0


@register_jitable
def _topk_filtered(w, add, e, k, topv, topi, full, t):
    r"""Top ``min(k, e)`` of ``w[:e] + add[:e]``, looking first only at values above a tracked threshold.

    ``full`` is a float row of at least ``3e + 4`` entries (the token work row of
    :func:`_route_token_gen`): ``full[e:2e]`` and ``full[2e:3e]`` receive the values and indices (as
    floats) of the candidates, the values at least the threshold :math:`\tau = m - 2.5 s`, where
    ``full[t]`` = :math:`m` and ``full[t + 1]`` = :math:`s^2` are a running mean and variance of the
    list's last (K-th) value over the previous tokens (:math:`m = -\infty` before the first: every
    value passes).  When at least ``min(k, e)`` values pass, every other value lies below all of them,
    so the top list is the candidates' (picked by plain selection, ties to the lowest index: the
    candidates are in index order); otherwise the whole row goes through :func:`_topk_select`.  Either
    way the list is the one :func:`_topk_insert` gives (finite values), whatever :math:`m` and
    :math:`s^2` hold: they only decide the cost.  Returns ``min(k, e)``.
    """
    kk = min(k, e)
    m = full[t]
    s2 = full[t + 1]
    tau = m - _TRACK_WIDTH * math.sqrt(s2)
    c = 0
    for i in range(e):  # branch-free gathering: write every value, advance past those that pass
        x = w[i] + add[i]
        full[e + c] = x
        full[2 * e + c] = i
        c += x >= tau
    if c >= kk:
        for r in range(kk):
            best = full[e]
            jb = 0
            for j in range(1, c):  # written with selects: the running maximum changes unpredictably
                x = full[e + j]
                up = x > best
                jb = j if up else jb
                best = x if up else best
            topv[r] = best
            topi[r] = np.int64(full[2 * e + jb])
            full[e + jb] = -np.inf
    else:
        for i in range(e):
            full[e + i] = w[i] + add[i]
        _topk_select(full[e:2 * e], e, k, topv, topi, full, 2 * e)
    last = topv[kk - 1]
    if m == -np.inf:  # the first token: start from its K-th value, with the list's spread as the scale
        full[t] = last
        full[t + 1] = (topv[0] - last) ** 2
    else:
        d = last - m
        full[t] = m + _TRACK_WEIGHT * d
        full[t + 1] = (1.0 - _TRACK_WEIGHT) * (s2 + _TRACK_WEIGHT * d * d)
    return kk


@register_jitable
def _route_token_gen(mu, sigma, e, key, n, k, b, bstar, comp_mode, topv, topi, ctopv, ctopi, w):
    r"""Top-K of the generated scores of token ``n`` plus ``b`` (and plus ``bstar`` when ``comp_mode > 0``).

    Each score is that of :func:`~expertlab.balance.generators.score_at`, :math:`m_i + \sigma z` with
    the batch's means :math:`m_i` = ``mu[i]`` (from :func:`~expertlab.balance.generators.mean_at`) and
    :math:`z` the ziggurat normal owning the draws from :math:`(nE + i) D` on (:math:`D` = ``ZIG_DRAWS``),
    computed by the same operations into ``w[:E]``.  ``w`` is the replication's float work row,
    ``(3E + 4,)``: ``w[E:3E]`` the lists' scratch, and ``w[3E:3E + 4]`` the running mean and variance
    of the comparator's and of ALF-LB's K-th value, carried from token to token (set them to
    ``-inf, 0, -inf, 0`` before the first token).  Each list is built by :func:`_topk_filtered`: the scores plus the list's bias that
    pass its threshold are gathered, and the list is selected among them; when fewer than K pass, the
    whole row goes through the tournament of :func:`_topk_select`.  The lists are the ones
    :func:`_topk_insert` gives on every score (finite scores), whatever the thresholds; with thresholds
    that track each list's K-th value (about a dozen candidates out of 64 experts), a list costs one
    branch-free pass over the scores and a selection among a few entries, where insertion takes an
    unpredictable branch and a shift whenever a score enters.  The comparator's list goes to ``ctopv``
    (its first ``K`` entries) and ``ctopi``, ALF-LB's to ``topv``, ``topi``.  Returns the number of
    entries of the comparator list, ``min(k, e)`` (0 without comparator).
    """
    j0 = np.int64(n) * np.int64(e)
    for i in range(e):
        w[i] = mu[i] + sigma * zig_normal(key, (j0 + np.int64(i)) * ZIG_DRAWS)
    mc = 0
    if comp_mode > 0:
        mc = _topk_filtered(w, bstar, e, k, ctopv, ctopi, w, 3 * e)
    _topk_filtered(w, b, e, k, topv, topi, w, 3 * e + 2)
    return mc


@register_jitable
def _rep_body(r, scores, use_gen, gparams, n_tokens, seed, rep0, k, capm, cbar, rule, step, bias0,
              horizon, ckpts, comp_mode, comp_bias,
              out_maxvio, out_gmaxvio, out_dual, out_regret, out_berr, bias_fin, loads_fin, cum_fin,
              b, bstar, cum, load, srow, v, w, topv, topi, ctopi):
    """One replication of ALF-LB on a routing environment (all batches, all tokens).

    The scalar body shared by the Numba driver and the CUDA kernel: it
    allocates nothing; ``b, bstar, srow, v`` (float, ``(E,)``), ``w`` (float, ``(3E + 4,)``), ``cum, load``
    (int, ``(E,)``), ``topv`` (float, ``(K,)``) and ``topi`` (int, ``(K,)``)
    are this replication's work rows, and ``ctopi`` (int, ``(K,)``) the experts of the comparator's top
    list when the scores are generated (``v`` then holds the batch's mean scores, ``w`` a token's scores
    and the selection's scratch).  ``scores``, ``capm`` and ``comp_bias`` have one row per replication or
    a single shared row.
    ``comp_mode``: 0 no comparator, 1 the fixed rows ``comp_bias``, 2 the
    drifting generator's :math:`-m(t)`.  The metric outputs are
    ``(n_checkpoints, n_reps)``, as :func:`expertlab.sim.run` records them.
    """
    e = bias0.shape[1]
    n_ck = ckpts.shape[0]
    rs = r if scores.shape[0] > 1 else r - r
    rc = r if capm.shape[0] > 1 else r - r
    rb = r if comp_bias.shape[0] > 1 else r - r
    for i in range(e):
        b[i] = bias0[r, i]
        bstar[i] = comp_bias[rb, i]
        cum[i] = 0
    for j in range(k):
        topi[j] = 0
        ctopi[j] = 0
    for j in range(2):  # the two top lists' tracked K-th values (see _route_token_gen)
        w[3 * e + 2 * j] = -np.inf
        w[3 * e + 2 * j + 1] = 0.0
    rkey = rep_key(seed, np.uint64(rep0 + r))
    c = 0
    reg = 0.0
    for it in range(horizon):
        key = round_key(rkey, np.uint64(it))
        if comp_mode == 2:
            for i in range(e):
                bstar[i] = -mean_at(gparams, e, i, it)
        for i in range(e):
            load[i] = 0
        if use_gen:
            for i in range(e):
                v[i] = mean_at(gparams, e, i, it)  # the batch's mean scores
        dual = 0.0
        cdual = 0.0
        for n in range(n_tokens):
            if use_gen:
                # srow holds the comparator's top values, ctopi its experts
                _route_token_gen(v, gparams[0], e, key, n, k, b, bstar, comp_mode, topv, topi, srow, ctopi, w)
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
            if comp_mode > 0:
                if use_gen:
                    tok = 0.0
                    for j in range(k):
                        tok += srow[j]
                else:
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
        dual_t = dual - cb
        if comp_mode > 0:
            reg += dual_t - (cdual - cs)
        if c < n_ck and ckpts[c] == it + 1:
            out_maxvio[c, r] = (mx - cbar) / cbar
            cmx = 0
            for i in range(e):
                cmx = max(cmx, cum[i])
            tot = cbar * (it + 1.0)
            out_gmaxvio[c, r] = (cmx - tot) / tot
            out_dual[c, r] = dual_t
            if comp_mode > 0:
                out_regret[c, r] = reg
                mb = 0.0
                ms = 0.0
                for i in range(e):
                    mb += b[i]
                    ms += bstar[i]
                mb = mb / e
                ms = ms / e
                err = 0.0
                for i in range(e):
                    err = max(err, abs((b[i] - mb) - (bstar[i] - ms)))
                out_berr[c, r] = err
            c += 1
        if it == horizon - 1:
            for i in range(e):
                loads_fin[r, i] = load[i]
                cum_fin[r, i] = cum[i]
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
        bias_fin[r, i] = b[i]  # the learner's final bias: after the last update


@njit(parallel=True, nogil=True, cache=True)
def _alf_kernel(scores, use_gen, gparams, n_tokens, seed, rep0, k, capm, cbar, rule, step, bias0,
                horizon, ckpts, comp_mode, comp_bias,
                out_maxvio, out_gmaxvio, out_dual, out_regret, out_berr, bias_fin, loads_fin, cum_fin):
    """Run every replication (``prange``); outputs are written in place."""
    e = bias0.shape[1]
    for r in prange(bias0.shape[0]):
        _rep_body(r, scores, use_gen, gparams, n_tokens, seed, rep0, k, capm, cbar, rule, step, bias0,
                  horizon, ckpts, comp_mode, comp_bias,
                  out_maxvio, out_gmaxvio, out_dual, out_regret, out_berr, bias_fin, loads_fin, cum_fin,
                  np.empty(e), np.empty(e), np.zeros(e, np.int64), np.zeros(e, np.int64), np.empty(e),
                  np.empty(e), np.empty(3 * e + 4), np.empty(k), np.zeros(k, np.int64), np.zeros(k, np.int64))


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
    def kern(scores, use_gen, gparams, n_tokens, seed, rep0, k, capm, cbar, rule, step, bias0,
             horizon, ckpts, comp_mode, comp_bias,
             out_maxvio, out_gmaxvio, out_dual, out_regret, out_berr, bias_fin, loads_fin, cum_fin,
             wb, wbstar, wcum, wload, wsrow, wv, ww, wtopv, wtopi, wctopi):
        r = _cuda.grid(1)
        if r < bias0.shape[0]:
            _rep_body(r, scores, use_gen, gparams, n_tokens, seed, rep0, k, capm, cbar, rule, step, bias0,
                      horizon, ckpts, comp_mode, comp_bias,
                      out_maxvio, out_gmaxvio, out_dual, out_regret, out_berr, bias_fin, loads_fin, cum_fin,
                      wb[r], wbstar[r], wcum[r], wload[r], wsrow[r], wv[r], ww[r], wtopv[r], wtopi[r], wctopi[r])

    _CUDA_KERNEL.append(kern)
    return kern


def _cuda_run(args, outs, k, threads_per_block=64):
    """Launch :func:`_cuda_kernel` on ``args`` (host arrays and scalars); copy ``outs`` back in place."""
    from numba import cuda

    kern = _cuda_kernel()
    n_reps, e = args[11].shape  # bias0
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    outs_d = [cuda.to_device(o) for o in outs]
    work = [cuda.to_device(np.zeros((n_reps, e))) for _ in range(2)]
    work += [cuda.to_device(np.zeros((n_reps, e), np.int64)) for _ in range(2)]
    work += [cuda.to_device(np.zeros((n_reps, e))) for _ in range(2)]
    work += [cuda.to_device(np.zeros((n_reps, 3 * e + 4)))]
    work += [cuda.to_device(np.zeros((n_reps, k))), cuda.to_device(np.zeros((n_reps, k), np.int64))]
    work += [cuda.to_device(np.zeros((n_reps, k), np.int64))]
    blocks = (n_reps + threads_per_block - 1) // threads_per_block
    kern[blocks, threads_per_block](*dev, *outs_d, *work)
    for host, d in zip(outs, outs_d):
        d.copy_to_host(host)


# ---------------------------------------------------------------------------
# fast paths of the pair (alf_lb, routing environment)

_FAST_METRICS = ("maxvio", "global_maxvio", "dual", "regret", "bias_error")


# the scores of a fixed environment are read-only (C-contiguous), and so is this placeholder of the online
# one, so that both run the same compiled signature
_NO_SCORES = np.zeros((1, 1, 1))
_NO_SCORES.flags.writeable = False


def _supports(learner, env) -> bool:
    return isinstance(learner.kernel, ALFLBKernel) and isinstance(env, (Routing, FixedRouting))


def _driver(backend):
    def drive(learner, env, horizon, n_reps, seed_u, rep_offset, ckpts):
        kern = learner.kernel
        e, k = env.n_experts, env.k
        b0 = _bias0_rows(kern.bias0, n_reps, e)
        if isinstance(env, Routing):
            gen = env.generator
            scores, use_gen, gparams, n_tokens = _NO_SCORES, True, gen.params.copy(), env.n_tokens
            capm = env.capacity[None].copy()
            comp_mode = 1 if gen.stationary else 2
            comp = gen.optimal_bias(0)[None] if gen.stationary else np.zeros((1, e))
        else:
            env.check_n_reps(n_reps)
            scores, use_gen, gparams, n_tokens = env.scores, False, np.zeros(3 + 2 * e), env.n_tokens
            capm = np.array(env.capacity_rows, dtype=np.float64)
            comp_mode = 1 if env.has_comparator else 0
            comp = np.array(env.comparator_bias) if env.has_comparator else np.zeros((1, e))
        n_ck = ckpts.size
        outs = [np.zeros((n_ck, n_reps)) for _ in range(3)]
        outs += [np.zeros((n_ck, n_reps) if comp_mode else (1, 1)) for _ in range(2)]
        fins = [np.zeros((n_reps, e)), np.zeros((n_reps, e), np.int64), np.zeros((n_reps, e), np.int64)]
        args = (scores, use_gen, gparams, np.int64(n_tokens), np.uint64(seed_u), np.int64(rep_offset), np.int64(k),
                capm, float(env.mean_load), np.int64(kern.rule), float(kern.step), b0, np.int64(horizon),
                np.ascontiguousarray(ckpts, dtype=np.int64), np.int64(comp_mode), comp)
        if backend == "numba":
            _alf_kernel(*args, *outs, *fins)
        else:
            _cuda_run(args, outs + fins, k)
        metrics = {"maxvio": outs[0], "global_maxvio": outs[1], "dual": outs[2]}
        if comp_mode:
            metrics["regret"], metrics["bias_error"] = outs[3], outs[4]
        return metrics, {"bias": fins[0], "loads": fins[1], "cumulative_loads": fins[2]}

    return drive


for _b in ("numba", "cuda"):
    register_fast_path(_b, "alf_lb-routing", supports=_supports, metrics=_FAST_METRICS, driver=_driver(_b),
                       learner_final=True)
del _b
