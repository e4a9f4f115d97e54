"""Safe UCRL-VTR: backward safe sets worked by hand, the trap instance as an environment of sim.run, validation."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expertlab import sim
from expertlab.random import round_key
from expertlab.mdp import (EpisodicLinearMixture, SafeLinearMixture, evaluate_markov_policy, safe_action_sets,
                           safe_cost_ladder, safe_trap_mixture, safe_ucrl_vtr)

START, GOAL, TRAP, UNSAFE = range(4)
A0, A1, LURE = range(3)


def test_trap_sets_by_hand():
    m = safe_trap_mixture(4)
    sets = safe_action_sets(m.features, m.mixture.theta[None], m.costs, m.threshold, 4)[0]  # (H, S, A)
    assert not sets[:, UNSAFE].any()  # every action costs 1 > tau
    assert sets[:, GOAL].all()
    # the trap reaches the unsafe state (kernel 1), so it keeps actions only at the last stage
    assert sets[3, TRAP].all() and not sets[:3, TRAP].any()
    # the lure is allowed only where the trap is reached at the last stage (h = 2) or at h = 3
    np.testing.assert_array_equal(sets[:, START, LURE], [False, False, True, True])
    assert sets[:, START, A0].all() and sets[:, START, A1].all()


def test_sets_depend_on_reachability():
    m = safe_trap_mixture(4)
    inst = safe_action_sets(m.features, m.mixture.theta[None], m.costs, m.threshold, 4, reachability=False)[0]
    assert inst[:, :3].all() and not inst[:, UNSAFE].any()
    # with all weight on kernel 2 the trap never reaches the unsafe state: the lure is always allowed
    only2 = safe_action_sets(m.features, np.array([[0.0, 1.0]]), m.costs, m.threshold, 4)[0]
    assert only2[:, START, LURE].all() and only2[:, TRAP].all()


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=2), st.lists(st.floats(0.0, 1.0), min_size=2, max_size=2))
def test_sets_shrink_with_the_support(w, extra):
    """A larger support of the weights can only remove actions (pessimism is conservative)."""
    m = safe_trap_mixture(5)
    w, big = np.array([w]), np.array([w]) + np.array([extra])
    small_sets = safe_action_sets(m.features, w, m.costs, m.threshold, 5)
    big_sets = safe_action_sets(m.features, big, m.costs, m.threshold, 5)
    assert not np.any(big_sets & ~small_sets)


def test_optimal_safe_value_by_hand():
    # H = 4, p = 1/2, r(0, a0) = 0.3.  V_3: start 1 (lure), goal 1.  V_2: goal 2, start max(1.3, 1, 1 + 1) = 2.
    # V_1 (lure forbidden): goal 3, start max(0.3 + 2, 0.5 * 2 + 0.5 * 2) = 2.3.
    # V_0: start max(0.3 + 2.3, 0.5 * 3 + 0.5 * 2.3) = 2.65.
    m = safe_trap_mixture(4, p_goal=0.5, stay_reward=0.3)
    assert m.optimal_safe_value == pytest.approx(2.65)
    res = sim.run(safe_ucrl_vtr(), m, 3, 2, seed=0, checkpoints=[3])
    assert res.unit == "episode" and set(res.metrics) == {"regret", "violations"}
    assert res.metrics["regret"].shape == (1, 2) and res.metrics["violations"].shape == (1, 2)


def test_spec_tells_the_known_parts_only():
    m = safe_trap_mixture(4)
    spec = m.spec
    assert (spec.feedback, spec.unit, spec.n_actions, spec.episode_length) == ("safe_episode", "episode", 3, 4)
    np.testing.assert_array_equal(spec.costs, m.costs)
    np.testing.assert_array_equal(spec.features, m.features)
    assert "theta" not in spec.info


def test_metrics_against_a_plain_loop():
    """regret and violations of sim.run equal the exact values recomputed from the learner's own policies."""
    m = safe_trap_mixture(4)
    learner = safe_ucrl_vtr(reachability=False)
    res = sim.run(learner, m, 150, 3, seed=2, checkpoints=[150])
    rk, lk = sim.replication_keys(np.uint64(2), 0, 3)
    state = learner.init(dataclasses.replace(m.spec, horizon=150), 3, lk, np)
    regret, visits = np.zeros(3), np.zeros(3)
    fh = m.mixture.to_finite_horizon()
    for t in range(150):
        with np.errstate(over="ignore"):  # uint64 hashing wraps by design
            ek, kt = round_key(rk, np.uint64(t)), round_key(lk, np.uint64(t))
        policy, state = learner.act(state, None, kt)
        regret += m.optimal_safe_value - evaluate_markov_policy(fh, policy)[:, 0, 0]
        _, traj, _ = m.step(None, policy, t, ek)
        visits += (m.costs[traj.states[:, :-1], traj.actions] > m.threshold).sum(axis=1)
        state = learner.update(state, policy, traj, kt)
    np.testing.assert_allclose(res.metrics["regret"][-1], regret, atol=1e-12)
    np.testing.assert_array_equal(res.metrics["violations"][-1], visits)
    assert visits.max() > 0  # the ablation leaves the safe sets


