r"""Hoeffding's lemma, the exponential-weights potential step, and Hedge's regret bound.

Statements checked
------------------
**(H) Hoeffding's lemma in mix-loss form.**  For every probability vector
:math:`w` on :math:`N` experts, every loss vector :math:`\ell \in [0,1]^N` and
every :math:`\eta > 0`, the mix loss is at least the expected loss minus
:math:`\eta/8`:

.. math::

    -\frac1\eta \ln \sum_i w_i e^{-\eta \ell_i} \;\ge\; \sum_i w_i \ell_i - \frac\eta8 ,

i.e. the mixability gap :math:`\delta = \langle w, \ell\rangle + \frac1\eta
\ln \sum_i w_i e^{-\eta\ell_i}` lies in :math:`[0, \eta/8]` (the lower end is
Jensen's inequality).  This is Lemma 2.2 of Cesa-Bianchi & Lugosi (2006)
applied to the random variable :math:`\ell_I`, :math:`I \sim w`, with
:math:`s = -\eta` and range :math:`b - a = 1`.

**(P) One step of the potential.**  Let :math:`L_{t,i}` be expert
:math:`i`'s cumulative loss after :math:`t` rounds, :math:`\Phi_t = \ln
\sum_i e^{-\eta L_{t,i}}` (so :math:`\Phi_0 = \ln N`), and let Hedge play
:math:`p_{t,i} = e^{-\eta L_{t-1,i}} / e^{\Phi_{t-1}}`.  Then
:math:`\Phi_t - \Phi_{t-1} = \ln \sum_i p_{t,i} e^{-\eta \ell_{t,i}}`, and
(H) with :math:`w = p_t` gives

.. math::

    \Phi_t - \Phi_{t-1} \;\le\; \frac{\eta^2}{8} - \eta \langle p_t, \ell_t \rangle .

This is the per-round step in the proof of Theorem 2.2 of Cesa-Bianchi &
Lugosi (2006), written here for the natural-log potential of the weights.

**(R) Regret of Hedge (Theorem 2.2 there).**  Summing (P) over
:math:`t = 1..T` and using :math:`\Phi_T \ge -\eta \min_i L_{T,i}`:

.. math::

    \sum_{t=1}^T \langle p_t, \ell_t\rangle - \min_i L_{T,i}
    \;\le\; \frac{\ln N}{\eta} + \frac{\eta T}{8},

and with the tuned rate :math:`\eta = \sqrt{8 \ln N / T}` the right-hand side
is :math:`\sqrt{(T/2)\ln N}`.

How the checks work
-------------------
(H) is searched by Hypothesis over weights on the simplex (zeros allowed),
losses in :math:`[0,1]` (endpoints included) and
:math:`\eta \in [10^{-6}, 10^{3}]`; the gap is computed without cancellation
(``log1p``/``expm1`` about the mean for small :math:`\eta`, a shifted
log-sum-exp otherwise).  (P) and (R) are checked on the library: the
:math:`p_t` are those returned by ``expertlab.experts.hedge(eta=...)`` driven
through ``init``/``act``/``update`` on Hypothesis-generated loss matrices
(:math:`T \le 50`, :math:`N \le 6`), while :math:`\Phi_t` is computed here from
the cumulative losses; so a wrong :math:`p_t` (weight moved to worse experts)
breaks (P) in the round where it happens.  The tuned form is checked through
``hedge(horizon=T)`` and, once, through ``sim.run`` on a ``loss_matrix``.

Each check also tests itself: the constant :math:`1/8` is approached to
within :math:`10^{-6}` (two experts, losses 0 and 1, equal weights, small
:math:`\eta`), so no smaller constant would pass; (H) fails for losses of
range 2, just outside its domain; and the regret harness rejects a learner
that does not hedge (follow-the-loser).

References
----------
N. Cesa-Bianchi and G. Lugosi, *Prediction, Learning, and Games*, Cambridge
University Press, 2006: Lemma 2.2 (Hoeffding's lemma, Section 2.2) and
Theorem 2.2 with its proof.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from expertlab import sim
from expertlab.experts import hedge, instances
from expertlab.testing import strategies

pytestmark = pytest.mark.proof

# --------------------------------------------------------------------------
# the quantities of the statement, computed independently of the library


def mixability_gap(w, loss, eta):
    r"""``<w, l> + (1/eta) ln sum_i w_i exp(-eta l_i)`` without cancellation."""
    w = np.asarray(w, dtype=np.float64)
    loss = np.asarray(loss, dtype=np.float64)
    h = float(w @ loss)
    x = loss - h  # centred losses; sum_i w_i x_i = 0 up to rounding
    if eta * float(np.max(np.abs(x))) <= 1.0:
        s = float(w @ np.expm1(-eta * x))
        return math.log1p(s) / eta
    a = np.where(w > 0, -eta * x, -np.inf)
    m = float(np.max(a))
    return (m + math.log(float(w @ np.exp(a - m)))) / eta


def log_potential(cum_loss, eta):
    r"""``Phi = ln sum_i exp(-eta L_i)`` (stable log-sum-exp)."""
    a = -eta * np.asarray(cum_loss, dtype=np.float64)
    m = float(np.max(a))
    return m + math.log(float(np.sum(np.exp(a - m))))


def play(learner, losses):
    """Drive ``learner`` (one replication) through ``losses`` of shape (T, N); return the (T, N) plays."""
    horizon, n = losses.shape
    state = learner.init(n, 1)
    key = np.zeros(1, dtype=np.uint64)
    plays = np.empty_like(losses)
    for t in range(horizon):
        p = np.asarray(learner.act(state, None, key)[0])
        plays[t] = p[0]
        state = learner.update(state, p, (losses[t][None, :].copy(), None))
    return plays


def regret_of(plays, losses):
    return float(np.sum(plays * losses) - np.min(losses.sum(axis=0)))


# --------------------------------------------------------------------------
# strategies


def simplex(n):
    raw = st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n)

    def norm(v):
        v = np.asarray(v, dtype=np.float64)
        if v.sum() <= 0:
            v[0] = 1.0
        return v / v.sum()

    return raw.map(norm)


log_eta = st.floats(-6.0, 3.0)


@st.composite
def weights_and_losses(draw):
    n = draw(st.integers(1, 8))
    w = draw(simplex(n))
    loss = draw(strategies.loss_matrices(max_reps=1, max_horizon=1, min_experts=n, max_experts=n))[0, 0]
    return w, loss


def loss_matrices(max_t=50, max_n=6):
    """(T, N) losses in [0, 1]: arbitrary floats mixed with the extreme values 0, 1/2, 1 (worst cases of
    Hoeffding) and the other edge values of ``expertlab.testing.strategies.loss_matrices``."""
    return strategies.loss_matrices(max_reps=1, max_horizon=max_t, max_experts=max_n).map(lambda losses: losses[0])


# --------------------------------------------------------------------------
# (H) Hoeffding's lemma


@given(weights_and_losses(), log_eta)
def test_mixability_gap_between_zero_and_eta_over_8(wl, le):
    w, loss = wl
    eta = 10.0**le
    gap = mixability_gap(w, loss, eta)
    assert math.isfinite(gap)
    assert gap >= -1e-12 * eta
    assert gap <= eta / 8.0 * (1.0 + 1e-9)


def test_constant_one_eighth_is_sharp():
    """Equal weights on losses 0 and 1: the gap is (1/eta) ln cosh(eta/2) = eta/8 - eta^3/192 + ..."""
    w = np.array([0.5, 0.5])
    loss = np.array([0.0, 1.0])
    for eta in (1e-1, 1e-2, 1e-3):
        ratio = mixability_gap(w, loss, eta) / (eta / 8.0)
        assert ratio <= 1.0
        assert ratio > 1.0 - eta**2 / 20.0  # the eta^2/24 correction, with room for rounding
    assert mixability_gap(w, loss, 1e-3) / (1e-3 / 8.0) > 1.0 - 1e-6


@pytest.mark.parametrize("eta", [1e-3, 0.5, 2.0])
def test_hoeffding_fails_for_losses_of_range_two(eta):
    """Just outside the domain (losses in [0, 2]) the eta/8 bound is false: the gap is near eta/2."""
    gap = mixability_gap(np.array([0.5, 0.5]), np.array([0.0, 2.0]), eta)
    assert gap > eta / 8.0 * 1.5


# --------------------------------------------------------------------------
# (P) the per-round potential step, on the library's Hedge weights


@given(loss_matrices(), st.floats(-3.0, 2.0))
def test_potential_step_holds_every_round_for_library_hedge(losses, le):
    eta = 10.0**le
    plays = play(hedge(eta=eta), losses)
    cum = np.vstack([np.zeros(losses.shape[1]), np.cumsum(losses, axis=0)])
    for t in range(losses.shape[0]):
        lhs = log_potential(cum[t + 1], eta) - log_potential(cum[t], eta)
        rhs = eta**2 / 8.0 - eta * float(plays[t] @ losses[t])
        scale = 1.0 + abs(log_potential(cum[t], eta))
        assert lhs <= rhs + 1e-12 * scale, f"round {t + 1}: {lhs} > {rhs}"


# --------------------------------------------------------------------------
# (R) the cumulative regret bound of Theorem 2.2


@given(loss_matrices(), st.floats(-3.0, 2.0))
def test_hedge_regret_at_most_log_n_over_eta_plus_eta_t_over_8(losses, le):
    eta = 10.0**le
    horizon, n = losses.shape
    regret = regret_of(play(hedge(eta=eta), losses), losses)
    bound = math.log(n) / eta + eta * horizon / 8.0
    assert regret <= bound + 1e-9 * (1.0 + bound)


@given(loss_matrices())
def test_tuned_hedge_regret_at_most_sqrt_t_log_n_over_2(losses):
    horizon, n = losses.shape
    regret = regret_of(play(hedge(horizon=horizon), losses), losses)
    bound = math.sqrt(horizon * math.log(n) / 2.0)
    assert regret <= bound + 1e-9 * (1.0 + bound)


def test_tuned_bound_through_sim_run():
    """The same bound on the regret that ``sim.run`` records, on a worst-case-style matrix."""
    horizon, n = 40, 3
    losses = np.zeros((horizon, n))
    losses[0::2, 0] = 1.0  # the leader alternates between experts 0 and 1
    losses[1::2, 1] = 1.0
    losses[:, 2] = 0.5 + 0.01
    res = sim.run(hedge(horizon=horizon), instances.loss_matrix(losses), horizon=horizon, n_reps=2,
                  seed=0, checkpoints=[horizon])
    bound = math.sqrt(horizon * math.log(n) / 2.0)
    mine = regret_of(play(hedge(horizon=horizon), losses), losses)
    np.testing.assert_allclose(res.metrics["regret"][-1], mine, rtol=1e-12, atol=1e-12)
    assert np.all(res.metrics["regret"][-1] <= bound)


def _follow_the_loser():
    """A learner that puts all weight on the expert with the largest cumulative loss."""
    from expertlab.sim import Learner

    def init(spec, n_reps, keys=None, xp=np):
        n_experts = spec.n_actions if hasattr(spec, "n_actions") else spec
        return (np.zeros((n_reps, n_experts)),)

    def act(state, awake=None, key=None):
        cum = state[0]
        p = np.zeros_like(cum)
        p[np.arange(cum.shape[0]), np.argmax(cum, axis=1)] = 1.0
        return p, state

    def update(state, p, feedback, key=None):
        return (state[0] + feedback[0],)

    return Learner(name="follow_the_loser", feedback="full", init=init, act=act, update=update, params={})


def test_regret_harness_rejects_a_learner_that_does_not_hedge():
    """Self-test of the harness: the bound fails for a learner that is not Hedge."""
    horizon, n = 50, 2
    losses = np.tile([0.0, 1.0], (horizon, 1))
    eta = math.sqrt(8.0 * math.log(n) / horizon)
    bound = math.log(n) / eta + eta * horizon / 8.0
    loser = regret_of(play(_follow_the_loser(), losses), losses)
    assert loser > bound  # loser regret is T - 1 = 49, the bound about 4.2
    assert regret_of(play(hedge(eta=eta), losses), losses) <= bound
    # and the per-round step (P) breaks in some round for the loser's plays
    plays = play(_follow_the_loser(), losses)
    cum = np.vstack([np.zeros(n), np.cumsum(losses, axis=0)])
    broken = [
        log_potential(cum[t + 1], eta) - log_potential(cum[t], eta) > eta**2 / 8 - eta * plays[t] @ losses[t]
        for t in range(horizon)
    ]
    assert any(broken)
