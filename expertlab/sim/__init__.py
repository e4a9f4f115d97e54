"""The Monte Carlo engine: runs, results, rate claims, sweeps and plots."""

from ._protocol import FEEDBACK_KINDS, Instance, KernelSpec, Learner
from ._run import RunResult, checkpoint_grid, run

__all__ = [
    "FEEDBACK_KINDS",
    "Instance",
    "KernelSpec",
    "Learner",
    "RunResult",
    "checkpoint_grid",
    "run",
]
