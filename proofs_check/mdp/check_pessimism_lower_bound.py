r"""Pessimism: on the good event the pessimistic value lower-bounds the true value of the mixed policy.

Statement checked
-----------------
Let :math:`\underline V` be the pessimistic values of a stochastic Markov
policy :math:`\pi` on empirical kernels :math:`\hat P_h`
(:func:`expertlab.mdp.pessimistic_values`):
:math:`\underline Q_h = r_h + \max(0, \hat P_h \underline V_{h+1} - b_h)` at
visited pairs, :math:`r_h` at unvisited ones,
:math:`\underline V_h = \langle \pi_h, \underline Q_h\rangle`.  If at every
visited :math:`(h, s, a)`

.. math::

    b_h(s, a) \ge \big|(\hat P_h - P_h) V^\pi_{h+1}(s, a)\big|

(the good event), then :math:`\underline V_h \le V^\pi_h` for all
:math:`h, s`; in particular the L1 bonus of
:func:`expertlab.mdp.pessimism_bonus`, for which the event holds for every
policy at once when :math:`\|\hat P_h - P_h\|_1 \le \sqrt{2 L_1 / n}`.
Consequently the StepMix weight :math:`w` of
:func:`expertlab.mdp.stepmix_weight` satisfies the constraint: either
:math:`w = 0` (the baseline, whose true value meets the threshold) or
:math:`\underline V^{\pi_w}_1(s_1) \ge \tau`, hence
:math:`V^{\pi_w}_1(s_1) \ge \tau` on the good event.

Source: Li, Huang, Shen & Yang, "Near-optimal conservative exploration in
reinforcement learning under episode-wise constraints", ICML 2023, the
pessimism step of the proof of the StepMix guarantee (Thm 1; the L1 width
here is a reconstruction, the induction is the standard one); Weissman et
al. 2003 for the L1 deviation inequality.

How the checks work
-------------------
Hypothesis draws small MDPs (:math:`S \le 4`,
:math:`A \le 3`, :math:`H \le 4`, stage-dependent or not, rewards in [0, 1]), counts sampled from the true kernels (some
pairs unvisited), a random stochastic policy, and a bonus scale.  Where the
good event holds (checked directly with the true :math:`V^\pi`) the lower
bound must hold; with the L1 bonus at full size the event of the L1
inequality is also checked and the lower bound asserted for three policies
at once (the greedy one, the baseline and their mixture).  For the
bisection, the returned weight must meet the threshold pessimistically and
truly.

Self-test: with the bonus scaled down by :math:`10^{-3}` the lower bound
fails on a seeded instance, so the check can fail.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expertlab.mdp import (FiniteHorizonMDP, evaluate_stochastic_policy, mix_policies, pessimism_bonus,
                           pessimistic_values, stepmix_weight)
from expertlab.testing import strategies

pytestmark = pytest.mark.proof


@st.composite
def problems(draw):
    m = draw(strategies.episodic_mdps(max_states=4, max_actions=3, max_episode_length=4))
    s, a, h, p = m.n_states, m.n_actions, m.horizon, np.asarray(m.transitions)
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    n = rng.integers(0, draw(st.integers(1, 300)) + 1, size=(h, s, a))
    counts = np.zeros((1, h, s, a, s))
    for idx in np.ndindex(h, s, a):
        counts[(0, *idx)] = rng.multinomial(n[idx], p[idx])
    pi = rng.dirichlet(np.ones(a), size=(1, h, s))
    return m, counts, pi, rng


def _event(m, counts, v_next, b):
    """Whether b_h >= |(P_hat_h - P_h) V_{h+1}| at every visited pair."""
    n = counts.sum(axis=-1)
    p_hat = counts / np.maximum(n, 1.0)[..., None]
    dev = np.abs(np.einsum("rhsat,rht->rhsa", p_hat - np.asarray(m.transitions)[None], v_next))
    return bool(np.all((dev <= b + 1e-12) | (n == 0)))


def _bonus(m, counts, log_term, scale):
    n1 = np.maximum(counts.sum(axis=-1), 1.0)
    h = np.arange(m.horizon)[None, :, None, None]
    return pessimism_bonus(n1, h, m.horizon, log_term=log_term, scale=scale)


@settings(max_examples=60, deadline=None)
@given(prob=problems(), scale=st.sampled_from([0.05, 0.3, 1.0, 3.0]))
def test_lower_bound_on_the_good_event(prob, scale):
    m, counts, pi, _ = prob
    v_true = evaluate_stochastic_policy(m, pi)
    b = _bonus(m, counts, 3.0, scale)
    low = pessimistic_values(counts, m.rewards, pi, log_term=3.0, scale=scale)
    if _event(m, counts, v_true[:, 1:], b):
        assert np.all(low <= v_true + 1e-10)


@settings(max_examples=40, deadline=None)
@given(prob=problems(), delta=st.sampled_from([0.01, 0.1]))
def test_l1_event_covers_every_policy(prob, delta):
    m, counts, pi, rng = prob
    s, a, h = m.n_states, m.n_actions, m.horizon
    log_term = s * np.log(2.0) + np.log(s * a * h * 300 / delta)
    n = counts.sum(axis=-1)
    l1 = np.abs(counts / np.maximum(n, 1.0)[..., None] - np.asarray(m.transitions)[None]).sum(axis=-1)
    if not np.all((l1 <= np.sqrt(2 * log_term / np.maximum(n, 1.0))) | (n == 0)):
        return  # outside the L1 event (probability <= delta)
    greedy = rng.integers(0, a, size=(1, h, s))
    base = rng.dirichlet(np.ones(a), size=(h, s))
    for policy in (mix_policies(greedy, base, np.ones(1)), base[None], mix_policies(greedy, base, np.full(1, 0.4)),
                   pi):
        low = pessimistic_values(counts, m.rewards, policy, log_term=log_term)
        assert np.all(low <= evaluate_stochastic_policy(m, policy) + 1e-10)


@settings(max_examples=40, deadline=None)
@given(prob=problems(), frac=st.floats(0.0, 1.0))
def test_bisection_weight_meets_the_constraint(prob, frac):
    m, counts, _, rng = prob
    s, a, h = m.n_states, m.n_actions, m.horizon
    log_term = s * np.log(2.0) + np.log(s * a * h * 300 / 0.1)
    greedy = rng.integers(0, a, size=(1, h, s))
    base = rng.dirichlet(np.ones(a), size=(h, s))
    v_b = float(evaluate_stochastic_policy(m, base[None])[0, 0, 0])
    thr = frac * v_b
    w, low = stepmix_weight(counts, m.rewards, greedy, base, thr, 0, log_term=log_term)
    v_w = float(evaluate_stochastic_policy(m, mix_policies(greedy, base, w))[0, 0, 0])
    if w[0] > 0:
        assert low[0] >= thr
        again = pessimistic_values(counts, m.rewards, mix_policies(greedy, base, w), log_term=log_term)[0, 0, 0]
        np.testing.assert_allclose(again, low[0])
    n = counts.sum(axis=-1)
    l1 = np.abs(counts / np.maximum(n, 1.0)[..., None] - np.asarray(m.transitions)[None]).sum(axis=-1)
    if np.all((l1 <= np.sqrt(2 * log_term / np.maximum(n, 1.0))) | (n == 0)):
        assert v_w >= thr - 1e-10


def test_shrunk_bonus_is_not_pessimistic():
    rng = np.random.default_rng(0)
    s, a, h = 3, 2, 3
    p = rng.dirichlet(np.ones(s), size=(h, s, a))
    m = FiniteHorizonMDP(p, rng.uniform(size=(h, s, a)))
    counts = np.zeros((1, h, s, a, s))
    for idx in np.ndindex(h, s, a):
        counts[(0, *idx)] = rng.multinomial(3, p[idx])
    worst = -np.inf
    for _ in range(20):
        pi = rng.dirichlet(np.ones(a), size=(1, h, s))
        low = pessimistic_values(counts, m.rewards, pi, log_term=3.0, scale=1e-3)
        worst = max(worst, float((low - evaluate_stochastic_policy(m, pi)).max()))
    assert worst > 1e-3
