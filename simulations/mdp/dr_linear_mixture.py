"""
Linear-mixture distributionally robust MDPs: weight balls and offline learners
==============================================================================

The uncertainty set of Liu & Xu (2025) is a divergence ball around the
mixture weight :math:`\\theta^0`.  Three kinds of checks on random
linear-mixture MDPs:

* the weight-ball robust value is non-increasing in the radius and equals
  the nominal optimal value at radius 0 (TV, KL, chi-square);
* it is at least the (s, a)-rectangular robust value with a kernel ball of
  the same radius and divergence, which contains every kernel of the weight
  ball (data processing); the info reports how often it is strictly larger;
* the offline learners DRVTR and DRTTR with double pessimism (TV balls;
  DRVTR also with KL and chi-square balls): the certified robust
  suboptimality :math:`V^\\star_{\\rm rob} - \\hat V` decays as :math:`N^{-1/2}`
  in the number of offline transitions, and (TV) the pessimistic value
  lower-bounds the robust value of the returned policy in at least 90% of
  the datasets.  The realised robust suboptimality is drawn as an extra
  curve.
"""

import numpy as np

from expertlab import mdp, sim


def _instance(s, seed):
    return mdp.instances.random_linear_mixture(s["n_states"], s["n_actions"], dim=s["dim"],
                                               branching=s["branching"], n_mdps=s["n_mdps"], gamma=s["gamma"],
                                               seed=seed)


def _solve_grid(m, radii, divergence, epsilon):
    k = radii.size
    theta = np.broadcast_to(m.theta, (k, *m.theta.shape))  # axis 0 = radius, axis 1 = MDP
    return mdp.mixture_robust_value_iteration(m.features, theta, m.rewards, m.gamma, radius=radii[:, None, None, None],
                                              divergence=divergence, epsilon=epsilon)


def make_monotone(divergence):
    def measure(s, backend, seed):
        m = _instance(s, seed)
        radii = np.array(s["radii"], dtype=float)
        res = _solve_grid(m, radii, divergence, s["epsilon"])
        v = res.values  # (k, n_mdps, S)
        v_star = mdp.policy_iteration(m.to_tabular()).values
        rows = [-np.abs(v[0] - v_star).max(axis=-1)]
        rows += [(v[i - 1] - v[i]).min(axis=-1) for i in range(1, radii.size)]
        mean_v = v.mean(axis=(1, 2))
        return sim.Measurement(x=radii, y=np.stack(rows), xlabel="radius rho",
                               ylabel="decrease of the robust value (min over states)",
                               curves={"mean robust value": (radii, mean_v)},
                               info={"n_iter_max": int(res.n_iter.max()), "mean_value": mean_v.tolist(),
                                     "ball_excess_max": float(res.ball_excess.max())})

    return measure


def make_vs_rectangular(divergence):
    def measure(s, backend, seed):
        m = _instance(s, seed)
        radii = np.array(s["radii"], dtype=float)
        # setting mixture_radius_factor: the weight ball's radius relative to the kernel ball's (1: the claim)
        mix = _solve_grid(m, radii * s.get("mixture_radius_factor", 1.0), divergence, s["epsilon"]).values
        p = np.broadcast_to(m.transitions, (radii.size, *m.transitions.shape))
        r = np.broadcast_to(m.rewards, p.shape[:-1])
        rect = mdp.robust_value_iteration(p, r, m.gamma, radius=radii[:, None, None, None], divergence=divergence,
                                          epsilon=s["epsilon"]).values
        gap = mix - rect
        strict = gap[1:] > 1e-6
        return sim.Measurement(x=radii, y=gap.min(axis=-1), xlabel="radius rho",
                               ylabel="V_mixture - V_rectangular (min over states)",
                               curves={"mean weight-ball value": (radii, mix.mean(axis=(1, 2))),
                                       "mean (s,a)-rectangular value": (radii, rect.mean(axis=(1, 2)))},
                               info={"strict_fraction": float(strict.mean()),
                                     "mean_gap_by_radius": gap.mean(axis=(1, 2)).tolist()})

    return measure


