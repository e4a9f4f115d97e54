"""
Probably anytime-safe combinatorial semi-bandits
================================================

PASCombUCB (Hou, Tan & Zhong, ICML 2023) chooses the optimistic super arm
among those whose variance lower bounds fit the budget, and splits it into
pieces whose variance upper bounds fit.  Three checks on the published
instance (L = 10 items, K = 3, delta = 0.05) and its binding variant: no
replication pulls an unsafe arm in at least 1 - delta of the runs; the regret
grows at most logarithmically in T (the regret added per half decade of
horizon does not grow); and the unsafe CUCB baseline violates the budget in
most of its pulls.
"""

import numpy as np

from expertlab import sim
from expertlab.bandits import cucb, hou_tan_zhong_instance, pascombucb


def _run(learner, env, horizon, n_reps, seed, backend):
    return sim.run(learner, env, horizon=horizon, n_reps=n_reps, seed=seed, backend=backend, checkpoints=[horizon])


def zero_violations(s, backend, seed):
    env = hou_tan_zhong_instance(s["budget"], binding=True)
    learner = sim.get_learner(s.get("learner", "pascombucb")).factory()  # or another registered learner
    r = _run(learner, env, s["horizon"], s["n_reps"], seed, backend)
    c = _run(cucb(), env, s["horizon"], 8, seed, backend)
    viol = r.metrics["violations"][-1]
    return sim.Measurement(x=np.array([float(s["horizon"])]), y=(viol == 0).astype(float)[None, :], xlabel="horizon T",
                           ylabel="replication had zero violations",
                           info={"pascombucb_violations": int(viol.sum()),
                                 "cucb_violation_fraction": float(c.metrics["violations"][-1].mean() / s["horizon"]),
                                 "wall_time": r.wall_time, "backend": r.backend})


def regret_increments(s, backend, seed):
    env = hou_tan_zhong_instance(s["budget"])
    horizons = s["horizons"]
    learner = sim.get_learner(s.get("learner", "pascombucb")).factory()  # or another registered learner
    final = sim.final_values([_run(learner, env, h, s["n_reps"], seed, backend) for h in horizons])
    x = np.array(horizons[:-1], dtype=float)
    return sim.Measurement(x=x, y=np.diff(final, axis=0), xlabel="horizon T",
                           ylabel="regret added from T to the next horizon",
                           curves={"regret R(T)": (np.array(horizons, dtype=float), final.mean(axis=1))},
                           info={"regret_at_horizons": final.mean(axis=1).tolist()})


def cucb_violations(s, backend, seed):
    env = hou_tan_zhong_instance(s["budget"], binding=True)
    h = s["horizon"]
    learner = sim.get_learner(s.get("learner", "cucb")).factory()  # or another registered learner
    viol = _run(learner, env, h, s["n_reps"], seed, backend).metrics["violations"][-1]
    return sim.Measurement(x=np.array([float(h)]), y=(viol > h / 2).astype(float)[None, :],
                           xlabel="horizon T", ylabel="more than half of CUCB's pulls violate",
                           info={"violation_fraction": float(viol.mean() / h)})


_HALF = [int(round(10 ** (e / 2))) for e in range(10, 15)]  # 1e5, 3.2e5, 1e6, 3.2e6, 1e7

EXPERIMENTS = [
    sim.Experiment("bandits.pascombucb-anytime-safe", zero_violations,
                   quick=dict(budget=0.6, horizon=10_000, n_reps=200),
                   full=dict(budget=0.6, horizon=200_000, n_reps=1000),
                   title="PASCombUCB: zero violations in at least 1 - delta of the runs"),
    sim.Experiment("bandits.pascombucb-regret-log-T", regret_increments,
                   quick=dict(budget=0.751, horizons=_HALF[:3], n_reps=12),
                   full=dict(budget=0.751, horizons=_HALF[:4], n_reps=64),
                   title="PASCombUCB at budget 0.751: regret O(log T)"),
    sim.Experiment("bandits.cucb-violates", cucb_violations,
                   quick=dict(budget=0.6, horizon=100_000, n_reps=60),
                   full=dict(budget=0.6, horizon=1_000_000, n_reps=200),
                   title="Unsafe CUCB: most pulls violate the budget"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
