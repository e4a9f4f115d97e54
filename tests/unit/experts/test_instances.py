import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import hedge, instances


def test_fair_coin_exact_values_from_papers_md():
    # Exact values: T=1000, N=10: 24.3248; T=100, N=2: 2.8174.
    assert instances.fair_coins_expected_regret(1000, 10) == pytest.approx(24.3248, abs=5e-5)
    assert instances.fair_coins_expected_regret(100, 2) == pytest.approx(2.8174, abs=5e-5)


def test_fair_coin_two_experts_by_enumeration():
    """N=2, T=3: E[min(B1, B2)] by enumerating the 64 outcomes."""
    T = 3
    pmf = [math.comb(T, k) / 2**T for k in range(T + 1)]
    e_min = sum(pmf[a] * pmf[b] * min(a, b) for a in range(T + 1) for b in range(T + 1))
    assert instances.fair_coins_expected_regret(T, 2) == pytest.approx(T / 2 - e_min, abs=1e-12)


def test_anti_correlated_exact_and_asymptote():
    inst = instances.anti_correlated()
    T = 6
    direct = sum(math.comb(T, k) / 2**T * abs(k - T / 2) for k in range(T + 1))
    assert inst.exact_expected_regret(T) == pytest.approx(direct, abs=1e-12)
    big = 200_000
    assert inst.exact_expected_regret(big) / math.sqrt(big / (2 * math.pi)) == pytest.approx(1.0, abs=1e-3)


def test_anti_correlated_losses_are_opposite_and_fair():
    res = sim.run(hedge(eta=1e-12), instances.anti_correlated(), horizon=1, n_reps=4000, seed=0)
    # eta ~ 0: p = (1/2, 1/2) and learner loss 1/2; the best expert has loss 0, so regret is 1/2 always
    np.testing.assert_allclose(res.metrics["regret"][0], 0.5, atol=1e-9)
    # expert 0's loss is a fair coin: its final sleeping-free regret 0.5 - l_0 is ±0.5 with equal odds
    d = res.final["expert_regret"][:, 0]
    assert set(np.round(d, 9)) == {-0.5, 0.5}
    assert abs(np.mean(d > 0) - 0.5) < 3 * 0.5 / math.sqrt(4000)


def test_bernoulli_means_are_respected():
    means = np.array([0.1, 0.5, 0.9])
    res = sim.run(hedge(eta=1e-12), instances.iid_bernoulli(means), horizon=200, n_reps=200, seed=4)
    # expert_regret_i = mean_j L_j - L_i with uniform p; average over reps ~ 200 (mean(means) - means_i)
    est = res.final["expert_regret"].mean(axis=0)
    exp = 200 * (means.mean() - means)
    se = res.final["expert_regret"].std(axis=0, ddof=1) / math.sqrt(200)
    assert np.all(np.abs(est - exp) <= 4 * se + 1e-9)


def test_sleeping_always_has_an_awake_expert_and_rate():
    inst = instances.sleeping(instances.iid_uniform(5), p_awake=0.0)
    res = sim.run(hedge(), inst, horizon=50, n_reps=3, seed=1)
    assert "sleeping_regret" in res.metrics  # ran: every round had an awake expert
    inst = instances.sleeping(instances.iid_uniform(5), p_awake=0.5)
    data = inst.data
    with np.errstate(over="ignore"):
        keys = np.arange(1, 20001, dtype=np.uint64)[:, None] * np.uint64(0x9E3779B97F4A7C15)
        aw = inst.awake(data, keys, 3, np.arange(5)[None, :])
    assert aw[:, 3].all()  # expert t mod n is always awake
    rate = aw[:, [0, 1, 2, 4]].mean()
    assert abs(rate - 0.5) < 0.01


def test_piecewise_comparator_and_means():
    inst = instances.piecewise_best(3, period=10, gap=0.2)
    assert [int(inst.comparator(inst.data, t)) for t in (0, 9, 10, 25, 30)] == [0, 0, 1, 2, 0]
    assert inst.mean(inst.data, 12, 1) == pytest.approx(0.3)
    assert inst.mean(inst.data, 12, 0) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "factory, kwargs, exc, match",
    [
        (instances.fair_coins, dict(n_experts=0), ValueError, "n_experts"),
        (instances.needle, dict(gap=0.7), ValueError, "gap"),
        (instances.iid_bernoulli, dict(means=[0.5, 1.5]), ValueError, "means"),
        (instances.iid_bernoulli, dict(means=[np.nan]), ValueError, "means"),
        (instances.loss_matrix, dict(losses=[[0.5, np.inf]]), ValueError, "NaN or infinite"),
        (instances.loss_matrix, dict(losses=[[0.5, 2.0]]), ValueError, r"\[0, 1\]"),
        (instances.loss_matrix, dict(losses=[0.5, 0.2]), ValueError, "2-D"),
        (instances.piecewise_best, dict(period=0), ValueError, "period"),
        (instances.sleeping, dict(base="fair_coins"), TypeError, "base"),
    ],
)
def test_bad_instance_arguments(factory, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        factory(**kwargs)


# -- bad input: a clear error naming the argument, never a silent coercion ----------------


@pytest.mark.parametrize("bad, exc", [(np.full((3, 2), 0.5) + 0j, TypeError), (np.full((3, 2), 0.5).astype(str), TypeError),
                                      ("ab", TypeError), ([[0.5, 0.2], [0.1]], TypeError)])
def test_loss_matrix_refuses_non_real_losses(bad, exc):
    with pytest.raises(exc, match="losses"):
        instances.loss_matrix(bad)


@pytest.mark.parametrize("bad", ["ab", [0.2 + 1j, 0.5], np.array(["0.2", "0.5"])])
def test_iid_bernoulli_refuses_non_real_means(bad):
    with pytest.raises(TypeError, match="means"):
        instances.iid_bernoulli(bad)


def test_exact_expected_regrets_refuse_sizes_they_cannot_allocate():
    with pytest.raises(ValueError, match="horizon"):
        instances.fair_coins_expected_regret(10**12, 10)
    with pytest.raises(ValueError, match="horizon"):
        instances.anti_correlated().exact_expected_regret(10**12)
