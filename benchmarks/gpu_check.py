"""One-shot check of the GPU backends on a machine that has a GPU.

On a machine with an NVIDIA GPU (CuPy importable with a device, or
``numba.cuda.is_available()``), the script

1. runs the ``gpu``-marked tests (``pytest -m gpu tests``), which compare the
   CuPy array path with NumPy for several learners;
2. times a few throughput rows through :func:`expertlab.sim.run`, each in
   float64 and in float32 (``dtype="float32"``): Hedge with full information
   on ``instances.iid_uniform`` and UCB1 on a Bernoulli bandit, with
   ``backend="numpy"``, ``"cupy"`` and ``"cuda"``.  Every float64 GPU run is
   compared metric by metric with the float64 NumPy run of the same seed (the
   engine's counter-based random numbers make them equal up to the last bits
   of ``exp``/``log``: :data:`RTOL`); every float32 run's mean curves are
   compared with the float64 NumPy run's (:data:`FLOAT32_RTOL`, the
   tolerance ``sim.run`` states for float32);
3. writes one JSON report: the device, the test outcome, the throughput of
   every backend and dtype and its largest relative difference from NumPy.

None of this has run on GPU hardware yet: the CUDA kernels (float64 and
float32) are tested only under Numba's CUDA simulator, and the CuPy path
only through ``array_api_strict``.

It stops adding rows after about seven minutes, so it ends within eight.
Without a GPU it prints one line that starts with ``no GPU:`` and exits 0;
``NUMBA_ENABLE_CUDASIM=1`` (the CUDA simulator) does not count as a GPU.

    python benchmarks/gpu_check.py                       # report in gpu_check.json
    python benchmarks/gpu_check.py --json out.json --skip-tests
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

#: The whole script must finish within this many seconds; rows stop being added after ``_ROWS_UNTIL``.
_BUDGET_S = 480.0
_ROWS_UNTIL = 420.0
#: Relative agreement with NumPy that the report calls "equal" (the conformance suites use 1e-10).
RTOL = 1e-10
#: Relative agreement of a float32 run's mean curves with the float64 NumPy run's (see ``sim.run``'s ``dtype``).
FLOAT32_RTOL = 1e-2
DTYPES = ("float64", "float32")


def detect_gpu():
    """``(name or None, cupy_ok, cuda_ok, reasons)``: what GPU the backends can use here."""
    reasons = []
    name = None
    cupy_ok = False
    try:
        import cupy

        n = cupy.cuda.runtime.getDeviceCount()
        if n >= 1:
            cupy_ok = True
            props = cupy.cuda.runtime.getDeviceProperties(0)
            name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        else:
            reasons.append("CuPy sees no device")
    except ImportError:
        reasons.append("CuPy is not installed")
    except Exception as exc:  # a driver error, no device, ...
        reasons.append(f"CuPy cannot use a device ({type(exc).__name__}: {exc})")
    cuda_ok = False
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        reasons.append("numba.cuda is the simulator (NUMBA_ENABLE_CUDASIM=1)")
    else:
        try:
            from numba import cuda

            cuda_ok = bool(cuda.is_available())
            if cuda_ok and name is None:
                name = cuda.get_current_device().name
                name = name.decode() if isinstance(name, bytes) else str(name)
            if not cuda_ok:
                reasons.append("numba.cuda.is_available() is False")
        except Exception as exc:
            reasons.append(f"numba.cuda cannot start ({type(exc).__name__}: {exc})")
    return name, cupy_ok, cuda_ok, reasons


def run_gpu_tests(timeout_s):
    """Run ``pytest -m gpu tests``; return its exit code, last summary line and duration."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = [sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider", "-n", "0", "tests"]
    t0 = time.perf_counter()
    try:
        out = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=timeout_s)
        lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
        return {"returncode": out.returncode, "summary": lines[-1] if lines else "",
                "seconds": round(time.perf_counter() - t0, 1)}
    except subprocess.TimeoutExpired:
        return {"returncode": None, "summary": f"timed out after {timeout_s:.0f} s",
                "seconds": round(time.perf_counter() - t0, 1)}


def max_rel_diff(ref, got):
    """Largest ``|got - ref| / max(|ref|, 1e-300)`` over every metric; inf if shapes, names or NaNs differ."""
    if set(ref) != set(got):
        return float("inf")
    worst = 0.0
    for k in ref:
        a, b = np.asarray(ref[k], dtype=np.float64), np.asarray(got[k], dtype=np.float64)
        if a.shape != b.shape or not np.array_equal(np.isfinite(a), np.isfinite(b)):
            return float("inf")
        fin = np.isfinite(a)
        if not np.array_equal(a[~fin], b[~fin]):
            return float("inf")
        if fin.any():
            worst = max(worst, float(np.max(np.abs(b[fin] - a[fin]) / np.maximum(np.abs(a[fin]), 1e-300))))
    return worst


