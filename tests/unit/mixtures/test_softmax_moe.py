"""Softmax-gated Gaussian MoE by EM: generator, M-step pieces worked by hand, frozen experts, batches, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from expertlab.mixtures import SoftmaxGatedMoE, SoftmaxMoEParams, fit_softmax_moe, sample_softmax_moe
from expertlab.mixtures._softmax_moe import _experts_wls, _gate_newton
from expertlab.mixtures._voronoi import _log_gate


def truth(n_reps=3, gate_bias=(0.5, 0.0)):
    return SoftmaxMoEParams(np.tile(gate_bias, (n_reps, 1)), np.tile([[[2.0], [0.0]]], (n_reps, 1, 1)),
                            np.tile([[[1.0], [-1.0]]], (n_reps, 1, 1)), np.tile([1.0, -1.0], (n_reps, 1)),
                            np.tile([0.3, 0.5], (n_reps, 1)))


def select(p, r):
    return SoftmaxMoEParams(*(np.asarray(a)[r] for a in (p.gate_bias, p.gate_weight, p.expert_weight,
                                                          p.expert_bias, p.variance)))


def test_sample_is_seeded_batch_independent_and_follows_the_gate():
    t = truth(4)
    X, y, z = sample_softmax_moe(60, t, seed=3)
    assert X.shape == (4, 60, 1) and y.shape == (4, 60) and z.shape == (4, 60)
    X2, y2, z2 = sample_softmax_moe(60, select(t, slice(1, 3)), seed=3, first_rep=1)
    np.testing.assert_array_equal(y2, y[1:3])
    np.testing.assert_array_equal(z2, z[1:3])
    _, _, z_on = sample_softmax_moe(60, truth(2, gate_bias=(60.0, 0.0)), seed=3)
    _, _, z_off = sample_softmax_moe(60, truth(2, gate_bias=(-60.0, 0.0)), seed=3)
    assert np.all(z_on[np.abs(X[:2, :, 0]) < 10] == 0) and np.all(z_off == 1)


def test_expert_m_step_with_hard_responsibilities_is_least_squares_per_expert():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1, 40, 2))
    Xt = np.concatenate([X, np.ones((1, 40, 1))], axis=-1)
    z = np.arange(40) % 2
    y = np.where(z == 0, X[..., 0] - 2.0, 3.0 * X[..., 1]) + 0.1 * rng.normal(size=(1, 40))
    r = np.stack([z == 0, z == 1], axis=-1)[None].astype(float)
    p0 = SoftmaxMoEParams(np.zeros((1, 2)), np.zeros((1, 2, 2)), np.zeros((1, 2, 2)), np.zeros((1, 2)),
                          np.ones((1, 2)))
    w, b, var = _experts_wls(Xt, y, r, p0, np.array([False, True]), 1e-12, np)
    coef = np.linalg.lstsq(Xt[0, z == 0], y[0, z == 0], rcond=None)[0]
    # the solver's relative ridge of 1e-10 moves the solution by about 1e-10 times its scale
    np.testing.assert_allclose(w[0, 0], coef[:2], rtol=1e-8, atol=1e-9)
    assert b[0, 0] == pytest.approx(coef[2], rel=1e-8)
    assert var[0, 0] == pytest.approx(np.mean((y[0, z == 0] - Xt[0, z == 0] @ coef) ** 2), rel=1e-8)
    np.testing.assert_array_equal(w[0, 1], 0.0)                  # frozen expert keeps its parameters
    assert b[0, 1] == 0.0 and var[0, 1] == 1.0


def test_gate_newton_steps_solve_the_multinomial_score_equation_in_the_gauge():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2, 90, 2))
    Xt = np.concatenate([X, np.ones((2, 90, 1))], axis=-1)
    r = rng.dirichlet(np.ones(3), size=(2, 90))
    p = SoftmaxMoEParams(np.zeros((2, 3)), np.zeros((2, 3, 2)), np.zeros((2, 3, 2)), np.zeros((2, 3)),
                         np.ones((2, 3)))
    for _ in range(25):
        gb, gw = _gate_newton(X, Xt, r, p, np)
        p = SoftmaxMoEParams(gb, gw, p.expert_weight, p.expert_bias, p.variance)
    pi = np.exp(_log_gate(X, p, np))
    score = np.einsum("rnk,rna->rka", r - pi, Xt)
    np.testing.assert_allclose(score[:, :2], 0.0, atol=1e-9)
    np.testing.assert_array_equal(p.gate_bias[:, -1], 0.0)
    np.testing.assert_array_equal(p.gate_weight[:, -1], 0.0)


def test_em_monotone_recovers_truth_and_respects_frozen_experts():
    t = truth(3)
    X, y, _ = sample_softmax_moe(3000, t, seed=5)
    res = fit_softmax_moe(X, y, 2, init=t, tol=1e-10, max_iter=500, batched=True)
    assert res.converged.all()
    assert np.all(np.diff(res.loglik_path, axis=1)[np.isfinite(np.diff(res.loglik_path, axis=1))] >= -1e-12)
    # standard errors ~ n^-1/2 = 0.018 times O(1); 0.1 is well outside the noise
    np.testing.assert_allclose(res.params.expert_bias, t.expert_bias, atol=0.1)
    np.testing.assert_allclose(res.params.expert_weight, t.expert_weight, atol=0.1)
    fz = fit_softmax_moe(X, y, 2, init=t, frozen=np.array([True, False]), max_iter=30, batched=True)
    np.testing.assert_array_equal(fz.params.expert_bias[:, 0], t.expert_bias[:, 0])
    np.testing.assert_array_equal(fz.params.variance[:, 0], t.variance[:, 0])


def test_replication_alone_equals_replication_in_batch_and_random_init_is_seeded():
    t = truth(3)
    X, y, _ = sample_softmax_moe(300, t, seed=6)
    res = fit_softmax_moe(X, y, 2, init="random", seed=2, tol=1e-9, max_iter=300, batched=True)
    again = fit_softmax_moe(X, y, 2, init="random", seed=2, tol=1e-9, max_iter=300, batched=True)
    np.testing.assert_array_equal(res.params.expert_bias, again.params.expert_bias)
    one = fit_softmax_moe(X[1], y[1], 2, init=select(t, 1), tol=1e-9, max_iter=300)
    batch = fit_softmax_moe(X, y, 2, init=t, tol=1e-9, max_iter=300, batched=True)
    np.testing.assert_allclose(one.params.expert_bias, batch.params.expert_bias[1], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(one.params.gate_weight, batch.params.gate_weight[1], rtol=1e-10, atol=1e-13)
    assert one.n_iter == batch.n_iter[1]


def test_explicit_init_is_moved_to_the_gauge():
    t = truth(1)
    shifted = SoftmaxMoEParams(t.gate_bias + 5.0, t.gate_weight - 2.0, t.expert_weight, t.expert_bias, t.variance)
    X, y, _ = sample_softmax_moe(200, t, seed=0)
    a = fit_softmax_moe(X, y, 2, init=shifted, max_iter=3, tol=0.0, batched=True)
    b = fit_softmax_moe(X, y, 2, init=t, max_iter=3, tol=0.0, batched=True)
    np.testing.assert_allclose(a.loglik_path, b.loglik_path, rtol=1e-12)


def test_estimator_shell():
    t = truth(1)
    X, y, _ = sample_softmax_moe(800, t, seed=1)
    m = SoftmaxGatedMoE(2, init=select(t, 0))
    with pytest.raises(AttributeError, match="not fitted"):
        m.predict(X[0])
    assert m.fit(X[0], y[0]) is m
    g = m.gate_proba(X[0])
    np.testing.assert_allclose(g.sum(axis=1), 1.0)
    mean = np.sum(g * (X[0] @ m.params_.expert_weight.T + m.params_.expert_bias), axis=1)
    np.testing.assert_allclose(m.predict(X[0]), mean)
    with pytest.raises(ValueError, match="X has 3 features, but SoftmaxGatedMoE is expecting 1"):
        m.gate_proba(np.zeros((2, 3)))


def test_bad_input():
    t = truth(2)
    X, y, _ = sample_softmax_moe(30, t, seed=0)
    with pytest.raises(ValueError, match="n_experts must be >= 2"):
        fit_softmax_moe(X, y, 1, batched=True)
    with pytest.raises(ValueError, match="frozen must be a boolean array"):
        fit_softmax_moe(X, y, 2, frozen=[1, 0], batched=True)
    with pytest.raises(ValueError, match="init must hold 3 experts"):
        fit_softmax_moe(X, y, 3, init=t, batched=True)
    with pytest.raises(TypeError, match="init must be"):
        fit_softmax_moe(X, y, 2, init=1.0, batched=True)
    with pytest.raises(ValueError, match="init must be one of"):
        fit_softmax_moe(X, y, 2, init="kmeans++", batched=True)
    with pytest.raises(ValueError, match="y contains NaN"):
        fit_softmax_moe(X, np.full_like(y, np.nan), 2, batched=True)
    with pytest.raises(TypeError, match="batched must be a bool"):
        fit_softmax_moe(X, y, 2, batched="yes")
    with pytest.raises(ValueError, match="truth must be batched"):
        sample_softmax_moe(10, select(t, 0))
