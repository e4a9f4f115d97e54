"""KL-UCB: upper confidence bounds from the Kullback--Leibler divergence."""

from __future__ import annotations

import math

import numpy as np
from numba.extending import register_jitable

from .._backend import get_namespace
from .._validation import check_float, check_in
from ..sim._bandit_kernels import BanditKernelSpec
from ..sim._arms import Pull
from ..sim._protocol import Learner
from ._common import argmax_first, k_first_unpulled, reward_kind_check
from ._ucb import index_init, index_update, k_index_init, k_index_update, pick

__all__ = ["kl_ucb", "kl_ucb_index", "kl_threshold"]

#: Newton stops when a step moves the index by less than this.
INDEX_TOL = 1e-12
_MAX_ITER = 60
_Q_MAX = 1.0 - 1e-12  # starting point cap: kl(p, 1) is infinite


@register_jitable
def _kl_bern(p, q):
    a = p * math.log(p / q) if p > 0.0 else 0.0
    b = (1.0 - p) * math.log((1.0 - p) / (1.0 - q)) if p < 1.0 else 0.0
    return a + b


@register_jitable
def kl_threshold(t, c):
    """Exploration level ``ln t + c ln ln t`` (the ``ln ln`` term is dropped while ``ln t < 1``)."""
    lt = math.log(t)
    return lt + c * math.log(lt) if lt > 1.0 else lt


@register_jitable
def _start(p, n, delta):
    """An upper bound of the root: the smaller of Pinsker's and the entropy bound.

    Pinsker: ``kl(p, q) >= 2 (q - p)^2``.  Entropy: ``kl(p, q) >= -H(p) - (1 - p) ln(1 - q)``
    (drop ``-p ln q >= 0``), so ``n kl(p, q) >= delta`` at
    ``q = 1 - exp(-(delta / n + H(p)) / (1 - p))``.
    """
    q1 = p + math.sqrt(delta / (2.0 * n))
    h = -(p * math.log(p) if p > 0.0 else 0.0) - (1.0 - p) * math.log(1.0 - p)
    q2 = 1.0 - math.exp(-(delta / n + h) / (1.0 - p))
    return q1 if q1 < q2 else q2


@register_jitable
def _bern_index(p, n, delta):
    """Largest ``q`` in ``[p, 1]`` with ``n kl(p, q) <= delta``: Newton from above."""
    if p >= 1.0:
        return 1.0
    q = _start(p, n, delta)
    if q > _Q_MAX:
        q = _Q_MAX
        if n * _kl_bern(p, q) - delta <= 0.0:
            return q
    for _ in range(_MAX_ITER):
        f = n * _kl_bern(p, q) - delta
        step = f * q * (1.0 - q) / (n * (q - p))
        q_new = q - step
        if q_new < p:
            q_new = p
        if q - q_new <= INDEX_TOL:
            q = q_new
            break
        q = q_new
    return q


def _bern_index_array(xp, p, n, delta):
    """Array version of :func:`_bern_index` (same steps, element by element)."""
    p, n, delta = xp.broadcast_arrays(p, n, delta)
    done = p >= 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        pc0 = xp.where(done, 0.5, p)
        q1 = pc0 + xp.sqrt(delta / (2.0 * n))
        h = -xp.where(pc0 > 0.0, pc0 * xp.log(xp.where(pc0 > 0.0, pc0, 1.0)), 0.0) - (1.0 - pc0) * xp.log(1.0 - pc0)
        q2 = 1.0 - xp.exp(-(delta / n + h) / (1.0 - pc0))
    q0 = xp.where(q1 < q2, q1, q2)
    capped = q0 > _Q_MAX
    q = xp.where(capped, _Q_MAX, q0)
    pc = xp.where(done, 0.5, p)
    with np.errstate(divide="ignore", invalid="ignore"):
        done = done | (capped & (n * _kl_bern_array(xp, pc, q) - delta <= 0.0))
        for _ in range(_MAX_ITER):
            f = n * _kl_bern_array(xp, pc, q) - delta
            step = f * q * (1.0 - q) / (n * (q - pc))
            q_new = xp.maximum(q - step, pc)
            stop = (q - q_new <= INDEX_TOL) & ~done
            q = xp.where(done, q, q_new)
            done = done | stop
            if bool(xp.all(done)):
                break
    return xp.where(p >= 1.0, 1.0, q)


