"""
Successive elimination: bounded regret once the best arm is isolated
====================================================================

Nine Bernoulli arms 0.1, ..., 0.9, confidence 0.05: successive elimination
drops every suboptimal arm after finitely many pulls, so its pseudo-regret
is flat in T afterwards.
"""

import numpy as np

from expertlab import sim
from expertlab.bandits import instances


def flat_regret(s, backend, seed):
    # settings may name another registered learner (and its parameters) to run in its place
    learner = sim.get_learner(s.get("learner", "successive_elimination")).factory(
        **s.get("learner_params", {"delta": s["delta"]}))
    return sim.horizon_measurement(learner, instances.bernoulli(np.arange(1, 10) / 10),
                                   s, backend, seed, metric="regret", ylabel="pseudo-regret")


EXPERIMENTS = [
    sim.Experiment("bandits.successive_elimination-flat", flat_regret,
                   quick=dict(horizon=100_000, n_reps=200, delta=0.05),
                   full=dict(horizon=1_000_000, n_reps=1000, delta=0.05),
                   title="Successive elimination on nine Bernoulli arms: flat pseudo-regret"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
