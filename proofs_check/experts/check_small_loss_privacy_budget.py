r"""The small-loss private experts learner spends at most its budget (and at most its delta).

Statement checked
-----------------
:func:`~expertlab.experts.small_loss_experts` with budget :math:`(\varepsilon,
\delta)`, horizon :math:`T`, :math:`n` experts and per-phase switch budget
:math:`K` runs phases :math:`k = 1, \dots, P`.  :math:`P` is the first phase
with :math:`2^{P-1} m_1 \ge T` (:math:`m_1` the threshold base).  Phase
:math:`k` runs at most :math:`K` adaptive pairs, each made of

* one AboveThreshold instance with threshold noise
  :math:`\mathrm{Lap}(b_{1,k})`, query noise :math:`\mathrm{Lap}(b_{2,k})`
  and queries of sensitivity 1, which is
  :math:`(1/b_{1,k} + 2/b_{2,k})`-DP (Dwork & Roth 2014, Thm 3.23 and its
  proof);
* one exponential-mechanism draw :math:`P(i) \propto e^{-\eta_k L_{t,i}}`
  with a score of sensitivity 1, which is :math:`2\eta_k`-DP (Dwork & Roth
  2014, Thm 3.10).

Here :math:`b_{1,k} = 4/\varepsilon_{0,k}`, :math:`b_{2,k} =
8/\varepsilon_{0,k}` and :math:`\eta_k = \varepsilon_{0,k}/4`, so each pair
costs :math:`c_k = \varepsilon_{0,k}`.  Phase :math:`k` costs
:math:`K c_k` by basic composition (Dwork & Roth 2014, Thm 3.16).  It may
instead cost :math:`(\sqrt{2K\ln(1/\delta_k)}\,c_k + K c_k(e^{c_k} - 1),
\delta_k)` by advanced composition (Thm 3.20) with :math:`\delta_k =
\delta/(k(k+1))`, whichever is smaller.  Phases :math:`k > P` run no
mechanism.  Basic composition over the phases gives the cost of a run
long enough to reach every phase, and the claim is

.. math::

    \varepsilon_{\mathrm{run}} = \sum_{k=1}^{P} \varepsilon^{\mathrm{phase}}_k
    \le \sum_{k=1}^{P}\frac{\varepsilon}{k(k+1)} = \frac{P}{P+1}\,\varepsilon < \varepsilon,
    \qquad \delta_{\mathrm{run}} \le \sum_{k=1}^{P}\frac{\delta}{k(k+1)} < \delta .

A run of :math:`T' \le T` rounds asks one query per round, so it makes at
most :math:`A = \min(T', KP)` pairs, the :math:`a`-th in phase
:math:`\lceil a/K\rceil`; :func:`~expertlab.experts.privacy_cost` composes
exactly those (the sum above when :math:`T' \ge KP`), and the learner
refuses a run longer than :math:`T`.  Privacy is with respect to changing
the loss vector of one round (losses in :math:`[0, 1]`).  The learner's docstring states this accounting; the
paper's own small-loss algorithm could not be consulted, so the phase
schedule is the library's reconstruction (Asi, Feldman, Koren & Talwar,
ICML 2023).

How the checks work
-------------------
(a) *Exact accounting.*  For Hypothesis-drawn :math:`(\varepsilon, \delta,
T, n, K, \theta)` over several decades, the parameters are rebuilt here
from the formulas of the docstring: :math:`K`, :math:`P`,
:math:`\varepsilon_{0,k}`, and the scales :math:`b_1, b_2, \eta, \tau`.  The
check asserts that they equal the arrays of ``small_loss_schedule``, the
schedule the learner itself uses.  It then
composes the per-mechanism costs with its own transcription of the
composition theorems, over the pairs a run of :math:`T` rounds can make,
and asserts :math:`\varepsilon_{\mathrm{run}} \le
\varepsilon P/(P+1) < \varepsilon` and :math:`\delta_{\mathrm{run}} <
\delta`.  It also asserts that ``privacy_cost(learner, n, T)``, the
learner's accountant, reports the same pair.  Driving the learner on all-ones losses, the
fastest way to spend switches, shows that it never runs more than :math:`K`
pairs in a phase nor runs any after phase :math:`P`, so these are all the
mechanisms it may ever run.  The noise-free variant attains :math:`K P`
pairs on a worked case, so the count is not loose.  The phase-1 scales are
also checked against the learner's behaviour, so the arrays compared above
are the ones it draws with: the initial threshold noise has the
:math:`\mathrm{Lap}(b_{1,1})` law (Kolmogorov–Smirnov test); the
probability of an "above" in round 1 equals the exact
:math:`P(\nu - \rho \ge \tau_1 - q)` for two Laplace laws (within
:math:`4.5` standard errors); and the expert drawn then has the law
:math:`\propto e^{-\eta_1 L}`.

(b) *Empirical audit.*  Two neighbouring loss sequences differ in round 1
only, as :math:`(1, 0)` against :math:`(0, 1)`; both experts lose 1 in
every later round, so the run crosses several phases.  On each sequence
200 000 seeded replications record the transcript: in every round, whether
AboveThreshold answered "above" and which expert was drawn.  The events are
every single transcript, the round of the first "above", and the number of
"above" answers.  For each event and each direction the check asserts
:math:`\underline P_a \le e^{\varepsilon}\,\overline P_b + \delta`, with
Clopper–Pearson bounds at joint level 99.9% (Bonferroni).  This is a check,
not a proof: the measured privacy loss is far below :math:`\varepsilon`,
because the composition bounds are worst-case.  Self-tests: the same audit
detects the non-private variant (``noise=False``) and a learner built with
64 times the claimed budget.

References
----------
C. Dwork and A. Roth, *The Algorithmic Foundations of Differential Privacy*,
2014: Thm 3.10 (exponential mechanism), Thm 3.16 (basic composition),
Thm 3.20 (advanced composition), Thm 3.23 (AboveThreshold).
H. Asi, V. Feldman, T. Koren and K. Talwar, "Near-optimal algorithms for
private online optimization in the realizable regime", ICML 2023,
arXiv:2302.14154 (the small-loss setting; the phase schedule checked here is
the library's reconstruction).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import beta, kstest, laplace

from expertlab import sim
from expertlab.random import round_key
from expertlab.experts import privacy_cost, small_loss_experts, small_loss_schedule
from expertlab.experts._privacy import per_step_epsilon

pytestmark = pytest.mark.proof

# --------------------------------------------------------------------------
# (a) the accounting, rebuilt from the docstring's formulas


def rebuilt_parameters(eps, delta, horizon, n, max_switches=None, threshold=None):
    """``K, P`` and the per-phase ``e0, b1, b2, eta, tau`` (index k = 1..P + 1) as the docstring defines them."""
    k_sw = max_switches or (math.ceil(math.log2(n)) + 3)
    log_term = math.log(2.0 * horizon * k_sw)
    m1 = threshold if threshold is not None else 8.0 / per_step_epsilon(eps / 2.0, k_sw, delta / 2.0) * log_term
    n_phases = next(j for j in range(1, 200) if 2.0 ** (j - 1) * m1 >= horizon)
    k = np.arange(1, n_phases + 2, dtype=np.float64)
    e0 = np.array([per_step_epsilon(eps / (j * (j + 1)), k_sw, delta / (j * (j + 1))) for j in k])
    b1, b2, eta = 4.0 / e0, 8.0 / e0, e0 / 4.0
    if threshold is None:
        tau = b2 * log_term + (2.0 ** (k - 1.0) - 1.0) * m1
    else:
        tau = threshold * 2.0 ** (k - 1.0)
    return k_sw, n_phases, e0, b1, b2, eta, tau


def composed_cost(k_sw, n_phases, b1, b2, eta, delta, horizon=None):
    """Basic composition over phases 1..P of each phase's best of basic and advanced composition, over the
    pairs a run of ``horizon`` rounds can make (one query per round; every pair when ``horizon`` is None)."""
    eps_run, delta_run = 0.0, 0.0
    pairs = k_sw * n_phases if horizon is None else min(horizon, k_sw * n_phases)
    for j in range(1, n_phases + 1):
        k_j = min(k_sw, pairs - (j - 1) * k_sw)  # pairs in phase j
        if k_j <= 0:
            break
        c = 1.0 / b1[j - 1] + 2.0 / b2[j - 1] + 2.0 * eta[j - 1]   # AboveThreshold + exponential mechanism
        best, best_delta = k_j * c, 0.0
        if delta > 0.0:
            d_k = delta / (j * (j + 1))
            adv = math.sqrt(2.0 * k_j * math.log(1.0 / d_k)) * c + k_j * c * math.expm1(c)
            if adv < best:
                best, best_delta = adv, d_k
        eps_run += best
        delta_run += best_delta
    return eps_run, delta_run


def library_scales(learner, n):
    """The per-phase arrays (slot 0 unused) the learner uses, from the public ``small_loss_schedule``."""
    p = learner.params
    sc = small_loss_schedule(n, p["epsilon"], p["horizon"], delta=p["delta"], max_switches=p["max_switches"],
                             threshold=p["threshold"])
    return sc.switch_budget, sc.n_phases, sc.b1, sc.b2, sc.eta, sc.tau


log_uniform = st.floats(-2.0, 2.0).map(lambda x: 10.0**x)
budgets = st.tuples(log_uniform, st.one_of(st.just(0.0), st.floats(-12.0, math.log10(0.5)).map(lambda x: 10.0**x)))
horizons = st.one_of(st.sampled_from([1, 2, 10**6]), st.floats(0.0, 6.0).map(lambda x: int(10.0**x)))
sizes = st.one_of(st.sampled_from([2, 3, 4096]), st.integers(2, 300))
switch_budgets = st.one_of(st.none(), st.integers(1, 40))
thresholds = st.one_of(st.none(), st.floats(-2.0, 4.0).map(lambda x: 10.0**x))


@given(budgets, horizons, sizes, switch_budgets, thresholds)
def test_composed_budget_at_most_epsilon_and_delta(budget, horizon, n, max_switches, threshold):
    check_budget(*budget, horizon, n, max_switches, threshold)


@pytest.mark.parametrize("eps, delta, horizon, n, max_switches, threshold",
                         [(1.0, 0.3, 1000, 8, 40, None), (0.2, 1e-3, 10**5, 16, 200, 5.0),
                          (5.0, 1e-6, 3000, 4, 1000, 1.0)])
def test_advanced_composition_branch(eps, delta, horizon, n, max_switches, threshold):
    """Cases where advanced composition beats basic in every phase: the run then spends part of delta."""
    delta_run = check_budget(eps, delta, horizon, n, max_switches, threshold)
    assert delta_run > 0.0


def check_budget(eps, delta, horizon, n, max_switches, threshold):
    learner = small_loss_experts(eps, horizon, delta=delta, max_switches=max_switches, threshold=threshold)
    k_sw, n_phases, e0, b1, b2, eta, tau = rebuilt_parameters(eps, delta, horizon, n, max_switches, threshold)
    lk, lp, lb1, lb2, leta, ltau = library_scales(learner, n)
    assert (lk, lp) == (k_sw, n_phases)
    for mine, lib in ((b1, lb1), (b2, lb2), (eta, leta), (tau, ltau)):
        np.testing.assert_allclose(lib[1:n_phases + 1], mine[:n_phases], rtol=1e-12)
    full_eps, full_delta = composed_cost(k_sw, n_phases, b1, b2, eta, delta)
    assert full_eps <= eps * n_phases / (n_phases + 1) * (1 + 1e-9)
    assert full_delta <= delta * n_phases / (n_phases + 1) * (1 + 1e-12)
    eps_run, delta_run = composed_cost(k_sw, n_phases, b1, b2, eta, delta, horizon)
    assert eps_run <= full_eps * (1 + 1e-12) and delta_run <= full_delta * (1 + 1e-12)
    assert eps_run <= eps * n_phases / (n_phases + 1) * (1 + 1e-9)
    assert eps_run < eps
    assert delta_run <= delta * n_phases / (n_phases + 1) * (1 + 1e-12)
    assert delta_run < delta or delta == 0.0
    reported = privacy_cost(learner, n, horizon)
    assert reported.epsilon == pytest.approx(eps_run, rel=1e-9)
    assert reported.delta == pytest.approx(delta_run, rel=1e-9, abs=1e-300)
    return delta_run


def test_one_phase_spends_its_whole_share():
    """Pure DP: each phase costs exactly eps / (k (k + 1)), so the run costs exactly eps P / (P + 1)."""
    for eps, horizon, n in ((1.0, 1000, 8), (0.1, 10**5, 64), (10.0, 50, 2)):
        k_sw, n_phases, e0, b1, b2, eta, _ = rebuilt_parameters(eps, 0.0, horizon, n)
        np.testing.assert_allclose(1.0 / b1 + 2.0 / b2 + 2.0 * eta, e0, rtol=1e-12)
        eps_run, _ = composed_cost(k_sw, n_phases, b1, b2, eta, 0.0)
        assert eps_run == pytest.approx(eps * n_phases / (n_phases + 1), rel=1e-12)


def start(learner, n, n_reps, horizon, offset=0):
    """``(state, replication keys)`` of ``learner`` for a run of ``horizon`` rounds on ``n`` experts.

    The checks read the learner's state (phase, switches, threshold noise) every round, so they step it by
    hand here with the keys :func:`expertlab.sim.run` would derive from replication keys ``offset ..``.
    """
    rep_keys = np.arange(offset, offset + n_reps, dtype=np.uint64)
    return learner.init(sim.EnvSpec("full", "round", n, horizon=horizon), n_reps, rep_keys, np), rep_keys


def advance(learner, state, rep_keys, t, loss):
    """One round ``t`` of ``learner`` on ``loss`` (n_reps, n): act, then update with the round's keys."""
    with np.errstate(over="ignore"):
        keys = round_key(rep_keys, np.uint64(t))
    p, state = learner.act(state, None, keys)
    return learner.update(state, p, sim.FullFeedback(loss), keys)


