"""sim.run with bandit feedback: metrics, blocking, compiled backends, errors."""

import numpy as np
import pytest

from expertlab import sim
from expertlab.bandits import exp3, exp3_ix, instances, kl_ucb, thompson_sampling, ucb1
from expertlab.sim import Pull
from expertlab.experts import hedge
from expertlab.experts import instances as expert_instances

NINE = np.arange(1, 10) / 10.0
RNG = np.random.default_rng(5)
ARRAY = instances.reward_array(RNG.uniform(size=(150, 4)))
PIECEWISE = instances.piecewise_bernoulli([[0.8, 0.2, 0.5], [0.1, 0.9, 0.5]], [60])
BERN = instances.bernoulli([0.3, 0.5, 0.45, 0.7, 0.1])


#: The registered regret learners (bandit feedback); exp3_ix needs its horizon and number of arms.
NAMES = sorted(n for n, r in sim.learners().items() if r.feedback == "bandit")


def _make(name, n_arms=5):
    return exp3_ix(150, n_arms) if name == "exp3_ix" else sim.get_learner(name).factory()


def _learners():
    out = [(n, _make(n)) for n in NAMES]
    out += [("exp3-tuned", exp3(150, n_arms=5)), ("kl_ucb-c3", kl_ucb(c=3.0))]
    return out


def assert_runs_equal(a, b, tol=1e-12):
    assert set(a.metrics) == set(b.metrics)
    np.testing.assert_array_equal(a.final["pulls"], b.final["pulls"])
    np.testing.assert_allclose(a.metrics["regret"], b.metrics["regret"], rtol=tol, atol=tol)
    for k in a.metrics:
        np.testing.assert_allclose(a.metrics[k], b.metrics[k], rtol=tol, atol=tol, err_msg=k)


@pytest.mark.parametrize("name, L", _learners(), ids=[n for n, _ in _learners()])
def test_numba_equals_numpy(name, L):
    a = sim.run(L, BERN, horizon=150, n_reps=5, seed=4)
    b = sim.run(L, BERN, horizon=150, n_reps=5, seed=4, backend="numba")
    assert_runs_equal(a, b)


# each (learner kernel, instance kind) pair is a separate compilation: a few pairs cover the
# adversarial (every arm's outcome each round) and non-stationary branches of the driver
@pytest.mark.parametrize("L, inst", [(exp3(150, n_arms=4), ARRAY), (ucb1(), ARRAY), (thompson_sampling(), PIECEWISE),
                                     (kl_ucb(), PIECEWISE)], ids=["exp3-array", "ucb1-array", "ts-piecewise",
                                                                  "klucb-piecewise"])
def test_numba_equals_numpy_other_instances(L, inst):
    a = sim.run(L, inst, horizon=150, n_reps=5, seed=4)
    b = sim.run(L, inst, horizon=150, n_reps=5, seed=4, backend="numba")
    assert_runs_equal(a, b)


@pytest.mark.parametrize("L", [ucb1(), kl_ucb(kind="gaussian", sigma=2.0), thompson_sampling("gaussian", sigma=2.0)])
def test_numba_equals_numpy_gaussian(L):
    inst = instances.gaussian([0.0, 1.0, 0.5], sigma=2.0)
    a = sim.run(L, inst, horizon=120, n_reps=4, seed=8)
    b = sim.run(L, inst, horizon=120, n_reps=4, seed=8, backend="numba")
    assert_runs_equal(a, b)
    assert np.any(a.metric("reward") % 1 != 0)  # real-valued outcomes


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_blocking_does_not_change_results(name, backend):
    L = _make(name)
    full = sim.run(L, BERN, horizon=80, n_reps=6, seed=2, backend=backend)
    parts = [sim.run(L, BERN, horizon=80, n_reps=k, seed=2, rep_offset=o, backend=backend)
             for o, k in ((0, 2), (2, 1), (3, 3))]
    joined = sim.RunResult.concat(parts)
    np.testing.assert_array_equal(joined.metrics["regret"], full.metrics["regret"])
    np.testing.assert_array_equal(joined.final["pulls"], full.final["pulls"])


def test_metrics_and_invariants():
    T = 150
    res = sim.run(exp3(T, n_arms=4), ARRAY, horizon=T, n_reps=8, seed=1)
    assert set(res.metrics) == {"regret", "reward", "realised_regret", "dynamic_regret"}
    both = sim.run(exp3(T, n_arms=4), ARRAY, horizon=T, n_reps=8, seed=1,
                   metrics=["regret", "reward", "expected_regret", "realised_regret", "dynamic_regret"])
    for k in res.metrics:
        np.testing.assert_array_equal(both.metrics[k], res.metrics[k])
    np.testing.assert_array_equal(res.final["pulls"].sum(axis=1), np.full(8, T))
    # deterministic rewards: pseudo-regret is the realised regret against the best arm in hindsight
    np.testing.assert_allclose(res.metric("realised_regret"), res.metrics["regret"], atol=1e-9)
    best = ARRAY.data[0][:T].sum(axis=0).max()
    np.testing.assert_allclose(res.metrics["regret"][-1], best - res.metric("reward")[-1], atol=1e-9)
    # on a piecewise instance the dynamic regret dominates the regret against the best fixed arm
    r2 = sim.run(ucb1(), PIECEWISE, horizon=120, n_reps=6, seed=0)
    assert np.all(r2.metric("dynamic_regret") >= r2.metrics["regret"] - 1e-12)
    # stationary: pseudo-regret = sum of gaps of the pulled arms
    r3 = sim.run(ucb1(), BERN, horizon=100, n_reps=6, seed=0)
    gaps = 0.7 - np.array([0.3, 0.5, 0.45, 0.7, 0.1])
    np.testing.assert_allclose(r3.metrics["regret"][-1], r3.final["pulls"] @ gaps, rtol=1e-12)
    assert "expected_regret" not in r3.metrics and "realised_regret" not in r3.metrics
    assert r3.updates_per_second > 0


