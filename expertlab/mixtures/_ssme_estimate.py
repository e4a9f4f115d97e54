r"""Metric estimates from posterior label draws: the SSME way of scoring classifiers without all labels.

Unlabelled points get labels drawn from a posterior (labelled points keep
theirs), every metric is computed
on each draw, and the estimate is the mean over draws with the spread as its
Monte Carlo uncertainty.  Draws come from the counter-based generator keyed by
replication, so a replication drawn alone equals the same one inside a batch.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._random import rep_key, round_key, seed_to_uint64, uniform
from .._repr import short_repr
from .._validation import as_real_array, check_array_size, check_in, check_int
from ._ssme_metrics import METRICS, check_probs, metric

__all__ = ["MetricEstimate", "draw_labels", "estimate_metrics"]


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class MetricEstimate:
    """Estimates of classifier metrics on ``n_reps`` data sets.

    Attributes
    ----------
    method : str
        ``"ssme"``, ``"labeled_only"``, ``"pseudo_labels"``, ``"dawid_skene"``, ``"majority_vote"``, ...
    estimates : dict of str to ndarray, shape (n_reps, n_classifiers)
    spreads : dict of str to ndarray, shape (n_reps, n_classifiers)
        Standard deviation over posterior label draws (0 for a deterministic method).
    n_draws : int
        Label draws behind each estimate (1 for a deterministic method).
    """

    method: str
    estimates: dict
    spreads: dict
    n_draws: int = 1


def _check_posterior(posterior):
    post = as_real_array(posterior, "posterior", np)
    if post.ndim != 3 or min(post.shape) < 1:
        raise ValueError(f"posterior must have shape (n_reps, n_samples, n_classes), got {post.shape}")
    if not np.all(np.isfinite(post)) or np.any(post < 0) or np.any(np.abs(post.sum(-1) - 1) > 1e-6):
        raise ValueError("posterior rows must lie on the simplex (finite, non-negative, summing to 1)")
    return post


def draw_labels(posterior, labels, *, n_draws, seed=0, rep_ids=None):
    r"""Draw labels of the unlabelled points from their posterior; labelled points keep theirs.

    Parameters
    ----------
    posterior : array, shape (n_reps, n_samples, n_classes)
    labels : array of int, shape (n_reps, n_samples)
        ``-1`` for unlabelled points.
    n_draws : int
    seed : int, numpy.random.SeedSequence or None, default 0
    rep_ids : array of int, shape (n_reps,), optional
        Replication indices that key the draws (default ``0, ..., n_reps - 1``); replication ``r`` of a
        batch draws the same labels as a batch of one with ``rep_ids=[r]``.

    Returns
    -------
    ndarray of int, shape (n_reps, n_draws, n_samples)

    Raises
    ------
    TypeError
        If ``posterior`` does not hold real numbers, or ``labels`` or ``rep_ids`` are not integers.
    ValueError
        If ``posterior`` rows are not on the simplex, ``labels`` lie outside ``{-1, ..., n_classes - 1}``,
        ``rep_ids`` are negative, the shapes disagree, or the draws cannot be allocated.

    Notes
    -----
    Draw :math:`s` of point :math:`i` in replication :math:`r` inverts the
    posterior CDF at the counter-based uniform
    ``uniform(round_key(rep_key(seed, r), s), i)``, so the draws are a pure
    function of ``(seed, r, s, i)``.

    Examples
    --------
    >>> import numpy as np
    >>> post = np.array([[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]])
    >>> d = draw_labels(post, np.array([[1, -1, -1]]), n_draws=4)
    >>> d[0, :, :2].tolist()
    [[1, 1], [1, 1], [1, 1], [1, 1]]
    """
    post = _check_posterior(posterior)
    labels = np.asarray(labels)
    n_draws = check_int(n_draws, "n_draws")
    if labels.dtype.kind not in "iu":
        raise TypeError(f"labels must be integers (-1 for unlabelled), got dtype {labels.dtype}")
    if labels.shape != post.shape[:2]:
        raise ValueError(f"labels must have shape {post.shape[:2]} (n_reps, n_samples), got {labels.shape}")
    R, n, K = post.shape
    if np.any(labels < -1) or np.any(labels >= K):
        raise ValueError(f"labels must lie in {{-1, 0, ..., {K - 1}}} (-1 = unlabelled)")
    check_array_size((R, n_draws, n), ("n_draws", "posterior"))
    if rep_ids is None:
        reps = np.arange(R, dtype=np.uint64)
    else:
        reps = np.asarray(rep_ids)
        if reps.dtype.kind not in "iu":
            raise TypeError(f"rep_ids must be integers, got dtype {reps.dtype}")
        if reps.shape != (R,):
            raise ValueError(f"rep_ids must have shape ({R},), got {reps.shape}")
        if np.any(reps < 0):
            raise ValueError("rep_ids must be non-negative")
        reps = reps.astype(np.uint64)
    seeds = np.full(R, seed_to_uint64(seed), dtype=np.uint64)
    keys = round_key(rep_key(seeds, reps)[:, None], np.arange(n_draws, dtype=np.uint64)[None, :])   # (R, S)
    u = uniform(keys[..., None], np.arange(n, dtype=np.uint64)[None, None, :])                       # (R, S, n)
    cdf = np.cumsum(post, axis=-1)[:, None, :, :-1]
    drawn = np.sum(u[..., None] > cdf, axis=-1)
    return np.where(labels[:, None, :] >= 0, labels[:, None, :], drawn).astype(np.int64)


def estimate_metrics(probs, labels, posterior, *, metrics=METRICS, n_draws=100, seed=0, rep_ids=None, n_bins=10,
                     method="ssme"):
    r"""Estimate classifier metrics by drawing the missing labels from a posterior.

    Parameters
    ----------
    probs : array, shape (n_reps, n_samples, n_classifiers, n_classes)
    labels : array of int, shape (n_reps, n_samples)
        ``-1`` for unlabelled points.
    posterior : array, shape (n_reps, n_samples, n_classes)
        Posterior over the true class of each point (e.g. ``SSMEResult.posterior``).
    metrics : tuple of str
        Names from ``METRICS``.
    n_draws : int
    seed : int, numpy.random.SeedSequence or None, default 0
    rep_ids : array of int, shape (n_reps,), optional
        See :func:`draw_labels`.
    n_bins : int
    method : str
        Recorded in the result.

    Returns
    -------
    MetricEstimate
        Estimates and spreads of shape ``(n_reps, n_classifiers)``.

    Notes
    -----
    For draws :math:`y^{(s)}` of the labels and a metric :math:`m`, the
    estimate is :math:`\frac1S \sum_s m(y^{(s)}, p_{\cdot j})` for every
    classifier :math:`j`, and the spread the standard deviation over
    :math:`s` (the posterior uncertainty of the metric given the fitted
    mixture, not its sampling error).

    References
    ----------
    .. [1] D. Shanmugam et al., "Evaluating multiple models using labeled and
       unlabeled data", NeurIPS 2025 (arXiv 2501.11866), Sec. 3.2.

    Examples
    --------
    >>> import numpy as np
    >>> probs = np.array([[[[0.9, 0.1]], [[0.2, 0.8]]]])          # 1 rep, 2 points, 1 classifier
    >>> post = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    >>> est = estimate_metrics(probs, np.array([[-1, -1]]), post, metrics=("accuracy",), n_draws=3)
    >>> est.estimates["accuracy"].tolist(), est.spreads["accuracy"].tolist()
    ([[1.0]], [[0.0]])
    """
    names = tuple(metrics)
    if not names:
        raise ValueError("metrics must name at least one metric")
    for m in names:
        check_in(m, "metrics", METRICS)
    probs = check_probs(probs)
    if probs.ndim != 4:
        raise ValueError(f"probs must have shape (n_reps, n_samples, n_classifiers, n_classes), got {probs.shape}")
    post = _check_posterior(posterior)
    R, n, _, K = probs.shape
    if post.shape != (R, n, K):
        raise ValueError(f"posterior must have shape {(R, n, K)}, got {post.shape}")
    draws = draw_labels(post, labels, n_draws=n_draws, seed=seed, rep_ids=rep_ids)       # (R, S, n)
    per_clf = np.swapaxes(probs, 1, 2)[:, None]                                        # (R, 1, M, n, K)
    est, spread = {}, {}
    for m in names:
        v = metric(m, draws[:, :, None, :], per_clf, n_bins=n_bins)                      # (R, S, M)
        d = v - v[:, :1]                               # shifted by the first draw: exact for constant draws
        est[m], spread[m] = v[:, 0] + np.mean(d, axis=1), np.std(d, axis=1)
    return MetricEstimate(method, est, spread, n_draws)
