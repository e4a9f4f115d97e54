r"""Fisher information of the softmax-contaminated MoE near the non-distinguishable limit.

Statement checked
-----------------
For the model :math:`p(y \mid x) = (1 - g(x)) f_0(y \mid h_0(x, \eta_0), \nu_0) + g(x)\,
\mathcal N(y; h(x, \eta), \nu)`, :math:`g(x) = \sigma(\beta^\top x + \tau)`, :math:`X \sim
\mathcal N(0, I_d)` (Yan et al., NeurIPS 2025, Eq. 1):

1. :func:`expertlab.mixtures.fisher_information` (quadrature) is :math:`\mathbb E[s s^\top]`, where
   :math:`s` is the score of one observation.
2. At the non-distinguishable point (Gaussian :math:`f_0`, :math:`h_0 = h`, :math:`\eta = \eta_0`,
   :math:`\nu = \nu_0`) the density does not depend on the gate, so the gate's rows of the
   information vanish.
3. Near it, with a drift :math:`\Delta` of :math:`\eta` (or of :math:`\nu`) and the noise large
   against the drift (:math:`\nu = 1`), the asymptotic standard deviations of the MLE,
   :math:`\sqrt{(I^{-1})_{jj}}`, scale in :math:`\Delta` as follows:

   - with a constant gate (:math:`\beta^* = 0`): :math:`\tau` as :math:`\Delta^{-2}`, :math:`\beta`
     and the drifting parameter as :math:`\Delta^{-1}`, the other expert parameter as
     :math:`\Delta^0`.  The theorem's rates :math:`n^{-1/2} \|\Delta\|^{-2}` (for :math:`e^\tau`)
     and :math:`n^{-1/2} \|\Delta\|^{-1}` are attained there.
   - with the paper's gate (:math:`\beta^* = \mathbf 1 / \sqrt d`): :math:`\tau` and :math:`\beta`
     as :math:`\Delta^{-1}`, :math:`\eta` and :math:`\nu` as :math:`\Delta^0`.  The gate then
     varies with :math:`x`, and the first-order term of :math:`\varphi_1 - f_0` already tells the
     gate from the expert.  Along :math:`\Delta = n^{-1/8}` the MLE then reaches :math:`n^{-3/8}`
     and :math:`n^{-1/2}`, which is faster than the theorem's bound (which is an upper bound).

   Why (derived here): at first order :math:`\varphi_1 - f_0 \approx \Delta\, \partial\varphi`, so
   the score of :math:`\tau` is :math:`(1 - g)\Delta` times the score of the drifting parameter.
   When :math:`g` is constant the two are collinear, and :math:`\tau` is identified only at
   second order, with information of order :math:`\Delta^4`.
4. The slopes of the predicted mean errors along the simulation's sequence, quoted in
   ``simulations/mixtures/contaminated_moe.py``, are what the information gives.

How the checks work
-------------------
1. For Gaussian and Laplace :math:`f_0`, :math:`d = 2` and :math:`3`, :math:`2 \cdot 10^5` draws
   are taken from ``sample_contaminated_moe``.  The scores come from central differences of
   ``contaminated_moe_loglik``, one observation per replication (an implementation independent
   of the quadrature's analytic scores).  Every entry of their mean outer product must lie
   within 4.5 Monte Carlo standard errors of the quadrature, plus 1% of the largest entry for
   the Laplace kink.
2. The gate's rows are 0 at :math:`\Delta = 0`, up to :math:`10^{-12}` times the largest entry.  The smallest eigenvalue there is at
   most :math:`10^{-12}` times the largest.
3. The slopes of :math:`\log \mathrm{sd}` against :math:`\log \Delta` on :math:`\Delta = 0.01
   \dots 0.1` are fitted and must be within 0.1 of the exponents above.
4. The slopes of ``asymptotic_parameter_errors`` over :math:`n = 10^3 \dots 10^4` (:math:`d = 2`,
   :math:`\nu = 0.001`) must be within 0.01 of the quoted values.

References
----------
F. Yan, H. Nguyen, D. Le, P. Akbarian, N. Ho, A. Rinaldo, NeurIPS 2025 (arXiv 2505.18455),
Eq. 1 and the rate theorems of Sec. 3.  A. W. van der Vaart, *Asymptotic Statistics*, 1998,
Thm 5.39 (asymptotic normality of the MLE).
"""

from __future__ import annotations

import numpy as np
import pytest

from expertlab.mixtures import (ContaminatedMoEParams, FrozenExpert, asymptotic_parameter_errors,
                                contaminated_moe_loglik, fisher_information, sample_contaminated_moe)

pytestmark = pytest.mark.proof

FAST = dict(x_step=0.3, y_step=0.1)     # agrees with the default spacings to about 1e-8 relative


def _params(beta, tau, eta, nu):
    return ContaminatedMoEParams.tile(beta, tau, eta, nu, 1)


