r"""Information exponents of the clustered single-index model: k per cluster, k + m pooled.

Statement checked
-----------------
Let :math:`C = 2^m` clusters carry codes :math:`a(c) \in \{\pm 1\}^m` and signs
:math:`s_c = \prod_j a_j(c)`, let :math:`x = z + \kappa \sum_j a_j(c) v_j` with
:math:`z \sim N(0, I_d)` and :math:`(w, v_1, \dots, v_m)` orthonormal, and
:math:`y = s_c \mathrm{He}_k(\langle w, z\rangle)/\sqrt{k!}`
(:func:`expertlab.mixtures.sample_clustered_single_index`).  Then, for every
multi-index :math:`\alpha = (\alpha_0, \dots, \alpha_m)`,

.. math::

    E\Big[y\,\mathrm{He}_{\alpha_0}(\langle w, x\rangle)\prod_{j=1}^m \mathrm{He}_{\alpha_j}(\langle v_j, x\rangle)\Big]
    = \sqrt{k!}\;\delta_{\alpha_0 k}\;\kappa^{|\alpha| - k}\prod_{j=1}^m \mathbf 1[\alpha_j \text{ odd}],

so every pooled Hermite coefficient of total degree below :math:`k + m`
vanishes and the one of :math:`\alpha = (k, 1, \dots, 1)` is
:math:`\sqrt{k!}\,\kappa^m` (pooled information exponent :math:`k + m`),
while inside cluster :math:`c` the coefficients along :math:`w` are
:math:`s_c\delta_{\ell k}` (information exponent :math:`k`).  The identity is
derived in the Notes of :func:`~expertlab.mixtures.sample_clustered_single_index`
from :math:`E[\mathrm{He}_n(G + t)] = t^n`; it is the mechanism that Kawata,
Matsutani, Kinoshita, Nishikawa & Suzuki (ICML 2025, arXiv 2506.01656; their
data model differs, theorem numbers not re-checked) build on: low information
exponent per cluster, higher for the pooled task.

How the checks work
-------------------
Hypothesis draws :math:`k \in \{1, 2, 3\}`, :math:`m \in \{1, 2\}`,
:math:`\kappa \in [0, 3]` (the endpoint 0 included) and a multi-index with
:math:`|\alpha| \le k + m + 2`; the expectation is computed with the library's
codes, signs and link by Gauss–Hermite quadrature over the :math:`m + 1`
independent coordinates of :math:`z` in each cluster (exact for these
polynomials) and compared with the closed form, computed independently.

Self-tests: two designs that a reader might take for equivalent do not cancel.
Signs :math:`s_c = a_1(c)` (not the parity) leave the degree-:math:`(k+1)`
coefficient :math:`\alpha = (k, 1, 0)` equal to :math:`\sqrt{k!}\kappa`; one-hot
means :math:`x = z + \kappa v_c` (orthonormal :math:`v_c`) with signs
:math:`(+, +, -, -)`, which sum to zero, leave
:math:`\alpha = (k, 1, 0, 0, 0)` at :math:`\sqrt{k!}\kappa/4`.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.polynomial.hermite_e import hermegauss, hermeval

from expertlab.mixtures import cluster_codes, cluster_signs, hermite_link

pytestmark = pytest.mark.proof

_T, _W = hermegauss(16)
_W = _W / math.sqrt(2 * math.pi)


def _he(n, t):
    """Unnormalised probabilists' Hermite polynomial He_n (NumPy's, independent of the module)."""
    return hermeval(t, [0.0] * n + [1.0])


def pooled_coefficient(alpha, degree, means, signs):
    """E[y He_alpha(x)] over clusters with the given means (rows: coordinates along v_j) and signs."""
    total = 0.0
    for mu, s in zip(means, signs):
        val = s * np.sum(_W * hermite_link(_T, degree) * _he(alpha[0], _T))
        for a_j, mu_j in zip(alpha[1:], mu):
            val *= np.sum(_W * _he(a_j, _T + mu_j))
        total += val / len(signs)
    return total


def closed_form(alpha, degree, kappa):
    if alpha[0] != degree or any(a % 2 == 0 for a in alpha[1:]):
        return 0.0
    return math.sqrt(math.factorial(degree)) * kappa ** (sum(alpha) - degree)


@st.composite
def cases(draw):
    degree = draw(st.integers(1, 3))
    n_bits = draw(st.integers(1, 2))
    kappa = draw(st.one_of(st.just(0.0), st.floats(0.0, 3.0)))
    alpha = tuple(draw(st.integers(0, degree + n_bits + 2)) for _ in range(n_bits + 1))
    return degree, n_bits, kappa, alpha


@given(cases())
def test_pooled_coefficients_match_the_closed_form(case):
    degree, n_bits, kappa, alpha = case
    codes = cluster_codes(2 ** n_bits)
    value = pooled_coefficient(alpha, degree, kappa * codes, cluster_signs(2 ** n_bits))
    scale = max(1.0, kappa) ** sum(alpha) * math.sqrt(math.factorial(max(alpha + (degree,))))
    assert value == pytest.approx(closed_form(alpha, degree, kappa), abs=1e-9 * scale)


@pytest.mark.parametrize("degree", [1, 2, 3])
@pytest.mark.parametrize("n_bits", [1, 2])
def test_every_coefficient_below_k_plus_m_vanishes(degree, n_bits):
    kappa, codes, signs = 2.0, cluster_codes(2 ** n_bits), cluster_signs(2 ** n_bits)
    for alpha in itertools.product(range(degree + n_bits), repeat=n_bits + 1):
        if sum(alpha) < degree + n_bits:
            assert abs(pooled_coefficient(alpha, degree, kappa * codes, signs)) < 1e-10, alpha
    first = (degree,) + (1,) * n_bits
    assert pooled_coefficient(first, degree, kappa * codes, signs) == pytest.approx(
        math.sqrt(math.factorial(degree)) * kappa ** n_bits, rel=1e-10)


@given(st.integers(1, 3), st.integers(1, 2), st.integers(1, 6))
def test_per_cluster_exponent_is_k(degree, n_bits, ell):
    for s in cluster_signs(2 ** n_bits):
        coef = s * np.sum(_W * hermite_link(_T, degree) * hermite_link(_T, ell))
        assert coef == pytest.approx(s * (ell == degree), abs=1e-10)


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_self_test_other_designs_do_not_cancel(degree):
    kappa = 1.5
    codes = cluster_codes(4)
    # signs a_1 instead of the parity: a degree-(k + 1) cross term survives
    v = pooled_coefficient((degree, 1, 0), degree, kappa * codes, codes[:, 0])
    assert v == pytest.approx(math.sqrt(math.factorial(degree)) * kappa, rel=1e-10)
    # one-hot means with signs summing to zero: also a degree-(k + 1) term
    onehot = kappa * np.eye(4)
    v = pooled_coefficient((degree, 1, 0, 0, 0), degree, onehot, np.array([1.0, 1.0, -1.0, -1.0]))
    assert v == pytest.approx(math.sqrt(math.factorial(degree)) * kappa / 4, rel=1e-10)
    assert abs(closed_form((degree, 1, 0), degree, kappa)) == 0.0       # which the parity design cancels
