"""The ``expertlab`` command line: list, run, rates, sweep."""

from __future__ import annotations

import argparse
import fnmatch
import json
import pathlib
import sys
import time

__all__ = ["main"]


def _parse_kv(items, what):
    out = {}
    for item in items or []:
        if "=" not in item:
            raise SystemExit(f"error: {what} must look like key=value, got {item!r}")
        k, v = item.split("=", 1)
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def _registries():
    from .sim._sweep import default_registries

    return default_registries()


def cmd_list(args) -> int:
    from . import sim

    print("learners (name: family, feedback):")
    for name, r in sim.learners().items():
        print(f"  {name:28s} {r.family:9s} {r.feedback}")
    print("environments (name: family, feedback):")
    for name, r in sim.environments().items():
        print(f"  {name:28s} {r.family:9s} {r.feedback}")
    print("claims:")
    for name, c in sim.claims().items():
        print(f"  {name:38s} {c.law:5s} {c.quantity} vs {c.variable}: {c.predicted:g} ± {c.tolerance:g}  ({c.source})")
    return 0


def _rate(x: float) -> str:
    """``x`` with a k or M prefix and three significant digits (``"0.00 M"`` says nothing about a small run)."""
    for scale, prefix in ((1e6, " M"), (1e3, " k")):
        if x >= scale:
            return f"{x / scale:.3g}{prefix}"
    return f"{x:.3g}"


def cmd_run(args) -> int:
    import numpy as np

    from . import sim

    learners, instances = _registries()
    if args.learner not in learners:
        raise SystemExit(f"error: unknown learner {args.learner!r}; choose from {', '.join(sorted(learners))}")
    if args.instance not in instances:
        raise SystemExit(f"error: unknown instance {args.instance!r}; choose from {', '.join(sorted(instances))}")
    try:
        learner = learners[args.learner](**_parse_kv(args.param, "--param"))
        instance = instances[args.instance](**_parse_kv(args.instance_param, "--instance-param"))
        if args.awake is not None:
            from .experts.instances import sleeping

            instance = sleeping(instance, args.awake)
        res = sim.run(learner, instance, horizon=args.horizon, n_reps=args.reps, seed=args.seed,
                      backend=args.backend, dtype=args.dtype)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise SystemExit(f"error: {exc}") from None
    names = list(res.metrics)
    if args.json:
        rec = {
            "learner": res.learner, "learner_params": res.learner_params, "environment": res.environment,
            "environment_params": res.environment_params, "unit": res.unit, "horizon": res.horizon,
            "n_reps": res.n_reps, "seed": res.seed, "backend": res.backend, "dtype": res.dtype,
            "wall_time": res.wall_time,
            "checkpoints": res.checkpoints.tolist(),
            "metrics": {m: {"mean": res.mean(m).tolist(), "stderr": res.stderr(m).tolist()} for m in names},
        }
        print(json.dumps(rec, indent=2))
        return 0
    print(f"{learner!r} on {instance!r}: {res.horizon} {res.unit}s, {res.n_reps} reps, seed {res.seed}, "
          f"backend {res.backend}" + ("" if res.dtype == "float64" else f" ({res.dtype})")
          + f", {res.wall_time:.2f} s ({_rate(res.updates_per_second)} replication-"
          f"{res.unit}s/s" + (", compilation included" if res.backend in ("numba", "cuda") else "") + ")")
    # a metric equal to an earlier one in every replication and checkpoint carries no information of its own
    # in this run (e.g. regret and pseudo_regret when the losses are deterministic): one column, and a note
    same_as = {}
    for j, n in enumerate(names):
        for m in names[:j]:
            if m not in same_as and np.array_equal(res.metrics[n], res.metrics[m]):
                same_as[n] = m
                break
    for n, m in same_as.items():
        print(f"({n} equals {m} in every replication of this run: shown once, as {m})")
    names = [n for n in names if n not in same_as]
    print(res.unit.rjust(10) + "".join(f"{n:>28s}" for n in names))
    show = [i for i, t in enumerate(res.checkpoints)
            if t == res.horizon or np.log10(t) == int(np.log10(t))]
    for i in show:
        row = "".join(f"{res.mean(n)[i]:>17.4f} ± {res.stderr(n)[i]:<8.4f}" for n in names)
        print(f"{res.checkpoints[i]:>10d}{row}")
    return 0


