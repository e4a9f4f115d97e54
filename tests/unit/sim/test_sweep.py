"""Resumable sweeps: blocking independence, resume after SIGKILL, executors, bad input."""

import concurrent.futures as cf
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import hedge, instances
from expertlab.sim import _storage
from expertlab.sim._sweep import (
    SweepResult,
    config_seed,
    expand_grid,
    load_sweep,
    load_sweep_spec,
    normalize_config,
    run_block,
    sweep,
)

BASE = {"learner": "hedge", "instance": "piecewise_best", "horizon": 120,
        "instance_params": {"n_experts": 3, "period": 20}}


def _assert_same_numbers(a, b, atol=0.0):
    np.testing.assert_array_equal(a.checkpoints, b.checkpoints)
    assert a.metrics.keys() == b.metrics.keys() and a.final.keys() == b.final.keys()
    for k in a.metrics:
        np.testing.assert_allclose(a.metrics[k], b.metrics[k], rtol=0, atol=atol)
    for k in a.final:
        np.testing.assert_allclose(a.final[k], b.final[k], rtol=0, atol=atol)
    assert (a.n_reps, a.seed, a.rep_offset) == (b.n_reps, b.seed, b.rep_offset)


def _assert_same_sweep(a, b, atol=0.0):
    assert a.config_ids == b.config_ids and a.seeds == b.seeds
    for ra, rb in zip(a.results, b.results):
        _assert_same_numbers(ra, rb, atol)


def _grid():
    return expand_grid(BASE, {"instance_params.n_experts": [2, 3]})


def _files(out):
    """``{relative path: (sha256, mtime_ns)}`` of every block file under ``out``."""
    found = {}
    for p in sorted(out.glob("*/block_*")):
        found[str(p.relative_to(out))] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
    return found


def my_hedge(eta=0.5):
    """A caller-supplied learner factory (top-level, so workers could import it)."""
    return hedge(eta=eta)


# -- seeds, configs, grids -------------------------------------------------


def test_blocking_independence():
    """20 replications in blocks of 7 equal one sim.run with n_reps=20."""
    res = sweep([BASE], n_reps=20, block_size=7, seed=3, executor="serial")
    assert res.n_computed == 3 and res.results[0].n_reps == 20
    ref = sim.run(hedge(), instances.piecewise_best(3, period=20), horizon=120, n_reps=20, seed=res.seeds[0])
    _assert_same_numbers(res.results[0], ref, atol=1e-12)
    assert "tracking_regret" in res.results[0].metrics


def test_config_seed_is_stable_and_content_based():
    c = normalize_config({"learner": "hedge", "instance": "fair_coins", "horizon": 100,
                          "instance_params": {"n_experts": 4}})
    # The documented recipe, recomputed here from the standard library: SHA-256 of the
    # sorted, space-free JSON of the seed keys -> four little-endian 32-bit words ->
    # SeedSequence(entropy=root seed, spawn_key=words) -> first uint64.
    import hashlib
    import json

    import numpy as np

    text = json.dumps(c, sort_keys=True, separators=(",", ":"))
    assert _storage.config_id(c) == hashlib.sha256(text.encode()).hexdigest()[:12]
    seed_part = {k: c[k] for k in ("learner", "learner_params", "instance", "instance_params", "horizon")}
    digest = hashlib.sha256(json.dumps(seed_part, sort_keys=True, separators=(",", ":")).encode()).digest()
    words = tuple(int.from_bytes(digest[4 * j:4 * j + 4], "little") for j in range(4))
    for root in (0, 1):
        ss = np.random.SeedSequence(entropy=root, spawn_key=words)
        assert config_seed(c, root) == int(ss.generate_state(1, dtype=np.uint64)[0])
    assert config_seed(c, 0) != config_seed(c, 1)
    assert config_seed(dict(c, backend="numba"), 0) == config_seed(c, 0)
    assert config_seed(dict(c, checkpoints=[1, 100]), 0) == config_seed(c, 0)
    assert config_seed(dict(c, horizon=101), 0) != config_seed(c, 0)


