r"""Approximate balance near the dual optimum: a bias within ε of the LP prices mis-routes only thin-margin tokens.

Statement checked
-----------------
This is the approximate-balance bound **derived and proved here** for the
deterministic setting, not a transcription of Han & Zhong's statement (their
"approximate-balancing guarantee", property (iii) of arXiv:2512.03915, whose
exact form could not be retrieved; it may differ in form and constants).

Let :math:`s \in \mathbb R^{N \times E}`, :math:`1 \le K < E`, and integer
capacities :math:`C_i \ge 0` with :math:`\sum_i C_i = NK` (balanced), and let
:math:`p^\star` be any optimal price vector of the dual
:math:`g(p) = \sum_t \operatorname{top-}K\operatorname{-sum}(s_t - p) + C^\top p`.
For a token :math:`t` let its **margin at** :math:`p^\star` be

.. math::

    m_t = v_{t,(K)} - v_{t,(K+1)}, \qquad v_t = s_t - p^\star,

the gap between its :math:`K`-th and :math:`(K+1)`-th largest priced scores,
and :math:`M(\delta) = \#\{t : m_t \le \delta\}`.  Then for every bias
:math:`b` with :math:`\min_c \lVert b + p^\star - c\mathbf 1 \rVert_\infty \le \varepsilon`
(within :math:`\varepsilon` of :math:`-p^\star` up to the common shift), the
loads :math:`L_i(b)` of top-:math:`K` routing on :math:`s + b` (any tie rule)
satisfy

.. math::

    |L_i(b) - C_i| \le M(2\varepsilon) \quad\text{for every expert } i,
    \qquad\text{so}\qquad \mathrm{MaxVio}(b) \le \frac{M(2\varepsilon)}{NK/E} .

*Proof.*  Write :math:`b = -p^\star + c\mathbf 1 + \delta` with
:math:`|\delta_i| \le \varepsilon`.  The common shift does not change any
ranking.  If :math:`m_t > 2\varepsilon`, the top-:math:`K` set :math:`S_t` of
:math:`v_t` is unique and for :math:`i \in S_t`, :math:`j \notin S_t`,
:math:`v_{t,i} - v_{t,j} \ge m_t > 2\varepsilon \ge \delta_j - \delta_i`, so
:math:`i` still beats :math:`j` under :math:`s + b`: the token keeps
:math:`S_t`.  With integer capacities the LP has a 0/1 optimum :math:`x^\star`
(total unimodularity), and complementary slackness with :math:`p^\star`
makes each :math:`x^\star_t` a top-:math:`K` set of :math:`v_t`, hence
:math:`x^\star_t = S_t` when :math:`m_t > 0`.  Feasibility and
:math:`\sum_i C_i = NK` force :math:`L_i(x^\star) = C_i`.  So routing on
:math:`s + b` agrees with :math:`x^\star` except on the :math:`M(2\varepsilon)`
thin-margin tokens, each of which changes a given expert's load by at most
one.  :math:`\square`

For the sign rule of Wang et al. (2024) this turns a statement about biases
into one about loads: wherever the ALF-LB bias is within :math:`\varepsilon`
of the centred prices, the batch is balanced up to the thin-margin tokens.
The check runs the library's ``alf_lb`` (sign rule) on ``routing_fixed``
through ``sim.run`` and tests the bound at every iteration, in a metric that
reads each batch's bias and loads, with
:math:`\varepsilon_t = \tfrac12(\max_i - \min_i)(b_{t,i} + p^\star_i)`.

How the checks work
-------------------
Hypothesis draws :math:`N \le 5`, :math:`E \le 4`, :math:`1 \le K < E`,
integer capacities summing to :math:`NK` (the balanced split, permuted),
scores either continuous or on a coarse dyadic grid (so that exact ties and
zero margins occur), a radius :math:`\varepsilon` (zero, small, large), a
perturbation :math:`\delta \in [-\varepsilon, \varepsilon]^E` including its
corners, and a shift.  :math:`p^\star` comes from ``solve_exact`` (HiGHS) and
is checked to be optimal against a brute-force optimum; margins are
computed here by sorting, loads by the library's ``top_k_route``.  Margins
are compared with :math:`2\varepsilon + 10^{-7}` to absorb the solver's
rounding of :math:`p^\star`.

Self-tests: the bound is attained on a worked instance (so the constant
cannot be lowered), and the variant with :math:`M(\varepsilon)` in place of
:math:`M(2\varepsilon)` is false — a worked counterexample.

References
----------
X. Y. Han and Y. Zhong, "A theoretical framework for auxiliary-loss-free load
balancing of sparse mixture-of-experts in large-scale AI models",
arXiv:2512.03915, 2025: the primal-dual reading and an approximate-balancing
guarantee for the deterministic setting (statement and theorem number not
retrieved; the bound above is this module's own).  L. Wang, H. Gao, C. Zhao,
X. Sun and D. Dai, "Auxiliary-loss-free load balancing strategy for
mixture-of-experts", arXiv:2408.15664, 2024: the sign update.  Schrijver,
*Theory of Linear and Integer Programming*, 1986, Thm 19.3 (total
unimodularity) and Sec. 7.4 (complementary slackness).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from expertlab import sim
from expertlab.balance import AssignmentProblem, alf_lb, dual_objective, routing_fixed, solve_exact, top_k_route
from expertlab.testing import strategies

pytestmark = pytest.mark.proof

_TOL = 1e-7


def margins(scores, prices, k):
    """m_t = K-th minus (K+1)-th largest of s_t - p, by sorting (independent of the library)."""
    v = -np.sort(-(scores - prices), axis=1)
    return v[:, k - 1] - v[:, k]


def bound(scores, prices, k, eps, factor=2.0):
    """M(factor * eps): tokens whose margin at the prices is at most factor * eps (plus the solver tolerance)."""
    return int(np.sum(margins(scores, prices, k) <= factor * eps + _TOL))


def brute_force(scores, k, cap):
    n, e = scores.shape
    best = -np.inf
    for choice in itertools.product(list(itertools.combinations(range(e), k)), repeat=n):
        load = np.zeros(e)
        for sub in choice:
            load[list(sub)] += 1
        if np.all(load <= cap):
            best = max(best, sum(scores[t, list(sub)].sum() for t, sub in enumerate(choice)))
    return best


@st.composite
def instances(draw):
    # half of the draws on a coarse grid (step 3/4): exact ties, zero margins
    scores = draw(strategies.score_matrices(max_tokens=5, min_experts=2, max_experts=4, max_abs=3.0))
    n, e = scores.shape
    k = draw(st.integers(1, e - 1))
    q, r = divmod(n * k, e)
    perm = draw(st.permutations(range(e)))
    cap = np.array([q + (perm[i] < r) for i in range(e)], dtype=float)
    eps = draw(st.sampled_from([0.0, 1e-3, 0.05, 0.25, 1.0]))
    corner = draw(st.booleans())
    if corner:
        signs = np.array(draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=e, max_size=e)))
        delta = eps * signs
    else:
        delta = eps * np.array(draw(st.lists(st.floats(-1, 1), min_size=e, max_size=e)))
    shift = draw(st.floats(-5, 5))
    return scores, k, cap, eps, delta, shift


def _optimal_prices(scores, k, cap):
    prob = AssignmentProblem(scores, k, capacity=cap)
    res = solve_exact(prob, method="highs")
    p = np.asarray(res.prices)
    best = brute_force(scores, k, cap)
    assert dual_objective(scores, p, k, cap) == pytest.approx(best, abs=1e-7)  # p* is optimal
    return p


def _violation(scores, k, cap, eps, delta, shift, factor):
    p = _optimal_prices(scores, k, cap)
    b = -p + delta + shift
    loads = top_k_route(scores, b, k).sum(axis=0)
    return int(np.abs(loads - cap).max()) - bound(scores, p, k, eps, factor)


@given(instances())
def test_loads_within_thin_margin_count(inst):
    scores, k, cap, eps, delta, shift = inst
    assert _violation(scores, k, cap, eps, delta, shift, 2.0) <= 0


def excess_metric(scores, prices, k, cap):
    """A metric: the largest max_i |L_i - C_i| - M(2 eps_t) over the batches so far (<= 0 when the bound holds)."""

    def update(acc, info, t):
        b, loads = np.asarray(info["bias"])[0], np.asarray(info["loads"])[0]
        gap = b + prices
        eps = 0.5 * (gap.max() - gap.min())
        return max(acc, float(np.abs(loads - cap).max() - bound(scores, prices, k, eps)))

    return sim.Metric("bound_excess", lambda n_reps, xp: -np.inf, update, lambda acc: np.array([acc]))


@given(instances(), st.sampled_from([0.01, 0.05, 0.2]), st.integers(1, 30))
def test_bound_along_sign_rule_trajectories(inst, u, n_iter):
    """The library's sign-rule iterates: at every iteration, |L - C| <= M(2 eps_t)."""
    scores, k, cap, _, delta, _ = inst
    p = _optimal_prices(scores, k, cap)
    res = sim.run(alf_lb(step=u, rule="sign", bias0=-p + delta), routing_fixed(scores, k, capacity=cap),
                  horizon=n_iter, n_reps=1, backend="numpy", metrics=[excess_metric(scores, p, k, cap)],
                  checkpoints=[n_iter])
    assert res.metrics["bound_excess"][-1, 0] <= 0


