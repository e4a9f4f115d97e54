"""Bandit instances: stochastic arms, the minimax instance, adversarial arrays.

Every instance is an :class:`expertlab.sim.Arms`.  The
outcome of arm ``i`` in round ``t`` is a pure function of
``(seed, replication, t, i)`` through the counter-based generator: Bernoulli
arms compare uniform draw ``j = i`` of the round with the mean, Gaussian arms
use the Box--Muller normal built from uniforms ``2i`` and ``2i + 1``.  An
arm's outcome therefore does not depend on which arm is pulled, on the
backend or on blocking.  Rewards: larger is better.
"""

from __future__ import annotations

import math

import numpy as np
from numba.extending import register_jitable

from .._random import f64, uniform
from .._validation import as_real_array, check_array_size, check_float, check_int
from ..sim._arms import Arms
from ..sim._variates import normal

__all__ = ["bernoulli", "gaussian", "minimax", "reward_array", "piecewise_bernoulli", "lai_robbins_constant",
           "bernoulli_kl", "INSTANCES"]


@register_jitable
def _bern_reward(data, key, t, i):
    return f64(uniform(key, i) < data[0][i])


@register_jitable
def _stat_mean(data, t, i):
    return data[0][i] * 1.0


@register_jitable
def _gauss_reward(data, key, t, i):
    return data[0][i] + data[1][0] * normal(key, i)


@register_jitable
def _array_reward(data, key, t, i):
    return data[0][t, i] * 1.0


@register_jitable
def _segment(cps, t):
    k = 0
    for j in range(cps.shape[0]):
        if t >= cps[j]:
            k += 1
    return k


@register_jitable
def _pw_mean(data, t, i):
    return data[0][_segment(data[1], t), i] * 1.0


@register_jitable
def _pw_reward(data, key, t, i):
    return f64(uniform(key, i) < data[0][_segment(data[1], t), i])


def _check_means(means, name="means", low=0.0, high=1.0):
    m = np.array(as_real_array(means, name), dtype=np.float64)
    if m.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of arm means, got shape {m.shape}")
    if m.size < 2:
        raise ValueError(f"{name} must hold at least 2 arms (K >= 2), got {m.size}")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"{name} contains NaN or infinite values")
    if low is not None and (np.any(m < low) or np.any(m > high)):
        raise ValueError(f"{name} must lie in [{low}, {high}] (Bernoulli probabilities); "
                         f"got values in [{m.min()}, {m.max()}]")
    return m


def bernoulli(means) -> Arms:
    """Bernoulli arms with reward means ``means`` in [0, 1].

    Examples
    --------
    >>> inst = bernoulli([0.2, 0.5])
    >>> inst.n_arms, inst.kind
    (2, 'bernoulli')
    """
    m = _check_means(means)
    return Arms(name="bernoulli", n_arms=m.size, reward=_bern_reward, mean=_stat_mean, data=(m,),
                          params={"means": m.tolist()}, kind="bernoulli")


def gaussian(means, sigma=1.0) -> Arms:
    """Gaussian arms ``N(means[i], sigma**2)``.

    Examples
    --------
    >>> gaussian([0.0, 1.0], sigma=0.5).params["sigma"]
    0.5
    """
    m = _check_means(means, low=None)
    sigma = check_float(sigma, "sigma", positive=True)
    return Arms(name="gaussian", n_arms=m.size, reward=_gauss_reward, mean=_stat_mean,
                          data=(m, np.array([sigma])), params={"means": m.tolist(), "sigma": sigma},
                          kind="gaussian")


