"""On-disk cache of the fused drivers, shared by every process of a user.

The fused drivers of :mod:`expertlab.sim._kernels` and
:mod:`expertlab.sim._bandit_kernels` are built per (learner kernel,
environment) pair from closures, and Numba cannot cache a closure on disk
(its cache is keyed by the file that defines a function and checks that file
only).  :func:`cached_njit` therefore writes, per pair, a small Python module
that imports the learner's and the environment's scalar functions by their
module-level names, defines the per-replication body and the driver at module
level (the driver with ``@njit(..., cache=True)``), imports it and returns the
driver.  Numba then stores the compiled machine code next to that module, and
a second process (a new notebook kernel, a sweep worker) loads it instead of
compiling.

The module's file name holds a SHA-256 of everything the compiled code
depends on: the generated source itself, the source files of every module
whose functions the driver calls (found by following the functions' globals
and closures), the Python, NumPy, Numba, llvmlite and expertlab versions.
Changing any of them gives a new file name, so a changed library never loads
a stale kernel.  Files are written to a temporary name and renamed into place
(an atomic replace), so processes that build the same driver at the same time
are safe.

The directory is ``$EXPERTLAB_CACHE_DIR`` when that variable is set, else the
platform's per-user cache folder (``~/.cache/expertlab/kernels`` on Linux,
``$XDG_CACHE_HOME/expertlab/kernels`` when that is set,
``~/Library/Caches/expertlab/kernels`` on macOS,
``%LOCALAPPDATA%\\expertlab\\Cache\\kernels`` on Windows).  Deleting the
folder clears the cache.  Whenever a driver cannot be cached -- a step
function that is not importable by name (a closure, a function of
``__main__``), a value of another kind in a closure, a directory that cannot
be written -- :func:`cached_njit` returns ``None`` and the caller compiles
in memory, as before; the numbers are the same either way.
"""

from __future__ import annotations

import dis
import hashlib
import importlib.util
import inspect
import os
import sys
import textwrap
import threading
import types
import uuid
from pathlib import Path

import numpy as np

__all__ = ["ENV_VAR", "cache_dir", "cached_njit"]

#: Environment variable naming the folder of the kernel cache.
ENV_VAR = "EXPERTLAB_CACHE_DIR"

#: Bumped when the layout of the generated modules changes.
_FORMAT = "1"

#: Packages whose functions are not followed (their versions enter the hash).
_SKIP_PACKAGES = frozenset({"numba", "numpy", "llvmlite", "builtins", "math", "cmath", "operator"})

_RJ = "_el_register_jitable"
_NJIT = "_el_njit"

_LOCK = threading.Lock()


def cache_dir() -> Path:
    """The folder of the kernel cache (not created here).

    ``$EXPERTLAB_CACHE_DIR`` when set and non-empty, else the platform's
    per-user cache folder followed by ``expertlab/kernels``.
    """
    env = os.environ.get(ENV_VAR, "")
    if env:
        return Path(env).expanduser()
    if sys.platform == "win32":  # pragma: no cover - depends on the platform
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "expertlab" / "Cache" / "kernels"
    if sys.platform == "darwin":  # pragma: no cover - depends on the platform
        return Path.home() / "Library" / "Caches" / "expertlab" / "kernels"
    base = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(base) if base else Path.home() / ".cache") / "expertlab" / "kernels"


class _NotCacheable(Exception):
    """Raised inside this module when a driver cannot be written as a module."""


def _py_function(obj):
    """The Python function behind ``obj`` (itself, or a Numba dispatcher's ``py_func``), else ``None``."""
    if isinstance(obj, types.FunctionType):
        return obj
    f = getattr(obj, "py_func", None)
    return f if isinstance(f, types.FunctionType) else None


def _importable(obj) -> tuple[str, str]:
    """``(module, name)`` under which ``obj`` is a module-level attribute of an importable file module."""
    mod_name = getattr(obj, "__module__", None)
    qual = getattr(obj, "__qualname__", None)
    if not mod_name or not qual or "." in qual or "<" in qual or mod_name == "__main__":
        raise _NotCacheable(f"{obj!r} is not a module-level function")
    mod = sys.modules.get(mod_name)
    if mod is None or not getattr(mod, "__file__", None) or getattr(mod, qual, None) is not obj:
        raise _NotCacheable(f"{mod_name}.{qual} does not name {obj!r}")
    return mod_name, qual


