"""Sphinx configuration of the expertlab documentation.

Build (no network needed)::

    sphinx-build -W --keep-going -b html docs docs/_build/html            # runs the gallery
    sphinx-build -W --keep-going -b html -D plot_gallery=0 docs OUT       # fast: no execution

Generated, git-ignored paths: ``api/generated/`` (autosummary stubs, one per
public name in the ``__all__`` of :mod:`expertlab.sim`, :mod:`expertlab.experts`
and :mod:`expertlab.experts.instances`) and ``auto_examples/`` (the gallery,
built from ``simulations/``).
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

import expertlab  # noqa: E402

# -- project ----------------------------------------------------------------

project = "expertlab"
author = "the expertlab developers"
copyright = "the expertlab developers"
release = expertlab.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",  # math is rendered in the browser; nothing is fetched at build time
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "cli_help",  # _ext/cli_help.py: `.. expertlab-help::`
]
# No intersphinx: the build must not touch the network.

templates_path = ["_templates"]
exclude_patterns = ["_build", "_ext", "_templates", "**.ipynb_checkpoints"]
root_doc = "index"
default_role = "autolink"  # `name` links to the object when it exists, else renders as code
nitpicky = True  # every cross-reference must resolve
# Types of other projects: without intersphinx (no network) they have no target
# here, so a reference to them renders as code instead of failing the build.
nitpick_ignore = [
    ("py:class", "matplotlib.figure.Figure"),  # matplotlib: the figure that plots draw on
    ("py:class", "concurrent.futures.ProcessPoolExecutor"),  # standard library: the default sweep executor
    ("py:mod", "concurrent.futures"),  # standard library: the executors a sweep accepts
]
pygments_style = "sphinx"

# -- autodoc / autosummary ------------------------------------------------------

autosummary_generate = True
autosummary_ignore_module_all = False  # a module's public names are its __all__
autosummary_imported_members = False
autodoc_typehints = "none"  # the numpydoc Parameters sections carry the types
autodoc_member_order = "bysource"

# -- numpydoc ---------------------------------------------------------------------

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
# numpydoc validation: its findings are warnings, hence build errors under -W,
# so only checks that the package passes as a whole are switched on.  They
# catch what breaks a reference page: a public name without a docstring
# (GL08), no summary line (SS01), unknown or misplaced sections (GL06, GL07),
# documented parameters that the signature does not have or lists in another
# order (PR02, PR03) and a "name: type" line without the space (PR10).
# ``{"all"}`` lists everything else (ES01, EX01, PR01, RT01, SA01, ...).
numpydoc_validation_checks = {"GL06", "GL07", "GL08", "PR02", "PR03", "PR10", "SS01"}

# -- HTML -------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"expertlab {release}"
html_static_path: list[str] = []
html_show_sourcelink = False
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"index": [], "auto_examples/index": []}

# -- sphinx-gallery -------------------------------------------------------------------

sphinx_gallery_conf = {
    "examples_dirs": [str(DOCS.parent / "simulations")],
    "gallery_dirs": ["auto_examples"],
    # every experiment file is executed; files starting with _ are not pages
    "filename_pattern": r"(^|[\\/])[^_\\/][^\\/]*\.py$",
    "ignore_pattern": r"(^|[\\/])_[^\\/]*\.py$",
    "reset_argv": "gallery_hooks.reset_argv",
    "reset_modules": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
    "capture_repr": (),
    "write_computation_times": False,  # would write sg_execution_times.rst into docs/
    "download_all_examples": False,
    "show_memory": False,
    "show_signature": False,
    "plot_gallery": "True",  # -D plot_gallery=0 for a fast build that runs nothing
}


# -- hooks ------------------------------------------------------------------------------


def _skip_member(app, what, name, obj, skip, options):
    """Leave out the generated "Alias for field number k" members of NamedTuple records."""
    doc = getattr(obj, "__doc__", None) or ""
    if what == "class" and doc.startswith("Alias for field number"):
        return True
    return None


def _attribute_comment(name, obj):
    """The ``#:`` comment of the module-level name that ``name`` re-exports, if any.

    A constant such as ``expertlab.sim.UNITS`` is assigned (and commented) in a private
    module and re-exported; autodoc only looks for the comment in the public
    module, and would otherwise show the docstring of ``tuple``.
    """
    from sphinx.pycode import ModuleAnalyzer, PycodeError

    modname, attr = name.rsplit(".", 1)
    for mname, mod in sorted(sys.modules.items()):
        if mname != modname and not mname.startswith(modname.split(".")[0] + "."):
            continue
        if getattr(mod, attr, None) is not obj:
            continue
        try:
            doc = ModuleAnalyzer.for_module(mname).find_attr_docs().get(("", attr))
        except PycodeError:
            continue
        if doc:
            return list(doc)
    return None


def _data_docstring(app, what, name, obj, options, lines):
    if what != "data":
        return
    comment = _attribute_comment(name, obj)
    if comment is not None:
        lines[:] = comment
    elif type(obj).__doc__ and "\n".join(lines).strip() == inspect.cleandoc(type(obj).__doc__).strip():
        lines[:] = []  # never show the docstring of the value's type (tuple, dict, ...)


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-docstring", _data_docstring, priority=400)  # before numpydoc
