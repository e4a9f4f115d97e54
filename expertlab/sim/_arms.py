"""Bandit environments: arms whose outcomes are pure functions of the round's key.

An :class:`Arms` environment (feedback kind ``"bandit"``) reveals only the
pulled arm's outcome.  Each round, for all replications at once:

1. the learner picks an arm ``a_t`` from its state and the round's learner key;
2. the environment draws the outcome ``x_{t,a_t}`` of that arm only (a pure
   function of ``(seed, replication, round, arm)``, so an arm's outcome in a
   round does not depend on which arm the learner pulls or on the backend);
3. the learner folds ``(a_t, x_{t,a_t})`` into its state.

Learner protocol for ``"bandit"`` feedback
------------------------------------------
``init(spec, n_reps, keys, xp)`` with ``spec.n_actions`` arms;
``act(state, None, keys) -> (Pull(arm, p), state)``: ``arm`` an int64 array
``(n_reps,)``; ``p`` is ``None`` for a deterministic (index) learner, and for
a learner that samples its arm from a distribution (EXP3, Tsallis-INF) the
``(n_reps, n_arms)`` distribution ``arm`` was drawn from (Thompson sampling
returns ``None``: its arm distribution has no closed form);
``update(state, pull, reward, keys)`` with the pulled arm's ``reward``
``(n_reps,)`` (larger is better).  A randomised learner draws from its keys
with :func:`expertlab.sim.uniform` (or the variates of
:mod:`expertlab.sim.variates`).

Metrics
-------
With :math:`\\mu_{t,i}` the expected reward of arm ``i`` in round ``t``:

``regret``
    The pseudo-regret :math:`\\max_i \\sum_{s \\le t} \\mu_{s,i} - \\sum_{s \\le t} \\mu_{s,a_s}`
    (:math:`\\sum_s \\Delta_{a_s}` for stationary arms; on an adversarial
    reward array, whose outcomes are deterministic, the realised regret
    against the best arm in hindsight).  ``final["pulls"]``: pull counts,
    int64 ``(n_reps, n_arms)``.
``reward``
    The realised cumulative reward :math:`\\sum_s x_{s,a_s}`.
``expected_regret`` (on request; learners that return ``p``)
    :math:`\\max_i \\sum_s \\mu_{s,i} - \\sum_s \\langle p_s, \\mu_s \\rangle`.
``realised_regret`` (``adversarial=True``)
    :math:`\\max_i \\sum_s x_{s,i} - \\sum_s x_{s,a_s}`, which needs every
    arm's outcome each round.
``dynamic_regret`` (non-stationary arms)
    :math:`\\sum_s (\\max_i \\mu_{s,i} - \\mu_{s,a_s})`.

All sums over arms run sequentially in arm order on every backend, so the
NumPy and compiled paths agree to the last bit on deterministic learners.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from .._backend import asnumpy, get_namespace
from ._engine import register_fast_path
from ._losses import data_dtype, run_data
from ._protocol import (EnvSpec, Metric, _check_callables, _check_name, _check_optional_int, environment_html,
                        environment_repr, validate_on_construction)

__all__ = ["Arms", "Pull", "rowsum"]


class Pull(NamedTuple):
    """A bandit learner's action: the arms pulled and, for samplers, the distribution they came from."""

    arm: Any
    p: Any = None


def _check_arms(arms) -> None:
    _check_name(arms.name, "name")
    if isinstance(arms.n_arms, bool) or not isinstance(arms.n_arms, (int, np.integer)):
        raise TypeError(f"n_arms must be an int, got {type(arms.n_arms).__name__}")
    if arms.n_arms < 1:
        raise ValueError(f"n_arms must be >= 1, got {arms.n_arms}")
    _check_callables(arms, ("reward", "mean"))
    if not isinstance(arms.data, tuple):
        raise TypeError(f"data must be a tuple of arrays and numbers, got {type(arms.data).__name__}")
    if not isinstance(arms.params, Mapping):
        raise TypeError(f"params must be a mapping, got {type(arms.params).__name__}")
    if arms.kind not in ("bernoulli", "gaussian", "bounded"):
        raise ValueError(f"kind must be 'bernoulli', 'gaussian' or 'bounded', got {arms.kind!r}")
    _check_optional_int(arms.max_horizon, "max_horizon")


