r"""Reward-free certificate: on the confidence event the plan on the fitted model is :math:`2W_1`-optimal.

Statement checked
-----------------
Let :math:`P_\theta = \sum_i \theta_i \phi_i` with :math:`\theta, \tilde\theta`
on the simplex and :math:`\Lambda \succ 0`.  For every :math:`(s, a)` and
every :math:`V \in [0, 1]^S`,

.. math::

    \big|\langle \theta - \tilde\theta, \textstyle\sum_{s'} \phi(s' | s, a) V(s') \rangle\big|
    \le \|\theta - \tilde\theta\|_\Lambda \, g(s, a), \qquad
    g(s, a) = \tfrac12 \sum_{s'} \|\phi(s' | s, a)\|_{\Lambda^{-1}}        \tag{one step}

(Cauchy–Schwarz after centring :math:`V` at :math:`\tfrac12`, which is free
because both weights sum to 1).  Hence, if :math:`\beta \ge
\|\theta - \tilde\theta\|_\Lambda`, the exploration values :math:`W` of
:func:`expertlab.mdp.reward_free_ttr` satisfy, for every Markov policy
:math:`\pi` and every reward with total at most 1,
:math:`|V^\pi_\theta(s_1) - V^\pi_{\tilde\theta}(s_1)| \le W_1(s_1)` (the
simulation lemma, summed along :math:`\pi` under :math:`P_\theta`, with the
change of measure to :math:`P_{\tilde\theta}` paid by a second
:math:`\beta g`), and the optimal plan :math:`\hat\pi` of the fitted model
has :math:`V^\star_\theta(s_1) - V^{\hat\pi}_\theta(s_1) \le 2 W_1(s_1)`.

Source: the simulation lemma (e.g. Kearns & Singh 2002) and the
self-normalised confidence set of Abbasi-Yadkori, Pál & Szepesvári (2011,
Thm 1), in the reward-free protocol of Zhang, Zhang & Gu (ICML 2023); the
transition-targeted width :math:`g` is this library's (see
:func:`expertlab.mdp.reward_free_ttr`).

How the checks work
-------------------
Hypothesis draws small episodic mixtures (:math:`2 \le S \le 4`,
:math:`A \le 3`, :math:`2 \le d \le 4`, :math:`H \le 4`, from
:func:`expertlab.testing.strategies.episodic_linear_mixtures`: base kernels
with exact zeros and a true weight on the simplex), a second weight and a
Gram matrix.  The one-step inequality is checked at the vertices of
:math:`[0, 1]^S` (where the left side is largest).  For the chain, the
library's explorer is given a state whose ridge estimate is exactly
:math:`\tilde\theta` and whose radius is exactly
:math:`\|\theta - \tilde\theta\|_\Lambda` (through ``beta_scale``); its
:math:`W_1` must bound the model error of random policies and its
:math:`2 W_1` the suboptimality of the fitted plans for random rewards.  A
negative control halves the width (the factor :math:`\tfrac14`): on an
instance where the one-step bound is tight up to :math:`\sqrt2` it fails.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from expertlab.mdp import EpisodicLinearMixture, RewardFreeMixture, plan_for_rewards, reward_free_ttr
from expertlab.testing import strategies

pytestmark = pytest.mark.proof


def _simplex(rng, d):
    w = rng.exponential(size=d)
    return w / w.sum()


def _instance(mixture, seed):
    """(rng, phi, theta, theta_tilde, Gram): the drawn mixture's kernels and weight, a fitted weight, a Gram matrix."""
    rng = np.random.default_rng(seed)
    d = mixture.dim
    theta_tilde = _simplex(rng, d)
    m = rng.normal(size=(d, 3 * d))
    gram = 0.5 * np.eye(d) + m @ m.T * rng.uniform(0.1, 30.0)
    return rng, np.asarray(mixture.features), np.asarray(mixture.theta), theta_tilde, gram


def _widths(phi, gram):
    inv = np.linalg.inv(gram)
    return 0.5 * np.sqrt(np.einsum("isat,ij,jsat->sat", phi, inv, phi)).sum(axis=-1)


