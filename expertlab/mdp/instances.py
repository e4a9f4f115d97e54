"""MDP instances: GridWorld, RiverSwim, Garnet, forest management and random linear mixtures.

Random instances draw from the package's counter-based generator: the MDP of
index ``m`` under ``seed`` is a pure function of ``(seed, m)``, so a batch of
MDPs equals the same MDPs made one at a time.  Sizes whose arrays would hold
more than :math:`2^{31}` elements raise a :class:`ValueError` naming the size
arguments before anything is allocated.
"""

from __future__ import annotations

import numpy as np

from .._random import rep_key, seed_to_uint64, stream_key, uniform
from .._validation import as_real_array, check_array_size, check_float, check_int, check_open_unit
from ._conservative_policies import known_baseline as _known_baseline
from ._models import FiniteHorizonMDP as _FiniteHorizonMDP
from ._models import LinearMixtureMDP, TabularMDP
from ._planning import backward_induction as _backward_induction

__all__ = ["gridworld", "river_swim", "garnet", "forest", "random_linear_mixture", "hard_linear_mixture",
           "greedy_trap_mixture", "two_point_lower_bound", "conservative_garnet", "INSTANCES"]

_KERNEL_SALT = np.uint64(0x6A09E667F3BCC909)
_REWARD_SALT = np.uint64(0xBB67AE8584CAA73B)
_THETA_SALT = np.uint64(0x3C6EF372FE94F82B)


def gridworld(n_rows: int = 4, n_cols: int = 4, *, slip: float = 0.1, gamma: float = 0.95, goal=None) -> TabularMDP:
    """A grid with four moves (up, down, left, right) that slip with probability ``slip``.

    With probability ``1 - slip`` the chosen move is made, otherwise a move
    drawn uniformly from the four (so the intended one has probability
    ``1 - 3 slip / 4``); a move into a wall stays put.  The goal (default:
    the bottom-right cell) is absorbing and every action there earns 1; all
    other rewards are 0.  States are numbered row by row.

    Examples
    --------
    >>> m = gridworld(2, 2, slip=0.0, gamma=0.5)
    >>> m.transitions[0, 3]          # from the top-left cell, "right" leads to cell 1
    array([0., 1., 0., 0.])
    """
    n_rows = check_int(n_rows, "n_rows")
    n_cols = check_int(n_cols, "n_cols")
    slip = check_float(slip, "slip", minimum=0.0, maximum=1.0)
    n = n_rows * n_cols
    check_array_size((n, 4, n), ("n_rows", "n_cols"))
    goal = n - 1 if goal is None else check_int(goal, "goal", minimum=0, maximum=n - 1)
    moves = ((-1, 0), (1, 0), (0, -1), (0, 1))
    dest = np.empty((n, 4), dtype=np.int64)
    for s in range(n):
        i, j = divmod(s, n_cols)
        for a, (di, dj) in enumerate(moves):
            ii, jj = i + di, j + dj
            dest[s, a] = ii * n_cols + jj if 0 <= ii < n_rows and 0 <= jj < n_cols else s
    onehot = np.eye(n)[dest]  # (S, A, S): deterministic moves
    p = (1.0 - slip) * onehot + slip * onehot.mean(axis=1, keepdims=True)
    p[goal] = np.eye(n)[goal]
    r = np.zeros((n, 4))
    r[goal] = 1.0
    return TabularMDP(p, r, gamma)


