r"""Cost confidence: the pessimistic cost bounds the true cost on the ridge ellipsoid, which has coverage 1 - delta.

Statement checked
-----------------
(i) For a positive definite :math:`\Lambda`, any :math:`\hat\mu`, :math:`\beta \ge 0`
and every :math:`\mu^\star` with :math:`\|\hat\mu - \mu^\star\|_\Lambda \le \beta`,

.. math::

    \langle \psi, \mu^\star \rangle \le \langle \psi, \hat\mu \rangle + \beta \|\psi\|_{\Lambda^{-1}}
    \quad \text{for every } \psi,

with equality at :math:`\mu^\star = \hat\mu + \beta \Lambda^{-1}\psi / \|\psi\|_{\Lambda^{-1}}`
(the pessimistic cost of :func:`expertlab.mdp.pessimistic_costs` is the largest
cost over the ellipsoid, by Cauchy–Schwarz in the :math:`\Lambda` inner product).

(ii) For ridge regression :math:`\Lambda_n = \lambda I + \sum_{j \le n} \psi_j \psi_j^\top`,
:math:`\hat\mu_n = \Lambda_n^{-1} \sum_j \psi_j y_j`,
:math:`y_j = \langle \psi_j, \mu^\star \rangle + \sigma \varepsilon_j`
with standard normal :math:`\varepsilon_j`, the event
:math:`\|\hat\mu_n - \mu^\star\|_{\Lambda_n} \le \beta_c` for all :math:`n \le N` at once, with the
radius :math:`\beta_c` of :func:`expertlab.mdp.cost_radius`, has probability at least :math:`1 - \delta`.

Source: Abbasi-Yadkori, Pál & Szepesvári, "Improved algorithms for linear
stochastic bandits", NeurIPS 2011, Thm 2 (self-normalised bound) and the
determinant–trace inequality (Lemma 10); used for the safety value in Shi,
Liang & Shroff, ICML 2023 (accuracy of the estimated safety parameter).

How the checks work
-------------------
(i) Hypothesis draws :math:`d_c \le 4`, a Gram matrix :math:`\lambda I + X^\top X`, an
estimate, a radius, a point of the ellipsoid (a direction scaled to a fraction
of the boundary) and features :math:`(S, A, d_c)`; the pessimistic cost must dominate
and the boundary maximiser must attain it.  (ii) Seeded streams (400 per
setting, :math:`N = 200` observations, features of the ladder instance and of random
draws, the noise :func:`expertlab.mdp.cost_noise` of a
:class:`~expertlab.mdp.LearnedCostSafeMixture`) are regressed
incrementally; the covered fraction must not be significantly below
:math:`1 - \delta`: the one-sided Clopper–Pearson upper bound at 0.99 must reach it.

Self-test: with the radius shrunk to a fifth the coverage falls clearly
below :math:`1 - \delta` (its upper bound does not reach it), so the check can fail.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta as beta_dist

from expertlab.mdp import cost_noise, cost_radius, pessimistic_costs, safe_cost_ladder, sherman_morrison

pytestmark = pytest.mark.proof


@st.composite
def ellipsoids(draw):
    d = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    lam = draw(st.floats(1e-3, 10.0))
    x = rng.normal(size=(draw(st.integers(0, 12)), d)) * draw(st.floats(0.1, 5.0))
    gram = lam * np.eye(d) + x.T @ x
    mu_hat = rng.normal(size=d)
    radius = draw(st.floats(0.0, 3.0))
    u = rng.normal(size=d)
    u_norm = math.sqrt(float(u @ gram @ u))
    frac = draw(st.floats(0.0, 1.0))
    mu_star = mu_hat + (frac * radius / u_norm) * u if u_norm > 0 else mu_hat
    psi = rng.normal(size=(draw(st.integers(1, 3)), draw(st.integers(1, 3)), d))
    return gram, mu_hat, radius, mu_star, psi


@settings(max_examples=200, deadline=None)
@given(ellipsoids())
def test_pessimistic_cost_dominates_on_the_ellipsoid(case):
    gram, mu_hat, radius, mu_star, psi = case
    inv = np.linalg.inv(gram)[None]
    b = (gram @ mu_hat)[None]
    upper = pessimistic_costs(psi, inv, b, radius)[0]
    true = psi @ mu_star
    scale = 1.0 + np.abs(psi @ mu_hat) + radius * np.sqrt(np.einsum("sai,ij,saj->sa", psi, inv[0], psi))
    assert np.all(true <= upper + 1e-9 * scale)
    # the boundary point in the direction Lambda^-1 psi attains the bound (so it is the maximum)
    p = psi[0, 0]
    w = inv[0] @ p
    norm = math.sqrt(max(float(p @ w), 0.0))
    if norm > 1e-12:
        worst = mu_hat + radius * w / norm
        assert p @ worst == pytest.approx(upper[0, 0], rel=1e-9, abs=1e-9)


def _coverage(features, mu_star, sigma, delta, lam, n_obs, n_streams, seed, shrink=1.0):
    """Fraction of streams whose ridge estimate stays in the ellipsoid of radius beta_c at every n <= n_obs."""
    d = features.shape[1]
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    pick = rng.integers(0, features.shape[0], size=(n_streams, n_obs))
    keys = np.random.SeedSequence(seed + 1).generate_state(n_streams, dtype=np.uint64)
    noise = cost_noise(keys, n_obs)  # (n_streams, n_obs)
    l_bound = float(np.sqrt((features ** 2).sum(axis=1)).max())
    radius = shrink * cost_radius(sigma, delta, n_obs, d, lam, l_bound, float(np.linalg.norm(mu_star)))
    inv = np.broadcast_to(np.eye(d) / lam, (n_streams, d, d)).copy()
    gram = np.broadcast_to(np.eye(d) * lam, (n_streams, d, d)).copy()
    b = np.zeros((n_streams, d))
    covered = np.ones(n_streams, dtype=bool)
    for j in range(n_obs):
        x = features[pick[:, j]]
        y = x @ mu_star + sigma * noise[:, j]
        inv = sherman_morrison(inv, x)
        gram += x[:, :, None] * x[:, None, :]
        b += x * y[:, None]
        err = np.einsum("rij,rj->ri", inv, b) - mu_star
        covered &= np.einsum("ri,rij,rj->r", err, gram, err) <= radius ** 2
    return covered


def _cp_upper(successes, n, level=0.99):
    return 1.0 if successes == n else float(beta_dist.ppf(level, successes + 1, n - successes))


LADDER = safe_cost_ladder(4, safety_gap=0.1)
SETTINGS = [
    # ladder features (the learner's instance), its parameter, noise 0.05
    (LADDER.cost_features.reshape(-1, 3), LADDER.cost_param, 0.05, 0.1, 0.01),
    # random features, a larger noise, a looser delta
    (np.random.default_rng(5).uniform(-1, 1, size=(12, 2)), np.array([0.3, -0.6]), 0.5, 0.5, 1.0),
]


@pytest.mark.parametrize("setting", range(len(SETTINGS)))
def test_self_normalised_coverage(setting):
    features, mu_star, sigma, delta, lam = SETTINGS[setting]
    covered = _coverage(features, mu_star, sigma, delta, lam, 200, 400, seed=100 + setting)
    assert _cp_upper(int(covered.sum()), covered.size) >= 1.0 - delta, covered.mean()


def test_self_check_shrunk_radius_fails():
    features, mu_star, sigma, delta, lam = SETTINGS[1]
    covered = _coverage(features, mu_star, sigma, delta, lam, 200, 400, seed=101, shrink=0.2)
    assert _cp_upper(int(covered.sum()), covered.size) < 1.0 - delta, covered.mean()
