"""LinFACT and the unstructured baseline on the engine: designs, hand-worked phases, guarantees, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from expertlab import sim
from expertlab.bandits import (eps_good_set, instances, linear_arms, linfact, two_level_linear_arms,
                               unstructured_all_eps_good, xy_optimal_design)


def run(learner, env, n_reps, seed, horizon=30, **kw):
    """(run, exact answer per replication)."""
    res = sim.run(learner, env, horizon=horizon, n_reps=n_reps, seed=seed, **kw)
    return res, res.final["stopped"] & env.correct(res.final["answer"], learner.params["eps"])


def test_identity_design_is_uniform():
    lam, rho = xy_optimal_design(np.eye(4), n_iter=500)
    np.testing.assert_allclose(lam, 0.25, atol=2e-3)
    assert rho == pytest.approx(8.0, rel=1e-2)  # ||e_i - e_j||^2 / (1/4) = 2 * 4


def test_batched_designs_equal_single_solves():
    X, _ = two_level_linear_arms(9, 3)
    rng = np.random.default_rng(0)
    P = rng.random((3, 9, 9)) < 0.3
    P &= ~np.eye(9, dtype=bool)
    lam, rho = xy_optimal_design(X, P, n_iter=50)
    for r in range(3):
        lr, rr = xy_optimal_design(X, P[r], n_iter=50)
        np.testing.assert_allclose(lam[r], lr, rtol=1e-12, atol=1e-15)
        assert rho[r] == pytest.approx(rr, rel=1e-12)


def test_noiseless_phases_worked_by_hand():
    # mu = (1, 0.9, 0.2), eps = 0.32.  Phase 1 (eps_1 = 1/2): nothing is decided (0.8 - 0.5 = 0.3 < 0.32,
    # -0.1 + 0.5 > 0.32).  Phase 2 (1/4): arm 2 is rejected (0.8 - 0.25 > 0.32), arm 0 accepted
    # (-0.1 + 0.25 <= 0.32), arm 1 not (0.1 + 0.25 > 0.32).  Phase 3 (1/8): arm 1 accepted (0.1 + 0.125 <= 0.32).
    env = linear_arms(np.eye(3), np.array([1.0, 0.9, 0.2]), sigma=1e-9)
    res, ok = run(unstructured_all_eps_good(eps=0.32), env, 3, 0)
    assert res.final["answer"].tolist() == [[True, True, False]] * 3 and ok.all()
    assert res.final["stopping_time"].tolist() == [3] * 3
    # with sigma -> 0 every phase pulls each arm of its pairs once: 3 + 3 + 2 (arms 1 and 0 in phase 3)
    assert res.metrics["samples"][-1].tolist() == [8] * 3
    lin, ok = run(linfact(eps=0.32), env, 3, 0)
    assert lin.final["answer"].tolist() == [[True, True, False]] * 3 and lin.final["stopping_time"].tolist() == [3] * 3


def test_eps_good_set():
    assert eps_good_set([0.3, 0.5, 0.45, 0.1], 0.05).tolist() == [False, True, True, False]


def _cp_lower(k, n, level=0.999):
    return 0.0 if k == 0 else float(beta_dist.ppf(1 - level, k, n - k + 1))


def test_exact_set_with_probability_at_least_one_minus_delta():
    env = linear_arms(*two_level_linear_arms(12, 3))
    _, ok = run(linfact(eps=0.2, delta=0.2), env, 150, 3)
    k = int(ok.sum())
    assert k / 150 >= 0.8 or beta_dist.ppf(0.999, k + 1, 150 - k) >= 0.8
    assert _cp_lower(k, 150) > 0.5
    _, base = run(unstructured_all_eps_good(eps=0.2, delta=0.2), env, 150, 3)
    assert base.mean() >= 0.8


def test_structure_saves_samples_when_arms_outnumber_dimensions():
    env = linear_arms(*two_level_linear_arms(64, 3))
    a, oka = run(linfact(eps=0.2, n_design_iter=50), env, 10, 1)
    b, okb = run(unstructured_all_eps_good(eps=0.2), env, 10, 1)
    assert oka.all() and okb.all()
    assert b.metrics["samples"][-1].mean() > 3 * a.metrics["samples"][-1].mean()


def test_small_misspecification_still_gives_the_exact_set():
    # |eta| = 0.005: the widening eps_m (2 + sqrt(rho (N + K) / N)) < 0.03 stays below the 0.1 margin of the
    # good arms, so every arm is decided by the rules before the misspecification floor is reached.
    X, theta = two_level_linear_arms(10, 3)
    eta = 0.005 * np.where(np.arange(10) % 3 == 0, 1.0, -1.0)
    env = linear_arms(X, theta, misspecification=eta)
    assert env.spec.misspecification == pytest.approx(0.005)
    res, ok = run(linfact(eps=0.2), env, 60, 2)
    assert env.good_set(0.2).tolist() == eps_good_set(X @ theta + eta, 0.2).tolist()
    assert res.final["stopped"].all() and ok.mean() >= 0.9


def test_large_misspecification_keeps_the_good_set_and_drops_far_arms():
    # |eta| = 0.05: the floor is reached, undecided arms are kept.  The returned set must contain the
    # eps-good set and only arms within eps + 4 w of the best, with w <= eps_m (2 + sqrt(1.1 rho)) and
    # rho <= 1.1 * 4d (XY value of a near-optimal design): here eps + 4 w < 1.4, and the bad arms are 1.9 away.
    X, theta = two_level_linear_arms(10, 3, good=0.9, bad=-0.9)
    eta = 0.05 * np.where(np.arange(10) % 2 == 0, 1.0, -1.0)
    env = linear_arms(X, theta, misspecification=eta)
    res, _ = run(linfact(eps=0.2), env, 60, 2)
    mu = env.mean_rewards
    selected = res.final["answer"]
    assert res.final["stopped"].all()
    assert np.all(selected[:, env.good_set(0.2)])
    w = 0.05 * (2.0 + np.sqrt(1.1 * 1.1 * 4 * 3))
    far = mu < mu.max() - 0.2 - 4 * w
    assert far.sum() == 5  # arms 1, 3, 5, 7, 9
    assert not selected[:, far].any()


def test_replications_do_not_depend_on_batching():
    env = linear_arms(*two_level_linear_arms(8, 3))
    full, _ = run(linfact(eps=0.2), env, 6, 9)
    part, _ = run(linfact(eps=0.2), env, 2, 9, rep_offset=4)
    np.testing.assert_array_equal(full.metrics["samples"][-1, 4:], part.metrics["samples"][-1])
    np.testing.assert_array_equal(full.final["answer"][4:], part.final["answer"])


def test_unfinished_runs_are_reported():
    # an arm exactly at the eps boundary is never decided: the run reaches the horizon without stopping
    res, ok = run(unstructured_all_eps_good(eps=0.2), linear_arms(np.eye(3), [1.0, 0.8, 0.0]), 4, 0, horizon=6)
    assert not res.final["stopped"].any() and not ok.any()
    assert res.final["stopping_time"].tolist() == [6] * 4


def test_environment_oracle_and_registry():
    env = linear_arms(np.eye(3), [1.0, 0.9, 0.2])
    assert env.spec.feedback == "linear" and env.spec.unit == "batch" and env.spec.max_horizon == 60
    assert env.correct(np.array([[True, True, False], [True, False, False]]), 0.3).tolist() == [True, False]
    with pytest.raises(ValueError, match="horizon"):
        sim.run(linfact(0.3), env, horizon=61)
    with pytest.raises(ValueError, match="feedback"):
        sim.run(linfact(0.3), instances.bernoulli([0.2, 0.5]), horizon=5)
    with pytest.raises(ValueError, match="counts"):
        env.step(env.reset(1, None, np), np.ones((1, 3)), 0, np.zeros(1, dtype=np.uint64))
    for name in ("linfact", "unstructured_all_eps_good"):
        reg = sim.get_learner(name)
        assert reg.feedback == "linear"
        learner, e, horizon = reg.example()
        assert sim.run(learner, e, horizon, n_reps=2, seed=0).final["stopped"].all()
    assert sim.get_environment("linear_arms").factory(arms=np.eye(2), theta=[1.0, 0.0]).n_arms == 2


@pytest.mark.parametrize("kw, exc, match", [
    (dict(arms=np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])), ValueError, "span"),
    (dict(arms=np.array([[1.0, np.nan], [0.0, 1.0]])), ValueError, "finite"),
    (dict(arms=np.ones(3)), ValueError, "shape"),
    (dict(theta=np.ones(3)), ValueError, "theta"),
    (dict(sigma=-1.0), ValueError, "sigma"),
    (dict(misspecification=np.ones(2)), ValueError, "misspecification"),
])
def test_bad_environment_input(kw, exc, match):
    args = dict(arms=np.eye(2)[[0, 1, 0]] + np.array([[0, 0], [0, 0], [0.5, 0.5]]), theta=np.array([1.0, 0.0]))
    args.update(kw)
    with pytest.raises(exc, match=match):
        linear_arms(**args)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(eps=0.0), ValueError, "eps"), (dict(delta=1.5), ValueError, "delta"), (dict(delta=0.0), ValueError, "delta"),
    (dict(n_design_iter=-1), ValueError, "n_design_iter"),
])
def test_bad_learner_input(kw, exc, match):
    args = dict(eps=0.1)
    args.update(kw)
    with pytest.raises(exc, match=match):
        linfact(**args)


def test_bad_design_and_baseline_input():
    with pytest.raises(ValueError, match="pairs"):
        xy_optimal_design(np.eye(3), np.zeros((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="pairs must have shape"):
        xy_optimal_design(np.eye(3), np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="eps"):
        unstructured_all_eps_good(eps=-0.1)
    with pytest.raises(ValueError, match="n_reps"):
        sim.run(unstructured_all_eps_good(eps=0.1), linear_arms(np.eye(2), [1.0, 0.0]), horizon=5, n_reps=0)
