"""Messages and printouts that must name the right thing.

Capacities print in expert order (never a min/max pair that reads as two
experts), a sweep resumed or loaded with another block size says that the
block size changed, and ``expertlab run`` counts throughput in the
environment's unit and shows a metric column only when it differs from the
others.
"""

import json

import numpy as np
import pytest

from expertlab import balance, cli, sim

# --------------------------------------------------------------------------
# capacities


def test_assignment_problem_repr_lists_capacities_in_expert_order():
    prob = balance.AssignmentProblem(np.zeros((6, 3)), k=2, capacity=[5, 3, 4])
    text = repr(prob)
    assert "capacity=[5, 3, 4]" in text
    assert "[3, 5]" not in text  # the old min/max pair, which read as two experts' capacities
    assert "capacity=4" in repr(balance.AssignmentProblem(np.zeros((6, 3)), k=2, capacity=4))
    many = balance.AssignmentProblem(np.zeros((4, 12)), k=1, capacity=np.arange(1.0, 13.0))
    assert "capacity: 12 values in [1, 12]" in repr(many)


def test_assignment_batch_repr_lists_capacities():
    batch = balance.AssignmentBatch(np.zeros((2, 4, 3)), 1, capacity=[[2, 1, 1], [1, 1, 2]])
    assert "capacity=[[2, 1, 1], [1, 1, 2]]" in repr(batch)
    assert repr(batch.problem(1)).endswith("capacity=[1, 1, 2])")


# --------------------------------------------------------------------------
# sweeps resumed or loaded with another block size

_CFG = {"learner": "hedge", "instance": "fair_coins", "horizon": 20}


def test_resuming_with_another_block_size_says_so(tmp_path):
    sim.sweep([_CFG], n_reps=10, block_size=4, executor="serial", out=tmp_path)
    for block_size in (2, 5):
        with pytest.raises(ValueError) as info:
            sim.sweep([_CFG], n_reps=10, block_size=block_size, executor="serial", out=tmp_path)
        msg = str(info.value)
        assert f"block_size={block_size}" in msg and "block_size=4" in msg and "shrink" not in msg


def test_loading_with_a_manifest_of_another_block_size_says_so(tmp_path):
    sim.sweep([_CFG], n_reps=10, block_size=4, executor="serial", out=tmp_path)
    manifest = tmp_path / "sweep.json"
    for block_size in (2, 5):
        meta = json.loads(manifest.read_text())
        meta["block_size"] = block_size
        manifest.write_text(json.dumps(meta))
        with pytest.raises(ValueError) as info:
            sim.load_sweep(tmp_path)
        msg = str(info.value)
        # n_reps is the same (10): the message must not blame it
        assert f"sweep.json says block_size={block_size}" in msg and "block_size=4" in msg
        assert "n_reps" not in msg and "shrink" not in msg


# --------------------------------------------------------------------------
# expertlab run


@pytest.mark.parametrize("argv, unit", [
    (["run", "ucb1", "--instance", "bernoulli", "--instance-param", "means=[0.3, 0.6]"], "round"),
    (["run", "ucbvi", "--instance", "garnet_episodic"], "episode"),
])
def test_run_counts_throughput_in_the_environments_unit(argv, unit, capsys):
    assert cli.main(argv + ["--horizon", "20", "--reps", "4", "--backend", "numpy"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert f"replication-{unit}s/s" in head and "expert-updates" not in head
    assert "0.00 M" not in head  # a small run's rate is printed with its own prefix


def _header(out: str) -> str:
    return next(line for line in out.splitlines() if line.split() and line.split()[0] in ("round", "episode"))


def test_run_shows_an_identical_metric_once(capsys):
    # deterministic losses (means 0 and 1): the realised and the pseudo-regret are the same numbers
    assert cli.main(["run", "hedge", "--instance", "iid_bernoulli", "--instance-param", "means=[0, 1]",
                     "--horizon", "100", "--reps", "5", "--backend", "numpy"]) == 0
    out = capsys.readouterr().out
    assert _header(out).split() == ["round", "regret"]
    assert "pseudo_regret equals regret" in out
    # random losses: two different columns
    assert cli.main(["run", "hedge", "--instance", "iid_bernoulli", "--instance-param", "means=[0.2, 0.7]",
                     "--horizon", "100", "--reps", "5", "--backend", "numpy"]) == 0
    out = capsys.readouterr().out
    assert _header(out).split() == ["round", "regret", "pseudo_regret"] and "equals" not in out


def test_run_json_keeps_every_metric(capsys):
    assert cli.main(["run", "hedge", "--instance", "iid_bernoulli", "--instance-param", "means=[0, 1]",
                     "--horizon", "50", "--reps", "3", "--backend", "numpy", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert set(rec["metrics"]) == {"regret", "pseudo_regret"}
