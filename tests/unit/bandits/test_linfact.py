"""LinFACT and the unstructured baseline: designs against cvxpy, hand-worked phases, guarantees, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from expertlab.bandits import (eps_good_set, linfact, two_level_linear_arms, unstructured_all_eps_good,
                               xy_optimal_design)


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
    mu = np.array([1.0, 0.9, 0.2])
    res = unstructured_all_eps_good(mu, eps=0.32, sigma=1e-9, n_reps=3, seed=0)
    assert res.selected.tolist() == [[True, True, False]] * 3
    assert res.n_phases.tolist() == [3] * 3
    # with sigma -> 0 every phase pulls each arm of its pairs once: 3 + 3 + 2 (arms 1 and 0 in phase 3)
    assert res.n_samples.tolist() == [8] * 3
    lin = linfact(np.eye(3), mu, eps=0.32, sigma=1e-9, n_reps=3, seed=0)
    assert lin.selected.tolist() == [[True, True, False]] * 3 and lin.n_phases.tolist() == [3] * 3


def test_eps_good_set():
    assert eps_good_set([0.3, 0.5, 0.45, 0.1], 0.05).tolist() == [False, True, True, False]


def _cp_lower(k, n, level=0.999):
    return 0.0 if k == 0 else float(beta_dist.ppf(1 - level, k, n - k + 1))


def test_exact_set_with_probability_at_least_one_minus_delta():
    X, theta = two_level_linear_arms(12, 3)
    res = linfact(X, theta, eps=0.2, delta=0.2, n_reps=150, seed=3)
    k = int(res.correct.sum())
    assert k / 150 >= 0.8 or beta_dist.ppf(0.999, k + 1, 150 - k) >= 0.8
    assert _cp_lower(k, 150) > 0.5
    base = unstructured_all_eps_good(X @ theta, eps=0.2, delta=0.2, n_reps=150, seed=3)
    assert base.success_rate >= 0.8


def test_structure_saves_samples_when_arms_outnumber_dimensions():
    X, theta = two_level_linear_arms(64, 3)
    a = linfact(X, theta, eps=0.2, n_reps=10, seed=1, n_design_iter=50)
    b = unstructured_all_eps_good(X @ theta, eps=0.2, n_reps=10, seed=1)
    assert a.correct.all() and b.correct.all()
    assert b.n_samples.mean() > 3 * a.n_samples.mean()


def test_small_misspecification_still_gives_the_exact_set():
    # |eta| = 0.005: the widening eps_m (2 + sqrt(rho (N + K) / N)) < 0.03 stays below the 0.1 margin of the
    # good arms, so every arm is decided by the rules before the misspecification floor is reached.
    X, theta = two_level_linear_arms(10, 3)
    eta = 0.005 * np.where(np.arange(10) % 3 == 0, 1.0, -1.0)
    res = linfact(X, theta, eps=0.2, misspecification=eta, n_reps=60, seed=2)
    assert res.truth.tolist() == eps_good_set(X @ theta + eta, 0.2).tolist()
    assert res.finished.all() and res.success_rate >= 0.9


def test_large_misspecification_keeps_the_good_set_and_drops_far_arms():
    # |eta| = 0.05: the floor is reached, undecided arms are kept.  The returned set must contain the
    # eps-good set and only arms within eps + 4 w of the best, with w <= eps_m (2 + sqrt(1.1 rho)) and
    # rho <= 1.1 * 4d (XY value of a near-optimal design): here eps + 4 w < 1.4, and the bad arms are 1.9 away.
    X, theta = two_level_linear_arms(10, 3, good=0.9, bad=-0.9)
    eta = 0.05 * np.where(np.arange(10) % 2 == 0, 1.0, -1.0)
    res = linfact(X, theta, eps=0.2, misspecification=eta, n_reps=60, seed=2)
    mu = X @ theta + eta
    assert res.finished.all()
    assert np.all(res.selected[:, res.truth])
    w = 0.05 * (2.0 + np.sqrt(1.1 * 1.1 * 4 * 3))
    far = mu < mu.max() - 0.2 - 4 * w
    assert far.sum() == 5  # arms 1, 3, 5, 7, 9
    assert not res.selected[:, far].any()


def test_replications_do_not_depend_on_batching():
    X, theta = two_level_linear_arms(8, 3)
    full = linfact(X, theta, eps=0.2, n_reps=6, seed=9)
    part = linfact(X, theta, eps=0.2, n_reps=2, seed=9, rep_offset=4)
    np.testing.assert_array_equal(full.n_samples[4:], part.n_samples)
    np.testing.assert_array_equal(full.selected[4:], part.selected)


def test_unfinished_runs_are_reported():
    # an arm exactly at the eps boundary is never decided
    res = unstructured_all_eps_good([1.0, 0.8, 0.0], eps=0.2, n_reps=4, seed=0, max_phases=6)
    assert not res.finished.any() and not res.correct.any()


@pytest.mark.parametrize("kw, exc, match", [
    (dict(arms=np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])), ValueError, "span"),
    (dict(arms=np.array([[1.0, np.nan], [0.0, 1.0]])), ValueError, "finite"),
    (dict(arms=np.ones(3)), ValueError, "shape"),
    (dict(theta=np.ones(3)), ValueError, "theta"),
    (dict(eps=0.0), ValueError, "eps"),
    (dict(delta=1.5), ValueError, "delta"),
    (dict(delta=0.0), ValueError, "delta"),
    (dict(sigma=-1.0), ValueError, "sigma"),
    (dict(misspecification=np.ones(2)), ValueError, "misspecification"),
    (dict(n_reps=0), ValueError, "n_reps"),
])
def test_bad_input(kw, exc, match):
    args = dict(arms=np.eye(2)[[0, 1, 0]] + np.array([[0, 0], [0, 0], [0.5, 0.5]]), theta=np.array([1.0, 0.0]),
                eps=0.1)
    args.update(kw)
    with pytest.raises(exc, match=match):
        linfact(**args)


def test_bad_design_and_baseline_input():
    with pytest.raises(ValueError, match="pairs"):
        xy_optimal_design(np.eye(3), np.zeros((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="pairs must have shape"):
        xy_optimal_design(np.eye(3), np.ones((2, 2), dtype=bool))
    with pytest.raises(ValueError, match="means"):
        unstructured_all_eps_good([1.0], eps=0.1)
    with pytest.raises(ValueError, match="finite"):
        unstructured_all_eps_good([1.0, np.inf], eps=0.1)
