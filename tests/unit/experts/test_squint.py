"""Squint with the uniform prior on eta in [0, 1/2] (Koolen & van Erven 2015).

Expected values come from the defining integral (scipy.integrate.quad), from
the naive erf closed form worked out below, from the potential lemma of the
paper, and from the exact fair-coin answer.
"""

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import erf

from expertlab import sim
from expertlab.experts import instances
from expertlab.testing import play_losses, random_losses
from expertlab.experts._squint import log_squint_evidence, squint


def quad_log_evidence(R, V):
    """log int_0^{1/2} eta exp(eta R - eta^2 V) d eta by adaptive quadrature around the peak."""
    c = 0.5
    if V > 0:
        top = min(max(R / (2 * V), 0.0), c)
    else:
        top = c if R > 0 else 0.0
    g = top * R - top * top * V
    slope = abs(R - 2 * V * top)
    width = min(1.0 / slope if slope > 0 else math.inf, 1.0 / math.sqrt(V) if V > 0 else math.inf, c)
    pts = sorted({min(max(top + k * width, 0.0), c) for k in (-30, -10, -3, -1, 1, 3, 10, 30)} - {0.0, c})
    val, _ = quad(lambda x: x * math.exp(x * R - x * x * V - g), 0.0, c, points=pts or None,
                  limit=500, epsabs=0.0, epsrel=1e-13)
    return g + math.log(val)


def erf_evidence(R, V):
    """Closed form for V > 0, completing the square by hand:
    int_0^{1/2} eta e^{eta R - eta^2 V} = (1 - e^{R/2 - V/4}) / (2V)
        + R sqrt(pi) / (4 V^{3/2}) e^{R^2/(4V)} [erf(R / (2 sqrt V)) + erf((V - R) / (2 sqrt V))]."""
    s = math.sqrt(V)
    return ((1 - math.exp(R / 2 - V / 4)) / (2 * V)
            + R * math.sqrt(math.pi) / (4 * V * s) * math.exp(R * R / (4 * V))
            * (erf(R / (2 * s)) + erf((V - R) / (2 * s))))


def drive(learner, losses, awake=None):
    """The instantaneous regrets (n_reps, T, N) of ``learner`` on ``losses``."""
    return play_losses(learner, losses, awake)[1]


GRID = [0.0, 1e-12, 1e-6, 0.3, 2.0, 40.0, 1e3, 1e6]


@pytest.mark.parametrize("V", [0.0, 1e-10, 0.5, 3.0, 100.0, 1e4, 1e6])
def test_evidence_matches_quadrature(V):
    for R in sorted(set(GRID + [-x for x in GRID] + [V, 0.999 * V, 1.001 * V, V / 2])):
        got = float(log_squint_evidence(np.array(R), np.array(V)))
        want = quad_log_evidence(R, V)
        assert abs(got - want) <= 1e-9 * max(1.0, abs(want)), (R, V, got, want)


def test_evidence_matches_erf_closed_form_at_moderate_values():
    for R, V in [(0.5, 0.25), (-0.5, 0.25), (3.0, 2.0), (-2.0, 7.0), (1.0, 1.0)]:
        assert math.isclose(float(np.exp(log_squint_evidence(np.array(R), np.array(V)))),
                            erf_evidence(R, V), rel_tol=1e-11)
    # V = 0, R = 0: int_0^{1/2} eta d eta = 1/8
    assert math.isclose(float(np.exp(log_squint_evidence(np.array(0.0), np.array(0.0)))), 0.125, rel_tol=1e-14)


def test_two_rounds_two_experts_by_hand():
    # Round 1: R = V = 0 for both, so p1 = (1/2, 1/2).  Losses (0, 1) give
    # r = (1/2, -1/2), V = (1/4, 1/4), so p2 is proportional to
    # (I(1/2, 1/4), I(-1/2, 1/4)) with I the erf closed form.
    learner = squint()
    state = learner.init(2, 1)
    p1 = learner.act(state)[0]
    np.testing.assert_allclose(p1, [[0.5, 0.5]], rtol=0, atol=1e-15)
    state = learner.update(state, p1, (np.array([[0.0, 1.0]]), None))
    p2 = learner.act(state)[0]
    a, b = erf_evidence(0.5, 0.25), erf_evidence(-0.5, 0.25)
    np.testing.assert_allclose(p2, [[a / (a + b), b / (a + b)]], rtol=1e-12)
    # with a prior (0.2, 0.8) the posterior is reweighted by it
    learner = squint(prior=[0.2, 0.8])
    state = learner.init(2, 1)
    np.testing.assert_allclose(learner.act(state)[0], [[0.2, 0.8]], rtol=1e-14)


def test_weights_stay_finite_on_the_simplex_for_extreme_regrets():
    learner = squint()
    state = learner.init(4, 3)
    regret = np.array([[1e6, 1e6 - 1.0, -1e6, 0.0],
                       [1e-12, -1e-12, 0.0, 3e-13],
                       [5e5, 4e5, 3e5, 2e5]])
    variance = np.array([[1e6, 1e6, 1e6, 0.0],
                         [1e-24, 1e-24, 0.0, 1e-20],
                         [1e3, 1e3, 1e3, 1e3]])
    p = learner.act(state._replace(regret=regret, variance=variance))[0]
    assert np.all(np.isfinite(p)) and np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # Row 0: ratio of the two leaders is exp(log I(1e6, 1e6) - log I(1e6 - 1, 1e6)) by quadrature.
    ratio = math.exp(quad_log_evidence(1e6, 1e6) - quad_log_evidence(1e6 - 1.0, 1e6))
    assert math.isclose(p[0, 0] / p[0, 1], ratio, rel_tol=1e-8)
    assert p[0, 2] == 0.0 and p[0, 3] == 0.0  # underflow to exactly zero, no NaN
    # Row 1: regrets of 1e-12 leave the prior (uniform) almost untouched.
    np.testing.assert_allclose(p[1], 0.25, atol=1e-11)
    # Row 2: the largest regret dominates: I(5e5, 1e3) / I(4e5, 1e3) ~ e^{(5e5 - 4e5)/2}.
    assert p[2, 0] == 1.0


