r"""The driver of the conservative learners, batched over replications.

:func:`run_conservative` is the one place that loops over the episodes of a
:class:`~expertlab.mdp.ConservativeLearner`: before each episode it asks the
learner for its :class:`~expertlab.mdp.MixedPlan`, evaluates the played
mixture exactly on the true model, samples every replication's trajectory at
once from the counter-based generator (:func:`sample_mixed_episodes`) and
records the expected and realised regret, the episode-wise and cumulative
constraint violations and the mass of baseline play on a checkpoint grid
(:class:`ConservativeResult`).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from .._random import rep_key, round_key, seed_to_uint64, uniform
from .._validation import check_float, check_int
from ._conservative import _evaluate, evaluate_stochastic_policy
from ._conservative_policies import mix_policies
from ._conservative_ucbvi import ConservativeLearner, MixedPlan
from ._episodic import EpisodeSpec, _check_checkpoints, _check_single, _rep_mean
from ._planning import backward_induction

__all__ = ["ConservativeResult", "run_conservative", "sample_mixed_episodes"]


@dataclasses.dataclass(frozen=True)
class ConservativeResult:
    r"""Regret and constraint violations of a batch of replications on a checkpoint grid of episodes.

    Attributes
    ----------
    learner : str
    checkpoints : ndarray of int, shape (n_checkpoints,)
    regret : ndarray, shape (n_checkpoints, n_reps)
        Exact expected regret :math:`\sum_{j \le k} (V^\star_1(s_1) - V^{\pi_j}_1(s_1))`,
        :math:`V^{\pi_j}` the value of the played mixture (episode coin included).
    realised_regret : ndarray, shape (n_checkpoints, n_reps)
        The same with the realised returns :math:`\sum_h r_h(s^j_h, a^j_h)`.
    violations : ndarray of int, shape (n_checkpoints, n_reps)
        Episodes :math:`j \le k` with :math:`V^{\pi_j}_1(s_1) < (1 - \alpha) V^{\pi_b}_1(s_1)`.
    cumulative_violations : ndarray of int, shape (n_checkpoints, n_reps)
        Episodes :math:`j \le k` with
        :math:`\sum_{i \le j} V^{\pi_i}_1(s_1) < (1 - \alpha)\, j\, V^{\pi_b}_1(s_1)`.
    conservative_mass : ndarray, shape (n_checkpoints, n_reps)
        :math:`\sum_{j \le k} (1 - \epsilon_j w_j)` (baseline episodes, for EpsMix and the cumulative rule).
    optimal_value, baseline_value, alpha : float
        :math:`V^\star_1(s_1)`, the :math:`V^{\pi_b}_1(s_1)` of the violations, :math:`\alpha`.
    n_episodes, n_reps, horizon, seed : int
    wall_time : float
    rep_offset : int
    """

    learner: str
    checkpoints: np.ndarray
    regret: np.ndarray
    realised_regret: np.ndarray
    violations: np.ndarray
    cumulative_violations: np.ndarray
    conservative_mass: np.ndarray
    optimal_value: float
    baseline_value: float
    alpha: float
    n_episodes: int
    n_reps: int
    horizon: int
    seed: int
    wall_time: float
    rep_offset: int = 0

    mean_regret = _rep_mean("regret", "expected")
    mean_realised_regret = _rep_mean("realised_regret", "realised")


def sample_mixed_episodes(mdp, mixed: MixedPlan, baseline_policy, keys, initial_state: int):
    r"""One episode of every replication under a :class:`MixedPlan`, from the counter-based generator.

    Parameters
    ----------
    mdp : FiniteHorizonMDP
    mixed : MixedPlan
    baseline_policy : array, shape (H, S, A)
    keys : uint64 array, shape (n_reps,)
    initial_state : int

    Returns
    -------
    states, actions, rewards : ndarray (n_reps, H + 1), (n_reps, H), (n_reps, H)
    optimistic_episode : ndarray (n_reps,) of bool
        Whether the episode coin chose the mixture (else the baseline).

    Notes
    -----
    Draw ``h < H`` of a key picks the state after stage ``h`` (as in
    :func:`sample_episodes`), draw ``H`` the episode coin (mixture iff below
    :math:`\epsilon`), draw ``H + 1 + h`` the step coin (optimistic iff below
    :math:`w`), draw ``2 H + 1 + h`` the baseline action (inverse CDF).
    """
    p, rew = np.asarray(mdp.transitions), np.asarray(mdp.rewards)
    n_reps = keys.shape[0]
    h_, s_ = mdp.horizon, mdp.n_states
    rows = np.arange(n_reps)
    u = uniform(keys[:, None], np.arange(3 * h_ + 1, dtype=np.uint64)[None, :])
    cdf = np.cumsum(p, axis=-1)
    bcdf = np.cumsum(np.asarray(baseline_policy, dtype=np.float64), axis=-1)
    chosen = u[:, h_] < mixed.episode_prob
    states = np.empty((n_reps, h_ + 1), dtype=np.int64)
    actions = np.empty((n_reps, h_), dtype=np.int64)
    rewards = np.empty((n_reps, h_))
    states[:, 0] = initial_state
    for h in range(h_):
        s = states[:, h]
        a_b = np.minimum((bcdf[h, s] < u[:, 2 * h_ + 1 + h, None]).sum(axis=1), mdp.n_actions - 1)
        use_opt = chosen & (u[:, h_ + 1 + h] < mixed.step_weight)
        a = np.where(use_opt, mixed.optimistic[rows, h, s], a_b)
        actions[:, h] = a
        rewards[:, h] = rew[h, s, a]
        nxt = (cdf[h, s, a] < u[:, h, None]).sum(axis=1)
        states[:, h + 1] = np.minimum(nxt, s_ - 1)
    return states, actions, rewards, chosen


def run_conservative(learner: ConservativeLearner, mdp, n_episodes: int, n_reps: int, seed=0, *, checkpoints=None,
                     initial_state: int = 0, baseline_value=None, rep_offset: int = 0) -> ConservativeResult:
    r"""Play ``n_episodes`` episodes of ``mdp`` with a conservative learner in ``n_reps`` replications at once.

    Parameters
    ----------
    learner : ConservativeLearner
    mdp : FiniteHorizonMDP
        A single MDP; its rewards are known to the learner.
    n_episodes, n_reps : int
    seed : int, SeedSequence or None
        Replication ``r`` depends on ``(seed, r)`` only.
    checkpoints : sequence of int, optional
        As in :func:`run_episodes`.
    initial_state : int
    baseline_value : float, optional
        True :math:`V^{\pi_b}_1(s_1)` of the violations (default
        ``learner.baseline.reference``; pass the true value for a learned baseline).
    rep_offset : int

    Returns
    -------
    ConservativeResult

    Notes
    -----
    The value of episode :math:`k`,
    :math:`\epsilon_k V^{\pi_{w_k}}_1(s_1) + (1 - \epsilon_k) V^{\pi_b}_1(s_1)`, is
    exact (:func:`evaluate_stochastic_policy`, true model); it violates the
    constraint when below :math:`(1 - \alpha) V^{\pi_b}_1(s_1)` by more than
    :math:`10^{-9}`.  Episode :math:`k` of replication :math:`r` uses the
    uniforms of ``round_key(rep_key(seed, r), k)``.

    Examples
    --------
    >>> from expertlab.mdp import conservative_garnet, stepmix
    >>> m, b = conservative_garnet(seed=3)
    >>> res = run_conservative(stepmix(b), m, n_episodes=30, n_reps=3, seed=1)
    >>> res.regret.shape, int(res.violations.max())
    ((17, 3), 0)
    """
    if not isinstance(learner, ConservativeLearner):
        raise TypeError(f"learner must be a ConservativeLearner, got {type(learner).__name__}")
    mdp = _check_single(mdp)
    n_episodes, n_reps = check_int(n_episodes, "n_episodes"), check_int(n_reps, "n_reps")
    rep_offset = check_int(rep_offset, "rep_offset", minimum=0)
    s0 = check_int(initial_state, "initial_state", minimum=0, maximum=mdp.n_states - 1)
    ck = _check_checkpoints(checkpoints, n_episodes)
    v_b = float(learner.baseline.reference) if baseline_value is None else check_float(baseline_value,
                                                                                       "baseline_value")
    seed64 = seed_to_uint64(seed)
    h_, s_ = mdp.horizon, mdp.n_states
    spec = EpisodeSpec(s_, mdp.n_actions, h_, np.asarray(mdp.rewards), s0, n_episodes)
    v_star = float(np.asarray(backward_induction(mdp).values)[0, s0])
    base_pi = np.asarray(learner.baseline.policy, dtype=np.float64)
    state = learner.init(spec, n_reps, seed64)
    v_base = float(evaluate_stochastic_policy(mdp, base_pi[None])[0, 0, s0])
    thr = (1.0 - learner.alpha) * v_b
    rkeys = rep_key(np.full(n_reps, seed64), np.arange(rep_offset, rep_offset + n_reps, dtype=np.uint64))
    acc = np.zeros((6, n_reps))  # regret, realised, violations, cumulative violations, mass, cumulative value
    out = np.empty((5, ck.size, n_reps))
    j = 0
    t0 = time.perf_counter()
    for k in range(n_episodes):
        mixed = learner.plan(state)
        v_mix = _evaluate(mdp, mix_policies(mixed.optimistic, base_pi, mixed.step_weight))
        value = mixed.episode_prob * v_mix[:, 0, s0] + (1.0 - mixed.episode_prob) * v_base
        keys = round_key(rkeys, np.full(n_reps, k, dtype=np.uint64))
        states, actions, rewards, _ = sample_mixed_episodes(mdp, mixed, base_pi, keys, s0)
        acc[0] += v_star - value
        acc[1] += v_star - rewards.sum(axis=1)
        acc[2] += value < thr - 1e-9
        acc[5] += value
        acc[3] += acc[5] < (k + 1) * thr - 1e-9 * (k + 1)
        acc[4] += 1.0 - mixed.episode_prob * mixed.step_weight
        state = learner.update(state, mixed, states, actions, rewards)
        if k + 1 == ck[j]:
            out[:, j] = acc[:5]
            j += 1
            if j == ck.size:
                break
    wall = time.perf_counter() - t0
    return ConservativeResult(learner.name, ck, out[0], out[1], out[2].astype(np.int64), out[3].astype(np.int64),
                              out[4], v_star, v_b, learner.alpha, n_episodes, n_reps, h_, int(seed64), wall,
                              rep_offset)
