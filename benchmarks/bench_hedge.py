"""Hedge throughput in expert-updates per second, against two references.

One *expert-update* is one (replication, round, expert) triple: generating the
expert's loss, folding it into the learner's state and playing the next
distribution.  The script measures, in one process and on the same instance
(iid uniform losses drawn on the fly by the counter RNG,
:func:`expertlab.experts.instances.iid_uniform`):

* ``numpy`` (and ``cupy`` with a GPU): the array-code path of ``sim.run``, one
  Python iteration per round for all replications;
* ``numba`` (and ``cuda`` with a GPU): the fused compiled driver;
* ``object loop`` (reference *a*): one Python object per replication with its
  own weight vector, SMPyBandits style, stepping one replication at a time
  with NumPy on length-``n`` arrays;
* ``roofline`` (reference *b*): a Numba kernel (``prange`` over
  replications) that only draws the same losses with the same RNG calls and
  sums them -- the floor any implementation pays.

Compile time is excluded: every compiled path is warmed up on a tiny run first.
The slow paths (numpy, object loop) are timed on fewer rounds / replications;
throughput is a per-update rate, so the table compares rates.

    python benchmarks/bench_hedge.py                      # R=1000, n=100, T=10^4
    python benchmarks/bench_hedge.py --quick --json out.json

The performance targets are printed next to the numbers, never asserted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time

import numpy as np
from numba import njit, prange

import expertlab
from expertlab import _random, sim
from expertlab.experts import hedge, instances
from expertlab.sim._kernels import ksum

# performance targets (reported, not asserted)
TARGET_NUMBA = 100e6  # expert-updates/s on 2 cores
TARGET_RATIO_OBJECT = 25.0
TARGET_ROOFLINE = 0.25
TARGET_NUMPY = 20e6


# --------------------------------------------------------------------------
# reference (a): one Python object per replication (SMPyBandits style)


class ObjectHedge:
    """Hedge for one replication, holding its own weight vector.

    Same rule as :func:`expertlab.experts.hedge` (anytime, tuned or fixed
    rate; the doubling schedule is not implemented here): weights
    ``exp(eta_t * (R_i - max R))`` with ``R_i = L_hat - L_i``.
    """

    def __init__(self, n_experts, eta=None, horizon=None):
        self.n_experts = n_experts
        self.ln_n = math.log(n_experts) if n_experts > 1 else 0.0
        if horizon is not None:
            eta = math.sqrt(8.0 * self.ln_n / horizon)
        self.eta = eta
        self.t = 0
        self.regret = np.zeros(n_experts)
        self.weights = np.full(n_experts, 1.0 / n_experts)

    def choice_distribution(self):
        eta = self.eta if self.eta is not None else math.sqrt(8.0 * self.ln_n / (self.t + 1.0))
        v = eta * self.regret
        w = np.exp(v - v.max())
        self.weights = w / w.sum()
        return self.weights

    def get_losses(self, loss):
        mix = self.weights @ loss
        self.regret += mix - loss
        self.t += 1
        return mix


class ObjectIIDUniform:
    """The iid-uniform environment of one replication, drawing through ``_random.uniform``."""

    def __init__(self, seed_u, rep, n_experts):
        self.rkey = _random.rep_key(np.uint64(seed_u), np.uint64(rep))
        self.idx = np.arange(n_experts, dtype=np.uint64)

    def draw(self, t):
        key = _random.round_key(self.rkey, np.uint64(t))
        return _random.uniform(key, self.idx)


def object_loop(n_reps, n_experts, horizon, seed_u, rep0=0, eta=None, tuned_horizon=None):
    """Run the per-replication object loop; return the final expert regrets ``(n_reps, n)``."""
    out = np.empty((n_reps, n_experts))
    with np.errstate(over="ignore"):  # uint64 hashing wraps by design
        for r in range(n_reps):
            learner = ObjectHedge(n_experts, eta=eta, horizon=tuned_horizon)
            env = ObjectIIDUniform(seed_u, rep0 + r, n_experts)
            cum = 0.0
            cum_loss = np.zeros(n_experts)
            for t in range(horizon):
                learner.choice_distribution()
                loss = env.draw(t)
                cum += learner.get_losses(loss)
                cum_loss += loss
            out[r] = cum - cum_loss
    return out


# --------------------------------------------------------------------------
# reference (b): the roofline -- only draw the losses and sum them

_uniform_loss = instances.iid_uniform(1).loss


@njit(parallel=True, nogil=True)
def _roofline(data, seed, rep0, horizon, n, out):
    # The same RNG calls as the driver (rep key, round key, one draw per
    # expert), written as fast as the driver may be: the draws go to a buffer
    # in a loop LLVM vectorises, and are summed with four partial sums (the
    # driver's dot product <p, l> is such a sum).
    for r in prange(out.shape[0]):
        rk = _random.rep_key(seed, np.uint64(rep0 + r))
        buf = np.empty(n)
        acc = 0.0
        for t in range(horizon):
            key = _random.round_key(rk, np.uint64(t))
            for i in range(n):
                buf[i] = _uniform_loss(data, key, t, i)
            acc += ksum(buf, n)
        out[r] = acc


def roofline(n_reps, n_experts, horizon, seed_u):
    out = np.zeros(n_reps)
    _roofline((np.zeros(1),), np.uint64(seed_u), np.int64(0), np.int64(horizon), np.int64(n_experts), out)
    return out


# --------------------------------------------------------------------------
# helpers


def _timed(fn, repeat=1):
    """Best wall time of ``repeat`` calls of ``fn``, and the process CPU time of that call."""
    best = (math.inf, math.inf)
    for _ in range(repeat):
        c0 = time.process_time()
        t0 = time.perf_counter()
        fn()
        wall = time.perf_counter() - t0
        best = min(best, (wall, time.process_time() - c0))
    return best


def _gpu_backends():
    """Names of the GPU backends usable here, and why the others are skipped."""
    found, why = [], {}
    try:
        from numba import cuda

        if cuda.is_available():
            found.append("cuda")
        else:
            why["cuda"] = "numba.cuda: no GPU"
    except Exception as exc:  # pragma: no cover - depends on the machine
        why["cuda"] = f"numba.cuda unavailable ({exc})"
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            found.append("cupy")
        else:  # pragma: no cover
            why["cupy"] = "no GPU"
    except Exception as exc:
        why["cupy"] = f"CuPy unavailable ({type(exc).__name__})"
    return found, why


def _svml_state():
    """Whether Numba vectorises math calls with Intel SVML (it needs an SVML-patched llvmlite)."""
    try:
        from numba import config
        import llvmlite.binding as llvm

        has = llvm.targets.has_svml() if hasattr(llvm, "targets") else None
        return {"numba_using_svml": bool(config.USING_SVML), "llvmlite_has_svml": has}
    except Exception as exc:  # pragma: no cover
        return {"svml_error": repr(exc)}


def _learner(args):
    if args.schedule == "tuned":
        return hedge(horizon=args.horizon), dict(tuned_horizon=args.horizon)
    if args.schedule == "fixed":
        return hedge(eta=args.eta), dict(eta=args.eta)
    return hedge(), {}


def _fmt_rate(x):
    return f"{x / 1e6:10.2f} M/s"


# --------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=1000, help="replications R (default 1000)")
    ap.add_argument("--experts", type=int, default=100, help="experts n (default 100)")
    ap.add_argument("--horizon", type=int, default=10_000, help="rounds T (default 10^4)")
    ap.add_argument("--quick", action="store_true", help="small sizes (R=200, n=100, T=2000) for a smoke run")
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON")
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--schedule", choices=("anytime", "tuned", "fixed"), default="anytime",
                    help="Hedge learning-rate schedule (default anytime)")
    ap.add_argument("--eta", type=float, default=0.1, help="rate for --schedule fixed")
    ap.add_argument("--numpy-horizon", type=int, default=None,
                    help="rounds for the numpy/cupy paths (default min(T, 1000))")
    ap.add_argument("--object-reps", type=int, default=None, help="replications of the object loop (default 10)")
    ap.add_argument("--object-horizon", type=int, default=None,
                    help="rounds of the object loop (default min(T, 1000))")
    ap.add_argument("--repeat", type=int, default=1, help="timing repeats for the compiled paths (best is kept)")
    ap.add_argument("--no-gpu", action="store_true", help="skip cuda/cupy even when a GPU is present")
    args = ap.parse_args(argv)
    if args.quick:
        args.reps, args.experts, args.horizon = 200, 100, 2000
    R, n, T = args.reps, args.experts, args.horizon
    T_np = args.numpy_horizon or min(T, 1000)
    R_obj = args.object_reps or min(R, 10)
    T_obj = args.object_horizon or min(T, 1000)
    seed_u = _random.seed_to_uint64(args.seed)
    learner, obj_kw = _learner(args)
    inst = instances.iid_uniform(n)

    import numba

    info = {
        "expertlab": getattr(expertlab, "__version__", "?"),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "numba": numba.__version__,
        "numba_threads": numba.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "machine": platform.machine(),
        "processor": platform.processor(),
        **_svml_state(),
    }
    gpus, gpu_skip = ([], {"cuda": "--no-gpu", "cupy": "--no-gpu"}) if args.no_gpu else _gpu_backends()
    print(f"Hedge ({learner!r}) on iid_uniform: R={R}, n={n}, T={T}; "
          f"numba threads={info['numba_threads']}, cpus={info['cpu_affinity']}, SVML={info.get('numba_using_svml')}")
    for b, w in gpu_skip.items():
        print(f"  skipping {b}: {w}")

    rows = []

    def add(name, reps, horizon, timing, note=""):
        seconds, cpu = timing
        ups = reps * n * horizon / seconds
        rows.append({"backend": name, "n_reps": reps, "n_experts": n, "horizon": horizon,
                     "seconds": seconds, "cpu_seconds": cpu, "updates_per_s": ups,
                     "updates_per_cpu_s": reps * n * horizon / cpu, "note": note})
        print(f"  {name:<12} R={reps:<6} T={horizon:<7} {seconds:9.3f} s (cpu {cpu:8.3f} s) {_fmt_rate(ups)}",
              flush=True)

    # warm-ups (compile) and a correctness cross-check of the references on a small problem
    small = dict(horizon=50, n_reps=4, seed=seed_u)
    ref = sim.run(learner, inst, backend="numpy", **small)
    sim.run(learner, inst, backend="numba", **small)
    roofline(2, n, 5, seed_u)
    obj = object_loop(4, n, 50, seed_u, **obj_kw)
    err = float(np.abs(obj - ref.final["expert_regret"]).max())
    if err > 1e-10:
        raise RuntimeError(f"object loop disagrees with sim.run by {err:.3g}")
    for b in gpus:
        sim.run(learner, inst, backend=b, **small)

    # (b) roofline
    add("roofline", R, T, _timed(lambda: roofline(R, n, T, seed_u), args.repeat), "draw + sum losses only")
    # compiled paths at full size
    add("numba", R, T, _timed(lambda: sim.run(learner, inst, T, R, seed_u, backend="numba"), args.repeat))
    if "cuda" in gpus:
        add("cuda", R, T, _timed(lambda: sim.run(learner, inst, T, R, seed_u, backend="cuda"), args.repeat),
            "incl. host<->device copies")
    # array paths on fewer rounds
    add("numpy", R, T_np, _timed(lambda: sim.run(learner, inst, T_np, R, seed_u, backend="numpy")))
    if "cupy" in gpus:
        add("cupy", R, T_np, _timed(lambda: sim.run(learner, inst, T_np, R, seed_u, backend="cupy")))
    # (a) object loop
    add("object loop", R_obj, T_obj, _timed(lambda: object_loop(R_obj, n, T_obj, seed_u, **obj_kw)),
        "one Python object per replication, single process")

    by = {r["backend"]: r["updates_per_s"] for r in rows}
    for r in rows:
        r["ratio_to_object_loop"] = r["updates_per_s"] / by["object loop"]
        r["fraction_of_roofline"] = r["updates_per_s"] / by["roofline"]

    print()
    print(f"{'backend':<12} {'updates/s':>14} {'x object loop':>14} {'of roofline':>12} {'per CPU-s':>14}")
    for r in rows:
        print(f"{r['backend']:<12} {_fmt_rate(r['updates_per_s']):>14} {r['ratio_to_object_loop']:>13.1f}x "
              f"{r['fraction_of_roofline']:>12.3f} {_fmt_rate(r['updates_per_cpu_s']):>14}")
    print("(updates/s is wall clock; 'per CPU-s' divides by the process CPU time, which is what to compare "
          "when other processes share the cores)")
    targets = {
        "numba_updates_per_s": (by["numba"], TARGET_NUMBA),
        "numba_ratio_to_object_loop": (by["numba"] / by["object loop"], TARGET_RATIO_OBJECT),
        "numba_fraction_of_roofline": (by["numba"] / by["roofline"], TARGET_ROOFLINE),
        "numpy_updates_per_s": (by["numpy"], TARGET_NUMPY),
    }
    print("\ntargets (reported, not asserted):")
    for k, (v, goal) in targets.items():
        print(f"  {k:<28} {v:14.4g}  target >= {goal:<10.4g} {'met' if v >= goal else 'NOT met'}")

    if args.json:
        payload = {
            "benchmark": "hedge",
            "learner": repr(learner),
            "instance": repr(inst),
            "config": {"n_reps": R, "n_experts": n, "horizon": T, "numpy_horizon": T_np,
                       "object_reps": R_obj, "object_horizon": T_obj, "seed": args.seed,
                       "quick": args.quick, "repeat": args.repeat},
            "environment": info,
            "skipped": gpu_skip,
            "results": rows,
            "targets": {k: {"value": v, "target": goal, "met": bool(v >= goal)} for k, (v, goal) in targets.items()},
        }
        with open(args.json, "w") as fh:
            json.dump(payload, fh, indent=2)
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
