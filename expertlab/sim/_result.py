"""``RunResult``: what every run of :func:`expertlab.sim.run` returns, whatever the family."""

from __future__ import annotations

import dataclasses
import html
import importlib
import json
import math
import numbers
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ._protocol import short_params

__all__ = ["RunResult"]


def optional_import(module: str):
    """Import ``pandas`` or ``xarray`` for an export; ImportError naming the ``data`` extra if missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"this export needs {module}, which is not installed; install the 'data' extra: "
                          "pip install expertlab[data]") from exc


def _jsonable(obj):
    """``default`` of :func:`json.dumps` for export attributes: arrays and NumPy scalars as plain data."""
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return repr(obj)


def json_text(value) -> str:
    """``value`` as compact JSON text (keys sorted where they can be; arrays as lists)."""
    try:
        return json.dumps(value, default=_jsonable, sort_keys=True, separators=(",", ":"))
    except TypeError:  # keys of mixed types cannot be sorted
        return json.dumps(value, default=_jsonable, separators=(",", ":"))


def attr_value(value):
    """A netCDF-safe attribute value: a str, int (64-bit) or float as it is, anything else as JSON text.

    Booleans and None become ``"true"``, ``"false"``, ``"null"`` (netCDF has
    no boolean or empty attribute), lists, tuples, dicts and arrays their
    JSON text.
    """
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bool, np.bool_)):
        return json_text(bool(value))
    if isinstance(value, numbers.Integral):
        return int(value) if -2 ** 63 <= int(value) < 2 ** 63 else str(int(value))
    if isinstance(value, numbers.Real):
        return float(value)
    return json_text(value)


def mean_se_text(result: "RunResult", metric: str) -> str:
    """``"<mean> ± <stderr>"`` of ``metric`` at the last checkpoint of ``result``."""
    return f"{float(result.mean(metric)[-1]):.4g} ± {float(result.stderr(metric)[-1]):.2g}"


def html_table(head, rows, caption: str | None = None) -> str:
    """A compact HTML table; every cell is escaped (``head`` may be None: rows of ``(name, value)``)."""
    left = ' style="text-align:left"'
    parts = ["<table>"]
    if caption:
        parts.append(f"<caption{left}>{html.escape(caption)}</caption>")
    if head is not None:
        parts.append("<thead><tr>" + "".join(f"<th{left}>{html.escape(str(h))}</th>" for h in head)
                     + "</tr></thead>")
        parts.append("<tbody>" + "".join("<tr>" + "".join(f"<td{left}>{html.escape(str(c))}</td>" for c in row)
                                         + "</tr>" for row in rows) + "</tbody>")
    else:
        parts.append("<tbody>" + "".join(f"<tr><th{left}>{html.escape(str(k))}</th>"
                                         f"<td{left}>{html.escape(str(v))}</td></tr>" for k, v in rows)
                     + "</tbody>")
    parts.append("</table>")
    return "".join(parts)


@dataclasses.dataclass(frozen=True, repr=False, eq=False)
class RunResult:
    """Metrics of a batch of replications on a checkpoint grid.

    The axis order is the same for every family: ``metrics[name]`` is
    ``(n_checkpoints, n_reps)`` and ``final[name]`` has the replication axis
    first.

    Attributes
    ----------
    learner, environment : str
        Names of the learner and the environment.
    learner_params, environment_params : mapping
    unit : str
        What one step of ``horizon`` is: ``"round"``, ``"episode"``,
        ``"step"`` or ``"batch"``.
    horizon, n_reps : int
    seed : int
        The ``uint64`` root seed used (also when ``seed=None`` was passed).
    rep_offset : int
        Index of the first replication: replications ``rep_offset ..
        rep_offset + n_reps - 1`` are the same whatever the batching.
    backend : str
        The backend that actually ran (``"numpy"``, ``"numba"``, ``"cuda"``, ``"cupy"``).
    checkpoints : ndarray of int, shape (n_checkpoints,)
        Steps (1-based counts) after which metrics were recorded.
    metrics : mapping of str to ndarray (n_checkpoints, n_reps)
    final : mapping of str to ndarray (n_reps, ...)
        Per-replication values at the end of the run (for procedures with a
        stopping time: ``stopping_time``, ``stopped`` and ``answer``).
    wall_time : float
        Seconds spent in the time loop (summed over the blocks of a
        :meth:`concat`); compiling a compiled path's kernel, or loading it
        from the disk cache, happens before and is not counted.
    dtype : str
        The floating type the learner and the environment computed in
        (``"float64"``, or ``"float32"`` when the run opted in); the metrics
        are float64 either way.

    Notes
    -----
    Export: :meth:`to_xarray` (an ``xarray.Dataset``) and :meth:`to_pandas`
    (a long ``pandas.DataFrame``) need the ``data`` extra
    (``pip install expertlab[data]``); :meth:`save` and :meth:`load` keep a
    result on disk exactly, in the file format of a sweep block.  In a
    notebook a result shows as a small table (``_repr_html_``).
    """

    learner: str
    environment: str
    learner_params: Mapping[str, Any]
    environment_params: Mapping[str, Any]
    unit: str
    horizon: int
    n_reps: int
    seed: int
    rep_offset: int
    backend: str
    checkpoints: np.ndarray
    metrics: Mapping[str, np.ndarray]
    final: Mapping[str, np.ndarray]
    wall_time: float
    dtype: str = "float64"

    def __post_init__(self):
        from ._protocol import UNITS

        if self.dtype not in ("float64", "float32"):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {self.dtype!r}")

        if self.unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, got {self.unit!r}")
        for name in ("horizon", "n_reps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        ck = np.asarray(self.checkpoints)
        if (ck.ndim != 1 or ck.size < 1 or not np.issubdtype(ck.dtype, np.integer)
                or np.any(np.diff(ck) <= 0) or ck[0] < 1 or ck[-1] > self.horizon):
            raise ValueError(f"checkpoints must be increasing integer steps in [1, horizon={self.horizon}], "
                             f"got {ck!r}")
        want = (ck.size, self.n_reps)
        for name, value in self.metrics.items():
            if np.shape(value) != want:
                raise ValueError(f"metrics[{name!r}] must have shape (n_checkpoints, n_reps) = {want}, "
                                 f"got {np.shape(value)}")
        for name, value in self.final.items():
            if np.ndim(value) < 1 or np.shape(value)[0] != self.n_reps:
                raise ValueError(f"final[{name!r}] must have the replication axis first (length "
                                 f"n_reps={self.n_reps}), got shape {np.shape(value)}")

    def metric(self, name: str = "regret") -> np.ndarray:
        """The ``(n_checkpoints, n_reps)`` array of metric ``name``."""
        if not isinstance(name, str):
            raise TypeError(f"metric must be a metric name (str), got {type(name).__name__}")
        if name not in self.metrics:
            raise KeyError(f"unknown metric {name!r}; this run recorded {sorted(self.metrics)}")
        return self.metrics[name]

    def mean(self, metric: str = "regret") -> np.ndarray:
        """Mean over replications at each checkpoint, shape ``(n_checkpoints,)``."""
        return self.metric(metric).mean(axis=1)

    def stderr(self, metric: str = "regret") -> np.ndarray:
        """Standard error of the mean at each checkpoint (``ddof=1``; NaN with one replication)."""
        x = self.metric(metric)
        if x.shape[1] < 2:
            return np.full(x.shape[0], np.nan)
        return x.std(axis=1, ddof=1) / math.sqrt(x.shape[1])

    @property
    def updates_per_second(self) -> float:
        """Replication-steps per second of wall time: ``n_reps * horizon / wall_time``."""
        return self.n_reps * self.horizon / max(self.wall_time, 1e-12)

    @staticmethod
    def concat(results) -> "RunResult":
        """Join runs of consecutive replication blocks (same configuration) along replications.

        The joined ``wall_time`` is the sum of the blocks' (compute time,
        whether or not the blocks ran at the same time).
        """
        results = sorted(results, key=lambda r: r.rep_offset)
        if not results:
            raise ValueError("results must hold at least one RunResult")
        first = results[0]
        for a, b in zip(results, results[1:]):
            if b.rep_offset != a.rep_offset + a.n_reps:
                raise ValueError("results must be consecutive replication blocks")
            if (a.learner, a.environment, a.horizon, a.seed, a.unit) != (
                    b.learner, b.environment, b.horizon, b.seed, b.unit):
                raise ValueError("results must come from the same learner, environment, horizon and seed")
            if a.dtype != b.dtype:
                raise ValueError(f"results must share one dtype, got {a.dtype!r} and {b.dtype!r}")
            if set(a.metrics) != set(b.metrics) or not np.array_equal(a.checkpoints, b.checkpoints):
                raise ValueError("results must record the same metrics at the same checkpoints")
        return dataclasses.replace(
            first,
            n_reps=sum(r.n_reps for r in results),
            metrics={k: np.concatenate([r.metrics[k] for r in results], axis=1) for k in first.metrics},
            final={k: np.concatenate([r.final[k] for r in results], axis=0) for k in first.final},
            wall_time=sum(r.wall_time for r in results),
        )

    def __repr__(self) -> str:
        names = ", ".join(self.metrics)
        head = f"RunResult({self.learner}({short_params(self.learner_params)}) on {self.environment}"
        lines = [head + ")",
                 f"  {self.n_reps} reps x {self.horizon} {self.unit}s, seed={self.seed}, "
                 f"rep_offset={self.rep_offset}, backend={self.backend!r}"
                 + ("" if self.dtype == "float64" else f", dtype={self.dtype!r}") + f", {self.wall_time:.3g} s",
                 f"  metrics (n_ck={self.checkpoints.size}, n_reps={self.n_reps}): {names}"]
        if "regret" in self.metrics:
            m, se = self.mean()[-1], self.stderr()[-1]
            lines.append(f"  final mean regret {m:.6g} +- {se:.2g}")
        if self.final:
            lines.append(f"  final: {', '.join(self.final)}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ export

    def _export_attrs(self) -> dict:
        """Dataset attributes: names, unit, horizon, seed, backend, version and parameters (netCDF-safe)."""
        from .. import __version__

        attrs = {"learner": self.learner, "environment": self.environment, "unit": self.unit,
                 "horizon": int(self.horizon), "seed": str(int(self.seed)), "backend": self.backend,
                 "dtype": self.dtype, "wall_time": float(self.wall_time), "expertlab_version": __version__}
        for prefix, params in (("learner_param_", self.learner_params),
                               ("environment_param_", self.environment_params)):
            for key, value in params.items():
                attrs[f"{prefix}{key}"] = attr_value(value)
        return attrs

    def _export_names(self) -> tuple[dict, dict]:
        """``metric -> variable`` and ``final key -> variable`` names, checked for clashes."""
        taken = {"checkpoint": "the checkpoint coordinate", "rep": "the rep coordinate"}
        metric_vars, final_vars = {}, {}
        for kind, keys, names, prefix in (("metric", self.metrics, metric_vars, ""),
                                          ("final", self.final, final_vars, "final_")):
            for key in keys:
                var = f"{prefix}{key}"
                if var in taken:
                    raise ValueError(f"cannot export {kind} {key!r}: its variable name {var!r} is also "
                                     f"{taken[var]}")
                taken[var] = f"the variable of {kind} {key!r}"
                names[key] = var
        return metric_vars, final_vars

    def _tidy_columns(self) -> dict[str, np.ndarray]:
        """Columns ``checkpoint``, ``rep``, ``metric``, ``value`` of the long table of the metrics.

        One row per (metric, checkpoint, replication): metric-major, then
        checkpoint, replications fastest.
        """
        names = list(self.metrics)
        ckpts = np.asarray(self.checkpoints)
        n_ck, n_reps = ckpts.size, self.n_reps
        if names:
            value = np.concatenate([np.asarray(self.metrics[m]).reshape(-1) for m in names])
        else:
            value = np.empty(0)
        return {"checkpoint": np.tile(np.repeat(ckpts, n_reps), len(names)),
                "rep": np.tile(self.rep_offset + np.arange(n_reps), n_ck * len(names)),
                "metric": np.repeat(np.array(names, dtype=object), n_ck * n_reps),
                "value": value}

    def to_xarray(self):
        """The result as an ``xarray.Dataset`` (needs the ``data`` extra).

        Returns
        -------
        xarray.Dataset
            One data variable per metric, dims ``("checkpoint", "rep")``
            (``metrics[name]`` as it is, not transposed); one variable
            ``final_<key>`` per final array, dims ``("rep", ...)`` (further
            axes are named ``final_<key>_dim1``, ...).  Coordinates:
            ``checkpoint`` (the step counts) and ``rep`` (replication indices
            ``rep_offset .. rep_offset + n_reps - 1``).  Attributes:
            ``learner``, ``environment``, ``unit``, ``horizon``, ``seed``
            (as decimal text: a ``uint64`` fits no signed netCDF integer),
            ``backend``, ``wall_time``, ``expertlab_version`` and one
            ``learner_param_<name>`` / ``environment_param_<name>`` per
            parameter: strings and numbers as they are, anything else
            (booleans, None, lists, arrays, dicts) as JSON text, so the
            dataset can be written with ``to_netcdf``.  Arrays are copies.

        Raises
        ------
        ImportError
            Without xarray (``pip install expertlab[data]``).
        ValueError
            If a metric's name is ``checkpoint``, ``rep`` or ``final_<key>``
            of a final array (two variables would share a name).

        Examples
        --------
        >>> from expertlab import sim
        >>> from expertlab.experts import hedge, instances
        >>> res = sim.run(hedge(), instances.fair_coins(3), horizon=100, n_reps=4, seed=5, rep_offset=10)
        >>> ds = res.to_xarray()
        >>> ds["regret"].dims, [int(r) for r in ds["rep"]], ds.attrs["seed"], ds.attrs["unit"]
        (('checkpoint', 'rep'), [10, 11, 12, 13], '5', 'round')
        >>> float(ds["regret"].sel(checkpoint=100, rep=12)) == float(res.metrics["regret"][-1, 2])
        True
        """
        xr = optional_import("xarray")
        metric_vars, final_vars = self._export_names()
        data_vars = {}
        for key, var in metric_vars.items():
            data_vars[var] = (("checkpoint", "rep"), np.array(self.metrics[key]))
        for key, var in final_vars.items():
            arr = np.array(self.final[key])
            data_vars[var] = (("rep",) + tuple(f"{var}_dim{j}" for j in range(1, arr.ndim)), arr)
        coords = {"checkpoint": np.array(self.checkpoints), "rep": self.rep_offset + np.arange(self.n_reps)}
        return xr.Dataset(data_vars, coords=coords, attrs=self._export_attrs())

    def to_pandas(self):
        """The metrics as a long ("tidy") ``pandas.DataFrame`` (needs the ``data`` extra).

        Returns
        -------
        pandas.DataFrame
            Columns ``checkpoint``, ``rep``, ``metric``, ``value``,
            ``learner``, ``environment``; one row per metric, checkpoint and
            replication (``n_checkpoints * n_reps * n_metrics`` rows), ready
            for ``groupby(["metric", "checkpoint"])`` or seaborn.  ``value``
            has the metrics' common dtype.  The ``final`` arrays are not in
            it (see :meth:`to_xarray`).

        Raises
        ------
        ImportError
            Without pandas (``pip install expertlab[data]``).

        Examples
        --------
        >>> from expertlab import sim
        >>> from expertlab.experts import hedge, instances
        >>> res = sim.run(hedge(), instances.fair_coins(3), horizon=100, n_reps=4, seed=5)
        >>> df = res.to_pandas()
        >>> len(df) == res.checkpoints.size * res.n_reps * len(res.metrics)
        True
        >>> list(df.columns)
        ['checkpoint', 'rep', 'metric', 'value', 'learner', 'environment']
        """
        pd = optional_import("pandas")
        cols = self._tidy_columns()
        n = cols["value"].size
        cols["learner"] = np.full(n, self.learner, dtype=object)
        cols["environment"] = np.full(n, self.environment, dtype=object)
        return pd.DataFrame(cols)

    def save(self, path) -> Path:
        """Save the result exactly, as ``<name>.npz`` and its JSON sidecar ``<name>.json``.

        The format is that of a block of a sweep: the arrays (checkpoints,
        metrics, final arrays, and arrays among the parameters) in the
        ``.npz``; names, parameters, seed, backend, wall time, the expertlab
        version and the SHA-256 of the ``.npz`` in the sidecar.  Each file is
        written atomically and the sidecar last, so a process killed while
        saving leaves no half-written file: :meth:`load` then finds the old
        pair, or refuses the new one with an error naming the file at fault.
        An existing pair at ``path`` is replaced; a ``<name>.json`` that is
        not a result's sidecar is not.

        Parameters
        ----------
        path : str or path-like
            ``<name>.npz`` (or ``<name>.json``); its folder must exist.

        Returns
        -------
        pathlib.Path
            The ``.npz`` written.

        Raises
        ------
        ValueError
            If ``path`` ends in neither ``.npz`` nor ``.json``.
        TypeError
            If ``path`` is not a path, or a parameter is neither numbers,
            strings, booleans, None, lists, tuples, dicts nor NumPy arrays.
        FileExistsError
            If ``<name>.json`` exists and is not a result's sidecar.
        OSError
            If the folder is missing or read-only (the message names it).

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from expertlab import sim
        >>> from expertlab.experts import hedge, instances
        >>> res = sim.run(hedge(), instances.fair_coins(3), horizon=50, n_reps=4, seed=5)
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     _ = res.save(pathlib.Path(tmp) / "hedge.npz")
        ...     back = sim.RunResult.load(pathlib.Path(tmp) / "hedge.npz")
        >>> bool((back.metrics["regret"] == res.metrics["regret"]).all()), back.seed, back.backend == res.backend
        (True, 5, True)
        """
        from ._storage import write_result

        return write_result(path, self)

    @classmethod
    def load(cls, path) -> "RunResult":
        """Load a result written by :meth:`save` (or one block of a sweep folder).

        Parameters
        ----------
        path : str or path-like
            ``<name>.npz`` or its sidecar ``<name>.json``.

        Returns
        -------
        RunResult
            Equal to the saved one: arrays bit for bit (dtypes included),
            parameters (arrays, tuples and non-finite floats too), seed,
            ``rep_offset``, backend and wall time.

        Raises
        ------
        FileNotFoundError
            If neither file exists (the message names the path).
        ValueError
            (a subclass with a ``.path`` attribute) naming
            the file at fault if the pair is damaged: a file is missing (an
            interrupted save), the sidecar does not parse, or the ``.npz``
            does not match the SHA-256 the sidecar records (truncated or
            corrupt).

        Examples
        --------
        See :meth:`save`.
        """
        from ._storage import read_result

        return read_result(path)

    def _repr_html_(self) -> str:
        rows = [("learner", f"{self.learner}({short_params(self.learner_params)})"),
                ("environment", f"{self.environment}({short_params(self.environment_params)})"),
                ("unit", self.unit), ("horizon", self.horizon), ("n_reps", self.n_reps), ("seed", self.seed),
                ("backend", self.backend)]
        rows += [(f"{name} at {int(self.checkpoints[-1])} (mean ± se)", mean_se_text(self, name))
                 for name in self.metrics]
        if self.final:
            rows.append(("final", ", ".join(self.final)))
        return html_table(None, rows, caption="RunResult")

    def plot(self, metric: str | None = None, *, ax=None, label: str | None = None, z: float = 1.96,
             loglog: bool = False, **line_kwargs):
        """Mean of ``metric`` over replications at each checkpoint, with a ``mean ± z·stderr`` band.

        Parameters
        ----------
        metric : str, optional
            Default: the first metric of the run (e.g. ``"regret"``).
        ax : matplotlib Axes, optional
            Draw there (to overlay runs); default new axes on a standalone
            :class:`matplotlib.figure.Figure`, which needs no pyplot state
            and works under any backend.
        label : str, optional
            Legend label of the line; default the learner's name
            (:func:`expertlab.sim.plot` labels several runs apart).
        z : float
            Half-width of the band in standard errors (1.96: a 95% normal
            band); no band with one replication.
        loglog : bool
            Logarithmic x and y axes.
        **line_kwargs
            Passed to ``ax.plot`` for the mean line (``color``, ``ls``, ...);
            the band takes the line's colour.

        Returns
        -------
        matplotlib.axes.Axes
            x: the checkpoints, labelled by the run's unit; y: the metric.

        Examples
        --------
        >>> from expertlab import sim
        >>> from expertlab.experts import hedge, instances
        >>> res = sim.run(hedge(), instances.fair_coins(3), horizon=100, n_reps=20, seed=0)
        >>> ax = res.plot()
        >>> ax.get_xlabel(), ax.get_ylabel(), bool((ax.lines[0].get_ydata() == res.mean()).all())
        ('rounds', 'regret', True)
        """
        from ._plots import plot_run

        return plot_run(self, metric, ax=ax, label=label, z=z, loglog=loglog, **line_kwargs)
