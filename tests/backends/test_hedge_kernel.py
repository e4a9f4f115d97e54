"""Hedge's compiled kernel against the array path, with and without an awake mask, for every schedule.

Without an awake mask the kernel takes its own loops (the driver's all-awake slot); with one it takes the
masked loops.  Both must give the array path's numbers to 1e-10 for every rate schedule (the doubling
schedule is the one whose logits subtract a base), and for expert counts below, at and above the
kernels' four partial sums.
"""

from __future__ import annotations

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import hedge, instances

LEARNERS = {
    "anytime": hedge(),
    "tuned": hedge(horizon=300),
    "doubling": hedge(schedule="doubling"),
    "fixed": hedge(eta=0.7),
}


# The masked path compiles in memory for every sleeping instance (its awake function is a closure, not
# cached on disk), several seconds a schedule: it runs with -m slow (the conformance tests run the masked
# path of the default schedule); the unmasked loops, cached, run below, at and above the partial sums' width.
CASES = [(n, False) for n in (1, 3, 9)] + [pytest.param(3, True, marks=pytest.mark.slow)]


@pytest.mark.parametrize("schedule", sorted(LEARNERS))
@pytest.mark.parametrize("n, masked", CASES)
def test_hedge_kernel_matches_array_path(schedule, n, masked):
    env = instances.needle(n, 0.2) if n > 1 else instances.iid_uniform(1)
    if masked:
        env = instances.sleeping(env, 0.6)
    learner = LEARNERS[schedule]
    a = sim.run(learner, env, 300, 5, seed=4, backend="numpy")
    b = sim.run(learner, env, 300, 5, seed=4, backend="numba")
    assert b.backend == "numba"
    for key in a.metrics:
        assert np.max(np.abs(a.metrics[key] - b.metrics[key])) <= 1e-10, key
    d = np.max(np.abs(a.final["expert_regret"] - b.final["expert_regret"]))
    assert d <= 1e-10
    assert np.all(np.isfinite(b.metrics["regret"]))
