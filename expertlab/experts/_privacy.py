r"""A differential-privacy accountant and an empirical privacy audit.

The accountant turns the noise parameters of the elementary mechanisms into
their privacy cost and composes costs; the private learners of
:mod:`expertlab.experts` report their total cost through it, so the
number they print is computed from the noise they actually draw.

Mechanisms (neighbouring inputs differ in one record; for the experts
learners a record is the loss vector of one round):

* Laplace mechanism, sensitivity :math:`\Delta` (in :math:`\ell_1`), scale
  :math:`b`: :math:`\varepsilon = \Delta / b` (Dwork & Roth 2014, Thm 3.6).
* Report-noisy-max with Laplace noise of scale :math:`b` on queries of
  :math:`\ell_\infty` sensitivity :math:`\Delta` that may move in opposite
  directions: :math:`\varepsilon = 2\Delta / b` (Dwork & Roth 2014, Claim 3.9
  proves :math:`\Delta / b` for monotone counting queries; the factor 2 covers
  the non-monotone case).
* Exponential mechanism sampling :math:`\propto e^{\eta u}` with a score of
  sensitivity :math:`\Delta`: :math:`\varepsilon = 2 \eta \Delta` (Dwork &
  Roth 2014, Thm 3.10).
* AboveThreshold (the sparse vector technique), threshold noise
  :math:`\mathrm{Lap}(b_1)`, query noise :math:`\mathrm{Lap}(b_2)`, queries of
  sensitivity :math:`\Delta`, stopping at the first "above":
  :math:`\varepsilon = \Delta / b_1 + 2 \Delta / b_2` (the proof of Dwork &
  Roth 2014, Thm 3.23, which takes :math:`b_1 = 2\Delta/\varepsilon`,
  :math:`b_2 = 4\Delta/\varepsilon`).
* The binary-tree mechanism for prefix sums over :math:`T` rounds: a record
  enters one node per level, ``T.bit_length()`` :math:`= \lfloor\log_2
  T\rfloor + 1 \le \lceil \log_2 T\rceil + 1` nodes, each released by the
  Laplace mechanism: :math:`\varepsilon = (\lfloor\log_2 T\rfloor + 1)
  \Delta / b` (Dwork, Naor, Pitassi & Rothblum 2010; Chan, Shi & Song 2011).

Composition: basic, :math:`(\sum \varepsilon_i, \sum \delta_i)` (Dwork & Roth
2014, Thm 3.16); advanced, :math:`k` adaptive :math:`(\varepsilon,
\delta)`-mechanisms are :math:`(\sqrt{2k\ln(1/\delta')}\,\varepsilon +
k\varepsilon(e^\varepsilon - 1),\; k\delta + \delta')`-DP (Dwork, Rothblum &
Vadhan 2010; Dwork & Roth 2014, Thm 3.20).
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np

from .._repr import short_repr
from .._validation import check_float, check_int

__all__ = [
    "PrivacyCost",
    "laplace_epsilon",
    "laplace_scale",
    "report_noisy_max_epsilon",
    "exponential_mechanism_epsilon",
    "sparse_vector_epsilon",
    "tree_mechanism_epsilon",
    "compose_basic",
    "compose_advanced",
    "per_step_epsilon",
    "AuditResult",
    "privacy_audit",
]


@short_repr
@dataclasses.dataclass(frozen=True)
class PrivacyCost:
    """An :math:`(\\varepsilon, \\delta)` privacy guarantee (``delta = 0``: pure DP)."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_float(self.delta, "delta", minimum=0.0, maximum=1.0))


def _check_epsilon(epsilon) -> float:
    """``epsilon`` as a float in ``[0, inf]`` (``inf``: no privacy)."""
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"epsilon must be a real number (inf allowed), got {type(epsilon).__name__} {epsilon!r}")
    eps = float(epsilon)
    if math.isnan(eps) or eps < 0:
        raise ValueError(f"epsilon must be >= 0 (inf allowed), got {epsilon!r}")
    return eps


def _pos(x, name):
    return check_float(x, name, positive=True)


