"""
ALF-LB as a dual method: prices and step sizes
==============================================

ALF-LB takes (sign-normalised) subgradient steps on the dual g(p) of the
routing assignment LP, with bias b = -p.  Two checks on fixed batches: with
decaying steps a/t the centred bias approaches the centred LP prices -p* like
1/t (on batches whose dual optimum is certified unique up to the shift), and
the largest constant sign step for which the dual never increases is
proportional to the score gap at the balanced split (smaller steps improve
monotonically, larger ones cycle).
"""

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from expertlab import sim
from expertlab.balance import AssignmentBatch, alf_lb, routing_fixed, solve_exact


def compiled(backend):
    """The backend of the runs, as given: ``"auto"`` counts a routing step as n_tokens x n_experts
    operations (the environment's ``step_work``) and picks the fused Numba kernel for these sizes."""
    return backend


def centred_price_range(problem, tol):
    """Width of the range of each centred price p_i - mean(p) over {p : g(p) <= g* + tol}, by 2E LPs.

    The dual optimal set is a polyhedron of (p, u, w); its projection on the centred prices is a point
    iff every width is 0.  With sum(C) = NK, g is shift invariant and p need not be >= 0.
    """
    s, k, cap = problem.scores, problem.k, problem.capacity
    n, e = s.shape
    gstar = solve_exact(problem, method="highs").objective
    r = np.arange(n * e)
    t, i = r // e, r % e
    cover = sp.coo_matrix((-np.ones(3 * n * e), (np.r_[r, r, r], np.r_[i, e + t, e + n + r])),
                          shape=(n * e, e + n + n * e))
    value = np.r_[cap, np.full(n, float(k)), np.ones(n * e)][None, :]
    a_ub = sp.vstack([cover, sp.csr_matrix(value)]).tocsr()
    b_ub = np.r_[-s.ravel(), gstar + tol * max(1.0, abs(gstar))]
    bounds = [(None, None)] * (e + n) + [(0, None)] * (n * e)
    width = np.empty(e)
    for j in range(e):
        c = np.zeros(e + n + n * e)
        c[:e] = -1.0 / e
        c[j] += 1.0
        lo = linprog(c, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
        hi = linprog(-c, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
        if lo.status != 0 or hi.status != 0:
            raise RuntimeError(f"price-range LP failed: {lo.message} / {hi.message}")
        width[j] = -hi.fun - lo.fun
    return width


def bias_to_prices(s, backend, seed):
    rng = np.random.default_rng(seed)
    E, K, N, R = s["n_experts"], s["k"], s["n_tokens"], s["n_problems"]
    means = np.linspace(-1.0, 1.0, E)
    batch = AssignmentBatch(means + rng.normal(size=(R, N, E)), K)  # capacity NK/E, fractional
    exact = solve_exact(batch, method="highs")
    widths = np.array([centred_price_range(batch.problem(r), 1e-9).max() for r in range(R)])
    if widths.max() > 1e-6:  # the distance to one price vector would not be the distance to the set
        raise RuntimeError(f"dual optimum not unique up to the shift (width {widths.max():.3g})")
    # bias_error: the max-norm distance of the centred bias to the centred comparator -p*
    env = routing_fixed(batch, comparator_bias=-exact.prices)
    res = sim.run(alf_lb(step=s["a"], rule=s.get("rule", "decaying")), env, horizon=s["n_iter"], n_reps=R,
                  backend=compiled(backend), metrics=["bias_error"])
    x = res.checkpoints.astype(float)
    return sim.Measurement(x=x, y=res.metrics["bias_error"], xlabel="iteration t",
                           ylabel="‖centred b_t + centred p*‖∞",
                           curves={"a / t": (x, s["a"] / x)},
                           info={"max_price_range": float(widths.max()), "capacity": float(batch.capacity[0, 0])})


def _planted_gap_batch(rng, n_problems, n_tokens, gap):
    """E = 2, K = 1 scores whose token margins s_t0 - s_t1 have gap ``gap`` between ranks C and C + 1."""
    s = rng.normal(size=(n_problems, n_tokens, 2))
    delta = s[..., 0] - s[..., 1]
    c = n_tokens // 2
    srt = -np.sort(-delta, axis=1)  # descending
    top = delta >= srt[:, c - 1 : c]  # the C tokens with the largest margin
    shift = gap - (srt[:, c - 1] - srt[:, c])
    s[..., 0] += np.where(top, shift[:, None], 0.0)
    delta = s[..., 0] - s[..., 1]
    srt = -np.sort(-delta, axis=1)
    return s, srt[:, c - 1], srt[:, c]


def _monotone(s, d0, u, n_iter, backend, capacity_offset=0):
    """Whether the dual of the sign rule never increases, for every problem at once.

    Scores and start are divided by each problem's step (the routing of s + b depends on (s, b, u) only
    through (s/u, b/u)), so one batched run with step 1 covers different steps.  ``capacity_offset``
    adds tokens to both capacities (0: C = N/2, the balanced split).
    """
    r, n, e = s.shape
    b0 = np.zeros((r, e))
    b0[:, 0] = d0 / u
    env = routing_fixed(s / u[:, None, None], k=1, capacity=np.full(e, n / 2 + capacity_offset))
    res = sim.run(alf_lb(step=1.0, rule="sign", bias0=b0), env, horizon=n_iter, n_reps=r,
                  backend=compiled(backend), metrics=["dual"], checkpoints=np.arange(1, n_iter + 1))
    scale = np.abs(s).max(axis=(1, 2)) * n / u
    return np.all(np.diff(res.metrics["dual"], axis=0) <= 1e-12 * scale[None, :], axis=0)


def monotone_step_vs_gap(s, backend, seed):
    rng = np.random.default_rng(seed)
    R, N = s["n_problems"], s["n_tokens"]
    gaps = np.array(s["gaps"], dtype=float)
    scores, starts, min_spacing = [], [], []
    for w in gaps:
        sc, upper, lower = _planted_gap_batch(rng, R, N, w)
        # the global minimum spacing of the margins only gives the loose sufficient condition u <= spacing / 2
        min_spacing.append(float(np.diff(np.sort(sc[..., 0] - sc[..., 1], axis=1), axis=1).min(axis=1).mean()))
        # start: the cell is d in (-upper, -lower]; put d0 above it at a distance independent of w
        scores.append(sc)
        starts.append(-lower + rng.uniform(s["distance"][0], s["distance"][1], size=R))
    # every gap in one batched run per bisection step: problem g * R + r has gap gaps[g]
    sc, d0, w = np.concatenate(scores), np.concatenate(starts), np.repeat(gaps, R)
    offset = s.get("capacity_offset", 0)
    lo = w / 4
    # enough batches to cross the start distance with the smallest step tried; a problem whose step
    # has landed in the cell stays there, and one that overshoots does so on arrival, so the extra
    # batches of the problems with larger steps change no verdict
    n_iter = int(np.ceil(s["distance"][1] / (2 * lo.min()))) + 8
    if not _monotone(sc, d0, lo, n_iter, backend, offset).all():
        raise RuntimeError("a step below w/2 was not monotone, contradicting the landing argument")
    # the bracket [w/4, 8w] of the threshold (below w/2 a step always lands in the cell)
    hi = 8.0 * w
    for _ in range(s["n_bisect"]):
        mid = np.sqrt(lo * hi)
        ok = _monotone(sc, d0, mid, n_iter, backend, offset)
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return sim.Measurement(x=gaps, y=lo.reshape(len(gaps), R), xlabel="score gap w at the balanced split",
                           ylabel="largest monotone step u (bisection)",
                           curves={"sufficient: u = w / 2": (gaps, gaps / 2)},
                           info={"mean_min_margin_spacing": min_spacing})


EXPERIMENTS = [
    sim.Experiment("balance.bias-to-lp-prices", bias_to_prices,
                   quick=dict(n_experts=4, k=1, n_tokens=63, n_problems=16, n_iter=5000, a=5.0),
                   full=dict(n_experts=8, k=2, n_tokens=255, n_problems=64, n_iter=100_000, a=5.0),
                   title="Decaying steps: centred bias → centred LP prices at rate 1/t"),
    sim.Experiment("balance.monotone-step-vs-gap", monotone_step_vs_gap,
                   quick=dict(n_tokens=64, n_problems=24, gaps=[3e-4, 1e-3, 3e-3, 1e-2], distance=(0.25, 0.75),
                              n_bisect=10),
                   full=dict(n_tokens=256, n_problems=200, gaps=[1e-4, 3e-4, 1e-3, 3e-3, 1e-2], distance=(0.25, 0.75),
                             n_bisect=16),
                   title="Largest monotone sign step ∝ score gap (E = 2, K = 1)"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
