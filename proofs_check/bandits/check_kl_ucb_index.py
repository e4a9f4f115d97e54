r"""The KL-UCB index is the largest q with n kl(mu_hat, q) <= ln t + c ln ln t.

Statement checked
-----------------
For Bernoulli rewards, KL-UCB (Garivier & Cappé, COLT 2011, Sec. 2 and
Thms 1--2) pulls the arm maximising

.. math::

    U = \max\{q \in [\hat\mu, 1] : n\,\mathrm{kl}(\hat\mu, q) \le \delta\},
    \qquad \delta = \ln t + c \ln\ln t ,

with :math:`\mathrm{kl}(p, q) = p \ln\frac pq + (1-p)\ln\frac{1-p}{1-q}`.
Because :math:`q \mapsto \mathrm{kl}(\hat\mu, q)` is continuous and strictly
increasing on :math:`[\hat\mu, 1)` and tends to :math:`+\infty` at 1 (for
:math:`\hat\mu < 1`), :math:`U` is the unique root of
:math:`n\,\mathrm{kl}(\hat\mu, q) = \delta` there.

What is checked
---------------
Hypothesis draws :math:`\hat\mu \in [0, 1]` (including 0, 1 and values near
them), :math:`n \in [1, 10^6]`, :math:`t \in [2, 10^8]` and :math:`c \in \{0, 3\}`,
and compares the library's :func:`expertlab.bandits.kl_ucb_index` with a
brute-force answer computed here: a grid of 4001 points on
:math:`[\hat\mu, 1]` brackets the largest grid point satisfying the
constraint, and 200 bisection halvings of that bracket pin the boundary to
machine precision.  The library value must be within ``1e-9`` of it, satisfy
the constraint to within a relative ``1e-9`` of :math:`\delta`, and points
``1e-7`` above it must violate the constraint (it is the *largest* such q).
The library also picks the arm of largest index when driven through
``kl_ucb().act``.

The check tests itself: an index computed with the Gaussian divergence
(Pinsker-style radius :math:`\sqrt{\delta / (2n)}`), a valid but looser upper
bound, is rejected by the same comparison.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from expertlab.bandits import kl_ucb, kl_ucb_index
from expertlab.bandits._ucb import IndexState

pytestmark = pytest.mark.proof


def _kl(p, q):
    a = p * math.log(p / q) if p > 0 else 0.0
    b = (1 - p) * math.log((1 - p) / (1 - q)) if p < 1 else 0.0
    return a + b


def _brute(p, n, delta):
    if p >= 1.0:
        return 1.0
    grid = np.linspace(p, 1.0, 4001)[:-1]
    ok = np.array([n * _kl(p, q) <= delta for q in grid])
    i = int(np.nonzero(ok)[0].max())  # ok[0] holds: kl(p, p) = 0
    lo, hi = grid[i], (grid[i + 1] if i + 1 < grid.size else 1.0)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if n * _kl(p, mid) <= delta:
            lo = mid
        else:
            hi = mid
    return lo


def _delta(t, c):
    lt = math.log(t)
    return lt + c * math.log(lt) if lt > 1 else lt


means = st.one_of(st.sampled_from([0.0, 1.0, 1e-9, 1 - 1e-9, 0.5]), st.floats(0.0, 1.0))
counts = st.one_of(st.sampled_from([1, 2, 10**6]), st.integers(1, 10**6))
rounds = st.integers(2, 10**8)


def check_index(index, p, n, d):
    b = _brute(p, n, d)
    assert abs(index - b) <= 1e-9, (p, n, d, index, b)
    if p < 1.0:
        # feasible up to the solver's step tolerance in q (1e-12): near q = 1, kl(p, q) ~ -ln(1 - q) is
        # too ill-conditioned for a relative tolerance on kl itself
        assert n * _kl(p, min(max(index - 1e-12, p), 1 - 1e-16)) <= d * (1 + 1e-9) + 1e-12
        up = index + 1e-7
        if up < 1.0:
            assert n * _kl(p, up) > d


@given(means, counts, rounds, st.sampled_from([0.0, 3.0]))
def test_index_is_the_largest_feasible_q(p, n, t, c):
    d = _delta(t, c)
    q = kl_ucb_index(np.array([p]), np.array([float(n)]), np.array([d]))[0]
    check_index(q, p, float(n), d)


@given(st.lists(st.tuples(st.integers(1, 200), st.floats(0.0, 1.0)), min_size=2, max_size=6))
def test_act_pulls_the_arm_of_largest_index(arms):
    n = np.array([float(k) for k, _ in arms])
    s = np.array([round(f * k) for k, f in arms], dtype=float)
    t = int(n.sum())
    st_ = IndexState(counts=n[None, :], sums=s[None, :], t=np.array([t]))
    d = _delta(t, 0.0)
    brute = np.array([_brute(si / ni, ni, d) for si, ni in zip(s, n)])
    arm = int(kl_ucb().act(st_, None, None)[0].arm[0])
    assert brute[arm] >= brute.max() - 1e-9


def test_a_looser_bound_is_rejected():
    p, n, d = 0.3, 20.0, math.log(1000)
    loose = p + math.sqrt(d / (2 * n))  # Pinsker: an upper bound of the index, not the index
    with pytest.raises(AssertionError):
        check_index(loose, p, n, d)
