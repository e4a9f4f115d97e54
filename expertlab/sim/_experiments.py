"""Experiments: the simulations that check registered rate claims.

An experiment (bsuite style) bundles what it takes to check one claim: how to
measure (a function of settings, backend and seed returning a
:class:`Measurement`), the quick and full settings, and a title.  Experiment
files live in ``simulations/<family>/<name>.py`` and expose a module-level
list ``EXPERIMENTS``; :func:`discover` imports them for the CLI and the rate
tests.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import pathlib
import sys
import time
from typing import Any, Callable, Mapping

import numpy as np

from .._validation import as_real_array, check_int
from ._rates import RateCheck, check_rate, get_claim
from .._repr import short_repr

__all__ = ["Experiment", "Measurement", "run_experiment", "discover", "default_simulations_dir",
           "final_values", "horizon_measurement", "experiment_main"]


@short_repr
@dataclasses.dataclass(frozen=True)
class Measurement:
    """Data behind a claim: ``y[k, r]`` is replication ``r`` at ``x[k]``.

    ``curves`` holds optional extra mean curves for the plot (label -> (x, y)),
    e.g. a baseline that the claim compares against.
    """

    x: np.ndarray
    y: np.ndarray
    xlabel: str
    ylabel: str
    curves: Mapping[str, tuple] = dataclasses.field(default_factory=dict)
    info: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        x = as_real_array(self.x, "x")
        y = as_real_array(self.y, "y")
        if x.ndim != 1 or x.size < 1:
            raise ValueError(f"x must be a non-empty 1-d array, got shape {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError("x contains NaN or infinite values")
        if y.ndim != 2 or y.shape[0] != x.size:
            raise ValueError(f"y must have shape (len(x), n_reps) = ({x.size}, n_reps), got {y.shape}")
        for name in ("xlabel", "ylabel"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a str, got {type(getattr(self, name)).__name__}")
        if not isinstance(self.curves, Mapping) or not isinstance(self.info, Mapping):
            raise TypeError("curves and info must be mappings")


@short_repr
@dataclasses.dataclass(frozen=True)
class Experiment:
    """A simulation that checks the registered claim ``claim``.

    ``measure(settings, backend, seed) -> Measurement``; ``quick`` and
    ``full`` are the settings of the quick path (``expertlab rates --quick``
    and the rate tests) and of the full-size sweep.
    """

    claim: str
    measure: Callable[..., Measurement]
    quick: Mapping[str, Any]
    full: Mapping[str, Any]
    title: str = ""

    def __post_init__(self):
        if not isinstance(self.claim, str) or not self.claim:
            raise TypeError(f"claim must be a claim name (str), got {self.claim!r}")
        if not callable(self.measure):
            raise TypeError(f"measure must be callable (settings, backend, seed) -> Measurement, "
                            f"got {type(self.measure).__name__}")
        for name in ("quick", "full"):
            if not isinstance(getattr(self, name), Mapping):
                raise TypeError(f"{name} must be a mapping of settings, got {type(getattr(self, name)).__name__}")
        if not isinstance(self.title, str):
            raise TypeError(f"title must be a str, got {type(self.title).__name__}")


def final_values(results, metric: str = "regret") -> np.ndarray:
    """Stack the last checkpoint of ``metric`` of several runs: shape ``(len(results), n_reps)``."""
    from ._result import RunResult

    results = list(results) if not isinstance(results, RunResult) else [results]
    if not results:
        raise ValueError("results must hold at least one RunResult")
    bad = [type(r).__name__ for r in results if not isinstance(r, RunResult)]
    if bad:
        raise TypeError(f"results must be RunResults, got {bad[0]}")
    n = {r.n_reps for r in results}
    if len(n) > 1:
        raise ValueError(f"results must have the same n_reps to be stacked, got {sorted(n)}")
    return np.stack([r.metric(metric)[-1] for r in results])


def run_experiment(exp: Experiment, *, quick: bool = True, backend: str = "auto", seed: int = 0,
                   out: str | pathlib.Path | None = None) -> tuple[RateCheck, Measurement, float]:
    """Measure, check the claim, and (with ``out``) write the plot and a JSON record.

    Returns ``(check, measurement, seconds)``.
    """
    if not isinstance(exp, Experiment):
        raise TypeError(f"exp must be an Experiment, got {type(exp).__name__}")
    if not isinstance(quick, bool):
        raise TypeError(f"quick must be a bool, got {type(quick).__name__}")
    from ._engine import check_backend

    if backend != "auto":
        check_backend(backend)
    check_int(seed, "seed", minimum=0)
    claim = get_claim(exp.claim)
    settings = exp.quick if quick else exp.full
    t0 = time.perf_counter()
    m = exp.measure(settings, backend, seed)
    if not isinstance(m, Measurement):
        raise TypeError(f"the measure of experiment {exp.claim!r} must return a Measurement, got {type(m).__name__}")
    chk = check_rate(claim, m.x, m.y, seed=seed)
    secs = time.perf_counter() - t0
    if out is not None:
        from ._plots import plot_check

        out = pathlib.Path(out)
        out.mkdir(parents=True, exist_ok=True)
        stem = claim.name.replace("/", "_")
        plot_check(chk, m, title=exp.title or claim.name, path=out / f"{stem}.png")
        rec = chk.to_dict() | {"seconds": secs, "quick": quick, "backend": backend, "seed": seed,
                               "settings": dict(settings), "info": dict(m.info)}
        (out / f"{stem}.json").write_text(json.dumps(rec, indent=2, default=_jsonable))
    return chk, m, secs


def _jsonable(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def default_simulations_dir() -> pathlib.Path:
    """``simulations/`` beside the package (source checkout), else in the working directory."""
    here = pathlib.Path(__file__).resolve().parents[2] / "simulations"
    if here.is_dir():
        return here
    return pathlib.Path.cwd() / "simulations"


def discover(path=None) -> list[Experiment]:
    """Import every ``simulations/<family>/<name>.py`` and collect their ``EXPERIMENTS``."""
    root = pathlib.Path(path) if path is not None else default_simulations_dir()
    if not root.is_dir():
        raise FileNotFoundError(f"no simulations directory at {root}; pass --sims DIR")
    found: list[Experiment] = []
    for f in sorted(root.glob("*/*.py")):
        if f.name.startswith("_"):
            continue
        mod_name = f"expertlab_simulations.{f.parent.name}.{f.stem}"
        mod = sys.modules.get(mod_name)
        if mod is None:
            spec = importlib.util.spec_from_file_location(mod_name, f)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[mod_name] = mod
            spec.loader.exec_module(mod)
        found.extend(getattr(mod, "EXPERIMENTS", []))
    names = [e.claim for e in found]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"claims checked by more than one experiment: {sorted(dup)}")
    return found


def log_grid(lo: float, hi: float, n: int) -> list[int]:
    """``n`` integers log-spaced between ``lo`` and ``hi`` (unique, sorted)."""
    return sorted({int(round(v)) for v in np.exp(np.linspace(math.log(lo), math.log(hi), n))})


def horizon_measurement(learner, instance, settings, backend, seed, *, metric="regret", curves=None,
                        ylabel=None) -> Measurement:
    """One run of ``settings["n_reps"]`` replications to ``settings["horizon"]``.

    ``x`` is the checkpoint grid and ``y`` the metric at every checkpoint: the
    measurement of a claim about growth in ``T``.
    """
    from ._engine import default_metric_names, run

    if not isinstance(settings, Mapping) or not {"horizon", "n_reps"} <= set(settings):
        raise ValueError(f"settings must be a mapping with 'horizon' and 'n_reps', got {settings!r}")
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a metric name (str), got {type(metric).__name__}")
    names = default_metric_names(instance)
    res = run(learner, instance, horizon=settings["horizon"], n_reps=settings["n_reps"], seed=seed,
              backend=backend, metrics=names if metric in names else (*names, metric))
    return Measurement(x=res.checkpoints, y=res.metric(metric), xlabel=f"{res.unit} T",
                       ylabel=ylabel or metric.replace("_", " "), curves=curves or {},
                       info={"wall_time": res.wall_time, "backend": res.backend})


def experiment_main(experiments, argv=None) -> int:
    """Command line of a simulation file: ``python simulations/<family>/<name>.py [--full] [--out DIR]``.

    ``--gallery`` is what the documentation build passes: quick settings,
    nothing written, and each :func:`expertlab.sim.plot_check` figure handed
    to pyplot so that sphinx-gallery's scraper puts it on the page.
    """
    import argparse

    from ._plots import plot_check

    p = argparse.ArgumentParser()
    p.add_argument("--full", action="store_true", help="full-size settings (default: quick)")
    p.add_argument("--out", default="rates-out", help="directory for plots and JSON")
    p.add_argument("--backend", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--gallery", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    failed = 0
    for e in experiments:
        if a.gallery:
            chk, m, secs = run_experiment(e, quick=True, backend=a.backend, seed=a.seed)
            _to_pyplot(plot_check(chk, m, title=e.title or e.claim).figure)
        else:
            chk, _, secs = run_experiment(e, quick=not a.full, backend=a.backend, seed=a.seed, out=a.out)
        failed += not chk.passed
        print(f"{chk.summary()} ({secs:.1f} s)")
    return 1 if failed else 0


def _to_pyplot(fig):
    """Hand a standalone :class:`~matplotlib.figure.Figure` to pyplot, where scrapers look."""
    import matplotlib.pyplot as plt

    plt.figure(fig)
