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
"""

import math

import numpy as np

from expertlab import mdp, sim


def _instance(s):
    g = mdp.instances.garnet(s["n_states"], s["n_actions"], s["branching"], seed=s["instance_seed"])
    return mdp.FiniteHorizonMDP.stationary(g.transitions, g.rewards, s["horizon"])


def ucbvi_regret(s, backend, seed):
    m = _instance(s)
    scale = s["bonus_scale"]
    if scale == "1/(7L)":
        scale = 1.0 / (7.0 * math.log(5.0 * m.n_states * m.n_actions * s["n_episodes"] * m.horizon / 0.1))
    learner = mdp.ucbvi(s["bonus"], delta=0.1, bonus_scale=scale)
    ck = np.unique(np.geomspace(10, s["n_episodes"], 16).round().astype(np.int64))
    res = sim.run(learner, m, horizon=s["n_episodes"], n_reps=s["n_reps"], seed=seed, backend=backend,
                  checkpoints=ck)
    x = res.checkpoints.astype(float)
    return sim.Measurement(x=x, y=res.metric("regret"), xlabel="episodes K", ylabel="expected regret",
                           curves={"realised regret": (x, res.mean("realised_regret")),
                                   "linear (first-episode gap)": (x, x * res.mean("regret")[0] / x[0])},
                           info={"wall_time": res.wall_time, "bonus_scale": scale, "backend": res.backend})


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
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
