"""The protocol of the one engine: learners, environments and metrics.

Every online learner of every family runs through :func:`expertlab.sim.run`.
The engine owns the time loop, the randomness, the checkpoints and the result;
a family only supplies records of pure functions.

Learner
    ``init(spec, n_reps, keys, xp) -> state``,
    ``act(state, obs, keys) -> (action, state)``,
    ``update(state, action, feedback, keys) -> state``.
    ``spec`` is the environment's :class:`EnvSpec` with the run's ``horizon``
    filled in; ``keys`` are ``uint64`` arrays of shape ``(n_reps,)`` (the
    replication keys at ``init``, the round keys afterwards) of the learner's
    own stream: a learner never sees the root seed.  State arrays have the
    replication axis first.  A procedure with a stopping time also gives
    ``done(state) -> bool (n_reps,)`` and ``answer(state) -> (n_reps, ...)``;
    once a replication is done the learner keeps its state and answer fixed.
Environment
    ``spec`` (an :class:`EnvSpec`: feedback kind, unit, number of actions and
    what the learner may know), ``reset(n_reps, keys, xp) -> env_state``,
    ``observe(env_state, t, keys) -> obs`` (awake mask, context, start state,
    or ``None``), ``step(env_state, action, t, keys) -> (env_state, feedback,
    info)``, and ``available_metrics()`` / ``default_metrics``: the
    :class:`Metric` accumulators that read ``info``.
Metric
    ``init(n_reps, xp) -> acc``, ``update(acc, info, t) -> acc``,
    ``read(acc) -> (n_reps,)`` and optionally ``final(acc) -> {name: array}``
    (per-replication values at the horizon).

The engine derives replication keys from ``(seed, rep_offset + r)`` and round
keys from those (counter-based hashing): replication ``r`` gives the same
numbers alone, in a batch, in a block of a sweep, and on every backend.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from .._repr import _VALUE_LIMIT, _field, html_table, summarize

__all__ = ["EnvSpec", "Environment", "KernelSpec", "Learner", "Metric", "UNITS", "environment_html",
           "environment_repr", "param_parts", "short_params"]

#: Units in which a run's horizon is counted.
UNITS = ("round", "episode", "step", "batch")


def _check_name(value, name: str) -> None:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{name} must be a non-empty str, got {value!r}")


def _check_callables(obj, names, optional=()) -> None:
    for name in names:
        if not callable(getattr(obj, name)):
            raise TypeError(f"{name} must be callable, got {type(getattr(obj, name)).__name__}")
    for name in optional:
        value = getattr(obj, name)
        if value is not None and not callable(value):
            raise TypeError(f"{name} must be callable or None, got {type(value).__name__}")


def _check_optional_int(value, name: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
        raise TypeError(f"{name} must be an int or None, got {type(value).__name__}")
    if value is not None and value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")


def validate_on_construction(check):
    """Class decorator: run ``check(obj)`` on every record a NamedTuple class builds.

    ``typing.NamedTuple`` forbids a ``__new__`` in the class body; this wraps
    the generated one instead, so that a record built directly by a user is
    checked like one built by a factory (``_make``/``_replace`` skip it).
    """

    def wrap(cls):
        base_new = cls.__new__

        def __new__(klass, *args, **kwargs):
            obj = base_new(klass, *args, **kwargs)
            check(obj)
            return obj

        __new__.__doc__ = base_new.__doc__
        cls.__new__ = __new__
        return cls

    return wrap


def param_parts(params: Mapping[str, Any]) -> list[str]:
    """``k=v`` summaries of ``params`` (``k: dtype[shape]`` for an array), one per parameter."""
    return [_field(k, v, _VALUE_LIMIT) for k, v in params.items()]


def short_params(params: Mapping[str, Any], limit: int = 60) -> str:
    """``k=v`` pairs of ``params`` for a one-line repr; arrays show their dtype and shape."""
    return ", ".join(_field(k, v, limit) for k, v in params.items())


@dataclasses.dataclass(frozen=True, repr=False)
class EnvSpec:
    """What a learner is told about an environment before the first round.

    Attributes
    ----------
    feedback : str
        The kind of feedback (``"full"``, ``"bandit"``, ``"episode"``, ...); a
        learner runs on the environments of the kind it declares.
    unit : str
        One of :data:`UNITS`: what one step of the run is (a round of
        predictions, an episode of an MDP, a step of a discounted stream, a
        batch of tokens).
    n_actions : int
        Number of experts, arms or actions.
    horizon : int or None
        The run's length in ``unit``; filled in by :func:`expertlab.sim.run`.
    max_horizon : int or None
        The longest run the environment defines (rows of a fixed loss array).
    info : mapping
        Further quantities the learner may know (e.g. an MDP's sizes and
        known rewards); read as attributes: ``spec.n_states``.
    dtype : {"float64", "float32"}
        The floating type the run computes in; filled in by
        :func:`expertlab.sim.run` (its ``dtype``).  A learner whose
        ``float_dtypes`` list ``"float32"`` creates its floating state in
        this type.
    """

    feedback: str
    unit: str
    n_actions: int
    horizon: int | None = None
    max_horizon: int | None = None
    info: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    dtype: str = "float64"

    def __post_init__(self):
        _check_name(self.feedback, "feedback")
        if self.unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, got {self.unit!r}")
        if isinstance(self.n_actions, bool) or not isinstance(self.n_actions, (int, np.integer)):
            raise TypeError(f"n_actions must be an int, got {type(self.n_actions).__name__}")
        if self.n_actions < 1:
            raise ValueError(f"n_actions must be >= 1, got {self.n_actions}")
        _check_optional_int(self.horizon, "horizon")
        _check_optional_int(self.max_horizon, "max_horizon")
        if not isinstance(self.info, Mapping) or not all(isinstance(k, str) for k in self.info):
            raise TypeError("info must be a mapping with str keys")
        if self.dtype not in ("float64", "float32"):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {self.dtype!r}")

    def __getattr__(self, name):
        info = self.__dict__.get("info", {})
        if name in info:
            return info[name]
        raise AttributeError(f"EnvSpec has no field or info entry {name!r}")

    def __repr__(self) -> str:
        extra = f", info=[{', '.join(self.info)}]" if self.info else ""
        return (f"EnvSpec(feedback={self.feedback!r}, unit={self.unit!r}, n_actions={self.n_actions}, "
                f"horizon={self.horizon}{extra})")


def _check_kernel_spec(k) -> None:
    for name in ("n_rows", "n_scalars"):
        value = getattr(k, name)
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    _check_callables(k, ("init", "act", "update"))


@validate_on_construction(_check_kernel_spec)
class KernelSpec(NamedTuple):
    """Scalar step functions of a full-information learner, for the compiled fast paths.

    Each function works on one replication: ``S`` is a ``(n_rows, n_experts)``
    float64 work array, ``s`` a ``(n_scalars,)`` float64 work array (both zero on
    entry to ``init``), ``prm`` the float64 hyperparameter vector ``params``.
    All three must be decorated with ``numba.extending.register_jitable`` so
    that they compile for the CPU (``@njit``) and for CUDA.

    ``init(prm, S, s)``;
    ``act(prm, S, s, t, key, awake, p)`` writes the distribution played in round
    ``t`` (0-based) into ``p``; ``key`` is the learner's ``uint64`` key for the
    round and ``awake`` a boolean mask;
    ``update(prm, S, s, t, loss, awake, p)`` folds the round's losses in.

    The drivers allocate ``s`` with two slots more than ``n_scalars``: they
    store the round's mixture loss ``<p_t, l_t>`` in ``s[n_scalars]`` before
    each ``update`` (a step function may read it instead of recomputing it),
    and ``1.0`` in ``s[n_scalars + 1]`` when the environment has no awake
    mask (``0.0`` when it has one).  Step
    functions called every round that allocate nothing should be declared
    ``register_jitable(forceinline=True, _nrt=False)`` (see
    ``expertlab.sim.kernels`` for the vectorisable helpers ``ksum``,
    ``kdot``, ``kmax`` and ``exp_nonpos``).
    """

    n_rows: int
    n_scalars: int
    params: Any  # float64 array
    init: Callable
    act: Callable
    update: Callable
    cuda_ok: bool = True


def _check_learner(lr) -> None:
    _check_name(lr.name, "name")
    _check_name(lr.feedback, "feedback")
    _check_callables(lr, ("init", "act", "update"), optional=("done", "answer", "check_spec", "final"))
    if not isinstance(lr.params, Mapping):
        raise TypeError(f"params must be a mapping of the factory's settings, got {type(lr.params).__name__}")
    if lr.doc is not None and not isinstance(lr.doc, str):
        raise TypeError(f"doc must be a str or None, got {type(lr.doc).__name__}")
    if (lr.done is None) != (lr.answer is None):
        raise ValueError("done and answer go together: a procedure with a stopping time gives both")


@validate_on_construction(_check_learner)
class Learner(NamedTuple):
    """An online learner as a record of pure functions (see the module docstring).

    Attributes
    ----------
    name : str
        Registered name (``"hedge"``, ``"ucb1"``, ``"ucbvi"``, ...).
    feedback : str
        The kind of environment it runs on (``EnvSpec.feedback``).
    init, act, update : callable
        The protocol functions.
    params : mapping
        The hyperparameters, as given to the factory.
    kernel : object or None
        Scalar step functions for a registered compiled fast path.
    done, answer : callable or None
        ``done(state) -> bool (n_reps,)`` and ``answer(state) -> (n_reps, ...)``
        for procedures with a stopping time.
    doc : str or None
        The factory's docstring (what ``help(learner)`` shows).
    final : callable or None
        ``final(state) -> {name: (n_reps, ...)}``: per-replication values of
        the learner's final state that the run should return in
        ``RunResult.final`` (fitted weights, estimates, ...).
    check_spec : callable or None
        ``check_spec(spec)`` raises a ``ValueError`` naming the setting when
        the learner cannot run on an environment with this :class:`EnvSpec`
        (a rate tuned for another number of arms, a confidence bound that
        needs rewards in [0, 1], a calibration for a shorter horizon).
        :func:`expertlab.sim.run` calls it before any backend runs.
    float_dtypes : tuple of str
        The floating types its array code computes in (``spec.dtype``):
        ``("float64",)`` unless the learner creates its state in
        ``spec.dtype`` and keeps it there, in which case it lists
        ``"float32"`` too and ``sim.run(..., dtype="float32")`` accepts it.
    """

    name: str
    feedback: str
    init: Callable
    act: Callable
    update: Callable
    params: Mapping[str, Any]
    kernel: Any = None
    done: Callable | None = None
    answer: Callable | None = None
    doc: str | None = None
    check_spec: Callable | None = None
    final: Callable | None = None
    float_dtypes: tuple = ("float64",)

    def __repr__(self) -> str:
        return f"{self.name}({', '.join(param_parts(self.params))})"

    def _repr_html_(self) -> str:
        doc = (self.__doc__ or "").strip().splitlines()
        sub = f"learner, feedback: {self.feedback}" + (f": {doc[0]}" if doc else "")
        return html_table(self.name, sub, [(k, summarize(v)) for k, v in self.params.items()])

    def __reduce__(self):
        # The protocol functions are closures of the factory, which pickle cannot store; a registered
        # learner travels as its name and parameters and is rebuilt by its factory, after checking here
        # that the factory rebuilds exactly this record (same code, same closed-over values).
        rebuilt = _rebuild_learner(self.name, self.params, quiet=True)
        if rebuilt is not None and _same(tuple(rebuilt), tuple(self)):
            return _rebuild_learner, (self.name, dict(self.params))
        return type(self), tuple(self)


def _rebuild_learner(name, params, quiet=False):
    """``get_learner(name).factory(**params)`` (None when ``quiet`` and that fails)."""
    from ._registry import _LEARNERS

    reg = _LEARNERS.get(name)
    if quiet:
        if reg is None:
            return None
        try:
            return reg.factory(**params)
        except Exception:
            return None
    if reg is None:
        raise ValueError(f"cannot rebuild learner {name!r}: no learner of that name is registered "
                         "(import the module that registers it first)")
    return reg.factory(**params)


def _same(a, b, depth: int = 0) -> bool:
    """Whether two learner fields are the same: identical, equal values, or functions of the same code
    closing over the same values."""
    if a is b:
        return True
    if depth > 8:
        return False
    if type(a) is not type(b):
        return False
    if hasattr(a, "__code__") and hasattr(a, "__closure__"):
        if a.__code__ != b.__code__ or not _same(a.__defaults__, b.__defaults__, depth + 1) \
                or not _same(a.__kwdefaults__, b.__kwdefaults__, depth + 1):
            return False
        ca, cb = a.__closure__ or (), b.__closure__ or ()
        return len(ca) == len(cb) and all(_same(x.cell_contents, y.cell_contents, depth + 1) for x, y in zip(ca, cb))
    if hasattr(a, "shape") and hasattr(a, "dtype"):
        import numpy as np

        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(np.asarray(a), np.asarray(b),
                                                                                  equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y, depth + 1) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], depth + 1) for k in a)
    if dataclasses.is_dataclass(a):
        return all(_same(getattr(a, f.name), getattr(b, f.name), depth + 1) for f in dataclasses.fields(a))
    try:
        return bool(a == b)
    except Exception:
        return False


class _FactoryDoc:
    """``Learner.__doc__``: the class docstring on the class, the factory's docstring on a learner.

    So ``help(hedge())`` and ``pydoc.render_doc(learner)`` show how the learner
    was made, not the generic record documentation.
    """

    def __init__(self, class_doc: str):
        self.class_doc = class_doc

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self.class_doc
        if obj.doc:
            return obj.doc
        from ._registry import _LEARNERS

        reg = _LEARNERS.get(obj.name)
        return getattr(reg.factory, "__doc__", None) if reg is not None else self.class_doc


Learner.__doc__ = _FactoryDoc(Learner.__doc__)


def _check_metric(m) -> None:
    _check_name(m.name, "name")
    _check_callables(m, ("init", "update", "read"), optional=("final",))


@validate_on_construction(_check_metric)
class Metric(NamedTuple):
    """A per-replication accumulator read at every checkpoint.

    ``init(n_reps, xp) -> acc``; ``update(acc, info, t) -> acc`` with the
    ``info`` mapping returned by the environment's ``step`` in round ``t``
    (0-based); ``read(acc) -> (n_reps,)`` the value after the round;
    ``final(acc) -> {name: (n_reps, ...)}`` optional values at the horizon.
    """

    name: str
    init: Callable
    update: Callable
    read: Callable
    final: Callable | None = None

    def __repr__(self) -> str:
        return f"Metric({self.name!r})"


class Environment:
    """Base class of every environment: subclass it as a frozen dataclass.

    Subclasses define the attributes ``name`` (str), ``params`` (a mapping
    of the constructor's settings) and ``spec`` (an :class:`EnvSpec`), and
    the methods ``reset``,
    ``step``, ``available_metrics`` and usually :meth:`observe`;
    ``default_metrics`` names the metrics :func:`expertlab.sim.run` records
    when none are asked for (default: all available).
    """

    @property
    def default_metrics(self) -> tuple | None:
        """Metric names recorded when ``sim.run`` is given none (``None``: all available)."""
        return None

    def reset(self, n_reps, keys, xp):  # pragma: no cover - subclasses override
        raise NotImplementedError

    def observe(self, env_state, t, keys):
        """What the learner sees before acting in round ``t``; ``None`` by default."""
        return None

    def step(self, env_state, action, t, keys):  # pragma: no cover - subclasses override
        raise NotImplementedError

    def available_metrics(self) -> Mapping[str, Metric]:  # pragma: no cover - subclasses override
        raise NotImplementedError

    def check_horizon(self, horizon: int) -> None:
        """Refuse a horizon beyond what the environment defines."""
        mh = self.spec.max_horizon
        if mh is not None and horizon > mh:
            raise ValueError(f"horizon={horizon} exceeds the {mh} {self.spec.unit}s environment {self.name!r} defines")

    def __repr__(self) -> str:
        return environment_repr(self)

    def _repr_html_(self) -> str:
        return environment_html(self)


def environment_repr(env) -> str:
    """``name(param=value, array: dtype[shape], ...)`` on one line (the repr of every environment)."""
    return f"{env.name}({', '.join(param_parts(env.params))})"


def environment_html(env) -> str:
    """A compact HTML table of an environment: its name, feedback, unit, number of actions and parameters."""
    try:
        spec = env.spec
        sub = (f"environment, feedback: {spec.feedback}, {spec.n_actions} actions, horizon in {spec.unit}s"
               + (f" (at most {spec.max_horizon})" if spec.max_horizon is not None else ""))
    except Exception:  # pragma: no cover - a broken spec still shows the parameters
        sub = "environment"
    return html_table(env.name, sub, [(k, summarize(v)) for k, v in env.params.items()])
