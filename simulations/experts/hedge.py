"""
Hedge
=====

Regret against T on fair coins, pseudo-regret against ln N, and the exact
fair-coin value.
"""

import math

import numpy as np

from expertlab import sim
from expertlab.experts import hedge, instances


def regret_vs_T(s, backend, seed):
    n = s["n_experts"]
    x = sim.checkpoint_grid(s["horizon"]).astype(float)
    bound = np.sqrt(2 * x * math.log(n)) + math.sqrt(math.log(n) / 8)
    return sim.horizon_measurement(hedge(), instances.fair_coins(n), s, backend, seed,
                       curves={"anytime bound √(2T ln N)": (x, bound)})


def pseudo_regret_vs_log_n(s, backend, seed):
    T = s["horizon"]
    ys, xs = [], []
    for n in s["n_experts"]:
        gap = 3.0 * math.sqrt(math.log(n) / T)
        L = hedge(**s.get("learner_params", {"horizon": T}))  # learner_params: a deliberately mistuned Hedge
        res = sim.run(L, instances.needle(n, gap), horizon=T, n_reps=s["n_reps"], seed=seed,
                      backend=backend, checkpoints=[T])
        xs.append(math.log(n))
        ys.append(res.metric("pseudo_regret")[-1])
    x = np.array(xs)
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="ln N", ylabel=f"pseudo-regret at T = {T}",
                           curves={"ln N / η = √(T ln N / 8)": (x, np.sqrt(T * x / 8))})


def fair_coins_exact(s, backend, seed):
    L = hedge()
    res = sim.run(L, instances.fair_coins(10), horizon=1000, n_reps=s["n_reps"], seed=seed,
                  backend=backend, checkpoints=[1000])
    return sim.Measurement(x=np.array([1000.0]), y=res.metrics["regret"], xlabel="T", ylabel="regret at T = 1000")


EXPERIMENTS = [
    sim.Experiment("hedge.regret-vs-T", regret_vs_T,
                   quick=dict(horizon=10_000, n_experts=10, n_reps=400),
                   full=dict(horizon=1_000_000, n_experts=10, n_reps=2000),
                   title="Anytime Hedge on fair coins: regret ∝ √T"),
    sim.Experiment("hedge.pseudo-regret-vs-lnN", pseudo_regret_vs_log_n,
                   quick=dict(horizon=2000, n_experts=[4, 16, 64, 256, 1024], n_reps=200),
                   full=dict(horizon=20_000, n_experts=[4, 16, 64, 256, 1024, 4096, 16384], n_reps=500),
                   title="Tuned Hedge on a threshold needle: pseudo-regret ∝ √(ln N)"),
    sim.Experiment("hedge.fair-coins-exact", fair_coins_exact,
                   quick=dict(n_reps=4000), full=dict(n_reps=100_000),
                   title="Fair coins, T = 1000, N = 10: exact expected regret 24.3248"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
