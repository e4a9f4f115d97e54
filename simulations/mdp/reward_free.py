"""
Reward-free exploration in a linear mixture: value error after K episodes against K, H and d
============================================================================================

The explorer never sees a reward: it plays the optimistic policy of the
confidence-set width and fits the mixture weight by transition-targeted ridge
regression.  After :math:`K` episodes it plans, on the fitted model, for a
battery of rewards whose total over an episode is at most 1 (reach each state
at the last stage, and dense random rewards).  Measured exactly against the
true model: the largest error of the fitted model's value of its own plan
falls like :math:`K^{-1/2}`, does not grow with the horizon :math:`H` at a
fixed :math:`K`, and, on the hard linear-mixture instance of Zhou, Gu &
Szepesvári (2021) with its gap set from :math:`K`, grows at most (and
nearly) linearly in :math:`d` (a sample complexity of
:math:`O(d^2 \\varepsilon^{-2})` episodes); on that instance it is also flat
in :math:`H`, as the horizon-free lower bound says it must be.  The self-normalised confidence
set holds the true weight at every checkpoint in at least :math:`1 - \\delta`
of the runs.  The explorer's own certificate is plotted: it is valid but
loose, and it grows with :math:`H`, unlike the horizon-free bound of the paper.
"""

import functools

import numpy as np

from expertlab import mdp, sim

_INSTANCE = dict(n_states=3, n_actions=2, branching=2, seed=1)


def _explore(m, n_episodes, n_reps, seed, checkpoints, beta_scale=1.0, ridge=1.0):
    """Explore ``m`` and read the metrics of the model fitted on ``checkpoints`` episodes.

    The environment evaluates the estimate the explorer hands over with each episode's policy, which
    is fitted on the episodes before it: the run lasts ``n_episodes + 1`` episodes and is read one
    episode after each checkpoint.  The battery is ``reward_battery`` with the experiment's seed.
    """
    fh = m.to_finite_horizon()
    env = mdp.RewardFreeMixture(m, rewards=mdp.reward_battery(fh.n_states, fh.n_actions, fh.horizon, seed=seed))
    ck = np.asarray(checkpoints, dtype=np.int64)
    res = sim.run(mdp.reward_free_ttr(delta=0.1, beta_scale=beta_scale, ridge=ridge), env, n_episodes + 1, n_reps,
                  seed=seed, checkpoints=ck + 1)
    return env, res, ck.astype(float)


@functools.lru_cache(maxsize=32)
def _run(dim, horizon, n_episodes, n_reps, seed, final_only=False, beta_scale=1.0, ridge=1.0):
    lm = mdp.instances.random_linear_mixture(dim=dim, **_INSTANCE)
    s, a = _INSTANCE["n_states"], _INSTANCE["n_actions"]
    m = mdp.EpisodicLinearMixture(np.asarray(lm.features), np.asarray(lm.theta), np.zeros((horizon, s, a)))
    ck = [n_episodes] if final_only else np.unique(np.geomspace(10, n_episodes, 12).round().astype(np.int64))
    return _explore(m, n_episodes, n_reps, seed, ck, beta_scale, ridge)


def versus_k(s, backend, seed):
    # settings beta_scale and ridge: the explorer's radius multiplier and ridge (mutation checks)
    env, res, x = _run(s["dim"], s["horizon"], s["n_episodes"], s["n_reps"], seed, beta_scale=s.get("beta_scale", 1.0),
                       ridge=s.get("ridge", 1.0))
    err = res.metrics["value_error"]
    e = err.mean(axis=1)
    return sim.Measurement(x=x, y=err, xlabel="exploration episodes K",
                           ylabel="max value error over the reward battery",
                           curves={"K^-1/2 (matched at K/10)": (x, np.interp(x[-1] / 10, x, e) * np.sqrt(x[-1] / 10 / x)),
                                   "suboptimality": (x, res.mean("suboptimality")),
                                   "certificate 2 W_1(s_1)": (x, res.mean("certificate"))},
                           info={"wall_time": res.wall_time, "n_rewards": int(env.rewards.shape[0]),
                                 "max_suboptimality": float(res.metrics["suboptimality"].max())})


@functools.lru_cache(maxsize=16)
def _run_hard(n_coords, horizon, n_episodes, n_reps, seed, beta_scale=1.0, ridge=1.0):
    m = mdp.instances.hard_linear_mixture(n_coords, horizon, n_episodes=n_episodes)
    return _explore(m, n_episodes, n_reps, seed, [n_episodes], beta_scale, ridge)


