"""The notebooks of ``docs/notebooks/`` run from top to bottom without an error.

Each notebook is stored as a jupytext ``py:percent`` script; the test converts
it with jupytext and executes it with nbclient on a ``python3`` kernel of the
running interpreter (matplotlib on the Agg backend), so a cell that raises,
including a failed ``assert`` on a claim check, fails the test.
"""

from __future__ import annotations

import os
import sys
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


def _execute(nb, workdir: Path, monkeypatch) -> None:
    """Run every cell of ``nb`` in a fresh python3 kernel; raise ``CellExecutionError`` on an error."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    # the kernel imports this checkout's expertlab, as the test process does
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    # the python3 kernel, started by the interpreter that runs the tests (its venv), whatever
    # kernelspecs the machine has installed
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=CELL_TIMEOUT, allow_errors=False,
                                     resources={"metadata": {"path": str(workdir)}})
    client.km = client.create_kernel_manager()  # the client still owns it: it shuts the kernel down
    client.km.kernel_spec.argv[0] = sys.executable
    client.execute()


def test_a_failing_cell_fails_the_run(tmp_path, monkeypatch):
    from nbclient.exceptions import CellExecutionError

    nb = jupytext.reads("# %%\nx = 1\n\n# %%\nassert x == 2, 'the check of this cell'\n", fmt="py:percent")
    with pytest.raises(CellExecutionError, match="the check of this cell"):
        _execute(nb, tmp_path, monkeypatch)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path, monkeypatch):
    from nbclient.exceptions import CellExecutionError

    nb = jupytext.read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{path.name} has no code cell"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", f"{path.name}: kernel must be python3"
    start = time.perf_counter()
    try:
        _execute(nb, tmp_path, monkeypatch)
    except CellExecutionError as exc:
        pytest.fail(f"{path.name}: a cell failed\n{exc}")
    elapsed = time.perf_counter() - start
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, errors
    assert all(c.get("execution_count") for c in code), f"{path.name}: a code cell did not run"
    print(f"{path.name}: {elapsed:.1f} s")
