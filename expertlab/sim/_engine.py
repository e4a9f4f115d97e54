"""``sim.run``: the only time loop for online learners.

One loop drives every learner–environment pair of every family:
the engine derives the keys, calls ``observe``/``act``/``step``/``update``
once per step for all replications at once, folds the environment's ``info``
into the metrics and reads them at the checkpoints.  This array path over
``xp`` (NumPy, or CuPy on a GPU) is the reference; compiled fast paths
(fused Numba kernels, CUDA kernels) are registered per pair with
:func:`register_fast_path` and must agree with it.
"""

from __future__ import annotations

import math
import time
from typing import Callable, NamedTuple

import numpy as np

from .. import _random
from .._backend import BACKENDS, asnumpy, check_backend, namespace_for_backend
from .._validation import check_int
from ._progress import check_progress, progress_bar, show_progress
from ._protocol import EnvSpec, Environment, Learner, Metric
from ._result import RunResult

__all__ = ["run", "checkpoint_grid", "check_checkpoints", "check_dtype", "register_fast_path", "pick_backend",
           "is_environment", "replication_keys", "AUTO_COMPILE_WORK", "DTYPES"]

#: ``backend="auto"`` runs a compiled fast path only for runs of at least this
#: many replication-steps times actions (or the environment's ``step_work``):
#: below it the NumPy path finishes before a kernel compiles.  The choice
#: depends on the run's arguments only, never on what a process compiled
#: before, so a run gives the same numbers in any process.
AUTO_COMPILE_WORK = 2e7

_MAX_HORIZON = 2 ** 62

#: Floating types a run can compute in (``sim.run(..., dtype=...)``); the first is the default.
DTYPES = ("float64", "float32")


def check_dtype(dtype) -> str:
    """``dtype`` as ``"float64"`` or ``"float32"`` (``None`` means ``"float64"``).

    Accepts the names, ``numpy.float64``/``numpy.float32`` and their
    ``numpy.dtype``; anything else is refused with a :class:`ValueError`
    naming ``dtype``.

    Examples
    --------
    >>> import numpy as np
    >>> check_dtype(None), check_dtype(np.float32)
    ('float64', 'float32')
    """
    if dtype is None:
        return DTYPES[0]
    if isinstance(dtype, str):
        if dtype in DTYPES:
            return dtype
    elif isinstance(dtype, (type, np.dtype)):
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = None
        if name in DTYPES:
            return name
    raise ValueError(f"dtype must be one of {', '.join(map(repr, DTYPES))} (or None for 'float64'), "
                     f"got {dtype!r}")


def float_dtypes(obj) -> tuple:
    """The floating types a learner or an environment computes in (``("float64",)`` unless it says more)."""
    return tuple(getattr(obj, "float_dtypes", None) or DTYPES[:1])


def checkpoint_grid(horizon: int, per_decade: int = 10) -> np.ndarray:
    """Log-spaced steps at which metrics are recorded.

    About ``per_decade`` points per decade, always including every power of
    ten up to ``horizon`` and ``horizon`` itself; sorted, unique, starting at 1.

    Examples
    --------
    >>> checkpoint_grid(100, per_decade=2).tolist()
    [1, 3, 10, 32, 100]
    """
    horizon = check_int(horizon, "horizon", maximum=_MAX_HORIZON)
    per_decade = check_int(per_decade, "per_decade", maximum=1000)
    top = math.log10(horizon)
    grid = np.round(10.0 ** np.linspace(0.0, top, int(math.ceil(top * per_decade)) + 1)).astype(np.int64)
    powers = 10 ** np.arange(int(math.floor(top + 1e-12)) + 1, dtype=np.int64)
    grid = np.concatenate([grid, powers[powers <= horizon], np.array([horizon], dtype=np.int64)])
    return np.unique(grid[(grid >= 1) & (grid <= horizon)])


