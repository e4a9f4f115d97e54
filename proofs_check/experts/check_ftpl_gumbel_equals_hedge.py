r"""Follow the perturbed leader with Gumbel noise plays exactly Hedge's distribution.

Statement checked
-----------------
Let :math:`L \in \mathbb{R}^N` be the cumulative losses, :math:`\eta > 0`, and
:math:`G_1, \dots, G_N` independent standard Gumbel variables
(:math:`F(g) = \exp(-e^{-g})`).  The perturbed leader
:math:`I = \arg\min_i (L_i - G_i/\eta)` is expert :math:`i` with probability

.. math::

    \Pr[I = i] \;=\; \int_{-\infty}^{\infty} f(g) \prod_{j \ne i}
        F\bigl(g + \eta (L_j - L_i)\bigr)\, dg
    \;=\; \frac{e^{-\eta L_i}}{\sum_j e^{-\eta L_j}} ,

the Hedge weights with learning rate :math:`\eta`.  The integral is the
probability that every other perturbed score stays below expert :math:`i`'s
(:math:`-\eta L_j + G_j < -\eta L_i + G_i`), conditioned on :math:`G_i = g`;
the closed form is the Gumbel-max trick (Gumbel 1954; Yellott 1977, who
showed that among noise distributions of this kind only the Gumbel turns
argmax choices into exactly the logit/softmax law; Luce's choice axiom).  In
the experts literature it says that FTPL with Gumbel perturbations of scale
:math:`1/\eta` *is* Hedge; Kalai & Vempala (2005) analyse FTPL with
exponential (and uniform) perturbations instead, for which the play is close
to, but not equal to, exponential weights.

How the checks work
-------------------
The integral is evaluated with ``scipy.integrate.quad`` for
Hypothesis-generated :math:`N \le 6`, :math:`L_i \in [0, 10]`,
:math:`\eta \in [10^{-3}, 2]` (so :math:`|\eta (L_j - L_i)| \le 20` and the
integrand's mass lies well inside the integration window), and compared
with the softmax to :math:`10^{-8}`; the probabilities must also sum to 1.

Self-test: the same integral with standard exponential noise
(:math:`F(e) = 1 - e^{-e}`, :math:`e \ge 0`), the noise of Kalai & Vempala,
gives probabilities that differ from the softmax; Hypothesis searches for
such an :math:`L` and a hand-computed case
(:math:`L = (0, 1)`, :math:`\eta = 1`: :math:`1 - e^{-1}/2 \approx 0.816`
against :math:`1/(1 + e^{-1}) \approx 0.731`) is checked too.  So the
comparison can fail and does when the noise is wrong.

On the library: when ``expertlab.experts`` exports ``ftpl``, a seeded
statistical test draws the one-hot plays of many replications (independent
learner keys from ``expertlab.random``) and requires every empirical
frequency to lie within 5 binomial standard errors of the softmax
(a simultaneous test at level below :math:`10^{-5}`).

References
----------
A. Kalai and S. Vempala, "Efficient algorithms for online decision
problems", JCSS 71(3), 2005 (FTPL; Hannan 1957 for the perturbation idea).
E. J. Gumbel, *Statistical theory of extreme values and some practical
applications*, NBS Applied Mathematics Series 33, 1954.
J. I. Yellott, "The relationship between Luce's choice axiom, Thurstone's
theory of comparative judgment, and the double exponential distribution",
J. Math. Psychology 15(2), 1977.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st
from scipy import integrate

import expertlab.experts as experts
from expertlab.random import LEARNER_STREAM, rep_key, round_key, seed_to_uint64, stream_key

pytestmark = pytest.mark.proof


def softmax_neg(cum_loss, eta):
    a = -eta * np.asarray(cum_loss, dtype=np.float64)
    w = np.exp(a - a.max())
    return w / w.sum()


# -- noise laws: density and distribution function, written out here ----------


def gumbel_pdf(g):
    return math.exp(-g - math.exp(-g))


def gumbel_cdf(g):
    return math.exp(-math.exp(-g))


def expon_pdf(e):
    return math.exp(-e) if e >= 0.0 else 0.0


def expon_cdf(e):
    return -math.expm1(-e) if e >= 0.0 else 0.0


def win_probability(cum_loss, eta, i, pdf, cdf, lower, upper, points=()):
    r"""``P[argmin_j (L_j - X_j/eta) = i]`` for iid noise ``X`` by quadrature over ``X_i``."""
    d = eta * (np.delete(np.asarray(cum_loss, dtype=np.float64), i) - cum_loss[i])

    def integrand(g):
        v = pdf(g)
        for dj in d:
            v *= cdf(g + dj)
        return v

    val, err = integrate.quad(integrand, lower, upper, points=points or None,
                              epsabs=1e-13, epsrel=1e-12, limit=400)
    assert err < 1e-10, f"quadrature error estimate {err}"
    return val


def gumbel_win_probabilities(cum_loss, eta):
    # mass of the integrand lies near g = ln(1 + sum_j e^{-d_j}) in [-ln 1, 20 + ln 6];
    # [-6, 80] leaves out less than exp(-e^6) below and exp(-55) above.
    pts = (-2.0, 0.0, 2.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0)
    return np.array([win_probability(cum_loss, eta, i, gumbel_pdf, gumbel_cdf, -6.0, 80.0, pts)
                     for i in range(len(cum_loss))])


def exponential_win_probabilities(cum_loss, eta):
    # the integrand has kinks where g + d_j = 0; pass them as break points
    d = eta * (np.asarray(cum_loss) - np.asarray(cum_loss)[:, None])
    out = []
    for i in range(len(cum_loss)):
        kinks = sorted({float(-x) for x in d[i] if 0.0 < -x < 60.0})
        out.append(win_probability(cum_loss, eta, i, expon_pdf, expon_cdf, 0.0, 60.0, tuple(kinks)))
    return np.array(out)


cum_losses = st.integers(1, 6).flatmap(lambda n: st.lists(st.floats(0.0, 10.0), min_size=n, max_size=n))
etas = st.floats(-3.0, math.log10(2.0)).map(lambda x: 10.0**x)


@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(cum_losses, etas)
def test_gumbel_perturbed_leader_has_softmax_law(cum_loss, eta):
    cum_loss = np.asarray(cum_loss, dtype=np.float64)
    probs = gumbel_win_probabilities(cum_loss, eta)
    np.testing.assert_allclose(probs, softmax_neg(cum_loss, eta), rtol=0, atol=1e-8)
    assert abs(probs.sum() - 1.0) < 1e-8


def test_exponential_noise_hand_case_differs_from_softmax():
    """L = (0, 1), eta = 1: P[expert 0] = P[E_1 < E_0 + 1] = 1 - e^{-1}/2 for exponential noise."""
    cum_loss = np.array([0.0, 1.0])
    probs = exponential_win_probabilities(cum_loss, 1.0)
    assert probs[0] == pytest.approx(1.0 - math.exp(-1.0) / 2.0, abs=1e-9)
    assert probs.sum() == pytest.approx(1.0, abs=1e-9)
    assert abs(probs[0] - softmax_neg(cum_loss, 1.0)[0]) > 0.08


def test_search_finds_losses_where_exponential_noise_is_not_hedge():
    """Self-test: Hypothesis finds an L on which the exponential-noise law misses the softmax."""

    def differs(args):
        cum_loss, eta = np.asarray(args[0], dtype=np.float64), args[1]
        gap = np.max(np.abs(exponential_win_probabilities(cum_loss, eta) - softmax_neg(cum_loss, eta)))
        return gap > 1e-3

    found = find(st.tuples(cum_losses, etas), differs,
                 settings=settings(database=None, derandomize=True, max_examples=200))
    cum_loss, eta = np.asarray(found[0]), found[1]
    assert len(cum_loss) >= 2
    exp_probs = exponential_win_probabilities(cum_loss, eta)
    np.testing.assert_allclose(gumbel_win_probabilities(cum_loss, eta), softmax_neg(cum_loss, eta), atol=1e-8)
    assert np.max(np.abs(exp_probs - softmax_neg(cum_loss, eta))) > 1e-3


# -- the library's FTPL ---------------------------------------------------------


@pytest.mark.skipif(not hasattr(experts, "ftpl"), reason="expertlab.experts does not export ftpl yet")
def test_library_ftpl_gumbel_plays_softmax_frequencies():
    eta = 0.7
    n_reps = 40_000
    # cumulative losses L = (0, 0.5, 1.0, 1.6, 3.0), built from two rounds of losses in [0, 1]
    rounds = np.array([[0.0, 0.25, 0.5, 0.8, 1.0],
                       [0.0, 0.25, 0.5, 0.8, 1.0],
                       [0.0, 0.0, 0.0, 0.0, 1.0]])
    cum_loss = rounds.sum(axis=0)
    n = cum_loss.size
    learner = experts.ftpl(eta=eta, noise="gumbel")
    seed = seed_to_uint64(20240611)
    with np.errstate(over="ignore"):  # uint64 hashing wraps by design
        rkey = rep_key(np.full(n_reps, seed, dtype=np.uint64), np.arange(n_reps, dtype=np.uint64))
        lkey = stream_key(rkey, LEARNER_STREAM)
        state = learner.init(n, n_reps)
        for t, loss in enumerate(rounds):
            p = learner.act(state, None, round_key(lkey, np.uint64(t)))[0]
            state = learner.update(state, p, (np.tile(loss, (n_reps, 1)), None))
        p = np.asarray(learner.act(state, None, round_key(lkey, np.uint64(len(rounds))))[0])
    assert p.shape == (n_reps, n)
    assert np.all((p == 0.0) | (p == 1.0)) and np.all(p.sum(axis=1) == 1.0), "ftpl must play one-hot vectors"
    freq = p.mean(axis=0)
    target = softmax_neg(cum_loss, eta)
    se = np.sqrt(target * (1.0 - target) / n_reps)
    assert np.all(np.abs(freq - target) <= 5.0 * se), f"frequencies {freq} vs softmax {target} (se {se})"