def cmd_rates(args) -> int:
    from . import sim
    from .sim._progress import progress_bar

    exps = sim.discover(args.sims)
    registered = sim.claims()
    pattern = args.only or "*"
    selected = [e for e in exps if fnmatch.fnmatch(e.claim, pattern)]
    missing = [n for n in registered if fnmatch.fnmatch(n, pattern) and n not in {e.claim for e in exps}]
    if not selected and not missing:
        raise SystemExit(f"error: no claim matches {pattern!r}")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    mode = "quick" if args.quick else "full"
    print(f"expertlab rates ({mode}, backend {args.backend}, seed {args.seed}): {len(selected)} claims -> {out}/")
    head = f"{'claim':40s} {'law':5s} {'predicted':>12s} {'fitted [CI]':>30s} {'reps':>5s} {'secs':>6s}  verdict"
    print(head)
    print("-" * len(head))
    records, n_fail = [], 0
    t_all = time.perf_counter()
    jobs = _rates_jobs(args.jobs, selected)
    # one bar over the claims; the runs inside the experiments show none of their own
    with progress_bar(args.progress, total=len(selected), desc="rates", unit="claim") as bar:
        for i, outcome in _run_rate_experiments(selected, jobs, args.quick, args.backend, args.seed, out):
            e = selected[i]
            bar.update(1)
            if isinstance(outcome, BaseException):  # a broken experiment is a failed claim, reported, not a crash
                n_fail += 1
                bar.write(f"{e.claim:40s} ERROR: {type(outcome).__name__}: {outcome}")
                records.append((i, {"claim": e.claim, "passed": False,
                                    "error": f"{type(outcome).__name__}: {outcome}"}))
                continue
            chk, secs = outcome
            c = chk.claim
            verdict = "pass" if chk.passed else "FAIL"
            n_fail += not chk.passed
            fit = f"{chk.fitted:.4g} [{chk.ci_low:.4g}, {chk.ci_high:.4g}]"
            pred = f"{c.predicted:g}±{c.tolerance:g}"
            bar.write(f"{c.name:40s} {c.law:5s} {pred:>12s} {fit:>30s} {chk.n_reps:5d} {secs:6.1f}  {verdict}")
            records.append((i, chk.to_dict() | {"seconds": secs}))
    records = [r for _, r in sorted(records, key=lambda ir: ir[0])]  # discovery order, whatever finished first
    for n in missing:
        n_fail += 1
        print(f"{n:40s} FAIL: registered claim has no experiment in {args.sims or 'simulations/'}")
        records.append({"claim": n, "passed": False, "error": "no experiment"})
    total = time.perf_counter() - t_all
    report = {"mode": mode, "backend": args.backend, "seed": args.seed, "seconds": total, "claims": records}
    (out / "report.json").write_text(json.dumps(report, indent=2))
    n_ok = len(records) - n_fail
    print(f"{n_ok} passed, {n_fail} failed in {total:.1f} s; plots and report.json in {out}/")
    return 1 if n_fail else 0


#: The experiments of the running ``expertlab rates``, inherited by forked worker processes.
_RATE_EXPERIMENTS: list = []


def _source(exp) -> str:
    """The module (simulation file) that defines an experiment's measure."""
    import functools

    m = exp.measure
    while isinstance(m, functools.partial):
        m = m.func
    return getattr(m, "__module__", "")


def _rates_jobs(jobs, selected) -> int:
    """Worker processes for ``rates``: ``--jobs``, default one per core, at most one per simulation file."""
    import os

    groups = len({_source(e) for e in selected})
    if jobs is None:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if jobs < 1:
        raise SystemExit(f"error: --jobs must be at least 1, got {jobs}")
    return max(1, min(jobs, groups))


def _run_group(indices, quick, backend, seed, out):
    """Run the experiments ``indices`` of :data:`_RATE_EXPERIMENTS` in order (one simulation file).

    Their runs show no progress bars of their own (``rates`` shows one over the claims).
    """
    from . import sim
    from .sim._progress import quiet

    done = []
    with quiet():
        for i in indices:
            try:
                chk, _, secs = sim.run_experiment(_RATE_EXPERIMENTS[i], quick=quick, backend=backend, seed=seed,
                                                  out=out)
                done.append((i, (chk, secs)))
            except Exception as exc:
                done.append((i, exc))
    return done


