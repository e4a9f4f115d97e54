"""
Best-expert identification
==========================

The max search with doubling query caps returns the best expert with
probability at least 1 − δ, and its query count depends on the gaps to the
best expert, not on how close the other experts are to each other.  On a
cluster of experts η apart below a best expert Δ above them, its queries
stay flat as η shrinks and grow like Δ⁻², while the sequential champion
search (drawn for comparison) pays η⁻².
"""

import numpy as np

from expertlab import sim
from expertlab.bandits import best_expert, cluster_below_best_means, expert_tasks

#: Batches of queries a run may take: far more than any replication here needs (each stops on its own).
MAX_BATCHES = 100_000


def search(s, seed, backend, gap, cluster_gap, method="doubling"):
    """Run the best-expert search: (queries per replication, correct per replication)."""
    env = expert_tasks(cluster_below_best_means(s["n_experts"], s["n_tasks"], gap, cluster_gap))
    # ``s["methods"]`` maps a method to the one run in its place (a mutant the claims must reject)
    method = s.get("methods", {}).get(method, method)
    res = sim.run(best_expert(s["delta"], method=method), env, horizon=MAX_BATCHES, n_reps=s["n_reps"], seed=seed,
                  backend=backend, checkpoints=[MAX_BATCHES])
    if not res.final["stopped"].all():
        raise RuntimeError(f"{int((~res.final['stopped']).sum())} replications did not stop in {MAX_BATCHES} batches")
    return res.metrics["queries"][-1], env.correct(res.final["answer"])


def correct_frequency(s, backend, seed):
    queries, correct = search(s, seed, backend, s["gap"], s["cluster_gap"])
    return sim.Measurement(x=np.array([float(s["n_reps"])]), y=correct[None, :].astype(float),
                           xlabel="replications", ylabel="best expert returned (0/1)",
                           info={"mean_queries": float(queries.mean())})


def _queries(s, seed, backend, gap, cluster_gap, method):
    queries, correct = search(s, seed, backend, gap, cluster_gap, method)
    if not correct.all():  # a wrong or unfinished run would make the count meaningless
        raise RuntimeError(f"best_expert({method}) missed the best expert in {int((~correct).sum())} runs")
    return queries.astype(float)


def queries_vs_cluster_gap(s, backend, seed):
    x = np.array(s["cluster_gaps"], dtype=float)
    y = np.stack([_queries(s, seed, backend, s["gap"], eta, "doubling") for eta in x])
    seq = np.array([_queries(s, seed, backend, s["gap"], eta, "sequential").mean() for eta in x])
    return sim.Measurement(x=x, y=y, xlabel="gap η between the other experts (best Δ above them)",
                           ylabel="queries to find the best expert",
                           curves={"sequential champion search (∝ η⁻²)": (x, seq)})


def sequential_vs_cluster_gap(s, backend, seed):
    x = np.array(s["cluster_gaps"], dtype=float)
    y = np.stack([_queries(s, seed, backend, s["gap"], eta, "sequential") for eta in x])
    return sim.Measurement(x=x, y=y, xlabel="gap η between the other experts (best Δ above them)",
                           ylabel="queries of the sequential champion search")


def queries_vs_gap(s, backend, seed):
    x = np.array(s["gaps"], dtype=float)
    y = np.stack([_queries(s, seed, backend, g, s["cluster_gap"], "doubling") for g in x])
    return sim.Measurement(x=x, y=y, xlabel="gap Δ of the best expert (every task)",
                           ylabel="queries to find the best expert",
                           curves={"∝ Δ⁻²": (x, y[0].mean() * (x[0] / x) ** 2)})


EXPERIMENTS = [
    sim.Experiment("bandits.best-expert-correct", correct_frequency,
                   quick=dict(n_experts=8, n_tasks=4, gap=0.2, cluster_gap=0.01, delta=0.1, n_reps=400),
                   full=dict(n_experts=16, n_tasks=8, gap=0.2, cluster_gap=0.01, delta=0.1, n_reps=4000),
                   title="Best-expert search: correct with probability ≥ 1 − δ"),
    sim.Experiment("bandits.best-expert-flat-in-cluster-gap", queries_vs_cluster_gap,
                   quick=dict(n_experts=8, n_tasks=4, gap=0.4, cluster_gaps=[0.02, 0.01, 0.005, 0.0025], delta=0.05,
                              n_reps=200),
                   full=dict(n_experts=16, n_tasks=8, gap=0.4, cluster_gaps=[0.01, 0.005, 0.0025, 0.00125, 0.000625],
                             delta=0.05, n_reps=1000),
                   title="Best-expert search with doubling caps: queries flat in the gap between the others"),
    sim.Experiment("bandits.best-expert-sequential-vs-cluster-gap", sequential_vs_cluster_gap,
                   quick=dict(n_experts=8, n_tasks=4, gap=0.4, cluster_gaps=[0.02, 0.01, 0.005, 0.0025], delta=0.05,
                              n_reps=200),
                   full=dict(n_experts=16, n_tasks=8, gap=0.4, cluster_gaps=[0.01, 0.005, 0.0025, 0.00125, 0.000625],
                             delta=0.05, n_reps=1000),
                   title="Sequential champion search: queries ∝ η⁻²"),
    sim.Experiment("bandits.best-expert-vs-gap", queries_vs_gap,
                   quick=dict(n_experts=8, n_tasks=4, gaps=[0.4, 0.2, 0.1, 0.05], cluster_gap=0.001, delta=0.05,
                              n_reps=200),
                   full=dict(n_experts=16, n_tasks=8, gaps=[0.4, 0.2, 0.1, 0.05, 0.025], cluster_gap=0.0005, delta=0.05,
                             n_reps=1000),
                   title="Best-expert search: queries ∝ Δ⁻²"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
