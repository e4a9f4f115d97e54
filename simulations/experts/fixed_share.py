"""
Fixed share
===========

Fixed share tracks a switching best expert; Hedge does not.
"""

import numpy as np

from expertlab import sim
from expertlab.experts import fixed_share, hedge, instances


def tracking_vs_T(s, backend, seed):
    m, n = s["n_switches"], s["n_experts"]
    ys, hedge_means = [], []
    for T in s["horizons"]:
        inst = instances.piecewise_best(n, period=-(-T // (m + 1)), gap=s["gap"])  # m switches in T rounds
        L = fixed_share(**s.get("learner_params", {"horizon": T, "n_switches": m}))  # or a mistuned one
        r = sim.run(L, inst, horizon=T, n_reps=s["n_reps"], seed=seed, backend=backend,
                    checkpoints=[T])
        ys.append(r.metric("tracking_regret")[-1])
        H = hedge(horizon=T)
        h = sim.run(H, inst, horizon=T, n_reps=min(50, s["n_reps"]), seed=seed,
                    backend=backend, checkpoints=[T])
        hedge_means.append(h.mean("tracking_regret")[-1])
    x = np.array(s["horizons"], dtype=float)
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="horizon T", ylabel="tracking regret (m switches)",
                           curves={"Hedge tuned to T (no sharing)": (x, np.array(hedge_means))})


EXPERIMENTS = [
    sim.Experiment("fixed_share.tracking-vs-T", tracking_vs_T,
                   quick=dict(horizons=[1000, 3000, 10_000, 30_000], n_switches=3, n_experts=10, gap=0.2,
                              n_reps=200),
                   full=dict(horizons=[1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000], n_switches=3,
                             n_experts=10, gap=0.2, n_reps=1000),
                   title="Fixed share on a best expert switching 3 times: tracking regret ∝ √T"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