def _run_rate_experiments(selected, jobs, quick, backend, seed, out):
    """Yield ``(index, (check, seconds) or exception)``; several files at once in forked processes.

    The experiments of one simulation file run in order in one process, so the caches they share (one run
    measured by several claims) still serve them all.  Workers are forked, so they see the imported
    simulation modules; every draw is keyed by the seed, so the verdicts do not depend on ``jobs``.
    """
    global _RATE_EXPERIMENTS
    _RATE_EXPERIMENTS = list(selected)
    groups: dict = {}
    for i, e in enumerate(selected):
        groups.setdefault(_source(e), []).append(i)
    if jobs == 1:
        for idx in groups.values():
            yield from _run_group(idx, quick, backend, seed, out)
        return
    import concurrent.futures
    import multiprocessing

    order = sorted(groups.values(), key=len, reverse=True)  # the longest files first
    ctx = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        futures = [pool.submit(_run_group, idx, quick, backend, seed, out) for idx in order]
        for fut in concurrent.futures.as_completed(futures):
            yield from fut.result()


def cmd_sweep(args) -> int:
    from .sim import _sweep

    try:
        spec = _sweep.load_sweep_spec(args.file)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise SystemExit(f"error: {exc}") from None
    kwargs = dict(spec)
    if args.out is not None:
        kwargs["out"] = args.out
    if kwargs.get("out") is None:
        kwargs["out"] = str(pathlib.Path(args.file).with_suffix("")) + "-results"
    if args.scheduler is not None:
        kwargs["scheduler"] = args.scheduler
    try:
        res = _sweep.sweep(**kwargs)
    except (OSError, ValueError) as exc:  # an unusable --out (a file, read-only, other settings), bad configs
        raise SystemExit(f"error: {exc}") from None
    print(res.summary_text())
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(prog="expertlab", description=__doc__)
    p.add_argument("--version", action="version", version=f"expertlab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("list", help="registered learners, instances and claims")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("run", help="simulate one learner on one instance")
    s.add_argument("learner")
    s.add_argument("--instance", required=True)
    s.add_argument("--param", action="append", metavar="KEY=VALUE", help="learner hyperparameter (JSON value)")
    s.add_argument("--instance-param", action="append", metavar="KEY=VALUE", help="instance parameter (JSON value)")
    s.add_argument("--awake", type=float, default=None, metavar="P",
                   help="sleeping experts: each expert awake with probability P each round")
    s.add_argument("--horizon", type=int, default=1000)
    s.add_argument("--reps", type=int, default=100)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--backend", default="auto", choices=["auto", "numpy", "numba", "cuda", "cupy"])
    s.add_argument("--dtype", default="float64", choices=["float64", "float32"],
                   help="float32: opt-in for GPU speed (array path and CUDA kernels; see sim.run)")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("rates", help="check every registered rate claim")
    s.add_argument("--quick", action="store_true", help="quick settings (minutes); default: full-size sweeps")
    s.add_argument("--only", metavar="PATTERN", help="only claims whose name matches this glob pattern")
    s.add_argument("--backend", default="auto", choices=["auto", "numpy", "numba", "cuda", "cupy"],
                   help="auto: the fused Numba kernel where a learner has one, else NumPy")
    s.add_argument("--out", default="rates-out", help="directory for plots and report.json")
    s.add_argument("--sims", default=None, help="simulations directory (default: the checkout's simulations/)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--jobs", type=int, default=None,
                   help="worker processes (default: one per core); the claims of one simulation file share one")
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="a progress bar over the claims on stderr (default: when stderr is a terminal, "
                        "shown once the check has taken two seconds)")
    s.set_defaults(func=cmd_rates)

    s = sub.add_parser("sweep", help="run a resumable sweep described by a JSON/TOML file")
    s.add_argument("file")
    s.add_argument("--scheduler", default=None, metavar="ADDRESS", help="Dask scheduler, e.g. tcp://host:8786")
    s.add_argument("--out", default=None, help="results directory (default: beside FILE)")
    s.set_defaults(func=cmd_sweep)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
