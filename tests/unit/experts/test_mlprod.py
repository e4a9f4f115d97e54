"""ML-Prod (Gaillard, Stoltz & van Erven 2014).

Expected values come from hand computation, from a scalar reference that runs
the paper's multiplicative update on the weights themselves (not in log
space), from the paper's regret bound evaluated on the observed regrets, and
from the exact fair-coin answer.
"""

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import instances
from expertlab.testing import play_losses, random_losses
from expertlab.experts._mlprod import ml_prod


drive = play_losses  # (p, r), both (n_reps, T, N)


def reference(losses, prior):
    """The paper's ML-Prod on one loss sequence (T, N), with plain weights w_{i,t}."""
    horizon, n = losses.shape
    ln_n = math.log(n)
    w = list(prior)
    eta = [min(0.5, math.sqrt(ln_n))] * n
    v = [0.0] * n
    out = []
    for t in range(horizon):
        z = sum(eta[j] * w[j] for j in range(n))
        p = [eta[i] * w[i] / z for i in range(n)]
        out.append(p)
        mix = sum(p[i] * losses[t, i] for i in range(n))
        for i in range(n):
            r = mix - losses[t, i]
            v[i] += r * r
            new_eta = min(0.5, math.sqrt(ln_n / (1.0 + v[i])))
            w[i] = (w[i] * (1.0 + eta[i] * r)) ** (new_eta / eta[i])
            eta[i] = new_eta
    return np.array(out)


def rates(r, n):
    """eta_{i,t} for t = 0..T from the instantaneous regrets r (n_reps, T, N)."""
    v = np.concatenate([np.zeros_like(r[:, :1]), np.cumsum(r * r, axis=1)], axis=1)
    return np.minimum(0.5, np.sqrt(math.log(n) / (1.0 + v)))


def theorem_bound(r, prior):
    """R_{T,k} <= ln(1/pi_k)/eta_{k,0} + sum_t eta_{k,t-1} r_{t,k}^2
    + ln(1 + (1/e) sum_t sum_j (eta_{j,t-1}/eta_{j,t} - 1)) / eta_{k,T}."""
    eta = rates(r, r.shape[2])
    drift = (eta[:, :-1] / eta[:, 1:] - 1.0).sum(axis=(1, 2))
    return (np.log(1.0 / prior) / eta[:, 0] + (eta[:, :-1] * r * r).sum(axis=1)
            + np.log1p(drift / math.e)[:, None] / eta[:, -1])


def test_two_rounds_two_experts_by_hand():
    # N = 2: eta_0 = min(1/2, sqrt(ln 2)) = 1/2 and sqrt(ln 2 / (1 + V)) > 1/2 while V < 1.77,
    # so the rate stays 1/2 over these two rounds.
    # Round 1: p1 = (1/2, 1/2), losses (0, 1): r = (1/2, -1/2),
    #          w1 = (1/2 * 5/4, 1/2 * 3/4) = (0.625, 0.375) = p2.
    # Round 2: losses (1, 0): mix = 0.625, r = (-0.375, 0.625),
    #          w2 = (0.625 * (1 - 0.1875), 0.375 * (1 + 0.3125)) = (0.5078125, 0.4921875) = p3.
    learner = ml_prod()
    state = learner.init(2, 1)
    p1 = learner.act(state)[0]
    np.testing.assert_allclose(p1, [[0.5, 0.5]], atol=1e-15)
    state = learner.update(state, p1, (np.array([[0.0, 1.0]]), None))
    p2 = learner.act(state)[0]
    np.testing.assert_allclose(p2, [[0.625, 0.375]], rtol=1e-14)
    state = learner.update(state, p2, (np.array([[1.0, 0.0]]), None))
    np.testing.assert_allclose(learner.act(state)[0], [[0.5078125, 0.4921875]], rtol=1e-14)