def minimax(n_arms, horizon, *, scale=1.0) -> Arms:
    r"""The minimax-lower-bound instance: K - 1 Bernoulli(1/2) arms and one at 1/2 + eps.

    ``eps = min(scale * sqrt(K / T), 1/2)``; the better arm is the *last* one,
    so that ties broken towards low indices do not favour it.

    Notes
    -----
    On this instance every learner has pseudo-regret of order
    :math:`\sqrt{KT}` at the horizon it is built for: Auer, Cesa-Bianchi,
    Freund & Schapire (2002), Thm 5.1 (lower bound :math:`\frac{1}{20}\sqrt{KT}`
    for a best arm drawn uniformly at random; theorem number not re-checked),
    and Bubeck & Cesa-Bianchi (2012), Thm 3.5.

    Examples
    --------
    >>> inst = minimax(4, 100)
    >>> inst.params["eps"], inst.params["means"]
    (0.2, [0.5, 0.5, 0.5, 0.7])
    """
    K = check_int(n_arms, "n_arms", minimum=2)
    T = check_int(horizon, "horizon")
    scale = check_float(scale, "scale", positive=True)
    check_array_size((K,), "n_arms")
    eps = min(scale * math.sqrt(K / T), 0.5)
    m = np.full(K, 0.5)
    m[-1] = 0.5 + eps
    return Arms(name="minimax", n_arms=K, reward=_bern_reward, mean=_stat_mean, data=(m,),
                          params={"n_arms": K, "horizon": T, "eps": eps, "means": m.tolist()}, kind="bernoulli")


