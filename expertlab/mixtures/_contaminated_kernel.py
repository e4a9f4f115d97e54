"""The EM of the softmax-contaminated MoE fused into one compiled pass per step (NumPy inputs).

:func:`fit_contaminated_moe` runs this kernel for NumPy arrays and the array
path (:func:`._contaminated_moe._em_array`) for every other namespace (CuPy).
Both run the same generalised EM, step for step:

* the E-step and the log-likelihood in one pass over the samples;
* each damped Newton step of the gate accumulates its gradient, its Hessian
  and the objective at the current point in one pass, then one pass per
  halving of the step;
* each damped Gauss–Newton step of the prompt likewise;
* the closed-form variance in a last pass.

The scores and link values of the accepted step are kept for the next pass,
so each costs one evaluation: about nine exponentials, logarithms or
hyperbolic tangents per sample and iteration, against about seventeen in the
array path.

Replications run in parallel (``prange``); each one's whole EM runs inside
the kernel, so nothing of size ``n_samples`` is allocated per step besides
the responsibilities.  The two paths agree to rounding (the sums run in
another order): the tests compare them on every link and density.

One difference in degenerate cases: the small linear systems are solved by
Gaussian elimination with partial pivoting, and a system that is singular
even after the ridge gives a zero step here, where ``numpy.linalg.solve``
raises.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)

#: Link codes of the kernel, in the order of ``_moe_links.LINKS``-style names.
LINK_CODES = {"tanh": 0, "sigmoid": 1, "gelu": 2, "linear": 3}


@njit(nogil=True, cache=True)
def _softplus(v):
    """``log(1 + e^v)`` without overflow."""
    if v > 0.0:
        return v + math.log1p(math.exp(-v))
    return math.log1p(math.exp(v))


@njit(nogil=True, cache=True)
def _link(u, code):
    if code == 0:
        return math.tanh(u)
    if code == 1:
        return 0.5 * (1.0 + math.tanh(0.5 * u))
    if code == 2:
        return u * 0.5 * math.erfc(-u * _SQRT_HALF)
    return u


@njit(nogil=True, cache=True)
def _solve_ridge(A, b, out, M):
    """``out = (A + ridge I)^{-1} b`` with the ridge of the array path; non-finite entries become 0.

    ``M`` is a ``(k, k + 1)`` workspace for the augmented system (allocated once per fit).
    """
    k = A.shape[0]
    mean_diag = 0.0
    for i in range(k):
        mean_diag += abs(A[i, i])
    ridge = 1e-10 * (1.0 + mean_diag / k)
    for i in range(k):
        for j in range(k):
            M[i, j] = A[i, j]
        M[i, i] += ridge
        M[i, k] = b[i]
    for c in range(k):
        p = c
        for i in range(c + 1, k):
            if abs(M[i, c]) > abs(M[p, c]):
                p = i
        if p != c:
            for j in range(k + 1):
                M[c, j], M[p, j] = M[p, j], M[c, j]
        piv = M[c, c]
        for i in range(c + 1, k):
            f = M[i, c] / piv
            for j in range(c, k + 1):
                M[i, j] -= f * M[c, j]
    for i in range(k - 1, -1, -1):
        s = M[i, k]
        for j in range(i + 1, k):
            s -= M[i, j] * out[j]
        out[i] = s / M[i, i]
    for i in range(k):
        if not math.isfinite(out[i]):
            out[i] = 0.0


@njit(nogil=True, cache=True)
def _link_derivative_at(u, h, code):
    """``phi'(u)`` given ``h = phi(u)`` (no transcendental function for tanh, sigmoid and linear)."""
    if code == 0:
        return 1.0 - h * h
    if code == 1:
        return h * (1.0 - h)
    if code == 2:
        return 0.5 * math.erfc(-u * _SQRT_HALF) + u * math.exp(-0.5 * u * u - _LOG_SQRT_2PI)
    return 1.0


@njit(nogil=True, cache=True)
def _gate_step(X, r, theta, a, a_new, H, grad, step, cand, M):
    """One damped Newton step of the soft-label logistic likelihood, in place on ``theta`` (length D + 1).

    ``a`` holds the scores at ``theta``; on success ``a_new`` holds those at the new ``theta`` and the step
    returns True (the caller swaps the two), else ``theta`` stays and the step returns False.
    """
    n, D = X.shape
    k = D + 1
    H[:, :] = 0.0
    grad[:] = 0.0
    q0 = 0.0
    for i in range(n):
        ai = a[i]
        e = math.exp(-abs(ai))
        if ai >= 0.0:
            g = 1.0 / (1.0 + e)
            q0 += r[i] * ai - (ai + math.log1p(e))
        else:
            g = e / (1.0 + e)
            q0 += r[i] * ai - math.log1p(e)
        w = g * (1.0 - g)
        res = r[i] - g
        for j in range(D):
            xj = X[i, j]
            grad[j] += res * xj
            wx = w * xj
            for l in range(j + 1):
                H[j, l] += wx * X[i, l]
            H[D, j] += wx
        grad[D] += res
        H[D, D] += w
    for j in range(k):
        for l in range(j + 1, k):
            H[j, l] = H[l, j]
    _solve_ridge(H, grad, step, M)
    t = 1.0
    for _ in range(30):
        for j in range(k):
            cand[j] = theta[j] + t * step[j]
        q = 0.0
        for i in range(n):
            ac = cand[D]
            for j in range(D):
                ac += cand[j] * X[i, j]
            a_new[i] = ac
            q += r[i] * ac - _softplus(ac)
        if q >= q0:
            theta[:] = cand
            return True
        t *= 0.5
    return False


