r"""GreedySplit pieces respect the variance budget whenever the variance upper bounds hold.

Statement checked
-----------------
Let :math:`A` be a super arm, :math:`\sigma_i^2` the true item variances,
:math:`\sigma^2 \le \bar\sigma^2` the known variance bound and
:math:`U_i` variance upper confidence bounds with

.. math::

    \sigma_i^2 \;\le\; U_i \;\le\; \sigma^2 \qquad (i \in A).

Then every piece :math:`P` returned by GreedySplit
(``expertlab.bandits._pascombucb.greedy_split(A, U, budget, K)``) has at most
:math:`K` items, the pieces partition :math:`A`, and

.. math::

    \sum_{i \in P} \sigma_i^2 \;\le\; \bar\sigma^2 ,

strictly below the budget when :math:`|P| \ge 2` (a piece of two or more
items is opened only while :math:`\sum_P U_i < \bar\sigma^2`; a single item
satisfies :math:`\sigma_i^2 \le \sigma^2 \le \bar\sigma^2`).  This is the
step of the safety proof of PASCombUCB (Hou, Tan & Zhong, ICML 2023) that
turns "the variance UCBs are valid" into "every pulled piece is safe"; the
event that the UCBs are valid for all items and times has probability
:math:`\ge 1-\delta` by the LIL bound (see ``check_lil_radius.py``).  The
split rule itself (next fit, items in the given order) is reconstructed, as
stated in the docstring of :func:`expertlab.bandits._pascombucb.pascombucb`;
the lemma number in the paper was not re-checked.

How the check works
-------------------
Hypothesis draws the domain: arm sizes 1..12, :math:`K` 1..6,
:math:`\sigma^2 \in (0, 1/4]`, budgets from :math:`\sigma^2` (the edge) to
:math:`4\sigma^2`, true variances in :math:`[0, \sigma^2]` with the
endpoints drawn on purpose, and UCBs anywhere in :math:`[\sigma_i^2,
\sigma^2]`.  The library's ``greedy_split`` is run and the three properties
are recomputed here.  Self-tests: with a UCB *below* the true variance the
conclusion fails on an explicit arm, and a split that ignores the UCBs
(pieces of :math:`K` consecutive items) breaks the budget on the binding
variant of the published instance.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from expertlab.bandits._pascombucb import greedy_split, hou_tan_zhong_instance

pytestmark = pytest.mark.proof


def pieces_are_safe(pieces, items, true_var, budget, k):
    """The three properties of the statement, computed independently of the split."""
    flat = sorted(i for p in pieces for i in p)
    if flat != sorted(items):
        return False
    for p in pieces:
        if not 1 <= len(p) <= k:
            return False
        v = sum(true_var[i] for i in p)
        if v > budget or (len(p) >= 2 and not v < budget):
            return False
    return True


@st.composite
def split_problems(draw):
    n = draw(st.integers(1, 12))
    k = draw(st.integers(1, 6))
    bound = draw(st.one_of(st.just(0.25), st.floats(1e-3, 0.25)))
    budget = bound * draw(st.one_of(st.just(1.0), st.floats(1.0, 4.0)))
    frac = st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0))
    true_var = [bound * draw(frac) for _ in range(n)]
    ucb = [v + (bound - v) * draw(frac) for v in true_var]
    ucb = [min(max(u, v), bound) for u, v in zip(ucb, true_var)]
    order = draw(st.permutations(range(n)))
    return list(order), true_var, ucb, budget, k


@given(split_problems())
def test_pieces_respect_the_budget_when_the_ucbs_are_valid(problem):
    items, true_var, ucb, budget, k = problem
    pieces = greedy_split(items, ucb, budget, k)
    assert pieces_are_safe(pieces, items, true_var, budget, k), (pieces, true_var, ucb, budget, k)


@given(split_problems())
def test_pieces_are_consecutive_in_the_given_order(problem):
    items, _, ucb, budget, k = problem
    pieces = greedy_split(items, ucb, budget, k)
    assert [i for p in pieces for i in p] == items


def test_self_test_conclusion_fails_when_a_ucb_is_below_the_true_variance():
    true_var = [0.24, 0.24, 0.2]
    ucb = [0.1, 0.1, 0.1]  # invalid: below the truth
    pieces = greedy_split([0, 1, 2], ucb, 0.6, 3)
    assert pieces == ((0, 1, 2),)
    assert not pieces_are_safe(pieces, [0, 1, 2], true_var, 0.6, 3)  # 0.68 > 0.6


def test_self_test_a_split_that_ignores_the_ucbs_is_caught():
    inst = hou_tan_zhong_instance(0.6, binding=True)
    items = [0, 1, 2]
    naive = (tuple(items),)  # K consecutive items per piece
    assert not pieces_are_safe(naive, items, list(inst.variances), inst.budget, inst.k)
    ucb = [0.25, 0.25, 0.25]  # the clamp at sigma^2 before any sample
    assert pieces_are_safe(greedy_split(items, ucb, inst.budget, inst.k), items, list(inst.variances),
                           inst.budget, inst.k)
