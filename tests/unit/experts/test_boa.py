"""BOA with multiple learning rates (Wintenberger 2017).

Expected values come from hand computation, from a scalar reference written
with explicit exponentials, from the potential bound evaluated on the
observed regrets (derived in the docstring of ``theorem_bound``), and from the
exact fair-coin answer.
"""

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import instances
from expertlab.testing import play_losses, random_losses
from expertlab.experts._boa import boa


drive = play_losses  # (p, r), both (n_reps, T, N)


def reference(losses, prior):
    """BOA with rates min(1/2, sqrt(ln(1/pi_i) / V_i)) on one sequence (T, N), plain exponentials."""
    horizon, n = losses.shape
    eta = [0.5] * n
    corr = [0.0] * n
    v = [0.0] * n
    out = []
    for t in range(horizon):
        w = [prior[i] * eta[i] * math.exp(eta[i] * corr[i]) for i in range(n)]
        p = [x / sum(w) for x in w]
        out.append(p)
        mix = sum(p[i] * losses[t, i] for i in range(n))
        for i in range(n):
            r = mix - losses[t, i]
            corr[i] += r - eta[i] * r * r
            v[i] += r * r
            eta[i] = min(0.5, math.sqrt(math.log(1.0 / prior[i]) / v[i])) if v[i] > 0 else 0.5
    return np.array(out)


def rates(r, prior):
    v = np.concatenate([np.zeros_like(r[:, :1]), np.cumsum(r * r, axis=1)], axis=1)
    safe = np.where(v > 0, v, 1.0)
    return np.where(v > 0, np.minimum(0.5, np.sqrt(np.log(1.0 / prior) / safe)), 0.5)


def theorem_bound(r, prior):
    """Potential bound for BOA with non-increasing rates eta <= 1/2 and |r| <= 1.

    e^{x - x^2} <= 1 + x (x >= -1/2) and sum_i p_i r_i = 0 give
    sum_i pi_i e^{eta_{i,t-1} Rt_{i,t}} <= sum_i pi_i e^{eta_{i,t-1} Rt_{i,t-1}};
    y^a <= y + (1/a - 1)/e (0 < a <= 1) moves each exponent to eta_{i,t}, so
    W_T = sum_i pi_i e^{eta_{i,T} Rt_{i,T}} <= 1 + (1/e) sum_t sum_i pi_i (eta_{i,t-1}/eta_{i,t} - 1)
    and R_{T,k} = Rt_{T,k} + sum_t eta_{k,t-1} r_{t,k}^2 <= (ln(1/pi_k) + ln W_T)/eta_{k,T} + sum_t eta r^2.
    """
    eta = rates(r, prior)
    drift = (prior * (eta[:, :-1] / eta[:, 1:] - 1.0)).sum(axis=(1, 2))
    return ((np.log(1.0 / prior) + np.log1p(drift / math.e)[:, None]) / eta[:, -1]
            + (eta[:, :-1] * r * r).sum(axis=1))


def test_two_rounds_two_experts_by_hand():
    # Round 1: eta = (1/2, 1/2), Rt = 0, p1 = (1/2, 1/2).  Losses (0, 1): r = (1/2, -1/2),
    # Rt1 = r - r^2/2 = (3/8, -5/8), V = 1/4 and sqrt(ln 2 / (1/4)) > 1/2, so eta stays 1/2:
    # p2 = softmax(Rt1 / 2) = (sigma(1/2), 1 - sigma(1/2)).
    learner = boa()
    state = learner.init(2, 1)
    p1 = learner.act(state)[0]
    np.testing.assert_allclose(p1, [[0.5, 0.5]], atol=1e-15)
    state = learner.update(state, p1, (np.array([[0.0, 1.0]]), None))
    p2 = learner.act(state)[0]
    s = 1.0 / (1.0 + math.exp(-0.5))
    np.testing.assert_allclose(p2, [[s, 1.0 - s]], rtol=1e-14)
    # Round 2: losses (1, 0): mix = s, r = (s - 1, s), Rt2 = Rt1 + r - r^2/2,
    # V = 1/4 + r^2 < 4 ln 2 so eta stays 1/2.
    state = learner.update(state, p2, (np.array([[1.0, 0.0]]), None))
    rt = np.array([0.375 + (s - 1) - (s - 1) ** 2 / 2, -0.625 + s - s * s / 2])
    q = np.exp(rt / 2) / np.exp(rt / 2).sum()
    np.testing.assert_allclose(learner.act(state)[0], q[None, :], rtol=1e-14)


