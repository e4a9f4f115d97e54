"""Bad-input cases of the mdp family for ``test_bad_inputs.py``.

``LEARNERS`` / ``ENVIRONMENTS``: registered name -> ``[(kwargs, exception, word)]``, the factory
must raise ``exception`` naming ``word`` when called with ``kwargs``.
``EXEMPT``: public name -> why it needs no bad-input test.
"""

import numpy as np

from expertlab.mdp import instances

NAN = float("nan")
_STREAM = instances.random_linear_mixture(3, 2, dim=2, gamma=0.5, seed=0)  # a single discounted linear mixture
_MIXTURE = instances.hard_linear_mixture(1, horizon=3, gap=0.1)  # an episodic linear mixture: S = 2, A = 2, H = 3

_CONSERVATIVE = [
    ({"alpha": 1.0}, ValueError, "alpha"),
    ({"delta": 0.0}, ValueError, "delta"),
    ({"pessimism_scale": NAN}, ValueError, "pessimism_scale"),
    ({"n_bisect": 2.5}, TypeError, "n_bisect"),
]
_VTR = [
    ({"delta": 1.5}, ValueError, "delta"),
    ({"lam": 0.0}, ValueError, "lam"),
    ({"beta_scale": float("inf")}, ValueError, "beta_scale"),
    ({"lam": "1"}, TypeError, "lam"),
]

LEARNERS = {
    "ucbvi": [
        ({"bonus": "bernoulli"}, ValueError, "bonus"),
        ({"delta": -0.1}, ValueError, "delta"),
        ({"bonus_scale": NAN}, ValueError, "bonus_scale"),
        ({"stationary": "yes"}, TypeError, "stationary"),
        ({"bonus": "hoeffding", "backup": "rlberry"}, ValueError, "backup"),
    ],
    "ucrl_vtr": _VTR,
    "ucrl_vtr_plus": _VTR,
    "stepmix": _CONSERVATIVE,
    "epsmix": _CONSERVATIVE,
    "conservative_ucbvi": [
        ({"rule": "greedy"}, ValueError, "rule"),
        ({"alpha": -0.2}, ValueError, "alpha"),
        ({"bonus_scale": 0.0}, ValueError, "bonus_scale"),
        ({"n_bisect": 61}, ValueError, "n_bisect"),
    ],
    "regularized_optimism": [
        ({"eta_scale": 0.0}, ValueError, "eta_scale"),
        ({"n_iter": 0}, ValueError, "n_iter"),
        ({"n_iter": 10.0}, TypeError, "n_iter"),
        ({"delta": 1.0}, ValueError, "delta"),
    ],
    "uclk": [
        ({"n_iter": -1}, ValueError, "n_iter"),
        ({"lam": NAN}, ValueError, "lam"),
        ({"beta_scale": -1.0}, ValueError, "beta_scale"),
    ],
    "reward_free_ttr": [
        ({"delta": 0.0}, ValueError, "delta"),
        ({"ridge": 0.0}, ValueError, "ridge"),
        ({"beta_scale": -0.5}, ValueError, "beta_scale"),
        ({"ridge": 1 + 0j}, TypeError, "ridge"),
    ],
    "safe_ucrl_vtr": [
        ({"reachability": "yes"}, TypeError, "reachability"),
        ({"delta": NAN}, ValueError, "delta"),
        ({"lam": -1.0}, ValueError, "lam"),
    ],
    "safe_learned_cost_vtr": [
        ({"pessimistic": 1}, TypeError, "pessimistic"),
        ({"cost_lam": 0.0}, ValueError, "cost_lam"),
        ({"param_bound": -1.0}, ValueError, "param_bound"),
        ({"delta": 2.0}, ValueError, "delta"),
    ],
}

