r"""Plug-in baselines of semi-supervised model evaluation, batched over replications.

Inputs follow :func:`~expertlab.mixtures.fit_ssme`: ``probs`` of shape
``(n_reps, n_samples, n_classifiers, n_classes)`` and ``labels`` of shape
``(n_reps, n_samples)`` with ``-1`` for unlabelled points.  Each baseline here
fills in or drops the unknown labels and evaluates every metric on the result:
:func:`labeled_only` keeps the labelled points alone; :func:`pseudo_labels`
labels the rest by a ridge-penalised multinomial logistic regression of the
label on the ALR scores of all classifiers (:func:`fit_logistic`, fitted on
the labelled points by Newton's method); :func:`majority_vote` labels them by
a plain or accuracy-weighted vote of the classifiers.  The baselines with a
model of their own, semi-supervised Dawid–Skene and prediction-powered
inference, are :func:`~expertlab.mixtures.dawid_skene` and
:func:`~expertlab.mixtures.ppi_accuracy`.
"""

from __future__ import annotations

import numpy as np

from .._backend import logsumexp
from .._validation import check_array_size, check_float, check_int
from ._ssme_estimate import MetricEstimate
from ._ssme_metrics import METRICS, metric
from ._ssme_model import alr, check_scores

__all__ = ["labeled_only", "pseudo_labels", "majority_vote"]



def _evaluate(method, probs, labels, metrics, n_bins, sample_weight=None):
    per_clf = np.swapaxes(probs, 1, 2)                                            # (R, M, n, K)
    est = {}
    for m in metrics:
        est[m] = metric(m, labels[:, None, :], per_clf, sample_weight=sample_weight, n_bins=n_bins)
    return MetricEstimate(method, est, {m: np.zeros_like(v) for m, v in est.items()}, 1)


def _names(metrics):
    names = tuple(metrics)
    if not names or any(m not in METRICS for m in names):
        raise ValueError(f"metrics must be a non-empty tuple of names from {METRICS}, got {metrics!r}")
    return names


def labeled_only(probs, labels, *, metrics=METRICS, n_bins=10):
    """Every metric computed on the labelled points only.

    Parameters
    ----------
    probs : array, shape (n_reps, n_samples, n_classifiers, n_classes)
    labels : array of int, shape (n_reps, n_samples)
        ``-1`` for unlabelled points (ignored).
    metrics : tuple of str
    n_bins : int

    Returns
    -------
    MetricEstimate
        Estimates of shape ``(n_reps, n_classifiers)``.

    Examples
    --------
    >>> import numpy as np
    >>> probs = np.array([[[[0.9, 0.1]], [[0.3, 0.7]], [[0.6, 0.4]]]])
    >>> labeled_only(probs, np.array([[0, 0, -1]]), metrics=("accuracy",)).estimates["accuracy"].tolist()
    [[0.5]]
    """
    probs, labels = check_scores(probs, labels)
    w = (labels >= 0).astype(np.float64)[:, None, :]
    return _evaluate("labeled_only", probs, np.maximum(labels, 0), _names(metrics), n_bins, w)


def _features(probs):
    R, n, M, K = probs.shape
    return np.concatenate([np.ones((R, n, 1)), alr(probs).reshape(R, n, M * (K - 1))], axis=-1)


def fit_logistic(X, y, weight, n_classes, *, l2=1.0, n_steps=25):
    r"""Batched ridge multinomial logistic regression by Newton's method (last class as reference).

    Parameters
    ----------
    X : ndarray, shape (n_reps, n_samples, n_features)
        Column 0 is the intercept, penalised by ``1e-2`` only (which keeps the intercept of a class absent
        from the labelled points finite).
    y : ndarray of int, shape (n_reps, n_samples)
    weight : ndarray, shape (n_reps, n_samples)
    n_classes : int
    l2 : float
    n_steps : int

    Returns
    -------
    ndarray, shape (n_reps, n_features, n_classes - 1)

    Notes
    -----
    Maximises :math:`\sum_i w_i \log \operatorname{softmax}(B^\top x_i)_{y_i}
    - \frac{\lambda}{2}\|B_{1:}\|^2 - \frac{10^{-2}}{2}\|B_0\|^2` with full Newton steps
    :math:`B \leftarrow B + H^{-1} g` (strictly concave objective).
    """
    R, n, P = X.shape
    K1 = n_classes - 1
    Y = (y[..., None] == np.arange(K1)).astype(np.float64)
    pen = np.full(P, float(l2))
    pen[0] = 1e-2
    B = np.zeros((R, P, K1))
    eye = np.eye(K1)
    for _ in range(n_steps):
        eta = X @ B
        full = np.concatenate([eta, np.zeros((R, n, 1))], -1)
        p = np.exp(full - logsumexp(full, axis=-1)[..., None])[..., :K1]
        g = np.swapaxes(X, 1, 2) @ (weight[..., None] * (Y - p)) - pen[:, None] * B       # (R, P, K1)
        Wab = weight[..., None, None] * (p[..., :, None] * eye - p[..., :, None] * p[..., None, :])
        H = np.einsum("rnab,rnd,rne->rdaeb", Wab, X, X).reshape(R, P * K1, P * K1)
        H = H + np.diag(np.repeat(pen, K1))
        B = B + np.linalg.solve(H, g.reshape(R, P * K1, 1)).reshape(R, P, K1)
    return B


