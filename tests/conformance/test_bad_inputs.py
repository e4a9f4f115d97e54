"""Every public callable is tested with bad input, and the claim stays true.

Two kinds of evidence count:

* **Registered factories.**  Every learner and environment in
  :func:`expertlab.sim.learners` / :func:`expertlab.sim.environments` has
  bad-input cases in ``_bad_inputs_<family>.py`` next to this file
  (``LEARNERS`` / ``ENVIRONMENTS``: ``name -> [(kwargs, exception, word)]``);
  this suite calls the factory with each and requires the exception, with
  ``word`` (the argument's name) in its message, at construction.
* **Tests anywhere in the suite.**  A call made inside a ``pytest.raises``
  block (or passed to ``pytest.raises(exc, func, ...)``) in ``tests/`` or
  ``proofs_check/`` covers the callable it names.

``test_every_public_callable_has_a_bad_input_test`` lists every callable in
the ``__all__`` of every public module of :mod:`expertlab` and fails for one
that neither kind of evidence covers, unless the module's file lists it in
``EXEMPT`` with a reason.  An exemption of a name that is covered, or that no
module exports, also fails, so the list cannot go stale.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import runpy
from collections import Counter
from pathlib import Path

import pytest

import expertlab
from expertlab import sim

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CASE_FILES = sorted(HERE.glob("_bad_inputs_*.py"))


def _load_cases():
    learners, environments, exempt = {}, {}, {}
    for path in CASE_FILES:
        data = runpy.run_path(str(path))
        for table, key in ((learners, "LEARNERS"), (environments, "ENVIRONMENTS"), (exempt, "EXEMPT")):
            for name, value in data.get(key, {}).items():
                assert name not in table, f"{name} is listed twice ({path.name})"
                table[name] = value
    return learners, environments, exempt


LEARNER_CASES, ENVIRONMENT_CASES, EXEMPT = _load_cases()


def _flat(table):
    return [(name, i, case) for name, cases in sorted(table.items()) for i, case in enumerate(cases)]


def _ids(flat):
    return [f"{name}-{i}-{','.join(case[0])}" for name, i, case in flat]


def _check_refused(factory, case):
    kwargs, exc, word = case
    with pytest.raises(exc) as info:
        factory(**kwargs)
    assert word in str(info.value), f"{exc.__name__} does not name {word!r}: {info.value}"


LEARNER_FLAT = _flat(LEARNER_CASES)
ENVIRONMENT_FLAT = _flat(ENVIRONMENT_CASES)


@pytest.mark.parametrize("name, i, case", LEARNER_FLAT, ids=_ids(LEARNER_FLAT))
def test_registered_learner_refuses_bad_input(name, i, case):
    _check_refused(sim.get_learner(name).factory, case)


@pytest.mark.parametrize("name, i, case", ENVIRONMENT_FLAT, ids=_ids(ENVIRONMENT_FLAT))
def test_registered_environment_refuses_bad_input(name, i, case):
    _check_refused(sim.get_environment(name).factory, case)


@pytest.mark.parametrize("table, registry, kind", [
    (LEARNER_CASES, sim.learners, "learner"), (ENVIRONMENT_CASES, sim.environments, "environment")])
def test_every_registered_factory_has_bad_input_cases(table, registry, kind):
    names = set(registry())
    missing = sorted(n for n in names if not table.get(n))
    unknown = sorted(set(table) - names)
    assert not missing, f"registered {kind}s without bad-input cases: {missing}"
    assert not unknown, f"bad-input cases for unregistered {kind}s: {unknown}"


# ----------------------------------------------------------------- the scan

def public_callables() -> dict[str, object]:
    """``module.name -> object`` for every callable in a public module's ``__all__``."""
    out = {}
    mods = [expertlab] + [importlib.import_module(m.name)
                          for m in pkgutil.walk_packages(expertlab.__path__, "expertlab.")
                          if not any(p.startswith("_") for p in m.name.split("."))]
    for mod in mods:
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if callable(obj):
                out[f"{mod.__name__}.{name}"] = obj
    return out


def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    if parts:  # a call on an expression: keep the attribute chain
        return ".".join(reversed(parts))
    return None


def _is_raises(call) -> bool:
    return isinstance(call, ast.Call) and (_dotted(call.func) or "").endswith("raises")


def _aliases(tree) -> dict[str, str]:
    """``local name -> dotted origin`` of a file's imports (``erandom -> expertlab.random``)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                out[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return out


def _parametrized(func, assigns) -> tuple[set[str], list]:
    """The parameter names a test's ``pytest.mark.parametrize`` decorators fill, and their value expressions."""
    names, values = set(), []
    for dec in func.decorator_list:
        if isinstance(dec, ast.Call) and (_dotted(dec.func) or "").endswith("parametrize") and len(dec.args) >= 2:
            first = dec.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names |= {n.strip() for n in first.value.split(",")}
            elif isinstance(first, (ast.List, ast.Tuple)):
                names |= {e.value for e in first.elts if isinstance(e, ast.Constant)}
            val = dec.args[1]
            if isinstance(val, ast.Name) and val.id in assigns:  # a module-level table
                val = assigns[val.id]
            values.append(val)
    return names, values