@validate_on_construction(_check_arms)
class Arms(NamedTuple):
    """Arms of a bandit problem as pure functions.

    Attributes
    ----------
    name : str
    n_arms : int
    reward : callable
        ``reward(data, key, t, i) -> float``, register_jitable: the outcome of
        arm ``i`` in round ``t`` (0-based) from the round's environment ``key``.
        In the array path ``key`` and ``i`` are broadcastable arrays.
    mean : callable
        ``mean(data, t, i) -> float``: the expected reward of arm ``i`` in round ``t``.
    data : tuple
        Arrays and floats the functions read.
    params : mapping
    stationary : bool
        True when ``mean`` does not depend on ``t``.
    adversarial : bool
        True for adversarial (fixed-array) arms: runs then record the
        realised regret against the best arm in hindsight.
    max_horizon : int or None
        Longest horizon the arms define (rows of a reward array).
    kind : str
        Reward family: ``"bernoulli"``, ``"gaussian"`` or ``"bounded"``;
        learners whose confidence bounds need rewards in [0, 1] refuse
        ``"gaussian"`` arms.
    """

    name: str
    n_arms: int
    reward: Callable
    mean: Callable
    data: tuple
    params: Mapping[str, Any] = {}
    stationary: bool = True
    adversarial: bool = False
    max_horizon: int | None = None
    kind: str = "bernoulli"

    __repr__ = environment_repr
    _repr_html_ = environment_html
    #: Floating types of the rewards it gives (``sim.run(..., dtype=...)``).
    float_dtypes = ("float64", "float32")

    @property
    def spec(self) -> EnvSpec:
        return EnvSpec(feedback="bandit", unit="round", n_actions=self.n_arms, max_horizon=self.max_horizon,
                       info={"kind": self.kind})

    def check_horizon(self, horizon: int) -> None:
        if self.max_horizon is not None and horizon > self.max_horizon:
            raise ValueError(f"horizon={horizon} exceeds the {self.max_horizon} rounds arms {self.name!r} define")

    def reset(self, n_reps, keys, xp, dtype="float64"):
        return run_data(self.data, xp, dtype)

    def observe(self, data, t, keys):
        return None

    def step(self, data, pull, t, keys):
        if not isinstance(pull, Pull):
            raise TypeError(f"a bandit learner's act must return a Pull(arm, p), got {type(pull).__name__}")
        xp = get_namespace(keys)
        n_reps = keys.shape[0]
        arm = pull.arm
        dt = data_dtype(data, xp)
        x = xp.asarray(self.reward(data, keys, t, arm), dtype=dt) + xp.zeros(n_reps, dtype=dt)
        info = {"arm": arm, "p": pull.p, "x": x, "t": t, "data": data, "keys": keys}
        return data, x, info

    def available_metrics(self) -> Mapping[str, Metric]:
        out = {"regret": _pseudo_metric(self), "reward": _reward_metric(self.n_arms)}
        if self.adversarial:
            out["realised_regret"] = _realised_metric(self)
        if not self.stationary:
            out["dynamic_regret"] = _dynamic_metric(self)
        out["expected_regret"] = _expected_metric(self)
        return out

    @property
    def default_metrics(self):
        names = ["regret", "reward"]
        if self.adversarial:
            names.append("realised_regret")
        if not self.stationary:
            names.append("dynamic_regret")
        return tuple(names)


def rowsum(xp, a):
    """``sum(a, axis=1)`` added sequentially in column order (the kernels' order)."""
    out = a[:, 0] + 0.0
    for i in range(1, a.shape[1]):
        out = out + a[:, i]
    return out


def _means(env, data, t, xp):
    arms = xp.arange(env.n_arms, dtype=xp.int64)
    return xp.asarray(env.mean(data, t, arms), dtype=xp.float64) + xp.zeros(env.n_arms)


def _pseudo_metric(env) -> Metric:
    def init(n_reps, xp):
        return {"pseudo": xp.zeros(n_reps), "cum_mu": xp.zeros(n_reps), "M": None, "gap": None,
                "pulls": xp.zeros((n_reps, env.n_arms), dtype=xp.int64)}

    def update(acc, info, t):
        xp = get_namespace(info["x"])
        arm = info["arm"]
        acc = dict(acc)
        pulls = acc["pulls"]
        acc["pulls"] = pulls + xp.astype(xp.arange(env.n_arms)[None, :] == arm[:, None], pulls.dtype)
        if env.stationary:
            if acc["gap"] is None:
                mu0 = _means(env, info["data"], 0, xp)
                acc["gap"] = float(xp.max(mu0)) - mu0
            acc["pseudo"] = acc["pseudo"] + xp.take(acc["gap"], arm)
        else:
            mu = _means(env, info["data"], t, xp)
            acc["M"] = mu + 0.0 if acc["M"] is None else acc["M"] + mu
            acc["cum_mu"] = acc["cum_mu"] + xp.take(mu, arm)
        return acc

    def read(acc):
        if env.stationary:
            return acc["pseudo"]
        xp = get_namespace(acc["M"])
        return float(xp.max(acc["M"])) - acc["cum_mu"]

    return Metric("regret", init, update, read, lambda acc: {"pulls": acc["pulls"]})


def _reward_metric(n_arms) -> Metric:
    def init(n_reps, xp):
        return xp.zeros(n_reps)

    return Metric("reward", init, lambda acc, info, t: acc + info["x"], lambda acc: acc)


