"""Baselines for the private experts: private FTPL (report-noisy-min) and DP-FTRL with the tree mechanism.

Both are :class:`expertlab.sim.Learner` records that play one expert per
round; the horizon rule and the accountant are those of the private
learners of :mod:`expertlab.experts`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import _random
from ..sim._protocol import Learner
from ._common import one_hot
from ._common import run_ns as _ns
from ._private_run import _budget, _check_horizon, _laplace, _no_awake, _round, _start, _total
from ._privacy import PrivacyCost, per_step_epsilon, report_noisy_max_epsilon, tree_mechanism_epsilon

__all__ = ["noisy_ftpl", "NoisyFTPLState", "tree_ftrl", "TreeFTRLState"]


class NoisyFTPLState(NamedTuple):
    """State of :func:`noisy_ftpl`: rounds ``t`` ``(n_reps,)``, cumulative losses ``cum`` ``(n_reps, n_experts)``."""

    t: Any
    cum: Any


def noisy_ftpl(epsilon: float = 1.0, horizon: int = 10_000, *, delta: float = 0.0) -> Learner:
    r"""Private follow the perturbed leader: report-noisy-min with fresh Laplace noise every round.

    Parameters
    ----------
    epsilon : float
        Total budget :math:`\varepsilon > 0`.
    horizon : int
        :math:`T`; the :math:`T - 1` data-dependent releases share the budget,
        and the learner refuses a longer run.
    delta : float
        0: basic composition over the rounds (pure DP); :math:`> 0`:
        advanced composition, :math:`(\varepsilon, \delta)`-DP.

    Returns
    -------
    Learner
        Plays one expert per round (one-hot ``p``).

    Notes
    -----
    Round :math:`t` plays :math:`\arg\min_i (L_{t-1,i} + Z_{t,i})`,
    :math:`Z_{t,i} \sim \mathrm{Lap}(b)` iid and fresh (the non-lazy
    version).  One round's loss vector moves every :math:`L_{s,i}`,
    :math:`s \ge t`, by at most 1, so each release is
    :math:`2/b`-DP (report-noisy-max, non-monotone queries) and
    :math:`b = 2/\varepsilon_0` with :math:`\varepsilon_0` the per-release
    share of :math:`\varepsilon` over :math:`T - 1` releases.  The noise
    grows with :math:`T` (:math:`b \propto T` with basic composition,
    :math:`\sqrt T` with advanced), and so does the regret.  A run of
    :math:`T' \le T` rounds makes :math:`T' - 1` releases, which is what
    :func:`~expertlab.experts.privacy_cost` composes.

    References
    ----------
    .. [1] C. Dwork and A. Roth, *The Algorithmic Foundations of Differential
       Privacy*, 2014, Claim 3.9 (report noisy max) and Theorems 3.16, 3.20.
    .. [2] A. Kalai and S. Vempala, "Efficient algorithms for online decision
       problems", JCSS 71(3), 2005 (follow the perturbed leader).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.experts import privacy_cost, realizable
    >>> L = noisy_ftpl(epsilon=1.0, horizon=101)
    >>> res = sim.run(L, realizable(5), horizon=101, n_reps=20, seed=0)
    >>> round(privacy_cost(L, 5, 101).epsilon, 12), bool(res.mean()[-1] > 0)
    (1.0, True)
    """
    eps, dlt = _budget(epsilon, delta)
    horizon = _check_horizon(horizon)
    params = {"epsilon": eps, "horizon": horizon, "delta": dlt}
    b = _ftpl_scale(params)
    name = "noisy_ftpl"

    def init(spec, n_reps, keys, xp=np):
        n_reps, n_experts, _ = _start(name, horizon, spec, n_reps, keys, xp)
        return NoisyFTPLState(xp.zeros(n_reps, dtype=xp.int64), xp.zeros((n_reps, n_experts)))

    def act(state, awake=None, keys=None):
        _no_awake(name, awake)
        n = state.cum.shape[1]
        xp = _ns(state.cum)
        keys = xp.asarray(keys, dtype=xp.uint64)
        with np.errstate(over="ignore"):
            u = _random.uniform(keys[:, None], xp.arange(n, dtype=xp.uint64)[None, :])
        return one_hot(xp.argmin(state.cum + _laplace(u, b), axis=1), n), state

    def update(state, p, feedback, keys):
        loss = _round(name, horizon, state.t, feedback, state.cum.shape, keys)
        return NoisyFTPLState(state.t + 1, state.cum + loss)

    return Learner(name=name, feedback="full", init=init, act=act, update=update, params=params,
                   doc=noisy_ftpl.__doc__)


def _ftpl_scale(params):
    """The Laplace scale ``b`` of :func:`noisy_ftpl`: the per-release share of the budget over ``T - 1`` releases."""
    return 2.0 / per_step_epsilon(params["epsilon"], max(params["horizon"] - 1, 1), params["delta"])


def _ftpl_cost(params, n, horizon) -> PrivacyCost:
    """``horizon - 1`` report-noisy-min releases at the learner's scale."""
    step = PrivacyCost(report_noisy_max_epsilon(1.0, _ftpl_scale(params)))
    return _total(step, horizon - 1, params["delta"])



class TreeFTRLState(NamedTuple):
    """State of :func:`tree_ftrl`: rounds ``t`` ``(n_reps,)``; exact and noisy node sums ``alpha``,
    ``alpha_hat`` ``(n_reps, n_levels, n_experts)``."""

    t: Any
    alpha: Any
    alpha_hat: Any


