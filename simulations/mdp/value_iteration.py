"""
Value iteration converges geometrically at rate gamma
=====================================================

Value iteration from :math:`V_0 = 0` on random Garnet MDPs, with the exact
optimum :math:`V^\\star` from policy iteration.  The error
:math:`\\|V_k - V^\\star\\|_\\infty` is at most :math:`\\gamma^k \\|V^\\star\\|_\\infty`
(the Bellman operator is a :math:`\\gamma`-contraction), and the rate
:math:`\\gamma` is attained once the greedy policy is optimal, because the
optimal policy's kernel has the eigenvalue 1.  Plotted against
:math:`x = \\gamma^{-k}` the error is a power law of exponent :math:`-1`;
the claim fits that exponent (a log-log slope :math:`-c` would mean a rate
:math:`\\gamma^c`), with a bootstrap interval over the MDPs.
"""

import numpy as np

from expertlab import mdp, sim


def vi_error(s, backend, seed):
    m = mdp.instances.garnet(s["n_states"], s["n_actions"], s["branching"], n_mdps=s["n_mdps"], gamma=s["gamma"],
                             seed=seed)
    v_star = mdp.policy_iteration(m).values
    ks = np.array(s["iterations"])
    errs = []
    for k in ks:
        # epsilon far below any reachable step: exactly k iterations of the library's value iteration
        # ``solver_gamma`` (default: the MDP's) lets the solver run with another discount
        res = mdp.value_iteration(m.transitions, m.rewards, s.get("solver_gamma", m.gamma), epsilon=1e-300,
                                  max_iter=int(k))
        errs.append(np.abs(res.values - v_star).max(axis=-1))
    x = s["gamma"] ** (-ks.astype(float))
    y = np.stack(errs)
    bound = np.abs(v_star).max(axis=-1).mean() / x
    return sim.Measurement(x=x, y=y, xlabel="gamma^-k (k = iterations)", ylabel="||V_k - V*||_inf",
                           curves={"mean gamma^k ||V*||": (x, bound)}, info={"iterations": ks.tolist()})


EXPERIMENTS = [
    sim.Experiment("mdp.value-iteration-geometric", vi_error,
                   quick=dict(n_states=20, n_actions=4, branching=3, n_mdps=32, gamma=0.9,
                              iterations=[40, 60, 80, 100, 120, 140, 160, 180, 200]),
                   full=dict(n_states=100, n_actions=5, branching=5, n_mdps=256, gamma=0.9,
                             iterations=[40, 60, 80, 100, 120, 140, 160, 180, 200]),
                   title="Value iteration: ||V_k - V*|| ∝ gamma^k"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
