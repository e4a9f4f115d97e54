"""
UCBVI: expected regret grows at most like the square root of the number of episodes
===================================================================================

UCBVI (Azar, Osband & Munos 2017) on a small Garnet kernel repeated over
``H`` stages, with the Bernstein–Freedman bonus at the paper's constants and
with the Hoeffding bonus :math:`H/\\sqrt{n}` (the paper's constant scaled by
:math:`1/(7L)`).  The exact expected regret
:math:`\\sum_k V^\\star_1(s_1) - V^{\\pi_k}_1(s_1)` is recorded on a log grid
of episodes; the claim fits its log-log slope over the last decade with a
bootstrap interval over the replications and checks that it is at most
:math:`1/2` (the theorems are upper bounds).  The realised regret is plotted
alongside.

The rate is attained on the lower-bound construction: from the start state
every action reaches a rewarding absorbing state with probability 1/2,
except one, whose chance is larger by :math:`\\varepsilon_K = c/\\sqrt K`;
rebuilt for each number of episodes :math:`K`, no learner can tell the
actions apart and the regret grows like :math:`\\sqrt K`.
"""

import math

import numpy as np

from expertlab import mdp, sim


def _instance(s):
    g = mdp.instances.garnet(s["n_states"], s["n_actions"], s["branching"], seed=s["instance_seed"])
    return mdp.FiniteHorizonMDP.stationary(g.transitions, g.rewards, s["horizon"])


def _learner(s, m, n_episodes):
    scale = s["bonus_scale"]
    if scale == "1/(7L)":
        scale = 1.0 / (7.0 * math.log(5.0 * m.n_states * m.n_actions * n_episodes * m.horizon / 0.1))
    return mdp.ucbvi(s["bonus"], delta=0.1, bonus_scale=scale), scale


def ucbvi_regret(s, backend, seed):
    m = _instance(s)
    learner, scale = _learner(s, m, s["n_episodes"])
    ck = np.unique(np.geomspace(10, s["n_episodes"], 16).round().astype(np.int64))
    res = sim.run(learner, m, horizon=s["n_episodes"], n_reps=s["n_reps"], seed=seed, backend=backend,
                  checkpoints=ck)
    x = res.checkpoints.astype(float)
    return sim.Measurement(x=x, y=res.metric("regret"), xlabel="episodes K", ylabel="expected regret",
                           curves={"realised regret": (x, res.mean("realised_regret")),
                                   "linear (first-episode gap)": (x, x * res.mean("regret")[0] / x[0])},
                           info={"wall_time": res.wall_time, "bonus_scale": scale, "backend": res.backend})


def minimax_regret(s, backend, seed):
    ks = np.asarray(s["episodes"], dtype=np.int64)
    y = []
    for k in ks:  # one instance per K: the gap shrinks like 1 / sqrt(K)
        m = mdp.instances.two_point_lower_bound(s["gap_constant"] / math.sqrt(k), s["n_actions"], s["horizon"])
        learner, _ = _learner(s, m, int(k))
        res = sim.run(learner, m, horizon=int(k), n_reps=s["n_reps"], seed=seed, backend=backend,
                      checkpoints=np.array([k // 5, k]))
        # the regret of the last 4/5 of the episodes: the first few episodes break ties between unvisited
        # or equally estimated actions towards the first action, a K-independent cost that would tilt the slope
        y.append(res.metric("regret")[1] - res.metric("regret")[0])
    x = ks.astype(float)
    y = np.stack(y)
    worst = 0.8 * s["gap_constant"] * np.sqrt(x) * (s["horizon"] - 1)  # every episode with a wrong action
    return sim.Measurement(x=x, y=y, xlabel="episodes K (gap c / sqrt(K))",
                           ylabel="expected regret of episodes K/5 .. K",
                           curves={"(H - 1) eps_K K (always wrong)": (x, worst),
                                   "(1 - 1/A) (H - 1) eps_K K": (x, worst * (1.0 - 1.0 / s["n_actions"]))},
                           info={"fraction_of_wrong_episodes": (y.mean(axis=1) / worst).tolist()})


_SIZE = dict(n_states=3, n_actions=2, branching=3, horizon=3, instance_seed=3)
EXPERIMENTS = [
    sim.Experiment("mdp.ucbvi-bernstein-regret-vs-K", ucbvi_regret,
                   quick=dict(_SIZE, bonus="bernstein", bonus_scale=1.0, n_episodes=10_000, n_reps=16),
                   full=dict(_SIZE, bonus="bernstein", bonus_scale=1.0, n_episodes=100_000, n_reps=64),
                   title="UCBVI-BF: expected regret = O(sqrt K)"),
    sim.Experiment("mdp.ucbvi-hoeffding-regret-vs-K", ucbvi_regret,
                   quick=dict(_SIZE, bonus="hoeffding", bonus_scale="1/(7L)", n_episodes=10_000, n_reps=16),
                   full=dict(_SIZE, bonus="hoeffding", bonus_scale="1/(7L)", n_episodes=100_000, n_reps=64),
                   title="UCBVI-CH (bonus H/sqrt(n)): expected regret = O(sqrt K)"),
    sim.Experiment("mdp.ucbvi-minimax-regret-vs-K", minimax_regret,
                   quick=dict(bonus="hoeffding", bonus_scale="1/(7L)", n_actions=4, horizon=3, gap_constant=0.1,
                              episodes=(250, 500, 1000, 2000), n_reps=24),
                   full=dict(bonus="hoeffding", bonus_scale="1/(7L)", n_actions=4, horizon=3, gap_constant=0.1,
                             episodes=(1000, 3000, 10_000, 30_000), n_reps=64),
                   title="UCBVI-CH on the lower-bound construction: expected regret ∝ sqrt K"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
