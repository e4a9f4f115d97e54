"""Capacity-aware token drop and reroute.

Expected values come from hand-worked cases, from slow loop references
written here from the documented rules, and from brute force over every
routing with at most k distinct experts per token (the capacity-constrained
optimum), besides the exact LP.
"""

import itertools

import numpy as np
import pytest

from expertlab.balance._capacity import (
    CapacityRouteResult,
    capacity_from_gamma,
    capacity_route,
)
from expertlab.balance._problem import top_k_route


def brute_force_optimum(s, k, capacity):
    """Best sum of scores over routings with <= k distinct experts per token and loads <= capacity."""
    n, e = s.shape
    subsets = [c for r in range(k + 1) for c in itertools.combinations(range(e), r)]
    best = -np.inf
    for choice in itertools.product(subsets, repeat=n):
        load = np.zeros(e)
        for sub in choice:
            load[list(sub)] += 1
        if np.all(load <= capacity):
            best = max(best, sum(s[t, i] for t, sub in enumerate(choice) for i in sub))
    return best


def reference(s, k, capacity, policy, bias=None):
    """Loop implementation of the documented drop / reroute rules."""
    n, e = s.shape
    v = s if bias is None else s + bias
    pref = [sorted(range(e), key=lambda i: (-v[t, i], i)) for t in range(n)]
    x = np.zeros((n, e), dtype=int)
    for i in range(e):
        asked = [t for t in range(n) if i in pref[t][:k]]
        for t in sorted(asked, key=lambda t: (-s[t, i], t))[:capacity]:
            x[t, i] = 1
    if policy == "reroute":
        pending = {t: k - x[t].sum() for t in range(n)}
        for j in range(k, e):
            asks = {}
            for t in range(n):
                if pending[t] > 0:
                    asks.setdefault(pref[t][j], []).append(t)
            for i, ts in asks.items():
                room = capacity - x[:, i].sum()
                for t in sorted(ts, key=lambda t: (-s[t, i], t))[: max(room, 0)]:
                    x[t, i] = 1
                    pending[t] -= 1
    return x


def softmax_scores(rng, shape):
    z = rng.normal(size=shape) * 1.5
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True)


HAND = np.array([[0.5, 0.3, 0.2],
                 [0.6, 0.3, 0.1],
                 [0.4, 0.1, 0.5],
                 [0.7, 0.2, 0.1]])


