"""AdaNormalHedge (Luo & Schapire 2015), including its sleeping-experts use.

Expected values come from hand computation, from the weight formula
evaluated directly with exponentials where they do not overflow, from the
paper's potential bound evaluated on the observed regrets, and from the exact
fair-coin answer.
"""

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import instances
from expertlab.testing import play_losses, random_losses
from expertlab.experts._adanormalhedge import adanormalhedge, log_adanormalhedge_weight


def direct_weight(R, C):
    expo = lambda x: max(x, 0.0) ** 2 / (3.0 * (C + 1.0))  # noqa: E731
    if R <= 1.0:  # Phi(R - 1, C + 1) = 1: use expm1 to avoid exp(tiny) - 1
        return 0.5 * math.expm1(expo(R + 1.0))
    return 0.5 * (math.exp(expo(R + 1.0)) - math.exp(expo(R - 1.0)))


drive = play_losses  # (p, r), both (n_reps, T, N)


def bound(r, prior):
    """R_{T,k} <= sqrt(3 C_{T,k} ln(B_T / pi_k)), B_T = 1 + (3/2) sum_i pi_i (1 + ln(1 + C_{T,i}))."""
    c = np.abs(r).sum(axis=1)
    b = 1.0 + 1.5 * (prior * (1.0 + np.log1p(c))).sum(axis=1, keepdims=True)
    return np.sqrt(3.0 * c * np.log(b / prior))


def test_log_weight_matches_direct_formula():
    for R in [-3.0, -1.0, -0.999, -0.2, 0.0, 0.5, 1.0, 2.5, 10.0, 40.0]:
        for C in [0.0, 0.3, 1.0, 7.0, 50.0, 400.0]:
            w = direct_weight(R, C)
            got = float(np.exp(log_adanormalhedge_weight(np.array(R), np.array(C))))
            if w == 0.0:
                assert got == 0.0
            else:
                assert math.isclose(got, w, rel_tol=1e-12), (R, C, got, w)


def test_two_rounds_two_experts_by_hand():
    # Round 1: R = C = 0 for both, p1 = (1/2, 1/2).  Losses (0, 1): r = (1/2, -1/2), C = (1/2, 1/2).
    # w(1/2, 1/2) = (e^{(3/2)^2 / 4.5} - e^0) / 2 = (e^{1/2} - 1) / 2,
    # w(-1/2, 1/2) = (e^{(1/2)^2 / 4.5} - 1) / 2 = (e^{1/18} - 1) / 2.
    learner = adanormalhedge()
    state = learner.init(2, 1)
    p1 = learner.act(state)[0]
    np.testing.assert_allclose(p1, [[0.5, 0.5]], atol=1e-15)
    state = learner.update(state, p1, (np.array([[0.0, 1.0]]), None))
    a, b = math.exp(0.5) - 1.0, math.exp(1.0 / 18.0) - 1.0
    np.testing.assert_allclose(learner.act(state)[0], [[a / (a + b), b / (a + b)]], rtol=1e-13)
    # A prior multiplies the weights: (0.25, 0.75) -> proportional to (0.25 a, 0.75 b).
    learner = adanormalhedge(prior=[0.25, 0.75])
    state = learner.update(learner.init(2, 1), np.array([[0.5, 0.5]]), (np.array([[0.0, 1.0]]), None))
    np.testing.assert_allclose(learner.act(state)[0], [[0.25 * a / (0.25 * a + 0.75 * b),
                                                     0.75 * b / (0.25 * a + 0.75 * b)]], rtol=1e-13)


