"""``sim.run(..., dtype="float32")``: the opt-in single-precision runs, against float64.

A float32 run draws the same random numbers as the float64 run of the same
seed (same keys, same uniforms); only the learner's arithmetic and the
environment's outcomes are rounded to float32, and the metrics are
accumulated in float64.  So the two runs agree closely, and where a rounding
breaks a near-tie differently (an index learner) the mean regret moves by a
small fraction of its standard error.  Checked here on the NumPy array path,
on ``array_api_strict`` (what CuPy needs) and on the CUDA kernels under the
CUDA simulator.
"""

from __future__ import annotations

import numpy as np
import pytest

from expertlab import sim
from expertlab.bandits import exp3, instances as bandit_instances, thompson_sampling, ucb1
from expertlab.experts import hedge, instances as expert_instances
from expertlab.sim._engine import _run_array_on
from expertlab.testing import run_in_cuda_simulator

ARMS = (0.5, 0.45, 0.3)


def _pairs():
    return {
        "hedge/fair_coins": (hedge(), expert_instances.fair_coins(10)),
        "hedge/needle": (hedge(), expert_instances.needle(10, 0.1)),
        "hedge-tuned/sleeping": (hedge(horizon=400), expert_instances.sleeping(expert_instances.iid_uniform(6), 0.5)),
        "ucb1/bernoulli": (ucb1(), bandit_instances.bernoulli(list(ARMS))),
        "thompson/bernoulli": (thompson_sampling(), bandit_instances.bernoulli(list(ARMS))),
    }


def _spy(learner, seen):
    """``learner`` whose ``update`` records the floating dtypes of the state it returns and of the action."""

    def update(state, action, feedback, keys):
        new = learner.update(state, action, feedback, keys)
        for part in (*new, getattr(action, "p", action)):
            if hasattr(part, "dtype") and np.dtype(str(part.dtype)).kind == "f":
                seen.add(np.dtype(str(part.dtype)).name)
        return new

    return learner._replace(update=update)


@pytest.mark.parametrize("name", sorted(_pairs()))
def test_float32_state_stays_float32(name):
    learner, env = _pairs()[name]
    seen = set()
    res = sim.run(_spy(learner, seen), env, 30, 4, seed=1, backend="numpy", dtype="float32")
    assert res.dtype == "float32" and res.backend == "numpy"
    assert seen == {"float32"}, f"{name}: float state in {seen}"
    seen64 = set()
    sim.run(_spy(learner, seen64), env, 30, 4, seed=1, backend="numpy")
    assert seen64 == {"float64"}
    for arr in res.metrics.values():
        assert arr.dtype == np.float64  # metrics are accumulated in float64


# horizon, n_reps and the largest relative difference of the mean regret allowed at any checkpoint
# (see the tolerance stated in sim.run); measured in these settings: hedge below 1e-6, UCB1 about 5e-4,
# Thompson sampling 0 (integer counts, 0/1 rewards and float64 beta draws).
TOLERANCE = {
    "hedge/fair_coins": (2000, 200, 1e-5),
    "hedge/needle": (2000, 200, 1e-5),
    "hedge-tuned/sleeping": (400, 100, 1e-5),
    "ucb1/bernoulli": (2000, 200, 1e-2),
    "thompson/bernoulli": (1000, 100, 1e-12),
}


@pytest.mark.parametrize("name", sorted(TOLERANCE))
def test_float32_mean_regret_within_tolerance_of_float64(name):
    learner, env = _pairs()[name]
    horizon, n_reps, rtol = TOLERANCE[name]
    a = sim.run(learner, env, horizon, n_reps, seed=5, backend="numpy")
    b = sim.run(learner, env, horizon, n_reps, seed=5, backend="numpy", dtype="float32")
    assert (a.dtype, b.dtype) == ("float64", "float32")
    for metric in a.metrics:
        ma, mb = a.mean(metric), b.mean(metric)
        assert np.all(np.isfinite(mb))
        scale = np.maximum(np.abs(ma), 1.0)
        rel = np.abs(mb - ma) / scale
        assert rel.max() <= rtol, f"{name} {metric}: relative difference {rel.max():.3g} > {rtol}"
        # a float32 run must not move the mean by more than a standard error (or the relative
        # tolerance where the metric has no spread, e.g. a pseudo-regret after one round)
        se = a.stderr(metric)
        ok = np.abs(mb - ma) <= np.maximum(se, rtol * scale)
        assert ok.all(), f"{name} {metric}: |diff| {np.abs(mb - ma).max():.3g} exceeds a standard error"
    if name.startswith("hedge"):
        # the distributions differ by float32 rounding only: every replication agrees closely
        assert np.max(np.abs(a.metrics["regret"] - b.metrics["regret"])) < 1e-2
        assert not np.array_equal(a.metrics["regret"], b.metrics["regret"])  # float32 did change the arithmetic