def test_bound_is_attained():
    # N = 4, E = 2, K = 1, C = (2, 2); margins s_t0 - s_t1 = (1, 1, 0.25, 0.25).  The optimum puts
    # tokens 0, 1 on expert 0 and 2, 3 on expert 1 (value 2); p = (0.25, 0) is optimal and leaves
    # tokens 2, 3 with margin 0.  At b = -p they tie and go to expert 0: L = (4, 0), |L - C| = 2 = M(0).
    s = np.array([[1.0, 0.0], [1.0, 0.0], [0.25, 0.0], [0.25, 0.0]])
    cap = np.array([2.0, 2.0])
    p = np.array([0.25, 0.0])
    assert brute_force(s, 1, cap) == 2.0
    assert dual_objective(s, p, 1, cap) == 2.0
    loads = top_k_route(s, -p, 1).sum(axis=0)
    assert loads.tolist() == [4, 0]
    assert np.abs(loads - cap).max() == bound(s, p, 1, 0.0) == 2


def test_half_radius_variant_is_false():
    # a worked counterexample: token 0 has margin 1 in (eps, 2 eps] for eps = 0.6 and flips under
    # delta = (-eps, +eps); token 1 (margin 2) stays.  (One counterexample settles it; a Hypothesis search
    # for one also depended on which optimal prices the LP solver returned, which is not unique.)
    s = np.array([[1.0, 0.0], [0.0, 2.0]])
    cap = np.array([1.0, 1.0])
    p = np.zeros(2)  # optimal: each token on its best expert already balances the loads
    assert dual_objective(s, p, 1, cap) == brute_force(s, 1, cap) == 3.0
    b = -p + np.array([-0.6, 0.6])
    loads = top_k_route(s, b, 1).sum(axis=0)
    assert loads.tolist() == [0, 2]
    assert bound(s, p, 1, 0.6, factor=1.0) == 0 < 1 == np.abs(loads - cap).max() <= bound(s, p, 1, 0.6)
