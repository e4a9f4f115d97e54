r"""Groupwise regret: one learner per group, combined as sleeping experts by AdaNormalHedge.

Online regression with contexts that belong to several intersecting groups.
Each group runs its own external-regret learner on the rounds of that group.
The learners' predictions are combined by sleeping AdaNormalHedge, where
group :math:`g`'s learner is awake exactly on :math:`g`'s rounds.  The
guarantee is regret against the best linear model *of every group*, on that
group's rounds, at once.  The cost is linear in the number of groups, since
each round updates one learner per group containing it.

Two group learners are provided: online ridge regression (the linear class)
and Hedge over a finite class of linear predictors.  Everything is array
code over replications: one Python iteration per round, and for each learner
a batched Sherman--Morrison or exponential-weights update.  Contexts, groups
and labels are pure functions of ``(seed, replication, round, index)``
(:mod:`expertlab._random`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import NamedTuple

import numpy as np

from .._random import rep_key, round_key, seed_to_uint64, uniform
from .._validation import check_float, check_in, check_int
from ..sim._engine import checkpoint_grid
from ._adanormalhedge import adanormalhedge

__all__ = ["GroupInstance", "GroupwiseResult", "groupwise", "intersecting_groups", "linear_grid", "GROUP_NAMES",
           "GROUP_LEARNERS"]

#: Names of the five groups of :func:`intersecting_groups`, in column order.
GROUP_NAMES = ("all", "a1=0", "a1=1", "a2=0", "a2=1")
#: The group learners of :func:`groupwise`.
GROUP_LEARNERS = ("ridge", "hedge")


class GroupInstance(NamedTuple):
    """Contexts in ``[-1, 1]^dim`` (first coordinate 1), two binary attributes, linear labels per cell.

    ``betas[c]`` is the model of cell ``c = 2 a1 + a2``; a label is
    ``betas[c] @ x + noise * (2u - 1)``, bounded by ``y_max``.
    """

    name: str
    dim: int
    betas: np.ndarray
    noise: float
    y_max: float
    params: dict


def intersecting_groups(dim: int = 3, *, models: str = "a1", noise: float = 0.5, betas=None) -> GroupInstance:
    r"""Two binary attributes give four intersecting groups, plus the group of all rounds.

    Parameters
    ----------
    dim : int >= 2
        Context dimension (coordinate 0 is the constant 1).
    models : {"a1", "cells"}
        ``"a1"``: the label model depends on attribute ``a1`` only, so each
        ``a1`` group is realisable by its own linear model while the pooled
        model is wrong on both.  ``"cells"``: a different model on each of the
        four cells ``(a1, a2)``.
    noise : float
        Half-width of the uniform label noise.
    betas : array, shape (4, dim), optional
        Explicit cell models (overrides ``models``); ``||beta_c||_1 <= 1``.

    Examples
    --------
    >>> inst = intersecting_groups(3)
    >>> inst.betas.shape, inst.y_max
    ((4, 3), 1.5)
    """
    dim = check_int(dim, "dim", minimum=2)
    noise = check_float(noise, "noise", minimum=0.0)
    if betas is None:
        check_in(models, "models", ("a1", "cells"))
        base = np.zeros((4, dim))
        if models == "a1":
            base[[0, 1], 0], base[[0, 1], 1] = 0.4, 0.5     # a1 = 0
            base[[2, 3], 0], base[[2, 3], 1] = -0.4, -0.5   # a1 = 1
        else:
            base[:, :2] = [(0.5, 0.5), (-0.5, 0.25), (0.0, -0.5), (0.5, -0.5)]
        betas = base
    B = np.asarray(betas, dtype=np.float64)
    if B.shape != (4, dim) or not np.all(np.isfinite(B)):
        raise ValueError(f"betas must be a finite array of shape (4, {dim}), got {B.shape}")
    if np.any(np.abs(B).sum(axis=1) > 1.0 + 1e-12):
        raise ValueError("every cell model needs ||beta_c||_1 <= 1 (so that |beta_c . x| <= 1)")
    return GroupInstance("intersecting_groups", dim, B, noise, 1.0 + noise,
                         dict(dim=dim, models=models if betas is None else "custom", noise=noise))


def _draw(instance, rk, t):
    """Round ``t`` of every replication: contexts (R, d), group mask (R, 5), labels (R,)."""
    d = instance.dim
    with np.errstate(over="ignore"):
        k = round_key(rk, np.uint64(t))[:, None]
        u = uniform(k, np.arange(d + 2, dtype=np.uint64)[None, :])
    x = 2.0 * u[:, :d] - 1.0
    x[:, 0] = 1.0
    a1 = u[:, d] < 0.5
    a2 = u[:, d + 1] < 0.5
    cell = 2 * a1 + a2
    y = np.einsum("ri,ri->r", instance.betas[cell], x)
    with np.errstate(over="ignore"):
        y = y + instance.noise * (2.0 * uniform(k[:, 0], np.uint64(d + 2)) - 1.0)
    groups = np.stack([np.ones_like(a1), ~a1, a1, ~a2, a2], axis=1)
    return x, groups, y


@dataclasses.dataclass(frozen=True, eq=False)
class GroupwiseResult:
    """Per-group regret of the groupwise learner, of one global learner and of each group's own learner.

    Attributes
    ----------
    checkpoints : ndarray of int, shape (n_checkpoints,)
    regret : ndarray, shape (n_checkpoints, n_reps, n_groups)
        Groupwise learner: its square loss on group ``g``'s rounds minus that
        of the best comparator of ``g`` in hindsight (losses scaled to [0, 1]):
        the best linear model (``group_learner="ridge"``) or the best member of
        the finite class (``"hedge"``).
    global_regret : same shape
        The same for one learner of the same kind fitted on all rounds.
    learner_regret : same shape
        Group ``g``'s own learner on ``g``'s rounds.
    group_rounds : ndarray, shape (n_checkpoints, n_reps, n_groups)
        :math:`T_g`, the rounds of each group so far.
    groups : tuple of str
    seed : int
    wall_time : float
    group_learner : str
        ``"ridge"`` or ``"hedge"``.
    """

    checkpoints: np.ndarray
    regret: np.ndarray
    global_regret: np.ndarray
    learner_regret: np.ndarray
    group_rounds: np.ndarray
    groups: tuple
    seed: int
    wall_time: float
    group_learner: str = "ridge"


def linear_grid(dim: int, *, step: float = 0.1, radius: float = 0.5) -> np.ndarray:
    r"""A finite class of linear predictors: a grid on the first two coefficients, the others 0.

    Parameters
    ----------
    dim : int >= 2
        Context dimension.
    step, radius : float
        The coefficients ``(theta_0, theta_1)`` run over the multiples of
        ``step`` in ``[-radius, radius]``.

    Returns
    -------
    ndarray, shape (n_class, dim)

    Examples
    --------
    >>> H = linear_grid(3)
    >>> H.shape, bool(any((h == [0.4, 0.5, 0.0]).all() for h in H.round(12)))
    ((121, 3), True)
    """
    dim = check_int(dim, "dim", minimum=2)
    step, radius = check_float(step, "step", positive=True), check_float(radius, "radius", positive=True)
    g = step * np.arange(-math.floor(radius / step + 1e-9), math.floor(radius / step + 1e-9) + 1)
    a, b = np.meshgrid(g, g, indexing="ij")
    H = np.zeros((a.size, dim))
    H[:, 0], H[:, 1] = a.ravel(), b.ravel()
    return H


def _check_hypotheses(hypotheses, dim):
    H = np.asarray(hypotheses, dtype=np.float64)
    if H.ndim != 2 or H.shape[1] != dim or H.shape[0] < 1 or not np.all(np.isfinite(H)):
        raise ValueError(f"hypotheses must be a finite array of shape (n_class, {dim}) with n_class >= 1, "
                         f"got shape {H.shape}")
    return H


class _ClassHedge:
    """Anytime Hedge over a finite class, one per (replication, group), on the group's rounds.

    ``L[r, g, k]`` is member ``k``'s cumulative scaled loss on group ``g``'s rounds; it is both the
    Hedge state and the comparator's sufficient statistic.
    """

    def __init__(self, shape, n_class):
        self.L = np.zeros((*shape, n_class))
        self.T = np.zeros(shape)
        self.ln_k = math.log(n_class)

    def predict(self, member_pred):
        """Mean prediction ``sum_k p_k yhat_k``, ``p ~ exp(-eta_g L_g)``, ``eta_g = sqrt(8 ln K / (T_g + 1))``."""
        eta = np.sqrt(8.0 * self.ln_k / (self.T + 1.0))[..., None]
        logit = -eta * (self.L - self.L.min(axis=-1, keepdims=True))
        w = np.exp(logit)
        return np.einsum("...k,...k->...", w / w.sum(axis=-1, keepdims=True), member_pred)

    def update(self, member_loss, mask):
        self.L += mask[..., None] * member_loss
        self.T += mask


class _Ridge:
    """Online ridge regressions, one per (replication, slot), updated by Sherman--Morrison."""

    def __init__(self, shape, d, lam):
        self.Ainv = np.broadcast_to(np.eye(d) / lam, (*shape, d, d)).copy()
        self.b = np.zeros((*shape, d))

    def predict(self, x):
        theta = np.einsum("...ij,...j->...i", self.Ainv, self.b)
        return np.einsum("...i,...i->...", theta, x)

    def update(self, x, y, mask):
        v = np.einsum("...ij,...j->...i", self.Ainv, x)
        den = 1.0 + np.einsum("...i,...i->...", v, x)
        self.Ainv -= np.where(mask[..., None, None], v[..., :, None] * v[..., None, :] / den[..., None, None], 0.0)
        self.b += np.where(mask[..., None], y[..., None] * x, 0.0)


def groupwise(instance: GroupInstance, horizon: int, *, n_reps: int = 100, seed=0, rep_offset: int = 0,
              ridge: float = 1.0, checkpoints=None, group_learner: str = "ridge",
              hypotheses=None) -> GroupwiseResult:
    r"""Run the groupwise learner, a global learner and the group learners on ``instance``.

    Parameters
    ----------
    instance : GroupInstance
        :func:`intersecting_groups`.
    horizon : int
    n_reps, seed, rep_offset
        As in :func:`expertlab.sim.run`.
    ridge : float > 0
        Ridge parameter :math:`\lambda` of every online regression.
    checkpoints : array of int, optional
        Rounds at which regrets are recorded (default :func:`expertlab.sim.checkpoint_grid`).
    group_learner : {"ridge", "hedge"}
        Each group's external-regret learner: online ridge regression (the
        class of all linear models) or Hedge over the finite class ``hypotheses``.
    hypotheses : array, shape (n_class, dim), optional
        The finite class of linear predictors of ``group_learner="hedge"``
        (member :math:`k` predicts :math:`\operatorname{clip}(h_k \cdot x, -Y, Y)`);
        default :func:`linear_grid` ``(dim)``.  Only with ``"hedge"``.

    Returns
    -------
    GroupwiseResult

    Notes
    -----
    Group :math:`g`'s learner is online ridge regression on the rounds of
    :math:`g`, :math:`\hat\theta_g = (\lambda I + \sum x x^\top)^{-1}\sum x y`,
    with its prediction clipped to :math:`[-Y, Y]`.  With square loss scaled
    to :math:`[0, 1]`, :math:`\ell(\hat y, y) = (\hat y - y)^2/(4Y^2)`, its
    regret against the best linear model of :math:`g` is :math:`O(d\log T_g)`.
    Sleeping AdaNormalHedge (:func:`expertlab.experts.adanormalhedge`) sees
    the losses of the awake learners.  Its prediction
    :math:`\hat y_t = \sum_g p_{t,g}\hat y_{t,g}` has, by convexity, loss at
    most :math:`\langle p_t, \ell_t\rangle`.  The sleeping-regret bound of
    AdaNormalHedge then gives every group regret at most its learner's
    regret plus :math:`O(\sqrt{T_g \ln |G|})`, for all groups at once.  The
    comparator of group :math:`g` is the least-squares fit to :math:`g`'s
    rounds, computed exactly at each checkpoint from sufficient statistics.

    With ``group_learner="hedge"`` group :math:`g`'s learner is anytime
    Hedge over the finite class :math:`\{h_1, \dots, h_K\}` on the rounds of
    :math:`g`: with :math:`L_{g,k}` member :math:`k`'s scaled loss on the
    :math:`T_g` rounds of :math:`g` so far,

    .. math::

        \hat y_{t,g} = \sum_k p_{t,g,k}\,\operatorname{clip}(h_k\cdot x_t, -Y, Y),
        \qquad p_{t,g,k} \propto e^{-\eta_{g} L_{g,k}},\quad
        \eta_{g} = \sqrt{8\ln K/(T_g + 1)}.

    Losses are in :math:`[0, 1]` after the scaling above (both prediction and
    label lie in :math:`[-Y, Y]`), and by convexity the mean prediction loses
    at most :math:`\langle p, \ell\rangle`, so its regret against the best
    member on :math:`g` is :math:`O(\sqrt{T_g\ln K})` (Cesa-Bianchi & Lugosi,
    Thm 2.3) and the groupwise learner's is that plus
    :math:`O(\sqrt{T_g\ln|G|})`.  The comparator is then the best member on
    :math:`g`'s rounds, :math:`\min_k L_{g,k}`, and the global learner is one
    such Hedge on all rounds.  Simplification: the class is a fixed array of
    linear models; a class given as arbitrary per-round predictions is not
    supported.

    References
    ----------
    .. [1] K. Acharya, E. Arunachaleswaran, S. Kannan, A. Roth, J. Ziani,
       "Oracle Efficient Algorithms for Groupwise Regret", ICLR 2024 (the
       reduction to sleeping experts; theorem number not re-checked).
    .. [2] H. Luo, R. E. Schapire, "Achieving All with No Parameters:
       AdaNormalHedge", COLT 2015 (sleeping experts).
    .. [3] K. S. Azoury, M. K. Warmuth, "Relative loss bounds for on-line
       density estimation with the exponential family", Machine Learning
       43, 2001; V. Vovk, "Competitive on-line statistics", 2001 (online
       ridge regression, O(d log T) regret).
    .. [4] N. Cesa-Bianchi and G. Lugosi, *Prediction, Learning, and Games*,
       2006, Thm 2.3 (anytime Hedge).

    Examples
    --------
    >>> from expertlab.experts import groupwise, intersecting_groups
    >>> res = groupwise(intersecting_groups(3), horizon=2000, n_reps=8, seed=0)
    >>> g = res.groups.index("a1=1")
    >>> bool(res.global_regret[-1, :, g].mean() > 10 * max(res.regret[-1, :, g].mean(), 1.0))
    True
    >>> res = groupwise(intersecting_groups(3), horizon=500, n_reps=4, seed=0, group_learner="hedge")
    >>> res.group_learner, bool(res.regret[-1].max() < 0.5 * res.global_regret[-1, :, g].mean())
    ('hedge', True)
    """
    if not isinstance(instance, GroupInstance):
        raise TypeError(f"instance must be a GroupInstance, got {type(instance).__name__}")
    horizon = check_int(horizon, "horizon")
    n_reps = check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    ridge = check_float(ridge, "ridge", positive=True)
    check_in(group_learner, "group_learner", GROUP_LEARNERS)
    if hypotheses is not None and group_learner != "hedge":
        raise ValueError("hypotheses: a finite class is used only with group_learner='hedge'")
    H = None
    if group_learner == "hedge":
        H = linear_grid(instance.dim) if hypotheses is None else _check_hypotheses(hypotheses, instance.dim)
    ckpts = checkpoint_grid(horizon) if checkpoints is None else np.unique(np.asarray(checkpoints, np.int64))
    if ckpts.size == 0 or ckpts[0] < 1 or ckpts[-1] > horizon:
        raise ValueError(f"checkpoints must be a non-empty set of rounds in [1, {horizon}]")
    seed_u = seed_to_uint64(seed)
    with np.errstate(over="ignore"):
        rk = rep_key(np.uint64(seed_u), np.arange(rep_offset, rep_offset + n_reps, dtype=np.uint64))
    G, d, Y = len(GROUP_NAMES), instance.dim, instance.y_max
    scale = 1.0 / (4.0 * Y * Y)
    agg = adanormalhedge()
    state = agg.init(n_reps, G)
    if H is None:
        learners, glob = _Ridge((n_reps, G), d, ridge), _Ridge((n_reps,), d, ridge)
    else:
        learners, glob = _ClassHedge((n_reps, G), H.shape[0]), _ClassHedge((n_reps,), H.shape[0])
    SA = np.zeros((n_reps, G, d, d))
    Sb = np.zeros((n_reps, G, d))
    Syy = np.zeros((n_reps, G))
    L_agg = np.zeros((n_reps, G))
    L_glob = np.zeros((n_reps, G))
    L_own = np.zeros((n_reps, G))
    Tg = np.zeros((n_reps, G))
    out = np.zeros((4, ckpts.size, n_reps, G))
    c = 0
    t0 = time.perf_counter()
    for t in range(horizon):
        x, aw, y = _draw(instance, rk, t)
        if H is None:
            pred = np.clip(learners.predict(x[:, None, :]), -Y, Y)              # (R, G)
            y_glob = np.clip(glob.predict(x), -Y, Y)
        else:
            member = np.clip(x @ H.T, -Y, Y)                                   # (R, K)
            member_loss = scale * (member - y[:, None]) ** 2
            pred = learners.predict(member[:, None, :])
            y_glob = glob.predict(member)
        loss = scale * (pred - y[:, None]) ** 2
        p = agg.act(state, None, aw)
        y_agg = np.sum(p * pred, axis=1)
        state = agg.update(state, p, loss, aw)
        if H is None:
            learners.update(np.broadcast_to(x[:, None, :], (n_reps, G, d)), np.broadcast_to(y[:, None], (n_reps, G)),
                            aw)
            glob.update(x, y, np.ones(n_reps, dtype=bool))
            SA += np.where(aw[..., None, None], (x[:, :, None] * x[:, None, :])[:, None], 0.0)
            Sb += np.where(aw[..., None], (y[:, None] * x)[:, None, :], 0.0)
            Syy += aw * (y * y)[:, None]
        else:
            learners.update(member_loss[:, None, :], aw)
            glob.update(member_loss, np.ones(n_reps))
        L_agg += aw * (scale * (y_agg - y) ** 2)[:, None]
        L_glob += aw * (scale * (y_glob - y) ** 2)[:, None]
        L_own += aw * loss
        Tg += aw
        if c < ckpts.size and t + 1 == ckpts[c]:
            best = scale * _least_squares_loss(SA, Sb, Syy) if H is None else learners.L.min(axis=-1)
            out[0, c], out[1, c], out[2, c], out[3, c] = L_agg - best, L_glob - best, L_own - best, Tg
            c += 1
    wall = time.perf_counter() - t0
    return GroupwiseResult(ckpts, out[0], out[1], out[2], out[3], GROUP_NAMES, int(seed_u), wall, group_learner)


def _least_squares_loss(SA, Sb, Syy):
    """``min_theta sum (theta.x - y)^2`` from ``sum x x^T``, ``sum y x``, ``sum y^2`` (pseudo-inverse)."""
    theta = np.einsum("...ij,...j->...i", np.linalg.pinv(SA, hermitian=True), Sb)
    return np.maximum(Syy - np.einsum("...i,...i->...", Sb, theta), 0.0)
