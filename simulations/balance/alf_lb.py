"""
Auxiliary-loss-free load balancing
==================================

ALF-LB routes each token to the top K of ``scores + bias`` and moves the bias
of each expert against its load.  Three checks: the per-batch imbalance at
the optimal bias sits on the N^(-1/2) sampling floor; with decaying steps the
online regret grows like log T; and on a fixed batch the decaying rule reaches
the exact LP optimum.
"""

import numpy as np

from expertlab import sim
from expertlab.balance import AssignmentBatch, alf_lb, routing, routing_fixed, solve_exact
from expertlab.balance.generators import iid_plus_offset


def compiled(backend):
    """The backend of the runs, as given: ``"auto"`` counts a routing step as n_tokens x n_experts
    operations (the environment's ``step_work``) and picks the fused Numba kernel for these sizes."""
    return backend


def maxvio_vs_n(s, backend, seed):
    E, K, T = s["n_experts"], s["k"], s["n_iter"]
    means = np.linspace(-1.0, 1.0, E)
    ys = []
    for n in s["n_tokens"]:
        # step 1e-12: the bias stays at the optimum -m while fresh batches are routed
        env = routing(iid_plus_offset(means, 1.0), n_tokens=n, k=K)
        r = sim.run(alf_lb(step=s.get("step", 1e-12), rule="sign", bias0=-means), env, horizon=T, n_reps=s["n_reps"], seed=seed,
                    backend=compiled(backend), metrics=["maxvio"], checkpoints=np.arange(1, T + 1))
        ys.append(r.metrics["maxvio"].mean(axis=0))  # mean over the batches
    x = np.array(s["n_tokens"], dtype=float)
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="tokens per batch N", ylabel="mean per-batch MaxVio",
                           curves={"√((E/K)/N)": (x, np.sqrt((E / K) / x))})


def online_regret(s, backend, seed):
    E, K, T = s["n_experts"], s["k"], s["n_iter"]
    env = routing(iid_plus_offset(np.linspace(-1.0, 1.0, E), 1.0), n_tokens=s["n_tokens"], k=K)
    common = dict(horizon=T, n_reps=s["n_reps"], seed=seed, backend=compiled(backend), metrics=["regret"])
    r = sim.run(alf_lb(step=s["a"], rule=s.get("rule", "decaying")), env, **common)
    c = sim.run(alf_lb(step=s["constant_step"], rule="magnitude"), env, **common)
    ck = r.checkpoints
    return sim.Measurement(x=ck.astype(float), y=r.metrics["regret"], xlabel="iteration T",
                           ylabel="dual-objective regret",
                           curves={f"constant step {s['constant_step']}": (ck, c.mean("regret"))})


def reaches_optimum(s, backend, seed):
    rng = np.random.default_rng(seed)
    E, K, N = s["n_experts"], s["k"], s["n_tokens"]
    means = np.linspace(-1.0, 1.0, E)
    batch = AssignmentBatch(means + rng.normal(size=(s["n_problems"], N, E)), K, capacity=N * K // E)
    best = solve_exact(batch, method="highs").objective
    # one replication per problem; the dual value of the last batch is g at the bias it was routed with
    r = sim.run(alf_lb(step=s["a"], rule=s.get("rule", "decaying")), routing_fixed(batch), horizon=s["n_iter"],
                n_reps=s["n_problems"], backend=compiled(backend), metrics=["dual"])
    gaps = r.metrics["dual"][-1] / best - 1.0
    return sim.Measurement(x=np.array([float(s["n_iter"])]), y=gaps[None, :], xlabel="iterations",
                           ylabel="relative dual gap at the final bias")


EXPERIMENTS = [
    sim.Experiment("balance.maxvio-sampling-floor", maxvio_vs_n,
                   quick=dict(n_experts=16, k=2, n_tokens=[64, 256, 1024, 4096], n_iter=50, n_reps=16),
                   full=dict(n_experts=64, k=6, n_tokens=[256, 1024, 4096, 16384, 65536], n_iter=200, n_reps=32),
                   title="ALF-LB at the optimal bias: per-batch MaxVio ∝ N^(-1/2)"),
    sim.Experiment("balance.online-regret-log", online_regret,
                   quick=dict(n_experts=16, k=2, n_tokens=128, n_iter=3000, n_reps=16, a=1.0, constant_step=0.05),
                   full=dict(n_experts=64, k=6, n_tokens=1024, n_iter=100_000, n_reps=32, a=1.0, constant_step=0.05),
                   title="Online ALF-LB with steps a/t: regret grows like log T"),
    sim.Experiment("balance.decaying-reaches-lp-optimum", reaches_optimum,
                   quick=dict(n_experts=8, k=2, n_tokens=512, n_iter=2000, n_problems=20, a=1.0),
                   full=dict(n_experts=16, k=4, n_tokens=1024, n_iter=10_000, n_problems=100, a=1.0),
                   title="ALF-LB with decaying steps reaches the LP optimum"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