def test_adding_a_config_keeps_the_others_numbers():
    alone = sweep([BASE], n_reps=6, block_size=4, executor="serial")
    more = sweep([dict(BASE, horizon=60), BASE], n_reps=6, block_size=4, executor="serial")
    assert more.seeds[1] == alone.seeds[0]
    _assert_same_numbers(more.results[1], alone.results[0])


def test_expand_grid():
    cfgs = expand_grid(BASE, {"learner_params.eta": [0.1, 1.0], "horizon": [10, 20, 30]})
    assert len(cfgs) == 6
    assert [(c["learner_params"]["eta"], c["horizon"]) for c in cfgs[:3]] == [(0.1, 10), (0.1, 20), (0.1, 30)]
    assert all(c["instance_params"] == BASE["instance_params"] for c in cfgs)
    cfgs[0]["instance_params"]["n_experts"] = 99  # deep copies: the base is untouched
    assert BASE["instance_params"]["n_experts"] == 3
    assert expand_grid(BASE, {}) == [BASE]


@pytest.mark.parametrize("grid, exc, match", [
    ({"horizn": [1]}, ValueError, "unknown key 'horizn'"),
    ({"foo.bar": [1]}, ValueError, "unknown key 'foo.bar'"),
    ({"horizon.x": [1]}, ValueError, "may be dotted"),
    ({"learner_params.a.b": [1]}, ValueError, "may be dotted"),
    ({"horizon": []}, ValueError, "empty"),
    ({"horizon": 10}, TypeError, "list of values"),
    ({"learner_params": [{}], "learner_params.eta": [1.0]}, ValueError, "overlap"),
])
def test_expand_grid_rejects_bad_keys(grid, exc, match):
    with pytest.raises(exc, match=match):
        expand_grid(BASE, grid)


def test_typo_in_params_is_caught_before_running():
    cfgs = expand_grid(BASE, {"instance_params.n_expert": [2]})
    with pytest.raises(TypeError, match=r"configs\[0\].*n_expert"):
        sweep(cfgs, n_reps=2, executor="serial")


@pytest.mark.parametrize("configs, kwargs, exc, match", [
    ([dict(BASE, learner="nope")], {}, ValueError, "unknown learner 'nope'"),
    ([dict(BASE, instance="nope")], {}, ValueError, "unknown instance 'nope'"),
    ([dict(BASE, colour="red")], {}, ValueError, "unknown key"),
    ([{"learner": "hedge", "instance": "fair_coins"}], {}, ValueError, "horizon"),
    ([dict(BASE, horizon=0)], {}, ValueError, "horizon"),
    ([dict(BASE, backend="fortran")], {}, ValueError, "backend"),
    ([dict(BASE, checkpoints=[0, 5])], {}, ValueError, "checkpoints"),
    ([BASE], {"n_reps": 0}, ValueError, "n_reps"),
    ([BASE], {"n_reps": 2.5}, TypeError, "n_reps"),
    ([BASE], {"block_size": 0}, ValueError, "block_size"),
    ([BASE], {"block_size": -3}, ValueError, "block_size"),
    ([BASE], {"seed": None}, TypeError, "seed"),
    ([BASE], {"seed": -1}, ValueError, "seed"),
    ([BASE], {"executor": "threads"}, ValueError, "executor"),
    ([BASE], {"executor": object()}, TypeError, "executor"),
    ([BASE], {"executor": "serial", "scheduler": "tcp://x:1"}, ValueError, "not both"),
    ([BASE], {"progress": "yes"}, TypeError, "progress"),
    ([BASE], {"out": 3}, TypeError, "out"),
    ([BASE, dict(BASE)], {}, ValueError, "same config"),
    ([], {}, ValueError, "empty"),
    (BASE, {}, TypeError, "list"),
    ([BASE], {"learners": ["hedge"]}, TypeError, "learners"),
])
def test_bad_inputs(configs, kwargs, exc, match, tmp_path):
    kwargs = {"n_reps": 2, "executor": "serial", **kwargs}
    with pytest.raises(exc, match=match):
        sweep(configs, **kwargs)