def test_matches_scalar_reference_with_changing_rates():
    rng = np.random.default_rng(1)
    horizon, n = 80, 4
    losses = rng.random((1, horizon, n))
    losses[0, :, 2] = rng.random(horizon) < 0.5
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    ps, rs = drive(boa(prior), losses)
    assert rates(rs, prior)[0, -1].min() < 0.4  # the rates did change
    np.testing.assert_allclose(ps[0], reference(losses[0], prior), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("sleeping", [False, True])
def test_regret_within_the_potential_bound(sleeping):
    n_reps, horizon, n = 20, 300, 6
    losses, awake = random_losses(n_reps, horizon, n, seed=2, best_scale=0.6,
                                  p_awake=0.5 if sleeping else None)
    prior = np.array([0.3, 0.1, 0.1, 0.2, 0.2, 0.1])
    _, r = drive(boa(prior), losses, awake)
    assert np.all(r.sum(axis=1) <= theorem_bound(r, prior) + 1e-9)


def test_needle_regret_small_and_within_the_bound():
    n, horizon = 10, 2000
    res = sim.run(boa(), instances.needle(n, 0.5), horizon=horizon, n_reps=100, seed=5)
    assert res.mean()[-1] + 3 * res.stderr()[-1] < math.sqrt(horizon) / 4
    rng = np.random.default_rng(4)
    losses = (rng.random((10, horizon, n)) < 0.5).astype(float)
    losses[:, :, 0] = 0.0
    _, r = drive(boa(), losses)
    bound = theorem_bound(r, np.full(n, 1.0 / n))[:, 0]
    assert np.all(r.sum(axis=1)[:, 0] <= bound)
    assert np.all(bound < math.sqrt(horizon))



def test_weights_stay_finite_on_the_simplex_for_extreme_states():
    learner = boa()
    state = learner.init(3, 2)
    state = state._replace(surrogate=np.array([[2e6, 2e6 - 4.0, -2e6], [1e-12, -1e-12, 0.0]]),
                           eta=np.array([[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]),
                           variance=np.array([[1e6, 1e6, 1e6], [1e-24, 1e-24, 0.0]]))
    p = learner.act(state)[0]
    assert np.all(np.isfinite(p)) and np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-14)
    e = math.exp(-2.0)  # exponents differ by eta * 4 = 2
    np.testing.assert_allclose(p[0], [1 / (1 + e), e / (1 + e), 0.0], rtol=1e-12)
    np.testing.assert_allclose(p[1], 1 / 3, atol=1e-11)
    new = learner.update(state, p, (np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 1.0]]), None))
    assert np.all(np.isfinite(new.surrogate)) and np.all(np.isfinite(learner.act(new)[0]))


def test_point_mass_prior_plays_its_expert():
    # ln(1/pi) = 0 for the only expert with mass: its rate drops to 0 after the first
    # non-zero regret, every weight is 0, and the learner plays the prior.
    learner = boa(prior=[0.0, 1.0, 0.0])
    state = learner.init(3, 1)
    for loss in ([0.0, 1.0, 0.5], [1.0, 0.0, 0.2]):
        p = learner.act(state)[0]
        np.testing.assert_allclose(p, [[0.0, 1.0, 0.0]], atol=0)
        state = learner.update(state, p, (np.array([loss]), None))


def test_permutation_equivariance():
    rng = np.random.default_rng(0)
    losses = rng.random((4, 40, 5))
    prior = rng.dirichlet(np.ones(5))
    perm = rng.permutation(5)
    p, _ = drive(boa(prior), losses)
    p_perm, _ = drive(boa(prior[perm]), losses[:, :, perm])
    np.testing.assert_allclose(p_perm, p[:, :, perm], rtol=1e-10, atol=1e-13)


def test_awake_mask_zeroes_asleep_and_freezes_their_state():
    learner = boa()
    state = learner.init(3, 2)
    state = learner.update(state, learner.act(state)[0], (np.array([[0.2, 0.9, 0.4], [1.0, 0.0, 0.5]]), None))
    awake = np.array([[True, False, True], [False, True, True]])
    p = learner.act(state, awake, None)[0]
    assert np.all(p[~awake] == 0.0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-14)
    new = learner.update(state, p, (np.array([[0.7, 0.1, 0.3], [0.2, 0.6, 0.9]]), awake))
    for field in ("surrogate", "eta", "variance", "regret"):
        assert np.array_equal(getattr(new, field)[~awake], getattr(state, field)[~awake])


def test_bad_input():
    with pytest.raises(ValueError, match="prior"):
        boa(prior=[0.2, 0.2])
    with pytest.raises(ValueError, match="prior"):
        boa(prior=[2.0, -1.0])
    with pytest.raises(ValueError, match="prior"):
        boa(prior=[np.nan, 0.5, 0.5])
    with pytest.raises(ValueError, match="prior"):
        boa(prior=[])
    with pytest.raises(ValueError, match="prior"):
        boa(prior=[0.5, 0.5]).init(3, 1)
    learner = boa()
    state = learner.init(3, 2)
    p = learner.act(state)[0]
    with pytest.raises(ValueError, match="loss"):
        learner.update(state, p, (np.array([[0.0, np.nan, 0.0], [0.0, 0.0, 0.0]]), None))
    with pytest.raises(ValueError, match="loss"):
        learner.update(state, p, (np.zeros((2, 4)), None))


@pytest.mark.gpu
def test_cupy_matches_numpy():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(0)
    losses = rng.random((3, 20, 4))
    learner = boa()
    s_np, s_cp = learner.init(4, 3), learner.init(4, 3, xp=cp)
    for t in range(20):
        p_np, p_cp = learner.act(s_np)[0], learner.act(s_cp)[0]
        np.testing.assert_allclose(cp.asnumpy(p_cp), p_np, rtol=1e-12)
        s_np = learner.update(s_np, p_np, (losses[:, t], None))
        s_cp = learner.update(s_cp, p_cp, (cp.asarray(losses[:, t]), None))
