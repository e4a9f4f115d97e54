"""On-disk storage of sweep blocks: atomic files, JSON sidecars, config ids.

A sweep directory ``out`` holds one folder per config, named by the config's
id (a short hash of its canonical JSON), and one pair of files per finished
replication block::

    out/
      sweep.json                  manifest: sweep settings and config ids, in order
      <config_id>/
        config.json               the config, its id and its derived seed
        block_0.npz               checkpoints, regret, every metric and final array
        block_0.json              sidecar: config, seed, rep_offset, n_reps, backend,
                                  expertlab version, wall time, created, npz sha256
        block_1.npz
        block_1.json
        ...

Every file is written atomically: to a temporary file in the same folder,
flushed and ``fsync``-ed, then moved over the target with :func:`os.replace`
(and the folder ``fsync``-ed where the platform allows).  A reader therefore
sees either the old file or the new one, never a torn one.

The sidecar of a block is written *after* its ``.npz`` and is the commit
marker: it records the SHA-256 of the ``.npz`` bytes, and a block counts as
finished only when its sidecar parses and the ``.npz`` on disk has that hash.
A block killed half-way (no sidecar, a truncated ``.npz``, a sidecar of an
older ``.npz``) is therefore treated as missing and recomputed.  Temporary
files left by a killed writer are named ``.<target>.<random>.tmp`` (for
instance ``.block_2.npz.k3v9x_0q.tmp``); they are never read, may be deleted at
any time when no sweep is running, and a resuming sweep deletes those of its
own folders (:func:`remove_temp_files`).

Only one process should write into a sweep directory at a time.

A single :class:`RunResult` is saved the same way (:meth:`RunResult.save`,
:func:`write_result`): a pair ``<name>.npz`` and ``<name>.json`` whose
sidecar, written last, is the commit marker; it holds the sidecar keys of a
block except the sweep's ``config_id``, ``config``, ``block`` and
``block_size``.  The pair of files of a sweep block is therefore also a saved
result.

Parameters of the learner and the environment are stored exactly, in their
order (the sidecar sorts only its own top-level keys): NumPy
arrays in them go into the ``.npz`` (as ``params__<k>``) and the sidecar
holds ``{"__ndarray__": "params__<k>"}`` in their place; a tuple is stored as
``{"__tuple__": [...]}`` and a non-finite float as ``{"__float__": "inf"}``
(or ``"-inf"``, ``"nan"``).  Sidecars without these markers read as before.
"""

from __future__ import annotations

import datetime
import errno
import hashlib
import io
import json
import math
import numbers
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ._result import RunResult

__all__ = [
    "FORMAT_VERSION",
    "BlockError",
    "TEMP_NAME",
    "canonical_json",
    "config_hash",
    "config_id",
    "atomic_write_bytes",
    "block_paths",
    "write_block",
    "read_sidecar",
    "load_block",
    "write_config",
    "read_config",
    "write_manifest",
    "read_manifest",
    "same_manifest",
    "remove_temp_files",
    "result_paths",
    "write_result",
    "read_result",
]

#: Version of the on-disk layout, recorded in every sidecar and manifest.
FORMAT_VERSION = 2
#: Number of hex digits of the SHA-256 kept in a config id.
ID_LENGTH = 12
MANIFEST = "sweep.json"
CONFIG_FILE = "config.json"

#: Keys of the sidecar of every stored result (a saved run or a sweep block).
_RESULT_KEYS = (
    "format", "seed", "rep_offset", "n_reps", "backend", "expertlab_version", "wall_time", "created",
    "npz_sha256", "learner", "environment", "learner_params", "environment_params", "unit", "horizon",
    "metrics", "final",
)
#: Keys of the sidecar of a sweep block: those of a result and the block's place in the sweep.
_SIDECAR_KEYS = _RESULT_KEYS + ("config_id", "config", "block", "block_size")


#: Names of the temporary files :func:`atomic_write_bytes` makes for the files of a sweep
#: (``.sweep.json.<random>.tmp``, ``.config.json.<random>.tmp``, ``.block_<k>.npz.<random>.tmp``,
#: ``.block_<k>.json.<random>.tmp``; ``<random>`` as :func:`tempfile.mkstemp` draws it).
TEMP_NAME = re.compile(r"\.(?:sweep\.json|config\.json|block_[0-9]+\.(?:npz|json))\.[a-z0-9_]+\.tmp")


