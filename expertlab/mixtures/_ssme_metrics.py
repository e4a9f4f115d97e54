r"""Classifier metrics as batched array functions: accuracy, AUC, AUPRC, ECE, top-label calibration error.

Each metric takes integer labels of shape ``(..., n_samples)`` and predicted
probabilities of shape ``(..., n_samples, n_classes)``; the leading axes of the
two broadcast (many label draws against one classifier, many classifiers
against one draw), and the result has the broadcast leading shape.  Optional
``sample_weight`` (broadcastable to the labels) restricts or reweights the
points: 0/1 weights evaluate on a subset without changing array shapes, which
is how the labelled-only estimate of a batch with different labelled sets is
computed.  The sort that ranks the scores depends on the probabilities only,
so it is done once for all label draws.

Binary problems (two classes) score the probability of class 1, as
scikit-learn does; with more classes AUC and AUPRC are macro averages of the
one-vs-rest problems.  A metric that is undefined on a row (no positive or no
negative point) is NaN, except that :func:`roc_auc` raises a
:class:`ValueError` when ``labels`` lack a class; :func:`metric` (what the
batched estimators call) keeps the NaN for such rows.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_real_array, check_array_size, check_in, check_int

__all__ = ["METRICS", "check_probs", "accuracy", "roc_auc", "average_precision", "expected_calibration_error",
           "top_label_calibration_error", "metric"]

#: Metric names understood by :func:`metric` and the SSME estimators.
METRICS = ("accuracy", "auc", "auprc", "ece", "top_label_ce")


def check_probs(probs):
    """``probs`` as float64 after checking shape ``(..., n_samples, n_classes >= 2)``, finiteness and the simplex."""
    if isinstance(probs, (list, tuple)):
        probs = np.asarray(probs)
    if not isinstance(probs, np.ndarray) or probs.dtype.kind not in "biuf":
        raise TypeError(f"probs must be an array of real numbers, got {type(probs).__name__}")
    probs = probs.astype(np.float64)
    if probs.ndim < 2 or probs.shape[-1] < 2 or min(probs.shape) < 1:
        raise ValueError(f"probs must have shape (..., n_samples, n_classes >= 2), got {probs.shape}")
    if not np.all(np.isfinite(probs)):
        raise ValueError("probs contains NaN or infinite values")
    if np.any(probs < 0) or np.any(np.abs(probs.sum(-1) - 1.0) > 1e-6):
        raise ValueError("probs rows must lie on the simplex (non-negative, summing to 1)")
    return probs


def _check(labels, probs, sample_weight):
    probs = check_probs(probs)
    labels = np.asarray(labels)
    if labels.dtype.kind not in "iu":
        raise TypeError(f"labels must be integers, got dtype {labels.dtype}")
    K = probs.shape[-1]
    if labels.ndim < 1 or labels.shape[-1] != probs.shape[-2]:
        raise ValueError(f"labels must have shape (..., {probs.shape[-2]}), got {labels.shape}")
    if np.any(labels < 0) or np.any(labels >= K):
        raise ValueError(f"labels must lie in {{0, ..., {K - 1}}}")
    try:
        lead = np.broadcast_shapes(labels.shape[:-1], probs.shape[:-2])
    except ValueError:
        raise ValueError(f"the leading axes of labels {labels.shape} and probs {probs.shape} do not broadcast")
    if sample_weight is None:
        w = np.ones(labels.shape, dtype=np.float64)
    else:
        w = as_real_array(sample_weight, "sample_weight", np)
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("sample_weight must be finite and non-negative")
        try:
            w = np.broadcast_to(w, np.broadcast_shapes(w.shape, labels.shape))
        except ValueError:
            raise ValueError(f"sample_weight of shape {w.shape} does not broadcast to labels {labels.shape}")
    return labels, probs, w, lead


def _accuracy(labels, probs, w):
    correct = (np.argmax(probs, axis=-1) == labels).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(w * correct, axis=-1) / np.sum(w, axis=-1)


def _groups(score):
    """Descending order of ``score`` (..., n) and, per sorted position, the first and last index of its tie group."""
    order = np.argsort(-score, axis=-1, kind="stable")
    s = np.take_along_axis(score, order, -1)
    n = s.shape[-1]
    idx = np.broadcast_to(np.arange(n), s.shape)
    new = np.concatenate([np.ones(s.shape[:-1] + (1,), bool), s[..., 1:] != s[..., :-1]], axis=-1)
    end = np.concatenate([s[..., 1:] != s[..., :-1], np.ones(s.shape[:-1] + (1,), bool)], axis=-1)
    g_start = np.maximum.accumulate(np.where(new, idx, 0), axis=-1)
    g_end = np.flip(np.minimum.accumulate(np.flip(np.where(end, idx, n), -1), axis=-1), -1)
    return order, g_start, g_end


def _ranked(pos, score, w):
    """Sorted positive/negative weights and tie groups for the binary problem ``pos`` (..., n) vs ``score``."""
    order, g_start, g_end = _groups(score)
    shape = np.broadcast_shapes(pos.shape, w.shape, order.shape)
    take = lambda a: np.take_along_axis(np.broadcast_to(a, shape), np.broadcast_to(order, shape), -1)  # noqa: E731
    return take(pos * w), take((1.0 - pos) * w), g_start, g_end


def _binary_auc(pos, score, w):
    wp, wn, g_start, g_end = _ranked(pos, score, w)
    neg_cum = np.cumsum(wn, axis=-1)                       # negatives scored at least as high, descending
    neg_tot = neg_cum[..., -1:]
    shape = wp.shape
    above = np.take_along_axis(neg_cum, np.broadcast_to(g_start, shape), -1) - \
        np.take_along_axis(wn, np.broadcast_to(g_start, shape), -1)
    through_end = np.take_along_axis(neg_cum, np.broadcast_to(g_end, shape), -1)
    tie = through_end - above
    below = neg_tot - through_end
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(wp * (below + 0.5 * tie), axis=-1) / (np.sum(wp, axis=-1) * neg_tot[..., 0])


def _binary_ap(pos, score, w):
    wp, wn, _, g_end = _ranked(pos, score, w)
    tp, fp = np.cumsum(wp, axis=-1), np.cumsum(wn, axis=-1)
    ge = np.broadcast_to(g_end, tp.shape)
    tp_e, fp_e = np.take_along_axis(tp, ge, -1), np.take_along_axis(fp, ge, -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        prec = np.where(tp_e + fp_e > 0, tp_e / (tp_e + fp_e), 0.0)
        return np.sum(wp * prec, axis=-1) / tp[..., -1]


def _one_vs_rest(fn, labels, probs, w):
    K = probs.shape[-1]
    classes = [1] if K == 2 else range(K)
    vals = [fn((labels == k).astype(np.float64), probs[..., k], w) for k in classes]
    return vals[0] if K == 2 else np.mean(vals, axis=0)


def _calibration(labels, probs, sample_weight, n_bins, top_label):
    """Checked inputs binned by confidence (and by predicted class if ``top_label``): the weighted calibration gap."""
    n_bins = check_int(n_bins, "n_bins", minimum=1)
    labels, probs, w, _ = _check(labels, probs, sample_weight)
    conf = np.max(probs, axis=-1)
    pred = np.argmax(probs, axis=-1)
    bins = np.clip(np.ceil(conf * n_bins).astype(np.int64) - 1, 0, n_bins - 1)   # (i/B, (i+1)/B]
    group = pred * n_bins + bins if top_label else bins
    G = probs.shape[-1] * n_bins if top_label else n_bins
    check_array_size(np.broadcast_shapes(labels.shape, w.shape) + (G,), "n_bins")
    onehot = (group[..., None] == np.arange(G)).astype(np.float64)                 # (..., n, G)
    correct = (pred == labels).astype(np.float64)
    wc = (w * correct)[..., None, :]
    acc_g = (wc @ onehot)[..., 0, :]
    conf_g = ((w * conf)[..., None, :] @ onehot)[..., 0, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(np.abs(acc_g - conf_g), axis=-1) / np.sum(w, axis=-1)


def accuracy(labels, probs, *, sample_weight=None):
    r"""Fraction of points whose most probable class is the label.

    Parameters
    ----------
    labels : array of int, shape (..., n_samples)
    probs : array, shape (..., n_samples, n_classes)
    sample_weight : array, broadcastable to ``labels``, optional

    Returns
    -------
    ndarray, shape: the broadcast leading shape

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[0.9, 0.1], [0.4, 0.6], [0.2, 0.8]])
    >>> float(accuracy(np.array([0, 0, 1]), p))
    0.6666666666666666
    """
    labels, probs, w, _ = _check(labels, probs, sample_weight)
    return _accuracy(labels, probs, w)


def roc_auc(labels, probs, *, sample_weight=None):
    r"""Area under the ROC curve (macro one-vs-rest for more than two classes).

    Parameters
    ----------
    labels, probs, sample_weight
        As in :func:`accuracy`.

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        If a row of ``labels`` lacks a class (counting points of positive
        weight only): both classes for two classes, every class beyond, as the
        AUC of a one-class problem is undefined.  ``metric("auc", ...)``
        returns NaN for such rows instead.

    Notes
    -----
    The weighted Mann–Whitney statistic, ties counted one half:

    .. math::

        \mathrm{AUC} = \frac{\sum_{i: y_i = 1} \sum_{j: y_j = 0} w_i w_j
            \bigl(\mathbb 1[s_i > s_j] + \tfrac12 \mathbb 1[s_i = s_j]\bigr)}{W_+ W_-}.

    Examples
    --------
    >>> import numpy as np
    >>> s = np.array([0.1, 0.4, 0.35, 0.8])
    >>> float(roc_auc(np.array([0, 0, 1, 1]), np.stack([1 - s, s], -1)))
    0.75
    """
    labels, probs, w, _ = _check(labels, probs, sample_weight)
    K = probs.shape[-1]
    for k in [1] if K == 2 else range(K):
        pos = labels == k
        if np.any(np.sum(w * pos, axis=-1) <= 0) or np.any(np.sum(w * ~pos, axis=-1) <= 0):
            need = ("both classes 0 and 1" if K == 2
                    else f"every class 0, ..., {K - 1} (class {k} is missing or alone)")
            raise ValueError(f"labels must contain {need} with positive weight in every row: the AUC of a single "
                             f"class is undefined (metric('auc', ...) returns NaN for such rows)")
    return _one_vs_rest(_binary_auc, labels, probs, w)


def _roc_auc_or_nan(labels, probs, *, sample_weight=None):
    """:func:`roc_auc` with NaN, not an error, on a row that lacks a class (the batched estimators' convention)."""
    labels, probs, w, _ = _check(labels, probs, sample_weight)
    return _one_vs_rest(_binary_auc, labels, probs, w)


def average_precision(labels, probs, *, sample_weight=None):
    r"""Area under the precision–recall curve as average precision (macro one-vs-rest beyond two classes).

    Parameters
    ----------
    labels, probs, sample_weight
        As in :func:`accuracy`.

    Returns
    -------
    ndarray

    Notes
    -----
    With thresholds at the distinct scores, recall :math:`R_k` and precision
    :math:`P_k` at the :math:`k`-th largest one,
    :math:`\mathrm{AP} = \sum_k (R_k - R_{k-1}) P_k` (scikit-learn's
    ``average_precision_score``; no interpolation).

    Examples
    --------
    >>> import numpy as np
    >>> s = np.array([0.1, 0.4, 0.35, 0.8])
    >>> round(float(average_precision(np.array([0, 0, 1, 1]), np.stack([1 - s, s], -1))), 6)   # (1 + 2/3) / 2
    0.833333
    """
    labels, probs, w, _ = _check(labels, probs, sample_weight)
    return _one_vs_rest(_binary_ap, labels, probs, w)


def expected_calibration_error(labels, probs, *, sample_weight=None, n_bins=10):
    r"""Expected calibration error of the confidence :math:`\max_k p_k` in equal-width bins.

    Parameters
    ----------
    labels, probs, sample_weight
        As in :func:`accuracy`.
    n_bins : int
        Number :math:`B` of equal-width bins of the confidence in :math:`(0, 1]`.

    Returns
    -------
    ndarray
        Shape: the broadcast leading shape.

    Notes
    -----
    .. math::

        \mathrm{ECE} = \sum_b \frac{|B_b|}{n} \bigl|\mathrm{acc}(B_b) - \mathrm{conf}(B_b)\bigr|,

    with bins :math:`B_b = \{i : \max_k p_{ik} \in (b/B, (b+1)/B]\}`
    (Guo et al. 2017, Eq. (3)).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[0.9, 0.1], [0.85, 0.15]])    # both in bin (0.8, 0.9]: conf 0.875, acc 1/2
    >>> round(float(expected_calibration_error(np.array([0, 1]), p)), 6)
    0.375
    """
    return _calibration(labels, probs, sample_weight, n_bins, top_label=False)


def top_label_calibration_error(labels, probs, *, sample_weight=None, n_bins=10):
    r"""Top-label calibration error: the ECE computed separately within each predicted class.

    Parameters
    ----------
    labels, probs, sample_weight
        As in :func:`accuracy`.
    n_bins : int
        Confidence bins within each predicted class (``n_classes * n_bins`` bins in all).

    Returns
    -------
    ndarray
        Shape: the broadcast leading shape.

    Notes
    -----
    Bins are indexed by the predicted class :math:`k` and the confidence bin
    :math:`b`: :math:`\sum_{k, b} \frac{|B_{kb}|}{n} |\mathrm{acc}(B_{kb}) -
    \mathrm{conf}(B_{kb})|` (Gupta & Ramdas 2022, Sec. 2, top-label
    calibration).  It is at least the ECE (triangle inequality).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[0.85, 0.15], [0.15, 0.85]])   # one point per predicted class, both right
    >>> round(float(top_label_calibration_error(np.array([0, 1]), p)), 6)
    0.15
    """
    return _calibration(labels, probs, sample_weight, n_bins, top_label=True)


_FUNCS = {"accuracy": accuracy, "auc": _roc_auc_or_nan, "auprc": average_precision,
          "ece": expected_calibration_error, "top_label_ce": top_label_calibration_error}


def metric(name, labels, probs, *, sample_weight=None, n_bins=10):
    """Evaluate the metric ``name`` (one of :data:`METRICS`).

    Parameters
    ----------
    name : {"accuracy", "auc", "auprc", "ece", "top_label_ce"}
    labels, probs, sample_weight
        As in :func:`accuracy`.
    n_bins : int
        Bins of the calibration errors.

    Returns
    -------
    ndarray
        NaN on a row where the metric is undefined (for ``"auc"``, a row of
        ``labels`` that lacks a class, on which :func:`roc_auc` raises).

    Examples
    --------
    >>> import numpy as np
    >>> float(metric("accuracy", np.array([1]), np.array([[0.3, 0.7]])))
    1.0
    """
    check_in(name, "metric", METRICS)
    kw = {"n_bins": n_bins} if name in ("ece", "top_label_ce") else {}
    return _FUNCS[name](labels, probs, sample_weight=sample_weight, **kw)
