"""Scores of a pool of heterogeneous classifiers on the data sets shipped with scikit-learn.

The real-data check of SSME (the test of :func:`~expertlab.mixtures.fit_ssme` and
``simulations/mixtures/ssme.py --real-data``) needs classifiers that disagree in kind and in
quality.  :func:`classifier_pool` trains four of them on one stratified part of a data set and
returns their class probabilities on the rest, the pool whose labels SSME is then given a few of.
scikit-learn is an optional dependency (the ``test`` extra); it is imported on call.
"""

from __future__ import annotations

import numpy as np

from .._random import seed_to_uint64
from .._validation import check_float, check_in

__all__ = ["POOL_DATASETS", "classifier_pool"]

#: Data sets of :func:`classifier_pool` (scikit-learn's ``load_<name>``).
POOL_DATASETS = ("breast_cancer", "wine", "iris", "digits")


def classifier_pool(dataset, *, train_fraction=1 / 3, seed=0, floor=1e-4):
    """Class probabilities of four heterogeneous classifiers on the evaluation part of a scikit-learn data set.

    Parameters
    ----------
    dataset : {"breast_cancer", "wine", "iris", "digits"}
    train_fraction : float
        Part of the data, stratified by class, the classifiers are trained on; the rest is the pool.
    seed : int, numpy.random.SeedSequence or None, default 0
        Seed of the split and of the tree-based classifiers (reduced modulo :math:`2^{32}` to
        scikit-learn's ``random_state``).
    floor : float
        Every probability is raised to at least ``floor`` and the rows renormalised, so that the
        additive log-ratios of trees and naive Bayes stay finite.

    Returns
    -------
    probs : ndarray, shape (n_pool, 4, n_classes)
        Scores of, in order: an L2-regularised logistic regression (``C = 0.05``) on standardised
        features, Gaussian naive Bayes, a depth-3 decision tree and a random forest of 30 depth-4 trees.
    y : ndarray of int, shape (n_pool,)
        The pool's true classes.

    Examples
    --------
    >>> probs, y = classifier_pool("iris")
    >>> probs.shape, y.shape
    ((100, 4, 3), (100,))
    """
    from sklearn import datasets
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    dataset = check_in(dataset, "dataset", POOL_DATASETS)
    train_fraction = check_float(train_fraction, "train_fraction", positive=True)
    if train_fraction >= 1:
        raise ValueError(f"train_fraction must lie in (0, 1), got {train_fraction}")
    seed = int(seed_to_uint64(seed) % np.uint64(2**32))
    floor = check_float(floor, "floor", positive=True)
    X, y = getattr(datasets, f"load_{dataset}")(return_X_y=True)
    n_classes = len(np.unique(y))
    if floor * n_classes >= 1:
        raise ValueError(f"floor must be below 1 / n_classes = {1 / n_classes:.3g}, got {floor}")
    n_train = int(np.floor(train_fraction * len(y)))      # how train_test_split rounds a fractional train_size
    if min(n_train, len(y) - n_train) < n_classes:
        raise ValueError(f"train_fraction={train_fraction} leaves {n_train} of the {len(y)} points of {dataset!r} "
                         f"for training and {len(y) - n_train} for the pool; each part needs at least one point "
                         f"of each of the {n_classes} classes")
    X_tr, X_ev, y_tr, y_ev = train_test_split(X, y, train_size=train_fraction, random_state=seed, stratify=y)
    models = [make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=2000)), GaussianNB(),
              DecisionTreeClassifier(max_depth=3, random_state=seed),
              RandomForestClassifier(n_estimators=30, max_depth=4, random_state=seed)]
    probs = np.clip(np.stack([m.fit(X_tr, y_tr).predict_proba(X_ev) for m in models], axis=1), floor, None)
    return probs / probs.sum(-1, keepdims=True), y_ev.astype(np.int64)