def test_matches_scalar_reference_with_changing_rates():
    rng = np.random.default_rng(1)
    horizon, n = 80, 4
    losses = rng.random((1, horizon, n))
    losses[0, :, 2] = rng.random(horizon) < 0.5  # 0/1 losses drive the rates below the cap
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    ps, rs = drive(ml_prod(prior), losses)
    assert rates(rs, n)[0, -1].min() < 0.4  # the rates did change
    np.testing.assert_allclose(ps[0], reference(losses[0], prior), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("sleeping", [False, True])
def test_regret_within_the_paper_bound(sleeping):
    n_reps, horizon, n = 20, 300, 6
    losses, awake = random_losses(n_reps, horizon, n, seed=2, best_scale=0.6,
                                  p_awake=0.5 if sleeping else None)
    prior = np.array([0.3, 0.1, 0.1, 0.2, 0.2, 0.1])
    _, r = drive(ml_prod(prior), losses, awake)
    assert np.all(r.sum(axis=1) <= theorem_bound(r, prior) + 1e-9)


def test_needle_regret_small_and_within_the_paper_bound():
    n, horizon = 10, 2000
    res = sim.run(ml_prod(), instances.needle(n, 0.5), horizon=horizon, n_reps=100, seed=5)
    assert res.mean()[-1] + 3 * res.stderr()[-1] < math.sqrt(horizon) / 4
    # The same instance, with the regret path kept, against the bound.
    rng = np.random.default_rng(4)
    losses = (rng.random((10, horizon, n)) < 0.5).astype(float)
    losses[:, :, 0] = 0.0
    _, r = drive(ml_prod(), losses)
    bound = theorem_bound(r, np.full(n, 1.0 / n))[:, 0]
    assert np.all(r.sum(axis=1)[:, 0] <= bound)
    assert np.all(bound < math.sqrt(horizon))



def test_weights_stay_finite_on_the_simplex_for_extreme_states():
    learner = ml_prod()
    state = learner.init(3, 2)
    state = state._replace(log_weight=np.array([[1e6, 1e6 - 2.0, -1e6], [1e-12, -1e-12, 0.0]]),
                           eta=np.array([[0.5, 0.5, 0.1], [0.5, 0.5, 0.5]]),
                           regret=np.array([[1e6, 1e6, -1e6], [1e-12, -1e-12, 0.0]]))
    p = learner.act(state)[0]
    assert np.all(np.isfinite(p)) and np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-14)
    np.testing.assert_allclose(p[0], [1 / (1 + math.exp(-2.0)), math.exp(-2.0) / (1 + math.exp(-2.0)), 0.0],
                               rtol=1e-12)
    np.testing.assert_allclose(p[1], 1 / 3, atol=1e-11)
    new = learner.update(state, p, (np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 1.0]]), None))
    assert np.all(np.isfinite(new.log_weight)) and np.all(np.isfinite(learner.act(new)[0]))


def test_permutation_equivariance():
    rng = np.random.default_rng(0)
    losses = rng.random((4, 40, 5))
    prior = rng.dirichlet(np.ones(5))
    perm = rng.permutation(5)
    p, _ = drive(ml_prod(prior), losses)
    p_perm, _ = drive(ml_prod(prior[perm]), losses[:, :, perm])
    np.testing.assert_allclose(p_perm, p[:, :, perm], rtol=1e-10, atol=1e-13)


def test_awake_mask_zeroes_asleep_and_freezes_their_state():
    learner = ml_prod()
    state = learner.init(3, 2)
    state = learner.update(state, learner.act(state)[0], (np.array([[0.2, 0.9, 0.4], [1.0, 0.0, 0.5]]), None))
    awake = np.array([[True, False, True], [False, True, True]])
    p = learner.act(state, awake, None)[0]
    assert np.all(p[~awake] == 0.0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-14)
    # on the awake experts p is proportional to eta * w
    w = state.eta * np.exp(state.log_weight)
    np.testing.assert_allclose(p[0, [0, 2]], w[0, [0, 2]] / w[0, [0, 2]].sum(), rtol=1e-13)
    new = learner.update(state, p, (np.array([[0.7, 0.1, 0.3], [0.2, 0.6, 0.9]]), awake))
    for field in ("log_weight", "eta", "variance", "regret"):
        assert np.array_equal(getattr(new, field)[~awake], getattr(state, field)[~awake])


def test_bad_input():
    with pytest.raises(ValueError, match="prior"):
        ml_prod(prior=[0.5, 0.6])
    with pytest.raises(ValueError, match="prior"):
        ml_prod(prior=[-0.1, 1.1])
    with pytest.raises(ValueError, match="prior"):
        ml_prod(prior=[np.inf, 0.0])
    with pytest.raises(TypeError, match="prior"):
        ml_prod(prior=0.5)
    with pytest.raises(ValueError, match="prior"):
        ml_prod(prior=[0.25] * 4).init(5, 3)
    learner = ml_prod()
    state = learner.init(3, 2)
    p = learner.act(state)[0]
    with pytest.raises(ValueError, match="loss"):
        learner.update(state, p, (np.full((2, 3), np.nan), None))
    with pytest.raises(ValueError, match="loss"):
        learner.update(state, p, (np.full((2, 3), 1.5), None))
    with pytest.raises(ValueError, match="awake"):
        learner.update(state, p, (np.zeros((2, 3)), np.zeros((2, 3), dtype=bool)))


@pytest.mark.gpu
def test_cupy_matches_numpy():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(0)
    losses = rng.random((3, 20, 4))
    learner = ml_prod()
    s_np, s_cp = learner.init(4, 3), learner.init(4, 3, xp=cp)
    for t in range(20):
        p_np, p_cp = learner.act(s_np)[0], learner.act(s_cp)[0]
        np.testing.assert_allclose(cp.asnumpy(p_cp), p_np, rtol=1e-12)
        s_np = learner.update(s_np, p_np, (losses[:, t], None))
        s_cp = learner.update(s_cp, p_cp, (cp.asarray(losses[:, t]), None))