def _expected_metric(env) -> Metric:
    def init(n_reps, xp):
        return {"e": xp.zeros(n_reps), "M": None, "gap": None}

    def update(acc, info, t):
        p = info["p"]
        if p is None:
            raise ValueError("metric 'expected_regret' needs the arm distribution p, and this learner's "
                             "act returns Pull(arm, None)")
        xp = get_namespace(p)
        acc = dict(acc)
        if env.stationary:
            if acc["gap"] is None:
                mu0 = _means(env, info["data"], 0, xp)
                acc["gap"] = float(xp.max(mu0)) - mu0
            acc["e"] = acc["e"] + rowsum(xp, p * acc["gap"][None, :])
        else:
            mu = _means(env, info["data"], t, xp)
            acc["M"] = mu + 0.0 if acc["M"] is None else acc["M"] + mu
            acc["e"] = acc["e"] + rowsum(xp, p * mu[None, :])
        return acc

    def read(acc):
        if env.stationary:
            return acc["e"]
        xp = get_namespace(acc["M"])
        return float(xp.max(acc["M"])) - acc["e"]

    return Metric("expected_regret", init, update, read)


def _realised_metric(env) -> Metric:
    def init(n_reps, xp):
        return (xp.zeros((n_reps, env.n_arms)), xp.zeros(n_reps))

    def update(acc, info, t):
        X, cum = acc
        xp = get_namespace(info["x"])
        arms = xp.arange(env.n_arms, dtype=xp.int64)
        n_reps = info["x"].shape[0]
        X = X + (xp.asarray(env.reward(info["data"], info["keys"][:, None], t, arms[None, :]), dtype=xp.float64)
                 + xp.zeros((n_reps, env.n_arms)))
        return (X, cum + info["x"])

    def read(acc):
        xp = get_namespace(acc[0])
        return xp.max(acc[0], axis=1) - acc[1]

    return Metric("realised_regret", init, update, read)


def _dynamic_metric(env) -> Metric:
    def init(n_reps, xp):
        return xp.zeros(n_reps)

    def update(acc, info, t):
        xp = get_namespace(info["x"])
        mu = _means(env, info["data"], t, xp)
        return acc + (float(xp.max(mu)) - mu[info["arm"]])

    return Metric("dynamic_regret", init, update, lambda acc: acc)


# --------------------------------------------------------------------------
# compiled fast paths (expertlab.sim.bandit_kernels)


def _supports(learner, env) -> bool:
    from ._bandit_kernels import BanditKernelSpec

    return isinstance(env, Arms) and isinstance(learner.kernel, BanditKernelSpec)


def _driver(backend):
    def drive(learner, env, horizon, n_reps, seed_u, rep_offset, ckpts, dtype="float64"):
        return _launch(backend, learner, env, horizon, n_reps, seed_u, rep_offset, ckpts, dtype)

    return drive


def _prepare(learner, env, horizon, n_reps, seed_u, rep_offset, ckpts):
    """Compile (or load from the disk cache) the Numba driver for the run's argument types.

    A call with no replications: the driver is typed and compiled exactly as
    for the run, and its loop runs zero times.
    """
    _launch("numba", learner, env, horizon, 0, seed_u, rep_offset, ckpts)


def _launch(backend, learner, env, horizon, n_reps, seed_u, rep_offset, ckpts, dtype="float64"):
    from . import _bandit_kernels

    spec = learner.kernel
    K, n_ck = env.n_arms, ckpts.size
    outs = {
        "regret": np.zeros((n_ck, n_reps)),
        "reward": np.zeros((n_ck, n_reps)),
        "expected_regret": np.zeros((n_ck, n_reps)),
        "realised_regret": np.zeros((n_ck, n_reps)) if env.adversarial else np.zeros((1, 1)),
        "dynamic_regret": np.zeros((n_ck, n_reps)) if not env.stationary else np.zeros((1, 1)),
    }
    pulls = np.zeros((n_reps, K), dtype=np.int64)
    fn = (_bandit_kernels.numba_driver if backend == "numba" else _bandit_kernels.cuda_driver)(spec, env)
    prm = np.ascontiguousarray(spec.params, dtype=np.float64)
    data = tuple(np.ascontiguousarray(asnumpy(a)) for a in env.data)
    kw = {} if dtype == "float64" else {"dtype": dtype}  # only the CUDA path lists float32
    fn(prm, data, seed_u, np.int64(rep_offset), np.int64(horizon), ckpts, np.int64(K), outs["regret"],
       outs["reward"], outs["expected_regret"], outs["realised_regret"], outs["dynamic_regret"], pulls, **kw)
    if not spec.randomised:
        del outs["expected_regret"]
    if not env.adversarial:
        del outs["realised_regret"]
    if env.stationary:
        del outs["dynamic_regret"]
    return outs, {"pulls": pulls}


_FAST_METRICS = ("regret", "reward", "expected_regret", "realised_regret", "dynamic_regret")
for _b in ("numba", "cuda"):
    register_fast_path(_b, "bandit", supports=_supports, metrics=_FAST_METRICS, driver=_driver(_b),
                       prepare=_prepare if _b == "numba" else None,
                       dtypes=("float64", "float32") if _b == "cuda" else ("float64",))
del _b
