"""
Stochastic bandits: logarithmic regret and the Lai--Robbins constant
=====================================================================

Nine Bernoulli arms with means 0.1, ..., 0.9.  The pseudo-regret of KL-UCB
and Thompson sampling grows like c ln T with c tending to the Lai--Robbins
constant 7.5165; UCB1's slope is an order of magnitude larger.  MOSS on the
minimax instance has pseudo-regret proportional to sqrt(KT); on a fixed
instance its regret grows as ln T (the regret added per half decade of
horizon stays flat), where MOSS told a horizon far too short plays greedily
and locks onto a suboptimal arm.
"""

import numpy as np

from expertlab import sim
from expertlab.bandits import instances, moss

NINE = np.arange(1, 10) / 10.0
LR_NINE = instances.lai_robbins_constant(NINE)


def _log_slope(L, s, backend, seed):
    x = sim.checkpoint_grid(s["horizon"]).astype(float)
    lr = LR_NINE * np.log(x)
    return sim.horizon_measurement(L, instances.bernoulli(NINE), s, backend, seed, metric="regret", ylabel="pseudo-regret",
                                   curves={"Lai–Robbins slope 7.5165 · ln T": (x, lr)})


def _learner(s, name, **params):
    """The learner ``name`` with ``params``, or the registered learner ``s["learner"]`` with ``s["learner_params"]``.

    The two settings swap in a deliberately wrong learner (a mutant the claim must reject).
    """
    return sim.get_learner(s.get("learner", name)).factory(**s.get("learner_params", params))


def kl_ucb_slope(s, backend, seed):
    return _log_slope(_learner(s, "kl_ucb"), s, backend, seed)


def thompson_slope(s, backend, seed):
    # "auto" would take the NumPy path at the quick size (just under the compile threshold), where every round
    # runs the gamma draws' rare paths as separate array operations; the compiled path gives the same numbers
    backend = "numba" if backend == "auto" else backend
    return _log_slope(_learner(s, "thompson_sampling"), s, backend, seed)


def ucb1_slope(s, backend, seed):
    return _log_slope(_learner(s, "ucb1"), s, backend, seed)


def ucb_alpha_slope(s, backend, seed):
    return _log_slope(_learner(s, "ucb_alpha", alpha=s["alpha"]), s, backend, seed)


def moss_minimax(s, backend, seed):
    K = s["n_arms"]
    # "auto" would take the NumPy path for the short horizons; the compiled path gives the same numbers and its
    # kernel is cached on disk, so the sweep uses it throughout
    backend = "numba" if backend == "auto" else backend
    ys = []
    for T in s["horizons"]:
        L = moss(horizon=T)
        res = sim.run(L, instances.minimax(K, T), horizon=T, n_reps=s["n_reps"], seed=seed,
                      backend=backend, checkpoints=[T])
        ys.append(res.metrics["regret"][-1])
    x = np.array(s["horizons"], dtype=float)
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="horizon T", ylabel="pseudo-regret at T",
                           curves={"√(KT)": (x, np.sqrt(K * x))})


def moss_log_increments(s, backend, seed):
    K = s["n_arms"]
    inst = instances.bernoulli(np.r_[np.full(K - 1, 0.5), 0.5 + s["gap"]])
    hs = s["horizons"]
    backend = "numba" if backend == "auto" else backend  # as in moss_minimax
    # MOSS is tuned to each horizon: one run per horizon, with the same seeds; ``learner_params`` swaps in a
    # mistuned MOSS (a mutant the claim must reject)
    final = sim.final_values([sim.run(moss(**s.get("learner_params", {"horizon": T})), inst, horizon=T,
                                      n_reps=s["n_reps"], seed=seed, backend=backend, checkpoints=[T])
                              for T in hs])
    return sim.Measurement(x=np.array(hs[:-1], dtype=float), y=np.diff(final, axis=0), xlabel="horizon T",
                           ylabel="pseudo-regret added from T to the next half decade",
                           curves={"regret R(T)": (np.array(hs, dtype=float), final.mean(axis=1))})


_HALF = [int(round(10 ** (e / 2))) for e in range(6, 12)]  # 1e3, 3.2e3, ..., 3.2e5

EXPERIMENTS = [
    sim.Experiment("bandits.kl_ucb-lai-robbins", kl_ucb_slope,
                   quick=dict(horizon=10_000, n_reps=200), full=dict(horizon=1_000_000, n_reps=1000),
                   title="KL-UCB on nine Bernoulli arms: slope against ln T → 7.5165"),
    sim.Experiment("bandits.thompson-lai-robbins", thompson_slope,
                   quick=dict(horizon=10_000, n_reps=200), full=dict(horizon=1_000_000, n_reps=1000),
                   title="Thompson sampling on nine Bernoulli arms: slope against ln T → 7.5165"),
    sim.Experiment("bandits.ucb1-log-slope", ucb1_slope,
                   quick=dict(horizon=10_000, n_reps=200), full=dict(horizon=1_000_000, n_reps=2000),
                   title="UCB1 on nine Bernoulli arms: regret linear in ln T, slope 87 (T = 10⁴) to 76 (T = 10⁶)"),
    sim.Experiment("bandits.ucb_alpha-log-slope", ucb_alpha_slope,
                   quick=dict(horizon=10_000, n_reps=200, alpha=3.0),
                   full=dict(horizon=1_000_000, n_reps=2000, alpha=3.0),
                   title="UCB(α = 3) on nine Bernoulli arms: regret linear in ln T, slope 65 (10⁴) to 55 (10⁶)"),
    sim.Experiment("bandits.moss-minimax-vs-T", moss_minimax,
                   quick=dict(n_arms=8, horizons=[1000, 3000, 10_000, 30_000], n_reps=200),
                   full=dict(n_arms=8, horizons=[1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000],
                             n_reps=1000),
                   title="MOSS on the minimax instance: regret ∝ √(KT)"),
    sim.Experiment("bandits.moss-log-T-fixed-gap", moss_log_increments,
                   quick=dict(n_arms=8, gap=0.3, horizons=_HALF[:4], n_reps=100),
                   full=dict(n_arms=8, gap=0.3, horizons=_HALF, n_reps=500),
                   title="MOSS on a fixed instance: regret O(ln T)"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