ENVIRONMENTS = {
    "garnet_episodic": [
        ({"n_states": 0}, ValueError, "n_states"),
        ({"n_states": 3, "branching": 4}, ValueError, "branching"),
        ({"episode_length": 2.5}, TypeError, "episode_length"),
        ({"initial_state": 5}, ValueError, "initial_state"),
        ({"episode_length": 10**9}, ValueError, "episode_length"),
    ],
    "conservative_garnet": [
        ({"alpha": 1.0}, ValueError, "alpha"),
        ({"n_actions": 0}, ValueError, "n_actions"),
        ({"seed": "0"}, TypeError, "seed"),
        ({"initial_state": 3}, ValueError, "initial_state"),
    ],
    "hard_linear_mixture": [
        ({"gap": 1.0}, ValueError, "gap"),
        ({"gap": 0.1, "signs": ["1", "-1"]}, TypeError, "signs"),
        ({"horizon": 1, "gap": 0.1}, ValueError, "horizon"),
        ({"n_episodes": 0}, ValueError, "n_episodes"),
    ],
    "linear_mixture_stream": [
        ({"mdp": instances.river_swim(3)}, TypeError, "mdp"),
        ({"mdp": _STREAM, "initial_state": 3}, ValueError, "initial_state"),
        ({"mdp": instances.random_linear_mixture(3, 2, dim=2, n_mdps=2)}, ValueError, "mdp.theta"),
    ],
    "reward_free_mixture": [
        ({"mixture": _MIXTURE.to_finite_horizon()}, TypeError, "mixture"),
        ({"mixture": _MIXTURE, "rewards": np.ones((1, 3, 2, 2))}, ValueError, "rewards"),
        ({"mixture": _MIXTURE, "rewards": np.full((1, 3, 2, 2), "0.1")}, TypeError, "rewards"),
        ({"mixture": _MIXTURE, "initial_state": -1}, ValueError, "initial_state"),
    ],
    "safe_trap_mixture": [
        ({"horizon": 2}, ValueError, "horizon"),
        ({"p_goal": 0.0}, ValueError, "p_goal"),
        ({"threshold": 0.5, "safety_gap": 0.6}, ValueError, "safety_gap"),
        ({"stay_reward": NAN}, ValueError, "stay_reward"),
    ],
    "safe_cost_ladder": [
        ({"safety_gap": 0.5}, ValueError, "safety_gap"),
        ({"p_unsafe": 1.0}, ValueError, "p_unsafe"),
        ({"rung_rewards": (1.5, 0.8, 0.5, 0.2)}, ValueError, "rung_rewards"),
        ({"noise_scale": -0.05}, ValueError, "noise_scale"),
    ],
}

EXEMPT = {
    "expertlab.mdp.ConservativeState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.Trajectory":
        "a feedback record: the episodic environments build it each episode for the learner to read",
    "expertlab.mdp.SafeTrajectory":
        "a feedback record: the safe environments build it each episode for the learner to read",
    "expertlab.mdp.RewardFreeEpisode":
        "a feedback record: the reward-free environment builds it each episode for the explorer to read",
    "expertlab.mdp.Exploration":
        "an action record: the explorer's act builds it each episode and the environment's step checks it",
    "expertlab.mdp.StreamAction":
        "an action record: the stream learner's act builds it each step and the environment's step checks it",
    "expertlab.mdp.RewardFreeEstimate":
        "a result record the explorer returns inside its action: users read it and never construct one",
    "expertlab.mdp.DROfflineResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.FiniteHorizonResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.MixtureRobustFiniteResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.MixtureRobustResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.PlanningResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.RewardFreeState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.RobustPlanningResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.SafeCostState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.SafeVTRState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.SoftPlanningResult":
        "a result record the library returns: users read it and never construct one",
    "expertlab.mdp.StreamState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.UCBVIState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.VTRState":
        "learner state: built by the learner's init and advanced by update, never by users",
    "expertlab.mdp.WorstCaseResult":
        "a result record the library returns: users read it and never construct one",
}