def run_all_ones(learner, n, horizon, n_reps, offset=0):
    """Drive ``learner`` on all-ones losses; return the per-replication count of "above" rounds and the final state."""
    state, rep_keys = start(learner, n, n_reps, horizon, offset)
    aboves = np.zeros(n_reps, dtype=np.int64)
    per_phase_max = 0
    for t in range(horizon):
        new = advance(learner, state, rep_keys, t, np.ones((n_reps, n)))
        aboves += (new.phase != state.phase) | (new.switches != state.switches)
        per_phase_max = max(per_phase_max, int(new.switches.max()))
        state = new
    return aboves, per_phase_max, state


@given(st.floats(0.5, 50.0), st.integers(1, 4), st.floats(0.25, 4.0), st.integers(1, 40), st.integers(2, 5))
def test_never_more_mechanisms_than_accounted(eps, max_switches, threshold, horizon, n):
    learner = small_loss_experts(eps, horizon, max_switches=max_switches, threshold=threshold)
    k_sw, n_phases = rebuilt_parameters(eps, 0.0, horizon, n, max_switches, threshold)[:2]
    aboves, per_phase_max, state = run_all_ones(learner, n, horizon, 200)
    assert per_phase_max < k_sw                              # a phase ends at its K-th "above"
    assert np.all(state.phase <= n_phases + 1)
    assert np.all(state.switches[state.phase == n_phases + 1] == 0)
    np.testing.assert_array_equal(aboves, (state.phase - 1) * k_sw + state.switches)
    assert np.all(aboves <= k_sw * n_phases)                # hence at most K P pairs in all
    assert np.all(aboves <= horizon)                        # and at most one per round


