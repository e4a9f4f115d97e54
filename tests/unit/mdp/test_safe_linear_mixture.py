"""Safe UCRL-VTR: backward safe sets worked by hand, the trap instance, the driver, validation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expertlab.mdp import (EpisodicLinearMixture, SafeLinearMixture, run_safe_episodes, safe_action_sets,
                           safe_trap_mixture, safe_ucrl_vtr)

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
    learner = safe_ucrl_vtr(m.features, m.costs, m.threshold)
    res = run_safe_episodes(learner, m, 3, 2, seed=0)
    assert res.optimal_safe_value == pytest.approx(2.65)
    assert res.regret.shape == (1, 2) and res.unsafe_visits.shape == (1, 2)


def test_safe_learner_never_visits_and_ablation_does():
    m = safe_trap_mixture(4)
    safe = run_safe_episodes(safe_ucrl_vtr(m.features, m.costs, m.threshold), m, 150, 8, seed=1,
                             checkpoints=[10, 150])
    assert safe.unsafe_visits.max() == 0
    assert np.all(safe.regret >= -1e-9)  # its sets lie inside the true safe sets
    assert np.all(np.diff(safe.regret, axis=0) >= -1e-9)
    abl = run_safe_episodes(safe_ucrl_vtr(m.features, m.costs, m.threshold, reachability=False), m, 150, 8, seed=1)
    assert abl.unsafe_visits.min() > 0
    assert abl.learner == "safe-ucrl-vtr-instantaneous"


def test_batch_independence_and_reproducibility():
    m = safe_trap_mixture(4)
    lr = safe_ucrl_vtr(m.features, m.costs, m.threshold, reachability=False)
    batch = run_safe_episodes(lr, m, 120, 4, seed=7, checkpoints=[60, 120])
    again = run_safe_episodes(lr, m, 120, 4, seed=7, checkpoints=[60, 120])
    alone = run_safe_episodes(lr, m, 120, 1, seed=7, checkpoints=[60, 120], rep_offset=2)
    np.testing.assert_array_equal(batch.regret, again.regret)
    np.testing.assert_array_equal(batch.unsafe_visits, again.unsafe_visits)
    np.testing.assert_allclose(alone.regret[:, 0], batch.regret[:, 2], atol=1e-10)
    np.testing.assert_array_equal(alone.unsafe_visits[:, 0], batch.unsafe_visits[:, 2])
    other = run_safe_episodes(lr, m, 120, 4, seed=8, checkpoints=[60, 120])
    assert not np.array_equal(other.unsafe_visits, batch.unsafe_visits)


def test_validation():
    m = safe_trap_mixture(4)
    with pytest.raises(ValueError, match="costs"):
        safe_ucrl_vtr(m.features, m.costs[:, :2], m.threshold)
    bad = m.costs.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="costs"):
        safe_ucrl_vtr(m.features, bad, m.threshold)
    with pytest.raises(ValueError, match="threshold"):
        safe_ucrl_vtr(m.features, m.costs, np.inf)
    with pytest.raises(ValueError, match="safe_action"):
        safe_ucrl_vtr(m.features, m.costs, m.threshold, safe_action=3)
    with pytest.raises(TypeError, match="reachability"):
        safe_ucrl_vtr(m.features, m.costs, m.threshold, reachability=1)
    with pytest.raises(ValueError, match="delta"):
        safe_ucrl_vtr(m.features, m.costs, m.threshold, delta=1.0)
    with pytest.raises(ValueError, match="safety_gap"):
        safe_trap_mixture(4, safety_gap=0.0)
    with pytest.raises(ValueError, match="safety_gap"):
        safe_trap_mixture(4, threshold=0.3, safety_gap=0.5)
    with pytest.raises(ValueError, match="horizon"):
        safe_trap_mixture(2)
    with pytest.raises(ValueError, match="costs"):
        SafeLinearMixture(m.mixture, m.costs * 2.0, m.threshold, 0, 0.2)
    with pytest.raises(TypeError, match="mixture"):
        SafeLinearMixture(m.features, m.costs, m.threshold, 0, 0.2)
    lr = safe_ucrl_vtr(m.features, m.costs, m.threshold)
    with pytest.raises(TypeError, match="instance"):
        run_safe_episodes(lr, m.mixture.to_finite_horizon(), 5, 2)
    with pytest.raises(ValueError, match="checkpoints"):
        run_safe_episodes(lr, m, 5, 2, checkpoints=[3, 2])
    with pytest.raises(ValueError, match="checkpoints"):
        run_safe_episodes(lr, m, 5, 2, checkpoints=[6])
    start_unsafe = SafeLinearMixture(EpisodicLinearMixture(m.features, m.mixture.theta, m.mixture.rewards),
                                     m.costs, m.threshold, 0, 0.2)
    with pytest.raises(ValueError, match="start state"):
        run_safe_episodes(lr, start_unsafe, 5, 2, initial_state=UNSAFE)
