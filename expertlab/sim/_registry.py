"""Registries of learners and environments, filled by the families.

``sim`` imports no family: each family registers its learner factories and
environment constructors here when it is imported, and importing any part of
:mod:`expertlab` imports every family (``expertlab/__init__.py``), so the
CLI, sweeps and the conformance suite see all five whatever the user
imported.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

__all__ = ["Registered", "register_learner", "register_environment", "learners", "environments",
           "get_learner", "get_environment"]


@dataclasses.dataclass(frozen=True)
class Registered:
    """A registered factory.

    Attributes
    ----------
    name : str
    family : str
        ``"experts"``, ``"bandits"``, ``"mdp"``, ``"balance"``.
    factory : callable
        Builds the learner or environment from keyword settings.
    feedback : str
        The feedback kind of what it builds.
    example : callable or None
        ``example() -> (learner, env, horizon)``: a small run the conformance
        suite checks (shapes, purity, blocking, backends, bad input).
    """

    name: str
    family: str
    factory: Callable
    feedback: str
    example: Callable | None = None

    def __call__(self, **kwargs):
        return self.factory(**kwargs)

    def __repr__(self) -> str:
        return f"Registered({self.name!r}, family={self.family!r}, feedback={self.feedback!r})"


_LEARNERS: dict[str, Registered] = {}
_ENVIRONMENTS: dict[str, Registered] = {}


def _register(table, kind, name, factory, family, feedback, example):
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty str, got {name!r}")
    if not callable(factory):
        raise TypeError(f"factory of {kind} {name!r} must be callable")
    for arg, value in (("family", family), ("feedback", feedback)):
        if not isinstance(value, str) or not value:
            raise TypeError(f"{arg} of {kind} {name!r} must be a non-empty str, got {value!r}")
    if example is not None and not callable(example):
        raise TypeError(f"example of {kind} {name!r} must be callable or None, got {type(example).__name__}")
    old = table.get(name)
    if old is not None and old.factory is not factory:
        raise ValueError(f"{kind} {name!r} is already registered by family {old.family!r}")
    table[name] = Registered(name, family, factory, feedback, example)


def register_learner(name: str, factory: Callable, *, family: str, feedback: str,
                     example: Callable | None = None) -> None:
    """Register a learner factory under ``name`` (see :class:`Registered`)."""
    _register(_LEARNERS, "learner", name, factory, family, feedback, example)


def register_environment(name: str, factory: Callable, *, family: str, feedback: str,
                         example: Callable | None = None) -> None:
    """Register an environment constructor under ``name``."""
    _register(_ENVIRONMENTS, "environment", name, factory, family, feedback, example)


#: The library's families; a user's registrations may add more.
FAMILIES = ("experts", "bandits", "mdp", "mixtures", "balance")


def _check_family(family) -> None:
    if family is None:
        return
    if not isinstance(family, str):
        raise TypeError(f"family must be a str or None, got {type(family).__name__}")
    known = set(FAMILIES) | {r.family for r in (*_LEARNERS.values(), *_ENVIRONMENTS.values())}
    if family not in known:
        raise ValueError(f"unknown family {family!r}; known: {', '.join(sorted(known))}")


def learners(family: str | None = None) -> Mapping[str, Registered]:
    """The registered learners by name (of one family, or all)."""
    _check_family(family)
    return {k: v for k, v in sorted(_LEARNERS.items()) if family is None or v.family == family}


def environments(family: str | None = None) -> Mapping[str, Registered]:
    """The registered environments by name (of one family, or all)."""
    _check_family(family)
    return {k: v for k, v in sorted(_ENVIRONMENTS.items()) if family is None or v.family == family}


def _get(table, kind, name) -> Registered:
    if not isinstance(name, str):
        raise TypeError(f"{kind} must be a registered name (str), got {type(name).__name__}")
    if name not in table:
        raise ValueError(f"unknown {kind} {name!r}; registered: {', '.join(sorted(table))}")
    return table[name]


def get_learner(name: str) -> Registered:
    """The registered learner ``name`` (ValueError naming the known ones otherwise)."""
    return _get(_LEARNERS, "learner", name)


def get_environment(name: str) -> Registered:
    """The registered environment ``name``."""
    return _get(_ENVIRONMENTS, "environment", name)


def build(kind: str, name: str, params: Mapping[str, Any] | None = None):
    """Call the registered factory ``name`` with ``params``."""
    reg = get_learner(name) if kind == "learner" else get_environment(name)
    return reg.factory(**dict(params or {}))
