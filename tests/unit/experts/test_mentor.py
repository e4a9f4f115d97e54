"""Asking a mentor: hand-worked rounds, the instance, the baseline, batching, seeds and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from expertlab.experts import MentorInstance, ask_mentor, threshold_mentor
from expertlab.experts._claims_mentor import no_query_survival

REPS = np.arange(3, dtype=np.uint64)


# -- the instance ------------------------------------------------------------

def test_payoff_by_hand():
    inst = threshold_mentor(0.5, lipschitz=2.0)
    x = np.array([0.1, 0.5, 0.7, 0.9])
    assert inst.mentor_action(x).tolist() == [0, 1, 1, 1]
    # right action: 1; wrong action: max(0, 1 - 2 |x - 1/2|) = 0.2, 1, 0.6, 0.2
    np.testing.assert_allclose(inst.payoff(x, [0, 1, 1, 1]), 1.0)
    np.testing.assert_allclose(inst.payoff(x, [1, 0, 0, 0]), [0.2, 1.0, 0.6, 0.2])
    # far from the boundary the wrong action is a certain catastrophe
    np.testing.assert_allclose(threshold_mentor(0.5, lipschitz=3.0).payoff(np.array([1.0]), [0]), 0.0)


def test_local_generalisation_holds_on_a_grid():
    # mu(x, pi_m(x')) >= mu(x, pi_m(x)) - L |x - x'| for every pair
    inst = threshold_mentor(0.3, lipschitz=1.7)
    g = np.linspace(0, 1, 101)
    X, Xp = np.meshgrid(g, g, indexing="ij")
    lhs = inst.payoff(X, inst.mentor_action(Xp))
    assert np.all(lhs >= 1.0 - 1.7 * np.abs(X - Xp) - 1e-12)


def test_input_sequences_by_hand():
    sweep = threshold_mentor(inputs="sweep")
    assert [sweep.inputs(np.uint64(0), REPS, t)[0] for t in range(4)] == [0.5, 0.25, 0.75, 0.125]
    b = threshold_mentor(0.5, inputs="boundary", width=0.1)
    got = [b.inputs(np.uint64(0), REPS, t)[0] for t in range(4)]
    np.testing.assert_allclose(got, [0.55, 0.45, 0.525, 0.475])
    edge = threshold_mentor(1.0, inputs="boundary", width=0.1)
    assert edge.inputs(np.uint64(0), REPS, 0)[0] == 1.0  # clipped to [0, 1]
    x = threshold_mentor(inputs="iid").inputs(np.uint64(5), np.arange(200, dtype=np.uint64), 7)
    assert x.shape == (200,) and np.all((x > 0) & (x < 1)) and np.unique(x).size == 200
    assert abs(x.mean() - 0.5) < 4 * math.sqrt(1 / 12 / 200)


# -- hand-worked runs ----------------------------------------------------------

def test_always_asking_is_the_mentor():
    res = ask_mentor(threshold_mentor(0.5, inputs="iid"), 50, n_reps=5, seed=1, query_prob=1.0)
    assert res.n_queries.tolist() == [50] * 5 and res.n_random_queries.tolist() == [50] * 5
    np.testing.assert_array_equal(res.log_product, 0.0)
    np.testing.assert_array_equal(res.multiplicative_regret, 0.0)
    assert not res.catastrophe.any() and res.n_mistakes.sum() == 0


def test_wrong_proposals_without_support_are_asked():
    # x = 0.2 three times, mentor threshold 1/2, class {theta = 0 (says 1), theta = 1 (says 0)}, no random
    # queries.  Round 0 is unfamiliar: ask.  Then the uniform Hedge proposes 1 (wrong) w.p. 1/2, which no
    # queried input supports, so it asks; proposing 0 it acts, correctly.  No mistake is ever made.
    inst = threshold_mentor(0.5, inputs=[0.2, 0.2, 0.2])
    res = ask_mentor(inst, 3, n_reps=2000, seed=0, n_thresholds=2, radius=0.01, query_prob=0.0)
    assert res.n_mistakes.sum() == 0 and np.all(res.multiplicative_regret == 0)
    # every query after the first answers a wrong proposal of round 1 or 2
    hedge_wrong_after_0 = res.hedge_mistakes - (res.n_queries - 1)
    assert set(np.unique(hedge_wrong_after_0)) <= {0, 1}  # round 0's proposal may be wrong as well
    assert abs(res.n_queries.mean() - 2.0) < 4 * math.sqrt(0.5 / 2000)


def test_supported_wrong_action_costs_at_most_L_eps():
    # x = 0.45 (label 0) then 0.55 (label 1) four times, radius 0.2: after round 0, proposing 0 at 0.55 is
    # supported by the queried 0.45 and is a mistake of cost L |0.55 - 0.5| = 0.05; proposing 1 is right
    inst = threshold_mentor(0.5, lipschitz=1.0, inputs=[0.45, 0.55, 0.55, 0.55, 0.55])
    res = ask_mentor(inst, 5, n_reps=1000, seed=2, n_thresholds=2, radius=0.2, query_prob=0.0)
    np.testing.assert_allclose(res.additive_regret, 0.05 * res.n_mistakes, atol=1e-12)
    np.testing.assert_allclose(res.log_product, res.n_mistakes * math.log(0.95), atol=1e-12)
    np.testing.assert_allclose(res.multiplicative_regret, 1 - 0.95 ** res.n_mistakes, atol=1e-12)
    # each of rounds 1..4 proposes 0 with probability 1/2
    assert abs(res.n_mistakes.mean() - 2.0) < 4 * math.sqrt(1.0 / 1000)
    # round 0 is asked; the first proposal of 1 is unsupported and asked, later ones act (rightly)
    np.testing.assert_array_equal(res.n_queries, 1 + (res.n_mistakes < 4))


@pytest.mark.parametrize("kind", ["iid", "sweep", "boundary"])
def test_deterministic_bounds_on_every_replication(kind):
    inst = threshold_mentor(0.5, lipschitz=1.3, inputs=kind, width=0.02)
    res = ask_mentor(inst, 1500, n_reps=40, seed=3)
    eps = res.radius
    assert np.all(res.multiplicative_regret <= res.additive_regret + 1e-12)
    assert np.all(res.additive_regret <= 1.3 * eps * res.n_mistakes + 1e-12)
    # random queries + wrong proposals + eps-separated queries of each label
    assert np.all(res.n_queries <= res.n_random_queries + res.hedge_mistakes + 2 * (math.floor(1 / eps) + 1))
    assert np.all(res.n_mistakes <= res.hedge_mistakes)


def test_default_tuning():
    res = ask_mentor(threshold_mentor(), 1000, n_reps=2, seed=0)
    assert res.radius == pytest.approx(0.01) and res.query_prob == pytest.approx(0.1)
    assert res.eta == res.query_prob and res.n_thresholds == 33


# -- the no-query baseline ---------------------------------------------------

def test_no_query_baseline_survival_is_exact():
    inst = threshold_mentor(0.5, inputs="iid")
    res = ask_mentor(inst, 5, n_reps=4000, seed=4, allow_queries=False)
    assert res.n_queries.sum() == 0 and res.n_random_queries.sum() == 0
    surv = np.exp(res.log_product)
    m = no_query_survival(33)
    # m = 1 - (1/33) sum_k (k/32 - 1/2)^2 / 2 = 1 - 2.921875 / 66
    assert m == pytest.approx(1 - 2.921875 / 66)
    assert abs(surv.mean() - m ** 5) < 4 * surv.std(ddof=1) / math.sqrt(4000)
    assert abs((~res.catastrophe).mean() - m ** 5) < 4 * math.sqrt(0.25 / 4000)


def test_no_query_survival_past_the_catastrophe_distance():
    # L = 4: the wrong action is a certain catastrophe beyond 1/4 of the boundary; N = 2 policies each lose
    # int_0^{1/2} min(1, 4s) ds = 4 (1/4)^2 / 2 + 1/4 = 3/8
    assert no_query_survival(2, 0.5, 4.0) == pytest.approx(1 - 3 / 8)


def test_asking_avoids_catastrophe_where_the_baseline_does_not():
    inst = threshold_mentor(0.5, inputs="iid")
    ask = ask_mentor(inst, 300, n_reps=200, seed=5)
    base = ask_mentor(inst, 300, n_reps=200, seed=5, allow_queries=False)
    assert base.catastrophe.all()
    assert ask.catastrophe.mean() < 0.2


# -- batching, seeds, checkpoints --------------------------------------------

def test_batch_independence_and_seeds():
    inst = threshold_mentor(0.4, inputs="iid")
    a = ask_mentor(inst, 400, n_reps=10, seed=7)
    b = ask_mentor(inst, 400, n_reps=4, seed=7, rep_offset=6)
    for f in ("log_product", "n_queries", "n_mistakes", "hedge_mistakes", "catastrophe", "queries_path"):
        np.testing.assert_array_equal(getattr(a, f)[..., 6:], getattr(b, f))
    c = ask_mentor(inst, 400, n_reps=10, seed=7)
    np.testing.assert_array_equal(a.n_queries, c.n_queries)
    d = ask_mentor(inst, 400, n_reps=10, seed=8)
    assert not np.array_equal(a.queries_path, d.queries_path)


def test_checkpoint_paths():
    res = ask_mentor(threshold_mentor(inputs="boundary", width=0.05), 500, n_reps=6, seed=0,
                     checkpoints=[1, 10, 100, 500])
    assert res.checkpoints.tolist() == [1, 10, 100, 500]
    assert res.queries_path[0].tolist() == [1] * 6  # round 1 is always unfamiliar
    np.testing.assert_array_equal(res.queries_path[-1], res.n_queries)
    np.testing.assert_array_equal(res.log_product_path[-1], res.log_product)
    assert np.all(np.diff(res.queries_path, axis=0) >= 0) and np.all(np.diff(res.log_product_path, axis=0) <= 0)
    np.testing.assert_allclose(res.query_rate, res.n_queries / 500)


# -- validation ----------------------------------------------------------------

@pytest.mark.parametrize("kw, exc, match", [
    (dict(horizon=0), ValueError, "horizon"), (dict(horizon=2.5), TypeError, "horizon"),
    (dict(n_reps=0), ValueError, "n_reps"), (dict(n_thresholds=1), ValueError, "n_thresholds"),
    (dict(radius=0.0), ValueError, "radius"), (dict(radius=1e-9), ValueError, "radius"), (dict(radius=float("nan")), ValueError, "radius"),
    (dict(query_prob=1.5), ValueError, "query_prob"), (dict(query_prob=float("inf")), ValueError, "query_prob"),
    (dict(eta=0.0), ValueError, "eta"), (dict(allow_queries="yes"), TypeError, "allow_queries"),
    (dict(checkpoints=[5, 3]), ValueError, "checkpoints"), (dict(checkpoints=[0, 5]), ValueError, "checkpoints"),
    (dict(checkpoints=[1.0, 5.0]), ValueError, "checkpoints"), (dict(checkpoints=[1, 99]), ValueError, "checkpoints"),
    (dict(seed=-1), ValueError, "seed"), (dict(rep_offset=-1), ValueError, "rep_offset"),
])
def test_bad_arguments(kw, exc, match):
    args = dict(horizon=20, n_reps=2)
    args.update(kw)
    horizon = args.pop("horizon")
    with pytest.raises(exc, match=match):
        ask_mentor(threshold_mentor(), horizon, **args)


@pytest.mark.parametrize("kw, exc, match", [
    (dict(threshold=1.5), ValueError, "threshold"), (dict(threshold=float("nan")), ValueError, "threshold"),
    (dict(lipschitz=0.0), ValueError, "lipschitz"), (dict(width=-1.0), ValueError, "width"),
    (dict(inputs="gaussian"), ValueError, "inputs"), (dict(inputs=[0.2, 1.2]), ValueError, "inputs"),
    (dict(inputs=[0.2, float("nan")]), ValueError, "inputs"), (dict(inputs=[[0.1]]), ValueError, "inputs"),
    (dict(inputs=[]), ValueError, "inputs"),
])
def test_bad_instances(kw, exc, match):
    with pytest.raises(exc, match=match):
        threshold_mentor(**kw)


def test_bad_instance_objects_and_inputs():
    with pytest.raises(TypeError, match="instance"):
        ask_mentor("threshold", 10)
    with pytest.raises(ValueError, match="horizon"):
        ask_mentor(threshold_mentor(inputs=[0.1, 0.2]), 3)
    good = threshold_mentor()
    wide = MentorInstance("bad", 0.5, 1.0, lambda s, reps, t: np.full(reps.size, 1.5), None, {})
    with pytest.raises(ValueError, match="inputs must lie in"):
        ask_mentor(wide, 5, n_reps=2)
    short = good._replace(inputs=lambda s, reps, t: np.zeros(1))
    with pytest.raises(ValueError, match="shape"):
        ask_mentor(short, 5, n_reps=3)
