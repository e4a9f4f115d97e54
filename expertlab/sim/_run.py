"""``sim.run``: the one place that loops over rounds."""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, Mapping

import numpy as np

from .. import _random
from .._backend import asnumpy, check_backend, namespace_for_backend
from .._validation import check_int
from ._protocol import Instance, Learner

__all__ = ["run", "RunResult", "checkpoint_grid"]


def checkpoint_grid(horizon: int, per_decade: int = 10) -> np.ndarray:
    """Log-spaced rounds at which metrics are recorded.

    About ``per_decade`` points per decade, always including every power of
    ten up to ``horizon`` and ``horizon`` itself; sorted, unique, starting at 1.

    Examples
    --------
    >>> checkpoint_grid(100, per_decade=2).tolist()
    [1, 3, 10, 32, 100]
    """
    horizon = check_int(horizon, "horizon")
    per_decade = check_int(per_decade, "per_decade")
    top = math.log10(horizon)
    grid = np.round(10.0 ** np.linspace(0.0, top, int(math.ceil(top * per_decade)) + 1)).astype(np.int64)
    powers = 10 ** np.arange(int(math.floor(top + 1e-12)) + 1, dtype=np.int64)
    grid = np.concatenate([grid, powers[powers <= horizon], [horizon]])
    return np.unique(grid[(grid >= 1) & (grid <= horizon)])


@dataclasses.dataclass(frozen=True)
class RunResult:
    """Metrics of a batch of replications on a checkpoint grid.

    Attributes
    ----------
    checkpoints : ndarray of int, shape (n_checkpoints,)
        Rounds after which metrics were recorded.
    regret : ndarray, shape (n_checkpoints, n_reps)
        External regret ``sum_t <p_t, l_t> - min_i L_{t,i}`` of each replication
        (bandit runs: the pseudo-regret, see :mod:`expertlab.sim._bandit_run`).
    metrics : mapping of str to ndarray (n_checkpoints, n_reps)
        Further metrics the instance declares: ``sleeping_regret`` (the
        largest regret of an expert on its own awake rounds),
        ``tracking_regret`` (against the instance's switching comparator) and
        ``pseudo_regret`` (``sum_t <p_t, mu_t> - min_i sum_t mu_{t,i}`` for
        instances with known expected losses).
    final : mapping of str to ndarray
        ``expert_regret`` of shape ``(n_reps, n_experts)``: each expert's
        (sleeping) regret at the horizon; for bandit runs ``pulls``, the pull
        counts of shape ``(n_reps, n_arms)``.
    seed : int
        The seed used (also when ``seed=None`` was passed).
    rep_offset : int
        Index of the first replication: replications ``rep_offset ..
        rep_offset + n_reps - 1`` are the same whatever the batching.
    """

    learner: str
    instance: str
    learner_params: Mapping[str, Any]
    instance_params: Mapping[str, Any]
    horizon: int
    n_reps: int
    seed: int
    rep_offset: int
    backend: str
    checkpoints: np.ndarray
    regret: np.ndarray
    metrics: Mapping[str, np.ndarray]
    final: Mapping[str, np.ndarray]
    wall_time: float

    def metric(self, name: str = "regret") -> np.ndarray:
        """The ``(n_checkpoints, n_reps)`` array of metric ``name``."""
        if name == "regret":
            return self.regret
        if name not in self.metrics:
            raise KeyError(f"unknown metric {name!r}; this run has {['regret', *self.metrics]}")
        return self.metrics[name]

    def mean(self, metric: str = "regret") -> np.ndarray:
        """Mean over replications at each checkpoint."""
        return self.metric(metric).mean(axis=1)

    def stderr(self, metric: str = "regret") -> np.ndarray:
        """Standard error of the mean at each checkpoint (``ddof=1``)."""
        x = self.metric(metric)
        if x.shape[1] < 2:
            return np.full(x.shape[0], np.nan)
        return x.std(axis=1, ddof=1) / math.sqrt(x.shape[1])

    @property
    def updates_per_second(self) -> float:
        """Expert-updates per second of wall time: ``n_reps * horizon * n_experts / wall_time``.

        For bandit runs ``n_experts`` is the number of arms.
        """
        n = (self.final["expert_regret"] if "expert_regret" in self.final else self.final["pulls"]).shape[1]
        return self.n_reps * self.horizon * n / max(self.wall_time, 1e-12)

    @staticmethod
    def concat(results) -> "RunResult":
        """Join runs of consecutive replication blocks (same config) along replications."""
        results = sorted(results, key=lambda r: r.rep_offset)
        if not results:
            raise ValueError("results must hold at least one RunResult")
        first = results[0]
        for a, b in zip(results, results[1:]):
            if b.rep_offset != a.rep_offset + a.n_reps:
                raise ValueError("results must be consecutive replication blocks")
            if (a.learner, a.instance, a.horizon, a.seed) != (b.learner, b.instance, b.horizon, b.seed):
                raise ValueError("results must come from the same learner, instance, horizon and seed")
        return dataclasses.replace(
            first,
            n_reps=sum(r.n_reps for r in results),
            regret=np.concatenate([r.regret for r in results], axis=1),
            metrics={k: np.concatenate([r.metrics[k] for r in results], axis=1) for k in first.metrics},
            final={k: np.concatenate([r.final[k] for r in results], axis=0) for k in first.final},
            wall_time=sum(r.wall_time for r in results),
        )