def test_drop_hand_worked():
    # C = floor(4 * 2 / 3) = 2; expert 0 gets t0..t3 and keeps t3 (.7), t1 (.6);
    # expert 1 gets t0, t1, t3 and keeps t0, t1 (.3, .3); expert 2 keeps t2.
    res = capacity_route(HAND, k=2, gamma=1.0, policy="drop")
    assert isinstance(res, CapacityRouteResult)
    assert res.capacity == 2
    np.testing.assert_array_equal(res.assignment, [[0, 1, 0], [1, 1, 0], [0, 0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(res.routed, [[1, 1, 0], [1, 1, 0], [1, 0, 1], [1, 1, 0]])
    np.testing.assert_array_equal(res.loads, [2, 2, 1])
    assert res.n_dropped == 3 and res.drop_rate == pytest.approx(3 / 8)
    assert res.max_load == 2 and res.max_load_ratio == pytest.approx(2 / (5 / 3))
    assert res.score_kept == pytest.approx(2.4)
    opt = brute_force_optimum(HAND, 2, 2)
    assert res.optimum == pytest.approx(opt, abs=1e-9)
    assert res.score_loss == pytest.approx(opt - 2.4, abs=1e-9)
    assert res.relative_score_loss == pytest.approx((opt - 2.4) / opt, abs=1e-9)


def test_reroute_hand_worked():
    # pending slots: t0 (from e0), t2 (from e0), t3 (from e1); only e2 has room (1 slot).
    # round j = 3: t0 and t3 ask e2, t2 asks e1 (full); e2 takes t0 (score .2 > .1).
    res = capacity_route(HAND, k=2, gamma=1.0, policy="reroute")
    np.testing.assert_array_equal(res.assignment, [[0, 1, 1], [1, 1, 0], [0, 0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(res.loads, [2, 2, 2])
    assert res.n_dropped == 2 and res.score_kept == pytest.approx(2.6)
    assert res.optimum == pytest.approx(brute_force_optimum(HAND, 2, 2), abs=1e-9)


def test_reroute_with_no_room_anywhere_drops():
    s = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.6, 0.4]])
    res = capacity_route(s, k=1, gamma=0.5, policy="reroute")  # C = floor(0.5 * 4 / 2) = 1
    assert res.capacity == 1
    # e0 keeps t0 (.9); t1, t2, t3 ask e1, which has one slot and takes t3 (.4)
    np.testing.assert_array_equal(res.assignment, [[1, 0], [0, 0], [0, 0], [0, 1]])
    assert res.n_dropped == 2 and res.optimum == pytest.approx(0.9 + 0.4)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("policy", ["drop", "reroute"])
def test_matches_loop_reference_with_bias(seed, policy):
    rng = np.random.default_rng(seed)
    n, e, k = 12, 5, 2
    s = np.round(rng.uniform(size=(n, e)), 1)  # rounding creates ties
    bias = np.round(rng.normal(size=e) * 0.2, 1)
    gamma = [0.6, 0.9, 1.0, 1.3][seed % 4]
    res = capacity_route(s, k, gamma, policy=policy, bias=bias, exact_method=None)
    cap = capacity_from_gamma(gamma, n, e, k)
    np.testing.assert_array_equal(res.assignment, reference(s, k, cap, policy, bias))
    np.testing.assert_array_equal(res.routed, top_k_route(s, bias, k))
    assert np.isnan(res.optimum) and np.isnan(res.score_loss) and np.isnan(res.relative_score_loss)


@pytest.mark.parametrize("seed", range(8))
def test_invariants_and_score_ordering(seed):
    rng = np.random.default_rng(100 + seed)
    n, e, k = 5, 3, 2
    s = softmax_scores(rng, (n, e))
    gamma = rng.uniform(0.5, 1.5)
    drop = capacity_route(s, k, gamma, policy="drop")
    rer = capacity_route(s, k, gamma, policy="reroute")
    cap = drop.capacity
    for res in (drop, rer):
        x = res.assignment
        assert set(np.unique(x)) <= {0, 1}  # an expert holds a token at most once
        assert np.all(x.sum(axis=1) <= k) and np.all(x.sum(axis=0) <= cap)
        assert res.n_dropped == n * k - x.sum()
        assert res.score_kept == pytest.approx(float((s * x).sum()), abs=1e-12)
    assert np.all(drop.assignment <= drop.routed)
    assert np.all(drop.assignment <= rer.assignment)  # reroute only adds to the drop routing
    opt = brute_force_optimum(s, k, cap)
    assert drop.optimum == pytest.approx(opt, abs=1e-9)
    assert drop.score_kept <= rer.score_kept + 1e-12 <= opt + 1e-9
    assert rer.n_dropped <= drop.n_dropped


@pytest.mark.parametrize("policy", ["drop", "reroute"])
def test_large_gamma_is_plain_top_k(policy):
    rng = np.random.default_rng(7)
    n, e, k = 40, 6, 2
    s = softmax_scores(rng, (n, e))
    plain = top_k_route(s, k=k)
    gamma = plain.sum(axis=0).max() / (n * k / e)  # capacity = the largest plain load
    res = capacity_route(s, k, gamma, policy=policy)
    np.testing.assert_array_equal(res.assignment, plain)
    assert res.n_dropped == 0 and res.drop_rate == 0.0
    top_sum = float(np.sort(s, axis=1)[:, -k:].sum())  # unconstrained optimum
    assert res.optimum == pytest.approx(top_sum, rel=1e-9)
    assert abs(res.score_loss) <= 1e-9


def test_reroute_lowers_latency_and_drops_on_skewed_scores():
    rng = np.random.default_rng(3)
    n, e, k = 200, 8, 2
    s = softmax_scores(rng, (n, e)) + np.linspace(0.3, 0.0, e)  # experts 0, 1 popular
    plain = top_k_route(s, k=k).sum(axis=0).max()
    drop = capacity_route(s, k, 1.0, policy="drop")
    rer = capacity_route(s, k, 1.0, policy="reroute")
    assert drop.max_load == drop.capacity == n * k // e < plain
    assert rer.max_load <= rer.capacity
    # the room left (gamma = 1: exactly N k slots) is mostly but not always reachable greedily
    assert 0 <= rer.n_dropped < drop.n_dropped
    assert rer.drop_rate < 0.05 < drop.drop_rate
    assert drop.score_kept < rer.score_kept <= rer.optimum + 1e-9


def test_batched_equals_one_by_one():
    rng = np.random.default_rng(11)
    s = softmax_scores(rng, (2, 3, 10, 4))
    res = capacity_route(s, 2, 0.8, policy="reroute")
    assert res.assignment.shape == s.shape and res.loads.shape == (2, 3, 4)
    assert res.drop_rate.shape == (2, 3)
    for idx in np.ndindex(2, 3):
        one = capacity_route(s[idx], 2, 0.8, policy="reroute")
        np.testing.assert_array_equal(res.assignment[idx], one.assignment)
        assert res.optimum[idx] == pytest.approx(one.optimum, rel=1e-12)
        assert res.max_load[idx] == one.max_load
    with pytest.raises(ValueError):
        res.assignment[0, 0, 0, 0] = 1


def test_capacity_rounding():
    assert capacity_from_gamma(1.0, 6, 4, 2) == 3
    assert capacity_from_gamma(0.1 * 3, 10, 3, 1) == 1  # 0.30000000000000004 * 10 / 3
    assert capacity_from_gamma(1.1, 10, 4, 1) == 2  # floor(2.75)
    assert capacity_from_gamma(0.7 * 10, 1, 7, 1) == 1  # 7.000000000000001 / 7


@pytest.mark.parametrize(
    "kwargs, exc, word",
    [
        ({"scores": [[np.nan, 1.0]]}, ValueError, "scores"),
        ({"scores": [[np.inf, 1.0]]}, ValueError, "scores"),
        ({"scores": [1.0, 2.0]}, ValueError, "scores"),
        ({"k": 3}, ValueError, "k"),
        ({"k": 0}, ValueError, "k"),
        ({"k": 1.5}, TypeError, "k"),
        ({"gamma": 0.0}, ValueError, "gamma"),
        ({"gamma": -1.0}, ValueError, "gamma"),
        ({"gamma": np.nan}, ValueError, "gamma"),
        ({"gamma": "1"}, TypeError, "gamma"),
        ({"gamma": 0.1}, ValueError, "gamma"),  # capacity floor(0.1 * 2 * 1 / 2) = 0
        ({"policy": "spill"}, ValueError, "policy"),
        ({"bias": [0.0, 0.0, 0.0]}, ValueError, "bias"),
        ({"bias": [np.nan, 0.0]}, ValueError, "bias"),
        ({"exact_method": "simplex"}, ValueError, "exact_method"),
    ],
)
def test_bad_input(kwargs, exc, word):
    args = {"scores": [[1.0, 0.0], [0.0, 1.0]], "k": 1, "gamma": 1.0}
    args.update(kwargs)
    with pytest.raises(exc, match=word):
        capacity_route(args.pop("scores"), args.pop("k"), args.pop("gamma"), **args)
