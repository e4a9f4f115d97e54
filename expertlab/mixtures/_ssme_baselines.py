r"""Baselines of semi-supervised model evaluation, batched over replications.

Inputs follow :func:`~expertlab.mixtures.fit_ssme`: ``probs`` of shape
``(n_reps, n_samples, n_classifiers, n_classes)`` and ``labels`` of shape
``(n_reps, n_samples)`` with ``-1`` for unlabelled points.

- :func:`labeled_only`: every metric on the labelled points alone.
- :func:`pseudo_labels`: a ridge-penalised multinomial logistic regression of
  the label on the ALR scores of all classifiers, fitted on the labelled
  points by Newton's method; its most probable class labels the rest.
- :func:`dawid_skene`: semi-supervised Dawid–Skene EM on the classifiers'
  predicted classes (confusion matrices, labelled items clamped).
- :func:`majority_vote`: plain or accuracy-weighted vote of the classifiers.
- :func:`ppi_accuracy`: prediction-powered inference for each classifier's accuracy.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.special import ndtri

from .._backend import logsumexp
from .._validation import check_float, check_int, check_open_unit
from ._ssme import alr, check_scores
from ._ssme_estimate import MetricEstimate
from ._ssme_metrics import METRICS, metric

__all__ = ["DawidSkeneResult", "PPIResult", "labeled_only", "pseudo_labels", "dawid_skene", "majority_vote",
           "ppi_accuracy"]


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
    X = _features(probs)
    K = probs.shape[-1]
    B = fit_logistic(X, np.maximum(labels, 0), (labels >= 0).astype(np.float64), K, l2=l2, n_steps=n_steps)
    eta = np.concatenate([X @ B, np.zeros(X.shape[:2] + (1,))], -1)
    filled = np.where(labels >= 0, labels, np.argmax(eta, axis=-1))
    return _evaluate("pseudo_labels", probs, filled, names, n_bins)


@dataclasses.dataclass(frozen=True, eq=False)
class DawidSkeneResult:
    """Outcome of :func:`dawid_skene`.

    Attributes
    ----------
    class_prior : ndarray, shape (n_reps, n_classes)
    confusions : ndarray, shape (n_reps, n_classifiers, n_classes, n_classes)
        ``confusions[r, m, c, k]`` = P(classifier ``m`` says ``k`` | true class ``c``).
    posterior : ndarray, shape (n_reps, n_samples, n_classes)
    loglik_path : ndarray, shape (n_reps, n_steps)
    n_iter : ndarray of int, shape (n_reps,)
    converged : ndarray of bool, shape (n_reps,)
    message : str
    """

    class_prior: np.ndarray
    confusions: np.ndarray
    posterior: np.ndarray
    loglik_path: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    message: str


def dawid_skene(predictions, labels, *, n_classes, max_iter=100, tol=1e-6, smoothing=0.01):
    r"""Semi-supervised Dawid–Skene EM over the classifiers' predicted classes.

    Parameters
    ----------
    predictions : array of int, shape (n_reps, n_samples, n_classifiers)
    labels : array of int, shape (n_reps, n_samples)
        ``-1`` for unlabelled items; labelled items are clamped to their class.
    n_classes : int
    max_iter : int
    tol : float
    smoothing : float
        Pseudo-count added to every confusion count.

    Returns
    -------
    DawidSkeneResult

    Notes
    -----
    Initialised at the vote fractions (one-hot rows for labelled items), each
    iteration sets :math:`\pi_c = \frac1n\sum_i r_{ic}`,
    :math:`\theta_{mck} \propto \alpha + \sum_i r_{ic}\,\mathbb 1[\hat y_{im} = k]`,
    and :math:`r_{ic} \propto \pi_c \prod_m \theta_{mc\hat y_{im}}` for unlabelled items.
    Metrics follow from the posterior by :func:`~expertlab.mixtures.estimate_metrics`.
    The prior is not smoothed (crowd-kit's ``DawidSkene`` neither).

    References
    ----------
    .. [1] A. P. Dawid, A. M. Skene, "Maximum likelihood estimation of observer
       error-rates using the EM algorithm", JRSS C 28(1), 1979, Sec. 2–3.

    Examples
    --------
    >>> import numpy as np
    >>> pred = np.array([[[0, 0, 1], [1, 1, 1], [0, 0, 0], [1, 1, 0]]])
    >>> res = dawid_skene(pred, np.array([[-1, 1, 0, -1]]), n_classes=2)
    >>> np.argmax(res.posterior[0], -1).tolist()
    [0, 1, 0, 1]
    """
    pred = np.asarray(predictions)
    if pred.dtype.kind not in "iu":
        raise TypeError(f"predictions must be integers, got dtype {pred.dtype}")
    K = check_int(n_classes, "n_classes", minimum=2)
    if pred.ndim != 3 or min(pred.shape) < 1 or np.any(pred < 0) or np.any(pred >= K):
        raise ValueError(f"predictions must lie in {{0, ..., {K - 1}}} with shape (n_reps, n_samples, "
                         f"n_classifiers), got shape {pred.shape}")
    _, labels = check_scores(np.full(pred.shape[:2] + (1, K), 1.0 / K), labels)
    max_iter, tol = check_int(max_iter, "max_iter"), check_float(tol, "tol", minimum=0.0)
    smoothing = check_float(smoothing, "smoothing", positive=True)
    R, n, M = pred.shape
    onehot = (pred[..., None] == np.arange(K)).astype(np.float64)                      # (R, n, M, K)
    known = labels >= 0
    lab_onehot = (labels[..., None] == np.arange(K)).astype(np.float64)
    resp = np.where(known[..., None], lab_onehot, onehot.mean(axis=2))
    pred_t = np.swapaxes(pred, 1, 2)[..., None]                                        # (R, M, n, 1)
    path, n_iter = np.full((R, max_iter), np.nan), np.zeros(R, np.int64)
    active, converged = np.ones(R, bool), np.zeros(R, bool)
    prior = conf = None
    for it in range(max_iter):
        new_prior = resp.mean(axis=1)
        counts = np.einsum("rnc,rnmk->rmck", resp, onehot) + smoothing
        new_conf = counts / counts.sum(axis=-1, keepdims=True)
        a = active[:, None]
        prior = new_prior if prior is None else np.where(a, new_prior, prior)
        conf = new_conf if conf is None else np.where(a[..., None, None], new_conf, conf)
        log_t = np.swapaxes(np.log(new_conf), 2, 3)                                     # (R, M, k, c)
        log_lik = np.take_along_axis(log_t, pred_t, axis=2).sum(axis=1)                # (R, n, c)
        with np.errstate(divide="ignore"):
            joint = log_lik + np.log(new_prior)[:, None, :] + np.where(known[..., None] & (lab_onehot == 0),
                                                                       -np.inf, 0.0)
        norm = logsumexp(joint, axis=-1)
        ll = norm.mean(axis=1)
        resp = np.where(active[:, None, None], np.exp(joint - norm[..., None]), resp)
        path[active, it] = ll[active]
        n_iter[active] += 1
        if it > 0:
            done = active & (np.abs(ll - path[:, it - 1]) <= tol)
            converged |= done
            active &= ~done
        if not active.any():
            break
    msg = "converged" if converged.all() else f"{int((~converged).sum())} of {R} replications hit max_iter"
    return DawidSkeneResult(prior, conf, resp, path[:, :int(n_iter.max())], n_iter, converged, msg)


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


@dataclasses.dataclass(frozen=True, eq=False)
class PPIResult:
    """Prediction-powered estimates of each classifier's accuracy.

    Attributes
    ----------
    estimate, ci_low, ci_high : ndarray, shape (n_reps, n_classifiers)
    alpha : float
        The interval has nominal coverage ``1 - alpha``.
    """

    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    alpha: float


def ppi_accuracy(probs, labels, *, predictor=None, alpha=0.1):
    r"""Prediction-powered inference (Angelopoulos et al. 2023) for each classifier's accuracy.

    Parameters
    ----------
    probs, labels
        As in :func:`labeled_only`; every replication needs at least two
        labelled and one unlabelled point.
    predictor : array, shape (n_reps, n_samples, n_classes), optional
        Predicted class probabilities used to impute correctness (default: the
        mean of the classifiers' probabilities).
    alpha : float

    Returns
    -------
    PPIResult

    Notes
    -----
    With :math:`c_{ij} = \mathbb 1[\hat y_{ij} = y_i]` and its prediction
    :math:`f_{ij} = q_{i \hat y_{ij}}`,

    .. math::

        \hat\theta_j = \frac{1}{n_u}\sum_{i \in U} f_{ij}
            + \frac{1}{n_l}\sum_{i \in L} (c_{ij} - f_{ij}),

    with the normal interval
    :math:`\hat\theta_j \pm z_{1-\alpha/2}\sqrt{\hat\sigma^2_{c-f}/n_l + \hat\sigma^2_f/n_u}`.

    References
    ----------
    .. [1] A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan, T. Zrnic,
       "Prediction-powered inference", Science 382(6671), 2023, Thm 1 (mean estimation).

    Examples
    --------
    >>> import numpy as np
    >>> probs = np.array([[[[0.9, 0.1]], [[0.2, 0.8]], [[0.7, 0.3]], [[0.4, 0.6]]]])
    >>> res = ppi_accuracy(probs, np.array([[0, 0, -1, -1]]))
    >>> print(round(float(res.estimate[0, 0]), 6))      # (0.7 + 0.6) / 2 + ((1 - 0.9) + (0 - 0.8)) / 2
    0.3
    """
    probs, labels = check_scores(probs, labels)
    alpha = check_open_unit(alpha, "alpha")
    R, n, M, K = probs.shape
    q = probs.mean(axis=2) if predictor is None else np.asarray(predictor, dtype=np.float64)
    if q.shape != (R, n, K) or not np.all(np.isfinite(q)):
        raise ValueError(f"predictor must be a finite array of shape {(R, n, K)}, got {q.shape}")
    known = labels >= 0
    n_l, n_u = known.sum(axis=1), (~known).sum(axis=1)
    if np.any(n_l < 2) or np.any(n_u < 1):
        raise ValueError("ppi_accuracy needs at least 2 labelled and 1 unlabelled point per replication")
    pred = np.argmax(probs, axis=-1)                                                   # (R, n, M)
    f = np.take_along_axis(q, pred, axis=-1)                                           # q_{i, yhat_ij}
    c = (pred == labels[..., None]).astype(np.float64)
    wl, wu = known[..., None].astype(np.float64), (~known)[..., None].astype(np.float64)

    def mean_var(v, w, cnt):
        m = np.sum(w * v, axis=1) / cnt[:, None]
        return m, np.sum(w * (v - m[:, None]) ** 2, axis=1) / (cnt[:, None] - 1).clip(min=1)

    mf, vf = mean_var(f, wu, n_u)
    md, vd = mean_var(c - f, wl, n_l)
    est = mf + md
    half = ndtri(1 - alpha / 2) * np.sqrt(vd / n_l[:, None] + vf / n_u[:, None])
    return PPIResult(est, est - half, est + half, alpha)
