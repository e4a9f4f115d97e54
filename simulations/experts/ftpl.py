"""
Follow the perturbed leader
===========================

FTPL with Gumbel perturbations has exactly Hedge's expected regret.
"""

import numpy as np

from expertlab import sim
from expertlab.experts import ftpl, hedge, instances


def paired_difference(s, backend, seed):
    T = s["horizon"]
    inst = instances.needle(s["n_experts"], s["gap"])
    F, H = ftpl(**s.get("learner_params", {"noise": "gumbel"})), hedge()  # learner_params: another FTPL
    # same seed: the same losses in every replication (the instance stream ignores the learner)
    f = sim.run(F, inst, horizon=T, n_reps=s["n_reps"], seed=seed, backend=backend)
    h = sim.run(H, inst, horizon=T, n_reps=s["n_reps"], seed=seed, backend=backend)
    d = f.metrics["regret"][-1:] - h.metrics["regret"][-1:]
    return sim.Measurement(x=np.array([float(T)]), y=d, xlabel="T", ylabel="regret(FTPL-Gumbel) − regret(Hedge)",
                           info={"ftpl_mean": float(f.mean()[-1]), "hedge_mean": float(h.mean()[-1])})


EXPERIMENTS = [
    sim.Experiment("ftpl.gumbel-equals-hedge", paired_difference,
                   quick=dict(horizon=1000, n_experts=10, gap=0.05, n_reps=4000),
                   full=dict(horizon=10_000, n_experts=10, gap=0.05, n_reps=100_000),
                   title="FTPL (Gumbel) − Hedge, same losses: mean difference 0"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
