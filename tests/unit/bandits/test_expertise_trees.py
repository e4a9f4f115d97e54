"""Expertise trees and their baselines: the instance by hand, a plain-Python reference, batching and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from expertlab import _random
from expertlab.bandits import (ExpertAdviceResult, exp4, exp4_experts, expertise_trees, global_thompson, knn_experts,
                               partitioned_expertise)
from expertlab.sim._variates import normal


def test_instance_structure():
    inst = partitioned_expertise(n_features=3, n_arms=3, n_experts=3, cells_per_axis=3, n_split_features=1,
                                 gap=0.2, seed=4)
    C = 3
    assert inst.means.shape == (C, 3) and inst.advice.shape == (3, C)
    assert sorted(inst.owner.tolist()) == [0, 1, 2]
    best = inst.means.argmax(axis=1)
    for c in range(C):
        for j in range(3):
            a = inst.advice[j, c]
            assert (a == best[c]) == (inst.owner[c] == j)
    np.testing.assert_allclose(inst.oracle_means(), 0.7)
    np.testing.assert_allclose(inst.expert_means().sum(axis=0), 0.7 + 2 * 0.5)
    # cells are the thirds of feature 0; features 1 and 2 do not matter
    x = np.array([[0.1, 0.9, 0.5], [0.5, 0.0, 1.0], [0.99, 0.3, 0.3], [1.0, 0.0, 0.0]])
    assert inst.cell(x).tolist() == [0, 1, 2, 2]
    two = partitioned_expertise()
    assert two.cell(np.array([[0.2, 0.2], [0.7, 0.2], [0.2, 0.7], [0.7, 0.7]])).tolist() == [0, 1, 2, 3]
    np.testing.assert_allclose(two.as_advice_instance().expert_values(), 0.575)


def _global_reference(inst, T, seed, rep):
    """Plain-Python Gaussian Thompson sampling over experts (one leaf each), one replication."""
    p, N = inst.n_features, inst.n_experts
    rk = _random.rep_key(np.uint64(seed), np.uint64(rep))
    lk = _random.stream_key(rk, _random.LEARNER_STREAM)
    n, s = [0.0] * N, [0.0] * N
    regret = 0.0
    for t in range(T):
        key = _random.round_key(rk, np.uint64(t))
        x = np.array([_random.uniform(key, np.uint64(i)) for i in range(p)])
        c = int(inst.cell(x[None])[0])
        lkt = _random.round_key(lk, np.uint64(t))
        score = [(s[j] + 0.5) / (n[j] + 1) + normal(lkt, np.uint64(j)) * 0.5 / math.sqrt(n[j] + 1) for j in range(N)]
        e = int(np.argmax(score))
        mu = inst.means[c, inst.advice[e, c]]
        y = 1.0 if _random.uniform(key, np.uint64(p)) < mu else 0.0
        n[e] += 1
        s[e] += y
        regret += inst.oracle_means()[c] - mu
    return regret


def test_global_thompson_matches_plain_python():
    inst = partitioned_expertise(n_experts=3, gap=0.25, seed=2)
    with np.errstate(over="ignore"):
        res = global_thompson(inst, 120, n_reps=3, seed=5, checkpoints=[120])
        ref = [_global_reference(inst, 120, 5, r) for r in range(3)]
    np.testing.assert_allclose(res.regret[-1], ref, rtol=1e-9, atol=1e-9)
    assert isinstance(res, ExpertAdviceResult) and res.trees.n_nodes.max() == 1


@pytest.mark.parametrize("run", [
    lambda inst, **kw: expertise_trees(inst, 600, grace_period=50, **kw),
    lambda inst, **kw: knn_experts(inst, 300, k=5, memory=40, **kw),
])
def test_batching_and_seeds(run):
    inst = partitioned_expertise()
    a = run(inst, n_reps=5, seed=3)
    b = run(inst, n_reps=2, seed=3, rep_offset=3)
    np.testing.assert_array_equal(a.regret[:, 3:], b.regret)
    np.testing.assert_array_equal(a.regret, run(inst, n_reps=5, seed=3).regret)
    assert not np.array_equal(a.regret, run(inst, n_reps=5, seed=4).regret)
    assert np.all(np.diff(a.regret, axis=0) >= 0)       # the oracle is the best expert of every cell


def test_context_blind_baselines_are_linear_in_expectation():
    # every expert owns one of four equally likely cells: P(follow the accurate one) = 1/4 exactly
    inst = partitioned_expertise(gap=0.3)
    T = 1500
    for res in (global_thompson(inst, T, n_reps=20, seed=1, checkpoints=[T]),
                exp4_experts(inst, T, n_reps=200, seed=1, checkpoints=[T])):
        y = res.regret[-1]
        assert abs(y.mean() - 0.3 * 0.75 * T) < 4 * y.std(ddof=1) / math.sqrt(y.size), res.method


def test_exp4_experts_is_exp4_plus_the_comparator_gap():
    inst = partitioned_expertise(n_experts=2, seed=1)     # two experts own two cells each
    ck = np.array([10, 100, 500])
    a = exp4_experts(inst, 500, n_reps=3, seed=2, checkpoints=ck)
    b = exp4(inst.as_advice_instance(), 500, n_reps=3, seed=2, checkpoints=ck)
    gap = inst.oracle_means().mean() - inst.as_advice_instance().expert_values().max()
    assert gap == pytest.approx(0.3 / 2)
    np.testing.assert_allclose(a.regret, b.regret + ck[:, None] * gap)


def test_trees_learn_the_partition():
    inst = partitioned_expertise(gap=0.3)
    ck = [2500, 5000]
    tr = expertise_trees(inst, 5000, n_reps=12, seed=0, checkpoints=ck)
    gl = global_thompson(inst, 5000, n_reps=12, seed=0, checkpoints=ck)
    late_tr = (tr.regret[1] - tr.regret[0]).mean()
    late_gl = (gl.regret[1] - gl.regret[0]).mean()
    assert late_gl == pytest.approx(0.225 * 2500, rel=0.1)
    assert late_tr < 0.3 * late_gl
    # in its own cell each expert's leaf estimate is near 0.5 + gap
    from expertlab.bandits import hoeffding_tree_config, hoeffding_tree_leaves
    cfg = hoeffding_tree_config(2)
    centres = np.array([[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]])
    good = 0
    for c in range(4):
        leaf = hoeffding_tree_leaves(cfg, tr.trees, np.repeat(centres[c:c + 1], 12, axis=0))
        j = inst.owner[c]
        good += int(np.sum(tr.trees.mean[np.arange(12), j, leaf[:, j]] > 0.7))
    assert good >= 0.9 * 48


def test_knn_beats_context_blind():
    inst = partitioned_expertise(gap=0.3)
    kn = knn_experts(inst, 1500, k=10, memory=150, n_reps=8, seed=0, checkpoints=[1500])
    assert kn.regret[-1].mean() < 0.6 * 0.225 * 1500


@pytest.mark.parametrize("call, exc, match", [
    (lambda: expertise_trees("inst", 10), TypeError, "PartitionedExpertise"),
    (lambda: expertise_trees(partitioned_expertise(), 0), ValueError, "horizon"),
    (lambda: expertise_trees(partitioned_expertise(), 10, checkpoints=[11]), ValueError, "checkpoints"),
    (lambda: expertise_trees(partitioned_expertise(), 10, delta=0.0), ValueError, "delta"),
    (lambda: knn_experts(partitioned_expertise(), 10, k=5, memory=3), ValueError, "memory"),
    (lambda: global_thompson(partitioned_expertise(), 10, n_reps=0), ValueError, "n_reps"),
    (lambda: exp4_experts(partitioned_expertise(), 10, eta=-1.0), ValueError, "eta"),
    (lambda: partitioned_expertise(n_experts=5), ValueError, "n_experts"),
    (lambda: partitioned_expertise(n_features=1), ValueError, "n_split_features"),
    (lambda: partitioned_expertise(gap=0.6), ValueError, "gap"),
    (lambda: partitioned_expertise(n_arms=1), ValueError, "n_arms"),
    (lambda: partitioned_expertise().cell(np.array([[0.5, 1.5]])), ValueError, "x"),
    (lambda: partitioned_expertise().cell(np.array([[0.5, np.nan]])), ValueError, "x"),
    (lambda: partitioned_expertise().cell(np.array([[0.5, 0.5, 0.5]])), ValueError, "x"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
