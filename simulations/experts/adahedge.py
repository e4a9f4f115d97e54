"""
AdaHedge
========

AdaHedge adapts: bounded regret with a perfect expert, sqrt(T) on fair coins.
"""

import math

import numpy as np

from expertlab import sim
from expertlab.experts import adahedge, hedge, instances


def easy(s, backend, seed):
    inst = instances.needle(s["n_experts"], gap=0.5)  # expert 0 never loses: L* = 0
    base = sim.run(hedge(), inst, horizon=s["horizon"], n_reps=min(s["n_reps"], 100), seed=seed,
                   backend=backend)
    # settings may name another registered learner (and its parameters) to run in AdaHedge's place
    learner = sim.get_learner(s.get("learner", "adahedge")).factory(**s.get("learner_params", {}))
    return sim.horizon_measurement(learner, inst, s, backend, seed,
                       curves={"anytime Hedge (not adaptive)": (base.checkpoints, base.mean())})


def hard(s, backend, seed):
    n = s["n_experts"]
    x = sim.checkpoint_grid(s["horizon"]).astype(float)
    return sim.horizon_measurement(adahedge(), instances.fair_coins(n), s, backend, seed,
                       curves={"√(T ln N / 2)": (x, np.sqrt(x * math.log(n) / 2))})


EXPERIMENTS = [
    sim.Experiment("adahedge.easy-flat", easy,
                   quick=dict(horizon=10_000, n_experts=10, n_reps=200),
                   full=dict(horizon=1_000_000, n_experts=10, n_reps=1000),
                   title="AdaHedge with a perfect expert: regret flat in T"),
    sim.Experiment("adahedge.hard-sqrt", hard,
                   quick=dict(horizon=10_000, n_experts=10, n_reps=400),
                   full=dict(horizon=1_000_000, n_experts=10, n_reps=2000),
                   title="AdaHedge on fair coins: regret ∝ √T"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