def test_permutation_equivariance():
    rng = np.random.default_rng(0)
    n_reps, horizon, n = 4, 30, 5
    losses = rng.random((n_reps, horizon, n))
    prior = rng.dirichlet(np.ones(n))
    perm = rng.permutation(n)
    r = drive(squint(prior), losses)
    r_perm = drive(squint(prior[perm]), losses[:, :, perm])
    np.testing.assert_allclose(r_perm, r[:, :, perm], rtol=1e-10, atol=1e-12)


def test_awake_mask_zeroes_asleep_and_freezes_their_state():
    learner = squint()
    state = learner.init(3, 2)
    state = learner.update(state, learner.act(state)[0], (np.array([[0.2, 0.9, 0.4], [1.0, 0.0, 0.5]]), None))
    awake = np.array([[True, False, True], [False, True, True]])
    p = learner.act(state, awake, None)[0]
    assert np.all(p[~awake] == 0.0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-14)
    loss = np.array([[0.7, 0.1, 0.3], [0.2, 0.6, 0.9]])
    new = learner.update(state, p, (loss, awake))
    assert np.array_equal(new.regret[~awake], state.regret[~awake])
    assert np.array_equal(new.variance[~awake], state.variance[~awake])
    mix = (p * loss).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(new.regret[awake], (state.regret + mix - loss)[awake], atol=1e-15)


def test_prior_zero_on_all_awake_experts_falls_back_to_uniform_on_awake():
    learner = squint(prior=[0.0, 0.0, 1.0])
    state = learner.init(3, 1)
    p = learner.act(state, np.array([[True, True, False]]), None)[0]
    np.testing.assert_allclose(p, [[0.5, 0.5, 0.0]], atol=1e-15)



@pytest.mark.parametrize("sleeping", [False, True])
def test_potential_never_exceeds_one(sleeping):
    # Lemma 1 of the paper: sum_i pi_i E_{eta ~ U[0,1/2]} exp(eta R_i - eta^2 V_i) <= 1 at every T.
    n_reps, horizon, n = 12, 120, 4
    losses, awake = random_losses(n_reps, horizon, n, seed=3, best_scale=0.5,
                                  p_awake=0.5 if sleeping else None)
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    r = drive(squint(prior), losses, awake)
    R, V = r.sum(axis=1), (r * r).sum(axis=1)
    for i in range(n_reps):
        pot = sum(prior[k] * 2 * quad(lambda e: math.exp(e * R[i, k] - e * e * V[i, k]), 0, 0.5)[0]
                  for k in range(n))
        assert pot <= 1.0 + 1e-9


def test_needle_regret_is_bounded_by_the_potential_lemma():
    # Expert 0 never errs, so r_0 = <p, l> in [0, 1], V_0 <= R_0 and the lemma
    # pi_0 * 2 int_0^{1/2} e^{eta R_0 - eta^2 V_0} <= 1 gives
    # 2 int_0^{1/2} e^{R_0 (eta - eta^2)} d eta <= N: a bound R* independent of T.
    n, horizon = 10, 2000
    f = lambda R: 2 * quad(lambda e: math.exp(R * (e - e * e)), 0, 0.5)[0] - n  # noqa: E731
    r_star = brentq(f, 0.0, 200.0)
    res = sim.run(squint(), instances.needle(n, 0.5), horizon=horizon, n_reps=40, seed=5)
    final = res.metrics["regret"][-1]
    assert np.all(final <= r_star + 1e-9)
    assert res.mean()[-1] + 3 * res.stderr()[-1] < math.sqrt(horizon) / 4


def test_bad_input():
    with pytest.raises(ValueError, match="prior"):
        squint(prior=[0.5, 0.4])
    with pytest.raises(ValueError, match="prior"):
        squint(prior=[1.5, -0.5])
    with pytest.raises(ValueError, match="prior"):
        squint(prior=[np.nan, 1.0])
    with pytest.raises(ValueError, match="prior"):
        squint(prior=np.eye(2) / 2)
    with pytest.raises(TypeError, match="prior"):
        squint(prior="uniform")
    with pytest.raises(ValueError, match="prior"):
        squint(prior=[0.5, 0.5]).init(3, 4)
    learner = squint()
    state = learner.init(3, 2)
    p = learner.act(state)[0]
    with pytest.raises(ValueError, match="loss"):
        learner.update(state, p, (np.array([[0.1, np.nan, 0.2], [0.0, 0.0, 0.0]]), None))
    with pytest.raises(ValueError, match="p"):
        learner.update(state, p[:, :2], (np.zeros((2, 3)), None))
    with pytest.raises(ValueError, match="n_experts"):
        learner.init(0, 2)


@pytest.mark.gpu
def test_cupy_matches_numpy():
    cp = pytest.importorskip("cupy")
    R = np.array([[0.0, 3.0, -2.0, 1e6], [0.5, 1e-9, 40.0, -1e3]])
    V = np.array([[0.0, 2.0, 5.0, 1e6], [0.25, 1e-18, 30.0, 1e4]])
    np.testing.assert_allclose(cp.asnumpy(log_squint_evidence(cp.asarray(R), cp.asarray(V))),
                               log_squint_evidence(R, V), rtol=1e-12)
