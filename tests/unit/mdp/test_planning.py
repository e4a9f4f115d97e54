"""Planners: hand-worked MDPs, brute force, batch = one at a time, pymdptoolbox as a peer."""

import itertools

import numpy as np
import pytest

from expertlab.mdp import (FiniteHorizonMDP, TabularMDP, backward_induction, policy_evaluation, policy_iteration,
                           soft_value_iteration, value_iteration)
from expertlab.mdp.instances import forest, garnet


def two_state():
    """State 0: action 0 earns 1 and stays; action 1 earns 0 and moves to 1.
    State 1: both actions earn 2 and go to 0 or 1 with probability 1/2."""
    p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.5, 0.5], [0.5, 0.5]]])
    r = np.array([[1.0, 0.0], [2.0, 2.0]])
    return p, r


# by hand, gamma = 0.9: moving is optimal; V1 = 2 + 0.45 V0 + 0.45 V1 with V0 = 0.9 V1 gives V1 = 2 / 0.145
V_HAND = np.array([0.9 * 2 / 0.145, 2 / 0.145])


def test_two_state_by_hand():
    p, r = two_state()
    for res in (policy_iteration(p, r, 0.9), value_iteration(p, r, 0.9, epsilon=1e-11)):
        assert res.policy[0] == 1
        np.testing.assert_allclose(res.policy_values, V_HAND, rtol=0, atol=1e-10)
        np.testing.assert_allclose(res.values, V_HAND, rtol=0, atol=1e-10)
    # staying at 0 is worse: V0 = 10 < 12.41
    stay = policy_evaluation(p, r, 0.9, np.array([0, 0]))
    np.testing.assert_allclose(stay, [10.0, 6.5 / 0.55])


def brute_force(p, r, gamma):
    s, a = r.shape
    best = np.full(s, -np.inf)
    for pi in itertools.product(range(a), repeat=s):
        idx = np.arange(s)
        best = np.maximum(best, np.linalg.solve(np.eye(s) - gamma * p[idx, list(pi)], r[idx, list(pi)]))
    return best


@pytest.mark.parametrize("seed", range(4))
def test_against_brute_force_and_certificates(seed):
    m = garnet(5, 3, 2, gamma=0.95, seed=seed)
    v_star = brute_force(m.transitions, m.rewards, m.gamma)
    pi = policy_iteration(m)
    np.testing.assert_allclose(pi.values, v_star, atol=1e-10)
    assert bool(pi.converged) and float(pi.bellman_residual) < 1e-10
    eps = 1e-4
    vi = value_iteration(m, epsilon=eps)
    assert np.abs(vi.values - v_star).max() < eps / 2
    assert np.abs(vi.policy_values - v_star).max() < eps
    assert np.abs(vi.policy_values - v_star).max() <= float(vi.gap_bound) + 1e-12
    assert float(vi.bellman_residual) < eps * (1 - m.gamma) / 2


