"""Clustered single-index data, the MoE / single-network SGD and the overlap metrics."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from numpy.polynomial.hermite_e import hermegauss, hermeval

from expertlab.mixtures import (ClusterMoEParams, cluster_codes, cluster_moe_loss, cluster_overlap, cluster_signs,
                                hermite_link, routing_accuracy, sample_clustered_single_index, train_cluster_moe,
                                train_single_network)


def _he(n, t):
    """Unnormalised probabilists' Hermite polynomial He_n (NumPy's, independent of the module)."""
    return hermeval(t, [0.0] * n + [1.0])


# ----------------------------------------------------------------------------------------------- cluster codes
def test_codes_and_signs_by_hand():
    np.testing.assert_array_equal(cluster_codes(2), [[1.0], [-1.0]])
    np.testing.assert_array_equal(cluster_codes(4), [[1, 1], [-1, 1], [1, -1], [-1, -1]])
    np.testing.assert_array_equal(cluster_signs(4), [1, -1, -1, 1])
    codes = cluster_codes(8)
    assert codes.shape == (8, 3) and len({tuple(c) for c in codes}) == 8
    assert cluster_signs(8).sum() == 0 and np.all(np.abs(cluster_signs(8)) == 1)


def test_hermite_link_by_hand():
    t = np.array([-1.5, 0.0, 0.5, 2.0])
    np.testing.assert_allclose(hermite_link(t, 1), t)
    np.testing.assert_allclose(hermite_link(t, 2), (t ** 2 - 1) / math.sqrt(2))
    np.testing.assert_allclose(hermite_link(t, 3), (t ** 3 - 3 * t) / math.sqrt(6))


# ------------------------------------------------------------------------------------------------- generator
def test_generator_shapes_frame_and_labels():
    s = sample_clustered_single_index(300, 10, n_clusters=4, separation=1.5, degree=3, n_reps=3, seed=4)
    assert s.x.shape == (3, 300, 10) and s.y.shape == (3, 300) and s.cluster.shape == (3, 300)
    assert s.direction.shape == (3, 10) and s.cluster_axes.shape == (3, 2, 10) and s.means.shape == (3, 4, 10)
    frame = np.concatenate([s.direction[:, None], s.cluster_axes], axis=1)
    np.testing.assert_allclose(frame @ np.swapaxes(frame, 1, 2), np.broadcast_to(np.eye(3), (3, 3, 3)), atol=1e-12)
    np.testing.assert_allclose(s.means, 1.5 * np.einsum("cj,rjd->rcd", cluster_codes(4), s.cluster_axes))
    assert set(np.unique(s.cluster)) == {0, 1, 2, 3}
    z = s.x - np.take_along_axis(s.means, s.cluster[..., None], axis=1)
    t = np.einsum("rnd,rd->rn", z, s.direction)
    np.testing.assert_allclose(s.y, s.signs[s.cluster] * (t ** 3 - 3 * t) / math.sqrt(6), atol=1e-12)
    # the projection on w does not see the cluster mean
    np.testing.assert_allclose(np.einsum("rnd,rd->rn", s.x, s.direction), t, atol=1e-12)


def test_generator_noise_is_added():
    a = sample_clustered_single_index(50, 6, n_reps=2, seed=1)
    b = sample_clustered_single_index(50, 6, n_reps=2, seed=1, noise=0.3)
    np.testing.assert_array_equal(a.x, b.x)
    r = (b.y - a.y) / 0.3
    assert np.all(r != 0) and abs(r.std() - 1) < 0.3


def test_generator_seeding_and_batch_independence():
    big = sample_clustered_single_index(400, 8, n_reps=5, seed=9)
    small = sample_clustered_single_index(400, 8, n_reps=2, seed=9)
    alone = sample_clustered_single_index(400, 8, n_reps=1, seed=9)
    for f in ("x", "y", "cluster", "direction", "means"):
        np.testing.assert_array_equal(getattr(big, f)[:2], getattr(small, f))
        np.testing.assert_array_equal(getattr(big, f)[:1], getattr(alone, f))
    again = sample_clustered_single_index(400, 8, n_reps=5, seed=9)
    np.testing.assert_array_equal(big.x, again.x)
    other = sample_clustered_single_index(400, 8, n_reps=5, seed=10)
    assert not np.allclose(big.x, other.x)
    assert not np.allclose(big.x[0], big.x[1])                  # replications are different streams
    # sample i does not depend on where the draw starts or how many samples are drawn
    part = sample_clustered_single_index(123, 8, n_reps=5, seed=9, start=250)
    np.testing.assert_array_equal(part.x, big.x[:, 250:373])
    np.testing.assert_array_equal(part.y, big.y[:, 250:373])


def test_generator_moments():
    # pooled E[y He1(x_w) He1(x_v1) He1(x_v2)] = kappa^2 (k = 1), and E[y x_w] = 0; Monte Carlo within 4 s.e.
    s = sample_clustered_single_index(40000, 4, separation=1.5, seed=3)
    xw = np.einsum("nd,d->n", s.x[0], s.direction[0])
    x1, x2 = (np.einsum("nd,d->n", s.x[0], s.cluster_axes[0, j]) for j in range(2))
    for prod, exact in ((s.y[0] * xw * x1 * x2, 1.5 ** 2), (s.y[0] * xw, 0.0), (s.y[0] * xw * x1, 0.0)):
        assert abs(prod.mean() - exact) <= 4 * prod.std() / math.sqrt(prod.size)


# ---------------------------------------------------------------------------------- Hermite coefficients (quad)
def _pooled_coefficients(degree, kappa, max_order, n_nodes=12):
    """E[y He_a0(x_w) He_a1(x_v1) He_a2(x_v2)] for C = 4 by Gauss-Hermite quadrature over z."""
    t, wt = hermegauss(n_nodes)
    wt = wt / math.sqrt(2 * math.pi)
    codes, signs = cluster_codes(4), cluster_signs(4)
    out = {}
    for alpha in itertools.product(range(max_order + 1), repeat=3):
        if sum(alpha) > max_order:
            continue
        total = 0.0
        for (a1, a2), s in zip(codes, signs):
            e0 = np.sum(wt * s * hermite_link(t, degree) * _he(alpha[0], t))
            e1 = np.sum(wt * _he(alpha[1], t + kappa * a1))
            e2 = np.sum(wt * _he(alpha[2], t + kappa * a2))
            total += e0 * e1 * e2 / 4
        out[alpha] = total
    return out


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_pooled_hermite_coefficients_vanish_below_k_plus_2(degree):
    kappa = 1.7
    coef = _pooled_coefficients(degree, kappa, degree + 3)
    for alpha, value in coef.items():
        closed = (math.sqrt(math.factorial(degree)) * kappa ** (alpha[1] + alpha[2])
                  if alpha[0] == degree and alpha[1] % 2 and alpha[2] % 2 else 0.0)
        assert value == pytest.approx(closed, abs=1e-9), alpha
        if sum(alpha) < degree + 2:
            assert abs(value) < 1e-9, alpha
    assert coef[(degree, 1, 1)] == pytest.approx(math.sqrt(math.factorial(degree)) * kappa ** 2, rel=1e-10)
    # along w alone the pooled task has no Hermite coefficient at all
    assert all(abs(coef[(ell, 0, 0)]) < 1e-12 for ell in range(degree + 4))


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_per_cluster_hermite_coefficients(degree):
    t, wt = hermegauss(20)
    wt = wt / math.sqrt(2 * math.pi)
    for s in cluster_signs(4):
        coefs = [np.sum(wt * s * hermite_link(t, degree) * hermite_link(t, ell)) for ell in range(1, 7)]
        np.testing.assert_allclose(coefs, [s * (ell == degree) for ell in range(1, 7)], atol=1e-10)


# ----------------------------------------------------------------------------------------------------- gradients
def _params(rng, n_reps, n_experts, n_neurons, dim):
    th = rng.standard_normal((n_reps, n_experts, n_neurons, dim))
    th /= np.linalg.norm(th, axis=-1, keepdims=True)
    return ClusterMoEParams(th, rng.standard_normal((n_reps, n_experts, n_neurons)),
                            rng.standard_normal((n_reps, n_experts, dim)))


@pytest.mark.parametrize("objective, balance, oracle, n_experts", [
    ("likelihood", 0.0, False, 4), ("likelihood", 0.7, False, 4), ("squared", 0.0, False, 4),
    ("squared", 0.3, False, 3), ("likelihood", 0.0, True, 4), ("squared", 0.0, False, 1)])
def test_gradients_match_central_differences(objective, balance, oracle, n_experts):
    rng = np.random.default_rng(0)
    p = _params(rng, 2, n_experts, 2, 5)
    x, y = rng.standard_normal((2, 6, 5)), rng.standard_normal((2, 6))
    cluster = rng.integers(0, n_experts, size=(2, 6)) if oracle else None
    kw = dict(objective=objective, temperature=0.6, balance=balance, cluster=cluster)
    _, g = cluster_moe_loss(p, x, y, **kw)
    h = 1e-6
    for field in range(3):
        if oracle and field == 2:
            np.testing.assert_array_equal(g[2], 0.0)
            continue
        arr = p[field]
        num = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            up, dn = arr.copy(), arr.copy()
            up[idx] += h
            dn[idx] -= h
            lu = cluster_moe_loss(p._replace(**{p._fields[field]: up}), x, y, **kw)[0]
            ld = cluster_moe_loss(p._replace(**{p._fields[field]: dn}), x, y, **kw)[0]
            num[idx] = (lu[idx[0]] - ld[idx[0]]) / (2 * h)     # the loss of replication r depends on r only
        np.testing.assert_allclose(g[field], num, rtol=1e-5, atol=1e-7, err_msg=p._fields[field])


def test_loss_by_hand():
    # one expert, one neuron, theta . x = 0: f = 0, the squared loss is y^2 / 2 and the likelihood loss y^2 / (2 tau)
    p = ClusterMoEParams(np.array([[[[0.6, 0.8]]]]), np.array([[[2.0]]]), np.zeros((1, 1, 2)))
    x, y = np.array([[[4.0, -3.0]]]), np.array([[1.5]])
    assert cluster_moe_loss(p, x, y, objective="squared")[0][0] == pytest.approx(1.125)
    assert cluster_moe_loss(p, x, y, temperature=0.5)[0][0] == pytest.approx(2.25)
    # two identical experts under any router: the likelihood is that of one expert
    p2 = ClusterMoEParams(np.repeat(p.first_layer, 2, 1), np.repeat(p.output, 2, 1), np.array([[[1.0, 0], [0, 1.0]]]))
    assert cluster_moe_loss(p2, x, y, temperature=0.5)[0][0] == pytest.approx(2.25)
    # even load: the balancing term adds exactly beta
    p3 = p2._replace(router=np.zeros((1, 2, 2)))
    assert cluster_moe_loss(p3, x, y, temperature=0.5, balance=0.4)[0][0] == pytest.approx(2.25 + 0.4)


# ------------------------------------------------------------------------------------------------------ metrics
def test_overlap_and_routing_by_hand():
    th = np.array([[[[1.0, 0.0], [0.0, -2.0]], [[3.0, 4.0], [1.0, 0.0]]]])
    w = np.array([[0.0, 1.0]])
    np.testing.assert_allclose(cluster_overlap(th, w, np.array([[0, 1, 1]])), [[1.0, 0.8, 0.8]])
    router = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    x = np.array([[[2.0, 0.0], [0.0, 3.0], [1.0, 0.5], [0.2, 1.0]]])
    # routes: 0, 1, 0, 1; clusters 1, 0, 1, 1 -> best matching 1->0, 0->1 gets 3 of 4
    assign, acc = routing_accuracy(router, x, np.array([[1, 0, 1, 1]]), 2)
    np.testing.assert_array_equal(assign, [[1, 0]])
    assert acc[0] == pytest.approx(0.75)


# ----------------------------------------------------------------------------------------------------- training
def test_training_shapes_reproducibility_and_batch_independence():
    kw = dict(n_clusters=4, n_neurons=2, seed=5)
    a = train_cluster_moe(12, 200, n_reps=3, **kw)
    b = train_cluster_moe(12, 200, n_reps=1, **kw)
    c = train_cluster_moe(12, 200, n_reps=3, **kw)
    assert a.params.first_layer.shape == (3, 4, 2, 12) and a.params.router.shape == (3, 4, 12)
    assert a.overlap.shape == (3, 4) and a.min_overlap.shape == (3,) and a.assignment.shape == (3, 4)
    np.testing.assert_allclose(np.linalg.norm(a.params.first_layer, axis=-1), 1.0, atol=1e-12)
    for f in range(3):
        np.testing.assert_array_equal(a.params[f], c.params[f])
        np.testing.assert_allclose(a.params[f][:1], b.params[f], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.overlap[:1], b.overlap, atol=1e-12)
    s3 = train_single_network(12, 200, n_reps=3, seed=5)
    s1 = train_single_network(12, 200, n_reps=1, seed=5)
    np.testing.assert_allclose(s3.params.first_layer[:1], s1.params.first_layer, rtol=1e-12, atol=1e-14)
    assert s3.model == "single" and s3.router == "none" and np.all(np.isnan(s3.router_accuracy))
    assert np.all(s3.overlap == s3.overlap[:, :1])              # one network: the same neurons for every cluster


def test_oracle_routed_experts_recover_the_direction():
    # each expert sees its own cluster, information exponent 1: a few hundred samples per cluster in d = 16
    # take a random start (overlap ~ 1/4) to near alignment; every cluster of every replication must pass 1/2
    res = train_cluster_moe(16, 2048, router="oracle", n_reps=4, seed=0)
    assert np.all(res.router_accuracy == 1.0) and np.all(res.assignment == np.arange(4))
    assert np.all(res.min_overlap > 0.5)
    start = train_cluster_moe(16, 1, router="oracle", n_reps=4, seed=0, lr=1e-12, output_lr=0.0)
    assert np.all(start.min_overlap < 0.7)


# --------------------------------------------------------------------------------------------------- validation
@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(dim=1), ValueError, "dim"), (dict(n_clusters=1), ValueError, "n_clusters"),
    (dict(n_clusters=3), ValueError, "power of two"), (dict(dim=2, n_clusters=4), ValueError, "dim"),
    (dict(separation=float("nan")), ValueError, "separation"), (dict(separation=-1.0), ValueError, "separation"),
    (dict(noise=float("inf")), ValueError, "noise"), (dict(degree=0), ValueError, "degree"),
    (dict(n_samples=0), ValueError, "n_samples"), (dict(n_samples=True), TypeError, "n_samples"),
    (dict(seed=-1), ValueError, "seed"), (dict(n_reps=0), ValueError, "n_reps"),
])
def test_generator_validation(kwargs, exc, match):
    args = dict(n_samples=10, dim=8) | kwargs
    with pytest.raises(exc, match=match):
        sample_clustered_single_index(args.pop("n_samples"), args.pop("dim"), **args)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(lr=0.0), ValueError, "lr"), (dict(lr=float("nan")), ValueError, "lr"), (dict(lr=-1.0), ValueError, "lr"),
    (dict(router_lr=-1.0), ValueError, "router_lr"), (dict(output_lr=float("inf")), ValueError, "output_lr"),
    (dict(router="top1"), ValueError, "router"), (dict(objective="hinge"), ValueError, "objective"),
    (dict(temperature=0.0), ValueError, "temperature"), (dict(balance=-0.1), ValueError, "balance"),
    (dict(batch_size=0), ValueError, "batch_size"), (dict(n_neurons=0), ValueError, "n_neurons"),
    (dict(n_clusters=16), ValueError, "n_clusters"), (dict(dim=1), ValueError, "dim"),
    (dict(separation=float("inf")), ValueError, "separation"), (dict(lr="fast"), TypeError, "lr"),
])
def test_training_validation(kwargs, exc, match):
    args = dict(dim=8, n_samples=16) | kwargs
    with pytest.raises(exc, match=match):
        train_cluster_moe(args.pop("dim"), args.pop("n_samples"), **args)


def test_single_network_validation_and_loss_inputs():
    with pytest.raises(ValueError, match="lr"):
        train_single_network(8, 16, lr=float("inf"))
    with pytest.raises(ValueError, match="n_clusters"):
        train_single_network(8, 16, n_clusters=6)
    p = _params(np.random.default_rng(1), 1, 2, 1, 3)
    with pytest.raises(ValueError, match="objective"):
        cluster_moe_loss(p, np.zeros((1, 2, 3)), np.zeros((1, 2)), objective="l1")
    with pytest.raises(ValueError, match="temperature"):
        cluster_moe_loss(p, np.zeros((1, 2, 3)), np.zeros((1, 2)), temperature=float("nan"))
