"""``RunResult``: what every run of :func:`expertlab.sim.run` returns, whatever the family."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import numpy as np

from ._protocol import short_params

__all__ = ["RunResult"]


@dataclasses.dataclass(frozen=True, repr=False, eq=False)
class RunResult:
    """Metrics of a batch of replications on a checkpoint grid.

    The axis order is the same for every family: ``metrics[name]`` is
    ``(n_checkpoints, n_reps)`` and ``final[name]`` has the replication axis
    first.

    Attributes
    ----------
    learner, environment : str
        Names of the learner and the environment.
    learner_params, environment_params : mapping
    unit : str
        What one step of ``horizon`` is: ``"round"``, ``"episode"``,
        ``"step"`` or ``"batch"``.
    horizon, n_reps : int
    seed : int
        The ``uint64`` root seed used (also when ``seed=None`` was passed).
    rep_offset : int
        Index of the first replication: replications ``rep_offset ..
        rep_offset + n_reps - 1`` are the same whatever the batching.
    backend : str
        The backend that actually ran (``"numpy"``, ``"numba"``, ``"cuda"``, ``"cupy"``).
    checkpoints : ndarray of int, shape (n_checkpoints,)
        Steps (1-based counts) after which metrics were recorded.
    metrics : mapping of str to ndarray (n_checkpoints, n_reps)
    final : mapping of str to ndarray (n_reps, ...)
        Per-replication values at the end of the run (for procedures with a
        stopping time: ``stopping_time``, ``stopped`` and ``answer``).
    wall_time : float
        Seconds spent in the time loop (compiling a compiled path's kernel,
        or loading it from the disk cache, happens before and is not
        counted).
    """

    learner: str
    environment: str
    learner_params: Mapping[str, Any]
    environment_params: Mapping[str, Any]
    unit: str
    horizon: int
    n_reps: int
    seed: int
    rep_offset: int
    backend: str
    checkpoints: np.ndarray
    metrics: Mapping[str, np.ndarray]
    final: Mapping[str, np.ndarray]
    wall_time: float

    def metric(self, name: str = "regret") -> np.ndarray:
        """The ``(n_checkpoints, n_reps)`` array of metric ``name``."""
        if not isinstance(name, str):
            raise TypeError(f"metric must be a metric name (str), got {type(name).__name__}")
        if name not in self.metrics:
            raise KeyError(f"unknown metric {name!r}; this run recorded {sorted(self.metrics)}")
        return self.metrics[name]

    def mean(self, metric: str = "regret") -> np.ndarray:
        """Mean over replications at each checkpoint, shape ``(n_checkpoints,)``."""
        return self.metric(metric).mean(axis=1)

    def stderr(self, metric: str = "regret") -> np.ndarray:
        """Standard error of the mean at each checkpoint (``ddof=1``; NaN with one replication)."""
        x = self.metric(metric)
        if x.shape[1] < 2:
            return np.full(x.shape[0], np.nan)
        return x.std(axis=1, ddof=1) / math.sqrt(x.shape[1])

    @property
    def updates_per_second(self) -> float:
        """Replication-steps per second of wall time: ``n_reps * horizon / wall_time``."""
        return self.n_reps * self.horizon / max(self.wall_time, 1e-12)

    @staticmethod
    def concat(results) -> "RunResult":
        """Join runs of consecutive replication blocks (same configuration) along replications."""
        results = sorted(results, key=lambda r: r.rep_offset)
        if not results:
            raise ValueError("results must hold at least one RunResult")
        first = results[0]
        for a, b in zip(results, results[1:]):
            if b.rep_offset != a.rep_offset + a.n_reps:
                raise ValueError("results must be consecutive replication blocks")
            if (a.learner, a.environment, a.horizon, a.seed, a.unit) != (
                    b.learner, b.environment, b.horizon, b.seed, b.unit):
                raise ValueError("results must come from the same learner, environment, horizon and seed")
            if set(a.metrics) != set(b.metrics) or not np.array_equal(a.checkpoints, b.checkpoints):
                raise ValueError("results must record the same metrics at the same checkpoints")
        return dataclasses.replace(
            first,
            n_reps=sum(r.n_reps for r in results),
            metrics={k: np.concatenate([r.metrics[k] for r in results], axis=1) for k in first.metrics},
            final={k: np.concatenate([r.final[k] for r in results], axis=0) for k in first.final},
            wall_time=sum(r.wall_time for r in results),
        )

    def __repr__(self) -> str:
        names = ", ".join(self.metrics)
        head = f"RunResult({self.learner}({short_params(self.learner_params)}) on {self.environment}"
        lines = [head + ")",
                 f"  {self.n_reps} reps x {self.horizon} {self.unit}s, seed={self.seed}, "
                 f"rep_offset={self.rep_offset}, backend={self.backend!r}, {self.wall_time:.3g} s",
                 f"  metrics (n_ck={self.checkpoints.size}, n_reps={self.n_reps}): {names}"]
        if "regret" in self.metrics:
            m, se = self.mean()[-1], self.stderr()[-1]
            lines.append(f"  final mean regret {m:.6g} +- {se:.2g}")
        if self.final:
            lines.append(f"  final: {', '.join(self.final)}")
        return "\n".join(lines)
