"""Value iteration of a batch of MDPs in one compiled call (NumPy float64 inputs).

:func:`expertlab.mdp.value_iteration` runs :func:`advance` for NumPy inputs
(``engine="compiled"``, the default there) and the array loop
(:func:`._planning._vi_loop`) for every other namespace.  Both run the same
iterations, one MDP at a time here (``prange`` over the MDPs):

* one pass over an MDP's dense kernel ``(S, A, S)`` keeps the nonzero
  entries of each row ``(s, a)``, times ``gamma``, with their states (a
  compressed-row copy, read at a fixed stride when every row has as many
  entries, as a Garnet kernel's do); an MDP with more than ``S A S / 4``
  nonzero entries keeps its dense rows instead;
* each backup, its maximum over actions, the differences ``V_{k+1} - V_k``,
  their largest and smallest values and the stopping test run in one pass
  over the states, with no temporary array;
* at the stop (the span rule's midpoint added) one more backup gives the
  Q-values, greedy policy and Bellman residual of the returned values.

The Bellman residual of each iteration is written to the MDP's row of
``path``; a call runs at most ``steps`` iterations, and the caller calls again
with the MDPs still iterating (from their current values) until each has
stopped or run ``max_iter`` iterations.

A sparse row sums ``gamma P(t|s,a) V(t)`` over its nonzero entries in
increasing ``t`` and then adds the reward, as the array loop's gathers do, so
the two agree to the last bit on such kernels; a dense row (and the array
loop's dense products) sum in another order, and agree to rounding.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(nogil=True, cache=True)
def _compress(p, gamma, cols, probs, starts):
    """Keep the nonzero entries of ``p (S, A, S)``, times ``gamma``, in ``cols`` and ``probs``.

    Row ``s A + a`` holds the slice ``starts[s A + a]:starts[s A + a + 1]`` (states in ``cols``).

    Every entry is written at the next free place, which only a nonzero one
    advances (no branch on the entries); a row starts only while ``S``
    places remain.  Returns the rows' common length when they all have the
    same number of nonzero entries, 0 when they differ, and -1 (the rows
    unusable) when a row did not fit.
    """
    s, a = p.shape[0], p.shape[1]
    room = cols.shape[0] - s
    k = 0
    width = -1
    for i in range(s):
        for b in range(a):
            if k > room:
                return -1
            start = k
            starts[i * a + b] = k
            for t in range(s):
                x = p[i, b, t]
                cols[k] = t
                probs[k] = gamma * x
                k += x != 0.0
            if width == -1:
                width = k - start
            elif width != k - start:
                width = 0
    starts[s * a] = k
    return width


@njit(nogil=True, cache=True)
def _sweep(p, r, gamma, v, v_new, q, pi, width, cols, probs, starts):
    """One backup of ``v``: ``q = r + gamma P v``, ``v_new = max_a q`` and ``pi`` its first maximiser; returns
    the largest and smallest ``v_new - v``.

    ``width`` is what :func:`_compress` returned: the compressed rows of a
    common length (``> 0``) are read at fixed offsets, rows of different
    lengths through ``starts`` (``0``), and the dense rows of ``p`` when
    the compressed ones are unusable (``-1``).  A row's sum runs over its
    states in increasing order, from 0 (a compressed row's products already
    hold ``gamma``); the maximum over actions is the first largest ``q``.
    """
    s, a = r.shape
    hi = -np.inf
    lo = np.inf
    for i in range(s):
        best = -np.inf
        arg = 0
        for b in range(a):
            acc = 0.0
            row = i * a + b
            if width > 0:
                for k in range(row * width, (row + 1) * width):
                    acc += probs[k] * v[cols[k]]
                x = r[i, b] + acc
            elif width == 0:
                for k in range(starts[row], starts[row + 1]):
                    acc += probs[k] * v[cols[k]]
                x = r[i, b] + acc
            else:
                for t in range(s):
                    acc += p[i, b, t] * v[t]
                x = r[i, b] + gamma * acc
            q[i, b] = x
            if b == 0 or x > best:
                best = x
                arg = b
        v_new[i] = best
        pi[i] = arg
        d = best - v[i]
        hi = max(hi, d)
        lo = min(lo, d)
    return hi, lo


@njit(nogil=True, cache=True)
def _solve(p, r, gamma, tol, span, steps, last, v, path, q, pi):
    """At most ``steps`` iterations of one MDP on ``v`` (in place; see :func:`advance`): ``(iterations, stopped,
    Bellman residual)`` (the residual is that of the returned values when they are final, else 0)."""
    s, a = r.shape
    cap = max(s * a, (s * a * s) // 4) + s
    cols = np.empty(cap, dtype=np.int32)
    probs = np.empty(cap)
    starts = np.empty(s * a + 1, dtype=np.int64)
    width = _compress(p, gamma, cols, probs, starts)
    v_new = np.empty(s)
    n = steps
    stopped = False
    for k in range(steps):
        hi, lo = _sweep(p, r, gamma, v, v_new, q, pi, width, cols, probs, starts)
        delta = max(hi, -lo)
        path[k] = delta
        for i in range(s):
            v[i] = v_new[i]
        if (hi - lo if span else delta) < tol:
            n = k + 1
            stopped = True
            if span and gamma > 0:
                shift = (gamma / (1.0 - gamma)) * (0.5 * (hi + lo))
                for i in range(s):
                    v[i] = v[i] + shift
            break
    res = 0.0
    if stopped or last:  # the Q-values, greedy policy and residual of the returned values
        hi, lo = _sweep(p, r, gamma, v, v_new, q, pi, width, cols, probs, starts)
        res = max(hi, -lo)
    return n, stopped, res


@njit(parallel=True, nogil=True, cache=True)
def advance(p, r, idx, gamma, tol, span, steps, last, v, path, n_iter, done, q, pi, res):
    """Advance the MDPs ``idx`` of the batch ``p (n, S, A, S)``, ``r (n, S, A)`` by at most ``steps`` iterations.

    ``v (n, S)`` is updated in place; row ``j`` of ``path (len(idx), steps)``
    receives the residuals of MDP ``idx[j]`` (it must hold zeros); its
    iterations are added to ``n_iter``; ``done`` is set for an MDP that met
    its rule (``span``: the span of the differences, else their sup norm,
    below ``tol``), whose values then receive the span rule's midpoint shift.
    ``q (n, S, A)``, ``pi (n, S)`` and ``res (n,)`` receive the Q-values,
    the greedy policy (first maximiser) and the Bellman residual
    ``max_s |max_a q - v|`` of the returned values of an MDP that
    stopped, and of every MDP of the call when ``last`` (its iterations are
    spent).
    """
    for j in prange(idx.shape[0]):
        m = idx[j]
        k, stopped, residual = _solve(p[m], r[m], gamma, tol, span, steps, last, v[m], path[j], q[m], pi[m])
        n_iter[m] += k
        done[m] = stopped
        res[m] = residual