def rows(quick):
    from expertlab.bandits import instances as bandit_instances
    from expertlab.bandits import ucb1
    from expertlab.experts import hedge
    from expertlab.experts import instances as expert_instances

    if quick:
        return [("hedge full information, n=100", hedge(), expert_instances.iid_uniform(100), 200, 500, 100),
                ("ucb1 Bernoulli, K=10", ucb1(), bandit_instances.bernoulli(np.linspace(0.1, 0.9, 10)),
                 200, 500, 10)]
    # sized so that the NumPy reference of each row takes seconds, not minutes
    return [("hedge full information, n=100", hedge(), expert_instances.iid_uniform(100), 2000, 1000, 100),
            ("ucb1 Bernoulli, K=10", ucb1(), bandit_instances.bernoulli(np.linspace(0.1, 0.9, 10)),
             4000, 2000, 10)]


def time_rows(backends, quick, t_start, seed=7):
    from expertlab import sim

    out = []
    for label, learner, env, n_reps, horizon, width in rows(quick):
        row = {"row": label, "n_reps": n_reps, "horizon": horizon, "backends": {}}
        ref = None
        for dtype in DTYPES:
            for backend in ["numpy"] + backends:
                key = f"{backend}/{dtype}"
                if time.perf_counter() - t_start > _ROWS_UNTIL:
                    row["backends"][key] = {"skipped": "time budget"}
                    continue
                try:
                    sim.run(learner, env, horizon=min(horizon, 20), n_reps=4, seed=seed, backend=backend,
                            progress=False, dtype=dtype)  # compile / warm up
                    t0 = time.perf_counter()
                    res = sim.run(learner, env, horizon=horizon, n_reps=n_reps, seed=seed, backend=backend,
                                  progress=False, dtype=dtype)
                    sec = time.perf_counter() - t0
                except Exception as exc:
                    row["backends"][key] = {"error": f"{type(exc).__name__}: {exc}"}
                    continue
                entry = {"seconds": round(sec, 4), "backend_used": res.backend, "dtype": res.dtype,
                         "updates_per_s": n_reps * horizon * width / sec}
                if key == "numpy/float64":
                    ref = res.metrics
                elif ref is not None and dtype == "float64":
                    d = max_rel_diff(ref, res.metrics)
                    entry["max_rel_diff_vs_numpy"] = d
                    entry["equal_to_numpy"] = bool(d <= RTOL)
                elif ref is not None:
                    d = max_rel_diff({k: v.mean(axis=1) for k, v in ref.items()},
                                     {k: v.mean(axis=1) for k, v in res.metrics.items()})
                    entry["max_rel_diff_vs_numpy"] = d
                    entry["equal_to_numpy"] = bool(d <= FLOAT32_RTOL)
                row["backends"][key] = entry
        out.append(row)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", default="gpu_check.json", help="where to write the report")
    ap.add_argument("--skip-tests", action="store_true", help="only the throughput rows")
    ap.add_argument("--quick", action="store_true", help="small rows (a smoke test of the script)")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    name, cupy_ok, cuda_ok, reasons = detect_gpu()
    if not (cupy_ok or cuda_ok):
        print("no GPU: " + "; ".join(reasons) + " -- nothing to check, exiting")
        return 0
    backends = (["cupy"] if cupy_ok else []) + (["cuda"] if cuda_ok else [])
    print(f"GPU: {name} (backends: {', '.join(backends)})", flush=True)
    report = {"device": name, "backends": backends, "unusable": reasons, "python": platform.python_version(),
              "numpy": np.__version__, "rtol": RTOL, "float32_rtol": FLOAT32_RTOL}
    if not args.skip_tests:
        report["gpu_tests"] = run_gpu_tests(timeout_s=max(60.0, _ROWS_UNTIL - 180.0))
        print(f"pytest -m gpu: {report['gpu_tests']['summary']}", flush=True)
    report["throughput"] = time_rows(backends, args.quick, t_start)
    for row in report["throughput"]:
        for b, e in row["backends"].items():
            if "updates_per_s" in e:
                eq = ("" if b == "numpy/float64"
                      else f"  max rel diff vs numpy/float64 {e['max_rel_diff_vs_numpy']:.2e}")
                print(f"{row['row']:32s} {b:14s} {e['updates_per_s']:12.3e} updates/s{eq}")
            else:
                print(f"{row['row']:32s} {b:14s} {e}")
    report["seconds"] = round(time.perf_counter() - t_start, 1)
    with open(args.json, "w") as fh:
        json.dump(report, fh, indent=2)
    print(f"report written to {args.json} ({report['seconds']} s)")
    ok = all(e.get("equal_to_numpy", True) and "error" not in e
             for row in report["throughput"] for e in row["backends"].values())
    tests_ok = args.skip_tests or report["gpu_tests"]["returncode"] == 0
    return 0 if ok and tests_ok else 1


if __name__ == "__main__":
    sys.exit(main())
