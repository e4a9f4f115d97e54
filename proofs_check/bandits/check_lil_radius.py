r"""The LIL radius of PASCombUCB is an anytime confidence bound for the running mean.

Statement checked
-----------------
For i.i.d. samples :math:`X_1, X_2, \dots` in :math:`[0, 1]` (so
1/2-sub-Gaussian) with mean :math:`\mu`, running means :math:`\hat\mu_n` and

.. math::

    \mathrm{cr}(n, \rho) = \Bigl(1 + \sqrt{\tfrac12}\Bigr)
        \sqrt{\frac{0.75}{n} \ln\frac{\ln(1.5\,n)}{\rho}},

the event :math:`\{\forall n \le N : |\hat\mu_n - \mu| \le \mathrm{cr}(n, \rho)\}`
has probability at least :math:`1 - \rho`.  The radius is the law-of-the-
iterated-logarithm bound of Jamieson, Malloy, Nowak & Bubeck ("lil' UCB",
COLT 2014, Lemma 3) with :math:`\epsilon = 1/2` and variance proxy
:math:`1/4` (:math:`2 \cdot \tfrac14 (1 + \epsilon) = 0.75`); PASCombUCB
(Hou, Tan & Zhong, ICML 2023) uses it with :math:`\rho = 1/T^2` for means and
:math:`\rho = \delta/T^2` for variances (constants as in the authors'
experiment code, recorded in this project's paper notes).  Lemma 3 itself
guarantees one side with probability :math:`1 - c_\epsilon\rho`,
:math:`c_\epsilon = \frac{2+\epsilon}{\epsilon}(1/\ln(1+\epsilon))^{1+\epsilon}
\approx 19.4`; the statement checked here, with :math:`1 - \rho` for both
sides, is the stronger one the algorithm's confidence levels rely on, and it
is checked empirically, not proved.  ``lil_radius`` floors the argument of the
outer logarithm at :math:`e`, which changes nothing for :math:`\rho \le 0.14`.

How the check works
-------------------
Streams of length :math:`N` are simulated (NumPy generator, fixed seeds) for
Bernoulli(1/2) samples (variance exactly 1/4, the worst case of the proxy)
and for the scaled two-point laws of the published instance's items; the
fraction of streams that leave the radius at some :math:`n \le N` is
counted, and the claim passes when the one-sided Clopper–Pearson *upper*
bound (95%) on the failure probability is at most :math:`\rho`.  Hypothesis
draws further two-point laws (means, variances up to
:math:`\mu(1-\mu)`) and levels :math:`\rho \in [0.01, 0.1]`.  Self-tests: the
fixed-:math:`n` Hoeffding radius :math:`\sqrt{\ln(2/\rho)/(2n)}` (valid at
every single :math:`n`, not uniformly) and 0.4 times the LIL radius both
fail, the Clopper–Pearson *lower* bound on their failure probability
exceeding :math:`\rho`.  The radius is conservative on this range: half of
it still fails in only about 3% of Bernoulli(1/2) streams at
:math:`\rho = 0.05`, :math:`N = 2000`.

References
----------
K. Jamieson, M. Malloy, R. Nowak and S. Bubeck, "lil' UCB: An Optimal
Exploration Algorithm for Multi-Armed Bandits", COLT 2014, Lemma 3.
Y. Hou, V. Y. F. Tan and Z. Zhong, "Probably Anytime-Safe Stochastic
Combinatorial Semi-Bandits", ICML 2023.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta

from expertlab.bandits._pascombucb import hou_tan_zhong_instance, lil_radius

pytestmark = pytest.mark.proof


def failure_count(top, p, mean, radius, n_streams, horizon, seed):
    """Streams of ``top * Bernoulli(p)`` whose running mean leaves ``radius[n-1]`` at some n <= horizon."""
    rng = np.random.default_rng(seed)
    n = np.arange(1, horizon + 1)
    fails = 0
    for start in range(0, n_streams, 500):
        m = min(500, n_streams - start)
        x = top * (rng.random((m, horizon)) < p)
        dev = np.abs(np.cumsum(x, axis=1) / n - mean)
        fails += int(np.any(dev > radius, axis=1).sum())
    return fails


def cp_upper(s, n, level=0.95):
    return 1.0 if s == n else float(beta.ppf(level, s + 1, n - s))


def cp_lower(s, n, level=0.95):
    return 0.0 if s == 0 else float(beta.ppf(1 - level, s, n - s + 1))


HORIZON = 2000


@pytest.mark.parametrize("rho", [0.01, 0.05, 0.1])
def test_bernoulli_half_stays_inside_for_all_n(rho):
    r = lil_radius(np.arange(1, HORIZON + 1), rho)
    s = failure_count(1.0, 0.5, 0.5, r, 3000, HORIZON, seed=int(rho * 1000))
    assert cp_upper(s, 3000) <= rho, s


@pytest.mark.parametrize("item", range(4))
def test_published_items_stay_inside_for_all_n(item):
    inst = hou_tan_zhong_instance(0.6)
    mu, var = float(inst.means[item]), float(inst.variances[item])
    top, p = (mu * mu + var) / mu, mu * mu / (mu * mu + var)
    rho = 0.05
    s = failure_count(top, p, mu, lil_radius(np.arange(1, HORIZON + 1), rho), 1000, HORIZON, seed=item)
    assert cp_upper(s, 1000) <= rho, s


@settings(max_examples=10)
@given(st.floats(0.05, 0.95), st.floats(0.0, 1.0), st.floats(0.01, 0.1))
def test_two_point_laws_stay_inside_for_all_n(mu, frac, rho):
    var = frac * mu * (1 - mu)
    if var == 0.0:
        top, p = mu, 1.0
    else:
        top, p = (mu * mu + var) / mu, mu * mu / (mu * mu + var)
    s = failure_count(top, p, mu, lil_radius(np.arange(1, 501), rho), 500, 500, seed=7)
    assert cp_upper(s, 500) <= rho, s


@pytest.mark.parametrize("rho", [0.05, 0.1])
def test_self_test_fixed_n_hoeffding_radius_is_not_anytime(rho):
    n = np.arange(1, HORIZON + 1)
    s = failure_count(1.0, 0.5, 0.5, np.sqrt(np.log(2 / rho) / (2 * n)), 1000, HORIZON, seed=3)
    assert cp_lower(s, 1000) > rho, s


def test_self_test_a_shrunk_lil_radius_fails():
    r = 0.4 * lil_radius(np.arange(1, HORIZON + 1), 0.05)
    s = failure_count(1.0, 0.5, 0.5, r, 1000, HORIZON, seed=4)
    assert cp_lower(s, 1000) > 0.05, s
