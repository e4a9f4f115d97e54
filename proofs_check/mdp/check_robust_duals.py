r"""The closed and dual forms of the robust inner problems equal their primal solves.

Statements checked
------------------
For :math:`v \in \mathbb R^n`, :math:`q \in \Delta_n` and :math:`\rho \ge 0`,
the inner problem of (s, a)-rectangular robust planning is

.. math::

    \mathcal I_D(v, q, \rho) = \min_{p \in \Delta_n,\ D(p \| q) \le \rho} p^\top v .

**(TV)** With :math:`D = \tfrac12\|p - q\|_1`:
:math:`\mathcal I = \max_{\alpha \in [\min v, \max v]} q^\top \min(v, \alpha) - \rho(\alpha - \min v)`,
attained at a knot :math:`\alpha \in \{v_i\}`, and equal to the greedy mass
shift onto :math:`\arg\min v` that :func:`expertlab.mdp.worst_case` computes.
The ``"l1"`` divergence (CRAAM's convention) is the ball
:math:`\|p - q\|_1 \le \rho`, i.e. the TV ball of radius :math:`\rho/2`.

**(KL)** With :math:`D = \sum_i p_i \log(p_i/q_i)`:
:math:`\mathcal I = \sup_{\lambda \ge 0} -\lambda \log E_q e^{-v/\lambda} - \lambda\rho`;
no mass moves to states with :math:`q_i = 0`.

**(χ²)** With :math:`D = \sum_i (p_i - q_i)^2 / q_i` (no factor ½):
:math:`\mathcal I = \sup_\alpha E_q[v]_\alpha - \sqrt{\rho \operatorname{Var}_q[v]_\alpha}`,
:math:`[v]_\alpha = \min(v, \alpha)`.

Edge cases: :math:`\rho = 0` gives :math:`q^\top v`; for TV a radius
:math:`\rho \ge 1 - q_{\arg\min v}` gives :math:`\min v`; the returned
worst-case distribution is feasible (on the simplex, inside the ball) and
attains the value.

Sources: Iyengar, Math. Oper. Res. 2005, and Nilim & El Ghaoui, Oper. Res.
2005 (TV/L1 and KL inner problems; section numbers not re-checked); Duchi &
Namkoong, JMLR 2019 (the χ² dual; theorem number not re-checked), in the
forms these references give.

How the checks work
-------------------
Hypothesis draws :math:`n \in [2, 6]`, :math:`v \in [-5, 5]^n` (half of the
draws on a coarse grid, so that ties occur), :math:`q` on the simplex with
some zero entries, and :math:`\rho` over several decades including 0.  The
primal is solved with cvxpy (Clarabel); for KL and χ² the variables of
states with :math:`q_i = 0` are fixed to 0, which is what the divergence
forces.  The TV knot form is evaluated here by enumeration of the knots.

Self-tests: the χ² value computed with the ½ convention (radius
:math:`2\rho`) disagrees with the primal; reading the L1 budget as a TV
radius disagrees with the primal; a KL solution that moves mass to a
:math:`q_i = 0` state would beat the library's value, which therefore
must not (it does not).
"""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from expertlab.mdp import worst_case

pytestmark = pytest.mark.proof

TOL = 2e-6


def primal(v, q, rho, divergence):
    """min p.v over the divergence ball, by cvxpy."""
    n = v.size
    p = cp.Variable(n, nonneg=True)
    cons = [cp.sum(p) == 1]
    if divergence in ("tv", "l1"):
        budget = rho if divergence == "l1" else 2.0 * rho
        cons.append(cp.norm1(p - q) <= budget)
    else:
        zero = q <= 0
        if zero.any():
            cons.append(p[np.flatnonzero(zero)] == 0)
        sup = np.flatnonzero(~zero)
        if rho == 0.0:  # D(p||q) = 0 iff p = q (the cone form is degenerate there)
            cons.append(p == q)
        elif divergence == "kl":
            cons.append(cp.sum(cp.rel_entr(p[sup], q[sup])) <= rho)
        else:
            cons.append(cp.sum(cp.multiply(cp.square(p[sup] - q[sup]), 1.0 / q[sup])) <= rho)
    prob = cp.Problem(cp.Minimize(p @ v), cons)
    prob.solve(solver="CLARABEL")
    assert prob.status == "optimal", prob.status
    return float(prob.value)


def tv_knots(v, q, rho):
    """The knot form of the TV inner problem, by enumeration."""
    return max(float(q @ np.minimum(v, a)) - rho * (a - v.min()) for a in v)


@st.composite
def problems(draw, zeros=True):
    n = draw(st.integers(2, 6))
    if draw(st.booleans()):
        v = np.array(draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), dtype=float)
    else:
        v = np.array(draw(st.lists(st.floats(-5, 5), min_size=n, max_size=n)))
    w = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=n, max_size=n)))
    if zeros and draw(st.booleans()):
        k = draw(st.integers(0, n - 2))
        w[:k] = 0.0  # some zero-probability states (not all)
    q = w / w.sum()
    rho = draw(st.sampled_from([0.0, 1e-3, 0.05, 0.2, 0.7, 2.0, 10.0]) | st.floats(1e-4, 3.0))
    return v, q, rho


