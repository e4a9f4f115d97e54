"""
EXP3 on the minimax instance
============================

Expected pseudo-regret of EXP3 (tuned to the horizon) on the minimax
instance, K - 1 Bernoulli(1/2) arms and one at 1/2 + sqrt(K/T): it grows as
sqrt(T) at fixed K and as sqrt(K) at fixed T, the minimax rate.  On that
instance every learner's regret is at most gap * T = sqrt(KT), so the
exponent does not tell a tuned learning rate from a wrong one; on a fixed
instance (K - 1 arms at 1/2, one at 1/2 + 0.3) the tuned EXP3 still grows at
most as sqrt(T), while a rate far too small (uniform play) or far too large
(lock-in on the first arm that happens to pay) makes the regret linear.
"""

import math

import numpy as np

from expertlab import sim
from expertlab.bandits import exp3, instances


def _final(L, K, T, s, backend, seed):
    # "auto" would take the NumPy path for the short horizons; the compiled path gives the same numbers and its
    # kernel is cached on disk, so every sweep of this file uses it throughout
    backend = "numba" if backend == "auto" else backend
    res = sim.run(L, instances.minimax(K, T), horizon=T, n_reps=s["n_reps"], seed=seed,
                  backend=backend, checkpoints=[T], metrics=["expected_regret"])
    return res.metric("expected_regret")[-1]


def _learner(s, T, K):
    """EXP3 tuned to (T, K), or with the keywords ``s["learner_params"]`` (a mistuned EXP3)."""
    return exp3(**s.get("learner_params", dict(horizon=T, n_arms=K)))


def regret_vs_T(s, backend, seed):
    K = s["n_arms"]
    x = np.array(s["horizons"], dtype=float)
    y = np.stack([_final(_learner(s, T, K), K, T, s, backend, seed) for T in s["horizons"]])
    return sim.Measurement(x=x, y=y, xlabel="horizon T", ylabel="expected pseudo-regret at T",
                           curves={"√(2TK ln K) (Thm 3.1)": (x, np.sqrt(2 * x * K * math.log(K)))})


def regret_vs_K(s, backend, seed):
    T = s["horizon"]
    x = np.array(s["n_arms"], dtype=float)
    y = np.stack([_final(_learner(s, T, K), K, T, s, backend, seed) for K in s["n_arms"]])
    return sim.Measurement(x=x, y=y, xlabel="arms K", ylabel=f"expected pseudo-regret at T = {T}",
                           curves={"√(KT)": (x, np.sqrt(x * T))})


def fixed_instance_vs_T(s, backend, seed):
    K = s["n_arms"]
    inst = instances.bernoulli(np.r_[np.full(K - 1, 0.5), 0.5 + s["gap"]])
    backend = "numba" if backend == "auto" else backend  # as in _final
    x = np.array(s["horizons"], dtype=float)
    y = np.stack([sim.run(_learner(s, T, K), inst, horizon=T, n_reps=s["n_reps"], seed=seed, backend=backend,
                          checkpoints=[T], metrics=["expected_regret"]).metric("expected_regret")[-1]
                  for T in s["horizons"]])
    return sim.Measurement(x=x, y=y, xlabel="horizon T",
                           ylabel=f"expected pseudo-regret at T (gap {s['gap']:g} fixed)",
                           curves={"√(2TK ln K) (Thm 3.1)": (x, np.sqrt(2 * x * K * math.log(K)))})


EXPERIMENTS = [
    sim.Experiment("bandits.exp3-regret-vs-T", regret_vs_T,
                   quick=dict(n_arms=8, horizons=[1000, 3000, 10_000, 30_000], n_reps=100),
                   full=dict(n_arms=8, horizons=[1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000],
                             n_reps=1000),
                   title="EXP3 on the minimax instance: regret ∝ √T"),
    sim.Experiment("bandits.exp3-regret-vs-K", regret_vs_K,
                   quick=dict(horizon=10_000, n_arms=[16, 32, 64, 128], n_reps=100),
                   full=dict(horizon=100_000, n_arms=[16, 32, 64, 128, 256, 512], n_reps=500),
                   title="EXP3 on the minimax instance: regret ∝ √K"),
    sim.Experiment("bandits.exp3-fixed-gap-vs-T", fixed_instance_vs_T,
                   quick=dict(n_arms=8, gap=0.3, horizons=[1000, 3000, 10_000, 30_000], n_reps=100),
                   full=dict(n_arms=8, gap=0.3, horizons=[1000, 3000, 10_000, 30_000, 100_000, 300_000],
                             n_reps=500),
                   title="EXP3 tuned to T on a fixed instance: regret ≲ √T"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
