"""
Safe UCRL-VTR with a learned cost: no violations, and regret growing like the inverse squared safety gap
========================================================================================================

The cost of each state-action pair is linear in an unknown parameter and is
observed with Gaussian noise.  On a ladder of actions whose costs rise
linearly past the threshold, the learner plays only actions whose pessimistic
cost (ridge estimate plus confidence width) is below the threshold, inside
backward sets that avoid the unsafe absorbing state.  Runs without a violation
are at least :math:`1 - \\delta` of all runs; the ablation that certifies with
the point estimate violates in every run; and the regret after a fixed number
of episodes, spent waiting for the best safe rung (slack :math:`\\Delta_c / 3`)
to be certified, grows like :math:`\\Delta_c^{-2}` as the safety gap shrinks.
"""

import functools

import numpy as np

from expertlab import mdp, sim

_INSTANCE = dict(horizon=4, threshold=0.6, p_unsafe=0.5, rung_rewards=(1.0, 0.8, 0.5, 0.2), noise_scale=0.05)
_LEARNER = dict(delta=0.1, lam=1.0, cost_lam=0.01)


@functools.lru_cache(maxsize=16)
def _run(safety_gap, pessimistic, n_episodes, n_reps, seed):
    m = mdp.safe_cost_ladder(safety_gap=safety_gap, **_INSTANCE)
    learner = mdp.safe_learned_cost_vtr(pessimistic=pessimistic, **_LEARNER)
    ck = np.unique(np.append(np.geomspace(1, n_episodes, 12).round(), (4 * n_episodes) // 5).astype(np.int64))
    return sim.run(learner, m, n_episodes, n_reps, seed=seed, checkpoints=ck)


def _indicator(s, backend, seed, pessimistic):
    # ``pessimistic`` names the claim (no violation / some violation); the learner's own pessimism may be
    # set apart through ``s["pessimistic"]`` (a point estimate run against the zero-violation claim)
    res = _run(s["safety_gap"], s.get("pessimistic", pessimistic), s["n_episodes"], s["n_reps"], seed)
    visits = res.metrics["violations"]
    ind = (visits == 0) if pessimistic else (visits > 0)
    return sim.Measurement(x=res.checkpoints.astype(float), y=ind.astype(float), xlabel="episodes K",
                           ylabel="runs without a violation" if pessimistic else "runs with a violation",
                           curves={"mean violating steps": (res.checkpoints, visits.mean(axis=1))},
                           info={"wall_time": res.wall_time, "max_violations": int(visits.max())})


def regret_vs_gap(s, backend, seed):
    runs = [_run(g, s.get("pessimistic", True), s["n_episodes"], s["n_reps"], seed) for g in s["gaps"]]
    x = np.array(s["gaps"], dtype=float)
    y = np.stack([r.metrics["regret"][-1] for r in runs])
    # the regret must have stopped growing: every run certified before the last fifth of the episodes
    tail = np.stack([r.metrics["regret"][-1]
                     - r.metrics["regret"][np.searchsorted(r.checkpoints, (4 * s["n_episodes"]) // 5)]
                     for r in runs])
    return sim.Measurement(x=x, y=y, xlabel="safety gap Δ_c", ylabel=f"expected regret after {s['n_episodes']} "
                           "episodes", curves={"∝ Δ_c⁻²": (x, y[0].mean() * (x[0] / x) ** 2)},
                           info={"wall_time": sum(r.wall_time for r in runs),
                                 "max_regret_in_last_fifth": float(tail.max()),
                                 "max_violations": int(max(r.metrics["violations"].max() for r in runs))})


EXPERIMENTS = [
    sim.Experiment("mdp.safe-cost-zero-violations", functools.partial(_indicator, pessimistic=True),
                   quick=dict(safety_gap=0.1, n_episodes=600, n_reps=32),
                   full=dict(safety_gap=0.1, n_episodes=5000, n_reps=64),
                   title="Safe UCRL-VTR with a learned cost: no violation w.p. 1 - δ"),
    sim.Experiment("mdp.safe-cost-point-estimate-violates", functools.partial(_indicator, pessimistic=False),
                   quick=dict(safety_gap=0.1, n_episodes=20, n_reps=64),
                   full=dict(safety_gap=0.1, n_episodes=200, n_reps=256),
                   title="Certifying with the point estimate of the cost violates"),
    sim.Experiment("mdp.safe-cost-regret-vs-gap", regret_vs_gap,
                   quick=dict(gaps=(0.2, 0.1414, 0.1, 0.0707), n_episodes=600, n_reps=32),
                   full=dict(gaps=(0.2, 0.1, 0.05, 0.025), n_episodes=5000, n_reps=64),
                   title="Safe UCRL-VTR with a learned cost: regret ∝ Δ_c⁻²"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