def test_batch_equals_one_at_a_time():
    m = garnet(8, 3, 3, n_mdps=5, gamma=0.9, seed=7)
    vb, pb = value_iteration(m, epsilon=1e-8), policy_iteration(m)
    for i in range(5):
        one = TabularMDP(m.transitions[i], m.rewards[i], m.gamma)
        v1, p1 = value_iteration(one, epsilon=1e-8), policy_iteration(one)
        assert int(v1.n_iter) == int(vb.n_iter[i]) and int(p1.n_iter) == int(pb.n_iter[i])
        np.testing.assert_allclose(v1.values, vb.values[i], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(v1.policy, vb.policy[i])
        np.testing.assert_allclose(p1.values, pb.values[i], rtol=0, atol=1e-12)



@pytest.mark.parametrize("per_block", [1, 4])
def test_value_iteration_cache_blocks_change_nothing(monkeypatch, per_block):
    """On the CPU the array engine iterates the batch in blocks of MDPs; blocks of 1 or 4 (of 6, batch shape
    (2, 3)) give the bits of one block, and the residual path is the largest residual over the MDPs still
    iterating."""
    planning = value_iteration.__globals__
    m = garnet(8, 3, 3, n_mdps=6, gamma=0.9, seed=3)
    m = TabularMDP(m.transitions.reshape(2, 3, 8, 3, 8), m.rewards.reshape(2, 3, 8, 3), m.gamma)
    whole = value_iteration(m, epsilon=1e-9, engine="array")
    monkeypatch.setitem(planning, "_CPU_BLOCK_BYTES", per_block * 8 * 3 * 8 * 8)
    blocks = []
    loop = planning["_vi_loop"]

    def counting_loop(p, *args):
        blocks.append(p.shape[0])
        return loop(p, *args)

    monkeypatch.setitem(planning, "_vi_loop", counting_loop)
    blocked = value_iteration(m, epsilon=1e-9, engine="array")
    assert blocks == ([1] * 6 if per_block == 1 else [4, 2])
    assert len(set(whole.n_iter.ravel().tolist())) > 1  # the blocks stop at different iterations
    for name in ("values", "q_values", "policy", "policy_values", "n_iter", "converged", "residual_path"):
        np.testing.assert_array_equal(getattr(blocked, name), getattr(whole, name), err_msg=name)
    singles = [value_iteration(TabularMDP(m.transitions[i, j], m.rewards[i, j], m.gamma), epsilon=1e-9,
                               engine="array") for i in range(2) for j in range(3)]
    expected = np.zeros(max(s.residual_path.size for s in singles))
    for s in singles:
        expected[:s.residual_path.size] = np.maximum(expected[:s.residual_path.size], s.residual_path)
    np.testing.assert_array_equal(blocked.residual_path, expected)


def test_span_rule_on_two_absorbing_states_by_hand():
    """One action; state 0 earns 1 and stays, state 1 earns 0 and stays: V* = (1 / (1 - gamma), 0).  From V_0 = 0,
    V_k - V_{k-1} = (gamma^(k-1), 0), so the span rule stops at the first k with gamma^(k-1) < eps (1 - gamma) / gamma,
    and MacQueen's midpoint misses V* by gamma^k / (2 (1 - gamma)) in both states: under eps / 2, and within a
    factor gamma of it.  A looser threshold, or returning V_k without the midpoint, misses eps / 2."""
    p = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])
    r = np.array([[1.0], [0.0]])
    for gamma, eps in ((0.9, 1e-3), (0.5, 0.3), (0.99, 1e-6), (0.7, 2e-2)):
        k = 1
        while not gamma ** (k - 1) < eps * (1 - gamma) / gamma:
            k += 1
        res = value_iteration(p, r, gamma, epsilon=eps, stop="span")
        assert int(res.n_iter) == k and bool(res.converged)
        err = np.abs(res.values - np.array([1 / (1 - gamma), 0.0]))
        np.testing.assert_allclose(err, gamma ** k / (2 * (1 - gamma)), rtol=1e-9, atol=1e-12)
        assert err.max() < eps / 2
        # the sup rule on the same MDP stops later: gamma^(k-1) < eps (1 - gamma) / (2 gamma)
        assert int(value_iteration(p, r, gamma, epsilon=eps).n_iter) >= k


@pytest.mark.parametrize("n_states,branching", [(12, 3), (48, 3)])  # a dense kernel, and one iterated by gathers
def test_span_rule_policy_is_epsilon_optimal(n_states, branching):
    """Against policy iteration's exact V*: the span rule's values lie within eps / 2 of V* and its greedy policy
    is eps-optimal, on random MDPs, while it stops no later than the sup-norm rule."""
    for gamma, eps, seed in ((0.9, 1.0, 0), (0.95, 0.3, 1), (0.6, 0.05, 2), (0.99, 1e-3, 3)):
        m = garnet(n_states, 4, branching, n_mdps=6, gamma=gamma, seed=seed)
        v_star = policy_iteration(m).values
        span, sup = value_iteration(m, epsilon=eps, stop="span"), value_iteration(m, epsilon=eps)
        assert bool(np.all(span.converged)) and bool(np.all(span.n_iter <= sup.n_iter))
        assert np.abs(span.values - v_star).max() < eps / 2
        gap = v_star - span.policy_values
        assert gap.min() > -1e-9 and gap.max() < eps


