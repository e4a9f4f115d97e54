"""
Regularised optimistic planning on a discounted stream
======================================================

One stream per replication in a random discounted linear-mixture MDP
(5 states, 2 actions, :math:`d = 3`, :math:`\\gamma = 0.75`).  The learner of
Moulin & Neu (2023) plans by regularised approximate value iteration with a
log-sum-exp policy update and the optimistic bonus; the UCLK-style baseline
of Zhou, He & Gu (2021) runs optimistic extended value iteration with greedy
policies.  Both share the value-targeted regression and the
determinant-doubling epochs.  The exact regret
:math:`\\sum_t (V^\\star(s_t) - V^{\\pi_t}(s_t))` grows at most like
:math:`\\sqrt T` (log-log slope over the last decade, bootstrap interval over
the replications).
"""

import math

import numpy as np

from expertlab import mdp, sim

_GAMMA, _DELTA, _LAM = 0.75, 0.1, 1.0


def _instance():
    return mdp.instances.random_linear_mixture(5, 2, dim=3, gamma=_GAMMA, seed=0)


def _beta_scale(dim, horizon):
    """2 (1 - gamma) / sqrt(ln((1 + T d / ((1 - gamma)^2 lambda)) / delta)): the radius' leading term is sqrt(d)."""
    h = 1.0 / (1.0 - _GAMMA)
    return 1.0 / (0.5 * h * math.sqrt(math.log((1.0 + horizon * dim * h * h / _LAM) / _DELTA)))


def regret_vs_t(s, backend, seed):
    m = _instance()
    factory = {"regularized_optimism": mdp.regularized_optimism, "uclk": mdp.uclk}[s["learner"]]
    horizon = s["horizon"]
    ck = np.unique(np.geomspace(100, horizon, 16).round().astype(np.int64))
    scale = _beta_scale(m.dim, horizon)
    kw = dict(delta=_DELTA, lam=_LAM, beta_scale=scale)
    if "eta_scale" in s:  # the step-size constant of the regularised learner (default 1)
        kw["eta_scale"] = s["eta_scale"]
    res = sim.run(factory(**kw), mdp.LinearMixtureStream(m), horizon,
                  s["n_reps"], seed=seed, checkpoints=ck)
    x = ck.astype(float)
    mean = res.mean("regret")
    beta = scale * mdp.confidence_radius(m.dim, m.gamma, horizon, delta=_DELTA, lam=_LAM)
    return sim.Measurement(x=x, y=res.metrics["regret"], xlabel="steps T", ylabel="regret",
                           curves={"linear (first-checkpoint rate)": (x, x * mean[0] / x[0]),
                                   "c sqrt(T)": (x, mean[-1] * np.sqrt(x / x[-1]))},
                           info={"wall_time": res.wall_time, "beta": beta,
                                 "mean_epochs": float(res.metrics["epochs"][-1].mean())})


EXPERIMENTS = [
    sim.Experiment("mdp.regularized-optimism-regret-vs-T", regret_vs_t,
                   quick=dict(learner="regularized_optimism", horizon=10_000, n_reps=16),
                   full=dict(learner="regularized_optimism", horizon=200_000, n_reps=64),
                   title="Regularised optimistic planning: regret = O(sqrt T)"),
    sim.Experiment("mdp.uclk-regret-vs-T", regret_vs_t,
                   quick=dict(learner="uclk", horizon=10_000, n_reps=16),
                   full=dict(learner="uclk", horizon=200_000, n_reps=64),
                   title="UCLK-style optimism: regret = O(sqrt T)"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