def test_all_weights_zero_falls_back_to_prior_on_awake():
    learner = adanormalhedge()
    state = learner.init(3, 2)
    state = state._replace(regret=np.full((2, 3), -2.0), abs_regret=np.full((2, 3), 5.0))
    p = learner.act(state, np.array([[True, True, True], [True, False, True]]), None)[0]
    np.testing.assert_allclose(p, [[1 / 3, 1 / 3, 1 / 3], [0.5, 0.0, 0.5]], atol=1e-15)
    learner = adanormalhedge(prior=[0.2, 0.3, 0.5])
    p = learner.act(learner.init(3, 1)._replace(regret=np.full((1, 3), -2.0)),
                    np.array([[True, False, True]]))[0]
    np.testing.assert_allclose(p, [[0.2 / 0.7, 0.0, 0.5 / 0.7]], rtol=1e-14)


def test_weights_stay_finite_on_the_simplex_for_extreme_regrets():
    learner = adanormalhedge()
    state = learner.init(3, 3)
    regret = np.array([[1e6, 1e6 - 3.0, -1e6], [1e-12, -1e-12, 0.0], [3e5, 2e5, 0.5]])
    abs_regret = np.array([[1e6, 1e6, 1e6], [1e-12, 1e-12, 0.0], [3e5, 3e5, 3e5]])
    p = learner.act(state._replace(regret=regret, abs_regret=abs_regret))[0]
    assert np.all(np.isfinite(p)) and np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-14)
    # Row 0: w ratio = exp(a_0 - a_1) (1 - e^{-4R_0/c}) / (1 - e^{-4R_1/c}) with c = 3(C+1), by hand.
    c = 3.0 * (1e6 + 1.0)
    a0, a1 = (1e6 + 1.0) ** 2 / c, (1e6 - 2.0) ** 2 / c
    ratio = math.exp(a0 - a1) * (-math.expm1(-4e6 / c)) / (-math.expm1(-4 * (1e6 - 3.0) / c))
    assert math.isclose(p[0, 0] / p[0, 1], ratio, rel_tol=1e-7)
    assert p[0, 2] == 0.0
    # Row 1: regrets of 1e-12 leave the weights equal to first order: w ~ (e^{1/3} - 1)/2 each.
    np.testing.assert_allclose(p[1], 1 / 3, atol=1e-11)
    assert p[2, 0] == 1.0


def test_permutation_equivariance():
    rng = np.random.default_rng(0)
    losses = rng.random((4, 40, 5))
    prior = rng.dirichlet(np.ones(5))
    perm = rng.permutation(5)
    p, _ = drive(adanormalhedge(prior), losses)
    p_perm, _ = drive(adanormalhedge(prior[perm]), losses[:, :, perm])
    np.testing.assert_allclose(p_perm, p[:, :, perm], rtol=1e-10, atol=1e-13)


def test_awake_mask_zeroes_asleep_and_freezes_their_state():
    learner = adanormalhedge()
    state = learner.init(3, 2)
    state = learner.update(state, learner.act(state)[0], (np.array([[0.2, 0.9, 0.4], [1.0, 0.0, 0.5]]), None))
    awake = np.array([[True, False, True], [False, True, True]])
    p = learner.act(state, awake, None)[0]
    assert np.all(p[~awake] == 0.0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-14)
    loss = np.array([[0.7, 0.1, 0.3], [0.2, 0.6, 0.9]])
    new = learner.update(state, p, (loss, awake))
    assert np.array_equal(new.regret[~awake], state.regret[~awake])
    assert np.array_equal(new.abs_regret[~awake], state.abs_regret[~awake])
    r = (p * loss).sum(axis=1, keepdims=True) - loss
    np.testing.assert_allclose(new.abs_regret[awake], (state.abs_regret + np.abs(r))[awake], atol=1e-15)


@pytest.mark.parametrize("sleeping", [False, True])
def test_regret_within_the_paper_bound(sleeping):
    n_reps, horizon, n = 20, 300, 6
    losses, awake = random_losses(n_reps, horizon, n, seed=2, best_scale=0.6,
                                  p_awake=0.3 if sleeping else None)
    prior = np.array([0.3, 0.1, 0.1, 0.2, 0.2, 0.1])
    _, r = drive(adanormalhedge(prior), losses, awake)
    assert np.all(r.sum(axis=1) <= bound(r, prior) + 1e-9)


