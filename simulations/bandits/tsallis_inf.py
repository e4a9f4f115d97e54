"""
Tsallis-INF on the minimax instance
===================================

Expected pseudo-regret of 1/2-Tsallis-INF on the minimax instance (K - 1
Bernoulli(1/2) arms and one at 1/2 + sqrt(K/T), rebuilt for each horizon):
it grows as sqrt(T), under the adversarial bound 4 sqrt(KT) + 1.  On that
instance every learner's regret is at most gap * T = sqrt(KT), so the
exponent does not tell a tuned learning rate from a wrong one.  On a fixed
instance (K - 1 arms at 1/2, one at 1/2 + 0.3) Tsallis-INF is in its
stochastic regime: its regret grows as ln T, so the regret added per half
decade of horizon stays flat, where a learning rate far too small or far too
large makes it grow with T.
"""

import numpy as np

from expertlab import sim
from expertlab.bandits import instances, tsallis_inf


def regret_vs_T(s, backend, seed):
    K = s["n_arms"]
    # "auto" would take the NumPy path for the short horizons; the compiled path gives the same numbers and its
    # kernel is cached on disk, so the sweep uses it throughout
    backend = "numba" if backend == "auto" else backend
    ys = []
    for T in s["horizons"]:
        L = tsallis_inf(**s.get("learner_params", {}))
        res = sim.run(L, instances.minimax(K, T), horizon=T, n_reps=s["n_reps"], seed=seed,
                      backend=backend, checkpoints=[T], metrics=["expected_regret"])
        ys.append(res.metric("expected_regret")[-1])
    x = np.array(s["horizons"], dtype=float)
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="horizon T", ylabel="expected pseudo-regret at T",
                           curves={"4√(KT) + 1": (x, 4 * np.sqrt(K * x) + 1)})


def log_regret_increments(s, backend, seed):
    K = s["n_arms"]
    inst = instances.bernoulli(np.r_[np.full(K - 1, 0.5), 0.5 + s["gap"]])
    ck = np.array(s["horizons"], dtype=np.int64)
    # Tsallis-INF is anytime: one run, read at the half-decades
    res = sim.run(tsallis_inf(**s.get("learner_params", {})), inst, horizon=int(ck[-1]), n_reps=s["n_reps"],
                  seed=seed, backend=backend, checkpoints=ck, metrics=["expected_regret"])
    r = res.metric("expected_regret")
    x = ck[:-1].astype(float)
    return sim.Measurement(x=x, y=np.diff(r, axis=0), xlabel="horizon T",
                           ylabel="expected pseudo-regret added from T to the next half decade",
                           curves={"regret R(T)": (ck.astype(float), r.mean(axis=1))})


_HALF = [int(round(10 ** (e / 2))) for e in range(6, 12)]  # 1e3, 3.2e3, ..., 3.2e5

EXPERIMENTS = [
    sim.Experiment("bandits.tsallis_inf-minimax-vs-T", regret_vs_T,
                   quick=dict(n_arms=8, horizons=[1000, 3000, 10_000, 30_000], n_reps=100),
                   full=dict(n_arms=8, horizons=[1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000],
                             n_reps=1000),
                   title="Tsallis-INF on the minimax instance: regret ∝ √T"),
    sim.Experiment("bandits.tsallis_inf-log-T-fixed-gap", log_regret_increments,
                   quick=dict(n_arms=8, gap=0.3, horizons=_HALF[:4], n_reps=100),
                   full=dict(n_arms=8, gap=0.3, horizons=_HALF, n_reps=500),
                   title="Tsallis-INF on a fixed instance: regret O(ln T)"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
