"""Helpers shared by the expert experiments (not an experiment file: names starting with _ are skipped)."""

import argparse

from expertlab import sim


def horizon_run(learner, instance, s, backend, seed, metric="regret", curves=None, ylabel=None):
    """One run; x = checkpoints, y = the metric at every checkpoint."""
    res = sim.run(learner, instance, horizon=s["horizon"], n_reps=s["n_reps"], seed=seed,
                  backend=sim.pick_backend(learner, backend))
    return sim.Measurement(x=res.checkpoints, y=res.metric(metric), xlabel="round T",
                           ylabel=ylabel or metric.replace("_", " "), curves=curves or {},
                           info={"wall_time": res.wall_time, "backend": res.backend})


def main(experiments):
    """Run a simulation file's experiments from the command line."""
    p = argparse.ArgumentParser()
    p.add_argument("--full", action="store_true")
    p.add_argument("--out", default="rates-out")
    p.add_argument("--backend", default="auto")
    a = p.parse_args()
    for e in experiments:
        chk, _, secs = sim.run_experiment(e, quick=not a.full, backend=a.backend, out=a.out)
        print(f"{chk.summary()} ({secs:.1f} s)")
