r"""UCBVI: optimistic value iteration on the empirical model (Azar, Osband & Munos 2017), batched."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._validation import check_float, check_in, check_int, check_open_unit
from ._checks import real_array
from ..sim._protocol import Learner
from ._episodic import TABULAR_EPISODE, Trajectory, episode_sizes, n_episodes_of

__all__ = ["UCBVIState", "ucbvi", "ucbvi_bonus", "optimistic_q_values", "BONUSES", "BACKUPS"]

#: Bonus shapes of :func:`ucbvi`.
BONUSES = ("hoeffding", "bernstein", "rlberry")
#: Backups of :func:`ucbvi`: this library's clipped one, and rlberry's.
BACKUPS = ("clipped", "rlberry")


class UCBVIState(NamedTuple):
    """Counts of every replication and the constants of the bonus.

    ``counts (n_reps, H', S, A, S)`` counts the transitions ``(s, a) -> t``
    seen at each stage (``H' = H``) or pooled over the stages (``H' = 1``,
    ``stationary=True``); ``visits (n_reps, H, S)`` counts the visits of each
    state at each stage.  ``rewards (H, S, A)`` and ``log_term`` (the
    :math:`L = \\ln(5 S A T / \\delta)` of the paper) are shared constants.
    ``reward_sums (n_reps, H, S, A)`` sums the observed rewards of each
    stage-state-action (``backup="rlberry"``, which estimates the rewards;
    else ``None``).
    """

    counts: np.ndarray
    visits: np.ndarray
    rewards: np.ndarray
    log_term: float
    reward_sums: np.ndarray | None = None


def ucbvi_bonus(kind, n, h, horizon, *, log_term=1.0, scale=1.0, p_hat=None, v_next=None, visits_next=None,
                n_states=1, n_actions=1):
    r"""The exploration bonus of UCBVI at stage ``h`` for counts ``n >= 1``.

    Parameters
    ----------
    kind : {"hoeffding", "bernstein", "rlberry"}
    n : array (...)
        Visit counts of the pairs, at least 1.
    h : int
        Stage, ``0 <= h < horizon``.
    horizon : int
    log_term : float
        :math:`L`.
    scale : float
        Multiplies the bonus (``"rlberry"``: the constant ``c``).
    p_hat : array (..., S), optional
        Empirical next-state distributions (``"bernstein"`` only).
    v_next : array (..., S), optional
        Optimistic values of stage ``h + 1`` (``"bernstein"`` only).
    visits_next : array (..., S), optional
        State visit counts of stage ``h + 1`` (``"bernstein"`` only).
    n_states, n_actions : int
        ``S`` and ``A`` (``"bernstein"`` only).

    Returns
    -------
    array (...)

    Raises
    ------
    TypeError
        If ``n`` (or, for ``"bernstein"``, ``p_hat``, ``v_next``,
        ``visits_next``) does not hold real numbers, a size is not an
        integer, or ``kind="bernstein"`` lacks ``p_hat``, ``v_next`` or ``visits_next``.
    ValueError
        If ``kind`` is unknown, ``n < 1`` or not finite, ``h`` is outside
        ``[0, horizon - 1]``, ``log_term`` or ``scale`` is negative or not
        finite, or the Bernstein arrays do not match ``n``.

    Notes
    -----
    With :math:`H` the horizon and :math:`v = H - h` the largest value left,

    .. math::

        b_{\mathrm{H}} = 7 H L \sqrt{1/n}, \qquad
        b_{\mathrm{rlberry}} = \min(c / \sqrt{n} + v / n,\; v),

    .. math::

        b_{\mathrm{B}} = \sqrt{\frac{8 L\, \mathrm{Var}_{\hat P}(V_{h+1})}{n}} + \frac{14 H L}{3 n}
        + \sqrt{\frac{8}{n} \sum_y \hat P(y) \min\Big(\frac{10^4 H^3 S^2 A L^2}{N'_{h+1}(y)},\, H^2\Big)},

    where :math:`N'_{h+1}(y)` counts the visits of :math:`y` at stage
    :math:`h + 1` (the last term is taken as :math:`H^2` for unvisited
    :math:`y` and as 0 at the last stage, where :math:`V_{h+1} = 0`).
    """
    kind = check_in(kind, "kind", BONUSES)
    horizon = check_int(horizon, "horizon")
    h = check_int(h, "h", minimum=0, maximum=horizon - 1)
    n = real_array(n, "n", low=1.0)
    log_term = check_float(log_term, "log_term", minimum=0.0)
    scale = check_float(scale, "scale", minimum=0.0)
    if kind == "bernstein":
        if p_hat is None or v_next is None or visits_next is None:
            raise TypeError("kind='bernstein' needs p_hat, v_next and visits_next")
        p_hat = real_array(p_hat, "p_hat", low=0.0, high=1.0)
        v_next = real_array(v_next, "v_next")
        visits_next = real_array(visits_next, "visits_next", low=0.0)
        try:
            last = np.broadcast_shapes(p_hat.shape, v_next.shape, visits_next.shape)
            np.broadcast_shapes(last[:-1], n.shape)
        except ValueError:
            raise ValueError(f"p_hat, v_next and visits_next must broadcast to (..., S) with (...) the shape of n "
                             f"{n.shape}, got {p_hat.shape}, {v_next.shape} and {visits_next.shape}") from None
        n_states, n_actions = check_int(n_states, "n_states"), check_int(n_actions, "n_actions")
    return _bonus(kind, n, h, horizon, log_term, scale, p_hat, v_next, visits_next, n_states, n_actions)


def _bonus(kind, n, h, horizon, log_term, scale, p_hat=None, v_next=None, visits_next=None, n_states=1,
           n_actions=1):
    """:func:`ucbvi_bonus` without the checks (the backward induction passes counts it made itself)."""
    n = np.asarray(n, dtype=np.float64)
    if kind == "hoeffding":
        return scale * 7.0 * horizon * log_term / np.sqrt(n)
    if kind == "rlberry":
        v = float(horizon - h)
        return np.minimum(scale / np.sqrt(n) + v / n, v)
    mean = np.sum(p_hat * v_next, axis=-1)
    var = np.maximum(np.sum(p_hat * v_next ** 2, axis=-1) - mean ** 2, 0.0)
    b = np.sqrt(8.0 * log_term * var / n) + 14.0 * horizon * log_term / (3.0 * n)
    if h < horizon - 1:
        big = 1e4 * horizon ** 3 * n_states ** 2 * n_actions * log_term ** 2
        with np.errstate(divide="ignore"):
            corr = np.minimum(big / visits_next, float(horizon) ** 2)
        b = b + np.sqrt(8.0 * np.sum(p_hat * corr, axis=-1) / n)
    return scale * b


def optimistic_q_values(state: UCBVIState, bonus: str = "hoeffding", *, bonus_scale: float = 1.0,
                        stationary: bool = False, backup: str = "clipped") -> np.ndarray:
    r"""The optimistic :math:`Q` of UCBVI for every replication, shape ``(n_reps, H, S, A)``.

    Parameters
    ----------
    state : UCBVIState
    bonus : {"hoeffding", "bernstein", "rlberry"}
    bonus_scale : float
    stationary : bool
        Must match the shape of ``state.counts``.
    backup : {"clipped", "rlberry"}
        The backward induction (see the Notes of :func:`ucbvi`).

    Returns
    -------
    ndarray, shape (n_reps, H, S, A)

    Notes
    -----
    The backward induction of :func:`ucbvi` (see its Notes) on the counts of
    ``state``; the policy of :func:`ucbvi` is the first maximiser over the
    last axis.
    """
    check_in(bonus, "bonus", BONUSES)
    check_in(backup, "backup", BACKUPS)
    if backup == "rlberry":
        return _rlberry_q_values(state, bonus_scale, stationary)
    counts, rew = state.counts, state.rewards
    n_reps, h_, s_ = state.visits.shape
    a_ = rew.shape[-1]
    if counts.shape[1] != (1 if stationary else h_):
        raise ValueError(f"state.counts has {counts.shape[1]} stage(s); stationary={stationary} expects "
                         f"{1 if stationary else h_}")
    n_all = counts.sum(axis=-1)  # (R, H', S, A)
    v = np.zeros((n_reps, s_))
    q_all = np.empty((n_reps, h_, s_, a_))
    for h in range(h_ - 1, -1, -1):
        hc = 0 if stationary else h
        n = n_all[:, hc]
        n1 = np.maximum(n, 1.0)
        p_hat = counts[:, hc] / n1[..., None]  # (R, S, A, S)
        pv = np.einsum("rsat,rt->rsa", p_hat, v)
        if bonus == "bernstein":
            vn = state.visits[:, h + 1] if h + 1 < h_ else np.ones((n_reps, s_))
            b = _bonus(bonus, n1, h, h_, state.log_term, bonus_scale, p_hat, v[:, None, None, :],
                       vn[:, None, None, :], s_, a_)
        else:
            b = _bonus(bonus, n1, h, h_, state.log_term, bonus_scale)
        q = np.where(n > 0, np.minimum(rew[h] + pv + b, float(h_ - h)), float(h_ - h))
        q_all[:, h] = q
        v = q.max(axis=-1)
    return q_all


def _rlberry_q_values(state: UCBVIState, c: float, stationary: bool) -> np.ndarray:
    """rlberry's UCBVI backup (stage-dependent): estimated rewards, uniform kernel before a visit, V <= H."""
    if stationary or state.reward_sums is None:
        raise ValueError("backup='rlberry' needs stationary=False and a state that sums the rewards "
                         "(a state made by ucbvi(..., backup='rlberry'))")
    counts = state.counts
    n_reps, h_, s_, a_ = state.reward_sums.shape
    n = counts.sum(axis=-1)  # (R, H, S, A)
    n1 = np.maximum(n, 1.0)
    r_hat = state.reward_sums / n1
    p_hat = np.where(n[..., None] > 0, counts / n1[..., None], 1.0 / s_)
    v = np.zeros((n_reps, s_))
    q_all = np.empty((n_reps, h_, s_, a_))
    for h in range(h_ - 1, -1, -1):
        vmax = float(h_ - h)
        b = np.where(n[:, h] > 0, np.minimum(c / np.sqrt(n1[:, h]) + vmax / n1[:, h], vmax), vmax)
        q = r_hat[:, h] + b
        if h < h_ - 1:
            q = q + np.einsum("rsat,rt->rsa", p_hat[:, h], v)
        q_all[:, h] = q
        v = np.minimum(q.max(axis=-1), float(h_))
    return q_all


def _ucbvi_update(state: UCBVIState, trajectory: Trajectory, stationary: bool) -> UCBVIState:
    """Add one episode of every replication to the counts (and the reward sums) of ``state``."""
    states, actions = np.asarray(trajectory.states), np.asarray(trajectory.actions)
    counts = state.counts.copy()
    visits = state.visits.copy()
    n_reps, h_ = actions.shape
    rows = np.repeat(np.arange(n_reps), h_)
    stage = np.zeros(n_reps * h_, dtype=np.int64) if stationary else np.tile(np.arange(h_), n_reps)
    np.add.at(counts, (rows, stage, states[:, :-1].ravel(), actions.ravel(), states[:, 1:].ravel()), 1.0)
    np.add.at(visits, (rows, np.tile(np.arange(h_), n_reps), states[:, :-1].ravel()), 1.0)
    sums = state.reward_sums
    if sums is not None:
        sums = sums.copy()
        np.add.at(sums, (rows, stage, states[:, :-1].ravel(), actions.ravel()),
                  np.asarray(trajectory.rewards, dtype=np.float64).ravel())
    return state._replace(counts=counts, visits=visits, reward_sums=sums)


def ucbvi(bonus: str = "hoeffding", *, delta: float = 0.1, bonus_scale: float = 1.0,
          stationary: bool = False, backup: str = "clipped") -> Learner:
    r"""UCBVI for episodic tabular MDPs with known rewards in [0, 1].

    Parameters
    ----------
    bonus : {"hoeffding", "bernstein", "rlberry"}
        ``"hoeffding"``: UCBVI-CH (Thm 1); ``"bernstein"``: UCBVI-BF, the
        Bernstein–Freedman bonus (Thm 2); ``"rlberry"``: the simplified
        bonus ``c / sqrt(n) + v_max / n`` of rlberry, without logarithms, for
        side-by-side comparison with that package.
    delta : float in (0, 1)
        Confidence level in :math:`L = \ln(5 S A T / \delta)`, ``T = K H``.
    bonus_scale : float > 0
        Multiplies the bonus (``"rlberry"``: the constant ``c``).  The
        theorems hold for ``1``.
    stationary : bool
        Pool the transition counts over the stages (the paper's setting of
        stage-independent transitions).  By default each stage has its own
        empirical kernel, as :class:`FiniteHorizonMDP` allows stage-dependent
        transitions.
    backup : {"clipped", "rlberry"}
        ``"clipped"``: the backward induction below, with the known rewards.
        ``"rlberry"`` (with ``bonus="rlberry"`` and ``stationary=False``):
        the backup of rlberry's ``UCBVIAgent`` (``stage_dependent=True``),
        for a side-by-side run with that package.

    Returns
    -------
    Learner
        Feedback ``"tabular_episode"``: runs on a
        :class:`~expertlab.mdp.FiniteHorizonMDP` (or
        :func:`~expertlab.mdp.episodic` of one) through
        :func:`expertlab.sim.run`, whose ``horizon`` counts the episodes
        :math:`K`; ``act`` returns the greedy policy ``(n_reps, H, S)`` of the
        coming episode.  Deterministic; state :class:`UCBVIState`.

    Notes
    -----
    Before episode :math:`k`, with :math:`\hat P_h` the empirical kernel and
    :math:`n_h(s, a) \ge 1` the counts, backward induction from
    :math:`V_H = 0`:

    .. math::

        Q_h(s, a) = \min\big(H - h,\; r_h(s, a) + \hat P_h V_{h+1}(s, a) + b_h(s, a)\big),
        \qquad V_h(s) = \max_a Q_h(s, a),

    and :math:`Q_h(s, a) = H - h` for unvisited pairs; the policy is greedy
    (first maximiser).  Bonuses: :func:`ucbvi_bonus`.  Each stage's value is
    clipped at the largest return left, :math:`H - h`, which for rewards in
    [0, 1] is at least :math:`Q^\star_h` (the paper clips at :math:`H`).

    ``backup="rlberry"`` follows rlberry's ``UCBVIAgent`` instead: the
    rewards are estimated (the mean of the rewards observed at
    :math:`(h, s, a)`, 0 before the first visit), an unvisited pair has the
    uniform kernel and the bonus :math:`H - h`, :math:`Q_h` is not clipped,
    and :math:`V_h = \min(\max_a Q_h, H)`.

    Departures from the paper: the minimum with the previous episode's
    :math:`Q` is omitted (it only makes the estimates monotone); the
    Bernstein constants (:math:`8 L`, :math:`14 H L / 3`,
    :math:`10^4 H^3 S^2 A L^2`) are a reconstruction of Alg. 4 of the paper
    and should be checked against it; with stage-dependent counts the
    Hoeffding bound holds with an extra :math:`\sqrt H` (``S H`` effective
    states).

    [validated-rates]

    References
    ----------
    Azar, Osband & Munos, "Minimax regret bounds for reinforcement
    learning", ICML 2017: Alg. 1 (UCBVI); Thm 1 (Hoeffding bonus, regret
    :math:`\tilde O(H \sqrt{SAT}) = \tilde O(H^{3/2} \sqrt{SAK})` with
    :math:`T = KH`); Thm 2 (Bernstein–Freedman bonus,
    :math:`\tilde O(\sqrt{HSAT}) = \tilde O(H \sqrt{SAK})`).
    Domingues et al., rlberry (the simplified bonus).

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab import sim
    >>> from expertlab.mdp import FiniteHorizonMDP
    >>> p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> m = FiniteHorizonMDP.stationary(p, np.array([[0.0, 0.0], [1.0, 1.0]]), 3)
    >>> res = sim.run(ucbvi("rlberry"), m, horizon=200, n_reps=2, seed=0)
    >>> res.metrics["regret"][-1] < 200 * m.optimal_value() / 2      # far below uniform play
    array([ True,  True])
    """
    bonus = check_in(bonus, "bonus", BONUSES)
    delta = check_open_unit(delta, "delta")
    bonus_scale = check_float(bonus_scale, "bonus_scale", positive=True)
    if not isinstance(stationary, (bool, np.bool_)):
        raise TypeError(f"stationary must be a bool, got {type(stationary).__name__}")
    stationary = bool(stationary)
    backup = check_in(backup, "backup", BACKUPS)
    if backup == "rlberry" and (bonus != "rlberry" or stationary):
        raise ValueError("backup='rlberry' is rlberry's stage-dependent UCBVI: it needs bonus='rlberry' and "
                         f"stationary=False, got bonus={bonus!r}, stationary={stationary}")
    track = backup == "rlberry"

    def check_spec(spec) -> None:
        episode_sizes(spec, "ucbvi")
        n_episodes_of(spec)

    def init(spec, n_reps: int, keys=None, xp=None) -> UCBVIState:
        h_, s_, a_, r = episode_sizes(spec, "ucbvi")
        log_term = math.log(5.0 * s_ * a_ * n_episodes_of(spec) * h_ / delta)
        counts = np.zeros((n_reps, 1 if stationary else h_, s_, a_, s_))
        sums = np.zeros((n_reps, h_, s_, a_)) if track else None
        return UCBVIState(counts, np.zeros((n_reps, h_, s_)), r, log_term, sums)

    def act(state: UCBVIState, obs=None, keys=None):
        q = optimistic_q_values(state, bonus, bonus_scale=bonus_scale, stationary=stationary, backup=backup)
        return q.argmax(axis=-1), state

    def update(state: UCBVIState, policy, trajectory: Trajectory, keys=None) -> UCBVIState:
        return _ucbvi_update(state, trajectory, stationary)

    return Learner("ucbvi", TABULAR_EPISODE, init, act, update,
                   {"bonus": bonus, "delta": delta, "bonus_scale": bonus_scale, "stationary": stationary,
                    "backup": backup}, doc=ucbvi.__doc__, check_spec=check_spec)
