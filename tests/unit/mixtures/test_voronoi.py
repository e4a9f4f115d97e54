"""Voronoi losses D1 / D2: zero at the truth, permutation invariance, D2 = D1 at an exact fit, hand cases, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from expertlab.mixtures import SoftmaxMoEParams, voronoi_cells, voronoi_loss_exact, voronoi_loss_overfit


def random_params(rng, k, d=2, n_reps=None):
    lead = () if n_reps is None else (n_reps,)
    return SoftmaxMoEParams(rng.normal(size=lead + (k,)), rng.normal(size=lead + (k, d)),
                            rng.normal(size=lead + (k, d)) * 3, rng.normal(size=lead + (k,)),
                            rng.uniform(0.5, 2.0, size=lead + (k,)))


def permute(p, perm):
    return SoftmaxMoEParams(*(np.asarray(a)[..., perm] if np.ndim(a) == 1 else np.asarray(a)[perm]
                              for a in (p.gate_bias, p.gate_weight, p.expert_weight, p.expert_bias, p.variance)))


def perturb(p, rng, eps):
    return SoftmaxMoEParams(*(np.asarray(a) + eps * rng.normal(size=np.shape(a)) for a in
                              (p.gate_bias, p.gate_weight, p.expert_weight, p.expert_bias)),
                            np.asarray(p.variance) * np.exp(eps * rng.normal(size=np.shape(p.variance))))


def test_zero_at_the_truth():
    t = random_params(np.random.default_rng(0), 3)
    assert voronoi_loss_exact(t, t) == 0.0
    assert voronoi_loss_overfit(t, t) == 0.0


@pytest.mark.parametrize("k", [3, 5])
def test_invariant_to_permutations_of_the_fitted_atoms(k):
    rng = np.random.default_rng(k)
    t = random_params(rng, 3)
    f = random_params(rng, k) if k == 5 else perturb(t, rng, 0.1)
    perm = rng.permutation(k)
    assert voronoi_loss_exact(permute(f, perm), t) == pytest.approx(voronoi_loss_exact(f, t), rel=1e-14)
    if k == 3:
        assert voronoi_loss_overfit(permute(f, perm), t) == pytest.approx(voronoi_loss_overfit(f, t), rel=1e-14)
    np.testing.assert_array_equal(voronoi_cells(permute(f, perm), t), voronoi_cells(f, t)[perm])


def test_overfit_equals_exact_when_each_cell_holds_one_atom():
    rng = np.random.default_rng(2)
    t = random_params(rng, 3)
    f = perturb(t, rng, 0.05)
    assert sorted(voronoi_cells(f, t).tolist()) == [0, 1, 2]
    assert voronoi_loss_overfit(f, t) == pytest.approx(voronoi_loss_exact(f, t), rel=1e-14)


def test_exact_loss_by_hand():
    # true atoms: (beta1, a, b, sigma) = (0, -1, 0, 1) and (0, 2, 0, 1), masses e^0 = 1
    t = SoftmaxMoEParams(np.zeros(2), np.zeros((2, 1)), np.array([[-1.0], [2.0]]), np.zeros(2), np.ones(2))
    f = SoftmaxMoEParams(np.log([0.5, 3.0]), np.array([[0.1], [0.0]]), np.array([[-1.0], [2.0]]),
                         np.array([0.0, 0.2]), np.array([1.3, 1.0]))
    # mass |0.5 - 1| + |3 - 1| = 2.5; deviations 0.5 (0.1 + 0.3) + 3 (0.2) = 0.8
    assert voronoi_loss_exact(f, t) == pytest.approx(3.3, rel=1e-14)


def test_overfit_loss_by_hand_with_two_and_three_atoms_per_cell():
    t = SoftmaxMoEParams(np.zeros(2), np.zeros((2, 1)), np.array([[-5.0], [5.0]]), np.zeros(2), np.ones(2))
    a = np.array([[-5.5], [-4.0], [5.0], [5.0], [6.0]])
    sig = np.array([1.0, 1.0, 1.0, 1.0 + 0.25, 1.0])
    f = SoftmaxMoEParams(np.log([0.25, 0.5, 0.2, 0.3, 0.5]), np.zeros((5, 1)), a, np.zeros(5), sig)
    assert voronoi_cells(f, t).tolist() == [0, 0, 1, 1, 1]
    # mass |0.75 - 1| + |1.0 - 1| = 0.25; cell 0 (r=4): 0.25 * 0.5^2 + 0.5 * 1^2;
    # cell 1 (r=6): 0.3 * 0.25^3 + 0.5 * 1^3
    expected = 0.25 + 0.25 * 0.25 + 0.5 + 0.3 * 0.25 ** 3 + 0.5
    assert voronoi_loss_overfit(f, t) == pytest.approx(expected, rel=1e-13)
    # D1 of the same atoms is linear in every deviation
    assert voronoi_loss_exact(f, t) == pytest.approx(0.25 + 0.25 * 0.5 + 0.5 * 1 + 0.3 * 0.25 + 0.5 * 1.0)


def test_overfit_loss_is_smaller_than_exact_for_small_deviations_in_a_shared_cell():
    # two atoms splitting one true atom: D2 raises deviations to powers >= 2, so it is far below D1
    t = SoftmaxMoEParams(np.zeros(1), np.zeros((1, 1)), np.ones((1, 1)), np.zeros(1), np.ones(1))
    for eps in (1e-1, 1e-2):
        f = SoftmaxMoEParams(np.log([0.5, 0.5]), np.zeros((2, 1)), np.array([[1 - eps], [1 + eps]]), np.zeros(2),
                             np.ones(2))
        assert voronoi_loss_exact(f, t) == pytest.approx(eps, rel=1e-12)
        assert voronoi_loss_overfit(f, t) == pytest.approx(eps ** 2, rel=1e-12)


def test_batched_equals_one_at_a_time():
    rng = np.random.default_rng(4)
    t = random_params(rng, 2, n_reps=3)
    f = random_params(rng, 4, n_reps=3)
    d1 = voronoi_loss_exact(f, t)
    assert d1.shape == (3,)
    for r in range(3):
        pick = lambda p: SoftmaxMoEParams(*(np.asarray(a)[r] for a in (p.gate_bias, p.gate_weight,  # noqa: E731
                                                                        p.expert_weight, p.expert_bias, p.variance)))
        assert voronoi_loss_exact(pick(f), pick(t)) == pytest.approx(d1[r], rel=1e-14)
        try:
            d2 = voronoi_loss_overfit(pick(f), pick(t))
        except ValueError:           # a cell with 4 atoms has no r_bar
            continue
        assert math.isfinite(d2)


def test_bad_input():
    rng = np.random.default_rng(5)
    t = random_params(rng, 1)
    f = random_params(rng, 4)
    f4 = SoftmaxMoEParams(f.gate_bias, np.zeros((4, 2)), np.zeros((4, 2)), np.zeros(4), np.ones(4))
    with pytest.raises(ValueError, match="holds \\[4\\] fitted atoms"):
        voronoi_loss_overfit(f4, t)
    assert voronoi_loss_overfit(f4, t, r_bar={4: 8}) > 0
    with pytest.raises(ValueError, match="variance must be positive"):
        voronoi_loss_exact(SoftmaxMoEParams(f.gate_bias, f.gate_weight, f.expert_weight, f.expert_bias,
                                            -np.ones(4)), t)
    with pytest.raises(ValueError, match="expert_weight must have shape"):
        voronoi_loss_exact(SoftmaxMoEParams(f.gate_bias, f.gate_weight, np.zeros((4, 3)), f.expert_bias,
                                            f.variance), t)
    with pytest.raises(ValueError, match="gate_bias contains NaN"):
        voronoi_loss_exact(SoftmaxMoEParams(np.full(4, np.nan), f.gate_weight, f.expert_weight, f.expert_bias,
                                            f.variance), t)
    with pytest.raises(ValueError, match="features"):
        voronoi_loss_exact(random_params(rng, 2, d=3), t)
    with pytest.raises(ValueError, match="both be batched"):
        voronoi_loss_exact(random_params(rng, 2, n_reps=1), t)
    with pytest.raises(TypeError, match="fitted must be a SoftmaxMoEParams"):
        voronoi_loss_exact((1, 2), t)
    with pytest.raises(ValueError, match="r_bar"):
        voronoi_loss_overfit(f, t, r_bar={2: -1.0})
