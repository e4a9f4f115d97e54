r"""Asking a mentor: products of payoffs against sums, and what local support buys per mistake.

Statements checked
------------------
1. For payoffs :math:`a_t, b_t \in [0, 1]`,

   .. math::

       \prod_{t \le T} a_t - \prod_{t \le T} b_t \;\le\; \sum_{t \le T} (a_t - b_t)^+ ,

   so the multiplicative regret (mentor's product minus the learner's) is at
   most the additive regret counted on the rounds the learner does worse.
   This is the step that turns a per-round guarantee into one on the chance
   of avoiding catastrophe (Plaut, Zhu & Russell, ICML 2025, the reduction
   behind the regret bound of Algorithm 1; stated there as a lemma, number
   not re-checked).
2. Local generalisation, :math:`\mu(x, \pi^m(x')) \ge \mu(x, \pi^m(x)) -
   L|x - x'|`, and the rule "act with :math:`a` only when a queried
   :math:`x'` within :math:`\varepsilon` has :math:`\pi^m(x') = a`, else
   ask" give :math:`\mu(x_t, y_t) \ge \mu(x_t, \pi^m(x_t)) - L\varepsilon`
   on every round, whatever the proposals; and the queries that answer a
   proposal equal to the mentor's action are :math:`\varepsilon`-separated
   within each label, so there are at most :math:`2(\lfloor 1/\varepsilon
   \rfloor + 1)` of them on [0, 1].

How the checks work
-------------------
Hypothesis draws payoff sequences on [0, 1] (with 0 and 1 as endpoints) for
(1).  For (2) it draws a threshold, :math:`L`, :math:`\varepsilon`, an input
sequence and an arbitrary proposal sequence, and runs a plain-Python
transcription of the rule on the threshold-mentor payoff; then it runs the
library's :func:`expertlab.experts.mentor_hedge` (Hedge proposals) through
:func:`expertlab.sim.run` on the same inputs and checks the aggregated
consequences, read off the environment's metrics, on every replication:
:math:`R^\times \le R^+ \le L\varepsilon M` and
:math:`Q \le Z + H + 2(\lfloor 1/\varepsilon\rfloor + 1)` (random queries
:math:`Z`, wrong proposals :math:`H`).

Self-tests: (1) fails outside [0, 1] (:math:`a = (2, 2)`, :math:`b = (1, 1)`);
(2) fails when the rule ignores the label and acts on any familiar input:
Hypothesis finds a violation, and a hand example is checked (threshold
1/2, :math:`\varepsilon = 0.1`, a queried 0.85, then a proposal 0 at 0.9
costs :math:`0.4 > L\varepsilon`).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expertlab import sim
from expertlab.experts import mentor_hedge, threshold_mentor

pytestmark = pytest.mark.proof

unit = st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(unit, unit), min_size=1, max_size=40))
def test_product_gap_at_most_sum_of_positive_gaps(pairs):
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    assert np.prod(a) - np.prod(b) <= np.maximum(a - b, 0.0).sum() + 1e-12


def test_self_check_product_bound_needs_the_unit_interval():
    a, b = np.array([2.0, 2.0]), np.array([1.0, 1.0])
    assert np.prod(a) - np.prod(b) > np.maximum(a - b, 0.0).sum()


def _plain(theta, L, eps, xs, proposals, check_label=True):
    """Plain-Python query rule with given proposals; returns (per-round costs, queries answering a right proposal)."""
    queried = []  # (input, mentor label)
    costs, right_asked = [], []
    for x, a in zip(xs, proposals):
        m = int(x >= theta)
        near = [q for q in queried if abs(q[0] - x) <= eps and (q[1] == a or not check_label)]
        if near:
            costs.append(0.0 if a == m else min(1.0, L * abs(x - theta)))
        else:
            costs.append(0.0)
            if a == m:
                right_asked.append((x, m))
            queried.append((x, m))
    return costs, right_asked


@st.composite
def rule_cases(draw):
    theta = draw(st.sampled_from([0.0, 0.25, 0.5, 0.7, 1.0]) | st.floats(0.0, 1.0))
    L = draw(st.floats(0.1, 5.0))
    eps = draw(st.sampled_from([0.05, 0.1, 0.3]) | st.floats(0.01, 1.0))
    n = draw(st.integers(1, 30))
    xs = draw(st.lists(unit, min_size=n, max_size=n))
    proposals = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    return theta, L, eps, xs, proposals


@settings(max_examples=300, deadline=None)
@given(rule_cases())
def test_supported_actions_cost_at_most_L_eps(case):
    theta, L, eps, xs, proposals = case
    costs, right_asked = _plain(theta, L, eps, xs, proposals)
    assert max(costs) <= L * eps + 1e-12
    for label in (0, 1):
        pts = sorted(x for x, m in right_asked if m == label)
        assert all(b - a > eps for a, b in zip(pts, pts[1:]))
        assert len(pts) <= math.floor(1 / eps) + 1


@settings(max_examples=60, deadline=None)
@given(rule_cases(), st.sampled_from([2, 5, 33]), st.sampled_from([0.0, 0.2, 1.0]))
def test_library_learner_satisfies_the_aggregated_bounds(case, n_thresholds, p):
    theta, L, eps, xs, _ = case
    env = threshold_mentor(theta, L, inputs=xs)
    names = ("multiplicative_regret", "additive_regret", "mistakes", "queries", "random_queries", "proposal_mistakes")
    res = sim.run(mentor_hedge(n_thresholds, radius=eps, query_prob=p), env, horizon=len(xs), n_reps=8, seed=0,
                  metrics=names)
    f = {k: res.metrics[k][-1] for k in names}
    assert np.all(f["multiplicative_regret"] <= f["additive_regret"] + 1e-12)
    assert np.all(f["additive_regret"] <= L * eps * f["mistakes"] + 1e-12)
    assert np.all(f["queries"] <= f["random_queries"] + f["proposal_mistakes"] + 2 * (math.floor(1 / eps) + 1))


def test_self_check_label_blind_rule_by_hand():
    costs, _ = _plain(0.5, 1.0, 0.1, [0.85, 0.9], [1, 0], check_label=False)
    assert costs[1] == pytest.approx(0.4) and costs[1] > 0.1
    costs, _ = _plain(0.5, 1.0, 0.1, [0.85, 0.9], [1, 0], check_label=True)
    assert costs[1] == 0.0  # asked instead


def test_self_check_hypothesis_finds_a_violation_of_the_label_blind_rule():
    found = []

    @settings(max_examples=300, deadline=None)
    @given(rule_cases())
    def search(case):
        theta, L, eps, xs, proposals = case
        costs, _ = _plain(theta, L, eps, xs, proposals, check_label=False)
        if max(costs) > L * eps + 1e-9:
            found.append(case)

    search()
    assert found, "acting on any familiar input, whatever its mentor label, should break the per-round bound"
