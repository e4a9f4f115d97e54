r"""The Shapley value's axioms: efficiency, symmetry and the null player.

Statement checked
-----------------
For every game :math:`v` on :math:`n` players (Shapley 1953):

* efficiency: :math:`\sum_i \phi_i = v([n]) - v(\emptyset)`;
* symmetry: if :math:`v(S \cup \{i\}) = v(S \cup \{j\})` for every
  :math:`S \not\ni i, j`, then :math:`\phi_i = \phi_j`;
* null player: if :math:`v(S \cup \{i\}) = v(S)` for every :math:`S`, then
  :math:`\phi_i = 0`.

How the checks work
-------------------
Hypothesis draws table games on up to 7 players (values on a grid, with
ties).  Symmetric and null players are planted by construction.  The checks
cover :func:`expertlab.mixtures.shapley_exact`.  They also cover the
permutation estimate of :func:`expertlab.mixtures.shapley_mc`, for which
efficiency and the null player hold exactly on every sample.  Symmetry holds
for the estimate only in expectation, so for it the check is within five
standard errors.

Self-test: the Banzhaf value (uniform weights over subsets instead of the
Shapley weights) violates efficiency.  Hypothesis finds a game where it
does, and the glove game is worked by hand: Banzhaf gives 1/4, 1/4, 3/4,
summing to 5/4 ≠ 1.

References
----------
L. S. Shapley, "A value for n-person games", Contributions to the Theory of
Games II, 1953.  J. F. Banzhaf, "Weighted voting doesn't work", Rutgers Law
Review 19, 1965.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expertlab.mixtures import shapley_exact, shapley_mc, table_game

pytestmark = pytest.mark.proof


@st.composite
def games(draw):
    n = draw(st.integers(2, 7))
    table = np.array(draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, -1.0]), min_size=2 ** n,
                                   max_size=2 ** n)))
    return n, table


def _with_null_player(n, table):
    """The game on n + 1 players where the new last player changes nothing."""
    codes = np.arange(2 ** (n + 1))
    return n + 1, table[codes & ((1 << n) - 1)]


def _symmetrised(n, table):
    """v'(S) = v(S) + v(swap_01(S)): players 0 and 1 are symmetric."""
    codes = np.arange(2 ** n)
    b0, b1 = codes & 1, (codes >> 1) & 1
    swapped = (codes & ~3) | (b0 << 1) | b1
    return table + table[swapped]


@settings(max_examples=60, deadline=None)
@given(games())
def test_efficiency(game):
    n, table = game
    v = table_game(table)
    total = table[-1] - table[0]
    assert shapley_exact(v, n).values.sum() == pytest.approx(total, abs=1e-12)
    mc = shapley_mc(v, n, 50, seed=1, n_reps=4).values
    np.testing.assert_allclose(mc.sum(axis=1), total, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(games())
def test_null_player(game):
    n1, table = _with_null_player(*game)
    v = table_game(table)
    assert shapley_exact(v, n1).values[-1] == pytest.approx(0.0, abs=1e-12)
    assert np.all(shapley_mc(v, n1, 40, seed=2, n_reps=3).values[:, -1] == 0.0)


@settings(max_examples=60, deadline=None)
@given(games())
def test_symmetry(game):
    n, table = game
    v = table_game(_symmetrised(n, table))
    phi = shapley_exact(v, n).values
    assert phi[0] == pytest.approx(phi[1], abs=1e-12)
    mc = shapley_mc(v, n, 400, seed=3)
    se = np.hypot(mc.stderr[0], mc.stderr[1])
    assert abs(mc.values[0] - mc.values[1]) <= 5 * se + 1e-12


def _banzhaf(table, n):
    codes = np.arange(2 ** n)
    return np.array([np.mean(table[codes[(codes >> i) & 1 == 0] | (1 << i)] - table[codes[(codes >> i) & 1 == 0]])
                     for i in range(n)])


def test_self_check_banzhaf_violates_efficiency_on_the_glove_game():
    # players 0, 1 hold left gloves, player 2 the right one; a pair is worth 1
    codes = np.arange(8)
    table = np.minimum((codes & 1) + ((codes >> 1) & 1), (codes >> 2) & 1).astype(float)
    np.testing.assert_allclose(_banzhaf(table, 3), [0.25, 0.25, 0.75])
    assert _banzhaf(table, 3).sum() != pytest.approx(table[-1] - table[0])


def test_self_check_hypothesis_finds_a_banzhaf_violation():
    found = []

    @settings(max_examples=60, deadline=None)
    @given(games())
    def search(game):
        n, table = game
        if abs(_banzhaf(table, n).sum() - (table[-1] - table[0])) > 1e-9:
            found.append(game)

    search()
    assert found
