"""
Tsallis-INF on the minimax instance
===================================

Expected pseudo-regret of 1/2-Tsallis-INF on the minimax instance (K - 1
Bernoulli(1/2) arms and one at 1/2 + sqrt(K/T), rebuilt for each horizon):
it grows as sqrt(T), under the adversarial bound 4 sqrt(KT) + 1.
"""

import numpy as np

from expertlab import sim
from expertlab.bandits import instances, tsallis_inf


def regret_vs_T(s, backend, seed):
    K = s["n_arms"]
    ys = []
    for T in s["horizons"]:
        L = tsallis_inf(**s.get("learner_params", {}))
        res = sim.run(L, instances.minimax(K, T), horizon=T, n_reps=s["n_reps"], seed=seed,
                      backend=backend, checkpoints=[T], metrics=["expected_regret"])
        ys.append(res.metric("expected_regret")[-1])
    x = np.array(s["horizons"], dtype=float)
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="horizon T", ylabel="expected pseudo-regret at T",
                           curves={"4√(KT) + 1": (x, 4 * np.sqrt(K * x) + 1)})


EXPERIMENTS = [
    sim.Experiment("bandits.tsallis_inf-minimax-vs-T", regret_vs_T,
                   quick=dict(n_arms=8, horizons=[1000, 3000, 10_000, 30_000], n_reps=100),
                   full=dict(n_arms=8, horizons=[1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000],
                             n_reps=1000),
                   title="Tsallis-INF on the minimax instance: regret ∝ √T"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
