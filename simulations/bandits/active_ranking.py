"""
Active ranking of experts
=========================

Binary insertion sort over adaptive pairwise comparisons ranks experts from
noisy (expert, task) queries.  The ranking is exact with probability at
least 1 − δ, and three checks of its query counts: linear in
ln(1/δ), ∝ Δ⁻² when every task carries the gap, and ∝ d Δ⁻² (up to
logarithms) when only one of d tasks does — against d² for the non-adaptive
sweep of all tasks.
"""

import math

import numpy as np

from expertlab import sim
from expertlab.bandits import active_ranking, dense_gap_means, expert_tasks, one_task_gap_means

#: Batches of queries a run may take: far more than any replication here needs (each stops on its own).
MAX_BATCHES = 100_000


def rank(M, s, seed, backend, **kw):
    """Run active ranking on the means ``M``: (queries per replication, exact ranking per replication).

    ``s["schedule"]`` (default ``"adaptive"``) swaps in the non-adaptive schedule (a mutant the claims must
    reject); a ``schedule`` keyword overrides it.
    """
    env = expert_tasks(M)
    kw.setdefault("schedule", s.get("schedule", "adaptive"))
    res = sim.run(active_ranking(kw.pop("delta", s.get("delta")), **kw), env, horizon=MAX_BATCHES,
                  n_reps=s["n_reps"], seed=seed, backend=backend, checkpoints=[MAX_BATCHES])
    if not res.final["stopped"].all():
        raise RuntimeError(f"{int((~res.final['stopped']).sum())} replications did not stop in {MAX_BATCHES} batches")
    return res.metrics["queries"][-1], env.correct(res.final["answer"])


def exact_frequency(s, backend, seed):
    M = np.zeros((s["n_experts"], s["n_tasks"]))
    M[:, : s["n_informative"]] = -s["gap"] * np.arange(s["n_experts"])[:, None]
    queries, correct = rank(M, s, seed, backend)
    return sim.Measurement(x=np.array([float(s["n_reps"])]), y=correct[None, :].astype(float),
                           xlabel="replications", ylabel="exact ranking (0/1)",
                           info={"mean_queries": float(queries.mean())})


def queries_vs_log_delta(s, backend, seed):
    M = dense_gap_means(s["n_experts"], s["n_tasks"], s["gap"])
    L0, Ls = s["log_inv_delta"][0], s["log_inv_delta"][1:]
    base = rank(M, s, seed, backend, delta=math.exp(-L0))[0]
    ys = [rank(M, s, seed, backend, delta=math.exp(-L))[0] - base for L in Ls]
    x = np.array(Ls, dtype=float) - L0
    return sim.Measurement(x=x, y=np.stack(ys).astype(float), xlabel="ln(δ₀/δ)",
                           ylabel="extra queries to rank (same replications)")


def queries_vs_gap(s, backend, seed):
    ys = [rank(dense_gap_means(s["n_experts"], s["n_tasks"], g), s, seed, backend)[0] for g in s["gaps"]]
    x = np.array(s["gaps"], dtype=float)
    y = np.stack(ys).astype(float)
    return sim.Measurement(x=x, y=y, xlabel="gap Δ (every task)", ylabel="queries to rank",
                           curves={"∝ Δ⁻²": (x, y[0].mean() * (x[0] / x) ** 2)})


def queries_vs_tasks(s, backend, seed):
    ys = [rank(one_task_gap_means(s["n_experts"], d, s["gap"]), s, seed, backend)[0] for d in s["n_tasks"]]
    x = np.array(s["n_tasks"], dtype=float)
    du = [d for d in s["n_tasks"] if d <= s["uniform_max_tasks"]]
    uni = [rank(one_task_gap_means(s["n_experts"], d, s["gap"]), s, seed, backend, schedule="uniform")[0].mean()
           for d in du]
    return sim.Measurement(x=x, y=np.stack(ys).astype(float), xlabel="tasks d (gap on one task)",
                           ylabel="queries to rank", curves={"uniform sweeps (∝ d²)": (np.array(du, float), uni)})


EXPERIMENTS = [
    sim.Experiment("bandits.active-ranking-exact", exact_frequency,
                   quick=dict(n_experts=6, n_tasks=8, n_informative=2, gap=0.25, delta=0.1, n_reps=400),
                   full=dict(n_experts=10, n_tasks=32, n_informative=2, gap=0.25, delta=0.1, n_reps=4000),
                   title="Active ranking: exact with probability ≥ 1 − δ"),
    sim.Experiment("bandits.active-ranking-queries-vs-log-delta", queries_vs_log_delta,
                   quick=dict(n_experts=4, n_tasks=4, gap=0.2, log_inv_delta=[5, 10, 20, 40, 80, 160], n_reps=200),
                   full=dict(n_experts=8, n_tasks=16, gap=0.1, log_inv_delta=[5, 10, 20, 40, 80, 160, 320],
                             n_reps=1000),
                   title="Active ranking: queries grow linearly in ln(1/δ)"),
    sim.Experiment("bandits.active-ranking-dense-gap", queries_vs_gap,
                   quick=dict(n_experts=4, n_tasks=4, delta=0.05, gaps=[0.4, 0.2, 0.1, 0.05], n_reps=200),
                   full=dict(n_experts=8, n_tasks=4, delta=0.05, gaps=[0.4, 0.2, 0.1, 0.05, 0.025], n_reps=1000),
                   title="Active ranking, gap on every task: queries ∝ Δ⁻²"),
    sim.Experiment("bandits.active-ranking-one-task-gap", queries_vs_tasks,
                   quick=dict(n_experts=4, gap=1.0, delta=0.05, n_tasks=[8, 32, 128, 512], n_reps=100,
                              uniform_max_tasks=64),
                   full=dict(n_experts=8, gap=1.0, delta=0.05, n_tasks=[8, 32, 128, 512, 2048], n_reps=500,
                             uniform_max_tasks=128),
                   title="Active ranking, gap on one task of d: queries ∝ d Δ⁻² (uniform sweeps ∝ d²)"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