def test_count_k_times_p_is_attained():
    """Noise-free, theta = 1, T = 8, K = 1: aboves at L = 1, 2, 4, 8, i.e. all P = 4 phases spend their switch."""
    learner = small_loss_experts(1.0, 8, max_switches=1, threshold=1.0, noise=False)
    k_sw, n_phases = rebuilt_parameters(1.0, 0.0, 8, 2, 1, 1.0)[:2]
    aboves, _, state = run_all_ones(learner, 2, 8, 4)
    assert (k_sw, n_phases) == (1, 4)
    assert np.all(aboves == k_sw * n_phases) and np.all(state.phase == n_phases + 1)


def tail_of_laplace_difference(x, b1, b2):
    r""":math:`P(\nu - \rho \ge x)` for :math:`\nu \sim \mathrm{Lap}(b_2)`, :math:`\rho \sim \mathrm{Lap}(b_1)`.

    Needs :math:`b_1 \ne b_2`.

    The characteristic function :math:`1/((1 + b_1^2 s^2)(1 + b_2^2 s^2))` splits into
    :math:`(b_2^2 \phi_{b_2} - b_1^2 \phi_{b_1})/(b_2^2 - b_1^2)`, so the tail is that mixture of Laplace tails.
    """
    a = abs(x)
    upper = (b2 * b2 * math.exp(-a / b2) - b1 * b1 * math.exp(-a / b1)) / (2.0 * (b2 * b2 - b1 * b1))
    return upper if x >= 0 else 1.0 - upper


