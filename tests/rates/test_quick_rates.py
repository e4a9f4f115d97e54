"""The quick version of every registered rate claim (same settings as ``expertlab rates --quick``)."""

import pytest

from expertlab import sim

EXPERIMENTS = sim.discover()


def test_every_registered_claim_has_an_experiment():
    checked = {e.claim for e in EXPERIMENTS}
    missing = sorted(set(sim.claims()) - checked - {n for n in sim.claims() if n.startswith("test.")})
    assert not missing, f"claims without an experiment: {missing}"


@pytest.mark.rate
@pytest.mark.parametrize("exp", EXPERIMENTS, ids=[e.claim for e in EXPERIMENTS])
def test_quick_claim(exp):
    chk, _, _ = sim.run_experiment(exp, quick=True, seed=0)
    assert chk.passed, chk.summary()
