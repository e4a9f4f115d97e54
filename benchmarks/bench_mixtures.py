"""The contaminated-MoE rate grid fitted batched against one replication at a time.

Prints, in one run, for the protocol of ``simulations/mixtures/contaminated_moe.py``
(distinguishable setting: Laplace ``f0``, ``d = 8``, the perturbed-truth warm start,
``tol = 1e-10``, at most 1000 EM iterations): the wall time of the batched fits over
``R`` replications at each sample size (in blocks of at most ``max_points`` samples,
as the simulation runs them) with the compiled engine (the default for NumPy
inputs), the time of ``--loop-reps`` of the same replications fitted one at a time
(``batched=False``) with the compiled engine and with the array engine (the path
CuPy arrays take, and the only one before the compiled kernel), each scaled to
``R`` replications, the speed-ups, and the largest difference between the answers.
The default is the source paper's grid (``R = 40``, 20 sample sizes from 10^3 to
10^5); ``--quick`` runs 5 sizes up to 10^4.  Nothing is asserted: the numbers are for
the record (JSON with ``--json``).

    python benchmarks/bench_mixtures.py [--quick] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

from expertlab.mixtures import (ContaminatedMoEParams, FrozenExpert, fit_contaminated_moe, perturbed_truth,
                                sample_contaminated_moe)

FIELDS = ("beta", "tau", "eta", "nu")


def _setting(n, d, n_reps):
    e1 = np.eye(d)[0]
    truth = ContaminatedMoEParams.tile(np.ones(d) / np.sqrt(d), 1.0, -e1, 1e-3, n_reps)
    return truth, FrozenExpert(e1, 1e-3, "laplace")


def _data(n, d, r0, m, seed):
    truth, expert = _setting(n, d, m)
    X, y, _ = sample_contaminated_moe(n, truth, expert, seed=np.random.SeedSequence([seed, n]), first_rep=r0)
    init = perturbed_truth(truth, scale=0.1, seed=np.random.SeedSequence([seed, n, 1]), first_rep=r0)
    return X, y, expert, init


def _batched(n, d, n_reps, max_points, tol, max_iter, seed, engine="auto"):
    """Batched fits of replications 0..n_reps-1 at size n; returns (seconds, params list, iterations)."""
    block = max(1, min(n_reps, max_points // n))
    params, iters, secs = [], [], 0.0
    for r0 in range(0, n_reps, block):
        m = min(block, n_reps - r0)
        X, y, expert, init = _data(n, d, r0, m, seed)
        t0 = time.perf_counter()
        res = fit_contaminated_moe(X, y, expert, init=init, tol=tol, max_iter=max_iter, batched=True, engine=engine)
        secs += time.perf_counter() - t0
        params += [res.params.select(i) for i in range(m)]
        iters += list(np.asarray(res.n_iter))
    return secs, params, iters


def _loop(n, d, n_loop, tol, max_iter, seed, engine="auto"):
    """Replications 0..n_loop-1 at size n fitted one at a time (batched=False)."""
    params, iters, secs = [], [], 0.0
    for r in range(n_loop):
        X, y, expert, init = _data(n, d, r, 1, seed)
        t0 = time.perf_counter()
        res = fit_contaminated_moe(X[0], y[0], expert, init=init.select(0), tol=tol, max_iter=max_iter,
                                   engine=engine)
        secs += time.perf_counter() - t0
        params.append(res.params)
        iters.append(int(res.n_iter))
    return secs, params, iters


def _max_difference(a, b):
    return max(float(np.max(np.abs(np.asarray(getattr(p, f), dtype=float) - np.asarray(getattr(q, f), dtype=float))))
               for p, q in zip(a, b) for f in FIELDS)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=40)
    p.add_argument("--loop-reps", type=int, default=4, help="replications fitted one at a time per size")
    p.add_argument("--d", type=int, default=8)
    p.add_argument("--max-points", type=int, default=1_000_000)
    p.add_argument("--tol", type=float, default=1e-10)
    p.add_argument("--max-iter", type=int, default=1000)
    p.add_argument("--quick", action="store_true", help="5 sizes from 1e3 to 1e4")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    sizes = np.geomspace(1e3, 1e4, 5) if a.quick else np.geomspace(1e3, 1e5, 20)
    sizes = [int(round(v)) for v in sizes]
    n_loop = min(a.loop_reps, a.reps)
    _batched(200, a.d, 2, a.max_points, a.tol, 5, a.seed)  # load (or compile) the kernel outside the timings
    rows, tb_all, tl_all, ta_all = [], 0.0, 0.0, 0.0
    for n in sizes:
        tb, pb, ib = _batched(n, a.d, a.reps, a.max_points, a.tol, a.max_iter, a.seed)
        tl, pl, il = _loop(n, a.d, n_loop, a.tol, a.max_iter, a.seed)
        ta, pa, ia = _loop(n, a.d, n_loop, a.tol, a.max_iter, a.seed, engine="array")
        scaled, scaled_a = tl * a.reps / n_loop, ta * a.reps / n_loop
        diff = max(_max_difference(pl, pb[:n_loop]), _max_difference(pa, pb[:n_loop]))
        same = il == [int(i) for i in ib[:n_loop]] == ia
        tb_all += tb
        tl_all += scaled
        ta_all += scaled_a
        rows.append({"n": n, "batched_s": tb, "loop_s_measured": tl, "loop_reps": n_loop, "loop_s_scaled": scaled,
                     "array_loop_s_measured": ta, "array_loop_s_scaled": scaled_a,
                     "speedup": scaled / tb, "speedup_over_array_loop": scaled_a / tb,
                     "max_param_difference": diff, "same_iterations": same,
                     "max_iterations_batched": int(max(ib))})
        print(f"n = {n:>6}: batched {tb:7.2f} s for {a.reps} reps; one at a time, scaled to {a.reps}: compiled "
              f"{scaled:7.2f} s (x{scaled / tb:4.2f}), array {scaled_a:7.2f} s (x{scaled_a / tb:4.2f}); "
              f"max |difference| {diff:.1e}; same iterations: {same}")
    print(f"grid of {len(sizes)} sizes x {a.reps} replications (d = {a.d}): batched {tb_all:.1f} s; one at a time "
          f"(scaled): compiled {tl_all:.1f} s (x{tl_all / tb_all:.2f}), array engine {ta_all:.1f} s "
          f"(x{ta_all / tb_all:.2f})")
    rec = {"sizes": sizes, "reps": a.reps, "d": a.d, "tol": a.tol, "max_iter": a.max_iter, "rows": rows,
           "batched_total_s": tb_all, "loop_total_s_scaled": tl_all, "array_loop_total_s_scaled": ta_all,
           "speedup": tl_all / tb_all, "speedup_over_array_loop": ta_all / tb_all,
           "python": platform.python_version(), "numpy": np.__version__}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rec, f, indent=2)
    return rec


if __name__ == "__main__":
    main()
