r"""The memory-bounded learner against an adaptive adversary: no replay inside an epoch, hence few hits.

Statements checked
------------------
:func:`~expertlab.experts.memory_adaptive` holds a pool of :math:`S` experts
and plays it cyclically in a fresh random order in each epoch of :math:`B`
rounds.  The regret argument of its docstring rests on a deterministic
lemma.  It holds on every loss sequence, including adaptive ones, and for
every random key:

**(D1)** the pool always holds :math:`S` distinct experts of
:math:`\{0, \dots, n-1\}`, and round :math:`t` (0-based) plays slot
:math:`t \bmod S` of the pool;

**(D2)** hence two rounds :math:`s < t` of the same epoch with
:math:`t - s < S` play different experts;

**(D3)** hence, for every window :math:`w < S`, the number of *hits*
:math:`H_T^{(w)} = \#\{t < T : I_t \in \{I_{t-w}, \dots, I_{t-1}\}\}`
satisfies

.. math::

    H_T^{(w)} \;\le\; w\,(\lceil T/B\rceil - 1),

and every hit falls in the first :math:`w` rounds of an epoch :math:`e \ge 1`.

Against :func:`~expertlab.experts.recent_plays_attack` with window
:math:`w`, round :math:`t` gives loss 1 to the last :math:`w` plays and a
fair coin :math:`c_{t,i}` to every other expert.  So
:math:`\ell_{t,I_t} \le \mathbb 1[\text{hit}] + c_{t,I_t}` and
:math:`\ell_{t,i} \ge c_{t,i}`.  This gives, on every run, the
decomposition

**(D4)**
:math:`\;R_T = \sum_t \ell_{t,I_t} - \min_i L_{T,i} \le H_T^{(w)} +
\sum_t c_{t,I_t} - \min_i C_{T,i}`, where :math:`C_{T,i} = \sum_t c_{t,i}`.

The probabilistic part follows.  :math:`I_t` is fixed before the coins of
round :math:`t` are drawn, so :math:`\sum_t (c_{t,I_t} - \tfrac12)` is a
martingale with increments in :math:`[-\tfrac12, \tfrac12]` (Azuma–Hoeffding).
Each :math:`C_{T,i}` is a Binomial(:math:`T`, 1/2) (Hoeffding, and a union
bound over the :math:`n` experts).  So, for :math:`\delta \in (0, 1)`,

**(P)** with probability at least :math:`1 - 2\delta`,

.. math::

    R_T \;\le\; w(\lceil T/B\rceil - 1) + \sqrt{\tfrac T2\ln\tfrac1\delta}
    + \sqrt{\tfrac T2\ln\tfrac n\delta} .

This is the docstring's "the regret is that of fair coins plus
:math:`O(wn/S)`" made explicit.  The default :math:`B = S\lceil T/(6n)\rceil`
gives about :math:`6n/S` epochs.  (D2) is stated in the docstring as "between
two plays of the same expert inside an epoch lie exactly :math:`S-1` other
plays".  Sources: the learner's own analysis (a construction of this library
after Peng & Rubinstein, FOCS 2023, whose adaptive-adversary algorithm could
not be recovered); Azuma–Hoeffding and Hoeffding's inequality, standard,
e.g. Cesa-Bianchi & Lugosi 2006, Appendix A (numbers not re-checked).

How the checks work
-------------------
(D1)–(D3) are checked on the library's learner, driven through
``init``/``act``/``update``.  Hypothesis draws :math:`n`, :math:`S \le n`,
the epoch length (explicit, including lengths that are not multiples of
:math:`S`, or the default from a horizon), the replication keys and the
losses.  The losses are oblivious matrices, or adaptive ones that put loss
1 on the learner's last :math:`w'` plays, so the pool ranking sees the
attack.  (D3) is asserted for every :math:`w < S`.  It is also asserted on
the ``hits`` metric of :func:`expertlab.sim.run` against the
:func:`recent_plays_attack` environment, in every replication.  (D4) and (P) use a
harness here that plays the attack with coins from a seeded NumPy generator,
so the coins are known.  (D4) must hold exactly in every replication.  The
martingale term must have mean 0 within 4.5 standard errors.  For (P), the
one-sided 95% Clopper–Pearson lower bound on the failure frequency, over
seeded replications of :func:`expertlab.sim.run` against the attack, must not exceed
:math:`2\delta`.

Self-tests.  With memory :math:`S \le w` the same learner is hit in almost
every round once the pool has been played through.  Then (D3) fails, and
(P) fails in nearly every replication (regret linear in :math:`T`).  A
player that draws i.i.d. from the same pool breaks (D2).

References
----------
B. Peng and A. Rubinstein, "Near optimal memory-regret tradeoff for online
learning", FOCS 2023, arXiv:2303.01673 (the adaptive-adversary setting; the
learner checked here is the library's simplified construction, and theorem
numbers were not re-checked).
N. Cesa-Bianchi and G. Lugosi, *Prediction, Learning, and Games*, Cambridge
University Press, 2006, Appendix A (Hoeffding's and the Hoeffding–Azuma
inequalities).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import beta

from expertlab import sim
from expertlab.experts import memory_adaptive, recent_plays_attack
from expertlab.random import round_key
from expertlab.testing import strategies

pytestmark = pytest.mark.proof

# --------------------------------------------------------------------------
# the combinatorial quantities, computed from a play sequence


def epoch_length(learner, horizon, n):
    """The epoch length the learner uses: its ``epoch`` or the documented default ``S ceil(T / (6 n))``."""
    p = learner.params
    return p["epoch"] if "epoch" in p else p["memory"] * max(1, math.ceil(p["horizon"] / (6 * n)))


def replay_violations(plays, epoch, memory):
    """Pairs ``(s, t)`` of one epoch with ``0 < t - s < memory`` and the same expert (D2)."""
    bad = []
    for t in range(plays.size):
        start = max(t - memory + 1, (t // epoch) * epoch)
        for s in range(start, t):
            if plays[s] == plays[t]:
                bad.append((s, t))
    return bad


def hit_rounds(plays, window):
    """Rounds ``t`` whose play is among the previous ``window`` plays."""
    return [t for t in range(plays.size) if plays[t] in plays[max(0, t - window):t]]


def hit_bound(horizon, epoch, window):
    return window * (math.ceil(horizon / epoch) - 1)


# --------------------------------------------------------------------------
# (D1)-(D3) on every sequence


@st.composite
def settings_and_losses(draw):
    n = draw(st.integers(2, 12))
    memory = draw(st.integers(1, n))
    horizon = draw(st.integers(1, 70))
    if draw(st.booleans()):
        epoch, learner = None, memory_adaptive(memory, horizon=draw(st.integers(1, 4000)))
    else:
        epoch = draw(st.one_of(st.integers(1, 3 * memory), st.integers(1, 4).map(lambda k: k * memory)))
        learner = memory_adaptive(memory, epoch=epoch)
    base = draw(strategies.loss_matrices(max_reps=1, min_horizon=horizon, max_horizon=horizon, min_experts=n,
                                         max_experts=n))[0]
    attack = draw(st.integers(0, n))  # 0: oblivious; w' > 0: loss 1 on the last w' plays
    keys = np.asarray(draw(st.lists(st.integers(0, 2**64 - 1), min_size=3, max_size=3, unique=True)),
                      dtype=np.uint64)
    return learner, n, memory, horizon, base, attack, keys


def play(learner, state, rep_keys, t):
    """``(i_t, p, state, round keys)``: the learner's act in round ``t`` (with the keys sim.run would pass)."""
    with np.errstate(over="ignore"):
        keys = round_key(rep_keys, np.uint64(t))
    p, state = learner.act(state, None, keys)
    i_t = np.argmax(p, axis=1)
    np.testing.assert_array_equal(p.sum(axis=1), 1.0)
    np.testing.assert_array_equal(p[np.arange(p.shape[0]), i_t], 1.0)  # one-hot: the played expert
    return i_t, p, state, keys


