r"""Conservative UCBVI learners (StepMix, EpsMix, cumulative constraint) and their driver.

Before each episode a :class:`ConservativeLearner` plans a :class:`MixedPlan`;
:func:`run_conservative` plays all replications at once and records exact and
realised regret and the constraint violations of the played mixtures.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable, NamedTuple

import numpy as np

from .._random import rep_key, round_key, seed_to_uint64, uniform
from .._validation import check_float, check_in, check_int, check_open_unit
from ._conservative import (ConservativeBaseline, _evaluate, epsmix_probability, evaluate_stochastic_policy,
                            mix_policies, pessimistic_values, stepmix_weight)
from ._episodic import EpisodeSpec, _check_single, _default_checkpoints
from ._planning import backward_induction
from ._ucbvi import BONUSES, UCBVIState, optimistic_q_values, ucbvi

__all__ = ["RULES", "MixedPlan", "ConservativeState", "ConservativeLearner", "ConservativeResult",
           "conservative_ucbvi", "stepmix", "epsmix", "run_conservative", "sample_mixed_episodes"]

#: Decision rules of :func:`conservative_ucbvi`.
RULES = ("stepmix", "epsmix", "cumulative", "unconstrained")


@dataclasses.dataclass(frozen=True)
class MixedPlan:
    r"""The policy of one episode of every replication.

    Attributes
    ----------
    optimistic : ndarray of int, shape (n_reps, H, S)
        Greedy policy of the optimistic Q-values.
    step_weight : ndarray, shape (n_reps,)
        :math:`w`: each step takes the optimistic action w.p. :math:`w`, else a baseline one.
    episode_prob : ndarray, shape (n_reps,)
        :math:`\epsilon`: the episode follows the :math:`w`-mixture w.p. :math:`\epsilon`, else the baseline.
    credit : ndarray, shape (n_reps,)
        Lower bound on the expected value of the episode (added to the budget).
    """

    optimistic: np.ndarray
    step_weight: np.ndarray
    episode_prob: np.ndarray
    credit: np.ndarray


class ConservativeState(NamedTuple):
    """UCBVI counts, ``budget (n_reps,)`` (sum of past credits), episodes played, :math:`L_1`, :math:`s_1`."""

    ucb: UCBVIState
    budget: np.ndarray
    episode: int
    pessimism_log_term: float
    initial_state: int


@dataclasses.dataclass(frozen=True)
class ConservativeLearner:
    """A conservative learner: settings, its baseline and the pure functions ``init``, ``plan``, ``update``.

    ``init(spec, n_reps, seed) -> state``; ``plan(state) -> MixedPlan``;
    ``update(state, plan, states, actions, rewards) -> state``.
    """

    name: str
    params: dict
    baseline: ConservativeBaseline
    alpha: float
    init: Callable
    plan: Callable
    update: Callable


def conservative_ucbvi(baseline: ConservativeBaseline, rule: str = "stepmix", *, alpha: float = 0.2,
                       delta: float = 0.1, bonus: str = "hoeffding", bonus_scale: float = 1.0,
                       stationary: bool = False, pessimism_scale: float = 1.0,
                       n_bisect: int = 12) -> ConservativeLearner:
    r"""UCBVI made conservative with respect to a baseline policy.

    Parameters
    ----------
    baseline : ConservativeBaseline
        From :func:`known_baseline` or :func:`learned_baseline`.
    rule : {"stepmix", "epsmix", "cumulative", "unconstrained"}
        How the optimistic policy is combined with the baseline (Notes).
    alpha : float in (0, 1)
        Allowed relative loss: the constraint is :math:`V \ge (1 - \alpha) V^{\pi_b}_1(s_1)`.
    delta : float in (0, 1)
        Confidence of the UCBVI bonus and of the pessimistic bonus.
    bonus, bonus_scale, stationary
        Of the optimistic policy, as in :func:`expertlab.mdp.ucbvi`.
    pessimism_scale : float > 0
        Multiplies :func:`pessimism_bonus` (the guarantee needs 1).
    n_bisect : int
        Bisection steps of StepMix.

    Returns
    -------
    ConservativeLearner

    Notes
    -----
    Before episode :math:`k`, :math:`\pi^{\rm opt}_k` is the UCBVI policy and
    :math:`\underline V` the pessimistic value (:func:`pessimistic_values`,
    L1 bonus valid for every policy at once) on the same counts;
    :math:`\tau = (1 - \alpha) V^{\pi_b}_1(s_1)`.

    * ``"stepmix"``: the largest :math:`w` with
      :math:`\underline V^{w \pi^{\rm opt} + (1 - w)\pi_b}_1(s_1) \ge \tau`
      (bisection, :func:`stepmix_weight`), every step mixed with weight :math:`w`.
    * ``"epsmix"``: :math:`\pi^{\rm opt}` for the episode w.p. :math:`\epsilon_k` (:func:`epsmix_probability`).
    * ``"cumulative"``: :math:`\pi^{\rm opt}` if
      :math:`\sum_{j<k} c_j + \underline V^{\pi^{\rm opt}_k}_1(s_1) \ge (1 - \alpha)\, k\, V^{\pi_b}_1(s_1)`
      (from :math:`k = 1`), else :math:`\pi_b`; the credit :math:`c_j` is the pessimistic
      value of an optimistic episode, the baseline value otherwise.
    * ``"unconstrained"``: UCBVI itself (reference for the regret gap).

    On the event of :func:`pessimism_bonus` (probability :math:`1 - \delta`)
    the pessimistic values are lower bounds, so StepMix and EpsMix meet the
    episode-wise constraint in every episode and the cumulative rule meets
    :math:`\sum_{j \le k} V^{\pi_j} \ge (1 - \alpha) k V^{\pi_b}` for every :math:`k`.

    Reconstructed or simplified: the pessimistic bonus is the L1 (Weissman)
    width, valid uniformly over policies, not the paper's Bernstein-type
    width; StepMix's bisection keeps a feasible lower end and assumes no
    monotonicity in :math:`w`; the cumulative rule stores each episode's
    pessimistic value when played instead of re-bounding past policies with
    later data; the baseline's value is known, or for a learned baseline
    bracketed by :func:`learned_baseline` (the fallback is then safe only if
    ``value >= (1 - alpha) reference``, i.e. with enough offline data).

    References
    ----------
    Li, Huang, Shen & Yang, "Near-optimal conservative exploration in reinforcement learning under
    episode-wise constraints", ICML 2023: StepMix (Alg. 1, Thm 1: no violation w.p. :math:`1 - \delta`,
    regret :math:`\tilde O(\sqrt{H^3 S A K})`), EpsMix (Thm 2), the learned baseline (Thm 3); numbering
    as recalled, not re-checked.  Garcelon, Ghavamzadeh, Lazaric & Pirotta, "Conservative exploration in
    reinforcement learning", AISTATS 2020 (cumulative constraint; unconstrained regret plus a term
    logarithmic in :math:`K`).

    [validated-rates]

    Examples
    --------
    >>> from expertlab.mdp import conservative_garnet, run_conservative
    >>> m, b = conservative_garnet(seed=3)
    >>> res = run_conservative(conservative_ucbvi(b, "epsmix"), m, n_episodes=50, n_reps=4, seed=0)
    >>> int(res.violations[-1].sum())
    0
    """
    if not isinstance(baseline, ConservativeBaseline):
        raise TypeError(f"baseline must be a ConservativeBaseline, got {type(baseline).__name__}")
    rule = check_in(rule, "rule", RULES)
    alpha = check_open_unit(alpha, "alpha")
    delta = check_open_unit(delta, "delta")
    check_in(bonus, "bonus", BONUSES)
    pessimism_scale = check_float(pessimism_scale, "pessimism_scale", positive=True)
    n_bisect = check_int(n_bisect, "n_bisect", maximum=60)
    inner = ucbvi(bonus, delta=delta, bonus_scale=bonus_scale, stationary=stationary)
    stationary = bool(stationary)
    base_pi = np.asarray(baseline.policy, dtype=np.float64)
    thr = (1.0 - alpha) * baseline.reference

    def init(spec: EpisodeSpec, n_reps: int, seed=None) -> ConservativeState:
        shape = (spec.horizon, spec.n_states, spec.n_actions)
        if base_pi.shape != shape:
            raise ValueError(f"baseline.policy has shape {base_pi.shape}, the MDP needs {shape}")
        ucb = inner.init(spec, n_reps, seed)
        h_c = 1 if stationary else spec.horizon
        t = spec.n_episodes * spec.horizon
        log_p = spec.n_states * math.log(2.0) + math.log(spec.n_states * spec.n_actions * h_c * t / delta)
        return ConservativeState(ucb, np.zeros(n_reps), 0, log_p, spec.initial_state)

    def plan(state: ConservativeState) -> MixedPlan:
        ucb = state.ucb
        n_reps, h_, s_ = ucb.visits.shape
        opt = optimistic_q_values(ucb, bonus, bonus_scale=bonus_scale, stationary=stationary).argmax(axis=-1)
        ones = np.ones(n_reps)
        s0 = state.initial_state
        kw = dict(log_term=state.pessimism_log_term, scale=pessimism_scale, stationary=stationary)
        if rule == "unconstrained":
            return MixedPlan(opt, ones, ones, np.full(n_reps, np.nan))
        if rule == "stepmix":
            w, low = stepmix_weight(ucb.counts, ucb.rewards, opt, base_pi, thr, s0, n_bisect=n_bisect, **kw)
            credit = np.where(w > 0, low, baseline.value)
            return MixedPlan(opt, w, ones, credit)
        low = pessimistic_values(ucb.counts, ucb.rewards, mix_policies(opt, base_pi, ones), **kw)[:, 0, s0]
        if rule == "epsmix":
            eps = epsmix_probability(low, baseline.value, alpha, baseline.reference)
            return MixedPlan(opt, ones, eps, eps * low + (1.0 - eps) * baseline.value)
        k = state.episode + 1
        go = state.budget + low >= (1.0 - alpha) * k * baseline.reference
        return MixedPlan(opt, ones, go.astype(np.float64), np.where(go, low, baseline.value))

    def update(state: ConservativeState, mixed: MixedPlan, states, actions, rewards) -> ConservativeState:
        ucb = inner.update(state.ucb, states, actions, rewards)
        credit = np.where(np.isnan(mixed.credit), 0.0, mixed.credit)
        return state._replace(ucb=ucb, budget=state.budget + credit, episode=state.episode + 1)

    params = {"rule": rule, "alpha": alpha, "delta": delta, "bonus": bonus, "bonus_scale": bonus_scale,
              "pessimism_scale": pessimism_scale, "stationary": stationary, "n_bisect": n_bisect}
    return ConservativeLearner(rule if rule != "unconstrained" else f"ucbvi-{bonus}", params, baseline, alpha,
                               init, plan, update)


def stepmix(baseline: ConservativeBaseline, **kwargs) -> ConservativeLearner:
    """StepMix: :func:`conservative_ucbvi` (keywords as there) with ``rule="stepmix"`` (per-step mixture).

    [validated-rates]
    """
    return conservative_ucbvi(baseline, "stepmix", **kwargs)


def epsmix(baseline: ConservativeBaseline, **kwargs) -> ConservativeLearner:
    """EpsMix: :func:`conservative_ucbvi` (keywords as there) with ``rule="epsmix"`` (whole-episode coin).

    [validated-rates]
    """
    return conservative_ucbvi(baseline, "epsmix", **kwargs)


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

    @property
    def mean_regret(self) -> np.ndarray:
        """Mean expected regret over the replications, shape ``(n_checkpoints,)``."""
        return self.regret.mean(axis=1)

    @property
    def mean_realised_regret(self) -> np.ndarray:
        """Mean realised regret over the replications, shape ``(n_checkpoints,)``."""
        return self.realised_regret.mean(axis=1)


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
    >>> from expertlab.mdp import conservative_garnet
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
    if checkpoints is None:
        ck = _default_checkpoints(n_episodes)
    else:
        ck = np.asarray(checkpoints)
        if (ck.ndim != 1 or ck.size == 0 or not np.issubdtype(ck.dtype, np.integer) or ck.min() < 1
                or ck.max() > n_episodes or np.any(np.diff(ck) <= 0)):
            raise ValueError(f"checkpoints must be strictly increasing integers in [1, {n_episodes}]")
        ck = ck.astype(np.int64)
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
