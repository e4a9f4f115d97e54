"""
Second-order and quantile methods
=================================

Squint, ML-Prod, BOA and AdaNormalHedge with a perfect expert: regret bounded in T.
"""

from expertlab import sim
from expertlab.experts import hedge, instances


def _easy(name):
    def measure(s, backend, seed):
        inst = instances.needle(s["n_experts"], gap=0.5)  # expert 0 never loses: L* = 0
        base = sim.run(hedge(), inst, horizon=s["horizon"], n_reps=min(s["n_reps"], 100), seed=seed,
                       backend=backend)
        # settings may name another registered learner (and its parameters) to run in its place
        learner = sim.get_learner(s.get("learner", name)).factory(**s.get("learner_params", {}))
        return sim.horizon_measurement(learner, inst, s, backend, seed,
                           curves={"anytime Hedge (not adaptive)": (base.checkpoints, base.mean())})

    return measure


EXPERIMENTS = [
    sim.Experiment(f"{name}.easy-flat", _easy(name),
                   quick=dict(horizon=3000, n_experts=10, n_reps=100),
                   full=dict(horizon=100_000, n_experts=10, n_reps=200),
                   title=f"{name} with a perfect expert: regret flat in T")
    for name in ("squint", "ml_prod", "boa", "adanormalhedge")
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
