"""Helpers for testing learners: drive one through given losses, run code under the CUDA simulator.

Hypothesis strategies that draw valid inputs of every family (losses, bandit
means, MDPs, Gaussian mixtures, assignment problems, registered learners)
live in :mod:`expertlab.testing.strategies`, which needs Hypothesis and is
not imported here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

from .._validation import as_real_array, check_array_size, check_float, check_int

__all__ = ["play_losses", "random_losses", "run_in_cuda_simulator"]


def play_losses(learner, losses, awake=None, keys=None):
    """Drive ``learner`` through a fixed loss array and return every play (a test oracle).

    Unlike :func:`expertlab.sim.run`, which records metrics at checkpoints and
    never a replications-by-rounds trajectory, this keeps every round's play,
    so that tests can compare a learner round by round with a plain-Python
    reference.  It calls the learner protocol directly and is meant for
    small arrays in tests.

    Parameters
    ----------
    learner : expertlab.sim.Learner
    losses : array, shape (n_reps, horizon, n_experts)
        Losses in [0, 1]; replication ``r`` sees ``losses[r, t]`` in round ``t``.
    awake : bool array, shape (n_reps, horizon, n_experts), optional
        Sleeping-experts masks.
    keys : callable, optional
        ``keys(t) -> (n_reps,) uint64`` learner keys of round ``t``, for
        randomised learners (deterministic learners ignore them);
        ``lambda t: expertlab.random.engine_keys(seed, n_reps, t=t).learner``
        passes the keys ``sim.run(..., seed=seed)`` would.

    Returns
    -------
    p, r : arrays, shape (n_reps, horizon, n_experts)
        The distributions played and the instantaneous regrets
        ``r_{t,i} = <p_t, l_t> - l_{t,i}`` (0 for asleep experts).

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.experts import hedge
    >>> p, r = play_losses(hedge(eta=np.log(3.0)), np.array([[[1.0, 0.0], [0.0, 1.0]]]))
    >>> p[0, 1].round(6).tolist()
    [0.25, 0.75]
    """
    from ..sim import Learner

    if not isinstance(learner, Learner) or learner.feedback != "full":
        raise TypeError(f"learner must be a full-information expertlab.sim.Learner, got {learner!r}")
    losses = as_real_array(losses, "losses", dtype=np.float64)
    if losses.ndim != 3 or min(losses.shape) < 1:
        raise ValueError(f"losses must have shape (n_reps, horizon, n_experts), got {losses.shape}")
    n_reps, horizon, n = losses.shape
    if awake is not None:
        awake = np.asarray(awake)
        if awake.shape != losses.shape or awake.dtype != np.bool_:
            raise ValueError(f"awake must be a bool array of the shape of losses {losses.shape}, "
                             f"got {awake.dtype}{list(awake.shape)}")
    if keys is not None and not callable(keys):
        raise TypeError(f"keys must be callable keys(t) -> (n_reps,) uint64, got {type(keys).__name__}")
    state = learner.init(n, n_reps)
    ps, rs = np.zeros_like(losses), np.zeros_like(losses)
    for t in range(horizon):
        aw = None if awake is None else awake[:, t]
        key = None if keys is None else keys(t)
        p, state = learner.act(state, aw, key)
        p = np.asarray(p)
        loss = losses[:, t]
        r = (p * loss).sum(axis=1, keepdims=True) - loss
        ps[:, t], rs[:, t] = p, (r if aw is None else np.where(aw, r, 0.0))
        state = learner.update(state, p, (loss, aw), key)
    return ps, rs


def random_losses(n_reps, horizon, n_experts, *, seed=0, best_scale=1.0, p_awake=None):
    """Uniform losses, optionally with sleeping masks, for bound and property tests.

    Parameters
    ----------
    n_reps, horizon, n_experts : int
    seed : int
        Seed of a ``numpy.random.default_rng``.
    best_scale : float
        Expert 0's losses are multiplied by this (below 1 makes it the best).
    p_awake : float, optional
        Each expert awake with this probability; expert 0 is woken in any
        round where nobody else is, so every round has an awake expert.

    Returns
    -------
    losses : array, shape (n_reps, horizon, n_experts)
    awake : bool array of the same shape, or None
    """
    n_reps, horizon, n_experts = (check_int(v, name) for v, name in
                                  ((n_reps, "n_reps"), (horizon, "horizon"), (n_experts, "n_experts")))
    check_array_size((n_reps, horizon, n_experts), "n_reps * horizon * n_experts")
    seed = check_int(seed, "seed", minimum=0)
    best_scale = check_float(best_scale, "best_scale", minimum=0.0, maximum=1.0)
    if p_awake is not None:
        p_awake = check_float(p_awake, "p_awake", minimum=0.0, maximum=1.0)
    rng = np.random.default_rng(seed)
    losses = rng.random((n_reps, horizon, n_experts))
    losses[:, :, 0] *= best_scale
    awake = None
    if p_awake is not None:
        awake = rng.random((n_reps, horizon, n_experts)) < p_awake
        awake[:, :, 0] |= ~awake.any(axis=2)
    return losses, awake


def run_in_cuda_simulator(code: str, timeout: float = 600):
    """Run Python ``code`` in a fresh interpreter with ``NUMBA_ENABLE_CUDASIM=1``.

    The simulator must be switched on before Numba is imported, hence the
    subprocess.  ``code`` prints a JSON object on its last line, which is
    returned; a non-zero exit raises ``AssertionError`` with the end of stderr.
    """
    if not isinstance(code, str):
        raise TypeError(f"code must be Python source (str), got {type(code).__name__}")
    timeout = check_float(timeout, "timeout", positive=True)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