def test_run_block_checks_block_range():
    c = normalize_config(BASE)
    with pytest.raises(ValueError, match="block"):
        run_block(c, 3, block_size=4, n_reps=10, seed=0)


def test_grid_spec_and_custom_factories():
    res = sweep({"base": dict(BASE, learner="my_hedge"), "grid": {"learner_params.eta": [0.25]}},
                n_reps=4, block_size=3, executor="serial", learners={"my_hedge": my_hedge})
    ref = sim.run(hedge(eta=0.25), instances.piecewise_best(3, period=20), 120, 4, seed=res.seeds[0])
    _assert_same_numbers(res.results[0], ref)
    with pytest.raises(ValueError, match="registered: my_hedge"):
        sweep([BASE], n_reps=2, executor="serial", learners={"my_hedge": my_hedge})


# -- storage and resume ----------------------------------------------------


def test_out_layout_and_resume_skips_finished_blocks(tmp_path):
    first = sweep(_grid(), n_reps=10, block_size=4, executor="serial", out=tmp_path)
    assert (first.n_computed, first.n_loaded) == (6, 0)
    for cid, cfg in zip(first.config_ids, first.configs):
        names = sorted(p.name for p in (tmp_path / cid).iterdir())
        assert names == ["block_0.json", "block_0.npz", "block_1.json", "block_1.npz",
                         "block_2.json", "block_2.npz", "config.json"]
        assert json.loads((tmp_path / cid / "config.json").read_text())["config"] == cfg
    before = _files(tmp_path)
    again = sweep(_grid(), n_reps=10, block_size=4, executor="serial", out=tmp_path)
    assert (again.n_computed, again.n_loaded) == (0, 6)
    assert _files(tmp_path) == before
    _assert_same_sweep(again, first)
    _assert_same_sweep(load_sweep(tmp_path), first)


def _truncate_npz(d):
    p = d / "block_1.npz"
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _garbage_sidecar(d):
    (d / "block_1.json").write_text("{")


def _drop_sidecar(d):
    (d / "block_1.json").unlink()


def _drop_npz(d):
    (d / "block_1.npz").unlink()


@pytest.mark.parametrize("damage", [_truncate_npz, _garbage_sidecar, _drop_sidecar, _drop_npz])
def test_damaged_block_is_recomputed(tmp_path, damage):
    first = sweep([BASE], n_reps=10, block_size=4, executor="serial", out=tmp_path)
    d = tmp_path / first.config_ids[0]
    intact = {k: v for k, v in _files(tmp_path).items() if "block_1" not in k}
    damage(d)
    with pytest.raises(ValueError, match="incomplete"):
        load_sweep(tmp_path)
    again = sweep([BASE], n_reps=10, block_size=4, executor="serial", out=tmp_path)
    assert (again.n_computed, again.n_loaded) == (1, 2)
    after = _files(tmp_path)
    assert {k: v for k, v in after.items() if "block_1" not in k} == intact
    _assert_same_sweep(again, first)
    _storage.load_block(d, 1)  # valid again


def test_growing_n_reps_recomputes_only_the_short_last_block(tmp_path):
    sweep([BASE], n_reps=10, block_size=4, executor="serial", out=tmp_path)
    before = _files(tmp_path)
    grown = sweep([BASE], n_reps=14, block_size=4, executor="serial", out=tmp_path)
    # blocks of 4: 0 and 1 are kept; the old last block 2 (2 reps) is regrown to 4; block 3 is new
    assert (grown.n_computed, grown.n_loaded) == (2, 2)
    after = _files(tmp_path)
    for k in ("block_0", "block_1"):
        assert all(after[p] == before[p] for p in before if f"/{k}." in p)
    fresh = sweep([BASE], n_reps=14, block_size=4, executor="serial")
    _assert_same_sweep(grown, fresh)


