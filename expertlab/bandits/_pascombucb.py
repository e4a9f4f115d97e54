r"""PASCombUCB: probably anytime-safe stochastic combinatorial semi-bandits, and the unsafe CUCB baseline.

Ground items :math:`1..L` have reward means :math:`\mu_i` and variances
:math:`\sigma_i^2`; a super arm is a set of at most :math:`K` items; it is
*safe* when :math:`\sum_{i\in A}\sigma_i^2 \le \bar\sigma^2`.  The learner
must pull only safe super arms over the whole horizon with probability at
least :math:`1-\delta`, and maximise :math:`\sum_{i\in A}\mu_i`.

The round loop of every replication runs in one ``@njit(parallel=True)``
kernel with ``prange`` over replications (phase lengths are data dependent,
so the replications cannot advance in lock-step).  Each item's sample in
round ``t`` of replication ``r`` is a pure function of ``(seed, r, t, i)``
through :mod:`expertlab._random`.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
from numba import njit, prange

from .._random import rep_key, round_key, seed_to_uint64, uniform
from .._validation import check_in, check_int
from ..sim._engine import checkpoint_grid
from ._comb_oracles import (_MAX_SUPER_ARMS, SafeCombInstance, _cr, _split, absolutely_safe_size, greedy_split,
                            lil_radius,
                            safe_comb_instance, super_arms)

__all__ = ["SafeCombInstance", "PASCombUCBResult", "safe_comb_instance", "hou_tan_zhong_instance",
           "pascombucb", "cucb", "lil_radius", "greedy_split", "absolutely_safe_size", "super_arms"]

#: Mean index of an unsampled item: finite, so that arms with more unsampled items rank higher.
_UNSEEN = 1e9


def hou_tan_zhong_instance(budget: float = 0.6, *, binding: bool = False) -> SafeCombInstance:
    """The published instance of Hou, Tan & Zhong (2023): L = 10, K = 3, delta = 0.05, sigma^2 = 1/4.

    Items (mean, variance): (0.5, .24), (0.45, .24), (0.4, .04), (0.35, .01)
    and six at (0.3, .01); budgets 0.6 and 0.751 in the paper.  On it every
    super arm of at most 3 items is safe under both budgets (the largest
    variance sum is 0.52), so the constraint costs the learner only the
    samples needed to *certify* safety.  ``binding=True`` gives this
    library's variant with item 3's variance raised to 0.2: then the
    unconstrained optimum {1, 2, 3} (variance 0.68) is unsafe at budget 0.6
    and the best safe arm is {1, 2, 4} (mean 1.30, variance 0.49).

    Examples
    --------
    >>> inst = hou_tan_zhong_instance(0.6)
    >>> inst.n_items, inst.k, absolutely_safe_size(inst.budget, inst.variance_bound, inst.k)
    (10, 3, 2)
    """
    means = [0.5, 0.45, 0.4, 0.35] + [0.3] * 6
    variances = [0.24, 0.24, 0.2 if binding else 0.04, 0.01] + [0.01] * 6
    return safe_comb_instance(means, variances, budget, 3, variance_bound=0.25, delta=0.05)


@njit(cache=True)
def _pull(items, n, rk, t, b, p, mu, var, cnt, s1, s2):
    """Pull ``items[:n]`` in round ``t``: update the statistics, return (mean reward, true variance sum)."""
    key = round_key(rk, np.uint64(t))
    m = 0.0
    v = 0.0
    for j in range(n):
        i = items[j]
        x = b[i] if uniform(key, np.uint64(i)) < p[i] else 0.0
        cnt[i] += 1
        s1[i] += x
        s2[i] += x * x
        m += mu[i]
        v += var[i]
    return m, v


@njit(parallel=True, cache=True)
def _kernel(safe, mu, var, b, p, budget, var_bound, k, horizon, seed, arms, groups, n_warm, omega_mu, omega_v,
            best, ck, regret_out, viol_out, pulls_out, warm_out, safe_out):
    n_reps = regret_out.shape[0]
    n_items = mu.size
    n_arms = arms.shape[0]
    n_ck = ck.size
    for r in prange(n_reps):
        rk = rep_key(seed, np.uint64(r))
        cnt = np.zeros(n_items, dtype=np.int64)
        s1 = np.zeros(n_items)
        s2 = np.zeros(n_items)
        ucb_mu = np.zeros(n_items)
        lcb_v = np.zeros(n_items)
        ucb_v = np.zeros(n_items)
        buf = np.zeros(k, dtype=np.int64)
        sub = np.zeros(k, dtype=np.int64)
        piece = np.zeros(k, dtype=np.int64)
        t = 0
        c = 0
        reg = 0.0
        viol = 0
        warm = 0
        n_safe = n_arms
        # warm-up: absolutely safe groups, each pulled once per sweep, n_warm sweeps (PASCombUCB only)
        if safe:
            for _w in range(n_warm):
                for g in range(groups.shape[0]):
                    if t >= horizon:
                        break
                    n = 0
                    while n < groups.shape[1] and groups[g, n] >= 0:
                        buf[n] = groups[g, n]
                        n += 1
                    m, v = _pull(buf, n, rk, t, b, p, mu, var, cnt, s1, s2)
                    reg += best - m
                    viol += v > budget
                    t += 1
                    while c < n_ck and ck[c] == t:
                        regret_out[r, c] = reg
                        c += 1
            warm = t
        seen_n = np.full(n_items, -1, dtype=np.int64)  # sample count the bounds were computed at
        while t < horizon:
            for i in range(n_items):
                if seen_n[i] == cnt[i]:
                    continue
                seen_n[i] = cnt[i]
                if cnt[i] == 0:
                    ucb_mu[i] = _UNSEEN
                    lcb_v[i] = 0.0
                    ucb_v[i] = var_bound
                else:
                    mh = s1[i] / cnt[i]
                    vh = max(s2[i] / cnt[i] - mh * mh, 0.0)
                    ucb_mu[i] = mh + _cr(cnt[i], omega_mu)
                    lcb_v[i] = max(vh - 3.0 * _cr(cnt[i], omega_mu), 0.0)
                    ucb_v[i] = min(vh + 3.0 * _cr(cnt[i], omega_v), var_bound)
            if n_arms == 0:
                # greedy oracle (no enumeration): items by decreasing UCB_mu, each added while the arm has
                # fewer than k items and, for PASCombUCB, its LCB_v sum stays below the budget
                order = np.argsort(-ucb_mu, kind="mergesort")
                n = 0
                lv = 0.0
                for o in range(n_items):
                    if n == k:
                        break
                    i = order[o]
                    if safe and n > 0 and not lv + lcb_v[i] < budget:
                        continue
                    buf[n] = i
                    n += 1
                    lv += lcb_v[i]
                n_safe = -1
            else:
                # optimistic arm over the possibly safe set (everything, for CUCB); first maximiser wins
                best_a = -1
                best_u = -np.inf
                n_safe = 0
                for a in range(n_arms):
                    u = 0.0
                    lv = 0.0
                    for j in range(k):
                        i = arms[a, j]
                        if i < 0:
                            break
                        u += ucb_mu[i]
                        lv += lcb_v[i]
                    # a single item is absolutely safe (variance_bound <= budget), so it always stays possible
                    if safe and not lv < budget and k > 1 and arms[a, 1] >= 0:
                        continue
                    n_safe += 1
                    if u > best_u:
                        best_u = u
                        best_a = a
                n = 0
                while n < k and arms[best_a, n] >= 0:
                    buf[n] = arms[best_a, n]
                    n += 1
            n_pieces = _split(buf, n, ucb_v, budget, k, piece) if safe else 1
            if not safe:
                piece[:n] = 0
            for q in range(n_pieces):
                if t >= horizon:
                    break
                ns = 0
                for j in range(n):
                    if piece[j] == q:
                        sub[ns] = buf[j]
                        ns += 1
                m, v = _pull(sub, ns, rk, t, b, p, mu, var, cnt, s1, s2)
                reg += best - m
                viol += v > budget
                t += 1
                if not safe and warm == 0:
                    seen = 0
                    for i in range(n_items):
                        seen += cnt[i] > 0
                    if seen == n_items:
                        warm = t
                while c < n_ck and ck[c] == t:
                    regret_out[r, c] = reg
                    c += 1
        viol_out[r] = viol
        pulls_out[r, :] = cnt
        warm_out[r] = warm
        safe_out[r] = n_safe


@dataclasses.dataclass(frozen=True)
class PASCombUCBResult:
    """Outcome of :func:`pascombucb` or :func:`cucb` on ``n_reps`` replications.

    Attributes
    ----------
    algorithm : str
        ``"pascombucb"`` or ``"cucb"``.
    checkpoints : ndarray of int, shape (n_checkpoints,)
        Pulls (time steps) after which the regret was recorded.
    regret : ndarray, shape (n_checkpoints, n_reps)
        Pseudo-regret ``sum_t (mu(A*) - mu(A_t))`` against the best safe super arm,
        one term per pull (every piece of a phase is a time step).
    violations : ndarray of int, shape (n_reps,)
        Pulls of super arms with true variance sum above the budget.
    pulls : ndarray of int, shape (n_reps, n_items)
        Samples of each item.
    warmup_length : ndarray of int, shape (n_reps,)
        Pulls of the warm-up phase (CUCB: pulls until every item was sampled once).
    final_safe_set_size : ndarray of int, shape (n_reps,)
        Size of the possibly safe set in the last phase (CUCB: all super arms).
    best_safe_arm : tuple of int
        The comparator ``A*``.
    wall_time : float
        Seconds spent in the kernel (compilation excluded after the first call).
    seed : int
    """

    algorithm: str
    checkpoints: np.ndarray
    regret: np.ndarray
    violations: np.ndarray
    pulls: np.ndarray
    warmup_length: np.ndarray
    final_safe_set_size: np.ndarray
    best_safe_arm: tuple
    wall_time: float
    seed: int


def _best_safe(inst, arms):
    best, arg = -np.inf, None
    for row in arms:
        a = row[row >= 0]
        if inst.variances[a].sum() <= inst.budget and inst.means[a].sum() > best:
            best, arg = float(inst.means[a].sum()), tuple(int(i) for i in a)
    return best, arg


ORACLES = ("auto", "exact", "greedy")


def _best_safe_milp(inst):
    """The best safe super arm by a 0/1 program (HiGHS): max mu.x, sum x <= k, var.x <= budget."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    L = inst.n_items
    cons = LinearConstraint(np.vstack([np.ones(L), inst.variances]), -np.inf, [inst.k, inst.budget])
    res = milp(-inst.means, constraints=cons, integrality=np.ones(L), bounds=Bounds(0, 1))
    if not res.success:
        raise RuntimeError(f"the best-safe-arm program failed: {res.message}")
    arg = tuple(int(i) for i in np.flatnonzero(res.x > 0.5))
    return float(inst.means[list(arg)].sum()), arg


