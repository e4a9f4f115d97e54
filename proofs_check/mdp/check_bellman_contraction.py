r"""The Bellman operators are γ-contractions, and value iteration's stopping rule certifies ε-optimality.

Statements checked
------------------
For a discounted MDP :math:`(P, r, \gamma)` with :math:`\gamma \in [0, 1)`:

**(C)** :math:`\|TV - TU\|_\infty \le \gamma \|V - U\|_\infty` for the optimal
Bellman operator :math:`(TV)(s) = \max_a r(s,a) + \gamma P(\cdot|s,a)^\top V`,
with equality for :math:`U = V + c\mathbf 1`; the same holds for the robust
operator of :func:`expertlab.mdp.robust_value_iteration` (TV, KL, χ² balls)
and for the soft operator of :func:`expertlab.mdp.soft_value_iteration`.

**(S)** If value iteration stops at the first :math:`k` with
:math:`\|V_{k+1} - V_k\|_\infty < \epsilon(1-\gamma)/(2\gamma)`, then
:math:`\|V_{k+1} - V^\star\|_\infty < \epsilon/2` and the greedy policy
:math:`\pi` satisfies :math:`\|V^\pi - V^\star\|_\infty < \epsilon`.

Source: Puterman, *Markov Decision Processes*, 1994, Sec. 6.2 (the
contraction; proposition number not re-checked) and Thm 6.3.1 (the stopping
rule).

How the checks work
-------------------
Hypothesis draws small MDPs (:math:`S \le 5`, :math:`A \le 3`, rows with
exact zeros and deterministic rows among them, rewards in [0, 1]),
:math:`\gamma` up to 0.99 and pairs of value vectors in :math:`[-15, 15]^S`.
Rewards in [0, 1] lose nothing: :math:`T_{a r + b}(V) = a\,T_r(V/a) + b` for
:math:`a > 0` (the worst case over a ball is positively homogeneous and
commutes with shifts too), so the contraction for bounded rewards follows.  For (S),
:math:`V^\star` is computed independently: by enumerating every
deterministic policy and solving its linear system with NumPy (the optimal
value is the elementwise maximum), and compared also with the library's
policy iteration; :math:`V^\pi` of the returned policy is solved here too.

Self-tests: the contraction factor :math:`\gamma^2` is violated
(:math:`U = V + c\mathbf 1` attains :math:`\gamma`); the naive stopping rule
:math:`\|V_{k+1} - V_k\|_\infty < \epsilon` does not certify
:math:`\epsilon/2`-accuracy of :math:`V` for :math:`\gamma = 0.99`.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from expertlab.mdp import bellman_backup, policy_iteration, robust_value_iteration, value_iteration
from expertlab.mdp._robust import worst_case
from expertlab.testing import strategies

pytestmark = pytest.mark.proof


@st.composite
def mdps(draw):
    """(P, r, gamma, V, U): an MDP of ``expertlab.testing.strategies.tabular_mdps`` and two value vectors."""
    m = draw(strategies.tabular_mdps(max_states=5, max_actions=3, max_gamma=0.99))
    values = hnp.arrays(np.float64, m.n_states, elements=st.floats(-15.0, 15.0))
    return m.transitions, m.rewards, m.gamma, draw(values), draw(values)


def optimal_by_enumeration(p, r, gamma):
    s, a = r.shape
    best = np.full(s, -np.inf)
    for pi in itertools.product(range(a), repeat=s):
        idx = np.arange(s)
        v = np.linalg.solve(np.eye(s) - gamma * p[idx, list(pi)], r[idx, list(pi)])
        best = np.maximum(best, v)
    return best


def T(p, r, gamma, v):
    return bellman_backup(p, r, gamma, v).max(axis=-1)


@given(mdps())
def test_optimal_operator_contracts(m):
    p, r, gamma, v, u = m
    lhs = np.abs(T(p, r, gamma, v) - T(p, r, gamma, u)).max()
    assert lhs <= gamma * np.abs(v - u).max() + 1e-12
    c = 3.0
    shifted = np.abs(T(p, r, gamma, v + c) - T(p, r, gamma, v)).max()
    assert shifted == pytest.approx(gamma * c, abs=1e-12)


@pytest.mark.parametrize("divergence", ["tv", "kl", "chi2"])
@given(mdps(), st.floats(0.0, 1.0))
def test_robust_operator_contracts(divergence, m, rho):
    p, r, gamma, v, u = m

    def t_rob(x):
        xb = np.broadcast_to(x, p.shape)
        return (r + gamma * worst_case(xb, p, rho, divergence).value).max(axis=-1)

    lhs = np.abs(t_rob(v) - t_rob(u)).max()
    assert lhs <= gamma * np.abs(v - u).max() + 1e-8 * (1 + np.abs(v).max() + np.abs(u).max())


@given(mdps(), st.sampled_from([1e-1, 1e-3, 1e-6]))
def test_stopping_rule_certifies_epsilon(m, eps):
    p, r, gamma, _, _ = m
    v_star = optimal_by_enumeration(p, r, gamma)
    pi_res = policy_iteration(p, r, gamma)
    assert np.abs(pi_res.values - v_star).max() <= 1e-9 * (1 + np.abs(v_star).max())
    res = value_iteration(p, r, gamma, epsilon=eps)
    assert bool(res.converged)
    s = r.shape[0]
    pi = np.asarray(res.policy)
    v_pi = np.linalg.solve(np.eye(s) - gamma * p[np.arange(s), pi], r[np.arange(s), pi])
    assert np.abs(res.values - v_star).max() < eps / 2 + 1e-12
    assert np.abs(v_pi - v_star).max() < eps + 1e-12
    assert np.abs(res.policy_values - v_pi).max() <= 1e-9 * (1 + np.abs(v_pi).max())
    assert np.abs(v_pi - v_star).max() <= float(res.gap_bound) + 1e-9


def test_robust_at_zero_radius_is_nominal():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(4), size=(4, 2))
    r = rng.uniform(size=(4, 2))
    v_star = optimal_by_enumeration(p, r, 0.8)
    for div in ("tv", "kl", "chi2"):
        res = robust_value_iteration(p, r, 0.8, radius=0.0, divergence=div, epsilon=1e-10)
        assert np.abs(res.values - v_star).max() < 1e-9


# -- self-tests ----------------------------------------------------------------------------


def test_gamma_squared_factor_fails():
    p = np.ones((1, 1, 1))
    r = np.zeros((1, 1))
    gamma = 0.9
    v, u = np.array([0.0]), np.array([1.0])
    lhs = np.abs(T(p, r, gamma, v) - T(p, r, gamma, u)).max()
    assert lhs > gamma**2 * np.abs(v - u).max()


def test_naive_stopping_rule_fails():
    # one state, reward 1, gamma = 0.99: V_k = sum_{i<k} gamma^i, V* = 100
    gamma, eps = 0.99, 1e-3
    v, k = 0.0, 0
    while True:
        v_new = 1.0 + gamma * v
        k += 1
        if abs(v_new - v) < eps:  # the rule without the factor (1 - gamma) / (2 gamma)
            break
        v = v_new
    assert abs(v_new - 1.0 / (1.0 - gamma)) > eps / 2  # not eps/2-accurate
    res = value_iteration(np.ones((1, 1, 1)), np.ones((1, 1)), gamma, epsilon=eps)
    assert abs(float(res.values[0]) - 100.0) < eps / 2  # the library's rule is