def river_swim(n_states: int = 6, *, gamma: float = 0.95) -> TabularMDP:
    """RiverSwim: a chain where swimming right (action 1) against the current rarely succeeds.

    Action 0 (left) moves one state left deterministically (state 0 stays);
    action 1 (right) moves right with probability 0.35, stays with 0.6 and
    drifts left with 0.05 in the interior; in state 0 it moves right with 0.4
    and stays with 0.6; in the last state it stays with 0.6 and drifts left
    with 0.4.  Rewards: 0.005 for action 0 in state 0, 1 for action 1 in the
    last state, 0 elsewhere.

    References
    ----------
    Strehl & Littman, "An analysis of model-based interval estimation for
    Markov decision processes", JCSS 74(8), 2008 (the RiverSwim chain);
    probabilities as in Osband, Russo & Van Roy, NeurIPS 2013 (not
    re-checked against either paper).
    """
    n = check_int(n_states, "n_states", minimum=2)
    check_array_size((n, 2, n), "n_states")
    p = np.zeros((n, 2, n))
    for s in range(n):
        p[s, 0, max(s - 1, 0)] = 1.0
        if s == 0:
            p[s, 1, 1] += 0.4
            p[s, 1, 0] += 0.6
        elif s == n - 1:
            p[s, 1, s] += 0.6
            p[s, 1, s - 1] += 0.4
        else:
            p[s, 1, s + 1] += 0.35
            p[s, 1, s] += 0.6
            p[s, 1, s - 1] += 0.05
    r = np.zeros((n, 2))
    r[0, 0] = 0.005
    r[n - 1, 1] = 1.0
    return TabularMDP(p, r, gamma)


def forest(n_states: int = 3, r1: float = 4.0, r2: float = 2.0, p: float = 0.1, *, gamma: float = 0.9) -> TabularMDP:
    """Forest management: wait (action 0) or cut (action 1); a fire resets the forest with probability ``p``.

    The state is the age class of the forest.  Waiting ages it by one class
    (the oldest stays), except that a fire (probability ``p``) sends it to
    state 0; cutting sends it to state 0 surely.  Waiting in the oldest state
    earns ``r1``; cutting earns 0 in state 0, 1 in the intermediate states
    and ``r2`` in the oldest.  This is the ``forest`` example of the MDP
    toolbox, laid out as ``(S, A, S)`` (the toolbox stores ``(A, S, S)``).

    References
    ----------
    Chadès, Chapron, Cros, Garcia & Sabbadin, "MDPtoolbox: a multi-platform
    toolbox to solve stochastic dynamic programming problems", Ecography
    37(9), 2014 (the forest example).
    """
    n = check_int(n_states, "n_states", minimum=2)
    check_array_size((n, 2, n), "n_states")
    r1 = check_float(r1, "r1")
    r2 = check_float(r2, "r2")
    p = check_float(p, "p", minimum=0.0, maximum=1.0)
    P = np.zeros((n, 2, n))
    for s in range(n):
        P[s, 0, 0] += p
        P[s, 0, min(s + 1, n - 1)] += 1.0 - p
        P[s, 1, 0] = 1.0
    r = np.zeros((n, 2))
    r[n - 1, 0] = r1
    r[1:, 1] = 1.0
    r[n - 1, 1] = r2
    return TabularMDP(P, r, gamma)


def _uniforms(seed, n_mdps, salt, shape):
    keys = stream_key(rep_key(np.full(n_mdps, seed_to_uint64(seed)), np.arange(n_mdps, dtype=np.uint64)),
                      salt)  # (M,)
    j = np.arange(int(np.prod(shape)), dtype=np.uint64)
    return uniform(keys[:, None], j[None, :]).reshape((n_mdps, *shape))


def _random_kernels(seed, n_mdps, n_states, n_actions, branching, salt):
    s, a, b = n_states, n_actions, branching
    u = _uniforms(seed, n_mdps, salt, (s, a, 2 * s))
    support = np.argsort(u[..., :s], axis=-1)[..., :b]  # b distinct next states, uniformly chosen
    cuts = np.sort(u[..., s:s + b - 1], axis=-1)  # uniform spacings: a Dirichlet(1, ..., 1) draw
    edges = np.concatenate([np.zeros((*cuts.shape[:-1], 1)), cuts, np.ones((*cuts.shape[:-1], 1))], axis=-1)
    probs = np.diff(edges, axis=-1)
    p = np.zeros((n_mdps, s, a, s))
    np.put_along_axis(p, support, probs, axis=-1)
    return p


