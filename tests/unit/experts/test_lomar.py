"""LOMAR: hand-worked switching decisions, the guarantee on random graphs, proposers and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from expertlab.experts import PROPOSERS, fixed_bipartite, lomar, random_bipartite

# two offline nodes; greedy takes node 0 first and then has nothing for the second arrival (reward 1),
# the hindsight optimum is node 1 then node 0 (reward 1.9)
W = np.array([[1.0, 0.9], [1.0, 0.0]])


def _oracle(t, w, free, ctx):
    return np.full(w.shape[0], [1, 0][t], dtype=np.int64)


@pytest.mark.parametrize("rho, budget, reward, followed", [
    # 0.9 >= 1 * (1 + 1 * 1)? no: take the expert's node 0.  Round 2 proposes node 0, now taken: a skip,
    # followed since 1 >= 1 * (1 + 0)
    (1.0, 0.0, 1.0, 1),
    (0.5, 0.0, 1.0, 1),   # 0.9 >= 0.5 * (1 + 1) = 1? no; then the skip again
    (0.4, 0.0, 1.9, 2),   # 0.9 >= 0.8: follow; then 1.9 >= 0.4 * (1 + 1): follow
    (0.5, 0.2, 1.9, 2),   # 0.9 >= 1 - 0.2: follow
])
def test_switching_rule_by_hand(rho, budget, reward, followed):
    res = lomar(fixed_bipartite(W), rho=rho, budget=budget, proposer=_oracle, n_reps=3, seed=0)
    np.testing.assert_allclose(res.reward, reward)
    np.testing.assert_allclose(res.expert_reward, 1.0)
    np.testing.assert_allclose(res.proposer_reward, 1.9)
    assert res.followed.tolist() == [followed] * 3


@pytest.mark.parametrize("proposer", sorted(PROPOSERS))
@pytest.mark.parametrize("rho", [0.0, 0.3, 0.7, 1.0])
def test_guarantee_on_random_graphs(proposer, rho):
    res = lomar(random_bipartite(10, 25, 0.4), rho=rho, budget=0.1, proposer=proposer, n_reps=200, seed=3)
    assert np.all(res.reward >= rho * res.expert_reward - 0.1 - 1e-12)
    assert np.all(res.min_slack >= -1e-12)


def test_rho_one_without_budget_never_falls_below_the_expert():
    res = lomar(random_bipartite(6, 20, 0.5), rho=1.0, proposer="spoiler", expert="threshold", threshold=0.3,
                n_reps=100, seed=1)
    assert np.all(res.reward >= res.expert_reward - 1e-12)


def test_spoiler_makes_the_guarantee_tight():
    # the proposer that grabs the expert's future nodes pushes LOMAR down to rho * expert on average
    res = lomar(random_bipartite(20, 40, 0.3), rho=0.5, proposer="spoiler", n_reps=300, seed=1)
    ratio = res.reward / res.expert_reward
    assert ratio.min() >= 0.5 - 1e-12
    assert ratio.mean() < 0.6


def test_greedy_expert_by_hand():
    # rho = 1, B = 0 with a proposer that always skips: LOMAR follows the skip only while it keeps up with
    # the expert, so it matches exactly the greedy matching: node 0 (1.0), then nothing
    skip = lambda t, w, free, ctx: np.full(w.shape[0], -1, dtype=np.int64)  # noqa: E731
    res = lomar(fixed_bipartite(W), rho=1.0, proposer=skip, n_reps=2)
    np.testing.assert_allclose(res.reward, 1.0)
    np.testing.assert_allclose(res.proposer_reward, 0.0)


def test_batching_and_seeds():
    inst = random_bipartite(8, 15, 0.5)
    a = lomar(inst, rho=0.6, proposer="random", n_reps=10, seed=4)
    b = lomar(inst, rho=0.6, proposer="random", n_reps=4, seed=4, rep_offset=6)
    np.testing.assert_array_equal(a.reward[6:], b.reward)
    np.testing.assert_array_equal(a.followed[6:], b.followed)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(rho=1.5), ValueError, "rho"), (dict(rho=-0.1), ValueError, "rho"),
    (dict(budget=-1.0), ValueError, "budget"), (dict(expert="optimal"), ValueError, "expert"),
    (dict(proposer="oracle"), ValueError, "proposer"), (dict(proposer=3), TypeError, "proposer"),
    (dict(n_reps=0), ValueError, "n_reps"), (dict(rho=float("nan")), ValueError, "rho"),
])
def test_bad_arguments(kw, exc, match):
    with pytest.raises(exc, match=match):
        lomar(random_bipartite(3, 3), **kw)


def test_bad_instances_and_proposers():
    with pytest.raises(ValueError, match="no feasible match"):
        fixed_bipartite(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="no feasible match"):
        random_bipartite(3, 3, edge_prob=0.0)
    with pytest.raises(ValueError, match="non-negative"):
        fixed_bipartite([[1.0, -0.5]])
    with pytest.raises(ValueError, match="finite"):
        fixed_bipartite([[1.0, np.nan]])
    with pytest.raises(ValueError, match="w_max"):
        fixed_bipartite([[2.0]], w_max=1.0)
    with pytest.raises(TypeError, match="BipartiteInstance"):
        lomar(W)
    bad = lambda t, w, free, ctx: np.zeros(w.shape[0])  # noqa: E731  (floats, not node indices)
    with pytest.raises(ValueError, match="proposer must return an int array"):
        lomar(fixed_bipartite(W), proposer=bad, n_reps=2)