def test_mismatched_out_is_an_error(tmp_path):
    sweep([BASE], n_reps=10, block_size=4, seed=1, executor="serial", out=tmp_path)
    with pytest.raises(ValueError, match="block_size"):
        sweep([BASE], n_reps=10, block_size=5, seed=1, executor="serial", out=tmp_path)
    with pytest.raises(ValueError, match="seed"):
        sweep([BASE], n_reps=10, block_size=4, seed=2, executor="serial", out=tmp_path)
    with pytest.raises(ValueError, match="shrink"):
        sweep([BASE], n_reps=9, block_size=4, seed=1, executor="serial", out=tmp_path)


def test_failed_task_keeps_finished_blocks(tmp_path):
    bad = {"learner": "hedge", "instance": "loss_matrix", "horizon": 5,
           "instance_params": {"losses": [[0.0, 1.0], [1.0, 0.0]]}}  # horizon exceeds the 2 rows
    with pytest.raises(RuntimeError, match=r"2 of 4 sweep tasks failed.*configs\[1\].*horizon=5"):
        sweep([BASE, bad], n_reps=4, block_size=2, executor="serial", out=tmp_path)
    part = load_sweep(tmp_path, allow_incomplete=True)
    assert len(part) == 1 and part.results[0].n_reps == 4


SCRIPT = r"""
import json, os, sys, time
from expertlab.sim import _sweep

_real = _sweep.run_block

def _slow(*args, **kwargs):
    time.sleep(float(os.environ["EXPERTLAB_TEST_BLOCK_SLEEP"]))
    return _real(*args, **kwargs)

_sweep.run_block = _slow  # test-only hook, installed in this helper process
spec = json.loads(sys.argv[2])
_sweep.sweep(spec["configs"], spec["n_reps"], block_size=spec["block_size"], seed=spec["seed"],
             executor="serial", out=sys.argv[1], progress=False)
"""


def test_resume_after_sigkill(tmp_path):
    out = tmp_path / "out"
    spec = {"configs": _grid(), "n_reps": 12, "block_size": 4, "seed": 5}
    n_total = 6
    env = dict(os.environ, EXPERTLAB_TEST_BLOCK_SLEEP="0.3")
    with open(tmp_path / "stderr.txt", "wb") as err, \
            subprocess.Popen([sys.executable, "-c", SCRIPT, str(out), json.dumps(spec)], env=env,
                             stdout=subprocess.DEVNULL, stderr=err) as proc:
        deadline = time.monotonic() + 60
        while not list(out.glob("*/block_*.json")):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"helper ended before any block was stored: {(tmp_path / 'stderr.txt').read_text()}")
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL
    # Committed blocks are those with a sidecar; an .npz without one may be a torn write.
    sidecars = sorted(out.glob("*/block_*.json"))
    n_done = len(sidecars)
    assert 1 <= n_done < n_total
    committed = {k: v for k, v in _files(out).items()
                 if any(k.startswith(str(s.relative_to(out))[:-len(".json")] + ".") for s in sidecars)}
    assert len(committed) == 2 * n_done

    res = sweep(spec["configs"], spec["n_reps"], block_size=4, seed=5, executor="serial", out=out)
    assert (res.n_loaded, res.n_computed) == (n_done, n_total - n_done)
    after = _files(out)
    assert {k: after[k] for k in committed} == committed, "a finished block was rewritten"
    for cid in res.config_ids:
        names = sorted(p.name for p in (out / cid).glob("block_*"))
        assert names == sorted(f"block_{k}.{ext}" for k in range(3) for ext in ("json", "npz"))
    fresh = sweep(spec["configs"], spec["n_reps"], block_size=4, seed=5, executor="serial")
    _assert_same_sweep(res, fresh)
    _assert_same_sweep(load_sweep(out), fresh)


# -- executors -------------------------------------------------------------