def drive(learner, n, horizon, base, attack, keys):
    """Plays (n_reps, T) and pools (T, n_reps, S) of the library's learner on ``base`` (+ the attack)."""
    n_reps = keys.size
    state = learner.init(sim.EnvSpec("full", "round", n, horizon=horizon), n_reps, keys, np)
    plays = np.empty((n_reps, horizon), dtype=np.int64)
    pools = []
    rows = np.arange(n_reps)
    for t in range(horizon):
        pools.append(state.pool.copy())
        i_t, p, state, kt = play(learner, state, keys, t)
        np.testing.assert_array_equal(i_t, state.pool[:, t % state.pool.shape[1]])  # (D1), second half
        plays[:, t] = i_t
        loss = np.broadcast_to(base[t], (n_reps, n)).copy()
        if attack:
            for s in range(max(0, t - attack), t):
                loss[rows, plays[:, s]] = 1.0
        state = learner.update(state, p, sim.FullFeedback(loss), kt)
    return plays, np.asarray(pools)


@given(settings_and_losses())
def test_no_replay_inside_an_epoch_and_few_hits(case):
    learner, n, memory, horizon, base, attack, keys = case
    epoch = epoch_length(learner, horizon, n)
    plays, pools = drive(learner, n, horizon, base, attack, keys)
    # (D1) S distinct experts in range, every round
    srt = np.sort(pools, axis=-1)
    assert np.all((srt >= 0) & (srt < n))
    assert np.all(np.diff(srt, axis=-1) > 0)
    for r in range(keys.size):
        assert not replay_violations(plays[r], epoch, memory)                     # (D2)
        for w in range(1, memory):                                                 # (D3)
            hits = hit_rounds(plays[r], w)
            assert len(hits) <= hit_bound(horizon, epoch, w)
            assert all(t >= epoch and t % epoch < w for t in hits)


