r"""Parameter counts of the :math:`(m, k)` polynomial-expert family, and KL risk is non-negative and zero at the truth.

Statements checked
------------------
1. A polynomial of total degree at most :math:`k` in :math:`s` variables has
   :math:`J_k = \binom{s + k}{k}` coefficients (stars and bars), and the
   :math:`(m, k)` family with a gate linear in :math:`(1, x)` has
   :math:`m J_k + v_m` mean and gate parameters with :math:`v_m = (m - 1)(s + 1)`
   (Mendes & Jiang, Neural Computation 2012, arXiv 1110.2058, Sec. 2, where
   :math:`J_k` and :math:`v_m` enter the estimation term of Thm 1).
   Hypothesis draws :math:`(s, k, m)` and compares
   :func:`expertlab.mixtures.monomial_exponents` and
   :func:`expertlab.mixtures.parameter_count` with a brute-force enumeration of
   all exponent vectors in :math:`\{0, \dots, k\}^s` of sum :math:`\le k`.
2. :math:`\mathrm{KL}(p \,\|\, q) \ge 0` with equality at :math:`q = p`
   (Gibbs' inequality, Cover & Thomas, *Elements of Information Theory*,
   Thm 2.6.3), applied to the conditional densities of two members of the
   family: :func:`expertlab.mixtures.kl_risk` (quadrature in :math:`y`, Monte
   Carlo in :math:`x`) must be non-negative up to the quadrature error for
   random pairs, and zero at the truth.  The quadrature error is bounded by
   comparing 24 and 48 nodes; draws where the two disagree by more than
   :math:`10^{-6}` leave the regime where the quadrature is exact enough to
   test the sign and are discarded.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from expertlab.mixtures import PolyMoEParams, kl_risk, monomial_exponents, parameter_count

pytestmark = pytest.mark.proof


@given(st.integers(1, 4), st.integers(0, 4), st.integers(1, 6))
def test_counts_match_enumeration(s, k, m):
    brute = {e for e in itertools.product(range(k + 1), repeat=s) if sum(e) <= k}
    rows = monomial_exponents(s, k)
    assert {tuple(r) for r in rows.tolist()} == brute
    assert rows.shape[0] == len(brute)                          # no monomial listed twice
    c = parameter_count(m, k, s)
    assert c.per_expert == len(brute) == math.comb(s + k, k)
    assert c.gate == (m - 1) * (s + 1)
    assert c.total == m * len(brute) + (m - 1) * (s + 1) + m


def _params(rng, m, k, s):
    J = math.comb(s + k, k)
    return PolyMoEParams(rng.normal(size=(1, m)), rng.normal(size=(1, m, s)), rng.normal(size=(1, m, J)),
                         rng.uniform(0.2, 2.0, size=(1, m)), degree=k)


@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 3), st.integers(0, 2), st.integers(1, 2))
def test_kl_non_negative_and_zero_at_truth(seed, m, k, s):
    rng = np.random.default_rng(seed)
    p, q = _params(rng, m, k, s), _params(rng, m, k, s)
    assert abs(float(kl_risk(p, p, n_mc=50).mean[0])) < 1e-12
    kl = float(kl_risk(q, p, n_mc=50, n_quad=24).mean[0])
    fine = float(kl_risk(q, p, n_mc=50, n_quad=48).mean[0])
    assume(abs(kl - fine) < 1e-6)
    assert fine >= -1e-9
