"""ALF-LB on the engine: hand-worked deterministic cases, backend agreement, online behaviour, registry, errors."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from expertlab import sim
from expertlab.balance import (AssignmentBatch, AssignmentProblem, alf_lb, generators, routing, routing_fixed,
                               token_moves, top_k_route)
from expertlab.balance._routing import RoutingFeedback
from expertlab.balance.generators import drifting, iid_plus_offset
from expertlab.sim._sweep import normalize_config, run_block


def _dual(scores, p, k, cap):
    """Independent stand-in of g(p) = sum_t topK-sum(s_t - p) + C . p (np.partition)."""
    a = scores - p
    e = a.shape[-1]
    return float(np.partition(a, e - k, axis=-1)[..., e - k:].sum() + cap @ p)


try:  # the library's own dual (written by another contributor), when present
    from expertlab.balance._problem import dual_objective as _lib_dual
except ImportError:  # pragma: no cover
    _lib_dual = None


def _bias_path():
    """A custom metric keeping the bias of every batch: final["bias_path"] of shape (n_reps, horizon, n_experts)."""

    def update(acc, info, t):
        return acc + [np.array(info["bias"], copy=True)]

    return sim.Metric("bias_path", lambda n_reps, xp: [], update, lambda acc: np.zeros(acc[0].shape[0]),
                      lambda acc: {"bias_path": np.stack(acc, axis=1)})


def _every(horizon):
    return np.arange(1, horizon + 1)


# --------------------------------------------------------------------------
# a hand-worked instance: N = 2 tokens, E = 2 experts, K = 1, C = 1.
# Both tokens prefer expert 0: s = [[1, 0], [0.89, 0]].  With d = b_0 - b_1,
# token 0 takes expert 0 iff d > -1 and token 1 iff d > -0.89, so the loads
# are balanced exactly for d in (-1, -0.89) (width 0.11, the gap between the
# two tokens' score margins) and g = 1 = the LP optimum there.  The sign step
# keeps b_0 + b_1 = 0 and moves d by -2u while expert 0 is overloaded, so
# g(-b) = (1 + b_0) + (0.89 + b_0) = 1.89 + d on the way.

_S = np.array([[1.0, 0.0], [0.89, 0.0]])


def test_small_step_improves_monotonically_to_the_lp_optimum():
    # u = 0.01: d_t = -0.02 t; d_44 = -0.88 (both on expert 0), d_45 = -0.90 (balanced)
    res = sim.run(alf_lb(step=0.01), routing_fixed(_S, k=1), horizon=80, n_reps=1, backend="numpy",
                  metrics=["dual", "maxvio", _bias_path()], checkpoints=_every(80))
    g = res.metrics["dual"][:, 0]
    t = np.arange(45)
    np.testing.assert_allclose(g[:45], 1.89 - 0.02 * t, atol=1e-12)
    np.testing.assert_allclose(g[45:], 1.0, atol=1e-12)
    assert np.all(np.diff(g) <= 1e-12)
    mv = res.metrics["maxvio"][:, 0]
    assert mv[44] == 1.0 and np.all(mv[45:] == 0.0)
    np.testing.assert_allclose(res.final["bias"][0], [-0.45, 0.45], atol=1e-12)  # sign(C - L) = 0 once balanced
    # every recorded dual agrees with an independent evaluation of g at that bias
    path = res.final["bias_path"][0]
    for it in range(80):
        assert g[it] == pytest.approx(_dual(_S, -path[it], 1, np.ones(2)), abs=1e-12)
        if _lib_dual is not None:
            assert g[it] == pytest.approx(_lib_dual(_S, -path[it], 1, np.ones(2)), abs=1e-12)


def test_large_step_cycles_and_the_lagrangian_is_not_monotone():
    # u = 0.3 > 0.11 / 2: d jumps over the balanced interval and cycles
    # d = 0, -0.6, -1.2, -0.6, ...  with g = 1.89, 1.29, 1.2, 1.29, 1.2, ...
    res = sim.run(alf_lb(step=0.3), routing_fixed(_S, k=1), horizon=9, n_reps=1, backend="numpy",
                  metrics=["dual", "maxvio"], checkpoints=_every(9))
    g = res.metrics["dual"][:, 0]
    np.testing.assert_allclose(g, [1.89, 1.29, 1.2, 1.29, 1.2, 1.29, 1.2, 1.29, 1.2], atol=1e-12)
    assert np.any(np.diff(g) > 0.05)
    assert g.min() > 1.0 + 0.1  # never reaches the LP optimum 1
    assert np.all(res.metrics["maxvio"] == 1.0)  # every iteration one expert takes both tokens


def test_moves_of_the_hand_instance():
    res = sim.run(alf_lb(step=0.01), routing_fixed(_S, k=1), horizon=60, n_reps=1, backend="numpy",
                  metrics=["moves", "misdirected_moves", _bias_path()], checkpoints=_every(60))
    # token 1 moves once, from iteration 44 to 45, from expert 0 to 1: counted after batch 45
    moves = res.metrics["moves"][:, 0]
    assert np.all(moves[:45] == 0) and np.all(moves[45:] == 1)
    assert np.all(res.metrics["misdirected_moves"] == 0)
    mv = token_moves(_S, res.final["bias_path"][0], k=1)
    assert len(mv) == 1
    assert (mv.rep[0], mv.iteration[0], mv.token[0], mv.source[0], mv.target[0]) == (0, 44, 1, 0, 1)
    assert (mv.source_load[0], mv.target_load[0]) == (2, 0)
    assert mv.source_overloaded[0] and mv.target_underloaded[0]


def test_misdirected_moves_count_the_pairs_against_the_sign_order():
    # one reversed step b <- b - u sign(C - L) from the worked instance of the preference-rule check
    scores = np.array([[1.0, 0.0], [0.875, 0.0], [0.0, 0.4375]])
    cap = np.full(2, 1.5)
    b0 = np.zeros(2)
    b1 = b0 - 0.5 * np.sign(cap - np.array([2, 1]))  # loads (2, 1) at b0
    mv = token_moves(scores, [b0, b1], k=1, capacity=cap)
    assert [(int(t), int(s), int(d)) for t, s, d in zip(mv.token, mv.source, mv.target)] == [(2, 1, 0)]
    env = routing_fixed(scores, k=1, capacity=cap)
    m = env.available_metrics()["misdirected_moves"]
    acc = m.init(1, np)
    keys = np.zeros(1, np.uint64)
    state = env.reset(1, keys, np)
    for t, b in enumerate((b0, b1)):
        state, _, info = env.step(state, b[None], t, keys)
        acc = m.update(acc, info, t)
    assert m.read(acc).tolist() == [1.0]  # underloaded expert 1 -> overloaded expert 0


def test_ties_go_to_the_lowest_index():
    s = np.zeros((3, 5))
    for be in ("numba", "numpy"):
        res = sim.run(alf_lb(step=0.1), routing_fixed(s, k=2), horizon=1, n_reps=1, backend=be)
        assert res.final["loads"][0].tolist() == [3, 3, 0, 0, 0]
    v = np.array([[3.0, 1.0, 3.0, 3.0, 0.0]])
    assert top_k_route(v, None, 2).astype(bool).tolist() == [[True, False, True, False, False]]


def test_token_moves_pair_left_and_joined_experts_in_index_order():
    s = np.array([[3.0, 2.0, 1.0, 0.0]])
    mv = token_moves(s, [[0.0, 0.0, 0.0, 0.0], [-5.0, -5.0, 0.0, 0.0]], k=2)
    assert list(zip(mv.source.tolist(), mv.target.tolist())) == [(0, 2), (1, 3)]
    assert len(token_moves(AssignmentBatch(np.stack([s, s]), 2), np.zeros((2, 3, 4)))) == 0


# --------------------------------------------------------------------------
# backends: the fused Numba kernel equals the engine's array path


def _compare(a, b, tol=1e-10):
    assert a.metrics.keys() <= b.metrics.keys()
    for k in a.metrics:
        np.testing.assert_allclose(b.metrics[k], a.metrics[k], rtol=0, atol=tol, err_msg=k)
    for k in a.final:
        np.testing.assert_allclose(b.final[k], a.final[k], rtol=0, atol=tol, err_msg=k)


@pytest.mark.parametrize("rule,step", [("sign", 0.05), ("magnitude", 0.3), ("decaying", 1.0)])
def test_numpy_path_equals_numba_kernel_deterministic(rule, step):
    rng = np.random.default_rng(0)
    # integer scores: many exact ties, so the tie-breaking rule is exercised
    s = rng.integers(0, 4, size=(3, 30, 6)).astype(float) + rng.integers(0, 2, size=(3, 1, 6)) * 0.5
    b0 = rng.normal(size=(3, 6)) * 0.1
    cap = np.array([[12.0, 8.0, 10.0, 10.0, 9.0, 11.0], [10.0] * 6, [20.0, 8.0, 8.0, 8.0, 8.0, 8.0]])
    env = routing_fixed(AssignmentBatch(s, 2, capacity=cap), comparator_bias=rng.normal(size=(3, 6)))
    learner = alf_lb(step=step, rule=rule, bias0=b0)
    a = sim.run(learner, env, horizon=40, n_reps=3, backend="numpy", checkpoints=_every(40))
    b = sim.run(learner, env, horizon=40, n_reps=3, backend="numba", checkpoints=_every(40))
    assert (a.backend, b.backend) == ("numpy", "numba")
    assert set(a.metrics) == {"maxvio", "global_maxvio", "dual", "regret", "bias_error"}
    _compare(a, b)
    assert np.array_equal(a.final["loads"], b.final["loads"])
    # the tie rule of the routing environment is that of top_k_route
    np.testing.assert_array_equal(
        top_k_route(s, b0[:, None, :], 2).sum(axis=1),
        sim.run(learner, env, horizon=1, n_reps=3, backend="numpy").final["loads"])


@pytest.mark.parametrize("rule,step", [("sign", 0.02), ("magnitude", 0.3), ("decaying", 1.0)])
@pytest.mark.parametrize("drift", [False, True])
def test_numpy_path_equals_numba_kernel_online(rule, step, drift):
    means = [0.4, 0.0, -0.2, 0.1, -0.3]
    g = drifting(means, [0.01, -0.02, 0.0, 0.005, 0.0], mode="sine", period=20.0) if drift else iid_plus_offset(means)
    env = routing(g, n_tokens=50, k=2)
    learner = alf_lb(step=step, rule=rule)
    a = sim.run(learner, env, horizon=30, n_reps=4, seed=11, backend="numpy")
    b = sim.run(learner, env, horizon=30, n_reps=4, seed=11, backend="numba")
    assert set(a.metrics) == {"maxvio", "global_maxvio", "dual", "regret", "bias_error"}
    _compare(a, b)
    # replication r is the same alone, at a rep_offset, on both paths
    for be in ("numpy", "numba"):
        one = sim.run(learner, env, horizon=30, n_reps=1, seed=11, rep_offset=2, backend=be)
        np.testing.assert_allclose(one.metrics["regret"][:, 0], a.metrics["regret"][:, 2], rtol=0, atol=1e-10)
        np.testing.assert_array_equal(one.final["loads"][0], a.final["loads"][2])


def test_auto_backend_is_the_engines():
    env = routing(iid_plus_offset([0.2, 0.0, -0.2]), n_tokens=16, k=1)
    # "auto" counts a routing step as n_tokens x n_experts; the fused kernel returns the final bias too
    assert sim.pick_backend(alf_lb(), env, "auto", horizon=10 ** 6, n_reps=10 ** 3) == "numba"
    big = routing(iid_plus_offset([0.2, 0.0, -0.2]), n_tokens=4096, k=1)
    assert env.spec.step_work == 48 and big.spec.step_work == 4096 * 3
    assert sim.pick_backend(alf_lb(), big, "auto", horizon=2000, n_reps=8) == "numba"  # 2e8 operations
    res = sim.run(alf_lb(), env, horizon=10, n_reps=2, metrics=["maxvio", _bias_path()])
    assert res.backend == "numpy"
    with pytest.raises(ValueError, match="no compiled path"):
        sim.run(alf_lb(), env, horizon=10, n_reps=2, backend="numba", metrics=["maxvio", _bias_path()])
    with pytest.raises(ValueError, match="no compiled path"):
        sim.run(alf_lb(), routing_fixed(np.zeros((4, 3)), k=1), horizon=3, n_reps=1, backend="numba",
                metrics=["moves"])


@pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", reason="the CUDA simulator is on")
def test_cuda_backend_without_a_gpu_is_a_clear_error():
    from numba import cuda

    if cuda.is_available():  # pragma: no cover - depends on the machine
        pytest.skip("a GPU is available")
    env = routing(iid_plus_offset([0.2, 0.0, -0.2]), n_tokens=16, k=1)
    with pytest.raises(RuntimeError, match="GPU"):
        sim.run(alf_lb(), env, horizon=5, n_reps=2, backend="cuda")


# --------------------------------------------------------------------------
# online setting on iid-plus-offset scores (closed-form optimum b* = -m)

_M = np.array([0.5, 0.2, 0.0, -0.3])
_GEN = iid_plus_offset(_M, 1.0)
_R, _T, _N = 16, 1000, 256
_ENV = routing(_GEN, n_tokens=_N, k=1)


@pytest.fixture(scope="module")
def decaying_run():
    return sim.run(alf_lb(step=2.0, rule="decaying"), _ENV, horizon=_T, n_reps=_R, seed=3,
                   checkpoints=[100, _T // 2, _T])


@pytest.fixture(scope="module")
def constant_run():
    return sim.run(alf_lb(step=0.05, rule="sign"), _ENV, horizon=_T, n_reps=_R, seed=3, checkpoints=[_T // 2, _T])


def test_centred_bias_converges_to_minus_m(decaying_run):
    target = -(_M - _M.mean())
    early = sim.run(alf_lb(step=2.0, rule="decaying"), _ENV, horizon=100, n_reps=_R, seed=3)
    half_widths, rms = [], []
    for b in (early.final["bias"], decaying_run.final["bias"]):  # the bias after 100 and 1000 batches
        err = b - b.mean(axis=1, keepdims=True) - target
        se = err.std(axis=0, ddof=1) / math.sqrt(_R)
        # 4-SE interval over replications covers the closed-form answer
        assert np.all(np.abs(err.mean(axis=0)) <= 4 * se), (err.mean(axis=0), se)
        half_widths.append(4 * se.max())
        rms.append(math.sqrt(np.mean(err**2)))
    assert half_widths[1] < 0.6 * half_widths[0]  # ~ 1/sqrt(t): ratio about 0.32
    assert rms[1] < 0.6 * rms[0]
    assert rms[1] < 0.01


def test_bias_error_is_the_max_norm_of_the_centred_error():
    res = sim.run(alf_lb(step=2.0, rule="decaying"), _ENV, horizon=30, n_reps=3, seed=1, backend="numpy",
                  metrics=["bias_error", _bias_path()], checkpoints=_every(30))
    b = res.final["bias_path"]  # (n_reps, horizon, n_experts): the bias of every batch
    err = np.abs(b - b.mean(axis=2, keepdims=True) + (_M - _M.mean())).max(axis=2)
    np.testing.assert_allclose(res.metrics["bias_error"], err.T, atol=1e-12)


def test_regret_log_like_with_decaying_steps_linear_with_constant(decaying_run, constant_run):
    rd = decaying_run.mean("regret")[1:]
    rc = constant_run.mean("regret")
    # constant step: the bias keeps oscillating at scale u, so each batch costs
    # about the same excess: regret over [500, 1000] ~ regret over [0, 500]
    inc_c = rc[1] - rc[0]
    assert inc_c > 0.6 * rc[0]
    # decaying a/t: the second half adds ~ b ln 2, a small part of the total
    inc_d = rd[1] - rd[0]
    assert inc_d < 0.2 * inc_c
    assert inc_d < 0.25 * rd[1]
    assert rc[1] > 3 * rd[1]
    # expected per-batch regret is >= 0 (b_t is fixed before the batch is drawn)
    assert rd[1] > 0 and rc[1] > 0


def test_maxvio_at_the_optimal_bias_sits_at_the_sampling_floor():
    """With b = -m each expert's load is Binomial(N, K/E), so
    (L_i - C)/C ~ sqrt((E/K - 1)/N) Z_i and E[MaxVio] = sqrt(1 - K/E) E[max_i Z_i] times
    the floor sqrt((E/K)/N); for E = 8 (weakly correlated Z) the factor lies in
    [0.5, 2] (about 0.87 * 1.3).  A tiny step keeps the bias at b* for all batches."""
    e, k, n = 8, 2, 512
    g = iid_plus_offset(np.linspace(-1.0, 1.0, e), 1.0)
    floor = math.sqrt((e / k) / n)
    env = routing(g, n_tokens=n, k=k)
    kw = {"horizon": 50, "n_reps": 16, "seed": 5, "checkpoints": _every(50)}
    opt = sim.run(alf_lb(step=1e-12, rule="magnitude", bias0=g.optimal_bias(0)), env, **kw)
    ratio = opt.metrics["maxvio"].mean() / floor
    assert 0.5 < ratio < 2.0, ratio
    # cumulative loads over T batches average the sampling noise out (~ 1/sqrt(T))
    assert opt.metrics["global_maxvio"][-1].mean() < opt.metrics["maxvio"].mean() / 3
    # the unbiased router is far above the floor
    zero = sim.run(alf_lb(step=1e-12, rule="magnitude"), env, **kw)
    assert zero.metrics["maxvio"].mean() > 5 * floor


def test_problem_object_and_capacity_are_used():
    env = routing_fixed(AssignmentProblem(_S, 1, capacity=[2.0, 1.0]))
    assert env.spec.capacity.tolist() == [2.0, 1.0] and env.spec.mean_load == 1.0
    res = sim.run(alf_lb(step=0.01), env, horizon=5, n_reps=1, backend="numpy")
    np.testing.assert_allclose(res.final["bias"][0], [0.0, 0.05])  # expert 0 at capacity: sign 0


# --------------------------------------------------------------------------
# the protocol, the registry and sweeps


def test_learner_record_and_purity():
    learner = alf_lb(step=0.1, rule="magnitude")
    assert learner.name == "alf_lb" and learner.feedback == "routing" and "alf_lb" in repr(learner)
    spec = _ENV.spec
    state = learner.init(spec, 3, np.arange(3, dtype=np.uint64), np)
    b, state = learner.act(state, None, None)
    before = [np.array(a, copy=True) for a in state]
    new = learner.update(state, b, RoutingFeedback(np.array([[256, 0, 0, 0]] * 3)), None)
    for a, c in zip(before, state):
        np.testing.assert_array_equal(a, c)  # the old state is untouched
    np.testing.assert_allclose(new.bias[0], 0.1 * (64 - np.array([256, 0, 0, 0])) / 64)
    assert new.t.tolist() == [1, 1, 1]


def test_registry_and_json_parameters():
    assert sim.get_learner("alf_lb").family == "balance"
    for name in ("routing", "routing_fixed"):
        reg = sim.get_environment(name)
        assert reg.family == "balance" and reg.feedback == "routing"
        learner, env, horizon = reg.example()
        res = sim.run(learner, env, horizon=horizon, n_reps=2, seed=0)
        assert res.metrics["maxvio"].shape[1] == 2
    env = sim.get_environment("routing").factory(generator="iid_plus_offset",
                                                 generator_params={"means": [0.5, 0.0, -0.5]}, n_tokens=32, k=1)
    assert env.params == {"generator": "iid_plus_offset", "generator_params": {"means": [0.5, 0.0, -0.5],
                          "sigma": 1.0}, "n_tokens": 32, "k": 1}
    again = routing(**env.params)
    keys = np.arange(3, dtype=np.uint64)
    np.testing.assert_array_equal(again.generator.scores(keys, 4, 32), env.generator.scores(keys, 4, 32))
    fixed = routing_fixed(AssignmentBatch(np.arange(24.0).reshape(2, 4, 3), 1, capacity=[[2, 1, 1], [1, 1, 2]]),
                          comparator_bias=[0.0, 1.0, 2.0])
    again = routing_fixed(**fixed.params)  # the parameters rebuild the environment
    np.testing.assert_array_equal(again.scores, fixed.scores)
    np.testing.assert_array_equal(again.capacity_rows, fixed.capacity_rows)
    np.testing.assert_array_equal(again.comparator_bias, fixed.comparator_bias)
    g = drifting([0.0, 1.0], [0.1, 0.0], 0.5, mode="sine", period=7.0)
    assert generators.GENERATORS[g.name](**g.settings).params.tolist() == g.params.tolist()
    cfg = normalize_config({"learner": "alf_lb", "learner_params": {"step": 0.05},
                            "instance": "routing", "instance_params": env.params, "horizon": 20})
    block = run_block(cfg, 1, block_size=2, n_reps=4, seed=7)
    whole = sim.run(alf_lb(step=0.05), env, horizon=20, n_reps=4, seed=7)
    assert block.rep_offset == 2
    np.testing.assert_allclose(block.metrics["regret"], whole.metrics["regret"][:, 2:], atol=1e-12)


# --------------------------------------------------------------------------
# bad input


def test_bad_input_errors():
    s = np.ones((4, 3))
    for bad in (np.nan, np.inf, -np.inf):
        x = s.copy()
        x[1, 2] = bad
        with pytest.raises(ValueError, match="scores"):
            routing_fixed(x, k=1)
    with pytest.raises(ValueError, match="k"):
        routing_fixed(s, k=4)
    with pytest.raises(ValueError, match="k"):
        routing_fixed(s, k=0)
    with pytest.raises(TypeError, match="k"):
        routing_fixed(s, k=1.5)
    with pytest.raises(TypeError, match="k"):
        routing_fixed(s)
    with pytest.raises(ValueError, match="k=2 differs"):
        routing_fixed(AssignmentProblem(s, 1), k=2)
    with pytest.raises(ValueError, match="capacity"):
        routing_fixed(AssignmentProblem(s, 1), capacity=4.0)
    with pytest.raises(ValueError, match="capacity"):
        routing_fixed(s, k=2, capacity=np.array([1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="comparator_bias"):
        routing_fixed(s, k=1, comparator_bias=np.zeros(2))
    with pytest.raises(TypeError, match="problem"):
        routing_fixed("scores", k=1)
    with pytest.raises(TypeError, match="scores"):
        routing_fixed(np.array([["a", "b"]]), k=1)
    for step in (0.0, -0.1):
        with pytest.raises(ValueError, match="step"):
            alf_lb(step=step)
    with pytest.raises(ValueError, match="rule"):
        alf_lb(rule="adam")
    with pytest.raises(ValueError, match="bias0"):
        alf_lb(bias0=[0.0, np.nan])
    with pytest.raises(ValueError, match="bias0"):
        sim.run(alf_lb(bias0=np.zeros(2)), routing_fixed(s, k=1), horizon=2, n_reps=1)
    for be in ("numpy", "numba"):
        with pytest.raises(ValueError, match="bias0"):
            sim.run(alf_lb(bias0=np.zeros((2, 3))), routing_fixed(s, k=1), horizon=2, n_reps=3, backend=be)
    with pytest.raises(ValueError, match="n_reps must be 2"):
        sim.run(alf_lb(), routing_fixed(np.ones((2, 4, 3)), k=1), horizon=2, n_reps=3)
    with pytest.raises(ValueError, match="n_reps must be 2"):
        sim.run(alf_lb(), routing_fixed(np.ones((2, 4, 3)), k=1), horizon=2, n_reps=3, backend="numba")
    with pytest.raises(ValueError, match="n_tokens"):
        routing(_GEN, n_tokens=0, k=1)
    with pytest.raises(ValueError, match="k"):
        routing(_GEN, n_tokens=4, k=5)
    with pytest.raises(TypeError, match="generator"):
        routing(np.zeros(3), n_tokens=4, k=1)
    with pytest.raises(ValueError, match="generator"):
        routing("gaussian", n_tokens=4, k=1)
    with pytest.raises(ValueError, match="generator_params"):
        routing(_GEN, n_tokens=4, k=1, generator_params={"sigma": 2.0})
    with pytest.raises(ValueError, match="feedback"):
        sim.run(alf_lb(), sim.get_environment("fair_coins").factory(n_experts=3), horizon=2, n_reps=1)
    with pytest.raises(ValueError, match="backend"):
        sim.run(alf_lb(), _ENV, horizon=2, n_reps=1, backend="opencl")
    with pytest.raises(ValueError, match="bias"):
        _ENV.step(None, np.zeros((2, 3)), 0, np.zeros(2, np.uint64))


# --------------------------------------------------------------------------
# the compiled online path routes each token as the top lists of every score by score_at


def _token_reference():
    from numba import njit

    from expertlab.balance._alf_lb import _topk_insert
    from expertlab.balance.generators import score_at

    @njit
    def ref(gparams, e, key, it, n, k, b, bstar, comp_mode, topv, topi, ctopv, ctopi):
        # every score by score_at, then the top lists of s + b and s + bstar by _topk_insert
        v = np.empty(e)
        s = np.empty(e)
        for i in range(e):
            s[i] = score_at(gparams, e, key, it, n, i)
            v[i] = s[i] + b[i]
        _topk_insert(v, e, k, topv, topi)
        if comp_mode > 0:
            for i in range(e):
                v[i] = s[i] + bstar[i]
            _topk_insert(v, e, k, ctopv, ctopi)

    return ref


def _generators():
    m8 = np.linspace(-1.0, 1.0, 8)
    yield iid_plus_offset(m8, 1.0)
    yield iid_plus_offset(np.linspace(-1.0, 1.0, 64), 1.0)
    yield iid_plus_offset(np.array([3.0, -2.0, 0.5]), 0.01)
    yield drifting(m8, np.linspace(0.02, -0.02, 8), mode="sine", period=7.0)
    yield drifting(m8, np.linspace(-0.01, 0.01, 8), 2.0, mode="linear")
    # sigma = 0: every score is its mean, so the lists are decided by ties (lowest index first)
    yield generators.ScoreGenerator("iid_plus_offset", 6, np.r_[0.0, 0.0, 1.0, [0.5, 0.5, 0.0, 0.5, 0.0, 0.5],
                                                                np.zeros(6)])


def _work_row(e, thresholds=(-np.inf, 0.0, -np.inf, 0.0)):
    """A token work row of the routing kernel, its two lists' thresholds and margins set as a replication starts."""
    w = np.zeros(3 * e + 4)
    w[3 * e:] = thresholds
    return w


