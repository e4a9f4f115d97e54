"""Groupwise regret: the online ridge and comparator pieces against direct solves, the environment, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import (GROUP_NAMES, GroupPrediction, groupwise, instances, intersecting_groups, linear_grid,
                               pooled_regression)
from expertlab.experts._groupwise import (_class_init, _class_predict, _class_update, _draw, _least_squares_loss,
                                          _ridge_init, _ridge_predict, _ridge_update)

PER_GROUP = [f"regret[{g}]" for g in GROUP_NAMES]


def _run(learner, env, horizon, n_reps, seed, **kw):
    return sim.run(learner, env, horizon=horizon, n_reps=n_reps, seed=seed, **kw)


def test_online_ridge_equals_the_batch_solve():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 3)), rng.normal(size=30)
    mask = rng.random(30) < 0.6
    r = _ridge_init((1,), 3, 0.7)
    for t in range(30):
        r = _ridge_update(r, X[t][None], y[t][None], mask[t][None])
    Xm, ym = X[mask], y[mask]
    theta = np.linalg.solve(0.7 * np.eye(3) + Xm.T @ Xm, Xm.T @ ym)
    x_new = rng.normal(size=3)
    assert _ridge_predict(r, x_new[None])[0] == pytest.approx(theta @ x_new, rel=1e-10)


def test_comparator_is_the_least_squares_loss():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    best = _least_squares_loss((X.T @ X)[None], (X.T @ y)[None], np.array([y @ y]))[0]
    _, res, _, _ = np.linalg.lstsq(X, y, rcond=None)
    assert best == pytest.approx(res[0], rel=1e-9)
    # with fewer rounds than dimensions the fit is exact: zero loss, not a negative round-off
    X2, y2 = X[:2], y[:2]
    assert _least_squares_loss((X2.T @ X2)[None], (X2.T @ y2)[None], np.array([y2 @ y2]))[0] == pytest.approx(0, abs=1e-9)


def test_environment_draws():
    env = intersecting_groups(4, noise=0.2)
    keys = np.arange(500, dtype=np.uint64) * np.uint64(7919)
    x, groups, y = _draw(env, keys)
    assert np.all(x[:, 0] == 1.0) and np.all(np.abs(x) <= 1.0)
    assert groups.shape == (500, len(GROUP_NAMES)) and groups[:, 0].all()
    assert np.all(groups[:, 1] ^ groups[:, 2]) and np.all(groups[:, 3] ^ groups[:, 4])
    assert np.all(np.abs(y) <= env.y_max)
    # each attribute is a fair coin
    assert abs(groups[:, 2].mean() - 0.5) < 4 * 0.5 / np.sqrt(500)
    # observe and step see the same round
    ctx = env.observe(None, 0, keys)
    _, fb, _ = env.step(None, GroupPrediction(np.zeros(500)), 0, keys)
    np.testing.assert_array_equal(ctx.x, fb.x)
    np.testing.assert_array_equal(ctx.groups, fb.groups)
    assert env.spec.feedback == "group_regression" and env.spec.groups == GROUP_NAMES


def test_global_learner_is_fine_when_every_group_shares_one_model():
    beta = np.array([0.3, 0.4, -0.2])
    env = intersecting_groups(3, betas=np.tile(beta, (4, 1)))
    res, glob = _run(groupwise(), env, 3000, 8, 2), _run(pooled_regression(), env, 3000, 8, 2)
    # the pooled model is right on every group: the global regret stays logarithmic (a few units)
    assert glob.final["group_regret"].mean(axis=0).max() < 3.0
    assert res.final["group_regret"].mean(axis=0).max() < 3.0


def test_group_models_that_differ_make_the_global_learner_linear():
    env = intersecting_groups(3, models="a1")
    res, glob = _run(groupwise(), env, 3000, 8, 2), _run(pooled_regression(), env, 3000, 8, 2)
    name = "regret[a1=0]"
    # the pooled model misses each a1 group by a constant: regret about linear in T (ratio ~ 3000 / 300)
    i300 = int(np.searchsorted(glob.checkpoints, 300))
    ratio = glob.mean(name)[-1] / glob.mean(name)[i300]
    t_ratio = 3000 / glob.checkpoints[i300]
    assert 0.7 * t_ratio < ratio < 1.3 * t_ratio
    assert res.mean(name)[-1] < 0.1 * glob.mean(name)[-1]
    np.testing.assert_allclose(res.final["group_rounds"].sum(axis=1), 3 * 3000)  # all + one per attribute pair
    # the worst-group metric is the largest per-group one, and the final per-group regrets agree with them
    per = np.stack([res.metrics[n] for n in PER_GROUP], axis=-1)
    np.testing.assert_allclose(res.metrics["worst_group_regret"], per.max(axis=-1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.final["group_regret"], per[-1], rtol=1e-12, atol=1e-12)


def test_batching_does_not_change_replications():
    env = intersecting_groups(3, models="cells")
    a = _run(groupwise(), env, 200, 6, 5)
    b = _run(groupwise(), env, 200, 2, 5, rep_offset=4)
    for name in a.metrics:
        np.testing.assert_allclose(a.metrics[name][:, 4:], b.metrics[name], rtol=1e-12, atol=1e-12)


def test_own_learner_metrics_need_group_predictions():
    env = intersecting_groups(3)
    res = _run(groupwise(), env, 50, 2, 0, metrics=["worst_learner_regret", "learner_regret[all]", "rounds[a1=1]"])
    np.testing.assert_allclose(res.final["learner_regret"][:, 0], res.metrics["learner_regret[all]"][-1])
    assert np.all(res.metrics["rounds[a1=1]"][-1] <= 50)
    with pytest.raises(ValueError, match="group predictions"):
        _run(pooled_regression(), env, 10, 2, 0, metrics=["worst_learner_regret"])


@pytest.mark.parametrize("kw, match", [
    (dict(dim=1), "dim"), (dict(models="quadratic"), "models"), (dict(noise=-0.1), "noise"),
    (dict(betas=np.ones((4, 3))), "beta_c"), (dict(betas=np.zeros((3, 3))), "shape"),
    (dict(betas=np.full((4, 3), np.nan)), "finite"),
])
def test_bad_environments(kw, match):
    with pytest.raises(ValueError, match=match):
        intersecting_groups(**({"dim": 3} | kw))


def test_bad_runs():
    env = intersecting_groups()
    with pytest.raises(ValueError, match="horizon"):
        _run(groupwise(), env, 0, 2, 0)
    with pytest.raises(ValueError, match="ridge"):
        groupwise(ridge=0.0)
    with pytest.raises(ValueError, match="checkpoints"):
        _run(groupwise(), env, 10, 2, 0, checkpoints=[20])
    with pytest.raises(ValueError, match="feedback"):
        _run(groupwise(), instances.fair_coins(3), 10, 2, 0)
    with pytest.raises(TypeError, match="GroupPrediction"):
        env.step(None, np.zeros(2), 0, np.arange(2, dtype=np.uint64))
    with pytest.raises(ValueError, match="shape"):
        env.step(None, GroupPrediction(np.zeros(3)), 0, np.arange(2, dtype=np.uint64))


# -- Hedge over a finite class as the group learner --------------------------


def test_class_hedge_by_hand():
    h = _class_init((1,), 2)
    ln2 = math.log(2)
    # T_g = 0: eta = sqrt(8 ln 2 / 1); member losses so far (0, 1); predictions (1, -1)
    h = h._replace(L=np.array([[0.0, 1.0]]))
    eta = math.sqrt(8 * ln2)
    p0 = 1.0 / (1.0 + math.exp(-eta))
    assert _class_predict(h, np.array([[1.0, -1.0]]), ln2)[0] == pytest.approx(p0 - (1 - p0), rel=1e-12)
    # a masked-out round changes nothing; an awake one adds the losses and one round
    h2 = _class_update(h, np.array([[0.5, 0.25]]), np.array([False]))
    np.testing.assert_array_equal(h2.L[0], [0.0, 1.0])
    h3 = _class_update(h, np.array([[0.5, 0.25]]), np.array([True]))
    np.testing.assert_allclose(h3.L[0], [0.5, 1.25])
    assert h3.T[0] == 1
    np.testing.assert_array_equal(h.L[0], [0.0, 1.0])  # updates are pure
    eta = math.sqrt(8 * ln2 / 2)
    p0 = 1.0 / (1.0 + math.exp(-0.75 * eta))
    assert _class_predict(h3, np.array([[1.0, -1.0]]), ln2)[0] == pytest.approx(2 * p0 - 1, rel=1e-12)


def test_linear_grid():
    H = linear_grid(4, step=0.5, radius=1.0)
    assert H.shape == (25, 4) and np.all(H[:, 2:] == 0)
    assert sorted(set(H[:, 0].tolist())) == [-1.0, -0.5, 0.0, 0.5, 1.0]
    with pytest.raises(ValueError, match="step"):
        linear_grid(3, step=0.0)


def test_a_single_member_class_has_zero_regret_everywhere():
    """K = 1: every Hedge plays the member, so the learners, the global learner and the combination have regret 0."""
    env = intersecting_groups(3, models="cells", hypotheses=[[0.1, 0.2, -0.3]])
    res = _run(groupwise("hedge"), env, 300, 3, 1, metrics=["worst_group_regret", "worst_learner_regret"])
    glob = _run(pooled_regression("hedge"), env, 300, 3, 1)
    for r in (res.final["group_regret"], res.final["learner_regret"], glob.final["group_regret"]):
        np.testing.assert_allclose(r, 0.0, atol=1e-10)
    np.testing.assert_allclose(res.metrics["worst_learner_regret"], 0.0, atol=1e-10)


def test_group_hedge_obeys_the_anytime_hedge_bound():
    """Cesa-Bianchi & Lugosi Thm 2.3 for the mean prediction: R <= 2 sqrt(T_g/2 ln K) + sqrt(ln K / 8)."""
    H = linear_grid(3, step=0.25)
    env = intersecting_groups(3, models="cells", hypotheses=H)
    names = [f"learner_regret[{g}]" for g in GROUP_NAMES] + [f"rounds[{g}]" for g in GROUP_NAMES]
    res = _run(groupwise("hedge"), env, 2000, 6, 3, metrics=names)
    lnk = math.log(H.shape[0])
    reg = np.stack([res.metrics[f"learner_regret[{g}]"] for g in GROUP_NAMES], axis=-1)
    rounds = np.stack([res.metrics[f"rounds[{g}]"] for g in GROUP_NAMES], axis=-1)
    bound = 2 * np.sqrt(rounds / 2 * lnk) + math.sqrt(lnk / 8)
    assert np.all(reg <= bound)
    # the right member is in the class on every group: the regret is far below the bound at the end
    assert reg[-1].max() < 0.25 * bound[-1].min()


def test_global_hedge_is_linear_on_a_misfit_group():
    env = intersecting_groups(3, models="a1", hypotheses=linear_grid(3))
    res, glob = _run(groupwise("hedge"), env, 3000, 4, 2), _run(pooled_regression("hedge"), env, 3000, 4, 2)
    name = "regret[a1=1]"
    # the pooled member misses a1=1 by a constant per round; the groupwise learner is O(sqrt(T_g)) there
    assert glob.metrics[name][-1].min() > 5 * max(res.metrics[name][-1].max(), 1.0)


def test_hedge_batching_does_not_change_replications():
    env = intersecting_groups(3, models="cells", hypotheses=linear_grid(3))
    a = _run(groupwise("hedge"), env, 150, 5, 4)
    b = _run(groupwise("hedge"), env, 150, 2, 4, rep_offset=3)
    np.testing.assert_allclose(a.metrics["worst_group_regret"][:, 3:], b.metrics["worst_group_regret"],
                               rtol=1e-12, atol=1e-12)
    c = _run(groupwise("hedge"), env, 150, 5, 4)
    np.testing.assert_array_equal(a.metrics["worst_group_regret"], c.metrics["worst_group_regret"])


def test_bad_hedge_runs():
    with pytest.raises(ValueError, match="group_learner"):
        groupwise("boosting")
    with pytest.raises(ValueError, match="group_learner"):
        pooled_regression("boosting")
    with pytest.raises(ValueError, match="hypotheses"):
        _run(groupwise("hedge"), intersecting_groups(3), 10, 2, 0)
    with pytest.raises(ValueError, match="hypotheses"):
        _run(pooled_regression("hedge"), intersecting_groups(3), 10, 2, 0)
    for bad in (np.zeros((2, 4)), np.zeros((0, 3)), np.full((2, 3), np.nan), np.zeros(3)):
        with pytest.raises(ValueError, match="hypotheses"):
            intersecting_groups(3, hypotheses=bad)