def test_phase_one_scales_are_the_ones_drawn_with():
    eps, horizon, n, n_reps = 4.0, 20, 3, 200_000
    learner = small_loss_experts(eps, horizon, max_switches=1, threshold=1.5)
    _, _, _, b1, b2, eta, tau = rebuilt_parameters(eps, 0.0, horizon, n, 1, 1.5)
    state, rep_keys = start(learner, n, n_reps, horizon)
    assert kstest(state.rho, laplace(scale=b1[0]).cdf).pvalue > 1e-3
    loss = np.array([1.0, 0.0, 0.5])
    new = advance(learner, state, rep_keys, 0, np.broadcast_to(loss, (n_reps, n)))
    above = new.phase != state.phase
    for i in range(n):  # the query is the initial expert's loss
        sel = state.cur == i
        exact = tail_of_laplace_difference(tau[0] - loss[i], b1[0], b2[0])
        freq = float(above[sel].mean())
        assert abs(freq - exact) <= 4.5 * math.sqrt(exact * (1 - exact) / sel.sum()), (i, freq, exact)
    law = np.exp(-eta[0] * loss) / np.exp(-eta[0] * loss).sum()
    freq = np.bincount(new.cur[above], minlength=n) / above.sum()
    assert np.all(np.abs(freq - law) <= 4.5 * np.sqrt(law * (1 - law) / above.sum())), (freq, law)