def _literal(value):
    """Source text for a Python bool, int or float constant (the type Numba infers is kept), else ``None``."""
    if type(value) in (bool, int):
        return repr(value)
    if type(value) is float:
        text = repr(value)  # round-trips a double exactly
        return f"float({text!r})" if text in ("inf", "-inf", "nan") else text
    return None


def _code_names(code) -> set:
    """Every name the code (and code nested in it) reads: globals and attributes."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


def _global_names(code) -> set:
    """The global names the code (and code nested in it) loads."""
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return names


def _function_source(fn) -> str:
    """Source of ``fn`` dedented, without its decorators.

    ``inspect`` reads the file as it is now; a file edited since it was
    imported gives other lines, which is refused (the driver is then compiled
    in memory from the code actually loaded).
    """
    lines = textwrap.dedent(inspect.getsource(fn)).splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("def ")), None)
    if start is None or not lines[start].startswith(f"def {fn.__name__}("):
        raise _NotCacheable(f"the source file of {fn.__name__!r} changed since it was imported")
    return "\n".join(lines[start:]) + "\n"


def _generate(kind: str, driver, helpers, options) -> tuple[str, list]:
    """The module source for ``driver`` (and the ``helpers`` it calls) and the functions it imports."""
    local = {h.__name__: h for h in helpers}
    bindings: dict[str, tuple[str, object]] = {}  # name -> (source line, value)
    imported = []

    def bind(name, line, value):
        if name in local and local[name] is not value:
            raise _NotCacheable(f"{name!r} names both a generated function and another value")
        if name in bindings and bindings[name][1] is not value:
            raise _NotCacheable(f"{name!r} is bound to two different values")
        if name not in local:
            bindings[name] = (line, value)

    for fn in (*helpers, driver):
        for name in sorted(_global_names(fn.__code__)):
            if name in fn.__globals__:
                bind(name, f"from {fn.__module__} import {name}", fn.__globals__[name])
        cells = fn.__closure__ or ()
        for name, cell in zip(fn.__code__.co_freevars, cells):
            value = cell.cell_contents
            if name in local:
                if local[name] is not value:
                    raise _NotCacheable(f"closure variable {name!r} is not the generated {name}")
                continue
            lit = _literal(value)
            if lit is not None:
                bind(name, f"{name} = {lit}", value)
            elif _py_function(value) is not None:
                mod, qual = _importable(value)
                bind(name, f"from {mod} import {qual}" + ("" if qual == name else f" as {name}"), value)
                imported.append(value)
            else:
                raise _NotCacheable(f"closure variable {name!r} holds a {type(value).__name__}")
    for name in (_RJ, _NJIT):
        if name in bindings or name in local:
            raise _NotCacheable(f"{name!r} is reserved")
    opts = ", ".join([f"{k}={v!r}" for k, v in sorted(options.items())] + ["cache=True"])
    parts = [
        f"# Generated by expertlab.sim._kernel_cache: the {kind} driver of one (learner, environment) pair.",
        "# Safe to delete; it is written again when needed.",
        f"from numba import njit as {_NJIT}",
        f"from numba.extending import register_jitable as {_RJ}",
        *sorted(line for line, _ in bindings.values()),
        "",
    ]
    for h in helpers:
        parts += ["", f"@{_RJ}", _function_source(h)]
    parts += ["", f"@{_NJIT}({opts})", _function_source(driver)]
    return "\n".join(parts), imported


def _dependency_modules(functions) -> set:
    """Names of the modules (with a source file) whose code the functions reach through globals and closures."""
    seen: set = set()
    modules: set = set()

    def add_module(mod_name):
        if mod_name and mod_name.split(".")[0] not in _SKIP_PACKAGES:
            mod = sys.modules.get(mod_name)
            if mod is not None and getattr(mod, "__file__", None):
                modules.add(mod_name)
                return mod
        return None

    def visit(obj):
        fn = _py_function(obj)
        if fn is None or id(fn) in seen:
            return
        seen.add(id(fn))
        if add_module(fn.__module__) is None:
            return
        names = _code_names(fn.__code__)
        for name in names:
            g = fn.__globals__.get(name)
            if isinstance(g, types.ModuleType):
                if add_module(g.__name__) is not None:
                    for attr in names:
                        visit(getattr(g, attr, None))
            else:
                visit(g)
        for cell in fn.__closure__ or ():
            try:
                visit(cell.cell_contents)
            except ValueError:  # an empty cell
                pass

    for f in functions:
        visit(f)
    return modules


def _digest(source: str, modules) -> str:
    import llvmlite
    import numba

    from .. import __version__

    h = hashlib.sha256()
    for part in (_FORMAT, sys.implementation.cache_tag, sys.version, np.__version__, numba.__version__,
                 llvmlite.__version__, __version__, source):
        h.update(part.encode())
        h.update(b"\0")
    for name in sorted(modules):
        h.update(name.encode() + b"\0")
        h.update(hashlib.sha256(_source_bytes(name)).digest())
    return h.hexdigest()[:32]


def _source_bytes(module_name: str) -> bytes:
    """The bytes of the file module ``module_name`` was loaded from."""
    return Path(sys.modules[module_name].__file__).read_bytes()


def _write_atomically(path: Path, text: str) -> None:
    data = text.encode()
    try:
        if path.read_bytes() == data:
            return
    except FileNotFoundError:
        pass
    tmp = path.parent / f".tmp-{os.getpid()}-{uuid.uuid4().hex}.part"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for any file
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _import_file(mod_name: str, path: Path):
    mod = sys.modules.get(mod_name)
    if mod is not None:
        return mod
    spec = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod  # Numba's cache finds the module by name when it loads a kernel
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[mod_name]
        raise
    return mod


def cached_njit(kind: str, driver, helpers=(), options=None, extra_modules=()):
    """The driver compiled with ``njit(**options, cache=True)`` from a generated module, or ``None``.

    Parameters
    ----------
    kind : str
        Short name of the driver family (a word, used in the file name).
    driver : function
        The plain Python driver (a closure).  Its closure variables are
        either one of ``helpers`` (by the same name), a bool, integer or
        float constant, or a function (register_jitable or a Numba
        dispatcher) that is a module-level attribute of an importable module;
        its globals are imported from its own module.
    helpers : sequence of function
        Closures the driver calls, written into the module with
        ``@register_jitable``, under the same rules.
    options : dict
        Options of ``numba.njit`` for the driver (``cache=True`` is added).
    extra_modules : sequence of str
        Modules whose sources enter the hash besides those found by following
        the functions.

    Returns
    -------
    numba.core.registry.CPUDispatcher or None
        ``None`` when the driver cannot be written as a module or the cache
        folder cannot be written; the caller then compiles in memory.
    """
    if not (isinstance(kind, str) and kind.isidentifier()):
        raise ValueError(f"kind must be a word (a Python identifier), got {kind!r}")
    options = dict(options or {})
    if "cache" in options:
        raise ValueError("options must not set 'cache': the generated driver is always cached")
    try:
        source, imported = _generate(kind, driver, helpers, options)
        modules = _dependency_modules([driver, *helpers, *imported]) | set(extra_modules)
        digest = _digest(source, modules)
    except (_NotCacheable, OSError, TypeError):
        # OSError/TypeError: inspect cannot find a source file (built in, or a file that is gone)
        return None
    mod_name = f"_expertlab_kernel_{kind}_{digest}"
    with _LOCK:  # threads of one process (a thread-pool sweep) import each module once
        mod = sys.modules.get(mod_name)
        if mod is None:
            folder = cache_dir()
            path = folder / f"{kind}_{digest}.py"
            try:
                folder.mkdir(parents=True, exist_ok=True)
                _write_atomically(path, source)
            except OSError:
                return None
            mod = _import_file(mod_name, path)
    return mod.__dict__.get(driver.__name__)  # None: a stale module; the caller compiles in memory