def raised_calls(roots) -> tuple[Counter, dict[str, set[str]]]:
    """Dotted names called inside ``pytest.raises`` blocks, and each file's ``from x import y``.

    A call of a parametrized argument inside the block (``factory(**kwargs)``,
    ``call()``) stands for every name the parametrize table refers to (the
    factories in it, the calls inside its lambdas).  A name imported under an
    alias is recorded also under its origin (``erandom.uniform`` as
    ``expertlab.random.uniform``).
    """
    calls: Counter = Counter()
    imports: dict[str, set[str]] = {}
    for root in roots:
        for path in Path(root).rglob("*.py"):
            tree = ast.parse(path.read_text())
            aliases = _aliases(tree)
            assigns = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                       for t in node.targets if isinstance(t, ast.Name)}
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module:
                    for alias in node.names:
                        imports.setdefault(alias.asname or alias.name, set()).add(node.module)

            def record(name):
                calls[name] += 1
                head, _, rest = name.partition(".")
                if head in aliases and aliases[head] != head:
                    calls[aliases[head] + ("." + rest if rest else "")] += 1

            def scan(scope, params=frozenset(), values=()):
                for node in ast.walk(scope):
                    body = None
                    if isinstance(node, (ast.With, ast.AsyncWith)) and any(_is_raises(it.context_expr)
                                                                           for it in node.items):
                        body = node.body
                    elif _is_raises(node) and len(node.args) >= 2:  # pytest.raises(exc, func, *args)
                        name = _dotted(node.args[1])
                        if name:
                            record(name)
                    for stmt in body or ():
                        for sub in ast.walk(stmt):
                            if not isinstance(sub, ast.Call):
                                continue
                            name = _dotted(sub.func)
                            if name in params:
                                for val in values:
                                    for ref in ast.walk(val):
                                        if isinstance(ref, ast.Attribute):
                                            record(_dotted(ref) or ref.attr)
                                        elif isinstance(ref, ast.Name):
                                            record(ref.id)
                            elif name:
                                record(name)

            functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            for func in functions:
                params, values = _parametrized(func, assigns)
                scan(func, params, values) if params else None
            # blocks outside parametrized tests (module level, plain tests): scanned once, without tables
            plain = ast.Module(body=[n for n in tree.body if not (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                                                                   and _parametrized(n, assigns)[0])],
                               type_ignores=[])
            scan(plain)
    return calls, imports


def covered_by_tests(public, calls, imports) -> set[str]:
    by_name: dict[str, set[int]] = {}
    for qual, obj in public.items():
        by_name.setdefault(qual.rsplit(".", 1)[1], set()).add(id(obj))
    covered = set()
    for qual, obj in public.items():
        module, name = qual.rsplit(".", 1)
        ambiguous = len(by_name[name]) > 1
        for dotted in calls:
            parts = dotted.split(".")
            if parts[-1] != name:
                continue
            if dotted == qual:  # the full public path, e.g. through an aliased import
                covered.add(qual)
                break
            if not ambiguous:
                covered.add(qual)
                break
            # the same bare name means different things in different modules:
            # require the module in the chain (``instances.fair_coins``) or the import
            last = module.rsplit(".", 1)[1]
            if (len(parts) > 1 and parts[-2] == last) or (len(parts) == 1 and module in imports.get(name, ())):
                covered.add(qual)
                break
    return covered


def covered_by_registry(public) -> set[str]:
    factories = {id(sim.get_learner(n).factory) for n in LEARNER_CASES if n in sim.learners()}
    factories |= {id(sim.get_environment(n).factory) for n in ENVIRONMENT_CASES if n in sim.environments()}
    return {qual for qual, obj in public.items() if id(obj) in factories}


def coverage():
    public = public_callables()
    calls, imports = raised_calls([ROOT / "tests", ROOT / "proofs_check"])
    covered = covered_by_tests(public, calls, imports) | covered_by_registry(public)
    return public, calls, covered


def test_every_public_callable_has_a_bad_input_test():
    public, _, covered = coverage()
    missing = sorted(q for q in public if q not in covered and q not in EXEMPT)
    assert not missing, (f"{len(missing)} public callables have no bad-input test and no exemption "
                         "(add a pytest.raises test, or an EXEMPT entry with the reason):\n  "
                         + "\n  ".join(missing))


def test_exemptions_are_reasoned_and_not_stale():
    public, _, covered = coverage()
    for name, reason in EXEMPT.items():
        assert isinstance(reason, str) and len(reason.split()) >= 3, f"exemption of {name} needs a reason"
    unknown = sorted(set(EXEMPT) - set(public))
    assert not unknown, f"exemptions of names no public module exports: {unknown}"
    stale = sorted(set(EXEMPT) & covered)
    assert not stale, f"exempt but covered by a bad-input test (drop the exemption): {stale}"


def test_the_scan_sees_a_known_test():
    """A wrong scan (one that matched nothing) would make the check above vacuous."""
    public, calls, covered = coverage()
    assert "expertlab.experts.hedge" in covered and "expertlab.mdp.policy_evaluation" in covered
    assert sum(calls.values()) > 500 and len(covered) > 150