def reward_array(rewards) -> Arms:
    """An oblivious adversary: a fixed ``(T, K)`` array of rewards in [0, 1].

    The outcomes are deterministic, so the pseudo-regret equals the realised
    regret against the best arm in hindsight.

    Examples
    --------
    >>> reward_array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]).max_horizon
    3
    """
    x = np.array(as_real_array(rewards, "rewards"), dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 2:
        raise ValueError(f"rewards must have shape (T, K) with T >= 1 and K >= 2, got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("rewards contains NaN or infinite values")
    if np.any(x < 0) or np.any(x > 1):
        raise ValueError(f"rewards must lie in [0, 1]; got values in [{x.min()}, {x.max()}]")
    x = np.ascontiguousarray(x)
    return Arms(name="reward_array", n_arms=x.shape[1], reward=_array_reward, mean=_array_reward_mean,
                          data=(x,), params={"shape": list(x.shape)}, stationary=False, adversarial=True,
                          max_horizon=x.shape[0], kind="bounded")


@register_jitable
def _array_reward_mean(data, t, i):
    return data[0][t, i] * 1.0


def piecewise_bernoulli(means, change_points) -> Arms:
    """Bernoulli arms whose means switch at given rounds.

    Parameters
    ----------
    means : array, shape (n_segments, n_arms)
        Means of each segment, in [0, 1].
    change_points : array of int, shape (n_segments - 1,)
        Strictly increasing rounds (0-based, >= 1) at which segment ``k + 1`` starts.

    Examples
    --------
    >>> inst = piecewise_bernoulli([[0.9, 0.1], [0.1, 0.9]], [50])
    >>> float(inst.mean(inst.data, 49, 0)), float(inst.mean(inst.data, 50, 0))
    (0.9, 0.1)
    """
    m = np.array(as_real_array(means, "means"), dtype=np.float64)
    if m.ndim != 2 or m.shape[0] < 1 or m.shape[1] < 2:
        raise ValueError(f"means must have shape (n_segments >= 1, n_arms >= 2), got {m.shape}")
    _check_means(m.ravel())
    if isinstance(change_points, (str, bytes)):
        raise TypeError(f"change_points must be a 1-D array of integers, got {type(change_points).__name__} "
                        f"{change_points!r}")
    try:
        cps = np.asarray(change_points)
    except ValueError:  # ragged
        raise TypeError("change_points must be a 1-D array of integers") from None
    if cps.ndim != 1 or cps.size != m.shape[0] - 1:
        raise ValueError(f"change_points must have n_segments - 1 = {m.shape[0] - 1} entries, got shape {cps.shape}")
    if cps.size and cps.dtype.kind not in "iu":
        raise TypeError(f"change_points must hold integers, got dtype {cps.dtype}")
    if cps.size and (cps[0] < 1 or np.any(np.diff(cps) <= 0)):
        raise ValueError(f"change_points must be strictly increasing integers >= 1, got {cps.tolist()}")
    cps = cps.astype(np.int64)
    return Arms(name="piecewise_bernoulli", n_arms=m.shape[1], reward=_pw_reward, mean=_pw_mean,
                          data=(np.ascontiguousarray(m), cps),
                          params={"means": m.tolist(), "change_points": cps.tolist()}, stationary=False,
                          kind="bernoulli")


def bernoulli_kl(p, q):
    """Bernoulli Kullback--Leibler divergence ``kl(p, q)`` (with ``0 ln 0 = 0``), for scalars or arrays.

    Parameters
    ----------
    p, q : float or array
        Probabilities in [0, 1], broadcast together.  ``kl(p, q)`` is infinite where ``q`` is 0 or 1
        and ``p`` differs from it.

    Raises
    ------
    TypeError
        If ``p`` or ``q`` does not hold real numbers.
    ValueError
        If ``p`` or ``q`` holds NaN or values outside [0, 1], or their shapes do not broadcast.

    Examples
    --------
    >>> float(bernoulli_kl(0.5, 0.5)), round(float(bernoulli_kl(1.0, 0.5)), 6)
    (0.0, 0.693147)
    """
    p = np.asarray(as_real_array(p, "p"), dtype=np.float64)
    q = np.asarray(as_real_array(q, "q"), dtype=np.float64)
    for a, name in ((p, "p"), (q, "q")):
        if np.any(np.isnan(a)) or np.any(a < 0.0) or np.any(a > 1.0):
            raise ValueError(f"{name} must hold probabilities in [0, 1] (no NaN)")
    try:
        np.broadcast_shapes(p.shape, q.shape)
    except ValueError:
        raise ValueError(f"p and q must broadcast together, got shapes {p.shape} and {q.shape}") from None
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0, p * np.log(p / q), 0.0)
        b = np.where(p < 1, (1 - p) * np.log((1 - p) / (1 - q)), 0.0)
    return a + b


def lai_robbins_constant(means, kind="bernoulli", sigma=1.0) -> float:
    r"""The Lai--Robbins constant: the asymptotic slope of the regret against ln T.

    Bernoulli arms: :math:`\sum_{i: \Delta_i > 0} \Delta_i / \mathrm{kl}(\mu_i, \mu^*)`;
    Gaussian arms with variance :math:`\sigma^2`:
    :math:`\sum_{i: \Delta_i > 0} 2 \sigma^2 / \Delta_i`.  Every uniformly good
    learner has :math:`\liminf_T R_T / \ln T \ge` this constant (Lai & Robbins
    1985, Thm 2; Burnetas & Katehakis 1996 for the kl form).

    Parameters
    ----------
    means : array, shape (n_arms,)
    kind : {"bernoulli", "gaussian"}
    sigma : float
        Standard deviation of the Gaussian arms.

    References
    ----------
    .. [1] T. L. Lai and H. Robbins, "Asymptotically efficient adaptive
       allocation rules", Advances in Applied Mathematics 6(1), 1985.

    Examples
    --------
    >>> round(lai_robbins_constant(np.arange(1, 10) / 10), 4)
    7.5165
    >>> lai_robbins_constant([0.0, 1.0], kind="gaussian", sigma=1.0)
    2.0
    """
    if kind not in ("bernoulli", "gaussian"):
        raise ValueError(f"kind must be 'bernoulli' or 'gaussian'; got {kind!r}")
    m = _check_means(means, low=0.0 if kind == "bernoulli" else None)
    best = m.max()
    sub = m[m < best]
    gaps = best - sub
    if kind == "gaussian":
        sigma = check_float(sigma, "sigma", positive=True)
        return float(np.sum(2.0 * sigma**2 / gaps))
    # kl(mu, 1) is infinite for mu < 1: such arms contribute 0
    return float(np.sum(gaps / bernoulli_kl(sub, best)))


#: Registered instance factories, by name.
INSTANCES = {
    "bernoulli": bernoulli,
    "gaussian": gaussian,
    "minimax": minimax,
    "reward_array": reward_array,
    "piecewise_bernoulli": piecewise_bernoulli,
}