def test_default_process_pool_matches_serial(tmp_path):
    serial = sweep(_grid(), n_reps=6, block_size=4, executor="serial")
    pooled = sweep(_grid(), n_reps=6, block_size=4, out=tmp_path)  # executor=None: ProcessPoolExecutor
    _assert_same_sweep(pooled, serial)
    assert pooled.n_computed == 4 and len(list(tmp_path.glob("*/block_*.json"))) == 4


def test_user_executor_is_left_open():
    serial = sweep([BASE], n_reps=6, block_size=2, executor="serial")
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        threaded = sweep([BASE], n_reps=6, block_size=2, executor=pool)
        assert pool.submit(int, "7").result() == 7
    _assert_same_sweep(threaded, serial)


def test_dask_local_cluster_matches_serial(tmp_path):
    distributed = pytest.importorskip("distributed")
    serial = sweep(_grid(), n_reps=6, block_size=4, executor="serial")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            via_client = sweep(_grid(), n_reps=6, block_size=4, executor=client, out=tmp_path / "a")
        via_address = sweep(_grid(), n_reps=6, block_size=4, scheduler=cluster.scheduler_address,
                            out=tmp_path / "b")
    _assert_same_sweep(via_client, serial)
    _assert_same_sweep(via_address, serial)
    _assert_same_sweep(load_sweep(tmp_path / "b"), serial)


def test_progress_bar_on_stderr(capsys, monkeypatch):
    from expertlab.sim import _progress

    monkeypatch.setattr(_progress, "PROGRESS_DELAY", 0.0)  # the bar shows at once, not after two seconds
    monkeypatch.setattr(_progress, "interactive", lambda: True)  # as in a terminal: the blocks' runs stay quiet
    sweep([BASE], n_reps=4, block_size=2, executor="serial", progress=True)
    err = capsys.readouterr().err
    assert "sweep" in err and "2/2" in err and "block" in err
    assert "round" not in err  # no bar of the runs inside the blocks
    sweep([BASE], n_reps=4, block_size=2, executor="serial", progress=False)
    assert capsys.readouterr().err == ""


# -- results and spec files ------------------------------------------------


def test_sweep_result_summary():
    res = sweep(_grid(), n_reps=5, block_size=2, executor="serial")
    assert isinstance(res, SweepResult) and len(res) == 2
    rows = res.summary("tracking_regret")
    assert [r["instance_params"]["n_experts"] for r in rows] == [2, 3]
    r1 = res.result(res.config_ids[1])
    assert rows[1]["mean"] == pytest.approx(r1.mean("tracking_regret")[-1])
    assert rows[1]["stderr"] == pytest.approx(r1.stderr("tracking_regret")[-1])
    text = res.summary_text()
    # header, rule, one row per config, and the line with the elapsed and compute times
    assert text.splitlines()[0].startswith("config_id") and len(text.splitlines()) == 5
    assert text.splitlines()[-1].startswith("elapsed ")
    assert res.config_ids[0] in text and "regret (mean ± se)" in text
    assert res.result(0) is res.results[0]
    assert "2 configs" in repr(res)


def test_load_sweep_incomplete(tmp_path):
    sweep(_grid(), n_reps=8, block_size=3, executor="serial", out=tmp_path)
    first_id = _storage.config_id(normalize_config(_grid()[0]))
    (tmp_path / first_id / "block_1.json").unlink()
    with pytest.raises(ValueError, match="incomplete: 2 of 6"):
        load_sweep(tmp_path)
    part = load_sweep(tmp_path, allow_incomplete=True)
    assert part.results[0].n_reps == 3 and part.results[1].n_reps == 8
    with pytest.raises(ValueError, match="not a sweep folder"):
        load_sweep(tmp_path / "nowhere")


TOML = """
n_reps = 6
block_size = 4
seed = 9
out = "results"

[base]
learner = "hedge"
instance = "piecewise_best"
horizon = 120

[base.instance_params]
n_experts = 3
period = 20

[grid]
"instance_params.n_experts" = [2, 3]
"""