def pseudo_labels(probs, labels, *, metrics=METRICS, l2=1.0, n_steps=25, n_bins=10):
    """Metrics with unlabelled points labelled by a logistic regression on the scores.

    Parameters
    ----------
    probs, labels, metrics
        As in :func:`labeled_only`.
    l2 : float
        Ridge penalty of the coefficients (not the intercept).
    n_steps : int
        Newton steps.
    n_bins
        As in :func:`labeled_only`.

    Returns
    -------
    MetricEstimate

    Raises
    ------
    ValueError
        Besides the checks of :func:`labeled_only`: if a replication has no labelled point (the
        regression would have nothing to learn from), or the Newton system cannot be allocated.

    Notes
    -----
    Features are the intercept and the concatenated ALR scores; the model is
    fitted on the labelled points, predicts the most probable class of every
    unlabelled point, and the metrics use true labels where known and these
    pseudo-labels elsewhere.

    Examples
    --------
    >>> import numpy as np
    >>> s = np.array([0.1, 0.2, 0.8, 0.9, 0.15, 0.85])
    >>> probs = np.stack([1 - s, s], -1)[None, :, None, :]
    >>> est = pseudo_labels(probs, np.array([[0, 0, 1, 1, -1, -1]]), metrics=("accuracy",))
    >>> est.estimates["accuracy"].tolist()
    [[1.0]]
    """
    probs, labels = check_scores(probs, labels)
    names = _names(metrics)
    l2 = check_float(l2, "l2", minimum=0.0)
    n_steps = check_int(n_steps, "n_steps")
    if not np.all(np.any(labels >= 0, axis=1)):
        raise ValueError("labels must hold at least one labelled point in every replication for pseudo_labels")
    R, n, M, K = probs.shape
    n_coef = (1 + M * (K - 1)) * (K - 1)
    check_array_size((R, n_coef, n_coef), ("probs (n_classifiers, n_classes)",))
    X = _features(probs)
    B = fit_logistic(X, np.maximum(labels, 0), (labels >= 0).astype(np.float64), K, l2=l2, n_steps=n_steps)
    eta = np.concatenate([X @ B, np.zeros(X.shape[:2] + (1,))], -1)
    filled = np.where(labels >= 0, labels, np.argmax(eta, axis=-1))
    return _evaluate("pseudo_labels", probs, filled, names, n_bins)



def majority_vote(probs, labels, *, weighted=False, metrics=METRICS, n_bins=10):
    """Metrics with unlabelled points labelled by a (labelled-accuracy-weighted) vote of the classifiers.

    Parameters
    ----------
    probs, labels
        As in :func:`labeled_only`.
    weighted : bool
        Weight each classifier's vote by its accuracy on the labelled points
        (all weights 1 in a replication without labelled points).
    metrics, n_bins
        As in :func:`labeled_only`.

    Returns
    -------
    MetricEstimate

    Notes
    -----
    Ties go to the smallest class index.

    Examples
    --------
    >>> import numpy as np
    >>> probs = np.eye(2)[np.array([[0, 0, 1], [1, 1, 0]])][None]     # 2 points, 3 classifiers
    >>> est = majority_vote(probs, np.array([[-1, -1]]), metrics=("accuracy",))
    >>> np.round(est.estimates["accuracy"], 3).tolist()
    [[1.0, 1.0, 0.0]]
    """
    probs, labels = check_scores(probs, labels)
    names = _names(metrics)
    if not isinstance(weighted, (bool, np.bool_)):
        raise TypeError(f"weighted must be a bool, got {type(weighted).__name__}")
    K = probs.shape[-1]
    pred = np.argmax(probs, axis=-1)                                                   # (R, n, M)
    known = (labels >= 0)[..., None]
    if weighted:
        n_lab = known.sum(axis=1)
        acc = np.sum((pred == labels[..., None]) & known, axis=1) / np.maximum(n_lab, 1)
        v = np.where(n_lab > 0, acc, 1.0)
    else:
        v = np.ones(pred.shape[::2])
    votes = np.einsum("rm,rnmk->rnk", v, (pred[..., None] == np.arange(K)).astype(np.float64))
    filled = np.where(labels >= 0, labels, np.argmax(votes, axis=-1))
    return _evaluate("weighted_vote" if weighted else "majority_vote", probs, filled, names, n_bins)