def test_float32_keeps_the_random_draws():
    # Thompson sampling on Bernoulli arms: counts and rewards are exact in float32 and the beta draws use the same
    # uniforms, so the pulls are the same arm for arm
    learner, env = _pairs()["thompson/bernoulli"]
    a = sim.run(learner, env, 300, 20, seed=2, backend="numpy")
    b = sim.run(learner, env, 300, 20, seed=2, backend="numpy", dtype="float32")
    np.testing.assert_array_equal(a.final["pulls"], b.final["pulls"])
    np.testing.assert_array_equal(a.metrics["reward"], b.metrics["reward"])


def test_float32_on_array_api_strict_matches_numpy():
    xps = pytest.importorskip("array_api_strict")
    for name in ("hedge/needle", "ucb1/bernoulli", "thompson/bernoulli"):
        learner, env = _pairs()[name]
        ref, fref = _run_array_on(np, learner, env, 60, 3, seed=4, dtype="float32")
        got, fgot = _run_array_on(xps, learner, env, 60, 3, seed=4, dtype="float32")
        f64, _ = _run_array_on(np, learner, env, 60, 3, seed=4)
        for key in ref:
            np.testing.assert_allclose(np.asarray(got[key]), ref[key], rtol=1e-6, atol=1e-6, err_msg=name)
        for key in fref:
            np.testing.assert_allclose(np.asarray(fgot[key]), fref[key], rtol=1e-6, atol=1e-6, err_msg=name)
        if name.startswith("hedge"):
            assert not np.array_equal(ref["regret"], f64["regret"])  # the strict run really was float32


@pytest.mark.parametrize("bad", ["float16", "f4", "Float32", 32, np.int32, np.complex64, True])
def test_bad_dtype_is_refused_naming_dtype(bad):
    with pytest.raises(ValueError, match="dtype"):
        sim.run(hedge(), expert_instances.needle(3, 0.2), 10, 2, dtype=bad)


def test_float32_accepts_numpy_spellings():
    for spelling in (np.float32, np.dtype("float32"), "float32"):
        assert sim.run(hedge(), expert_instances.needle(3, 0.2), 10, 2, dtype=spelling).dtype == "float32"
    for spelling in (None, np.float64, "float64"):
        assert sim.run(hedge(), expert_instances.needle(3, 0.2), 10, 2, dtype=spelling).dtype == "float64"


def test_float32_refused_where_not_supported():
    env = expert_instances.needle(3, 0.2)
    with pytest.raises(ValueError, match="dtype='float32'.*backend='numba'"):
        sim.run(hedge(), env, 10, 2, backend="numba", dtype="float32")
    with pytest.raises(ValueError, match="dtype='float32'.*learner 'exp3'"):
        sim.run(exp3(), bandit_instances.bernoulli([0.3, 0.6]), 10, 2, dtype="float32")
    # "auto" never picks a compiled CPU path for float32, however large the run
    assert sim.pick_backend(hedge(), env, "auto", horizon=10**6, n_reps=10**4, dtype="float32") == "numpy"
    assert sim.pick_backend(hedge(), env, "auto", horizon=10**6, n_reps=10**4) == "numba"
    with pytest.raises(ValueError, match="dtype='float32'.*2\\*\\*24"):
        sim.run(ucb1(), bandit_instances.bernoulli([0.3, 0.6]), 2**24 + 1, 1, dtype="float32")


def test_float32_through_sweep_and_storage(tmp_path):
    from expertlab.sim._sweep import normalize_config

    c = normalize_config({"learner": "hedge", "instance": "fair_coins", "horizon": 50, "dtype": "float32"})
    assert c["dtype"] == "float32"
    assert "dtype" not in normalize_config({"learner": "hedge", "instance": "fair_coins", "horizon": 50,
                                            "dtype": "float64"})
    with pytest.raises(ValueError, match="dtype"):
        normalize_config({"learner": "hedge", "instance": "fair_coins", "horizon": 50, "dtype": "half"})
    out = sim.sweep([c, dict(c, dtype="float64")], n_reps=6, block_size=3, seed=1, out=tmp_path / "s",
                    progress=False)
    res = out.results
    assert [r.dtype for r in res] == ["float32", "float64"]
    assert np.max(np.abs(res[0].metrics["regret"] - res[1].metrics["regret"])) < 1e-3
    again = sim.load_sweep(tmp_path / "s").results
    assert [r.dtype for r in again] == ["float32", "float64"]
    r = sim.run(hedge(), expert_instances.needle(3, 0.2), 10, 2, dtype="float32")
    r.save(tmp_path / "one.npz")
    assert sim.RunResult.load(tmp_path / "one.npz").dtype == "float32"
    with pytest.raises(ValueError, match="dtype"):
        sim.RunResult.concat([r, sim.run(hedge(), expert_instances.needle(3, 0.2), 10, 2, rep_offset=2)])


