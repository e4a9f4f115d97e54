r"""The weight ball maps into the kernel ball of the same radius; the inner problem over the simplex.

Statements checked
------------------
Let :math:`\phi_1, \dots, \phi_d \in \Delta_n` (the base-kernel rows
:math:`\phi_i(\cdot | s, a)`), :math:`\theta, \theta^0 \in \Delta_d` and
:math:`P_\theta = \sum_i \theta_i \phi_i`.

**(containment)** For :math:`D` the total variation
:math:`\tfrac12\|p - q\|_1`, the KL divergence or the :math:`\chi^2`
divergence :math:`\sum_j (p_j - q_j)^2 / q_j` (all f-divergences),

.. math::

    D(P_\theta \| P_{\theta^0}) \le D(\theta \| \theta^0),

because :math:`P_\theta` is the image of :math:`\theta` under the Markov
channel :math:`i \mapsto \phi_i` (data-processing inequality; for TV also
directly, :math:`\|\sum_i (\theta_i - \theta^0_i)\phi_i\|_1 \le \sum_i |\theta_i - \theta^0_i|`;
for KL by joint convexity).  Hence the kernel ball
:math:`\{p : D(p \| P_{\theta^0}) \le \rho\}` contains every kernel of the
weight ball :math:`\{P_\theta : D(\theta\|\theta^0) \le \rho\}`, and

.. math::

    \min_{\theta \in \Delta_d,\ D(\theta\|\theta^0) \le \rho} \theta^\top z
    \;\ge\; \min_{p \in \Delta_n,\ D(p\|P_{\theta^0}) \le \rho} p^\top v,
    \qquad z_i = \phi_i^\top v,

the comparison behind "the linear-mixture set is less conservative than the
(s, a)-rectangular set of comparable size".

**(inner problem)** :func:`expertlab.mdp.mixture_robust_backup` returns the
left-hand minimum, which equals a cvxpy primal solve over the
:math:`d`-simplex, and its minimiser is feasible.

Source: Liu & Xu, "Linear mixture distributionally robust Markov decision
processes", arXiv 2505.18044, 2025 (the weight-ball uncertainty set,
Sec. 3, and its comparison with (s, a)-rectangular sets); the
data-processing inequality for f-divergences (Csiszár 1967).

How the checks work
-------------------
Hypothesis draws :math:`d \in [2, 4]`, :math:`n \in [2, 5]`, base rows with
some zero entries, weights on the simplex (some zero entries in
:math:`\theta`), values :math:`v \in [-3, 3]^n` and radii over several
decades.  The primal is solved with cvxpy (Clarabel); the right-hand
minimum uses :func:`expertlab.mdp.worst_case`, itself checked against
cvxpy in ``check_robust_duals.py``.

Self-test: the converse containment fails — a kernel ball contains kernels
that are no mixture of the base rows, and its minimum can be strictly
smaller (a hand case below).
"""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from expertlab.mdp import mixture_robust_backup, worst_case

pytestmark = pytest.mark.proof

TOL = 2e-6


def _div(p, q, divergence):
    if divergence == "tv":
        return 0.5 * float(np.abs(p - q).sum())
    s = q > 0
    if np.any(p[~s] > 0):
        return np.inf
    if divergence == "kl":
        pp = p[s]
        return float(np.sum(np.where(pp > 0, pp * np.log(np.where(pp > 0, pp, 1.0) / q[s]), 0.0)))
    return float(np.sum((p[s] - q[s]) ** 2 / q[s]))


def _simplex(draw, n, zeros):
    w = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=n, max_size=n)))
    if zeros and draw(st.booleans()):
        w[: draw(st.integers(0, n - 1))] = 0.0
    return w / w.sum()


