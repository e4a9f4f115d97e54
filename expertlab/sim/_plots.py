"""Plots of runs, rate checks and the library's result records.

Everything here draws on a given matplotlib ``Axes`` or, without one, on a
new :class:`matplotlib.figure.Figure` that no pyplot state knows about, so
that it works under any backend (``Agg`` included) and never opens a
window; every function returns the ``Axes`` (``ax.figure`` is the figure;
in a notebook with IPython's inline display on, it shows as the value of a
cell).
"""

from __future__ import annotations

import math
import pathlib
from typing import Sequence

import numpy as np

from .._validation import check_float

__all__ = ["plot", "plot_check"]

_PLURAL = {"batch": "batches"}


def new_axes(ax=None):
    """``ax`` after checking that it is a matplotlib ``Axes``, or new axes on a standalone figure."""
    if ax is None:
        from matplotlib.figure import Figure

        return Figure(figsize=(6.0, 4.2), layout="constrained").add_subplot()
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    return ax


def save(ax, path) -> None:
    """Write the figure of ``ax`` to ``path`` (format from the suffix: PNG, PDF, SVG, ...)."""
    if path is None:
        return
    import os

    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or path-like) or None, got {type(path).__name__}")
    ax.figure.savefig(pathlib.Path(path), dpi=110)


def _check_bool(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__}")
    return bool(value)


def _check_label(label, name: str = "label"):
    if label is not None and not isinstance(label, str):
        raise TypeError(f"{name} must be a string or None, got {type(label).__name__}")
    return label


# ---------------------------------------------------------------------------
# runs


def _check_run(result, name: str):
    from ._result import RunResult

    if not isinstance(result, RunResult):
        raise TypeError(f"{name} must be a RunResult, got {type(result).__name__}")
    return result


def _check_metric(result, metric, name: str = "result"):
    if metric is None:
        if not result.metrics:
            raise ValueError(f"{name} recorded no metric to plot")
        return next(iter(result.metrics))
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a metric name (str) or None, got {type(metric).__name__}")
    if metric not in result.metrics:
        raise ValueError(f"metric {metric!r} is not recorded by {name} ({result.learner} on {result.environment}); "
                         f"it has {list(result.metrics)}")
    return metric


def _x_label(unit: str) -> str:
    return _PLURAL.get(unit, unit + "s")


def plot_run(result, metric=None, *, ax=None, label=None, z=1.96, loglog=False, **line_kwargs):
    """Draw one run: the mean of ``metric`` over replications with a ``mean ± z·stderr`` band.

    The implementation of :meth:`RunResult.plot` (see there).
    """
    result = _check_run(result, "result")
    metric = _check_metric(result, metric)
    z = check_float(z, "z", minimum=0.0)
    loglog = _check_bool(loglog, "loglog")
    label = _check_label(label)
    ax = new_axes(ax)
    x = np.asarray(result.checkpoints)
    m, se = result.mean(metric), result.stderr(metric)
    (line,) = ax.plot(x, m, label=result.learner if label is None else label, **line_kwargs)
    if np.any(np.isfinite(se)) and z > 0:  # one replication: no standard error, no band
        ax.fill_between(x, m - z * se, m + z * se, color=line.get_color(), alpha=0.25, lw=0)
    if loglog:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel(_x_label(result.unit))
    ax.set_ylabel(metric)
    return ax


def _same(a, b) -> bool:
    """Whether two parameter values are equal (arrays elementwise; anything else by ``==``, then ``repr``)."""
    if hasattr(a, "shape") or hasattr(b, "shape"):
        try:
            return bool(np.array_equal(np.asarray(a), np.asarray(b)))
        except (TypeError, ValueError):
            return False
    try:
        eq = a == b
        return bool(eq) if isinstance(eq, (bool, np.bool_)) else repr(a) == repr(b)
    except Exception:
        return repr(a) == repr(b)


def _differing(mappings) -> list:
    """Keys whose values are not the same in every mapping (a key missing somewhere differs)."""
    keys = list(dict.fromkeys(k for m in mappings for k in m))
    out = []
    for k in keys:
        first = mappings[0]
        if any(k not in m for m in mappings) or any(not _same(first[k], m[k]) for m in mappings[1:]):
            out.append(k)
    return out


