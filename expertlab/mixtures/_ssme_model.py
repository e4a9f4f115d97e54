r"""The SSME mixture model: score transform, input checks, fitted records and class-conditional densities.

What :func:`~expertlab.mixtures.fit_ssme` fits and what the SSME baselines
share with it: the additive log-ratio transform :func:`alr` (and
:func:`alr_inverse`) that maps each classifier's probabilities to
:math:`\mathbb R^{K-1}`, the checks of batched scores and labels, the vote
initialisation of the responsibilities, the records :class:`SSMEParams` and
:class:`SSMEResult`, the M-step of each class-conditional density in
:data:`DENSITIES` together with its log-density at the data, and the
per-replication convergence bookkeeping of the batched EM loops (SSME and
semi-supervised Dawid–Skene), in which a replication stops once its average
log-likelihood changes by at most ``tol``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._backend import logsumexp
from .._repr import short_repr
from .._validation import as_real_array, check_float
from ._bandwidth import bandwidth as _bandwidth, kde_log_density
from ._em import _log_gaussian, _m_step
from ._ssme_metrics import check_probs

__all__ = ["DENSITIES", "SSMEParams", "SSMEResult", "alr", "alr_inverse"]

#: Class-conditional densities understood by :func:`fit_ssme`.
DENSITIES = ("kde", "gaussian", "categorical")


def alr(probs, *, eps=1e-12):
    r"""Additive log-ratio transform of probability vectors, the last class as reference.

    Parameters
    ----------
    probs : array, shape (..., n_classes)
        Rows on the simplex.
    eps : float in (0, 1 / n_classes]
        Probabilities are clipped to ``[eps, 1]`` first so that the logarithms stay finite.  The
        bound keeps each row's largest probability (at least ``1 / n_classes``) unclipped; a
        small value such as the default changes only probabilities that are practically 0.

    Returns
    -------
    ndarray, shape (..., n_classes - 1)
        :math:`\log(p_k / p_K)`, :math:`k < K`; for two classes the logit of class 0.

    Raises
    ------
    ValueError
        If ``probs`` is not finite and non-negative with at least two classes, or ``eps`` is not a
        finite number in ``(0, 1 / n_classes]``.

    Examples
    --------
    >>> import numpy as np
    >>> alr(np.array([0.5, 0.25, 0.25])).tolist()
    [0.6931471805599453, 0.0]
    """
    p = as_real_array(probs, "probs", np)
    if p.ndim < 1 or p.shape[-1] < 2:
        raise ValueError(f"probs must have shape (..., n_classes >= 2), got {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("probs must be finite and non-negative")
    eps = check_float(eps, "eps", positive=True)
    if eps > 1.0 / p.shape[-1]:
        raise ValueError(f"eps must lie in (0, 1 / n_classes] = (0, {1.0 / p.shape[-1]:.6g}], got {eps}")
    lp = np.log(np.clip(p, eps, 1.0))
    return lp[..., :-1] - lp[..., -1:]


def alr_inverse(z):
    """Inverse of :func:`alr`: ``(..., n_classes - 1)`` log-ratios to ``(..., n_classes)`` probabilities.

    ``-inf`` is a log-ratio of a class of probability 0.

    Raises
    ------
    TypeError
        If ``z`` does not hold real numbers.
    ValueError
        If ``z`` has no axis or an empty last axis, or holds NaN or ``+inf``.

    Examples
    --------
    >>> import numpy as np
    >>> np.round(alr_inverse(alr(np.array([0.2, 0.3, 0.5]))), 12).tolist()
    [0.2, 0.3, 0.5]
    """
    z = as_real_array(z, "z", np)
    if z.ndim < 1 or z.shape[-1] < 1:
        raise ValueError(f"z must have shape (..., n_classes - 1) with n_classes >= 2, got {z.shape}")
    if np.any(np.isnan(z)) or np.any(z == np.inf):
        raise ValueError("z must not contain NaN or +inf (a log-ratio of -inf is a class of probability 0)")
    full = np.concatenate([z, np.zeros(z.shape[:-1] + (1,))], axis=-1)
    return np.exp(full - logsumexp(full, axis=-1)[..., None])


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class SSMEParams:
    """Fitted SSME mixture of ``n_reps`` data sets.

    Attributes
    ----------
    class_prior : ndarray, shape (n_reps, n_classes)
    density : {"kde", "gaussian", "categorical"}
    bandwidths : ndarray, shape (n_reps, n_classes, n_features), or None
        Per-class, per-coordinate kernel widths (``"kde"``).
    means, covariances : ndarray, or None
        Shapes ``(n_reps, n_classes, n_features)`` and ``(n_reps, n_classes, n_features, n_features)``
        (``"gaussian"``).
    confusions : ndarray, shape (n_reps, n_classifiers, n_classes, n_classes), or None
        ``confusions[r, m, c, k]`` = P(classifier ``m`` predicts ``k`` | class ``c``) (``"categorical"``).
    """

    class_prior: np.ndarray
    density: str
    bandwidths: np.ndarray | None = None
    means: np.ndarray | None = None
    covariances: np.ndarray | None = None
    confusions: np.ndarray | None = None


@short_repr
@dataclasses.dataclass(frozen=True, eq=False)
class SSMEResult:
    """Outcome of :func:`fit_ssme`.

    Attributes
    ----------
    params : SSMEParams
    posterior : ndarray, shape (n_reps, n_samples, n_classes)
        Responsibilities of the last E-step (one-hot rows for labelled points).
    loglik_path : ndarray, shape (n_reps, n_steps)
        Average log-likelihood :math:`\\frac1n \\sum_i \\log \\sum_c \\pi_c f_c(z_i)` (labelled points
        restricted to their class) at each E-step; NaN after a replication stopped.
    n_iter : ndarray of int, shape (n_reps,)
    converged : ndarray of bool, shape (n_reps,)
    message : str
    """

    params: SSMEParams
    posterior: np.ndarray
    loglik_path: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    message: str

    def plot(self, ax=None, *, label: str | None = None, **line_kwargs):
        r"""The average log-likelihood per EM iteration (``loglik_path``), one line per replication.

        Point ``k`` is the objective after ``k`` iterations.  With the kernel
        density the widths are re-estimated at every M-step, so the curve need
        not rise monotonically (see :func:`~expertlab.mixtures.fit_ssme`).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Default: new axes on a standalone figure (no pyplot state).
        label : str, optional
            Legend label.
        **line_kwargs
            Passed to ``ax.plot``.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from ..sim._plots import plot_paths

        path = np.asarray(self.loglik_path, dtype=np.float64)
        return plot_paths(path[0] if path.shape[0] == 1 else path, ax=ax, label=label, xlabel="EM iteration k",
                          ylabel="average log-likelihood", start=1, **line_kwargs)


