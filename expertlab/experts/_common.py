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

import numpy as np

from .._backend import get_namespace
from .._validation import check_awake, check_losses, check_int

__all__ = ["instant_regret", "masked_softmax", "normalise", "check_round", "check_init"]


def check_init(n_reps, n_experts):
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