def garnet(n_states: int = 10, n_actions: int = 3, branching: int = 3, *, n_mdps: int | None = None,
           gamma: float = 0.9, seed=0) -> TabularMDP:
    """Garnet random MDPs: each (s, a) reaches ``branching`` distinct states with Dirichlet(1) probabilities.

    The support of each row is a uniformly random set of ``branching``
    states, the probabilities on it are uniform spacings (a flat Dirichlet),
    and the rewards are iid uniform on [0, 1].  With ``n_mdps`` the result is
    a batch of shape ``(n_mdps, S, A, S)``; MDP ``m`` depends on
    ``(seed, m)`` only.

    References
    ----------
    Archibald, McKinnon & Thomas, "On the generation of Markov decision
    processes", J. Oper. Res. Soc. 46, 1995 (Garnet: generic average-reward
    non-stationary environment test-bench; here with uniform rewards).

    Examples
    --------
    >>> m = garnet(5, 2, 2, n_mdps=3, seed=1)
    >>> m.batch_shape, int((m.transitions[0, 0, 0] > 0).sum())
    ((3,), 2)
    """
    s = check_int(n_states, "n_states")
    a = check_int(n_actions, "n_actions")
    b = check_int(branching, "branching", maximum=s)
    m = 1 if n_mdps is None else check_int(n_mdps, "n_mdps")
    check_array_size((m, s, a, 2 * s), ("n_states", "n_actions", "n_mdps"))  # the uniforms of the kernels
    p = _random_kernels(seed, m, s, a, b, _KERNEL_SALT)
    r = _uniforms(seed, m, _REWARD_SALT, (s, a))
    if n_mdps is None:
        p, r = p[0], r[0]
    return TabularMDP(p, r, gamma, reward_range=(0.0, 1.0))


def random_linear_mixture(n_states: int = 10, n_actions: int = 3, dim: int = 4, branching: int = 3, *,
                          n_mdps: int | None = None, gamma: float = 0.9, seed=0) -> LinearMixtureMDP:
    """A random linear-mixture MDP: ``dim`` Garnet base kernels and weights uniform on the simplex.

    The base kernels and rewards are those of MDP 0 under ``seed`` (shared by
    the whole batch); the weights of MDP ``m`` are normalised exponentials
    (a flat Dirichlet draw) depending on ``(seed, m)``.

    Examples
    --------
    >>> lm = random_linear_mixture(4, 2, dim=3, n_mdps=5, seed=0)
    >>> lm.theta.shape, lm.transitions.shape
    ((5, 3), (5, 4, 2, 4))
    """
    s = check_int(n_states, "n_states")
    a = check_int(n_actions, "n_actions")
    d = check_int(dim, "dim")
    b = check_int(branching, "branching", maximum=s)
    m = 1 if n_mdps is None else check_int(n_mdps, "n_mdps")
    check_array_size((d, s, a, 2 * s), ("n_states", "n_actions", "dim"))  # the base kernels and their uniforms
    check_array_size((m, d), ("n_mdps", "dim"))  # the weights
    salts = stream_key(np.full(d, _KERNEL_SALT), np.arange(1, d + 1, dtype=np.uint64))
    feats = np.stack([_random_kernels(seed, 1, s, a, b, salts[i])[0] for i in range(d)])
    e = -np.log(_uniforms(seed, m, _THETA_SALT, (d,)))
    theta = e / e.sum(axis=-1, keepdims=True)
    r = _uniforms(seed, 1, _REWARD_SALT, (s, a))[0]
    if n_mdps is None:
        theta = theta[0]
    return LinearMixtureMDP(feats, theta, r, gamma, reward_range=(0.0, 1.0))


