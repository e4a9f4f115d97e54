"""
Safe UCRL-VTR with backward safe sets: no unsafe visits, and the ablation that does visit
=========================================================================================

On a four-state linear mixture with a goal that must be learned and a lure
into a trap (a safe-looking state whose every action may lead to an unsafe
absorbing state), the learner of Shi, Liang & Shroff (2023) plans over action
sets built backward from :math:`h = H` with pessimistic reachability.  Every
played step is checked against the constraint: runs without an unsafe visit
are at least :math:`1 - \\delta` of all runs, the ablation that checks only the
instantaneous constraint falls into the unsafe state in almost every run, and
the exact expected regret against the best safe policy grows at most like
:math:`\\sqrt K`, while the same learner without optimism (its radius
multiplied by :math:`10^{-6}`) never tries the action that reveals the weight
and its regret grows linearly.
"""

import functools

import numpy as np

from expertlab import mdp, sim

_INSTANCE = dict(horizon=4, p_goal=0.5, stay_reward=0.3, threshold=0.5, safety_gap=0.2)


@functools.lru_cache(maxsize=8)
def _run(reachability, n_episodes, n_reps, seed, beta_scale=1.0):
    m = mdp.safe_trap_mixture(**_INSTANCE)
    ck = np.unique(np.geomspace(1, n_episodes, 16).round().astype(np.int64))
    learner = mdp.safe_ucrl_vtr(reachability=reachability, delta=0.1, beta_scale=beta_scale)
    return m, sim.run(learner, m, n_episodes, n_reps, seed=seed, checkpoints=ck)


def _measure(s, backend, seed, what):
    reach = what != "ablation"
    # settings: reachability (ablate or not), beta_scale (the multiplier of the confidence radius)
    m, res = _run(s.get("reachability", reach), s["n_episodes"], s["n_reps"], seed, s.get("beta_scale", 1.0))
    x = res.checkpoints.astype(float)
    visits = res.metrics["violations"]  # steps with c(s_h, a_h) > tau, cumulative
    info = {"wall_time": res.wall_time, "optimal_safe_value": m.optimal_safe_value,
            "max_unsafe_visits": int(visits.max())}
    if what == "regret":
        return sim.Measurement(x=x, y=res.metrics["regret"], xlabel="episodes K",
                               ylabel="expected regret (best safe policy)",
                               curves={"sqrt K (matched at K/10)": (x, np.sqrt(x) * np.interp(
                                   x[-1] / 10, x, res.mean("regret")) / np.sqrt(x[-1] / 10))}, info=info)
    ind = (visits == 0) if reach else (visits > 0)
    return sim.Measurement(x=x, y=ind.astype(float), xlabel="episodes K",
                           ylabel="runs without unsafe visits" if reach else "runs with an unsafe visit",
                           curves={"mean unsafe visits": (x, visits.mean(axis=1))}, info=info)


EXPERIMENTS = [
    sim.Experiment("mdp.safe-vtr-zero-unsafe-visits", functools.partial(_measure, what="safe"),
                   quick=dict(n_episodes=2000, n_reps=32), full=dict(n_episodes=20_000, n_reps=64),
                   title="Safe UCRL-VTR: no unsafe visit w.p. 1 - delta"),
    sim.Experiment("mdp.safe-vtr-ablation-violates", functools.partial(_measure, what="ablation"),
                   quick=dict(n_episodes=150, n_reps=64), full=dict(n_episodes=1000, n_reps=256),
                   title="Without the reachability condition the learner enters the unsafe state"),
    sim.Experiment("mdp.safe-vtr-regret-vs-K", functools.partial(_measure, what="regret"),
                   quick=dict(n_episodes=2000, n_reps=32), full=dict(n_episodes=20_000, n_reps=64),
                   title="Safe UCRL-VTR: regret against the best safe policy = O(sqrt K)"),
    sim.Experiment("mdp.safe-vtr-greedy-regret-linear", functools.partial(_measure, what="regret"),
                   quick=dict(n_episodes=500, n_reps=8, beta_scale=1e-6),
                   full=dict(n_episodes=5000, n_reps=32, beta_scale=1e-6),
                   title="Safe UCRL-VTR without optimism: linear regret on the same instance"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
