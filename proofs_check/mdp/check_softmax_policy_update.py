r"""The log-sum-exp policy update is the mirror-descent (KL-proximal) step, and its value is the log-sum-exp.

Statement checked
-----------------
For a reference distribution :math:`\pi_0` on :math:`A` actions (full support
assumed below where stated), :math:`Q \in \mathbb R^A` and :math:`\eta > 0`, let

.. math::

    F(\pi) = \langle \pi, Q \rangle - \tfrac1\eta \mathrm{KL}(\pi \| \pi_0), \qquad
    \pi^+(a) = \frac{\pi_0(a) e^{\eta Q(a)}}{\sum_b \pi_0(b) e^{\eta Q(b)}}.

Then :math:`\pi^+` maximises :math:`F` over the simplex, the maximum is
:math:`\frac1\eta \log \sum_a \pi_0(a) e^{\eta Q(a)}`, and for every
:math:`\pi` (the three-point identity)

.. math::

    F(\pi^+) - F(\pi) = \tfrac1\eta \mathrm{KL}(\pi \| \pi^+).

This is the policy update and the value update of regularised approximate
value iteration.  Source: Moulin & Neu, "Optimistic planning by regularized
dynamic programming", ICML 2023, Sec. 3 (the regularised update, stated there
as the mirror-descent step); the variational formula is the Donsker–Varadhan
/ Gibbs variational principle (e.g. Beck & Teboulle, Oper. Res. Lett. 31, 2003,
for mirror descent with the entropy).

How the checks work
-------------------
Hypothesis draws :math:`A \le 6`, :math:`\pi_0` (possibly with zeros),
:math:`Q` with entries up to 50 in size and :math:`\eta` from 1e-3 to 50.
The identity is checked against comparison points drawn from a Dirichlet
and at the vertices; the maximiser is compared with a cvxpy solve of the
concave problem (``cp.entr``), and the library's one-iteration output of
:func:`expertlab.mdp.regularized_value_iteration`, the planner of
:func:`expertlab.mdp.regularized_optimism` (where :math:`Q_1 = r` and
:math:`\pi_0` is uniform), is compared with the closed form.

Self-test: the update without the step size, :math:`\pi_0 e^{Q}/Z`, is not
the maximiser for :math:`\eta \ne 1`.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expertlab.mdp import regularized_value_iteration
from expertlab.testing import strategies

pytestmark = pytest.mark.proof


def kl(p, q):
    m = p > 0
    return float(np.sum(p[m] * (np.log(p[m]) - np.log(q[m])))) if np.all(q[m] > 0) else math.inf


def objective(pi, q, pi0, eta):
    return float(pi @ q) - kl(pi, pi0) / eta


def update(q, pi0, eta):
    z = np.where(pi0 > 0, np.log(np.where(pi0 > 0, pi0, 1.0)) + eta * q, -np.inf)
    m = z.max()
    lse = m + math.log(np.exp(z - m).sum())
    return np.exp(z - lse), lse / eta


def log_update(q, pi0, eta):
    """``log pi_plus`` computed in log space (``pi_plus`` itself may underflow to 0)."""
    z = np.where(pi0 > 0, np.log(np.where(pi0 > 0, pi0, 1.0)) + eta * q, -np.inf)
    m = z.max()
    return z - (m + math.log(np.exp(z - m).sum()))


@st.composite
def problems(draw):
    a = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    pi0 = rng.dirichlet(np.ones(a))
    if a > 1 and draw(st.booleans()):
        pi0[rng.integers(a)] = 0.0
        pi0 /= pi0.sum()
    q = rng.uniform(-1.0, 1.0, a) * draw(st.sampled_from([1.0, 10.0, 50.0]))
    eta = draw(st.floats(1e-3, 50.0))
    return q, pi0, eta, rng


@given(problems())
def test_update_maximises_and_three_point_identity(prob):
    q, pi0, eta, rng = prob
    pi_plus, value = update(q, pi0, eta)
    best = objective(pi_plus, q, pi0, eta)
    scale = 1.0 + np.abs(q).max()
    assert best == pytest.approx(value, abs=1e-9 * scale)
    support = pi0 > 0
    cands = [np.eye(len(q))[i] for i in np.flatnonzero(support)]
    for _ in range(20):
        c = np.zeros(len(q))
        c[support] = rng.dirichlet(np.full(support.sum(), 0.5))
        cands.append(c)
    for c in cands:
        f = objective(c, q, pi0, eta)
        assert f <= best + 1e-9 * scale
        m = c > 0
        kl_plus = float(np.sum(c[m] * (np.log(c[m]) - log_update(q, pi0, eta)[m])))
        assert best - f == pytest.approx(kl_plus / eta, rel=1e-6, abs=1e-8 * scale)


@settings(max_examples=25, deadline=None)
@given(problems())
def test_update_matches_cvxpy(prob):
    cp = pytest.importorskip("cvxpy")
    q, pi0, eta, _ = prob
    support = pi0 > 0
    qs, p0 = q[support], pi0[support]
    x = cp.Variable(len(qs), nonneg=True)
    # <x, q> - KL(x || p0)/eta = <x, q> + (entr(x) + <x, log p0>)/eta
    prob_ = cp.Problem(cp.Maximize(x @ qs + (cp.sum(cp.entr(x)) + x @ np.log(p0)) / eta), [cp.sum(x) == 1])
    prob_.solve()
    pi_plus, value = update(q, pi0, eta)
    assert prob_.value == pytest.approx(value, abs=1e-4 * (1.0 + abs(value)))
    assert objective(pi_plus, q, pi0, eta) >= prob_.value - 1e-6 * (1.0 + abs(value))


@given(strategies.linear_mixture_mdps(min_dim=2, max_dim=2, max_states=4, max_actions=4, max_gamma=0.95),
       st.integers(1, 10_000))
def test_library_first_iterate_is_the_update(m, n_steps):
    phi, r, gamma, n_states, n_actions = m.features, m.rewards, m.gamma, m.n_states, m.n_actions
    pi, v = regularized_value_iteration(phi, r, gamma, np.eye(2)[None], np.full((1, 2), 0.5), 1.0,
                                        np.array([n_steps]), n_iter=1, eta_scale=1.0)
    eta = math.sqrt(n_steps * math.log(max(n_actions, 2)))
    for s in range(n_states):
        pi_plus, value = update(r[s], np.full(n_actions, 1.0 / n_actions), eta)
        np.testing.assert_allclose(pi[0, s], pi_plus, rtol=1e-9, atol=1e-12)
        assert v[0, s] == pytest.approx(value, rel=1e-9, abs=1e-12)


def test_self_test_update_without_step_size_is_not_optimal():
    q, pi0, eta = np.array([1.0, 0.0]), np.array([0.5, 0.5]), 5.0
    wrong = np.exp(q) * pi0 / (np.exp(q) * pi0).sum()
    pi_plus, value = update(q, pi0, eta)
    assert objective(wrong, q, pi0, eta) < value - 1e-3
