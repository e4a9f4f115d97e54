"""Groupwise regret: the online ridge and comparator pieces against direct solves, the instance, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from expertlab.experts import GROUP_NAMES, groupwise, intersecting_groups, linear_grid
from expertlab.experts._groupwise import _ClassHedge, _Ridge, _draw, _least_squares_loss


def test_online_ridge_equals_the_batch_solve():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 3)), rng.normal(size=30)
    mask = rng.random(30) < 0.6
    r = _Ridge((1,), 3, 0.7)
    for t in range(30):
        r.update(X[t][None], y[t][None], mask[t][None])
    Xm, ym = X[mask], y[mask]
    theta = np.linalg.solve(0.7 * np.eye(3) + Xm.T @ Xm, Xm.T @ ym)
    x_new = rng.normal(size=3)
    assert r.predict(x_new[None])[0] == pytest.approx(theta @ x_new, rel=1e-10)


def test_comparator_is_the_least_squares_loss():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    best = _least_squares_loss((X.T @ X)[None], (X.T @ y)[None], np.array([y @ y]))[0]
    _, res, _, _ = np.linalg.lstsq(X, y, rcond=None)
    assert best == pytest.approx(res[0], rel=1e-9)
    # with fewer rounds than dimensions the fit is exact: zero loss, not a negative round-off
    X2, y2 = X[:2], y[:2]
    assert _least_squares_loss((X2.T @ X2)[None], (X2.T @ y2)[None], np.array([y2 @ y2]))[0] == pytest.approx(0, abs=1e-9)


def test_instance_draws():
    inst = intersecting_groups(4, noise=0.2)
    rk = np.arange(500, dtype=np.uint64) * np.uint64(7919)
    x, groups, y = _draw(inst, rk, 3)
    assert np.all(x[:, 0] == 1.0) and np.all(np.abs(x) <= 1.0)
    assert groups.shape == (500, len(GROUP_NAMES)) and groups[:, 0].all()
    assert np.all(groups[:, 1] ^ groups[:, 2]) and np.all(groups[:, 3] ^ groups[:, 4])
    assert np.all(np.abs(y) <= inst.y_max)
    # each attribute is a fair coin
    assert abs(groups[:, 2].mean() - 0.5) < 4 * 0.5 / np.sqrt(500)


def test_global_learner_is_fine_when_every_group_shares_one_model():
    beta = np.array([0.3, 0.4, -0.2])
    res = groupwise(intersecting_groups(3, betas=np.tile(beta, (4, 1))), horizon=3000, n_reps=8, seed=2)
    # the pooled model is right on every group: the global regret stays logarithmic (a few units)
    assert res.global_regret[-1].mean(axis=0).max() < 3.0
    assert res.regret[-1].mean(axis=0).max() < 3.0


def test_group_models_that_differ_make_the_global_learner_linear():
    res = groupwise(intersecting_groups(3, models="a1"), horizon=3000, n_reps=8, seed=2)
    g = GROUP_NAMES.index("a1=0")
    # the pooled model misses each a1 group by a constant: regret about linear in T (ratio ~ 3000 / 300)
    ck = list(res.checkpoints)
    i300 = ck.index(300) if 300 in ck else int(np.searchsorted(res.checkpoints, 300))
    ratio = res.global_regret[-1, :, g].mean() / res.global_regret[i300, :, g].mean()
    t_ratio = 3000 / res.checkpoints[i300]
    assert 0.7 * t_ratio < ratio < 1.3 * t_ratio
    assert res.regret[-1, :, g].mean() < 0.1 * res.global_regret[-1, :, g].mean()
    np.testing.assert_allclose(res.group_rounds[-1].sum(axis=1), 3 * 3000)  # all + one per attribute pair


def test_batching_does_not_change_replications():
    inst = intersecting_groups(3, models="cells")
    a = groupwise(inst, 200, n_reps=6, seed=5)
    b = groupwise(inst, 200, n_reps=2, seed=5, rep_offset=4)
    np.testing.assert_allclose(a.regret[:, 4:], b.regret, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kw, match", [
    (dict(dim=1), "dim"), (dict(models="quadratic"), "models"), (dict(noise=-0.1), "noise"),
    (dict(betas=np.ones((4, 3))), "beta_c"), (dict(betas=np.zeros((3, 3))), "shape"),
    (dict(betas=np.full((4, 3), np.nan)), "finite"),
])
def test_bad_instances(kw, match):
    with pytest.raises(ValueError, match=match):
        intersecting_groups(**({"dim": 3} | kw))


def test_bad_runs():
    with pytest.raises(TypeError, match="GroupInstance"):
        groupwise("groups", 10)
    with pytest.raises(ValueError, match="horizon"):
        groupwise(intersecting_groups(), 0)
    with pytest.raises(ValueError, match="ridge"):
        groupwise(intersecting_groups(), 10, ridge=0.0)
    with pytest.raises(ValueError, match="checkpoints"):
        groupwise(intersecting_groups(), 10, checkpoints=[20])


# -- Hedge over a finite class as the group learner --------------------------


def test_class_hedge_by_hand():
    h = _ClassHedge((1,), 2)
    # T_g = 0: eta = sqrt(8 ln 2 / 1); member losses so far (0, 1); predictions (1, -1)
    h.L[0] = [0.0, 1.0]
    eta = math.sqrt(8 * math.log(2))
    p0 = 1.0 / (1.0 + math.exp(-eta))
    assert h.predict(np.array([[1.0, -1.0]]))[0] == pytest.approx(p0 - (1 - p0), rel=1e-12)
    # a masked-out round changes nothing; an awake one adds the losses and one round
    h.update(np.array([[0.5, 0.25]]), np.array([False]))
    np.testing.assert_array_equal(h.L[0], [0.0, 1.0])
    h.update(np.array([[0.5, 0.25]]), np.array([True]))
    np.testing.assert_allclose(h.L[0], [0.5, 1.25])
    assert h.T[0] == 1
    eta = math.sqrt(8 * math.log(2) / 2)
    p0 = 1.0 / (1.0 + math.exp(-0.75 * eta))
    assert h.predict(np.array([[1.0, -1.0]]))[0] == pytest.approx(2 * p0 - 1, rel=1e-12)


def test_linear_grid():
    H = linear_grid(4, step=0.5, radius=1.0)
    assert H.shape == (25, 4) and np.all(H[:, 2:] == 0)
    assert sorted(set(H[:, 0].tolist())) == [-1.0, -0.5, 0.0, 0.5, 1.0]
    with pytest.raises(ValueError, match="step"):
        linear_grid(3, step=0.0)


def test_a_single_member_class_has_zero_regret_everywhere():
    """K = 1: every Hedge plays the member, so the learners, the global learner and the combination have regret 0."""
    res = groupwise(intersecting_groups(3, models="cells"), 300, n_reps=3, seed=1, group_learner="hedge",
                    hypotheses=[[0.1, 0.2, -0.3]])
    for r in (res.regret, res.learner_regret, res.global_regret):
        np.testing.assert_allclose(r, 0.0, atol=1e-10)


def test_group_hedge_obeys_the_anytime_hedge_bound():
    """Cesa-Bianchi & Lugosi Thm 2.3 for the mean prediction: R <= 2 sqrt(T_g/2 ln K) + sqrt(ln K / 8)."""
    H = linear_grid(3, step=0.25)
    res = groupwise(intersecting_groups(3, models="cells"), 2000, n_reps=6, seed=3, group_learner="hedge",
                    hypotheses=H)
    lnk = math.log(H.shape[0])
    bound = 2 * np.sqrt(res.group_rounds / 2 * lnk) + math.sqrt(lnk / 8)
    assert np.all(res.learner_regret <= bound)
    # the right member is in the class on every group: the regret is far below the bound at the end
    assert res.learner_regret[-1].max() < 0.25 * bound[-1].min()
    assert res.group_learner == "hedge"


def test_global_hedge_is_linear_on_a_misfit_group():
    res = groupwise(intersecting_groups(3, models="a1"), 3000, n_reps=4, seed=2, group_learner="hedge")
    g = GROUP_NAMES.index("a1=1")
    # the pooled member misses a1=1 by a constant per round; the groupwise learner is O(sqrt(T_g)) there
    assert res.global_regret[-1, :, g].min() > 5 * max(res.regret[-1, :, g].max(), 1.0)


def test_hedge_batching_does_not_change_replications():
    inst = intersecting_groups(3, models="cells")
    a = groupwise(inst, 150, n_reps=5, seed=4, group_learner="hedge")
    b = groupwise(inst, 150, n_reps=2, seed=4, rep_offset=3, group_learner="hedge")
    np.testing.assert_allclose(a.regret[:, 3:], b.regret, rtol=1e-12, atol=1e-12)
    c = groupwise(inst, 150, n_reps=5, seed=4, group_learner="hedge")
    np.testing.assert_array_equal(a.regret, c.regret)


def test_bad_hedge_runs():
    inst = intersecting_groups(3)
    with pytest.raises(ValueError, match="group_learner"):
        groupwise(inst, 10, group_learner="boosting")
    with pytest.raises(ValueError, match="hypotheses"):
        groupwise(inst, 10, hypotheses=np.zeros((2, 3)))
    for bad in (np.zeros((2, 4)), np.zeros((0, 3)), np.full((2, 3), np.nan), np.zeros(3)):
        with pytest.raises(ValueError, match="hypotheses"):
            groupwise(inst, 10, group_learner="hedge", hypotheses=bad)
