"""The privacy accountant and the empirical audit (expected values worked by hand)."""

import math

import numpy as np
import pytest

from expertlab import sim
from expertlab.experts import instances, noisy_ftpl, privacy_cost, sparse_vector_experts, tree_ftrl
from expertlab.experts._privacy import (PrivacyCost, compose_advanced, compose_basic, exponential_mechanism_epsilon,
                                        laplace_epsilon, laplace_scale, per_step_epsilon, privacy_audit,
                                        report_noisy_max_epsilon, sparse_vector_epsilon, tree_mechanism_epsilon)


def test_elementary_mechanisms_by_hand():
    assert laplace_epsilon(1.0, 0.5) == 2.0
    assert laplace_epsilon(3.0, 6.0) == 0.5
    assert laplace_epsilon(1.0, math.inf) == 0.0
    assert laplace_scale(2.0, 0.5) == 4.0
    assert report_noisy_max_epsilon(1.0, 4.0) == 0.5
    assert exponential_mechanism_epsilon(1.0, 0.25) == 0.5
    # Dwork & Roth Thm 3.23: b1 = 2/eps, b2 = 4/eps gives eps
    for eps in (0.1, 1.0, 7.0):
        assert sparse_vector_epsilon(1.0, 2.0 / eps, 4.0 / eps) == pytest.approx(eps, rel=1e-14)
    # a round touches floor(log2 T) + 1 nodes: T = 1 -> 1, 1000 -> 10, 1024 -> 11 (= ceil(log2 T) + 1)
    assert tree_mechanism_epsilon(1, 1.0, 1.0) == 1.0
    assert tree_mechanism_epsilon(1000, 2.0, 4.0) == 5.0
    assert tree_mechanism_epsilon(1024, 1.0, 11.0) == 1.0


def test_composition_by_hand():
    c = compose_basic([PrivacyCost(0.5, 1e-6), PrivacyCost(0.25), PrivacyCost(0.25, 1e-6)])
    assert c == PrivacyCost(1.0, 2e-6)
    # k = 50, eps = 0.01, delta' = 1e-5: sqrt(2*50*ln 1e5) * 0.01 + 50*0.01*(e^0.01 - 1)
    c = compose_advanced(PrivacyCost(0.01, 1e-7), 50, 1e-5)
    assert c.epsilon == pytest.approx(math.sqrt(100 * math.log(1e5)) * 0.01 + 0.5 * (math.exp(0.01) - 1), rel=1e-12)
    assert c.delta == pytest.approx(50e-7 + 1e-5, rel=1e-12)


def test_per_step_epsilon_inverts_the_composition():
    assert per_step_epsilon(2.0, 8) == 0.25
    e0 = per_step_epsilon(1.0, 1000, 1e-6)
    assert compose_advanced(PrivacyCost(e0), 1000, 1e-6).epsilon == pytest.approx(1.0, rel=1e-9)
    assert e0 > 1.0 / 1000  # advanced beats basic for many steps
    assert per_step_epsilon(1.0, 2, 1e-6) == 0.5  # ... and basic wins for few steps


@pytest.mark.parametrize("call, exc", [
    (lambda: laplace_epsilon(1.0, 0.0), ValueError),
    (lambda: laplace_epsilon(-1.0, 1.0), ValueError),
    (lambda: laplace_scale(1.0, float("nan")), ValueError),
    (lambda: laplace_scale(1.0, "1"), TypeError),
    (lambda: PrivacyCost(-0.1), ValueError),
    (lambda: PrivacyCost(1.0, 1.5), ValueError),
    (lambda: PrivacyCost(float("nan")), ValueError),
    (lambda: compose_basic([1.0]), TypeError),
    (lambda: compose_advanced(PrivacyCost(1.0), 0, 1e-6), ValueError),
    (lambda: compose_advanced(PrivacyCost(1.0), 3, 0.0), ValueError),
    (lambda: per_step_epsilon(0.0, 3), ValueError),
    (lambda: tree_mechanism_epsilon(0, 1.0, 1.0), ValueError),
])
def test_bad_input(call, exc):
    with pytest.raises(exc):
        call()


# -- each learner's accountant against the noise it draws ------------------------


def test_learners_report_their_budget():
    """A run of the calibrated horizon costs the budget."""
    for eps in (0.5, 2.0):
        for make in (sparse_vector_experts, noisy_ftpl, tree_ftrl):
            assert privacy_cost(make(eps, 1000), 8, 1000).epsilon == pytest.approx(eps, rel=1e-12)
    c = privacy_cost(sparse_vector_experts(1.0, 1000, delta=1e-6, max_switches=200), 8, 1000)
    assert c.epsilon == pytest.approx(1.0, rel=1e-9) and c.delta == 1e-6
    c = privacy_cost(noisy_ftpl(1.0, 10_000, delta=1e-6), 3, 10_000)
    assert c.epsilon == pytest.approx(1.0, rel=1e-9) and c.delta == 1e-6
    assert math.isinf(privacy_cost(sparse_vector_experts(1.0, 100, noise=False), 4, 100).epsilon)


