"""The driver, instance and audit shared by the private experts learners.

See :mod:`expertlab.experts._private` for why these learners have their own
record and driver.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from .. import _random
from .._validation import check_float, check_int
from ..sim._losses import LossSequence
from ..sim._engine import checkpoint_grid
from ._privacy import PrivacyCost, compose_advanced, compose_basic
from .instances import _bernoulli_loss, _bernoulli_mean

__all__ = ["PrivateLearner", "PrivateRunResult", "run_private", "audit_private", "realizable"]


class PrivateLearner(NamedTuple):
    """A private learner as a record of pure functions.

    ``init(n_reps, n_experts, key) -> state`` with ``key`` the
    ``(n_reps,)`` ``uint64`` learner keys of the replications;
    ``act(state) -> choice``, the ``(n_reps,)`` int64 experts played;
    ``update(state, loss) -> state`` with ``loss`` of shape
    ``(n_reps, n_experts)``; ``privacy(n_experts) -> PrivacyCost``, the total
    guarantee of the run computed by the accountant from the noise scales
    the learner uses.
    """

    name: str
    init: Callable
    act: Callable
    update: Callable
    privacy: Callable
    params: Mapping[str, Any]

    def __repr__(self) -> str:
        return f"{self.name}(" + ", ".join(f"{k}={v!r}" for k, v in self.params.items()) + ")"


@dataclasses.dataclass(frozen=True)
class PrivateRunResult:
    """Output of :func:`run_private`: ``regret[k, r]`` at ``checkpoints[k]`` in replication ``r``.

    ``choices`` is the ``(n_reps, horizon)`` array of played experts when
    requested, else ``None``.
    """

    learner: str
    checkpoints: np.ndarray
    regret: np.ndarray
    choices: np.ndarray | None
    privacy: PrivacyCost
    wall_time: float

    def mean(self) -> np.ndarray:
        return self.regret.mean(axis=1)


def _uniform(key, t, j):
    """Uniforms of draws ``j`` (``(1, m)`` array) of round ``t`` for the keys ``key`` ``(n_reps,)``."""
    with np.errstate(over="ignore"):
        return _random.uniform(_random.round_key(key, np.uint64(t))[:, None], np.asarray(j, dtype=np.uint64))


def _laplace(u, scale):
    """Laplace(0, scale) by inverse CDF of ``u`` in (0, 1)."""
    return np.where(u < 0.5, scale * np.log(2.0 * u), -scale * np.log(2.0 * (1.0 - u)))


def _check_loss(loss, shape):
    from .._validation import check_losses

    return check_losses(loss, shape, "loss")


def run_private(learner: PrivateLearner, losses, horizon: int, n_reps: int = 100, seed=0, *, rep_offset: int = 0,
                checkpoints=None, record_choices: bool = False) -> PrivateRunResult:
    r"""Run ``n_reps`` replications of a private learner; one Python iteration per round.

    Parameters
    ----------
    learner : PrivateLearner
    losses : LossSequence or array of shape (horizon, n_experts)
        An oblivious instance (losses drawn exactly as :func:`expertlab.sim.run`
        draws them) or a fixed loss matrix shared by all replications.
    horizon, n_reps : int
    seed : int
    rep_offset : int
        Index of the first replication.
    checkpoints : array of int, optional
        Rounds at which the regret is recorded (default :func:`expertlab.sim.checkpoint_grid`).
    record_choices : bool
        Also return the ``(n_reps, horizon)`` played experts.

    Returns
    -------
    PrivateRunResult
        The regret is :math:`\sum_t \ell_{t, I_t} - \min_i L_{t,i}` of the played experts.
    """
    if not isinstance(learner, PrivateLearner):
        raise TypeError(f"learner must be a PrivateLearner, got {type(learner).__name__}")
    horizon = check_int(horizon, "horizon")
    n_reps = check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    if isinstance(losses, LossSequence):
        n = losses.n_experts
        matrix = None
    else:
        matrix = np.asarray(losses, dtype=np.float64)
        if matrix.ndim != 2 or matrix.shape[0] < horizon:
            raise ValueError(f"losses must be an LossSequence or an array of shape (horizon, n_experts) with at least "
                             f"horizon={horizon} rows, got shape {matrix.shape}")
        _check_loss(matrix, matrix.shape)
        n = matrix.shape[1]
    ck = checkpoint_grid(horizon) if checkpoints is None else np.unique(np.asarray(checkpoints, dtype=np.int64))
    if ck.size < 1 or ck[0] < 1 or ck[-1] > horizon:
        raise ValueError(f"checkpoints must lie in [1, horizon={horizon}]")
    seed_u = _random.seed_to_uint64(seed)
    with np.errstate(over="ignore"):
        rk = _random.rep_key(np.asarray([seed_u], dtype=np.uint64),
                             np.arange(rep_offset, rep_offset + n_reps, dtype=np.uint64))
        lk = _random.stream_key(rk, _random.LEARNER_STREAM)
    idx = np.arange(n, dtype=np.int64)[None, :]
    rows = np.arange(n_reps)
    t0 = time.perf_counter()
    state = learner.init(n_reps, n, lk)
    cum = np.zeros(n_reps)
    L = np.zeros((n_reps, n))
    out = np.zeros((ck.size, n_reps))
    ch = np.zeros((n_reps, horizon), dtype=np.int64) if record_choices else None
    c = 0
    for t in range(horizon):
        if matrix is None:
            with np.errstate(over="ignore"):
                key = _random.round_key(rk[:, None], np.uint64(t))
                loss = np.broadcast_to(np.asarray(losses.loss(losses.data, key, t, idx), dtype=np.float64),
                                       (n_reps, n))
        else:
            loss = np.broadcast_to(matrix[t], (n_reps, n))
        i_t = learner.act(state)
        if ch is not None:
            ch[:, t] = i_t
        cum += loss[rows, i_t]
        L += loss
        state = learner.update(state, loss)
        if c < ck.size and t + 1 == ck[c]:
            out[c] = cum - L.min(axis=1)
            c += 1
    return PrivateRunResult(learner=learner.name, checkpoints=ck, regret=out, choices=ch,
                            privacy=learner.privacy(n), wall_time=time.perf_counter() - t0)


def realizable(n_experts: int = 8, p: float = 0.5, best: int = 0) -> LossSequence:
    """A realizable instance: expert ``best`` never loses, the others lose iid ``Bernoulli(p)``.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import hedge
    >>> inst = realizable(4, 0.5)
    >>> float(sim.run(hedge(), inst, horizon=50, n_reps=3, seed=0).final["expert_regret"][:, 0].max()) >= 0
    True
    """
    n = check_int(n_experts, "n_experts", minimum=2)
    p = check_float(p, "p", minimum=0.0, maximum=1.0)
    best = check_int(best, "best", minimum=0, maximum=n - 1)
    probs = np.full(n, p)
    probs[best] = 0.0  # uniform() < 0 never holds: zero loss
    return LossSequence(name="realizable", n_experts=n, loss=_bernoulli_loss, data=(probs,), mean=_bernoulli_mean,
                    params={"n_experts": n, "p": p, "best": best})


def _budget(epsilon, delta):
    eps = check_float(epsilon, "epsilon", positive=True)
    dlt = check_float(delta, "delta", minimum=0.0, maximum=0.5)
    return eps, dlt


def _total(per_step: PrivacyCost, k: int, delta: float) -> PrivacyCost:
    """The accountant's total for ``k`` adaptive runs of ``per_step`` (basic, or the better of basic and advanced)."""
    basic = compose_basic([per_step] * k)
    if delta == 0.0 or math.isinf(per_step.epsilon):
        return basic
    adv = compose_advanced(per_step, k, delta)
    return adv if adv.epsilon < basic.epsilon else basic



