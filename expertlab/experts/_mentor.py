r"""Avoiding catastrophe by asking a mentor: label-efficient Hedge with local queries.

Each round an input :math:`x_t` arrives and the learner either acts or asks
the mentor, who then acts (the mentor's action is taken and revealed).  The
payoff :math:`\mu(x_t, y_t) \in [0, 1]` is the probability of avoiding
catastrophe in that round, so the objective is the product of the payoffs
(kept in log space by the environment's metrics).  The learner
:func:`mentor_hedge` samples a policy from a Hedge distribution over a finite
class of thresholds and asks for help when that policy's action has no
support from a nearby query, or on a random round (the only rounds on which
Hedge learns).  It runs through :func:`expertlab.sim.run` on the
``"mentor"`` environments of :func:`~expertlab.experts.threshold_mentor`;
everything is array code over the replication axis, one engine step per
round, and its draws come from the learner's round keys.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .._backend import get_namespace
from .._random import uniform
from .._validation import check_float, check_int
from ..sim._protocol import Learner
from ._mentor_instances import MentorAction

__all__ = ["MentorHedgeState", "mentor_hedge"]

#: Largest ``n_reps * ceil(1 / radius)`` cell table :func:`mentor_hedge` allocates.
MAX_CELLS = 5 * 10**7


class MentorHedgeState(NamedTuple):
    """State of :func:`mentor_hedge` (leading axis: replications).

    Attributes
    ----------
    cmin, cmax : ndarray, shape (n_reps, 2, n_cells + 2)
        Per mentor label, the smallest and largest queried input of each
        :math:`\\varepsilon`-cell (padded by one empty cell on each side).
    loss_estimates : ndarray, shape (n_reps, n_thresholds)
        :math:`\\hat L_k`, the importance-weighted mistakes of each threshold.
    cum_weights : ndarray, shape (n_reps, n_thresholds + 1)
        Prefix sums of the Hedge weights (for sampling a threshold).
    radius, query_prob, eta : float
        :math:`\\varepsilon`, :math:`p` and :math:`\\eta` as tuned for the run's horizon.
    """

    cmin: Any
    cmax: Any
    loss_estimates: Any
    cum_weights: Any
    radius: float
    query_prob: float
    eta: float


def mentor_hedge(n_thresholds: int = 33, *, radius: float | None = None, query_prob: float | None = None,
                 eta: float | None = None, allow_queries: bool = True) -> Learner:
    r"""Label-efficient Hedge over thresholds that asks the mentor when its action is unsupported.

    Parameters
    ----------
    n_thresholds : int >= 2
        Size :math:`N` of the policy class :math:`\{x \mapsto \mathbb 1[x \ge k/(N-1)]\}_{k<N}`.
    radius : float > 0, optional
        :math:`\varepsilon`, the radius within which a queried input supports
        an action.  Default :math:`T^{-2/3}` for the run's horizon :math:`T`.
    query_prob : float in [0, 1], optional
        :math:`p`, the probability of a random query.  Default :math:`\min(1, T^{-1/3})`.
    eta : float > 0, optional
        Hedge's learning rate.  Default :math:`p` (the realizable tuning, see Notes).
    allow_queries : bool
        ``False`` gives the no-query baseline: the same learner that never asks,
        so Hedge never gets feedback and plays its uniform prior throughout.

    Returns
    -------
    Learner
        A ``"mentor"`` learner; its :class:`~expertlab.experts.MentorAction`
        reports the random queries (the ``random_queries`` metric).  Its two
        uniforms per round (the sampled threshold and the random query) are
        draws 0 and 1 of the learner's round key.

    Notes
    -----
    Policies :math:`\pi_k(x) = \mathbb 1[x \ge \theta_k]`, weights
    :math:`w_{t,k} \propto \exp(-\eta \hat L_{t-1,k})`.  In round :math:`t`:
    sample :math:`k_t \sim w_t` and propose :math:`a_t = \pi_{k_t}(x_t)`;
    draw :math:`Z_t \sim \mathrm{Bernoulli}(p)`; ask the mentor when

    .. math::

        Z_t = 1 \quad\text{or}\quad \nexists\, s < t \text{ queried with }
        |x_s - x_t| \le \varepsilon \text{ and } \pi^m(x_s) = a_t ,

    else act :math:`y_t = a_t`.  An input with no query within
    :math:`\varepsilon` ("unfamiliar") is always asked about; a familiar
    input is asked about when the sampled action disagrees with every
    nearby answer of the mentor.  On rounds with :math:`Z_t = 1` Hedge
    updates :math:`\hat L_{t,k} = \hat L_{t-1,k} + \mathbb 1[\pi_k(x_t) \ne
    \pi^m(x_t)] / p` (unbiased estimates: the label-efficient Hedge of
    Cesa-Bianchi, Lugosi & Stoltz 2005).

    Two facts drive the guarantees.  Whenever the learner acts, some
    queried :math:`x_s` within :math:`\varepsilon` has :math:`\pi^m(x_s) = y_t`,
    so local generalisation gives :math:`\mu(x_t, y_t) \ge \mu(x_t,
    \pi^m(x_t)) - L\varepsilon`; with
    :math:`\prod_t a_t - \prod_t b_t \le \sum_t (a_t - b_t)^+` on
    :math:`[0, 1]` the multiplicative regret is at most :math:`L\varepsilon M`
    for :math:`M` mistakes.  In the realizable case (the mentor's threshold
    is in the class) and :math:`\eta = p`, Hedge's expected number of
    wrong proposals is at most :math:`2\ln N / p`.  Queries are the
    :math:`pT` random ones, at most :math:`\lfloor 1/\varepsilon \rfloor + 1`
    per label asked with the mentor's own label proposed (their inputs are
    :math:`\varepsilon`-separated), and at most the wrong proposals.  So

    .. math::

        \mathbb E[R^\times_T] \le \frac{2L\varepsilon\ln N}{p}, \qquad
        \mathbb E[Q_T] \le pT + \frac{2}{\varepsilon} + 2 + \frac{2\ln N}{p},

    and :math:`\varepsilon = T^{-2/3}`, :math:`p = T^{-1/3}` make both the
    regret and the query rate :math:`O(T^{-1/3})`.

    The paper states its algorithm for a general policy class of finite VC
    (smooth inputs) or Littlestone dimension and proves subconstant regret
    with sublinear queries; the exact query rule, the tuning and the
    exponents above are reconstructed for this threshold class and are not
    the paper's constants.  Only random queries update Hedge (so its
    estimates stay unbiased); the other queries only add to the set of
    supporting inputs.  The sampled catastrophe (the environment's
    ``catastrophe`` metric) is one uniform draw per replication compared
    with the product of payoffs.  The cell tables of the query rule are
    copied in every round with a query (the learner's ``update`` is pure),
    which costs :math:`O(n_{\rm reps}/\varepsilon)` per round.

    References
    ----------
    .. [1] B. Plaut, H. Zhu, S. Russell, "Avoiding Catastrophe in Online
       Learning by Asking for Help", ICML 2025 (problem and local
       generalisation, Sec. 2; impossibility without further assumptions,
       Thm 4.1; Algorithm 1 and its subconstant-regret, sublinear-query
       guarantee, Thm 5.2; numbers as cited by the paper's reviews, not
       re-checked).
    .. [2] N. Cesa-Bianchi, G. Lugosi, G. Stoltz, "Minimizing regret with
       label efficient prediction", IEEE Trans. Inf. Theory 51(6), 2005.

    [validated-rates]

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import mentor_hedge, threshold_mentor
    >>> env = threshold_mentor(0.5, inputs="iid")
    >>> res = sim.run(mentor_hedge(), env, horizon=2000, n_reps=20, seed=0)
    >>> bool(res.metrics["query_rate"][-1].mean() < 0.5)
    True
    >>> bool((res.metrics["multiplicative_regret"] <= res.metrics["additive_regret"] + 1e-12).all())
    True
    >>> base = sim.run(mentor_hedge(allow_queries=False), env, horizon=2000, n_reps=20, seed=0)
    >>> int(base.metrics["queries"][-1].sum()), bool(base.metrics["catastrophe"][-1].all())
    (0, True)
    """
    n_thresholds = check_int(n_thresholds, "n_thresholds", minimum=2)
    if radius is not None:
        radius = check_float(radius, "radius", positive=True)
    if query_prob is not None:
        query_prob = check_float(query_prob, "query_prob", minimum=0.0, maximum=1.0)
    if eta is not None:
        eta = check_float(eta, "eta", positive=True)
    if not isinstance(allow_queries, (bool, np.bool_)):
        raise TypeError(f"allow_queries must be a bool, got {type(allow_queries).__name__}")
    allow_queries = bool(allow_queries)
    params = {"n_thresholds": n_thresholds, "radius": radius, "query_prob": query_prob, "eta": eta,
              "allow_queries": allow_queries}
    params = {k: v for k, v in params.items() if v is not None}
    grid = np.linspace(0.0, 1.0, n_thresholds)

    def check_spec(spec):
        if spec.feedback != "mentor":
            raise ValueError(f"mentor_hedge runs on mentor environments (threshold_mentor), got feedback "
                             f"{spec.feedback!r}")

    def init(spec, n_reps, keys=None, xp=np):
        n_reps = check_int(n_reps, "n_reps")
        check_spec(spec)
        horizon = spec.horizon if spec.horizon is not None else spec.max_horizon
        if horizon is None and (radius is None or query_prob is None):
            raise ValueError("mentor_hedge tunes radius and query_prob to the horizon: run it through sim.run "
                             "or give both")
        eps = horizon ** (-2.0 / 3.0) if radius is None else radius
        p = min(1.0, horizon ** (-1.0 / 3.0)) if query_prob is None else query_prob
        rate = eta if eta is not None else (p if p > 0 else 1.0)
        n_cells = max(1, math.ceil(1.0 / eps))
        if n_cells * n_reps > MAX_CELLS:
            raise ValueError(f"radius={eps:g} needs {n_cells} cells per replication; with n_reps={n_reps} that is "
                             f"more than {MAX_CELLS:.0e} (use a larger radius or fewer replications per run)")
        return MentorHedgeState(
            cmin=xp.full((n_reps, 2, n_cells + 2), xp.inf), cmax=xp.full((n_reps, 2, n_cells + 2), -xp.inf),
            loss_estimates=xp.zeros((n_reps, n_thresholds)),
            cum_weights=xp.tile(xp.arange(n_thresholds + 1, dtype=xp.float64)[None, :], (n_reps, 1)),
            radius=float(eps), query_prob=float(p), eta=float(rate))

    def _ns(a):
        return np if isinstance(a, np.ndarray) else get_namespace(a)

    def _cell(state, x):
        xp = _ns(x)
        n_cells = state.cmin.shape[2] - 2
        return xp.minimum(xp.astype(x / state.radius, xp.int64), n_cells - 1) + 1

    def act(state, x, keys):
        xp = _ns(x)
        n_reps = x.shape[0]
        rows = xp.arange(n_reps)
        with np.errstate(over="ignore"):
            u_act, u_q = uniform(keys, np.uint64(0)), uniform(keys, np.uint64(1))
        # the sampled threshold is <= x (action 1) iff u falls in the prefix mass of the thresholds <= x
        cw = state.cum_weights
        n_le = xp.searchsorted(xp.asarray(grid), x, side="right")
        a = xp.astype(u_act * cw[:, -1] < cw[rows, n_le], xp.int64)
        if allow_queries:
            eps, c = state.radius, _cell(state, x)
            z = u_q < state.query_prob
            near = ((state.cmax[rows, a, c] > -np.inf) | (state.cmax[rows, a, c - 1] >= x - eps)
                    | (state.cmin[rows, a, c + 1] <= x + eps))
            q = z | ~near
        else:
            z = q = xp.zeros(n_reps, dtype=xp.bool)
        return MentorAction(a, q, z), state

    def update(state, action, feedback, keys=None):
        x, m = feedback
        q, z = action.query, action.random_query
        xp = _ns(x)
        cmin, cmax, L_hat, cum_w = state.cmin, state.cmax, state.loss_estimates, state.cum_weights
        if bool(xp.any(q)):
            # the one cell (label m, cell of x) of each asking replication
            hit = (q[:, None, None] & (xp.arange(2)[None, :, None] == m[:, None, None])
                   & (xp.arange(cmin.shape[2])[None, None, :] == _cell(state, x)[:, None, None]))
            xc = x[:, None, None]
            cmin = xp.where(hit, xp.minimum(cmin, xc), cmin)
            cmax = xp.where(hit, xp.maximum(cmax, xc), cmax)
        if bool(xp.any(z)):
            says1 = xp.asarray(grid)[None, :] <= x[:, None]
            wrong = xp.astype(says1 != (m[:, None] == 1), xp.float64)
            L_new = xp.where(z[:, None], L_hat + wrong / state.query_prob, L_hat)
            w = xp.exp(-state.eta * (L_new - xp.min(L_new, axis=1, keepdims=True)))
            cum_new = xp.concat([cum_w[:, :1], xp.cumulative_sum(w, axis=1)], axis=1)
            L_hat, cum_w = L_new, xp.where(z[:, None], cum_new, cum_w)
        return state._replace(cmin=cmin, cmax=cmax, loss_estimates=L_hat, cum_weights=cum_w)

    return Learner(name="mentor_hedge", feedback="mentor", init=init, act=act, update=update, params=params,
                   doc=mentor_hedge.__doc__, check_spec=check_spec)
