"""The Monte Carlo engine: runs, results, rate claims, experiments, sweeps and plots."""

from ._experiments import (Experiment, Measurement, discover, experiment_main, final_values, horizon_measurement,
                           pick_backend, run_experiment)
from ._plots import plot_check, plot_regret
from ._protocol import FEEDBACK_KINDS, Instance, KernelSpec, Learner
from ._rates import RateCheck, RateClaim, check_rate, claims, document_claims, get_claim, register_claims
from ._run import RunResult, checkpoint_grid, run
from ._storage import load_block
from ._sweep import SweepResult, expand_grid, load_sweep, load_sweep_spec, sweep

__all__ = [
    "FEEDBACK_KINDS",
    "Experiment",
    "Instance",
    "KernelSpec",
    "Learner",
    "Measurement",
    "RateCheck",
    "RateClaim",
    "RunResult",
    "SweepResult",
    "check_rate",
    "checkpoint_grid",
    "claims",
    "discover",
    "expand_grid",
    "experiment_main",
    "document_claims",
    "final_values",
    "get_claim",
    "horizon_measurement",
    "load_block",
    "load_sweep",
    "load_sweep_spec",
    "pick_backend",
    "plot_check",
    "plot_regret",
    "register_claims",
    "run",
    "run_experiment",
    "sweep",
]