def hard_linear_mixture(n_coords: int = 2, horizon: int = 5, *, n_episodes: int | None = None,
                        gap: float | None = None, signs=None):
    r"""The hard episodic linear-mixture MDP of the lower bound of Zhou, Gu & Szepesvári (2021).

    State 0 is the chain, state 1 an absorbing state that pays 1 per stage;
    actions are the sign vectors :math:`a \in \{-1, 1\}^m` (``m = n_coords``,
    action ``j`` has :math:`a_i = +1` where bit ``i`` of ``j`` is set, so
    :math:`A = 2^m`).  From state 0,

    .. math::

        P(1 | 0, a) = \delta + \langle \mu, a \rangle, \qquad \delta = 1/H,
        \quad \mu = \Delta\, s, \; s \in \{-1, 1\}^m,

    else the chain stays at 0.  As a linear mixture it has :math:`d = 2m`
    base kernels :math:`\phi_{i,\pm}` with :math:`P(1 | 0, a) = \delta(1 \pm a_i)`
    and weights :math:`\theta_{i,\pm} = (1 \pm s_i m\Delta/\delta) / (2m)` on
    the simplex, which requires :math:`m \Delta \le \delta`.

    Parameters
    ----------
    n_coords : int
        ``m``; the mixture dimension is ``d = 2 m``.
    horizon : int >= 2
    n_episodes : int, optional
        ``K``: sets the paper's gap :math:`\Delta = \sqrt{\delta / K} / (4\sqrt2)`
        when ``gap`` is not given (checked, and unused, when it is).
    gap : float, optional
        :math:`\Delta` directly.
    signs : array of +-1, shape (m,), optional
        :math:`s` (all +1 by default; every choice is equivalent up to
        relabelling the actions).

    Returns
    -------
    EpisodicLinearMixture

    Notes
    -----
    Reconstructed: the paper's chain :math:`x_1, \dots, x_{H}` and its two
    absorbing states are collapsed into one chain state and one paying
    state (in a finite-horizon MDP the stage is already part of the state;
    the values are those of the chain), and :math:`\mu` enters through the
    pairs of base kernels above, so that :math:`\theta` lies on the simplex.

    References
    ----------
    Zhou, Gu & Szepesvári, "Nearly minimax optimal reinforcement learning
    for linear mixture Markov decision processes", COLT 2021, Thm 5.6 and
    its hard instance (lower bound :math:`\Omega(d H \sqrt T)`).

    Examples
    --------
    >>> m = hard_linear_mixture(2, horizon=4, gap=0.1)
    >>> m.dim, m.features.shape, m.to_finite_horizon().transitions[0, 0, 3]   # a = (+1, +1)
    (4, (4, 2, 4, 2), array([0.55, 0.45]))
    """
    from ._ucrl_vtr import EpisodicLinearMixture

    m = check_int(n_coords, "n_coords", maximum=12)
    h = check_int(horizon, "horizon", minimum=2)
    check_array_size((h, 2, 2 ** m, 2), ("horizon", "n_coords"))  # the stage kernels of the tabular model
    delta = 1.0 / h
    if n_episodes is not None:
        n_episodes = check_int(n_episodes, "n_episodes")
    if gap is None:
        if n_episodes is None:
            raise ValueError("pass gap or n_episodes (which sets the gap sqrt(delta / K) / (4 sqrt 2))")
        gap = float(np.sqrt(delta / n_episodes) / (4.0 * np.sqrt(2.0)))
    gap = check_float(gap, "gap", minimum=0.0)
    if m * gap > delta + 1e-12:
        raise ValueError(f"gap must be at most 1 / (horizon * n_coords) = {delta / m:.4g}, got {gap:.4g}")
    s = np.ones(m) if signs is None else as_real_array(signs, "signs", xp=np)
    if s.shape != (m,) or not np.all(np.abs(s) == 1.0):
        raise ValueError(f"signs must be an array of +1/-1 of shape ({m},)")
    n_act = 2 ** m
    a = np.where((np.arange(n_act)[:, None] >> np.arange(m)[None, :]) & 1, 1.0, -1.0)  # (A, m)
    feats = np.zeros((2 * m, 2, n_act, 2))
    eps = m * gap / delta
    theta = np.empty(2 * m)
    for i in range(m):
        for k, sign in enumerate((1.0, -1.0)):
            up = delta * (1.0 + sign * a[:, i])
            feats[2 * i + k, 0, :, 1] = up
            feats[2 * i + k, 0, :, 0] = 1.0 - up
            feats[2 * i + k, 1, :, 1] = 1.0
            theta[2 * i + k] = (1.0 + sign * s[i] * eps) / (2 * m)
    rewards = np.zeros((h, 2, n_act))
    rewards[:, 1] = 1.0
    return EpisodicLinearMixture(feats, theta, rewards)



