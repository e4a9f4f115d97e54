"""The documentation builds without a warning.

The fast build (default test run) renders every page without executing the
gallery (``-D plot_gallery=0``).  The ``slow`` build executes every experiment
file of ``simulations/`` with its quick settings and checks that each page
got its figures.  Both run ``sphinx-build -W --keep-going`` in a subprocess,
into a temporary folder; no step uses the network.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

for _mod in ("sphinx", "numpydoc", "sphinx_gallery", "pydata_sphinx_theme"):
    pytest.importorskip(_mod, reason=f"{_mod} is not installed (pip install -e '.[docs]')")

from expertlab import experts, sim  # noqa: E402
from expertlab.experts import instances  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SIMULATIONS = ROOT / "simulations"


def _build(out: Path, *, plot_gallery: bool, timeout: float) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
           "-D", f"plot_gallery={int(plot_gallery)}"]
    if plot_gallery:  # run every example, even those whose outputs are cached in docs/auto_examples
        cmd += ["-D", "sphinx_gallery_conf.run_stale_examples=True"]
    cmd += [str(DOCS), str(out)]
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"sphinx-build failed (exit {proc.returncode}):\n{proc.stderr[-8000:]}\n{proc.stdout[-4000:]}")
    return proc


def _experiment_files() -> list[Path]:
    return sorted(p for p in SIMULATIONS.glob("*/*.py") if not p.name.startswith("_"))


def _check_pages(out: Path) -> None:
    for page in ("index", "user_guide/learners", "user_guide/engine", "user_guide/rates",
                 "user_guide/sweeps", "user_guide/cli", "user_guide/balance", "user_guide/mixtures",
                 "user_guide/bandits", "notebooks/index", "api/index", "auto_examples/index"):
        assert (out / f"{page}.html").is_file(), f"missing page {page}"
    for nb in sorted((DOCS / "notebooks").glob("*.py")):  # each notebook is shown on a page of its own
        assert (out / "notebooks" / f"{nb.stem}.html").is_file(), f"no docs page for the notebook {nb.name}"
    # one API page per public name: the reference follows __all__
    gen = out / "api" / "generated"
    for mod in (sim, experts, instances):
        assert (gen / f"{mod.__name__}.html").is_file(), mod.__name__
        for name in mod.__all__:
            assert (gen / f"{mod.__name__}.{name}.html").is_file(), f"no API page for {mod.__name__}.{name}"
    assert not list(gen.glob("*._*.html")), "a private name got an API page"
    # one gallery page per experiment file; files starting with _ are not pages
    for f in _experiment_files():
        assert (out / "auto_examples" / f.parent.name / f"{f.stem}.html").is_file(), f"no gallery page for {f}"
    assert not list((out / "auto_examples").glob("*/_*.html")), "a helper module became a gallery page"


@pytest.mark.parametrize("path", _experiment_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_experiment_docstring_is_a_gallery_page(path):
    """The module docstring of an experiment file is its gallery page: a title underlined by ``=``, then text."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=True)
    assert doc, f"{path} has no module docstring"
    lines = doc.splitlines()
    assert len(lines) >= 4 and lines[0].strip() and set(lines[1]) == {"="} and len(lines[1]) >= len(lines[0]) \
        and not lines[2].strip() and lines[3].strip(), (
            f"{path}: the module docstring must start with a title line underlined by '=' "
            f"(at least as long as the title), a blank line and a paragraph; it starts with {lines[:4]}")


def test_docs_build(tmp_path):
    _build(tmp_path / "html", plot_gallery=False, timeout=600)
    _check_pages(tmp_path / "html")


@pytest.mark.slow
def test_docs_build_with_gallery(tmp_path):
    out = tmp_path / "html"
    _build(out, plot_gallery=True, timeout=3600)
    _check_pages(out)
    for f in _experiment_files():
        images = out / "_images"
        figs = sorted(images.glob(f"sphx_glr_{f.stem}_[0-9][0-9][0-9].png"))
        assert figs, f"the gallery page of {f} has no figure"
