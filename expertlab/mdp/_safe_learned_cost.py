r"""Safe linear mixtures whose cost is linear in an unknown parameter: model, ladder instance, certification.

A :class:`LearnedCostSafeMixture` is an episodic linear mixture whose cost
:math:`c(s, a) = \langle \psi(s, a), \mu^\star \rangle` has known features
:math:`\psi` and an unknown parameter :math:`\mu^\star`; the learner sees the
cost of every step it plays with Gaussian noise of known scale.  It is an
environment of :func:`expertlab.sim.run` with feedback kind
``"noisy_cost_episode"``: the protocol of the ``"safe_episode"`` environments
(:class:`~expertlab.mdp.SafeLinearMixture`) with the observed costs
``(n_reps, H)`` in the ``costs`` of the :class:`~expertlab.mdp.SafeTrajectory`,
and the same metrics ``regret`` (exact, against the best policy within the true
backward safe sets) and ``violations`` (played steps with true cost above the
threshold).  :func:`pessimistic_costs` turns a ridge estimate into upper
confidence costs, :func:`certified_action_sets` builds the backward action sets
from the certified actions, and :func:`safe_cost_ladder` is an instance on which
the safety gap :math:`\Delta_c` sets how long certification of the best safe
action takes.  The learner is :func:`~expertlab.mdp.safe_learned_cost_vtr`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._random import stream_key, uniform
from .._validation import check_array_size, check_float, check_int, check_open_unit
from ..sim import EnvSpec
from ._checks import bool_array, check_flag, check_keys, real_array
from ._safe_linear_mixture import SafeLinearMixture, SafeTrajectory, _SafeEpisodes
from ._ucrl_vtr import EpisodicLinearMixture, _check_features

__all__ = ["LearnedCostSafeMixture", "safe_cost_ladder", "pessimistic_costs", "certified_action_sets",
           "cost_radius", "cost_noise"]

#: Salt of the cost-noise stream (disjoint from the transition uniforms of the same episode key).
COST_STREAM = np.uint64(0x7F4A7C159E3779B9)


def cost_noise(keys, horizon: int) -> np.ndarray:
    """Standard normal draws ``(n_reps, horizon)`` from episode keys, by Box–Muller on the cost stream.

    Draw ``h`` uses the uniforms ``2h`` and ``2h + 1`` of ``stream_key(key, COST_STREAM)``, so the
    noise of an episode is disjoint from its transition uniforms.

    Raises
    ------
    TypeError
        If ``keys`` does not hold integers or ``horizon`` is not an integer.
    ValueError
        If ``keys`` is not one-dimensional or holds a negative integer, or ``horizon < 1``.

    Examples
    --------
    >>> import numpy as np
    >>> cost_noise(np.arange(3, dtype=np.uint64), 4).shape
    (3, 4)
    """
    keys = check_keys(keys, "keys")
    horizon = check_int(horizon, "horizon")
    n_reps = keys.shape[0]
    ck = stream_key(keys, np.full(n_reps, COST_STREAM, dtype=np.uint64))
    j = np.arange(horizon, dtype=np.uint64)
    u1 = uniform(ck[:, None], 2 * j[None, :])
    u2 = uniform(ck[:, None], 2 * j[None, :] + np.uint64(1))
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def _check_cost_features(cost_features, n_states: int, n_actions: int) -> np.ndarray:
    psi = real_array(cost_features, "cost_features", finite=False)
    if psi.ndim != 3 or psi.shape[:2] != (n_states, n_actions) or psi.shape[2] < 1:
        raise ValueError(f"cost_features must have shape ({n_states}, {n_actions}, d_c), got {psi.shape}")
    if not np.all(np.isfinite(psi)):
        raise ValueError("cost_features must be finite")
    return psi


def _check_safe_states(safe_states, n_states: int) -> np.ndarray:
    m = np.asarray(safe_states)
    if m.shape != (n_states,) or m.dtype != np.bool_:
        raise ValueError(f"safe_states must be a boolean array of shape ({n_states},), got {m.dtype} {m.shape}")
    return m


@dataclasses.dataclass(frozen=True, repr=False, eq=False)
class LearnedCostSafeMixture(_SafeEpisodes):
    r"""An episodic linear mixture with a cost linear in an unknown parameter and a known safe action (an environment).

    Parameters
    ----------
    mixture : EpisodicLinearMixture
        Transitions :math:`P_\theta = \sum_i \theta_i \phi_i` (``theta`` unknown to the learner) and rewards.
    cost_features : ndarray, shape (S, A, d_c)
        Known :math:`\psi(s, a)`.
    cost_param : ndarray, shape (d_c,)
        Unknown :math:`\mu^\star`; the costs :math:`\langle \psi(s, a), \mu^\star \rangle` must lie in [0, 1].
    threshold : float in (0, 1)
        :math:`\tau`; a step with :math:`c(s_h, a_h) > \tau` is a violation.
    safe_action : int
        :math:`a_0`, known to satisfy :math:`c(s, a_0) \le \tau - \Delta_c` in the safe states.
    safety_gap : float > 0
        :math:`\Delta_c`.
    safe_states : ndarray of bool, shape (S,)
        The states where :math:`a_0` is known to be safe (told to the learner).
    noise_scale : float >= 0
        :math:`\sigma`: an observed cost is :math:`c(s_h, a_h) + \sigma \varepsilon_h`,
        :math:`\varepsilon_h \sim N(0, 1)`.
    initial_state : int
        Start state :math:`s_1` of every episode; it must have a safe action.

    Notes
    -----
    An environment of :func:`expertlab.sim.run` with feedback kind
    ``"noisy_cost_episode"`` and unit ``"episode"``: the protocol of
    :class:`~expertlab.mdp.SafeLinearMixture`, except that ``spec`` tells the
    ``cost_features``, the ``safe_states`` and the ``noise_scale`` instead of
    the costs, and the :class:`~expertlab.mdp.SafeTrajectory` of each episode
    carries the observed costs.  The transitions of an episode are those of
    :class:`~expertlab.mdp.SafeLinearMixture` (the uniforms of the
    environment's round key); the noise :math:`\varepsilon_h` is
    :func:`cost_noise` of the same key (a salted stream).  Metrics ``regret``
    (exact, against the best policy within the true backward safe sets) and
    ``violations`` (played steps with true cost :math:`c(s_h, a_h) > \tau`,
    cumulative).

    Examples
    --------
    >>> m = safe_cost_ladder(4, safety_gap=0.15)
    >>> m.spec.feedback, m.spec.unit, round(m.optimal_safe_value, 4)
    ('noisy_cost_episode', 'episode', 1.0)
    """

    mixture: EpisodicLinearMixture
    cost_features: np.ndarray
    cost_param: np.ndarray
    threshold: float
    safe_action: int
    safety_gap: float
    safe_states: np.ndarray
    noise_scale: float
    initial_state: int = 0

    name = "learned_cost_safe_mixture"

    def __post_init__(self):
        if not isinstance(self.mixture, EpisodicLinearMixture):
            raise TypeError(f"mixture must be an EpisodicLinearMixture, got {type(self.mixture).__name__}")
        s_, a_ = self.mixture.features.shape[1:3]
        psi = _check_cost_features(self.cost_features, s_, a_)
        mu = real_array(self.cost_param, "cost_param", finite=False)
        if mu.shape != (psi.shape[2],) or not np.all(np.isfinite(mu)):
            raise ValueError(f"cost_param must be a finite array of shape ({psi.shape[2]},), got {mu.shape}")
        c = psi @ mu
        if c.min() < 0.0 or c.max() > 1.0:
            raise ValueError(f"the costs <cost_features, cost_param> must lie in [0, 1], got range "
                             f"[{c.min():.4g}, {c.max():.4g}]")
        check_open_unit(self.threshold, "threshold")
        check_int(self.safe_action, "safe_action", minimum=0, maximum=a_ - 1)
        check_float(self.safety_gap, "safety_gap", positive=True)
        safe = _check_safe_states(self.safe_states, s_)
        check_float(self.noise_scale, "noise_scale", minimum=0.0)
        if np.any(c[safe, self.safe_action] > self.threshold - self.safety_gap + 1e-12):
            raise ValueError("the safe action must cost at most threshold - safety_gap in every safe state")
        self._check_start()

    @property
    def features(self) -> np.ndarray:
        """The transition kernels, shape ``(d, S, A, S)``."""
        return self.mixture.features

    @property
    def costs(self) -> np.ndarray:
        r"""The true costs :math:`\langle \psi(s, a), \mu^\star \rangle`, shape ``(S, A)``."""
        return np.asarray(self.cost_features, dtype=np.float64) @ np.asarray(self.cost_param, dtype=np.float64)

    @property
    def true_costs(self) -> np.ndarray:
        """The costs that define a violation, shape ``(S, A)`` (:attr:`costs`, unknown to the learner)."""
        return self.costs

    def to_known_cost(self) -> SafeLinearMixture:
        """The same problem with the cost revealed (a :class:`SafeLinearMixture`)."""
        return SafeLinearMixture(self.mixture, self.costs, self.threshold, self.safe_action, self.safety_gap,
                                 self.initial_state)

    @property
    def params(self):
        return {"n_states": int(self.mixture.features.shape[1]), "n_actions": int(self.mixture.features.shape[2]),
                "dim": int(self.mixture.dim), "cost_dim": int(np.shape(self.cost_features)[2]),
                "episode_length": int(self.mixture.horizon), "threshold": float(self.threshold),
                "safe_action": int(self.safe_action), "safety_gap": float(self.safety_gap),
                "noise_scale": float(self.noise_scale), "initial_state": int(self.initial_state)}

    @property
    def spec(self) -> EnvSpec:
        return self._spec("noisy_cost_episode", cost_features=np.asarray(self.cost_features, dtype=np.float64),
                          safe_states=np.asarray(self.safe_states, dtype=bool), noise_scale=float(self.noise_scale))

    def step(self, env_state, policy, t, keys):
        """Roll ``policy`` out for one episode; the trajectory carries the observed (noisy) costs."""
        policy, keys, states, actions, rewards = self._rollout(policy, keys)
        observed = self.costs[states[:, :-1], actions] + float(self.noise_scale) * cost_noise(keys, actions.shape[1])
        info = {"policy": policy, "states": states, "actions": actions, "rewards": rewards, "costs": observed}
        return env_state, SafeTrajectory(states, actions, rewards, observed), info


def safe_cost_ladder(horizon: int = 4, *, safety_gap: float = 0.1, threshold: float = 0.6, p_unsafe: float = 0.5,
                     rung_rewards=(1.0, 0.8, 0.5, 0.2), noise_scale: float = 0.05) -> LearnedCostSafeMixture:
    r"""A ladder of four actions whose costs rise linearly past the threshold; :math:`d = 2`, :math:`d_c = 3`.

    Parameters
    ----------
    horizon : int >= 2
    safety_gap : float
        :math:`\Delta_c \in (0, \min(\tau / 3, 1 - \tau)]`.
    threshold : float in (0, 1)
        :math:`\tau`.
    p_unsafe : float in (0, 1)
        :math:`\theta = (p, 1 - p)`: the two upper rungs lead to the unsafe state with probability :math:`p`.
    rung_rewards : sequence of 4 floats in [0, 1]
        Rewards of the rungs from the top (:math:`t = 1`) down to :math:`a_0` (:math:`t = 0`).
    noise_scale : float >= 0
        :math:`\sigma` of the cost observations.

    Returns
    -------
    LearnedCostSafeMixture

    Notes
    -----
    States: 0 ladder (start), 1 calibration, 2 unsafe (absorbing, every action
    costs 1).  Action :math:`j` at the ladder is the rung
    :math:`t_j = (3 - j)/3` (actions are indexed from the top down, so the safe
    action :math:`a_0` is action 3 and ``np.argmax`` breaks ties toward the higher rung), with

    .. math::

        \psi(0, a) = (1 - t)\,\psi(0, a_0) + t\,\psi(0, a_{\mathrm{top}}), \quad
        \psi(0, a_0) = (1, 0, 0),\ \psi(0, a_{\mathrm{top}}) = (1, 1, 0), \quad
        \mu^\star = (\tau - \Delta_c,\ 2\Delta_c,\ 1),

    so :math:`c(0, t) = \tau - \Delta_c + 2 t \Delta_c`: the rungs cost
    :math:`\tau - \Delta_c, \tau - \Delta_c/3, \tau + \Delta_c/3, \tau + \Delta_c`.  The best
    safe rung is :math:`t = 1/3`, with slack :math:`\Delta_c / 3`.  At the
    calibration state :math:`\psi(1, a_0) = (0, 1, 0)` (cost :math:`2\Delta_c \le \tau - \Delta_c`)
    and the other actions have :math:`\psi = (1, 1, 0)` (cost :math:`\tau + \Delta_c`); in the
    unsafe state :math:`\psi = (0, 0, 1)`.  Kernel :math:`\phi_1` sends the
    upper rungs to the unsafe state, :math:`\phi_2` to the calibration state;
    under both the lower rungs go to the calibration state and it goes back to
    the ladder, so a safe episode alternates ladder, calibration, ladder, ...
    Rewards: ``rung_rewards`` at the ladder, 0 elsewhere.  The two safe states
    are the ones told to the learner.

    *Certification time.*  Until the rung :math:`t = 1/3` is certified, a safe
    learner plays :math:`a_0` at both safe states, so after :math:`k` episodes
    (:math:`n = kH/2` visits of each, :math:`H` even)
    :math:`\Lambda = \mathrm{diag}(\lambda_c + n, \lambda_c + n, \lambda_c)` and :math:`\psi = (1, 1/3, 0)` has
    :math:`\|\psi\|^2_{\Lambda^{-1}} = \tfrac{10}{9}/(\lambda_c + n)`.
    The rung is certified once
    :math:`\langle \psi, \hat\mu - \mu^\star \rangle + \beta_c \|\psi\|_{\Lambda^{-1}} \le \Delta_c / 3`;
    the error term is :math:`\sigma \|\psi\|_{\Lambda^{-1}} Z_n` with :math:`Z_n` of order one, so

    .. math::

        k_{\mathrm{cert}} \approx \frac{2}{H}\Big(\frac{10\, (\beta_c + \sigma Z)^2}{\Delta_c^2} - \lambda_c\Big),
        \qquad
        \mathrm{Regret}(K) \approx g \tfrac{H}{2} k_{\mathrm{cert}}
        \approx \frac{10\, g\, (\beta_c + \sigma Z)^2}{\Delta_c^2}
        \quad (K \ge k_{\mathrm{cert}}),

    with :math:`g` the reward gap between the rungs :math:`t = 1/3` and :math:`t = 0`
    (0.3 by default); on the good event :math:`|Z| \le \beta_c / \sigma`, so
    :math:`k_{\mathrm{cert}} \le 80 \beta_c^2 / (H \Delta_c^2)`.  For Gaussian noise
    the law of :math:`k_{\mathrm{cert}} \Delta_c^2` does not depend on :math:`\Delta_c`
    (Brownian scaling), up to the ridge term :math:`\lambda_c` and the rounding to
    whole episodes: the regret at a fixed :math:`K` past certification scales as
    :math:`\Delta_c^{-2}`, inside the :math:`\sqrt K / \Delta_c` envelope of the paper's
    bound (:math:`\min(K, C\Delta_c^{-2}) \le \sqrt{CK}/\Delta_c`).

    Examples
    --------
    >>> m = safe_cost_ladder(4, safety_gap=0.15, threshold=0.6)
    >>> m.costs[0].round(2).tolist()
    [0.75, 0.65, 0.55, 0.45]
    """
    horizon = check_int(horizon, "horizon", minimum=2)
    threshold = check_open_unit(threshold, "threshold")
    safety_gap = check_float(safety_gap, "safety_gap", positive=True)
    if safety_gap > min(threshold / 3.0, 1.0 - threshold) + 1e-12:
        raise ValueError(f"safety_gap must be at most min(threshold / 3, 1 - threshold) = "
                         f"{min(threshold / 3.0, 1.0 - threshold):.4g}, got {safety_gap}")
    p_unsafe = check_open_unit(p_unsafe, "p_unsafe")
    check_array_size((horizon, 3, 4, 3), "horizon")  # the stage kernels of the tabular model
    rr = real_array(rung_rewards, "rung_rewards", finite=False)
    if rr.shape != (4,) or not np.all(np.isfinite(rr)) or rr.min() < 0 or rr.max() > 1:
        raise ValueError(f"rung_rewards must be 4 rewards in [0, 1], got {rr.tolist()}")
    noise_scale = check_float(noise_scale, "noise_scale", minimum=0.0)
    ladder, calib, unsafe = 0, 1, 2
    phi = np.zeros((2, 3, 4, 3))
    for i in range(2):
        phi[i, ladder, 2:, calib] = 1.0
        phi[i, ladder, :2, unsafe if i == 0 else calib] = 1.0
        phi[i, calib, :, ladder] = 1.0
        phi[i, unsafe, :, unsafe] = 1.0
    rewards = np.zeros((horizon, 3, 4))
    rewards[:, ladder] = rr
    t = (3.0 - np.arange(4)) / 3.0
    psi = np.zeros((3, 4, 3))
    psi[ladder, :, 0], psi[ladder, :, 1] = 1.0, t
    psi[calib, :, :2] = 1.0
    psi[calib, 3] = (0.0, 1.0, 0.0)
    psi[unsafe, :, 2] = 1.0
    mu = np.array([threshold - safety_gap, 2.0 * safety_gap, 1.0])
    mix = EpisodicLinearMixture(phi, np.array([p_unsafe, 1.0 - p_unsafe]), rewards)
    return LearnedCostSafeMixture(mix, psi, mu, threshold, 3, safety_gap, np.array([True, True, False]),
                                  noise_scale)


def cost_radius(noise_scale: float, delta: float, n_obs: int, dim: int, lam: float, feature_bound: float,
                param_bound: float) -> float:
    r"""Radius :math:`\beta_c` of the ridge confidence ellipsoid of the cost parameter, valid for ``n_obs`` steps.

    Parameters
    ----------
    noise_scale : float
        :math:`\sigma` (the noise is :math:`\sigma`-sub-Gaussian).
    delta : float in (0, 1)
    n_obs : int
        Largest number of observations covered (:math:`K H`).
    dim : int
        :math:`d_c`.
    lam : float > 0
        Ridge parameter :math:`\lambda_c`.
    feature_bound, param_bound : float
        :math:`L \ge \max \|\psi(s, a)\|_2` and :math:`S \ge \|\mu^\star\|_2`.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``n_obs`` or ``dim`` is not an integer or another argument is not a real number.
    ValueError
        If ``noise_scale``, ``feature_bound`` or ``param_bound`` is negative, ``delta`` lies outside (0, 1),
        ``n_obs < 0``, ``dim < 1``, ``lam <= 0``, or a number is not finite.

    Notes
    -----
    The self-normalised bound (Abbasi-Yadkori, Pál & Szepesvári 2011, Thm 2)
    holds for all :math:`n` at once with probability :math:`1 - \delta`:
    :math:`\|\hat\mu_n - \mu^\star\|_{\Lambda_n} \le \sigma \sqrt{2 \ln(1/\delta) + \ln(\det \Lambda_n / \lambda^{d_c})}
    + \sqrt{\lambda} S`; with :math:`\ln\det(\Lambda_n/\lambda) \le d_c \ln(1 + n L^2/(\lambda d_c))`
    and :math:`n \le N` this gives the fixed radius

    .. math::

        \beta_c = \sigma \sqrt{2 \ln(1/\delta) + d_c \ln\big(1 + N L^2 / (\lambda d_c)\big)} + \sqrt{\lambda}\, S.

    References
    ----------
    Abbasi-Yadkori, Pál & Szepesvári, "Improved algorithms for linear stochastic bandits", NeurIPS 2011,
    Thm 2 and Lemma 10.

    Examples
    --------
    >>> round(cost_radius(0.0, 0.1, 100, 2, 4.0, 1.0, 0.5), 6)
    1.0
    """
    noise_scale = check_float(noise_scale, "noise_scale", minimum=0.0)
    delta = check_open_unit(delta, "delta")
    n_obs, dim = check_int(n_obs, "n_obs", minimum=0), check_int(dim, "dim")
    lam = check_float(lam, "lam", positive=True)
    feature_bound = check_float(feature_bound, "feature_bound", minimum=0.0)
    param_bound = check_float(param_bound, "param_bound", minimum=0.0)
    ln_det = dim * math.log(1.0 + n_obs * feature_bound ** 2 / (lam * dim))
    return noise_scale * math.sqrt(2.0 * math.log(1.0 / delta) + ln_det) + math.sqrt(lam) * param_bound


def pessimistic_costs(cost_features, inv, b, beta: float) -> np.ndarray:
    r"""Upper confidence costs :math:`\langle \psi, \hat\mu \rangle + \beta \|\psi\|_{\Lambda^{-1}}`, batched.

    Parameters
    ----------
    cost_features : ndarray, shape (S, A, d_c)
    inv : ndarray, shape (n_reps, d_c, d_c)
        :math:`\Lambda^{-1}`.
    b : ndarray, shape (n_reps, d_c)
        :math:`\sum_j \psi_j y_j`, so that :math:`\hat\mu = \Lambda^{-1} b`.
    beta : float >= 0
        ``0`` gives the point estimates.

    Returns
    -------
    ndarray, shape (n_reps, S, A)

    Raises
    ------
    TypeError
        If an array does not hold real numbers or ``beta`` is not a real number.
    ValueError
        If ``cost_features`` is not ``(S, A, d_c)``, ``inv`` not ``(n_reps, d_c, d_c)``, ``b`` not
        ``(n_reps, d_c)``, an array has a NaN or infinite value, or ``beta`` is negative or not finite.

    Notes
    -----
    On the event :math:`\|\hat\mu - \mu^\star\|_\Lambda \le \beta`, Cauchy–Schwarz gives
    :math:`\langle \psi, \mu^\star \rangle \le \langle \psi, \hat\mu \rangle
    + \|\psi\|_{\Lambda^{-1}} \|\hat\mu - \mu^\star\|_\Lambda`,
    so every pessimistic cost bounds the true cost from above.

    Examples
    --------
    >>> import numpy as np
    >>> psi = np.array([[[1.0, 0.0], [0.0, 1.0]]])  # S = 1, A = 2, d_c = 2
    >>> pessimistic_costs(psi, np.eye(2)[None] / 4, np.array([[2.0, 0.0]]), 1.0)
    array([[[1. , 0.5]]])
    """
    psi = real_array(cost_features, "cost_features", ndim=3)
    d_c = psi.shape[2]
    inv = real_array(inv, "inv", shape=("n_reps", d_c, d_c))
    b = real_array(b, "b", shape=(inv.shape[0], d_c))
    beta = check_float(beta, "beta", minimum=0.0)
    return _pessimistic_costs(psi, inv, b, beta)


def _pessimistic_costs(psi, inv, b, beta):
    """:func:`pessimistic_costs` without the checks."""
    mu = np.einsum("rij,rj->ri", inv, b)
    quad = np.einsum("sai,rij,saj->rsa", psi, inv, psi)
    return np.einsum("sai,ri->rsa", psi, mu) + beta * np.sqrt(np.maximum(quad, 0.0))


def certified_action_sets(features, weights, certified, horizon: int, *, reachability: bool = True) -> np.ndarray:
    r"""Backward action sets from per-replication certified actions.

    Parameters
    ----------
    features : ndarray, shape (d, S, A, S)
    weights : ndarray, shape (n_reps, d)
        Non-negative weights: :math:`s'` is reachable from :math:`(s, a)` when
        :math:`\sum_i w_i \phi_i(s' | s, a) > 0`.
    certified : ndarray of bool, shape (n_reps, S, A)
        Actions that meet the instantaneous constraint (certified, or :math:`a_0` in a safe state).
    horizon : int
    reachability : bool
        ``False`` keeps only ``certified``.

    Returns
    -------
    ndarray of bool, shape (n_reps, H, S, A)

    Raises
    ------
    TypeError
        If ``features`` or ``weights`` does not hold real numbers, ``certified`` is not boolean,
        ``horizon`` is not an integer or ``reachability`` is not a bool.
    ValueError
        If ``features`` is not ``(d, S, A, S)`` with kernel rows, ``weights`` is not ``(n_reps, d)``,
        finite and non-negative, ``certified`` is not ``(n_reps, S, A)``, or ``horizon < 1``.

    Notes
    -----
    As :func:`~expertlab.mdp.safe_action_sets`, with the known instantaneous
    condition replaced by a batched certified set :math:`\mathcal C(s)`:
    :math:`\mathcal A_{H-1}(s) = \mathcal C(s)` and
    :math:`\mathcal A_h(s) = \{a \in \mathcal C(s) : \mathcal A_{h+1}(s') \ne \emptyset`
    for every reachable :math:`s'\}`.

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.zeros((1, 2, 1, 2)); phi[0, :, 0, 1] = 1.0  # everything moves to state 1
    >>> cert = np.array([[[True], [False]], [[True], [True]]])
    >>> certified_action_sets(phi, np.ones((2, 1)), cert, 2)[:, 0, :, 0]
    array([[False, False],
           [ True,  True]])
    """
    phi = _check_features(features)
    w = real_array(weights, "weights", shape=("n_reps", phi.shape[0]), low=0.0)
    cert = bool_array(certified, "certified", shape=(w.shape[0], *phi.shape[1:3]))
    horizon = check_int(horizon, "horizon")
    reachability = check_flag(reachability, "reachability")
    return _certified_action_sets(phi, w, cert, horizon, reachability)


def _certified_action_sets(phi, w, cert, horizon, reachability=True):
    """:func:`certified_action_sets` without the checks."""
    reach = np.einsum("ri,isat->rsat", w, phi) > 0  # (R, S, A, S)
    sets = np.empty((w.shape[0], horizon, *cert.shape[1:]), dtype=bool)
    sets[:, horizon - 1] = cert
    for h in range(horizon - 2, -1, -1):
        dead = ~sets[:, h + 1].any(axis=-1) & reachability  # (R, S)
        sets[:, h] = cert & ~np.any(reach & dead[:, None, None, :], axis=-1)
    return sets
