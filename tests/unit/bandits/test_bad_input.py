"""Bad input to the public callables of expertlab.bandits: a clear error naming the argument, never a silent answer.

The registered learners and environments have their cases in
``tests/conformance/_bad_inputs_bandits.py``; this file covers the other
callables (records, configurations, helpers) and the environments' checks
of the actions learners send.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from expertlab import bandits, sim
from expertlab.bandits import instances

KEYS = np.arange(3, dtype=np.uint64) + np.uint64(12345)


# ---------------------------------------------------------------- advice environments


def _advice_env():
    env = bandits.contextual_policies(3, 3, 4)
    return env, env.reset(3, KEYS, np)


def test_a_valid_advice_choice_is_accepted():
    env, tables = _advice_env()
    choice = bandits.AdviceChoice(np.array([0, 1, 2]), np.array([0, 3, 1]), np.full((3, 3), 1 / 3),
                                  np.full((3, 4), 0.25))
    with np.errstate(over="ignore"):  # the counter-based draws wrap around uint64 by design
        _, y, info = env.step(tables, choice, 0, KEYS)
    assert y.shape == (3,) and info["expert"].tolist() == [0, 3, 1]


@pytest.mark.parametrize("kw, match", [
    (dict(arm=np.array([0, 1, 3])), "AdviceChoice.arm"),
    (dict(expert=np.array([0, 1, 4])), "AdviceChoice.expert"),
    (dict(expert=np.array([-1, 0, 0])), "AdviceChoice.expert"),  # indexed the last expert's row silently
    (dict(expert=np.array([0.0, 1.0, 2.0])), "AdviceChoice.expert"),
    (dict(p=np.full((3, 1), 1.0)), "AdviceChoice.p"),  # broadcast over the arms silently
    (dict(q=np.full((3, 3), 1 / 3)), "AdviceChoice.q"),
])
def test_advice_environment_refuses_a_bad_advice_choice(kw, match):
    env, tables = _advice_env()
    fields = dict(arm=np.array([0, 1, 2])) | kw
    with pytest.raises(ValueError, match=match):
        env.step(tables, bandits.AdviceChoice(**fields), 0, KEYS)


MEANS = np.array([[0.5, 0.7], [0.6, 0.5]])
POLICIES = np.array([[1, 0], [0, 1]])


def test_a_direct_advice_instance_matches_its_arrays():
    inst = bandits.AdviceInstance("mine", MEANS.tolist(), POLICIES.tolist())
    assert inst.means.dtype == np.float64 and inst.policies.dtype == np.int64
    assert inst.oracle_means().tolist() == [0.7, 0.6]


@pytest.mark.parametrize("means, policies, exc, match", [
    (np.array([[0.5, 1.7], [0.6, 0.5]]), POLICIES, ValueError, "means"),
    (np.array([[0.5, np.nan], [0.6, 0.5]]), POLICIES, ValueError, "means"),
    ([["0.5", "0.7"], ["0.6", "0.5"]], POLICIES, TypeError, "means"),
    (np.array([0.5, 0.7]), POLICIES, ValueError, "means"),
    (MEANS, np.array([[2, 0], [0, 1]]), ValueError, "policies"),  # arm 2 of 2 arms
    (MEANS, np.array([[-1, 0], [0, 1]]), ValueError, "policies"),
    (MEANS, np.array([[1.0, 0.0], [0.0, 1.0]]), TypeError, "policies"),
    (MEANS, np.array([[1, 0, 1], [0, 1, 0]]), ValueError, "policies"),  # 3 contexts, 2 rows of means
    (MEANS, [[1, 0], [0]], TypeError, "policies"),
])
def test_advice_instance_refuses_bad_tables(means, policies, exc, match):
    with pytest.raises(exc, match=match):
        bandits.AdviceInstance("mine", means, policies)


def _partitioned_fields(**change):
    inst = bandits.partitioned_expertise()
    fields = {f.name: getattr(inst, f.name) for f in dataclasses.fields(inst)}
    return fields | change


def test_a_direct_partitioned_expertise_equals_the_factory_one():
    inst = bandits.PartitionedExpertise(**_partitioned_fields())
    ref = bandits.partitioned_expertise()
    assert np.array_equal(inst.advice, ref.advice) and np.array_equal(inst.oracle_means(), ref.oracle_means())


@pytest.mark.parametrize("change, exc, match", [
    (dict(n_split_features=3), ValueError, "n_split_features"),  # more than n_features = 2
    (dict(cells_per_axis=3), ValueError, "means"),  # 9 cells, 4 rows of means
    (dict(cells_per_axis=2.0), TypeError, "cells_per_axis"),
    (dict(advice=np.full((4, 4), 4)), ValueError, "advice"),
    (dict(owner=np.array([0, 1, 2])), ValueError, "owner"),
    (dict(owner=np.array([0, 1, 2, 7])), ValueError, "owner"),
    (dict(means=np.full((4, 4), 1.5)), ValueError, "means"),
])
def test_partitioned_expertise_refuses_bad_fields(change, exc, match):
    with pytest.raises(exc, match=match):
        bandits.PartitionedExpertise(**_partitioned_fields(**change))


# ---------------------------------------------------------------- Hoeffding trees


CFG_ARGS = dict(n_features=2, n_bins=8, lower=0.0, upper=1.0, max_depth=2, grace_period=50, delta=1e-3,
                tie_threshold=0.05, value_range=1.0)


def test_a_direct_config_equals_the_checked_one():
    assert bandits.HoeffdingTreeConfig(**CFG_ARGS) == bandits.hoeffding_tree_config(
        2, n_bins=8, max_depth=2, grace_period=50, delta=1e-3)


@pytest.mark.parametrize("change, exc, match", [
    (dict(n_bins=1), ValueError, "n_bins"), (dict(delta=1.0), ValueError, "delta"),
    (dict(max_depth=13), ValueError, "max_depth"), (dict(upper=0.0), ValueError, "upper"),
    (dict(n_features=2.0), TypeError, "n_features"), (dict(value_range=np.nan), ValueError, "value_range"),
    (dict(n_bins=2**40), ValueError, "n_bins"),
])
def test_hoeffding_tree_config_class_refuses_bad_settings(change, exc, match):
    with pytest.raises(exc, match=match):
        bandits.HoeffdingTreeConfig(**(CFG_ARGS | change))
    cfg = bandits.HoeffdingTreeConfig(**CFG_ARGS)
    with pytest.raises(exc, match=match):  # _replace checks as the constructor does
        cfg._replace(**change)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(n_features=2, n_bins=2**40), ValueError, "n_bins"), (dict(n_features=0), ValueError, "n_features"),
    (dict(n_features=2, grace_period=0), ValueError, "grace_period"),
    (dict(n_features=2, lower=np.nan), ValueError, "lower"), (dict(n_features=2, value_range=0.0), ValueError,
                                                             "value_range"),
    (dict(n_features=2, tie_threshold="0.1"), TypeError, "tie_threshold"),
])
def test_hoeffding_tree_config_refuses_bad_settings(kw, exc, match):
    with pytest.raises(exc, match=match):
        bandits.hoeffding_tree_config(**kw)


def _trees():
    cfg = bandits.HoeffdingTreeConfig(**CFG_ARGS)
    return cfg, bandits.hoeffding_tree_init(cfg, 3, 2)


@pytest.mark.parametrize("x, exc, match", [
    (np.full((3, 2), np.nan), ValueError, "x"),  # routed to the first child silently
    (np.full((3, 2), 0.5 + 1j), TypeError, "x"),
    ([["a", "b"]] * 3, TypeError, "x"),
    (np.zeros((3, 3)), ValueError, "x"),
    (np.zeros((2, 2)), ValueError, "x"),
])
def test_hoeffding_tree_leaves_refuses_bad_contexts(x, exc, match):
    cfg, st = _trees()
    with pytest.raises(exc, match=match):
        bandits.hoeffding_tree_leaves(cfg, st, x)


def test_hoeffding_tree_leaves_refuses_a_config_or_state_of_other_settings():
    cfg, st = _trees()
    x = np.full((3, 2), 0.5)
    assert bandits.hoeffding_tree_leaves(cfg, st, x).tolist() == [[0, 0]] * 3
    with pytest.raises(ValueError, match="config"):  # stopped routing one level early, silently
        bandits.hoeffding_tree_leaves(cfg._replace(max_depth=1), st, x)
    with pytest.raises(ValueError, match="config"):
        bandits.hoeffding_tree_leaves(cfg._replace(n_bins=4), st, x)
    with pytest.raises(TypeError, match="config"):
        bandits.hoeffding_tree_leaves(tuple(cfg), st, x)
    with pytest.raises(TypeError, match="state"):
        bandits.hoeffding_tree_leaves(cfg, tuple(st), x)


def test_hoeffding_tree_update_refuses_leaves_out_of_range():
    cfg, st = _trees()
    with pytest.raises(ValueError, match="leaves"):
        bandits.hoeffding_tree_update(cfg, st, np.zeros(3, dtype=np.int64), np.zeros((3, 2)), np.zeros(3),
                                      leaves=np.full((3, 2), 7))


# ---------------------------------------------------------------- Tsallis-INF weights


def test_tsallis_weights_accept_a_list_and_per_row_rates():
    w = bandits.tsallis_weights([[0.0, 0.0], [0.0, 5.0]], np.array([1.0, 2.0]))
    assert np.allclose(w[0], 0.5) and w[1, 0] > w[1, 1] and np.allclose(w.sum(axis=1), 1.0)


@pytest.mark.parametrize("loss, eta, exc, match", [
    (np.zeros((2, 3)), 0.0, ValueError, "eta"),  # divided by zero
    (np.zeros((2, 3)), -1.0, ValueError, "eta"),  # a uniform distribution, silently
    (np.zeros((2, 3)), np.nan, ValueError, "eta"),  # NaN weights
    (np.zeros((2, 3)), np.ones(3), ValueError, "eta"),
    (np.zeros((2, 3)), "1", TypeError, "eta"),
    (np.array([[0.0, np.nan, 1.0]]), 1.0, ValueError, "loss_est"),
    (np.array([[-np.inf, 0.0]]), 1.0, ValueError, "loss_est"),
    (np.zeros(3), 1.0, ValueError, "loss_est"),
    (np.zeros((2, 0)), 1.0, ValueError, "loss_est"),
    (np.array([[0.0, 1j]]), 1.0, TypeError, "loss_est"),  # complex weights, silently
])
def test_tsallis_weights_refuse_bad_input(loss, eta, exc, match):
    with pytest.raises(exc, match=match):
        bandits.tsallis_weights(loss, eta)


# ---------------------------------------------------------------- expert queries


def _tasks():
    env = bandits.expert_tasks(bandits.dense_gap_means(3, 2, 1.0))
    return env, env.reset(3, KEYS, np)


def _batch(**change):
    i64 = lambda *v: np.array(v, dtype=np.int64)  # noqa: E731
    fields = dict(a=i64(0, 0, 1), b=i64(1, 2, 2), tasks=np.array([[0, 1], [1, -1], [0, 1]]), h=i64(1, 2, 3),
                  new=np.array([True, False, True]))
    return bandits.QueryBatch(**(fields | change))


def test_a_valid_query_batch_is_answered():
    env, M = _tasks()
    _, D, info = env.step(M, _batch(), 0, KEYS)
    assert D.shape == (3, 2) and D[1, 1] == 0.0 and info["queries"].tolist() == [4, 4, 12]


@pytest.mark.parametrize("change, exc, match", [
    (dict(a=np.array([-1, 0, 1])), ValueError, "QueryBatch.a"),  # the last expert, silently
    (dict(b=np.array([1, 3, 2])), ValueError, "QueryBatch.b"),
    (dict(tasks=np.array([[0, 2], [1, -1], [0, 1]])), ValueError, "QueryBatch.tasks"),
    (dict(tasks=np.array([[0, -2], [1, -1], [0, 1]])), ValueError, "QueryBatch.tasks"),
    (dict(tasks=np.zeros(3, dtype=np.int64)), ValueError, "QueryBatch.tasks"),
    (dict(h=np.array([0, 1, 1])), ValueError, "QueryBatch.h"),  # NaN noise, silently
    (dict(h=np.array([1.0, 1.0, 1.0])), TypeError, "QueryBatch.h"),
    (dict(a=np.array([0, 0])), ValueError, "QueryBatch.a"),
    (dict(new=np.array([1, 0, 1])), ValueError, "QueryBatch.new"),
])
def test_expert_tasks_refuse_a_bad_query_batch(change, exc, match):
    env, M = _tasks()
    with pytest.raises(exc, match=match):
        env.step(M, bandits.QueryBatch(**_batch(**change)._asdict()), 0, KEYS)


def test_a_direct_expert_tasks_equals_the_factory_one():
    env = bandits.ExpertTasks(means=[[1.0, 2.0], [0.0, 2.0], [0.0, 0.0]], sigma=2)
    assert env.means.dtype == np.float64 and not env.means.flags.writeable and env.sigma == 2.0
    assert env.ranking.tolist() == [0, 1, 2]


@pytest.mark.parametrize("kw, exc, match", [
    (dict(means=[[1.0, 0.0], [0.0, 1.0]]), ValueError, "means is not monotone"),
    (dict(means=[[1.0, 0.0], [2.0, -1.0], [3.0, -2.0]]), ValueError, "means is not monotone"),
    (dict(means=[[1.0, 0.5], [0.0, 0.0], [1.0, 0.5]]), ValueError, "experts 0 and 2 have identical means"),
    (dict(means=[["1"], ["0"]]), TypeError, "means"),
    (dict(means=[[1.0], [0.0, 1.0]]), TypeError, "means"),
    (dict(means=[[1.0], [0.0]], sigma=0.0), ValueError, "sigma"),
    (dict(means=[[1.0], [0.0]], name=3), TypeError, "name"),
])
def test_expert_tasks_class_refuses_bad_means(kw, exc, match):
    with pytest.raises(exc, match=match):
        bandits.ExpertTasks(**kw)


def test_monotonicity_check_agrees_with_all_pairs():
    """The O(n d) check against the definition (every pair ordered on every task) on random small tables."""
    rng = np.random.default_rng(3)
    verdicts = set()
    for _ in range(400):
        M = rng.integers(0, 3, size=(rng.integers(2, 6), rng.integers(1, 4))).astype(float)
        pairs = [(i, k) for i in range(len(M)) for k in range(i + 1, len(M))]
        cross = any((M[i] > M[k]).any() and (M[i] < M[k]).any() for i, k in pairs)
        tie = any((M[i] == M[k]).all() for i, k in pairs)
        expected = "not monotone" if cross else "identical" if tie else None
        verdicts.add(expected)
        if expected is None:
            assert bandits.ExpertTasks(M).n_experts == len(M)
        else:
            with pytest.raises(ValueError, match=expected):
                bandits.ExpertTasks(M)
    assert verdicts == {None, "not monotone", "identical"}


@pytest.mark.parametrize("n, exc", [(0, ValueError), (-3, ValueError), (2.5, TypeError), ("3", TypeError),
                                    (True, TypeError)])
def test_comparison_budget_refuses_bad_counts(n, exc):
    with pytest.raises(exc, match="n_experts"):
        bandits.comparison_budget(n)


def test_comparison_budget_is_exact_for_any_count():
    def ceil_log2(i):  # the definition, in integers
        c = 0
        while 2 ** c < i:
            c += 1
        return c

    total = 0
    for n in range(1, 1100):
        total += ceil_log2(n)
        assert bandits.comparison_budget(n) == total
    # ceil(log2(2**50 + 1)) = 51, which float log2 rounds to 50
    n = 2**50 + 1
    assert bandits.comparison_budget(n) == bandits.comparison_budget(2**50) + 51


# ---------------------------------------------------------------- linear arms


def test_linear_arms_class_built_directly_is_checked_and_frozen():
    env = bandits.LinearArms(arms=[[1, 0], [0, 1], [1, 1]], theta=[1, 0], misspecification=[0, 0, 0])
    assert env.arms.dtype == np.float64 and not env.theta.flags.writeable
    assert env.mean_rewards.tolist() == [1.0, 0.0, 1.0]


@pytest.mark.parametrize("change, exc, match", [
    (dict(theta=["1", "0"]), TypeError, "theta"),  # parsed silently
    (dict(theta=[1.0, 0.0, 0.0]), ValueError, "theta"),
    (dict(misspecification=[0.0, 1j]), TypeError, "misspecification"),
    (dict(misspecification=[0.1, 0.0]), ValueError, "misspecified"),  # the learner would be told eps_m = 0
    (dict(misspecified=1), TypeError, "misspecified"),
    (dict(arms=[[1.0, 1.0], [2.0, 2.0]]), ValueError, "arms"),
    (dict(arms=[[1.0, 0.0], [0.0]]), TypeError, "arms"),
    (dict(sigma=0.0), ValueError, "sigma"),
])
def test_linear_arms_class_refuses_bad_fields(change, exc, match):
    fields = dict(arms=np.eye(2), theta=[1.0, 0.0], misspecification=np.zeros(2)) | change
    with pytest.raises(exc, match=match):
        bandits.LinearArms(**fields)


def test_linear_arms_step_refuses_negative_counts():
    env = bandits.linear_arms(np.eye(2), [1.0, 0.0])
    with pytest.raises(ValueError, match="negative pull counts"):
        env.step(env.reset(3, KEYS, np), np.array([[1, 1], [1, -5], [0, 0]]), 0, KEYS)


@pytest.mark.parametrize("means, eps, exc, match", [
    ([0.9, np.nan], 0.1, ValueError, "means"),  # every arm out, silently
    ([0.9, np.inf], 0.1, ValueError, "means"),
    ([], 0.1, ValueError, "means"),
    ([[0.9, 0.5], [0.1, 0.2]], 0.1, ValueError, "means"),
    (0.9, 0.1, ValueError, "means"),
    (["0.9", "0.5"], 0.1, TypeError, "means"),
    ([0.9, 0.5], -0.1, ValueError, "eps"),
])
def test_eps_good_set_refuses_bad_input(means, eps, exc, match):
    with pytest.raises(exc, match=match):
        bandits.eps_good_set(means, eps)


@pytest.mark.parametrize("args, kw, exc, match", [
    ((3, 5), {}, ValueError, "n_arms"),  # 3 arms cannot span R^5
    ((5, 1), {}, ValueError, "dim"),
    ((10**6, 10**6), {}, ValueError, "n_arms, dim too large"),
    ((5, 3), dict(radius=0.0), ValueError, "radius"),
    ((5.0, 3), {}, TypeError, "n_arms"),
    ((5, 3), dict(good=np.nan), ValueError, "good"),
])
def test_two_level_linear_arms_refuses_bad_input(args, kw, exc, match):
    with pytest.raises(exc, match=match):
        bandits.two_level_linear_arms(*args, **kw)


def test_linfact_stops_with_an_error_when_eps_sits_on_a_gap():
    # means 1.0, 0.9, 0.5: the arms at 0.9 lie exactly on the boundary 1.0 - eps, no phase decides them
    env = bandits.linear_arms(*bandits.two_level_linear_arms(6, 2))
    with pytest.raises(ValueError, match="eps=0.1"):
        sim.run(bandits.linfact(0.1), env, horizon=60, n_reps=2, seed=0)


# ---------------------------------------------------------------- safe combinatorial semi-bandits


SAFE = dict(means=[0.5, 0.4, 0.3], variances=[0.2, 0.2, 0.1], budget=0.35, k=2)


def test_a_direct_safe_comb_instance_computes_the_best_safe_arm():
    direct = bandits.SafeCombInstance(**SAFE)
    assert direct.best_safe_arm == (0, 2) and direct.best_safe_mean == pytest.approx(0.8)
    assert direct.best_safe_arm == bandits.safe_comb_instance(**SAFE).best_safe_arm
    given = bandits.SafeCombInstance(**SAFE, best_safe_arm=(2, 0), best_safe_mean=0.8)
    assert given.best_safe_arm == (2, 0)


@pytest.mark.parametrize("change, exc, match", [
    (dict(best_safe_arm=(0, 1)), ValueError, "best_safe_arm"),  # mean 0.9 but unsafe: 0.4 > 0.35
    (dict(best_safe_arm=(1, 2)), ValueError, "best_safe_arm"),  # safe but not the best (0.7)
    (dict(best_safe_arm=(0, 0)), ValueError, "best_safe_arm"),
    (dict(best_safe_arm=(0, 5)), ValueError, "best_safe_arm"),
    (dict(best_safe_arm=3), TypeError, "best_safe_arm"),
    (dict(best_safe_mean=0.9), ValueError, "best_safe_mean"),  # a wrong regret baseline, silently
    (dict(best_safe_mean="0.8"), TypeError, "best_safe_mean"),
    (dict(means=[0.5, 1.4, 0.3]), ValueError, "means"),
    (dict(means=["0.5", "0.4", "0.3"]), TypeError, "means"),
    (dict(k=3.0), TypeError, "k"),
    (dict(budget=0.2), ValueError, "budget"),
])
def test_safe_comb_instance_class_refuses_bad_fields(change, exc, match):
    with pytest.raises(exc, match=match):
        bandits.SafeCombInstance(**(SAFE | change))


@pytest.mark.parametrize("items, match", [
    (np.array([[0, 3], [0, 1], [1, -1]]), "SuperArm.items"),  # item 3 of 3
    (np.array([[0, -2], [0, 1], [1, -1]]), "SuperArm.items"),
    (np.array([[1, 1], [0, 1], [1, -1]]), "repeat"),  # one item counted twice, silently
])
def test_safe_comb_step_refuses_bad_items(items, match):
    env = bandits.safe_comb_instance(**SAFE)
    with pytest.raises(ValueError, match=match):
        env.step(env.reset(3, KEYS, np), bandits.SuperArm(items), 0, KEYS)


# ---------------------------------------------------------------- bandit instances


@pytest.mark.parametrize("p, q, exc, match", [
    (0.5, 1.5, ValueError, "q"),  # NaN, silently
    (1.5, 0.5, ValueError, "p"),  # a finite number, silently
    (-0.1, 0.5, ValueError, "p"),
    (np.nan, 0.5, ValueError, "p"),  # 0, silently
    ("0.5", 0.5, TypeError, "p"),
    (0.5, 0.5j, TypeError, "q"),
    ([0.1, 0.2], [0.1, 0.2, 0.3], ValueError, "p and q"),
])
def test_bernoulli_kl_refuses_bad_input(p, q, exc, match):
    with pytest.raises(exc, match=match):
        instances.bernoulli_kl(p, q)


def test_bernoulli_kl_keeps_its_limits():
    assert instances.bernoulli_kl(0.5, 0.0) == np.inf and instances.bernoulli_kl(0.0, 0.0) == 0.0
    assert instances.bernoulli_kl([], []).shape == (0,)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: instances.bernoulli(["0.1", "0.2"]), TypeError, "means"),
    (lambda: instances.piecewise_bernoulli([[0.9, 0.1j], [0.1, 0.9]], [5]), TypeError, "means"),
    (lambda: instances.piecewise_bernoulli([[0.9, 0.1], [0.1, 0.9]], "5"), TypeError, "change_points"),
    (lambda: instances.piecewise_bernoulli(np.zeros((0, 2)), []), ValueError, "means"),
    (lambda: instances.reward_array([["0.5", "0.5"]]), TypeError, "rewards"),
    (lambda: instances.minimax(2**40, 10), ValueError, "n_arms"),
])
def test_instances_refuse_strings_complex_and_sizes(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
