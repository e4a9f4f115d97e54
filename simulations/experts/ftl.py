"""
Follow the leader
=================

Follow the leader is optimal on easy data but has linear regret on the
alternating sequence, where the leader is always the expert about to lose.
"""

import numpy as np

from expertlab import sim
from expertlab.experts import hedge, instances


def alternating(s, backend, seed):
    T = s["horizon"]
    losses = np.zeros((T, 2))
    losses[0] = (0.5, 0.0)
    losses[1::2, 1] = 1.0  # rounds 2, 4, ...: expert 2 loses
    losses[2::2, 0] = 1.0  # rounds 3, 5, ...: expert 1 loses
    inst = instances.loss_matrix(losses)
    base = sim.run(hedge(), inst, horizon=T, n_reps=2, seed=seed, backend=backend)
    learner = sim.get_learner(s.get("learner", "ftl")).factory(**s.get("learner_params", {}))  # or another
    m = sim.horizon_measurement(learner, inst, s, backend, seed,
                                curves={"anytime Hedge": (base.checkpoints, base.mean())})
    return m


EXPERIMENTS = [
    sim.Experiment("ftl.linear-on-alternating", alternating,
                   quick=dict(horizon=10_000, n_reps=4), full=dict(horizon=1_000_000, n_reps=4),
                   title="FTL on the alternating sequence: regret ∝ T"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
