"""``benchmarks/gpu_check.py``: its no-GPU exit, its comparisons, and a whole run with CPU stand-ins."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_check.py"


@pytest.fixture(scope="module")
def gpu_check():
    spec = importlib.util.spec_from_file_location("gpu_check", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_without_a_gpu_it_prints_one_line_and_exits_0(gpu_check, capsys, tmp_path):
    _, cupy_ok, cuda_ok, _ = gpu_check.detect_gpu()
    if cupy_ok or cuda_ok:
        pytest.skip("this machine has a GPU")
    out_json = tmp_path / "report.json"
    assert gpu_check.main(["--json", str(out_json)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("no GPU: "), lines
    assert not out_json.exists()


def test_max_rel_diff(gpu_check):
    d = gpu_check.max_rel_diff
    assert d({"x": np.array([1.0, np.nan])}, {"x": np.array([1.0, np.nan])}) == 0.0
    assert d({"x": np.array([1.0, np.nan])}, {"x": np.array([1.0, 2.0])}) == float("inf")
    assert d({"x": np.array([1.0, np.inf])}, {"x": np.array([1.0, -np.inf])}) == float("inf")
    assert d({"x": np.array([2.0, 4.0])}, {"x": np.array([2.0, 4.4])}) == pytest.approx(0.1)
    assert d({"x": np.zeros(2)}, {"x": np.zeros(3)}) == float("inf")
    assert d({"x": np.zeros(2)}, {"y": np.zeros(2)}) == float("inf")


@pytest.mark.slow
def test_stand_in_run_reports_every_row_equal(gpu_check, tmp_path):
    """The whole script on the CPU stand-ins: every simulation row and every array-code core matches NumPy."""
    pytest.importorskip("array_api_strict")
    out_json = tmp_path / "report.json"
    assert gpu_check.main(["--stand-in", "--quick", "--skip-tests", "--json", str(out_json)]) == 0
    report = json.loads(out_json.read_text())
    assert report["stand_in"] is True
    assert {r["row"].split(",")[0] for r in report["throughput"]} == {
        "hedge full information", "ucb1 Bernoulli", "thompson Bernoulli"}
    assert len(report["cores"]) == 4
    for row in report["throughput"] + report["cores"]:
        others = {k: e for k, e in row["backends"].items() if not k.startswith("numpy")}
        assert others, row
        for key, e in others.items():
            assert e.get("equal_to_numpy") is True, (row["row"], key, e)
