"""Pieces shared by the full-information aggregators (array code over ``xp``).

Every aggregator here keeps, per replication and expert, the *sleeping
regret* ``R_i = sum over rounds where i is awake of (<p_t, l_t> - l_{t,i})``.
When every expert is always awake, ``R_i = L_hat - L_i`` and any weight of the
form ``f(R_i)`` is a weight on the cumulative loss ``L_i``; with an ``awake``
mask the same update is the specialists reduction of Freund, Schapire, Singer
& Warmuth (1997) and Blum & Mansour (2007): asleep experts are frozen and
receive no probability.
"""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from .._backend import asnumpy, get_namespace
from .._validation import as_real_array, check_awake, check_losses, check_int

__all__ = ["instant_regret", "masked_softmax", "normalise", "check_round", "check_init", "check_record", "run_ns",
           "take_rows", "one_hot"]


def run_ns(a):
    """The namespace of the run array ``a``: NumPy itself for a NumPy array, else its array-API namespace."""
    return np if isinstance(a, np.ndarray) else get_namespace(a)


def take_rows(a, idx):
    """``a[r, idx[r, j]]`` for every row ``r``: ``a`` ``(n_reps, m)``, ``idx`` integer ``(n_reps, k)``.

    ``take_along_axis`` on axis 1; on NumPy arrays the equal advanced index, which has less overhead per call.
    """
    if isinstance(a, np.ndarray):
        return a[np.arange(a.shape[0])[:, None], idx]
    return get_namespace(a).take_along_axis(a, idx, axis=1)


def one_hot(cur, n):
    """The ``(n_reps, n)`` float64 play of the experts ``cur`` ``(n_reps,)``.

    A scatter on NumPy arrays; a comparison elsewhere (the array API has no index assignment).
    """
    if isinstance(cur, np.ndarray):
        p = np.zeros((cur.shape[0], n))
        p[np.arange(cur.shape[0]), cur] = 1.0
        return p
    xp = get_namespace(cur)
    return xp.astype(cur[:, None] == xp.arange(n, dtype=cur.dtype)[None, :], xp.float64)


def check_record(name, params) -> None:
    """Check the ``name`` (a str) and ``params`` (a mapping) every environment record of this family carries."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__} {name!r}")
    if not isinstance(params, Mapping):
        raise TypeError(f"params must be a mapping, got {type(params).__name__}")


def check_init(n_reps, spec):
    """``(n_reps, n_experts)`` from ``init``'s arguments; ``spec`` is an EnvSpec or the number of experts."""
    n_experts = spec.n_actions if hasattr(spec, "n_actions") else spec
    return check_int(n_reps, "n_reps"), check_int(n_experts, "n_experts")


def check_round(state_regret, p, loss, awake):
    """Validate the arguments of ``update`` against the state's shape."""
    shape = tuple(state_regret.shape)
    check_losses(loss, shape, "loss")
    if not hasattr(p, "shape") or tuple(p.shape) != shape:
        raise ValueError(f"p must have shape {shape}, got {getattr(p, 'shape', type(p).__name__)}")
    check_awake(awake, shape, "awake")


def instant_regret(p, loss, awake=None):
    """``(r, mix)``: ``r_i = <p, l> - l_i`` on awake experts (0 when asleep) and ``mix = <p, l>``."""
    xp = get_namespace(loss)
    mix = xp.sum(p * loss, axis=-1, keepdims=True)
    r = mix - loss
    if awake is not None:
        r = xp.where(awake, r, 0.0)
    return r, mix


def masked_softmax(logits, awake=None):
    """Row-wise softmax of ``logits`` restricted to ``awake`` entries (others get 0)."""
    xp = get_namespace(logits)
    if awake is not None:
        logits = xp.where(awake, logits, -xp.inf)
    m = xp.max(logits, axis=-1, keepdims=True)
    w = xp.exp(logits - m)
    return w / xp.sum(w, axis=-1, keepdims=True)


def normalise(w, awake=None):
    """Row-normalise non-negative weights over ``awake``; uniform on awake if all are 0."""
    xp = get_namespace(w)
    if awake is not None:
        w = xp.where(awake, w, 0.0)
        ones = xp.astype(awake, w.dtype)
    else:
        ones = xp.ones_like(w)
    s = xp.sum(w, axis=-1, keepdims=True)
    bad = ~(s > 0) | ~xp.isfinite(s)
    w = xp.where(bad, ones, w)
    s = xp.where(bad, xp.sum(ones, axis=-1, keepdims=True), s)
    return w / s


def log_n(n_experts: int) -> float:
    return math.log(n_experts) if n_experts > 1 else 0.0


def awake_count(awake, like):
    """Number of awake experts per row, shape ``(n_reps, 1)``."""
    xp = get_namespace(like)
    if awake is None:
        return xp.full((like.shape[0], 1), float(like.shape[1]))
    return xp.sum(xp.astype(awake, like.dtype), axis=-1, keepdims=True)


def as_int_array(t, xp=np):
    return xp.asarray(t, dtype=xp.int64)


# --------------------------------------------------------------------------
# helpers shared by the prior-weighted aggregators


def _check_prior(prior):
    """Return ``prior`` as a 1-D float64 NumPy array on the simplex, or ``None``."""
    if prior is None:
        return None
    if isinstance(prior, (str, bytes)) or not hasattr(prior, "__len__") and not hasattr(prior, "shape"):
        raise TypeError(f"prior must be a 1-D array of weights on the simplex, got {type(prior).__name__}")
    # complex, string and ragged priors are refused, not coerced
    if hasattr(prior, "shape") and hasattr(prior, "dtype"):
        prior = asnumpy(prior)  # a CuPy array comes to the host
    arr = as_real_array(prior, "prior", xp=np)
    if arr.ndim != 1 or arr.size < 1:
        raise ValueError(f"prior must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("prior contains NaN or infinite values")
    if np.any(arr < 0):
        raise ValueError("prior has negative entries; expected weights on the simplex")
    if abs(float(arr.sum()) - 1.0) > 1e-9 * max(1, arr.size):
        raise ValueError(f"prior must sum to 1, got sum {float(arr.sum())!r}")
    return arr


def _log_prior(prior, n_reps, n_experts, xp):
    """``(n_reps, n_experts)`` array of ``log(prior)`` (uniform when ``prior`` is None)."""
    if prior is None:
        lp = np.full(n_experts, -math.log(n_experts))
    else:
        if prior.size != n_experts:
            raise ValueError(f"prior has {prior.size} entries but the learner was initialised with "
                             f"n_experts={n_experts}")
        with np.errstate(divide="ignore"):
            lp = np.log(prior)
    return xp.zeros((n_reps, n_experts)) + xp.asarray(lp)[None, :]


def _prior_softmax(logits, log_prior, awake=None):
    """Row-wise softmax of ``logits`` over awake experts.

    ``logits`` may hold ``-inf`` (zero weight).  Rows whose awake logits are all
    ``-inf`` fall back to the prior restricted to the awake experts, and to the
    uniform distribution on them if the prior puts no mass there.
    """
    xp = get_namespace(logits)
    if awake is not None:
        logits = xp.where(awake, logits, -xp.inf)
    m = xp.max(logits, axis=-1, keepdims=True)
    ok = xp.isfinite(m)
    w = xp.exp(logits - xp.where(ok, m, 0.0))
    w = w / xp.where(ok, xp.sum(w, axis=-1, keepdims=True), 1.0)
    fallback = normalise(xp.exp(log_prior), awake)
    return xp.where(ok, w, fallback)