def run(
    learner: Learner,
    instance: Instance,
    horizon: int,
    n_reps: int = 100,
    seed=0,
    backend: str = "numpy",
    *,
    rep_offset: int = 0,
    checkpoints=None,
) -> RunResult:
    """Run ``n_reps`` replications of ``learner`` on ``instance`` for ``horizon`` rounds.

    Parameters
    ----------
    learner : Learner
        A full-information learner (e.g. :func:`expertlab.experts.hedge`) or a
        bandit learner (``feedback == "bandit"``, e.g.
        :func:`expertlab.bandits.ucb1`), which sees only the pulled arm's
        outcome (contract and metrics: :mod:`expertlab.sim._bandit_run`).
    instance : Instance or BanditInstance
        A loss sequence (e.g. :func:`expertlab.experts.instances.fair_coins`),
        or for a bandit learner a set of arms (e.g.
        :func:`expertlab.bandits.instances.bernoulli`).
    horizon : int
        Number of rounds ``T >= 1``.
    n_reps : int
        Number of replications, advanced together.
    seed : int, SeedSequence or None
        Root seed; every draw is a pure function of (seed, replication, round,
        index), so results do not depend on ``backend`` or on blocking.
    backend : {"numpy", "numba", "cuda", "cupy"}
        ``numpy``/``cupy``: the learner's array code, one Python iteration per
        round for all replications.  ``numba``: the fused CPU kernel (round loop
        compiled, ``prange`` over replications).  ``cuda``: the same body as a
        CUDA kernel, one thread per replication.
    rep_offset : int
        Index of the first replication (for splitting a run into blocks).
    checkpoints : array of int, optional
        Rounds at which to record metrics; default :func:`checkpoint_grid`.

    Returns
    -------
    RunResult
        For a bandit learner ``regret`` is the pseudo-regret, ``metrics``
        holds ``pseudo_regret``, ``reward`` and, where they apply,
        ``expected_regret``, ``realised_regret`` and ``dynamic_regret``, and
        ``final`` holds the pull counts ``pulls`` of shape ``(n_reps, n_arms)``.
    """
    if not isinstance(learner, Learner):
        raise TypeError(f"learner must be a Learner (e.g. expertlab.experts.hedge()), got {type(learner).__name__}")
    if learner.feedback == "bandit":
        return _run_bandit(learner, instance, horizon, n_reps, seed, backend, rep_offset, checkpoints)
    if not isinstance(instance, Instance):
        raise TypeError(f"instance must be an Instance, got {type(instance).__name__}")
    if learner.feedback != "full":
        raise ValueError(f"sim.run drives full-information and bandit learners; {learner.name} declares "
                         f"feedback={learner.feedback!r}")
    horizon = check_int(horizon, "horizon")
    n_reps = check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    check_backend(backend)
    if instance.name == "loss_matrix" and horizon > instance.data[0].shape[0]:
        raise ValueError(f"horizon={horizon} exceeds the {instance.data[0].shape[0]} rows of the loss matrix")
    seed_u = _random.seed_to_uint64(seed)
    ckpts = _checkpoints(checkpoints, horizon)
    n = instance.n_experts
    n_ck = ckpts.size
    out_regret = np.zeros((n_ck, n_reps))
    out_sleep = np.zeros((n_ck, n_reps)) if instance.awake is not None else np.zeros((1, 1))
    out_track = np.zeros((n_ck, n_reps)) if instance.comparator is not None else np.zeros((1, 1))
    out_pseudo = np.zeros((n_ck, n_reps)) if instance.mean is not None else np.zeros((1, 1))
    out_expert = np.zeros((n_reps, n))

    t0 = time.perf_counter()
    if backend in ("numba", "cuda"):
        if learner.kernel is None:
            raise ValueError(
                f"learner {learner.name!r} has no compiled kernel; use backend='numpy' or 'cupy' "
                f"(backends with kernels: numba, cuda for hedge-family learners)")
        from . import _kernels

        spec = learner.kernel
        prm = np.ascontiguousarray(spec.params, dtype=np.float64)
        data = tuple(np.ascontiguousarray(a) for a in instance.data)
        if backend == "numba":
            drive = _kernels.numba_driver(spec, instance)
        else:
            drive = _kernels.cuda_driver(spec, instance)
        # uint64 arithmetic wraps by design; the CUDA simulator evaluates it on NumPy scalars.
        with np.errstate(over="ignore"):
            drive(prm, data, seed_u, np.int64(rep_offset), np.int64(horizon), ckpts, np.int64(n),
                  out_regret, out_sleep, out_track, out_pseudo, out_expert)
    else:
        xp = namespace_for_backend(backend)
        with np.errstate(over="ignore"):  # uint64 hashing wraps by design
            _run_array(xp, learner, instance, horizon, n_reps, seed_u, rep_offset, ckpts,
                       out_regret, out_sleep, out_track, out_pseudo, out_expert)
    wall = time.perf_counter() - t0

    metrics = {}
    if instance.awake is not None:
        metrics["sleeping_regret"] = out_sleep
    if instance.comparator is not None:
        metrics["tracking_regret"] = out_track
    if instance.mean is not None:
        metrics["pseudo_regret"] = out_pseudo
    return RunResult(
        learner=learner.name,
        instance=instance.name,
        learner_params=dict(learner.params),
        instance_params=dict(instance.params),
        horizon=horizon,
        n_reps=n_reps,
        seed=int(seed_u),
        rep_offset=rep_offset,
        backend=backend,
        checkpoints=ckpts,
        regret=out_regret,
        metrics=metrics,
        final={"expert_regret": out_expert},
        wall_time=wall,
    )