def test_library_driver_hits_within_the_bound():
    """(D3) on the ``hits`` metric of ``sim.run`` against ``recent_plays_attack``, every replication."""
    for n, memory, horizon in ((64, 16, 2000), (36, 7, 1500), (16, 16, 700)):
        adversary = recent_plays_attack(n)
        learner = memory_adaptive(memory, horizon=horizon)
        epoch = epoch_length(learner, horizon, n)
        ck = np.array([epoch - 1, epoch + adversary.window, horizon])
        res = sim.run(learner, adversary, horizon, n_reps=40, seed=11, checkpoints=ck, metrics=["hits"])
        hits = res.metrics["hits"]
        assert adversary.window < memory
        for k, t in enumerate(ck):
            assert np.all(hits[k] <= hit_bound(int(t), epoch, adversary.window))
        assert np.all(hits[0] == 0)  # no hit at all in epoch 0


def test_self_check_iid_play_from_the_pool_replays():
    rng = np.random.default_rng(0)
    plays = rng.choice(np.arange(8), size=200)  # a pool of 8 played i.i.d., one epoch
    assert replay_violations(plays, 200, 8)
    assert len(hit_rounds(plays, 3)) > hit_bound(200, 200, 3)


def test_self_check_memory_not_above_the_window_is_hit_almost_always():
    n, horizon = 64, 1200
    adversary = recent_plays_attack(n)  # window 8
    learner = memory_adaptive(adversary.window, horizon=horizon)
    epoch = epoch_length(learner, horizon, n)
    hits = sim.run(learner, adversary, horizon, n_reps=20, seed=5, checkpoints=[horizon]).metrics["hits"]
    assert np.all(hits[-1] > hit_bound(horizon, epoch, adversary.window))
    assert np.all(hits[-1] > 0.8 * horizon)


# --------------------------------------------------------------------------
# (D4) and (P): the regret decomposition and its high-probability bound