def greedy_trap_mixture(p_good: float = 0.9, stay_reward: float = 0.3, *, gamma: float = 0.75) -> LinearMixtureMDP:
    r"""Three states, two actions, :math:`d = 2`: a linear mixture on which learning without optimism fails.

    State 0 is the start.  Action 0 stays in 0 and earns ``stay_reward``;
    action 1 earns 0 and moves to the paying state 1 under kernel
    :math:`\phi_1`, to the empty state 2 under :math:`\phi_2`.  States 1 and
    2 earn 1 and 0 (both actions) and return to 0.  The weight is
    :math:`\theta = (p, 1 - p)`, ``p = p_good``.

    Parameters
    ----------
    p_good : float in (0, 1)
        :math:`p`, the chance that action 1 reaches the paying state.
    stay_reward : float in [0, 1]
        Reward of action 0 in state 0.
    gamma : float in [0, 1)
        Discount of the returned MDP (unused by episodic learners, which
        tile the rewards over their horizon).

    Returns
    -------
    LinearMixtureMDP

    Notes
    -----
    Both base kernels agree on every pair but (0, 1), so action 0 carries
    information only on :math:`\theta_1 + \theta_2`.  A value-targeted
    regression started at :math:`\hat\theta = 0` and fed only action 0 learns
    :math:`\hat\theta = (1/2, 1/2)`.  Taking action 1 forever is worth
    :math:`\gamma p / (1 - \gamma^2)` per unit of discounted time against
    :math:`r_0 / (1 - \gamma)` for staying; with the defaults the first is
    larger at :math:`p = 0.9` and smaller at :math:`p = 1/2`, and over
    :math:`H = 4` stages two tries of action 1 give :math:`2p` against
    :math:`4 r_0` for staying (again larger at 0.9, smaller at 1/2).  Hence a
    greedy learner (no exploration bonus) that starts by staying never tries
    action 1, never learns :math:`\theta_1 - \theta_2`, and pays a constant
    regret per step or episode, while an optimistic one tries action 1 and
    learns it.  Built for this library to separate optimistic linear-mixture
    learners from greedy ones; the model is that of Ayoub et al. (2020).

    References
    ----------
    Ayoub, Jia, Szepesvári, Wang & Yang, "Model-based reinforcement learning
    with value-targeted regression", ICML 2020 (the linear-mixture model).

    Examples
    --------
    >>> m = greedy_trap_mixture()
    >>> m.transitions[0, 1].round(12).tolist(), m.rewards[0].tolist()
    ([0.0, 0.9, 0.1], [0.3, 0.0])
    """
    p = check_open_unit(p_good, "p_good")
    r0 = check_float(stay_reward, "stay_reward", minimum=0.0, maximum=1.0)
    gamma = check_float(gamma, "gamma", minimum=0.0)
    if not gamma < 1.0:
        raise ValueError(f"gamma must lie in [0, 1), got {gamma}")
    phi = np.zeros((2, 3, 2, 3))
    phi[:, 0, 0, 0] = 1.0
    phi[0, 0, 1, 1] = phi[1, 0, 1, 2] = 1.0
    phi[:, 1:, :, 0] = 1.0
    rewards = np.zeros((3, 2))
    rewards[0, 0], rewards[1] = r0, 1.0
    return LinearMixtureMDP(phi, np.array([p, 1.0 - p]), rewards, gamma)



