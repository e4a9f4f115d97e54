"""Export of results: xarray, pandas, save/load, and the notebook views of RunResult and SweepResult."""

import dataclasses
import json
import math
import os
import sys
import time

import numpy as np
import pytest

import expertlab
from expertlab import sim
from expertlab.experts import hedge, instances
from expertlab.sim import _storage
from expertlab.sim._storage import BlockError
from expertlab.sim._sweep import normalize_config

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")

REP_OFFSET = 7


@pytest.fixture(scope="module")
def res():
    """Hedge on random coins: regret differs across replications; a final array with a second axis."""
    return sim.run(hedge(), instances.fair_coins(4), horizon=60, n_reps=5, seed=3, rep_offset=REP_OFFSET)


@pytest.fixture(scope="module")
def bandit_res():
    learner, env, horizon = sim.get_learner("ucb1").example()
    return sim.run(learner, env, horizon, n_reps=4, seed=2)


# -- RunResult.to_xarray ---------------------------------------------------------


def test_metric_variables_are_checkpoint_by_rep(res):
    ds = res.to_xarray()
    x = res.metrics["regret"]
    # the test can only see a transposition if replications differ
    assert not np.all(x == x[:, :1])
    assert ds["regret"].dims == ("checkpoint", "rep")
    assert ds["regret"].shape == (res.checkpoints.size, res.n_reps)
    # element by element, by label: checkpoint c, replication rep_offset + r is metrics[i, r]
    for i, c in enumerate(res.checkpoints):
        for r in range(res.n_reps):
            assert ds["regret"].sel(checkpoint=int(c), rep=REP_OFFSET + r).item() == x[i, r]
    # a replication's path is a column of metrics, not a row
    np.testing.assert_array_equal(ds["regret"].sel(rep=REP_OFFSET + 2).values, x[:, 2])


def test_coordinates_are_steps_and_replication_indices(res):
    ds = res.to_xarray()
    np.testing.assert_array_equal(ds["checkpoint"].values, res.checkpoints)
    assert ds["checkpoint"].values[-1] == 60 and np.issubdtype(ds["checkpoint"].dtype, np.integer)
    assert ds["rep"].values.tolist() == [7, 8, 9, 10, 11]


def test_final_arrays_are_rep_first_variables(res):
    ds = res.to_xarray()
    v = ds["final_expert_regret"]
    assert v.dims == ("rep", "final_expert_regret_dim1") and v.shape == (5, 4)
    np.testing.assert_array_equal(v.values, res.final["expert_regret"])
    np.testing.assert_array_equal(v.sel(rep=REP_OFFSET + 3).values, res.final["expert_regret"][3])


def test_attributes(res):
    attrs = res.to_xarray().attrs
    assert attrs["learner"] == "hedge" and attrs["environment"] == res.environment
    assert attrs["unit"] == "round" and attrs["horizon"] == 60 and attrs["backend"] == res.backend
    assert attrs["seed"] == "3" and int(attrs["seed"]) == res.seed
    assert attrs["expertlab_version"] == expertlab.__version__
    assert attrs["wall_time"] == res.wall_time
    assert attrs["learner_param_schedule"] == "anytime"
    assert attrs["environment_param_n_experts"] == 4


def test_non_scalar_parameters_become_json_text(bandit_res):
    attrs = bandit_res.to_xarray().attrs
    assert isinstance(attrs["environment_param_means"], str)
    assert json.loads(attrs["environment_param_means"]) == [0.3, 0.5, 0.7]
    assert attrs["learner_param_c"] == 2.0
    learner, env, horizon = sim.get_learner("ucbvi").example()
    mdp = sim.run(learner, env, horizon, n_reps=2, seed=1)
    attrs = mdp.to_xarray().attrs
    assert attrs["learner_param_stationary"] == "false" and attrs["unit"] == "episode"
    odd = dataclasses.replace(bandit_res, learner_params={"w": np.array([[1, 2], [3, 4]]), "none": None,
                                                          "pair": (1, 2.5), "big": 2 ** 64 - 1})
    attrs = odd.to_xarray().attrs
    assert json.loads(attrs["learner_param_w"]) == [[1, 2], [3, 4]]
    assert attrs["learner_param_none"] == "null" and json.loads(attrs["learner_param_pair"]) == [1, 2.5]
    assert attrs["learner_param_big"] == str(2 ** 64 - 1)