def _n_super_arms(n_items, k):
    return sum(math.comb(n_items, s) for s in range(1, k + 1))


def _run(safe, instance, horizon, n_reps, seed, n_warmup, checkpoints, oracle="auto"):
    if not isinstance(instance, SafeCombInstance):
        raise TypeError(f"instance must be a SafeCombInstance, got {type(instance).__name__}")
    check_in(oracle, "oracle", ORACLES)
    horizon = check_int(horizon, "horizon")
    n_reps = check_int(n_reps, "n_reps")
    n_warmup = check_int(n_warmup, "n_warmup", minimum=1)
    seed_u = seed_to_uint64(seed)
    ck = checkpoint_grid(horizon) if checkpoints is None else np.unique(np.asarray(checkpoints, dtype=np.int64))
    if ck.size == 0 or ck[0] < 1 or ck[-1] > horizon:
        raise ValueError(f"checkpoints must lie in [1, horizon={horizon}]")
    inst = instance
    if oracle == "auto":
        oracle = "exact" if _n_super_arms(inst.n_items, inst.k) <= _MAX_SUPER_ARMS else "greedy"
    if oracle == "exact":
        arms = super_arms(inst.n_items, inst.k)
        best, arg = _best_safe(inst, arms)
    else:
        arms = np.zeros((0, inst.k), dtype=np.int64)
        best, arg = _best_safe_milp(inst)
    m = absolutely_safe_size(inst.budget, inst.variance_bound, inst.k)
    n_groups = -(-inst.n_items // m)
    groups = np.full((n_groups, m), -1, dtype=np.int64)
    for g in range(n_groups):
        chunk = np.arange(g * m, min((g + 1) * m, inst.n_items))
        groups[g, :chunk.size] = chunk
    mu, var = inst.means, inst.variances
    b = np.where(mu > 0, (mu * mu + var) / mu, 0.0)
    p = mu * mu / (mu * mu + var)
    regret = np.zeros((n_reps, ck.size))
    viol = np.zeros(n_reps, dtype=np.int64)
    pulls = np.zeros((n_reps, inst.n_items), dtype=np.int64)
    warm = np.zeros(n_reps, dtype=np.int64)
    n_safe = np.zeros(n_reps, dtype=np.int64)
    t0 = time.perf_counter()
    _kernel(safe, mu, var, b, p, inst.budget, inst.variance_bound, inst.k, horizon, seed_u, arms, groups,
            n_warmup, 1.0 / horizon**2, inst.delta / horizon**2, best, ck, regret, viol, pulls, warm, n_safe)
    wall = time.perf_counter() - t0
    return PASCombUCBResult(algorithm="pascombucb" if safe else "cucb", checkpoints=ck, regret=regret.T.copy(),
                            violations=viol, pulls=pulls, warmup_length=warm, final_safe_set_size=n_safe,
                            best_safe_arm=arg, wall_time=wall, seed=int(seed_u))


def pascombucb(instance: SafeCombInstance, *, horizon: int, n_reps: int = 1, seed=0, n_warmup: int = 2,
               checkpoints=None, oracle: str = "auto") -> PASCombUCBResult:
    r"""Run PASCombUCB on ``n_reps`` independent replications of ``instance``.

    Parameters
    ----------
    instance : SafeCombInstance
        From :func:`safe_comb_instance` or :func:`hou_tan_zhong_instance`.
    horizon : int
        Number of pulls ``T`` (also sets the confidence levels ``1/T^2`` and ``delta/T^2``).
    n_reps : int
    seed : int, SeedSequence or None
    n_warmup : int
        Sweeps of the warm-up phase over the absolutely safe groups.
    checkpoints : array of int, optional
        Where to record the regret (default :func:`expertlab.sim.checkpoint_grid`).
    oracle : {"auto", "exact", "greedy"}
        How the optimistic arm is chosen: ``"exact"`` enumerates every super
        arm (at most 200 000); ``"greedy"`` takes items by decreasing
        :math:`U^\mu_i`, adding each while the arm has fewer than ``K`` items
        and its :math:`\sum L^v_i` stays below the budget; ``"auto"`` uses
        the exact oracle whenever it fits.

    Returns
    -------
    PASCombUCBResult

    Notes
    -----
    With ``n_i`` samples, empirical mean :math:`\hat\mu_i` and empirical
    (biased) variance :math:`\hat s_i^2` of item ``i``, and
    :math:`\mathrm{cr}(n,\rho)=(1+\sqrt{1/2})\sqrt{0.75\,n^{-1}\ln(\ln(1.5n)/\rho)}`:

    .. math::

        U^\mu_i = \hat\mu_i + \mathrm{cr}(n_i,\omega_\mu),\quad
        L^v_i = \max(\hat s_i^2 - 3\,\mathrm{cr}(n_i,\omega_\mu), 0),\quad
        U^v_i = \min(\hat s_i^2 + 3\,\mathrm{cr}(n_i,\omega_v), \sigma^2),

    with :math:`\omega_\mu = 1/T^2`, :math:`\omega_v = \delta/T^2`.

    1. *Warm-up*: the items are cut into consecutive groups of
       :math:`m = \max\{m \le K : m\sigma^2 \le \bar\sigma^2\}` items
       (absolutely safe whatever the variances); each group is pulled once
       per sweep, for ``n_warmup`` sweeps.
    2. *Phase p*: the possibly safe set is
       :math:`S_p = \{A : |A| \le K, \sum_{i\in A} L^v_i < \bar\sigma^2\}`
       together with every single item (absolutely safe, so never excluded);
       :math:`A_p = \arg\max_{A\in S_p}\sum_{i\in A} U^\mu_i` by exact
       enumeration of all super arms (first maximiser in size-then-lexicographic
       order); GreedySplit cuts :math:`A_p` (items in increasing index order,
       next fit) into pieces with at most :math:`K` items and
       :math:`\sum U^v < \bar\sigma^2` (a single item is always a piece);
       each piece is pulled once, as one time step.  Statistics are updated
       after every pull, bounds once per phase.

    Regret is charged per pull against the best safe super arm,
    :math:`R_T=\sum_{t\le T}(\mu(A^*)-\mu(A_t))`, so splitting costs regret
    until the optimum is certified safe as a single piece.  A pull is a
    violation when its true variance sum exceeds :math:`\bar\sigma^2`.

    *Reconstructed here* (not confirmed from the paper's text): the warm-up
    length (``n_warmup`` sweeps over a partition of the items into
    absolutely safe groups), next-fit order of GreedySplit, the tie-breaking
    order, the biased variance estimator, the floor ``e`` inside the outer
    logarithm of the radius, keeping single items in the possibly safe set,
    and the per-pull reading of the regret.  The
    confidence levels and the factor 3 on the variance radius are those of
    the authors' experiment code as recorded in this project's paper notes.
    The absolutely safe group size is derived from
    :math:`m\sigma^2\le\bar\sigma^2`: at :math:`\bar\sigma^2 = 0.6`,
    :math:`\sigma^2=1/4` it is 2 (rounding the ratio 2.4 up would give
    3 items with worst-case variance 0.75 > 0.6, not absolutely safe); at
    0.751 it is 3.

    Beyond 200 000 super arms the optimistic arm comes from the greedy
    oracle above.  It has no approximation guarantee for this
    cardinality-and-budget constrained selection, so it may give up regret
    against the exact oracle.  It keeps the safety guarantee, since safety
    comes from GreedySplit and the variance bounds, not from the oracle.  The
    comparator :math:`A^\star` is then found exactly by a 0/1 program, and
    ``final_safe_set_size`` is ``-1`` (the set is never listed).

    On the published instance every super arm of at most 3 items is safe
    (largest variance sum 0.52), so no algorithm can violate there; what the
    constraint costs is certification.  At budget 0.6 the optimum
    {1, 2, 3} becomes one piece only once
    :math:`0.25 + 0.25 + U^v_3 < 0.6`, i.e. after about :math:`1.8\cdot 10^5` samples of
    item 3 at :math:`T = 10^6`; until then each phase spends two pulls on
    {1, 2} and {3}, and the per-pull regret grows linearly (measured:
    0.73 T at :math:`T=10^4`, 0.70 T at :math:`10^5`, 0.31 T at :math:`10^6`).
    The logarithmic regret claim is therefore checked at budget 0.751 only.

    References
    ----------
    Y. Hou, V. Y. F. Tan and Z. Zhong, "Probably Anytime-Safe Stochastic
    Combinatorial Semi-Bandits", ICML 2023 (arXiv 2301.13393): the
    PASCombUCB algorithm and its anytime-safety guarantee and
    :math:`O(\log T)` problem-dependent regret bound (theorem numbers not
    re-checked).  K. Jamieson, M. Malloy, R. Nowak and S. Bubeck, "lil' UCB",
    COLT 2014 (the LIL radius).

    [validated-rates]

    Examples
    --------
    >>> res = pascombucb(hou_tan_zhong_instance(0.751), horizon=2000, n_reps=4, seed=0)
    >>> res.regret.shape[1], int(res.violations.sum()), res.best_safe_arm
    (4, 0, (0, 1, 2))
    >>> int(res.pulls.sum(axis=1).max()) <= 3 * 2000
    True
    """
    return _run(True, instance, horizon, n_reps, seed, n_warmup, checkpoints, oracle)


def cucb(instance: SafeCombInstance, *, horizon: int, n_reps: int = 1, seed=0, checkpoints=None,
         oracle: str = "auto") -> PASCombUCBResult:
    r"""Unsafe CUCB baseline: pull :math:`\arg\max_{|A|\le K}\sum_{i\in A}U^\mu_i`, ignoring the variances.

    Same samples, mean radius (:math:`\omega_\mu = 1/T^2`) and regret
    accounting as :func:`pascombucb`; an unsampled item has index ``1e9`` (so
    the first ``ceil(L / K)`` rounds sample every item once, ``K`` at a time);
    no warm-up, no splitting.  ``oracle`` as in :func:`pascombucb` (the greedy
    oracle is exact here: the top ``K`` indices).

    References
    ----------
    W. Chen, Y. Wang and Y. Yuan, "Combinatorial Multi-Armed Bandit: General
    Framework, Results and Applications", ICML 2013 (CUCB); used as the unsafe
    baseline by Hou, Tan & Zhong, ICML 2023.

    [validated-rates]

    Examples
    --------
    >>> res = cucb(hou_tan_zhong_instance(0.6, binding=True), horizon=3000, n_reps=2, seed=0)
    >>> bool(np.all(res.violations > 0)), res.warmup_length.tolist()
    (True, [4, 4])
    """
    return _run(False, instance, horizon, n_reps, seed, 1, checkpoints, oracle)