def check_checkpoints(checkpoints, horizon: int) -> np.ndarray:
    """``checkpoints`` as sorted unique ``int64`` steps in ``[1, horizon]`` (default :func:`checkpoint_grid`)."""
    if checkpoints is None:
        return checkpoint_grid(horizon)
    if isinstance(checkpoints, (str, bytes)):
        raise TypeError(f"checkpoints must be a sequence of integers, got {checkpoints!r}")
    arr = np.asarray(checkpoints)
    if arr.dtype == object or arr.ndim != 1:
        raise ValueError(f"checkpoints must be a 1-D sequence of integers, got shape {arr.shape}")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"checkpoints must be whole numbers of steps, got {arr.tolist()}")
    elif arr.dtype.kind not in "iu":
        raise TypeError(f"checkpoints must be integers, got dtype {arr.dtype}")
    ck = np.unique(arr.astype(np.int64))
    if ck.size == 0 or ck[0] < 1 or ck[-1] > horizon:
        raise ValueError(f"checkpoints must be a non-empty set of steps in [1, {horizon}], got {arr.tolist()}")
    return ck


class FastPath(NamedTuple):
    """A compiled path for some learner–environment pairs (see :func:`register_fast_path`)."""

    backend: str
    name: str
    supports: Callable
    metrics: frozenset
    driver: Callable
    learner_final: bool = False
    prepare: Callable | None = None
    dtypes: tuple = ("float64",)


_FAST_PATHS: list[FastPath] = []


def register_fast_path(backend: str, name: str, *, supports, metrics, driver,
                       learner_final: bool = False, prepare=None, dtypes=("float64",)) -> None:
    """Register a compiled path for the pairs ``supports(learner, env)`` accepts.

    ``driver(learner, env, horizon, n_reps, seed_u, rep_offset, ckpts) -> (metrics, final)``
    returns the same dictionaries as the array path for the metric names in
    ``metrics`` (for a procedure with a stopping time, ``final`` holds
    ``stopped``, ``stopping_time`` and ``answer`` too);
    ``learner_final=True`` says that ``final`` also holds the learner's
    ``Learner.final`` values (without it, ``"auto"`` runs learners that
    have final values on the array path).  ``prepare``, when given, takes the
    driver's arguments and compiles (or loads from the disk cache) what the
    driver will run, so that :func:`run` can leave compile time out of
    ``RunResult.wall_time``; its return value is ignored.  ``dtypes`` lists
    the floating types the path computes in (``"float64"``, ``"float32"``); a path that
    lists ``"float32"`` receives ``dtype="float32"`` as a keyword argument
    of ``driver`` in a float32 run (a float64 run calls it without).  The
    conformance tests check every path against the array path to 1e-10.
    """
    check_backend(backend)
    if backend in ("numpy", "cupy"):
        raise ValueError(f"backend must be a compiled backend ('numba' or 'cuda'), got {backend!r}: "
                         "the array path runs every pair already")
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str, got {name!r}")
    for arg, fn in (("supports", supports), ("driver", driver)):
        if not callable(fn):
            raise TypeError(f"{arg} must be callable, got {type(fn).__name__}")
    if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics):
        raise TypeError("metrics must be a collection of metric names (str)")
    if prepare is not None and not callable(prepare):
        raise TypeError(f"prepare must be callable or None, got {type(prepare).__name__}")
    if isinstance(dtypes, str) or not dtypes:
        raise TypeError(f"dtypes must be a non-empty collection of dtype names, got {dtypes!r}")
    dtypes = tuple(check_dtype(d) for d in dtypes)
    _FAST_PATHS[:] = [f for f in _FAST_PATHS if (f.backend, f.name) != (backend, name)]
    _FAST_PATHS.append(FastPath(backend, name, supports, frozenset(metrics), driver, bool(learner_final),
                                prepare, dtypes))


def _fast_path(backend, learner, env, names):
    for f in _FAST_PATHS:
        if f.backend == backend and f.supports(learner, env) and set(names) <= f.metrics:
            return f
    return None


def pick_backend(learner, env, backend: str = "auto", *, horizon: int = 0, n_reps: int = 0,
                 metrics=None, dtype=None) -> str:
    """The backend :func:`run` uses for ``backend``.

    ``"auto"`` picks a registered Numba fast path for the pair when one exists,
    computes in ``dtype``, and the run is large enough to repay compiling
    (:data:`AUTO_COMPILE_WORK`); else the NumPy array path.  The work of
    a run is ``n_reps * horizon`` times the environment's ``step_work`` (an
    entry of ``spec.info``: elementary operations per replication and step,
    e.g. tokens times experts for a routing batch), or times the number of
    actions where it gives none.
    """
    if backend != "auto":
        return check_backend(backend)
    names = _metric_names(env, metrics)
    if _has_custom(metrics):
        return "numpy"
    f = _fast_path("numba", learner, env, names)
    if f is None or (learner.final is not None and not f.learner_final) or check_dtype(dtype) not in f.dtypes:
        return "numpy"
    spec = env.spec
    step_work = spec.info.get("step_work", max(spec.n_actions, 1))
    work = float(n_reps) * float(horizon) * float(step_work)
    return "numba" if work >= AUTO_COMPILE_WORK else "numpy"