def test_dataset_survives_netcdf(tmp_path, bandit_res):
    ds = bandit_res.to_xarray()
    path = tmp_path / "run.nc"
    ds.to_netcdf(path, engine="scipy")
    with xr.open_dataset(path, engine="scipy") as back:
        back = back.load()
    np.testing.assert_array_equal(back["regret"].values, bandit_res.metrics["regret"])
    np.testing.assert_array_equal(back["final_pulls"].values, bandit_res.final["pulls"])
    assert back.attrs["seed"] == str(bandit_res.seed) and back.attrs["environment_param_means"] == "[0.3,0.5,0.7]"
    assert back.attrs["horizon"] == bandit_res.horizon


def test_dataset_holds_copies(res):
    before = res.metrics["regret"].copy()
    ds = res.to_xarray()
    ds["regret"].values[:] = -1.0
    np.testing.assert_array_equal(res.metrics["regret"], before)


def test_clashing_names_are_refused(res):
    clash = dataclasses.replace(res, metrics={"rep": res.metrics["regret"]})
    with pytest.raises(ValueError, match="'rep'"):
        clash.to_xarray()
    clash = dataclasses.replace(res, metrics={"final_expert_regret": res.metrics["regret"]})
    with pytest.raises(ValueError, match="final_expert_regret"):
        clash.to_xarray()


# -- RunResult.to_pandas -----------------------------------------------------------


def test_tidy_frame_rows_and_columns(bandit_res):
    df = bandit_res.to_pandas()
    n_ck, n_reps, n_metrics = bandit_res.checkpoints.size, bandit_res.n_reps, len(bandit_res.metrics)
    assert n_metrics == 2 and len(df) == n_ck * n_reps * n_metrics
    assert list(df.columns) == ["checkpoint", "rep", "metric", "value", "learner", "environment"]
    assert set(df["learner"]) == {"ucb1"} and set(df["environment"]) == {bandit_res.environment}
    assert set(df["metric"]) == {"regret", "reward"}


def test_tidy_frame_values_match_the_arrays(res, bandit_res):
    for r in (res, bandit_res):
        df = r.to_pandas()
        for name, arr in r.metrics.items():
            part = df[df["metric"] == name]
            i = np.searchsorted(r.checkpoints, part["checkpoint"].to_numpy())
            j = part["rep"].to_numpy() - r.rep_offset
            assert np.array_equal(r.checkpoints[i], part["checkpoint"].to_numpy())
            np.testing.assert_array_equal(part["value"].to_numpy(), arr[i, j])
            # every (checkpoint, rep) pair exactly once
            assert len(set(zip(i.tolist(), j.tolist()))) == arr.size
            mean = part.groupby("checkpoint")["value"].mean().to_numpy()
            np.testing.assert_allclose(mean, arr.mean(axis=1), rtol=1e-12)


# -- save / load -------------------------------------------------------------------


