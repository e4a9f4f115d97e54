"""Mutation checks: every rate claim must reject a deliberately wrong variant of its algorithm.

A claim that passes whatever the learner does checks its instance, not its
algorithm.  For each claim in a family's ``MUTANTS`` (files
``_mutants_<family>.py`` next to this one), the mutant reruns the claim's own
simulation at its quick settings with a few settings changed: the
``mutation`` makes the algorithm wrong (a learning rate not tuned, an
exploration bonus 100 times too small, a point estimate in place of a
pessimistic one, the unconstrained learner in place of the safe one, ...),
and the check must fail.  ``size`` changes only the size of the run
(fewer replications or points to keep the test cheap, more replications
for power); :func:`test_resized_run_of_the_sound_algorithm_still_passes`
(slow) shows that the resized run of the sound algorithm still passes, so
the failure is the mutation's.  The mutant runs repeat the claims' own
simulations, so both tests are marked ``slow`` (``pytest -m slow
tests/rates/test_mutations.py``); the bookkeeping test runs with the default
suite.

Each family's ``NO_MUTANT_YET`` names every claim without a mutant and why,
so that their number is visible and cannot drift.
"""

import dataclasses
import runpy
from pathlib import Path
from typing import Any, Mapping

import pytest

from expertlab import sim

EXPERIMENTS = {e.claim: e for e in sim.discover()}


@dataclasses.dataclass(frozen=True)
class Mutant:
    description: str
    mutation: Mapping[str, Any]
    size: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def experiment(self, exp: sim.Experiment, *, mutated: bool = True) -> sim.Experiment:
        quick = {**exp.quick, **self.size, **(self.mutation if mutated else {})}
        return dataclasses.replace(exp, quick=quick)


FAMILY_FILES = sorted(Path(__file__).parent.glob("_mutants_*.py"))
MUTANTS: dict[str, Mutant] = {}
NO_MUTANT_YET: dict[str, str] = {}
for _path in FAMILY_FILES:
    _ns = runpy.run_path(str(_path), init_globals={"Mutant": Mutant})
    for _name, _table in (("MUTANTS", MUTANTS), ("NO_MUTANT_YET", NO_MUTANT_YET)):
        _twice = set(_ns[_name]) & set(_table)
        assert not _twice, f"{_path.name} repeats {sorted(_twice)} from another family's {_name}"
        _table.update(_ns[_name])


@pytest.mark.rate
@pytest.mark.slow
@pytest.mark.parametrize("claim", sorted(MUTANTS))
def test_claim_rejects_its_mutant(claim):
    mutant = MUTANTS[claim]
    chk, _, _ = sim.run_experiment(mutant.experiment(EXPERIMENTS[claim]), quick=True, seed=0)
    assert not chk.passed, f"{claim} accepts the wrong variant ({mutant.description}): {chk.summary()}"


@pytest.mark.rate
@pytest.mark.slow
@pytest.mark.parametrize("claim", sorted(c for c, m in MUTANTS.items() if m.size))
def test_resized_run_of_the_sound_algorithm_still_passes(claim):
    mutant = MUTANTS[claim]
    chk, _, _ = sim.run_experiment(mutant.experiment(EXPERIMENTS[claim], mutated=False), quick=True, seed=0)
    assert chk.passed, f"{claim} fails at the size {dict(mutant.size)} without the mutation: {chk.summary()}"


def test_every_claim_has_a_mutant_or_a_stated_reason():
    names = {n for n in sim.claims() if not n.startswith("test.")}
    assert len(FAMILY_FILES) == 5, [p.name for p in FAMILY_FILES]
    assert not set(MUTANTS) & set(NO_MUTANT_YET), "a claim is both mutated and listed without a mutant"
    assert sorted(names - set(MUTANTS)) == sorted(NO_MUTANT_YET), (
        "update NO_MUTANT_YET: claims without a mutant "
        f"{sorted(names - set(MUTANTS) - set(NO_MUTANT_YET))}, listed but unknown or mutated "
        f"{sorted(set(NO_MUTANT_YET) - (names - set(MUTANTS)))}")
    assert set(MUTANTS) <= set(EXPERIMENTS)
    assert all(isinstance(r, str) and len(r.split()) >= 3 for r in NO_MUTANT_YET.values())
    # the mutation must change a setting, not only shrink the run
    assert all(m.mutation for m in MUTANTS.values())
