"""Plots of runs and rate checks (matplotlib, no pyplot state: safe under Agg)."""

from __future__ import annotations

import math
import pathlib

import numpy as np

__all__ = ["plot_regret", "plot_check"]


def _figure(figsize=(6.0, 4.2)):
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def plot_regret(results, *, metric: str = "regret", z: float = 1.96, ax=None, path=None, loglog=False):
    """Mean ``metric`` against rounds with a ``±z·stderr`` band, one curve per run.

    Parameters
    ----------
    results : RunResult or sequence of RunResult
    metric : str
    z : float
        Width of the band in standard errors (1.96: a 95% normal band).
    ax : matplotlib Axes, optional
    path : path, optional
        Write the figure there (PNG/PDF/SVG by suffix).
    loglog : bool

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(results, (list, tuple)):
        results = [results]
    fig = ax.figure if ax is not None else _figure()
    ax = ax if ax is not None else fig.add_subplot()
    for r in results:
        m, se = r.mean(metric), r.stderr(metric)
        label = f"{r.learner} ({r.n_reps} reps)"
        (line,) = ax.plot(r.checkpoints, m, label=label)
        ax.fill_between(r.checkpoints, m - z * se, m + z * se, color=line.get_color(), alpha=0.25, lw=0)
    if loglog:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel(metric.replace("_", " "))
    ax.legend(fontsize="small")
    if path is not None:
        fig.savefig(pathlib.Path(path), dpi=110)
    return fig


def plot_check(check, measurement=None, *, title: str = "", path=None, z: float = 1.96):
    """The data behind a :class:`RateCheck`, with the fitted and the claimed laws.

    Power laws are drawn log-log: the mean with a ``±z·stderr`` band, the
    fitted line over the fit window, and the claimed exponent through the
    window's first point.  Log laws use a logarithmic x axis; value claims
    mark the predicted value.
    """
    c = check.claim
    fig = _figure()
    ax = fig.add_subplot()
    x, m, se = check.x, check.mean, check.stderr
    if c.law == "value" and x.size == 1:
        ax.errorbar([0], m, yerr=z * se, fmt="o", label="Monte Carlo mean")
        ax.axhline(c.predicted, color="k", ls="--", label=f"predicted {c.predicted:.4g}")
        ax.set_xticks([])
    else:
        (line,) = ax.plot(x, m, "o-", ms=3, label="Monte Carlo mean")
        lo = np.maximum(m - z * se, m * 1e-3) if c.law in ("power", "power_at_most") else m - z * se
        ax.fill_between(x, lo, m + z * se, color=line.get_color(), alpha=0.25, lw=0)
        xw = x[check.window]
        if c.law in ("power", "power_at_most"):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.plot(xw, np.exp(check.intercept) * xw ** check.fitted, "r-",
                    label=f"fit: slope {check.fitted:.3f} [{check.ci_low:.3f}, {check.ci_high:.3f}]")
            x0, y0 = xw[0], m[check.window][0]
            ax.plot(xw, y0 * (xw / x0) ** c.predicted, "k--", label=f"claimed slope {c.predicted:g}")
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
    xlabel = measurement.xlabel if measurement is not None else c.variable
    ax.set_xlabel(f"{xlabel}\nsource: {c.source}", fontsize="small")
    verdict = "pass" if check.passed else "FAIL"
    ax.set_title(f"{title or c.name} — {verdict}", fontsize="medium")
    ax.legend(fontsize="small")
    if path is not None:
        fig.savefig(pathlib.Path(path), dpi=110)
    return fig
