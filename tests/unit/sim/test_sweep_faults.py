"""Sweeps that are killed, resumed with other settings, or pointed at unusable folders.

* temporary files of a killed writer are removed on resume (and nothing else is);
* the default process pool dies with its driver (SIGKILL, SIGTERM): no worker, fork
  server or resource tracker survives it;
* another block size is refused, with messages that say what differs;
* reloading a finished sweep writes nothing; write errors name the folder; the CLI
  prints one ``error:`` line; ``load_sweep`` names the damaged file.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from expertlab.sim import _storage, _sweep
from expertlab.sim._sweep import load_sweep, sweep

BASE = {"learner": "hedge", "instance": "piecewise_best", "horizon": 120,
        "instance_params": {"n_experts": 3, "period": 20}}


def _grid():
    return [BASE, dict(BASE, instance_params={"n_experts": 2, "period": 20})]


def _listing(root: Path) -> dict:
    """Every file and folder under ``root`` (hidden ones too): ``{relative path: (inode, mtime_ns, size)}``."""
    found = {".": (root.stat().st_ino, root.stat().st_mtime_ns, 0)}
    for p in sorted(root.rglob("*")):
        st = p.stat()
        found[str(p.relative_to(root))] = (st.st_ino, st.st_mtime_ns, st.st_size if p.is_file() else 0)
    return found


def _env(*paths) -> dict:
    """The environment for a helper process: ``paths`` first on its PYTHONPATH."""
    old = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, paths), *([old] if old else [])]))


# -- 1. temporary files of a killed writer -----------------------------------

KILL_MID_WRITE = r"""
import os, signal, sys
from expertlab.sim import _sweep

_replace = os.replace

def replace(src, dst):
    # die like a SIGKILL between writing block 1's temporary .npz and renaming it
    if os.path.basename(str(dst)) == "block_1.npz":
        os.kill(os.getpid(), signal.SIGKILL)
    return _replace(src, dst)

os.replace = replace
_sweep.sweep([dict(b) for b in __import__("json").loads(sys.argv[2])], 10, block_size=4, seed=3,
             executor="serial", out=sys.argv[1], progress=False)
"""


def test_resume_removes_the_sweeps_own_temp_files_only(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", KILL_MID_WRITE, str(out), json.dumps([BASE])],
                          capture_output=True, env=_env(), timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    (cdir,) = [p for p in out.iterdir() if p.is_dir()]
    left = [p.name for p in cdir.iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 1 and left[0].startswith(".block_1.npz."), left  # a real leftover of the kill
    # what a kill during the other atomic writes leaves, plus look-alikes that are not the sweep's own
    own = [out / ".sweep.json.a1b2c3d4.tmp", cdir / ".config.json.x_y9z8w7.tmp",
           cdir / ".block_2.json.abcdefgh.tmp", cdir / left[0]]
    foreign = [out / ".notes.tmp", out / "notes.txt", out / ".block_0.npz.abcdefgh.tmp",
               cdir / ".sweep.json.abcdefgh.tmp", cdir / "block_2.npz.abcdefgh.tmp", cdir / ".block_2.npz.tmp",
               cdir / ".block_x.npz.abcdefgh.tmp", cdir / ".block_2.npz.abcdefgh.tmp.bak"]
    for p in own[:-1] + foreign:
        p.write_bytes(b"partial")

    res = sweep([BASE], n_reps=10, block_size=4, seed=3, executor="serial", out=out)
    assert (res.n_loaded, res.n_computed) == (1, 2)
    assert [p.name for p in own if p.exists()] == []
    assert [p.name for p in foreign if not p.exists()] == []
    assert sorted(p.name for p in cdir.iterdir() if p not in foreign) == [
        "block_0.json", "block_0.npz", "block_1.json", "block_1.npz", "block_2.json", "block_2.npz", "config.json"]


def test_remove_temp_files_leaves_other_config_folders_alone(tmp_path):
    sweep([BASE], n_reps=4, block_size=4, executor="serial", out=tmp_path)
    other = tmp_path / "0123456789ab"  # a config of an earlier sweep into the same out
    other.mkdir()
    stray = other / ".block_0.npz.abcdefgh.tmp"
    stray.write_bytes(b"x")
    sweep([BASE], n_reps=4, block_size=4, executor="serial", out=tmp_path)
    assert stray.exists()
    assert _storage.remove_temp_files(other) == [stray] and not stray.exists()


# -- 2. workers die with their driver -----------------------------------------

SLOW_FACTORY = '''
import multiprocessing, time
from expertlab.experts import hedge

def slow_hedge(sleep=0.0):
    """hedge, built slowly in pool workers (not in the driver, which builds each config once to check it)."""
    if multiprocessing.parent_process() is not None:
        time.sleep(sleep)
    return hedge()
'''

POOL_DRIVER = r"""
import sys
import slow_factory
from expertlab.sim import _sweep

