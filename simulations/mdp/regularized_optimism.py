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
the replications); the UCLK-style learner is run on
:func:`~expertlab.mdp.instances.greedy_trap_mixture`, where the same learner
with its radius multiplied by :math:`10^{-4}` (no optimism) never tries the
informative action and its regret grows linearly.  The rate of the
regularised learner is attained on the lower-bound construction: two states
and two actions whose chances of reaching the rewarding state differ by
:math:`c/\\sqrt T` through the unknown mixture weight, rebuilt for each
:math:`T`.
"""

import math

import numpy as np

from expertlab import mdp, sim

_GAMMA, _DELTA, _LAM = 0.75, 0.1, 1.0


def _instance(name="random"):
    if name == "greedy_trap":
        return mdp.instances.greedy_trap_mixture(gamma=_GAMMA)
    return mdp.instances.random_linear_mixture(5, 2, dim=3, gamma=_GAMMA, seed=0)


def _beta_scale(dim, horizon):
    """2 (1 - gamma) / sqrt(ln((1 + T d / ((1 - gamma)^2 lambda)) / delta)): the radius' leading term is sqrt(d)."""
    h = 1.0 / (1.0 - _GAMMA)
    return 1.0 / (0.5 * h * math.sqrt(math.log((1.0 + horizon * dim * h * h / _LAM) / _DELTA)))


def regret_vs_t(s, backend, seed):
    m = _instance(s.get("instance", "random"))
    factory = {"regularized_optimism": mdp.regularized_optimism, "uclk": mdp.uclk}[s["learner"]]
    horizon = s["horizon"]
    ck = np.unique(np.geomspace(100, horizon, 16).round().astype(np.int64))
    scale = _beta_scale(m.dim, horizon) * s.get("radius_factor", 1.0)  # setting: shrink the radius (mutants)
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


def two_point_mixture(gap):
    """The lower-bound construction as a linear mixture: two states, two actions, two base kernels.

    State 0 pays 0 and state 1 pays 1 (both actions).  From state 0 action 1 reaches state 1 with
    probability 1/2 under the first base kernel and 0 under the second, action 0 the other way round, so
    that with the weight theta = (1/2 + gap, 1/2 - gap) they reach it with probabilities 1/4 + gap/2 and
    1/4 - gap/2: both actions are equally uncertain and action 1 is better by ``gap``.  State 1 returns to
    state 0 with probability 1/2 under both kernels.
    """
    phi = np.zeros((2, 2, 2, 2))
    phi[0, 0, 0] = (1.0, 0.0)
    phi[1, 0, 0] = (0.5, 0.5)
    phi[0, 0, 1] = (0.5, 0.5)
    phi[1, 0, 1] = (1.0, 0.0)
    phi[:, 1, :] = (0.5, 0.5)
    r = np.array([[0.0, 0.0], [1.0, 1.0]])
    return mdp.LinearMixtureMDP(phi, np.array([0.5 + gap, 0.5 - gap]), r, _GAMMA, reward_range=(0.0, 1.0))


def minimax_regret(s, backend, seed):
    ts = np.asarray(s["horizons"], dtype=np.int64)
    y = []
    for t in ts:  # one instance per T: the gap shrinks like 1 / sqrt(T)
        m = two_point_mixture(s["gap_constant"] / math.sqrt(t))
        learner = mdp.regularized_optimism(delta=_DELTA, lam=_LAM, beta_scale=_beta_scale(m.dim, int(t)))
        res = sim.run(learner, mdp.LinearMixtureStream(m), int(t), s["n_reps"], seed=seed,
                      checkpoints=np.array([t // 5, t]))
        # the regret of the last 4/5 of the steps (a K-independent start-up cost would tilt the slope)
        y.append(res.metrics["regret"][1] - res.metrics["regret"][0])
    x = ts.astype(float)
    y = np.stack(y)
    mean = y.mean(axis=1)
    return sim.Measurement(x=x, y=y, xlabel="steps T (gap c / sqrt(T))", ylabel="regret of steps T/5 .. T",
                           curves={"c' sqrt(T)": (x, mean[-1] * np.sqrt(x / x[-1]))},
                           info={"regret_over_c_sqrt_T": (mean / (s["gap_constant"] * np.sqrt(x))).tolist()})


EXPERIMENTS = [
    sim.Experiment("mdp.regularized-optimism-regret-vs-T", regret_vs_t,
                   quick=dict(learner="regularized_optimism", horizon=10_000, n_reps=16),
                   full=dict(learner="regularized_optimism", horizon=200_000, n_reps=64),
                   title="Regularised optimistic planning: regret = O(sqrt T)"),
    sim.Experiment("mdp.uclk-regret-vs-T", regret_vs_t,
                   quick=dict(learner="uclk", instance="greedy_trap", horizon=10_000, n_reps=16),
                   full=dict(learner="uclk", instance="greedy_trap", horizon=200_000, n_reps=64),
                   title="UCLK-style optimism: regret = O(sqrt T)"),
    sim.Experiment("mdp.uclk-greedy-regret-linear", regret_vs_t,
                   quick=dict(learner="uclk", instance="greedy_trap", radius_factor=1e-4, horizon=2000, n_reps=4),
                   full=dict(learner="uclk", instance="greedy_trap", radius_factor=1e-4, horizon=100_000, n_reps=16),
                   title="UCLK without optimism: linear regret on the same instance"),
    sim.Experiment("mdp.regularized-optimism-minimax-regret-vs-T", minimax_regret,
                   quick=dict(gap_constant=0.1, horizons=(500, 1000, 2000, 4000), n_reps=16),
                   full=dict(gap_constant=0.1, horizons=(2000, 6000, 20_000, 60_000), n_reps=64),
                   title="Regularised optimistic planning on the lower-bound construction: regret ∝ sqrt T"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