def _assert_equal_params(a, b, where="params"):
    assert type(a) is type(b) or (isinstance(a, np.generic) and type(b) in (int, float, bool)), \
        f"{where}: {type(a).__name__} came back as {type(b).__name__}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), where
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for k in a:
            _assert_equal_params(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_equal_params(x, y, f"{where}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), where
    else:
        assert a == b, where


def _assert_identical(a, b):
    for field in ("learner", "environment", "unit", "horizon", "n_reps", "seed", "rep_offset", "backend",
                  "wall_time"):
        assert getattr(a, field) == getattr(b, field), field
    _assert_equal_params(dict(a.learner_params), dict(b.learner_params), "learner_params")
    _assert_equal_params(dict(a.environment_params), dict(b.environment_params), "environment_params")
    for x, y in [(a.checkpoints, b.checkpoints)] + [(a.metrics[k], b.metrics[k]) for k in a.metrics] \
            + [(a.final[k], b.final[k]) for k in a.final]:
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
    assert list(a.metrics) == list(b.metrics) and list(a.final) == list(b.final)  # order kept too


@pytest.mark.parametrize("name", ["hedge", "ucb1", "ucbvi", "thompson_sampling"])
def test_save_load_round_trip_is_exact(tmp_path, name):
    learner, env, horizon = sim.get_learner(name).example()
    res = sim.run(learner, env, horizon, n_reps=3, seed=12345, rep_offset=3)
    written = res.save(tmp_path / f"{name}.npz")
    assert written == tmp_path / f"{name}.npz"
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{name}.json", f"{name}.npz"]
    back = sim.RunResult.load(tmp_path / f"{name}.npz")
    _assert_identical(res, back)
    _assert_identical(res, sim.RunResult.load(str(tmp_path / f"{name}.json")))  # either file names the pair
    assert back.mean("regret")[-1] == res.mean("regret")[-1]


def test_round_trip_keeps_arrays_tuples_and_non_finite_parameters(tmp_path, res):
    params = {"prior": (1, 2.5), "eta": float("inf"), "lo": -math.inf, "nan": math.nan,
              "w": np.arange(6, dtype=np.float32).reshape(2, 3), "mask": np.array([True, False]),
              "nested": {"a": [np.int64(3), None, True, "s"], "b": np.array(4.0)}}
    odd = dataclasses.replace(res, learner_params=params, environment_params={"means": np.array([0.1, 0.2])},
                              seed=2 ** 64 - 1)
    odd.save(tmp_path / "odd.npz")
    back = sim.RunResult.load(tmp_path / "odd.npz")
    _assert_identical(odd, back)
    assert isinstance(back.learner_params["prior"], tuple) and back.learner_params["w"].dtype == np.float32
    assert back.seed == 2 ** 64 - 1


def test_a_sweep_block_loads_as_a_result(tmp_path):
    cfg = {"learner": "hedge", "instance": "fair_coins", "horizon": 20}
    swept = sim.sweep([cfg], n_reps=4, block_size=2, executor="serial", out=tmp_path)
    block = sim.RunResult.load(tmp_path / swept.config_ids[0] / "block_1.npz")
    assert block.rep_offset == 2 and block.n_reps == 2
    np.testing.assert_array_equal(block.metrics["regret"], swept.results[0].metrics["regret"][:, 2:])


def test_save_replaces_an_existing_pair(tmp_path, res, bandit_res):
    res.save(tmp_path / "r.npz")
    bandit_res.save(tmp_path / "r.npz")
    _assert_identical(bandit_res, sim.RunResult.load(tmp_path / "r.npz"))


def test_save_interrupted_before_the_sidecar_is_refused_on_load(tmp_path, res, monkeypatch):
    real = _storage.atomic_write_bytes

    def die_on_sidecar(path, data):
        if str(path).endswith(".json"):
            raise KeyboardInterrupt
        real(path, data)

    monkeypatch.setattr(_storage, "atomic_write_bytes", die_on_sidecar)
    with pytest.raises(KeyboardInterrupt):
        res.save(tmp_path / "r.npz")
    monkeypatch.undo()
    with pytest.raises(BlockError, match="no sidecar") as info:
        sim.RunResult.load(tmp_path / "r.npz")
    assert str(tmp_path / "r.json") in str(info.value)


def test_save_killed_while_replacing_leaves_no_torn_file(tmp_path, res, bandit_res, monkeypatch):
    res.save(tmp_path / "r.npz")
    old_npz = (tmp_path / "r.npz").read_bytes()
    real_replace = os.replace

    def killed(src, dst):
        if str(dst).endswith("r.npz"):
            raise KeyboardInterrupt  # the process dies between writing the temporary file and the rename
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        bandit_res.save(tmp_path / "r.npz")
    monkeypatch.undo()
    assert (tmp_path / "r.npz").read_bytes() == old_npz  # never a mixture
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.npz"]  # no temporary file, no stale sidecar
    with pytest.raises(BlockError, match="no sidecar"):
        sim.RunResult.load(tmp_path / "r.npz")


def _truncate(npz, side):
    npz.write_bytes(npz.read_bytes()[:200])
    return npz


def _flip_byte(npz, side):
    b = bytearray(npz.read_bytes())
    b[len(b) // 2] ^= 0xFF
    npz.write_bytes(bytes(b))
    return npz


def _garbage_sidecar(npz, side):
    side.write_text('{"format": 2, "seed": ')
    return side


def _sidecar_without_keys(npz, side):
    side.write_text('{"format": 2}')
    return side


def _no_sidecar(npz, side):
    side.unlink()
    return side


def _no_npz(npz, side):
    npz.unlink()
    return npz


def _bad_param_marker(npz, side):
    d = json.loads(side.read_text())
    d["learner_params"] = {"w": {"__ndarray__": "params__9"}}
    side.write_text(json.dumps(d))
    return side


@pytest.mark.parametrize("damage", [_truncate, _flip_byte, _garbage_sidecar, _sidecar_without_keys,
                                    _no_sidecar, _no_npz, _bad_param_marker])
def test_damaged_file_error_names_the_file(tmp_path, res, damage):
    npz = tmp_path / "r.npz"
    res.save(npz)
    at_fault = damage(npz, tmp_path / "r.json")
    with pytest.raises(BlockError) as info:
        sim.RunResult.load(npz)
    assert isinstance(info.value, ValueError)
    assert info.value.path == at_fault and str(at_fault) in str(info.value)


def test_missing_result_is_file_not_found_naming_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="no saved result") as info:
        sim.RunResult.load(tmp_path / "nothing.npz")
    assert str(tmp_path / "nothing.npz") in str(info.value)


def test_bad_paths_and_parameters_are_refused(tmp_path, res):
    with pytest.raises(ValueError, match=r"path must name the \.npz.*run\.txt"):
        res.save(tmp_path / "run.txt")
    with pytest.raises(ValueError, match="path must name"):
        sim.RunResult.load(tmp_path / "run")
    with pytest.raises(TypeError, match="path must be a str or path-like"):
        res.save(3)
    with pytest.raises(TypeError, match="path must be a str or path-like"):
        sim.RunResult.load(None)
    with pytest.raises(FileNotFoundError, match="cannot write r.npz in the folder"):
        res.save(tmp_path / "missing_folder" / "r.npz")
    with pytest.raises(TypeError, match=r"learner_params\['f'\]"):
        dataclasses.replace(res, learner_params={"f": object()}).save(tmp_path / "f.npz")
    with pytest.raises(TypeError, match=r"learner_params\['o'\] is an array of Python objects"):
        dataclasses.replace(res, learner_params={"o": np.array([None, 1])}).save(tmp_path / "o.npz")
    with pytest.raises(ValueError, match="reserves"):
        dataclasses.replace(res, learner_params={"d": {"__tuple__": [1]}}).save(tmp_path / "d.npz")
    assert not list(tmp_path.iterdir())  # nothing was written by the refused calls


def test_save_does_not_overwrite_a_foreign_json(tmp_path, res):
    notes = tmp_path / "run.json"
    notes.write_text('{"my": "notes"}')
    with pytest.raises(FileExistsError, match="not the sidecar of a stored result") as info:
        res.save(tmp_path / "run.npz")
    assert str(notes) in str(info.value)
    assert notes.read_text() == '{"my": "notes"}' and not (tmp_path / "run.npz").exists()


# -- optional dependencies ---------------------------------------------------------


@pytest.mark.parametrize("module, call", [
    ("xarray", lambda r, s: r.to_xarray()), ("pandas", lambda r, s: r.to_pandas()),
    ("xarray", lambda r, s: s.to_xarray()), ("pandas", lambda r, s: s.to_pandas())])
def test_missing_library_names_the_extra(monkeypatch, res, small_sweep, module, call):
    monkeypatch.setitem(sys.modules, module, None)  # makes ``import module`` fail
    with pytest.raises(ImportError, match=rf"needs {module}.*pip install expertlab\[data\]"):
        call(res, small_sweep)


# -- SweepResult -------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_sweep():
    cfgs = sim.expand_grid({"learner": "hedge", "instance": "fair_coins", "horizon": 40},
                           {"instance_params.n_experts": [2, 3], "learner_params.schedule": ["anytime", "doubling"]})
    return sim.sweep(cfgs, n_reps=3, block_size=2, executor="serial")


def test_sweep_dataset_has_a_config_dimension(small_sweep):
    ds = small_sweep.to_xarray()
    assert ds["regret"].dims == ("config", "checkpoint", "rep") and ds["regret"].shape[0] == 4
    assert ds["config"].values.tolist() == list(small_sweep.config_ids)
    assert ds["instance_params.n_experts"].values.tolist() == [2, 2, 3, 3]
    assert ds["learner_params.schedule"].values.tolist() == ["anytime", "doubling"] * 2
    assert ds["horizon"].values.tolist() == [40] * 4 and ds["n_reps"].values.tolist() == [3] * 4
    assert ds["seed"].values.tolist() == [str(s) for s in small_sweep.seeds]
    for i, r in enumerate(small_sweep.results):
        np.testing.assert_array_equal(ds["regret"].isel(config=i).values, r.metrics["regret"])
        np.testing.assert_array_equal(ds["final_expert_regret"].isel(config=i).values[:, :i // 2 + 2],
                                      r.final["expert_regret"])
    # the shorter expert axis of the 2-expert configs is padded with NaN
    assert np.isnan(ds["final_expert_regret"].isel(config=0).values[:, 2]).all()
    sel = ds["regret"].sel(config=small_sweep.config_ids[3], checkpoint=40, rep=1).item()
    assert sel == small_sweep.results[3].metrics["regret"][-1, 1]
    assert ds.attrs["block_size"] == 2 and ds.attrs["seed"] == "0"
    assert ds.attrs["compute_time"] == pytest.approx(sum(r.wall_time for r in small_sweep.results))


def test_sweep_dataset_aligns_configs_on_the_union_of_checkpoints():
    cfgs = [{"learner": "hedge", "instance": "fair_coins", "horizon": 30, "checkpoints": [5, 10, 30]},
            {"learner": "hedge", "instance": "fair_coins", "horizon": 30, "checkpoints": [10, 20, 30]}]
    swept = sim.sweep(cfgs, n_reps=2, executor="serial")
    ds = swept.to_xarray()
    assert ds["checkpoint"].values.tolist() == [5, 10, 20, 30]
    a, b = (ds["regret"].isel(config=i) for i in (0, 1))
    np.testing.assert_array_equal(a.sel(checkpoint=[5, 10, 30]).values, swept.results[0].metrics["regret"])
    np.testing.assert_array_equal(b.sel(checkpoint=[10, 20, 30]).values, swept.results[1].metrics["regret"])
    assert np.isnan(a.sel(checkpoint=20)).all() and np.isnan(b.sel(checkpoint=5)).all()
    assert ds["regret"].dtype == np.float64


def test_sweep_dataset_of_mixed_families_and_incomplete_sweeps(tmp_path):
    cfgs = [{"learner": "hedge", "instance": "fair_coins", "horizon": 20},
            {"learner": "ucb1", "instance": "bernoulli", "horizon": 20, "instance_params": {"means": [0.2, 0.6]}}]
    sim.sweep(cfgs, n_reps=4, block_size=2, executor="serial", out=tmp_path)
    first = _storage.config_id(normalize_config(cfgs[0]))
    (tmp_path / first / "block_1.json").unlink()
    part = sim.load_sweep(tmp_path, allow_incomplete=True)
    ds = part.to_xarray()
    assert ds["rep"].values.tolist() == [0, 1, 2, 3] and ds["n_reps"].values.tolist() == [2, 4]
    assert np.isnan(ds["regret"].isel(config=0).sel(rep=[2, 3])).all()
    np.testing.assert_array_equal(ds["regret"].isel(config=0).sel(rep=[0, 1]).values,
                                  part.results[0].metrics["regret"])
    assert np.isnan(ds["reward"].isel(config=0)).all()  # hedge records no reward
    np.testing.assert_array_equal(ds["reward"].isel(config=1).values, part.results[1].metrics["reward"])
    np.testing.assert_array_equal(ds["final_pulls"].isel(config=1).values, part.results[1].final["pulls"])
    assert ds["instance_params.means"].values.tolist() == ["", "[0.2,0.6]"]
    assert ds["learner"].values.tolist() == ["hedge", "ucb1"] and ds.attrs["out"] == str(tmp_path)
    df = part.to_pandas()
    assert len(df) == sum(r.checkpoints.size * r.n_reps * len(r.metrics) for r in part.results)


def test_sweep_frame(small_sweep):
    df = small_sweep.to_pandas()
    n_rows = [r.checkpoints.size * r.n_reps * len(r.metrics) for r in small_sweep.results]
    assert len(df) == sum(n_rows)
    assert list(df.columns[-4:]) == ["checkpoint", "rep", "metric", "value"]
    assert {"config", "learner", "instance", "horizon", "instance_params.n_experts",
            "learner_params.schedule"} <= set(df.columns)
    for cid, r in zip(small_sweep.config_ids, small_sweep.results):
        part = df[df["config"] == cid]
        assert set(part["instance_params.n_experts"]) == {r.environment_params["n_experts"]}
        final = part[part["checkpoint"] == r.checkpoints[-1]].sort_values("rep")["value"].to_numpy()
        np.testing.assert_array_equal(final, r.metrics["regret"][-1])


def test_empty_sweep_export_is_refused(small_sweep):
    empty = dataclasses.replace(small_sweep, configs=(), config_ids=(), seeds=(), results=())
    with pytest.raises(ValueError, match="no config to export"):
        empty.to_xarray()
    with pytest.raises(ValueError, match="no config to export"):
        empty.to_pandas()


# -- timing in the summary ---------------------------------------------------------


def test_summary_reports_elapsed_and_summed_compute_time_apart(small_sweep):
    t0 = time.perf_counter()
    swept = sim.sweep([{"learner": "hedge", "instance": "fair_coins", "horizon": 20}], n_reps=4, block_size=2,
                      executor="serial")
    outer = time.perf_counter() - t0
    assert 0 < swept.elapsed_time <= outer
    assert swept.compute_time == sum(r.wall_time for r in swept.results) > 0
    rows = small_sweep.summary()
    assert "wall_time" not in rows[0]
    assert [r["compute_time"] for r in rows] == [r.wall_time for r in small_sweep.results]
    # four blocks that each ran 10 s on parallel workers, in 12 s of wall-clock time
    blocks = tuple(dataclasses.replace(r, wall_time=20.0) for r in small_sweep.results[:2])
    parallel = dataclasses.replace(small_sweep, configs=small_sweep.configs[:2],
                                   config_ids=small_sweep.config_ids[:2], seeds=small_sweep.seeds[:2],
                                   results=blocks, n_computed=4, n_loaded=0, elapsed_time=12.0)
    text = parallel.summary_text()
    assert "wall_s" not in text and text.splitlines()[0].split()[-1] == "compute_s"
    assert text.splitlines()[2].split()[-1] == "20.00"
    assert text.splitlines()[-1] == ("elapsed 12.00 s in this call (4 blocks computed, 0 loaded); "
                                     "compute 40.00 s summed over the 4 blocks")
    assert parallel.compute_time == 40.0


# -- notebook views ----------------------------------------------------------------


def _mean_se(x):
    last = x[-1]
    return f"{last.mean():.4g} ± {last.std(ddof=1) / np.sqrt(last.size):.2g}"


def test_run_result_html(bandit_res):
    page = bandit_res._repr_html_()
    assert page.startswith("<table>") and page.endswith("</table>")
    for cell in ("ucb1(c=2.0)", bandit_res.environment, "round", f">{bandit_res.horizon}<",
                 f">{bandit_res.n_reps}<", f">{bandit_res.seed}<", f">{bandit_res.backend}<"):
        assert cell in page, cell
    for name, arr in bandit_res.metrics.items():
        assert f"{name} at {bandit_res.horizon} (mean ± se)</th><td" in page
        assert _mean_se(arr) in page
    assert page.count("<tr>") == 7 + len(bandit_res.metrics) + 1  # fields, metrics, the final arrays


def test_html_is_escaped(res):
    odd = dataclasses.replace(res, learner="<script>", environment_params={"name": "a&b"})
    page = odd._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page and "a&amp;b" in page


def test_sweep_result_html(small_sweep):
    page = small_sweep._repr_html_()
    assert page.count("<tr>") == 1 + len(small_sweep)
    for cid, r in zip(small_sweep.config_ids, small_sweep.results):
        assert cid in page and _mean_se(r.metrics["regret"]) in page
    assert "regret (mean ± se)" in page and "4 configs x 3 reps" in page


def test_sweep_result_text_repr_is_short(small_sweep):
    lines = repr(small_sweep).splitlines()
    assert len(lines) == 2 + 4 and lines[0].startswith("SweepResult(4 configs x 3 reps")
    assert "compute" in lines[1] and "elapsed" in lines[1]
    r3 = small_sweep.results[3]
    assert lines[5].startswith(f"  {small_sweep.config_ids[3]} hedge(schedule='doubling') on fair_coins(n_experts=3)")
    assert lines[5].endswith(f"horizon 40: regret {_mean_se(r3.metrics['regret'])}")
    many = dataclasses.replace(small_sweep, configs=small_sweep.configs * 3, config_ids=small_sweep.config_ids * 3,
                               seeds=small_sweep.seeds * 3, results=small_sweep.results * 3)
    lines = repr(many).splitlines()
    assert len(lines) <= 8 and lines[-1] == "  ... and 7 more configs"