def test_a_longer_run_would_spend_more_and_is_refused():
    """The reliability finding: noisy_ftpl(eps=1, horizon=10) on 200 rounds reported eps = 1 (noise sized for 9
    releases, 199 made).  The accountant now counts the releases (199/9 ~ 22.1 by basic composition; with
    delta > 0 the better of basic and advanced), and the learner refuses the run."""
    assert privacy_cost(noisy_ftpl(1.0, 10), 4, 200).epsilon == pytest.approx(199 / 9, rel=1e-12)
    c = privacy_cost(noisy_ftpl(1.0, 10, delta=1e-6), 4, 200)
    assert 1.0 < c.epsilon < 199 / 9 * 1.01 and c.delta == 1e-6
    for L in (noisy_ftpl(1.0, 10), noisy_ftpl(1.0, 10, delta=1e-6)):
        with pytest.raises(ValueError, match="horizon"):
            sim.run(L, instances.fair_coins(4), 200, 2)


def test_sparse_vector_threshold_noise_has_the_accounted_scale():
    # d = 8: K = 3 + 3 = 6, eps0 = eps / 6, b1 = 4 / eps0 = 12 at eps = 2; E|Lap(b)| = b, sd |Lap(b)| = b
    L = sparse_vector_experts(2.0, 1000)
    n = 40_000
    rho = L.init(8, n, np.arange(n, dtype=np.uint64), np).rho
    assert abs(np.abs(rho).mean() - 12.0) < 4 * 12.0 / math.sqrt(n)
    assert abs(np.mean(rho > 0) - 0.5) < 4 * 0.5 / math.sqrt(n)


def test_noisy_ftpl_noise_has_the_accounted_scale():
    # T = 11: 10 releases, eps0 = eps/10, b = 2/eps0 = 20/eps = 10 at eps = 2.  Two experts with
    # L = (0, c): expert 1 wins iff Z_0 - Z_1 > c, probability e^{-c/b} (2 + c/b) / 4.
    L = noisy_ftpl(2.0, 11)
    n, c, b = 40_000, 5.0, 10.0
    s = L.init(2, n, np.arange(n, dtype=np.uint64), np)
    s = s._replace(cum=np.tile([0.0, c], (n, 1)))
    p = np.mean(L.act(s, None, np.arange(n, dtype=np.uint64))[0][:, 1])
    exact = math.exp(-c / b) * (2 + c / b) / 4
    assert abs(p - exact) < 4 * math.sqrt(exact * (1 - exact) / n)


def test_tree_node_noise_has_the_accounted_scale():
    # T = 100: 7 levels, d = 4, eps = 2: b = 7 * 4 / 2 = 14
    L = tree_ftrl(2.0, 100)
    n = 10_000
    s = L.init(4, n, np.arange(n, dtype=np.uint64), np)
    k = np.arange(n, dtype=np.uint64)
    p, s = L.act(s, None, k)
    s = L.update(s, p, sim.FullFeedback(np.full((n, 4), 0.5)), k)
    z = (s.alpha_hat[:, 0] - s.alpha[:, 0]).ravel()
    np.testing.assert_array_equal(s.alpha[:, 0], 0.5)
    assert abs(np.abs(z).mean() - 14.0) < 4 * 14.0 / math.sqrt(z.size)


# -- the audit -------------------------------------------------------------------


def _randomised_response(eps, bit, n, rng):
    keep = rng.uniform(size=n) < math.exp(eps) / (1 + math.exp(eps))
    return np.where(keep, bit, 1 - bit).astype(np.int64)


def test_audit_on_randomised_response():
    """Randomised response is exactly eps-DP with ratio e^eps: passes at eps, fails well below."""
    rng = np.random.default_rng(1)
    a, b = _randomised_response(1.0, 0, 200_000, rng), _randomised_response(1.0, 1, 200_000, rng)
    r = privacy_audit(a, b, 1.0)
    assert r.passed and r.max_lower_ratio <= math.e
    assert r.max_lower_ratio > math.exp(0.9)  # the audit is sharp: close to the true ratio e
    assert not privacy_audit(a, b, 0.8).passed


def test_audit_bad_input():
    with pytest.raises(ValueError, match="outputs_a"):
        privacy_audit(np.zeros(3), np.zeros(3, int), 1.0)
    with pytest.raises(ValueError, match="outputs_b"):
        privacy_audit(np.zeros(3, int), np.zeros((3, 1), int), 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        privacy_audit(np.zeros(3, int), np.zeros(3, int), -1.0)
