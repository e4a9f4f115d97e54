r"""Conservative UCBVI learners: StepMix, EpsMix and the cumulative constraint.

Each learner is a :class:`expertlab.sim.Learner` over a
:class:`ConservativeState` (the UCBVI counts, the budget of past credits and
the baseline it is told) that runs on a
:class:`~expertlab.mdp.ConservativeMDP` through :func:`expertlab.sim.run`
(feedback ``"conservative_episode"``).  Before each episode ``act`` computes
the optimistic UCBVI policy and the pessimistic value of its mixtures with
the baseline, and returns a :class:`~expertlab.mdp.MixedPlan`: the greedy
policy, the per-step weight :math:`w`, the probability :math:`\epsilon` that
the episode follows the mixture, the value credited to the episode, and the
deterministic policy drawn for the episode from the learner's own keys
(:func:`~expertlab.mdp.sample_mixed_policy`).  :func:`conservative_ucbvi`
builds the learner for each decision rule in :data:`RULES`; :func:`stepmix`
and :func:`epsmix` fix the rule.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np

from .._validation import check_float, check_in, check_int, check_open_unit
from ..sim._protocol import Learner
from ._conservative import _pessimistic_eval, _pessimistic_model
from ._conservative_env import CONSERVATIVE_EPISODE
from ._conservative_policies import (ConservativeBaseline, MixedPlan, _mix, _sample_mixed, _stepmix_weight,
                                     epsmix_probability)
from ._episodic import episode_sizes, n_episodes_of
from ._ucbvi import BONUSES, UCBVIState, optimistic_q_values, ucbvi

__all__ = ["RULES", "ConservativeState", "conservative_ucbvi", "stepmix", "epsmix"]

#: Decision rules of :func:`conservative_ucbvi`.
RULES = ("stepmix", "epsmix", "cumulative", "unconstrained")


class ConservativeState(NamedTuple):
    """The state of a conservative learner (leading axis ``n_reps`` on the batched fields).

    Attributes
    ----------
    ucb : UCBVIState
        The counts of the optimistic policy.
    budget : ndarray, shape (n_reps,)
        Sum of the credits of past episodes.
    episode : int
        Episodes played.
    pessimism_log_term : float
        :math:`L_1` of :func:`~expertlab.mdp.pessimism_bonus`.
    initial_state : int
    baseline_policy : ndarray, shape (H, S, A)
        The policy played when the learner falls back (``spec.baseline.policy``).
    baseline_value, reference : float
        The value credited to the baseline and the reference of the constraint
        (``spec.baseline.value``, ``spec.baseline.reference``).
    alpha : float
        The allowed relative loss the learner keeps to.
    """

    ucb: UCBVIState
    budget: np.ndarray
    episode: int
    pessimism_log_term: float
    initial_state: int
    baseline_policy: np.ndarray
    baseline_value: float
    reference: float
    alpha: float


def _conservative(name, rule, *, alpha=None, delta=0.1, bonus="hoeffding", bonus_scale=1.0, stationary=False,
                  pessimism_scale=1.0, n_bisect=12, doc=None) -> Learner:
    rule = check_in(rule, "rule", RULES)
    if alpha is not None:
        alpha = check_open_unit(alpha, "alpha")
    delta = check_open_unit(delta, "delta")
    check_in(bonus, "bonus", BONUSES)
    pessimism_scale = check_float(pessimism_scale, "pessimism_scale", positive=True)
    n_bisect = check_int(n_bisect, "n_bisect", maximum=60)
    inner = ucbvi(bonus, delta=delta, bonus_scale=bonus_scale, stationary=stationary)
    stationary = bool(stationary)
    bonus_scale = inner.params["bonus_scale"]

    def check_spec(spec):
        """The checked ``(baseline, baseline policy, alpha, (H, S, A))`` of a conservative spec."""
        baseline = getattr(spec, "baseline", None)
        if not isinstance(baseline, ConservativeBaseline):
            raise ValueError(f"learner {name!r} needs a baseline: run it on a conservative environment "
                             "(expertlab.mdp.conservative(mdp, baseline), spec.baseline)")
        h_, s_, a_, _ = episode_sizes(spec, name)
        base_pi = np.asarray(baseline.policy, dtype=np.float64)
        if base_pi.shape != (h_, s_, a_):
            raise ValueError(f"baseline.policy has shape {base_pi.shape}, the MDP needs {(h_, s_, a_)}")
        a = alpha if alpha is not None else check_open_unit(getattr(spec, "alpha", None), "spec.alpha")
        n_episodes_of(spec)
        return baseline, base_pi, a, (h_, s_, a_)

    def init(spec, n_reps: int, keys=None, xp=None) -> ConservativeState:
        baseline, base_pi, a, (h_, s_, a_) = check_spec(spec)
        ucb = inner.init(spec, n_reps)
        h_c = 1 if stationary else h_
        t = n_episodes_of(spec) * h_
        log_p = s_ * math.log(2.0) + math.log(s_ * a_ * h_c * t / delta)
        return ConservativeState(ucb, np.zeros(n_reps), 0, log_p, int(spec.initial_state), base_pi,
                                 float(baseline.value), float(baseline.reference), a)

    def plan(state: ConservativeState) -> MixedPlan:
        ucb = state.ucb
        n_reps = ucb.visits.shape[0]
        opt = optimistic_q_values(ucb, bonus, bonus_scale=bonus_scale, stationary=stationary).argmax(axis=-1)
        ones = np.ones(n_reps)
        s0, base_pi, alpha_ = state.initial_state, state.baseline_policy, state.alpha
        kw = dict(log_term=state.pessimism_log_term, scale=pessimism_scale, stationary=stationary)
        if rule == "unconstrained":
            return MixedPlan(opt, ones, ones, np.full(n_reps, np.nan))
        if rule == "stepmix":
            thr = (1.0 - alpha_) * state.reference
            w, low = _stepmix_weight(ucb.counts, ucb.rewards, opt, base_pi, thr, s0, n_bisect=n_bisect, **kw)
            credit = np.where(w > 0, low, state.baseline_value)
            return MixedPlan(opt, w, ones, credit)
        model = _pessimistic_model(ucb.counts, ucb.rewards, opt.shape[1], **kw)
        low = _pessimistic_eval(model, _mix(opt, base_pi, ones))[:, 0, s0]
        if rule == "epsmix":
            eps = epsmix_probability(low, state.baseline_value, alpha_, state.reference)
            return MixedPlan(opt, ones, eps, eps * low + (1.0 - eps) * state.baseline_value)
        k = state.episode + 1
        go = state.budget + low >= (1.0 - alpha_) * k * state.reference
        return MixedPlan(opt, ones, go.astype(np.float64), np.where(go, low, state.baseline_value))

    def act(state: ConservativeState, obs=None, keys=None):
        mixed = plan(state)
        if keys is None:
            raise ValueError(f"learner {name!r} draws its coins from the round keys: act needs keys")
        return dataclasses.replace(mixed, policy=_sample_mixed(mixed, state.baseline_policy, np.asarray(keys))), state

    def update(state: ConservativeState, mixed: MixedPlan, trajectory, keys=None) -> ConservativeState:
        ucb = inner.update(state.ucb, mixed.policy, trajectory)
        credit = np.where(np.isnan(mixed.credit), 0.0, mixed.credit)
        return state._replace(ucb=ucb, budget=state.budget + credit, episode=state.episode + 1)

    params = {"rule": rule, "alpha": alpha, "delta": delta, "bonus": bonus, "bonus_scale": bonus_scale,
              "pessimism_scale": pessimism_scale, "stationary": stationary, "n_bisect": n_bisect}
    if name != "conservative_ucbvi":
        del params["rule"]
    return Learner(name, CONSERVATIVE_EPISODE, init, act, update, params, doc=doc, check_spec=check_spec)


def conservative_ucbvi(rule: str = "stepmix", *, alpha: float | None = None, delta: float = 0.1,
                       bonus: str = "hoeffding", bonus_scale: float = 1.0, stationary: bool = False,
                       pessimism_scale: float = 1.0, n_bisect: int = 12) -> Learner:
    r"""UCBVI made conservative with respect to a baseline policy.

    Parameters
    ----------
    rule : {"stepmix", "epsmix", "cumulative", "unconstrained"}
        How the optimistic policy is combined with the baseline (Notes).
    alpha : float in (0, 1), optional
        Allowed relative loss the learner keeps to: :math:`V \ge (1 - \alpha) V^{\pi_b}_1(s_1)`.
        Default: the environment's (``spec.alpha``, the constraint its
        violations are counted against).
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
    Learner
        Feedback ``"conservative_episode"``: runs on a
        :class:`~expertlab.mdp.ConservativeMDP` (:func:`~expertlab.mdp.conservative`)
        through :func:`expertlab.sim.run`, whose ``horizon`` counts episodes;
        the baseline (:class:`ConservativeBaseline`, from :func:`known_baseline`
        or :func:`learned_baseline`) is read from the environment
        (``spec.baseline``).  ``act`` returns a :class:`MixedPlan`; the coins
        of EpsMix and of StepMix's per-step mixture are drawn from the
        learner's round keys (:func:`sample_mixed_policy`).  State
        :class:`ConservativeState`.

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
    ``value >= (1 - alpha) reference``, i.e. with enough offline data).  The
    coins of an episode are drawn for every (stage, state) before it starts;
    an episode visits one state per stage, so the trajectories have the law
    of coins drawn along the way.

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
    >>> from expertlab import sim
    >>> from expertlab.mdp import conservative_garnet
    >>> env = conservative_garnet(seed=3)
    >>> res = sim.run(conservative_ucbvi("epsmix"), env, horizon=50, n_reps=4, seed=0)
    >>> int(res.metrics["violations"][-1].sum())
    0
    """
    return _conservative("conservative_ucbvi", rule, alpha=alpha, delta=delta, bonus=bonus,
                         bonus_scale=bonus_scale, stationary=stationary, pessimism_scale=pessimism_scale,
                         n_bisect=n_bisect, doc=conservative_ucbvi.__doc__)


def stepmix(*, alpha: float | None = None, delta: float = 0.1, bonus: str = "hoeffding", bonus_scale: float = 1.0,
            stationary: bool = False, pessimism_scale: float = 1.0, n_bisect: int = 12) -> Learner:
    """StepMix: :func:`conservative_ucbvi` (keywords as there) with ``rule="stepmix"`` (per-step mixture).

    [validated-rates]

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.mdp import conservative_garnet
    >>> res = sim.run(stepmix(alpha=0.3), conservative_garnet(seed=3), horizon=30, n_reps=2, seed=0)
    >>> res.learner, sorted(res.metrics)[:3]
    ('stepmix', ['conservative_mass', 'cumulative_violations', 'realised_regret'])
    """
    return _conservative("stepmix", "stepmix", alpha=alpha, delta=delta, bonus=bonus, bonus_scale=bonus_scale,
                         stationary=stationary, pessimism_scale=pessimism_scale, n_bisect=n_bisect,
                         doc=stepmix.__doc__)


def epsmix(*, alpha: float | None = None, delta: float = 0.1, bonus: str = "hoeffding", bonus_scale: float = 1.0,
           stationary: bool = False, pessimism_scale: float = 1.0, n_bisect: int = 12) -> Learner:
    """EpsMix: :func:`conservative_ucbvi` (keywords as there) with ``rule="epsmix"`` (whole-episode coin).

    The episode coin is drawn from the learner's round keys.

    [validated-rates]

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.mdp import conservative_garnet
    >>> res = sim.run(epsmix(alpha=0.3), conservative_garnet(seed=3), horizon=30, n_reps=2, seed=0)
    >>> res.learner, int(res.metrics["violations"].max())
    ('epsmix', 0)
    """
    return _conservative("epsmix", "epsmix", alpha=alpha, delta=delta, bonus=bonus, bonus_scale=bonus_scale,
                         stationary=stationary, pessimism_scale=pessimism_scale, n_bisect=n_bisect,
                         doc=epsmix.__doc__)
