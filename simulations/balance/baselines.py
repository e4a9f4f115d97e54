"""
Routing baselines: balance against routing score
================================================

ALF-LB, auxiliary-loss routing, BASE layers, Sinkhorn (S-BASE), expert choice
and plain top-K on the same iid-plus-offset batches, scored against the exact
balanced assignment LP: per-batch imbalance (MaxVio) and the relative routing
score lost against the LP optimum.  The registered check is a closed form for
expert choice: every load is exactly C, but a fraction (1 − K/E)^E of the
tokens gets no expert at all.  The table printed below lists every method.
"""

import numpy as np

from expertlab import sim
from expertlab.balance import (AssignmentBatch, alf_lb, aux_loss, base_route, expert_choice_route, routing_fixed,
                               sinkhorn_route, solve_exact, top_k_route)
from expertlab.balance.generators import iid_plus_offset

TABLES = {}


def _summary(s, x):
    loads = x.sum(axis=-2)
    mean = loads.mean(axis=-1)
    return (loads.max(axis=-1) - mean) / mean, np.einsum("bti,bti->b", s, x.astype(float))


def aux_loss_bias(s, k, *, lr, n_steps):
    """Per-expert logit bias beta trained by gradient descent on the auxiliary loss alone, then top-k of s + beta.

    The gradient of L = E sum_i f_i P_i with respect to beta_j is the sum over tokens of dL/dz_tj
    (z = s + beta); f is held constant between steps, as in the papers.
    """
    beta = np.zeros(s.shape[:-2] + (1, s.shape[-1]))
    for _ in range(n_steps):  # a loop over optimisation steps, vectorised over batches and tokens
        g = aux_loss(s + beta, k).grad.sum(axis=-2, keepdims=True)
        beta = beta - lr * g
    return top_k_route(s + beta, k=k)


def compare(s, backend, seed):
    E, K = s["n_experts"], s["k"]
    gen = iid_plus_offset(np.linspace(-1.0, 1.0, E), 1.0)
    ys, table = [], {}
    curves = {}
    for n in s["n_tokens"]:
        c = n * K // E
        scores = gen.draw(seed, np.arange(s["n_reps"]), 0, n)
        ec = expert_choice_route(scores, c + s.get("capacity_offset", 0))  # offset 0: C = NK/E, as the closed form
        ys.append(ec.n_unrouted / n - (1.0 - K / E) ** E)
        sub = scores[: s["n_compare"]]
        batch = AssignmentBatch(sub, K, capacity=c)
        opt = solve_exact(batch, method="auto").objective
        routes = {}
        res = sim.run(alf_lb(step=s["alf_a"], rule="decaying"), routing_fixed(batch), horizon=s["alf_iter"],
                      n_reps=len(batch), backend="numba" if backend == "auto" else backend, metrics=["maxvio"])
        routes["ALF-LB (a/t)"] = top_k_route(sub, res.final["bias"][:, None, :], K)  # the bias after the run
        routes["aux loss"] = aux_loss_bias(sub, K, lr=s["aux_lr"], n_steps=s["aux_steps"])
        routes["BASE"] = base_route(sub, K).assignment
        sk = sinkhorn_route(sub, K, temperature=s["sinkhorn_tau"], n_iter=s["sinkhorn_iter"])
        routes[f"Sinkhorn τ={s['sinkhorn_tau']:g}"] = sk.assignment
        routes["expert choice"] = expert_choice_route(sub, c).assignment
        routes["top-K, no balancing"] = top_k_route(sub, k=K)
        for name, x in routes.items():
            mv, score = _summary(sub, x)
            loss = (opt - score) / np.abs(opt)
            table.setdefault(name, []).append((n, mv.mean(), loss.mean()))
    xs = np.array(s["n_tokens"], dtype=float)
    for name, rows in table.items():
        curves[f"MaxVio: {name}"] = (xs, np.array([r[1] for r in rows]))
    TABLES[seed] = table
    return sim.Measurement(x=xs, y=np.stack(ys), xlabel="tokens per batch N",
                           ylabel="unrouted fraction − (1 − K/E)^E (points); MaxVio (curves)", curves=curves,
                           info={"table": {k: [list(map(float, r)) for r in v] for k, v in table.items()}})


def print_table(table):
    print(f"{'method':<24} {'N':>6} {'MaxVio':>9} {'score loss vs LP':>17}")
    for name, rows in table.items():
        for n, mv, loss in rows:
            print(f"{name:<24} {int(n):>6} {mv:>9.4f} {loss:>16.3%}")


EXPERIMENTS = [
    sim.Experiment("balance.expert-choice-unrouted", compare,
                   quick=dict(n_experts=8, k=2, n_tokens=[64, 128, 256], n_reps=400, n_compare=8, alf_a=5.0,
                              alf_iter=2000, aux_lr=2.0, aux_steps=200, sinkhorn_tau=0.1, sinkhorn_iter=1000),
                   full=dict(n_experts=16, k=4, n_tokens=[128, 512, 2048], n_reps=4000, n_compare=32, alf_a=5.0,
                             alf_iter=5000, aux_lr=2.0, aux_steps=2000, sinkhorn_tau=0.05, sinkhorn_iter=5000),
                   title="Routing baselines on iid-plus-offset batches; expert choice leaves (1 − K/E)^E unrouted"),
]

if __name__ == "__main__":
    failed = sim.experiment_main(EXPERIMENTS)
    for table in TABLES.values():
        print_table(table)
    if failed:
        raise SystemExit(1)