def test_gathers_equal_the_dense_backup(monkeypatch):
    """The array engine iterates a kernel with few nonzero entries per row (some rows with fewer: padded) by
    gathers, and the MDPs that run longest go on alone; the answers are those of the dense matrix products up to
    rounding."""
    planning = value_iteration.__globals__
    m = garnet(40, 3, 4, n_mdps=9, gamma=0.95, seed=5)
    p = m.transitions.copy()
    p[0, 3, 1] = 0.0
    p[0, 3, 1, 7] = 1.0  # one nonzero entry
    p[4, 5, 0] = 0.0
    p[4, 5, 0, [1, 2]] = 0.5  # two
    m = TabularMDP(p, m.rewards, m.gamma)
    assert planning["_gather_kernel"](p, m.rewards, m.gamma, np) is not None
    fast = {stop: value_iteration(m, epsilon=1e-6, stop=stop, engine="array") for stop in ("sup", "span")}
    fast_pi = policy_iteration(m)
    assert len(set(fast["span"].n_iter.tolist())) > 1  # some MDPs stop while others go on
    monkeypatch.setitem(planning, "_SPARSE_FACTOR", 1000)  # no kernel counts as sparse: dense products
    assert planning["_gather_kernel"](p, m.rewards, m.gamma, np) is None
    for stop, res in fast.items():
        dense = value_iteration(m, epsilon=1e-6, stop=stop, engine="array")
        np.testing.assert_array_equal(res.n_iter, dense.n_iter)
        np.testing.assert_array_equal(res.policy, dense.policy)
        np.testing.assert_allclose(res.values, dense.values, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.q_values, dense.q_values, rtol=0, atol=1e-12)
        np.testing.assert_allclose(res.residual_path, dense.residual_path, rtol=0, atol=1e-12)
    dense_pi = policy_iteration(m)
    np.testing.assert_array_equal(fast_pi.policy, dense_pi.policy)
    np.testing.assert_allclose(fast_pi.q_values, dense_pi.q_values, rtol=0, atol=1e-12)


# -- the compiled engine of value iteration (NumPy inputs) -----------------------------------------

_FIELDS = ("values", "q_values", "bellman_residual", "policy_values", "policy_residual", "residual_path")


def assert_same_run(ref, got, atol):
    """Same stops, flags and policies; every real field within ``atol`` of ``ref`` (a NaN or an absent field fails).

    ``policy_residual`` is held to ``max(atol, 1e-12)``: the compiled engine backs the exact policy values up by a
    dense product, the array engine by its gathers."""
    for name in ("n_iter", "converged", "policy"):
        np.testing.assert_array_equal(getattr(got, name), getattr(ref, name), err_msg=name)
    for name in _FIELDS:
        a, b = getattr(ref, name), getattr(got, name)
        if a is None:
            assert b is None, name
            continue
        assert b is not None and np.shape(b) == np.shape(a), name
        assert np.all(np.isfinite(a)) and np.all(np.isfinite(b)), name
        tol = max(atol, 1e-12) if name == "policy_residual" else atol
        np.testing.assert_allclose(b, a, rtol=0, atol=tol, err_msg=name)


def _compiled_cases():
    """Small Garnet batches: one whose rows hold 3 of 40 states (the array engine gathers them: the two engines
    sum in the same order), with a (2, 3) batch shape, where two MDPs have a row with fewer entries (the compiled
    engine reads rows of unequal lengths through their starts, the others at a fixed stride), and one with dense
    rows (the array engine multiplies matrices, the compiled one keeps the dense rows)."""
    sparse = garnet(40, 3, 3, n_mdps=6, gamma=0.95, seed=11)
    p = sparse.transitions.copy()
    p[0, 3, 1] = 0.0
    p[0, 3, 1, 7] = 1.0  # one nonzero entry
    p[4, 5, 0] = 0.0
    p[4, 5, 0, [1, 2]] = 0.5  # two
    sparse = TabularMDP(p.reshape(2, 3, 40, 3, 40), sparse.rewards.reshape(2, 3, 40, 3), 0.95)
    return {"sparse": (sparse, 0.0), "dense": (garnet(10, 3, 10, n_mdps=4, gamma=0.9, seed=12), 1e-12)}


@pytest.mark.parametrize("kind", ["sparse", "dense"])
@pytest.mark.parametrize("stop", ["sup", "span"])
def test_compiled_engine_runs_the_iterations_of_the_array_engine(kind, stop):
    """The compiled engine (the default for NumPy float64 inputs) stops every MDP at the iteration the array
    engine stops it, with the same policies; its values, Q-values, residuals and residual path equal the array
    engine's to the last bit where both sum a row over its nonzero entries, and within 1e-12 otherwise."""
    m, atol = _compiled_cases()[kind]
    ref = value_iteration(m, epsilon=1e-7, stop=stop, engine="array")
    assert len(set(ref.n_iter.ravel().tolist())) > 1  # the MDPs stop at different iterations
    for got in (value_iteration(m, epsilon=1e-7, stop=stop), value_iteration(m, epsilon=1e-7, stop=stop,
                                                                            engine="compiled")):
        assert_same_run(ref, got, atol)
    bare = value_iteration(m, epsilon=1e-7, stop=stop, evaluate_policy=False, engine="compiled")
    assert_same_run(value_iteration(m, epsilon=1e-7, stop=stop, evaluate_policy=False, engine="array"), bare, atol)


