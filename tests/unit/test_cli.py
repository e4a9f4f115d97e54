import json
import textwrap

import pytest

from expertlab import cli


def test_list(capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "hedge" in out and "fair_coins" in out and "hedge.regret-vs-T" in out


def test_run_json(capsys):
    assert cli.main(["run", "hedge", "--instance", "fair_coins", "--instance-param", "n_experts=3",
                     "--param", "eta=0.5", "--horizon", "100", "--reps", "20", "--seed", "4", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["learner_params"] == {"eta": 0.5, "schedule": "fixed"}
    assert rec["environment_params"] == {"n_experts": 3} and rec["unit"] == "round"
    assert rec["checkpoints"][-1] == 100 and len(rec["metrics"]["regret"]["mean"]) == len(rec["checkpoints"])


def test_run_table(capsys):
    assert cli.main(["run", "hedge", "--instance", "needle", "--horizon", "1000", "--reps", "10",
                     "--backend", "numpy"]) == 0
    out = capsys.readouterr().out
    assert "pseudo_regret" in out and "1000" in out


def test_run_sleeping(capsys):
    assert cli.main(["run", "adanormalhedge", "--instance", "iid_uniform", "--awake", "0.4", "--horizon", "50",
                     "--reps", "5"]) == 0
    assert "sleeping_regret" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, match",
    [
        (["run", "nope", "--instance", "fair_coins"], "unknown learner"),
        (["run", "hedge", "--instance", "nope"], "unknown instance"),
        (["run", "hedge", "--instance", "fair_coins", "--param", "eta=-1"], "eta"),
        (["run", "hedge", "--instance", "fair_coins", "--param", "eta"], "key=value"),
        (["run", "hedge", "--instance", "fair_coins", "--horizon", "0"], "horizon"),
        (["run", "hedge", "--instance", "fair_coins", "--awake", "1.5"], "p_awake"),
    ],
)
def test_run_errors(argv, match):
    with pytest.raises(SystemExit, match=match):
        cli.main(argv)


SIM = '''
import numpy as np
from expertlab import sim
from expertlab.experts import hedge, instances

sim.register_claims(sim.RateClaim("test.cli-{name}", "regret", "T", "power", {pred}, 0.05,
                                  source="test", fit_decades=1.0))


def measure(s, backend, seed):
    res = sim.run(hedge(), instances.fair_coins(4), horizon=s["horizon"], n_reps=s["n_reps"], seed=seed,
                  backend=backend)
    return sim.Measurement(res.checkpoints, res.metrics["regret"], "T", "regret")


EXPERIMENTS = [sim.Experiment("test.cli-{name}", measure, quick=dict(horizon=2000, n_reps=200),
                              full=dict(horizon=2000, n_reps=200))]
'''


def _sims(tmp_path, name, pred):
    d = tmp_path / "sims" / "fam"
    d.mkdir(parents=True)
    (d / f"{name}.py").write_text(SIM.format(name=name, pred=pred))
    return tmp_path / "sims"


def test_rates_pass_writes_plot_and_report(tmp_path, capsys):
    sims = _sims(tmp_path, "good", 0.5)
    out = tmp_path / "out"
    code = cli.main(["rates", "--quick", "--sims", str(sims), "--only", "test.cli-good", "--out", str(out),
                     "--backend", "numpy"])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "pass" in text
    rep = json.loads((out / "report.json").read_text())
    assert rep["claims"][0]["claim"] == "test.cli-good" and rep["claims"][0]["passed"]
    assert (out / "test.cli-good.png").stat().st_size > 1000


def test_rates_fail_exits_nonzero(tmp_path, capsys):
    sims = _sims(tmp_path, "bad", 1.0)
    code = cli.main(["rates", "--quick", "--sims", str(sims), "--only", "test.cli-bad", "--out", str(tmp_path / "o"),
                     "--backend", "numpy"])
    assert code == 1
    assert "FAIL" in capsys.readouterr().out


def test_rates_jobs_give_the_same_report(tmp_path, capsys):
    """Two simulation files in two worker processes: the same verdicts and fits as one process, same order."""
    d = tmp_path / "sims" / "fam"
    d.mkdir(parents=True)
    for name in ("par-b", "par-a"):
        (d / f"{name}.py").write_text(SIM.format(name=name, pred=0.5))
    reports = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        code = cli.main(["rates", "--quick", "--sims", str(tmp_path / "sims"), "--only", "test.cli-par-*",
                         "--out", str(out), "--backend", "numpy", "--jobs", jobs])
        assert code == 0, capsys.readouterr().out
        reports.append(json.loads((out / "report.json").read_text())["claims"])
    assert [r["claim"] for r in reports[0]] == [r["claim"] for r in reports[1]] == ["test.cli-par-a", "test.cli-par-b"]
    for a, b in zip(*reports):
        assert a["fitted"] == b["fitted"] and a["ci_low"] == b["ci_low"] and a["passed"] and b["passed"]
    with pytest.raises(SystemExit, match="--jobs"):
        cli.main(["rates", "--sims", str(tmp_path / "sims"), "--only", "test.cli-par-*", "--jobs", "0",
                  "--out", str(tmp_path / "o")])


def test_rates_progress_bar(tmp_path, capsys, monkeypatch):
    """One bar over the claims on stderr (the runs inside stay quiet), the table on stdout; none with --no-progress."""
    from expertlab.sim import _progress

    monkeypatch.setattr(_progress, "PROGRESS_DELAY", 0.0)
    monkeypatch.setattr(_progress, "interactive", lambda: True)  # as in a terminal
    sims = _sims(tmp_path, "prog", 0.5)
    argv = ["rates", "--quick", "--sims", str(sims), "--only", "test.cli-prog", "--out", str(tmp_path / "o"),
            "--backend", "numpy", "--jobs", "1"]
    assert cli.main(argv) == 0
    cap = capsys.readouterr()
    assert "rates" in cap.err and "1/1" in cap.err and "claim" in cap.err
    assert "round" not in cap.err  # the experiment's sim.run shows no bar of its own
    assert "test.cli-prog" in cap.out and "pass" in cap.out
    assert cli.main(argv + ["--no-progress"]) == 0
    cap = capsys.readouterr()
    assert cap.err == "" and "pass" in cap.out


def test_rates_unknown_pattern(tmp_path):
    sims = _sims(tmp_path, "x", 0.5)
    with pytest.raises(SystemExit, match="no claim matches"):
        cli.main(["rates", "--sims", str(sims), "--only", "zzz*", "--out", str(tmp_path / "o")])


def test_sweep_command(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(textwrap.dedent("""
        n_reps = 6
        block_size = 4
        seed = 1
        [base]
        learner = "hedge"
        instance = "fair_coins"
        horizon = 50
        [grid]
        "instance_params.n_experts" = [2, 3]
    """))
    out = tmp_path / "res"
    assert cli.main(["sweep", str(spec), "--out", str(out)]) == 0
    first = capsys.readouterr().out
    assert "fair_coins" in first
    files = sorted(p.name for p in out.rglob("block_*.npz"))
    assert len(files) == 4  # 2 configs x 2 blocks
    assert cli.main(["sweep", str(spec), "--out", str(out)]) == 0  # resumes: nothing recomputed
    assert sorted(p.name for p in out.rglob("block_*.npz")) == files


def test_run_bandit_json(capsys):
    assert cli.main(["run", "ucb1", "--instance", "bernoulli", "--instance-param", "means=[0.3, 0.6]",
                     "--horizon", "200", "--reps", "8", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["learner"] == "ucb1" and rec["checkpoints"][-1] == 200
    assert set(rec["metrics"]) == {"regret", "reward"}
    # pseudo-regret of two arms with gap 0.3: 0.3 x (pulls of the bad arm), between 0.3 and 0.3 x 199
    assert 0.3 <= rec["metrics"]["regret"]["mean"][-1] <= 0.3 * 199


def test_run_any_family(capsys):
    assert cli.main(["run", "ucbvi", "--instance", "garnet_episodic", "--horizon", "20", "--reps", "4",
                     "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["unit"] == "episode" and set(rec["metrics"]) == {"regret", "realised_regret"}
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("hedge", "ucb1", "ucbvi", "stepmix", "alf_lb", "routing", "garnet_episodic"):
        assert name in out
    assert "balance." in out  # the balance claims are registered too