def test_expected_regret_is_the_mean_of_pseudo_regret():
    # E[Delta_{a_t} | past] = <p_t, Delta>: the two metrics have the same mean
    res = sim.run(exp3(), instances.bernoulli([0.2, 0.5, 0.6]), horizon=300, n_reps=400, seed=3, backend="numba",
                  metrics=["regret", "expected_regret"])
    d = res.metrics["regret"][-1] - res.metric("expected_regret")[-1]
    assert abs(d.mean()) < 4 * d.std(ddof=1) / np.sqrt(d.size)


def test_errors():
    with pytest.raises(ValueError, match="'bandit' feedback but environment 'fair_coins' gives 'full'"):
        sim.run(ucb1(), expert_instances.fair_coins(3), horizon=10, n_reps=2)
    with pytest.raises(ValueError, match="'full' feedback but environment 'bernoulli' gives 'bandit'"):
        sim.run(hedge(), BERN, horizon=10, n_reps=2)
    with pytest.raises(TypeError, match="env must be an Environment"):
        sim.run(ucb1(), [0.3, 0.5], horizon=10, n_reps=2)
    with pytest.raises(ValueError, match="expected_regret.*needs the arm distribution"):
        sim.run(ucb1(), BERN, horizon=10, n_reps=2, backend="numpy", metrics=["expected_regret"])
    with pytest.raises(ValueError, match="expected_regret"):
        sim.run(ucb1(), BERN, horizon=10, n_reps=2, backend="numba", metrics=["expected_regret"])
    with pytest.raises(ValueError, match="'tracking_regret' is not a metric of environment 'bernoulli'"):
        sim.run(ucb1(), BERN, horizon=10, n_reps=2, metrics=["tracking_regret"])
    with pytest.raises(ValueError, match="horizon"):
        sim.run(ucb1(), BERN, horizon=0, n_reps=2)
    with pytest.raises(ValueError, match="backend"):
        sim.run(ucb1(), BERN, horizon=5, n_reps=2, backend="tpu")
    no_kernel = ucb1()._replace(kernel=None)
    with pytest.raises(ValueError, match="no compiled path"):
        sim.run(no_kernel, BERN, horizon=5, n_reps=2, backend="numba")
    assert sim.pick_backend(no_kernel, BERN, "auto", horizon=10**6, n_reps=1000) == "numpy"
    assert sim.pick_backend(ucb1(), BERN, "auto", horizon=10**6, n_reps=1000) == "numba"
    assert sim.pick_backend(ucb1(), BERN, "numpy") == "numpy"
    with pytest.raises(ValueError, match="backend"):
        sim.pick_backend(ucb1(), BERN, "bogus")


@pytest.mark.parametrize("name", NAMES)
def test_conformance_shapes_and_purity(name):
    L = _make(name, 4)
    assert isinstance(L, sim.Learner) and L.feedback == "bandit" and L.name == name and name in repr(L)
    n_reps, K = 3, 4
    state = L.init(K, n_reps)
    rng = np.random.default_rng(0)
    with np.errstate(over="ignore"):
        keys = np.arange(1, n_reps + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        for t in range(12):
            arm, p = L.act(state, None, keys + np.uint64(t))[0]
            assert arm.shape == (n_reps,) and np.issubdtype(arm.dtype, np.integer)
            assert np.all((arm >= 0) & (arm < K))
            assert (p is not None) == L.kernel.randomised
            if p is not None:
                assert p.shape == (n_reps, K) and np.all(p >= 0) and np.allclose(p.sum(axis=1), 1.0)
                assert np.all(p[np.arange(n_reps), arm] > 0)
            before = [np.array(a, copy=True) for a in state]
            new = L.update(state, Pull(arm, p), rng.uniform(size=n_reps))
            assert type(new) is type(state)
            for a, b in zip(before, state):
                np.testing.assert_array_equal(a, b)  # the old state is untouched
            state = new


def test_learners_refuse_arms_they_were_not_built_for():
    with pytest.raises(ValueError, match="n_arms: exp3 was tuned for n_arms=3 but the environment has 2 arms"):
        sim.run(exp3(30, n_arms=3), instances.bernoulli([0.3, 0.6]), horizon=30, n_reps=2)
    with pytest.raises(ValueError, match="n_arms"):
        sim.run(exp3_ix(30, 3), instances.bernoulli([0.3, 0.6]), horizon=30, n_reps=2, backend="numba")
    gauss = instances.gaussian([0.0, 5.0])
    for L in (kl_ucb(), thompson_sampling()):
        for backend in ("numpy", "numba"):
            with pytest.raises(ValueError, match="kind='bernoulli'.*needs rewards in \\[0, 1\\]"):
                sim.run(L, gauss, horizon=10, n_reps=2, backend=backend)
    res = sim.run(kl_ucb(kind="gaussian", sigma=1.0), gauss, horizon=10, n_reps=2)
    assert res.metrics["regret"].shape[1] == 2
