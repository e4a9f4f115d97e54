r"""The Frank--Wolfe XY design reaches the convex optimum, and the optimum is at most 4d.

Statement checked
-----------------
For arms :math:`x_1, \dots, x_K` spanning :math:`\mathbb R^d` the XY-optimal
design value

.. math::

    \rho^\star = \min_{\lambda \in \Delta_K} \max_{i \ne j} \|x_i - x_j\|^2_{A(\lambda)^{-1}},
    \qquad A(\lambda) = \sum_k \lambda_k x_k x_k^\top,

is a convex program (``matrix_frac`` is jointly convex and :math:`A` is
affine in :math:`\lambda`), solved here by cvxpy as the reference.  Two
facts are used by :func:`expertlab.bandits.linfact`:

1. the allocation returned by :func:`expertlab.bandits.xy_optimal_design`
   (Frank--Wolfe) has a value :math:`\rho_{FW} \ge \rho^\star` (no allocation
   beats the optimum) and, after 1000 iterations, :math:`\rho_{FW} \le 1.02\,\rho^\star`;
2. :math:`\rho^\star \le 4d`: the G-optimal design has
   :math:`\max_k \|x_k\|^2_{A^{-1}} = d` (Kiefer--Wolfowitz), and
   :math:`\|x_i - x_j\| \le \|x_i\| + \|x_j\|` in the :math:`A^{-1}` norm.

Domain: Hypothesis draws :math:`d \in \{2, 3\}`, :math:`K \in [d+1, 7]`
arms with Gaussian coordinates scaled per arm by factors in
:math:`[0.2, 5]` (very unequal norms), plus the identity (where
:math:`\rho^\star = 2K` exactly).

Self-test: a deliberately poor allocation (all but a vanishing mass on the
arm of smallest norm) has a value far above :math:`1.02\rho^\star`, so the
comparison rejects a design that is not optimal.

References
----------
J. Kiefer and J. Wolfowitz, "The equivalence of two extremum problems",
Canadian J. Math. 12, 1960.  M. Soare, A. Lazaric, R. Munos, NeurIPS 2014
(the XY allocation); T. Fiez et al., NeurIPS 2019 (its use in phased
elimination); Z. Li, T. Ma, C. Hua, R. Zhu, arXiv 2510.00073 (LinFACT).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expertlab.bandits import xy_optimal_design

cp = pytest.importorskip("cvxpy")

pytestmark = pytest.mark.proof


def _cvx_value(X):
    K = X.shape[0]
    lam = cp.Variable(K, nonneg=True)
    t = cp.Variable()
    A = sum(lam[k] * np.outer(X[k], X[k]) for k in range(K))
    cons = [cp.sum(lam) == 1] + [cp.matrix_frac(X[i] - X[j], A) <= t for i in range(K) for j in range(i + 1, K)]
    cp.Problem(cp.Minimize(t), cons).solve(solver="CLARABEL")
    return float(t.value)


def _value(X, lam):
    Ainv = np.linalg.inv((lam[:, None] * X).T @ X)
    return max(float((X[i] - X[j]) @ Ainv @ (X[i] - X[j])) for i in range(len(X)) for j in range(len(X)) if i != j)


@st.composite
def arm_sets(draw):
    d = draw(st.integers(2, 3))
    K = draw(st.integers(d + 1, 7))
    seed = draw(st.integers(0, 2 ** 31 - 1))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(K, d)) * np.array(draw(st.lists(st.floats(0.2, 5.0), min_size=K, max_size=K)))[:, None]
    return X


@settings(max_examples=15, deadline=None)
@given(arm_sets())
def test_frank_wolfe_reaches_the_optimum(X):
    ref = _cvx_value(X)
    lam, rho = xy_optimal_design(X, n_iter=1000)
    assert rho == pytest.approx(_value(X, lam), rel=1e-9)     # the reported value is the exact one
    assert rho >= ref * (1 - 1e-5)
    assert rho <= 1.02 * ref
    assert ref <= 4 * X.shape[1] * (1 + 1e-6)


@pytest.mark.parametrize("K", [2, 3, 5])
def test_identity_optimum(K):
    ref = _cvx_value(np.eye(K))
    assert ref == pytest.approx(2.0 * K, rel=1e-5)
    _, rho = xy_optimal_design(np.eye(K), n_iter=1000)
    assert rho == pytest.approx(2.0 * K, rel=1e-2)


def test_self_check_rejects_a_poor_design():
    X = np.random.default_rng(0).normal(size=(6, 3)) * np.array([0.2, 1, 1, 1, 3, 5])[:, None]
    ref = _cvx_value(X)
    small = int(np.argmin(np.linalg.norm(X, axis=1)))
    lam = np.full(6, 1e-3)
    lam[small] = 1.0 - 5e-3
    assert _value(X, lam) > 1.02 * ref