def _has_custom(metrics):
    if metrics is None or isinstance(metrics, str):
        return False
    if isinstance(metrics, Metric):
        return True
    return any(isinstance(m, Metric) for m in metrics)


def default_metric_names(env) -> tuple:
    """The metrics :func:`run` records on ``env`` when given none: its ``default_metrics``, else all available."""
    d = env.default_metrics
    return tuple(d) if d is not None else tuple(env.available_metrics())


def _metric_names(env, metrics):
    avail = env.available_metrics()
    if metrics is None:
        return default_metric_names(env)
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    names = []
    for m in metrics:
        if isinstance(m, Metric):
            names.append(m.name)
        elif isinstance(m, str):
            if m not in avail:
                raise ValueError(f"metrics: {m!r} is not a metric of environment {env.name!r}; "
                                 f"it has {sorted(avail)}")
            names.append(m)
        else:
            raise TypeError(f"metrics must hold metric names or Metric records, got {type(m).__name__}")
    if len(set(names)) != len(names):
        raise ValueError(f"metrics names a metric twice: {names}")
    return tuple(names)


def _resolve_metrics(env, metrics):
    avail = env.available_metrics()
    if metrics is None:
        return [avail[n] for n in _metric_names(env, None)]
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    _metric_names(env, metrics)
    return [m if isinstance(m, Metric) else avail[m] for m in metrics]


