"""Resumable sweeps: a grid of configs times replication blocks.

A *config* is plain JSON data naming a learner and an instance from the
registries, their parameters, the horizon and the backend::

    {"learner": "hedge", "learner_params": {"schedule": "doubling"},
     "instance": "fair_coins", "instance_params": {"n_experts": 10},
     "horizon": 10000, "backend": "numba"}

A sweep runs ``n_reps`` replications of every config, split into blocks of
``block_size``.  Each (config, block) task is idempotent: it builds the
learner and instance itself and calls :func:`expertlab.sim.run` with the
config's seed and ``rep_offset = block * block_size``.  Because every draw is
a pure function of (seed, replication, round, index), the result does not
depend on the block size, the executor, the number of workers or retries.

Design choices
--------------
* **The driver writes, workers compute.**  Tasks return a :class:`RunResult`
  and the driver (the process that called :func:`sweep`) writes each block as
  soon as its result arrives.  Workers therefore need no access to ``out``
  (remote Dask workers need no shared filesystem) and each file has exactly
  one writer.
* **Seeds from content.**  The seed of a config is derived from the root
  seed and the SHA-256 of the canonical JSON of the config's *statistical*
  part (learner, instance, their parameters, horizon) through
  :class:`numpy.random.SeedSequence`.  Adding, removing or reordering configs
  never changes the numbers of the others; ``backend`` and ``checkpoints``
  only say how a run is computed and recorded, so they are left out of the
  seed: the same config on ``numpy`` and ``numba`` gives the same numbers to
  floating-point tolerance.  The folder name (config id) hashes the whole
  config, backend included.
* **Resume.**  Blocks already stored in ``out`` (the layout and the commit protocol
  are described in the user guide's sweeps page) are
  loaded, not recomputed; missing, partial or corrupt ones are computed.
  A stored last block with fewer replications than the current ``n_reps``
  asks for (the sweep grew) is recomputed; any other disagreement between the
  files and the request (another block size, another root seed, fewer
  replications) is an error rather than a silent overwrite.  Temporary files
  a killed writer left in the sweep's folders are deleted first.  Resuming a
  complete sweep with the same settings writes nothing, so a finished sweep
  can be reloaded from a read-only folder.
* **Workers die with their driver.**  The default process pool hands each
  worker the read end of a pipe whose only write end the driver holds; a
  thread in the worker exits the process when it reads end-of-file, that is
  when the driver is gone, however it died (``SIGKILL`` included).  The fork
  server and the resource tracker of :mod:`multiprocessing` then see their
  own pipes close and exit too, so a killed sweep leaves no process behind.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import copy
import dataclasses
import functools
import itertools
import json
import math
import multiprocessing
import numbers
import os
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np

from .._backend import check_backend
from .._validation import check_int
from . import _storage
from ._engine import check_dtype
from ._progress import check_progress, progress_bar
from ._protocol import short_params
from ._result import RunResult, html_table, json_text, mean_se_text, optional_import

__all__ = [
    "CONFIG_KEYS",
    "DEFAULT_BLOCK_SIZE",
    "SweepResult",
    "config_seed",
    "expand_grid",
    "load_sweep",
    "load_sweep_spec",
    "normalize_config",
    "run_block",
    "sweep",
]

#: Keys a config may have (``learner``, ``instance`` and ``horizon`` are required).
CONFIG_KEYS = ("learner", "learner_params", "instance", "instance_params", "horizon", "backend",
               "checkpoints", "dtype")
_REQUIRED = ("learner", "instance", "horizon")
_PARAM_KEYS = ("learner_params", "instance_params")
#: Keys that define the random experiment, hence the seed.
_SEED_KEYS = ("learner", "learner_params", "instance", "instance_params", "horizon")
#: Replications per block when ``block_size`` is not given.
DEFAULT_BLOCK_SIZE = 100
_SPEC_KEYS = ("base", "grid", "configs", "n_reps", "block_size", "seed", "out")


# --------------------------------------------------------------------------
# configs


def default_registries() -> tuple[dict, dict]:
    """The registered learner and environment factories by name, every family together.

    Read from :func:`expertlab.sim.learners` and
    :func:`expertlab.sim.environments`, which every family fills when
    ``expertlab`` is imported, so a sweep can mix learners of any family.

    Returns
    -------
    learners, instances : dict of str to callable

    Examples
    --------
    >>> learners, instances = default_registries()
    >>> all(n in learners for n in ("hedge", "ucb1", "ucbvi", "stepmix", "alf_lb"))
    True
    >>> all(n in instances for n in ("fair_coins", "bernoulli", "garnet_episodic", "routing"))
    True
    """
    from ._registry import environments, learners

    return ({k: v.factory for k, v in learners().items()},
            {k: v.factory for k, v in environments().items()})


def _registries(learners, instances):
    """The factory mappings to use (the package registries when None)."""
    if learners is None or instances is None:
        default_learners, default_instances = default_registries()
    if learners is None:
        learners = default_learners
    elif not isinstance(learners, Mapping):
        raise TypeError(f"learners must be a mapping of name -> factory, got {type(learners).__name__}")
    if instances is None:
        instances = default_instances
    elif not isinstance(instances, Mapping):
        raise TypeError(f"instances must be a mapping of name -> factory, got {type(instances).__name__}")
    return learners, instances


def normalize_config(config: Mapping[str, Any], *, learners=None, instances=None,
                     name: str = "config") -> dict:
    """Check a config and return its normal form (plain JSON data, defaults filled in).

    Parameters
    ----------
    config : mapping
        Keys :data:`CONFIG_KEYS`: ``learner`` and ``instance`` (registered
        names), ``horizon`` (int), and optionally ``learner_params`` and
        ``instance_params`` (mappings of keyword arguments for the factories,
        default ``{}``), ``backend`` (default ``"auto"``), ``checkpoints``
        (a list of rounds, default the log-spaced grid of :func:`sim.run`)
        and ``dtype`` (``"float64"``, the default, or ``"float32"``: the
        ``dtype`` of :func:`sim.run`; it does not change the config's seed).
    learners, instances : mapping of str to callable, optional
        Factories by name; default ``default_registries`` (the experts'
        and the bandits' registries together).
    name : str
        How to call the config in error messages.

    Returns
    -------
    dict
        With every key except ``checkpoints`` and ``dtype`` present;
        ``checkpoints`` only when given, as a sorted list of distinct ints,
        and ``dtype`` only when it is ``"float32"`` (so the configs and ids
        of float64 sweeps are those they had before runs had a dtype).

    Raises
    ------
    ValueError, TypeError
        Naming the offending key.

    Examples
    --------
    >>> normalize_config({"learner": "hedge", "instance": "fair_coins", "horizon": 100})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'learner': 'hedge', 'learner_params': {}, 'instance': 'fair_coins',
     'instance_params': {}, 'horizon': 100, 'backend': 'auto'}
    """
    learners, instances = _registries(learners, instances)
    if not isinstance(config, Mapping):
        raise TypeError(f"{name} must be a mapping (a config dict), got {type(config).__name__}")
    unknown = [k for k in config if k not in CONFIG_KEYS]
    if unknown:
        raise ValueError(f"{name} has unknown key(s) {unknown}; config keys are {list(CONFIG_KEYS)}")
    missing = [k for k in _REQUIRED if k not in config]
    if missing:
        raise ValueError(f"{name} lacks required key(s) {missing}")
    for key, registry in (("learner", learners), ("instance", instances)):
        value = config[key]
        if not isinstance(value, str):
            raise TypeError(f"{name}[{key!r}] must be a registered name (str), got {type(value).__name__}")
        if value not in registry:
            raise ValueError(f"{name}: unknown {key} {value!r}; registered: {', '.join(sorted(registry))}")
    params = {}
    for key in _PARAM_KEYS:
        value = config.get(key)
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            raise TypeError(f"{name}[{key!r}] must be a mapping of keyword arguments, got {type(value).__name__}")
        params[key] = json.loads(_storage.canonical_json(value, f"{name}[{key!r}]"))
    horizon = check_int(config["horizon"], f"{name}['horizon']")
    out = {"learner": config["learner"], "learner_params": params["learner_params"],
           "instance": config["instance"], "instance_params": params["instance_params"],
           "horizon": horizon}
    backend = config.get("backend", "auto")
    try:
        if backend != "auto":
            check_backend(backend)
    except ValueError as exc:
        raise ValueError(f"{name}['backend']: {exc}") from None
    out["backend"] = backend
    ckpts = config.get("checkpoints")
    if ckpts is not None:
        arr = np.asarray(ckpts)
        if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{name}['checkpoints'] must be a non-empty list of ints, got {ckpts!r}")
        arr = np.unique(arr)
        if arr[0] < 1 or arr[-1] > horizon:
            raise ValueError(f"{name}['checkpoints'] must lie in [1, horizon={horizon}], got {ckpts!r}")
        out["checkpoints"] = [int(x) for x in arr]
    try:
        dtype = check_dtype(config.get("dtype"))
    except ValueError as exc:
        raise ValueError(f"{name}['dtype']: {exc}") from None
    if dtype != "float64":
        out["dtype"] = dtype
    return out


def _build(config: Mapping[str, Any], learners, instances):
    """Build the (learner, instance) pair of a normalised config."""
    learner = learners[config["learner"]](**config["learner_params"])
    instance = instances[config["instance"]](**config["instance_params"])
    return learner, instance


def _check_buildable(config, learners, instances, name):
    """Build a config once in the driver, so bad parameters fail before any task runs."""
    try:
        learner, instance = _build(config, learners, instances)
    except TypeError as exc:
        raise TypeError(f"{name}: {exc}") from exc
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from exc
    from ._engine import _check_pair_dtype, _fast_path, default_metric_names, is_environment

    if not is_environment(instance):
        raise TypeError(f"{name}: instance {config['instance']!r} does not build an environment "
                        f"(got {type(instance).__name__})")
    feedback = getattr(learner, "feedback", None)
    if feedback != instance.spec.feedback:
        raise ValueError(f"{name}: learner {config['learner']!r} takes {feedback!r} feedback but instance "
                         f"{config['instance']!r} gives {instance.spec.feedback!r} feedback")
    backend = config["backend"]
    fast = _fast_path(backend, learner, instance, default_metric_names(instance))
    if backend in ("numba", "cuda") and fast is None:
        raise ValueError(f"{name}: learner {config['learner']!r} has no compiled path on instance "
                         f"{config['instance']!r} for backend={backend!r}; use backend='auto' or 'numpy'")
    dtype = config.get("dtype", "float64")
    try:
        _check_pair_dtype(learner, instance, dtype)
        if fast is not None and dtype not in fast.dtypes:
            raise ValueError(f"dtype={dtype!r} is not available on backend={backend!r}")
    except ValueError as exc:
        raise ValueError(f"{name}['dtype']: {exc}") from None


def _check_root_seed(seed) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be a non-negative int (a sweep needs a fixed seed to be resumable), "
                        f"got {type(seed).__name__} {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    return int(seed)


def config_seed(config: Mapping[str, Any], seed: int = 0) -> int:
    """The seed of a normalised config under root seed ``seed``.

    ``SeedSequence(entropy=seed, spawn_key=words)`` where ``words`` are the
    first four 32-bit words of the SHA-256 of the canonical JSON of the
    config's learner, instance, their parameters and horizon; the first
    64-bit word it generates is the seed passed to :func:`sim.run`.

    Parameters
    ----------
    config : mapping
        A config as returned by ``normalize_config``.
    seed : int
        Root seed of the sweep.

    Returns
    -------
    int
        In ``[0, 2**64)``.

    Examples
    --------
    >>> c = normalize_config({"learner": "hedge", "instance": "fair_coins", "horizon": 100})
    >>> config_seed(c, 0) == config_seed(dict(c, backend="numba"), 0)
    True
    >>> config_seed(c, 0) == config_seed(c, 1)
    False
    """
    seed = _check_root_seed(seed)
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a mapping, got {type(config).__name__}")
    missing = [k for k in _SEED_KEYS if k not in config]
    if missing:
        raise ValueError(f"config lacks {missing}; pass it through normalize_config first")
    digest = _storage.config_hash({k: config[k] for k in _SEED_KEYS})
    words = tuple(int.from_bytes(digest[4 * j:4 * j + 4], "little") for j in range(4))
    ss = np.random.SeedSequence(entropy=seed, spawn_key=words)
    return int(ss.generate_state(1, dtype=np.uint64)[0])


def expand_grid(base: Mapping[str, Any], grid: Mapping[str, list]) -> list[dict]:
    """The configs of a grid: ``base`` with every combination of ``grid`` values.

    Parameters
    ----------
    base : mapping
        A config (see ``normalize_config``) shared by all grid points.
    grid : mapping of str to list
        Keys are config keys (``"horizon"``, ``"learner"``, ...) or dotted
        keys into the parameter mappings (``"learner_params.eta"``,
        ``"instance_params.n_experts"``); values are non-empty lists.  The
        last key varies fastest.

    Returns
    -------
    list of dict
        ``prod(len(v) for v in grid.values())`` configs (deep copies).

    Raises
    ------
    ValueError
        For an unknown key, a dotted key that does not go into
        ``learner_params``/``instance_params``, or an empty list.

    Examples
    --------
    >>> base = {"learner": "hedge", "instance": "fair_coins", "horizon": 100}
    >>> cfgs = expand_grid(base, {"instance_params.n_experts": [2, 8], "horizon": [10, 100]})
    >>> [(c["instance_params"]["n_experts"], c["horizon"]) for c in cfgs]
    [(2, 10), (2, 100), (8, 10), (8, 100)]
    """
    if not isinstance(base, Mapping):
        raise TypeError(f"base must be a mapping (a config dict), got {type(base).__name__}")
    if not isinstance(grid, Mapping):
        raise TypeError(f"grid must be a mapping of key -> list of values, got {type(grid).__name__}")
    unknown = [k for k in base if k not in CONFIG_KEYS]
    if unknown:
        raise ValueError(f"base has unknown key(s) {unknown}; config keys are {list(CONFIG_KEYS)}")
    paths, values = [], []
    for key, vals in grid.items():
        if not isinstance(key, str):
            raise TypeError(f"grid keys must be strings, got {type(key).__name__} {key!r}")
        parts = key.split(".")
        top = parts[0]
        if top not in CONFIG_KEYS:
            raise ValueError(f"grid has unknown key {key!r}; use a config key ({', '.join(CONFIG_KEYS)}) "
                             "or a dotted key such as 'instance_params.n_experts'")
        if len(parts) > 2 or (len(parts) == 2 and (top not in _PARAM_KEYS or not parts[1])):
            raise ValueError(f"grid key {key!r}: only learner_params.<name> and instance_params.<name> "
                             "may be dotted")
        if isinstance(vals, (str, bytes, Mapping)) or not isinstance(vals, (list, tuple)):
            raise TypeError(f"grid[{key!r}] must be a list of values, got {type(vals).__name__}")
        if len(vals) == 0:
            raise ValueError(f"grid[{key!r}] is empty; give at least one value")
        paths.append(tuple(parts))
        values.append(list(vals))
    for a in paths:
        for b in paths:
            if a != b and b[:len(a)] == a:
                raise ValueError(f"grid keys {'.'.join(a)!r} and {'.'.join(b)!r} overlap")
    configs = []
    for combo in itertools.product(*values):
        cfg = copy.deepcopy(dict(base))
        for path, value in zip(paths, combo):
            if len(path) == 1:
                cfg[path[0]] = copy.deepcopy(value)
            else:
                params = cfg.get(path[0])
                if params is None:
                    params = {}
                elif not isinstance(params, Mapping):
                    raise TypeError(f"base[{path[0]!r}] must be a mapping, got {type(params).__name__}")
                cfg[path[0]] = {**params, path[1]: copy.deepcopy(value)}
        configs.append(cfg)
    return configs


def load_sweep_spec(path) -> dict:
    """Read a sweep file (JSON or TOML) into keyword arguments for :func:`sweep`.

    The file has the keys ``base`` (a config, required), ``grid`` (dotted
    keys to lists, optional, see :func:`expand_grid`), ``n_reps`` (required),
    ``block_size`` (default ``DEFAULT_BLOCK_SIZE``), ``seed``
    (default 0) and ``out`` (optional; a relative path is taken from the
    sweep file's folder).  In TOML::

        n_reps = 200
        block_size = 50
        seed = 1

        [base]
        learner = "hedge"
        instance = "fair_coins"
        horizon = 10000
        backend = "numba"

        [base.instance_params]
        n_experts = 10

        [grid]
        "learner_params.schedule" = ["anytime", "doubling"]
        "instance_params.n_experts" = [2, 10, 100]

    and in JSON the same nesting:
    ``{"base": {"learner": "hedge", ...}, "grid": {"learner_params.schedule": [...]}, "n_reps": 200}``.
    Instead of ``base`` and ``grid``, a list ``configs`` (``[[configs]]``
    tables in TOML) gives the configs one by one, so one sweep can mix
    learners and environments of every family::

        n_reps = 40

        [[configs]]
        learner = "ucb1"
        instance = "bernoulli"
        horizon = 2000
        instance_params = { means = [0.3, 0.5, 0.7] }

        [[configs]]
        learner = "ucbvi"
        instance = "garnet_episodic"
        horizon = 200

    Parameters
    ----------
    path : str or path-like
        A ``.json`` or ``.toml`` file.

    Returns
    -------
    dict
        ``{"configs": [...], "n_reps": int, "block_size": int, "seed": int}``,
        plus ``"out"`` (a str) when the file names one; to be called as
        ``sweep(**spec, scheduler=...)``.

    Raises
    ------
    ValueError
        For another file extension, an unparsable file, a missing or unknown
        key, or a bad grid.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> text = '''
    ... n_reps = 8
    ... [base]
    ... learner = "hedge"
    ... instance = "fair_coins"
    ... horizon = 50
    ... [grid]
    ... "instance_params.n_experts" = [2, 4]
    ... '''
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = pathlib.Path(tmp) / "sweep.toml"
    ...     _ = p.write_text(text)
    ...     spec = load_sweep_spec(p)
    >>> len(spec["configs"]), spec["n_reps"], spec["block_size"], spec["seed"]
    (2, 8, 100, 0)
    """
    import tomllib

    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path-like, got {type(path).__name__}")
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".json", ".toml"):
        raise ValueError(f"path must end in .json or .toml, got {str(path)!r}")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ValueError(f"path {str(path)!r}: cannot read the sweep file ({exc})") from exc
    try:
        spec = json.loads(raw.decode("utf-8")) if suffix == ".json" else tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"path {str(path)!r}: not valid {suffix[1:].upper()} ({exc})") from exc
    if not isinstance(spec, dict):
        raise ValueError(f"path {str(path)!r}: the sweep file must hold a table/object at top level")
    unknown = [k for k in spec if k not in _SPEC_KEYS]
    if unknown:
        raise ValueError(f"path {str(path)!r}: unknown key(s) {unknown}; sweep files have {list(_SPEC_KEYS)}")
    if "n_reps" not in spec:
        raise ValueError(f"path {str(path)!r}: missing required key 'n_reps'")
    if ("base" in spec) == ("configs" in spec):
        raise ValueError(f"path {str(path)!r}: give either 'base' (with an optional 'grid') or a list 'configs'")
    if "configs" in spec:
        if "grid" in spec:
            raise ValueError(f"path {str(path)!r}: 'grid' goes with 'base', not with 'configs'")
        configs = spec["configs"]
        if not isinstance(configs, list) or not configs or not all(isinstance(c, dict) for c in configs):
            raise ValueError(f"path {str(path)!r}: 'configs' must be a non-empty list of tables/objects")
        configs = [dict(c) for c in configs]
    else:
        configs = expand_grid(spec["base"], spec.get("grid", {}))
    args = {
        "configs": configs,
        "n_reps": check_int(spec["n_reps"], "n_reps"),
        "block_size": check_int(spec.get("block_size", DEFAULT_BLOCK_SIZE), "block_size"),
        "seed": _check_root_seed(spec.get("seed", 0)),
    }
    if "out" in spec:
        if not isinstance(spec["out"], str) or not spec["out"]:
            raise TypeError(f"path {str(path)!r}: 'out' must be a non-empty string, got {spec['out']!r}")
        args["out"] = str(p.parent / spec["out"])
    return args


# --------------------------------------------------------------------------
# the task


def run_block(config: Mapping[str, Any], block: int, block_size: int, n_reps: int, seed: int,
              learners=None, instances=None) -> RunResult:
    """Run one (config, block) task: the task function shipped to workers.

    Builds the learner and instance from the config and runs replications
    ``block * block_size .. min((block + 1) * block_size, n_reps) - 1`` with
    :func:`sim.run`.  It takes plain data, writes nothing and is idempotent:
    the same arguments give the same arrays on any worker.

    Parameters
    ----------
    config : mapping
        A normalised config (``normalize_config``).
    block : int
        Block index ``k``.
    block_size : int
        Replications per block.
    n_reps : int
        Replications of the whole sweep (to size the last block).
    seed : int
        The config's seed (``config_seed``), the same for all its blocks.
    learners, instances : mapping, optional
        Factories by name; default the package registries (imported in the
        worker).

    Returns
    -------
    RunResult
        With ``rep_offset = block * block_size``.

    Examples
    --------
    >>> c = normalize_config({"learner": "hedge", "instance": "fair_coins", "horizon": 30})
    >>> res = run_block(c, 2, block_size=4, n_reps=10, seed=7)
    >>> res.rep_offset, res.n_reps
    (8, 2)
    """
    from ._engine import pick_backend, run

    learners, instances = _registries(learners, instances)
    block_size = check_int(block_size, "block_size")
    n_reps = check_int(n_reps, "n_reps")
    block = check_int(block, "block", minimum=0, maximum=(n_reps - 1) // block_size)
    rep_offset = block * block_size
    size = min(block_size, n_reps - rep_offset)
    learner, instance = _build(config, learners, instances)
    # "auto" is resolved for the whole config (all n_reps replications), so that every block of it, whatever
    # its size, runs on the backend one run of the config would use
    dtype = config.get("dtype", "float64")
    backend = pick_backend(learner, instance, config["backend"], horizon=config["horizon"], n_reps=n_reps,
                           dtype=dtype)
    return run(learner, instance, config["horizon"], size, seed, backend,
               rep_offset=rep_offset, checkpoints=config.get("checkpoints"), progress=False, dtype=dtype)


def _init_worker(driver_alive=None) -> None:
    """Initialiser of the default process pool: one Numba thread per worker process.

    ``driver_alive`` is the read end of a pipe whose write end only the driver
    holds (see :func:`_open_executor`); a daemon thread blocks reading it and
    ends the worker with :func:`os._exit` at end-of-file, i.e. as soon as the
    driver is gone, whatever killed it.  Without this a worker of a killed
    driver would wait for tasks forever, and keep the fork server and the
    resource tracker alive with it.
    """
    try:
        import numba

        numba.set_num_threads(1)
    except Exception:  # pragma: no cover - numba's threading layer unavailable
        pass
    if driver_alive is not None:
        threading.Thread(target=_exit_with_driver, args=(driver_alive,), name="expertlab-driver-watch",
                         daemon=True).start()


#: Exit status of a worker that ended because its driver died.
_ORPHAN_EXIT = 70


def _exit_with_driver(driver_alive) -> None:
    """Block until ``driver_alive`` (a pipe's read end) reaches end-of-file, then end this process."""
    fd = driver_alive.fileno()
    try:
        while os.read(fd, 1):  # the driver never writes; data would only be ignored
            pass
    except OSError:  # pragma: no cover - the descriptor was closed under us: cannot watch any more
        return
    os._exit(_ORPHAN_EXIT)


# --------------------------------------------------------------------------
# results


@dataclasses.dataclass(frozen=True, repr=False)
class SweepResult:
    """The results of a sweep, one concatenated :class:`RunResult` per config.

    Attributes
    ----------
    configs : tuple of dict
        Normalised configs, in the order given.
    config_ids : tuple of str
        Their ids (folder names under ``out``).
    seeds : tuple of int
        Their derived seeds (see ``config_seed``).
    results : tuple of RunResult
        All ``n_reps`` replications of each config (``RunResult.concat`` of
        its blocks).
    n_reps, block_size, seed : int
        Settings of the sweep (``seed`` is the root seed).
    out : str or None
        The sweep folder, if any.
    n_computed, n_loaded : int
        Blocks computed by this call and blocks loaded from ``out``.
    elapsed_time : float
        Wall-clock seconds the call took (:func:`sweep` or
        :func:`load_sweep`), from start to return.
    compute_time : float
        Seconds spent in the time loop, summed over every block of every
        config (loaded blocks count the time stored with them).  With
        parallel workers it exceeds ``elapsed_time``.

    Notes
    -----
    Export: :meth:`to_xarray` (a ``"config"`` dimension) and
    :meth:`to_pandas` (a long table) need the ``data`` extra
    (``pip install expertlab[data]``).  In a notebook a sweep shows as a
    table of its configs (``_repr_html_``).
    """

    configs: tuple
    config_ids: tuple
    seeds: tuple
    results: tuple
    n_reps: int
    block_size: int
    seed: int
    out: str | None
    n_computed: int
    n_loaded: int
    elapsed_time: float

    def __len__(self) -> int:
        return len(self.configs)

    @property
    def compute_time(self) -> float:
        """Time-loop seconds summed over all blocks (see the class docstring)."""
        return float(sum(r.wall_time for r in self.results))

    def _timing_text(self) -> str:
        n_blocks = self.n_computed + self.n_loaded
        return (f"elapsed {self.elapsed_time:.2f} s in this call ({self.n_computed} blocks computed, "
                f"{self.n_loaded} loaded); compute {self.compute_time:.2f} s summed over the {n_blocks} blocks")

    @staticmethod
    def _headline_metric(res: RunResult) -> str | None:
        return "regret" if "regret" in res.metrics else next(iter(res.metrics), None)

    def __repr__(self) -> str:
        lines = [f"SweepResult({len(self)} configs x {self.n_reps} reps, block_size={self.block_size}, "
                 f"seed={self.seed}, out={self.out!r})", "  " + self._timing_text()]
        shown = len(self) if len(self) <= 6 else 5
        for cid, cfg, res in itertools.islice(zip(self.config_ids, self.configs, self.results), shown):
            metric = self._headline_metric(res)
            tail = f": {metric} {mean_se_text(res, metric)}" if metric else ""
            lines.append(f"  {cid} {cfg['learner']}({short_params(cfg['learner_params'])}) on "
                         f"{cfg['instance']}({short_params(cfg['instance_params'])}), horizon "
                         f"{cfg['horizon']}{tail}")
        if shown < len(self):
            lines.append(f"  ... and {len(self) - shown} more configs")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        limit = 30
        metrics = list(dict.fromkeys(m for r in self.results for m in r.metrics))
        head = ["config", "learner", "environment", "unit", "horizon", "n_reps", "seed", "backend",
                *(f"{m} (mean ± se)" for m in metrics)]
        rows = []
        for cid, cfg, res in itertools.islice(zip(self.config_ids, self.configs, self.results), limit):
            rows.append([cid, f"{cfg['learner']}({short_params(cfg['learner_params'])})",
                         f"{cfg['instance']}({short_params(cfg['instance_params'])})", res.unit, res.horizon,
                         res.n_reps, res.seed, res.backend,
                         *(mean_se_text(res, m) if m in res.metrics else "" for m in metrics)])
        if len(self) > limit:
            rows.append([f"... and {len(self) - limit} more configs"] + [""] * (len(head) - 1))
        caption = (f"SweepResult: {len(self)} configs x {self.n_reps} reps, seed={self.seed}; "
                   + self._timing_text())
        return html_table(head, rows, caption=caption)

    def result(self, key) -> RunResult:
        """The :class:`RunResult` of config ``key`` (an index or a config id)."""
        if isinstance(key, str):
            if key not in self.config_ids:
                raise KeyError(f"no config with id {key!r}; ids are {list(self.config_ids)}")
            return self.results[self.config_ids.index(key)]
        if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer)):
            raise TypeError(f"key must be an int index or a config id, got {type(key).__name__}")
        return self.results[key]

    def summary(self, metric: str = "regret") -> list[dict]:
        """One row per config: the mean and standard error of ``metric`` at the last checkpoint.

        Parameters
        ----------
        metric : str
            ``"regret"`` or a metric of the runs (``"tracking_regret"``, ...).

        Returns
        -------
        list of dict
            Keys ``config_id``, ``learner``, ``learner_params``, ``instance``,
            ``instance_params``, ``horizon``, ``backend``, ``n_reps``,
            ``metric``, ``mean``, ``stderr``, ``compute_time`` (the config's
            time-loop seconds summed over its blocks, not elapsed time:
            blocks may have run in parallel); ready for
            ``pandas.DataFrame(rows)``.

        Examples
        --------
        >>> res = sweep([{"learner": "hedge", "instance": "fair_coins", "horizon": 20}], n_reps=4,
        ...             executor="serial")
        >>> row = res.summary()[0]
        >>> row["instance"], row["n_reps"], row["mean"] == float(res.results[0].mean()[-1])
        ('fair_coins', 4, True)
        >>> res.summary_text().splitlines()[0].split()[:3]
        ['config_id', 'learner', 'instance']
        """
        rows = []
        for cid, cfg, res in zip(self.config_ids, self.configs, self.results):
            rows.append({
                "config_id": cid,
                "learner": cfg["learner"],
                "learner_params": cfg["learner_params"],
                "instance": cfg["instance"],
                "instance_params": cfg["instance_params"],
                "horizon": cfg["horizon"],
                "backend": cfg["backend"],
                "n_reps": res.n_reps,
                "metric": metric,
                "mean": float(res.mean(metric)[-1]),
                "stderr": float(res.stderr(metric)[-1]),
                "compute_time": float(res.wall_time),
            })
        return rows

    def summary_text(self, metric: str = "regret") -> str:
        """:meth:`summary` as a fixed-width text table, and a last line with the elapsed and compute times.

        The column ``compute_s`` is each config's time-loop seconds summed
        over its blocks; the last line gives the call's elapsed wall-clock
        time and the compute time of all blocks (larger when blocks ran in
        parallel).
        """
        def label(name, params):
            return f"{name}({', '.join(f'{k}={v!r}' for k, v in params.items())})"

        head = ("config_id", "learner", "instance", "horizon", "backend", "n_reps", f"{metric} (mean ± se)",
                "compute_s")
        body = [(r["config_id"], label(r["learner"], r["learner_params"]),
                 label(r["instance"], r["instance_params"]), str(r["horizon"]), r["backend"], str(r["n_reps"]),
                 f"{r['mean']:.4g} ± {r['stderr']:.2g}", f"{r['compute_time']:.2f}")
                for r in self.summary(metric)]
        widths = [max(len(row[j]) for row in [head, *body]) for j in range(len(head))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [head, *body]]
        lines.insert(1, "  ".join("-" * w for w in widths))
        lines.append(self._timing_text())
        return "\n".join(lines)

    # ------------------------------------------------------------------ export

    def _config_coords(self) -> dict[str, np.ndarray]:
        """Coordinates along ``config``: id, names, horizon, unit, backend, seed, n_reps, parameters."""
        cfgs, res = self.configs, self.results
        coords = {
            "config": np.array(self.config_ids, dtype=object),
            "learner": np.array([c["learner"] for c in cfgs], dtype=object),
            "instance": np.array([c["instance"] for c in cfgs], dtype=object),
            "environment": np.array([r.environment for r in res], dtype=object),
            "horizon": np.array([int(c["horizon"]) for c in cfgs], dtype=np.int64),
            "unit": np.array([r.unit for r in res], dtype=object),
            "backend": np.array([r.backend for r in res], dtype=object),
            "seed": np.array([str(int(r.seed)) for r in res], dtype=object),
            "n_reps": np.array([int(r.n_reps) for r in res], dtype=np.int64),
        }
        for group in _PARAM_KEYS:
            for key in dict.fromkeys(k for c in cfgs for k in c[group]):
                coords[f"{group}.{key}"] = _param_coord([c[group].get(key, _UNSET) for c in cfgs])
        return coords

    def _check_exportable(self) -> None:
        if not self.results:
            raise ValueError("this SweepResult holds no config to export (load_sweep(allow_incomplete=True) "
                             "found no finished block)")

    def to_xarray(self):
        """The sweep as one ``xarray.Dataset`` with a ``config`` dimension (needs the ``data`` extra).

        Configs may differ in checkpoints (another horizon, or explicit
        ``checkpoints``), in replications (an incomplete sweep loaded with
        ``allow_incomplete=True``) and in metrics (configs of different
        families): the dataset is aligned on the **union** of the checkpoints
        and of the replication indices, and holds the union of the metrics;
        a value a config does not have is NaN.  A variable that needs such a
        fill is float64; one every config has on the common grid keeps its
        dtype.

        Returns
        -------
        xarray.Dataset
            Dims ``config``, ``checkpoint``, ``rep``: each metric as
            ``(config, checkpoint, rep)``, each final array as ``final_<key>``
            with dims ``(config, rep, ...)`` (further axes padded with NaN to
            the largest size).  Coordinates along ``config``: ``config`` (the
            config ids), ``learner``, ``instance``, ``environment``,
            ``horizon``, ``unit``, ``backend`` (the one that ran), ``seed``
            (the config's seed as decimal text), ``n_reps``, and one
            ``learner_params.<name>`` / ``instance_params.<name>`` per
            parameter set in any config (numbers as numbers with NaN where a
            config does not set it; strings, and JSON text for anything
            else, with ``""`` there).  Attributes: the root ``seed`` (text),
            ``n_reps``, ``block_size``, ``elapsed_time``, ``compute_time``,
            ``expertlab_version`` and ``out`` when there is one.

        Raises
        ------
        ImportError
            Without xarray (``pip install expertlab[data]``).
        ValueError
            If the sweep holds no config, a metric's name is that of a
            coordinate, or a final array has a different number of axes in
            two configs.

        Examples
        --------
        >>> cfgs = expand_grid({"learner": "hedge", "instance": "fair_coins", "horizon": 50},
        ...                    {"instance_params.n_experts": [2, 4]})
        >>> ds = sweep(cfgs, n_reps=3, executor="serial").to_xarray()
        >>> ds["regret"].dims, [int(n) for n in ds["instance_params.n_experts"]]
        (('config', 'checkpoint', 'rep'), [2, 4])
        """
        xr = optional_import("xarray")
        from .. import __version__

        self._check_exportable()
        coords = self._config_coords()
        results = self.results
        ckpts = functools.reduce(np.union1d, [np.asarray(r.checkpoints) for r in results])
        rep_of = [r.rep_offset + np.arange(r.n_reps) for r in results]
        reps = functools.reduce(np.union1d, rep_of)
        ck_idx = [np.searchsorted(ckpts, r.checkpoints) for r in results]
        rep_idx = [np.searchsorted(reps, rr) for rr in rep_of]
        same_ck = [np.array_equal(r.checkpoints, ckpts) for r in results]
        same_rep = [np.array_equal(rr, reps) for rr in rep_of]
        names = [r._export_names() for r in results]
        taken = set(coords) | {"checkpoint", "rep"}
        data_vars = {}
        for key, var in dict.fromkeys(kv for m, _ in names for kv in m.items()):
            if var in taken:
                raise ValueError(f"cannot export metric {key!r}: a coordinate along 'config' has that name")
            arrs = [r.metrics.get(key) for r in results]
            if all(a is not None for a in arrs) and all(same_ck) and all(same_rep):
                data = np.stack([np.asarray(a) for a in arrs])
            else:
                data = np.full((len(results), ckpts.size, reps.size), np.nan)
                for i, a in enumerate(arrs):
                    if a is not None:
                        data[i][np.ix_(ck_idx[i], rep_idx[i])] = a
            data_vars[var] = (("config", "checkpoint", "rep"), data)
        for key, var in dict.fromkeys(kv for _, f in names for kv in f.items()):
            if var in taken or var in data_vars:
                raise ValueError(f"cannot export final {key!r}: its variable name {var!r} is taken")
            arrs = [None if key not in r.final else np.asarray(r.final[key]) for r in results]
            ndims = {a.ndim for a in arrs if a is not None}
            if len(ndims) > 1:
                raise ValueError(f"cannot export final {key!r}: its arrays have {sorted(ndims)} axes in different "
                                 "configs")
            ndim = ndims.pop()
            trailing = tuple(max(a.shape[j] for a in arrs if a is not None) for j in range(1, ndim))
            if all(a is not None and a.shape[1:] == trailing for a in arrs) and all(same_rep):
                data = np.stack(arrs)
            else:
                data = np.full((len(results), reps.size) + trailing, np.nan)
                for i, a in enumerate(arrs):
                    if a is not None:
                        data[i][(rep_idx[i],) + tuple(slice(0, s) for s in a.shape[1:])] = a
            data_vars[var] = (("config", "rep") + tuple(f"{var}_dim{j}" for j in range(1, ndim)), data)
        attrs = {"seed": str(self.seed), "n_reps": int(self.n_reps), "block_size": int(self.block_size),
                 "elapsed_time": float(self.elapsed_time), "compute_time": self.compute_time,
                 "expertlab_version": __version__}
        if self.out is not None:
            attrs["out"] = str(self.out)
        all_coords = {"config": coords.pop("config"), "checkpoint": ckpts, "rep": reps}
        all_coords.update({name: ("config", values) for name, values in coords.items()})
        return xr.Dataset(data_vars, coords=all_coords, attrs=attrs)

    def to_pandas(self):
        """The metrics of every config as one long ``pandas.DataFrame`` (needs the ``data`` extra).

        Returns
        -------
        pandas.DataFrame
            The rows of :meth:`RunResult.to_pandas` of each config, in
            config order, with the coordinates of :meth:`to_xarray` along
            ``config`` as columns: ``config`` (the id), ``learner``,
            ``instance``, ``environment``, ``horizon``, ``unit``,
            ``backend``, ``seed``, ``n_reps``, the ``learner_params.<name>``
            / ``instance_params.<name>`` columns, then ``checkpoint``,
            ``rep``, ``metric``, ``value``.  Configs keep their own
            checkpoints (nothing is filled in).

        Raises
        ------
        ImportError
            Without pandas (``pip install expertlab[data]``).
        ValueError
            If the sweep holds no config.

        Examples
        --------
        >>> cfgs = expand_grid({"learner": "hedge", "instance": "fair_coins", "horizon": 50},
        ...                    {"instance_params.n_experts": [2, 4]})
        >>> df = sweep(cfgs, n_reps=3, executor="serial").to_pandas()
        >>> sorted(set(df["instance_params.n_experts"])), list(df.columns[-4:])
        ([2, 4], ['checkpoint', 'rep', 'metric', 'value'])
        """
        pd = optional_import("pandas")
        self._check_exportable()
        parts = [r._tidy_columns() for r in self.results]
        counts = np.array([p["value"].size for p in parts])
        cols = {name: np.repeat(values, counts) for name, values in self._config_coords().items()}
        for name in ("checkpoint", "rep", "metric", "value"):
            if name in cols:
                raise ValueError(f"cannot export: a config parameter column is named {name!r}")
            cols[name] = np.concatenate([p[name] for p in parts])
        return pd.DataFrame(cols)


#: Marks a parameter a config does not set.
_UNSET = object()


def _param_coord(values: list) -> np.ndarray:
    """One parameter's values along ``config`` (``_UNSET`` where a config does not set it).

    All booleans: bool; all integers: int64; all numbers: float64 with NaN
    where unset; all strings: the strings with ``""`` where unset; otherwise
    JSON text with ``""`` where unset.
    """
    present = [v for v in values if v is not _UNSET]
    complete = len(present) == len(values)

    def is_bool(v):
        return isinstance(v, (bool, np.bool_))

    if complete and all(is_bool(v) for v in present):
        return np.array(values, dtype=bool)
    if all(isinstance(v, numbers.Real) and not is_bool(v) for v in present):
        if complete and all(isinstance(v, numbers.Integral) and -2 ** 63 <= v < 2 ** 63 for v in present):
            return np.array(values, dtype=np.int64)
        return np.array([np.nan if v is _UNSET else float(v) for v in values], dtype=np.float64)
    if all(isinstance(v, str) for v in present):
        return np.array(["" if v is _UNSET else v for v in values], dtype=object)
    return np.array(["" if v is _UNSET else json_text(v) for v in values], dtype=object)


# --------------------------------------------------------------------------
# executors


def _mp_context():
    """Start method of the default pool: never plain ``fork``.

    Forking a driver that already runs Numba or Dask threads can deadlock.
    Where available a fork server is used, with this module preloaded: the
    package is imported once in a single-threaded server and workers fork
    from it, instead of each importing it afresh as under ``spawn``.
    """
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload([__name__])
        return ctx
    return multiprocessing.get_context("spawn")  # pragma: no cover - Windows


@contextlib.contextmanager
def _open_executor(executor, scheduler):
    """Yield the executor to submit to (or ``"serial"``); close what this call created."""
    if scheduler is not None:
        if executor is not None:
            raise ValueError("give either executor or scheduler, not both")
        if not isinstance(scheduler, str):
            raise TypeError(f"scheduler must be an address string such as 'tcp://host:8786', "
                            f"got {type(scheduler).__name__}")
        try:
            import distributed
        except ImportError as exc:
            raise ImportError("sweep(scheduler=...) needs dask.distributed; install the 'dask' extra: "
                              "pip install 'expertlab[dask]'") from exc
        client = distributed.Client(scheduler)
        try:
            yield client
        finally:
            client.close()
        return
    if executor is None:
        ctx = _mp_context()
        # Workers get the read end; the write end stays here only (pipes are not inherited by the
        # fork server or by spawned processes), so its end-of-file tells a worker its driver is gone.
        alive_r, alive_w = ctx.Pipe(duplex=False)
        try:
            pool = cf.ProcessPoolExecutor(max_workers=os.cpu_count() or 1, mp_context=ctx,
                                          initializer=_init_worker, initargs=(alive_r,))
            try:
                yield pool
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
        finally:
            alive_w.close()
            alive_r.close()
        return
    if isinstance(executor, str):
        if executor != "serial":
            raise ValueError(f"executor must be 'serial', None or an Executor, got {executor!r}")
        yield "serial"
        return
    if not callable(getattr(executor, "submit", None)):
        raise TypeError(f"executor must have a submit method (a concurrent.futures.Executor or a "
                        f"dask.distributed.Client), got {type(executor).__name__}")
    yield executor


def _completed(executor, tasks, args_of) -> Iterator[tuple[Any, RunResult | None, BaseException | None]]:
    """Yield ``(task, result, error)`` as tasks finish, in completion order."""
    if executor == "serial":
        for task in tasks:
            try:
                res = run_block(*args_of(task))
            except Exception as exc:
                yield task, None, exc
            else:
                yield task, res, None
        return
    futures = {}
    try:
        for task in tasks:
            futures[executor.submit(run_block, *args_of(task))] = task
        if all(isinstance(f, cf.Future) for f in futures):
            done_iter = cf.as_completed(list(futures))
        else:
            import distributed

            done_iter = distributed.as_completed(list(futures))
        for fut in done_iter:
            task = futures.pop(fut)
            try:
                res = fut.result()
            except Exception as exc:
                yield task, None, exc
            else:
                yield task, res, None
    finally:
        for fut in futures:
            fut.cancel()


# --------------------------------------------------------------------------
# stored blocks


def _stored_block(directory: Path, k: int, *, seed: int, rep_offset: int, size: int,
                  block_size: int, loading: bool = False) -> tuple[RunResult | None, str | None]:
    """``(block, None)`` if stored block ``k`` is finished and is what the sweep asks for, else ``(None, why)``.

    ``why`` names the file at fault and what is wrong with it (missing,
    unreadable, wrong shape, too few replications).  Raises ValueError when
    the stored block contradicts the request in a way that recomputing would
    hide (another block size, seed or a smaller ``n_reps``); ``loading``:
    the request comes from the folder's manifest (:func:`load_sweep`), not
    from a call to :func:`sweep`.
    """
    try:
        res = _storage.load_block(directory, k)
        stored_block_size = _storage.read_sidecar(directory, k)["block_size"]
    except _storage.BlockError as exc:
        return None, f"{exc.path.name}: {exc.reason}"
    if stored_block_size != block_size:
        # checked first: another block size also moves offsets and sizes, which would be misreported below
        where = f"{directory}/block_{k}.json was written with block_size={stored_block_size}"
        if loading:
            raise ValueError(f"{_storage.MANIFEST} says block_size={block_size} but {where} (an edited or foreign "
                             f"{_storage.MANIFEST}); rerun sweep() on this out with block_size={stored_block_size}, "
                             "or use another out")
        raise ValueError(f"block_size changed: this sweep asks block_size={block_size} but {where} (n_reps is not "
                         f"the issue); resuming needs the stored block size: rerun with block_size={stored_block_size} "
                         "or use another out")
    if res.seed != seed:
        raise ValueError(f"{directory}/block_{k} was computed with seed {res.seed}, but this sweep derives "
                         f"{seed} for the config (another root seed?); use another out")
    if res.rep_offset != rep_offset:
        raise ValueError(f"{directory}/block_{k}.json says the block holds replications from {res.rep_offset}, "
                         f"but block {k} of block_size={block_size} starts at {rep_offset} (an edited or "
                         "foreign file); use another out")
    if res.n_reps < size:  # a last block of a smaller sweep: recompute it in full
        return None, f"block_{k}.npz: holds {res.n_reps} replications, the sweep needs {size}"
    if res.n_reps > size:
        held = rep_offset + res.n_reps
        raise ValueError(f"n_reps={rep_offset + size} is smaller than the {held} replications stored in "
                         f"{directory} (block_{k} holds replications {rep_offset}..{held - 1}); n_reps must "
                         f"not shrink below what out holds: rerun with n_reps>={held} or use another out")
    return res, None


def _check_block_size(directory: Path, block_size: int) -> None:
    """ValueError if a readable sidecar in ``directory`` was written with another block size.

    Every stored block is looked at, also those beyond this sweep's last
    block, so that a larger block size cannot quietly overwrite block 0 and
    orphan the blocks after it.
    """
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return
    for name in sorted(names):
        stem, _, ext = name.partition(".")
        if ext != "json" or not stem.startswith("block_") or not stem[6:].isdigit():
            continue
        try:
            side = _storage.read_sidecar(directory, int(stem[6:]))
        except _storage.BlockError:
            continue  # unreadable: recomputed if this sweep needs it, else left alone
        if side["block_size"] != block_size:
            raise ValueError(f"block_size={block_size} differs from the stored block_size={side['block_size']} "
                             f"of {directory / name}: resuming needs the block size the stored blocks were "
                             f"made with; rerun with block_size={side['block_size']} or use another out")


def _check_config_folder(directory: Path, config: dict, seed: int, root_seed: int) -> bool:
    """Whether ``directory/config.json`` is there (False: to be written); ValueError if it disagrees."""
    meta = _storage.read_config(directory)
    if meta is None:
        return False
    if _storage.canonical_json(meta["config"]) != _storage.canonical_json(config):
        raise ValueError(f"{directory}/config.json holds another config with the same id (hash "
                         "collision or edited file); use another out")
    if meta["seed"] != seed:
        raise ValueError(f"{directory} holds results for seed {meta['seed']}, but this sweep derives {seed} "
                         f"(root seed {root_seed}, was {meta.get('root_seed')}); use another out")
    return True


# --------------------------------------------------------------------------
# sweep


def _blocks(n_reps: int, block_size: int) -> list[tuple[int, int, int]]:
    """``(k, rep_offset, size)`` of every block."""
    n_blocks = math.ceil(n_reps / block_size)
    return [(k, k * block_size, min(block_size, n_reps - k * block_size)) for k in range(n_blocks)]


def sweep(configs, n_reps: int, *, block_size: int = DEFAULT_BLOCK_SIZE, seed: int = 0, out=None,
          executor=None, scheduler: str | None = None, progress: bool | None = None,
          learners: Mapping | None = None, instances: Mapping | None = None) -> SweepResult:
    """Run ``n_reps`` replications of every config, in resumable blocks.

    Parameters
    ----------
    configs : list of dict, or {"base": dict, "grid": dict}
        Configs (see ``normalize_config``), or a grid spec expanded with
        :func:`expand_grid`.  Configs must be distinct.
    n_reps : int
        Replications per config.
    block_size : int
        Replications per task; block ``k`` holds replications
        ``k * block_size ..``.  The numbers do not depend on it, but resuming
        into ``out`` needs the block size used before.
    seed : int
        Root seed; each config's seed is ``config_seed`` of it.
    out : str or path-like, optional
        Sweep folder.  Each block is written there as soon as it finishes
        (layout in the user guide's sweeps page) and blocks already there
        are loaded instead of computed.  Without ``out`` nothing is written.
    executor : None, "serial" or Executor
        None: a local :class:`~concurrent.futures.ProcessPoolExecutor` with
        ``os.cpu_count()`` workers (``forkserver`` start method where
        available, else ``spawn``; one Numba thread each), shut down at the
        end; scripts using it need the usual ``if __name__ == "__main__":``
        guard.  ``"serial"``: run in this process.
        Otherwise any object whose ``submit`` returns
        :mod:`concurrent.futures` or Dask futures (a ``ThreadPoolExecutor``,
        a ``dask.distributed.Client``, ...); it is left open.  Its workers must
        be able to import ``expertlab`` and the factories.
    scheduler : str, optional
        Address of a Dask scheduler (``"tcp://host:8786"``): a
        ``distributed.Client`` is opened on it for this call (needs the
        ``dask`` extra).  Exclusive with ``executor``.
    progress : bool, optional
        Show a progress bar over blocks (``tqdm.auto``: a widget in a
        notebook, text on stderr in a terminal) once the sweep has taken two
        seconds.  ``None`` (the default): in a notebook or when stderr is a
        terminal; ``False``: never; ``True``: on any output.  The runs of
        the blocks show none of their own.
    learners, instances : mapping of str to callable, optional
        Factories by name, instead of ``default_registries`` (the
        experts' and the bandits' registries together).  For process or Dask
        workers they must be importable top-level functions.

    Returns
    -------
    SweepResult

    Raises
    ------
    ValueError, TypeError
        For bad arguments or configs (before anything runs), when ``out`` is
        a file, and when ``out`` holds blocks of this sweep made with another
        block size or seed, or more replications than ``n_reps``.
    OSError
        If ``out`` cannot be written (``PermissionError`` for a read-only
        folder; the message names the folder), before any task runs.
        Reloading a complete sweep with the same settings writes nothing.
    RuntimeError
        If some tasks failed; the other blocks are stored in ``out`` first.

    Notes
    -----
    Tasks return their arrays and the driver writes them (workers never
    touch ``out``).  Workers of the default pool exit when the driver dies,
    and temporary files a killed sweep left in ``out`` are deleted when it
    is resumed.  Only one sweep may write into a given ``out`` at a time;
    ``<out>/sweep.json`` records the latest sweep, which :func:`load_sweep`
    reads back.

    Examples
    --------
    >>> import tempfile
    >>> cfgs = expand_grid({"learner": "hedge", "instance": "fair_coins", "horizon": 50},
    ...                    {"instance_params.n_experts": [2, 4]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     res = sweep(cfgs, n_reps=6, block_size=4, executor="serial", out=tmp)
    ...     again = sweep(cfgs, n_reps=6, block_size=4, executor="serial", out=tmp)
    >>> res.n_computed, again.n_computed, again.n_loaded
    (4, 0, 4)
    >>> bool((res.results[1].metrics["regret"] == again.results[1].metrics["regret"]).all())
    True
    """
    t0 = time.perf_counter()
    learners_arg, instances_arg = learners, instances
    learners, instances = _registries(learners, instances)
    if isinstance(configs, Mapping):
        if set(configs) - {"base", "grid"} or "base" not in configs:
            raise TypeError("configs must be a list of config dicts or a grid spec {'base': ..., 'grid': ...}; "
                            "wrap a single config in a list")
        configs = expand_grid(configs["base"], configs.get("grid", {}))
    if isinstance(configs, (str, bytes)) or not hasattr(configs, "__iter__"):
        raise TypeError(f"configs must be a list of config dicts, got {type(configs).__name__}")
    configs = [normalize_config(c, learners=learners, instances=instances, name=f"configs[{i}]")
               for i, c in enumerate(configs)]
    if not configs:
        raise ValueError("configs is empty; give at least one config")
    n_reps = check_int(n_reps, "n_reps")
    block_size = check_int(block_size, "block_size")
    root_seed = _check_root_seed(seed)
    progress = check_progress(progress)
    ids = [_storage.config_id(c) for c in configs]
    first = {}
    for i, cid in enumerate(ids):
        if cid in first:
            raise ValueError(f"configs[{first[cid]}] and configs[{i}] are the same config")
        first[cid] = i
    for i, c in enumerate(configs):
        _check_buildable(c, learners, instances, f"configs[{i}]")
    seeds = [config_seed(c, root_seed) for c in configs]
    blocks = _blocks(n_reps, block_size)
    if out is not None and not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out must be a folder path (str or path-like) or None, got {type(out).__name__}")
    out_path = Path(out) if out is not None else None
    if out_path is not None and out_path.exists() and not out_path.is_dir():
        raise ValueError(f"out={str(out)!r} is a file, not a folder; give a folder for the sweep's results")
    if executor is not None and scheduler is not None:
        raise ValueError("give either executor or scheduler, not both")

    done: dict[tuple[int, int], RunResult] = {}
    if out_path is not None:
        # Read and check everything first; write only what is missing or changed, so that
        # reloading a finished sweep writes nothing (and works in a read-only folder).
        if not out_path.is_dir():
            out_path.mkdir(parents=True, exist_ok=True)
        _storage.remove_temp_files(out_path, manifest=True)
        no_config_file = []
        for i, (c, cid) in enumerate(zip(configs, ids)):
            directory = out_path / cid
            _storage.remove_temp_files(directory)
            if not _check_config_folder(directory, c, seeds[i], root_seed):
                no_config_file.append(i)
            _check_block_size(directory, block_size)
            for k, off, size in blocks:
                res, _ = _stored_block(directory, k, seed=seeds[i], rep_offset=off, size=size,
                                       block_size=block_size)
                if res is not None:
                    done[(i, k)] = res
    n_loaded = len(done)
    todo = [(i, k) for i in range(len(configs)) for k, _, _ in blocks if (i, k) not in done]
    if out_path is not None:
        for i in no_config_file:
            _storage.write_config(out_path / ids[i], configs[i], seed=seeds[i], root_seed=root_seed)
        # With work to do the manifest is written anyway: an unwritable out fails here, before any task runs.
        if todo or not _storage.same_manifest(out_path, config_ids=ids, n_reps=n_reps, block_size=block_size,
                                              seed=root_seed):
            _storage.write_manifest(out_path, config_ids=ids, n_reps=n_reps, block_size=block_size,
                                    seed=root_seed)

    def args_of(task):
        i, k = task
        return (configs[i], k, block_size, n_reps, seeds[i], learners_arg, instances_arg)

    errors = []
    if todo:
        with _open_executor(executor, scheduler) as ex, \
                progress_bar(progress, total=len(configs) * len(blocks), initial=n_loaded, desc="sweep",
                             unit="block") as bar:
            for (i, k), res, exc in _completed(ex, todo, args_of):
                if exc is not None:
                    errors.append(((i, k), exc))
                    continue
                if out_path is not None:
                    _storage.write_block(out_path / ids[i], k, res, config=configs[i], block_size=block_size)
                done[(i, k)] = res
                bar.update(1)
    if errors:
        (i, k), exc = errors[0]
        saved = f"; the {len(done)} finished blocks are stored in {str(out_path)!r}" if out_path else ""
        raise RuntimeError(f"{len(errors)} of {len(todo)} sweep tasks failed{saved}. First failure: "
                           f"configs[{i}] block {k}: {type(exc).__name__}: {exc}") from exc
    results = tuple(RunResult.concat([done[(i, k)] for k, _, _ in blocks]) for i in range(len(configs)))
    return SweepResult(
        configs=tuple(configs),
        config_ids=tuple(ids),
        seeds=tuple(seeds),
        results=results,
        n_reps=n_reps,
        block_size=block_size,
        seed=root_seed,
        out=str(out_path) if out_path is not None else None,
        n_computed=len(done) - n_loaded,
        n_loaded=n_loaded,
        elapsed_time=time.perf_counter() - t0,
    )


def load_sweep(out, *, allow_incomplete: bool = False) -> SweepResult:
    """Load the latest sweep stored in ``out`` without computing anything.

    Parameters
    ----------
    out : str or path-like
        A folder written by :func:`sweep`.
    allow_incomplete : bool
        If False (default) every block must be there.  If True each config
        keeps its finished blocks from replication 0 up to the first missing
        one, and configs with none are left out.

    Returns
    -------
    SweepResult
        With ``n_loaded`` blocks and ``n_computed = 0``.

    Raises
    ------
    ValueError
        If ``out`` is not a sweep folder, or blocks are missing and
        ``allow_incomplete`` is False; the message names, for each config
        with a gap, the first file at fault and what is wrong with it.

    Examples
    --------
    >>> import tempfile
    >>> cfg = {"learner": "hedge", "instance": "fair_coins", "horizon": 40}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     res = sweep([cfg], n_reps=5, block_size=2, executor="serial", out=tmp)
    ...     back = load_sweep(tmp)
    >>> back.n_loaded, bool((back.results[0].metrics["regret"] == res.results[0].metrics["regret"]).all())
    (3, True)
    """
    t0 = time.perf_counter()
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out must be a folder path (str or path-like), got {type(out).__name__}")
    if not isinstance(allow_incomplete, (bool, np.bool_)):
        raise TypeError(f"allow_incomplete must be a bool, got {type(allow_incomplete).__name__}")
    out_path = Path(out)
    man = _storage.read_manifest(out_path)
    n_reps = check_int(man["n_reps"], "n_reps in sweep.json")
    block_size = check_int(man["block_size"], "block_size in sweep.json")
    blocks = _blocks(n_reps, block_size)
    configs, ids, seeds, results = [], [], [], []
    n_loaded, n_missing = 0, 0
    gaps = []  # the first problem of each config with a gap: "<config_id>/<file>: <what is wrong>"
    for cid in man["config_ids"]:
        directory = out_path / cid
        meta = _storage.read_config(directory)
        if meta is None:
            n_missing += len(blocks)
            config_file = directory / _storage.CONFIG_FILE
            gaps.append(f"{cid}/: folder missing" if not directory.is_dir() else
                        f"{cid}/{config_file.name}: " + ("unreadable" if config_file.exists() else "missing"))
            continue
        got = []
        for k, off, size in blocks:
            res, why = _stored_block(directory, k, seed=meta["seed"], rep_offset=off, size=size,
                                     block_size=block_size, loading=True)
            if res is None:
                n_missing += len(blocks) - k
                gaps.append(f"{cid}/{why}")
                break
            got.append(res)
        if not got:
            continue
        n_loaded += len(got)
        configs.append(meta["config"])
        ids.append(cid)
        seeds.append(meta["seed"])
        results.append(RunResult.concat(got))
    if n_missing and not allow_incomplete:
        shown = "; ".join(gaps[:5]) + (f"; and {len(gaps) - 5} more configs" if len(gaps) > 5 else "")
        raise ValueError(f"the sweep in out={str(out)!r} is incomplete: {n_missing} of "
                         f"{len(man['config_ids']) * len(blocks)} blocks are missing (counting from the first "
                         f"gap of each config): {shown}. Rerun sweep() with this out to finish it, or pass "
                         "allow_incomplete=True")
    return SweepResult(
        configs=tuple(configs),
        config_ids=tuple(ids),
        seeds=tuple(seeds),
        results=tuple(results),
        n_reps=n_reps,
        block_size=block_size,
        seed=int(man["seed"]),
        out=str(out_path),
        n_computed=0,
        n_loaded=n_loaded,
        elapsed_time=time.perf_counter() - t0,
    )
