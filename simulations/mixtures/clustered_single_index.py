"""
Clustered single-index data: an MoE finds each cluster's direction, one network does not
========================================================================================

Four clusters x = z + 2 (a1 v1 + a2 v2) share one direction w whose sign is the
parity a1 a2 of the cluster: y = a1 a2 <w, z>.  Inside a cluster the task has
information exponent 1; pooled over the clusters every Hermite coefficient of
degree below 3 vanishes (pooled information exponent 3).  At the same online
budget n = 4 d^2 (d = 128), a mixture of four two-neuron experts with a linear
softmax router, trained jointly on the Gaussian MoE likelihood with a
load-balancing term, routes the clusters apart and its experts align with w,
while a single 8-neuron network stays near chance.  Each plot shows the fraction
of successful replications (MoE: router accuracy above 3/4 and, in every
cluster, the routed expert's best absolute cosine with w above 1/2; single
network: best absolute cosine below 1/2).  The full sweep adds smaller budgets and the MoE with oracle
routing (each sample sent to the expert of its true cluster), which shows the
expert side of the mechanism alone; the router is the slower part.
"""

import numpy as np

from expertlab import sim
from expertlab.mixtures import train_cluster_moe, train_single_network


def _budgets(s):
    return [int(f * s["dim"] ** 2) for f in s["budget_factors"]]


def moe_recovers(s, backend, seed):
    ns, ys, mean_ov, mean_acc, oracle = _budgets(s), [], [], [], []
    for n in ns:
        res = train_cluster_moe(s["dim"], n, balance=s["balance"], router_lr=s.get("router_lr", 4.0),
                                n_reps=s["n_reps"], seed=np.random.SeedSequence([seed, 61]))
        ys.append(((res.min_overlap > s["threshold"]) & (res.router_accuracy > s["accuracy"])).astype(float))
        mean_ov.append(res.min_overlap.mean())
        mean_acc.append(res.router_accuracy.mean())
        if s["oracle"]:
            orc = train_cluster_moe(s["dim"], n, router="oracle", n_reps=s["n_reps"],
                                    seed=np.random.SeedSequence([seed, 61]))
            oracle.append(orc.min_overlap.mean())
    x = np.array(ns, dtype=float)
    curves = {"mean min-overlap (learned router)": (x, np.array(mean_ov)),
              "mean router accuracy": (x, np.array(mean_acc))}
    if s["oracle"]:
        curves["mean min-overlap (oracle router)"] = (x, np.array(oracle))
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="sample budget n", ylabel="fraction of runs / overlap",
                           curves=curves, info={"dim": s["dim"]})


def single_misses(s, backend, seed):
    """Indicators that the best neuron misses w; ``s["learner"] = "moe"`` puts the MoE in the network's place."""
    ns, ys, mean_ov = _budgets(s), [], []
    for n in ns:
        if s.get("learner", "single") == "moe":
            res = train_cluster_moe(s["dim"], n, balance=_MOE["balance"], n_reps=s["n_reps"],
                                    seed=np.random.SeedSequence([seed, 61]))
        else:
            res = train_single_network(s["dim"], n, n_reps=s["n_reps"], seed=np.random.SeedSequence([seed, 61]))
        ys.append((res.min_overlap < s["threshold"]).astype(float))
        mean_ov.append(res.min_overlap.mean())
    x = np.array(ns, dtype=float)
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="sample budget n", ylabel="fraction of runs / overlap",
                           curves={"mean overlap (single network)": (x, np.array(mean_ov))}, info={"dim": s["dim"]})


_MOE = dict(dim=128, threshold=0.5, accuracy=0.75, balance=0.2)
EXPERIMENTS = [
    sim.Experiment("mixtures.cluster.moe-recovers-every-cluster", moe_recovers,
                   quick=dict(_MOE, budget_factors=[4], n_reps=24, oracle=False),
                   full=dict(_MOE, budget_factors=[0.25, 0.5, 1, 2, 4], n_reps=100, oracle=True),
                   title="Clustered single-index: the MoE detects the clusters and recovers w (n = 4 d^2)"),
    sim.Experiment("mixtures.cluster.single-network-misses-direction", single_misses,
                   quick=dict(dim=128, budget_factors=[4], n_reps=24, threshold=0.5),
                   full=dict(dim=128, budget_factors=[0.25, 0.5, 1, 2, 4], n_reps=100, threshold=0.5),
                   title="Clustered single-index: a single network misses w at the same budget"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
