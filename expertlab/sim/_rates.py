"""Rate claims as data, and the check that fits them.

A :class:`RateClaim` states how a quantity scales with a variable — a power
law ``y ~ x**b`` (``law="power"``), a logarithmic law ``y ~ a + b ln x``
(``law="log"``), an exact value (``law="value"``), a lower bound on a
frequency (``law="at_least"``) or an upper bound on a power-law exponent
(``law="power_at_most"``) — together with its
source (paper and theorem) and a tolerance.  :func:`check_rate` fits the
claim on Monte Carlo data of shape ``(n_x, n_reps)`` and computes a bootstrap
confidence interval that resamples *replications* (whole trajectories), never
points of the grid, so that the correlation along a trajectory is respected.

Claims are registered next to their algorithm with :func:`register_claims`;
the registry feeds the learners' docstrings (their "Validated rates" table),
the quick rate tests and ``expertlab rates``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Mapping

import numpy as np

from .._repr import short_repr
from .._validation import check_float, check_in, check_int

__all__ = ["RateClaim", "RateCheck", "check_rate", "register_claims", "get_claim", "claims",
           "document_claims", "LAWS", "detectable_violation_rate", "DETECTION_POWER"]

LAWS = ("power", "log", "value", "at_least", "power_at_most", "power_at_least", "always")


@dataclasses.dataclass(frozen=True)
class RateClaim:
    """A stated rate, with where it comes from.

    Parameters
    ----------
    name : str
        Unique name, ``"<learner>.<what>"`` (e.g. ``"hedge.regret-vs-T"``).
    quantity : str
        What is measured (``"regret"``, ``"tracking regret"``, ...).
    variable : str
        What it scales with (``"T"``, ``"ln N"``, ...).
    law : {"power", "log", "value", "at_least", "power_at_most", "power_at_least", "always"}
        ``power``: ``predicted`` is the exponent ``b`` of ``y ~ c x**b``, fitted
        as the log-log slope of the mean.  ``log``: ``predicted`` is ``b`` in
        ``y ~ a + b ln x``.  ``value``: ``predicted`` is the exact mean of ``y``
        at the largest ``x``.  ``at_least``: ``y`` at the largest ``x`` holds
        0/1 indicators and the claim is that their success probability is at
        least ``predicted``; it passes when the one-sided Clopper–Pearson lower
        confidence bound at ``level`` is at least ``predicted - tolerance``.
        ``power_at_most``: the exponent is fitted as for ``power`` and the claim
        is that it is at most ``predicted`` (an ``O(x**b)`` upper bound); it
        passes when the lower end of the bootstrap interval is at most
        ``predicted + tolerance``.  ``power_at_least``: the mirror image, an
        ``Omega(x**b)`` lower bound; it passes when the upper end of the
        bootstrap interval is at least ``predicted - tolerance``.  ``always``: a deterministic guarantee,
        ``y >= predicted`` for every replication at every ``x``; it passes
        when the smallest entry of ``y`` is at least ``predicted - tolerance``
        (``tolerance`` is then a floating-point allowance, not a statistical
        one), and ``fitted`` is that smallest entry.
    predicted : float
    tolerance : float
        The claim passes when ``predicted`` lies in the confidence interval
        widened by ``tolerance`` on each side (absolute, in the units of
        ``predicted``).  It states how far finite-size effects (log factors,
        lower-order terms) may move the fitted value on the simulated range.
        :func:`check_rate` widens it by a floating-point allowance of
        ``1e-12 * max(1, |predicted|)``, so that an exact law with tolerance 0
        is not failed by the rounding of the fit (an exact ``x**0.5`` fits
        ``0.5 +- 1e-16``).
    source : str
        Paper and theorem (``"Cesa-Bianchi & Lugosi 2006, Thm 2.2"``).
    learner : str, optional
        Registered name of the learner the claim documents.
    level : float
        Confidence level of the interval (0.95; use 0.997 for "within three
        standard errors" checks of exact values).
    fit_decades : float, optional
        Fit only the points with ``x >= max(x) / 10**fit_decades`` (power and
        log laws: the asymptotic regime).  ``None`` fits every point.
    description : str
    sharpened_by : tuple of str
        Names of the claims that make this one bite.  An upper bound
        (``power_at_most``) that the simulation meets with room to spare
        (fitted exponent more than 0.1 below ``predicted``) shows only that the
        instance is easy; its companions are the claims, on an instance where
        the rate is attained, that a learner without the guarantee fails: a
        two-sided exponent where a lower bound says the rate is attained, a
        logarithmic law with its constant, or a naive baseline that must fail
        on the same instance.
    """

    name: str
    quantity: str
    variable: str
    law: str
    predicted: float
    tolerance: float
    source: str
    learner: str | None = None
    level: float = 0.95
    fit_decades: float | None = None
    description: str = ""
    sharpened_by: tuple[str, ...] = ()

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("name must be a non-empty string")
        if not isinstance(self.sharpened_by, tuple) or not all(
                isinstance(n, str) and n for n in self.sharpened_by):
            raise TypeError(f"sharpened_by must be a tuple of claim names, got {self.sharpened_by!r}")
        if self.name in self.sharpened_by:
            raise ValueError(f"sharpened_by of claim {self.name!r} names the claim itself")
        check_in(self.law, "law", LAWS)
        check_float(self.predicted, "predicted")
        check_float(self.tolerance, "tolerance", minimum=0.0)
        check_float(self.level, "level", minimum=0.5, maximum=0.99999)
        if self.fit_decades is not None:
            check_float(self.fit_decades, "fit_decades", positive=True)
        if not self.source:
            raise ValueError(f"claim {self.name!r} needs a source (paper and theorem)")


@short_repr
@dataclasses.dataclass(frozen=True)
class RateCheck:
    """The outcome of :func:`check_rate`.

    ``fitted`` is the exponent (power law), the log-slope (log law) or the mean
    (value); ``ci_low``/``ci_high`` its bootstrap (or normal, for values)
    interval at ``claim.level``; ``passed`` whether ``claim.predicted`` lies in
    ``[ci_low - tolerance, ci_high + tolerance]``.  ``x``, ``mean`` and
    ``stderr`` are the data behind the fit; ``window`` marks the points used.

    ``detectable_violation`` (``at_least`` claims only, ``nan`` otherwise) is
    the power of the check as a number: the smallest failure rate
    ``1 - p`` of the indicators at which, with ``n_reps`` replications, the
    check fails with probability at least :data:`DETECTION_POWER`.  A claim
    run on too few replications to fail at twice its allowed failure rate
    ``1 - predicted`` cannot tell a sound algorithm from a broken one; see
    :func:`detectable_violation_rate`.
    """

    claim: RateClaim
    fitted: float
    ci_low: float
    ci_high: float
    passed: bool
    intercept: float
    x: np.ndarray
    mean: np.ndarray
    stderr: np.ndarray
    window: np.ndarray
    n_reps: int
    detectable_violation: float = math.nan

    @property
    def slack(self) -> float:
        """``predicted - fitted`` of a ``power_at_most`` claim (room left under the bound); ``nan`` otherwise."""
        if self.claim.law != "power_at_most":
            return math.nan
        return float(self.claim.predicted - self.fitted)

    def summary(self) -> str:
        c = self.claim
        verdict = "PASS" if self.passed else "FAIL"
        power = ""
        if not math.isnan(self.detectable_violation):
            power = (f"; detects a failure rate >= {self.detectable_violation:.3g} "
                     f"(allowed {1.0 - c.predicted:.3g}) with power {DETECTION_POWER:g}")
        return (f"{c.name}: predicted {c.predicted:.4g} (±{c.tolerance:g}), fitted {self.fitted:.4g} "
                f"[{self.ci_low:.4g}, {self.ci_high:.4g}] @{c.level:g} over {self.n_reps} reps{power}: {verdict}")

    def to_dict(self) -> dict:
        c = self.claim
        return {
            "claim": c.name, "quantity": c.quantity, "variable": c.variable, "law": c.law,
            "predicted": c.predicted, "tolerance": c.tolerance, "source": c.source, "level": c.level,
            "fitted": self.fitted, "ci_low": self.ci_low, "ci_high": self.ci_high,
            "passed": bool(self.passed), "n_reps": self.n_reps,
            "x": self.x.tolist(), "mean": self.mean.tolist(), "stderr": self.stderr.tolist(),
            "window": self.window.tolist(),
            "detectable_violation": None if math.isnan(self.detectable_violation) else self.detectable_violation,
            "slack": None if math.isnan(self.slack) else self.slack,
            "sharpened_by": list(c.sharpened_by),
        }


DETECTION_POWER = 0.8
"""Probability of failing an ``at_least`` check that :func:`detectable_violation_rate` asks for."""


def detectable_violation_rate(claim: RateClaim, n_reps: int, *, power: float = DETECTION_POWER) -> float:
    """The smallest failure rate that an ``at_least`` check on ``n_reps`` replications catches.

    Parameters
    ----------
    claim : RateClaim
        A claim with ``law="at_least"``.
    n_reps : int
        Number of 0/1 indicators the check will see.
    power : float
        Required probability that the check fails.

    Returns
    -------
    float
        The smallest ``v`` in ``[0, 1]`` such that, when every indicator is
        1 independently with probability ``1 - v``, :func:`check_rate` fails
        with probability at least ``power``.  ``0.0`` when the check fails
        whatever the data (too few replications to ever certify the claim).

    Notes
    -----
    The check passes exactly when the number of successes ``S`` is at least
    ``s_min``, the smallest ``s`` whose one-sided Clopper–Pearson lower bound
    reaches ``predicted - tolerance`` (the bound increases with ``s``).  The
    check fails with probability ``P(S <= s_min - 1)``, which decreases in the
    success probability ``p``; by the identity between the binomial and the
    beta distributions, ``P(S <= k) = 1 - I_p(k + 1, n - k)`` (Johnson, Kemp
    & Kotz 2005, *Univariate Discrete Distributions*, eq. 3.34), so the
    failure probability equals ``power`` at ``p`` equal to the
    ``1 - power`` quantile of ``Beta(s_min, n - s_min + 1)``.

    Examples
    --------
    Thirty-two runs must all succeed to certify 0.9 at level 0.95
    (``0.05 ** (1 / 32) = 0.911``); the check then fails with probability
    ``1 - (1 - v) ** 32``, which reaches 0.8 at ``v = 1 - 0.2 ** (1 / 32) = 0.0491``:

    >>> c = RateClaim("demo.safe", "zero-violation indicator", "replication", "at_least", 0.9, 0.0,
    ...               source="demo")
    >>> round(detectable_violation_rate(c, 32), 4), round(1 - 0.2 ** (1 / 32), 4)
    (0.0491, 0.0491)
    """
    from scipy.stats import beta

    if not isinstance(claim, RateClaim):
        raise TypeError(f"claim must be a RateClaim, got {type(claim).__name__}")
    if claim.law != "at_least":
        raise ValueError(f"claim {claim.name!r} has law {claim.law!r}; a detectable violation rate needs "
                         "an at_least claim")
    n_reps = check_int(n_reps, "n_reps", minimum=1)
    power = check_float(power, "power", minimum=0.0, maximum=1.0)
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must lie strictly between 0 and 1, got {power}")
    s_min = _smallest_passing_count(claim, n_reps)
    if s_min > n_reps:
        return 0.0
    if s_min == 0:
        return 1.0  # the check passes whatever the data: only a failure rate of 1 could never be certified
    return float(1.0 - beta.ppf(1.0 - power, s_min, n_reps - s_min + 1))


def _smallest_passing_count(claim: RateClaim, n_reps: int) -> int:
    """Smallest number of successes out of ``n_reps`` that passes an ``at_least`` check (``n_reps + 1``: none)."""
    from scipy.stats import beta

    s = np.arange(1, n_reps + 1)
    lo = np.concatenate([[0.0], beta.ppf(1.0 - claim.level, s, n_reps - s + 1)])
    ok = lo + claim.tolerance >= claim.predicted
    return int(np.argmax(ok)) if ok.any() else n_reps + 1


def _slopes(u, V):
    """Least-squares slopes and intercepts of each column of ``V`` (n, B) on ``u`` (n,)."""
    uc = u - u.mean()
    denom = float(uc @ uc)
    b = (uc @ (V - V.mean(axis=0))) / denom
    a = V.mean(axis=0) - b * u.mean()
    return b, a


#: Relative floating-point allowance added to every claim's tolerance (the rounding of the fits is about 1e-16).
_FP_ALLOWANCE = 1e-12


def check_rate(claim: RateClaim, x, y, *, n_boot: int = 2000, seed=0) -> RateCheck:
    """Fit ``claim`` on Monte Carlo data and decide whether it holds.

    Parameters
    ----------
    claim : RateClaim
    x : array, shape (n_x,)
        Values of the variable (e.g. checkpoints ``T``), positive for power
        and log laws.
    y : array, shape (n_x, n_reps)
        One column per replication (e.g. ``RunResult.regret``).
    n_boot : int
        Bootstrap resamples of the replications.
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    RateCheck

    Notes
    -----
    The power-law exponent is the least-squares slope of ``log mean(y)`` on
    ``log x`` over the fit window; the bootstrap redraws the replications
    with replacement (multinomial counts), recomputes the mean curve and the
    slope, and takes percentile limits.  For a value claim the interval is
    ``mean ± z se`` with the normal quantile ``z`` of ``claim.level``.  For an
    ``at_least`` claim the interval is the one-sided exact (Clopper–Pearson)
    interval ``[lo, 1]`` of the success probability of the indicators at the
    largest ``x``: ``lo`` is the ``1 - level`` quantile of
    ``Beta(s, n - s + 1)`` for ``s`` successes out of ``n`` (``0`` when
    ``s = 0``), so a true probability below ``lo`` would produce ``s`` or more
    successes with probability at most ``1 - level``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = np.array([10., 100., 1000., 10000.])
    >>> y = np.sqrt(x)[:, None] * rng.uniform(0.5, 1.5, size=(1, 400))
    >>> claim = RateClaim("demo.sqrt", "regret", "T", "power", 0.5, 0.02, source="demo")
    >>> chk = check_rate(claim, x, y)
    >>> chk.passed, round(chk.fitted, 6)
    (True, 0.5)
    """
    if not isinstance(claim, RateClaim):
        raise TypeError(f"claim must be a RateClaim, got {type(claim).__name__}")
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or x.size < 1:
        raise ValueError(f"x must be a non-empty 1-D array, got shape {x.shape}")
    if y.ndim != 2 or y.shape[0] != x.size:
        raise ValueError(f"y must have shape (len(x), n_reps) = ({x.size}, n_reps), got {y.shape}")
    n_reps = y.shape[1]
    if n_reps < 2:
        raise ValueError("y needs at least 2 replications (columns) for a confidence interval")
    if not np.all(np.isfinite(x)) or not np.all(np.isfinite(y)):
        raise ValueError("x and y must be finite")
    n_boot = check_int(n_boot, "n_boot", minimum=10)
    detectable = math.nan
    mean = y.mean(axis=1)
    stderr = y.std(axis=1, ddof=1) / math.sqrt(n_reps)
    alpha = 1.0 - claim.level

    if claim.law == "value":
        from scipy.stats import norm

        z = float(norm.ppf(1 - alpha / 2))
        window = np.zeros(x.size, dtype=bool)
        window[-1] = True
        fitted = float(mean[-1])
        lo, hi = fitted - z * stderr[-1], fitted + z * stderr[-1]
        intercept = math.nan
    elif claim.law == "always":
        window = np.ones(x.size, dtype=bool)
        fitted = float(y.min())
        lo, hi = fitted, float(y.max())
        intercept = math.nan
    elif claim.law == "at_least":
        from scipy.stats import beta

        last = y[-1]
        if not np.all((last == 0.0) | (last == 1.0)):
            raise ValueError(f"claim {claim.name!r}: an at_least claim needs 0/1 indicators at the largest x")
        window = np.zeros(x.size, dtype=bool)
        window[-1] = True
        s = int(last.sum())
        fitted = s / n_reps
        lo = 0.0 if s == 0 else float(beta.ppf(alpha, s, n_reps - s + 1))
        hi = 1.0
        intercept = math.nan
        detectable = detectable_violation_rate(claim, n_reps)
    else:
        if np.any(x <= 0):
            raise ValueError(f"x must be positive for a {claim.law} law")
        window = np.ones(x.size, dtype=bool)
        if claim.fit_decades is not None:
            window = x >= x.max() / 10.0 ** claim.fit_decades
        if window.sum() < 2:
            raise ValueError(f"claim {claim.name!r}: fewer than 2 points in the fit window")
        u = np.log(x[window])
        rng = np.random.default_rng(seed)
        counts = rng.multinomial(n_reps, np.full(n_reps, 1.0 / n_reps), size=n_boot)  # (B, R)
        boot = (y[window] @ counts.T) / n_reps  # (n_w, B)
        if claim.law in ("power", "power_at_most", "power_at_least"):
            if np.any(mean[window] <= 0):
                raise ValueError(f"claim {claim.name!r}: the mean of y must be positive on the fit window "
                                 "for a power law")
            boot = np.log(np.maximum(boot, 1e-300))
            centre = np.log(mean[window])
        else:
            centre = mean[window]
        b, a = _slopes(u, centre[:, None])
        fitted, intercept = float(b[0]), float(a[0])
        bb, _ = _slopes(u, boot)
        lo, hi = np.quantile(bb, [alpha / 2, 1 - alpha / 2])
    lo, hi = float(lo), float(hi)
    tol = claim.tolerance + _FP_ALLOWANCE * max(1.0, abs(claim.predicted))
    if claim.law in ("at_least", "always"):
        passed = bool(lo + tol >= claim.predicted)
    elif claim.law == "power_at_most":
        passed = bool(lo - tol <= claim.predicted)
    elif claim.law == "power_at_least":
        passed = bool(hi + tol >= claim.predicted)
    else:
        passed = bool(lo - tol <= claim.predicted <= hi + tol)
    return RateCheck(claim=claim, fitted=fitted, ci_low=lo, ci_high=hi, passed=passed, intercept=intercept,
                     x=x, mean=mean, stderr=stderr, window=window, n_reps=n_reps,
                     detectable_violation=detectable)


# ---------------------------------------------------------------------------
# registry

_REGISTRY: dict[str, RateClaim] = {}


def register_claims(*new: RateClaim) -> None:
    """Register claims so that the CLI, the rate tests and the docstrings see them.

    Registering the same claim twice (e.g. on module reload) is allowed;
    registering a *different* claim under an existing name is an error.
    """
    for c in new:
        if not isinstance(c, RateClaim):
            raise TypeError(f"claims must be RateClaim objects, got {type(c).__name__}")
        old = _REGISTRY.get(c.name)
        if old is not None and old != c:
            raise ValueError(f"a different claim named {c.name!r} is already registered")
        _REGISTRY[c.name] = c


def get_claim(name: str) -> RateClaim:
    """The registered claim ``name``."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a claim name (str), got {type(name).__name__}")
    if name not in _REGISTRY:
        raise ValueError(f"no claim named {name!r}; registered: {sorted(_REGISTRY)}")
    return _REGISTRY[name]


