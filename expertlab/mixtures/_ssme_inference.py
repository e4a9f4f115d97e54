r"""Baselines of semi-supervised model evaluation with a model of their own, batched over replications.

Inputs follow :func:`~expertlab.mixtures.fit_ssme` (``labels`` with ``-1``
for unlabelled points).  :func:`dawid_skene` is the semi-supervised
Dawid–Skene EM on the classifiers' predicted classes: per-classifier
confusion matrices and a class prior, labelled items clamped to their class,
with a posterior over the unknown labels from which
:func:`~expertlab.mixtures.estimate_metrics` estimates any metric.
:func:`ppi_accuracy` is prediction-powered inference for each classifier's
accuracy: a predictor's imputed correctness on the unlabelled points,
debiased on the labelled ones, with a normal confidence interval.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._backend import logsumexp
from .._repr import short_repr
from .._validation import check_float, check_int, check_open_unit
from ._ssme_model import _em_message, _record_em_step, check_scores

__all__ = ["DawidSkeneResult", "PPIResult", "dawid_skene", "ppi_accuracy"]


@short_repr
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
    The prior is not smoothed (crowd-kit's ``DawidSkene`` neither).  With
    ``smoothing=1e-12`` this is crowd-kit's ``DawidSkene`` with ``true_labels``
    (which clips the counts at 1e-10 instead) run to its fixed point: the
    posteriors agree to 1e-6 (``tests/unit/mixtures/test_crowdkit_peer.py``).

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
        if _record_em_step(path, ll, it, tol, active, n_iter, converged):
            break
    msg = _em_message(converged)
    return DawidSkeneResult(prior, conf, resp, path[:, :int(n_iter.max())], n_iter, converged, msg)


@short_repr
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
    from scipy.special import ndtri  # imported here: scipy is slow to import

    half = ndtri(1 - alpha / 2) * np.sqrt(vd / n_l[:, None] + vf / n_u[:, None])
    return PPIResult(est, est - half, est + half, alpha)
