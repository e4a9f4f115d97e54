"""PASCombUCB and unsafe CUCB on the engine: a plain-Python reference run, hand-worked cases and bad input."""

import itertools
import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.random import rep_key, round_key, seed_to_uint64, uniform
from expertlab.bandits import instances
from expertlab.bandits._pascombucb import (SafeCombInstance, SuperArm, absolutely_safe_size, cucb, greedy_split,
                                           hou_tan_zhong_instance, lil_radius, pascombucb, safe_comb_instance)

METRICS = ["regret", "violations", "possibly_safe"]


def run(learner, env, horizon, n_reps=1, seed=0, backend="numpy", **kw):
    return sim.run(learner, env, horizon=horizon, n_reps=n_reps, seed=seed, backend=backend, metrics=METRICS, **kw)

# --------------------------------------------------------------------------
# reference implementation, one replication at a time, from the description of the algorithm


def _radius(n, rho):
    return (1 + math.sqrt(0.5)) * math.sqrt(0.75 / n * math.log(max(math.log(1.5 * n) / rho, math.e)))


def reference_run(inst, horizon, seed, rep, *, safe=True, n_warmup=2, checkpoints=()):
    """Return (regret at checkpoints, violations, pulls, warm-up length, last possibly-safe-set size)."""
    L, K, budget, vb = inst.n_items, inst.k, inst.budget, inst.variance_bound
    mu, var = [float(v) for v in inst.means], [float(v) for v in inst.variances]
    top = [(m * m + v) / m for m, v in zip(mu, var)]
    prob = [m * m / (m * m + v) for m, v in zip(mu, var)]
    arms = [c for s in range(1, K + 1) for c in itertools.combinations(range(L), s)]
    best = max(sum(mu[i] for i in a) for a in arms if sum(var[i] for i in a) <= budget)
    rk = rep_key(seed_to_uint64(seed), np.uint64(rep))
    n, s1, s2 = [0] * L, [0.0] * L, [0.0] * L
    state = {"t": 0, "reg": 0.0, "viol": 0}
    recorded = {}

    def pull(items):
        key = round_key(rk, np.uint64(state["t"]))
        m = v = 0.0
        for i in items:
            x = top[i] if uniform(key, np.uint64(i)) < prob[i] else 0.0
            n[i] += 1
            s1[i] += x
            s2[i] += x * x
            m += mu[i]
            v += var[i]
        state["reg"] += best - m
        state["viol"] += int(v > budget)
        state["t"] += 1
        if state["t"] in checkpoints:
            recorded[state["t"]] = state["reg"]

    warm = 0
    if safe:
        m_abs = 0
        while m_abs < K and (m_abs + 1) * vb <= budget:
            m_abs += 1
        groups = [list(range(g, min(g + m_abs, L))) for g in range(0, L, m_abs)]
        for _ in range(n_warmup):
            for g in groups:
                if state["t"] < horizon:
                    pull(g)
        warm = state["t"]
    n_possible = len(arms)
    while state["t"] < horizon:
        umu, lv, uv = [0.0] * L, [0.0] * L, [0.0] * L
        for i in range(L):
            if n[i] == 0:
                umu[i], lv[i], uv[i] = 1e9, 0.0, vb  # unsampled: ranks above any sampled item
                continue
            mh = s1[i] / n[i]
            vh = max(s2[i] / n[i] - mh * mh, 0.0)
            umu[i] = mh + _radius(n[i], 1.0 / horizon**2)
            lv[i] = max(vh - 3 * _radius(n[i], 1.0 / horizon**2), 0.0)
            uv[i] = min(vh + 3 * _radius(n[i], inst.delta / horizon**2), vb)
        candidates = []
        for a in arms:
            lsum = 0.0
            for i in a:
                lsum += lv[i]
            if not safe or lsum < budget or len(a) == 1:  # single items are absolutely safe
                candidates.append(a)
        n_possible = len(candidates)
        chosen, best_u = None, -math.inf
        for a in candidates:
            u = 0.0
            for i in a:
                u += umu[i]
            if u > best_u:
                chosen, best_u = a, u
        if safe:
            pieces, cur, load = [], [], 0.0
            for i in chosen:
                if cur and len(cur) < K and load + uv[i] < budget:
                    cur.append(i)
                    load += uv[i]
                else:
                    if cur:
                        pieces.append(cur)
                    cur, load = [i], uv[i]
            pieces.append(cur)
        else:
            pieces = [list(chosen)]
        for piece in pieces:
            if state["t"] >= horizon:
                break
            pull(piece)
            if not safe and warm == 0 and min(n) > 0:
                warm = state["t"]
    return ([recorded[c] for c in checkpoints], state["viol"], n, warm, n_possible)


