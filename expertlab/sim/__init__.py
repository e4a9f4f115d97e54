"""The Monte Carlo engine: the one time loop, results, registries, rate claims, experiments, sweeps and plots."""

from ._protocol import UNITS, EnvSpec, Environment, KernelSpec, Learner, Metric
from ._result import RunResult
from ._engine import (AUTO_COMPILE_WORK, check_checkpoints, checkpoint_grid, is_environment, pick_backend,
                      register_fast_path, replication_keys, run)
from ._losses import FullFeedback, LossSequence
from ._arms import Arms, Pull
from ._registry import (Registered, environments, get_environment, get_learner, learners, register_environment,
                        register_learner)
from ._experiments import (Experiment, Measurement, discover, experiment_main, final_values, horizon_measurement,
                           run_experiment)
from ._plots import plot, plot_check
from ._rates import (DETECTION_POWER, RateCheck, RateClaim, check_rate, claims, detectable_violation_rate,
                     document_claims, get_claim, register_claims)
from ._storage import load_block
from ._sweep import SweepResult, expand_grid, load_sweep, load_sweep_spec, sweep

__all__ = [
    "AUTO_COMPILE_WORK",
    "DETECTION_POWER",
    "Arms",
    "EnvSpec",
    "Environment",
    "Experiment",
    "FullFeedback",
    "KernelSpec",
    "Learner",
    "LossSequence",
    "Measurement",
    "Metric",
    "Pull",
    "RateCheck",
    "RateClaim",
    "Registered",
    "RunResult",
    "SweepResult",
    "UNITS",
    "check_checkpoints",
    "check_rate",
    "checkpoint_grid",
    "claims",
    "detectable_violation_rate",
    "discover",
    "document_claims",
    "environments",
    "expand_grid",
    "experiment_main",
    "final_values",
    "get_claim",
    "get_environment",
    "get_learner",
    "horizon_measurement",
    "is_environment",
    "learners",
    "load_block",
    "load_sweep",
    "load_sweep_spec",
    "pick_backend",
    "plot",
    "plot_check",
    "register_claims",
    "register_environment",
    "register_fast_path",
    "register_learner",
    "replication_keys",
    "run",
    "run_experiment",
    "sweep",
]