def audit_private(learner: PrivateLearner, losses_a, losses_b, n_reps: int = 100_000, seed=0, *,
                  epsilon: float | None = None, level: float = 0.99):
    """Empirical privacy audit of ``learner`` on two neighbouring loss matrices.

    Runs ``n_reps`` replications on each matrix (shape ``(horizon,
    n_experts)``, differing in one row), codes each replication's sequence of
    played experts as an integer in base ``n_experts`` and hands the two
    samples to :func:`expertlab.experts.privacy_audit` with
    ``epsilon`` (default: the learner's own :math:`\\varepsilon`; pass the
    private variant's value to audit a non-private one).  Needs ``horizon * log2(n_experts) < 63``.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[1.0, 0.0]] * 6)
    >>> b = a.copy(); b[0] = 0.0
    >>> from expertlab.experts import sparse_vector_experts
    >>> L = sparse_vector_experts(2.0, 6, max_switches=2, threshold=1.0)
    >>> audit_private(L, a, b, n_reps=20_000).passed
    True
    >>> audit_private(sparse_vector_experts(2.0, 6, max_switches=2, threshold=1.0, noise=False), a, b,
    ...               n_reps=20_000, epsilon=2.0).passed
    False
    """
    from ._privacy import privacy_audit

    a = np.asarray(losses_a, dtype=np.float64)
    b = np.asarray(losses_b, dtype=np.float64)
    if a.ndim != 2 or a.shape != b.shape:
        raise ValueError(f"losses_a and losses_b must be 2-D arrays of the same shape, got {a.shape} and {b.shape}")
    horizon, n = a.shape
    if int(np.sum(np.any(a != b, axis=1))) > 1:
        raise ValueError("losses_a and losses_b must differ in at most one round (row)")
    if horizon * math.log2(max(n, 2)) >= 63:
        raise ValueError(f"horizon * log2(n_experts) must be < 63 to code the played sequence, got {horizon} rounds "
                         f"of {n} experts")
    codes = []
    for m in (a, b):
        ch = run_private(learner, m, horizon, n_reps, seed, checkpoints=[horizon], record_choices=True).choices
        codes.append(ch @ (n ** np.arange(horizon, dtype=np.int64)))
    eps = learner.privacy(n).epsilon if epsilon is None else epsilon
    return privacy_audit(codes[0], codes[1], eps, level=level)