def test_tail_formula_against_simulation():
    rng = np.random.default_rng(0)
    b1, b2 = 2.0, 5.0
    z = rng.laplace(scale=b2, size=400_000) - rng.laplace(scale=b1, size=400_000)
    for x in (-3.0, 0.0, 0.7, 6.0):
        p = tail_of_laplace_difference(x, b1, b2)
        assert abs(float(np.mean(z >= x)) - p) <= 4.5 * math.sqrt(p * (1 - p) / z.size)


# --------------------------------------------------------------------------
# (b) the empirical audit on neighbouring sequences

AUDIT_HORIZON, AUDIT_REPS = 5, 200_000


def neighbours():
    a = np.ones((AUDIT_HORIZON, 2))
    b = a.copy()
    a[0], b[0] = [1.0, 0.0], [0.0, 1.0]
    return a, b


def transcripts(learner, losses, n_reps, offset):
    """Per replication: the transcript code, the round of the first "above" (T if none), the number of aboves."""
    horizon, n = losses.shape
    state, rep_keys = start(learner, n, n_reps, horizon, offset)
    code = state.cur.astype(np.int64)
    first = np.full(n_reps, horizon)
    count = np.zeros(n_reps, dtype=np.int64)
    for t in range(horizon):
        new = advance(learner, state, rep_keys, t, np.broadcast_to(losses[t], (n_reps, n)))
        above = (new.phase != state.phase) | (new.switches != state.switches)
        code = code * (n + 1) + np.where(above, 1 + new.cur, 0)
        first = np.where(above & (first == horizon), t, first)
        count += above
        state = new
    return code, first, count


