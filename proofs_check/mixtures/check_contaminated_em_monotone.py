r"""EM for the softmax-contaminated MoE never decreases the likelihood.

Statement checked
-----------------
For the model :math:`p(y \mid x) = (1 - g(x)) f_0(y \mid h_0(x, \eta_0), \nu_0)
+ g(x) \mathcal N(y; h(x, \eta), \nu)` with :math:`g(x) = \sigma(\beta^\top x + \tau)`
(Yan et al., NeurIPS 2025, Eq. 1), any M-step that does not decrease the
expected complete-data log-likelihood :math:`Q(\theta \mid \theta_k)` gives
:math:`\ell(\theta_{k+1}) \ge \ell(\theta_k)` (the generalised EM theorem of
Dempster, Laird & Rubin 1977, Thm 1).  :func:`expertlab.mixtures.fit_contaminated_moe`
splits :math:`Q` into the soft-label logistic term of :math:`(\beta, \tau)` and
the weighted Gaussian term of :math:`(\eta, \nu)`; each damped (Gauss–)Newton
step is accepted only when its term does not fall and :math:`\nu` is then set
to the exact maximiser, so the statement applies.

How the checks work
-------------------
Hypothesis draws data from the model (1 to 3 features, every frozen density
and link, random true parameters) and fits it from a random start with
``tol=0`` for 15 iterations; the recorded path :math:`\ell(\theta_0),
\ell(\theta_1), \dots` must be non-decreasing up to a rounding allowance of
:math:`10^{-10}(1 + |\ell|)`.

Non-identifiability (Yan et al. 2025, Sec. 3: distinguishability fails when
:math:`f_0` is Gaussian with :math:`h_0 = h`): with :math:`\eta = \eta_0` and
:math:`\nu = \nu_0` the density equals :math:`f_0` for *every* gate
:math:`(\beta, \tau)`; Hypothesis exhibits pairs of different gates with the same
log-likelihood on random data.  Self-test: with a Laplace :math:`f_0` the same
pairs give different likelihoods (distinguishable).

References
----------
F. Yan, H. Nguyen, D. Le, P. Akbarian, N. Ho, A. Rinaldo, NeurIPS 2025
(arXiv 2505.18455).  A. P. Dempster, N. M. Laird, D. B. Rubin, JRSS B 39(1), 1977, Thm 1.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expertlab.mixtures import (ContaminatedMoEParams, FrozenExpert, contaminated_moe_loglik, fit_contaminated_moe,
                                sample_contaminated_moe)

pytestmark = pytest.mark.proof


@st.composite
def problems(draw):
    seed = draw(st.integers(0, 2 ** 32 - 1))
    d = draw(st.integers(1, 3))
    rng = np.random.default_rng(seed)
    density = draw(st.sampled_from(["laplace", "gaussian", "student_t"]))
    link = draw(st.sampled_from(["tanh", "sigmoid", "gelu", "linear"]))
    nu = draw(st.sampled_from([1e-3, 0.1, 1.0]))
    expert = FrozenExpert(rng.normal(size=d), nu, density, link=draw(st.sampled_from(["tanh", "linear"])))
    truth = ContaminatedMoEParams(rng.normal(size=(2, d)), rng.normal(size=2), rng.normal(size=(2, d)),
                                  np.full(2, nu))
    n = draw(st.integers(20, 150))
    return n, truth, expert, link, seed


@settings(max_examples=40, deadline=None)
@given(problems())
def test_em_log_likelihood_never_decreases(problem):
    n, truth, expert, link, seed = problem
    X, y, _ = sample_contaminated_moe(n, truth, expert, link=link, seed=seed)
    res = fit_contaminated_moe(X, y, expert, link=link, init="random", seed=seed, tol=0.0, max_iter=15,
                               batched=True)
    for path in res.loglik_path:
        assert np.all(np.isfinite(path))
        slack = 1e-10 * (1.0 + np.abs(path[1:]))
        assert np.all(np.diff(path) >= -slack), np.diff(path).min()


gates = st.tuples(st.floats(-3, 3), st.floats(-3, 3))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), gates, gates)
def test_gaussian_f0_with_the_same_link_is_not_identifiable(seed, g1, g2):
    rng = np.random.default_rng(seed)
    eta0 = rng.normal(size=2)
    X, y = rng.normal(size=(1, 30, 2)), rng.normal(size=(1, 30))
    e = FrozenExpert(eta0, 0.5, "gaussian")
    p1, p2 = (ContaminatedMoEParams(np.array([[b, -b]]), np.array([t]), eta0[None], np.array([0.5]))
              for b, t in (g1, g2))
    l1, l2 = (float(contaminated_moe_loglik(X, y, p, e)[0]) for p in (p1, p2))
    assert l1 == pytest.approx(l2, rel=1e-12, abs=1e-12)


def test_self_test_laplace_f0_tells_the_gates_apart():
    rng = np.random.default_rng(0)
    eta0 = rng.normal(size=2)
    X, y = rng.normal(size=(1, 30, 2)), rng.normal(size=(1, 30))
    e = FrozenExpert(eta0, 0.5, "laplace")
    p1, p2 = (ContaminatedMoEParams(np.array([[b, -b]]), np.array([t]), eta0[None], np.array([0.5]))
              for b, t in ((0.0, -2.0), (1.0, 2.0)))
    l1, l2 = (float(contaminated_moe_loglik(X, y, p, e)[0]) for p in (p1, p2))
    assert abs(l1 - l2) > 1e-3
