"""SSME baselines: labelled-only, pseudo-labels (Newton logistic fit), Dawid–Skene, votes, PPI."""

from __future__ import annotations

import numpy as np
import pytest

from expertlab.mixtures import dawid_skene, labeled_only, majority_vote, ppi_accuracy, pseudo_labels
from expertlab.mixtures._ssme_baselines import fit_logistic


def onehot_probs(pred, K=2):
    return np.eye(K)[np.asarray(pred)][None]                               # (1, n, M, K)


def test_labeled_only_by_hand_and_per_replication_subsets():
    probs = np.array([[[[0.9, 0.1]], [[0.3, 0.7]], [[0.6, 0.4]], [[0.2, 0.8]]]] * 2)
    labels = np.array([[0, 0, -1, -1], [-1, 1, 0, 1]])
    est = labeled_only(probs, labels, metrics=("accuracy",)).estimates["accuracy"]
    np.testing.assert_allclose(est[:, 0], [0.5, 1.0], rtol=1e-14)         # rep 0: right, wrong; rep 1: all right


def test_logistic_newton_solves_the_penalised_score_equations():
    rng = np.random.default_rng(0)
    R, n, P, K = 2, 80, 3, 3
    X = np.concatenate([np.ones((R, n, 1)), rng.normal(size=(R, n, P - 1))], -1)
    y = rng.integers(0, K, (R, n))
    w = (rng.uniform(size=(R, n)) < 0.7).astype(float)
    B = fit_logistic(X, y, w, K, l2=0.5, n_steps=30)
    eta = np.concatenate([X @ B, np.zeros((R, n, 1))], -1)
    p = np.exp(eta - eta.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    pen = np.array([1e-2, 0.5, 0.5])[:, None]
    grad = np.swapaxes(X, 1, 2) @ (w[..., None] * (np.eye(K)[y] - p))[..., :K - 1] - pen * B
    np.testing.assert_allclose(grad, 0.0, atol=1e-9)


def test_pseudo_labels_fill_the_unlabelled_points():
    s = np.array([0.1, 0.2, 0.8, 0.9, 0.15, 0.85, 0.3])
    probs = np.stack([1 - s, s], -1)[None, :, None, :]
    labels = np.array([[0, 0, 1, 1, -1, -1, 1]])                          # the last point is labelled 1
    acc = pseudo_labels(probs, labels, metrics=("accuracy",)).estimates["accuracy"][0, 0]
    assert acc == pytest.approx(6 / 7, rel=1e-14)                          # only the labelled 0.3 is wrong


def test_dawid_skene_by_hand_and_clamping():
    pred = np.array([[[0, 0, 1], [1, 1, 1], [0, 0, 0], [1, 1, 0], [0, 1, 1]]])
    labels = np.array([[-1, 1, 0, -1, 0]])
    res = dawid_skene(pred, labels, n_classes=2, tol=0.0, max_iter=30)
    np.testing.assert_array_equal(res.posterior[0, [1, 2, 4]], np.eye(2)[[1, 0, 0]])
    assert np.argmax(res.posterior[0, 0]) == 0 and np.argmax(res.posterior[0, 3]) == 1
    np.testing.assert_allclose(res.confusions.sum(-1), 1.0, rtol=1e-14)
    assert np.all(np.diff(res.loglik_path, axis=1) >= -1e-12)           # EM on a categorical model


def test_dawid_skene_first_m_step_by_hand():
    pred = np.array([[[0, 1], [0, 0]]])                                    # two items, two workers
    res = dawid_skene(pred, np.array([[-1, -1]]), n_classes=2, max_iter=1, smoothing=1.0)
    # vote fractions: item 0 (0.5, 0.5), item 1 (1, 0); prior = (0.75, 0.25)
    np.testing.assert_allclose(res.class_prior[0], [0.75, 0.25], rtol=1e-14)
    # worker 1, class 0: counts (item1: 1 for label 0, item0: 0.5 for label 1) + 1 -> (2, 1.5) / 3.5
    np.testing.assert_allclose(res.confusions[0, 1, 0], [2 / 3.5, 1.5 / 3.5], rtol=1e-14)


def test_majority_and_weighted_votes_by_hand():
    # three classifiers; classifier 2 is right on both labelled points, classifiers 0, 1 wrong on both
    pred = np.array([[1, 1, 0], [0, 0, 1], [1, 1, 0]])
    labels = np.array([[0, 1, -1]])
    probs = onehot_probs(pred)
    plain = majority_vote(probs, labels, metrics=("accuracy",)).estimates["accuracy"][0]
    np.testing.assert_allclose(plain, [1 / 3, 1 / 3, 2 / 3], rtol=1e-14)  # vote says 1 for the third point
    weighted = majority_vote(probs, labels, weighted=True, metrics=("accuracy",)).estimates["accuracy"][0]
    np.testing.assert_allclose(weighted, [0.0, 0.0, 1.0], rtol=1e-14)     # weights (0, 0, 1): label 0


def test_ppi_by_hand():
    probs = np.array([[[[0.9, 0.1]], [[0.2, 0.8]], [[0.7, 0.3]], [[0.4, 0.6]]]])
    res = ppi_accuracy(probs, np.array([[0, 0, -1, -1]]), alpha=0.1)
    f_u, d_l = np.array([0.7, 0.6]), np.array([1 - 0.9, 0 - 0.8])
    assert res.estimate[0, 0] == pytest.approx(f_u.mean() + d_l.mean(), rel=1e-14)
    half = 1.6448536269514722 * np.sqrt(d_l.var(ddof=1) / 2 + f_u.var(ddof=1) / 2)
    assert res.ci_high[0, 0] - res.estimate[0, 0] == pytest.approx(half, rel=1e-12)


def test_ppi_interval_covers_the_population_accuracy():
    rng = np.random.default_rng(11)
    R, n, n_l = 400, 300, 40
    y = rng.integers(0, 2, (R, n))
    p1 = 1 / (1 + np.exp(-(1.2 * (2 * y[..., None] - 1) + rng.standard_normal((R, n, 2)))))
    probs = np.stack([1 - p1, p1], -1)
    labels = np.where(np.arange(n) < n_l, y, -1)
    res = ppi_accuracy(probs, labels, alpha=0.1)
    from scipy.special import ndtr
    truth = ndtr(1.2)                                                      # P(logit has the class's sign)
    cover = np.mean((res.ci_low <= truth) & (truth <= res.ci_high))
    assert cover > 0.85                                                    # nominal 0.9; 800 intervals, sd 0.011


def test_baseline_validation():
    probs = onehot_probs([[0, 1], [1, 1], [0, 0]])
    with pytest.raises(ValueError, match="at least 2 labelled"):
        ppi_accuracy(probs, np.array([[0, -1, -1]]))
    with pytest.raises(ValueError, match="alpha"):
        ppi_accuracy(probs, np.array([[0, 1, -1]]), alpha=1.5)
    with pytest.raises(ValueError, match="metrics"):
        labeled_only(probs, np.array([[0, 1, -1]]), metrics=("f1",))
    with pytest.raises(ValueError, match="predictions must lie"):
        dawid_skene(np.array([[[0, 2]]]), np.array([[-1]]), n_classes=2)
    with pytest.raises(TypeError, match="integers"):
        dawid_skene(np.array([[[0.0, 1.0]]]), np.array([[-1]]), n_classes=2)
    with pytest.raises(ValueError, match="labels"):
        dawid_skene(np.array([[[0, 1]]]), np.array([[3]]), n_classes=2)
