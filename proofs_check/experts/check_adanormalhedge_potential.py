r"""AdaNormalHedge's potential grows only by the lemma's small term, also with sleeping experts.

Statement checked
-----------------
With :math:`\Phi(R, C) = \exp([R]_+^2/(3C))` (:math:`\Phi(R, 0) = 1` for
:math:`R \le 0`) and :math:`w(R, C) = \tfrac12(\Phi(R+1, C+1) - \Phi(R-1, C+1))`,
for every :math:`C \ge 0`, :math:`|R| \le C` and :math:`r \in [-1, 1]`

.. math::

    \Phi(R + r, C + |r|) \;\le\; \Phi(R, C) + w(R, C)\, r + \frac{3|r|}{2(C+1)} .

AdaNormalHedge plays :math:`p_i \propto \pi_i w(R_i, C_i)` over the awake
experts.  This gives :math:`\sum_i \pi_i w_i r_i = 0` with
:math:`r_i = \langle p, \ell\rangle - \ell_i` for awake experts and
:math:`r_i = 0` for asleep ones.  Summing the lemma with weights
:math:`\pi_i` then gives, round by round,

.. math::

    \sum_i \pi_i \Phi(R_{t,i}, C_{t,i}) \le \sum_i \pi_i \Phi(R_{t-1,i}, C_{t-1,i})
    + \tfrac32 \sum_i \pi_i \frac{|r_{t,i}|}{C_{t-1,i} + 1},

and so :math:`\sum_i \pi_i \Phi(R_{T,i}, C_{T,i}) \le B_T = 1 + \tfrac32 \sum_i
\pi_i (1 + \ln(1 + C_{T,i}))`.  This bound is what gives the regret bound
:math:`R_{T,k} \le \sqrt{3 C_{T,k}\ln(B_T/\pi_k)}` (Luo & Schapire, COLT 2015,
the potential lemma behind Theorem 1 and its sleeping-experts use; the
lemma's number and its constant :math:`3/2` were not re-checked against the
text, and the constant is the one the library's docstring states).

How the checks work
-------------------
The lemma is checked with Hypothesis over :math:`(C, R/C, r)`, on the range
where float64 resolves it (:math:`[R+1]_+^2/(3C) \le 30`, so that
:math:`\Phi` stays below :math:`10^{13}`).  The library's
:func:`expertlab.experts.adanormalhedge` is run on Hypothesis-generated
losses and awake masks.  After every round, the potential computed from its
state must satisfy the per-round inequality, and at the end the bound
:math:`B_T` and the regret bound.

Self-tests: the lemma with constant 0.3 in place of 3/2 is false (a
violation is found).  A learner that plays the prior instead of
:math:`\propto \pi w` breaks the per-round inequality when one expert never
loses and the other always does.  So the library check would catch a wrong
weighting.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expertlab.experts import adanormalhedge
from expertlab.testing import strategies

pytestmark = pytest.mark.proof


def phi(R, C):
    R = np.asarray(R, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    pos = np.maximum(R, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.where(pos > 0, pos * pos / (3.0 * C), 0.0)
    return np.exp(e)


def w(R, C):
    return 0.5 * (phi(R + 1.0, C + 1.0) - phi(R - 1.0, C + 1.0))


def lemma_gap(R, C, r, const=1.5):
    """Right-hand side minus left-hand side of the lemma (non-negative when it holds)."""
    return phi(R, C) + w(R, C) * r + const * abs(r) / (C + 1.0) - phi(R + r, C + abs(r))


points = st.tuples(st.one_of(st.just(0.0), st.floats(0.0, 5.0), st.floats(5.0, 5000.0)),
                   st.one_of(st.sampled_from([-1.0, 0.0, 1.0]), st.floats(-1.0, 1.0)),
                   st.one_of(st.sampled_from([-1.0, 0.0, 1.0]), st.floats(-1.0, 1.0)))


@settings(max_examples=500, deadline=None)
@given(points)
def test_one_step_lemma(pt):
    C, frac, r = pt
    R = frac * C
    if max(R + 1.0, 0.0) ** 2 / (3.0 * C + 3.0) > 30 or (C > 0 and max(R + abs(r), 0) ** 2 / (3 * (C + abs(r))) > 30):
        return
    scale = max(1.0, float(phi(R + 1.0, C + 1.0)))
    assert lemma_gap(R, C, r) >= -1e-12 * scale


def test_self_check_smaller_constant_fails():
    rng = np.random.default_rng(0)
    C = rng.uniform(0.0, 50.0, 200_000)
    R = rng.uniform(-1.0, 1.0, C.size) * C * rng.uniform(0.0, 1.0, C.size) ** 2
    r = rng.uniform(-1.0, 1.0, C.size)
    ok = (np.maximum(R + 1.0, 0.0) ** 2 / (3 * C + 3) < 30) & (np.maximum(R + np.abs(r), 0) ** 2 / (3 * (C + np.abs(r)) + 1e-300) < 30)
    assert np.all(lemma_gap(R[ok], C[ok], r[ok]) >= -1e-9)
    assert np.any(lemma_gap(R[ok], C[ok], r[ok], const=0.3) < -1e-9)


@st.composite
def sequences(draw):
    # losses on a grid (ties), masks with at least one expert awake every round
    losses, awake = draw(strategies.sleeping_losses(max_reps=1, max_horizon=25, min_experts=2, max_experts=5,
                                                    elements=st.sampled_from([0.0, 0.25, 0.5, 1.0])))
    losses, awake, n = losses[0], awake[0], losses.shape[-1]
    prior = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n)))
    return losses, awake, prior / prior.sum()


def _potential_violations(losses, awake, prior, play_prior=False):
    """Rounds where sum pi Phi grows by more than 3/2 sum pi |r| / (C + 1); plus the final state."""
    L = adanormalhedge(prior=prior)
    state = L.init(losses.shape[1], 1)
    bad = []
    for t in range(losses.shape[0]):
        aw = awake[t][None, :]
        p = L.act(state, aw, None)[0]
        if play_prior:
            p = np.where(aw, prior[None, :], 0.0)
            p = p / p.sum()
        before = float(np.sum(prior * phi(state.regret[0], state.abs_regret[0])))
        new = L.update(state, p, (losses[t][None, :], aw))
        r = new.regret[0] - state.regret[0]
        allowance = 1.5 * np.sum(prior * np.abs(r) / (state.abs_regret[0] + 1.0))
        after = float(np.sum(prior * phi(new.regret[0], new.abs_regret[0])))
        if after > before + allowance + 1e-9 * max(1.0, after):
            bad.append(t)
        state = new
    return bad, state


@settings(max_examples=200, deadline=None)
@given(sequences())
def test_library_potential_and_regret_bound(seq):
    losses, awake, prior = seq
    bad, state = _potential_violations(losses, awake, prior)
    assert not bad
    R, C = state.regret[0], state.abs_regret[0]
    B = 1.0 + 1.5 * np.sum(prior * (1.0 + np.log1p(C)))
    assert np.sum(prior * phi(R, C)) <= B + 1e-9
    bound = np.sqrt(3.0 * C * np.log(B / prior))
    assert np.all(R <= bound + 1e-9)


def test_self_check_playing_the_prior_breaks_the_potential():
    # expert 0 never loses, expert 1 always does: a learner stuck on the uniform prior has r_0 = 1/2 every
    # round, so Phi(R_0, C_0) = exp(t/6) outgrows any allowance; AdaNormalHedge itself moves to expert 0
    losses = np.tile([0.0, 1.0], (60, 1))
    awake = np.ones_like(losses, dtype=bool)
    prior = np.array([0.5, 0.5])
    bad, _ = _potential_violations(losses, awake, prior, play_prior=True)
    assert bad
    good, _ = _potential_violations(losses, awake, prior)
    assert not good
