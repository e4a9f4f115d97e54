"""AdaHedge: hand-worked rounds, backends, exact fair-coin regret and the L* = 0 bound."""

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.testing import run_in_cuda_simulator
from expertlab.experts import instances
from expertlab.experts._adahedge import AdaHedgeState, adahedge

# one sleeping instance shared by the compiled-backend tests (one numba compile)
SLEEPING = instances.sleeping(instances.piecewise_best(4, period=10, gap=0.3), p_awake=0.5)


def _step(learner, state, loss, awake=None):
    loss = np.asarray(loss, dtype=float)[None, :]
    aw = None if awake is None else np.asarray(awake, dtype=bool)[None, :]
    p = learner.act(state, aw, None)[0]
    return p[0], learner.update(state, p, (loss, aw))


def test_three_rounds_by_hand():
    # round 1: Delta_0 = 0, eta = inf, uniform over both leaders; delta_1 = 1/2 - min(0, 1) = 1/2
    # round 2: eta = ln 2 / (1/2) = 2 ln 2, L = (0, 1): w = (1, 1/4) / (5/4) = (4/5, 1/5);
    #   losses (1, 0): h = 4/5, m = -ln(4/5 * 1/4 + 1/5) / (2 ln 2) = ln(5/2) / (2 ln 2)
    # round 3: L = (1, 1): uniform again
    learner = adahedge()
    state = learner.init(2, 1)
    p1, state = _step(learner, state, [0.0, 1.0])
    np.testing.assert_allclose(p1, [0.5, 0.5], rtol=0, atol=1e-15)
    assert state.gap[0] == 0.5
    p2, state = _step(learner, state, [1.0, 0.0])
    np.testing.assert_allclose(p2, [0.8, 0.2], rtol=1e-13)
    delta2 = 0.8 - math.log(2.5) / (2 * math.log(2))
    np.testing.assert_allclose(state.gap[0], 0.5 + delta2, rtol=1e-13)
    p3, _ = _step(learner, state, [0.0, 0.0])
    np.testing.assert_allclose(p3, [0.5, 0.5], rtol=1e-13)
    assert isinstance(state, AdaHedgeState)


def test_sim_run_on_loss_matrix_matches_hand_regret():
    # regret after round 1: 1/2 - 0; after round 2: (1/2 + 4/5) - min(1, 1) = 0.3
    inst = instances.loss_matrix([[0.0, 1.0], [1.0, 0.0]])
    res = sim.run(adahedge(), inst, horizon=2, n_reps=3, seed=0, checkpoints=[1, 2])
    np.testing.assert_allclose(res.metrics["regret"], [[0.5] * 3, [0.3] * 3], rtol=1e-13)


def test_equal_losses_keep_eta_infinite_exactly():
    # while every expert has had the same losses, Delta stays exactly 0 (FTL phase)
    learner = adahedge()
    state = learner.init(3, 1)
    for row in ([0.3, 0.3, 0.3], [0.7, 0.7, 0.7], [0.1, 0.1, 0.1]):
        p, state = _step(learner, state, row)
        np.testing.assert_allclose(p, [1 / 3] * 3, rtol=1e-15)
        assert state.gap[0] == 0.0
    # first unequal round: uniform weights, delta = mean - min = 2/3
    p, state = _step(learner, state, [0.0, 1.0, 1.0])
    np.testing.assert_allclose(state.gap[0], 2 / 3, rtol=1e-15)


def test_sleeping_by_hand():
    # round 1: expert 2 asleep; FTL over {0, 1}; delta_1 = 1/2 - 0; R = (1/2, -1/2, 0)
    # round 2: eta = ln 3 / (1/2) = 2 ln 3, weights prop. to exp(eta R) = (3, 1/3, 1)
    learner = adahedge()
    state = learner.init(3, 1)
    p1, state = _step(learner, state, [0.0, 1.0, 0.5], awake=[True, True, False])
    np.testing.assert_allclose(p1, [0.5, 0.5, 0.0], atol=1e-15)
    np.testing.assert_allclose(state.regret[0], [0.5, -0.5, 0.0], atol=1e-15)
    assert state.gap[0] == 0.5
    p2, _ = _step(learner, state, [0.0, 0.0, 0.0])
    np.testing.assert_allclose(p2, [9 / 13, 1 / 13, 3 / 13], rtol=1e-13)
    p2b, _ = _step(learner, state, [0.0, 0.0, 0.0], awake=[False, True, True])
    np.testing.assert_allclose(p2b, [0.0, 0.25, 0.75], rtol=1e-13, atol=1e-15)