def two_point_lower_bound(gap: float, n_actions: int = 4, horizon: int = 3) -> _FiniteHorizonMDP:
    r"""The two-point lower-bound construction for episodic tabular learners (3 states).

    From the start state 0 every action reaches the paying state 1 with
    probability 1/2 and the empty state 2 otherwise, except the last action,
    which reaches state 1 with probability :math:`1/2 + \Delta`.  States 1
    and 2 are absorbing and pay 1 and 0 at every later stage; state 0 pays 0.

    Parameters
    ----------
    gap : float in [0, 1/2]
        :math:`\Delta`, the advantage of the last action.
    n_actions : int >= 2
    horizon : int >= 2
        Stages per episode.

    Returns
    -------
    FiniteHorizonMDP
        Stationary over the ``horizon`` stages.

    Notes
    -----
    Only the first transition matters: an episode that starts with another
    action than the last loses exactly :math:`\Delta (H - 1)` in expectation.
    Telling the last action from the others needs of order
    :math:`1/\Delta^2` tries of each action, so with
    :math:`\Delta = c/\sqrt K` rebuilt for each number of episodes
    :math:`K`, every learner's regret over the :math:`K` episodes grows like
    :math:`\sqrt K` (a share of the episodes bounded away from 0 starts with
    a wrong action); rate claims use it to show that an :math:`O(\sqrt K)`
    bound is attained.  It is the one-state-pair core of the lower-bound
    construction of Jaksch, Ortner & Auer (2010), reduced to a single
    decision per episode (simplified: no chain of such states).

    References
    ----------
    Jaksch, Ortner & Auer, "Near-optimal regret bounds for reinforcement
    learning", JMLR 11 (2010), Thm 5 (the lower-bound construction).

    Examples
    --------
    >>> m = two_point_lower_bound(0.1, n_actions=2, horizon=3)
    >>> m.transitions[0, 0, 0].tolist(), m.transitions[0, 0, 1].round(12).tolist()
    ([0.0, 0.5, 0.5], [0.0, 0.6, 0.4])
    """
    gap = check_float(gap, "gap", minimum=0.0, maximum=0.5)
    n_actions = check_int(n_actions, "n_actions", minimum=2)
    horizon = check_int(horizon, "horizon", minimum=2)
    p = np.zeros((3, n_actions, 3))
    p[0, :, 1:] = 0.5
    p[0, -1] += (0.0, gap, -gap)
    p[1, :, 1] = p[2, :, 2] = 1.0
    r = np.zeros((3, n_actions))
    r[1] = 1.0
    return _FiniteHorizonMDP.stationary(p, r, horizon)

#: Registered instance factories, by name.
INSTANCES = {
    "gridworld": gridworld,
    "river_swim": river_swim,
    "garnet": garnet,
    "forest": forest,
    "random_linear_mixture": random_linear_mixture,
    "hard_linear_mixture": hard_linear_mixture,
}


def garnet_episodic(n_states: int = 5, n_actions: int = 2, branching: int | None = None, episode_length: int = 4,
                    *, seed=0, initial_state: int = 0):
    r"""A Garnet kernel repeated over ``episode_length`` stages, as an episodic environment.

    Parameters
    ----------
    n_states, n_actions : int
        Garnet sizes (:func:`~expertlab.mdp.instances.garnet`).
    branching : int, optional
        Successors per pair (default ``min(3, n_states)``).
    episode_length : int
        Stages ``H`` of an episode (the run's ``horizon`` counts episodes).
    seed : int
        Seed of the Garnet draw.
    initial_state : int
        Start state of every episode.

    Returns
    -------
    expertlab.mdp.EpisodicMDP
        Feedback ``"tabular_episode"`` (for :func:`expertlab.mdp.ucbvi`);
        ``.model`` is the :class:`~expertlab.mdp.FiniteHorizonMDP`.
        Registered as environment ``"garnet_episodic"``.

    Examples
    --------
    >>> from expertlab import sim
    >>> from expertlab.mdp import ucbvi
    >>> env = garnet_episodic(n_states=5, n_actions=2, episode_length=4, seed=0)
    >>> env.model.transitions.shape, env.spec.unit
    ((4, 5, 2, 5), 'episode')
    >>> sim.run(ucbvi(), env, horizon=10, n_reps=2, seed=0).environment
    'garnet_episodic'
    """
    from ._episodic import episodic

    s = check_int(n_states, "n_states")
    b = min(3, s) if branching is None else check_int(branching, "branching", maximum=s)
    h_ = check_int(episode_length, "episode_length")
    _check_episode_size(h_, s, n_actions)
    g = garnet(s, n_actions, b, seed=seed)
    mdp = _FiniteHorizonMDP.stationary(g.transitions, g.rewards, h_)
    params = {"n_states": s, "n_actions": int(g.n_actions), "branching": b, "episode_length": h_,
              "seed": _plain_seed(seed), "initial_state": initial_state}
    return episodic(mdp, initial_state, name="garnet_episodic", params=params)