@pytest.mark.parametrize("k", [1, 2, 6])
def test_generated_token_routing_gives_the_top_lists_of_every_score(k):
    from numba import njit

    from expertlab.balance._alf_lb import _route_token_gen
    from expertlab.random import rep_key, round_key

    ref = _token_reference()
    route = njit(_route_token_gen)  # a register_jitable function, compiled as the kernel compiles it
    rng = np.random.default_rng(5)
    n_cases = 0
    for gen in _generators():
        e = gen.n_experts
        if k > e:
            continue
        means = gen.params[3:3 + e]
        # biases: the optimum -m, none, a wide random spread, and ties built in
        for b in (-means, np.zeros(e), rng.normal(scale=3.0, size=e), np.round(rng.normal(size=e), 1)):
            bstar = -means
            for it in (0, 3, 41):
                mu = gen.mean(it)
                with np.errstate(over="ignore"):  # uint64 hashing wraps by design
                    key = round_key(rep_key(np.uint64(9), np.uint64(it % 2)), np.uint64(it))
                for comp in (0, 1):
                    want = [np.zeros(k), np.zeros(k, np.int64), np.zeros(k), np.zeros(k, np.int64)]
                    got = [np.zeros(k), np.zeros(k, np.int64), np.zeros(e), np.zeros(k, np.int64), _work_row(e)]
                    for n in range(40):
                        ref(gen.params, e, key, it, n, k, b, bstar, comp, *want)
                        mc = route(mu, gen.params[0], e, key, n, k, b, bstar, comp, *got)
                        assert mc == (k if comp else 0)
                        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
                        if comp:
                            assert np.array_equal(got[2][:k], want[2]) and np.array_equal(got[3], want[3])
                        n_cases += 1
    assert n_cases >= 5 * 4 * 3 * 2 * 40


