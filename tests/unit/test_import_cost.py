"""``import expertlab`` stays light: the slow SciPy subpackages are imported where they are used."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("scipy.stats", "scipy.optimize", "scipy.sparse", "scipy.fft", "cvxpy", "matplotlib", "sklearn", "pandas")


def test_import_does_not_load_heavy_packages():
    code = f"import sys, expertlab; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    loaded = [m for m in proc.stdout.strip().split(",") if m]
    assert not loaded, f"import expertlab loads {loaded}; import them inside the functions that need them"
