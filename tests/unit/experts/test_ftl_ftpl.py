"""Follow the leader and follow the perturbed leader."""


import numpy as np
import pytest
from scipy import integrate, stats

from expertlab import sim
from expertlab.random import rep_key
from expertlab.experts import instances
from expertlab.testing import run_in_cuda_simulator
from expertlab.experts._ftl import FTLState, FTPLState, ftl, ftpl

SLEEPING = instances.sleeping(instances.piecewise_best(4, period=10, gap=0.3), p_awake=0.5)


def _step(learner, state, loss, awake=None, key=None):
    loss = np.asarray(loss, dtype=float)[None, :]
    aw = None if awake is None else np.asarray(awake, dtype=bool)[None, :]
    p = learner.act(state, aw, key)[0]
    return p[0], learner.update(state, p, (loss, aw))


# -- FTL ------------------------------------------------------------------------------------------


def test_ftl_ties_by_hand():
    learner = ftl()
    state = learner.init(3, 1)
    p1, state = _step(learner, state, [0.5, 0.0, 0.0])
    np.testing.assert_allclose(p1, [1 / 3] * 3, rtol=1e-15)
    p2, state = _step(learner, state, [0.0, 1.0, 0.5])  # L = (0.5, 0, 0) -> leaders {1, 2}
    np.testing.assert_allclose(p2, [0.0, 0.5, 0.5], atol=1e-15)
    p3, _ = _step(learner, state, [0.0, 0.0, 0.0])  # L = (0.5, 1, 0.5) -> leaders {0, 2}
    np.testing.assert_allclose(p3, [0.5, 0.0, 0.5], atol=1e-15)
    assert isinstance(state, FTLState)


def test_ftl_tie_tolerance():
    learner = ftl()
    state = learner.init(2, 1)
    _, state = _step(learner, state, [0.1, 0.3])
    p2, state = _step(learner, state, [0.2, 0.0])
    assert 0.1 + 0.2 != 0.3  # the cumulative losses differ in floating point ...
    np.testing.assert_allclose(p2, [1.0, 0.0])  # (round 2 still had a unique leader)
    p3, _ = _step(learner, state, [0.0, 0.0])
    np.testing.assert_allclose(p3, [0.5, 0.5], rtol=1e-15)  # ... but are tied
    # a real difference of 1e-6 is not a tie
    state = learner.init(2, 1)
    _, state = _step(learner, state, [0.3, 0.300001])
    p, _ = _step(learner, state, [0.0, 0.0])
    np.testing.assert_array_equal(p, [1.0, 0.0])


def test_ftl_linear_regret_on_alternating_losses():
    # losses (1/2, 0), (0, 1), (1, 0), ...: FTL pays 1/4 then 1 every round; with T = 2k + 1
    # the best expert has L* = k, so R_T = 1/4 + 2k - k = k + 1/4
    k = 10
    T = 2 * k + 1
    losses = np.zeros((T, 2))
    losses[0] = [0.5, 0.0]
    losses[1::2, 1] = 1.0
    losses[2::2, 0] = 1.0
    res = sim.run(ftl(), instances.loss_matrix(losses), horizon=T, n_reps=2, seed=0, checkpoints=[T])
    np.testing.assert_allclose(res.metrics["regret"][-1], [k + 0.25] * 2, rtol=1e-14)