def run(learner: Learner, env: Environment, horizon: int, n_reps: int = 100, seed=0, backend: str = "auto", *,
        metrics=None, checkpoints=None, rep_offset: int = 0, progress: bool | None = None,
        dtype=None) -> RunResult:
    """Run ``n_reps`` replications of ``learner`` on ``env`` for ``horizon`` steps.

    Parameters
    ----------
    learner : Learner
        Any online learner of any family (its ``feedback`` must match the
        environment's).
    env : Environment
        A loss sequence, a set of arms, an MDP, a routing problem, ...
    horizon : int
        Number of steps, in the environment's unit (``env.spec.unit``):
        rounds, episodes, stream steps or token batches.
    n_reps : int
        Number of replications, advanced together.
    seed : int, SeedSequence or None
        Root seed.  Replication ``r`` draws from keys derived from
        ``(seed, rep_offset + r)`` only, so it gives the same numbers alone,
        in any batch, in a block of a sweep and on every backend.
    backend : {"auto", "numpy", "cupy", "numba", "cuda"}
        ``"numpy"``/``"cupy"``: the array path (the reference).  ``"numba"``,
        ``"cuda"``: a registered compiled fast path for the pair.  ``"auto"``
        (the default): see :func:`pick_backend`.
    metrics : sequence of str or Metric, optional
        What to record; default the environment's default metrics
        (``env.available_metrics()`` lists them).
    checkpoints : sequence of int, optional
        Steps at which to record; default :func:`checkpoint_grid`.
    rep_offset : int
        Index of the first replication (for splitting a run into blocks).
    progress : bool, optional
        Show a progress bar over the steps (``tqdm.auto``: a widget in a
        notebook, text on stderr in a terminal) once the run has taken two
        seconds.  ``None`` (the default): in a notebook or when stderr is a
        terminal; ``False``: never; ``True``: on any output.  The bar
        advances every ``horizon / 200`` steps, never per replication, and
        does not change the numbers.  Compiled fast paths run the whole
        horizon in one call and show no bar.
    dtype : {None, "float64", "float32"}
        Floating type of the learner's state and of the environment's
        outcomes (losses, rewards, the learner's distribution).  ``None``
        (the default) is ``"float64"``.  ``"float32"`` is an opt-in for
        GPU speed: it runs on the array path (``"numpy"``, ``"cupy"``) and
        on the CUDA kernels, for the learners and environments whose
        ``float_dtypes`` list it (among them ``hedge``, ``ucb1`` and
        ``thompson_sampling`` on :class:`LossSequence` and :class:`Arms`
        environments); ``backend="auto"`` then takes the array path, and
        ``backend="numba"`` is refused.  The random draws are the same
        (same keys, same uniforms); the metrics are always accumulated in
        float64, so a long run's sums keep their precision and only the
        learner's arithmetic and the outcomes are rounded to float32.
        Tolerance (measured): the mean regret curve of a float32 run stayed
        within a relative 1e-3 of the float64 run's at every checkpoint;
        with ``n_reps=1000``, horizon ``10**4``, seed 3 the largest relative
        difference was ``3e-8`` for
        ``hedge`` on ``fair_coins(10)``, ``6e-7`` on ``needle(10, 0.1)``,
        ``5e-4`` (0.09 standard errors: a few replications break a near-tie
        of the indices the other way) for ``ucb1`` on
        ``bernoulli([0.5, 0.45, 0.3])``, and 0 for ``thompson_sampling``
        there (its counts and 0/1 rewards are exact in float32 and its beta
        draws are computed in float64).  Nothing has run in float32 on GPU
        hardware yet: the array path is tested on NumPy and under
        ``array_api_strict``, the CUDA kernels under Numba's CUDA simulator.

    Returns
    -------
    RunResult
        ``metrics[name]`` of shape ``(n_checkpoints, n_reps)``; ``backend``
        says which path ran.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import hedge, instances
    >>> res = sim.run(hedge(), instances.fair_coins(10), horizon=1000, n_reps=200, seed=1)
    >>> res.metrics["regret"].shape, res.unit, res.backend
    ((28, 200), 'round', 'numpy')
    """
    if not isinstance(learner, Learner):
        raise TypeError(f"learner must be a Learner (e.g. expertlab.experts.hedge()), got {type(learner).__name__}")
    if not is_environment(env):
        raise TypeError(f"env must be an Environment (e.g. expertlab.experts.instances.fair_coins(10)), "
                        f"got {type(env).__name__}")
    spec0 = env.spec
    if learner.feedback != spec0.feedback:
        raise ValueError(f"learner {learner.name!r} takes {learner.feedback!r} feedback but environment "
                         f"{env.name!r} gives {spec0.feedback!r} feedback")
    horizon = check_int(horizon, "horizon", maximum=_MAX_HORIZON)
    n_reps = check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0, maximum=_MAX_HORIZON)
    progress = check_progress(progress)
    dtype = check_dtype(dtype)
    if backend != "auto":
        check_backend(backend)
    _check_pair_dtype(learner, env, dtype)
    env.check_horizon(horizon)
    if learner.check_spec is not None:
        learner.check_spec(_with_horizon(spec0, horizon, dtype))
    seed_u = _random.seed_to_uint64(seed)
    ckpts = check_checkpoints(checkpoints, horizon)
    mlist = _resolve_metrics(env, metrics)
    names = [m.name for m in mlist]
    used = pick_backend(learner, env, backend, horizon=horizon, n_reps=n_reps, metrics=metrics, dtype=dtype)
    dkw = {} if dtype == DTYPES[0] else {"dtype": dtype}
    if used in ("numba", "cuda"):
        fast = _fast_path(used, learner, env, names)
        if fast is None or _has_custom(metrics):
            raise ValueError(f"backend={used!r}: no compiled path is registered for learner {learner.name!r} on "
                             f"environment {env.name!r} with metrics {names}; use backend='numpy' or 'auto' "
                             f"(compiled paths: {_describe_fast_paths()})")
        if dtype not in fast.dtypes:
            raise ValueError(f"dtype={dtype!r} is not available on backend={used!r} (its compiled path "
                             f"{fast.name!r} computes in {', '.join(fast.dtypes)}); use backend='numpy', "
                             f"'cupy' or 'cuda' for float32, or dtype='float64'")
        if used == "cuda":
            _require_cuda()
        if fast.prepare is not None:  # compiling (or loading a cached kernel) is not part of wall_time
            with np.errstate(over="ignore"):
                fast.prepare(learner, env, horizon, n_reps, seed_u, rep_offset, ckpts, **dkw)
    t0 = time.perf_counter()
    if used in ("numba", "cuda"):
        with np.errstate(over="ignore"):  # uint64 hashing wraps by design
            out, final = fast.driver(learner, env, horizon, n_reps, seed_u, rep_offset, ckpts, **dkw)
        if learner.final is not None and not fast.learner_final:
            raise ValueError(f"backend={used!r}: the compiled path for {learner.name!r} does not return the "
                             f"learner's final values; use backend='numpy' or 'auto'")
        missing = [n for n in names if n not in out]
        if missing:
            raise ValueError(f"metrics: {missing} cannot be recorded for learner {learner.name!r} on "
                             f"{env.name!r} (the learner does not report what they need)")
        out = {n: out[n] for n in names}
    else:
        xp = namespace_for_backend(used)
        show = show_progress(progress)
        with progress_bar(show, total=horizon, desc=learner.name, unit=spec0.unit) as bar, \
                np.errstate(over="ignore"):
            out, final = _run_array(xp, learner, env, horizon, n_reps, seed_u, rep_offset, ckpts, mlist,
                                    bar if show else None, dtype=dtype)
    wall = time.perf_counter() - t0
    return RunResult(learner=learner.name, environment=env.name, learner_params=dict(learner.params),
                     environment_params=dict(env.params), unit=spec0.unit, horizon=horizon, n_reps=n_reps,
                     seed=int(seed_u), rep_offset=rep_offset, backend=used, checkpoints=ckpts, metrics=out,
                     final=final, wall_time=wall, dtype=dtype)


