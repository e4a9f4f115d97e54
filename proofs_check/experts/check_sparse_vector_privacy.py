r"""AboveThreshold (the sparse vector technique) is differentially private.

Statement
---------
Queries :math:`q_1, \dots, q_k` of sensitivity 1 (neighbouring data sets
give :math:`|q_i - q'_i| \le 1` for every :math:`i`, in any directions), a
threshold :math:`\tau`, noise :math:`\rho \sim \mathrm{Lap}(b_1)` drawn once
and :math:`\nu_i \sim \mathrm{Lap}(b_2)` drawn per query.  The output is the
index :math:`j` of the first query with :math:`q_j + \nu_j \ge \tau + \rho`,
or :math:`\bot` when there is none.  Then for every output :math:`o`

.. math::

    P[o \mid q] \le e^{\varepsilon} P[o \mid q'], \qquad
    \varepsilon = \frac{1}{b_1} + \frac{2}{b_2},

in particular :math:`\varepsilon`-DP with :math:`b_1 = 2/\varepsilon`,
:math:`b_2 = 4/\varepsilon`: Dwork & Roth, *The Algorithmic Foundations of
Differential Privacy* (2014), Algorithm 1 and Theorem 3.23.  The general
formula is what the proof of Theorem 3.23 shows (a shift of :math:`\rho` by
1 costs :math:`1/b_1`, a shift of :math:`\nu_j` by 2 costs :math:`2/b_2`);
this is the form used by :func:`expertlab.experts._privacy.sparse_vector_epsilon`
and by :func:`expertlab.experts.sparse_vector_experts`.

How it is checked
-----------------
The output probabilities are computed exactly up to quadrature error: given
:math:`\rho`, :math:`P[j \mid \rho] = \prod_{i<j} F(\tau + \rho - q_i)
\,(1 - F(\tau + \rho - q_j))` and :math:`P[\bot \mid \rho] = \prod_i F(\tau
+ \rho - q_i)` with :math:`F` the :math:`\mathrm{Lap}(b_2)` distribution
function; the integral over the :math:`\mathrm{Lap}(b_1)` density of
:math:`\rho` is split at the kinks :math:`\rho = q_i - \tau` and
:math:`\rho = 0` and done by 80-point Gauss–Legendre on each smooth piece
(tails beyond :math:`60 b_1` carry mass below :math:`e^{-60}`).  Every
neighbouring pair on a grid of small query vectors is enumerated, and
Hypothesis searches continuous query vectors.  Self-test: with a quarter of
the query noise (:math:`b_2 = 1/\varepsilon`) the search finds a pair
whose privacy loss exceeds :math:`\varepsilon`, so the check can fail.
Link to the library: the first switch of
:func:`expertlab.experts.sparse_vector_experts` (one switch allowed) is
simulated on a fixed loss sequence and its frequencies are compared with the
exact law above for the learner's scales (wrong scales are rejected by tens
of standard errors).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expertlab.experts._privacy import sparse_vector_epsilon

pytestmark = pytest.mark.proof

_X, _W = np.polynomial.legendre.leggauss(80)


def _lap_cdf(x, b):
    return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0.0) / b), 1.0 - 0.5 * np.exp(-np.maximum(x, 0.0) / b))


def output_probabilities(q, tau, b1, b2):
    """``[P(1), ..., P(k), P(bot)]`` of AboveThreshold on queries ``q``, by piecewise Gauss–Legendre."""
    q = np.asarray(q, dtype=np.float64)
    cuts = np.unique(np.concatenate([[-60.0 * b1, 0.0, 60.0 * b1], np.clip(q - tau, -60 * b1, 60 * b1)]))
    lo, hi = cuts[:-1], cuts[1:]
    rho = (0.5 * (hi - lo)[:, None] * _X[None, :] + 0.5 * (hi + lo)[:, None]).ravel()
    w = (0.5 * (hi - lo)[:, None] * _W[None, :]).ravel() * np.exp(-np.abs(rho) / b1) / (2 * b1)
    below = _lap_cdf(tau + rho[:, None] - q[None, :], b2)  # P(q_i + nu_i < tau + rho)
    before = np.cumprod(np.concatenate([np.ones((rho.size, 1)), below], axis=1), axis=1)
    p_first = before[:, :-1] * (1.0 - below)
    out = np.concatenate([p_first, before[:, -1:]], axis=1)
    return w @ out


def max_privacy_loss(q, qp, tau, b1, b2):
    p, pp = output_probabilities(q, tau, b1, b2), output_probabilities(qp, tau, b1, b2)
    return float(np.max(np.abs(np.log(p) - np.log(pp))))


def test_probabilities_sum_to_one_and_match_a_hand_case():
    p = output_probabilities([0.3, -1.0, 2.0], 0.5, 2.0, 4.0)
    assert abs(p.sum() - 1.0) < 1e-12
    # one query, q = 0, tau = x: P(nu - rho >= x).  With b1 = b2 = b, nu - rho has density
    # (1 + |z|/b) e^{-|z|/b} / (4b) (convolution of two Laplace(b)), so for x >= 0
    # P(nu - rho >= x) = e^{-x/b} (2 + x/b) / 4.
    b, x = 1.5, 0.7
    exact = math.exp(-x / b) * (2 + x / b) / 4
    assert abs(output_probabilities([0.0], x, b, b)[0] - exact) < 1e-12


def _grid_pairs(k, values):
    for q in itertools.product(values, repeat=k):
        for d in itertools.product((-1.0, 0.0, 1.0), repeat=k):
            qp = np.add(q, d)
            if np.all(np.isin(qp, values)):
                yield np.array(q), qp


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_enumeration_on_a_grid_respects_epsilon(epsilon):
    b1, b2 = 2.0 / epsilon, 4.0 / epsilon
    assert sparse_vector_epsilon(1.0, b1, b2) == pytest.approx(epsilon, rel=1e-12)
    values = np.arange(-2.0, 3.0)
    cache = {}
    worst = 0.0
    for q, qp in _grid_pairs(3, values):
        pa = cache.setdefault(tuple(q), output_probabilities(q, 0.0, b1, b2))
        pb = cache.setdefault(tuple(qp), output_probabilities(qp, 0.0, b1, b2))
        worst = max(worst, float(np.max(np.abs(np.log(pa) - np.log(pb)))))
    assert worst <= epsilon * (1 + 1e-9)
    assert worst > 0.5 * epsilon  # the bound is not vacuous on these inputs


@settings(max_examples=max(20, settings.default.max_examples))
@given(st.integers(1, 4).flatmap(lambda k: st.tuples(
    st.lists(st.floats(-4.0, 4.0), min_size=k, max_size=k),
    st.lists(st.floats(-1.0, 1.0), min_size=k, max_size=k))),
    st.floats(-2.0, 2.0), st.floats(0.1, 3.0))
def test_search_finds_no_violation(qd, tau, epsilon):
    q, d = map(np.array, qd)
    loss = max_privacy_loss(q, q + d, tau, 2.0 / epsilon, 4.0 / epsilon)
    assert loss <= epsilon * (1 + 1e-9)


def test_general_scales_formula():
    """``1/b1 + 2/b2`` bounds the loss for unequal splits of the budget too."""
    worst = 0.0
    for b1, b2 in [(1.0, 8.0), (10.0, 1.5), (3.0, 3.0)]:
        eps = sparse_vector_epsilon(1.0, b1, b2)
        for q, qp in _grid_pairs(2, np.arange(-2.0, 3.0)):
            loss = max_privacy_loss(q, qp, 0.0, b1, b2)
            assert loss <= eps * (1 + 1e-9)
            worst = max(worst, loss / eps)
    assert worst > 0.5


def test_self_test_too_little_query_noise_violates():
    """``b2 = 1/eps`` (a quarter of the required noise): some neighbouring pair loses more than eps."""
    epsilon = 1.0
    b1, b2 = 2.0 / epsilon, 1.0 / epsilon
    worst = max(max_privacy_loss(q, qp, 0.0, b1, b2) for q, qp in _grid_pairs(3, np.arange(-2.0, 3.0)))
    assert worst > 1.2 * epsilon


def test_library_learner_runs_above_threshold_with_these_probabilities():
    """The library's first switch is AboveThreshold on q_t = L_{t, I}: its law matches the exact one."""
    from expertlab import sim
    from expertlab.random import round_key
    from expertlab.experts import sparse_vector_experts

    losses = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    # one switch, eps = 1: eps0 = 1, b1 = 4 / eps0, b2 = 8 / eps0 (Dwork & Roth's 2/eps', 4/eps', eps' = 1/2)
    L = sparse_vector_experts(1.0, 6, max_switches=1, threshold=2.0)
    n = 200_000
    rep_keys = np.arange(n, dtype=np.uint64)
    s = L.init(sim.EnvSpec("full", "round", 2, horizon=losses.shape[0]), n, rep_keys, np)
    start0 = s.cur == 0
    first = np.full(n, losses.shape[0])  # index k = "no switch" (bot)
    for t, row in enumerate(losses):  # the learner's state is read each round, so it is stepped here by hand
        with np.errstate(over="ignore"):
            keys = round_key(rep_keys, np.uint64(t))
        p, s = L.act(s, None, keys)
        s = L.update(s, p, sim.FullFeedback(np.broadcast_to(row, (n, 2))), keys)
        first = np.where((s.switches == 1) & (first == losses.shape[0]), t, first)
    freq = np.bincount(first[start0], minlength=losses.shape[0] + 1) / start0.sum()
    exact = output_probabilities(np.cumsum(losses[:, 0]), 2.0, 4.0, 8.0)
    se = np.sqrt(exact * (1 - exact) / start0.sum())
    assert np.all(np.abs(freq - exact) <= 4.5 * se + 1e-12), (freq, exact)
    # the perfect expert's queries are all 0: its own law, checked the same way
    freq1 = np.bincount(first[~start0], minlength=losses.shape[0] + 1) / (~start0).sum()
    exact1 = output_probabilities(np.zeros(losses.shape[0]), 2.0, 4.0, 8.0)
    se1 = np.sqrt(exact1 * (1 - exact1) / (~start0).sum())
    assert np.all(np.abs(freq1 - exact1) <= 4.5 * se1 + 1e-12), (freq1, exact1)