def versus(s, backend, seed, what):
    """Final value error against the horizon (``what="horizon"``) or the dimension (``"dim"``).

    Setting ``instance``: ``"random"`` (default for the horizon) or ``"hard"`` (always for the dimension:
    ``hard_linear_mixture`` with ``n_coords`` coordinates and its gap set from the number of episodes).
    """
    values = s["horizons"] if what == "horizon" else [2 * m for m in s["n_coords"]]
    hard = what == "dim" or s.get("instance") == "hard"
    explorer = dict(beta_scale=s.get("beta_scale", 1.0), ridge=s.get("ridge", 1.0))  # mutation settings
    ys, certs, subs = [], [], []
    for v in values:
        if what == "horizon" and not hard:
            _, res, _ = _run(s["dim"], v, s["n_episodes"], s["n_reps"], seed, final_only=True, **explorer)
        elif what == "horizon":
            _, res, _ = _run_hard(s["n_coords"], v, s["n_episodes"], s["n_reps"], seed, **explorer)
        else:
            _, res, _ = _run_hard(v // 2, s["horizon"], s["n_episodes"], s["n_reps"], seed, **explorer)
        ys.append(res.metrics["value_error"][-1])
        certs.append(res.metrics["certificate"][-1].mean())
        subs.append(res.metrics["suboptimality"][-1].mean())
    x = np.array(values, dtype=float)
    y = np.stack(ys)
    label = "horizon H" if what == "horizon" else "dimension d"
    curves = {"certificate 2 W_1(s_1)": (x, np.array(certs)), "suboptimality": (x, np.array(subs))}
    if what == "dim":
        curves["linear in d (matched at the first d)"] = (x, y[0].mean() * x / x[0])
    return sim.Measurement(x=x, y=y, xlabel=label, ylabel=f"max value error after K = {s['n_episodes']} episodes",
                           curves=curves, info={"n_episodes": s["n_episodes"]})


def coverage(s, backend, seed):
    _, res, x = _run(s["dim"], s["horizon"], s["n_episodes"], s["n_reps"], seed, beta_scale=s.get("beta_scale", 1.0))
    ratio = res.metrics["confidence_ratio"]
    inside = np.all(ratio <= 1.0, axis=0).astype(float)
    return sim.Measurement(x=x[-1:], y=inside[None], xlabel="exploration episodes K",
                           ylabel="runs whose confidence set held theta at every checkpoint",
                           curves={"largest ||theta - theta_hat|| / beta_0": (x, ratio.max(axis=1))},
                           info={"max_ratio": float(ratio.max())})


EXPERIMENTS = [
    sim.Experiment("mdp.rfe-value-error-vs-K", versus_k,
                   quick=dict(dim=4, horizon=4, n_episodes=2000, n_reps=64),
                   full=dict(dim=4, horizon=4, n_episodes=20_000, n_reps=64),
                   title="Reward-free exploration: value error = O(K^-1/2) for every reward in the battery"),
    sim.Experiment("mdp.rfe-value-error-vs-H", functools.partial(versus, what="horizon"),
                   quick=dict(dim=4, horizons=[4, 8, 16], n_episodes=300, n_reps=64),
                   full=dict(dim=4, horizons=[4, 8, 16, 32, 64], n_episodes=3000, n_reps=64),
                   title="Reward-free exploration: at a fixed K the value error does not grow with H"),
    sim.Experiment("mdp.rfe-value-error-vs-d", functools.partial(versus, what="dim"),
                   quick=dict(n_coords=[1, 2, 3, 4], horizon=5, n_episodes=1000, n_reps=64),
                   full=dict(n_coords=[1, 2, 3, 4, 5, 6], horizon=5, n_episodes=10_000, n_reps=64),
                   title="Reward-free exploration on the hard instance: the value error grows at most linearly in d"),
    sim.Experiment("mdp.rfe-value-error-vs-d-attained", functools.partial(versus, what="dim"),
                   quick=dict(n_coords=[1, 2, 3, 4], horizon=5, n_episodes=1000, n_reps=64),
                   full=dict(n_coords=[1, 2, 3, 4, 5, 6], horizon=5, n_episodes=10_000, n_reps=64),
                   title="Reward-free exploration on the hard instance: the value error grows like d"),
    sim.Experiment("mdp.rfe-value-error-vs-H-flat", functools.partial(versus, what="horizon"),
                   quick=dict(instance="hard", n_coords=2, horizons=[4, 8, 16], n_episodes=1000, n_reps=32),
                   full=dict(instance="hard", n_coords=2, horizons=[4, 8, 16, 32], n_episodes=3000, n_reps=64),
                   title="Reward-free exploration on the hard instance: the value error is flat in H"),
    sim.Experiment("mdp.rfe-confidence-coverage", coverage,
                   quick=dict(dim=4, horizon=4, n_episodes=2000, n_reps=64),
                   full=dict(dim=4, horizon=4, n_episodes=20_000, n_reps=64),
                   title="Reward-free exploration: the confidence set holds theta w.p. 1 - delta"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