def _feasible(p, q, rho, divergence):
    assert np.all(p >= -1e-12) and abs(p.sum() - 1) < 1e-9
    if divergence == "tv":
        return 0.5 * np.abs(p - q).sum() <= rho + 1e-9
    if divergence == "l1":
        return np.abs(p - q).sum() <= rho + 1e-9
    assert np.all(p[q <= 0] <= 1e-12), "mass moved to a state with q = 0"
    s = q > 0
    if divergence == "kl":
        pp = p[s]
        return float(np.sum(np.where(pp > 0, pp * np.log(np.where(pp > 0, pp, 1) / q[s]), 0.0))) <= rho + 1e-6
    return float(np.sum((p[s] - q[s]) ** 2 / q[s])) <= rho + 1e-6


@pytest.mark.parametrize("divergence", ["tv", "l1", "kl", "chi2"])
@given(problems())
def test_dual_equals_primal(divergence, prob):
    v, q, rho = prob
    res = worst_case(v, q, rho, divergence)
    ref = primal(v, q, rho, divergence)
    scale = 1.0 + np.abs(v).max()
    assert abs(float(res.value) - ref) <= TOL * scale, (float(res.value), ref)
    p = np.asarray(res.distribution)
    assert _feasible(p, q, rho, divergence)
    assert abs(float(p @ v) - float(res.value)) <= 1e-5 * scale


@given(problems(zeros=False))
def test_tv_knot_form(prob):
    v, q, rho = prob
    assert abs(float(worst_case(v, q, rho, "tv").value) - tv_knots(v, q, rho)) <= 1e-12 * (1 + np.abs(v).max())


@pytest.mark.parametrize("divergence", ["tv", "l1", "kl", "chi2"])
@given(problems())
def test_zero_radius_is_nominal(divergence, prob):
    v, q, _ = prob
    assert abs(float(worst_case(v, q, 0.0, divergence).value) - float(q @ v)) <= 1e-12 * (1 + np.abs(v).max())


@given(problems(zeros=False))
def test_tv_huge_radius_is_min(prob):
    v, q, _ = prob
    rho = 1.0 - q[np.argmin(v)] + 1e-9
    assert abs(float(worst_case(v, q, rho, "tv").value) - v.min()) <= 1e-12 * (1 + np.abs(v).max())
    assert float(worst_case(v, q, 5.0, "tv").value) == pytest.approx(v.min(), abs=1e-12)


def test_kl_cannot_move_mass_to_zero_states():
    v = np.array([-4.0, 0.0, 1.0])
    q = np.array([0.0, 0.5, 0.5])
    res = worst_case(v, q, 50.0, "kl")
    assert res.distribution[0] == 0.0
    assert float(res.value) == pytest.approx(0.0, abs=1e-9)  # all mass on the best supported state
    # TV can move mass there: the value drops below min over the support
    assert float(worst_case(v, q, 1.0, "tv").value) == pytest.approx(-4.0)


# -- self-tests: the wrong conventions fail ------------------------------------------------


def test_half_chi2_convention_fails():
    v, q, rho = np.array([0.0, 1.0, 2.0]), np.array([0.2, 0.3, 0.5]), 0.3
    ref = primal(v, q, rho, "chi2")
    assert abs(float(worst_case(v, q, rho, "chi2").value) - ref) <= TOL * 3
    half = float(worst_case(v, q, 2.0 * rho, "chi2").value)  # "1/2 chi2 <= rho" read as chi2 <= 2 rho
    assert abs(half - ref) > 100 * TOL


def test_l1_read_as_tv_radius_fails():
    v, q, rho = np.array([0.0, 1.0, 2.0]), np.array([0.2, 0.3, 0.5]), 0.3
    ref = primal(v, q, rho, "l1")
    assert abs(float(worst_case(v, q, rho, "l1").value) - ref) <= TOL * 3
    assert abs(float(worst_case(v, q, rho, "tv").value) - ref) > 100 * TOL
    assert float(worst_case(v, q, rho / 2, "tv").value) == pytest.approx(float(worst_case(v, q, rho, "l1").value))


def test_batched_equals_one_at_a_time():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(4, 3, 5))
    q = rng.dirichlet(np.ones(5), size=(4, 3))
    rho = rng.uniform(0.0, 1.0, size=(4, 3))
    for div in ("tv", "kl", "chi2"):
        batch = worst_case(v, q, rho, div)
        for i in range(4):
            for j in range(3):
                one = worst_case(v[i, j], q[i, j], rho[i, j], div)
                assert float(one.value) == pytest.approx(float(batch.value[i, j]), abs=1e-12)


@given(problems(zeros=False), st.floats(0.0, 2.0), st.floats(0.0, 2.0))
def test_monotone_in_radius(prob, r1, r2):
    v, q, _ = prob
    assume(r1 != r2)
    lo, hi = min(r1, r2), max(r1, r2)
    for div in ("tv", "kl", "chi2"):
        assert float(worst_case(v, q, hi, div).value) <= float(worst_case(v, q, lo, div).value) + 1e-10
