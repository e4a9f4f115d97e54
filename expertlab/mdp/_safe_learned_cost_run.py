r"""Safe UCRL-VTR with a learned cost: a learner of the ``"noisy_cost_episode"`` environments.

:func:`safe_learned_cost_vtr` learns the transitions by value-targeted
regression (as :func:`~expertlab.mdp.safe_ucrl_vtr`) and the cost parameter by
ridge regression on the observed costs; it plays only certified actions inside
backward action sets.  It runs through :func:`expertlab.sim.run` on a
:class:`~expertlab.mdp.LearnedCostSafeMixture`, which draws the cost noise from
the counter-based generator and records violations and the exact regret
against the best safe policy.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._validation import check_float, check_int, check_open_unit
from ..sim import Learner
from ._safe_learned_cost import (_certified_action_sets, _check_cost_features, _check_safe_states,
                                 _pessimistic_costs, cost_radius)
from ._safe_linear_mixture import _known, _masked_pass, _upper_weights, _vtr_radius, _vtr_update
from ._ucrl_vtr import _sherman_morrison

__all__ = ["SafeCostState", "safe_learned_cost_vtr"]


class SafeCostState(NamedTuple):
    """The transition regression and the cost regression of every replication (leading axis ``n_reps``).

    ``inv (n_reps, d, d)``, ``b (n_reps, d)``: the value-targeted regression of the transitions;
    ``values (n_reps, H + 1, S)``: the optimistic values of the last plan (its regression targets);
    ``cost_inv (n_reps, d_c, d_c)``: :math:`\\Lambda^{-1}`; ``cost_b (n_reps, d_c)``:
    :math:`\\sum_j \\psi_j y_j`; ``n_cost_obs``: observed steps per replication; ``n_episodes``:
    episodes absorbed.  Shared constants told by the environment: ``features (d, S, A, S)``,
    ``rewards (H, S, A)``, ``cost_features (S, A, d_c)``, ``safe_states (S,)``, ``threshold``,
    ``safe_action``; and the two radii ``beta`` and ``cost_beta``, fixed from the number of
    episodes of the run.
    """

    inv: np.ndarray
    b: np.ndarray
    values: np.ndarray
    cost_inv: np.ndarray
    cost_b: np.ndarray
    n_cost_obs: int
    n_episodes: int
    features: np.ndarray
    rewards: np.ndarray
    cost_features: np.ndarray
    safe_states: np.ndarray
    threshold: float
    safe_action: int
    beta: float
    cost_beta: float


def safe_learned_cost_vtr(*, pessimistic: bool = True, reachability: bool = True, delta: float = 0.1,
                          lam: float = 1.0, cost_lam: float = 0.01, param_bound=None,
                          beta_scale: float = 1.0) -> Learner:
    r"""UCRL-VTR over backward sets of actions certified by pessimistic learned costs.

    Parameters
    ----------
    pessimistic : bool
        ``False``: the ablation that certifies with the point estimate :math:`\langle \psi, \hat\mu \rangle \le \tau`.
    reachability : bool
        ``False``: drop the reachability condition of the backward sets.
    delta : float in (0, 1)
        Split evenly between the transition and the cost confidence sets.
    lam, cost_lam : float > 0
        Ridge parameters of the two regressions.
    param_bound : float, optional
        :math:`S \ge \|\mu^\star\|_2`; by default :math:`\sqrt{d_c}` (entries of :math:`\mu^\star` in [0, 1]).
    beta_scale : float > 0
        Multiplies both radii (the guarantee holds for 1).

    Returns
    -------
    Learner
        Feedback kind ``"noisy_cost_episode"``: runs on a
        :class:`~expertlab.mdp.LearnedCostSafeMixture` through :func:`expertlab.sim.run`, which tells
        it the transition kernels :math:`\phi_i`, the rewards, the cost features :math:`\psi(s, a)`
        ``(S, A, d_c)``, the threshold :math:`\tau` (in (0, 1)), the safe action :math:`a_0`, the
        states where :math:`a_0` is known to be safe (it is always allowed there) and the scale
        :math:`\sigma` of the Gaussian cost noise, and whose trajectories carry the observed costs;
        not the mixture weight nor :math:`\mu^\star`.  State :class:`SafeCostState`; deterministic.

    Notes
    -----
    Before each episode, with :math:`\hat\mu = \Lambda^{-1} b` and the radius
    :math:`\beta_c` of :func:`~expertlab.mdp.cost_radius` (at :math:`\delta/2`,
    :math:`N = K H` with :math:`K` the number of episodes of the run,
    :math:`L = \max \|\psi\|_2`), an action is certified at
    :math:`s` when

    .. math::

        \bar c(s, a) = \langle \psi(s, a), \hat\mu \rangle + \beta_c \|\psi(s, a)\|_{\Lambda^{-1}} \le \tau,

    and :math:`a_0` is certified in the known safe states.  The certified sets
    go into :func:`~expertlab.mdp.certified_action_sets` with the upper
    confidence transition weights :math:`\theta^+` of
    :func:`~expertlab.mdp.safe_ucrl_vtr` (radius at :math:`\delta/2`), and the
    optimistic backward induction runs over the resulting sets.  After the
    episode, each step adds :math:`\psi(s_h, a_h)\psi(s_h, a_h)^\top` to
    :math:`\Lambda` (Sherman–Morrison on :math:`\Lambda^{-1}`) and
    :math:`\psi(s_h, a_h)\, y_h` to :math:`b`, and the transition statistics are
    updated as in :func:`~expertlab.mdp.ucrl_vtr`.  On the intersection of the
    two confidence events (probability at least :math:`1 - \delta`) every played
    action meets the constraint and never leads to a state without one, provided
    (an assumption here) that :math:`a_0` never leads from a safe state to an unsafe one.

    Reconstructed relative to the paper: its safety value is a projection of
    the safety parameter onto the span of the known safe actions plus a
    regularised estimate of the orthogonal part; here the whole parameter is
    estimated by ridge regression and the known safe action is simply always
    allowed in the known safe states.  Cost noise is Gaussian with known
    :math:`\sigma`.  The radii are fixed from the planned :math:`K`.

    [validated-rates]

    References
    ----------
    Shi, Liang & Shroff, "A near-optimal algorithm for safe reinforcement
    learning under instantaneous hard constraints", ICML 2023: the linear-mixture
    algorithm with an unknown safety parameter and its main theorem (zero
    violations w.h.p., regret :math:`\tilde O(d H^3 \sqrt{dK}/\Delta_c)`); numbering not checked.
    Abbasi-Yadkori, Pál & Szepesvári, "Improved algorithms for linear stochastic
    bandits", NeurIPS 2011, Thm 2 (the cost radius).

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.mdp import safe_cost_ladder
    >>> res = sim.run(safe_learned_cost_vtr(), safe_cost_ladder(4, safety_gap=0.15), horizon=20, n_reps=2, seed=0)
    >>> int(res.metrics["violations"].max())
    0
    """
    for flag, flag_name in ((pessimistic, "pessimistic"), (reachability, "reachability")):
        if not isinstance(flag, bool):
            raise TypeError(f"{flag_name} must be a bool, got {type(flag).__name__}")
    delta = check_open_unit(delta, "delta")
    lam, cost_lam = check_float(lam, "lam", positive=True), check_float(cost_lam, "cost_lam", positive=True)
    param_bound = None if param_bound is None else check_float(param_bound, "param_bound", positive=True)
    beta_scale = check_float(beta_scale, "beta_scale", positive=True)
    name = "safe_learned_cost_vtr"

    def check_spec(spec):
        """What the environment tells, checked (see ``init``)."""
        features, rewards, k = _known(spec, name)
        s_, a_ = features.shape[1:3]
        return (features, rewards, k, _check_cost_features(spec.cost_features, s_, a_),
                _check_safe_states(spec.safe_states, s_), check_open_unit(spec.threshold, "threshold"),
                check_int(spec.safe_action, "safe_action", minimum=0, maximum=a_ - 1),
                check_float(spec.noise_scale, "noise_scale", minimum=0.0))

    def init(spec, n_reps, keys=None, xp=np) -> SafeCostState:
        features, rewards, k, psi, safe, threshold, safe_action, noise_scale = check_spec(spec)
        (d, s_), h_ = features.shape[:2], rewards.shape[0]
        d_c = psi.shape[2]
        bound = math.sqrt(d_c) if param_bound is None else param_bound
        feature_bound = float(np.sqrt((psi ** 2).sum(axis=-1)).max())
        beta = beta_scale * _vtr_radius(h_, d, k, lam, delta / 2)
        cost_beta = (beta_scale * cost_radius(noise_scale, delta / 2, k * h_, d_c, cost_lam, feature_bound, bound)
                     if pessimistic else 0.0)
        return SafeCostState(np.broadcast_to(np.eye(d) / lam, (n_reps, d, d)).copy(), np.zeros((n_reps, d)),
                             np.zeros((n_reps, h_ + 1, s_)),
                             np.broadcast_to(np.eye(d_c) / cost_lam, (n_reps, d_c, d_c)).copy(),
                             np.zeros((n_reps, d_c)), 0, 0, features, rewards, psi, safe, threshold, safe_action,
                             beta, cost_beta)

    def act(state: SafeCostState, obs, keys):
        h_ = state.rewards.shape[0]
        upper = _upper_weights(state.inv, state.b, state.beta)  # theta^+
        cert = _pessimistic_costs(state.cost_features, state.cost_inv, state.cost_b, state.cost_beta) <= state.threshold
        cert[:, state.safe_states, state.safe_action] = True
        mask = _certified_action_sets(state.features, upper, cert, h_, reachability)
        q, v = _masked_pass(state.features, state.rewards, state.inv, state.b, state.beta, mask)
        return np.where(mask.any(axis=-1), q.argmax(axis=-1), state.safe_action), state._replace(values=v)

    def update(state: SafeCostState, policy, traj, keys) -> SafeCostState:
        if traj.costs is None:
            raise ValueError(f"{name} learns the cost and needs the observed costs of each step (an environment "
                             "of kind 'noisy_cost_episode')")
        inv, b = _vtr_update(state.features, state.inv, state.b, state.values, traj)
        states, actions = np.asarray(traj.states), np.asarray(traj.actions)
        z = state.cost_features[states[:, :-1], actions]  # (R, H, d_c)
        cinv = state.cost_inv
        for h in range(z.shape[1]):
            cinv = _sherman_morrison(cinv, z[:, h])
        return state._replace(inv=inv, b=b, cost_inv=cinv,
                              cost_b=state.cost_b + np.einsum("rhi,rh->ri", z, np.asarray(traj.costs)),
                              n_cost_obs=state.n_cost_obs + z.shape[1], n_episodes=state.n_episodes + 1)

    return Learner(name, "noisy_cost_episode", init, act, update,
                   {"pessimistic": pessimistic, "reachability": reachability, "delta": delta, "lam": lam,
                    "cost_lam": cost_lam, "param_bound": param_bound, "beta_scale": beta_scale},
                   doc=safe_learned_cost_vtr.__doc__, check_spec=check_spec)
