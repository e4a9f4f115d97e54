"""The notebooks of ``docs/notebooks/`` run from top to bottom without an error.

Each notebook is stored as a jupytext ``py:percent`` script; the test converts
it with jupytext and executes it with nbclient on a ``python3`` kernel of the
running interpreter (matplotlib on the Agg backend), so a cell that raises,
including a failed ``assert`` on a claim check, fails the test.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext", reason="jupytext is not installed (pip install -e '.[test]')")
nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (pip install -e '.[test]')")
pytest.importorskip("ipykernel", reason="ipykernel is not installed (pip install -e '.[test]')")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("*.py"))

#: Seconds one cell may run; each notebook takes a few seconds of CPU.
CELL_TIMEOUT = 240


def test_there_is_a_notebook_per_family():
    names = {p.stem for p in NOTEBOOKS}
    assert {"first_hour", "experts", "bandits", "mdp", "mixtures", "balance"} <= names, names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path, monkeypatch):
    from jupyter_client.kernelspec import NATIVE_KERNEL_NAME
    from nbclient.exceptions import CellExecutionError

    nb = jupytext.read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{path.name} has no code cell"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", f"{path.name}: kernel must be python3"
    monkeypatch.setenv("MPLBACKEND", "Agg")
    # the kernel imports this checkout's expertlab, as the test process does
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    client = nbclient.NotebookClient(
        nb, timeout=CELL_TIMEOUT, kernel_name=NATIVE_KERNEL_NAME, allow_errors=False,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    start = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as exc:
        pytest.fail(f"{path.name}: a cell failed\n{exc}")
    elapsed = time.perf_counter() - start
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, errors
    assert all(c.get("execution_count") for c in code), f"{path.name}: a code cell did not run"
    print(f"{path.name}: {elapsed:.1f} s")
