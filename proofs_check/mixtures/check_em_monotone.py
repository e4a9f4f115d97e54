r"""EM never decreases the likelihood (with sample weights and label priors too).

Statement checked
-----------------
For a finite Gaussian mixture, one EM iteration :math:`\theta \mapsto \theta'`
(E-step responsibilities at :math:`\theta`, exact M-step) satisfies
:math:`\ell(\theta') \ge \ell(\theta)`, with :math:`\ell` the observed-data
log-likelihood (Dempster, Laird & Rubin 1977, Theorem 1; for normal mixtures
Redner & Walker 1984, Sec. 4).  The same proof covers the objective that
:func:`expertlab.mixtures.fit_gaussian_mixture` maximises with sample weights
:math:`s_i \ge 0` and per-point priors :math:`\pi_{ic}` (one-hot for a
labelled point, all ones for an unlabelled one):

.. math::

    \ell(\theta) = \frac{1}{\sum_i s_i} \sum_i s_i \log \sum_c \pi_{ic} w_c
        \mathcal N(x_i; \mu_c, \Sigma_c),

because the priors are constants that factor out of the E-step's Jensen
bound, and the weighted M-step maximises the weighted expected
complete-data log-likelihood exactly.

How the checks work
-------------------
Hypothesis draws data sets from Gaussian mixtures
(:func:`expertlab.testing.strategies.gaussian_mixture_samples`: up to 3
features and 3 components of every covariance type), fits them with every
covariance type, random sample weights and a random set of labelled points.
It fits them with ``reg_covar=0`` (the floor makes the M-step a regularised
step, to which the theorem does not apply), ``tol=0`` and 25 iterations from
a random start.  The recorded path :math:`\ell(\theta_0), \ell(\theta_1),
\dots` must be non-decreasing up to a rounding allowance of
:math:`10^{-10}(1 + |\ell|)`.  Draws where a component collapses onto too few
points for a non-singular covariance leave the theorem's domain (the
likelihood is unbounded there) and are discarded.

Self-test: an over-relaxed update that moves each mean 2.5 times as far as
EM does can lower :math:`\ell`.  Worked by hand for one component and data
with mean :math:`m`, started at :math:`\mu_0 = m - 1`: EM jumps to
:math:`m`, the over-relaxed step to :math:`m + 1.5`, farther from the
maximiser than the start.

References
----------
A. P. Dempster, N. M. Laird, D. B. Rubin, "Maximum likelihood from incomplete
data via the EM algorithm", JRSS B 39(1), 1977, Thm 1.  R. A. Redner,
H. F. Walker, "Mixture densities, maximum likelihood and the EM algorithm",
SIAM Review 26(2), 1984.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from expertlab.mixtures import GaussianMixtureParams, fit_gaussian_mixture, log_likelihood
from expertlab.testing import strategies

pytestmark = pytest.mark.proof


@st.composite
def problems(draw):
    seed = draw(st.integers(0, 2 ** 32 - 1))
    n_features = draw(st.integers(1, 3))
    n_components = draw(st.integers(1, 3))
    X = draw(strategies.gaussian_mixture_samples(
        max_reps=1, min_components=n_components, max_components=n_components, min_features=n_features,
        max_features=n_features, min_samples=12 * n_components * n_features, max_samples=120)).X[0]
    n = X.shape[0]
    kind = draw(st.sampled_from(["full", "diag", "spherical"]))
    weighted = draw(st.booleans())
    frac_labelled = draw(st.sampled_from([0.0, 0.1, 0.5]))
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.1, 3.0, n) if weighted else None
    labels = np.where(rng.uniform(size=n) < frac_labelled, rng.integers(0, n_components, n), -1)
    return X, n_components, kind, w, labels, seed


@given(problems())
def test_em_objective_never_decreases(problem):
    X, C, kind, w, labels, seed = problem
    try:
        res = fit_gaussian_mixture(X, C, covariance_type=kind, init="random", seed=seed, max_iter=25, tol=0.0,
                                   reg_covar=0.0, sample_weight=w, labels=labels)
    except ValueError as exc:                     # a collapsed component: outside the statement's domain
        assume("positive definite" not in str(exc) and "zero probability" not in str(exc))
        raise
    path = res.loglik_path
    assume(np.all(np.isfinite(path)))
    slack = 1e-10 * (1.0 + np.abs(path[1:]))
    assert np.all(np.diff(path) >= -slack), np.diff(path).min()


def test_self_test_over_relaxed_step_can_decrease_the_likelihood():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1, 50, 1))
    m = float(x.mean())
    params = lambda mu: GaussianMixtureParams(np.ones((1, 1)), np.full((1, 1, 1), mu), np.ones((1, 1)),  # noqa: E731
                                              "spherical")
    start, em_step, over = m - 1.0, m, m - 1.0 + 2.5 * 1.0
    ll = [float(log_likelihood(x, params(mu))[0]) for mu in (start, em_step, over)]
    assert ll[1] > ll[0] > ll[2]                 # EM climbs, the over-relaxed step falls below the start
