"""Shapley values: hand-worked games, Monte Carlo against exact values, truncation, importance sampling, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from expertlab.mixtures import shapley_exact, shapley_mc, table_game


def glove(m):
    return np.minimum(m[:, :2].sum(axis=1), m[:, 2]).astype(float)


def test_glove_game_by_hand():
    # player 2 (the only right glove) is pivotal in 4 of the 6 orders: 2/3; the two left gloves 1/6 each
    np.testing.assert_allclose(shapley_exact(glove, 3).values, [1 / 6, 1 / 6, 2 / 3], atol=1e-15)


def test_additive_game_gives_each_player_its_own_value():
    a = np.array([0.3, -1.0, 2.5, 0.0])
    phi = shapley_exact(lambda m: m.astype(float) @ a, 4).values
    np.testing.assert_allclose(phi, a, atol=1e-14)
    mc = shapley_mc(lambda m: m.astype(float) @ a, 4, 20, seed=0)
    np.testing.assert_allclose(mc.values, a, atol=1e-14)     # every permutation gives the same contributions
    np.testing.assert_allclose(mc.stderr, 0.0, atol=1e-14)


def test_table_game_indexing():
    v = table_game(np.arange(8.0))
    masks = np.array([[False, False, False], [True, False, False], [False, True, True], [True, True, True]])
    assert v(masks).tolist() == [0.0, 1.0, 6.0, 7.0]


def test_monte_carlo_is_unbiased_with_honest_errors():
    rng = np.random.default_rng(3)
    v = table_game(np.concatenate([[0.0], rng.uniform(size=2 ** 6 - 1)]))
    exact = shapley_exact(v, 6).values
    res = shapley_mc(v, 6, 400, seed=1, n_reps=300)
    z = (res.values - exact) / res.stderr                     # (reps, players)
    # standardised errors: mean about 0 and variance about 1 (300 x 6 values)
    assert abs(z.mean()) < 4 / math.sqrt(z.size)
    assert 0.85 < z.var() < 1.15


def test_replications_are_blocks_of_one_stream():
    v = table_game(np.linspace(0, 1, 16))
    a = shapley_mc(v, 4, 50, seed=2, n_reps=3).values
    b = shapley_mc(v, 4, 150, seed=2).values
    np.testing.assert_allclose(a.mean(axis=0), b, atol=1e-14)


def test_truncation_saves_evaluations_within_its_bias_bound():
    skill = np.linspace(0.2, 0.9, 8)
    game = lambda m: 1.0 - np.prod(np.where(m, 1 - skill, 1.0), axis=1)  # noqa: E731
    exact = shapley_exact(game, 8).values
    tol = 0.02
    t = shapley_mc(game, 8, 2000, seed=0, truncation=tol)
    plain = shapley_mc(game, 8, 2000, seed=0)
    assert t.n_evaluations < 0.8 * plain.n_evaluations
    # efficiency still holds exactly, and the bias per player is at most tol
    assert t.values.sum() == pytest.approx(game(np.ones((1, 8), bool))[0] - game(np.zeros((1, 8), bool))[0])
    assert np.all(np.abs(t.values - exact) <= tol + 5 * plain.stderr)


def test_importance_sampling_is_consistent():
    rng = np.random.default_rng(5)
    v = table_game(np.concatenate([[0.0], rng.uniform(size=31)]))
    exact = shapley_exact(v, 5).values
    res = shapley_mc(v, 5, 20000, seed=4, proposal=np.array([5.0, 1.0, 1.0, 0.5, 2.0]))
    assert res.method == "importance" and 0 < res.effective_sample_size < 20000
    assert np.all(np.abs(res.values - exact) < 5 * res.stderr + 1e-12)
    # uniform weights are the uniform proposal: every importance weight is equal
    flat = shapley_mc(v, 5, 500, seed=4, proposal=np.ones(5))
    assert flat.effective_sample_size == pytest.approx(500)


def test_plackett_luce_probabilities_sum_to_one():
    from itertools import permutations

    from expertlab.mixtures._shapley import _plackett_luce_logpdf

    s = np.log(np.array([3.0, 1.0, 0.5, 2.0]))
    perms = np.array(list(permutations(range(4))))
    assert np.exp(_plackett_luce_logpdf(perms, s)).sum() == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: shapley_exact(glove, 21), ValueError, "n_players"),
    (lambda: shapley_mc("v", 3), TypeError, "value"),
    (lambda: shapley_mc(lambda m: np.zeros((m.shape[0], 2)), 3), ValueError, "one value per coalition"),
    (lambda: shapley_mc(lambda m: np.full(m.shape[0], np.nan), 3), ValueError, "non-finite"),
    (lambda: shapley_mc(glove, 3, 1), ValueError, "n_permutations"),
    (lambda: shapley_mc(glove, 3, proposal=[1.0, -1.0, 1.0]), ValueError, "proposal"),
    (lambda: shapley_mc(glove, 3, proposal=[1.0, 1.0]), ValueError, "proposal"),
    (lambda: shapley_mc(glove, 3, truncation=-0.1), ValueError, "truncation"),
    (lambda: table_game([0.0, 1.0, 2.0]), ValueError, "2\\*\\*n"),
    (lambda: table_game([0.0, np.inf]), ValueError, "finite"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
