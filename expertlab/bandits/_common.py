"""Shared helpers of the bandit learners: argument checks and tie-breaking argmax."""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from .._validation import check_int

__all__ = ["check_init", "check_feedback", "first_unpulled", "argmax_first"]


def check_init(n_reps, spec):
    """Validate the arguments of a bandit learner's ``init``: ``spec`` is an EnvSpec or the number of arms."""
    n_arms = spec.n_actions if hasattr(spec, "n_actions") else spec
    n_reps = check_int(n_reps, "n_reps")
    n_arms = check_int(n_arms, "n_arms", minimum=2)
    return n_reps, n_arms


def reward_kind_check(name: str, kind: str):
    """``check_spec`` of a learner whose model of the rewards is ``kind``: Bernoulli models refuse Gaussian arms."""

    def check_spec(spec):
        arms = getattr(spec, "info", {}).get("kind")
        if kind == "bernoulli" and arms == "gaussian":
            raise ValueError(f"{name}(kind='bernoulli') needs rewards in [0, 1], but the arms are Gaussian; "
                             f"use {name}(kind='gaussian', sigma=...)")

    return check_spec


def pull_arm(pull):
    """The arms of a :class:`expertlab.sim.Pull` (or of a bare int array)."""
    from ..sim import Pull

    return pull.arm if isinstance(pull, Pull) else pull


def check_feedback(counts, arm, reward):
    """Validate ``update(state, arm, reward)``: shapes ``(n_reps,)``, arms in range, finite rewards."""
    n_reps, n_arms = counts.shape
    arm = np.asarray(arm)
    reward = np.asarray(reward)
    if arm.shape != (n_reps,):
        raise ValueError(f"arm must have shape ({n_reps},), got {arm.shape}")
    if not np.issubdtype(arm.dtype, np.integer):
        raise TypeError(f"arm must be an integer array, got dtype {arm.dtype}")
    if np.any(arm < 0) or np.any(arm >= n_arms):
        raise ValueError(f"arm must lie in [0, {n_arms - 1}]")
    if reward.shape != (n_reps,):
        raise ValueError(f"reward must have shape ({n_reps},), got {reward.shape}")
    if not np.all(np.isfinite(reward)):
        raise ValueError("reward contains NaN or infinite values")


def first_unpulled(xp, counts):
    """``(has, arm)``: whether a replication has an arm never pulled, and the lowest such arm."""
    unpulled = counts == 0
    return xp.any(unpulled, axis=1), xp.argmax(xp.astype(unpulled, xp.int8), axis=1)


@register_jitable(forceinline=True, _nrt=False)
def k_first_unpulled(S, K):
    """Lowest arm with a zero count in row 0 of ``S``, or -1."""
    for i in range(K):
        if S[0, i] == 0.0:
            return i
    return -1


@register_jitable(forceinline=True, _nrt=False)
def argmax_first(x, K):
    """Index of the first maximum of ``x[:K]`` (NaN never wins)."""
    best = 0
    bv = x[0]
    for i in range(1, K):
        if x[i] > bv:
            bv = x[i]
            best = i
    return best


@register_jitable(forceinline=True, _nrt=False)
def sample_index(p, K, u):
    """Arm drawn from the distribution ``p[:K]`` by inversion with the uniform ``u``: the first ``i`` whose
    cumulative sum exceeds ``u`` (``K - 1`` if round-off leaves the total below ``u``)."""
    c = 0.0
    for i in range(K):
        c += p[i]
        if c > u:
            return i
    return K - 1
