"""Checks specific to the full-information aggregators (feedback ``"full"`` on loss sequences).

Sleeping experts get zero probability, the compiled paths agree with the array
path on sleeping, tracking and stochastic sequences, and on independent fair
coins every learner's expected regret equals the exact value.
"""

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import instances

#: Full-information learners outside these checks, with the reason.
EXEMPT = {
    "memory_bounded": "keeps a pool of experts: no sleeping experts, and its play is not a function of all experts",
    "memory_adaptive": "plays against an adaptive adversary, not an oblivious loss sequence",
    "noisy_ftpl": "private learner calibrated to a horizon; checked in tests/unit/experts/test_private.py",
    "tree_ftrl": "private learner calibrated to a horizon; checked in tests/unit/experts/test_private.py",
    "sparse_vector_experts": "private learner for the realizable regime; checked in test_private.py",
    "small_loss_experts": "private learner for the small-loss regime; checked in test_private_small_loss.py",
}

AGGREGATORS = sorted(n for n, r in sim.learners().items()
                     if r.feedback == "full" and r.family == "experts" and n not in EXEMPT)


def test_the_aggregators_are_all_here():
    assert {"hedge", "adahedge", "squint", "boa", "ml_prod", "adanormalhedge", "fixed_share", "ftl",
            "ftpl"} <= set(AGGREGATORS)
    assert "memory_bounded" in sim.learners()


def _rng_losses(n_reps, n, seed=0):
    return np.random.default_rng(seed).uniform(size=(n_reps, n))


@pytest.mark.parametrize("name", AGGREGATORS)
def test_awake_mask_gives_zero_to_sleepers(name):
    L = sim.get_learner(name).factory()
    n_reps, n = 2, 4
    awake = np.array([[True, False, True, False], [False, False, False, True]])
    state = L.init(n, n_reps)
    keys = np.arange(n_reps, dtype=np.uint64)
    for t in range(4):
        with np.errstate(over="ignore"):
            p, state = L.act(state, awake, keys + np.uint64(t))
        assert np.all(p[~awake] == 0.0)
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
        before = [np.array(a, copy=True) for a in state]
        new = L.update(state, p, sim.FullFeedback(_rng_losses(n_reps, n, t), awake))
        for a, b in zip(before, state):
            np.testing.assert_array_equal(a, b)  # update does not mutate its input
        state = new
    assert p[1, 3] == 1.0  # the only awake expert of row 1


CASES = [
    lambda: instances.needle(6, 0.1),
    lambda: instances.sleeping(instances.iid_uniform(5), 0.4),
    lambda: instances.piecewise_best(4, 50, 0.2),
]
KERNEL_NAMES = [n for n in AGGREGATORS if sim.get_learner(n).factory().kernel is not None]


@pytest.mark.parametrize("name", KERNEL_NAMES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_numba_equals_numpy(name, case):
    L = sim.get_learner(name).factory()
    inst = CASES[case]()
    a = sim.run(L, inst, horizon=150, n_reps=8, seed=5, backend="numpy")
    b = sim.run(L, inst, horizon=150, n_reps=8, seed=5, backend="numba")
    assert set(a.metrics) == set(b.metrics) == set(inst.available_metrics())
    for k in a.metrics:
        np.testing.assert_allclose(b.metrics[k], a.metrics[k], rtol=0, atol=1e-10, err_msg=k)
    np.testing.assert_allclose(b.final["expert_regret"], a.final["expert_regret"], rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", AGGREGATORS)
@pytest.mark.parametrize("horizon, n_experts, seed, z", [(100, 4, 2024, 3.5), (200, 5, 11, 3.0)])
def test_fair_coins_exact_expected_regret(name, horizon, n_experts, seed, z):
    """On independent fair coins every learner's expected regret is known exactly."""
    L = sim.get_learner(name).factory()
    inst = instances.fair_coins(n_experts)
    backend = "numba" if L.kernel is not None else "numpy"
    res = sim.run(L, inst, horizon=horizon, n_reps=4000, seed=seed, backend=backend)
    exact = inst.exact_expected_regret(horizon)
    assert abs(res.mean()[-1] - exact) <= z * res.stderr()[-1]
