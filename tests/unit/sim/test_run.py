import math

import numpy as np
import pytest

from expertlab import sim
from expertlab._random import rep_key, round_key, uniform
from expertlab.experts import hedge, instances


def test_checkpoint_grid_contains_powers_of_ten_and_horizon():
    g = sim.checkpoint_grid(12345)
    assert g[0] == 1 and g[-1] == 12345
    for p in (1, 10, 100, 1000, 10000):
        assert p in g
    assert np.all(np.diff(g) > 0)
    # about ten points per decade
    assert 35 <= g.size <= 50


def test_hedge_by_hand_two_rounds():
    """Fixed eta, losses (1, 0) then (0, 1): weights and regret worked by hand."""
    eta = math.log(3.0)
    L = hedge(eta=eta)
    inst = instances.loss_matrix([[1.0, 0.0], [0.0, 1.0]])
    res = sim.run(L, inst, horizon=2, n_reps=1, seed=0, checkpoints=[1, 2])
    # round 1: p = (1/2, 1/2), learner loss 1/2, best 0;
    # round 2: p ∝ (e^{-eta}, 1) = (1/4, 3/4), learner loss 3/4; both experts end at 1.
    assert res.regret[0, 0] == pytest.approx(0.5 - 0.0)
    assert res.regret[1, 0] == pytest.approx(0.5 + 0.75 - 1.0)


def test_losses_match_the_counter_rng():
    """The runner draws expert i's loss in round t from uniform(round_key(rep_key(seed, r), t), i)."""
    inst = instances.iid_uniform(3)
    res = sim.run(hedge(eta=1e-12), inst, horizon=5, n_reps=2, seed=77, checkpoints=[5])
    # With eta ~ 0 the weights are uniform: regret = mean of cumulative losses - min.
    with np.errstate(over="ignore"):
        rk = rep_key(np.array([77], dtype=np.uint64), np.arange(2, dtype=np.uint64))
        L = np.zeros((2, 3))
        for t in range(5):
            k = round_key(rk, np.array([t], dtype=np.uint64))[:, None]
            L += uniform(k, np.arange(3, dtype=np.uint64)[None, :])
    expected = L.mean(axis=1) - L.min(axis=1)
    np.testing.assert_allclose(res.regret[0], expected, atol=1e-9)


def test_blocking_does_not_change_results():
    inst = instances.needle(4, 0.1)
    full = sim.run(hedge(), inst, horizon=200, n_reps=10, seed=3)
    parts = [sim.run(hedge(), inst, horizon=200, n_reps=k, seed=3, rep_offset=o) for o, k in ((0, 3), (3, 5), (8, 2))]
    joined = sim.RunResult.concat(parts)
    np.testing.assert_array_equal(joined.regret, full.regret)
    np.testing.assert_array_equal(joined.final["expert_regret"], full.final["expert_regret"])


def test_result_statistics():
    res = sim.run(hedge(), instances.fair_coins(3), horizon=50, n_reps=40, seed=1)
    last = res.regret[-1]
    assert res.mean()[-1] == pytest.approx(last.mean())
    assert res.stderr()[-1] == pytest.approx(last.std(ddof=1) / math.sqrt(40))
    with pytest.raises(KeyError, match="unknown metric"):
        res.metric("nope")


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(horizon=0), ValueError, "horizon"),
        (dict(horizon=-5), ValueError, "horizon"),
        (dict(horizon=2.5), TypeError, "horizon"),
        (dict(n_reps=0), ValueError, "n_reps"),
        (dict(backend="tpu"), ValueError, "backend"),
        (dict(seed=-1), ValueError, "seed"),
        (dict(seed="x"), TypeError, "seed"),
        (dict(checkpoints=[0, 5]), ValueError, "checkpoints"),
    ],
)
def test_bad_arguments(kwargs, exc, match):
    args = dict(horizon=10, n_reps=2, seed=0) | kwargs
    with pytest.raises(exc, match=match):
        sim.run(hedge(), instances.fair_coins(2), **args)


def test_wrong_objects():
    with pytest.raises(TypeError, match="learner"):
        sim.run("hedge", instances.fair_coins(2), horizon=3)
    with pytest.raises(TypeError, match="instance"):
        sim.run(hedge(), "fair_coins", horizon=3)
    with pytest.raises(ValueError, match="loss matrix"):
        sim.run(hedge(), instances.loss_matrix(np.zeros((3, 2))), horizon=4)


def test_cupy_missing_is_a_clear_error():
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed here")
    except ImportError:
        pass
    with pytest.raises(RuntimeError, match="CuPy"):
        sim.run(hedge(), instances.fair_coins(2), horizon=3, backend="cupy")


def test_learner_without_kernel_on_numba_is_a_clear_error():
    L = hedge()._replace(kernel=None)
    with pytest.raises(ValueError, match="no compiled kernel"):
        sim.run(L, instances.fair_coins(2), horizon=3, backend="numba")
