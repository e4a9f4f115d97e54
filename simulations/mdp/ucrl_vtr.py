"""
UCRL-VTR and UCRL-VTR+ on the hard linear-mixture instance
==========================================================

The hard instance of Zhou, Gu & Szepesvári (2021): a chain state that
reaches a paying absorbing state with probability
:math:`\\delta + \\langle\\mu, a\\rangle`, actions :math:`a \\in \\{-1, 1\\}^m`
and :math:`d = 2m` base kernels.  With a fixed gap the exact expected regret
of UCRL-VTR and UCRL-VTR+ grows at most like :math:`\\sqrt K` (log-log slope
over the last decade, bootstrap interval over the replications); with the
paper's gap :math:`\\Delta = \\sqrt{\\delta/K}/(4\\sqrt2)` the regret after
:math:`K` episodes grows at least linearly in :math:`d` (the lower bound),
checked on :math:`1/\\text{regret}`.  On
:func:`~expertlab.mdp.instances.greedy_trap_mixture` the regret of UCRL-VTR
stops growing while the same learner with its radius multiplied by
:math:`10^{-4}` (no optimism) never tries the informative action and pays a
constant regret per episode.
"""

import math

import numpy as np

from expertlab import mdp, sim


def _plus_scale(n_episodes, delta=0.1, lam=1.0):
    """1 / (8 sqrt(ln(1 + K / lambda) iota)): the leading term of the value radius becomes sqrt(d)."""
    return 1.0 / (8.0 * math.sqrt(math.log(1 + n_episodes / lam) * math.log(4 * n_episodes ** 2 / delta)))


def _learner(name, n_episodes, params=None, radius_factor=1.0):
    """The learner at the claims' radii, each multiplied by ``radius_factor`` (1: the sound learner)."""
    if name == "ucrl_vtr":
        return mdp.ucrl_vtr(**({"delta": 0.1, "beta_scale": radius_factor} | dict(params or {})))
    return mdp.ucrl_vtr_plus(delta=0.1, beta_scale=_plus_scale(n_episodes) * radius_factor)


def _greedy_trap(horizon):
    """greedy_trap_mixture played over ``horizon`` stages from state 0 (the same rewards at every stage)."""
    lm = mdp.instances.greedy_trap_mixture()
    return mdp.EpisodicLinearMixture(lm.features, lm.theta, np.broadcast_to(lm.rewards, (horizon, *lm.rewards.shape)))


def regret_vs_k(s, backend, seed):
    if s.get("instance") == "greedy_trap":
        m = _greedy_trap(s["horizon"])
    else:
        m = mdp.instances.hard_linear_mixture(s["n_coords"], s["horizon"], gap=0.5 / (s["horizon"] * s["n_coords"]))
    k = s["n_episodes"]
    ck = np.unique(np.geomspace(10, k, 16).round().astype(np.int64))
    learner = _learner(s["learner"], k, s.get("learner_params"), s.get("radius_factor", 1.0))
    res = sim.run(learner, m, horizon=k, n_reps=s["n_reps"], seed=seed, backend=backend,
                  checkpoints=ck)
    x = res.checkpoints.astype(float)
    return sim.Measurement(x=x, y=res.metric("regret"), xlabel="episodes K", ylabel="expected regret",
                           curves={"realised regret": (x, res.mean("realised_regret")),
                                   "linear (first-episode gap)": (x, x * res.mean("regret")[0] / x[0])},
                           info={"wall_time": res.wall_time, "backend": res.backend})


def regret_vs_d(s, backend, seed):
    k = s["n_episodes"]
    finals, dims = [], []
    for n_coords in s["n_coords"]:
        m = mdp.instances.hard_linear_mixture(n_coords, s["horizon"], n_episodes=k)
        learner = _learner("ucrl_vtr_plus", k, radius_factor=s.get("radius_factor", 1.0))
        res = sim.run(learner, m, horizon=k, n_reps=s["n_reps"], seed=seed, backend=backend,
                      checkpoints=[k])
        finals.append(res.metric("regret")[-1])
        dims.append(m.dim)
    x = np.array(dims, dtype=float)
    y = np.stack(finals)
    return sim.Measurement(x=x, y=y, xlabel="dimension d", ylabel="expected regret after K episodes",
                           curves={"c d": (x, y[0].mean() * x / x[0])}, info={"n_episodes": k})


_SIZE = dict(n_coords=2, horizon=4)
EXPERIMENTS = [
    sim.Experiment("mdp.ucrl-vtr-regret-vs-K", regret_vs_k,
                   quick=dict(_SIZE, learner="ucrl_vtr", n_episodes=4000, n_reps=16),
                   full=dict(_SIZE, learner="ucrl_vtr", n_episodes=40_000, n_reps=64),
                   title="UCRL-VTR: expected regret = O(sqrt K)"),
    sim.Experiment("mdp.ucrl-vtr-trap-regret-vs-K", regret_vs_k,
                   quick=dict(instance="greedy_trap", horizon=4, learner="ucrl_vtr", n_episodes=1000, n_reps=8),
                   full=dict(instance="greedy_trap", horizon=4, learner="ucrl_vtr", n_episodes=20_000, n_reps=32),
                   title="UCRL-VTR on the greedy trap: expected regret = O(sqrt K)"),
    sim.Experiment("mdp.ucrl-vtr-greedy-regret-linear", regret_vs_k,
                   quick=dict(instance="greedy_trap", horizon=4, learner="ucrl_vtr", radius_factor=1e-4,
                              n_episodes=500, n_reps=4),
                   full=dict(instance="greedy_trap", horizon=4, learner="ucrl_vtr", radius_factor=1e-4,
                             n_episodes=10_000, n_reps=16),
                   title="UCRL-VTR without optimism on the greedy trap: linear regret"),
    sim.Experiment("mdp.ucrl-vtr-plus-regret-vs-K", regret_vs_k,
                   quick=dict(_SIZE, learner="ucrl_vtr_plus", n_episodes=4000, n_reps=16),
                   full=dict(_SIZE, learner="ucrl_vtr_plus", n_episodes=40_000, n_reps=64),
                   title="UCRL-VTR+: expected regret = O(sqrt K)"),
    sim.Experiment("mdp.ucrl-vtr-plus-regret-vs-d", regret_vs_d,
                   quick=dict(n_coords=[1, 2, 3, 4], horizon=4, n_episodes=1500, n_reps=8),
                   full=dict(n_coords=[1, 2, 3, 4, 5], horizon=4, n_episodes=10_000, n_reps=32),
                   title="UCRL-VTR+ on the hard instance: regret grows at least linearly in d"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
