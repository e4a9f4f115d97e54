"""Asking a mentor: hand-worked rounds, the environment, the baseline, batching, seeds and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import MentorAction, ThresholdMentor, mentor_hedge, threshold_mentor
from expertlab.experts._claims_mentor import no_query_survival

KEYS = np.arange(3, dtype=np.uint64)
ALL = ("queries", "query_rate", "random_queries", "mistakes", "proposal_mistakes", "log_product",
       "mentor_log_product", "multiplicative_regret", "additive_regret", "catastrophe")


def _run(env, horizon, n_reps=2, seed=0, checkpoints=None, rep_offset=0, **kw):
    """Final values of every metric, shape (n_reps,) each, and the run."""
    res = sim.run(mentor_hedge(**kw), env, horizon=horizon, n_reps=n_reps, seed=seed, metrics=ALL,
                  checkpoints=checkpoints, rep_offset=rep_offset)
    return {k: res.metrics[k][-1] for k in ALL}, res


# -- the environment -------------------------------------------------------

def test_payoff_by_hand():
    env = threshold_mentor(0.5, lipschitz=2.0)
    x = np.array([0.1, 0.5, 0.7, 0.9])
    assert env.mentor_action(x).tolist() == [0, 1, 1, 1]
    # right action: 1; wrong action: max(0, 1 - 2 |x - 1/2|) = 0.2, 1, 0.6, 0.2
    np.testing.assert_allclose(env.payoff(x, [0, 1, 1, 1]), 1.0)
    np.testing.assert_allclose(env.payoff(x, [1, 0, 0, 0]), [0.2, 1.0, 0.6, 0.2])
    # far from the boundary the wrong action is a certain catastrophe
    np.testing.assert_allclose(threshold_mentor(0.5, lipschitz=3.0).payoff(np.array([1.0]), [0]), 0.0)


def test_local_generalisation_holds_on_a_grid():
    # mu(x, pi_m(x')) >= mu(x, pi_m(x)) - L |x - x'| for every pair
    env = threshold_mentor(0.3, lipschitz=1.7)
    g = np.linspace(0, 1, 101)
    X, Xp = np.meshgrid(g, g, indexing="ij")
    lhs = env.payoff(X, env.mentor_action(Xp))
    assert np.all(lhs >= 1.0 - 1.7 * np.abs(X - Xp) - 1e-12)


def test_input_sequences_by_hand():
    sweep = threshold_mentor(inputs="sweep")
    assert [sweep.observe(None, t, KEYS)[0] for t in range(4)] == [0.5, 0.25, 0.75, 0.125]
    b = threshold_mentor(0.5, inputs="boundary", width=0.1)
    got = [b.observe(None, t, KEYS)[0] for t in range(4)]
    np.testing.assert_allclose(got, [0.55, 0.45, 0.525, 0.475])
    edge = threshold_mentor(1.0, inputs="boundary", width=0.1)
    assert edge.observe(None, 0, KEYS)[0] == 1.0  # clipped to [0, 1]
    keys = np.arange(200, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    x = threshold_mentor(inputs="iid").observe(None, 7, keys)
    assert x.shape == (200,) and np.all((x > 0) & (x < 1)) and np.unique(x).size == 200
    assert abs(x.mean() - 0.5) < 4 * math.sqrt(1 / 12 / 200)


def test_step_takes_the_mentor_action_where_asked():
    env = threshold_mentor(0.5, lipschitz=1.0, inputs=[0.8])
    u = env.reset(2, KEYS[:2], np)
    act = MentorAction(np.array([0, 0]), np.array([True, False]))
    _, fb, info = env.step(u, act, 0, KEYS[:2])
    np.testing.assert_allclose(fb.x, 0.8)
    assert fb.mentor_action.tolist() == [1, -1]  # revealed only where asked
    np.testing.assert_allclose(info["payoff"], [1.0, 0.7])


# -- hand-worked runs ----------------------------------------------------------

def test_always_asking_is_the_mentor():
    f, _ = _run(threshold_mentor(0.5, inputs="iid"), 50, n_reps=5, seed=1, query_prob=1.0)
    assert f["queries"].tolist() == [50] * 5 and f["random_queries"].tolist() == [50] * 5
    np.testing.assert_array_equal(f["log_product"], 0.0)
    np.testing.assert_array_equal(f["multiplicative_regret"], 0.0)
    assert not f["catastrophe"].any() and f["mistakes"].sum() == 0


def test_wrong_proposals_without_support_are_asked():
    # x = 0.2 three times, mentor threshold 1/2, class {theta = 0 (says 1), theta = 1 (says 0)}, no random
    # queries.  Round 0 is unfamiliar: ask.  Then the uniform Hedge proposes 1 (wrong) w.p. 1/2, which no
    # queried input supports, so it asks; proposing 0 it acts, correctly.  No mistake is ever made.
    env = threshold_mentor(0.5, inputs=[0.2, 0.2, 0.2])
    f, _ = _run(env, 3, n_reps=2000, seed=0, n_thresholds=2, radius=0.01, query_prob=0.0)
    assert f["mistakes"].sum() == 0 and np.all(f["multiplicative_regret"] == 0)
    # every query after the first answers a wrong proposal of round 1 or 2
    hedge_wrong_after_0 = f["proposal_mistakes"] - (f["queries"] - 1)
    assert set(np.unique(hedge_wrong_after_0)) <= {0, 1}  # round 0's proposal may be wrong as well
    assert abs(f["queries"].mean() - 2.0) < 4 * math.sqrt(0.5 / 2000)


def test_supported_wrong_action_costs_at_most_L_eps():
    # x = 0.45 (label 0) then 0.55 (label 1) four times, radius 0.2: after round 0, proposing 0 at 0.55 is
    # supported by the queried 0.45 and is a mistake of cost L |0.55 - 0.5| = 0.05; proposing 1 is right
    env = threshold_mentor(0.5, lipschitz=1.0, inputs=[0.45, 0.55, 0.55, 0.55, 0.55])
    f, _ = _run(env, 5, n_reps=1000, seed=2, n_thresholds=2, radius=0.2, query_prob=0.0)
    np.testing.assert_allclose(f["additive_regret"], 0.05 * f["mistakes"], atol=1e-12)
    np.testing.assert_allclose(f["log_product"], f["mistakes"] * math.log(0.95), atol=1e-12)
    np.testing.assert_allclose(f["multiplicative_regret"], 1 - 0.95 ** f["mistakes"], atol=1e-12)
    # each of rounds 1..4 proposes 0 with probability 1/2
    assert abs(f["mistakes"].mean() - 2.0) < 4 * math.sqrt(1.0 / 1000)
    # round 0 is asked; the first proposal of 1 is unsupported and asked, later ones act (rightly)
    np.testing.assert_array_equal(f["queries"], 1 + (f["mistakes"] < 4))


@pytest.mark.parametrize("kind", ["iid", "sweep", "boundary"])
def test_deterministic_bounds_on_every_replication(kind):
    env = threshold_mentor(0.5, lipschitz=1.3, inputs=kind, width=0.02)
    f, _ = _run(env, 1500, n_reps=40, seed=3)
    eps = 1500 ** (-2.0 / 3.0)
    assert np.all(f["multiplicative_regret"] <= f["additive_regret"] + 1e-12)
    assert np.all(f["additive_regret"] <= 1.3 * eps * f["mistakes"] + 1e-12)
    # random queries + wrong proposals + eps-separated queries of each label
    assert np.all(f["queries"] <= f["random_queries"] + f["proposal_mistakes"] + 2 * (math.floor(1 / eps) + 1))
    assert np.all(f["mistakes"] <= f["proposal_mistakes"])


def test_default_tuning():
    learner = mentor_hedge()
    state = learner.init(sim.EnvSpec("mentor", "round", 2, horizon=1000), 2, None, np)
    assert state.radius == pytest.approx(0.01) and state.query_prob == pytest.approx(0.1)
    assert state.eta == state.query_prob and state.loss_estimates.shape == (2, 33)
    assert learner.params == {"n_thresholds": 33, "allow_queries": True}
    # the tuning follows the run's horizon: at T = 8000 the radius is 1/400 (n_cells = 400)
    state = learner.init(sim.EnvSpec("mentor", "round", 2, horizon=8000), 1, None, np)
    assert state.cmin.shape == (1, 2, 402) and state.query_prob == pytest.approx(0.05)


def test_update_is_pure():
    env = threshold_mentor(0.5, inputs="iid")
    learner = mentor_hedge(query_prob=1.0, radius=0.1)
    state = learner.init(sim.EnvSpec("mentor", "round", 2, horizon=10), 3, None, np)
    x = env.observe(None, 0, KEYS)
    action, _ = learner.act(state, x, KEYS)
    _, fb, _ = env.step(env.reset(3, KEYS, np), action, 0, KEYS)
    before = [np.array(a, copy=True) for a in state[:4]]
    new = learner.update(state, action, fb)
    for a, b in zip(before, state[:4]):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(new.cmax, state.cmax)


# -- the no-query baseline ---------------------------------------------------

def test_no_query_baseline_survival_is_exact():
    env = threshold_mentor(0.5, inputs="iid")
    f, _ = _run(env, 5, n_reps=4000, seed=4, allow_queries=False)
    assert f["queries"].sum() == 0 and f["random_queries"].sum() == 0
    surv = np.exp(f["log_product"])
    m = no_query_survival(33)
    # m = 1 - (1/33) sum_k (k/32 - 1/2)^2 / 2 = 1 - 2.921875 / 66
    assert m == pytest.approx(1 - 2.921875 / 66)
    assert abs(surv.mean() - m ** 5) < 4 * surv.std(ddof=1) / math.sqrt(4000)
    assert abs((1 - f["catastrophe"]).mean() - m ** 5) < 4 * math.sqrt(0.25 / 4000)


def test_no_query_survival_past_the_catastrophe_distance():
    # L = 4: the wrong action is a certain catastrophe beyond 1/4 of the boundary; N = 2 policies each lose
    # int_0^{1/2} min(1, 4s) ds = 4 (1/4)^2 / 2 + 1/4 = 3/8
    assert no_query_survival(2, 0.5, 4.0) == pytest.approx(1 - 3 / 8)


def test_asking_avoids_catastrophe_where_the_baseline_does_not():
    env = threshold_mentor(0.5, inputs="iid")
    ask, _ = _run(env, 300, n_reps=200, seed=5)
    base, _ = _run(env, 300, n_reps=200, seed=5, allow_queries=False)
    assert base["catastrophe"].all()
    assert ask["catastrophe"].mean() < 0.2


# -- batching, seeds, checkpoints --------------------------------------------

def test_batch_independence_and_seeds():
    env = threshold_mentor(0.4, inputs="iid")
    _, a = _run(env, 400, n_reps=10, seed=7)
    _, b = _run(env, 400, n_reps=4, seed=7, rep_offset=6)
    for k in ALL:
        np.testing.assert_array_equal(a.metrics[k][:, 6:], b.metrics[k])
    _, c = _run(env, 400, n_reps=10, seed=7)
    np.testing.assert_array_equal(a.metrics["queries"], c.metrics["queries"])
    _, d = _run(env, 400, n_reps=10, seed=8)
    assert not np.array_equal(a.metrics["queries"], d.metrics["queries"])


def test_checkpoint_paths():
    f, res = _run(threshold_mentor(inputs="boundary", width=0.05), 500, n_reps=6, seed=0,
                  checkpoints=[1, 10, 100, 500])
    assert res.checkpoints.tolist() == [1, 10, 100, 500]
    q, lp = res.metrics["queries"], res.metrics["log_product"]
    assert q[0].tolist() == [1] * 6  # round 1 is always unfamiliar
    assert np.all(np.diff(q, axis=0) >= 0) and np.all(np.diff(lp, axis=0) <= 0)
    np.testing.assert_allclose(res.metrics["query_rate"], q / res.checkpoints[:, None])
    # the catastrophe indicator never switches off
    assert np.all(np.diff(res.metrics["catastrophe"], axis=0) >= 0)


# -- validation ----------------------------------------------------------------

@pytest.mark.parametrize("kw, exc, match", [
    (dict(n_thresholds=1), ValueError, "n_thresholds"),
    (dict(radius=0.0), ValueError, "radius"), (dict(radius=float("nan")), ValueError, "radius"),
    (dict(query_prob=1.5), ValueError, "query_prob"), (dict(query_prob=float("inf")), ValueError, "query_prob"),
    (dict(eta=0.0), ValueError, "eta"), (dict(allow_queries="yes"), TypeError, "allow_queries"),
])
def test_bad_learners(kw, exc, match):
    with pytest.raises(exc, match=match):
        mentor_hedge(**kw)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(horizon=0), ValueError, "horizon"), (dict(horizon=2.5), TypeError, "horizon"),
    (dict(n_reps=0), ValueError, "n_reps"),
    (dict(checkpoints=[0, 5]), ValueError, "checkpoints"), (dict(checkpoints=[1.5, 5.0]), ValueError, "checkpoints"),
    (dict(checkpoints=[1, 99]), ValueError, "checkpoints"),
    (dict(seed=-1), ValueError, "seed"), (dict(rep_offset=-1), ValueError, "rep_offset"),
])
def test_bad_runs(kw, exc, match):
    args = dict(horizon=20, n_reps=2)
    args.update(kw)
    with pytest.raises(exc, match=match):
        sim.run(mentor_hedge(), threshold_mentor(), **args)


def test_too_many_cells():
    with pytest.raises(ValueError, match="radius"):
        sim.run(mentor_hedge(radius=1e-9), threshold_mentor(), horizon=5, n_reps=2)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(threshold=1.5), ValueError, "threshold"), (dict(threshold=float("nan")), ValueError, "threshold"),
    (dict(lipschitz=0.0), ValueError, "lipschitz"), (dict(width=-1.0), ValueError, "width"),
    (dict(inputs="gaussian"), ValueError, "inputs"), (dict(inputs=[0.2, 1.2]), ValueError, "inputs"),
    (dict(inputs=[0.2, float("nan")]), ValueError, "inputs"), (dict(inputs=[[0.1]]), ValueError, "inputs"),
    (dict(inputs=[]), ValueError, "inputs"),
])
def test_bad_environments(kw, exc, match):
    with pytest.raises(exc, match=match):
        threshold_mentor(**kw)


def test_bad_environment_objects_and_inputs():
    with pytest.raises(ValueError, match="horizon"):
        sim.run(mentor_hedge(), threshold_mentor(inputs=[0.1, 0.2]), horizon=3, n_reps=2)
    good = threshold_mentor()
    wide = ThresholdMentor("bad", 0.5, 1.0, lambda keys, t: np.full(keys.shape[0], 1.5), None, {})
    with pytest.raises(ValueError, match="inputs must lie in"):
        sim.run(mentor_hedge(), wide, horizon=5, n_reps=2)
    short = ThresholdMentor("short", 0.5, 1.0, lambda keys, t: np.zeros(1), None, {})
    with pytest.raises(ValueError, match="shape"):
        sim.run(mentor_hedge(), short, horizon=5, n_reps=3)
    with pytest.raises(TypeError, match="MentorAction"):
        good.step(None, np.zeros(3, dtype=np.int64), 0, KEYS)
    with pytest.raises(ValueError, match="bool query"):
        good.step(None, MentorAction(np.zeros(3, dtype=np.int64), np.zeros(3)), 0, KEYS)
    base = mentor_hedge()

    def act(state, x, keys):  # the same learner, not reporting its random queries
        action, state = base.act(state, x, keys)
        return action._replace(random_query=None), state

    def update(state, action, feedback, keys=None):
        return base.update(state, action._replace(random_query=np.zeros(action.query.shape, dtype=bool)), feedback)

    with pytest.raises(ValueError, match="random_query"):
        sim.run(base._replace(act=act, update=update), good, horizon=5, n_reps=2, metrics=["random_queries"])
