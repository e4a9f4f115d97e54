"""Fixed share: hand-worked rounds, tuning, backends, exact fair-coin regret and tracking."""

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.testing import run_in_cuda_simulator
from expertlab.experts import hedge, instances
from expertlab.experts._fixed_share import FixedShareState, fixed_share, tuned_rates

SLEEPING = instances.sleeping(instances.piecewise_best(4, period=10, gap=0.3), p_awake=0.5)


def _step(learner, state, loss, awake=None):
    loss = np.asarray(loss, dtype=float)[None, :]
    aw = None if awake is None else np.asarray(awake, dtype=bool)[None, :]
    p = learner.act(state, aw, None)[0]
    return p[0], learner.update(state, p, (loss, aw))


def _softmax_neg(eta, L):
    w = np.exp(-eta * (L - L.min()))
    return w / w.sum()


def test_two_rounds_by_hand():
    # eta = ln 2, alpha = 1/2.  Round 1, losses (0, 1): v = (2/3, 1/3), w = 1/4 + v/2 = (7/12, 5/12).
    # Round 2, losses (1, 0): v prop. to (7/24, 10/24) = (7/17, 10/17); w = 1/4 + v/2 = (31/68, 37/68).
    learner = fixed_share(eta=math.log(2), alpha=0.5)
    state = learner.init(2, 1)
    p1, state = _step(learner, state, [0.0, 1.0])
    np.testing.assert_allclose(p1, [0.5, 0.5], rtol=1e-15)
    p2, state = _step(learner, state, [1.0, 0.0])
    np.testing.assert_allclose(p2, [7 / 12, 5 / 12], rtol=1e-13)
    p3, _ = _step(learner, state, [0.0, 0.0])
    np.testing.assert_allclose(p3, [31 / 68, 37 / 68], rtol=1e-13)
    assert isinstance(state, FixedShareState)


def test_sleeping_by_hand():
    # eta = ln 2, alpha = 0.3, expert 2 asleep, losses (0, 1, *): the awake mass 2/3 is split
    # prop. to (1, 1/2): (4/9, 2/9), expert 2 keeps 1/3; share: 0.1 + 0.7 w = (37, 23, 30) / 90
    learner = fixed_share(eta=math.log(2), alpha=0.3)
    state = learner.init(3, 1)
    p1, state = _step(learner, state, [0.0, 1.0, 0.5], awake=[True, True, False])
    np.testing.assert_allclose(p1, [0.5, 0.5, 0.0], atol=1e-15)
    p2, _ = _step(learner, state, [0.0, 0.0, 0.0])
    np.testing.assert_allclose(p2, np.array([37, 23, 30]) / 90, rtol=1e-13)
    p2b, _ = _step(learner, state, [0.0, 0.0, 0.0], awake=[True, False, True])
    np.testing.assert_allclose(p2b, [37 / 67, 0.0, 30 / 67], rtol=1e-13, atol=1e-15)


def test_alpha_zero_is_exponential_weights():
    rng = np.random.default_rng(3)
    losses = rng.random((30, 4))
    eta = 0.7
    learner = fixed_share(eta=eta, alpha=0.0)
    state = learner.init(4, 1)
    L = np.zeros(4)
    for row in losses:
        p, state = _step(learner, state, row)
        np.testing.assert_allclose(p, _softmax_neg(eta, L), rtol=1e-12)
        L += row


def test_alpha_one_is_uniform():
    rng = np.random.default_rng(4)
    learner = fixed_share(eta=2.0, alpha=1.0)
    state = learner.init(5, 1)
    for row in rng.random((10, 5)):
        p, state = _step(learner, state, row)
        np.testing.assert_allclose(p, np.full(5, 0.2), rtol=1e-13)


def test_default_anytime_rates_first_round():
    # update closing round 1: eta_1 = sqrt(8 ln 2), alpha_1 = 1/2
    eta = math.sqrt(8 * math.log(2))
    v0 = 1 / (1 + math.exp(-eta))
    learner = fixed_share()
    state = learner.init(2, 1)
    _, state = _step(learner, state, [0.0, 1.0])
    p2, _ = _step(learner, state, [0.0, 0.0])
    np.testing.assert_allclose(p2, [0.25 + 0.5 * v0, 0.25 + 0.5 * (1 - v0)], rtol=1e-13)


def test_tuned_rates_closed_form():
    T, m, n = 101, 4, 8
    a = m / (T - 1)
    C = (m + 1) * math.log(n) + (T - 1) * (-a * math.log(a) - (1 - a) * math.log(1 - a))
    eta, alpha, bound = tuned_rates(T, m, n)
    assert alpha == pytest.approx(0.04, rel=1e-14)
    assert eta == pytest.approx(math.sqrt(8 * C / T), rel=1e-14)
    assert bound == pytest.approx(math.sqrt(T * C / 2), rel=1e-14)
    # (T - 1) H(m / (T - 1)) <= m ln(e (T - 1) / m)
    assert C - (m + 1) * math.log(n) <= m * math.log(math.e * (T - 1) / m)


def test_tuned_learner_uses_tuned_rates():
    # T = 11, m = 2, N = 2: alpha = 0.2, eta = sqrt(8 (3 ln 2 + 10 H(0.2)) / 11)
    C = 3 * math.log(2) + 10 * (-0.2 * math.log(0.2) - 0.8 * math.log(0.8))
    eta = math.sqrt(8 * C / 11)
    v0 = 1 / (1 + math.exp(-eta))
    learner = fixed_share(horizon=11, n_switches=2)
    state = learner.init(2, 1)
    _, state = _step(learner, state, [0.0, 1.0])
    p2, _ = _step(learner, state, [0.0, 0.0])
    np.testing.assert_allclose(p2, [0.1 + 0.8 * v0, 0.1 + 0.8 * (1 - v0)], rtol=1e-13)