def _check_episode_size(episode_length: int, n_states: int, n_actions) -> None:
    """Refuse an episodic Garnet whose stage kernels ``(H, S, A, S)`` would exceed the array limit."""
    a = check_int(n_actions, "n_actions")
    check_array_size((episode_length, n_states, a, n_states), ("episode_length", "n_states", "n_actions"))


def _plain_seed(seed):
    """``seed`` as JSON data for an environment's ``params`` (ints stay ints)."""
    return int(seed) if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) else repr(seed)


def conservative_garnet(n_states: int = 3, n_actions: int = 2, branching: int = 3, episode_length: int = 3, *,
                        seed=0, initial_state: int = 0, alpha: float = 0.2):
    r"""A Garnet MDP repeated over ``episode_length`` stages with a safe but suboptimal known baseline.

    Parameters
    ----------
    n_states, n_actions, branching : int
        Garnet sizes (:func:`~expertlab.mdp.instances.garnet`).
    episode_length : int
        Stages ``H`` of an episode.
    seed : int
        Seed of the Garnet draw.
    initial_state : int
    alpha : float in (0, 1)
        Allowed relative loss of the constraint.

    Returns
    -------
    expertlab.mdp.ConservativeMDP
        The conservative environment (feedback ``"conservative_episode"``)
        of the MDP (``.model``, a :class:`~expertlab.mdp.FiniteHorizonMDP`)
        and the known baseline (``.baseline``) that plays the *worst* action
        (smallest :math:`Q^\star_h`) at the first stage and the optimal one
        afterwards: its value
        :math:`V^\star_1(s_1) - \max_a Q^\star_1 + \min_a Q^\star_1` is below
        the optimum, and every stage after the first is played well, so the
        baseline is a reasonable fallback.  Registered as environment
        ``"conservative_garnet"``.

    Examples
    --------
    >>> env = conservative_garnet(seed=3)
    >>> env.optimal_value() > env.baseline.value > 0
    True
    """
    from ._conservative_env import conservative

    h_ = check_int(episode_length, "episode_length")
    _check_episode_size(h_, check_int(n_states, "n_states"), n_actions)
    g = garnet(n_states, n_actions, branching, seed=seed)
    mdp = _FiniteHorizonMDP.stationary(g.transitions, g.rewards, h_)
    q = np.asarray(_backward_induction(mdp).q_values)  # (H, S, A)
    pol = q.argmax(axis=-1)
    pol[0] = q[0].argmin(axis=-1)
    baseline = _known_baseline(mdp, pol.astype(np.int64), initial_state)
    params = {"n_states": int(mdp.n_states), "n_actions": int(mdp.n_actions), "branching": int(branching),
              "episode_length": h_, "seed": _plain_seed(seed), "initial_state": initial_state, "alpha": alpha}
    return conservative(mdp, baseline, alpha=alpha, initial_state=initial_state, name="conservative_garnet",
                        params=params)