def audit(learner, eps, delta, level=0.999):
    """Largest violation ``lo_a - e^eps hi_b - delta`` over all events and both directions, and the
    largest certified log-ratio ``log(lo_a / hi_b)``."""
    a, b = neighbours()
    ta = transcripts(learner, a, AUDIT_REPS, 0)
    tb = transcripts(learner, b, AUDIT_REPS, 10**7)
    counts_a, counts_b = [], []
    for xa, xb in zip(ta, tb):
        values, inv = np.unique(np.concatenate([xa, xb]), return_inverse=True)
        counts_a.append(np.bincount(inv[:AUDIT_REPS], minlength=values.size))
        counts_b.append(np.bincount(inv[AUDIT_REPS:], minlength=values.size))
    ka, kb = np.concatenate(counts_a), np.concatenate(counts_b)
    alpha = (1.0 - level) / (4 * ka.size)  # Bonferroni: 2 bounds x 2 samples per event
    n = AUDIT_REPS
    lo = lambda k: np.where(k > 0, beta.ppf(alpha, np.maximum(k, 1), n - k + 1), 0.0)  # noqa: E731
    hi = lambda k: np.where(k < n, beta.ppf(1 - alpha, k + 1, np.maximum(n - k, 1)), 1.0)  # noqa: E731
    lo_a, hi_a, lo_b, hi_b = lo(ka), hi(ka), lo(kb), hi(kb)
    bound = math.exp(min(eps, 700.0))
    violation = max(float(np.max(lo_a - bound * hi_b - delta)), float(np.max(lo_b - bound * hi_a - delta)))
    with np.errstate(divide="ignore"):
        certified = max(float(np.max(np.log(lo_a) - np.log(hi_b))), float(np.max(np.log(lo_b) - np.log(hi_a))))
    return violation, certified


@pytest.mark.parametrize("eps, delta", [(1.0, 0.0), (0.5, 1e-3)])
def test_audit_finds_no_violation(eps, delta):
    learner = small_loss_experts(eps, AUDIT_HORIZON, delta=delta, max_switches=1, threshold=1.0)
    cost = privacy_cost(learner, 2, AUDIT_HORIZON)
    assert cost.epsilon <= eps and cost.delta <= delta
    violation, certified = audit(learner, eps, delta)
    assert violation <= 0.0, violation
    assert certified < eps


@pytest.mark.parametrize("kind", ["non_private", "budget_64x"])
def test_self_check_audit_detects_too_little_noise(kind):
    eps, delta = 1.0, 1e-3
    if kind == "non_private":
        learner = small_loss_experts(eps, AUDIT_HORIZON, max_switches=1, threshold=1.0, noise=False)
    else:
        learner = small_loss_experts(64 * eps, AUDIT_HORIZON, max_switches=1, threshold=1.0)
    violation, certified = audit(learner, eps, delta)
    assert violation > 0.0
    assert certified > eps
