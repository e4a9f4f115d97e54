r"""Episodic MDPs as environments of the one engine (:func:`expertlab.sim.run`).

An episodic model (:class:`~expertlab.mdp.FiniteHorizonMDP`, or an
:class:`~expertlab.mdp.EpisodicLinearMixture`) *is* an environment: one step
of a run is one episode, and ``sim.run``'s ``horizon`` counts episodes
(``spec.unit == "episode"``).  Every episode starts in state 0;
:func:`episodic` wraps a model to start elsewhere (and to report a name and
settings of its own, as the registered constructors do).  Each episode, for
all replications at once:

1. the learner returns the deterministic Markov policy of the coming episode,
   an ``int64`` array ``(n_reps, H, S)`` (``H`` the episode length);
2. the environment rolls it out from the episode's environment keys (draw
   ``h`` of replication ``r``'s key picks the state after stage ``h`` by the
   inverse CDF, :func:`sample_episodes`), so the transitions a replication
   sees do not depend on its batch, its block or the learner's randomness;
3. the learner folds the :class:`Trajectory` in.

Learner protocol for ``"tabular_episode"`` and ``"linear_mixture_episode"`` feedback
------------------------------------------------------------------------------------
``init(spec, n_reps, keys, xp)``: ``spec.horizon`` is the number of episodes
``K`` of the run; ``spec.info`` holds what the learner may know:
``n_states``, ``episode_length`` (``H``), ``rewards`` (the known mean
rewards, ``(H, S, A)``), ``initial_state``, and for a linear mixture the
base kernels ``features`` ``(d, S, A, S)`` (the mixture weight is unknown);
``spec.n_actions`` is ``A``.
``act(state, None, keys) -> (policy, state)``;
``update(state, policy, trajectory, keys) -> state``.  The two feedback kinds
differ so that a tabular learner (:func:`~expertlab.mdp.ucbvi`) is not run
on a linear mixture by mistake, nor the reverse; to run UCBVI on a mixture,
pass ``mixture.to_finite_horizon()``.

Metrics
-------
With :math:`s_1` the initial state and :math:`\pi_j` the policy of episode :math:`j`:

``regret``
    The exact expected regret
    :math:`\sum_{j \le k} (V^\star_1(s_1) - V^{\pi_j}_1(s_1))`, every policy
    evaluated with the true model (:func:`evaluate_markov_policy`); non-negative.
``realised_regret``
    :math:`\sum_{j \le k} (V^\star_1(s_1) - \sum_h r_h(s^j_h, a^j_h))`: the
    optimal value minus the realised returns (same expectation).

The rewards are deterministic (the known means), so the randomness of a
return is that of the transitions.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from .._random import uniform
from .._repr import short_repr
from .._validation import check_int
from ._checks import check_keys, int_array
from ..sim._protocol import EnvSpec, Environment, Metric
from ._models import FiniteHorizonMDP
from ._planning import backward_induction

__all__ = ["TABULAR_EPISODE", "LINEAR_MIXTURE_EPISODE", "EpisodicMDP", "Trajectory", "episodic",
           "evaluate_markov_policy", "sample_episodes", "n_episodes_of", "episode_sizes"]

#: Feedback kind of a tabular episodic MDP (:class:`~expertlab.mdp.FiniteHorizonMDP`).
TABULAR_EPISODE = "tabular_episode"
#: Feedback kind of an episodic linear mixture (:class:`~expertlab.mdp.EpisodicLinearMixture`).
LINEAR_MIXTURE_EPISODE = "linear_mixture_episode"


@short_repr
class Trajectory(NamedTuple):
    """One episode of every replication: what an episodic learner is told after it.

    Attributes
    ----------
    states : ndarray of int, shape (n_reps, H + 1)
        ``states[:, 0]`` is the initial state.
    actions : ndarray of int, shape (n_reps, H)
    rewards : ndarray, shape (n_reps, H)
    """

    states: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray


class _EpisodeData(NamedTuple):
    """What ``reset`` precomputes once per run (the environment state; nothing in it changes)."""

    transitions: np.ndarray  # (H, S, A, S)
    cdf: np.ndarray  # (H, S, A, S), cumulative over the last axis
    rewards: np.ndarray  # (H, S, A)
    initial_state: int
    optimal_value: float


def _check_single(mdp, name: str = "mdp") -> FiniteHorizonMDP:
    if not isinstance(mdp, FiniteHorizonMDP):
        raise TypeError(f"{name} must be a FiniteHorizonMDP, got {type(mdp).__name__}")
    if mdp.batch_shape != ():
        raise ValueError(f"{name} must be a single MDP (no batch axes) to be run or evaluated, got batch shape "
                         f"{mdp.batch_shape}; run each MDP of the batch separately")
    return mdp


def _is_mixture(model) -> bool:
    from ._ucrl_vtr import EpisodicLinearMixture

    return isinstance(model, EpisodicLinearMixture)


def _policy_values(p, r, pi) -> np.ndarray:
    """``V^pi_h(s)`` of deterministic policies ``pi (n_reps, H, S)``; shape ``(n_reps, H + 1, S)``."""
    h_, s_ = p.shape[0], p.shape[1]
    idx = np.arange(s_)
    v = np.zeros((pi.shape[0], h_ + 1, s_))
    for h in range(h_ - 1, -1, -1):
        a = pi[:, h]  # (R, S)
        p_pi = p[h][idx[None, :], a]  # (R, S, S)
        v[:, h] = r[h][idx[None, :], a] + np.einsum("rst,rt->rs", p_pi, v[:, h + 1])
    return v


def _check_policy(policy, n_reps, h_, s_, a_, who="learner") -> np.ndarray:
    pi = np.asarray(policy)
    if pi.ndim != 3 or pi.shape != (n_reps, h_, s_) or not np.issubdtype(pi.dtype, np.integer):
        raise ValueError(f"the {who} returned a policy of shape {pi.shape} and dtype {pi.dtype}, expected an "
                         f"integer array of shape {(n_reps, h_, s_)} (n_reps, H, S)")
    if pi.size and (pi.min() < 0 or pi.max() >= a_):
        raise ValueError(f"the {who}'s policy must hold actions in [0, {a_ - 1}]")
    return pi


def evaluate_markov_policy(mdp: FiniteHorizonMDP, policy) -> np.ndarray:
    r"""Exact values of deterministic Markov policies, one per replication, by backward induction.

    Parameters
    ----------
    mdp : FiniteHorizonMDP
        A single MDP (no batch axes).
    policy : integer array, shape (n_reps, H, S)

    Returns
    -------
    ndarray, shape (n_reps, H + 1, S)
        :math:`V^\pi_h(s)`, with :math:`V^\pi_H = 0`.

    Notes
    -----
    :math:`V^\pi_h(s) = r_h(s, \pi_h(s)) + \sum_t P_h(t | s, \pi_h(s)) V^\pi_{h+1}(t)`.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> m = FiniteHorizonMDP.stationary(p, np.array([[0.0, 0.0], [1.0, 1.0]]), 2)
    >>> evaluate_markov_policy(m, np.array([[[1, 0], [0, 0]]]))[0, 0]
    array([1., 2.])
    """
    mdp = _check_single(mdp)
    h_, s_ = mdp.horizon, mdp.n_states
    pi = np.asarray(policy)
    if pi.ndim != 3 or pi.shape[1:] != (h_, s_) or not np.issubdtype(pi.dtype, np.integer):
        raise ValueError(f"policy must be an integer array of shape (n_reps, {h_}, {s_}), got "
                         f"{pi.dtype} {pi.shape}")
    if pi.size and (pi.min() < 0 or pi.max() >= mdp.n_actions):
        raise ValueError(f"policy must hold actions in [0, {mdp.n_actions - 1}]")
    return _policy_values(np.asarray(mdp.transitions), np.asarray(mdp.rewards), pi)


def _rollout(cdf, rew, policy, keys, initial_state):
    n_reps = keys.shape[0]
    h_, s_ = cdf.shape[0], cdf.shape[1]
    rows = np.arange(n_reps)
    states = np.empty((n_reps, h_ + 1), dtype=np.int64)
    actions = np.empty((n_reps, h_), dtype=np.int64)
    rewards = np.empty((n_reps, h_))
    states[:, 0] = initial_state
    for h in range(h_):
        s = states[:, h]
        a = policy[rows, h, s]
        actions[:, h] = a
        rewards[:, h] = rew[h, s, a]
        u = uniform(keys, np.full(n_reps, h, dtype=np.uint64))
        nxt = (cdf[h, s, a] < u[:, None]).sum(axis=1)
        states[:, h + 1] = np.minimum(nxt, s_ - 1)
    return Trajectory(states, actions, rewards)


def sample_episodes(mdp: FiniteHorizonMDP, policy, keys, initial_state: int):
    r"""One episode of every replication under ``policy``, from the counter-based generator.

    Parameters
    ----------
    mdp : FiniteHorizonMDP
    policy : integer array, shape (n_reps, H, S)
    keys : uint64 array, shape (n_reps,)
        Episode keys; draw ``h`` of key ``keys[r]`` picks the state after stage ``h``.
    initial_state : int

    Returns
    -------
    Trajectory
        ``(states (n_reps, H + 1), actions (n_reps, H), rewards (n_reps, H))``.

    Raises
    ------
    TypeError
        If ``mdp`` is not a :class:`FiniteHorizonMDP`, ``policy`` is not an
        integer array or ``keys`` does not hold integers.
    ValueError
        If ``mdp`` has batch axes, ``policy`` has the wrong shape or an
        action outside ``[0, A - 1]``, ``keys`` does not have one key per
        replication, or ``initial_state`` is not a state.

    Notes
    -----
    The next state is the inverse CDF of :math:`P_h(\cdot | s_h, a_h)` at the
    uniform :math:`u_{r,h}`: the number of cumulative probabilities strictly
    below :math:`u` (capped at :math:`S - 1` against rounding).  The episodic
    environments (:class:`EpisodicMDP`) roll out every episode this way from
    the engine's environment keys.

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab.sim import replication_keys
    >>> p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> m = FiniteHorizonMDP.stationary(p, np.array([[0.0, 0.0], [1.0, 1.0]]), 3)
    >>> keys, _ = replication_keys(0, 0, 2)
    >>> sample_episodes(m, np.ones((2, 3, 2), dtype=np.int64), keys, 0).states
    array([[0, 1, 1, 1],
           [0, 1, 1, 1]])
    """
    mdp = _check_single(mdp)
    h_, s_, a_ = mdp.horizon, mdp.n_states, mdp.n_actions
    pi = int_array(policy, "policy", shape=("n_reps", h_, s_), low=0, high=a_ - 1)
    keys = check_keys(keys, "keys", pi.shape[0])
    s0 = check_int(initial_state, "initial_state", minimum=0, maximum=s_ - 1)
    p = np.asarray(mdp.transitions)
    return _rollout(np.cumsum(p, axis=-1), np.asarray(mdp.rewards), pi, keys, s0)


def n_episodes_of(spec: EnvSpec) -> int:
    """The number of episodes ``K`` a learner is initialised for: ``spec.horizon`` of the run."""
    if spec.horizon is None:
        raise ValueError("spec.horizon (the number of episodes) is None: an episodic learner needs the run's "
                         "length; sim.run fills it in (or pass dataclasses.replace(env.spec, horizon=K))")
    return int(spec.horizon)


def episode_sizes(spec: EnvSpec, who: str) -> tuple:
    """``(H, S, A, rewards)`` of an episodic ``spec``, checked: the known mean rewards ``(H, S, A)`` in [0, 1]."""
    try:
        h_, s_, r = int(spec.episode_length), int(spec.n_states), np.asarray(spec.rewards, dtype=np.float64)
    except AttributeError as exc:
        raise ValueError(f"{who} runs on an episodic MDP (spec.episode_length, n_states, rewards): {exc}") from None
    a_ = int(spec.n_actions)
    if r.shape != (h_, s_, a_):
        raise ValueError(f"spec.rewards must have shape (H, S, A) = {(h_, s_, a_)}, got {r.shape}")
    if not np.all(np.isfinite(r)) or r.min() < 0.0 or r.max() > 1.0:
        raise ValueError(f"{who} needs rewards in [0, 1]")
    return h_, s_, a_, r


# ---------------------------------------------------------------------------
# the environment


def _sum_metric(name: str, update: Callable) -> Metric:
    def init(n_reps, xp):
        return np.zeros(n_reps)

    return Metric(name, init, lambda acc, info, t: acc + update(info), lambda acc: acc)


def _regret_metrics() -> dict:
    return {
        "regret": _sum_metric("regret", lambda info: info["optimal_value"] - info["value"]),
        "realised_regret": _sum_metric("realised_regret", lambda info: info["optimal_value"] - info["return"]),
    }


@dataclasses.dataclass(frozen=True, repr=False)
class EpisodicMDP(Environment):
    r"""An episodic MDP as an environment: one episode per step of :func:`expertlab.sim.run`.

    Build it with :func:`episodic` (or run a model directly: a
    :class:`~expertlab.mdp.FiniteHorizonMDP` or an
    :class:`~expertlab.mdp.EpisodicLinearMixture` is this environment with
    initial state 0).  Each episode the learner returns an ``int64`` policy
    ``(n_reps, H, S)``; the environment rolls it out for every replication
    from the episode's environment keys (:func:`sample_episodes`) and returns
    the :class:`Trajectory`.

    The learner's ``spec`` (feedback ``"tabular_episode"``, or
    ``"linear_mixture_episode"`` for a linear mixture; unit ``"episode"``;
    ``spec.horizon`` the number of episodes ``K``) holds in ``spec.info``:
    ``n_states``, ``episode_length`` (``H``), ``rewards`` (the known mean
    rewards ``(H, S, A)``), ``initial_state`` and, for a linear mixture, the
    base kernels ``features`` ``(d, S, A, S)`` (not the weight).

    Metrics, with :math:`\pi_j` the policy of episode :math:`j`:
    ``regret``, the exact expected regret
    :math:`\sum_{j \le k} (V^\star_1(s_1) - V^{\pi_j}_1(s_1))` (every policy
    evaluated with the true model, :func:`evaluate_markov_policy`), and
    ``realised_regret``,
    :math:`\sum_{j \le k} (V^\star_1(s_1) - \sum_h r_h(s^j_h, a^j_h))`.

    Attributes
    ----------
    model : FiniteHorizonMDP or EpisodicLinearMixture
        A single model (no batch axes).  Its rewards are the learner's known
        mean rewards and also the realised ones.
    initial_state : int
        Start state :math:`s_1` of every episode.
    name : str
        Reported in results (default: the model's kind).
    params : mapping
        Settings reported in results (default: the sizes and the initial state).
    """

    model: Any
    initial_state: int = 0
    name: str = ""
    params: Mapping[str, Any] | None = None

    #: Metrics recorded when ``sim.run`` is given none.
    default_metrics = ("regret", "realised_regret")

    def __post_init__(self):
        if _is_mixture(self.model):
            tab = self.model.to_finite_horizon()
            kind, extra = "linear_mixture", {"dim": self.model.dim}
        else:
            tab = _check_single(self.model, "model")
            kind, extra = "finite_horizon_mdp", {}
        s0 = check_int(self.initial_state, "initial_state", minimum=0, maximum=tab.n_states - 1)
        object.__setattr__(self, "initial_state", s0)
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str, got {type(self.name).__name__}")
        if not self.name:
            object.__setattr__(self, "name", kind)
        if self.params is None:
            object.__setattr__(self, "params", {"n_states": tab.n_states, "n_actions": tab.n_actions,
                                                "episode_length": tab.horizon, "initial_state": s0, **extra})
        elif not isinstance(self.params, Mapping):
            raise TypeError(f"params must be a mapping, got {type(self.params).__name__}")

    # -- what the learner may know ------------------------------------------------
    def tabular(self) -> FiniteHorizonMDP:
        """The tabular model (a linear mixture's kernel formed at every stage)."""
        return self.model.to_finite_horizon() if _is_mixture(self.model) else self.model

    @property
    def feedback(self) -> str:
        """``"linear_mixture_episode"`` for a linear mixture, else ``"tabular_episode"``."""
        return LINEAR_MIXTURE_EPISODE if _is_mixture(self.model) else TABULAR_EPISODE

    def _info(self) -> dict:
        m = self.model
        r = np.asarray(m.rewards)
        info = {"n_states": int(r.shape[1]), "episode_length": int(r.shape[0]), "rewards": r,
                "initial_state": self.initial_state}
        if _is_mixture(m):
            info["features"] = np.asarray(m.features)
        return info

    @property
    def spec(self) -> EnvSpec:
        """What the learner is told: sizes, episode length, known rewards, initial state (and base kernels)."""
        return EnvSpec(feedback=self.feedback, unit="episode", n_actions=int(np.asarray(self.model.rewards).shape[2]),
                       info=self._info())

    # -- oracles ------------------------------------------------------------------
    def optimal_value(self) -> float:
        r""":math:`V^\star_1(s_1)`, by backward induction on the true model."""
        return float(np.asarray(backward_induction(self.tabular()).values)[0, self.initial_state])

    def policy_value(self, policy) -> np.ndarray:
        r""":math:`V^{\pi}_1(s_1)` of deterministic policies ``(n_reps, H, S)``, shape ``(n_reps,)``."""
        return evaluate_markov_policy(self.tabular(), policy)[:, 0, self.initial_state]

    # -- the protocol ---------------------------------------------------------------
    def reset(self, n_reps, keys, xp) -> _EpisodeData:
        m = self.tabular()
        p = np.asarray(m.transitions)
        return _EpisodeData(p, np.cumsum(p, axis=-1), np.asarray(m.rewards), self.initial_state,
                            self.optimal_value())

    def _roll(self, data: _EpisodeData, policy, keys):
        h_, s_, a_ = data.rewards.shape
        pi = _check_policy(policy, keys.shape[0], h_, s_, a_)
        return pi, _rollout(data.cdf, data.rewards, pi, np.asarray(keys), data.initial_state)

    def step(self, data: _EpisodeData, policy, t, keys):
        pi, traj = self._roll(data, policy, keys)
        value = _policy_values(data.transitions, data.rewards, pi)[:, 0, data.initial_state]
        info = {"value": value, "return": traj.rewards.sum(axis=1), "optimal_value": data.optimal_value,
                "policy": pi}
        return data, traj, info

    def available_metrics(self) -> Mapping[str, Metric]:
        return _regret_metrics()


def episodic(model, initial_state: int = 0, *, name: str | None = None, params=None) -> EpisodicMDP:
    r"""An episodic model as an environment of :func:`expertlab.sim.run`, starting in ``initial_state``.

    A :class:`~expertlab.mdp.FiniteHorizonMDP` or an
    :class:`~expertlab.mdp.EpisodicLinearMixture` can be run as it is (it
    starts every episode in state 0); wrap it with this function to start
    elsewhere, or to report a name and settings of its own.

    Parameters
    ----------
    model : FiniteHorizonMDP or EpisodicLinearMixture
        A single model (no batch axes).
    initial_state : int
        Start state of every episode.
    name : str, optional
        Reported as ``RunResult.environment``.
    params : mapping, optional
        Reported as ``RunResult.environment_params`` (JSON data, for sweeps).

    Returns
    -------
    EpisodicMDP
        Feedback ``"tabular_episode"`` (or ``"linear_mixture_episode"``), unit
        ``"episode"``; metrics ``regret`` and ``realised_regret``.

    Examples
    --------
    >>> import numpy as np
    >>> from expertlab import sim
    >>> from expertlab.mdp import FiniteHorizonMDP, ucbvi
    >>> p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]])
    >>> m = FiniteHorizonMDP.stationary(p, np.array([[0.0, 0.0], [1.0, 1.0]]), 3)
    >>> env = episodic(m, initial_state=1)
    >>> env.spec.feedback, env.spec.unit, env.spec.episode_length, env.spec.initial_state
    ('tabular_episode', 'episode', 3, 1)
    >>> res = sim.run(ucbvi(), env, horizon=20, n_reps=3, seed=0)
    >>> res.unit, env.optimal_value(), res.metrics["regret"][-1].tolist()   # state 1 pays 1 forever
    ('episode', 3.0, [0.0, 0.0, 0.0])
    """
    return EpisodicMDP(model, initial_state, "" if name is None else name, params)