def test_compiled_engine_resumes_starts_and_stops_like_the_array_engine(monkeypatch):
    """The compiled engine keeps the residuals of at most a few iterations per call and calls again with the MDPs
    still iterating: with calls of 2, 4, 8, ... iterations the answers are the same bits, from zero values or
    from ``values0``, when max_iter cuts the run (mid-call, not converged, the last values' Q-values), and with
    gamma = 0 (one iteration)."""
    planning = value_iteration.__globals__
    m, _ = _compiled_cases()["sparse"]
    v0 = np.random.default_rng(0).normal(size=m.rewards.shape[:-1])
    runs = [dict(stop="span"), dict(stop="sup", values0=v0), dict(stop="span", max_iter=7),
            dict(stop="sup", max_iter=1)]
    whole = [value_iteration(m, epsilon=1e-7, engine="compiled", **kw) for kw in runs]
    monkeypatch.setitem(planning, "_COMPILED_PATH_ENTRIES", 1)
    monkeypatch.setitem(planning, "_COMPILED_MIN_STEPS", 2)
    for kw, one_call in zip(runs, whole):
        ref = value_iteration(m, epsilon=1e-7, engine="array", **kw)
        assert_same_run(ref, one_call, 0.0)
        assert_same_run(ref, value_iteration(m, epsilon=1e-7, engine="compiled", **kw), 0.0)
    cut = whole[2]
    assert not bool(np.any(cut.converged)) and bool(np.all(cut.n_iter == 7)) and cut.residual_path.size == 7
    p, r = two_state()
    for stop in ("sup", "span"):
        zero = value_iteration(p, r, 0.0, stop=stop, engine="compiled")
        assert int(zero.n_iter) == 1 and bool(zero.converged)
        np.testing.assert_array_equal(zero.values, [1.0, 2.0])


def test_the_comparison_rejects_a_wrong_run():
    """The engines' comparison fails on a run with the threshold off by a factor 2, one iteration short of the
    stop, or values shifted by 1e-11."""
    m, _ = _compiled_cases()["sparse"]
    ref = value_iteration(m, epsilon=1e-7, stop="span", engine="array")
    loose = value_iteration(m, epsilon=2e-7, stop="span", engine="compiled")
    short = value_iteration(m, epsilon=1e-7, stop="span", engine="compiled", max_iter=int(ref.n_iter.max()) - 1)
    good = value_iteration(m, epsilon=1e-7, stop="span", engine="compiled")
    shifted = type(good)(**{**vars(good), "values": good.values + 1e-11})
    assert_same_run(ref, good, 0.0)
    for wrong in (loose, short, shifted):
        with pytest.raises(AssertionError):
            assert_same_run(ref, wrong, 1e-12)


def test_engine_is_checked_and_compiled_needs_numpy_float64():
    p, r = two_state()
    with pytest.raises(ValueError, match="engine"):
        value_iteration(p, r, 0.9, engine="numba")
    with pytest.raises(ValueError, match="engine"):
        value_iteration(p.astype(np.float32), r.astype(np.float32), 0.9, engine="compiled")
    single = value_iteration(p.astype(np.float32), r.astype(np.float32), 0.9)  # auto: the array engine
    assert single.values.dtype == np.float32 and bool(single.converged)


def test_value_iteration_without_policy_evaluation():
    m = garnet(10, 3, 3, n_mdps=3, gamma=0.9, seed=2)
    full, bare = value_iteration(m, stop="span"), value_iteration(m, stop="span", evaluate_policy=False)
    assert bare.policy_values is None and bare.policy_residual is None
    for name in ("values", "q_values", "policy", "bellman_residual", "n_iter", "converged", "residual_path"):
        np.testing.assert_array_equal(getattr(bare, name), getattr(full, name), err_msg=name)
    np.testing.assert_array_equal(bare.gap_bound, 2 * full.bellman_residual / (1 - m.gamma))
    with pytest.raises(ValueError, match="stop"):
        value_iteration(m, stop="max")
    with pytest.raises(TypeError, match="evaluate_policy"):
        value_iteration(m, evaluate_policy=1)