def test_load_sweep_spec_toml_and_json(tmp_path):
    (tmp_path / "s.toml").write_text(TOML)
    spec = load_sweep_spec(tmp_path / "s.toml")
    assert spec["configs"] == _grid()
    assert (spec["n_reps"], spec["block_size"], spec["seed"]) == (6, 4, 9)
    assert spec["out"] == str(tmp_path / "results")
    (tmp_path / "s.json").write_text(json.dumps({"base": BASE, "grid": {"horizon": [10, 20]}, "n_reps": 3}))
    spec = load_sweep_spec(str(tmp_path / "s.json"))
    assert [c["horizon"] for c in spec["configs"]] == [10, 20] and (spec["block_size"], spec["seed"]) == (100, 0)
    res = sweep(**spec, executor="serial")
    assert res.n_reps == 3 and len(res) == 2


@pytest.mark.parametrize("name, text, match", [
    ("s.yaml", "", "json or .toml"),
    ("s.toml", "n_reps = [", "not valid TOML"),
    ("s.json", '{"base": {}, "n_reps": 2, "extra": 1}', "unknown key"),
    ("s.json", '{"base": {}}', "n_reps"),
    ("s.json", '{"base": {}, "n_reps": 2, "grid": {"bad": [1]}}', "unknown key 'bad'"),
    ("s.json", '{"base": {}, "n_reps": 0}', "n_reps"),
])
def test_load_sweep_spec_errors(tmp_path, name, text, match):
    (tmp_path / name).write_text(text)
    with pytest.raises(ValueError, match=match):
        load_sweep_spec(tmp_path / name)


# -- bandit learners --------------------------------------------------------

BANDIT = {"learner": "ucb1", "instance": "bernoulli", "horizon": 150,
          "instance_params": {"means": [0.4, 0.5, 0.7]}}


def test_bandit_sweep_equals_sim_run_and_resumes(tmp_path):
    from expertlab import bandits

    res = sweep([BANDIT, BASE], n_reps=9, block_size=4, executor="serial", out=tmp_path)
    direct = sim.run(bandits.ucb1(), bandits.instances.bernoulli([0.4, 0.5, 0.7]), 150, 9, res.seeds[0])
    np.testing.assert_array_equal(res.results[0].metrics["regret"], direct.metrics["regret"])
    np.testing.assert_array_equal(res.results[0].final["pulls"], direct.final["pulls"])
    assert res.results[0].final["pulls"].sum(axis=1).tolist() == [150] * 9
    again = sweep([BANDIT, BASE], n_reps=9, block_size=4, executor="serial", out=tmp_path)
    assert (again.n_computed, again.n_loaded) == (0, 6)
    _assert_same_sweep(res, again)
    assert load_sweep(tmp_path).results[0].metrics.keys() == direct.metrics.keys()


def test_bandit_sweep_backends_agree():
    cfgs = [dict(BANDIT, backend=b) for b in ("numpy", "numba")]
    res = sweep(cfgs, n_reps=6, block_size=3, executor="serial")
    assert res.seeds[0] == res.seeds[1]
    _assert_same_numbers(res.results[0], res.results[1], atol=1e-9)


@pytest.mark.parametrize("config, match", [
    (dict(BANDIT, instance="fair_coins", instance_params={}), "takes 'bandit' feedback but instance 'fair_coins'"),
    (dict(BASE, instance="bernoulli", instance_params={"means": [0.2, 0.8]}),
     "takes 'full' feedback but instance 'bernoulli' gives 'bandit'"),
])
def test_feedback_and_instance_kinds_must_match(config, match):
    with pytest.raises(ValueError, match=match):
        sweep([config], n_reps=2, executor="serial")


def test_default_registries_hold_every_family():
    from expertlab import sim
    from expertlab.sim._sweep import default_registries

    learners, insts = default_registries()
    assert set(learners) == set(sim.learners()) and set(insts) == set(sim.environments())
    families = {r.family for r in sim.learners().values()}
    assert {"experts", "bandits", "mdp", "balance"} <= families
    assert all(learners[n] is r.factory for n, r in sim.learners().items())