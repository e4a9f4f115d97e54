"""pytest configuration of the proof checks: the Hypothesis profiles of ``tests/``.

The profiles are defined once, in ``tests/conftest.py``; this file loads that
module by path (under a private name, so it is not registered twice as a
plugin) and applies it, so ``pytest proofs_check`` alone gets the same
deterministic default and the same ``slow`` profile as a run from the root.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

# Not a doctest module: with --doctest-modules pytest would import every conftest.py
# outside a package under the one module name 'conftest', and the two conftests of
# tests/ and proofs_check/ would then collide ("import file mismatch").
collect_ignore = ["conftest.py"]

_NAME = "_expertlab_hypothesis_profiles"
_PATH = pathlib.Path(__file__).resolve().parent.parent / "tests" / "conftest.py"


def _profiles_module():
    mod = sys.modules.get(_NAME)
    if mod is None:
        spec = importlib.util.spec_from_file_location(_NAME, _PATH)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[_NAME] = mod
        spec.loader.exec_module(mod)
    return mod


def pytest_configure(config):
    _profiles_module().configure(config)