@pytest.mark.parametrize("n_states,branching", [(10, 3), (48, 4)])
def test_policy_iteration_warm_start_ends_at_the_same_optimum(n_states, branching):
    """Warm-started from value iteration's greedy policy, policy iteration ends with the optimal policy and its
    exact value (those of the cold start from action 0), in fewer iterations."""
    m = garnet(n_states, 3, branching, n_mdps=5, gamma=0.95, seed=6)
    cold, warm = policy_iteration(m), policy_iteration(m, warm_start=1e-2)
    assert bool(np.all(warm.converged)) and bool(np.all(warm.n_iter < cold.n_iter))
    np.testing.assert_array_equal(warm.policy, cold.policy)
    np.testing.assert_allclose(warm.values, cold.values, rtol=0, atol=1e-10)
    np.testing.assert_allclose(warm.bellman_residual, 0.0, atol=1e-10)
    with pytest.raises(TypeError, match="policy0 or warm_start"):
        policy_iteration(m, policy0=np.zeros((5, n_states), dtype=int), warm_start=0.1)
    with pytest.raises(ValueError, match="warm_start"):
        policy_iteration(m, warm_start=0.0)


def test_policy_iteration_stopped_early_evaluates_its_last_policy():
    m = garnet(12, 4, 3, gamma=0.95, seed=1)
    full = policy_iteration(m)
    assert int(full.n_iter) > 2
    cut = policy_iteration(m, max_iter=1)
    assert not bool(cut.converged) and int(cut.n_iter) == 1
    assert not np.array_equal(cut.policy, np.zeros(12, dtype=int))  # one improvement step was taken
    np.testing.assert_array_equal(cut.values, policy_evaluation(m.transitions, m.rewards, m.gamma, cut.policy))
    assert float(cut.bellman_residual) > float(full.bellman_residual) + 1e-6