CASES = [(hou_tan_zhong_instance(0.6), 500), (hou_tan_zhong_instance(0.751), 400),
         (hou_tan_zhong_instance(0.6, binding=True), 500),
         (safe_comb_instance([0.6, 0.5, 0.45, 0.3, 0.2], [0.2, 0.24, 0.1, 0.05, 0.0], 0.4, 2, delta=0.2), 700)]


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("safe", [True, False], ids=["pascombucb", "cucb"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_both_paths_equal_python_reference(case, safe, backend):
    inst, horizon = CASES[case]
    ck = [1, 7, 50, horizon // 2, horizon]
    res = run(pascombucb() if safe else cucb(), inst, horizon, n_reps=3, seed=11, backend=backend, checkpoints=ck)
    assert res.backend == backend
    with np.errstate(over="ignore"):  # uint64 hashing wraps by design
        for r in range(3):
            reg, viol, pulls, warm, n_possible = reference_run(inst, horizon, 11, r, safe=safe, checkpoints=ck)
            assert res.final["pulls"][r].tolist() == pulls
            assert res.metrics["violations"][-1, r] == viol
            assert res.metrics["possibly_safe"][-1, r] == n_possible
            np.testing.assert_allclose(res.metrics["regret"][:, r], reg, rtol=1e-12, atol=1e-9)


def test_replication_alone_equals_replication_in_batch_and_seed_reproduces():
    inst = hou_tan_zhong_instance(0.6)
    a = run(pascombucb(), inst, 3000, n_reps=4, seed=5, backend="numba")
    b = run(pascombucb(), inst, 3000, n_reps=1, seed=5, backend="numba", rep_offset=2)
    c = run(pascombucb(), inst, 300, n_reps=4, seed=5, backend="numpy")
    np.testing.assert_array_equal(a.metrics["regret"][:, 2:3], b.metrics["regret"])
    np.testing.assert_array_equal(a.final["pulls"][2:3], b.final["pulls"])
    assert a.seed == 5
    assert not np.array_equal(a.final["pulls"], run(pascombucb(), inst, 3000, n_reps=4, seed=6,
                                                     backend="numba").final["pulls"])
    # the first 300 pulls of the horizon-3000 run differ (the confidence levels depend on T), but a run to the
    # same horizon is the same on both paths
    d = run(pascombucb(), inst, 300, n_reps=4, seed=5, backend="numba")
    np.testing.assert_allclose(c.metrics["regret"], d.metrics["regret"], rtol=0, atol=1e-10)


def test_learner_update_is_pure_and_act_returns_a_super_arm():
    inst = hou_tan_zhong_instance(0.6, binding=True)
    L = pascombucb()
    spec = inst.spec.__class__(**{**inst.spec.__dict__, "horizon": 50})
    state = L.init(spec, 2, np.zeros(2, dtype=np.uint64), np)
    for t in range(12):
        if t == 10:  # two warm-up sweeps over the 5 groups of 2 items: every item sampled twice
            assert (state.cnt == 2).all()
        arm, state = L.act(state, None, None)
        assert isinstance(arm, SuperArm) and arm.items.shape == (2, 3)
        x = np.where(arm.items >= 0, 0.5, 0.0)
        before = [np.array(a, copy=True) for a in state[:-1]]
        new = L.update(state, arm, x, None)
        for a, b in zip(before, state[:-1]):
            np.testing.assert_array_equal(a, b)
        state = new
    assert (state.t == 12).all() and (state.cnt.sum(axis=1) > 20).all()


# --------------------------------------------------------------------------
# hand-worked cases


def test_sampling_law_has_the_stated_mean_and_variance():
    inst = hou_tan_zhong_instance(0.6)
    top = (inst.means**2 + inst.variances) / inst.means
    p = inst.means**2 / (inst.means**2 + inst.variances)
    np.testing.assert_allclose(top * p, inst.means, rtol=1e-14)
    np.testing.assert_allclose(top**2 * p * (1 - p), inst.variances, rtol=1e-12)
    assert np.all(top <= 1.0)  # samples in [0, 1]: 1/2-sub-Gaussian


def test_absolutely_safe_size_follows_the_safety_condition():
    # m sigma^2 <= budget < (m + 1) sigma^2 (or m = K)
    assert absolutely_safe_size(0.6, 0.25, 3) == 2  # 3 * 0.25 = 0.75 > 0.6: rounding 2.4 up would be unsafe
    assert math.ceil(0.6 / 0.25) * 0.25 > 0.6
    assert absolutely_safe_size(0.751, 0.25, 3) == 3
    assert absolutely_safe_size(0.751, 0.25, 5) == 3  # 4 * 0.25 = 1 > 0.751
    assert absolutely_safe_size(0.75, 0.25, 3) == 3  # equality is safe (sum <= budget)
    assert absolutely_safe_size(0.3, 0.1, 4) == 2  # 3 * 0.1 = 0.30000000000000004 > 0.3 in floating point
    assert absolutely_safe_size(0.25, 0.25, 3) == 1


def test_warm_up_on_a_tiny_instance_pulls_absolutely_safe_groups():
    means = [0.5, 0.4, 0.3, 0.2, 0.1]
    inst = safe_comb_instance(means, [0.2, 0.2, 0.1, 0.1, 0.05], 0.6, 3)
    # groups of 2 (2 * 0.25 <= 0.6 < 3 * 0.25): {0,1}, {2,3}, {4}; one sweep = 3 pulls
    res = run(pascombucb(n_warmup=1), inst, 3, n_reps=2, checkpoints=[1, 2, 3])
    assert res.final["pulls"].tolist() == [[1, 1, 1, 1, 1]] * 2
    best = 0.5 + 0.4 + 0.3  # {0,1,2}: variance 0.5 <= 0.6
    assert inst.best_safe_arm == (0, 1, 2)
    np.testing.assert_allclose(res.metrics["regret"][:, 0], [best - 0.9, 2 * best - 1.4, 3 * best - 1.5])
    # at budget 0.751 the groups have 3 items: {0,1,2}, {3,4}; two sweeps = 4 pulls
    res = run(pascombucb(n_warmup=2), safe_comb_instance(means, [0.2, 0.2, 0.1, 0.1, 0.05], 0.751, 3), 4,
              checkpoints=[4])
    assert res.final["pulls"].tolist() == [[2, 2, 2, 2, 2]]
    assert int(res.metrics["violations"][-1, 0]) == 0


def test_greedy_split_hand_example():
    ucb = [0.25, 0.25, 0.05, 0.2]
    assert greedy_split([0, 1, 2, 3], ucb, 0.6, 3) == ((0, 1, 2), (3,))  # 0.55 < 0.6, then size cap 3
    assert greedy_split([0, 1, 2, 3], ucb, 0.6, 2) == ((0, 1), (2, 3))
    assert greedy_split([0, 1], [0.3, 0.3], 0.6, 3) == ((0,), (1,))  # 0.6 is not < 0.6
    assert greedy_split([2, 0], ucb, 0.2, 3) == ((2,), (0,))  # a lone item is always a piece
    assert greedy_split([3], ucb, 0.6, 1) == ((3,),)


def test_lil_radius_value_by_hand():
    # (1 + 1/sqrt 2) sqrt(0.75/100 * ln(ln(150)/0.05)); ln 150 = 5.0106, ln(100.21) = 4.6073
    expected = (1 + 2**-0.5) * math.sqrt(0.0075 * math.log(math.log(150.0) / 0.05))
    assert float(lil_radius(100, 0.05)) == pytest.approx(expected, rel=1e-14)
    assert abs(expected - 0.31733) < 1e-5
    with pytest.raises(ValueError, match="n must be"):
        lil_radius(0, 0.05)


def test_possibly_safe_set_shrinks_once_a_pair_is_certified_unsafe():
    # L = 4, K = 2: 10 super arms; {0, 1} has variance 0.48 > 0.3, every other arm is safe
    inst = safe_comb_instance([0.5, 0.5, 0.3, 0.3], [0.24, 0.24, 0.01, 0.01], 0.3, 2)
    early = run(pascombucb(), inst, 200, n_reps=2)
    assert early.metrics["possibly_safe"][-1].tolist() == [10, 10]  # variance lower bounds are still 0
    late = run(pascombucb(), inst, 200_000, n_reps=2, backend="numba")
    # with n ~ 1e5 samples, 3 cr(n, 1/T^2) ~ 0.073 per item: sum of lower bounds ~ 0.33 >= 0.3
    assert late.metrics["possibly_safe"][-1].tolist() == [9, 9]
    assert late.metrics["violations"][-1].tolist() == [0, 0]  # {0, 1} was always split into singletons
    assert inst.best_safe_arm == (0, 2)


def test_cucb_violates_where_pascombucb_does_not():
    inst = hou_tan_zhong_instance(0.6, binding=True)
    c = run(cucb(), inst, 5000, n_reps=3, seed=1, backend="numba")
    p = run(pascombucb(), inst, 5000, n_reps=3, seed=1, backend="numba")
    assert np.all(c.metrics["violations"][-1] > 0) and np.all(p.metrics["violations"][-1] == 0)
    # 10 items, 3 per pull, all unsampled at first: CUCB has sampled every item after 4 pulls, not after 3
    assert (run(cucb(), inst, 3, n_reps=3, seed=1).final["pulls"] == 0).any(axis=1).all()
    assert (run(cucb(), inst, 4, n_reps=3, seed=1).final["pulls"] > 0).all()


def test_published_instance_is_safe_everywhere_with_k_3():
    inst = hou_tan_zhong_instance(0.6)
    assert sorted(inst.variances)[-3:] == pytest.approx([0.04, 0.24, 0.24])
    assert sum(sorted(inst.variances)[-3:]) <= 0.6  # so CUCB cannot violate on it
    assert run(cucb(), inst, 2000, n_reps=2, backend="numba").metrics["violations"][-1].tolist() == [0, 0]


def test_environment_records_and_registry():
    inst = hou_tan_zhong_instance(0.6)
    assert inst.spec.feedback == "semi-bandit" and inst.spec.n_actions == 175 and inst.spec.k == 3
    res = sim.run(pascombucb(), inst, horizon=30, n_reps=2, seed=0, backend="numpy")
    assert set(res.metrics) == {"regret", "violations"} and res.metrics["regret"].shape == (res.checkpoints.size, 2)
    assert "pascombucb" in repr(pascombucb()) and "safe_comb" in repr(inst)
    for name in ("pascombucb", "cucb"):
        reg = sim.get_learner(name)
        assert reg.feedback == "semi-bandit"
        learner, env, horizon = reg.example()
        assert sim.run(learner, env, horizon, n_reps=2, seed=0).metrics["regret"].shape[1] == 2
    assert sim.get_environment("hou_tan_zhong").factory(budget=0.751).k == 3


# --------------------------------------------------------------------------
# bad input

GOOD = dict(means=[0.5, 0.4, 0.3], variances=[0.2, 0.1, 0.0], budget=0.6, k=2)


@pytest.mark.parametrize("change,match", [
    (dict(delta=0.0), "delta"), (dict(delta=1.0), "delta"), (dict(delta=-0.1), "delta"),
    (dict(delta=float("nan")), "delta"),
    (dict(budget=0.2), "budget"), (dict(budget=float("nan")), "budget"), (dict(budget=-1.0), "budget"),
    (dict(k=0), "k"), (dict(k=4), "k must be <="),
    (dict(means=[0.5, 1.2, 0.3]), "means"), (dict(means=[0.0, 0.4, 0.3]), "means"),
    (dict(means=[0.5, float("nan"), 0.3]), "means"), (dict(means=[[0.5, 0.4, 0.3]]), "means"),
    (dict(means=[]), "means"),
    (dict(variances=[0.3, 0.1, 0.0]), "variances"), (dict(variances=[-0.1, 0.1, 0.0]), "variances"),
    (dict(variances=[0.2, float("inf"), 0.0]), "variances"), (dict(variances=[0.2, 0.1]), "variances"),
    (dict(variances=[0.2, 0.1, 0.22]), "variances"),  # 0.22 > 0.3 * 0.7: no law on [0, 1] has it
    (dict(variance_bound=0.3), "variance_bound"), (dict(variance_bound=0.0), "variance_bound"),
])
def test_bad_instance_arguments_raise_value_error(change, match):
    with pytest.raises(ValueError, match=match):
        safe_comb_instance(**(GOOD | change))


def test_bad_types_and_run_arguments():
    with pytest.raises(TypeError, match="k"):
        safe_comb_instance(**(GOOD | dict(k=2.0)))
    with pytest.raises(TypeError, match="means"):
        safe_comb_instance(**(GOOD | dict(means="abc")))
    inst = safe_comb_instance(**GOOD)
    assert isinstance(inst, SafeCombInstance)
    with pytest.raises(ValueError, match="feedback"):  # a semi-bandit learner on bandit arms
        sim.run(pascombucb(), instances.bernoulli([0.3, 0.6]), horizon=10)
    with pytest.raises(ValueError, match="horizon"):
        sim.run(pascombucb(), inst, horizon=0)
    with pytest.raises(ValueError, match="n_reps"):
        sim.run(cucb(), inst, horizon=10, n_reps=0)
    with pytest.raises(ValueError, match="n_warmup"):
        pascombucb(n_warmup=0)
    with pytest.raises(TypeError, match="n_warmup"):
        pascombucb(n_warmup=1.5)
    with pytest.raises(ValueError, match="checkpoints"):
        sim.run(pascombucb(), inst, horizon=10, checkpoints=[5, 11])
    with pytest.raises(ValueError):
        inst.means[0] = 0.9  # instances are immutable
    state = pascombucb().init(inst.spec.__class__(**{**inst.spec.__dict__, "horizon": 5}), 1, None, np)
    with pytest.raises(TypeError, match="SuperArm"):
        inst.step(inst.reset(1, None, np), np.zeros((1, 2), dtype=np.int64), 0, np.zeros(1, dtype=np.uint64))
    with pytest.raises(ValueError, match="shape"):
        pascombucb().update(state, SuperArm(np.zeros((1, 2), dtype=np.int64)), np.zeros((1, 3)))


# -- the greedy oracle (no enumeration) ------------------------------------------------------------


def test_greedy_oracle_agrees_with_exact_for_cucb():
    # CUCB's optimistic arm is the top-K indices, which the greedy oracle takes directly; the enumerated
    # oracle compares sums in floating point (with the 1e9 index of unsampled items, near-ties can break
    # either way), so the two agree in law, not pull for pull
    inst = hou_tan_zhong_instance(0.6, binding=True)
    a = run(cucb(oracle="exact"), inst, 2000, n_reps=40, seed=1, backend="numba")
    b = run(cucb(oracle="greedy"), inst, 2000, n_reps=40, seed=1, backend="numba")
    ra, rb = a.metrics["regret"][-1], b.metrics["regret"][-1]
    se = np.sqrt(ra.var(ddof=1) / ra.size + rb.var(ddof=1) / rb.size)
    assert abs(ra.mean() - rb.mean()) <= 4 * se + 1e-9
    assert np.array_equal(a.final["pulls"].sum(axis=1), b.final["pulls"].sum(axis=1))
    # the 0/1 program finds the enumerated comparator
    from expertlab.bandits._comb_oracles import _best_safe_milp

    assert _best_safe_milp(inst.means, inst.variances, inst.budget, inst.k)[1] == inst.best_safe_arm


def test_greedy_oracle_stays_safe_and_learns():
    inst = hou_tan_zhong_instance(0.6, binding=True)
    res = run(pascombucb(oracle="greedy"), inst, 20_000, n_reps=20, seed=2, backend="numba",
              checkpoints=[10_000, 20_000])
    assert np.all(res.metrics["violations"][-1] == 0)
    assert np.all(res.metrics["possibly_safe"] == -1)
    # sublinear: the second half of the horizon costs less than the first
    half, full = res.metrics["regret"]
    assert np.mean(full - half) < np.mean(half)


def test_auto_oracle_switches_to_greedy_beyond_the_enumeration_limit():
    L = 60   # C(60, <= 4) = 523,685 super arms > 200,000
    rng = np.random.default_rng(0)
    mu = rng.uniform(0.2, 0.6, L)
    inst = safe_comb_instance(mu, rng.uniform(0.01, 0.16, L), budget=0.5, k=4)   # var <= mu (1 - mu)
    res = run(pascombucb(), inst, 3000, n_reps=2, backend="numba")
    assert np.all(res.metrics["possibly_safe"][-1] == -1) and np.all(res.metrics["violations"][-1] == 0)
    assert sum(inst.variances[list(inst.best_safe_arm)]) <= 0.5 and len(inst.best_safe_arm) <= 4
    small = run(pascombucb(), inst, 200, n_reps=2, backend="numpy")  # the array path's greedy oracle
    np.testing.assert_allclose(small.metrics["regret"], run(pascombucb(), inst, 200, n_reps=2, backend="numba")
                               .metrics["regret"], rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="enumeration limit"):
        sim.run(pascombucb(oracle="exact"), inst, horizon=10)
    with pytest.raises(ValueError, match="oracle"):
        pascombucb(oracle="dp")
