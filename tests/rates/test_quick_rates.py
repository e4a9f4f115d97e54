"""The quick version of every registered rate claim (same settings as ``expertlab rates --quick``)."""

import pytest

from expertlab import sim

EXPERIMENTS = sim.discover()


def test_every_registered_claim_has_an_experiment():
    checked = {e.claim for e in EXPERIMENTS}
    missing = sorted(set(sim.claims()) - checked - {n for n in sim.claims() if n.startswith("test.")})
    assert not missing, f"claims without an experiment: {missing}"


SLACK_THAT_NEEDS_A_COMPANION = 0.1
"""An upper bound met with more room than this shows only that its instance is easy."""


def test_companions_are_registered_two_sided_claims():
    registered = sim.claims()
    for name, claim in registered.items():
        for other in claim.sharpened_by:
            assert other in registered, f"{name} is sharpened by {other!r}, which is not a registered claim"
            assert registered[other].law != "power_at_most", (
                f"{name} is sharpened by {other}, itself only an upper bound")


@pytest.mark.rate
@pytest.mark.parametrize("exp", EXPERIMENTS, ids=[e.claim for e in EXPERIMENTS])
def test_quick_claim(exp):
    chk, _, _ = sim.run_experiment(exp, quick=True, seed=0)
    assert chk.passed, chk.summary()
    # an upper bound with room to spare must name the claims that make it bite
    assert not chk.slack > SLACK_THAT_NEEDS_A_COMPANION or chk.claim.sharpened_by, (
        f"{chk.summary()}: slack {chk.slack:.3g} > {SLACK_THAT_NEEDS_A_COMPANION} and no sharpened_by companion")
