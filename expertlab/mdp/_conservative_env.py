r"""Conservative exploration as an environment of the one engine (:func:`expertlab.sim.run`).

A :class:`ConservativeMDP` is an episodic tabular MDP together with the
constraint of conservative exploration: a baseline policy
(:class:`~expertlab.mdp.ConservativeBaseline`, known or learned offline) and
the allowed relative loss :math:`\alpha`.  One step of a run is one episode
(``spec.unit == "episode"``).  Each episode, for all replications at once:

1. the learner returns a :class:`~expertlab.mdp.MixedPlan`: the greedy
   optimistic policy, the per-step mixing weight :math:`w`, the probability
   :math:`\epsilon` that the episode follows the mixture, the value it
   credits itself, and the deterministic policy it drew for the episode from
   its own keys (:func:`~expertlab.mdp.sample_mixed_policy`);
2. the environment rolls that policy out from the episode's environment keys
   (as :class:`~expertlab.mdp.EpisodicMDP` does) and evaluates the mixture
   exactly with the true model;
3. the learner folds the :class:`~expertlab.mdp.Trajectory` in.

Learner protocol for ``"conservative_episode"`` feedback
--------------------------------------------------------
``init(spec, n_reps, keys, xp)``: ``spec.horizon`` is the number of episodes
``K``; ``spec.info`` holds ``n_states``, ``episode_length``, ``rewards``
(known means, ``(H, S, A)``), ``initial_state``, ``baseline`` (the
:class:`~expertlab.mdp.ConservativeBaseline` the learner is given: its
policy, the value credited to it and the reference of the constraint) and
``alpha``.  ``act(state, None, keys) -> (MixedPlan, state)``;
``update(state, plan, trajectory, keys) -> state``.

Metrics
-------
With :math:`s_1` the initial state, :math:`V_j = \epsilon_j V^{\pi_{w_j}}_1(s_1)
+ (1 - \epsilon_j) V^{\pi_b}_1(s_1)` the exact expected value of the play of
episode :math:`j` (the played mixture, episode coin included, evaluated with
the true model), :math:`V^{\rm b}` the true value of the baseline from
:math:`s_1` (``baseline_value``) and :math:`\tau = (1 - \alpha) V^{\rm b}`:

``regret``
    :math:`\sum_{j \le k} (V^\star_1(s_1) - V_j)`.
``realised_regret``
    :math:`\sum_{j \le k} (V^\star_1(s_1) - \sum_h r_h(s^j_h, a^j_h))`.
``violations``
    Episode-wise violations: episodes :math:`j \le k` with :math:`V_j < \tau`
    (by more than :math:`10^{-9}`).
``cumulative_violations``
    Episodes :math:`j \le k` with :math:`\sum_{i \le j} V_i < j \tau`
    (by more than :math:`j \cdot 10^{-9}`).
``conservative_mass``
    The mass of baseline play :math:`\sum_{j \le k} (1 - \epsilon_j w_j)`
    (baseline episodes for EpsMix and the cumulative rule; it bounds the
    regret gap to the optimistic learner).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Mapping, NamedTuple

import numpy as np

from .._validation import check_float, check_int, check_open_unit
from ..sim._protocol import EnvSpec, Environment, Metric
from ._conservative import _evaluate
from ._conservative_policies import ConservativeBaseline, MixedPlan, _mix, mix_policies
from ._episodic import _check_policy, _check_single, _EpisodeData, _regret_metrics, _rollout
from ._models import FiniteHorizonMDP
from ._planning import backward_induction

__all__ = ["CONSERVATIVE_EPISODE", "ConservativeMDP", "conservative"]

#: Feedback kind of a :class:`ConservativeMDP`.
CONSERVATIVE_EPISODE = "conservative_episode"


class _ConservativeData(NamedTuple):
    episodes: _EpisodeData
    baseline_policy: np.ndarray  # (H, S, A), the policy the learner falls back to
    played_baseline_value: float  # its exact value from s_1 on the true model
    threshold: float  # (1 - alpha) * the true baseline value


def _count_metric(name: str, indicator) -> Metric:
    def init(n_reps, xp):
        return np.zeros(n_reps)

    return Metric(name, init, lambda acc, info, t: acc + indicator(info), lambda acc: acc)


def _cumulative_violations() -> Metric:
    def init(n_reps, xp):
        return (np.zeros(n_reps), np.zeros(n_reps))

    def update(acc, info, t):
        count, total = acc
        total = total + info["value"]
        k = t + 1
        return count + (total < k * info["threshold"] - 1e-9 * k), total

    return Metric("cumulative_violations", init, update, lambda acc: acc[0])


@dataclasses.dataclass(frozen=True, repr=False)
class ConservativeMDP(Environment):
    r"""An episodic MDP with a baseline policy and the constraint of conservative exploration.

    Build it with :func:`conservative`.  One step of a run is one episode
    (feedback ``"conservative_episode"``): the learner returns a
    :class:`~expertlab.mdp.MixedPlan` whose ``policy`` it drew from its own
    keys; the environment rolls that policy out from the episode's
    environment keys and evaluates the played mixture exactly.  The
    learner's ``spec.info`` holds ``n_states``, ``episode_length``,
    ``rewards``, ``initial_state``, ``baseline`` (the
    :class:`~expertlab.mdp.ConservativeBaseline` it is told) and ``alpha``.

    Metrics, with :math:`V_j = \epsilon_j V^{\pi_{w_j}}_1(s_1) + (1 - \epsilon_j)
    V^{\pi_b}_1(s_1)` the exact value of the play of episode :math:`j` and
    :math:`\tau = (1 - \alpha)` ``baseline_value``: ``regret``
    :math:`\sum_{j \le k} (V^\star_1(s_1) - V_j)`; ``realised_regret``
    (with the realised returns); ``violations``, the episodes with
    :math:`V_j < \tau`; ``cumulative_violations``, the episodes :math:`j`
    with :math:`\sum_{i \le j} V_i < j \tau`; ``conservative_mass``, the
    mass of baseline play :math:`\sum_{j \le k} (1 - \epsilon_j w_j)`.

    Attributes
    ----------
    model : FiniteHorizonMDP
        A single MDP; its rewards are known to the learner.
    baseline : ConservativeBaseline
        What the learner is told about the baseline (policy, credited value,
        reference of the constraint).
    alpha : float in (0, 1)
        Allowed relative loss: the constraint is :math:`V \ge (1 - \alpha) V^{\rm b}`.
    initial_state : int
    baseline_value : float
        True :math:`V^{\rm b} = V^{\pi_b}_1(s_1)` the violations are counted
        against (``baseline.reference`` unless given: pass the true value for
        a learned baseline).
    name : str
    params : mapping
    """

    model: FiniteHorizonMDP
    baseline: ConservativeBaseline
    alpha: float = 0.2
    initial_state: int = 0
    baseline_value: float | None = None
    name: str = ""
    params: Mapping | None = None

    def __post_init__(self):
        m = _check_single(self.model, "model")
        if not isinstance(self.baseline, ConservativeBaseline):
            raise TypeError(f"baseline must be a ConservativeBaseline (known_baseline or learned_baseline), got "
                            f"{type(self.baseline).__name__}")
        shape = (m.horizon, m.n_states, m.n_actions)
        if np.shape(self.baseline.policy) != shape:
            raise ValueError(f"baseline.policy has shape {np.shape(self.baseline.policy)}, the MDP needs {shape} "
                             "(H, S, A)")
        object.__setattr__(self, "alpha", check_open_unit(self.alpha, "alpha"))
        s0 = check_int(self.initial_state, "initial_state", minimum=0, maximum=m.n_states - 1)
        object.__setattr__(self, "initial_state", s0)
        v_b = self.baseline.reference if self.baseline_value is None else self.baseline_value
        v_b = check_float(v_b, "baseline_value")
        if not math.isfinite(v_b):
            raise ValueError(f"baseline_value must be finite, got {v_b}")
        object.__setattr__(self, "baseline_value", v_b)
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str, got {type(self.name).__name__}")
        if not self.name:
            object.__setattr__(self, "name", "conservative_mdp")
        if self.params is None:
            object.__setattr__(self, "params", {
                "n_states": m.n_states, "n_actions": m.n_actions, "episode_length": m.horizon,
                "initial_state": s0, "alpha": self.alpha, "baseline_value": v_b,
                "baseline_samples": int(self.baseline.n_samples)})
        elif not isinstance(self.params, Mapping):
            raise TypeError(f"params must be a mapping, got {type(self.params).__name__}")

    @property
    def spec(self) -> EnvSpec:
        """What the learner is told: sizes, episode length, known rewards, initial state, baseline, alpha."""
        m = self.model
        return EnvSpec(feedback=CONSERVATIVE_EPISODE, unit="episode", n_actions=m.n_actions,
                       info={"n_states": m.n_states, "episode_length": m.horizon, "rewards": np.asarray(m.rewards),
                             "initial_state": self.initial_state, "baseline": self.baseline, "alpha": self.alpha})

    # -- oracles --------------------------------------------------------------------
    @property
    def threshold(self) -> float:
        r""":math:`\tau = (1 - \alpha) V^{\rm b}`: an episode whose value falls below it violates the constraint."""
        return (1.0 - self.alpha) * self.baseline_value

    def optimal_value(self) -> float:
        r""":math:`V^\star_1(s_1)`, by backward induction on the true model."""
        return float(np.asarray(backward_induction(self.model).values)[0, self.initial_state])

    def played_baseline_value(self) -> float:
        r"""Exact value from :math:`s_1` of ``baseline.policy`` (the policy the learner falls back to)."""
        pi = np.asarray(self.baseline.policy, dtype=np.float64)[None]
        return float(_evaluate(self.model, pi)[0, 0, self.initial_state])

    def plan_value(self, plan: MixedPlan) -> np.ndarray:
        r"""Exact expected value from :math:`s_1` of the play ``plan``, shape ``(n_reps,)`` (coins included)."""
        base = np.asarray(self.baseline.policy, dtype=np.float64)
        v_mix = _evaluate(self.model, mix_policies(plan.optimistic, base, plan.step_weight))[:, 0, self.initial_state]
        eps = np.asarray(plan.episode_prob, dtype=np.float64)
        return eps * v_mix + (1.0 - eps) * self.played_baseline_value()

    # -- the protocol -------------------------------------------------------------------
    def reset(self, n_reps, keys, xp) -> _ConservativeData:
        p = np.asarray(self.model.transitions)
        ep = _EpisodeData(p, np.cumsum(p, axis=-1), np.asarray(self.model.rewards), self.initial_state,
                          self.optimal_value())
        return _ConservativeData(ep, np.asarray(self.baseline.policy, dtype=np.float64),
                                 self.played_baseline_value(), self.threshold)

    def step(self, data: _ConservativeData, plan, t, keys):
        if not isinstance(plan, MixedPlan):
            raise TypeError(f"a conservative learner's act must return a MixedPlan, got {type(plan).__name__}")
        if plan.policy is None:
            raise ValueError("MixedPlan.policy is None: the learner must draw the episode's policy "
                             "(expertlab.mdp.sample_mixed_policy) before the environment rolls it out")
        ep = data.episodes
        n_reps = keys.shape[0]
        h_, s_, a_ = ep.rewards.shape
        pi = _check_policy(plan.policy, n_reps, h_, s_, a_)
        opt = _check_policy(plan.optimistic, n_reps, h_, s_, a_, who="learner's optimistic")
        w = np.asarray(plan.step_weight, dtype=np.float64)
        eps = np.asarray(plan.episode_prob, dtype=np.float64)
        if w.shape != (n_reps,) or eps.shape != (n_reps,):
            raise ValueError(f"MixedPlan.step_weight and episode_prob must have shape ({n_reps},), got {w.shape} "
                             f"and {eps.shape}")
        traj = _rollout(ep.cdf, ep.rewards, pi, np.asarray(keys), ep.initial_state)
        v_mix = _evaluate(self.model, _mix(opt, data.baseline_policy, w))[:, 0, ep.initial_state]
        value = eps * v_mix + (1.0 - eps) * data.played_baseline_value
        info = {"value": value, "return": traj.rewards.sum(axis=1), "optimal_value": ep.optimal_value,
                "threshold": data.threshold, "baseline_mass": 1.0 - eps * w, "policy": pi}
        return data, traj, info

    def available_metrics(self) -> Mapping[str, Metric]:
        out = _regret_metrics()
        out["violations"] = _count_metric("violations", lambda info: info["value"] < info["threshold"] - 1e-9)
        out["cumulative_violations"] = _cumulative_violations()
        out["conservative_mass"] = _count_metric("conservative_mass", lambda info: info["baseline_mass"])
        return out


def conservative(model, baseline: ConservativeBaseline, *, alpha: float = 0.2, initial_state: int = 0,
                 baseline_value: float | None = None, name: str | None = None, params=None) -> ConservativeMDP:
    r"""An episodic MDP with a baseline and the constraint of conservative exploration, as an environment.

    Parameters
    ----------
    model : FiniteHorizonMDP
        A single MDP (no batch axes); its rewards are known to the learner.
    baseline : ConservativeBaseline
        From :func:`~expertlab.mdp.known_baseline` or
        :func:`~expertlab.mdp.learned_baseline`; the learner is told it
        (``spec.baseline``).
    alpha : float in (0, 1)
        Allowed relative loss: episode :math:`k` must keep
        :math:`V^{\pi_k}_1(s_1) \ge (1 - \alpha) V^{\pi_b}_1(s_1)`; the
        learners read it as ``spec.alpha`` unless given their own.
    initial_state : int
        Start state :math:`s_1` of every episode.
    baseline_value : float, optional
        True :math:`V^{\pi_b}_1(s_1)` of the violations (default
        ``baseline.reference``; pass the true value for a learned baseline).
    name : str, optional
        Reported as ``RunResult.environment`` (default ``"conservative_mdp"``).
    params : mapping, optional
        Reported as ``RunResult.environment_params``.

    Returns
    -------
    ConservativeMDP
        Feedback ``"conservative_episode"``, unit ``"episode"``; metrics
        ``regret``, ``realised_regret``, ``violations``,
        ``cumulative_violations``, ``conservative_mass`` (all recorded by
        default).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.mdp import conservative_garnet, stepmix
    >>> env = conservative_garnet(seed=3)           # = conservative(its MDP, its known baseline)
    >>> env2 = conservative(env.model, env.baseline, alpha=0.3)
    >>> res = sim.run(stepmix(), env2, horizon=30, n_reps=3, seed=1)
    >>> res.metrics["regret"].shape, int(res.metrics["violations"].max())
    ((13, 3), 0)
    """
    return ConservativeMDP(model, baseline, alpha, initial_state, baseline_value, "" if name is None else name, params)
