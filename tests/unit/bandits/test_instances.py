"""Bandit instances and the Lai-Robbins constant."""

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.bandits import instances as I
from expertlab.bandits import ucb1


def test_lai_robbins_published_value():
    # Lai & Robbins (1985): nine Bernoulli arms 0.1 ... 0.9
    assert I.lai_robbins_constant(np.arange(1, 10) / 10) == pytest.approx(7.5165, abs=5e-5)


def test_lai_robbins_two_arms_by_hand():
    # Delta = 0.3, kl(0.2, 0.5) = 0.2 ln(0.4) + 0.8 ln(1.6)
    kl = 0.2 * math.log(0.2 / 0.5) + 0.8 * math.log(0.8 / 0.5)
    assert I.lai_robbins_constant([0.2, 0.5]) == pytest.approx(0.3 / kl, rel=1e-14)
    assert I.lai_robbins_constant([0.5, 0.2]) == pytest.approx(0.3 / kl, rel=1e-14)


def test_lai_robbins_gaussian_and_ties():
    # 2 sigma^2 / Delta: sigma = 0.5, gaps 1 and 2 -> 0.5 + 0.25; the tied best arms contribute 0
    assert I.lai_robbins_constant([0.0, 1.0, 2.0, 2.0], kind="gaussian", sigma=0.5) == pytest.approx(0.75)
    assert I.lai_robbins_constant([0.3, 0.7, 0.7]) == pytest.approx(0.4 / I.bernoulli_kl(0.3, 0.7))
    # best arm at 1: kl(mu, 1) is infinite, nothing to pay asymptotically
    assert I.lai_robbins_constant([0.5, 1.0]) == 0.0


def test_bernoulli_kl_edges():
    assert I.bernoulli_kl(0.0, 0.5) == pytest.approx(math.log(2))
    assert I.bernoulli_kl(1.0, 0.5) == pytest.approx(math.log(2))
    assert I.bernoulli_kl(0.3, 0.3) == 0.0


def test_minimax_gap_and_cap():
    inst = I.minimax(10, 1000)
    assert inst.params["eps"] == pytest.approx(0.1)
    assert inst.params["means"][-1] == pytest.approx(0.6) and inst.params["means"][:-1] == [0.5] * 9
    assert I.minimax(10, 10).params["eps"] == 0.5  # sqrt(K/T) = 1 capped at 1/2
    assert max(I.minimax(100, 4).params["means"]) <= 1.0


def test_piecewise_and_array_means():
    inst = I.piecewise_bernoulli([[0.9, 0.1], [0.2, 0.8], [0.5, 0.6]], [10, 20])
    got = [float(inst.mean(inst.data, t, 1)) for t in (0, 9, 10, 19, 20, 99)]
    assert got == [0.1, 0.1, 0.8, 0.8, 0.6, 0.6]
    arr = I.reward_array([[0.0, 1.0], [0.25, 0.5]])
    assert float(arr.reward(arr.data, np.uint64(7), 1, 0)) == 0.25


def test_bernoulli_rewards_have_the_right_mean():
    inst = I.bernoulli([0.1, 0.7])
    keys = np.arange(200_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        x = inst.reward(inst.data, keys, 0, np.ones(keys.size, dtype=np.int64))
    # 0.7 within 5 standard errors (sd sqrt(0.21 / 2e5) ~ 1e-3)
    assert abs(x.mean() - 0.7) < 5 * math.sqrt(0.21 / keys.size)


def test_gaussian_rewards_mean_and_sd():
    inst = I.gaussian([0.0, 2.0], sigma=3.0)
    keys = np.arange(100_000, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03)
    with np.errstate(over="ignore"):
        x = inst.reward(inst.data, keys, 0, np.ones(keys.size, dtype=np.int64))
    assert abs(x.mean() - 2.0) < 5 * 3.0 / math.sqrt(keys.size)
    assert abs(x.std() - 3.0) < 0.05


@pytest.mark.parametrize("means, err", [
    ([0.5, 1.2], ValueError), ([-0.1, 0.5], ValueError), ([0.5], ValueError), ([0.5, float("nan")], ValueError),
    ([[0.5, 0.5]], ValueError), ("ab", TypeError), ([0.5, float("inf")], ValueError)])
def test_bernoulli_bad_means(means, err):
    with pytest.raises(err, match="means"):
        I.bernoulli(means)


def test_other_bad_inputs():
    with pytest.raises(ValueError, match="n_arms"):
        I.minimax(1, 100)
    with pytest.raises(ValueError, match="horizon"):
        I.minimax(3, 0)
    with pytest.raises(ValueError, match="sigma"):
        I.gaussian([0.0, 1.0], sigma=0.0)
    with pytest.raises(ValueError, match="means"):
        I.gaussian([0.0, float("nan")])
    with pytest.raises(ValueError, match="rewards"):
        I.reward_array([[0.0, 1.5]])
    with pytest.raises(ValueError, match="rewards"):
        I.reward_array([0.0, 1.0])
    with pytest.raises(ValueError, match="change_points"):
        I.piecewise_bernoulli([[0.1, 0.2], [0.3, 0.4]], [])
    with pytest.raises(ValueError, match="change_points"):
        I.piecewise_bernoulli([[0.1, 0.2], [0.3, 0.4], [0.5, 0.5]], [5, 5])
    with pytest.raises(ValueError, match="kind"):
        I.lai_robbins_constant([0.1, 0.2], kind="poisson")


def test_horizon_beyond_reward_array_is_rejected():
    arr = I.reward_array(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="exceeds"):
        sim.run(ucb1(), arr, horizon=6, n_reps=2)
