"""SSME: ALR, metrics against hand cases and scikit-learn, reductions (n_u = 0, Dawid–Skene), batching, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from expertlab.mixtures import (SSME, accuracy, alr, alr_inverse, average_precision, dawid_skene, draw_labels,
                                estimate_metrics, expected_calibration_error, fit_ssme, labeled_only, roc_auc,
                                top_label_calibration_error)

METRIC_NAMES = ("accuracy", "auc", "auprc", "ece", "top_label_ce")


def binary_scores(n_reps, n, n_clf, seed, sep=1.5):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, (n_reps, n))
    logit = sep * (2 * y[..., None] - 1) + rng.standard_normal((n_reps, n, n_clf)) * rng.uniform(0.7, 1.5, n_clf)
    p1 = 1 / (1 + np.exp(-logit))
    return np.stack([1 - p1, p1], -1), y


# --- ALR ---------------------------------------------------------------------------------------------------

def test_alr_by_hand_and_inverse():
    p = np.array([0.2, 0.3, 0.5])
    np.testing.assert_allclose(alr(p), [np.log(0.4), np.log(0.6)], rtol=1e-14)
    np.testing.assert_allclose(alr_inverse(alr(p)), p, rtol=1e-14)
    assert alr(np.array([0.25, 0.75]))[0] == pytest.approx(-np.log(3.0), rel=1e-14)   # minus the logit of class 1


def test_alr_validation():
    with pytest.raises(ValueError, match="n_classes >= 2"):
        alr(np.array([1.0]))
    with pytest.raises(ValueError, match="non-negative"):
        alr(np.array([-0.1, 1.1]))


# --- metrics -----------------------------------------------------------------------------------------------

def test_metrics_by_hand():
    s = np.array([0.1, 0.4, 0.35, 0.8])
    p, y = np.stack([1 - s, s], -1), np.array([0, 0, 1, 1])
    # pairs (pos, neg): (0.35 > 0.1), (0.35 < 0.4), (0.8 > both) -> 3 of 4
    assert float(roc_auc(y, p)) == 0.75
    # ranking 0.8(+), 0.4(-), 0.35(+), 0.1(-): precision at the positives 1 and 2/3
    assert float(average_precision(y, p)) == pytest.approx((1 + 2 / 3) / 2, rel=1e-14)
    assert float(accuracy(y, p)) == 0.75                  # predicts 0, 0, 0, 1
    # confidences 0.9, 0.6, 0.65, 0.8 in four different bins: |1-0.9| + |1-0.6| + |0-0.65| + |1-0.8|
    assert float(expected_calibration_error(y, p)) == pytest.approx((0.1 + 0.4 + 0.65 + 0.2) / 4, rel=1e-12)


def test_top_label_error_separates_classes_that_ece_pools():
    p = np.array([[0.7, 0.3], [0.3, 0.7]])
    y = np.array([0, 0])                                  # class-0 prediction right, class-1 prediction wrong
    assert float(expected_calibration_error(y, p)) == pytest.approx(0.2, rel=1e-12)   # one bin: |0.5 - 0.7|
    assert float(top_label_calibration_error(y, p)) == pytest.approx((0.3 + 0.7) / 2, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auc_and_ap_match_sklearn_with_ties_and_weights(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 60)
    s = np.round(rng.uniform(size=60), 1)                 # many ties
    w = rng.uniform(0.1, 2.0, 60)
    p = np.stack([1 - s, s], -1)
    assert float(roc_auc(y, p)) == pytest.approx(roc_auc_score(y, s), rel=1e-12)
    assert float(average_precision(y, p)) == pytest.approx(average_precision_score(y, s), rel=1e-12)
    assert float(roc_auc(y, p, sample_weight=w)) == pytest.approx(roc_auc_score(y, s, sample_weight=w), rel=1e-12)
    assert float(average_precision(y, p, sample_weight=w)) == pytest.approx(
        average_precision_score(y, s, sample_weight=w), rel=1e-12)


def test_multiclass_auc_and_ap_are_macro_one_vs_rest():
    rng = np.random.default_rng(5)
    y = np.tile(np.arange(3), 20)
    p = rng.dirichlet(np.ones(3), 60)
    assert float(roc_auc(y, p)) == pytest.approx(roc_auc_score(y, p, multi_class="ovr", average="macro"), rel=1e-12)
    assert float(average_precision(y, p)) == pytest.approx(
        average_precision_score(np.eye(3)[y], p, average="macro"), rel=1e-12)


def test_metrics_broadcast_over_leading_axes():
    probs, y = binary_scores(2, 40, 3, 0)
    per_clf = np.swapaxes(probs, 1, 2)                    # (2, 3, 40, 2)
    batch = roc_auc(y[:, None, :], per_clf)
    assert batch.shape == (2, 3)
    assert batch[1, 2] == roc_auc(y[1], per_clf[1, 2])


def test_metric_validation():
    p = np.array([[0.5, 0.5], [0.2, 0.8]])
    with pytest.raises(ValueError, match="simplex"):
        accuracy(np.array([0, 1]), np.array([[0.5, 0.6], [0.2, 0.8]]))
    with pytest.raises(ValueError, match="NaN"):
        accuracy(np.array([0, 1]), np.array([[np.nan, 0.5], [0.2, 0.8]]))
    with pytest.raises(ValueError, match="labels must lie"):
        accuracy(np.array([0, 2]), p)
    with pytest.raises(TypeError, match="integers"):
        accuracy(np.array([0.0, 1.0]), p)
    with pytest.raises(ValueError, match="shape"):
        accuracy(np.array([0, 1, 1]), p)
    with pytest.raises(ValueError, match="labels must contain both classes"):   # no negatives: undefined
        roc_auc(np.array([1, 1]), p)


# --- reductions --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("density", ["kde", "gaussian"])
def test_no_unlabelled_points_gives_the_labelled_only_estimate_exactly(density):
    probs, y = binary_scores(2, 60, 3, 1)
    est = estimate_metrics(probs, y, fit_ssme(probs, y, density=density).posterior, metrics=METRIC_NAMES,
                           n_draws=7)
    ref = labeled_only(probs, y, metrics=METRIC_NAMES)
    for m in METRIC_NAMES:
        np.testing.assert_array_equal(est.estimates[m], ref.estimates[m])
        np.testing.assert_array_equal(est.spreads[m], 0.0)


@pytest.mark.parametrize("tol, max_iter", [(0.0, 40), (1e-9, 500)])
def test_categorical_ssme_is_semi_supervised_dawid_skene(tol, max_iter):
    rng = np.random.default_rng(7)
    R, n, M, K = 3, 200, 4, 3
    y = rng.integers(0, K, (R, n))
    pred = np.where(rng.uniform(size=(R, n, M)) < rng.uniform(0.5, 0.9, M), y[..., None], rng.integers(0, K, (R, n, M)))
    labels = np.where(rng.uniform(size=(R, n)) < 0.1, y, -1)
    a = fit_ssme(np.eye(K)[pred], labels, density="categorical", tol=tol, max_iter=max_iter)
    b = dawid_skene(pred, labels, n_classes=K, tol=tol, max_iter=max_iter)
    np.testing.assert_array_equal(a.n_iter, b.n_iter)
    np.testing.assert_allclose(a.posterior, b.posterior, rtol=0, atol=1e-10)
    np.testing.assert_allclose(a.params.confusions, b.confusions, rtol=0, atol=1e-10)
    np.testing.assert_allclose(a.loglik_path, b.loglik_path, rtol=0, atol=1e-10)


# --- fitting, draws, batching ------------------------------------------------------------------------------

@pytest.mark.parametrize("density", ["kde", "gaussian", "categorical"])
def test_fit_recovers_the_classes_and_is_batch_independent(density):
    probs, y = binary_scores(3, 150, 3, 2)
    labels = np.where(np.arange(150) < 15, y, -1)
    res = fit_ssme(probs, labels, density=density)
    assert res.posterior.shape == (3, 150, 2) and res.params.class_prior.shape == (3, 2)
    np.testing.assert_array_equal(res.posterior[:, :15], np.eye(2)[y[:, :15]])       # labelled rows clamped
    assert np.mean(np.argmax(res.posterior, -1) == y) > 0.9
    alone = fit_ssme(probs[1:2], labels[1:2], density=density)
    np.testing.assert_allclose(alone.posterior[0], res.posterior[1], rtol=0, atol=1e-12)
    assert alone.n_iter[0] == res.n_iter[1]


def test_gaussian_objective_is_monotone():
    probs, y = binary_scores(2, 200, 3, 4, sep=0.8)
    res = fit_ssme(probs, np.where(np.arange(200) < 10, y, -1), density="gaussian", reg_covar=0.0, tol=0.0,
                   max_iter=30)
    assert np.all(np.diff(res.loglik_path, axis=1) >= -1e-10)


def test_draws_follow_the_posterior_and_are_keyed_by_replication():
    post = np.tile(np.array([0.3, 0.7]), (2, 4, 1))
    labels = np.array([[1, -1, -1, -1], [-1, -1, 0, -1]])
    d = draw_labels(post, labels, n_draws=4000, seed=3)
    assert np.all(d[0, :, 0] == 1) and np.all(d[1, :, 2] == 0)
    freq = d[0, :, 1:].mean()                              # 12000 Bernoulli(0.7) draws: sd 0.0042
    assert abs(freq - 0.7) < 0.02
    one = draw_labels(post[1:], labels[1:], n_draws=4000, seed=3, rep_ids=[1])
    np.testing.assert_array_equal(one[0], d[1])
    assert not np.array_equal(draw_labels(post, labels, n_draws=50, seed=4), d[:, :50])


def test_estimator_accuracy_and_reproducibility():
    probs, y = binary_scores(1, 400, 3, 8)
    labels = np.where(np.arange(400) < 30, y[0], -1)
    a = SSME(seed=0, n_draws=40).fit(probs[0], labels)
    b = SSME(seed=0, n_draws=40).fit(probs[0], labels)
    for m in METRIC_NAMES:
        np.testing.assert_array_equal(a.estimates_[m], b.estimates_[m])
    true = accuracy(y[0][None, :], np.swapaxes(probs[0], 0, 1))
    assert np.all(np.abs(a.estimate("accuracy") - true) < 0.04)
    lab = labeled_only(probs, labels[None], metrics=("accuracy",)).estimates["accuracy"][0]
    assert np.mean(np.abs(a.estimate("accuracy") - true)) < np.mean(np.abs(lab - true))
    assert a.converged_ and a.posterior_.shape == (400, 2)
    with pytest.raises(ValueError, match="not fitted"):
        SSME().estimate()


def test_fit_validation():
    probs, y = binary_scores(1, 20, 2, 0)
    with pytest.raises(ValueError, match="shape"):
        fit_ssme(probs[0], y[0])
    with pytest.raises(ValueError, match="simplex"):
        fit_ssme(probs * 1.1, y)
    bad = probs.copy()
    bad[0, 0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fit_ssme(bad, y)
    with pytest.raises(ValueError, match="labels must lie"):
        fit_ssme(probs, y + 2)
    with pytest.raises(ValueError, match="labels must have shape"):
        fit_ssme(probs, y[:, :5])
    with pytest.raises(ValueError, match="density"):
        fit_ssme(probs, y, density="beta")
    with pytest.raises(ValueError, match="bandwidth"):
        fit_ssme(probs, y, bandwidth=-1.0)
    with pytest.raises(TypeError, match="independent"):
        fit_ssme(probs, y, independent="yes")
    with pytest.raises(TypeError, match="shared_bandwidth"):
        fit_ssme(probs, y, shared_bandwidth=1)
    with pytest.raises(ValueError, match="metrics"):
        estimate_metrics(probs, y, np.full((1, 20, 2), 0.5), metrics=("f1",))
    with pytest.raises(ValueError, match="posterior"):
        estimate_metrics(probs, y, np.full((1, 20, 2), 0.7))


def test_kde_handles_a_classifier_with_constant_scores_in_a_class():
    probs, y = binary_scores(1, 120, 3, 6)
    probs[0, y[0] == 1, 2] = [0.2, 0.8]                   # classifier 2 outputs one value on class 1
    res = fit_ssme(probs, np.where(np.arange(120) < 12, y, -1), density="kde")
    assert np.all(np.isfinite(res.posterior)) and np.all(res.params.bandwidths > 0)
    assert np.mean(np.argmax(res.posterior, -1) == y) > 0.9


def test_kde_widths_by_hand_per_class_and_shared():
    """First M-step from the vote: Scott's weighted rule per class, and its prior-weighted geometric mean."""
    probs, y = binary_scores(2, 90, 3, 9)
    labels = np.where(np.arange(90) < 9, y, -1)
    resp = np.where((labels >= 0)[..., None], np.eye(2)[np.maximum(labels, 0)], probs.mean(axis=2))
    z = alr(probs)[..., 0]                                               # (R, n, M): one logit per classifier
    w = resp[:, :, :, None]                                              # (R, n, K, 1)
    mean = np.sum(w * z[:, :, None], 1) / np.sum(w, 1)                   # (R, K, M)
    sd = np.sqrt(np.sum(w * (z[:, :, None] - mean[:, None]) ** 2, 1) / np.sum(w, 1))
    n_eff = np.sum(w, 1) ** 2 / np.sum(w * w, 1)
    own = sd * (4 / (3 * n_eff)) ** 0.2
    prior = resp.mean(axis=1)
    shared = np.exp(np.sum(prior[:, :, None] * np.log(own), axis=1))    # (R, M)
    a = fit_ssme(probs, labels, bandwidth="scott", shared_bandwidth=False, max_iter=1)
    b = fit_ssme(probs, labels, bandwidth="scott", max_iter=1)
    np.testing.assert_allclose(a.params.bandwidths, own, rtol=1e-12)
    np.testing.assert_allclose(b.params.bandwidths, np.broadcast_to(shared[:, None], own.shape), rtol=1e-12)
    assert SSME().shared_bandwidth and not SSME(shared_bandwidth=False).shared_bandwidth