def _claims_of(learner):
    return {k: v for k, v in sorted(_REGISTRY.items()) if learner is None or v.learner == learner}


def claims(learner: str | None = None) -> Mapping[str, RateClaim]:
    """Registered claims (all, or those of one learner), by name.

    A ``learner`` that is neither registered (:func:`expertlab.sim.learners`)
    nor named by any claim is refused (a misspelt name would otherwise give
    an empty table); a registered learner without claims gives ``{}``.
    """
    if learner is not None:
        if not isinstance(learner, str):
            raise TypeError(f"learner must be a learner name (str) or None, got {type(learner).__name__}")
        from ._registry import learners

        if learner not in learners() and all(c.learner != learner for c in _REGISTRY.values()):
            raise ValueError(f"learner {learner!r} is neither registered nor named by a claim; "
                             f"registered learners: {', '.join(learners())}")
    return _claims_of(learner)


_MARK = "[validated-rates]"


def document_claims(func, learner: str) -> None:
    """Replace the ``[validated-rates]`` line of ``func``'s docstring by the table of ``learner``'s claims."""
    if not callable(func):
        raise TypeError(f"func must be the learner factory whose docstring gets the table, got {type(func).__name__}")
    if not isinstance(learner, str) or not learner:
        raise TypeError(f"learner must be a non-empty str, got {learner!r}")
    new = list(_claims_of(learner).values())
    doc = func.__doc__ or ""
    if _MARK not in doc:
        return
    line = next(l for l in doc.splitlines() if _MARK in l)
    indent = line[: len(line) - len(line.lstrip())]
    func.__doc__ = doc.replace(line, _table(new, indent))


def _table(items, indent: str) -> str:
    if not items:
        return f"{indent}No rate claim is registered for this learner."
    rows = [(f"``{c.name}``", c.law, f"{c.quantity} vs {c.variable}",
             f"{c.predicted:g} ± {c.tolerance:g}", c.source) for c in items]
    head = ("claim", "law", "quantity", "predicted", "source")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    rule = "  ".join("=" * w for w in widths)
    fmt = lambda r: "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip()  # noqa: E731
    lines = ["**Validated rates** (each checked by a seeded simulation in ``expertlab rates``):", "",
             rule, fmt(head), rule, *map(fmt, rows), rule]
    return "\n".join(indent + l if l else "" for l in lines)
