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
from expertlab.balance import AssignmentProblem, alf_lb, dual_objective, solve_exact
from expertlab.balance.generators import iid_plus_offset


def maxvio_vs_n(s, backend, seed):
    E, K = s["n_experts"], s["k"]
    means = np.linspace(-1.0, 1.0, E)
    ys = []
    for n in s["n_tokens"]:
        # step 1e-12: the bias stays at the optimum -m while fresh batches are routed
        r = alf_lb(iid_plus_offset(means, 1.0), K, n_tokens=n, step=1e-12, rule="sign", n_iter=s["n_iter"],
                   n_reps=s["n_reps"], seed=seed, bias0=np.broadcast_to(-means, (s["n_reps"], E)))
        ys.append(r.maxvio.mean(axis=1))
    x = np.array(s["n_tokens"], dtype=float)
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="tokens per batch N", ylabel="mean per-batch MaxVio",
                           curves={"√((E/K)/N)": (x, np.sqrt((E / K) / x))})


def online_regret(s, backend, seed):
    E, K, T = s["n_experts"], s["k"], s["n_iter"]
    gen = iid_plus_offset(np.linspace(-1.0, 1.0, E), 1.0)
    common = dict(n_tokens=s["n_tokens"], n_iter=T, n_reps=s["n_reps"], seed=seed)
    r = alf_lb(gen, K, rule="decaying", step=s["a"], **common)
    c = alf_lb(gen, K, rule="magnitude", step=s["constant_step"], **common)
    ck = sim.checkpoint_grid(T)
    return sim.Measurement(x=ck.astype(float), y=r.regret[:, ck - 1].T, xlabel="iteration T",
                           ylabel="dual-objective regret",
                           curves={f"constant step {s['constant_step']}": (ck, c.regret[:, ck - 1].mean(axis=0))})


def reaches_optimum(s, backend, seed):
    rng = np.random.default_rng(seed)
    E, K, N = s["n_experts"], s["k"], s["n_tokens"]
    means = np.linspace(-1.0, 1.0, E)
    gaps = []
    for _ in range(s["n_problems"]):
        prob = AssignmentProblem(means + rng.normal(size=(N, E)), K, capacity=N * K // E)
        best = solve_exact(prob, method="highs").objective
        r = alf_lb(prob, rule="decaying", step=s["a"], n_iter=s["n_iter"])
        g = dual_objective(prob.scores, -r.bias[0], K, prob.capacity)
        gaps.append(g / best - 1.0)
    return sim.Measurement(x=np.array([float(s["n_iter"])]), y=np.array([gaps]), xlabel="iterations",
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