def test_sleeping_regret_on_sleeping_iid_uniform():
    # Every expert's regret on its own awake rounds obeys R_k <= sqrt(3 C_k ln(B/pi_k)) with
    # C_k <= (awake rounds of k) <= T and B <= 1 + (3/2)(1 + ln(1 + T)): a sqrt(T ln ln T) bound.
    n, horizon = 8, 1000
    inst = instances.sleeping(instances.iid_uniform(n), 0.3)
    res = sim.run(adanormalhedge(), inst, horizon=horizon, n_reps=200, seed=7)
    b_max = 1.0 + 1.5 * (1.0 + math.log1p(horizon))
    sleeping_regret = res.metric("sleeping_regret")
    assert np.all(sleeping_regret[-1] <= math.sqrt(3.0 * horizon * math.log(b_max * n)))
    # The same holds for every expert separately, not only for the worst one.
    expert_regret = res.final["expert_regret"]
    assert np.all(np.isfinite(expert_regret))
    assert np.all(expert_regret <= math.sqrt(3.0 * horizon * math.log(b_max * n)))


def test_needle_regret_is_bounded():
    # Expert 0 never errs: r_0 = <p, l> >= 0, so C_0 = R_0 and R_0 <= sqrt(3 R_0 ln(B/pi_0))
    # gives R_0 <= 3 ln(B N) with B <= 1 + (3/2)(1 + ln(1 + T)).
    n, horizon = 10, 2000
    res = sim.run(adanormalhedge(), instances.needle(n, 0.5), horizon=horizon, n_reps=100, seed=5)
    cap = 3.0 * math.log(n * (1.0 + 1.5 * (1.0 + math.log1p(horizon))))
    assert np.all(res.metrics["regret"][-1] <= cap)
    assert res.mean()[-1] + 3 * res.stderr()[-1] < math.sqrt(horizon) / 4



def test_bad_input():
    with pytest.raises(ValueError, match="prior"):
        adanormalhedge(prior=[0.3, 0.3, 0.3])
    with pytest.raises(ValueError, match="prior"):
        adanormalhedge(prior=[1.2, -0.2])
    with pytest.raises(ValueError, match="prior"):
        adanormalhedge(prior=[np.nan])
    with pytest.raises(TypeError, match="prior"):
        adanormalhedge(prior={"a": 1.0})
    with pytest.raises(ValueError, match="prior"):
        adanormalhedge(prior=[1.0]).init(2, 2)
    learner = adanormalhedge()
    state = learner.init(3, 2)
    p = learner.act(state)[0]
    with pytest.raises(ValueError, match="loss"):
        learner.update(state, p, (np.array([[0.0, 0.0, np.nan], [0.0, 0.0, 0.0]]), None))
    with pytest.raises(TypeError, match="awake"):
        learner.update(state, p, (np.zeros((2, 3)), np.ones((2, 3))))


@pytest.mark.gpu
def test_cupy_matches_numpy():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(0)
    losses = rng.random((3, 20, 4))
    awake = rng.random((3, 20, 4)) < 0.6
    awake[:, :, 0] = True
    learner = adanormalhedge()
    s_np, s_cp = learner.init(4, 3), learner.init(4, 3, xp=cp)
    for t in range(20):
        p_np, p_cp = learner.act(s_np, awake[:, t], None)[0], learner.act(s_cp, cp.asarray(awake[:, t]), None)[0]
        np.testing.assert_allclose(cp.asnumpy(p_cp), p_np, rtol=1e-12)
        s_np = learner.update(s_np, p_np, (losses[:, t], awake[:, t]))
        s_cp = learner.update(s_cp, p_cp, (cp.asarray(losses[:, t]), cp.asarray(awake[:, t])))