def tree_ftrl(epsilon: float = 1.0, horizon: int = 10_000) -> Learner:
    r"""DP follow the regularized leader with the binary-tree mechanism (pure :math:`\varepsilon`).

    Parameters
    ----------
    epsilon : float
    horizon : int
        :math:`T`; the tree has ``horizon.bit_length()`` levels, and the
        learner refuses a longer run.

    Returns
    -------
    Learner
        Plays one expert per round (one-hot ``p``).

    Notes
    -----
    The binary mechanism keeps noisy sums of the dyadic blocks of rounds:
    after round :math:`m` (1-based) with lowest set bit :math:`i`, the level-
    :math:`i` node :math:`\alpha_i = \sum_{j<i}\alpha_j + \ell_m` is
    completed and released as :math:`\hat\alpha_i = \alpha_i + Z`,
    :math:`Z \in \mathbb R^d` iid :math:`\mathrm{Lap}(b)`.  The noisy prefix
    sum :math:`\hat L_m = \sum_{j:\ \text{bit } j \text{ of } m}\hat\alpha_j`
    is the regularizer-free leader's input: round :math:`m + 1` plays
    :math:`\arg\min_i \hat L_{m,i}` (uniform at random in round 1).  A round's
    loss vector lies in one node per level and changes a node by at most
    :math:`d` in :math:`\ell_1`, so with :math:`b = (\lfloor\log_2 T\rfloor
    + 1)\, d / \varepsilon` the released nodes, hence the plays, are
    :math:`\varepsilon`-DP; a run of :math:`T' \le T` rounds touches
    ``T'.bit_length()`` levels, which is what
    :func:`~expertlab.experts.privacy_cost` composes.  Simplification: the linear (argmin) leader
    replaces the paper's regularized FTRL step over the simplex.

    References
    ----------
    .. [1] P. Kairouz, B. McMahan, S. Song, O. Thakkar, A. Thakurta and Z. Xu,
       "Practical and private (deep) learning without sampling or shuffling",
       ICML 2021 (DP-FTRL with tree aggregation).
    .. [2] T.-H. H. Chan, E. Shi and D. Song, "Private and continual release of
       statistics", ACM TISSEC 14(3), 2011, the binary mechanism.

    Examples
    --------
    >>> from expertlab.experts import privacy_cost
    >>> L = tree_ftrl(epsilon=2.0, horizon=1000)
    >>> round(privacy_cost(L, 4, 1000).epsilon, 12), round(privacy_cost(L, 4, 100).epsilon, 12)
    (2.0, 1.4)
    """
    eps, _ = _budget(epsilon, 0.0)
    horizon = _check_horizon(horizon)
    levels = horizon.bit_length()
    params = {"epsilon": eps, "horizon": horizon}
    name = "tree_ftrl"

    def init(spec, n_reps, keys, xp=np):
        n_reps, n_experts, _ = _start(name, horizon, spec, n_reps, keys, xp)
        z = xp.zeros((n_reps, levels, n_experts))
        return TreeFTRLState(xp.zeros(n_reps, dtype=xp.int64), z, xp.zeros_like(z))

    def act(state, awake=None, keys=None):
        _no_awake(name, awake)
        n_reps, _, n = state.alpha.shape
        xp = _ns(state.alpha)
        t = int(state.t[0])
        if t == 0:
            with np.errstate(over="ignore"):
                u = _random.uniform(xp.asarray(keys, dtype=xp.uint64), np.uint64(0))
            return one_hot(xp.minimum(xp.astype(u * n, xp.int64), n - 1), n), state
        # the noisy prefix sum: the released nodes of the levels whose bit is set in t, added from level 0 up
        total = None
        for j in range(levels):
            if (t >> j) & 1:
                total = state.alpha_hat[:, j, :] if total is None else total + state.alpha_hat[:, j, :]
        return one_hot(xp.argmin(total, axis=1), n), state

    def update(state, p, feedback, keys):
        n_reps, _, n = state.alpha.shape
        loss = _round(name, horizon, state.t, feedback, (n_reps, n), keys)
        xp = _ns(state.alpha)
        m = int(state.t[0]) + 1
        i = (m & -m).bit_length() - 1
        # level i receives the completed node, the levels below it are emptied, the others are kept
        node = xp.sum(state.alpha[:, :i, :], axis=1) + loss
        with np.errstate(over="ignore"):
            u = _random.uniform(keys[:, None], xp.arange(1, n + 1, dtype=xp.uint64)[None, :])
        node_hat = node + _laplace(u, _tree_scale(params, n))
        below = xp.zeros((n_reps, i, n))
        alpha = xp.concat([below, node[:, None, :], state.alpha[:, i + 1:, :]], axis=1)
        alpha_hat = xp.concat([below, node_hat[:, None, :], state.alpha_hat[:, i + 1:, :]], axis=1)
        return TreeFTRLState(state.t + 1, alpha, alpha_hat)

    return Learner(name=name, feedback="full", init=init, act=act, update=update, params=params,
                   doc=tree_ftrl.__doc__)


def _tree_scale(params, n):
    """The node noise scale ``b = levels * n / eps`` of :func:`tree_ftrl`."""
    return params["horizon"].bit_length() * n / params["epsilon"]


def _tree_cost(params, n, horizon) -> PrivacyCost:
    """A round's loss vector (L1 sensitivity ``n``) enters ``horizon.bit_length()`` nodes."""
    if horizon > params["horizon"]:
        raise ValueError(f"horizon: tree_ftrl(horizon={params['horizon']}) has no tree nodes for a run of "
                         f"horizon={horizon} rounds")
    return PrivacyCost(tree_mechanism_epsilon(horizon, float(n), _tree_scale(params, n)))