class BlockError(ValueError):
    """A stored result (a sweep block or a saved run) is partial, corrupt or does not match its sidecar.

    Attributes
    ----------
    path : pathlib.Path
        The file at fault (the ``.npz`` or its ``.json`` sidecar).
    reason : str
        What is wrong with it (missing, unreadable, wrong shape, ...).
    """

    def __init__(self, path, reason: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")


# --------------------------------------------------------------------------
# canonical JSON and ids


def _plain(value, where: str):
    """``value`` as plain JSON data (dict/list/str/int/float/bool/None)."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"{where} must be finite to be stored as JSON, got {value}")
        return value
    if isinstance(value, np.ndarray):
        return _plain(value.tolist(), where)
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{where} must have string keys, got {type(k).__name__} {k!r}")
            out[k] = _plain(v, f"{where}[{k!r}]")
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise TypeError(
        f"{where} must hold only JSON data (str, int, float, bool, None, lists, dicts, "
        f"numpy arrays); got {type(value).__name__} {value!r}")


def canonical_json(obj, name: str = "obj") -> str:
    """The canonical JSON text of ``obj``: sorted keys, no spaces, ASCII.

    NumPy scalars and arrays become plain numbers and lists and tuples become
    lists, so equal data always gives the same text (note that ``1`` and
    ``1.0`` stay different).

    Parameters
    ----------
    obj : JSON-like data
        Dicts with string keys, lists, tuples, str, int, float, bool, None,
        NumPy scalars and arrays.
    name : str
        Name used in error messages.

    Returns
    -------
    str

    Raises
    ------
    TypeError
        If ``obj`` holds something that is not JSON data.
    ValueError
        If ``obj`` holds a NaN or an infinity.

    Examples
    --------
    >>> canonical_json({"b": (1, 2.5), "a": np.int64(3)})
    '{"a":3,"b":[1,2.5]}'
    """
    return json.dumps(_plain(obj, name), sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


def config_hash(obj, name: str = "config") -> bytes:
    """SHA-256 digest of :func:`canonical_json` of ``obj`` (32 bytes)."""
    return hashlib.sha256(canonical_json(obj, name).encode("ascii")).digest()


def config_id(config: Mapping[str, Any]) -> str:
    """Short id of a config: the first 12 hex digits of its canonical SHA-256.

    Parameters
    ----------
    config : mapping
        A (normalised) sweep config.

    Returns
    -------
    str
        12 lowercase hex digits, the name of the config's folder.

    Examples
    --------
    >>> config_id({"learner": "hedge", "horizon": 10}) == config_id({"horizon": 10, "learner": "hedge"})
    True
    >>> len(config_id({"learner": "hedge"}))
    12
    """
    return config_hash(config).hex()[:ID_LENGTH]


# --------------------------------------------------------------------------
# atomic files


def _fsync_dir(directory: Path) -> None:
    """Flush a directory entry to disk (no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically.

    The bytes go to a temporary file ``.<name>.<random>.tmp`` in the same
    folder, which is flushed, ``fsync``-ed and moved over ``path`` with
    :func:`os.replace`; the folder is then ``fsync``-ed.  Readers see the old
    content or the new one, never a mixture; after a crash at most a stray
    temporary file remains.

    Parameters
    ----------
    path : str or path-like
        Target file; its folder must exist.
    data : bytes

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = pathlib.Path(tmp) / "x.txt"
    ...     atomic_write_bytes(p, b"hello")
    ...     print(p.read_bytes(), sorted(q.name for q in pathlib.Path(tmp).iterdir()))
    b'hello' ['x.txt']
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, got {type(data).__name__}")
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise _folder_error(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and exc.filename is not None \
                and os.fspath(exc.filename) == os.fspath(tmp):
            raise _folder_error(exc, path) from None
        raise
    _fsync_dir(path.parent)


def _folder_error(exc: OSError, path: Path) -> OSError:
    """``exc`` (an error on the hidden temporary file) restated for ``path`` and its folder.

    The temporary file is an implementation detail and is gone by then; the
    error names the folder and the file that could not be written instead,
    keeping the class and ``errno`` (``PermissionError`` stays one).
    """
    reason = exc.strerror or str(exc)
    return type(exc)(exc.errno, f"{reason}: cannot write {path.name} in the folder", str(path.parent))


def _write_json(path, obj, *, sort_keys: bool = True) -> None:
    text = json.dumps(_plain(obj, Path(path).name), indent=1, sort_keys=sort_keys, allow_nan=False)
    atomic_write_bytes(path, (text + "\n").encode("utf-8"))


def _read_json(path) -> Any:
    with open(path, "rb") as fh:
        return json.loads(fh.read().decode("utf-8"))


def _version() -> str:
    import expertlab

    return expertlab.__version__


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


# --------------------------------------------------------------------------
# parameters, stored exactly

_ARRAY, _TUPLE, _FLOAT = "__ndarray__", "__tuple__", "__float__"
_MARKERS = (_ARRAY, _TUPLE, _FLOAT)


def _encode_params(value, arrays: dict, where: str):
    """``value`` as JSON data that :func:`_decode_params` turns back into an equal value.

    NumPy arrays are moved into ``arrays`` (the future ``.npz`` contents) as
    ``params__<k>`` and replaced by a marker; tuples and non-finite floats get
    markers of their own (see the module docstring).
    """
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise TypeError(f"{where} is an array of Python objects, which cannot be stored; "
                            "give numbers, booleans or strings")
        key = f"params__{sum(k.startswith('params__') for k in arrays)}"
        arrays[key] = value
        return {_ARRAY: key}
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{where} must have string keys, got {type(k).__name__} {k!r}")
            out[k] = _encode_params(v, arrays, f"{where}[{k!r}]")
        if len(out) == 1 and next(iter(out)) in _MARKERS:
            raise ValueError(f"{where} is a mapping whose only key is {next(iter(out))!r}, a name the stored "
                             "format reserves")
        return out
    if isinstance(value, tuple):
        return {_TUPLE: [_encode_params(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [_encode_params(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]
    if (isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_, numbers.Integral))
            and not math.isfinite(value)):
        return {_FLOAT: repr(float(value))}  # 'inf', '-inf' or 'nan'
    return _plain(value, where)


def _decode_params(value, arrays: Mapping[str, np.ndarray], where: str):
    """Inverse of :func:`_encode_params`; ValueError for a marker that does not resolve."""
    if isinstance(value, dict):
        if len(value) == 1:
            ((key, inner),) = value.items()
            if key == _ARRAY:
                if not isinstance(inner, str) or inner not in arrays:
                    raise ValueError(f"{where} refers to the array {inner!r}, which the .npz lacks")
                return arrays[inner]
            if key == _TUPLE:
                if not isinstance(inner, list):
                    raise ValueError(f"{where}: a stored tuple must hold a list, got {inner!r}")
                return tuple(_decode_params(v, arrays, f"{where}[{i}]") for i, v in enumerate(inner))
            if key == _FLOAT:
                if inner not in ("inf", "-inf", "nan"):
                    raise ValueError(f"{where}: a stored non-finite float must be 'inf', '-inf' or 'nan', "
                                     f"got {inner!r}")
                return float(inner)
        return {k: _decode_params(v, arrays, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, list):
        return [_decode_params(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


# --------------------------------------------------------------------------
# a result as a pair of files: <name>.npz and its sidecar <name>.json


def _write_pair(npz_path: Path, json_path: Path, result: RunResult, extra: Mapping[str, Any]) -> None:
    """Write ``result`` as ``npz_path`` and then its sidecar ``json_path`` (the commit marker).

    Everything is encoded before any file is touched; an older sidecar is
    removed before the new ``.npz`` replaces the old one, so no sidecar ever
    describes the wrong arrays.  ``extra`` holds sidecar keys beyond
    :data:`_RESULT_KEYS` (a block's place in its sweep).
    """
    arrays = {"checkpoints": np.asarray(result.checkpoints)}
    for name, arr in result.metrics.items():
        arrays[f"metrics__{name}"] = np.asarray(arr)
    for name, arr in result.final.items():
        arrays[f"final__{name}"] = np.asarray(arr)
    learner_params = _encode_params(result.learner_params, arrays, "learner_params")
    environment_params = _encode_params(result.environment_params, arrays, "environment_params")
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    data = buf.getvalue()
    sidecar = {
        "format": FORMAT_VERSION,
        "seed": int(result.seed),
        "rep_offset": int(result.rep_offset),
        "n_reps": int(result.n_reps),
        "backend": result.backend,
        "dtype": result.dtype,
        "expertlab_version": _version(),
        "wall_time": float(result.wall_time),
        "created": _now(),
        "npz_sha256": hashlib.sha256(data).hexdigest(),
        "learner": result.learner,
        "environment": result.environment,
        "learner_params": learner_params,
        "environment_params": environment_params,
        "unit": result.unit,
        "horizon": int(result.horizon),
        "metrics": list(result.metrics),  # in the result's order, which loading keeps
        "final": list(result.final),
        **extra,
    }
    _plain(sidecar, json_path.name)  # fail on bad data before any file changes
    try:
        os.unlink(json_path)
    except FileNotFoundError:
        pass
    atomic_write_bytes(npz_path, data)
    # top-level keys sorted; the parameters keep their order
    _write_json(json_path, dict(sorted(sidecar.items())), sort_keys=False)


def _read_sidecar_file(npz_path: Path, json_path: Path, keys) -> dict:
    """The parsed sidecar ``json_path`` of ``npz_path``; :class:`BlockError` if missing or invalid."""
    try:
        side = _read_json(json_path)
    except FileNotFoundError:
        if npz_path.exists():
            raise BlockError(json_path, f"missing: {npz_path.name} has no sidecar (its write was interrupted "
                                        "before the commit)") from None
        raise BlockError(npz_path, f"missing (no {npz_path.name} and no sidecar {json_path.name})") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BlockError(json_path, f"unreadable sidecar ({exc})") from exc
    if not isinstance(side, dict):
        raise BlockError(json_path, f"unreadable sidecar (a JSON {type(side).__name__}, not an object)")
    lacking = [k for k in keys if k not in side]
    if lacking:
        raise BlockError(json_path, f"unreadable sidecar (lacks required keys {lacking})")
    if side["format"] != FORMAT_VERSION:
        raise BlockError(json_path, f"sidecar format {side['format']!r}, expected {FORMAT_VERSION}")
    return side


def _load_pair(npz_path: Path, json_path: Path, side: Mapping[str, Any]) -> RunResult:
    """The :class:`RunResult` stored in ``npz_path`` and described by the parsed sidecar ``side``."""
    try:
        data = npz_path.read_bytes()
    except FileNotFoundError:
        raise BlockError(npz_path, f"missing (its sidecar {json_path.name} exists)") from None
    except OSError as exc:
        raise BlockError(npz_path, f"unreadable ({exc})") from exc
    if hashlib.sha256(data).hexdigest() != side["npz_sha256"]:
        raise BlockError(npz_path, "contents do not match the sidecar's SHA-256 (truncated, partial or corrupt)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except Exception as exc:  # hash matched, so this means a writer bug; still report it
        raise BlockError(npz_path, f"unreadable: not a valid npz ({exc})") from exc
    n_reps = side["n_reps"]
    try:
        ckpts = arrays["checkpoints"]
        metrics = {k: arrays[f"metrics__{k}"] for k in side["metrics"]}
        final = {k: arrays[f"final__{k}"] for k in side["final"]}
    except KeyError as exc:
        raise BlockError(npz_path, f"missing array {exc.args[0]!r}") from None
    except TypeError as exc:  # "metrics" or "final" is not a list of names
        raise BlockError(json_path, f"unreadable sidecar ({exc})") from None
    shape = (ckpts.shape[0], n_reps)
    for kind, arrs, want in (("metrics", metrics, lambda a: a.shape == shape),
                             ("final", final, lambda a: a.shape[:1] == (n_reps,))):
        for name, arr in arrs.items():
            if not want(arr):
                expected = shape if kind == "metrics" else f"({n_reps}, ...)"
                raise BlockError(npz_path, f"wrong shape: {kind} {name!r} has shape {arr.shape}, expected "
                                           f"{expected} for n_reps={n_reps} in the sidecar")
    try:
        learner_params = _decode_params(side["learner_params"], arrays, "learner_params")
        environment_params = _decode_params(side["environment_params"], arrays, "environment_params")
    except ValueError as exc:
        raise BlockError(json_path, f"unreadable sidecar ({exc})") from None
    return RunResult(
        learner=side["learner"],
        environment=side["environment"],
        learner_params=learner_params,
        environment_params=environment_params,
        unit=side["unit"],
        horizon=side["horizon"],
        n_reps=n_reps,
        seed=side["seed"],
        rep_offset=side["rep_offset"],
        backend=side["backend"],
        checkpoints=ckpts,
        metrics=metrics,
        final=final,
        wall_time=side["wall_time"],
        dtype=side.get("dtype", "float64"),  # results stored before runs had a dtype computed in float64
    )


# --------------------------------------------------------------------------
# blocks


def block_paths(directory, block: int) -> tuple[Path, Path]:
    """Paths ``(block_<k>.npz, block_<k>.json)`` of block ``block`` in a config folder."""
    if isinstance(block, (bool, np.bool_)) or not isinstance(block, numbers.Integral) or block < 0:
        raise ValueError(f"block must be a non-negative integer, got {block!r}")
    directory = Path(directory)
    return directory / f"block_{int(block)}.npz", directory / f"block_{int(block)}.json"


def write_block(directory, block: int, result: RunResult, *, config: Mapping[str, Any],
                block_size: int) -> Path:
    """Store a finished block: the ``.npz`` first, then its sidecar (the commit marker).

    An older sidecar of the same block is removed before the new ``.npz``
    replaces the old one, so no sidecar ever describes the wrong arrays.

    Parameters
    ----------
    directory : str or path-like
        The config's folder ``<out>/<config_id>`` (created if missing).
    block : int
        Block index ``k``.
    result : RunResult
        The block's replications (``rep_offset = k * block_size``).
    config : mapping
        The normalised config the block belongs to.
    block_size : int
        Replications per block in the sweep.

    Returns
    -------
    pathlib.Path
        Path of the sidecar.

    Examples
    --------
    >>> import tempfile
    >>> from expertlab import sim
    >>> from expertlab.experts import hedge, instances
    >>> res = sim.run(hedge(), instances.fair_coins(3), horizon=20, n_reps=4, seed=5)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = write_block(tmp, 0, res, config={"learner": "hedge"}, block_size=4)
    ...     back = load_block(tmp, 0)
    >>> bool((back.metrics["regret"] == res.metrics["regret"]).all()), back.seed == res.seed
    (True, True)
    """
    if not isinstance(result, RunResult):
        raise TypeError(f"result must be a RunResult, got {type(result).__name__}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    npz_path, json_path = block_paths(directory, block)
    _write_pair(npz_path, json_path, result, {
        "config_id": directory.name,
        "config": config,
        "block": int(block),
        "block_size": int(block_size),
    })
    return json_path


def read_sidecar(directory, block: int) -> dict:
    """The parsed sidecar of a block; :class:`BlockError` if missing or invalid."""
    npz_path, json_path = block_paths(directory, block)
    side = _read_sidecar_file(npz_path, json_path, _SIDECAR_KEYS)
    if side["block"] != block:
        raise BlockError(json_path, f"sidecar describes block {side['block']!r}")
    return side


def load_block(directory, block: int) -> RunResult:
    """Load a finished block back into a :class:`RunResult`.

    Parameters
    ----------
    directory : str or path-like
        The config's folder ``<out>/<config_id>``.
    block : int
        Block index.

    Returns
    -------
    RunResult
        The block's replications ``rep_offset .. rep_offset + n_reps - 1``,
        with the wall time recorded when it was computed.

    Raises
    ------
    BlockError
        If the sidecar is missing or invalid, or the ``.npz`` is missing,
        does not match the hash in the sidecar, or has the wrong arrays.

    Examples
    --------
    See ``write_block``.
    """
    side = read_sidecar(directory, block)
    npz_path, json_path = block_paths(directory, block)
    return _load_pair(npz_path, json_path, side)


# --------------------------------------------------------------------------
# a single saved result


def result_paths(path) -> tuple[Path, Path]:
    """The pair ``(<name>.npz, <name>.json)`` of a saved result, from the path of either file.

    Parameters
    ----------
    path : str or path-like
        Ends in ``.npz`` (the arrays) or ``.json`` (the sidecar).

    Returns
    -------
    tuple of pathlib.Path

    Raises
    ------
    TypeError
        If ``path`` is not a str or path-like.
    ValueError
        If it ends in neither ``.npz`` nor ``.json``.

    Examples
    --------
    >>> [p.name for p in result_paths("runs/hedge.json")]
    ['hedge.npz', 'hedge.json']
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or path-like, got {type(path).__name__}")
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".npz", ".json") or not p.stem:
        raise ValueError(f"path must name the .npz file of a result (or its .json sidecar), got {str(path)!r}")
    return p.with_suffix(".npz"), p.with_suffix(".json")


def write_result(path, result: RunResult) -> Path:
    """Save ``result`` atomically as ``<name>.npz`` and its sidecar ``<name>.json``.

    The layout and the commit protocol are those of a sweep block (module
    docstring): each file is written atomically, the sidecar last, so a
    writer killed at any point leaves either the previous result, or a pair
    that :func:`read_result` refuses with a :class:`BlockError`, never a
    torn file.  An existing pair is replaced.  A writer killed mid-write
    may leave a hidden temporary file ``.<name>.npz.<random>.tmp`` (or
    ``.json``) in the folder; it is never read and may be deleted.

    Parameters
    ----------
    path : str or path-like
        ``<name>.npz`` (or ``<name>.json``); the folder must exist.
    result : RunResult

    Returns
    -------
    pathlib.Path
        The path of the ``.npz``.

    Raises
    ------
    TypeError
        If ``result`` is not a :class:`RunResult` or its parameters hold
        something other than numbers, strings, booleans, None, lists, tuples,
        dicts with string keys and NumPy arrays.
    ValueError
        For a ``path`` that ends in neither ``.npz`` nor ``.json``.
    FileExistsError
        If ``<name>.json`` exists and is not the sidecar of a stored result
        (it is not overwritten).
    OSError
        If the folder is missing or cannot be written (the message names it).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from expertlab import sim
    >>> from expertlab.experts import hedge, instances
    >>> res = sim.run(hedge(), instances.fair_coins(3), horizon=20, n_reps=4, seed=5)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = write_result(pathlib.Path(tmp) / "run.npz", res)
    ...     print(sorted(p.name for p in pathlib.Path(tmp).iterdir()))
    ['run.json', 'run.npz']
    """
    npz_path, json_path = result_paths(path)
    if not isinstance(result, RunResult):
        raise TypeError(f"result must be a RunResult, got {type(result).__name__}")
    if json_path.exists() or json_path.is_symlink():
        try:
            old = _read_json(json_path)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            old = None
        if not (isinstance(old, dict) and "npz_sha256" in old and "format" in old):
            raise FileExistsError(errno.EEXIST, f"refusing to overwrite it: it exists and is not the sidecar of "
                                                f"a stored result (the sidecar of {npz_path.name} goes there)",
                                  str(json_path))
    _write_pair(npz_path, json_path, result, {})
    return npz_path


def read_result(path) -> RunResult:
    """Load a result saved by :func:`write_result` (or one block of a sweep).

    Parameters
    ----------
    path : str or path-like
        ``<name>.npz`` or its sidecar ``<name>.json``.

    Returns
    -------
    RunResult
        Equal to the saved one: the same arrays bit for bit, parameters,
        seed, backend and wall time.

    Raises
    ------
    FileNotFoundError
        If neither file of the pair exists.
    BlockError
        (a ValueError) naming the file at fault, if one file of the pair is
        missing (an interrupted write), the sidecar is unreadable, or the
        ``.npz`` does not match the SHA-256 in the sidecar (truncated,
        corrupt or replaced).

    Examples
    --------
    See :meth:`RunResult.save`.
    """
    npz_path, json_path = result_paths(path)
    if not (npz_path.exists() or json_path.exists()):
        raise FileNotFoundError(errno.ENOENT, f"no saved result ({npz_path.name} and its sidecar {json_path.name} "
                                              "are both missing)", str(npz_path))
    side = _read_sidecar_file(npz_path, json_path, _RESULT_KEYS)
    return _load_pair(npz_path, json_path, side)


# --------------------------------------------------------------------------
# config folders and the manifest


def write_config(directory, config: Mapping[str, Any], *, seed: int, root_seed: int) -> None:
    """Write ``<directory>/config.json`` (config, id, derived seed, root seed, version)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    _write_json(directory / CONFIG_FILE, {
        "format": FORMAT_VERSION,
        "config_id": directory.name,
        "config": config,
        "seed": int(seed),
        "root_seed": int(root_seed),
        "expertlab_version": _version(),
        "created": _now(),
    })


def read_config(directory) -> dict | None:
    """The parsed ``config.json`` of a config folder, or None if absent or unreadable."""
    try:
        meta = _read_json(Path(directory) / CONFIG_FILE)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(meta, dict) or not {"config", "seed", "config_id"} <= meta.keys():
        return None
    return meta


def write_manifest(out, *, config_ids, n_reps: int, block_size: int, seed: int) -> None:
    """Write ``<out>/sweep.json``: the settings and the config ids of the latest sweep."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _write_json(out / MANIFEST, {
        "format": FORMAT_VERSION,
        "config_ids": list(config_ids),
        "n_reps": int(n_reps),
        "block_size": int(block_size),
        "seed": int(seed),
        "expertlab_version": _version(),
        "created": _now(),
    })


def same_manifest(out, *, config_ids, n_reps: int, block_size: int, seed: int) -> bool:
    """Whether ``<out>/sweep.json`` already records these settings (then it need not be rewritten)."""
    try:
        man = read_manifest(out)
    except ValueError:
        return False
    return (man.get("format") == FORMAT_VERSION and man["config_ids"] == list(config_ids)
            and man["n_reps"] == n_reps and man["block_size"] == block_size and man["seed"] == seed)


def remove_temp_files(directory, *, manifest: bool = False) -> list[Path]:
    """Delete the temporary files a killed writer left in a sweep folder.

    Only names :func:`atomic_write_bytes` makes for the sweep's own files are
    touched (see :data:`TEMP_NAME`): ``.config.json.<random>.tmp`` and
    ``.block_<k>.{npz,json}.<random>.tmp`` in a config folder, and with
    ``manifest=True`` (the sweep folder itself) ``.sweep.json.<random>.tmp``.
    Call it only when no sweep is writing into the folder.  Files that cannot
    be deleted (read-only folder) are left; a missing folder is no error.

    Parameters
    ----------
    directory : str or path-like
        A config folder ``<out>/<config_id>``, or ``out`` with ``manifest=True``.
    manifest : bool
        Whether ``directory`` is the sweep folder (look for ``.sweep.json`` temporaries).

    Returns
    -------
    list of pathlib.Path
        The files deleted.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for name in (".block_2.npz.k3v9x_0q.tmp", ".notes.tmp", "block_2.npz"):
    ...         _ = (pathlib.Path(tmp) / name).write_bytes(b"")
    ...     gone = remove_temp_files(tmp)
    ...     [p.name for p in gone], sorted(p.name for p in pathlib.Path(tmp).iterdir())
    (['.block_2.npz.k3v9x_0q.tmp'], ['.notes.tmp', 'block_2.npz'])
    """
    directory = Path(directory)
    try:
        names = sorted(os.listdir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return []
    removed = []
    for name in names:
        if TEMP_NAME.fullmatch(name) is None or name.startswith(".sweep.json.") != manifest:
            continue
        p = directory / name
        try:
            if not p.is_file() or p.is_symlink():
                continue
            p.unlink()
        except OSError:  # read-only folder, or another process took it: leave it
            continue
        removed.append(p)
    return removed


def read_manifest(out) -> dict:
    """The parsed ``<out>/sweep.json``; ValueError if ``out`` is not a sweep folder."""
    path = Path(out) / MANIFEST
    try:
        man = _read_json(path)
    except FileNotFoundError:
        raise ValueError(f"out={str(out)!r} is not a sweep folder: {path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"out={str(out)!r}: cannot read {path} ({exc})") from exc
    keys = {"config_ids", "n_reps", "block_size", "seed"}
    if not isinstance(man, dict) or not keys <= man.keys():
        raise ValueError(f"out={str(out)!r}: {path} lacks one of {sorted(keys)}")
    return man