def _fmt(v) -> str:
    if isinstance(v, str):
        return v
    if hasattr(v, "shape") and getattr(v, "ndim", 0) > 0:
        return f"<{'x'.join(map(str, v.shape))} array>"
    if isinstance(v, float):
        return f"{v:g}"
    r = repr(v)
    return r if len(r) <= 30 else r[:27] + "..."


def _kv(params, keys) -> str:
    return ", ".join(f"{k}={_fmt(params[k])}" for k in keys if k in params)


def default_labels(results) -> list[str]:
    """Legend labels that tell ``results`` apart: the learner's name plus what differs between the runs.

    Each label is the learner's name, then in parentheses the learner
    parameters whose values differ between the runs, then (when the
    environments differ) ``on <environment>`` with its differing
    parameters; runs still alike get the settings that differ (seed,
    horizon, replications, backend) in brackets, and a label that is still
    not unique gets ``#i``, the run's position.  One run is labelled by its
    learner's name.

    Parameters
    ----------
    results : sequence of RunResult

    Returns
    -------
    list of str

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import hedge, instances
    >>> env = instances.fair_coins(3)
    >>> runs = [sim.run(hedge(), env, 20, 4), sim.run(hedge(schedule="doubling"), env, 20, 4)]
    >>> default_labels(runs)
    ['hedge (schedule=anytime)', 'hedge (schedule=doubling)']
    """
    results = [_check_run(r, f"results[{i}]") for i, r in enumerate(results)]
    if len(results) == 1:
        return [results[0].learner]
    lkeys = _differing([r.learner_params for r in results])
    envs_differ = len({r.environment for r in results}) > 1
    ekeys = _differing([r.environment_params for r in results])
    run_fields = ("seed", "horizon", "n_reps", "rep_offset", "backend")
    labels = []
    for r in results:
        text = r.learner
        kv = _kv(r.learner_params, lkeys)
        if kv:
            text += f" ({kv})"
        if envs_differ or ekeys:
            text += f" on {r.environment}"
            kv = _kv(r.environment_params, ekeys)
            if kv:
                text += f" ({kv})"
        labels.append(text)
    if len(set(labels)) < len(labels):
        fields = [f for f in run_fields if len({getattr(r, f) for r in results}) > 1]
        if fields:
            labels = [lab + " [" + ", ".join(f"{f}={getattr(r, f)}" for f in fields) + "]"
                      for lab, r in zip(labels, results)]
    if len(set(labels)) < len(labels):
        counts = {lab: labels.count(lab) for lab in labels}
        labels = [f"{lab} #{i}" if counts[lab] > 1 else lab for i, lab in enumerate(labels)]
    return labels


def _as_runs(results) -> list:
    from ._result import RunResult
    from ._sweep import SweepResult

    if isinstance(results, RunResult):
        return [results]
    if isinstance(results, SweepResult):
        return list(results.results)
    if isinstance(results, (str, bytes)) or not isinstance(results, Sequence):
        raise TypeError(f"results must be a RunResult, a SweepResult or a sequence of RunResults, "
                        f"got {type(results).__name__}")
    runs = [_check_run(r, f"results[{i}]") for i, r in enumerate(results)]
    if not runs:
        raise ValueError("results is empty; give at least one RunResult")
    return runs


def plot(results, labels=None, *, metric=None, ax=None, z: float = 1.96, loglog: bool = False, path=None):
    """Mean curves of several runs, each with its confidence band, on one axes.

    Parameters
    ----------
    results : RunResult, SweepResult or sequence of RunResult
        Runs in the same unit (all rounds, all episodes, ...).
    labels : sequence of str, optional
        One legend label per run; default ``default_labels``, which
        names the learner and the parameters that differ between the runs,
        so that two configurations never share a label.
    metric : str, optional
        The metric to draw; default the first metric of the first run.
        Every run must record it.
    ax : matplotlib Axes, optional
        Draw there; default new axes on a standalone figure.
    z : float
        Half-width of the bands in standard errors (1.96: 95% normal bands).
    loglog : bool
        Logarithmic x and y axes.
    path : str or path-like, optional
        Also write the figure there (format from the suffix).

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        If ``labels`` does not have one entry per run, a run lacks
        ``metric``, or the runs count their horizons in different units.

    See Also
    --------
    RunResult.plot : one run, with line options.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import hedge, instances
    >>> env = instances.fair_coins(3)
    >>> runs = [sim.run(hedge(), env, 50, 8), sim.run(hedge(schedule="doubling"), env, 50, 8)]
    >>> ax = sim.plot(runs)
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['hedge (schedule=anytime)', 'hedge (schedule=doubling)']
    """
    runs = _as_runs(results)
    metric = _check_metric(runs[0], metric, "results[0]")
    for i, r in enumerate(runs[1:], 1):
        _check_metric(r, metric, f"results[{i}]")
    units = list(dict.fromkeys(r.unit for r in runs))
    if len(units) > 1:
        raise ValueError(f"results count their horizons in different units ({', '.join(units)}); "
                         "plot them on separate axes")
    if labels is None:
        labels = default_labels(runs)
    else:
        if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence):
            raise TypeError(f"labels must be a sequence of strings, one per run, got {type(labels).__name__}")
        labels = list(labels)
        if len(labels) != len(runs):
            raise ValueError(f"labels has {len(labels)} entries for {len(runs)} runs; give one label per run")
        for i, lab in enumerate(labels):
            _check_label(lab, f"labels[{i}]")
    z = check_float(z, "z", minimum=0.0)
    loglog = _check_bool(loglog, "loglog")
    ax = new_axes(ax)
    for r, lab in zip(runs, labels):
        plot_run(r, metric, ax=ax, label=lab, z=z, loglog=loglog)
    ax.legend(fontsize="small")
    save(ax, path)
    return ax