if __name__ == "__main__":
    cfg = {"learner": "slow_hedge", "learner_params": {"sleep": 0.5}, "instance": "fair_coins", "horizon": 20}
    _sweep.sweep([cfg], 400, block_size=1, out=sys.argv[1], progress=False,
                 learners={"slow_hedge": slow_factory.slow_hedge})  # executor=None: the default process pool
"""


def _group(pgid: int) -> dict:
    """Live processes (zombies left out) of process group ``pgid``: ``{pid: command line}``."""
    found = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # state, ppid, pgrp, ...
        if int(fields[2]) == pgid and fields[0] not in "ZX":
            found[int(d.name)] = cmd[:120]
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("sig", [signal.SIGKILL, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)],
                         ids=["SIGKILL", "SIGTERM"])
def test_killed_driver_leaves_no_process_behind(tmp_path, sig):
    """The driver of a pooled sweep is killed mid-sweep: its workers, fork server and resource tracker exit."""
    (tmp_path / "slow_factory.py").write_text(SLOW_FACTORY)
    out = tmp_path / "out"
    with open(tmp_path / "stderr.txt", "wb") as err, \
            subprocess.Popen([sys.executable, "-c", POOL_DRIVER, str(out)], env=_env(tmp_path), cwd=tmp_path,
                             stdout=subprocess.DEVNULL, stderr=err, start_new_session=True) as proc:
        pgid = proc.pid  # start_new_session: the driver leads its own group, which its helpers join
        try:
            deadline = time.monotonic() + 120
            while not list(out.glob("*/block_*.json")):
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("the driver stored no block: " + (tmp_path / "stderr.txt").read_text())
                time.sleep(0.02)
            helpers = {pid: cmd for pid, cmd in _group(pgid).items() if pid != proc.pid}
            assert any("forkserver" in c for c in helpers.values()), helpers
            assert any("resource_tracker" in c for c in helpers.values()), helpers
            assert len(helpers) >= 3, helpers  # fork server, resource tracker, at least one worker
            os.kill(proc.pid, sig)
            assert proc.wait(timeout=30) == -sig
            t_kill = time.monotonic()
            while _group(pgid) and time.monotonic() - t_kill < 10:
                time.sleep(0.05)
            survivors = _group(pgid)
            waited = time.monotonic() - t_kill
            print(f"{sig.name}: {len(helpers)} helpers; all gone {waited:.2f} s after the driver died")
        finally:
            for pid in _group(pgid):  # never leave them running, even when the test fails
                os.kill(pid, signal.SIGKILL)
    assert survivors == {}, f"still running {waited:.1f} s after the driver died: {survivors}"


# -- 3. another block size -----------------------------------------------------


@pytest.mark.parametrize("new", [16, 2, 5])
def test_other_block_size_is_refused_and_out_is_untouched(tmp_path, new):
    sweep(_grid(), n_reps=10, block_size=4, executor="serial", out=tmp_path)
    before = _listing(tmp_path)
    with pytest.raises(ValueError, match=rf"block_size={new} differs from the stored block_size=4") as info:
        sweep(_grid(), n_reps=10, block_size=new, executor="serial", out=tmp_path)
    assert "n_reps" not in str(info.value)
    assert _listing(tmp_path) == before


def test_larger_block_size_is_refused_even_if_block_0_is_damaged(tmp_path):
    first = sweep([BASE], n_reps=10, block_size=4, executor="serial", out=tmp_path)
    (tmp_path / first.config_ids[0] / "block_0.json").unlink()
    with pytest.raises(ValueError, match=r"block_size=16 differs from the stored block_size=4 .*block_1\.json"):
        sweep([BASE], n_reps=10, block_size=16, executor="serial", out=tmp_path)
    assert (tmp_path / first.config_ids[0] / "block_2.npz").exists()


def test_smaller_n_reps_message_says_n_reps(tmp_path):
    sweep([BASE], n_reps=10, block_size=4, executor="serial", out=tmp_path)
    with pytest.raises(ValueError, match=r"n_reps=9 is smaller than the 10 replications stored") as info:
        sweep([BASE], n_reps=9, block_size=4, executor="serial", out=tmp_path)
    assert "block_size" not in str(info.value) and "n_reps>=10" in str(info.value)


# -- 4. read-only folders, write errors, the CLI, damaged blocks -------------------


def _deny(*args, **kwargs):
    raise PermissionError(13, "Permission denied (test: read-only folder)")


def test_reloading_a_complete_sweep_writes_nothing(tmp_path, monkeypatch):
    first = sweep(_grid(), n_reps=10, block_size=4, executor="serial", out=tmp_path)
    before = _listing(tmp_path)
    time.sleep(0.01)  # so that a rewrite would show in mtimes
    for name in ("atomic_write_bytes", "write_manifest", "write_config", "write_block"):
        monkeypatch.setattr(_storage, name, _deny)
    for name in ("unlink", "replace", "rename", "mkdir", "rmdir"):
        monkeypatch.setattr(os, name, _deny)
    again = sweep(_grid(), n_reps=10, block_size=4, executor="serial", out=tmp_path)
    assert (again.n_computed, again.n_loaded) == (0, 6)
    assert again.config_ids == first.config_ids
    monkeypatch.undo()
    assert _listing(tmp_path) == before


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores read-only permissions")
def test_reloading_from_a_read_only_folder(tmp_path):
    sweep(_grid(), n_reps=10, block_size=4, executor="serial", out=tmp_path / "out")
    folders = [tmp_path / "out", *(p for p in (tmp_path / "out").iterdir() if p.is_dir())]
    for d in folders:
        d.chmod(0o555)
    try:
        again = sweep(_grid(), n_reps=10, block_size=4, executor="serial", out=tmp_path / "out")
        assert again.n_loaded == 6
        with pytest.raises(PermissionError) as info:
            sweep(_grid(), n_reps=12, block_size=4, executor="serial", out=tmp_path / "out")
        assert str(tmp_path / "out") in str(info.value) and ".tmp" not in str(info.value)
    finally:
        for d in folders:
            d.chmod(0o755)


def test_write_error_names_the_folder_not_the_temp_file(tmp_path, monkeypatch):
    sweep([BASE], n_reps=4, block_size=4, executor="serial", out=tmp_path)

    def mkstemp(dir, prefix, suffix):
        raise PermissionError(13, "Permission denied", os.path.join(dir, f"{prefix}k3v9x_0q{suffix}"))

    def run_block(*args):
        raise AssertionError("a task ran although out cannot be written")

    monkeypatch.setattr(_storage.tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(_sweep, "run_block", run_block)
    with pytest.raises(PermissionError) as info:  # n_reps grew: there is work, and the manifest to rewrite
        sweep([BASE], n_reps=8, block_size=4, executor="serial", out=tmp_path)
    msg = str(info.value)
    assert str(tmp_path) in msg and "sweep.json" in msg and ".tmp" not in msg, msg
    assert info.value.errno == 13 and info.value.filename == str(tmp_path)


def test_failed_rename_names_the_folder(tmp_path, monkeypatch):
    def replace(src, dst):
        raise PermissionError(13, "Permission denied", src, None, dst)

    monkeypatch.setattr(_storage.os, "replace", replace)
    with pytest.raises(PermissionError) as info:
        _storage.atomic_write_bytes(tmp_path / "x.bin", b"data")
    monkeypatch.undo()
    assert ".tmp" not in str(info.value) and str(tmp_path) in str(info.value) and "x.bin" in str(info.value)
    assert list(tmp_path.iterdir()) == []


SPEC = {"base": BASE, "n_reps": 2, "block_size": 2}


def _cli_sweep(tmp_path, out):
    from expertlab import cli

    spec = tmp_path / "s.json"
    spec.write_text(json.dumps(SPEC))
    return cli.main(["sweep", str(spec), "--out", str(out)])


def test_cli_sweep_out_is_a_file(tmp_path):
    (tmp_path / "taken").write_text("not a folder")
    with pytest.raises(SystemExit) as info:
        _cli_sweep(tmp_path, tmp_path / "taken")
    msg = info.value.code
    assert isinstance(msg, str) and msg.startswith("error: ") and "\n" not in msg, msg
    assert str(tmp_path / "taken") in msg and "not a folder" in msg
    assert (tmp_path / "taken").read_text() == "not a folder"


def test_cli_sweep_out_unwritable(tmp_path, monkeypatch):
    monkeypatch.setattr(_storage, "atomic_write_bytes", _deny)
    with pytest.raises(SystemExit) as info:
        _cli_sweep(tmp_path, tmp_path / "res")
    msg = info.value.code
    assert isinstance(msg, str) and msg.startswith("error: ") and "Permission denied" in msg, msg


def test_cli_sweep_out_of_another_block_size(tmp_path, capsys):
    sweep([BASE], n_reps=2, block_size=1, executor="serial", out=tmp_path / "res")
    with pytest.raises(SystemExit, match=r"^error: block_size=2 differs from the stored block_size=1"):
        _cli_sweep(tmp_path, tmp_path / "res")


def _truncate_npz(d):
    p = d / "block_1.npz"
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _garbage_sidecar(d):
    (d / "block_1.json").write_text("{")


def _drop_sidecar(d):
    (d / "block_1.json").unlink()


def _drop_both(d):
    (d / "block_1.json").unlink()
    (d / "block_1.npz").unlink()


def _drop_npz(d):
    (d / "block_1.npz").unlink()


def _wrong_shape(d):
    side = json.loads((d / "block_1.json").read_text())
    side["n_reps"] = 3  # the arrays hold 4 replications; the .npz is untouched, so its hash still matches
    (d / "block_1.json").write_text(json.dumps(side))


def _drop_config(d):
    (d / "config.json").unlink()


@pytest.mark.parametrize("damage, match", [
    (_truncate_npz, r"block_1\.npz: contents do not match the sidecar's SHA-256 \(truncated"),
    (_garbage_sidecar, r"block_1\.json: unreadable sidecar"),
    (_drop_sidecar, r"block_1\.json: missing: block_1\.npz has no sidecar"),
    (_drop_both, r"block_1\.npz: missing \(no block_1\.npz and no sidecar block_1\.json\)"),
    (_drop_npz, r"block_1\.npz: missing \(its sidecar block_1\.json exists\)"),
    (_wrong_shape, r"block_1\.npz: wrong shape: metrics '\w+' has shape \(\d+, 4\), expected \(\d+, 3\)"),
    (_drop_config, r"config\.json: missing"),
])
def test_load_sweep_names_the_damaged_file(tmp_path, damage, match):
    first = sweep(_grid(), n_reps=10, block_size=4, executor="serial", out=tmp_path)
    cid = first.config_ids[1]
    damage(tmp_path / cid)
    with pytest.raises(ValueError, match="incomplete") as info:
        load_sweep(tmp_path)
    msg = str(info.value)
    assert f"{cid}/" in msg and first.config_ids[0] not in msg, msg
    assert re.search(match, msg), msg
