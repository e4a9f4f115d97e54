r"""UCBVI is optimistic: its Q-values upper-bound the optimal ones on the good event.

Statement checked
-----------------
Let :math:`Q^\star_h` be the optimal Q-values of an episodic MDP with rewards
in [0, 1] and :math:`Q_{k,h}` those UCBVI computes before episode :math:`k`
(:func:`expertlab.mdp.optimistic_q_values`).  If at every visited
:math:`(h, s, a)` the bonus dominates the deviation of the empirical
next-state expectation of the optimal values,

.. math::

    b_{k,h}(s, a) \ge \big|(\hat P_{k,h} - P_h) V^\star_{h+1}(s, a)\big|,

then :math:`Q_{k,h}(s, a) \ge Q^\star_h(s, a)` for all :math:`k, h, s, a`
(induction down from :math:`h = H`: the clipping at :math:`H - h` keeps
optimism since :math:`Q^\star_h \le H - h`, and an unvisited pair gets
:math:`H - h`).  By Hoeffding's inequality and a union bound over the
:math:`SAHK` (stage, pair, count) triples, the bonus
:math:`H \sqrt{\ln(2 S A H K / \delta) / (2 n)}` dominates with probability at
least :math:`1 - \delta`, and so do the paper's Hoeffding bonus
:math:`7 H L / \sqrt n` and Bernstein–Freedman bonus (which are larger).

Source: Azar, Osband & Munos, "Minimax regret bounds for reinforcement
learning", ICML 2017, the optimism step of the proofs of Thm 1 (Hoeffding
bonus) and Thm 2 (Bernstein–Freedman bonus, where the induction also uses
the correction term); the Hoeffding union bound is the standard one.

How the checks work
-------------------
Hypothesis draws small MDPs (:math:`S \le 4`, :math:`A \le 3`,
:math:`H \le 4`, stage-dependent or not, rows with exact zeros and
deterministic rows among them, rewards in [0, 1]), a seed and a number of
episodes; UCBVI plays them through :func:`expertlab.sim.run` in 8
replications and before every episode its :math:`Q` is compared with
:math:`Q^\star` from
:func:`expertlab.mdp.backward_induction`.  With :math:`\delta = 10^{-6}`
for the Hoeffding-width bonus a counterexample would be an event of
probability below :math:`10^{-6}` per draw, i.e. a bug.

Self-test: with the bonus scaled down by :math:`10^{-4}` optimism is
violated on a seeded instance, so the check can fail.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expertlab import sim
from expertlab.mdp import FiniteHorizonMDP, backward_induction, optimistic_q_values, ucbvi
from expertlab.testing import strategies

pytestmark = pytest.mark.proof

N_REPS = 8


def episodic_mdps():
    return strategies.episodic_mdps(max_states=4, max_actions=3, max_episode_length=4)


def min_optimism_gap(m, learner, bonus, scale, n_episodes, seed):
    """Smallest Q_{k,h}(s, a) - Q*_h(s, a) over replications, episodes, stages and pairs.

    The learner runs through ``sim.run``; a probe around its ``act`` reads the
    optimistic Q of the state before every episode.
    """
    q_star = np.asarray(backward_induction(m).q_values)
    worst = [math.inf]

    def act(state, obs, keys):
        q = optimistic_q_values(state, bonus, bonus_scale=scale)
        worst[0] = min(worst[0], float((q - q_star[None]).min()))
        return learner.act(state, obs, keys)

    sim.run(learner._replace(act=act), m, horizon=n_episodes, n_reps=N_REPS, seed=seed)
    return worst[0]


def hoeffding_width_scale(m, n_episodes, delta_bonus=0.1, delta_event=1e-6):
    """Scale turning 7 H L / sqrt(n) into H sqrt(ln(2 S A H K / delta) / (2 n))."""
    s, a, h = m.n_states, m.n_actions, m.horizon
    log_term = math.log(5 * s * a * n_episodes * h / delta_bonus)
    return math.sqrt(math.log(2 * s * a * h * n_episodes / delta_event) / 2) / (7 * log_term)


@settings(max_examples=25, deadline=None)
@given(m=episodic_mdps(), n_episodes=st.integers(1, 60), seed=st.integers(0, 2**32))
def test_hoeffding_width_bonus_is_optimistic(m, n_episodes, seed):
    scale = hoeffding_width_scale(m, n_episodes)
    learner = ucbvi("hoeffding", bonus_scale=scale)
    assert min_optimism_gap(m, learner, "hoeffding", scale, n_episodes, seed) >= -1e-12


@settings(max_examples=15, deadline=None)
@given(m=episodic_mdps(), n_episodes=st.integers(1, 40), seed=st.integers(0, 2**32),
       bonus=st.sampled_from(["hoeffding", "bernstein"]))
def test_paper_bonuses_are_optimistic(m, n_episodes, seed, bonus):
    learner = ucbvi(bonus)
    assert min_optimism_gap(m, learner, bonus, 1.0, n_episodes, seed) >= -1e-12


def test_shrunk_bonus_is_not_optimistic():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=(3, 3, 2))
    m = FiniteHorizonMDP(p, rng.uniform(size=(3, 3, 2)))
    learner = ucbvi("hoeffding", bonus_scale=1e-4)
    assert min_optimism_gap(m, learner, "hoeffding", 1e-4, 60, 1) < -1e-3