def test_no_switches_is_tuned_hedge():
    T, n = 50, 3
    rng = np.random.default_rng(5)
    losses = rng.random((T, n))
    eta = math.sqrt(8 * math.log(n) / T)
    learner = fixed_share(horizon=T, n_switches=0)
    state = learner.init(n, 1)
    L = np.zeros(n)
    for row in losses:
        p, state = _step(learner, state, row)
        np.testing.assert_allclose(p, _softmax_neg(eta, L), rtol=1e-12)
        L += row


def test_single_expert():
    learner = fixed_share()
    state = learner.init(1, 1)
    for row in ([0.2], [1.0]):
        p, state = _step(learner, state, row)
        np.testing.assert_array_equal(p, [1.0])



def test_tracks_switching_best_expert_better_than_hedge():
    T, period, n = 2000, 250, 5
    m = T // period - 1  # switches of the comparator sequence
    inst = instances.piecewise_best(n, period=period, gap=0.3)
    fs = sim.run(fixed_share(horizon=T, n_switches=m), inst, horizon=T, n_reps=60, seed=9)
    hd = sim.run(hedge(horizon=T), inst, horizon=T, n_reps=60, seed=9)
    tr_fs = fs.metrics["tracking_regret"][-1]
    tr_hd = hd.metrics["tracking_regret"][-1]
    # Corollary 5.1 (Cesa-Bianchi & Lugosi 2006): the bound holds for every loss sequence
    _, _, bound = tuned_rates(T, m, n)
    assert tr_fs.max() <= bound
    # confidence intervals (3 standard errors) do not overlap
    se = lambda x: x.std(ddof=1) / math.sqrt(x.size)  # noqa: E731
    assert tr_fs.mean() + 3 * se(tr_fs) < tr_hd.mean() - 3 * se(tr_hd)


@pytest.mark.parametrize("kwargs", [{}, {"horizon": 300, "n_switches": 29}, {"eta": 0.4, "alpha": 0.05},
                                    {"eta": 0.4, "alpha": 0.0}, {"alpha": 1.0}])
def test_numba_matches_numpy(kwargs):
    learner = fixed_share(**kwargs)
    a = sim.run(learner, SLEEPING, horizon=300, n_reps=16, seed=7, backend="numba")
    b = sim.run(learner, SLEEPING, horizon=300, n_reps=16, seed=7, backend="numpy")
    np.testing.assert_allclose(a.metrics["regret"], b.metrics["regret"], rtol=0, atol=1e-10)
    for key in ("sleeping_regret", "tracking_regret"):
        np.testing.assert_allclose(a.metrics[key], b.metrics[key], rtol=0, atol=1e-10)
    np.testing.assert_allclose(a.final["expert_regret"], b.final["expert_regret"], rtol=0, atol=1e-10)
    assert np.any(a.metrics["regret"][-1] != a.metrics["regret"][-1, 0])


_CUDASIM = """
import json
import numpy as np
from expertlab import sim
from expertlab.experts import instances
from expertlab.experts._fixed_share import fixed_share
inst = instances.sleeping(instances.piecewise_best(3, period=5, gap=0.3), p_awake=0.5)
d = 0.0
for learner in (fixed_share(), fixed_share(horizon=20, n_switches=3)):
    a = sim.run(learner, inst, 20, 4, seed=2, backend="cuda")
    b = sim.run(learner, inst, 20, 4, seed=2, backend="numpy")
    d = max(d, float(np.abs(a.metrics["regret"] - b.metrics["regret"]).max()),
            float(np.abs(a.final["expert_regret"] - b.final["expert_regret"]).max()),
            *(float(np.abs(a.metrics[k] - b.metrics[k]).max()) for k in a.metrics))
print(json.dumps({"diff": d, "spread": float(np.ptp(b.metrics["regret"][-1]))}))
"""




def test_cuda_simulator_matches_numpy():
    out = run_in_cuda_simulator(_CUDASIM)
    assert out["diff"] <= 1e-10
    assert out["spread"] > 0


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"eta": 0.0}, ValueError, "eta"),
    ({"eta": -1.0}, ValueError, "eta"),
    ({"eta": float("nan")}, ValueError, "eta"),
    ({"eta": "fast"}, TypeError, "eta"),
    ({"alpha": -0.1}, ValueError, "alpha"),
    ({"alpha": 1.5}, ValueError, "alpha"),
    ({"alpha": float("nan")}, ValueError, "alpha"),
    ({"horizon": 100}, ValueError, "n_switches"),
    ({"n_switches": 3}, ValueError, "horizon"),
    ({"horizon": 10, "n_switches": 10}, ValueError, "n_switches"),
    ({"horizon": 10, "n_switches": -1}, ValueError, "n_switches"),
    ({"horizon": 0, "n_switches": 0}, ValueError, "horizon"),
    ({"horizon": 10, "n_switches": 2, "eta": 0.5}, ValueError, "horizon"),
])
def test_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fixed_share(**kwargs)


def test_update_rejects_nan_losses():
    learner = fixed_share()
    state = learner.init(3, 2)
    p = learner.act(state)[0]
    loss = np.full((2, 3), 0.5)
    loss[0, 1] = np.nan
    with pytest.raises(ValueError, match="loss"):
        learner.update(state, p, (loss, None))
