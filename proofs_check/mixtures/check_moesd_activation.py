r"""Expected activated experts under uniform top-K routing: exact value, bound, monotonicity, concavity.

Statement checked
-----------------
If each of :math:`t` tokens is routed to a uniformly random :math:`K`-subset of
:math:`E` experts, independently, the expected number of distinct experts
activated is (MoESD, NeurIPS 2025, arXiv 2505.19645, the expert-activation
model of its analysis)

.. math::

    N(t) = E\bigl(1 - (1 - K/E)^t\bigr),

and it satisfies :math:`N(0) = 0`, :math:`N(1) = K`,
:math:`N(t) \le \min(E, tK)`, :math:`N(t+1) \ge N(t)` and
:math:`N(t+2) - N(t+1) \le N(t+1) - N(t)` (concave in :math:`t`).

How the checks work
-------------------
The formula is compared, in exact rational arithmetic, with the mean number
of distinct experts over *all* :math:`\binom{E}{K}^t` routings for
:math:`E \le 6`, :math:`t \le 3`.  The bound, monotonicity and concavity
are checked by Hypothesis on
:func:`expertlab.mixtures.expected_activated_experts` over
:math:`1 \le K \le E \le 512`, :math:`0 \le t \le 10^4`, with a relative
allowance of :math:`10^{-12}` for rounding.

Self-test: the "with replacement" approximation
:math:`E(1 - (1 - 1/E)^{tK})`, which lets one token pick the same expert
twice, is not the expectation.  Worked by hand: for :math:`E = K = 2`,
:math:`t = 1` it gives 1.5 where every routing activates 2 experts.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from expertlab.mixtures import expected_activated_experts

pytestmark = pytest.mark.proof


def enumerated_mean(t, E, K):
    """Mean number of distinct experts over every routing of t tokens (exact)."""
    subsets = list(itertools.combinations(range(E), K))
    total = count = 0
    for routing in itertools.product(subsets, repeat=t):
        total += len(set().union(*routing)) if routing else 0
        count += 1
    return Fraction(total, count)


def formula(t, E, K):
    return E * (1 - Fraction(E - K, E) ** t)


@given(st.integers(1, 6).flatmap(lambda E: st.tuples(st.just(E), st.integers(1, E))), st.integers(0, 3))
def test_formula_is_the_exact_expectation(EK, t):
    E, K = EK
    exact = enumerated_mean(t, E, K)
    assert formula(t, E, K) == exact
    assert float(expected_activated_experts(t, E, K)) == pytest.approx(float(exact), rel=1e-13, abs=1e-13)


@given(st.integers(1, 512).flatmap(lambda E: st.tuples(st.just(E), st.integers(1, E))), st.integers(0, 10_000))
def test_bound_monotone_concave(EK, t):
    E, K = EK
    n0, n1, n2 = expected_activated_experts(np.array([t, t + 1, t + 2]), E, K)
    eps = 1e-12 * E
    assert n0 <= min(E, t * K) + eps
    assert n1 >= n0 - eps and n2 >= n1 - eps
    assert (n2 - n1) <= (n1 - n0) + eps
    if t == 0:
        assert n0 == 0.0 and n1 == pytest.approx(K, rel=1e-14)


def test_self_test_with_replacement_is_not_the_expectation():
    with_replacement = lambda t, E, K: E * (1 - Fraction(E - 1, E) ** (t * K))   # noqa: E731
    assert enumerated_mean(1, 2, 2) == 2 and with_replacement(1, 2, 2) == Fraction(3, 2)
    assert any(with_replacement(t, E, K) != enumerated_mean(t, E, K)
               for E in range(2, 5) for K in range(2, E + 1) for t in range(1, 3))
