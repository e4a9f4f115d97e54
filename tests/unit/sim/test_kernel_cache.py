"""The on-disk cache of the fused Numba drivers (``expertlab.sim._kernel_cache``).

The process-level checks run in fresh subprocesses with ``EXPERTLAB_CACHE_DIR``
pointing into ``tmp_path``: the first process compiles and writes the driver,
the second loads it (Numba's dispatcher counts a cache hit and no miss, and no
file changes), and a process whose cache folder cannot be created compiles in
memory; all three give the same numbers bit for bit, and they agree with the
NumPy path.  The other checks generate modules in-process without compiling.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import expertlab
from expertlab import sim
from expertlab.bandits import instances as bandit_instances
from expertlab.bandits import ucb1
from expertlab.experts import hedge, instances
from expertlab.sim import _bandit_kernels, _kernel_cache, _kernels

ROOT = Path(__file__).resolve().parents[3]

# One run of the README pair; prints what the tests compare as JSON.
SCRIPT = r"""
import json, sys, time
import numpy as np
from expertlab import sim
from expertlab.experts import hedge, instances
from expertlab.sim import _kernels

learner, env = hedge(), instances.fair_coins(10)
t0 = time.perf_counter()
res = sim.run(learner, env, horizon=200, n_reps=16, seed=1, backend="numba")
call = time.perf_counter() - t0
drive = _kernels.numba_driver(learner.kernel, env)
ref = sim.run(learner, env, horizon=200, n_reps=16, seed=1, backend="numpy")
print(json.dumps({
    "regret": res.metrics["regret"].tolist(),
    "expert_regret": res.final["expert_regret"].tolist(),
    "numpy_diff": float(np.max(np.abs(res.metrics["regret"] - ref.metrics["regret"]))),
    "hits": sum(drive.stats.cache_hits.values()),
    "misses": sum(drive.stats.cache_misses.values()),
    "module": drive.py_func.__module__,
    "wall_time": res.wall_time,
    "call": call,
}))
"""


def _run(cache: Path) -> dict:
    env = {**os.environ, "EXPERTLAB_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("NUMBA_CACHE_DIR", None)  # Numba's own cache goes next to the generated module
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _files(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.stat().st_size)
            for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def cold_and_warm(tmp_path_factory):
    """The first (compiling) and the second (loading) process on one cache folder."""
    cache = tmp_path_factory.mktemp("kernels")
    first = _run(cache)
    after_first = _files(cache)
    second = _run(cache)
    return cache, first, after_first, second, _files(cache)


def test_second_process_loads_the_driver_instead_of_compiling(cold_and_warm):
    cache, first, after_first, second, after_second = cold_and_warm
    modules = [name for name in after_first if name.endswith(".py")]
    assert len(modules) == 1 and modules[0].startswith("full_"), after_first
    assert any(name.endswith(".nbi") for name in after_first), "Numba wrote no cache index"
    assert first["module"].startswith("_expertlab_kernel_full_")
    assert (first["hits"], first["misses"]) == (0, 1)
    assert second["module"] == first["module"]
    assert (second["hits"], second["misses"]) == (1, 0)
    assert after_second == after_first, "the second process rewrote or added files"
    assert second["regret"] == first["regret"] and second["expert_regret"] == first["expert_regret"]
    assert first["numpy_diff"] <= 1e-10 and second["numpy_diff"] <= 1e-10
    # compiling happened before the clock started: the timed loop of 16 x 200 rounds is a small part of the call
    assert first["wall_time"] < 0.2 * first["call"], first


def test_unwritable_cache_folder_compiles_in_memory_with_the_same_numbers(cold_and_warm, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    fallback = _run(blocker / "kernels")  # cannot be created: its parent is a file
    assert fallback["module"] == "expertlab.sim._kernels"
    assert fallback["misses"] == 1 and fallback["hits"] == 0
    assert not (blocker / "kernels").exists()
    _, first, _, _, _ = cold_and_warm
    assert fallback["regret"] == first["regret"] and fallback["expert_regret"] == first["expert_regret"]
    assert fallback["numpy_diff"] <= 1e-10


# --------------------------------------------------------------------------
# in-process: module generation, hashing and fallbacks (nothing is compiled)


def _full_parts(env=None):
    env = instances.fair_coins(4) if env is None else env
    spec = hedge().kernel
    body = _kernels._make_body(spec, env)
    return _kernels._make_drive(body, spec.n_rows, spec.n_scalars), body


def _cache(drive, body, kind="full"):
    return _kernel_cache.cached_njit(kind, drive, helpers=(body,), options=_kernels._DRIVE_OPTIONS,
                                     extra_modules=_kernels._CACHE_MODULES)


@pytest.fixture(autouse=True)
def _forget_generated_modules():
    """A generated module is imported once per process: each test starts without any (earlier tests of the
    process may have imported the same ones) and the others get theirs back afterwards."""
    def generated():
        return {k: v for k, v in sys.modules.items() if k.startswith("_expertlab_kernel_")}

    saved = generated()
    for name in saved:
        del sys.modules[name]
    yield
    for name in generated():
        del sys.modules[name]
    sys.modules.update(saved)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "kernels"
    monkeypatch.setenv(_kernel_cache.ENV_VAR, str(folder))
    return folder


def test_cache_dir_honours_the_environment_variable(monkeypatch, tmp_path):
    monkeypatch.setenv(_kernel_cache.ENV_VAR, str(tmp_path / "x"))
    assert _kernel_cache.cache_dir() == tmp_path / "x"
    monkeypatch.delenv(_kernel_cache.ENV_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert _kernel_cache.cache_dir() == tmp_path / "xdg" / "expertlab" / "kernels"
    assert _kernel_cache.cache_dir().parts[-2:] == ("expertlab", "kernels")


def test_generated_module_imports_the_step_functions_by_name(cache_dir):
    drive, body = _full_parts()
    fn = _cache(drive, body)
    assert fn is not None and fn.py_func.__module__.startswith("_expertlab_kernel_full_")
    (path,) = cache_dir.glob("full_*.py")
    text = path.read_text()
    assert "from expertlab.experts._hedge import _k_act as k_act" in text
    assert "from expertlab.experts.instances import _fair_coin_loss as loss_fn" in text
    assert "cache=True" in text and "parallel=True" in text
    assert "has_awake = False" in text and "k_rows = 2" in text
    # the same pair again: the same module, no new file
    again = _cache(*_full_parts())
    assert again is fn and list(cache_dir.glob("*.py")) == [path]
    assert not list(cache_dir.glob(".tmp-*")), "a temporary file was left behind"


def test_a_changed_source_gives_a_new_module(cache_dir, monkeypatch):
    drive, body = _full_parts()
    _cache(drive, body)
    (old,) = cache_dir.glob("full_*.py")
    stamp = old.stat().st_mtime_ns
    real = _kernel_cache._source_bytes

    def edited(name):
        data = real(name)
        return data + b"\n# edited\n" if name == "expertlab.experts._hedge" else data

    monkeypatch.setattr(_kernel_cache, "_source_bytes", edited)
    fn = _cache(*_full_parts())
    new = set(cache_dir.glob("full_*.py")) - {old}
    assert len(new) == 1, "an edited learner module must give a new file name"
    assert fn.py_func.__module__ == "_expertlab_kernel_" + new.pop().stem
    assert old.stat().st_mtime_ns == stamp, "the old module was rewritten"


def test_the_hash_covers_versions_and_the_template_but_not_unrelated_modules(cache_dir, monkeypatch):
    drive, body = _full_parts()
    source, imported = _kernel_cache._generate("full", drive, (body,), _kernels._DRIVE_OPTIONS)
    modules = _kernel_cache._dependency_modules([drive, body, *imported]) | set(_kernels._CACHE_MODULES)
    assert {"expertlab._random", "expertlab.sim._kernels", "expertlab.experts._hedge",
            "expertlab.experts.instances"} <= modules
    assert not any(m.startswith(("expertlab.mdp", "expertlab.bandits", "numba", "numpy")) for m in modules)
    base = _kernel_cache._digest(source, modules)
    monkeypatch.setattr(expertlab, "__version__", expertlab.__version__ + ".post1")
    assert _kernel_cache._digest(source, modules) != base
    monkeypatch.undo()
    assert _kernel_cache._digest(source + "#", modules) != base
    assert _kernel_cache._digest(source, modules) == base


def test_bandit_drivers_are_cached_too(cache_dir):
    spec, env = ucb1().kernel, bandit_instances.bernoulli([0.2, 0.5])
    body = _bandit_kernels._make_body(spec, env)
    drive = _bandit_kernels._make_drive(body, spec.n_rows, spec.n_scalars)
    fn = _kernel_cache.cached_njit("bandit", drive, helpers=(body,), options=_bandit_kernels._DRIVE_OPTIONS,
                                   extra_modules=_bandit_kernels._CACHE_MODULES)
    assert fn is not None
    (path,) = cache_dir.glob("bandit_*.py")
    assert "from expertlab.bandits.instances import" in path.read_text()


def test_a_closure_step_function_is_not_cached(cache_dir):
    # the sleeping instance's loss and awake functions are closures: not importable by name
    drive, body = _full_parts(instances.sleeping(instances.fair_coins(4)))
    assert _cache(drive, body) is None
    assert not cache_dir.exists() or not list(cache_dir.glob("*.py"))


def test_an_unwritable_folder_is_not_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(_kernel_cache.ENV_VAR, str(blocker / "kernels"))
    drive, body = _full_parts(instances.iid_uniform(3))
    assert _cache(drive, body) is None


def test_writing_is_atomic_and_skips_identical_files(tmp_path):
    path = tmp_path / "m.py"
    _kernel_cache._write_atomically(path, "x = 1\n")
    stamp = path.stat().st_mtime_ns
    _kernel_cache._write_atomically(path, "x = 1\n")
    assert path.stat().st_mtime_ns == stamp, "an identical file must not be rewritten (Numba checks its stamp)"
    _kernel_cache._write_atomically(path, "x = 2\n")
    assert path.read_text() == "x = 2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_cached_njit_refuses_bad_arguments(cache_dir):
    drive, body = _full_parts()
    with pytest.raises(ValueError, match="kind"):
        _kernel_cache.cached_njit("full drive", drive, helpers=(body,))
    with pytest.raises(ValueError, match="cache"):
        _kernel_cache.cached_njit("full", drive, helpers=(body,), options={"cache": False})


def test_register_fast_path_refuses_a_prepare_that_is_not_callable():
    with pytest.raises(TypeError, match="prepare"):
        sim.register_fast_path("numba", "never-registered", supports=lambda learner, env: False, metrics=(),
                               driver=lambda *a: None, prepare=1)
    assert "never-registered" not in {f.name for f in sim._engine._FAST_PATHS}


def test_prepare_runs_before_the_clock(monkeypatch):
    """``run`` calls a path's ``prepare`` with the driver's arguments before timing the driver."""
    calls = []
    learner, env = hedge(), instances.fair_coins(3)
    fast = sim._engine._fast_path("numba", learner, env, ["regret"])

    def prepare(*args):
        calls.append(("prepare", args[2:4]))

    def driver(*args):
        calls.append(("driver", args[2:4]))
        return {"regret": np.zeros((args[6].size, args[3]))}, {"expert_regret": np.zeros((args[3], 3))}

    monkeypatch.setattr(sim._engine, "_FAST_PATHS", [fast._replace(driver=driver, prepare=prepare)])
    res = sim.run(learner, env, horizon=10, n_reps=2, seed=0, backend="numba", metrics=["regret"])
    assert calls == [("prepare", (10, 2)), ("driver", (10, 2))]
    assert res.backend == "numba"


def test_a_source_file_edited_since_import_is_not_cached(cache_dir, monkeypatch):
    """inspect reads the file as it is now: lines that no longer hold the function are refused, not compiled."""
    drive, body = _full_parts()
    real = _kernel_cache.inspect.getsource

    def shifted(fn):  # the lines now at the function's old place: another function
        return "def something_else(x):\n    return x\n" if fn is drive else real(fn)

    monkeypatch.setattr(_kernel_cache.inspect, "getsource", shifted)
    assert _cache(drive, body) is None
    assert not cache_dir.exists() or not list(cache_dir.glob("*.py"))
    monkeypatch.setattr(_kernel_cache.inspect, "getsource", real)
    assert _cache(drive, body) is not None   # the wrong variant: the same call with the file as imported