def test_gamma_zero_and_bad_arguments():
    p, r = two_state()
    res = value_iteration(p, r, 0.0)
    np.testing.assert_allclose(res.values, [1.0, 2.0])
    with pytest.raises(ValueError, match="gamma"):
        value_iteration(p, r, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        value_iteration(p, r, 0.5, epsilon=0.0)
    with pytest.raises(ValueError, match="sum to 1"):
        policy_iteration(p * 0.9, r, 0.5)
    with pytest.raises(TypeError, match="rewards and gamma"):
        value_iteration(p)


def test_not_converged_is_reported():
    p, r = two_state()
    res = value_iteration(p, r, 0.99, epsilon=1e-12, max_iter=3)
    assert not bool(res.converged) and int(res.n_iter) == 3


# -- finite horizon ---------------------------------------------------------------------------


def test_backward_induction_by_hand_and_brute_force():
    p, r = two_state()
    res = backward_induction(FiniteHorizonMDP.stationary(p, r, 2))
    # last stage: V_1 = (1, 2).  First stage: from 0, stay (1 + V_1(0) = 2) ties move (0 + V_1(1) = 2);
    # from 1, 2 + (V_1(0) + V_1(1)) / 2 = 3.5
    np.testing.assert_allclose(res.values[0], [2.0, 3.5])
    np.testing.assert_allclose(res.values[1], [1.0, 2.0])
    np.testing.assert_allclose(res.values[2], [0.0, 0.0])
    rng = np.random.default_rng(0)
    H, S, A = 3, 3, 2
    P = rng.dirichlet(np.ones(S), size=(H, S, A))
    R = rng.uniform(size=(H, S, A))
    bi = backward_induction(FiniteHorizonMDP(P, R))
    best = np.full(S, -np.inf)
    for flat in itertools.product(range(A), repeat=H * S):  # every deterministic Markov policy
        pi = np.array(flat).reshape(H, S)
        v = np.zeros(S)
        for h in range(H - 1, -1, -1):
            v = R[h, np.arange(S), pi[h]] + P[h, np.arange(S), pi[h]] @ v
        best = np.maximum(best, v)
    np.testing.assert_allclose(bi.values[0], best, atol=1e-12)
    with pytest.raises(TypeError, match="FiniteHorizonMDP"):
        backward_induction(P)


# -- soft value iteration ----------------------------------------------------------------------


def test_soft_vi_one_state_closed_form():
    # one state, two actions with rewards 0 and 1, uniform reference: V = tau log((1 + e^{1/tau})/2) / (1 - gamma)
    p, r = np.ones((1, 2, 1)), np.array([[0.0, 1.0]])
    for tau in (0.1, 1.0, 5.0):
        res = soft_value_iteration(p, r, 0.5, temperature=tau, epsilon=1e-12)
        expect = tau * np.log((1 + np.exp(1 / tau)) / 2) / 0.5
        assert float(res.values[0]) == pytest.approx(expect, abs=1e-11)
        np.testing.assert_allclose(res.policy[0], [1 / (1 + np.exp(1 / tau)), 1 / (1 + np.exp(-1 / tau))])
        assert float(res.policy_values[0]) == pytest.approx(expect, abs=1e-10)


def test_soft_vi_limits_and_reference():
    m = garnet(6, 3, 3, gamma=0.9, seed=2)
    hard = policy_iteration(m).values
    cold = soft_value_iteration(m, temperature=1e-4, epsilon=1e-10)
    # uniform reference: hard - ... <= soft <= hard, and soft >= hard - tau ln A / (1 - gamma)
    assert np.all(cold.values <= hard + 1e-9)
    assert np.all(cold.values >= hard - 1e-4 * np.log(3) / 0.1 - 1e-9)
    warm = soft_value_iteration(m, temperature=0.5, epsilon=1e-10)
    np.testing.assert_allclose(warm.policy_values, warm.values, atol=1e-8)
    ref = np.zeros((6, 3))
    ref[:, 0] = 1.0  # only action 0 allowed: soft VI = evaluation of "always 0"
    only0 = soft_value_iteration(m, temperature=0.5, reference=ref, epsilon=1e-11)
    np.testing.assert_allclose(only0.values, policy_evaluation(m.transitions, m.rewards, 0.9, np.zeros(6, int)),
                               atol=1e-9)
    assert np.all(only0.policy[:, 1:] == 0.0)
    with pytest.raises(ValueError, match="temperature"):
        soft_value_iteration(m, temperature=0.0)
    with pytest.raises(ValueError, match="reference must have shape"):
        soft_value_iteration(m, reference=np.ones((6, 2)) / 2)


# -- peer: pymdptoolbox ---------------------------------------------------------------------------


def _toolbox():
    return pytest.importorskip("mdptoolbox.mdp", reason="pymdptoolbox is not installed (test extra)")


@pytest.mark.parametrize("n_states", [3, 10])
def test_forest_against_pymdptoolbox(n_states):
    mm = _toolbox()
    import mdptoolbox.example as ex

    P, R = ex.forest(S=n_states)
    m = forest(n_states, gamma=0.9)
    np.testing.assert_array_equal(m.transitions, np.transpose(P, (1, 0, 2)))
    np.testing.assert_array_equal(m.rewards, R)
    pi = mm.PolicyIteration(P, R, 0.9)
    pi.run()
    ours = policy_iteration(m)
    np.testing.assert_allclose(ours.values, np.array(pi.V), rtol=0, atol=1e-8)
    np.testing.assert_array_equal(ours.policy, np.array(pi.policy))
    vi = mm.ValueIteration(P, R, 0.9, epsilon=1e-8)
    vi.run()
    np.testing.assert_array_equal(value_iteration(m, epsilon=1e-8).policy, np.array(vi.policy))


@pytest.mark.parametrize("seed", range(3))
def test_random_against_pymdptoolbox(seed):
    mm = _toolbox()
    rng = np.random.default_rng(seed)
    S, A = 12, 4
    p = rng.dirichlet(np.ones(S) * 0.3, size=(S, A))
    r = rng.uniform(size=(S, A))
    pi = mm.PolicyIteration(np.transpose(p, (1, 0, 2)), r, 0.95)
    pi.run()
    ours = policy_iteration(p, r, 0.95)
    np.testing.assert_allclose(ours.values, np.array(pi.V), rtol=0, atol=1e-8)
    np.testing.assert_array_equal(ours.policy, np.array(pi.policy))
    vi = mm.ValueIteration(np.transpose(p, (1, 0, 2)), r, 0.95, epsilon=1e-10)
    vi.run()
    np.testing.assert_array_equal(value_iteration(p, r, 0.95, epsilon=1e-10).policy, np.array(vi.policy))


def test_start_arguments_are_checked():
    p, r = two_state()
    with pytest.raises(ValueError, match="values0 must be an array of shape"):
        value_iteration(p, r, 0.5, values0=np.zeros(3))
    with pytest.raises(ValueError, match="values0 contains NaN"):
        value_iteration(p, r, 0.5, values0=np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="policy0 must hold actions"):
        policy_iteration(p, r, 0.5, policy0=np.array([0, 2]))
    warm = value_iteration(p, r, 0.9, epsilon=1e-11, values0=V_HAND)
    assert int(warm.n_iter) == 1  # started at the fixed point