def _values(p, rewards, policy):
    """Exact values (H + 1, S) of a deterministic policy (H, S) in the kernel p (S, A, S)."""
    h_, n_s = policy.shape
    v = np.zeros((h_ + 1, n_s))
    for h in range(h_ - 1, -1, -1):
        a = policy[h]
        v[h] = rewards[h, np.arange(n_s), a] + p[np.arange(n_s), a] @ v[h + 1]
    return v


mixtures = strategies.episodic_linear_mixtures(min_dim=2, max_dim=4, min_states=2, max_states=4, max_actions=3,
                                               max_episode_length=4)


@given(mixtures, st.integers(0, 2 ** 31 - 1))
def test_one_step_bound_at_every_vertex(mixture, seed):
    n_s = mixture.features.shape[1]
    _, phi, theta, theta_tilde, gram = _instance(mixture, seed)
    dist = math.sqrt((theta - theta_tilde) @ gram @ (theta - theta_tilde))
    g = _widths(phi, gram)
    for v in itertools.product((0.0, 1.0), repeat=n_s):
        lhs = np.abs(np.einsum("i,isat,t->sa", theta - theta_tilde, phi, np.array(v)))
        assert np.all(lhs <= dist * g + 1e-12)


@given(mixtures, st.integers(0, 2 ** 31 - 1))
def test_exploration_values_bound_model_error_and_suboptimality(mixture, seed):
    _, n_s, n_a, _ = mixture.features.shape
    horizon = mixture.horizon
    rng, phi, theta, theta_tilde, gram = _instance(mixture, seed)
    dist = math.sqrt((theta - theta_tilde) @ gram @ (theta - theta_tilde))
    env = RewardFreeMixture(EpisodicLinearMixture(phi, theta, np.zeros((horizon, n_s, n_a))))
    base = reward_free_ttr(ridge=1.0, delta=0.5)
    keys = np.zeros(1, dtype=np.uint64)
    st0 = base.init(env.spec, 1, keys, np)._replace(gram=gram[None], b=(gram @ theta_tilde)[None])
    beta0 = float(base.act(st0, None, keys)[0].estimate.beta[0])  # radius at beta_scale = 1
    ex = reward_free_ttr(ridge=1.0, delta=0.5, beta_scale=dist / beta0)
    est = ex.act(st0, None, keys)[0].estimate
    np.testing.assert_allclose(est.theta[0], theta_tilde, atol=1e-9)
    np.testing.assert_allclose(est.radius[0], dist, rtol=1e-6, atol=1e-12)
    w1 = est.values[0, 0]  # (S,)
    p, p_tilde = np.einsum("i,isat->sat", theta, phi), np.einsum("i,isat->sat", theta_tilde, phi)
    rewards = rng.uniform(size=(6, horizon, n_s, n_a)) * (rng.uniform(size=(6, horizon, 1, 1)) < 0.7)
    rewards /= np.maximum(rewards.max(axis=(2, 3)).sum(axis=1), 1.0)[:, None, None, None]
    for r in rewards:
        for _ in range(3):
            pi = rng.integers(0, n_a, size=(horizon, n_s))
            err = np.abs(_values(p, r, pi)[0] - _values(p_tilde, r, pi)[0])
            assert np.all(err <= w1 + 1e-9)
    pi_hat, _ = plan_for_rewards(phi, theta_tilde[None], rewards)
    pi_star, _ = plan_for_rewards(phi, theta[None], rewards)
    for b, r in enumerate(rewards):
        gap = _values(p, r, pi_star[0, b])[0] - _values(p, r, pi_hat[0, b])[0]
        assert np.all(gap <= 2 * w1 + 1e-9)


def test_half_width_fails_where_the_bound_is_nearly_tight():
    """phi_1 = e_0, phi_2 = e_1 from every pair, Lambda = I: the one-step ratio is 1/sqrt(2) at V = e_0."""
    phi = np.zeros((2, 2, 1, 2))
    phi[0, :, :, 0] = phi[1, :, :, 1] = 1.0
    t = 0.3
    diff = np.array([t, -t])
    lhs = abs(np.einsum("i,isat,t->sa", diff, phi, np.array([1.0, 0.0]))[0, 0])
    dist, g = math.sqrt(diff @ diff), _widths(phi, np.eye(2))[0, 0]
    assert lhs <= dist * g  # the library's width
    assert lhs > dist * g / 2  # half of it is violated
