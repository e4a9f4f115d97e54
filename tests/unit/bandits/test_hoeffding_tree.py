"""Hoeffding regression trees: hand-worked statistics and splits, routing, batching and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from expertlab.bandits import hoeffding_tree_config, hoeffding_tree_init, hoeffding_tree_leaves, hoeffding_tree_update
from expertlab.bandits._hoeffding_tree import split_merits


def _feed(cfg, st, xs, ys, tree=None):
    R = st.feature.shape[0]
    for i, (x, y) in enumerate(zip(xs, ys)):
        tr = np.zeros(R, np.int64) if tree is None else tree[i]
        st = hoeffding_tree_update(cfg, st, tr, np.broadcast_to(x, (R, cfg.n_features)), np.broadcast_to(y, (R,)))
    return st


def test_histograms_and_merits_worked_by_hand():
    # one feature, 4 bins of width 1/4; targets 0, 0 | 0 | 1 | 1, 1
    cfg = hoeffding_tree_config(1, n_bins=4, max_depth=1, grace_period=1000)
    st = hoeffding_tree_init(cfg, 1, 1)
    xs = [[0.1], [0.2], [0.3], [0.6], [0.8], [0.9]]
    ys = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    st = _feed(cfg, st, xs, ys)
    assert st.hist_n[0, 0, 0, 0].tolist() == [2, 1, 1, 2]
    assert st.hist_s[0, 0, 0, 0].tolist() == [0, 0, 1, 2]
    # SSE of the whole set: 6 * 1/4 = 1.5.  Threshold 1/4: left {0,0}, right {0,1,1,1} (SSE 3/4);
    # threshold 1/2: both sides pure; threshold 3/4: left {0,0,0,1} (SSE 3/4), right pure.
    m = split_merits(st.hist_n[0, 0, 0], st.hist_s[0, 0, 0], st.hist_ss[0, 0, 0])
    np.testing.assert_allclose(m[0], [(1.5 - 0.75) / 6, 1.5 / 6, (1.5 - 0.75) / 6])
    assert st.count[0, 0, 0] == 6 and st.mean[0, 0, 0] == 0.5 and st.m2[0, 0, 0] == pytest.approx(1.5)


def test_empty_side_is_not_a_candidate():
    m = split_merits(np.array([[0.0, 3.0, 0.0]]), np.array([[0.0, 1.0, 0.0]]), np.array([[0.0, 1.0, 0.0]]))
    assert np.all(np.isneginf(m))


def test_step_target_splits_at_the_step_with_side_means():
    # delta = 0.01: eps(100) = (1/4) sqrt(ln 100 / 200) = 0.038 < G = 1/4, so the leaf splits at n = 100
    cfg = hoeffding_tree_config(2, n_bins=8, max_depth=1, grace_period=100, delta=0.01, tie_threshold=0.0)
    st = hoeffding_tree_init(cfg, 1, 1)
    i = np.arange(100)
    xs = np.stack([(i // 10 + 0.5) / 10, (i % 10 + 0.5) / 10], axis=1)   # a 10 x 10 grid; the step is on feature 1
    st = _feed(cfg, st, xs, (xs[:, 1] >= 0.5).astype(float))
    assert st.feature[0, 0, 0] == 1 and st.threshold[0, 0, 0] == 0.5 and st.n_nodes[0, 0] == 3
    assert st.count[0, 0, 1:3].tolist() == [50, 50] and st.mean[0, 0, 1:3].tolist() == [0.0, 1.0]
    leaves = hoeffding_tree_leaves(cfg, st, np.array([[0.9, 0.2]]))
    assert leaves.tolist() == [[1]]
    assert hoeffding_tree_leaves(cfg, st, np.array([[0.1, 0.7]])).tolist() == [[2]]


def test_no_split_below_the_hoeffding_bound_and_without_ties():
    # two features with the same best merit: G1 - G2 = 0 < eps and tie_threshold 0, so no split
    cfg = hoeffding_tree_config(2, n_bins=2, max_depth=2, grace_period=20, tie_threshold=0.0)
    st = hoeffding_tree_init(cfg, 1, 1)
    xs = np.array([[0.25, 0.25], [0.75, 0.75]] * 50)
    st = _feed(cfg, st, xs, (xs[:, 0] > 0.5).astype(float))
    assert st.n_nodes[0, 0] == 1
    # the same data with a tie threshold above eps(100) = (1/4) sqrt(ln(1e7) / 200) = 0.071 splits
    cfg2 = cfg._replace(tie_threshold=0.08)
    st2 = _feed(cfg2, hoeffding_tree_init(cfg2, 1, 1), xs, (xs[:, 0] > 0.5).astype(float))
    assert st2.n_nodes[0, 0] >= 3 and st2.feature[0, 0, 0] in (0, 1)
    eps = 0.25 * math.sqrt(math.log(1e7) / 200)
    assert 0.0 < eps < 0.08


def test_constant_target_never_splits():
    cfg = hoeffding_tree_config(1, n_bins=4, grace_period=10, tie_threshold=1.0)
    st = _feed(cfg, hoeffding_tree_init(cfg, 1, 1), np.linspace(0, 1, 200)[:, None], np.full(200, 0.3))
    assert st.n_nodes[0, 0] == 1


def test_depth_cap_and_capacity():
    cfg = hoeffding_tree_config(1, n_bins=16, max_depth=2, grace_period=20, tie_threshold=1.0)
    rng = np.random.default_rng(0)
    x = rng.random((2000, 1))
    st = _feed(cfg, hoeffding_tree_init(cfg, 1, 1), x, np.sin(12 * x[:, 0]) / 2 + 0.5)
    nn = st.n_nodes[0, 0]
    assert nn == cfg.max_nodes == 7
    assert st.depth[0, 0, :nn].max() == 2 and np.all(st.feature[0, 0, st.depth[0, 0] == 2] == -1)


def test_leaf_model_is_the_running_mean_and_variance():
    cfg = hoeffding_tree_config(1, max_depth=0)
    y = np.random.default_rng(1).random(57)
    st = _feed(cfg, hoeffding_tree_init(cfg, 1, 1), np.full((57, 1), 0.5), y)
    assert st.mean[0, 0, 0] == pytest.approx(y.mean(), rel=1e-12)
    assert st.m2[0, 0, 0] / 57 == pytest.approx(y.var(), rel=1e-10)


def test_batching_and_tree_index_do_not_mix_replications():
    cfg = hoeffding_tree_config(2, n_bins=8, max_depth=2, grace_period=25)
    rng = np.random.default_rng(2)
    T, R, E = 400, 3, 2
    x = rng.random((T, R, 2))
    y = (x[..., 0] > 0.4).astype(float) * rng.random((T, R))
    tree = rng.integers(0, E, size=(T, R))
    st = hoeffding_tree_init(cfg, R, E)
    for t in range(T):
        hoeffding_tree_update(cfg, st, tree[t], x[t], y[t])
    one = hoeffding_tree_init(cfg, 1, E)
    for t in range(T):
        hoeffding_tree_update(cfg, one, tree[t, 2:], x[t, 2:], y[t, 2:])
    for a, b in zip(st, one):
        np.testing.assert_array_equal(a[2:], b)
    assert st.n_nodes.max() > 1


@pytest.mark.parametrize("call, exc, match", [
    (lambda: hoeffding_tree_config(0), ValueError, "n_features"),
    (lambda: hoeffding_tree_config(2, n_bins=1), ValueError, "n_bins"),
    (lambda: hoeffding_tree_config(2, lower=1.0, upper=0.0), ValueError, "upper"),
    (lambda: hoeffding_tree_config(2, delta=1.5), ValueError, "delta"),
    (lambda: hoeffding_tree_config(2, delta=float("nan")), ValueError, "delta"),
    (lambda: hoeffding_tree_config(2, max_depth=-1), ValueError, "max_depth"),
    (lambda: hoeffding_tree_config(2, tie_threshold=-0.1), ValueError, "tie_threshold"),
    (lambda: hoeffding_tree_config(2.0), TypeError, "n_features"),
    (lambda: hoeffding_tree_init("cfg", 2, 2), TypeError, "config"),
])
def test_bad_config(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


@pytest.mark.parametrize("tree, x, y, match", [
    (np.array([0, 2]), np.zeros((2, 1)), np.zeros(2), "tree"),
    (np.array([0.0, 1.0]), np.zeros((2, 1)), np.zeros(2), "tree"),
    (np.array([0, 1]), np.zeros((2, 3)), np.zeros(2), "x"),
    (np.array([0, 1]), np.array([[0.5], [np.inf]]), np.zeros(2), "x"),
    (np.array([0, 1]), np.zeros((2, 1)), np.array([0.0, np.nan]), "y"),
    (np.array([0, 1]), np.zeros((2, 1)), np.zeros(3), "y"),
])
def test_bad_update(tree, x, y, match):
    cfg = hoeffding_tree_config(1)
    with pytest.raises(ValueError, match=match):
        hoeffding_tree_update(cfg, hoeffding_tree_init(cfg, 2, 2), tree, x, y)


def test_strict_namespace_gives_the_numpy_trees():
    """Off NumPy the update is written with masks (no index writes): the same trees, splits included, and
    the input arrays are left as they are; NumPy states are still updated in place."""
    xps = pytest.importorskip("array_api_strict")
    n_features = 2
    cfg = hoeffding_tree_config(n_features, n_bins=8, max_depth=2, grace_period=12, delta=0.1)
    rng = np.random.default_rng(3)
    T, R, E = 150, 3, 2
    x = rng.random((T, R, n_features))
    y = 0.5 * (x[..., -1] > 0.3) + 0.4 * (x[..., -1] > 0.7) + 0.1 * rng.random((T, R))
    tree = rng.integers(0, E, size=(T, R))
    ref, got = hoeffding_tree_init(cfg, R, E), hoeffding_tree_init(cfg, R, E, xp=xps)
    for t in range(T):
        before = got
        leaves = hoeffding_tree_leaves(cfg, got, xps.asarray(x[t])) if t % 2 else None
        got = hoeffding_tree_update(cfg, got, xps.asarray(tree[t]), xps.asarray(x[t]), xps.asarray(y[t]),
                                    leaves=leaves)
        assert hoeffding_tree_update(cfg, ref, tree[t], x[t], y[t]) is ref
        if t == 0:
            assert float(xps.sum(before.count)) == 0.0 and float(xps.sum(got.count)) == R
    assert isinstance(got.count, type(xps.asarray(0.0)))
    for name, a, b in zip(ref._fields, ref, got):
        np.testing.assert_array_equal(np.asarray(b), a, err_msg=name)
    # the check covers splits (on the last feature) down to the depth cap in some trees and not in others
    assert ref.depth.max() == 2 and set(ref.n_nodes.ravel().tolist()) == {3, 5}
    assert np.all(ref.feature[..., 0] == n_features - 1)
