"""One-shot check of the GPU backends on a machine that has a GPU.

On a machine with an NVIDIA GPU (CuPy importable with a device, or
``numba.cuda.is_available()``), the script

1. runs the ``gpu``-marked tests (``pytest -m gpu tests``), which compare the
   CuPy array path with NumPy for several learners;
2. times a few throughput rows through :func:`expertlab.sim.run`, each in
   float64 and in float32 (``dtype="float32"``): Hedge with full information
   on ``instances.iid_uniform``, UCB1 and Thompson sampling on a Bernoulli
   bandit, with ``backend="numpy"``, ``"cupy"`` and ``"cuda"``.  Every
   float64 GPU run is compared metric by metric with the float64 NumPy run of
   the same seed (the engine's counter-based random numbers make them equal
   up to the last bits of ``exp``/``log``: :data:`RTOL`); every float32 run's
   mean curves are compared with the float64 NumPy run's
   (:data:`FLOAT32_RTOL`, the tolerance ``sim.run`` states for float32);
3. times the array-code cores that take CuPy arrays, on NumPy and on CuPy:
   batched ``value_iteration`` and ``policy_iteration`` over Garnet MDPs, and
   batched EM fits (``fit_gaussian_mixture`` and ``fit_contaminated_moe``
   with the array engine, the one CuPy inputs take), each compared with the
   NumPy answer (values and parameters to :data:`CORE_RTOL`, policies and
   iteration counts exactly);
4. writes one JSON report: the device, the test outcome, the throughput of
   every backend and dtype and its largest relative difference from NumPy.

None of this has run on GPU hardware yet: the CUDA kernels (float64 and
float32) are tested only under Numba's CUDA simulator, and the CuPy path
only through ``array_api_strict``.

It stops adding rows after about seven minutes, so it ends within eight.
Without a GPU it prints one line that starts with ``no GPU:`` and exits 0;
``NUMBA_ENABLE_CUDASIM=1`` (the CUDA simulator) does not count as a GPU.
``--stand-in`` runs the whole script on a CPU instead, with stand-ins for the
devices: the Numba CPU kernels for ``cuda`` and ``array_api_strict`` for
CuPy's namespace in the array-code cores (the simulations' CuPy rows are
left out there); it checks the script itself, and its times say nothing
about a GPU.

    python benchmarks/gpu_check.py                       # report in gpu_check.json
    python benchmarks/gpu_check.py --json out.json --skip-tests
    python benchmarks/gpu_check.py --stand-in --quick --skip-tests
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
#: Relative agreement of the array-code cores with NumPy (values, parameters, log-likelihood paths).
CORE_RTOL = 1e-7
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
        if not np.array_equal(a[~fin], b[~fin], equal_nan=True):
            return float("inf")
        if fin.any():
            worst = max(worst, float(np.max(np.abs(b[fin] - a[fin]) / np.maximum(np.abs(a[fin]), 1e-300))))
    return worst


def rows(quick):
    from expertlab.bandits import instances as bandit_instances
    from expertlab.bandits import thompson_sampling, ucb1
    from expertlab.experts import hedge
    from expertlab.experts import instances as expert_instances

    arms = bandit_instances.bernoulli(np.linspace(0.1, 0.9, 10))
    if quick:
        return [("hedge full information, n=100", hedge(), expert_instances.iid_uniform(100), 200, 500, 100),
                ("ucb1 Bernoulli, K=10", ucb1(), arms, 200, 500, 10),
                ("thompson Bernoulli, K=10", thompson_sampling(), arms, 100, 300, 10)]
    # sized so that the NumPy reference of each row takes seconds, not minutes
    return [("hedge full information, n=100", hedge(), expert_instances.iid_uniform(100), 2000, 1000, 100),
            ("ucb1 Bernoulli, K=10", ucb1(), arms, 4000, 2000, 10),
            ("thompson Bernoulli, K=10", thompson_sampling(), arms, 1000, 1000, 10)]


def _rel(ref, got):
    """Largest relative difference of two arrays (inf when shapes or non-finite entries differ)."""
    return max_rel_diff({"x": np.asarray(ref)}, {"x": np.asarray(got)})


def _on_host(x):
    """A device array as a NumPy array (CuPy's ``.get()``; ``np.asarray`` for other namespaces)."""
    return x.get() if hasattr(x, "get") else np.asarray(x)


def core_rows(quick):
    """``(label, run)`` pairs; ``run(xp)`` solves one batch in namespace ``xp`` and returns a dict of host arrays."""
    from expertlab import mdp
    from expertlab.mixtures import (ContaminatedMoEParams, FrozenExpert, fit_contaminated_moe, fit_gaussian_mixture,
                                    perturbed_truth, sample_contaminated_moe)

    n_mdps, S = (4, 20) if quick else (64, 100)
    garnet = mdp.instances.garnet(S, 5, 5, n_mdps=n_mdps, gamma=0.9, seed=0)

    def planning(solver):
        def run(xp):
            res = solver(xp.asarray(garnet.transitions), xp.asarray(garnet.rewards), 0.9)
            return {"values": _on_host(res.values), "policy": _on_host(res.policy),
                    "n_iter": _on_host(xp.asarray(res.n_iter))}
        return run

    R, n, d = (4, 500, 2) if quick else (40, 10_000, 8)
    rng = np.random.default_rng(0)
    means = np.stack([np.zeros(d), np.full(d, 3.0)])
    Xg = means[rng.integers(0, 2, size=(R, n))] + rng.standard_normal((R, n, d))

    def gmm(xp):
        res = fit_gaussian_mixture(xp.asarray(Xg), 2, covariance_type="full", seed=1, batched=True, max_iter=50,
                                   tol=1e-8)
        return {"means": _on_host(res.params.means), "loglik_path": _on_host(res.loglik_path),
                "n_iter": _on_host(xp.asarray(res.n_iter))}

    e1 = np.eye(d)[0]
    truth = ContaminatedMoEParams.tile(np.ones(d) / np.sqrt(d), 1.0, -e1, 1e-2, R)
    expert = FrozenExpert(e1, 1e-2, "laplace")
    Xc, yc, _ = sample_contaminated_moe(n, truth, expert, seed=1)
    init = perturbed_truth(truth, scale=0.1, seed=2)

    def moe(xp):
        x_init = ContaminatedMoEParams(*(xp.asarray(a) for a in (init.beta, init.tau, init.eta, init.nu)))
        res = fit_contaminated_moe(xp.asarray(Xc), xp.asarray(yc), expert, init=x_init, batched=True, max_iter=100,
                                   tol=1e-10, engine="array")
        return {**{f: _on_host(getattr(res.params, f)) for f in ("beta", "tau", "eta", "nu")},
                "loglik_path": _on_host(res.loglik_path), "n_iter": _on_host(xp.asarray(res.n_iter))}

    return [(f"value_iteration, {n_mdps} Garnet MDPs S={S} A=5", planning(mdp.value_iteration)),
            (f"policy_iteration, {n_mdps} Garnet MDPs S={S} A=5", planning(mdp.policy_iteration)),
            (f"fit_gaussian_mixture, {R} reps n={n} d={d}", gmm),
            (f"fit_contaminated_moe (array engine), {R} reps n={n} d={d}", moe)]


def time_cores(namespaces, quick, t_start):
    """Time every core row on NumPy and on each ``(name, xp)`` of ``namespaces``; compare with NumPy."""
    out = []
    for label, run in core_rows(quick):
        row = {"row": label, "backends": {}}
        ref = None
        for name, xp in [("numpy", np)] + list(namespaces):
            if time.perf_counter() - t_start > _ROWS_UNTIL:
                row["backends"][name] = {"skipped": "time budget"}
                continue
            try:
                run(xp)  # warm up (kernels, memory pools)
                t0 = time.perf_counter()
                got = run(xp)
                sec = time.perf_counter() - t0
            except Exception as exc:
                row["backends"][name] = {"error": f"{type(exc).__name__}: {exc}"}
                continue
            entry = {"seconds": round(sec, 4)}
            if name == "numpy":
                ref = got
            elif ref is not None:
                exact = [k for k in ref if k in ("policy", "n_iter")]
                d = max(_rel(ref[k], got[k]) for k in ref if k not in exact)
                same = all(np.array_equal(ref[k], got[k]) for k in exact)
                entry.update(max_rel_diff_vs_numpy=d, exact_fields_equal=same,
                             equal_to_numpy=bool(d <= CORE_RTOL and same),
                             speedup_vs_numpy=round(row["backends"]["numpy"]["seconds"] / sec, 3))
            row["backends"][name] = entry
        out.append(row)
    return out


def time_rows(backends, quick, t_start, seed=7):
    from expertlab import sim

    out = []
    for label, learner, env, n_reps, horizon, width in rows(quick):
        row = {"row": label, "n_reps": n_reps, "horizon": horizon, "backends": {}}
        ref = None
        for dtype in DTYPES:
            for backend in ["numpy"] + backends:
                if dtype == "float32" and backend == "numba":  # the CPU kernels refuse float32
                    continue
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
    ap.add_argument("--stand-in", action="store_true",
                    help="no GPU needed: the Numba CPU kernels stand in for cuda and array_api_strict for CuPy's "
                         "namespace (checks the script, not a GPU)")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    if args.stand_in:
        import array_api_strict

        name, reasons, backends = "CPU stand-in (no GPU)", [], ["numba"]
        namespaces = [("array_api_strict", array_api_strict)]
    else:
        name, cupy_ok, cuda_ok, reasons = detect_gpu()
        if not (cupy_ok or cuda_ok):
            print("no GPU: " + "; ".join(reasons) + " -- nothing to check, exiting")
            return 0
        backends = (["cupy"] if cupy_ok else []) + (["cuda"] if cuda_ok else [])
        if cupy_ok:
            import cupy

            namespaces = [("cupy", cupy)]
        else:
            namespaces = []
    print(f"GPU: {name} (backends: {', '.join(backends)})", flush=True)
    report = {"device": name, "backends": backends, "unusable": reasons, "python": platform.python_version(),
              "numpy": np.__version__, "rtol": RTOL, "float32_rtol": FLOAT32_RTOL, "core_rtol": CORE_RTOL,
              "stand_in": bool(args.stand_in)}
    if not args.skip_tests:
        report["gpu_tests"] = run_gpu_tests(timeout_s=max(60.0, _ROWS_UNTIL - 240.0))
        print(f"pytest -m gpu: {report['gpu_tests']['summary']}", flush=True)
    report["throughput"] = time_rows(backends, args.quick, t_start)
    report["cores"] = time_cores(namespaces, args.quick, t_start)
    for row in report["cores"]:
        for b, e in row["backends"].items():
            if "seconds" in e and b != "numpy":
                print(f"{row['row']:60s} {b:16s} {e['seconds']:8.3f} s  x{e['speedup_vs_numpy']:.2f} vs numpy  "
                      f"max rel diff {e['max_rel_diff_vs_numpy']:.2e}  exact fields equal: {e['exact_fields_equal']}")
            else:
                print(f"{row['row']:60s} {b:16s} {e}")
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
             for row in report["throughput"] + report["cores"] for e in row["backends"].values())
    tests_ok = args.skip_tests or report["gpu_tests"]["returncode"] == 0
    return 0 if ok and tests_ok else 1


if __name__ == "__main__":
    sys.exit(main())