def attack_with_known_coins(learner, n, window, horizon, n_reps, seed):
    """The recent-plays attack with coins from ``default_rng(seed)``; per replication the regret, the hits,
    ``sum_t c_{t, I_t}`` and ``min_i C_{T, i}``."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    keys = rng.integers(0, 2**63, size=n_reps, dtype=np.uint64)
    state = learner.init(sim.EnvSpec("full", "round", n, horizon=horizon), n_reps, keys, np)
    rows = np.arange(n_reps)
    recent = np.full((n_reps, window), -1)
    own, coin_own, hits = np.zeros(n_reps), np.zeros(n_reps), np.zeros(n_reps)
    cum, coins_cum = np.zeros((n_reps, n)), np.zeros((n_reps, n))
    for t in range(horizon):
        coins = (rng.random((n_reps, n)) < 0.5).astype(np.float64)
        loss = coins.copy()
        marked = recent >= 0
        loss[np.broadcast_to(rows[:, None], recent.shape)[marked], recent[marked]] = 1.0
        i_t, p, state, kt = play(learner, state, keys, t)
        hits += np.any(recent == i_t[:, None], axis=1)
        own += loss[rows, i_t]
        coin_own += coins[rows, i_t]
        cum += loss
        coins_cum += coins
        recent[:, t % window] = i_t
        state = learner.update(state, p, sim.FullFeedback(loss), kt)
    return own - cum.min(axis=1), hits, coin_own, coins_cum.min(axis=1)


def high_probability_bound(horizon, n, window, epoch, delta):
    return (hit_bound(horizon, epoch, window) + math.sqrt(horizon / 2 * math.log(1 / delta))
            + math.sqrt(horizon / 2 * math.log(n / delta)))


@pytest.mark.parametrize("n, memory, horizon", [(64, 16, 1500), (25, 6, 1000)])
def test_regret_decomposition_on_every_run(n, memory, horizon):
    window = math.isqrt(n - 1) + 1
    learner = memory_adaptive(memory, horizon=horizon)
    epoch = epoch_length(learner, horizon, n)
    n_reps = 200
    regret, hits, coin_own, coin_min = attack_with_known_coins(learner, n, window, horizon, n_reps, seed=n)
    assert np.all(regret <= hits + coin_own - coin_min + 1e-9)                   # (D4), every run
    assert np.all(hits <= hit_bound(horizon, epoch, window))                     # (D3) once more
    # the martingale term sum_t (c_{t, I_t} - 1/2): mean 0, variance exactly T/4
    z = (coin_own - horizon / 2).mean() / math.sqrt(horizon / 4 / n_reps)
    assert abs(z) <= 4.5, z


def cp_lower(s, n, level=0.95):
    return 0.0 if s == 0 else float(beta.ppf(1 - level, s, n - s + 1))


def _failures(memory, n, horizon, delta, n_reps, seed):
    adversary = recent_plays_attack(n)
    learner = memory_adaptive(memory, horizon=horizon)
    epoch = epoch_length(learner, horizon, n)
    res = sim.run(learner, adversary, horizon, n_reps=n_reps, seed=seed, checkpoints=[horizon])
    regret = res.metrics["regret"][-1]
    bound = high_probability_bound(horizon, n, adversary.window, epoch, delta)
    return int(np.sum(regret > bound)), regret, bound


@pytest.mark.parametrize("delta", [0.05, 0.2])
def test_high_probability_regret_bound(delta):
    n_reps = 300
    fails, regret, bound = _failures(16, 64, 1500, delta, n_reps, seed=1)
    assert cp_lower(fails, n_reps) <= 2 * delta, (fails, bound)
    assert regret.max() > 0.25 * bound  # the bound is within a small factor of what happens


def test_self_check_high_probability_bound_fails_with_too_little_memory():
    n_reps, delta = 100, 0.05
    fails, regret, bound = _failures(8, 64, 1500, delta, n_reps, seed=2)  # S = w = 8
    assert cp_lower(fails, n_reps) > 2 * delta
    assert regret.min() > 0.3 * 1500
