"""LOMAR: hand-worked switching decisions, the guarantee on random graphs, proposers, the environment, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import (PROPOSERS, Match, fixed_bipartite, lomar, matching_proposer, random_bipartite)

# two offline nodes; greedy takes node 0 first and then has nothing for the second arrival (reward 1),
# the hindsight optimum is node 1 then node 0 (reward 1.9)
W = np.array([[1.0, 0.9], [1.0, 0.0]])
ALL = ("reward", "expert_reward", "followed", "min_slack")


def _oracle(t, w, free, ctx):
    return np.full(w.shape[0], [1, 0][t], dtype=np.int64)


def _run(learner, env, n_reps=3, seed=0, rep_offset=0, metrics=ALL):
    res = sim.run(learner, env, horizon=env.n_online, n_reps=n_reps, seed=seed, rep_offset=rep_offset,
                  metrics=metrics)
    return {k: res.metrics[k][-1] for k in res.metrics}


@pytest.mark.parametrize("rho, budget, reward, followed", [
    # 0.9 >= 1 * (1 + 1 * 1)? no: take the expert's node 0.  Round 2 proposes node 0, now taken: a skip,
    # followed since 1 >= 1 * (1 + 0)
    (1.0, 0.0, 1.0, 1),
    (0.5, 0.0, 1.0, 1),   # 0.9 >= 0.5 * (1 + 1) = 1? no; then the skip again
    (0.4, 0.0, 1.9, 2),   # 0.9 >= 0.8: follow; then 1.9 >= 0.4 * (1 + 1): follow
    (0.5, 0.2, 1.9, 2),   # 0.9 >= 1 - 0.2: follow
])
def test_switching_rule_by_hand(rho, budget, reward, followed):
    env = fixed_bipartite(W)
    f = _run(lomar(rho, budget=budget, proposer=_oracle), env)
    np.testing.assert_allclose(f["reward"], reward)
    np.testing.assert_allclose(f["expert_reward"], 1.0)
    np.testing.assert_allclose(_run(matching_proposer(_oracle), env, metrics=["reward"])["reward"], 1.9)
    assert f["followed"].tolist() == [followed] * 3


@pytest.mark.parametrize("proposer", sorted(PROPOSERS))
@pytest.mark.parametrize("rho", [0.0, 0.3, 0.7, 1.0])
def test_guarantee_on_random_graphs(proposer, rho):
    f = _run(lomar(rho, budget=0.1, proposer=proposer), random_bipartite(10, 25, 0.4), n_reps=200, seed=3)
    assert np.all(f["reward"] >= rho * f["expert_reward"] - 0.1 - 1e-12)
    assert np.all(f["min_slack"] >= -1e-12)


def test_rho_one_without_budget_never_falls_below_the_expert():
    env = random_bipartite(6, 20, 0.5, expert="threshold", threshold=0.3)
    f = _run(lomar(1.0, proposer="spoiler"), env, n_reps=100, seed=1)
    assert np.all(f["reward"] >= f["expert_reward"] - 1e-12)


def test_spoiler_makes_the_guarantee_tight():
    # the proposer that grabs the expert's future nodes pushes LOMAR down to rho * expert on average
    f = _run(lomar(0.5, proposer="spoiler"), random_bipartite(20, 40, 0.3), n_reps=300, seed=1)
    ratio = f["reward"] / f["expert_reward"]
    assert ratio.min() >= 0.5 - 1e-12
    assert ratio.mean() < 0.6


def test_greedy_expert_by_hand():
    # rho = 1, B = 0 with a proposer that always skips: LOMAR follows the skip only while it keeps up with
    # the expert, so it matches exactly the greedy matching: node 0 (1.0), then nothing
    skip = lambda t, w, free, ctx: np.full(w.shape[0], -1, dtype=np.int64)  # noqa: E731
    env = fixed_bipartite(W)
    np.testing.assert_allclose(_run(lomar(1.0, proposer=skip), env, n_reps=2)["reward"], 1.0)
    np.testing.assert_allclose(_run(matching_proposer(skip), env, n_reps=2, metrics=["reward"])["reward"], 0.0)


def test_environment_reports_the_expert_and_refuses_bad_matches():
    env = fixed_bipartite(W)
    keys = np.arange(2, dtype=np.uint64)
    state = env.reset(2, keys, np)
    obs = env.observe(state, 0, keys)
    assert obs.expert_node.tolist() == [0, 0] and obs.expert_next_use.tolist() == [[0, 2], [0, 2]]
    state, fb, _ = env.step(state, Match(np.array([1, -1])), 0, keys)
    np.testing.assert_allclose(fb.gain, [0.9, 0.0])
    np.testing.assert_allclose(fb.expert_gain, [1.0, 1.0])
    assert state.free.tolist() == [[True, False], [True, True]]
    with pytest.raises(ValueError, match="not a free neighbour"):
        env.step(state, Match(np.array([1, 0])), 1, keys)       # node 1: taken (and no edge)
    with pytest.raises(ValueError, match="not a free neighbour"):
        env.step(state, Match(np.array([5, 0])), 1, keys)
    with pytest.raises(TypeError, match="Match"):
        env.step(state, np.array([0, 0]), 1, keys)
    with pytest.raises(ValueError, match="int array"):
        env.step(state, Match(np.zeros(2)), 1, keys)


def test_batching_and_seeds():
    env = random_bipartite(8, 15, 0.5)
    a = _run(lomar(0.6, proposer="random"), env, n_reps=10, seed=4)
    b = _run(lomar(0.6, proposer="random"), env, n_reps=4, seed=4, rep_offset=6)
    for k in ALL:
        np.testing.assert_array_equal(a[k][6:], b[k])
    c = _run(lomar(0.6, proposer="random"), env, n_reps=10, seed=5)
    assert not np.array_equal(a["reward"], c["reward"])


def test_proposer_alone_draws_what_lomar_draws():
    # rho = 0: LOMAR follows every proposal, so it is the proposer run alone
    env = random_bipartite(8, 15, 0.5)
    for prop in ("random", "noisy_greedy"):
        a = _run(lomar(0.0, proposer=prop), env, n_reps=6, seed=2)
        b = _run(matching_proposer(prop), env, n_reps=6, seed=2, metrics=["reward"])
        np.testing.assert_array_equal(a["reward"], b["reward"])
        assert a["followed"].tolist() == [15] * 6


@pytest.mark.parametrize("kw, exc, match", [
    (dict(rho=1.5), ValueError, "rho"), (dict(rho=-0.1), ValueError, "rho"),
    (dict(budget=-1.0), ValueError, "budget"),
    (dict(proposer="oracle"), ValueError, "proposer"), (dict(proposer=3), TypeError, "proposer"),
    (dict(rho=float("nan")), ValueError, "rho"), (dict(noise=-1.0), ValueError, "noise"),
])
def test_bad_arguments(kw, exc, match):
    with pytest.raises(exc, match=match):
        lomar(**kw)


def test_bad_environments_and_proposers():
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
    with pytest.raises(ValueError, match="expert"):
        random_bipartite(3, 3, expert="optimal")
    with pytest.raises(ValueError, match="horizon"):
        sim.run(lomar(), fixed_bipartite(W), horizon=3, n_reps=2)
    with pytest.raises(ValueError, match="n_reps"):
        sim.run(lomar(), fixed_bipartite(W), horizon=2, n_reps=0)
    bad = lambda t, w, free, ctx: np.zeros(w.shape[0])  # noqa: E731  (floats, not node indices)
    with pytest.raises(ValueError, match="proposer must return an int array"):
        sim.run(lomar(proposer=bad), fixed_bipartite(W), horizon=2, n_reps=2)
    with pytest.raises(ValueError, match="Match.followed"):
        sim.run(matching_proposer(), fixed_bipartite(W), horizon=2, n_reps=2, metrics=["followed"])