def _checkpoints(checkpoints, horizon):
    if checkpoints is None:
        return checkpoint_grid(horizon)
    ckpts = np.unique(np.asarray(checkpoints, dtype=np.int64))
    if ckpts.size == 0 or ckpts[0] < 1 or ckpts[-1] > horizon:
        raise ValueError(f"checkpoints must be a non-empty set of rounds in [1, {horizon}]")
    return ckpts


def _run_bandit(learner, instance, horizon, n_reps, seed, backend, rep_offset, checkpoints):
    from ._bandit_run import run_bandit

    horizon = check_int(horizon, "horizon")
    n_reps = check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    check_backend(backend)
    seed_u = _random.seed_to_uint64(seed)
    ckpts = _checkpoints(checkpoints, horizon)
    regret, metrics, final, wall = run_bandit(learner, instance, horizon, n_reps, seed_u, backend, rep_offset,
                                              ckpts)
    return RunResult(learner=learner.name, instance=instance.name, learner_params=dict(learner.params),
                     instance_params=dict(instance.params), horizon=horizon, n_reps=n_reps, seed=int(seed_u),
                     rep_offset=rep_offset, backend=backend, checkpoints=ckpts, regret=regret, metrics=metrics,
                     final=final, wall_time=wall)


def _run_array(xp, learner, instance, horizon, n_reps, seed_u, rep_offset, ckpts,
               out_regret, out_sleep, out_track, out_pseudo, out_expert):
    """Reference path: array code over ``xp``, one Python iteration per round."""
    n = instance.n_experts
    reps = xp.arange(rep_offset, rep_offset + n_reps, dtype=xp.uint64)
    seed_arr = xp.asarray([seed_u], dtype=xp.uint64)
    rk = _random.rep_key(seed_arr, reps)
    lk = _random.stream_key(rk, _random.LEARNER_STREAM)
    rk_col = rk[:, None]
    idx = xp.arange(n, dtype=xp.int64)[None, :]
    data = tuple(xp.asarray(a) for a in instance.data)
    has_awake = instance.awake is not None
    has_comp = instance.comparator is not None
    has_mean = instance.mean is not None
    cum_mu = xp.zeros(n_reps)
    M = xp.zeros((1, n))
    state = learner.init(n_reps, n, xp)
    cum = xp.zeros(n_reps)
    L = xp.zeros((n_reps, n))
    Rs = xp.zeros((n_reps, n)) if has_awake else None
    track = xp.zeros(n_reps)
    shape = (n_reps, n)
    c = 0
    ck = [int(x) for x in ckpts]
    rows = xp.arange(n_reps)
    for t in range(horizon):
        tt = np.uint64(t)
        key = _random.round_key(rk_col, tt)
        aw = None
        if has_awake:
            aw = xp.broadcast_to(xp.asarray(instance.awake(data, key, t, idx), dtype=xp.bool), shape)
        p = learner.act(state, _random.round_key(lk, tt), aw)
        loss = xp.broadcast_to(xp.asarray(instance.loss(data, key, t, idx), dtype=xp.float64), shape)
        mix = xp.sum(p * loss, axis=1)
        cum += mix  # the runner's own accumulators are updated in place
        L += loss
        if has_awake:
            Rs += xp.where(aw, mix[:, None] - loss, 0.0)
        if has_comp:
            b = int(instance.comparator(data, t))
            track += mix - loss[rows, b]
        if has_mean:
            mu = xp.broadcast_to(xp.asarray(instance.mean(data, t, idx), dtype=xp.float64), (1, n))
            M += mu
            cum_mu += xp.sum(p * mu, axis=1)
        state = learner.update(state, p, loss, aw, check=False)
        if c < len(ck) and t + 1 == ck[c]:
            out_regret[c] = asnumpy(cum - xp.min(L, axis=1))
            if has_awake:
                out_sleep[c] = asnumpy(xp.max(Rs, axis=1))
            if has_comp:
                out_track[c] = asnumpy(track)
            if has_mean:
                out_pseudo[c] = asnumpy(cum_mu - xp.min(M))
            c += 1
    out_expert[...] = asnumpy(Rs if has_awake else cum[:, None] - L)