# ---------------------------------------------------------------------------
# rate checks


def plot_check(check, measurement=None, *, title: str = "", ax=None, path=None, z: float = 1.96):
    """The data behind a :class:`RateCheck`, with the fitted and the claimed laws.

    Power laws are drawn log-log: the Monte Carlo mean with its
    ``mean ± z·stderr`` band, the fitted line over the fit window (its slope
    and confidence interval in the legend), the claimed exponent through the
    window's first point, and the fit window shaded when it leaves points
    out.  Log laws use a logarithmic x axis; value claims mark the predicted
    value.

    Parameters
    ----------
    check : RateCheck
    measurement : Measurement, optional
        Supplies the axis labels and extra reference curves.
    title : str
        Default: the claim's name.  The verdict is appended.
    ax : matplotlib Axes, optional
        Draw there; default new axes on a standalone figure.
    path : str or path-like, optional
        Also write the figure there.
    z : float
        Half-width of the band in standard errors.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from ._rates import RateCheck

    if not isinstance(check, RateCheck):
        raise TypeError(f"check must be a RateCheck, got {type(check).__name__}")
    z = check_float(z, "z", minimum=0.0)
    c = check.claim
    ax = new_axes(ax)
    x, m, se = check.x, check.mean, check.stderr
    if c.law == "value" and x.size == 1:
        ax.errorbar([0], m, yerr=z * se, fmt="o", label=f"Monte Carlo mean ± {z:g} s.e.")
        ax.axhline(c.predicted, color="k", ls="--", label=f"predicted {c.predicted:.4g}")
        ax.set_xticks([])
    else:
        (line,) = ax.plot(x, m, "o-", ms=3, label=f"Monte Carlo mean ± {z:g} s.e.")
        power = c.law in ("power", "power_at_most", "power_at_least")
        lo = np.maximum(m - z * se, m * 1e-3) if power else m - z * se
        ax.fill_between(x, lo, m + z * se, color=line.get_color(), alpha=0.25, lw=0)
        xw = x[check.window]
        if xw.size and xw.size < x.size and c.law in ("power", "power_at_most", "power_at_least", "log"):
            ax.axvspan(xw.min(), xw.max(), color="0.9", zorder=0, label="fit window")
        if power:
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.plot(xw, np.exp(check.intercept) * xw ** check.fitted, "r-",
                    label=f"fit: slope {check.fitted:.3f} [{check.ci_low:.3f}, {check.ci_high:.3f}]")
            x0, y0 = xw[0], m[check.window][0]
            claimed = {"power_at_most": "claimed slope ≤ ", "power_at_least": "claimed slope ≥ "}.get(
                c.law, "claimed slope ")
            ax.plot(xw, y0 * (xw / x0) ** c.predicted, "k--", label=f"{claimed}{c.predicted:g}")
        elif c.law == "log":
            ax.set_xscale("log")
            ax.plot(xw, check.intercept + check.fitted * np.log(xw), "r-",
                    label=f"fit: {check.fitted:.3f}·ln x [{check.ci_low:.3f}, {check.ci_high:.3f}]")
            x0, y0 = xw[0], m[check.window][0]
            ax.plot(xw, y0 + c.predicted * (np.log(xw) - math.log(x0)), "k--",
                    label=f"claimed {c.predicted:g}·ln x")
        else:
            ax.axhline(c.predicted, color="k", ls="--", label=f"predicted {c.predicted:.4g}")
        if measurement is not None:
            for label, (cx, cy) in measurement.curves.items():
                ax.plot(cx, cy, ":", label=label)
    if measurement is not None:
        ax.set_ylabel(measurement.ylabel)
    else:
        ax.set_ylabel(c.quantity)
    xlabel = measurement.xlabel if measurement is not None else c.variable
    ax.set_xlabel(f"{xlabel}\nsource: {c.source}", fontsize="small")
    verdict = "pass" if check.passed else "FAIL"
    ax.set_title(f"{title or c.name} — {verdict}", fontsize="medium")
    ax.legend(fontsize="small")
    save(ax, path)
    return ax


# ---------------------------------------------------------------------------
# helpers of the records' .plot methods


def plot_paths(values, *, ax=None, label=None, xlabel: str, ylabel: str, logy: bool = False,
               start: int = 0, **line_kwargs):
    """Per-iteration paths: ``values`` of shape ``(n_steps,)`` or ``(n_paths, n_steps)``, NaN after a path stops.

    One path is drawn with markers; several are drawn as thin lines (NaN
    tails are left out).  ``x`` counts iterations from ``start``.
    """
    from .._backend import asnumpy

    label = _check_label(label)
    ax = new_axes(ax)
    v = np.asarray(asnumpy(values), dtype=np.float64)
    if v.ndim not in (1, 2):
        raise ValueError(f"values must have shape (n_steps,) or (n_paths, n_steps), got {v.shape}")
    x = np.arange(start, start + v.shape[-1])
    if v.ndim == 1:
        kw = {"marker": "o", "ms": 3} | line_kwargs
        ax.plot(x, v, label=label, **kw)
    else:
        alpha = max(0.15, min(1.0, 3.0 / max(v.shape[0], 1)))
        kw = {"lw": 1.0, "alpha": alpha} | line_kwargs
        lines = ax.plot(x, v.T, **kw)
        if lines:
            color = lines[0].get_color()
            for ln in lines:
                ln.set_color(color)
            lines[0].set_label(f"{label} ({v.shape[0]} paths)" if label else f"{v.shape[0]} paths")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return ax


def plot_loads(loads, *, ax=None, capacity=None, mean_line: bool = True, before=None, title: str = "",
               label: str = "load"):
    """Bars of the tokens per expert (the mean over batches with their range when ``loads`` is batched).

    ``capacity`` (a number or one per expert) is drawn as a red line,
    the balanced load (the mean over experts) as a dashed line, and
    ``before`` (loads before a capacity was applied) as outlined steps.
    """
    ax = new_axes(ax)
    loads = np.asarray(loads, dtype=np.float64)
    n_experts = loads.shape[-1]
    flat = loads.reshape(-1, n_experts)
    e = np.arange(n_experts)
    mean = flat.mean(axis=0)
    if flat.shape[0] > 1:
        err = np.stack([mean - flat.min(axis=0), flat.max(axis=0) - mean])
        ax.bar(e, mean, yerr=err, capsize=2, color="C0", alpha=0.8,
               label=f"mean {label} over {flat.shape[0]} batches (bars: min to max)")
    else:
        ax.bar(e, mean, color="C0", alpha=0.8, label=label)
    if before is not None:
        b = np.asarray(before, dtype=np.float64).reshape(-1, n_experts).mean(axis=0)
        ax.step(e, b, where="mid", color="k", lw=1.0, label="before the capacity")
    if mean_line:
        ax.axhline(float(mean.mean()), color="0.3", ls="--", lw=1.0, label=f"balanced ({mean.mean():.4g})")
    if capacity is not None:
        cap = np.broadcast_to(np.asarray(capacity, dtype=np.float64), (n_experts,))
        if np.all(cap == cap[0]):
            ax.axhline(float(cap[0]), color="C3", lw=1.5, label=f"capacity ({cap[0]:.4g})")
        else:
            ax.step(e, cap, where="mid", color="C3", lw=1.5, label="capacity")
    ax.set_xlabel("expert")
    ax.set_ylabel("tokens")
    if n_experts <= 32:
        ax.set_xticks(e)
    if title:
        ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small")
    return ax