def _offline_runs(s, seed):
    m = mdp.instances.random_linear_mixture(s["n_states"], s["n_actions"], dim=s["dim"], branching=s["branching"],
                                            seed=seed)
    r = np.broadcast_to(m.rewards, (s["horizon"], *m.rewards.shape))
    ns = np.unique(np.geomspace(s["n_min"], s["n_max"], s["n_points"]).round().astype(np.int64))
    data = mdp.sample_offline_dataset(m.features, m.theta, int(ns[-1]), s["n_reps"], seed=seed)
    learner = mdp.dr_vtr if s["method"] == "vtr" else mdp.dr_ttr
    kw = dict(radius=s["radius"], divergence=s["divergence"])
    best = mdp.mixture_robust_backward_induction(m.features, m.theta, r, **kw).values[0].mean()
    bound, sub, pess = [], [], []
    for n in ns:
        # settings beta_scale (penalty multiplier) and learner_radius_factor (radius the learner plans with,
        # relative to the true radius) make the learner wrong for the mutation checks; 1 is the sound learner
        res = learner(m.features, r, data.head(int(n)), beta_scale=s.get("beta_scale", 1.0),
                      radius=s["radius"] * s.get("learner_radius_factor", 1.0), divergence=s["divergence"])
        own = mdp.mixture_robust_backward_induction(m.features, m.theta, r, policy=res.policy, **kw)
        v_own = own.values[:, 0].mean(axis=-1)
        v_hat = res.values[:, 0].mean(axis=-1)
        bound.append(best - v_hat)
        sub.append(best - v_own)
        pess.append(v_hat <= v_own + 1e-9)
    return ns.astype(float), np.stack(bound), np.stack(sub), np.logical_and.accumulate(np.stack(pess), axis=0)


def make_bound(method, divergence):
    def measure(s, backend, seed):
        x, bound, sub, held = _offline_runs(dict(s, method=method, divergence=divergence), seed)
        return sim.Measurement(x=x, y=bound, xlabel="offline samples N",
                               ylabel="certified gap V*_rob(mu) - V_hat(mu)",
                               curves={"realised robust suboptimality": (x, sub.mean(axis=1)),
                                       "c N^-1/2": (x, bound.mean(axis=1)[-1] * np.sqrt(x[-1] / x))},
                               info={"realised_suboptimality": sub.mean(axis=1).tolist(),
                                     "fraction_pessimistic": float(held[-1].mean()),
                                     "fraction_suboptimal": (sub > 1e-12).mean(axis=1).tolist()})

    return measure


def make_pessimism(method):
    def measure(s, backend, seed):
        x, _, _, held = _offline_runs(dict(s, method=method, divergence="tv"), seed)
        return sim.Measurement(x=x, y=held.astype(float), xlabel="offline samples N",
                               ylabel="pessimism held at every size so far",
                               info={"fraction_held": held.mean(axis=1).tolist()})

    return measure


_PLAN_QUICK = dict(n_states=6, n_actions=2, dim=3, branching=3, n_mdps=4, gamma=0.7, epsilon=1e-10,
                   radii=[0.0, 0.01, 0.03, 0.1, 0.3, 1.0])
_PLAN_FULL = dict(n_states=12, n_actions=3, dim=5, branching=4, n_mdps=16, gamma=0.9, epsilon=1e-10,
                  radii=[0.0, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 2.0])
_OFF_QUICK = dict(n_states=8, n_actions=3, dim=4, branching=4, horizon=4, radius=0.1, n_reps=32,
                  n_min=300, n_max=100_000, n_points=6)
_OFF_FULL = dict(n_states=15, n_actions=4, dim=4, branching=4, horizon=5, radius=0.1, n_reps=128,
                 n_min=300, n_max=300_000, n_points=10)

EXPERIMENTS = []
for _d in ("tv", "kl", "chi2"):
    EXPERIMENTS += [
        sim.Experiment(f"mdp.dr-mixture-monotone-{_d}", make_monotone(_d), quick=_PLAN_QUICK, full=_PLAN_FULL,
                       title=f"Weight-ball robust value ({_d}): non-increasing in the radius, nominal at 0"),
        sim.Experiment(f"mdp.dr-mixture-vs-rectangular-{_d}", make_vs_rectangular(_d), quick=_PLAN_QUICK,
                       full=_PLAN_FULL, title=f"Weight ball vs (s,a)-rectangular ball ({_d}, same radius)"),
    ]
for _m in ("vtr", "ttr"):
    EXPERIMENTS += [
        sim.Experiment(f"mdp.dr-{_m}-bound-tv", make_bound(_m, "tv"), quick=_OFF_QUICK, full=_OFF_FULL,
                       title=f"DR{_m.upper()} (TV): certified robust suboptimality ~ N^-1/2"),
        sim.Experiment(f"mdp.dr-{_m}-pessimism-tv", make_pessimism(_m), quick=_OFF_QUICK, full=_OFF_FULL,
                       title=f"DR{_m.upper()} (TV): the pessimistic value lower-bounds the robust value"),
    ]
for _d in ("kl", "chi2"):  # the inner problems cost ~100 bisection steps: a smaller quick grid
    EXPERIMENTS.append(
        sim.Experiment(f"mdp.dr-vtr-bound-{_d}", make_bound("vtr", _d), full=_OFF_FULL,
                       quick=dict(_OFF_QUICK, n_reps=16, n_min=10_000, n_points=3),
                       title=f"DRVTR ({_d}): certified robust suboptimality ~ N^-1/2"))

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