def _mc_information(truth, expert, n, seed):
    """Mean outer product of central-difference scores of ``contaminated_moe_loglik`` and its standard errors."""
    d = truth.beta.shape[1]
    X, y, _ = sample_contaminated_moe(n, truth, expert, seed=seed)
    X, y = X[0][:, None, :], y[0][:, None]                          # one observation per replication
    theta = np.concatenate([truth.beta[0], truth.tau, truth.eta[0], truth.nu])
    scores = np.empty((n, theta.size))
    for j in range(theta.size):
        step = np.zeros(theta.size)
        step[j] = 1e-6 * max(1.0, abs(theta[j]))
        lik = [contaminated_moe_loglik(X, y, ContaminatedMoEParams.tile(t[:d], t[d], t[d + 1:2 * d + 1], t[-1], n),
                                       expert) for t in (theta + step, theta - step)]
        scores[:, j] = (lik[0] - lik[1]) / (2 * step[j])
    outer = scores[:, :, None] * scores[:, None, :]
    return outer.mean(0), outer.std(0) / np.sqrt(n)


@pytest.mark.parametrize("density, d, nu0, nu", [("gaussian", 2, 1.0, 1.0), ("gaussian", 3, 0.3, 0.2),
                                                 ("laplace", 2, 0.5, 0.1), ("gaussian", 2, 1e-3, 1e-3)])
def test_quadrature_equals_the_mean_outer_product_of_the_scores(density, d, nu0, nu):
    e1 = np.eye(d)[0]
    expert = FrozenExpert(e1, nu0, density)
    truth = _params(np.ones(d) / np.sqrt(d), 0.5, 1.3 * e1 + 0.2 * np.eye(d)[1], nu)
    quad = fisher_information(truth, expert, **FAST)[0]
    mc, se = _mc_information(truth, expert, 200_000, seed=11)
    allowance = 4.5 * se + (0.01 * np.abs(quad).max() if density == "laplace" else 0.0)
    assert np.all(np.abs(quad - mc) <= allowance), np.max(np.abs(quad - mc) / se)


def test_the_gate_carries_no_information_at_the_non_distinguishable_point():
    d, e1 = 2, np.eye(2)[0]
    info = fisher_information(_params(np.ones(d) / np.sqrt(d), 1.0, e1, 1.0), FrozenExpert(e1, 1.0, "gaussian"))[0]
    assert np.max(np.abs(info[:d + 1])) <= 1e-12 * np.max(np.abs(info))       # 0 up to rounding
    eig = np.linalg.eigvalsh(info)
    assert eig[0] <= 1e-12 * eig[-1]
    assert np.all(np.linalg.eigvalsh(info[d + 1:, d + 1:]) > 0)       # the expert alone stays identified


def _sd_slopes(beta, drift, deltas=np.geomspace(0.01, 0.1, 4)):
    """Slopes in log Delta of the asymptotic sds of (tau, beta, eta, nu), d = 2, nu0 = 1."""
    d, e1 = 2, np.eye(2)[0]
    sds = []
    for delta in deltas:
        eta, nu = (e1 * (1 + delta), 1.0) if drift == "eta" else (e1, 1.0 + delta)
        cov = np.linalg.inv(fisher_information(_params(beta, 1.0, eta, nu), FrozenExpert(e1, 1.0, "gaussian"),
                                               **FAST)[0])
        sds.append([np.sqrt(cov[d, d]), np.sqrt(np.trace(cov[:d, :d])),
                    np.sqrt(np.trace(cov[d + 1:2 * d + 1, d + 1:2 * d + 1])), np.sqrt(cov[-1, -1])])
    return np.polyfit(np.log(deltas), np.log(np.array(sds)), 1)[0]


@pytest.mark.parametrize("gate, drift, expected", [
    ("constant", "eta", (-2, -1, -1, 0)), ("constant", "nu", (-2, -1, 0, -1)),
    ("paper", "eta", (-1, -1, 0, 0)), ("paper", "nu", (-1, -1, 0, 0))])
def test_exponents_of_the_asymptotic_sds_in_the_drift(gate, drift, expected):
    beta = np.zeros(2) if gate == "constant" else np.ones(2) / np.sqrt(2)
    slopes = _sd_slopes(beta, drift)
    np.testing.assert_allclose(slopes, expected, atol=0.1)


def test_the_prediction_slopes_quoted_by_the_simulation():
    sizes = np.array([1000, 1778, 3162, 5623, 10000])
    e1 = np.eye(2)[0]
    pred = []
    for n in sizes:
        truth = _params(np.ones(2) / np.sqrt(2), 1.0, e1 * (1 + n ** (-1 / 8)), 1e-3)
        a = asymptotic_parameter_errors(truth, FrozenExpert(e1, 1e-3, "gaussian"), int(n), **FAST)
        pred.append([a.exp_tau[0], a.beta[0], a.eta[0], a.nu[0]])
    slopes = np.polyfit(np.log(sizes), np.log(np.array(pred)), 1)[0]
    np.testing.assert_allclose(slopes, [-0.45, -0.47, -0.51, -0.47], atol=0.01)