CUDA_SCRIPT = r"""
import json, numpy as np
from expertlab import sim
from expertlab.experts import hedge, instances
from expertlab.bandits import ucb1, thompson_sampling, instances as bi
out = {}
for name, L, E in (("hedge", hedge(), instances.needle(3, 0.2)),
                   ("ucb1", ucb1(), bi.bernoulli([0.3, 0.6])),
                   ("thompson", thompson_sampling(), bi.bernoulli([0.3, 0.6]))):
    a = sim.run(L, E, horizon=12, n_reps=2, seed=9, backend="numpy", dtype="float32")
    b = sim.run(L, E, horizon=12, n_reps=2, seed=9, backend="cuda", dtype="float32")
    c = sim.run(L, E, horizon=12, n_reps=2, seed=9, backend="cuda")
    out[name] = {"dtype": b.dtype, "backend": b.backend,
                 "f32": max(float(np.max(np.abs(a.metrics[k] - b.metrics[k]))) for k in a.metrics),
                 "f32_vs_f64": max(float(np.max(np.abs(c.metrics[k] - b.metrics[k]))) for k in a.metrics)}
print(json.dumps(out))
"""


def test_cuda_kernels_in_float32_under_the_simulator():
    got = run_in_cuda_simulator(CUDA_SCRIPT)
    assert set(got) == {"hedge", "ucb1", "thompson"}
    for name, d in got.items():
        assert d["dtype"] == "float32" and d["backend"] == "cuda", (name, d)
        # the CUDA kernel and the array path in float32, and the kernel in float32 and in float64
        assert d["f32"] <= 1e-5, (name, d)
        assert d["f32_vs_f64"] <= 1e-5, (name, d)
    assert got["hedge"]["f32_vs_f64"] > 0  # the kernel's float32 work arrays did round Hedge's weights


def test_cli_run_takes_dtype(capsys):
    import json

    from expertlab import cli

    argv = ["run", "hedge", "--instance", "needle", "--instance-param", "n_experts=3", "--horizon", "40",
            "--reps", "3", "--backend", "numpy", "--json"]
    assert cli.main(argv + ["--dtype", "float32"]) == 0
    rec32 = json.loads(capsys.readouterr().out)
    assert cli.main(argv) == 0
    rec64 = json.loads(capsys.readouterr().out)
    assert (rec32["dtype"], rec64["dtype"]) == ("float32", "float64")
    m32, m64 = np.array(rec32["metrics"]["regret"]["mean"]), np.array(rec64["metrics"]["regret"]["mean"])
    assert np.max(np.abs(m32 - m64)) < 1e-4 and not np.array_equal(m32, m64)
    with pytest.raises(SystemExit):
        cli.main(argv + ["--dtype", "float16"])
    with pytest.raises(SystemExit, match="dtype='float32'.*backend='numba'"):
        cli.main(argv[:-3] + ["--backend", "numba", "--json", "--dtype", "float32"])


def test_result_stored_without_dtype_loads_as_float64(tmp_path):
    import json

    r = sim.run(hedge(), expert_instances.needle(3, 0.2), 10, 2, seed=1)
    r.save(tmp_path / "old.npz")
    side = json.loads((tmp_path / "old.json").read_text())
    assert side.pop("dtype") == "float64"
    (tmp_path / "old.json").write_text(json.dumps(side))
    back = sim.RunResult.load(tmp_path / "old.npz")
    assert back.dtype == "float64"
    np.testing.assert_array_equal(back.metrics["regret"], r.metrics["regret"])


def test_dtype_fields_refuse_other_types():
    ok = lambda *a, **k: None  # noqa: E731
    with pytest.raises(ValueError, match="dtype"):
        sim.register_fast_path("cuda", "x-float16", supports=ok, metrics=(), driver=ok, dtypes=("float16",))
    with pytest.raises(TypeError, match="dtypes"):
        sim.register_fast_path("cuda", "x-str", supports=ok, metrics=(), driver=ok, dtypes="float32")
    with pytest.raises(ValueError, match="dtype"):
        sim.EnvSpec(feedback="full", unit="round", n_actions=2, dtype="float16")
    r = sim.run(hedge(), expert_instances.needle(3, 0.2), 10, 2)
    import dataclasses

    with pytest.raises(ValueError, match="dtype"):
        dataclasses.replace(r, dtype="half")
