"""Bandit learners: hand-worked cases and bad input."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from expertlab import sim
from expertlab.sim import Pull
from expertlab.bandits import exp3, exp3_ix, instances, kl_ucb, kl_ucb_index, moss, thompson_sampling, ucb1
from expertlab.bandits._exp3 import Exp3State
from expertlab.bandits._ucb import IndexState


def _state(counts, sums, t=None):
    counts = np.atleast_2d(np.asarray(counts, dtype=float))
    sums = np.atleast_2d(np.asarray(sums, dtype=float))
    t = counts.sum(axis=1).astype(np.int64) if t is None else np.asarray(t, dtype=np.int64)
    return IndexState(counts=counts, sums=sums, t=t)


def _keys(n):
    with np.errstate(over="ignore"):
        return np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)


def test_ucb1_index_by_hand():
    # counts (2, 1), sums (1, 1), t = 3: 0.5 + sqrt(ln 3) = 1.548 < 1 + sqrt(2 ln 3) = 2.482
    arm, p = ucb1().act(_state([2, 1], [1, 1]), None, None)[0]
    assert arm.tolist() == [1] and p is None
    # counts (10, 2), sums (9, 0), t = 12: 0.9 + sqrt(2 ln 12 / 10) = 1.605 > sqrt(ln 12) = 1.576
    assert ucb1().act(_state([10, 2], [9, 0]), None, None)[0][0].tolist() == [0]
    # with c = 4 the bonus of the rarely pulled arm wins: 0.9 + 0.997 = 1.897 < 2.229
    assert ucb1(c=4.0).act(_state([10, 2], [9, 0]), None, None)[0][0].tolist() == [1]


def test_index_learners_pull_every_arm_first():
    for L in (ucb1(), kl_ucb(), moss(), moss(horizon=50)):
        res = sim.run(L, instances.bernoulli([0.9, 0.2, 0.5, 0.1]), horizon=4, n_reps=3, seed=1)
        np.testing.assert_array_equal(res.final["pulls"], np.ones((3, 4), dtype=np.int64))


def test_ucb1_on_a_reward_array_by_hand():
    # rounds 0, 1: arms 0, 1; round 2: 1 + sqrt(2 ln 2) > 0 + sqrt(2 ln 2) -> arm 0
    arr = instances.reward_array([[1.0, 0.0]] * 3)
    res = sim.run(ucb1(), arr, horizon=3, n_reps=2, seed=0, checkpoints=[1, 2, 3])
    np.testing.assert_array_equal(res.final["pulls"], [[2, 1], [2, 1]])
    np.testing.assert_array_equal(res.metrics["regret"][:, 0], [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(res.metric("realised_regret")[:, 0], [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(res.metric("reward")[:, 0], [1.0, 1.0, 2.0])


def test_moss_index_by_hand():
    # T = 100, K = 2: 0.4 + sqrt(ln(100/10)/5) = 1.079 > 0.5 + sqrt(ln(100/40)/20) = 0.714
    assert moss(horizon=100).act(_state([5, 20], [2, 10]), None, None)[0][0].tolist() == [0]
    # anytime, t = 25: 0.4 + sqrt(ln(2.5)/5) = 0.828 > 0.5 + sqrt(max(ln(25/40), 0)/20) = 0.5
    assert moss().act(_state([5, 20], [2, 10]), None, None)[0][0].tolist() == [0]
    # anytime: an arm whose ln^+ vanishes has no bonus: 0.6 vs 0.5 + sqrt(ln(40/20)/10) = 0.763
    assert moss().act(_state([30, 10], [18, 5]), None, None)[0][0].tolist() == [1]


def test_kl_ucb_index_closed_forms_and_root():
    # kl(0, q) = -ln(1 - q): index 1 - exp(-delta / n)
    q = kl_ucb_index(np.array([0.0, 0.0]), np.array([10.0, 3.0]), np.array([1.0, 2.0]))
    np.testing.assert_allclose(q, 1 - np.exp(-np.array([0.1, 2 / 3])), atol=1e-11)
    assert kl_ucb_index(np.array([1.0]), np.array([5.0]), np.array([2.0]))[0] == 1.0
    # an interior root found independently with brentq on n kl(p, q) = delta
    for p, n, d in [(0.5, 10, 2.0), (0.1, 6, 11.5), (0.9, 9e4, 11.5), (0.3, 1, 0.01)]:
        root = brentq(lambda x: n * instances.bernoulli_kl(p, x) - d, p, 1 - 1e-15, xtol=1e-15)
        got = kl_ucb_index(np.array([p]), np.array([float(n)]), np.array([d]))[0]
        assert abs(got - root) < 1e-10, (p, n, d)
    g = kl_ucb_index(np.array([0.2]), np.array([8.0]), np.array([3.0]), kind="gaussian", sigma=2.0)
    assert g[0] == pytest.approx(0.2 + 2.0 * math.sqrt(6.0 / 8.0))


def test_kl_ucb_picks_by_hand():
    # t = 40: delta = ln 40 = 3.689; arm 0: (0.5, 30) -> 0.7300; arm 1: (0.1, 10) -> 0.4847
    L = kl_ucb()
    st = _state([30, 10], [15, 1])
    d = math.log(40)
    idx = [brentq(lambda x, p=p, n=n: n * instances.bernoulli_kl(p, x) - d, p, 1 - 1e-15) for p, n in
           [(0.5, 30), (0.1, 10)]]
    assert idx[0] > idx[1]
    assert L.act(st, None, None)[0][0].tolist() == [0]
    # c = 3 adds 3 ln ln 40 to delta
    d3 = d + 3 * math.log(d)
    q3 = kl_ucb_index(np.array([0.1]), np.array([10.0]), np.array([d3]))[0]
    assert q3 > kl_ucb_index(np.array([0.1]), np.array([10.0]), np.array([d]))[0]


def test_thompson_probability_by_hand():
    # posteriors Beta(1, 2) (arm 0: one failure) and Beta(2, 1) (arm 1: one success):
    # P(theta_1 > theta_0) = 2 * int (1 - x)(1 - x^2) dx = 5/6
    n = 20_000
    st = IndexState(counts=np.tile([1.0, 1.0], (n, 1)), sums=np.tile([0.0, 1.0], (n, 1)),
                    t=np.full(n, 2, dtype=np.int64))
    with np.errstate(over="ignore"):
        arm, p = thompson_sampling().act(st, None, _keys(n))[0]
    assert p is None
    frac = arm.mean()
    assert abs(frac - 5 / 6) < 4 * math.sqrt(5 / 36 / n)


def test_thompson_concentrated_posterior_and_gaussian():
    st = _state([1e6, 1e6], [3e5, 6e5])
    with np.errstate(over="ignore"):
        assert thompson_sampling().act(st, None, _keys(1))[0][0].tolist() == [1]
        assert thompson_sampling("gaussian", sigma=0.5).act(st, None, _keys(1))[0][0].tolist() == [1]


def test_exp3_distribution_and_update_by_hand():
    L = exp3(eta=1.0)
    st = Exp3State(loss_est=np.array([[0.0, math.log(3.0)]]), t=np.array([0]))
    with np.errstate(over="ignore"):
        arm, p = L.act(st, None, _keys(1))[0]
    np.testing.assert_allclose(p, [[0.75, 0.25]], rtol=1e-14)
    new = L.update(st, Pull(np.array([1]), p), np.array([0.5]))
    np.testing.assert_allclose(new.loss_est, [[0.0, math.log(3.0) + 0.5 / 0.25]])
    ix = exp3_ix(100, 2)
    eta = math.sqrt(2 * math.log(2) / 200)
    new = ix.update(st, Pull(np.array([1]), p), np.array([0.5]))
    np.testing.assert_allclose(new.loss_est, [[0.0, math.log(3.0) + 0.5 / (0.25 + eta / 2)]])


def test_exp3_samples_its_distribution():
    n = 40_000
    st = Exp3State(loss_est=np.tile([0.0, math.log(3.0)], (n, 1)), t=np.zeros(n, dtype=np.int64))
    with np.errstate(over="ignore"):
        arm, _ = exp3(eta=1.0).act(st, None, _keys(n))[0]
    assert abs((arm == 0).mean() - 0.75) < 4 * math.sqrt(0.1875 / n)


def test_exp3_rates():
    assert exp3(1000, n_arms=4).kernel.params[1] == pytest.approx(math.sqrt(2 * math.log(4) / 4000))
    st = Exp3State(loss_est=np.array([[0.0, 1.0]]), t=np.array([3]))
    with np.errstate(over="ignore"):
        _, p = exp3().act(st, None, _keys(1))[0]
    eta = math.sqrt(math.log(2) / (4 * 2))  # round t = 4 (1-based)
    np.testing.assert_allclose(p[0], [1 / (1 + math.exp(-eta)), math.exp(-eta) / (1 + math.exp(-eta))])


def test_update_is_pure():
    st = _state([1, 2], [1, 0])
    before = [a.copy() for a in st]
    ucb1().update(st, np.array([0]), np.array([1.0]))
    for a, b in zip(before, st):
        np.testing.assert_array_equal(a, b)


def test_bad_input():
    with pytest.raises(ValueError, match="c"):
        ucb1(c=-1.0)
    with pytest.raises(ValueError, match="c"):
        kl_ucb(c=-0.5)
    with pytest.raises(ValueError, match="kind"):
        kl_ucb(kind="poisson")
    with pytest.raises(ValueError, match="sigma"):
        thompson_sampling("gaussian", sigma=float("nan"))
    with pytest.raises(ValueError, match="prior"):
        thompson_sampling(prior=(0.0, 1.0))
    with pytest.raises(ValueError, match="n_arms"):
        exp3(100)
    with pytest.raises(ValueError, match="eta"):
        exp3(eta=0.0)
    with pytest.raises(ValueError, match="horizon"):
        moss(horizon=0)
    with pytest.raises(ValueError, match="horizon"):
        exp3_ix(0, 3)
    with pytest.raises(ValueError, match="n_arms"):
        ucb1().init(1, 4)
    st = ucb1().init(3, 2)
    with pytest.raises(ValueError, match="arm"):
        ucb1().update(st, np.array([0, 3]), np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="reward"):
        ucb1().update(st, np.array([0, 1]), np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="reward"):
        ucb1().update(st, np.array([0, 1]), np.array([1.0]))
    with pytest.raises(ValueError, match="distribution p"):
        exp3().update(exp3().init(3, 2), Pull(np.array([0, 1]), None), np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="n must be positive"):
        kl_ucb_index(np.array([0.5]), np.array([0.0]), np.array([1.0]))
    with pytest.raises(ValueError, match="mean"):
        kl_ucb_index(np.array([1.5]), np.array([2.0]), np.array([1.0]))
    with pytest.raises(ValueError, match="NaN"):
        kl_ucb_index(np.array([np.nan]), np.array([2.0]), np.array([1.0]))


def test_tsallis_weights_satisfy_the_ftrl_optimality_condition():
    # argmin_w <w, L> - sum_i 4 sqrt(w_i) / eta on the simplex: the stationarity condition
    # L_i - 2 / (eta sqrt(w_i)) = const, i.e. w_i = 4 / (eta (L_i - x))^2 with sum 1
    from scipy.optimize import minimize

    from expertlab.bandits import tsallis_weights

    L = np.array([[0.0, 1.0, 5.0], [3.0, 3.0, 3.0]])
    w = tsallis_weights(L, np.array([0.7, 2.0]))
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(w[1], 1 / 3, rtol=1e-12)
    c = L[0] - 2 / (0.7 * np.sqrt(w[0]))
    np.testing.assert_allclose(c, c[0], atol=1e-9)
    # an independent numerical FTRL solve over the simplex (softmax parametrisation)
    f = lambda z: float(np.exp(z) @ L[0] / np.exp(z).sum() - 4 / 0.7 * np.sqrt(np.exp(z) / np.exp(z).sum()).sum())
    z = minimize(f, np.zeros(3), method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-14,
                                                                 "maxiter": 20000}).x
    np.testing.assert_allclose(np.exp(z) / np.exp(z).sum(), w[0], atol=1e-4)


def test_tsallis_inf_first_round_is_uniform_and_bad_input():
    from expertlab.bandits import tsallis_inf

    L = tsallis_inf()
    with np.errstate(over="ignore"):
        _, p = L.act(L.init(4, 2), None, _keys(2))[0]
    np.testing.assert_allclose(p, 0.25, rtol=1e-12)
    with pytest.raises(ValueError, match="scale"):
        tsallis_inf(scale=-1.0)


def test_explore_then_commit_by_hand():
    from expertlab.bandits import etc_expected_regret, explore_then_commit

    L = explore_then_commit(2)
    # exploration: arms 0, 1, 2, 0, 1, 2 in turn
    res = sim.run(L, instances.reward_array([[0.0, 1.0, 0.5]] * 6 + [[1.0, 0.0, 0.0]] * 4), horizon=10, n_reps=1,
                  checkpoints=[6, 10])
    # exploration means (0, 1, 0.5): commits to arm 1 for the last 4 rounds although it now pays 0
    np.testing.assert_array_equal(res.final["pulls"], [[2, 6, 2]])
    np.testing.assert_array_equal(res.metric("reward")[:, 0], [3.0, 3.0])
    # exact regret against an independent enumeration of the exploration outcomes (m = 2)
    from itertools import product

    mu0, mu1, m, T = 0.3, 0.55, 2, 50
    p_wrong = 0.0
    for x in product([0, 1], repeat=2 * m):
        pr = np.prod([mu0 if b else 1 - mu0 for b in x[:m]]) * np.prod([mu1 if b else 1 - mu1 for b in x[m:]])
        p_wrong += pr * (sum(x[:m]) >= sum(x[m:]))
    assert etc_expected_regret(mu0, mu1, m, T) == pytest.approx(m * 0.25 + (T - 2 * m) * 0.25 * p_wrong)
    with pytest.raises(ValueError, match="m"):
        explore_then_commit(0)
    with pytest.raises(ValueError, match="horizon"):
        etc_expected_regret(0.3, 0.5, 10, 5)


def test_successive_elimination_by_hand():
    from expertlab.bandits import successive_elimination

    # arm 0 always pays 1, arm 1 always 0, delta = 0.5: after phase r arm 1 goes once
    # 0 < 1 - 2 sqrt(ln(4 * 2 * r^2 / 0.5) / (2 r)), i.e. ln(16 r^2) < r / 2: first at r = 17
    r = next(r for r in range(1, 100) if math.log(16 * r * r) < r / 2)
    assert r == 17
    arr = instances.reward_array([[1.0, 0.0]] * 100)
    for backend in ("numpy", "numba"):
        res = sim.run(successive_elimination(0.5), arr, horizon=100, n_reps=2, backend=backend)
        np.testing.assert_array_equal(res.final["pulls"], [[100 - r, r]] * 2)
    L = successive_elimination(0.5)
    st = L.init(3, 1)
    # surviving arm with the fewest pulls, lowest index first
    assert int(L.act(st)[0][0][0]) == 0
    for bad in (0.0, 1.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="delta"):
            successive_elimination(bad)


def test_ucb_alpha_is_ucb1_with_half_alpha():
    from expertlab import sim
    from expertlab.bandits import instances, ucb1, ucb_alpha

    inst = instances.bernoulli([0.2, 0.5, 0.55])
    a = sim.run(ucb_alpha(5.0), inst, horizon=400, n_reps=6, seed=3, backend="numba")
    b = sim.run(ucb1(c=2.5), inst, horizon=400, n_reps=6, seed=3, backend="numpy")
    np.testing.assert_array_equal(a.final["pulls"], b.final["pulls"])
    assert ucb_alpha(5.0).name == "ucb_alpha" and ucb_alpha(5.0).params == {"alpha": 5.0}


@pytest.mark.parametrize("alpha", [2.0, 1.0, -3.0])
def test_ucb_alpha_needs_alpha_above_two(alpha):
    from expertlab.bandits import ucb_alpha

    with pytest.raises(ValueError, match="alpha must be > 2"):
        ucb_alpha(alpha)