@st.composite
def mixtures(draw):
    d, n = draw(st.integers(2, 4)), draw(st.integers(2, 5))
    phi = np.stack([_simplex(draw, n, zeros=True) for _ in range(d)])  # (d, n)
    theta0 = _simplex(draw, d, zeros=False)
    theta = _simplex(draw, d, zeros=True)
    v = np.array(draw(st.lists(st.floats(-3, 3), min_size=n, max_size=n)))
    rho = draw(st.sampled_from([0.0, 1e-3, 0.05, 0.3, 1.0, 3.0]) | st.floats(1e-4, 2.0))
    return phi, theta0, theta, v, rho


def primal(z, q, rho, divergence):
    """min theta.z over {theta in the simplex, D(theta || q) <= rho}, by cvxpy (q > 0)."""
    t = cp.Variable(z.size, nonneg=True)
    cons = [cp.sum(t) == 1]
    if rho == 0.0:
        cons.append(t == q)
    elif divergence == "tv":
        cons.append(cp.norm1(t - q) <= 2.0 * rho)
    elif divergence == "kl":
        cons.append(cp.sum(cp.rel_entr(t, q)) <= rho)
    else:
        cons.append(cp.sum(cp.multiply(cp.square(t - q), 1.0 / q)) <= rho)
    prob = cp.Problem(cp.Minimize(t @ z), cons)
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal", prob.status
    return float(prob.value)


def _as_model(phi):
    """Features (d, n, 1, n) whose row at every (s, a) is ``phi``; the checks read (s, a) = (0, 0)."""
    d, n = phi.shape
    feats = np.zeros((d, n, 1, n))
    feats[:, :, 0, :] = phi[:, None, :]  # every state uses the same rows; only (0, 0) is read
    return feats


@pytest.mark.parametrize("divergence", ["tv", "kl", "chi2"])
@given(mixtures())
def test_image_of_weight_ball_lies_in_kernel_ball(divergence, case):
    phi, theta0, theta, _, _ = case
    lhs = _div(theta @ phi, theta0 @ phi, divergence)
    rhs = _div(theta, theta0, divergence)
    assert lhs <= rhs * (1 + 1e-9) + 1e-12, (lhs, rhs)


@pytest.mark.parametrize("divergence", ["tv", "kl", "chi2"])
@given(mixtures())
def test_inner_problem_equals_primal_and_dominates_kernel_ball(divergence, case):
    phi, theta0, _, v, rho = case
    z = phi @ v
    val, wt = mixture_robust_backup(_as_model(phi), theta0, v, rho, divergence)
    val, wt = float(val[0, 0]), wt[0, 0]
    scale = 1.0 + np.abs(v).max()
    assert abs(val - primal(z, theta0, rho, divergence)) <= TOL * scale
    assert np.all(wt >= -1e-12) and abs(wt.sum() - 1.0) < 1e-9
    assert _div(wt, theta0, divergence) <= rho + 1e-6
    assert abs(float(wt @ z) - val) <= 1e-5 * scale
    kernel = float(worst_case(v, theta0 @ phi, rho, divergence).value)
    assert val >= kernel - TOL * scale


def test_converse_fails():
    # two base rows that never reach state 2: the weight ball stays on mixtures of them, the kernel ball does not
    phi = np.array([[0.5, 0.5, 0.0], [0.4, 0.4, 0.2]])
    theta0 = np.array([0.5, 0.5])
    v = np.array([1.0, 1.0, -1.0])
    q = theta0 @ phi  # (0.45, 0.45, 0.1)
    rho = 0.3
    mix = float(mixture_robust_backup(_as_model(phi), theta0, v, rho, "tv")[0][0, 0])
    kern = float(worst_case(v, q, rho, "tv").value)
    assert mix == pytest.approx(0.68)      # z = (1.0, 0.6), theta = (0.2, 0.8): 0.2 * 1.0 + 0.8 * 0.6
    assert kern == pytest.approx(0.2)      # move 0.3 of mass onto state 2: 0.6 - 0.4
    p = worst_case(v, q, rho, "tv").distribution
    # that kernel is no mixture of the rows (state 2 would need weight 2 on the second row)
    assert p[2] > phi[:, 2].max()