def test_safe_learner_never_visits_and_ablation_does():
    m = safe_trap_mixture(4)
    safe = sim.run(safe_ucrl_vtr(), m, 150, 8, seed=1, checkpoints=[10, 150])
    assert safe.metrics["violations"].max() == 0
    assert np.all(safe.metrics["regret"] >= -1e-9)  # its sets lie inside the true safe sets
    assert np.all(np.diff(safe.metrics["regret"], axis=0) >= -1e-9)
    abl = sim.run(safe_ucrl_vtr(reachability=False), m, 150, 8, seed=1)
    assert abl.metrics["violations"][-1].min() > 0
    assert abl.learner == "safe_ucrl_vtr" and abl.learner_params["reachability"] is False


def test_batch_independence_and_reproducibility():
    m = safe_trap_mixture(4)
    lr = safe_ucrl_vtr(reachability=False)
    batch = sim.run(lr, m, 120, 4, seed=7, checkpoints=[60, 120])
    again = sim.run(lr, m, 120, 4, seed=7, checkpoints=[60, 120])
    alone = sim.run(lr, m, 120, 1, seed=7, checkpoints=[60, 120], rep_offset=2)
    for name in ("regret", "violations"):
        np.testing.assert_array_equal(batch.metrics[name], again.metrics[name])
        np.testing.assert_allclose(alone.metrics[name][:, 0], batch.metrics[name][:, 2], atol=1e-10)
    other = sim.run(lr, m, 120, 4, seed=8, checkpoints=[60, 120])
    assert not np.array_equal(other.metrics["violations"], batch.metrics["violations"])


def test_learner_state_is_not_mutated():
    m = safe_trap_mixture(4)
    learner = safe_ucrl_vtr()
    rk, lk = sim.replication_keys(np.uint64(0), 0, 2)
    state = learner.init(dataclasses.replace(m.spec, horizon=5), 2, lk, np)
    policy, state = learner.act(state, None, lk)
    before = [np.array(a, copy=True) for a in state]
    _, traj, _ = m.step(None, policy, 0, rk)
    new = learner.update(state, policy, traj, lk)
    for a, b in zip(before, state):
        np.testing.assert_array_equal(a, b)
    assert type(new) is type(state) and new.n_episodes == 1


def test_validation():
    m = safe_trap_mixture(4)
    with pytest.raises(TypeError, match="reachability"):
        safe_ucrl_vtr(reachability=1)
    with pytest.raises(ValueError, match="delta"):
        safe_ucrl_vtr(delta=1.0)
    with pytest.raises(ValueError, match="beta_scale"):
        safe_ucrl_vtr(beta_scale=0.0)
    with pytest.raises(ValueError, match="safety_gap"):
        safe_trap_mixture(4, safety_gap=0.0)
    with pytest.raises(ValueError, match="safety_gap"):
        safe_trap_mixture(4, threshold=0.3, safety_gap=0.5)
    with pytest.raises(ValueError, match="horizon"):
        safe_trap_mixture(2)
    with pytest.raises(ValueError, match="costs"):
        SafeLinearMixture(m.mixture, m.costs * 2.0, m.threshold, 0, 0.2)
    with pytest.raises(ValueError, match="costs"):
        SafeLinearMixture(m.mixture, m.costs[:, :2], m.threshold, 0, 0.2)
    bad = m.costs.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="costs"):
        SafeLinearMixture(m.mixture, bad, m.threshold, 0, 0.2)
    with pytest.raises(ValueError, match="threshold"):
        SafeLinearMixture(m.mixture, m.costs, np.inf, 0, 0.2)
    with pytest.raises(ValueError, match="safe_action"):
        SafeLinearMixture(m.mixture, m.costs, m.threshold, 3, 0.2)
    with pytest.raises(TypeError, match="mixture"):
        SafeLinearMixture(m.features, m.costs, m.threshold, 0, 0.2)
    with pytest.raises(ValueError, match="start state"):
        SafeLinearMixture(EpisodicLinearMixture(m.features, m.mixture.theta, m.mixture.rewards), m.costs,
                          m.threshold, 0, 0.2, initial_state=UNSAFE)
    with pytest.raises(ValueError, match="initial_state"):
        SafeLinearMixture(m.mixture, m.costs, m.threshold, 0, 0.2, initial_state=4)
    lr = safe_ucrl_vtr()
    with pytest.raises(ValueError, match="feedback"):  # the learned-cost environment does not tell the costs
        sim.run(lr, safe_cost_ladder(4), 5, 2)
    with pytest.raises(ValueError, match="checkpoints"):
        sim.run(lr, m, 5, 2, checkpoints=[6])
    with pytest.raises(ValueError, match="policy"):
        m.step(None, np.zeros((2, 4, 4)), 0, np.zeros(2, dtype=np.uint64))  # a float policy
