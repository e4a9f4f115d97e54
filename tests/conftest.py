"""Hypothesis profiles shared by ``tests/`` and ``proofs_check/``.

Two profiles are registered:

``default``
    Deterministic (``derandomize=True``, no example database): every run
    tries the same examples, so a failure on one machine is a failure on all.
    ``deadline=None`` because the first call of a learner may compile or warm
    caches, which says nothing about correctness.
``slow``
    Ten times as many examples, drawn afresh on every run (failures are
    replayed from the ``.hypothesis`` database and printed as a reproduction
    blob).

The ``slow`` profile is loaded when the environment variable
``EXPERTLAB_HYPOTHESIS_PROFILE=slow`` is set or when pytest is run with a
marker expression that selects slow tests (``-m slow``); an explicit
``--hypothesis-profile`` option always wins.  ``proofs_check/conftest.py``
loads this file by path and calls the same two functions, so the profiles are
defined in one place whichever directory pytest is pointed at.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# Not a doctest module: with --doctest-modules pytest would import every conftest.py
# outside a package under the one module name 'conftest', and the two conftests of
# tests/ and proofs_check/ would then collide ("import file mismatch").
collect_ignore = ["conftest.py"]
# The per-family mutant tables are data that test_mutations.py runs with its Mutant class.
collect_ignore_glob = ["rates/_mutants_*.py"]

#: Environment variable that selects a profile by name.
PROFILE_ENV = "EXPERTLAB_HYPOTHESIS_PROFILE"

#: Examples per property in the default profile; the slow one takes 10x.
DEFAULT_EXAMPLES = 40


def register_profiles() -> None:
    """Register the ``default`` and ``slow`` profiles (idempotent)."""
    settings.register_profile(
        "default",
        derandomize=True,
        database=None,
        deadline=None,
        max_examples=DEFAULT_EXAMPLES,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile(
        "slow",
        derandomize=False,
        deadline=None,
        max_examples=10 * DEFAULT_EXAMPLES,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )


def _selects_slow(markexpr: str) -> bool:
    """True when a ``-m`` expression would select a test marked only ``slow``.

    ``-m slow`` and ``-m "slow or proof"`` do; the project default
    ``-m "not slow"`` and ``-m proof`` do not.
    """
    expr = " ".join(markexpr.split())
    if "slow" not in expr:
        return False
    try:  # pytest's own evaluator (private API): exact for any expression
        from _pytest.mark.expression import Expression

        return bool(Expression.compile(expr).evaluate(lambda name, **kwargs: name == "slow"))
    except Exception:  # pragma: no cover - API moved; fall back to a plain reading
        return "not slow" not in expr


def choose_profile(config) -> str:
    """Name of the profile to load for this pytest session."""
    env = os.environ.get(PROFILE_ENV, "").strip()
    if env:
        if env not in ("default", "slow"):
            raise ValueError(f"{PROFILE_ENV} must be 'default' or 'slow', got {env!r}")
        return env
    if _selects_slow(config.getoption("markexpr", "") or ""):
        return "slow"
    return "default"


def configure(config) -> None:
    """Register the profiles and load the one chosen for this session."""
    register_profiles()
    try:
        explicit = config.getoption("hypothesis_profile")
    except ValueError:  # the Hypothesis pytest plugin is not active
        explicit = None
    if explicit:
        return
    settings.load_profile(choose_profile(config))


def pytest_configure(config):
    configure(config)