def is_environment(obj) -> bool:
    """Whether ``obj`` implements the environment protocol (``spec``, ``reset``, ``observe``, ``step``, metrics)."""
    if isinstance(obj, Environment):
        return True
    return all(callable(getattr(obj, f, None)) for f in ("reset", "observe", "step", "available_metrics",
                                                          "check_horizon")) and hasattr(obj, "spec")


def _check_pair_dtype(learner, env, dtype):
    """Refuse a ``dtype`` the learner's or the environment's array code does not compute in."""
    for what, obj in (("learner", learner), ("environment", env)):
        have = float_dtypes(obj)
        if dtype not in have:
            raise ValueError(f"dtype={dtype!r}: {what} {obj.name!r} computes in {', '.join(have)} only "
                             f"(its float_dtypes); use dtype='float64'")


def _describe_fast_paths():
    return ", ".join(f"{f.backend}:{f.name}" for f in _FAST_PATHS) or "none"


def _require_cuda():
    import os

    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return
    try:
        from numba import cuda

        ok = cuda.is_available()
    except Exception:  # pragma: no cover - depends on the machine
        ok = False
    if not ok:
        raise RuntimeError("backend='cuda' needs an NVIDIA GPU with a working CUDA driver, and none was found "
                           "(set NUMBA_ENABLE_CUDASIM=1 to run the CUDA kernels on the CPU simulator)")


def replication_keys(seed_u, rep_offset: int, n_reps: int, xp=np):
    """``(env_keys, learner_keys)``: the ``(n_reps,)`` ``uint64`` keys of replications ``rep_offset ..``.

    ``seed_u`` is the run's seed as a ``uint64`` (an int in ``[0, 2**64)``).
    """
    if isinstance(seed_u, bool) or not isinstance(seed_u, (int, np.integer)):
        raise TypeError(f"seed_u must be an int or numpy.uint64, got {type(seed_u).__name__}")
    if not 0 <= int(seed_u) < 2**64:
        raise ValueError(f"seed_u must be in [0, 2**64), got {seed_u}")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    n_reps = check_int(n_reps, "n_reps")
    reps = xp.arange(rep_offset, rep_offset + n_reps, dtype=xp.uint64)
    rk = _random.rep_key(xp.asarray([seed_u], dtype=xp.uint64), reps)
    return rk, _random.stream_key(rk, _random.LEARNER_STREAM)


