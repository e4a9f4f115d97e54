"""Loss sequences for full-information experts, with exact answers where known.

Every instance is an :class:`expertlab.sim.LossSequence`: losses are pure
functions of ``(seed, replication, round, expert)`` through the counter-based
generator, so they are never stored as an ``(n_reps, horizon, n_experts)``
tensor and are identical on every backend.  All instances here are oblivious
(the losses do not depend on the learner's actions).

Expert ``i`` of round ``t`` uses draw ``j = i`` of the round's key; instances
that need more draws per round use ``j >= n_experts``.
"""

from __future__ import annotations


import numpy as np
from numba.extending import register_jitable

from .._random import f64, uniform
from .._validation import as_real_array, check_array_size, check_float, check_int
from ..sim._losses import LossSequence

__all__ = [
    "fair_coins",
    "anti_correlated",
    "iid_uniform",
    "iid_bernoulli",
    "needle",
    "piecewise_best",
    "loss_matrix",
    "sleeping",
    "fair_coins_expected_regret",
    "INSTANCES",
]


# --------------------------------------------------------------------------
# scalar loss functions (register_jitable: NumPy arrays, Numba, CUDA)


@register_jitable
def _fair_coin_loss(data, key, t, i):
    return f64(uniform(key, i) < 0.5)


@register_jitable
def _anti_loss(data, key, t, i):
    b = f64(uniform(key, 0) < 0.5)
    return b + f64(i) * (1.0 - 2.0 * b)


@register_jitable
def _uniform_loss(data, key, t, i):
    return uniform(key, i) * 1.0


@register_jitable
def _bernoulli_loss(data, key, t, i):
    return f64(uniform(key, i) < data[0][i])


@register_jitable
def _bernoulli_mean(data, t, i):
    return data[0][i] * 1.0