def test_generated_token_routing_ties_and_fewer_experts_than_k():
    # sigma = 0 makes every score its mean; integer-valued means and biases then tie often (the lists keep
    # the lowest index first), and with e < k each list holds all e experts, as _topk_insert gives them
    from numba import njit

    from expertlab.balance._alf_lb import _route_token_gen, _topk_insert

    route = njit(_route_token_gen)
    ins = njit(_topk_insert)
    rng = np.random.default_rng(11)
    key = np.uint64(12345)
    n_cases = n_ties = 0
    for e, k in ((5, 3), (6, 6), (7, 2), (3, 5), (1, 4), (9, 9)):
        for _ in range(6):
            mu = rng.integers(-2, 3, size=e).astype(float)
            b, bstar = rng.integers(-1, 2, size=e).astype(float), rng.integers(-1, 2, size=e).astype(float)
            kk = min(k, e)
            for comp in (0, 1):
                got = [np.full(k, 7.5), np.full(k, -3, np.int64), np.full(max(e, k), 7.5), np.full(k, -3, np.int64),
                       _work_row(e)]
                mc = route(mu, 0.0, e, key, 0, k, b, bstar, comp, *got)
                assert mc == (kk if comp else 0)
                for bias, vals, idx in ((b, got[0], got[1]), (bstar, got[2], got[3])):
                    if bias is bstar and not comp:
                        continue
                    want_v, want_i = np.full(k, 7.5), np.full(k, -3, np.int64)
                    ins(mu + bias, e, k, want_v, want_i)
                    # the reference, written out: value descending, then index ascending
                    order = sorted(range(e), key=lambda i: (-(mu[i] + bias[i]), i))[:kk]
                    assert want_i[:kk].tolist() == order
                    assert idx[:kk].tolist() == order and np.array_equal(vals[:kk], want_v[:kk])
                    assert np.all(idx[kk:] == -3) and np.all(vals[kk:k] == 7.5)  # nothing past min(k, e)
                    n_ties += len(set((mu + bias).tolist())) < e
                    n_cases += 1
    assert n_cases == 6 * 6 * 3 and n_ties >= 50


