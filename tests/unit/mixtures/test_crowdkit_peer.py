"""Peer check: semi-supervised Dawid–Skene (and so the categorical SSME model) against crowd-kit's ``DawidSkene``.

crowd-kit (a test extra) runs the same EM from the same start (vote fractions, the labelled items
clamped to their class) with the confusion counts clipped at 1e-10 instead of smoothed; with a
pseudo-count of 1e-12 here both iterate to the same fixed point.  crowd-kit stops as soon as its
evidence lower bound fails to increase, and with the labelled items clamped that bound is not
monotone (on one dataset below it stops after 4 iterations, 0.05 away from the fixed point), so it
runs a fixed 200 iterations here (``tol=-inf``); the posteriors then agree to 1e-6.
"""

import numpy as np
import pytest

from expertlab.mixtures import dawid_skene, fit_ssme

pd = pytest.importorskip("pandas")
crowdkit = pytest.importorskip("crowdkit.aggregation", reason="crowd-kit is not installed (pip install -e '.[test]')")


def _crowd(seed, n=150, n_classifiers=4, n_classes=3, labelled=0.2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    acc = np.linspace(0.8, 0.5, n_classifiers)
    pred = np.where(rng.uniform(size=(n, n_classifiers)) < acc, y[:, None], rng.integers(0, n_classes, (n, n_classifiers)))
    labels = np.where(rng.uniform(size=n) < labelled, y, -1)
    return pred, labels


def _crowdkit_posterior(pred, labels, n_classes):
    n, m = pred.shape
    data = pd.DataFrame({"task": np.repeat(np.arange(n), m), "worker": np.tile(np.arange(m), n),
                         "label": pred.ravel()})
    known = labels >= 0
    golden = pd.Series(labels[known], index=np.arange(n)[known])
    ds = crowdkit.DawidSkene(n_iter=200, tol=-np.inf).fit(data, true_labels=golden)
    return ds.probas_.sort_index()[list(range(n_classes))].to_numpy(), ds


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("seed, labelled", [(1, 0.05), (2, 0.5)])
def test_dawid_skene_matches_crowdkit(seed, labelled):
    pred, labels = _crowd(seed, labelled=labelled)
    ours = dawid_skene(pred[None], labels[None], n_classes=3, max_iter=2000, tol=0.0, smoothing=1e-12)
    theirs, ds = _crowdkit_posterior(pred, labels, 3)
    np.testing.assert_allclose(ours.posterior[0], theirs, atol=1e-6)
    assert np.all(theirs[labels >= 0].argmax(axis=1) == labels[labels >= 0])
    assert len(ds.loss_history_) == 200 and bool(ours.converged[0])


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")
def test_categorical_ssme_matches_crowdkit():
    """The categorical class-conditional SSME on one-hot scores is semi-supervised Dawid–Skene."""
    pred, labels = _crowd(3)
    scores = np.eye(3)[pred]  # (n, n_classifiers, n_classes), one-hot predicted classes
    res = fit_ssme(scores[None], labels[None], density="categorical", max_iter=2000, tol=0.0, smoothing=1e-12)
    theirs, _ = _crowdkit_posterior(pred, labels, 3)
    np.testing.assert_allclose(res.posterior[0], theirs, atol=1e-6)