@register_jitable
def _piecewise_best(data, t):
    period = data[1][0]
    n = data[1][1]
    return (t // period) % n


@register_jitable
def _piecewise_loss(data, key, t, i):
    best = _piecewise_best(data, t)
    mean = 0.5 - data[1][2] * f64(f64(i) == best)  # best is a float (the data row is float64)
    return f64(uniform(key, i) < mean)


@register_jitable
def _piecewise_mean(data, t, i):
    return 0.5 - data[1][2] * f64(f64(i) == _piecewise_best(data, t))


@register_jitable
def _matrix_loss(data, key, t, i):
    return data[0][t, i]


# --------------------------------------------------------------------------
# exact answers


#: Largest horizon + 1 for which the exact expected regrets are computed (their arrays have horizon + 1 entries).
_MAX_EXACT_HORIZON = 2 ** 27


def fair_coins_expected_regret(horizon: int, n_experts: int) -> float:
    """Exact expected regret of any learner on independent fair coins.

    Every learner's expected cumulative loss is ``T/2`` (each loss is a fair
    coin independent of the past), so ``E[R_T] = T/2 - E[min_i B_i]`` with
    ``B_i ~ Bin(T, 1/2)`` independent, and
    ``E[min_i B_i] = sum_{k=1}^{T} P(B >= k)^N``.

    Examples
    --------
    >>> round(fair_coins_expected_regret(1000, 10), 4)
    24.3248
    >>> round(fair_coins_expected_regret(100, 2), 4)
    2.8174
    """
    horizon = check_int(horizon, "horizon")
    n_experts = check_int(n_experts, "n_experts")
    check_array_size((horizon + 1,), "horizon", max_elements=_MAX_EXACT_HORIZON)
    pmf = _half_binomial_pmf(horizon)
    tail = np.cumsum(pmf[::-1])[::-1][1:]  # P(B >= k) for k = 1..T
    return float(horizon / 2 - np.sum(np.minimum(tail, 1.0) ** n_experts))


def _half_binomial_pmf(horizon: int) -> np.ndarray:
    """``P(B = k)``, ``k = 0..T``, for ``B ~ Bin(T, 1/2)``, from log-gamma (stable for large T)."""
    from scipy.special import gammaln

    k = np.arange(horizon + 1)
    return np.exp(gammaln(horizon + 1) - gammaln(k + 1) - gammaln(horizon - k + 1) - horizon * np.log(2.0))


def _anti_expected_regret(horizon: int) -> float:
    """``E|B - T/2|`` for ``B ~ Bin(T, 1/2)``: the exact expected regret of any learner."""
    horizon = check_int(horizon, "horizon")
    check_array_size((horizon + 1,), "horizon", max_elements=_MAX_EXACT_HORIZON)
    k = np.arange(horizon + 1)
    return float(np.sum(_half_binomial_pmf(horizon) * np.abs(k - horizon / 2)))


# --------------------------------------------------------------------------
# factories


def _check_n_experts(n_experts, minimum: int = 1) -> int:
    """``n_experts`` as an int, refused when a run could not allocate its ``(n_reps, n_experts)`` losses."""
    n = check_int(n_experts, "n_experts", minimum=minimum)
    check_array_size((n,), "n_experts")
    return n


def fair_coins(n_experts: int = 10) -> LossSequence:
    """Independent fair-coin losses: ``l_{t,i} ~ Bernoulli(1/2)`` iid.

    No learner can do better than another here, so the expected regret of
    *every* learner equals :func:`fair_coins_expected_regret` exactly: the
    instance checks the simulation engine, not the learner.
    """
    n = _check_n_experts(n_experts)
    return LossSequence(
        name="fair_coins",
        n_experts=n,
        loss=_fair_coin_loss,
        data=(np.zeros(1),),
        params={"n_experts": n},
        exact_expected_regret=lambda horizon: fair_coins_expected_regret(horizon, n),
    )


def anti_correlated() -> LossSequence:
    """Two experts with opposite fair-coin losses (Cover 1965).

    ``l_{t,1} = b_t``, ``l_{t,2} = 1 - b_t`` with ``b_t`` a fair coin.  The exact
    expected regret of any learner is ``E|B - T/2|``, ``B ~ Bin(T, 1/2)``,
    which tends to ``sqrt(T / (2 pi))``.
    """
    return LossSequence(
        name="anti_correlated",
        n_experts=2,
        loss=_anti_loss,
        data=(np.zeros(1),),
        params={},
        exact_expected_regret=_anti_expected_regret,
    )


def iid_uniform(n_experts: int = 10) -> LossSequence:
    """Losses iid uniform on [0, 1] for every expert and round."""
    n = _check_n_experts(n_experts)
    return LossSequence(name="iid_uniform", n_experts=n, loss=_uniform_loss, data=(np.zeros(1),),
                    params={"n_experts": n})


def iid_bernoulli(means) -> LossSequence:
    """Losses ``l_{t,i} ~ Bernoulli(means[i])`` independent across experts and rounds.

    The expected losses are known, so runs also report the ``pseudo_regret``.
    """
    means = as_real_array(means, "means")
    if means.ndim != 1 or means.size < 1:  # before ascontiguousarray, which makes a scalar 1-D
        raise ValueError(f"means must be a non-empty 1-D array, got shape {means.shape}")
    means = np.ascontiguousarray(means, dtype=np.float64)
    if not np.all(np.isfinite(means)) or np.any(means < 0) or np.any(means > 1):
        raise ValueError("means must lie in [0, 1]")
    return LossSequence(name="iid_bernoulli", n_experts=int(means.size), loss=_bernoulli_loss,
                    data=(means,), params={"means": means.tolist()}, mean=_bernoulli_mean)


def needle(n_experts: int = 10, gap: float = 0.1) -> LossSequence:
    """One slightly better expert among fair coins.

    Expert 0 has Bernoulli(1/2 - gap) losses, the others Bernoulli(1/2).
    ``gap = 0.5`` gives a perfect expert (``L* = 0``), the easy case of AdaHedge.
    """
    n = _check_n_experts(n_experts)
    gap = check_float(gap, "gap", minimum=0.0, maximum=0.5)
    means = np.full(n, 0.5)
    means[0] = 0.5 - gap
    inst = iid_bernoulli(means)
    return inst._replace(name="needle", params={"n_experts": n, "gap": gap})


def piecewise_best(n_experts: int = 10, period: int = 1000, gap: float = 0.2) -> LossSequence:
    """A best expert that switches every ``period`` rounds.

    In round ``t`` expert ``b(t) = (t // period) mod n`` has Bernoulli(1/2 - gap)
    losses and the others Bernoulli(1/2); ``b`` is the comparator sequence of
    the tracking regret (``T / period - 1`` switches over ``T`` rounds).
    """
    n = _check_n_experts(n_experts)
    period = check_int(period, "period")
    gap = check_float(gap, "gap", minimum=0.0, maximum=0.5)
    return LossSequence(
        name="piecewise_best",
        n_experts=n,
        loss=_piecewise_loss,
        data=(np.zeros(1), np.array([period, n, gap], dtype=np.float64)),
        comparator=_piecewise_best,
        mean=_piecewise_mean,
        params={"n_experts": n, "period": period, "gap": gap},
    )


def loss_matrix(losses) -> LossSequence:
    """A fixed (adversarial) loss matrix of shape ``(horizon, n_experts)``.

    Every replication sees the same losses; the horizon of a run may not
    exceed ``losses.shape[0]``.
    """
    losses = np.ascontiguousarray(as_real_array(losses, "losses"), dtype=np.float64)
    if losses.ndim != 2 or losses.shape[0] < 1 or losses.shape[1] < 1:
        raise ValueError(f"losses must be a non-empty 2-D array (horizon, n_experts), got shape {losses.shape}")
    if not np.all(np.isfinite(losses)):
        raise ValueError("losses contains NaN or infinite values")
    if np.any(losses < 0) or np.any(losses > 1):
        raise ValueError("losses must lie in [0, 1]")
    return LossSequence(name="loss_matrix", n_experts=int(losses.shape[1]), loss=_matrix_loss,
                        data=(losses,), params={"shape": list(losses.shape)}, max_horizon=int(losses.shape[0]))


def sleeping(base: LossSequence, p_awake: float = 0.5) -> LossSequence:
    """Make ``base`` a sleeping-experts instance.

    Expert ``i`` is awake in round ``t`` with probability ``p_awake``
    (independently, from draw ``n_experts + i`` of the round), and expert
    ``t mod n_experts`` is always awake so that no round is empty.
    Losses are those of ``base``.
    """
    if not isinstance(base, LossSequence):
        raise TypeError(f"base must be an LossSequence, got {type(base).__name__}")
    p_awake = check_float(p_awake, "p_awake", minimum=0.0, maximum=1.0)
    n = base.n_experts
    data = tuple(base.data) + (np.array([p_awake, n], dtype=np.float64),)
    slot = len(base.data)
    base_loss = base.loss

    @register_jitable
    def _loss(data, key, t, i):
        return base_loss(data, key, t, i)

    @register_jitable
    def _awake(data, key, t, i):
        prm = data[slot]
        n_exp = int(prm[1])
        return (uniform(key, n_exp + i) < prm[0]) | (i == t % n_exp)

    return LossSequence(
        name=f"sleeping_{base.name}",
        n_experts=n,
        loss=_loss,
        data=data,
        awake=_awake,
        comparator=base.comparator,
        mean=base.mean,
        params={**base.params, "p_awake": p_awake},
    )


#: Registered instance factories, by name (used by the CLI).
INSTANCES = {
    "fair_coins": fair_coins,
    "anti_correlated": anti_correlated,
    "iid_uniform": iid_uniform,
    "iid_bernoulli": iid_bernoulli,
    "needle": needle,
    "piecewise_best": piecewise_best,
    "loss_matrix": loss_matrix,
}