def laplace_epsilon(sensitivity: float, scale: float) -> float:
    """:math:`\\varepsilon = \\Delta / b` of the Laplace mechanism (``scale = inf``: 0)."""
    sensitivity = check_float(sensitivity, "sensitivity", minimum=0.0)
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a real number (inf allowed), got {type(scale).__name__} {scale!r}")
    scale = float(scale)
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale!r}")
    return 0.0 if math.isinf(scale) else sensitivity / scale


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """The Laplace scale :math:`b = \\Delta / \\varepsilon` that gives ``epsilon``."""
    return check_float(sensitivity, "sensitivity", minimum=0.0) / _pos(epsilon, "epsilon")


def report_noisy_max_epsilon(sensitivity: float, scale: float) -> float:
    """:math:`2\\Delta / b`: report-noisy-max (or -min) with Laplace noise, non-monotone queries."""
    return 2.0 * laplace_epsilon(sensitivity, scale)


def exponential_mechanism_epsilon(sensitivity: float, eta: float) -> float:
    """:math:`2\\eta\\Delta` for sampling :math:`\\propto e^{\\eta u}` (equivalently Gumbel-max of :math:`\\eta u`)."""
    return 2.0 * check_float(eta, "eta", minimum=0.0) * check_float(sensitivity, "sensitivity", minimum=0.0)


def sparse_vector_epsilon(sensitivity: float, threshold_scale: float, query_scale: float) -> float:
    """:math:`\\Delta / b_1 + 2\\Delta / b_2`: one AboveThreshold instance (halts at the first "above")."""
    return laplace_epsilon(sensitivity, threshold_scale) + 2.0 * laplace_epsilon(sensitivity, query_scale)


def tree_mechanism_epsilon(horizon: int, sensitivity: float, scale: float) -> float:
    """:math:`(\\lfloor\\log_2 T\\rfloor + 1)\\,\\Delta_1 / b`: the binary mechanism over ``horizon`` rounds."""
    horizon = check_int(horizon, "horizon")
    return horizon.bit_length() * laplace_epsilon(sensitivity, scale)


def compose_basic(costs) -> PrivacyCost:
    """Basic composition: the sums of the epsilons and of the deltas."""
    costs = list(costs)
    if not all(isinstance(c, PrivacyCost) for c in costs):
        raise TypeError("costs must be PrivacyCost objects")
    return PrivacyCost(sum(c.epsilon for c in costs), min(1.0, sum(c.delta for c in costs)))


def compose_advanced(cost: PrivacyCost, k: int, delta_slack: float) -> PrivacyCost:
    """Advanced composition of ``k`` adaptive runs of ``cost`` (Dwork, Rothblum & Vadhan 2010).

    Examples
    --------
    >>> c = compose_advanced(PrivacyCost(0.1), 100, 1e-6)
    >>> round(c.epsilon, 4), c.delta
    (6.3082, 1e-06)
    """
    if not isinstance(cost, PrivacyCost):
        raise TypeError(f"cost must be a PrivacyCost, got {type(cost).__name__}")
    k = check_int(k, "k")
    delta_slack = check_float(delta_slack, "delta_slack", positive=True, maximum=1.0)
    e = cost.epsilon
    eps = math.sqrt(2.0 * k * math.log(1.0 / delta_slack)) * e + k * e * math.expm1(e)
    return PrivacyCost(eps, min(1.0, k * cost.delta + delta_slack))


def per_step_epsilon(epsilon: float, k: int, delta: float = 0.0) -> float:
    """The largest per-step :math:`\\varepsilon_0` whose ``k``-fold composition is ``epsilon``-DP.

    ``delta = 0``: basic composition, :math:`\\varepsilon / k`.  ``delta > 0``:
    the larger of that and the root of the advanced-composition bound with
    :math:`\\delta' = \\delta` (found by bisection); the total is then
    :math:`(\\varepsilon, \\delta)`-DP.

    Examples
    --------
    >>> per_step_epsilon(1.0, 4)
    0.25
    >>> e0 = per_step_epsilon(1.0, 10_000, 1e-6)
    >>> round(compose_advanced(PrivacyCost(e0), 10_000, 1e-6).epsilon, 9)
    1.0
    """
    epsilon = _pos(epsilon, "epsilon")
    k = check_int(k, "k")
    delta = check_float(delta, "delta", minimum=0.0, maximum=1.0)
    basic = epsilon / k
    if delta == 0.0:
        return basic
    lo, hi = 0.0, epsilon
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if compose_advanced(PrivacyCost(mid), k, delta).epsilon <= epsilon:
            lo = mid
        else:
            hi = mid
    return max(basic, lo)


