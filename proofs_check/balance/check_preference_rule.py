r"""The ALF-LB preference rule: one sign step moves tokens only towards less loaded experts.

Statement checked
-----------------
Route each of :math:`N` tokens to the top :math:`K` experts of
:math:`s_{t,i} + b_i`, ranking experts by the pair :math:`(s_{t,i} + b_i, -i)`
(ties go to the lowest index, a strict total order), and let :math:`L_i` be
the loads and :math:`C_i` the capacities.  One ALF-LB sign step

.. math::

    b'_i = b_i + u \operatorname{sign}(C_i - L_i), \qquad u > 0,

changes the top-:math:`K` set of a token :math:`t` only by dropping experts
:math:`i` and adding experts :math:`j` with

.. math::

    \operatorname{sign}(C_i - L_i) < \operatorname{sign}(C_j - L_j)
    \quad\text{for every dropped } i \text{ and every added } j .

Hence, **when no expert has load exactly equal to its capacity** (for example
balanced :math:`C = NK/E` not an integer), every move goes from an
overloaded expert (:math:`L_i > C_i`) to an underloaded one
(:math:`L_j < C_j`): this is the preference rule of Han & Zhong (2025),
arXiv:2512.03915, stated there for the sign update of Wang et al. (2024),
arXiv:2408.15664 (proposition number not re-checked).  With an expert at
:math:`L_i = C_i` its bias does not move, and moves "at capacity ->
underloaded" and "overloaded -> at capacity" do occur; the weaker
sign-ordered form above still holds.  It holds for every :math:`K`, every
step :math:`u > 0` and with ties, because within each class of equal
:math:`\operatorname{sign}(C - L)` all biased scores shift by the same
amount, which preserves the strict order; a dropped :math:`i` ranked above an
added :math:`j` before the step and below it after, so its shift was smaller.

Domain and arithmetic: the argument needs :math:`s + b` and :math:`s + b'`
computed exactly, so the checks draw scores, biases and steps on a dyadic
grid (multiples of :math:`2^{-4}`, :math:`|x| \le 8`), where double-precision
sums are exact; in floating point with general reals, a step that rounds two
nearly tied scores together could reorder them.

How the checks work
-------------------
Hypothesis draws :math:`N \le 12`, :math:`E \le 6`, :math:`1 \le K < E`,
integer-valued scaled scores (many exact ties), biases, steps and either the
balanced or a perturbed (non-integer) capacity.  The library's
``sim.run(alf_lb(step=u, rule="sign", bias0=b), routing_fixed(scores, k, capacity=C), horizon=1)``
takes one step (``final["loads"]`` are the loads at ``b``, ``final["bias"]``
the bias after the step); the routing before and after is also recomputed
here by sorting, and the moves must agree with the library's move list
(``token_moves`` of the two biases) and with the ``moves`` and
``misdirected_moves`` metrics of a run of two batches, and satisfy the
statement.  Self-tests:
the reversed update :math:`b_i \leftarrow b_i - u\,\operatorname{sign}(C_i - L_i)`
violates the rule (on a worked instance and by Hypothesis search), and an
expert at exactly its capacity gives an "at capacity -> underloaded" move,
so the strict form needs its condition.

References
----------
X. Y. Han and Y. Zhong, "A theoretical framework for auxiliary-loss-free load
balancing of sparse mixture-of-experts in large-scale AI models",
arXiv:2512.03915, 2025: the preference rule, deterministic setting (section
not re-checked).  L. Wang, H. Gao, C. Zhao, X. Sun and D. Dai,
"Auxiliary-loss-free load balancing strategy for mixture-of-experts",
arXiv:2408.15664, 2024: the sign update.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import find, given
from hypothesis import strategies as st

from expertlab import sim
from expertlab.balance import alf_lb, routing_fixed, token_moves
from expertlab.testing import strategies

pytestmark = pytest.mark.proof

_Q = 16.0  # grid 1/16: sums of a few such numbers below 2**8 are exact


def _route(v, k):
    """Top-k sets per row under the order (value, -index), by sorting (independent of the library)."""
    e = v.shape[1]
    order = np.lexsort((np.arange(e)[None, :].repeat(v.shape[0], 0), -v), axis=1)
    mem = np.zeros(v.shape, bool)
    np.put_along_axis(mem, order[:, :k], True, axis=1)
    return mem


def _moves(scores, b, k, cap, sign):
    """(loads, list of (token, dropped, added)) for one step b + sign * u * sign(C - L) with u folded in."""
    before = _route(scores + b, k)
    loads = before.sum(axis=0)
    after = _route(scores + b + sign * np.sign(cap - loads), k)
    out = []
    for t in range(scores.shape[0]):
        dropped = np.flatnonzero(before[t] & ~after[t])
        added = np.flatnonzero(after[t] & ~before[t])
        if dropped.size:
            out.append((t, dropped, added))
    return loads, out


def _violations(loads, moves, cap):
    s = np.sign(cap - loads)
    return [(t, i, j) for t, dropped, added in moves for i in dropped for j in added if not s[i] < s[j]]


@st.composite
def instances(draw):
    scale = draw(st.sampled_from([1, 4, 16]))  # coarse grids give many exact ties
    scores = draw(strategies.score_matrices(max_tokens=12, min_experts=2, max_experts=6, max_abs=8.0, ties=True,
                                            grid=8 * scale))  # multiples of 1 / scale in [-8, 8]
    n, e = scores.shape
    k = draw(st.integers(1, e - 1))
    b = np.array(draw(st.lists(st.integers(-32, 32), min_size=e, max_size=e)), float) / _Q
    u = draw(st.integers(1, 64)) / _Q
    balanced = draw(st.booleans())
    cap = np.full(e, n * k / e)
    if not balanced:  # shift capacity off the integers, keeping sum >= N K
        cap = cap + np.array(draw(st.lists(st.integers(1, 15), min_size=e, max_size=e))) / 16.0
    return scores, b, u, k, cap


def _one_step(scores, b, u, k, cap):
    """One sign step of the library: (loads at b, the bias after the step, the token moves between them)."""
    res = sim.run(alf_lb(step=u, rule="sign", bias0=b), routing_fixed(scores, k, capacity=cap), horizon=1,
                  n_reps=1, backend="numpy")
    b1 = res.final["bias"][0]
    return res.final["loads"][0], b1, token_moves(scores, [b, b1], k, capacity=cap)


@given(instances())
def test_sign_step_moves_tokens_only_towards_lower_sign_class(inst):
    scores, b, u, k, cap = inst
    first, b1, mv = _one_step(scores, b, u, k, cap)
    loads, moves = _moves(scores, b, k, cap, u)
    # the library's routing and moves agree with the independent computation
    assert first.tolist() == loads.tolist() == _route(scores + b, k).sum(axis=0).tolist()
    assert len(mv) == sum(len(d) for _, d, _ in moves)
    np.testing.assert_array_equal(b1, b + u * np.sign(cap - loads))  # bias of iteration 2
    assert not _violations(loads, moves, cap)
    two = sim.run(alf_lb(step=u, rule="sign", bias0=b), routing_fixed(scores, k, capacity=cap), horizon=2,
                  n_reps=1, backend="numpy", metrics=["moves", "misdirected_moves"])
    assert two.metrics["moves"][-1, 0] == len(mv) and two.metrics["misdirected_moves"][-1, 0] == 0
    s = np.sign(cap - loads)
    assert np.all(s[mv.source] < s[mv.target])
    if np.all(loads != cap):  # the paper's form: overloaded -> underloaded
        assert np.all(mv.source_overloaded & mv.target_underloaded)


def test_reversed_update_violates_the_rule():
    # N = 3, E = 2, K = 1, C = 1.5: loads (2, 1), expert 0 overloaded.
    scores = np.array([[1.0, 0.0], [0.875, 0.0], [0.0, 0.4375]])
    b = np.zeros(2)
    cap = np.full(2, 1.5)
    loads, moves = _moves(scores, b, 1, cap, -0.5)  # b_i -= u sign(C - L), u = 1/2
    assert loads.tolist() == [2, 1]
    assert _violations(loads, moves, cap) == [(2, 1, 0)]  # token 2: underloaded -> overloaded
    loads, moves = _moves(scores, b, 1, cap, +0.5)  # the real step on the same instance
    assert not _violations(loads, moves, cap)


def test_search_finds_violations_of_the_reversed_update():
    def bad(inst):
        scores, b, u, k, cap = inst
        loads, moves = _moves(scores, b, k, cap, -u)
        return bool(_violations(loads, moves, cap))

    scores, b, u, k, cap = find(instances(), bad)
    assert bad((scores, b, u, k, cap))


def test_strict_form_needs_no_expert_at_capacity():
    # E = 3, K = 1, N = 3, C = 1: loads (2, 1, 0); expert 1 is exactly at capacity
    scores = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.9375]])
    _, _, mv = _one_step(scores, np.zeros(3), 0.125, 1, np.ones(3))
    assert len(mv) == 1 and (mv.token[0], mv.source[0], mv.target[0]) == (2, 1, 2)
    assert not mv.source_overloaded[0] and mv.target_underloaded[0]  # at capacity -> underloaded
