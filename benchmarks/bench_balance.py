"""ALF-LB routing throughput against the exact min-cost-flow solve of the same batches.

Prints, in one run: batches per second of the fused Numba ALF-LB path of
``sim.run`` (4096 tokens x 64 experts, K = 6 per batch by default; every
score a ziggurat normal, see :mod:`expertlab.balance.generators`) against a
roofline measured alongside (a Numba kernel that only generates every
score of the same batches with the same generator and takes the top K,
parallel over the same replications), the time
of an exact balanced solve (OR-Tools min-cost flow) of one such batch, the
balance (MaxVio) and the routing score each reaches, and the time of the
exact solve at 65,536 x 64; and deterministic ALF-LB over a batch of fixed
problems (``routing_fixed`` of an ``AssignmentBatch``, one fused run)
against one run per problem, on the same problems.  Nothing is asserted:
the numbers are for the record (JSON with ``--json``).

    python benchmarks/bench_balance.py [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np

from numba import njit, prange

from expertlab import sim
from expertlab._random import rep_key, round_key
from expertlab.balance import (AssignmentBatch, AssignmentProblem, alf_lb, routing, routing_fixed, solve_exact,
                               top_k_route)
from expertlab.balance._alf_lb import _topk_filtered
from expertlab.balance.generators import iid_plus_offset, mean_at
from expertlab.sim._variates import ZIG_DRAWS, zig_normal


@njit(parallel=True, nogil=True, cache=True)
def scores_and_top_k(gparams, n_experts, k, n_tokens, horizon, seed, n_reps):
    """The roofline: generate every score of every batch (as the online environment does) and take its top K.

    No bias, no loads, no update, one list per token: the least any online top-K router on these scores has
    to do.  The batch's mean scores are computed once per batch and the top K is taken as ALF-LB's kernel
    takes each of its two lists (a selection among the scores above a tracked threshold,
    ``_topk_filtered``), so the ratio of ALF-LB to this kernel is the cost of the second list, the biases
    and the updates.  Returns the number of times each expert was picked, per replication (so nothing is
    optimised away).
    """
    e = n_experts
    picks = np.zeros((n_reps, e), np.int64)
    for r in prange(n_reps):
        mu = np.empty(e)
        zero = np.zeros(e)
        w = np.empty(3 * e + 4)  # the scores, the selection's scratch, the tracked K-th value
        w[3 * e] = -np.inf
        w[3 * e + 1] = 0.0
        topv = np.empty(k)
        topi = np.zeros(k, np.int64)
        rkey = rep_key(seed, np.uint64(r))
        for it in range(horizon):
            key = round_key(rkey, np.uint64(it))
            for i in range(e):
                mu[i] = mean_at(gparams, e, i, it)
            for n in range(n_tokens):
                j0 = np.int64(n) * np.int64(e)
                for i in range(e):
                    w[i] = mu[i] + gparams[0] * zig_normal(key, (j0 + np.int64(i)) * ZIG_DRAWS)
                _topk_filtered(w, zero, e, k, topv, topi, w, 3 * e)
                for j in range(k):
                    picks[r, topi[j]] += 1
    return picks


def best_of(fn, repeat):
    """Smallest wall time of ``repeat`` calls of ``fn``, the process CPU time of that call, and its result."""
    best, cpu, out = np.inf, np.inf, None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = fn()
        wall, used = time.perf_counter() - t0, time.process_time() - c0
        if wall < best:
            best, cpu, out = wall, used, res
    return best, cpu, out


def maxvio(assign, k):
    loads = assign.sum(axis=0)
    mean = assign.shape[0] * k / assign.shape[1]
    return float((loads.max() - mean) / mean)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, default=4096)
    p.add_argument("--experts", type=int, default=64)
    p.add_argument("--k", type=int, default=6)
    p.add_argument("--iters", type=int, default=500)
    p.add_argument("--reps", type=int, default=2, help="replications advanced together (prange)")
    p.add_argument("--big-tokens", type=int, default=65536)
    p.add_argument("--batch", type=int, default=64, help="fixed problems in the batched deterministic run")
    p.add_argument("--batch-tokens", type=int, default=256)
    p.add_argument("--repeat", type=int, default=3, help="timed repetitions of each online run (best kept)")
    p.add_argument("--quick", action="store_true", help="small sizes, seconds")
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    if a.quick:
        a.tokens, a.iters, a.big_tokens, a.batch = 1024, 100, 8192, 16
    N, E, K = a.tokens, a.experts, a.k
    means = np.linspace(-1.0, 1.0, E)
    gen = iid_plus_offset(means, 1.0)

    sign = alf_lb(step=0.01, rule="sign")
    sim.run(sign, routing(gen, n_tokens=64, k=K), horizon=2, n_reps=1, backend="numba")  # compile
    scores_and_top_k(gen.params, E, K, 64, 2, np.uint64(1), a.reps)

    def online():
        return sim.run(sign, routing(gen, n_tokens=N, k=K), horizon=a.iters, n_reps=a.reps, seed=1, backend="numba",
                       metrics=["maxvio"], checkpoints=np.arange(a.iters // 2 + 1, a.iters + 1))

    # interleaved: ALF-LB, then the roofline (best of --repeat each)
    secs = roof_secs = np.inf
    for _ in range(a.repeat):
        s1, c1, res = best_of(online, 1)
        s3, c3, _ = best_of(lambda: scores_and_top_k(gen.params, E, K, N, a.iters, np.uint64(1), a.reps), 1)
        if s1 < secs:
            alf_cpu, r = c1, res  # process CPU seconds (all threads) of the fastest ALF-LB run
        if s3 < roof_secs:
            roof_cpu = c3
        secs, roof_secs = min(secs, s1), min(roof_secs, s3)
    alf_rate = a.iters * a.reps / secs
    roof_rate = a.iters * a.reps / roof_secs
    late = r.metrics["maxvio"].mean()  # the second half of the batches

    # one fresh batch, routed by the learned bias and solved exactly
    scores = gen.draw(np.uint64(7), np.arange(1, dtype=np.uint64), 0, N)[0]
    routed = top_k_route(scores, r.final["bias"][0], K)
    prob = AssignmentProblem(scores, K)  # balanced capacity N K / E
    t0, c0 = time.perf_counter(), time.process_time()
    exact = solve_exact(prob, method="flow")
    flow_secs, flow_cpu = time.perf_counter() - t0, time.process_time() - c0
    alf_score = float((scores * routed).sum())

    big = gen.draw(np.uint64(9), np.arange(1, dtype=np.uint64), 0, a.big_tokens)[0]
    t0 = time.perf_counter()
    big_res = solve_exact(AssignmentProblem(big, K), method="flow")
    big_secs = time.perf_counter() - t0

    rows = [
        ("ALF-LB (numba, sign, u=0.01)", f"{alf_rate:10.1f} batches/s", f"MaxVio {late:.4f} (mean, 2nd half)",
         f"score {alf_score / exact.objective:.6f} of optimum on a fresh batch (MaxVio {maxvio(routed, K):.4f})"),
        ("roofline: scores + top-K", f"{roof_rate:10.1f} batches/s", "every score, no bias, no update", ""),
        ("exact min-cost flow", f"{1 / flow_secs:10.1f} batches/s", f"MaxVio {maxvio(exact.assignment, K):.4f}",
         f"gap {exact.duality_gap:.1e}"),
    ]
    print(f"batches of {N} tokens x {E} experts, K = {K}; floor sqrt((E/K)/N) = {np.sqrt(E / K / N):.4f}; "
          f"{a.reps} replications in parallel, best of {a.repeat}")
    for row in rows:
        print("  ".join(f"{c:<34s}" for c in row))
    print(f"ALF-LB is {alf_rate * flow_secs:.0f}x faster per batch than the exact solve; "
          f"{alf_rate / roof_rate:.2f} of the roofline's throughput")
    per_batch = alf_cpu / (a.iters * a.reps)
    cpu_ratio = flow_cpu / per_batch
    print(f"per CPU-second (all threads): ALF-LB {per_batch * 1e3:.1f} ms per batch "
          f"({per_batch / (N * E) * 1e9:.1f} ns per token-expert pair), roofline "
          f"{roof_cpu / (a.iters * a.reps) * 1e3:.1f} ms, exact solve {flow_cpu * 1e3:.0f} ms: {cpu_ratio:.0f}x")
    print(f"exact min-cost flow at {a.big_tokens} x {E}, K = {K}: {big_secs:.2f} s "
          f"(gap {big_res.duality_gap:.1e})")
    # deterministic ALF-LB on a batch of fixed problems: one fused call vs one call per problem
    batch = AssignmentBatch(gen.draw(np.uint64(11), np.arange(a.batch, dtype=np.uint64), 0, a.batch_tokens), K)
    decaying = alf_lb(step=5.0, rule="decaying")
    t0 = time.perf_counter()
    rb = sim.run(decaying, routing_fixed(batch), horizon=a.iters, n_reps=a.batch, backend="numba")
    batched_secs = time.perf_counter() - t0
    t0 = time.perf_counter()
    singles = [sim.run(decaying, routing_fixed(batch.problem(r)), horizon=a.iters, n_reps=1, backend="numba")
               for r in range(a.batch)]
    loop_secs = time.perf_counter() - t0
    same = all(np.allclose(rb.final["bias"][r], one.final["bias"][0], rtol=0, atol=1e-12)
               for r, one in enumerate(singles))
    print(f"deterministic ALF-LB on {a.batch} fixed problems of {a.batch_tokens} x {E}, {a.iters} iterations: "
          f"batched {batched_secs:.3f} s, one call per problem {loop_secs:.3f} s, "
          f"ratio {loop_secs / batched_secs:.1f}x (same biases: {same})")
    rec = {
        "benchmark": "balance", "batched_seconds": batched_secs, "per_problem_seconds": loop_secs, "config": vars(a), "machine": platform.machine(),
        "cpu_count": os.cpu_count(), "load_average_1min": os.getloadavg()[0],
        "alf_lb_batches_per_s": alf_rate, "roofline_batches_per_s": roof_rate,
        "roofline_cpu_seconds_per_batch": roof_cpu / (a.iters * a.reps),
        "alf_lb_over_roofline": alf_rate / roof_rate, "alf_lb_speedup_over_flow": alf_rate * flow_secs,
        "alf_lb_cpu_seconds_per_batch": alf_cpu / (a.iters * a.reps), "flow_cpu_seconds": flow_cpu,
        "alf_lb_speedup_over_flow_per_cpu_second": cpu_ratio,
        "alf_lb_late_maxvio": float(late),
        "alf_lb_score_ratio": alf_score / exact.objective, "flow_seconds": flow_secs,
        "flow_maxvio": maxvio(exact.assignment, K), "big_flow_seconds": big_secs,
        "sampling_floor": float(np.sqrt(E / K / N)),
    }
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rec, f, indent=2)
        print(f"wrote {a.json}")
    return rec


if __name__ == "__main__":
    main()
