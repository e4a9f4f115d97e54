"""UCBVI side by side with rlberry's ``UCBVIAgent`` (the agent rlberry-scool ships) on rlberry's GridWorld.

rlberry 0.6 is the last release whose core package holds ``UCBVIAgent`` and
``GridWorld`` without pulling the Atari extras; rlberry-scool 0.7 moved the
same two files unchanged apart from import paths.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
from scipy.stats import norm

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # rlberry's and gymnasium's import-time deprecations are theirs
    rlberry = pytest.importorskip("rlberry")
    from rlberry.agents.dynprog.utils import backward_induction_sd
    from rlberry.agents.ucbvi import UCBVIAgent
    from rlberry.envs.finite import GridWorld

from expertlab import sim
from expertlab.mdp import FiniteHorizonMDP, Trajectory, backward_induction, episodic, optimistic_q_values, ucbvi

rlberry.utils.logging.configure_logging(level="ERROR")

H = 6
C = 0.1  # rlberry's bonus_scale_factor


def _grid(success=0.9):
    return GridWorld(nrows=3, ncols=4, success_probability=success)  # walls at (1, 1) and (2, 2): 10 states


def _agent(env, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return UCBVIAgent(env, horizon=H, gamma=1.0, bonus_scale_factor=C, stage_dependent=True, seeder=seed)


def _mdp(env):
    return FiniteHorizonMDP.stationary(np.asarray(env.P, dtype=np.float64), np.asarray(env.R, dtype=np.float64), H)


def test_the_rlberry_backup_reproduces_rlberry_q_values():
    # the same 40 random-action episodes fed to both: their optimistic Q must agree to rounding
    env = _grid()
    agent = _agent(env, 0)
    S, A = env.observation_space.n, env.action_space.n
    rng = np.random.default_rng(1)
    n_ep = 40
    states = np.zeros((1, n_ep, H + 1), dtype=np.int64)
    actions = rng.integers(A, size=(1, n_ep, H))
    for k in range(n_ep):
        for h in range(H):
            s, a = states[0, k, h], actions[0, k, h]
            states[0, k, h + 1] = rng.choice(S, p=env.P[s, a])
    learner = ucbvi("rlberry", bonus_scale=C, backup="rlberry")
    spec = dataclasses.replace(_mdp(env).spec, horizon=n_ep)  # what sim.run tells the learner
    st = learner.init(spec, 1)
    for k in range(n_ep):
        r = np.array([[env.reward_fn(states[0, k, h], actions[0, k, h], states[0, k, h + 1]) for h in range(H)]])
        for h in range(H):
            agent._update(states[0, k, h], actions[0, k, h], states[0, k, h + 1], r[0, h], h)
        st = learner.update(st, None, Trajectory(states[:, k], actions[:, k], r), None)
        backward_induction_sd(agent.Q, agent.V, agent.R_hat + agent.B_sa, agent.P_hat, 1.0, agent.v_max[0])
        q = optimistic_q_values(st, "rlberry", bonus_scale=C, backup="rlberry")[0]
        np.testing.assert_allclose(q, agent.Q, rtol=0, atol=1e-12)
    # unvisited pairs remain after 40 random episodes, so the uniform-kernel branch is exercised too
    assert (st.counts.sum(axis=-1) == 0).any()


def _rlberry_regret(n_episodes, n_reps, v_star, checkpoints):
    out = np.empty((len(checkpoints), n_reps))
    for r in range(n_reps):
        agent = _agent(_grid(), r)
        regret = np.cumsum([v_star - agent._run_episode() for _ in range(n_episodes)])
        out[:, r] = regret[np.asarray(checkpoints) - 1]
    return out


def test_mean_regret_curves_agree_with_rlberry():
    K, R = 600, 48
    ck = [25, 50, 100, 200, 400, 600]
    env = _grid()
    mdp = _mdp(env)
    s0 = int(env.reset()[0])
    v_star = float(np.asarray(backward_induction(mdp).values)[0, s0])
    theirs = _rlberry_regret(K, R, v_star, ck)
    ours = sim.run(ucbvi("rlberry", bonus_scale=C, backup="rlberry"), episodic(mdp, initial_state=s0), K, R, seed=0,
                   checkpoints=ck).metrics["realised_regret"]
    clipped = sim.run(ucbvi("rlberry", bonus_scale=C), episodic(mdp, initial_state=s0), K, R, seed=0,
                      checkpoints=ck).metrics["realised_regret"]

    def z(a, b):
        se = np.sqrt(a.var(axis=1, ddof=1) / a.shape[1] + b.var(axis=1, ddof=1) / b.shape[1])
        return np.abs(a.mean(axis=1) - b.mean(axis=1)) / np.maximum(se, 1e-12)

    crit = norm.ppf(1 - 0.001 / (2 * len(ck)))  # two-sided, Bonferroni over the checkpoints, joint level 0.001
    assert (z(ours, theirs) < crit).all(), f"rlberry {theirs.mean(axis=1)} vs expertlab {ours.mean(axis=1)}"
    # the run is past pure exploration: the regret of the last 200 episodes is below 3/4 of the first 200's
    m = theirs.mean(axis=1)
    assert m[-1] - m[-2] < 0.75 * m[3]
    # the two 99.9% confidence bands overlap at every checkpoint
    def band(a):
        return norm.ppf(0.9995) * a.std(axis=1, ddof=1) / math.sqrt(a.shape[1])

    assert (np.abs(ours.mean(axis=1) - theirs.mean(axis=1)) <= band(ours) + band(theirs)).all()
    # power: the library's own clipped backup (Q clipped at H - h, known rewards) is told apart
    assert z(clipped, theirs).max() > crit
