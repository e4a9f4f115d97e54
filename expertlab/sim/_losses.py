"""Full-information environments: loss sequences given as pure functions.

A :class:`LossSequence` is the environment of the full-information experts
(feedback kind ``"full"``): the loss of expert ``i`` in round ``t`` is a pure
function ``loss(data, key, t, i)`` of the sequence's data and of the round's
environment key.  The same function is evaluated on broadcast ``uint64``
arrays by the engine's array path and on scalars inside the compiled fast
paths of :mod:`expertlab.sim.kernels`, so the two agree.

Learner protocol for ``"full"`` feedback
----------------------------------------
``init(spec, n_reps, keys, xp)`` with ``spec.n_actions`` experts;
``act(state, awake, keys) -> (p, state)``: ``awake`` is ``None`` or a boolean
``(n_reps, n_experts)`` mask (sleeping experts), ``p`` the
``(n_reps, n_experts)`` distribution played (one-hot for a learner that
samples an expert); ``update(state, p, feedback, keys)`` with ``feedback`` a
:class:`FullFeedback` ``(loss, awake)``.

Metrics
-------
``regret``
    :math:`\\sum_{s \\le t} \\langle p_s, l_s\\rangle - \\min_i L_{t,i}`;
    ``final["expert_regret"]`` each expert's regret at the horizon.
``sleeping_regret`` (sequences with an awake mask)
    The largest regret of an expert on its own awake rounds;
    ``final["expert_regret"]`` is then each expert's sleeping regret.
``tracking_regret`` (sequences with a comparator sequence)
    Against the sequence's switching comparator.
``pseudo_regret`` (sequences with known expected losses)
    :math:`\\sum_s \\langle p_s, \\mu_s\\rangle - \\min_i \\sum_s \\mu_{s,i}`.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from .._backend import asnumpy
from ._engine import register_fast_path
from ._protocol import (EnvSpec, KernelSpec, Metric, _check_callables, _check_name, _check_optional_int,
                        environment_html, environment_repr, validate_on_construction)

__all__ = ["LossSequence", "FullFeedback"]


class FullFeedback(NamedTuple):
    """What a full-information learner is told after round ``t``.

    Attributes
    ----------
    loss : array, shape (n_reps, n_experts)
        Every expert's loss in the round.
    awake : array of bool, shape (n_reps, n_experts), or None
        Which experts were awake (sleeping-experts sequences).
    """

    loss: Any
    awake: Any = None


def _check_loss_sequence(seq) -> None:
    _check_name(seq.name, "name")
    if isinstance(seq.n_experts, bool) or not isinstance(seq.n_experts, (int, np.integer)):
        raise TypeError(f"n_experts must be an int, got {type(seq.n_experts).__name__}")
    if seq.n_experts < 1:
        raise ValueError(f"n_experts must be >= 1, got {seq.n_experts}")
    _check_callables(seq, ("loss",), optional=("awake", "comparator", "exact_expected_regret", "mean"))
    if not isinstance(seq.data, tuple):
        raise TypeError(f"data must be a tuple of arrays and numbers, got {type(seq.data).__name__}")
    if not isinstance(seq.params, Mapping):
        raise TypeError(f"params must be a mapping, got {type(seq.params).__name__}")
    _check_optional_int(seq.max_horizon, "max_horizon")


@validate_on_construction(_check_loss_sequence)
class LossSequence(NamedTuple):
    """A sequence of loss vectors (and optionally awake masks) as pure functions.

    Attributes
    ----------
    name : str
    n_experts : int
    loss : callable
        ``loss(data, key, t, i) -> float`` in [0, 1], register_jitable.  In the
        array path ``key`` is ``(n_reps, 1)``, ``i`` is ``(1, n_experts)`` and
        the result broadcasts to ``(n_reps, n_experts)``.
    data : tuple
        Arrays and floats the functions read (passed to the kernels).
    awake : callable or None
        ``awake(data, key, t, i) -> bool`` for sleeping-experts sequences.
    comparator : callable or None
        ``comparator(data, t) -> int``: the expert followed by the sequence's
        reference switching sequence in round ``t`` (for tracking regret).
    params : mapping
    exact_expected_regret : callable or None
        ``f(horizon) -> float``: the exact expected regret of *every* learner,
        where the sequence has one (independent fair coins).
    adaptive : bool
        False: the losses are fixed in advance (oblivious adversary).
    mean : callable or None
        ``mean(data, t, i) -> float``: the expected loss of expert ``i`` in
        round ``t`` for stochastic sequences; enables ``pseudo_regret``.
    max_horizon : int or None
        The longest run the sequence defines (rows of a fixed loss matrix).
    """

    name: str
    n_experts: int
    loss: Callable
    data: tuple
    awake: Callable | None = None
    comparator: Callable | None = None
    params: Mapping[str, Any] = {}
    exact_expected_regret: Callable[[int], float] | None = None
    adaptive: bool = False
    mean: Callable | None = None
    max_horizon: int | None = None

    default_metrics = None
    #: Floating types of the losses it gives (``sim.run(..., dtype=...)``).
    float_dtypes = ("float64", "float32")

    __repr__ = environment_repr
    _repr_html_ = environment_html

    # -- the environment protocol -----------------------------------------
    @property
    def spec(self) -> EnvSpec:
        return EnvSpec(feedback="full", unit="round", n_actions=self.n_experts, max_horizon=self.max_horizon)

    def check_horizon(self, horizon: int) -> None:
        if self.max_horizon is not None and horizon > self.max_horizon:
            raise ValueError(f"horizon={horizon} exceeds the {self.max_horizon} rows of {self.name!r}")

    def reset(self, n_reps, keys, xp, dtype="float64"):
        return run_data(self.data, xp, dtype)

    def _idx(self, xp):
        return xp.arange(self.n_experts, dtype=xp.int64)[None, :]

    def observe(self, data, t, keys):
        if self.awake is None:
            return None
        xp = _ns(keys)
        shape = (keys.shape[0], self.n_experts)
        return xp.broadcast_to(xp.asarray(self.awake(data, keys[:, None], t, self._idx(xp)), dtype=xp.bool), shape)

    def step(self, data, p, t, keys):
        xp = _ns(keys)
        shape = (keys.shape[0], self.n_experts)
        aw = self.observe(data, t, keys)
        loss = xp.broadcast_to(xp.asarray(self.loss(data, keys[:, None], t, self._idx(xp)),
                                          dtype=data_dtype(data, xp)), shape)
        mix = xp.sum(p * loss, axis=1)
        info = {"p": p, "loss": loss, "awake": aw, "mix": mix, "data": data}
        return data, FullFeedback(loss, aw), info

    def available_metrics(self) -> Mapping[str, Metric]:
        out = {"regret": _regret_metric(final=self.awake is None)}
        if self.awake is not None:
            out["sleeping_regret"] = _sleeping_metric()
        if self.comparator is not None:
            out["tracking_regret"] = _tracking_metric(self.comparator)
        if self.mean is not None:
            out["pseudo_regret"] = _pseudo_metric(self.mean, self.n_experts)
        return out


class RunData(tuple):
    """An environment's data arrays for one run, with the run's floating type (``float_dtype``)."""

    float_dtype = "float64"


def run_data(data, xp, dtype="float64") -> RunData:
    """``data`` as arrays of ``xp`` in a :class:`RunData` recording ``dtype`` (the state ``reset`` returns)."""
    if dtype not in ("float64", "float32"):
        raise ValueError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
    out = RunData(xp.asarray(a) for a in data)
    out.float_dtype = dtype
    return out


def data_dtype(data, xp):
    """The ``xp`` floating type of a run whose state is ``data`` (float64 for a plain tuple)."""
    return xp.float32 if getattr(data, "float_dtype", "float64") == "float32" else xp.float64


def _ns(a):
    from .._backend import get_namespace

    return get_namespace(a)


def _regret_metric(final: bool) -> Metric:
    def init(n_reps, xp):
        return (xp.zeros(n_reps), None)

    def update(acc, info, t):
        cum, L = acc
        xp = _ns(cum)
        loss = xp.astype(info["loss"], xp.float64)  # float64 sums also in a float32 run
        L = loss if L is None else L + loss
        return (cum + xp.astype(info["mix"], xp.float64), L)

    def read(acc):
        xp = _ns(acc[0])
        return acc[0] - xp.min(acc[1], axis=1)

    def fin(acc):
        return {"expert_regret": acc[0][:, None] - acc[1]}

    return Metric("regret", init, update, read, fin if final else None)


def _sleeping_metric() -> Metric:
    def init(n_reps, xp):
        return None

    def update(acc, info, t):
        xp = _ns(info["loss"])
        loss = xp.astype(info["loss"], xp.float64)  # float64 sums also in a float32 run
        r = xp.where(info["awake"], xp.astype(info["mix"], xp.float64)[:, None] - loss, 0.0)
        return r if acc is None else acc + r

    def read(acc):
        xp = _ns(acc)
        return xp.max(acc, axis=1)

    return Metric("sleeping_regret", init, update, read, lambda acc: {"expert_regret": acc})


def _tracking_metric(comparator) -> Metric:
    def init(n_reps, xp):
        return xp.zeros(n_reps)

    def update(acc, info, t):
        b = int(comparator(info["data"], t))
        xp = _ns(acc)
        return acc + xp.astype(info["mix"], xp.float64) - xp.astype(info["loss"][:, b], xp.float64)

    return Metric("tracking_regret", init, update, lambda acc: acc)


def _pseudo_metric(mean, n) -> Metric:
    def init(n_reps, xp):
        return (xp.zeros(n_reps), xp.zeros((1, n)))

    def update(acc, info, t):
        cum_mu, M = acc
        xp = _ns(cum_mu)
        idx = xp.arange(n, dtype=xp.int64)[None, :]
        mu = xp.broadcast_to(xp.asarray(mean(info["data"], t, idx), dtype=xp.float64), (1, n))
        return (cum_mu + xp.sum(info["p"] * mu, axis=1), M + mu)

    def read(acc):
        return acc[0] - _ns(acc[1]).min(acc[1])

    return Metric("pseudo_regret", init, update, read)


# --------------------------------------------------------------------------
# compiled fast paths (fused Numba kernel and CUDA kernel, expertlab.sim.kernels)

_FAST_METRICS = ("regret", "sleeping_regret", "tracking_regret", "pseudo_regret")


def _supports(learner, env) -> bool:
    return isinstance(env, LossSequence) and isinstance(learner.kernel, KernelSpec)


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
    from . import _kernels

    spec = learner.kernel
    if backend == "cuda" and not spec.cuda_ok:
        raise ValueError(f"learner {learner.name!r} has no CUDA kernel; use backend='numba' or 'numpy'")
    n, n_ck = env.n_experts, ckpts.size
    out_regret = np.zeros((n_ck, n_reps))
    out_sleep = np.zeros((n_ck, n_reps)) if env.awake is not None else np.zeros((1, 1))
    out_track = np.zeros((n_ck, n_reps)) if env.comparator is not None else np.zeros((1, 1))
    out_pseudo = np.zeros((n_ck, n_reps)) if env.mean is not None else np.zeros((1, 1))
    out_expert = np.zeros((n_reps, n))
    prm = np.ascontiguousarray(spec.params, dtype=np.float64)
    data = tuple(np.ascontiguousarray(asnumpy(a)) for a in env.data)
    drive_fn = (_kernels.numba_driver if backend == "numba" else _kernels.cuda_driver)(spec, env)
    kw = {} if dtype == "float64" else {"dtype": dtype}  # only the CUDA path lists float32
    drive_fn(prm, data, seed_u, np.int64(rep_offset), np.int64(horizon), ckpts, np.int64(n),
             out_regret, out_sleep, out_track, out_pseudo, out_expert, **kw)
    out = {"regret": out_regret}
    if env.awake is not None:
        out["sleeping_regret"] = out_sleep
    if env.comparator is not None:
        out["tracking_regret"] = out_track
    if env.mean is not None:
        out["pseudo_regret"] = out_pseudo
    return out, {"expert_regret": out_expert}


for _b in ("numba", "cuda"):
    register_fast_path(_b, "full-information", supports=_supports, metrics=_FAST_METRICS, driver=_driver(_b),
                       prepare=_prepare if _b == "numba" else None,
                       dtypes=("float64", "float32") if _b == "cuda" else ("float64",))
del _b