# --------------------------------------------------------------------------
# empirical audit


@short_repr
@dataclasses.dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`privacy_audit`.

    ``lower_ratio[k]`` is the Clopper–Pearson lower bound on
    :math:`\\max(P_a(o_k)/P_b(o_k), P_b(o_k)/P_a(o_k))` for outcome ``o_k``;
    ``passed`` is ``max(lower_ratio) <= exp(epsilon)``.
    """

    epsilon: float
    outcomes: np.ndarray
    counts_a: np.ndarray
    counts_b: np.ndarray
    lower_ratio: np.ndarray
    max_lower_ratio: float
    passed: bool


def _cp(k, n, alpha):
    """Two-sided Clopper–Pearson bounds of ``k`` successes out of ``n`` at total level ``1 - alpha``."""
    from scipy.stats import beta

    k = np.asarray(k, dtype=float)
    lo = np.where(k > 0, beta.ppf(alpha / 2, np.maximum(k, 1), n - k + 1), 0.0)
    hi = np.where(k < n, beta.ppf(1 - alpha / 2, k + 1, np.maximum(n - k, 1)), 1.0)
    return lo, hi


def privacy_audit(outputs_a, outputs_b, epsilon: float, *, level: float = 0.99) -> AuditResult:
    """Check empirically that no output is more than :math:`e^\\varepsilon` times likelier under one input.

    Parameters
    ----------
    outputs_a, outputs_b : array of int, shape (n_reps,)
        Codes of the mechanism's output (e.g. the chosen-expert sequence
        written in base ``n_experts``) in independent runs on two
        neighbouring inputs.
    epsilon : float
        The claimed privacy level (``inf`` always passes).
    level : float
        Joint confidence level: Bonferroni over all ``2 m`` bounds of the
        ``m`` outcomes seen.

    Returns
    -------
    AuditResult

    Notes
    -----
    A check, not a proof: a passing audit only fails to find a violation, and
    only for the events examined (each single output).  For every outcome the
    ratio's lower confidence bound is ``lo_a / hi_b`` (and symmetrically),
    so a violation is reported only when it is significant at ``level``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.integers(0, 3, 4000), rng.integers(0, 3, 4000)
    >>> privacy_audit(a, b, 0.5).passed, privacy_audit(np.zeros(4000, int), np.ones(4000, int), 5.0).passed
    (True, False)
    """
    a = np.asarray(outputs_a)
    b = np.asarray(outputs_b)
    for name, v in (("outputs_a", a), ("outputs_b", b)):
        if v.ndim != 1 or v.size < 1 or not np.issubdtype(v.dtype, np.integer):
            raise ValueError(f"{name} must be a non-empty 1-D integer array, got {v.dtype} of shape {v.shape}")
    epsilon = _check_epsilon(epsilon)
    level = check_float(level, "level", minimum=0.5, maximum=0.999999)
    outcomes, inv = np.unique(np.concatenate([a, b]), return_inverse=True)
    ca = np.bincount(inv[: a.size], minlength=outcomes.size)
    cb = np.bincount(inv[a.size:], minlength=outcomes.size)
    alpha = (1.0 - level) / (2 * outcomes.size)
    lo_a, hi_a = _cp(ca, a.size, alpha)
    lo_b, hi_b = _cp(cb, b.size, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        r1 = np.where(lo_a > 0, lo_a / hi_b, 0.0)
        r2 = np.where(lo_b > 0, lo_b / hi_a, 0.0)
    lower = np.maximum(r1, r2)
    mx = float(lower.max())
    return AuditResult(epsilon=epsilon, outcomes=outcomes, counts_a=ca, counts_b=cb, lower_ratio=lower,
                       max_lower_ratio=mx, passed=bool(mx <= math.exp(min(epsilon, 700.0))))
