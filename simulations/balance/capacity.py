"""
Capacity-aware inference: token drop and reroute
================================================

Each expert is capped at floor(γ N K / E) tokens; the overflow is dropped or
rerouted to the token's next-best experts with room.  On iid gating scores
the loads are binomial, so the drop rate of token drop has a closed form,
checked here; the curves show, against γ, the drop rates of both policies,
their latency proxy (largest load over the mean load) and the score they
lose against the exact capacity-constrained optimum (min-cost flow / LP).
"""

import numpy as np
from scipy.stats import binom

from expertlab import sim
from expertlab.balance import capacity_from_gamma, capacity_route
from expertlab.balance.generators import iid_gaussian


def expected_drop_rate(gamma, n_tokens, n_experts, k):
    """E[drop rate] of token drop when every load is Binomial(N, K/E): E E[(L - C)_+] / (N K)."""
    c = capacity_from_gamma(gamma, n_tokens, n_experts, k)
    load = np.arange(n_tokens + 1)
    return n_experts * float(np.sum(np.maximum(load - c, 0) * binom.pmf(load, n_tokens, k / n_experts))) / (n_tokens * k)


def _gating(s, seed):
    """Softmax router probabilities of iid standard normal logits: positive, exchangeable across experts."""
    z = iid_gaussian(s["n_experts"]).draw(seed, np.arange(s["n_reps"]), 0, s["n_tokens"])
    z = np.exp(z - z.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def drop_rate_vs_gamma(s, backend, seed):
    E, K, N = s["n_experts"], s["k"], s["n_tokens"]
    p = _gating(s, seed)
    ys = []
    for g in s["gammas"]:
        # capacity_offset (0): extra tokens of capacity, which the closed form does not know about
        r = capacity_route(p, K, g + s.get("capacity_offset", 0) * E / (N * K), policy="drop", exact_method=None)
        ys.append(r.drop_rate - expected_drop_rate(g, N, E, K))
    # the trade-off curves over a wider range of gamma, on the first few batches (exact optimum per batch)
    sub = p[: s["n_exact"]]
    curves = {}
    grid = np.array(s["curve_gammas"], dtype=float)
    curves["closed-form drop rate (drop)"] = (grid, np.array([expected_drop_rate(g, N, E, K) for g in grid]))
    for pol in ("drop", "reroute"):
        rows = [capacity_route(sub, K, g, policy=pol, exact_method="auto") for g in grid]
        curves[f"drop rate ({pol})"] = (grid, np.array([np.mean(r.drop_rate) for r in rows]))
        curves[f"relative score loss vs optimum ({pol})"] = (grid, np.array([np.mean(r.relative_score_loss)
                                                                              for r in rows]))
        curves[f"max load / mean load - 1 ({pol})"] = (grid, np.array([np.mean(r.max_load_ratio) - 1
                                                                        for r in rows]))
    x = np.array(s["gammas"], dtype=float)
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="capacity factor γ",
                           ylabel="drop rate − closed form (points); curves: see legend", curves=curves)


EXPERIMENTS = [
    sim.Experiment("balance.capacity-drop-closed-form", drop_rate_vs_gamma,
                   quick=dict(n_experts=8, k=2, n_tokens=256, n_reps=400, gammas=[0.5, 0.625, 0.75, 0.875, 1.0],
                              curve_gammas=[0.5, 0.75, 1.0, 1.25, 1.5, 2.0], n_exact=4),
                   full=dict(n_experts=64, k=6, n_tokens=4096, n_reps=2000,
                             gammas=[0.5, 0.625, 0.75, 0.875, 1.0],
                             curve_gammas=[0.5, 0.75, 1.0, 1.1, 1.25, 1.5, 2.0], n_exact=16),
                   title="Token drop at capacity γNK/E: binomial closed form, and the drop/reroute trade-off"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
