"""
The robust value is non-increasing in the radius
================================================

Robust value iteration with (s, a)-rectangular total-variation, KL and
chi-square balls around the nominal kernel of random Garnet MDPs, over a
grid of radii starting at 0.  Larger balls contain smaller ones, so the
adversary can only do better: each state's robust value is non-increasing in
the radius, and at radius 0 it is the nominal optimal value (from policy
iteration).  Each claim is deterministic (the ``always`` law): row 0 of the
data is ``-max_s |V_rob(0) - V*|`` and row ``k`` is
``min_s (V_rob(rho_{k-1}) - V_rob(rho_k))``; every entry must be at least
``-1e-7``, the allowance for the solvers' stopping error.
"""

import numpy as np

from expertlab import mdp, sim


def make_measure(divergence):
    def measure(s, backend, seed):
        m = mdp.instances.garnet(s["n_states"], s["n_actions"], s["branching"], n_mdps=s["n_mdps"],
                                 gamma=s["gamma"], seed=seed)
        radii = np.array(s["radii"], dtype=float)
        k = radii.size
        # one batched solve: axis 0 = radius, axis 1 = MDP
        p = np.broadcast_to(m.transitions, (k, *m.transitions.shape))
        r = np.broadcast_to(m.rewards, (k, *m.rewards.shape))
        rho = radii[:, None, None, None]
        res = mdp.robust_value_iteration(p, r, m.gamma, radius=rho, divergence=divergence, epsilon=s["epsilon"])
        v = res.values  # (k, n_mdps, S)
        v_star = mdp.policy_iteration(m).values
        rows = [-np.abs(v[0] - v_star).max(axis=-1)]
        rows += [(v[i - 1] - v[i]).min(axis=-1) for i in range(1, k)]
        mean_v = v.mean(axis=(1, 2))
        return sim.Measurement(x=radii, y=np.stack(rows), xlabel="radius rho",
                               ylabel="decrease of the robust value (min over states)",
                               curves={"mean robust value": (radii, mean_v)},
                               info={"n_iter_max": int(res.n_iter.max()), "mean_value": mean_v.tolist()})

    return measure


_QUICK = dict(n_states=6, n_actions=2, branching=3, n_mdps=4, gamma=0.8, epsilon=1e-10,
              radii=[0.0, 0.01, 0.03, 0.1, 0.3, 1.0])
_FULL = dict(n_states=12, n_actions=3, branching=4, n_mdps=16, gamma=0.9, epsilon=1e-10,
             radii=[0.0, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 2.0])

EXPERIMENTS = [
    sim.Experiment(f"mdp.robust-monotone-{d}", make_measure(d), quick=_QUICK, full=_FULL,
                   title=f"Robust value iteration ({d}): non-increasing in the radius, nominal at 0")
    for d in ("tv", "kl", "chi2")
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
