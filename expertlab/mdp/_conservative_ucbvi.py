r"""Conservative UCBVI learners: StepMix, EpsMix and the cumulative constraint.

A :class:`ConservativeLearner` is a record of pure functions over a
:class:`ConservativeState` (the UCBVI counts plus the budget of past credits).
Before each episode ``plan`` computes the optimistic UCBVI policy and the
pessimistic value of its mixtures with the baseline, and returns a
:class:`MixedPlan`: the greedy policy, the per-step weight :math:`w`, the
probability :math:`\epsilon` that the episode follows the mixture, and the
value credited to the episode.  :func:`conservative_ucbvi` builds the learner
for each decision rule in :data:`RULES`; :func:`stepmix` and :func:`epsmix`
fix the rule.  The driver that plays them is
:func:`~expertlab.mdp.run_conservative`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, NamedTuple

import numpy as np

from .._validation import check_float, check_in, check_int, check_open_unit
from ._conservative import pessimistic_values
from ._conservative_policies import ConservativeBaseline, epsmix_probability, mix_policies, stepmix_weight
from ._episodic import EpisodeSpec
from ._ucbvi import BONUSES, UCBVIState, optimistic_q_values, ucbvi

__all__ = ["RULES", "MixedPlan", "ConservativeState", "ConservativeLearner", "conservative_ucbvi", "stepmix",
           "epsmix"]

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
