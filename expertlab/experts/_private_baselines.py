"""Baselines for the private experts: private FTPL (report-noisy-min) and DP-FTRL with the tree mechanism."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._validation import check_int
from ._private_run import PrivateLearner, _budget, _check_loss, _laplace, _total, _uniform
from ._privacy import PrivacyCost, per_step_epsilon, report_noisy_max_epsilon, tree_mechanism_epsilon

__all__ = ["noisy_ftpl", "NoisyFTPLState", "tree_ftrl", "TreeFTRLState"]


class NoisyFTPLState(NamedTuple):
    """State of :func:`noisy_ftpl`: rounds ``t``, keys, cumulative losses ``cum``."""

    t: int
    key: Any
    cum: Any


def noisy_ftpl(epsilon: float = 1.0, horizon: int = 10_000, *, delta: float = 0.0) -> PrivateLearner:
    r"""Private follow the perturbed leader: report-noisy-min with fresh Laplace noise every round.

    Parameters
    ----------
    epsilon : float
        Total budget :math:`\varepsilon > 0`.
    horizon : int
        :math:`T`; the :math:`T - 1` data-dependent releases share the budget.
    delta : float
        0: basic composition over the rounds (pure DP); :math:`> 0`:
        advanced composition, :math:`(\varepsilon, \delta)`-DP.

    Returns
    -------
    PrivateLearner

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
    :math:`\sqrt T` with advanced), and so does the regret.

    References
    ----------
    .. [1] C. Dwork and A. Roth, *The Algorithmic Foundations of Differential
       Privacy*, 2014, Claim 3.9 (report noisy max) and Theorems 3.16, 3.20.
    .. [2] A. Kalai and S. Vempala, "Efficient algorithms for online decision
       problems", JCSS 71(3), 2005 (follow the perturbed leader).

    Examples
    --------
    >>> round(noisy_ftpl(epsilon=1.0, horizon=101).privacy(5).epsilon, 12)
    1.0
    """
    eps, dlt = _budget(epsilon, delta)
    horizon = check_int(horizon, "horizon")
    k = max(horizon - 1, 1)
    b = 2.0 / per_step_epsilon(eps, k, dlt)

    def privacy(n):
        return _total(PrivacyCost(report_noisy_max_epsilon(1.0, b)), k, dlt)

    def init(n_reps, n_experts, key):
        key = np.asarray(key, dtype=np.uint64)
        if key.shape != (check_int(n_reps, "n_reps"),):
            raise ValueError(f"key must have shape ({n_reps},), got {key.shape}")
        return NoisyFTPLState(0, key, np.zeros((n_reps, check_int(n_experts, "n_experts"))))

    def act(state):
        u = _uniform(state.key, state.t, np.arange(state.cum.shape[1])[None, :])
        return np.argmin(state.cum + _laplace(u, b), axis=1)

    def update(state, loss):
        _check_loss(loss, state.cum.shape)
        return NoisyFTPLState(state.t + 1, state.key, state.cum + loss)

    return PrivateLearner("noisy_ftpl", init, act, update, privacy,
                          {"epsilon": eps, "horizon": horizon, "delta": dlt})


class TreeFTRLState(NamedTuple):
    """State of :func:`tree_ftrl`: rounds ``t``, keys, exact and noisy node sums ``(n_reps, n_levels, n_experts)``."""

    t: int
    key: Any
    alpha: Any
    alpha_hat: Any


def tree_ftrl(epsilon: float = 1.0, horizon: int = 10_000) -> PrivateLearner:
    r"""DP follow the regularized leader with the binary-tree mechanism (pure :math:`\varepsilon`).

    Parameters
    ----------
    epsilon : float
    horizon : int
        :math:`T`; the tree has ``horizon.bit_length()`` levels.

    Returns
    -------
    PrivateLearner

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
    :math:`\varepsilon`-DP.  Simplification: the linear (argmin) leader
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
    >>> round(tree_ftrl(epsilon=2.0, horizon=1000).privacy(4).epsilon, 12)
    2.0
    """
    eps, _ = _budget(epsilon, 0.0)
    horizon = check_int(horizon, "horizon")
    levels = horizon.bit_length()

    def scale(n):
        return levels * n / eps

    def privacy(n):
        return PrivacyCost(tree_mechanism_epsilon(horizon, float(n), scale(n)))

    def init(n_reps, n_experts, key):
        key = np.asarray(key, dtype=np.uint64)
        if key.shape != (check_int(n_reps, "n_reps"),):
            raise ValueError(f"key must have shape ({n_reps},), got {key.shape}")
        z = np.zeros((n_reps, levels, check_int(n_experts, "n_experts")))
        return TreeFTRLState(0, key, z, z.copy())

    def act(state):
        n_reps, _, n = state.alpha.shape
        if state.t == 0:
            u = _uniform(state.key, 0, np.zeros((1, 1)))[:, 0]
            return np.minimum((u * n).astype(np.int64), n - 1)
        bits = np.array([(state.t >> j) & 1 for j in range(levels)], dtype=float)
        return np.argmin(np.einsum("j,rjn->rn", bits, state.alpha_hat), axis=1)

    def update(state, loss):
        n_reps, _, n = state.alpha.shape
        _check_loss(loss, (n_reps, n))
        m = state.t + 1
        if m > horizon:
            raise ValueError(f"tree_ftrl was built for horizon={horizon} rounds")
        i = (m & -m).bit_length() - 1
        alpha = state.alpha.copy()
        alpha_hat = state.alpha_hat.copy()
        alpha[:, i] = alpha[:, :i].sum(axis=1) + loss
        alpha[:, :i] = 0.0
        u = _uniform(state.key, state.t, 1 + np.arange(n)[None, :])
        alpha_hat[:, i] = alpha[:, i] + _laplace(u, scale(n))
        alpha_hat[:, :i] = 0.0
        return TreeFTRLState(m, state.key, alpha, alpha_hat)

    return PrivateLearner("tree_ftrl", init, act, update, privacy, {"epsilon": eps, "horizon": horizon})