@pytest.mark.parametrize("thresholds", ["random", "always-full", "all-pass"])
def test_generated_token_routing_is_exact_whatever_the_thresholds(thresholds):
    """The carried thresholds only decide how a list is found: random ones, ones that send every list to the full
    selection, and ones every score passes all give the lists of _topk_insert on every score."""
    from numba import njit

    from expertlab.balance._alf_lb import _route_token_gen, _topk_insert

    route = njit(_route_token_gen)
    ins = njit(_topk_insert)
    rng = np.random.default_rng(21)
    e, k = 64, 6
    mu = rng.normal(size=e)
    b, bstar = rng.normal(scale=0.5, size=e), -mu
    w = _work_row(e)
    fixed = {"always-full": (np.inf, 0.0, np.inf, 0.0), "all-pass": (-np.inf, 0.0, -np.inf, 0.0)}
    for n in range(60):
        w[3 * e:] = fixed.get(thresholds) or (rng.normal(scale=2.0), abs(rng.normal()),
                                              rng.normal(scale=2.0), abs(rng.normal()))
        got = [np.zeros(k), np.zeros(k, np.int64), np.zeros(e), np.zeros(k, np.int64)]
        assert route(mu, 1.0, e, np.uint64(777), n, k, b, bstar, 1, *got, w) == k
        scores = w[:e].copy()  # the token's scores
        for bias, vals, idx in ((b, got[0], got[1]), (bstar, got[2][:k], got[3])):
            want_v, want_i = np.zeros(k), np.zeros(k, np.int64)
            ins(scores + bias, e, k, want_v, want_i)
            assert np.array_equal(idx, want_i) and np.array_equal(vals, want_v)


def test_tracked_thresholds_keep_most_lists_on_a_few_candidates():
    """With the K-th values tracked from token to token (as the kernel does), almost every token's list is found
    among a few candidates: the count checks that the fast path is really taken and that it is cheap."""
    from numba import njit

    from expertlab.balance._alf_lb import _TRACK_WIDTH, _route_token_gen

    route = njit(_route_token_gen)
    rng = np.random.default_rng(22)
    e, k = 64, 6
    mu, b = rng.normal(size=e), rng.normal(scale=0.5, size=e)
    w = _work_row(e)
    passed = []
    for n in range(400):
        tau_b = w[3 * e + 2] - _TRACK_WIDTH * np.sqrt(w[3 * e + 3])
        got = [np.zeros(k), np.zeros(k, np.int64), np.zeros(e), np.zeros(k, np.int64)]
        route(mu, 1.0, e, np.uint64(99), n, k, b, -mu, 1, *got, w)
        passed.append(int(np.sum(w[:e] + b >= tau_b)))
    passed = np.array(passed[20:])  # after the first tokens
    assert np.mean(passed >= k) >= 0.9, np.mean(passed >= k)
    assert np.mean(passed) <= 20, np.mean(passed)
