"""
Exp4: bandits with expert advice
================================

Exponential weights over expert policies, with importance-weighted losses of
the pulled arm, competes with the best of N experts at regret √(2TK ln N):
run with η tuned to each horizon, the regret against the best expert grows
as √T.
"""

import math

import numpy as np

from expertlab import sim
from expertlab.bandits import contextual_policies, exp4


def regret_vs_T(s, backend, seed):
    inst = contextual_policies(s["n_contexts"], s["n_arms"], s["n_experts"], gap=s["gap"])
    # exp4() tunes eta to each run's horizon; the metric averages out the arm's draw given the context.
    # "auto" would take the NumPy path for the short horizons; the compiled path gives the same numbers
    # (tested to 1e-10) and its kernel is cached on disk, so the sweep uses it throughout
    backend = "numba" if backend == "auto" else backend
    # ``s["learner_params"]`` (e.g. a fixed ``eta``) swaps in a mistuned Exp4 (a mutant the claim must reject)
    ys = [sim.run(exp4(**s.get("learner_params", {})), inst, horizon=T, n_reps=s["n_reps"], seed=seed,
                  backend=backend, checkpoints=[T],
                  metrics=["expected_best_expert_regret"]).metric("expected_best_expert_regret")[-1]
          for T in s["horizons"]]
    x = np.array(s["horizons"], dtype=float)
    K, N = s["n_arms"], s["n_experts"]
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="horizon T", ylabel="regret against the best expert",
                           curves={"bound √(2TK ln N)": (x, np.sqrt(2 * x * K * math.log(N)))})


EXPERIMENTS = [
    sim.Experiment("bandits.exp4-regret-vs-T", regret_vs_T,
                   quick=dict(n_contexts=4, n_arms=3, n_experts=32, gap=0.2, horizons=[1000, 3000, 10_000, 30_000, 100_000],
                              n_reps=100),
                   full=dict(n_contexts=8, n_arms=5, n_experts=256, gap=0.2,
                             horizons=[1000, 3000, 10_000, 30_000, 100_000, 300_000], n_reps=500),
                   title="Exp4 tuned to T: regret against the best expert ∝ √T"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
