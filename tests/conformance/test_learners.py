"""One suite over every registered full-information learner.

Shapes, purity (``update`` never mutates its input), batch independence
(replication r run alone equals replication r inside a batch), and
compiled-backend equivalence for learners that ship a kernel.
"""

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import LEARNERS, instances

NAMES = sorted(LEARNERS)


def _rng_losses(n_reps, n, seed=0):
    return np.random.default_rng(seed).uniform(size=(n_reps, n))


@pytest.mark.parametrize("name", NAMES)
def test_record(name):
    L = LEARNERS[name]()
    assert isinstance(L, sim.Learner)
    assert L.name == name
    assert L.feedback in sim.FEEDBACK_KINDS
    assert name in repr(L)


@pytest.mark.parametrize("name", NAMES)
def test_shapes_and_purity(name):
    L = LEARNERS[name]()
    n_reps, n = 3, 4
    state = L.init(n_reps, n)
    keys = np.arange(n_reps, dtype=np.uint64)
    for t in range(5):
        p = L.act(state, keys + np.uint64(t))
        assert p.shape == (n_reps, n)
        assert np.all(p >= 0) and np.allclose(p.sum(axis=1), 1.0)
        loss = _rng_losses(n_reps, n, t)
        before = [np.array(a, copy=True) for a in state]
        new = L.update(state, p, loss)
        assert type(new) is type(state)
        for a, b in zip(before, state):
            np.testing.assert_array_equal(a, b)  # the old state is untouched
        for a, b in zip(new, state):
            assert np.shape(a) == np.shape(b)
        state = new


@pytest.mark.parametrize("name", NAMES)
def test_replication_alone_equals_in_batch(name):
    L = LEARNERS[name]()
    inst = instances.needle(5, 0.2)
    full = sim.run(L, inst, horizon=60, n_reps=6, seed=11)
    alone = sim.run(L, inst, horizon=60, n_reps=1, seed=11, rep_offset=4)
    np.testing.assert_allclose(alone.regret[:, 0], full.regret[:, 4], rtol=0, atol=1e-12)
    np.testing.assert_allclose(alone.final["expert_regret"][0], full.final["expert_regret"][4], atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_awake_mask_gives_zero_to_sleepers(name):
    L = LEARNERS[name]()
    n_reps, n = 2, 4
    awake = np.array([[True, False, True, False], [False, False, False, True]])
    state = L.init(n_reps, n)
    keys = np.arange(n_reps, dtype=np.uint64)
    for t in range(4):
        p = L.act(state, keys + np.uint64(t), awake)
        assert np.all(p[~awake] == 0.0)
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
        state = L.update(state, p, _rng_losses(n_reps, n, t), awake)
    assert p[1, 3] == 1.0  # the only awake expert of row 1


KERNEL_NAMES = [n for n in NAMES if LEARNERS[n]().kernel is not None]
CASES = [
    lambda: instances.needle(6, 0.1),
    lambda: instances.sleeping(instances.iid_uniform(5), 0.4),
    lambda: instances.piecewise_best(4, 50, 0.2),
]


@pytest.mark.parametrize("name", KERNEL_NAMES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_numba_equals_numpy(name, case):
    L = LEARNERS[name]()
    inst = CASES[case]()
    a = sim.run(L, inst, horizon=150, n_reps=8, seed=5, backend="numpy")
    b = sim.run(L, inst, horizon=150, n_reps=8, seed=5, backend="numba")
    np.testing.assert_allclose(b.regret, a.regret, rtol=0, atol=1e-10)
    for k in a.metrics:
        np.testing.assert_allclose(b.metrics[k], a.metrics[k], rtol=0, atol=1e-10)
    np.testing.assert_allclose(b.final["expert_regret"], a.final["expert_regret"], rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("horizon, n_experts, seed, z", [(100, 4, 2024, 3.5), (200, 5, 11, 3.0)])
def test_fair_coins_exact_expected_regret(name, horizon, n_experts, seed, z):
    """On independent fair coins every learner's expected regret is known exactly."""
    L = LEARNERS[name]()
    inst = instances.fair_coins(n_experts)
    backend = "numba" if L.kernel is not None else "numpy"
    res = sim.run(L, inst, horizon=horizon, n_reps=4000, seed=seed, backend=backend)
    exact = inst.exact_expected_regret(horizon)
    assert abs(res.mean()[-1] - exact) <= z * res.stderr()[-1]
