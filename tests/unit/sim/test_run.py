import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.random import rep_key, round_key, uniform
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
    assert res.metrics["regret"][0, 0] == pytest.approx(0.5 - 0.0)
    assert res.metrics["regret"][1, 0] == pytest.approx(0.5 + 0.75 - 1.0)


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
    np.testing.assert_allclose(res.metrics["regret"][0], expected, atol=1e-9)


def test_blocking_does_not_change_results():
    inst = instances.needle(4, 0.1)
    full = sim.run(hedge(), inst, horizon=200, n_reps=10, seed=3)
    parts = [sim.run(hedge(), inst, horizon=200, n_reps=k, seed=3, rep_offset=o) for o, k in ((0, 3), (3, 5), (8, 2))]
    joined = sim.RunResult.concat(parts)
    np.testing.assert_array_equal(joined.metrics["regret"], full.metrics["regret"])
    np.testing.assert_array_equal(joined.final["expert_regret"], full.final["expert_regret"])


def test_result_statistics():
    res = sim.run(hedge(), instances.fair_coins(3), horizon=50, n_reps=40, seed=1)
    last = res.metrics["regret"][-1]
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
        (dict(checkpoints=[5.5]), ValueError, "checkpoints"),
        (dict(checkpoints=[float("nan")]), ValueError, "checkpoints"),
        (dict(checkpoints=["5"]), TypeError, "checkpoints"),
        (dict(checkpoints="5"), TypeError, "checkpoints"),
        (dict(rep_offset=-1), ValueError, "rep_offset"),
        (dict(metrics=["nope"]), ValueError, "metrics"),
    ],
)
def test_bad_arguments(kwargs, exc, match):
    args = dict(horizon=10, n_reps=2, seed=0) | kwargs
    with pytest.raises(exc, match=match):
        sim.run(hedge(), instances.fair_coins(2), **args)


def test_wrong_objects():
    with pytest.raises(TypeError, match="learner"):
        sim.run("hedge", instances.fair_coins(2), horizon=3)
    with pytest.raises(TypeError, match="env must be an Environment"):
        sim.run(hedge(), "fair_coins", horizon=3)
    with pytest.raises(ValueError, match="horizon=4 exceeds the 3 rows"):
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
    with pytest.raises(ValueError, match="no compiled path"):
        sim.run(L, instances.fair_coins(2), horizon=3, backend="numba")


def test_whole_float_checkpoints_are_steps():
    res = sim.run(hedge(), instances.fair_coins(2), horizon=10, n_reps=2, seed=0, checkpoints=[5.0, 10.0])
    assert res.checkpoints.tolist() == [5, 10] and res.checkpoints.dtype == np.int64


def test_checkpoint_grid_refuses_horizons_beyond_int64():
    with pytest.raises(ValueError, match="horizon"):
        sim.checkpoint_grid(10**30)
    g = sim.checkpoint_grid(10**18)
    assert g.dtype == np.int64 and g[-1] == 10**18 and 10**17 in g


def test_cuda_without_a_gpu_is_a_clear_error(monkeypatch):
    from numba import cuda

    if cuda.is_available():
        pytest.skip("a GPU is present")
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    with pytest.raises(RuntimeError, match="backend='cuda' needs an NVIDIA GPU"):
        sim.run(hedge(), instances.fair_coins(2), horizon=3, backend="cuda")


def test_auto_backend_says_what_ran():
    small = sim.run(hedge(), instances.fair_coins(2), horizon=10, n_reps=2, seed=0)
    assert small.backend in ("numpy", "numba")
    assert sim.pick_backend(hedge(), instances.fair_coins(2), "auto", horizon=10**6, n_reps=1000) == "numba"
    assert sim.pick_backend(hedge()._replace(kernel=None), instances.fair_coins(2), "auto", horizon=10**6,
                            n_reps=1000) == "numpy"


def test_final_values_checks_its_input():
    a = sim.run(hedge(), instances.fair_coins(2), horizon=10, n_reps=3, seed=0)
    b = sim.run(hedge(), instances.fair_coins(2), horizon=10, n_reps=4, seed=0)
    assert sim.final_values([a, a]).shape == (2, 3)
    with pytest.raises(ValueError, match="at least one"):
        sim.final_values([])
    with pytest.raises(ValueError, match="same n_reps"):
        sim.final_values([a, b])
    with pytest.raises(TypeError, match="RunResult"):
        sim.final_values([a, "b"])


def test_result_repr_is_short():
    res = sim.run(hedge(), instances.fair_coins(3), horizon=50, n_reps=2000, seed=1)
    assert len(repr(res).splitlines()) <= 8 and "array" not in repr(res)