@njit(nogil=True, cache=True)
def _prompt_step(X, y, r, eta, code, u, h, u_new, h_new, A, b, step, cand, M):
    """One damped Gauss–Newton step of the weighted squared error, in place on ``eta`` (length D).

    ``u``, ``h`` hold the scores and link values at ``eta``; on success ``u_new``, ``h_new`` hold those at
    the new ``eta`` and the step returns True (the caller swaps), else it returns False.
    """
    n, D = X.shape
    A[:, :] = 0.0
    b[:] = 0.0
    q0 = 0.0
    for i in range(n):
        d = _link_derivative_at(u[i], h[i], code)
        e = y[i] - h[i]
        q0 -= r[i] * e * e
        wd = r[i] * d * d
        re = r[i] * e * d
        for j in range(D):
            xj = X[i, j]
            b[j] += re * xj
            wx = wd * xj
            for l in range(j + 1):
                A[j, l] += wx * X[i, l]
    for j in range(D):
        for l in range(j + 1, D):
            A[j, l] = A[l, j]
    _solve_ridge(A, b, step, M)
    t = 1.0
    for _ in range(30):
        for j in range(D):
            cand[j] = eta[j] + t * step[j]
        q = 0.0
        for i in range(n):
            uc = 0.0
            for j in range(D):
                uc += cand[j] * X[i, j]
            hc = _link(uc, code)
            u_new[i] = uc
            h_new[i] = hc
            e = y[i] - hc
            q -= r[i] * e * e
        if q >= q0:
            eta[:] = cand
            return True
        t *= 0.5
    return False


@njit(nogil=True, cache=True)
def _fit_one(X, y, lf0, theta, eta, nu0, code, max_iter, tol, gate_steps, prompt_steps, min_nu, path):
    """EM of one replication; ``theta`` (gate, length D + 1) and ``eta`` updated in place.

    The gate scores ``a``, the prompt scores ``u`` and the link values ``h`` at the current parameters are
    kept from the pass that computed them, so each is computed once per accepted step.
    Returns ``(nu, n_iter, converged)``.
    """
    n, D = X.shape
    r = np.empty(n)
    a = np.empty(n)
    a_new = np.empty(n)
    u = np.empty(n)
    u_new = np.empty(n)
    h = np.empty(n)
    h_new = np.empty(n)
    H = np.empty((D + 1, D + 1))
    g1 = np.empty(D + 1)
    g2 = np.empty(D + 1)
    g3 = np.empty(D + 1)
    A = np.empty((D, D))
    p1 = np.empty(D)
    p2 = np.empty(D)
    p3 = np.empty(D)
    Mg = np.empty((D + 1, D + 2))
    Mp = np.empty((D, D + 1))
    for i in range(n):
        ai = theta[D]
        ui = 0.0
        for j in range(D):
            ai += theta[j] * X[i, j]
            ui += eta[j] * X[i, j]
        a[i] = ai
        u[i] = ui
        h[i] = _link(ui, code)
    nu = nu0
    prev = -np.inf
    for k in range(max_iter):
        # E-step and log-likelihood: with sp = log(1 + e^-a), log g = -sp and log(1 - g) = -a - sp, so
        # log p(y | x) = -sp + logaddexp(lf0 - a, log phi) and r = exp(log phi - logaddexp(lf0 - a, log phi))
        half_log = 0.5 * math.log(nu)
        ll = 0.0
        for i in range(n):
            e = y[i] - h[i]
            lphi = -0.5 * e * e / nu - _LOG_SQRT_2PI - half_log
            c0 = lf0[i] - a[i]
            m = max(c0, lphi)
            if m == -np.inf:
                L = -np.inf
            else:
                L = m + math.log1p(math.exp(-abs(c0 - lphi)))
            ll += L - _softplus(-a[i])
            r[i] = math.exp(lphi - L)
        ll /= n
        # M-step
        for _ in range(gate_steps):
            if _gate_step(X, r, theta, a, a_new, H, g1, g2, g3, Mg):
                a, a_new = a_new, a
        for _ in range(prompt_steps):
            if _prompt_step(X, y, r, eta, code, u, h, u_new, h_new, A, p1, p2, p3, Mp):
                u, u_new = u_new, u
                h, h_new = h_new, h
        num = 0.0
        den = 0.0
        for i in range(n):
            e = y[i] - h[i]
            num += r[i] * e * e
            den += r[i]
        nu = max(num / max(den, 1e-300), min_nu)
        path[k] = ll
        conv = abs(ll - prev) < tol
        prev = ll
        if conv:
            return nu, k + 1, True
    return nu, max_iter, False


@njit(parallel=True, nogil=True, cache=True)
def fit_batch(X, y, lf0, theta, eta, nu, code, max_iter, tol, gate_steps, prompt_steps, min_nu, path, n_iter,
              converged):
    """Every replication's EM (``prange``); ``theta``, ``eta``, ``nu``, ``path``, ``n_iter`` and ``converged`` in place."""
    for rep in prange(X.shape[0]):
        v, it, ok = _fit_one(X[rep], y[rep], lf0[rep], theta[rep], eta[rep], nu[rep], code, max_iter, tol,
                             gate_steps, prompt_steps, min_nu, path[rep])
        nu[rep] = v
        n_iter[rep] = it
        converged[rep] = ok