def _kl_bern_array(xp, p, q):
    a = xp.where(p > 0.0, p * xp.log(xp.where(p > 0.0, p, 1.0) / q), 0.0)
    b = xp.where(p < 1.0, (1.0 - p) * xp.log(xp.where(p < 1.0, 1.0 - p, 1.0) / (1.0 - q)), 0.0)
    return a + b


def kl_ucb_index(mean, n, delta, kind="bernoulli", sigma=1.0):
    r"""The KL-UCB index :math:`\max\{q : n\,\mathrm{kl}(\hat\mu, q) \le \delta\}`, vectorised.

    Parameters
    ----------
    mean : array
        Empirical means :math:`\hat\mu` (in [0, 1] for ``"bernoulli"``).
    n : array
        Pull counts, positive.
    delta : array
        Exploration levels, positive.
    kind : {"bernoulli", "gaussian"}
        Bernoulli kl, or the Gaussian :math:`\mathrm{kl}(p, q) = (p - q)^2 / (2 \sigma^2)`.
    sigma : float
        Standard deviation for ``"gaussian"``.

    Returns
    -------
    ndarray
        The index.  Bernoulli: Newton's method on the convex increasing map
        :math:`q \mapsto n\,\mathrm{kl}(\hat\mu, q) - \delta`, started above the root
        at the Pinsker bound :math:`\hat\mu + \sqrt{\delta / (2n)}` (capped at
        :math:`1 - 10^{-12}`), so every iterate stays above the root and
        decreases to it; stopped when a step is below ``1e-12``.  The result
        is within about ``1e-12`` above the root.  Gaussian: the closed form
        :math:`\hat\mu + \sigma \sqrt{2 \delta / n}`.

    Examples
    --------
    >>> q = kl_ucb_index(np.array([0.0]), np.array([10.0]), np.array([1.0]))
    >>> bool(abs(q[0] - (1 - np.exp(-0.1))) < 1e-11)  # kl(0, q) = -ln(1 - q)
    True
    """
    check_in(kind, "kind", ("bernoulli", "gaussian"))
    mean = np.asarray(mean, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    delta = np.asarray(delta, dtype=np.float64)
    for a, nm in ((mean, "mean"), (n, "n"), (delta, "delta")):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{nm} contains NaN or infinite values")
    if np.any(n <= 0):
        raise ValueError("n must be positive")
    if np.any(delta < 0):
        raise ValueError("delta must be non-negative")
    if kind == "gaussian":
        sigma = check_float(sigma, "sigma", positive=True)
        return mean + sigma * np.sqrt(2.0 * delta / n)
    if np.any(mean < 0) or np.any(mean > 1):
        raise ValueError("mean must lie in [0, 1] for Bernoulli kl")
    return _bern_index_array(np, mean, n, np.maximum(delta, 1e-300))


# prm = [mode (0: Bernoulli, 1: Gaussian), c, sigma]


@register_jitable
def _k_act(prm, S, s, t, key, p):
    K = S.shape[1]
    a = k_first_unpulled(S, K)
    if a >= 0:
        return a
    delta = kl_threshold(t * 1.0, prm[1])
    if prm[0] != 0.0:
        for i in range(K):
            n = S[0, i]
            p[i] = S[1, i] / n + prm[2] * math.sqrt(2.0 * delta / n)
        return argmax_first(p, K)
    # Bernoulli: solve the index of the empirically best arm first; an arm whose
    # starting upper bound (>= its index) is below that index cannot be the
    # first maximiser, so its Newton solve is skipped.  Same argmax as solving all.
    b = 0
    for i in range(1, K):
        if S[1, i] / S[0, i] > S[1, b] / S[0, b]:
            b = i
    best = _bern_index(min(max(S[1, b] / S[0, b], 0.0), 1.0), S[0, b], delta)
    for i in range(K):
        if i == b:
            continue
        n = S[0, i]
        mu = min(max(S[1, i] / n, 0.0), 1.0)
        if mu < 1.0 and _start(mu, n, delta) < best - 1e-9:
            continue
        q = _bern_index(mu, n, delta)
        if q > best or (q == best and i < b):
            best = q
            b = i
    return b


def kl_ucb(c=0.0, *, kind="bernoulli", sigma=1.0) -> Learner:
    r"""KL-UCB of Garivier & Cappé (2011), for Bernoulli or Gaussian rewards.

    Parameters
    ----------
    c : float
        Coefficient of the :math:`\ln\ln t` term of the exploration level,
        :math:`c \ge 0`.  Theorems 1--2 of [1]_ use :math:`c = 3`; the paper's
        experiments (and the default here) use :math:`c = 0`.
    kind : {"bernoulli", "gaussian"}
        Divergence: Bernoulli kl (rewards in [0, 1]) or Gaussian
        :math:`(p - q)^2 / (2 \sigma^2)`.
    sigma : float
        Reward standard deviation for ``kind="gaussian"``.

    Returns
    -------
    Learner
        A deterministic bandit learner with a fused Numba/CUDA kernel.

    Notes
    -----
    Each arm is pulled once; afterwards, after :math:`t` pulls in all,

    .. math::

        a_{t+1} = \arg\max_i \max\{q \in [\hat\mu_i, 1] :
        N_i\,\mathrm{kl}(\hat\mu_i, q) \le \ln t + c \ln\ln t\}

    (the :math:`\ln\ln t` term is dropped while :math:`\ln t \le 1`).  The
    Bernoulli index is solved by :func:`kl_ucb_index` (Newton from above, to
    ``1e-12``).  For Bernoulli arms and :math:`c = 3`, Theorem 2 of [1]_
    gives :math:`\limsup_T \mathbb{E} N_i(T) / \ln T \le 1 / \mathrm{kl}(\mu_i, \mu^*)`:
    the regret's slope against :math:`\ln T` tends to the Lai--Robbins
    constant (:func:`expertlab.bandits.instances.lai_robbins_constant`).

    [validated-rates]

    References
    ----------
    .. [1] A. Garivier and O. Cappé, "The KL-UCB algorithm for bounded
       stochastic bandits and beyond", COLT 2011, Theorems 1 and 2.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.bandits import kl_ucb, instances
    >>> res = sim.run(kl_ucb(), instances.bernoulli([0.1, 0.9]), horizon=300, n_reps=4, seed=0)
    >>> bool((res.final["pulls"][:, 1] > 250).all())
    True
    """
    c = check_float(c, "c", minimum=0.0)
    check_in(kind, "kind", ("bernoulli", "gaussian"))
    sigma = check_float(sigma, "sigma", positive=True)
    bern = kind == "bernoulli"

    def act(state, obs=None, key=None):
        xp = get_namespace(state.counts)
        n = xp.where(state.counts > 0, state.counts, 1.0)
        t = xp.astype(xp.maximum(state.t, 1), xp.float64)
        lt = xp.log(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            delta = xp.where(lt > 1.0, lt + c * xp.log(xp.where(lt > 1.0, lt, 1.0)), lt)[:, None]
        mu = state.sums / n
        if bern:
            index = _bern_index_array(xp, xp.clip(mu, 0.0, 1.0), n, xp.maximum(delta, 1e-300) + 0.0 * n)
        else:
            index = mu + sigma * xp.sqrt(2.0 * delta / n)
        return Pull(pick(xp, state, index)), state

    params = {"c": c, "kind": kind} | ({"sigma": sigma} if not bern else {})
    kernel = BanditKernelSpec(n_rows=2, n_scalars=0, params=np.array([0.0 if bern else 1.0, c, sigma]),
                              init=k_index_init, act=_k_act, update=k_index_update)
    check_spec = reward_kind_check("kl_ucb", kind)

    def init(spec, n_reps, keys=None, xp=np):
        if hasattr(spec, "n_actions"):
            check_spec(spec)
        return index_init(spec, n_reps, keys, xp)

    return Learner(name="kl_ucb", feedback="bandit", init=init, act=act, update=index_update, check_spec=check_spec,
                   params=params, kernel=kernel)


