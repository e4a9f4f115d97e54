r"""LOMAR's robustness: reward at least rho times the expert's, minus B, on every instance.

Statement checked
-----------------
For edge-weighted online bipartite matching with weights in
:math:`[0, w_{\max}]`, any expert algorithm run alone with reward
:math:`R^E_T`, any proposer, :math:`\rho \in [0, 1]` and :math:`B \ge 0`,
LOMAR's switching rule (follow the proposal only if
:math:`R_{t-1} + w_{t,u} \ge \rho(R^E_t + D^u_t w_{\max}) - B`, else take the
expert's node if free, else skip) keeps the invariant

.. math::

    R_t \;\ge\; \rho\,\big(R^E_t + D_t\, w_{\max}\big) - B \quad\text{for every } t,

with :math:`D_t` the offline nodes LOMAR used and the expert did not, and
hence :math:`R_T \ge \rho R^E_T - B` deterministically (Li, Yang & Ren,
ICML 2023, robustness theorem; number not re-checked).

How the checks work
-------------------
Hypothesis draws small weight matrices (up to 7 arrivals and 4 offline
nodes, weights on a grid in :math:`[0, 1]` with ties and zeros), any
sequence of proposals (including invalid nodes and skips), :math:`\rho` and
:math:`B` (with the endpoints 0 and 1).  The library's :func:`lomar`, run
through :func:`expertlab.sim.run` on :func:`fixed_bipartite` with the greedy
expert, must satisfy the invariant (the ``min_slack`` metric is
non-negative) and the final bound, and must agree with an independent
plain-Python transcription of the rule above.

Self-test: the same rule *without* the reservation term
:math:`D^u_t w_{\max}` violates the bound: Hypothesis finds an instance, and a
hand example is checked (arrivals :math:`(0.5, 0.5)` then :math:`(0, 1)`, a
proposer that takes node 1 first: without reservation the reward is 0.5
against :math:`0.9 \times 1.5`).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from expertlab import sim
from expertlab.experts import fixed_bipartite, lomar

pytestmark = pytest.mark.proof


def _plain(W, proposals, rho, B, reserve=True):
    """Plain-Python LOMAR against the greedy expert; returns (reward, expert_reward, min_slack)."""
    n_on, n_off = W.shape
    w_max = W.max()
    free_e, free_l, used_e = [True] * n_off, [True] * n_off, [False] * n_off
    R = RE = 0.0
    slack = B
    for t in range(n_on):
        cand = [u for u in range(n_off) if free_e[u] and W[t, u] > 0]
        e = max(cand, key=lambda u: (W[t, u], -u)) if cand else -1
        if e >= 0:
            free_e[e] = False
            used_e[e] = True
            RE += W[t, e]
        u = proposals[t]
        if not (0 <= u < n_off and free_l[u] and W[t, u] > 0):
            u = -1
        gain = W[t, u] if u >= 0 else 0.0
        D = sum(1 for v in range(n_off) if not free_l[v] and not used_e[v])
        D_u = D + (1 if u >= 0 and not used_e[u] else 0)
        if R + gain >= rho * (RE + (D_u * w_max if reserve else 0.0)) - B:
            take = u
        elif e >= 0 and free_l[e]:
            take = e
        else:
            take = -1
        if take >= 0:
            free_l[take] = False
            R += W[t, take]
        D = sum(1 for v in range(n_off) if not free_l[v] and not used_e[v])
        slack = min(slack, R - rho * (RE + D * w_max) + B)
    return R, RE, slack


@st.composite
def cases(draw):
    n_on = draw(st.integers(1, 7))
    n_off = draw(st.integers(1, 4))
    W = np.array(draw(st.lists(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=n_off,
                                        max_size=n_off), min_size=n_on, max_size=n_on)))
    if not (W > 0).any():
        W[0, 0] = 1.0
    proposals = draw(st.lists(st.integers(-1, n_off), min_size=n_on, max_size=n_on))
    rho = draw(st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0)))
    B = draw(st.one_of(st.just(0.0), st.floats(0.0, 2.0)))
    return W, proposals, rho, B


def _run_library(W, proposals, rho, B):
    seq = np.array(proposals, dtype=np.int64)
    prop = lambda t, w, free, ctx: np.full(w.shape[0], seq[t], dtype=np.int64)  # noqa: E731
    res = sim.run(lomar(rho, budget=B, proposer=prop), fixed_bipartite(W), horizon=W.shape[0], n_reps=1, seed=0,
                  metrics=["reward", "expert_reward", "min_slack"])
    return {k: v[-1] for k, v in res.metrics.items()}


@settings(max_examples=300, deadline=None)
@given(cases())
def test_guarantee_holds_on_every_instance(case):
    W, proposals, rho, B = case
    res = _run_library(W, proposals, rho, B)
    R, RE, slack = _plain(W, proposals, rho, B)
    assert res["reward"][0] == pytest.approx(R, abs=1e-12)
    assert res["expert_reward"][0] == pytest.approx(RE, abs=1e-12)
    assert res["min_slack"][0] == pytest.approx(slack, abs=1e-12)
    assert res["min_slack"][0] >= -1e-12
    assert res["reward"][0] >= rho * res["expert_reward"][0] - B - 1e-12


def test_self_check_without_reservation_fails_by_hand():
    W = np.array([[0.5, 0.5], [0.0, 1.0]])
    R, RE, _ = _plain(W, [1, -1], 0.9, 0.0, reserve=False)
    assert R == 0.5 and RE == 1.5 and R < 0.9 * RE
    R, RE, _ = _plain(W, [1, -1], 0.9, 0.0, reserve=True)
    assert R >= 0.9 * RE


def _spoiler(W):
    """Proposals that grab, each round, the node the greedy expert will take soonest afterwards."""
    n_on, n_off = W.shape
    free, when = [True] * n_off, [n_on] * n_off
    for t in range(n_on):
        cand = [u for u in range(n_off) if free[u] and W[t, u] > 0]
        if cand:
            e = max(cand, key=lambda u: (W[t, u], -u))
            free[e] = False
            when[e] = t
    out = []
    for t in range(n_on):
        later = [u for u in range(n_off) if when[u] > t and W[t, u] > 0]
        out.append(min(later, key=lambda u: when[u]) if later else -1)
    return out


def test_self_check_hypothesis_finds_a_violation_without_reservation():
    found = []

    @settings(max_examples=300, deadline=None)
    @given(cases())
    def search(case):
        W, _, rho, B = case
        R, RE, _ = _plain(W, _spoiler(W), rho, B, reserve=False)
        if R < rho * RE - B - 1e-9:
            found.append(case)

    search()
    assert found, "dropping the reservation term should break the guarantee on some instance"


@settings(max_examples=200, deadline=None)
@given(cases())
def test_guarantee_holds_against_the_spoiler(case):
    W, _, rho, B = case
    res = _run_library(W, _spoiler(W), rho, B)
    assert res["reward"][0] >= rho * res["expert_reward"][0] - B - 1e-12