def test_single_expert():
    learner = adahedge()
    state = learner.init(1, 1)
    for row in ([0.2], [1.0], [0.0]):
        p, state = _step(learner, state, row)
        np.testing.assert_array_equal(p, [1.0])
    assert state.gap[0] == 0.0


def test_worst_case_bound_on_adversarial_matrices():
    # de Rooij et al. (2014), Theorem 8 with losses in [0, 1]:
    # R_T <= 2 sqrt(L* (T - L*) / T * ln N) + 16/3 ln N + 2
    rng = np.random.default_rng(11)
    T = 400
    alternating = np.zeros((T, 2))
    alternating[0] = [0.5, 0.0]
    alternating[1::2, 1] = 1.0
    alternating[2::2, 0] = 1.0
    for losses in (rng.random((T, 4)), alternating, (rng.random((T, 6)) < 0.3) * 1.0):
        n = losses.shape[1]
        L_star = losses.sum(axis=0).min()
        bound = 2 * math.sqrt(L_star * (T - L_star) / T * math.log(n)) + 16 / 3 * math.log(n) + 2
        res = sim.run(adahedge(), instances.loss_matrix(losses), horizon=T, n_reps=1, seed=0)
        assert 0.0 <= res.metrics["regret"][-1, 0] <= bound


def test_perfect_expert_regret_stays_below_theorem_8():
    # needle with gap 1/2: expert 0 never loses, L* = 0, so R_T <= 16/3 ln N + 2 at every T
    n = 10
    res = sim.run(adahedge(), instances.needle(n, gap=0.5), horizon=2000, n_reps=40, seed=5)
    bound = 16 / 3 * math.log(n) + 2
    assert res.metrics["regret"].max() <= bound



def test_numba_matches_numpy():
    a = sim.run(adahedge(), SLEEPING, horizon=300, n_reps=16, seed=7, backend="numba")
    b = sim.run(adahedge(), SLEEPING, horizon=300, n_reps=16, seed=7, backend="numpy")
    np.testing.assert_allclose(a.metrics["regret"], b.metrics["regret"], rtol=0, atol=1e-10)
    for key in ("sleeping_regret", "tracking_regret"):
        np.testing.assert_allclose(a.metrics[key], b.metrics[key], rtol=0, atol=1e-10)
    np.testing.assert_allclose(a.final["expert_regret"], b.final["expert_regret"], rtol=0, atol=1e-10)
    assert np.any(a.metrics["regret"][-1] != a.metrics["regret"][-1, 0])  # replications differ: the test is not vacuous


_CUDASIM = """
import json
import numpy as np
from expertlab import sim
from expertlab.experts import instances
from expertlab.experts._adahedge import adahedge
inst = instances.sleeping(instances.piecewise_best(3, period=5, gap=0.3), p_awake=0.5)
a = sim.run(adahedge(), inst, 20, 4, seed=2, backend="cuda")
b = sim.run(adahedge(), inst, 20, 4, seed=2, backend="numpy")
d = max(float(np.abs(a.metrics["regret"] - b.metrics["regret"]).max()),
        float(np.abs(a.final["expert_regret"] - b.final["expert_regret"]).max()),
        *(float(np.abs(a.metrics[k] - b.metrics[k]).max()) for k in a.metrics))
print(json.dumps({"diff": d, "spread": float(np.ptp(b.metrics["regret"][-1]))}))
"""




def test_cuda_simulator_matches_numpy():
    out = run_in_cuda_simulator(_CUDASIM)
    assert out["diff"] <= 1e-10
    assert out["spread"] > 0


@pytest.mark.parametrize("bad", [np.nan, np.inf, -0.5, 1.5])
def test_update_rejects_bad_losses(bad):
    learner = adahedge()
    state = learner.init(3, 2)
    p = learner.act(state)[0]
    loss = np.full((2, 3), 0.5)
    loss[1, 2] = bad
    with pytest.raises(ValueError, match="loss"):
        learner.update(state, p, (loss, None))


def test_update_rejects_bad_shapes_and_masks():
    learner = adahedge()
    state = learner.init(3, 2)
    p = learner.act(state)[0]
    with pytest.raises(ValueError, match="p must have shape"):
        learner.update(state, p[:, :2], (np.zeros((2, 3)), None))
    with pytest.raises(ValueError, match="awake"):
        learner.update(state, p, (np.zeros((2, 3)), np.zeros((2, 3), dtype=bool)))
    with pytest.raises(TypeError, match="awake"):
        learner.update(state, p, (np.zeros((2, 3)), np.ones((2, 3))))
    with pytest.raises(TypeError, match="n_experts"):
        learner.init(2.5, 2)
    with pytest.raises(ValueError, match="n_reps"):
        learner.init(2, 0)