def _run_array_on(xp, learner, env, horizon: int, n_reps: int, seed=0, *, metrics=None, checkpoints=None,
                  dtype=None):
    """The array path of :func:`run` on the array namespace ``xp``: ``(metrics, final)`` as NumPy arrays.

    Not public: :func:`run` reaches the array path through ``backend='numpy'``
    or ``'cupy'``; this entry lets the backend tests run it on any array-API
    namespace (``array_api_strict`` checks that it calls nothing NumPy-only,
    which is what the CuPy path needs).  The arguments mean what they mean
    for :func:`run`.
    """
    horizon = check_int(horizon, "horizon", maximum=_MAX_HORIZON)
    n_reps = check_int(n_reps, "n_reps")
    dtype = check_dtype(dtype)
    _check_pair_dtype(learner, env, dtype)
    env.check_horizon(horizon)
    if learner.check_spec is not None:
        learner.check_spec(_with_horizon(env.spec, horizon, dtype))
    ckpts = check_checkpoints(checkpoints, horizon)
    with np.errstate(over="ignore"):
        return _run_array(xp, learner, env, horizon, n_reps, _random.seed_to_uint64(seed), 0, ckpts,
                          _resolve_metrics(env, metrics), dtype=dtype)


def _run_array(xp, learner, env, horizon, n_reps, seed_u, rep_offset, ckpts, mlist, bar=None, dtype="float64"):
    """Reference path: one Python iteration per step for all replications.

    ``bar`` (optional) advances every ``horizon / 200`` steps and is filled
    when the loop ends.  ``dtype`` reaches the learner as ``spec.dtype`` and
    the environment as ``reset(..., dtype=dtype)`` (only when it is not
    float64, so that environments computing in float64 alone keep the plain
    signature).
    """
    rk, lk = replication_keys(seed_u, rep_offset, n_reps, xp)
    spec = _with_horizon(env.spec, horizon, dtype)
    if dtype == DTYPES[0]:
        env_state = env.reset(n_reps, rk, xp)
    else:
        env_state = env.reset(n_reps, rk, xp, dtype=dtype)
    state = learner.init(spec, n_reps, lk, xp)
    accs = [m.init(n_reps, xp) for m in mlist]
    outs = {m.name: np.zeros((ckpts.size, n_reps)) for m in mlist}
    stopping = learner.done is not None
    if stopping:
        stop_time = np.full(n_reps, -1, dtype=np.int64)
        active = np.ones(n_reps, dtype=bool)
    ck = [int(c) for c in ckpts]
    c = 0
    t_last = horizon
    stride = max(1, horizon // 200) if bar is not None else horizon + 1
    tick = stride  # the step count at which the bar next advances
    for t in range(horizon):
        tt = np.uint64(t)
        ek = _random.round_key(rk, tt)
        kt = _random.round_key(lk, tt)
        obs = env.observe(env_state, t, ek)
        action, state = learner.act(state, obs, kt)
        env_state, feedback, info = env.step(env_state, action, t, ek)
        state = learner.update(state, action, feedback, kt)
        if stopping:
            info = dict(info)
            info["active"] = xp.asarray(active)
        accs = [m.update(a, info, t) for m, a in zip(mlist, accs)]
        if stopping:
            d = np.asarray(asnumpy(learner.done(state)), dtype=bool)
            newly = d & active
            stop_time[newly] = t + 1
            active &= ~d
        while c < len(ck) and t + 1 == ck[c]:
            for m, a in zip(mlist, accs):
                outs[m.name][c] = asnumpy(m.read(a))
            c += 1
        if t + 1 == tick:
            bar.update(stride)
            tick += stride
        if stopping and not active.any():
            t_last = t + 1
            break
    if bar is not None:
        bar.update(horizon - (tick - stride))
    while c < len(ck):  # every replication stopped: the metrics keep their last values
        for m, a in zip(mlist, accs):
            outs[m.name][c] = asnumpy(m.read(a))
        c += 1
    final = {}
    for m, a in zip(mlist, accs):
        if m.final is not None:
            final.update({k: asnumpy(v) for k, v in m.final(a).items()})
    if learner.final is not None:
        final.update({k: asnumpy(v) for k, v in learner.final(state).items()})
    if stopping:
        final["stopped"] = stop_time > 0
        final["stopping_time"] = np.where(stop_time > 0, stop_time, t_last)
        final["answer"] = asnumpy(learner.answer(state))
    return outs, final


def _with_horizon(spec: EnvSpec, horizon: int, dtype: str = "float64") -> EnvSpec:
    import dataclasses

    return dataclasses.replace(spec, horizon=horizon, dtype=dtype)


BACKEND_CHOICES = ("auto",) + BACKENDS