def test_ftl_sleeping_by_hand():
    learner = ftl()
    state = learner.init(3, 1)
    p1, state = _step(learner, state, [0.0, 1.0, 0.0], awake=[True, True, False])
    np.testing.assert_allclose(p1, [0.5, 0.5, 0.0], atol=1e-15)
    np.testing.assert_allclose(state.regret[0], [0.5, -0.5, 0.0], atol=1e-15)
    p2, _ = _step(learner, state, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(p2, [1.0, 0.0, 0.0])
    p2b, _ = _step(learner, state, [0.0, 0.0, 0.0], awake=[False, True, True])
    np.testing.assert_array_equal(p2b, [0.0, 0.0, 1.0])


# -- FTPL: the law of the sampled expert ------------------------------------------------------------


N_DRAWS = 200_000
R_ROW = np.array([0.0, -0.5, 0.3, -1.2])


def _frequencies(noise, eta, awake=None):
    learner = ftpl(eta, noise=noise)
    state = learner.init(R_ROW.size, N_DRAWS)
    state = state._replace(regret=np.tile(R_ROW, (N_DRAWS, 1)))
    with np.errstate(over="ignore"):  # uint64 hashing wraps by design
        keys = rep_key(np.uint64(2024), np.arange(N_DRAWS, dtype=np.uint64))
    aw = None if awake is None else np.tile(np.asarray(awake, dtype=bool), (N_DRAWS, 1))
    p = learner.act(state, aw, keys)[0]
    assert np.all((p == 0) | (p == 1)) and np.all(p.sum(axis=1) == 1)
    return p.sum(axis=0)


def _win_probabilities(dist, eta, awake):
    """P(argmax_i eta R_i + Z_i = i) by quadrature: int f(z) prod_{j != i} F(z + eta (R_i - R_j)) dz."""
    idx = np.flatnonzero(awake)
    out = np.zeros(R_ROW.size)
    for i in idx:
        others = [j for j in idx if j != i]

        def integrand(z, i=i, others=others):
            return dist.pdf(z) * np.prod([dist.cdf(z + eta * (R_ROW[i] - R_ROW[j])) for j in others])

        lo, hi = dist.ppf(1e-15), dist.ppf(1 - 1e-15)
        # kinks of the Laplace and exponential laws: z = 0 and z = -eta (R_i - R_j)
        kinks = [z for z in [0.0, *(-eta * (R_ROW[i] - R_ROW[j]) for j in others)] if lo < z < hi]
        out[i] = integrate.quad(integrand, lo, hi, points=kinks, limit=200, epsabs=1e-13)[0]
    return out


def _assert_matches(counts, probs):
    n = counts.sum()
    keep = probs > 0
    assert np.all(counts[~keep] == 0)
    # every frequency within 4 standard errors, and a chi-square goodness-of-fit test
    se = np.sqrt(probs * (1 - probs) / n)
    assert np.all(np.abs(counts / n - probs) <= 4 * se + 1e-12)
    chi2 = np.sum((counts[keep] - n * probs[keep]) ** 2 / (n * probs[keep]))
    assert stats.chi2.sf(chi2, keep.sum() - 1) > 1e-3


@pytest.mark.parametrize("awake", [None, [True, False, True, True]])
def test_gumbel_ftpl_samples_hedge_distribution(awake):
    eta = 1.3
    mask = np.ones(R_ROW.size, dtype=bool) if awake is None else np.asarray(awake)
    w = np.where(mask, np.exp(eta * R_ROW), 0.0)  # Hedge: softmax(-eta L) = softmax(eta R)
    _assert_matches(_frequencies("gumbel", eta, awake), w / w.sum())


@pytest.mark.parametrize("noise, dist", [("exponential", stats.expon()), ("laplace", stats.laplace()),
                                         ("gumbel", stats.gumbel_r())])
def test_ftpl_law_matches_quadrature(noise, dist):
    eta = 0.8
    mask = np.ones(R_ROW.size, dtype=bool)
    probs = _win_probabilities(dist, eta, mask)
    assert probs.sum() == pytest.approx(1.0, abs=1e-8)
    _assert_matches(_frequencies(noise, eta), probs)


def test_ftpl_doubling_resets_base_at_epoch_starts():
    learner = ftpl(schedule="doubling")
    state = learner.init(2, 1)
    keys = np.array([5], dtype=np.uint64)
    bases = []
    for loss in ([0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]):
        p, state = _step(learner, state, loss, key=keys)
        bases.append((state.base.copy(), state.regret.copy()))
    # epochs open at 0-based rounds 1, 3, 7: base = R after 1 and 3 rounds, unchanged after 2 and 4
    np.testing.assert_array_equal(bases[0][0], bases[0][1])
    np.testing.assert_array_equal(bases[1][0], bases[0][1])
    np.testing.assert_array_equal(bases[2][0], bases[2][1])
    np.testing.assert_array_equal(bases[3][0], bases[2][1])
    assert isinstance(state, FTPLState)


# -- both: exact fair-coin regret, backends ----------------------------------------------------------


@pytest.mark.parametrize("learner", [ftl(), ftpl(), ftpl(noise="laplace", schedule="doubling")],
                         ids=["ftl", "ftpl-gumbel", "ftpl-laplace"])
def test_fair_coins_exact_expected_regret(learner):
    inst = instances.fair_coins(5)
    T = 200
    res = sim.run(learner, inst, horizon=T, n_reps=4000, seed=77)
    exact = inst.exact_expected_regret(T)
    assert abs(res.mean()[-1] - exact) <= 3 * res.stderr()[-1]


def assert_same_run(a, b):
    np.testing.assert_allclose(a.metrics["regret"], b.metrics["regret"], rtol=0, atol=1e-10)
    for key in ("sleeping_regret", "tracking_regret"):
        np.testing.assert_allclose(a.metrics[key], b.metrics[key], rtol=0, atol=1e-10)
    np.testing.assert_allclose(a.final["expert_regret"], b.final["expert_regret"], rtol=0, atol=1e-10)
    assert np.any(a.metrics["regret"][-1] != a.metrics["regret"][-1, 0])


def test_ftl_numba_matches_numpy():
    a = sim.run(ftl(), SLEEPING, horizon=300, n_reps=16, seed=7, backend="numba")
    b = sim.run(ftl(), SLEEPING, horizon=300, n_reps=16, seed=7, backend="numpy")
    assert_same_run(a, b)


@pytest.mark.parametrize("kwargs", [{}, {"noise": "exponential", "eta": 0.5},
                                    {"noise": "laplace", "schedule": "doubling"},
                                    {"noise": "gumbel", "horizon": 300}])
def test_ftpl_numba_matches_numpy(kwargs):
    learner = ftpl(**kwargs)
    a = sim.run(learner, SLEEPING, horizon=300, n_reps=16, seed=7, backend="numba")
    b = sim.run(learner, SLEEPING, horizon=300, n_reps=16, seed=7, backend="numpy")
    assert_same_run(a, b)


_CUDASIM = """
import json
import numpy as np
from expertlab import sim
from expertlab.testing import run_in_cuda_simulator
from expertlab.experts import instances
from expertlab.testing import run_in_cuda_simulator
from expertlab.experts._ftl import ftl, ftpl
inst = instances.sleeping(instances.piecewise_best(3, period=5, gap=0.3), p_awake=0.5)
d = 0.0
for learner in (ftl(), ftpl(), ftpl(noise="exponential"), ftpl(noise="laplace", schedule="doubling")):
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


# -- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"noise": "cauchy"}, ValueError, "noise"),
    ({"eta": 0.0}, ValueError, "eta"),
    ({"eta": -2.0}, ValueError, "eta"),
    ({"eta": "big"}, TypeError, "eta"),
    ({"eta": 1.0, "horizon": 10}, ValueError, "horizon"),
    ({"eta": 1.0, "schedule": "anytime"}, ValueError, "schedule"),
    ({"schedule": "weekly"}, ValueError, "schedule"),
    ({"schedule": "fixed"}, ValueError, "horizon"),
    ({"schedule": "anytime", "horizon": 10}, ValueError, "horizon"),
    ({"horizon": 0}, ValueError, "horizon"),
])
def test_ftpl_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ftpl(**kwargs)


def test_ftpl_act_needs_key():
    learner = ftpl()
    state = learner.init(2, 3)
    with pytest.raises(TypeError, match="key"):
        learner.act(state)[0]
    with pytest.raises(ValueError, match="key"):
        learner.act(state, None, np.zeros(2, dtype=np.uint64))[0]


@pytest.mark.parametrize("factory", [ftl, ftpl])
def test_update_rejects_nan_losses(factory):
    learner = factory()
    state = learner.init(3, 2)
    p = np.full((2, 3), 1 / 3)
    loss = np.full((2, 3), 0.5)
    loss[1, 0] = np.nan
    with pytest.raises(ValueError, match="loss"):
        learner.update(state, p, (loss, None))