def check_scores(probs, labels):
    """Validate batched scores ``(n_reps, n_samples, n_classifiers, n_classes)`` and labels ``(n_reps, n_samples)``."""
    probs = check_probs(probs)
    if probs.ndim != 4:
        raise ValueError(f"probs must have shape (n_reps, n_samples, n_classifiers, n_classes), got {probs.shape}")
    labels = np.asarray(labels)
    if labels.dtype.kind not in "iu":
        raise TypeError(f"labels must be integers (-1 for unlabelled), got dtype {labels.dtype}")
    if labels.shape != probs.shape[:2]:
        raise ValueError(f"labels must have shape {probs.shape[:2]} (n_reps, n_samples), got {labels.shape}")
    if np.any(labels < -1) or np.any(labels >= probs.shape[-1]):
        raise ValueError(f"labels must lie in {{-1, 0, ..., {probs.shape[-1] - 1}}} (-1 = unlabelled)")
    return probs, labels.astype(np.int64)


def initial_responsibilities(probs, labels):
    """One-hot rows for labelled points, the classifiers' mean probabilities (soft vote) for the others."""
    K = probs.shape[-1]
    onehot = (labels[..., None] == np.arange(K)).astype(np.float64)
    return np.where((labels >= 0)[..., None], onehot, np.mean(probs, axis=2))


def _m_and_log_density(Z, onehot_pred, resp, density, rule, smoothing, reg_covar, n_blocks, shared=False):
    """M-step of the class-conditional densities and their log-densities at the data, (R, n, K).

    ``shared`` (KDE): every class gets, per coordinate, the prior-weighted geometric mean of the per-class widths.
    """
    if density == "kde":
        R, n, D = Z.shape
        x = np.broadcast_to(np.swapaxes(Z, 1, 2)[:, None], (R, resp.shape[-1], D, n))
        w = np.broadcast_to(np.swapaxes(resp, 1, 2)[:, :, None, :], x.shape)
        floor = 1e-2 * np.std(Z, axis=1)[:, None, :] + 1e-8                      # (R, 1, D)
        h = np.full(x.shape[:-1], float(rule)) if not isinstance(rule, str) else \
            _bandwidth(x, rule, sample_weight=w, floor=floor)
        if shared:
            prior = np.mean(resp, axis=1)                                             # (R, K)
            h = np.broadcast_to(np.exp(np.einsum("rk,rkd->rd", prior, np.log(h)))[:, None], h.shape).copy()
        return {"bandwidths": h}, kde_log_density(Z, resp, h, n_blocks)
    if density == "gaussian":
        g = _m_step(Z, resp, None, "full", reg_covar, np)
        return {"means": g.means, "covariances": g.covariances}, _log_gaussian(Z, g, np)
    counts = np.einsum("rnc,rnmk->rmck", resp, onehot_pred) + smoothing
    conf = counts / np.sum(counts, axis=-1, keepdims=True)
    return {"confusions": conf}, np.einsum("rnmk,rmck->rnc", onehot_pred, np.log(conf))


def _record_em_step(path, ll, it, tol, active, n_iter, converged) -> bool:
    """Record step ``it`` of a batched EM loop in place; ``True`` once no replication is left active.

    ``path (n_reps, max_iter)`` receives the average log-likelihoods ``ll (n_reps,)`` of the active
    replications, whose ``n_iter`` grows by one; from the second step on, those whose log-likelihood
    changed by at most ``tol`` are marked ``converged`` and leave ``active``.
    """
    path[active, it] = ll[active]
    n_iter[active] += 1
    if it > 0:
        done = active & (np.abs(ll - path[:, it - 1]) <= tol)
        converged |= done
        active &= ~done
    return not active.any()


def _em_message(converged) -> str:
    """The ``message`` of a batched EM result from ``converged (n_reps,)``."""
    n_left = int((~converged).sum())
    return "converged" if converged.all() else f"{n_left} of {converged.size} replications hit max_iter"
