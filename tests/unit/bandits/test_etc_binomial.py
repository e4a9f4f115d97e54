"""The binomial probabilities behind :func:`expertlab.bandits.etc_expected_regret` (no SciPy at import)."""

import numpy as np
import pytest
from scipy import stats

from expertlab.bandits import etc_expected_regret
from expertlab.bandits._etc import _binom_pmf


@pytest.mark.parametrize("m", [1, 2, 25, 300, 2000])
@pytest.mark.parametrize("mu", [0.0, 1e-3, 0.4, 0.5, 0.6, 0.999, 1.0])
def test_binom_pmf_matches_scipy(m, mu):
    got = _binom_pmf(m, mu)
    want = stats.binom.pmf(np.arange(m + 1), m, mu)
    assert got.shape == (m + 1,)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-15)
    assert abs(got.sum() - 1.0) <= 1e-12


def test_binom_pmf_by_hand():
    # Bin(2, 0.25): (0.75^2, 2 * 0.25 * 0.75, 0.25^2)
    np.testing.assert_allclose(_binom_pmf(2, 0.25), [0.5625, 0.375, 0.0625], rtol=1e-14)
    assert _binom_pmf(3, 0.0).tolist() == [1.0, 0.0, 0.0, 0.0]
    assert _binom_pmf(3, 1.0).tolist() == [0.0, 0.0, 0.0, 1.0]


def test_etc_expected_regret_matches_the_scipy_binomial_sum():
    m, T = 25, 2000
    k = np.arange(m + 1)
    p0, p1 = stats.binom.pmf(k, m, 0.4), stats.binom.pmf(k, m, 0.6)
    p_wrong = float(np.sum(p0[:, None] * p1[None, :] * (k[:, None] >= k[None, :])))
    assert etc_expected_regret(0.4, 0.6, m, T) == pytest.approx(m * 0.2 + (T - 2 * m) * 0.2 * p_wrong, rel=1e-12)
