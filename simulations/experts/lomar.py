"""
LOMAR: learning-augmented matching with a robustness guarantee
==============================================================

LOMAR follows a proposer's matches only while its reward stays above
ρ × (the expert's reward + a reservation for the nodes it took from the
expert) − B.  Against the proposer that grabs exactly the nodes greedy will
need later, the guarantee ρ × greedy − B is tight; with a useful proposer
LOMAR's reward moves between the proposer's and the expert's as ρ goes
from 0 to 1.
"""

import numpy as np

from expertlab import sim
from expertlab.experts import lomar, random_bipartite


def reward_vs_rho(s, backend, seed):
    env = random_bipartite(s["n_offline"], s["n_online"], s["edge_prob"])
    rhos = np.array(s["rho"], dtype=float)
    B = s["budget"]
    scale = s.get("rho_scale", 1.0)  # the rho LOMAR's switching test uses, relative to the rho checked
    slack, curves = [], {}
    for prop in s["proposers"]:
        ratios = []
        for rho in rhos:
            r = sim.run(lomar(rho * scale, budget=B, proposer=prop), env, horizon=env.n_online, n_reps=s["n_reps"],
                        seed=seed, backend=backend, checkpoints=[env.n_online])
            R, RE = r.metrics["reward"][-1], r.metrics["expert_reward"][-1]
            ratios.append((R / RE).mean())
            if prop == s["adversary"]:
                slack.append((R - rho * RE + B) / RE)
        curves[f"{prop}: reward / greedy"] = (rhos, np.array(ratios))
    curves["guarantee ρ (B = 0)"] = (rhos, rhos)
    x = np.maximum(rhos, 1e-3)  # the grid starts at rho = 0; x is only a label here
    return sim.Measurement(x=x, y=np.stack(slack), xlabel="ρ",
                           ylabel=f"(reward − ρ·greedy + B) / greedy, {s['adversary']} proposer", curves=curves)


EXPERIMENTS = [
    sim.Experiment("experts.lomar-robustness", reward_vs_rho,
                   quick=dict(n_offline=20, n_online=40, edge_prob=0.3, budget=0.0, n_reps=300,
                              rho=[0.0, 0.25, 0.5, 0.75, 0.9, 1.0], proposers=["spoiler", "noisy_greedy", "random"],
                              adversary="spoiler"),
                   full=dict(n_offline=100, n_online=200, edge_prob=0.1, budget=0.0, n_reps=2000,
                             rho=[0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0],
                             proposers=["spoiler", "min_weight", "noisy_greedy", "random"], adversary="spoiler"),
                   title="LOMAR: reward ≥ ρ · expert − B against every proposer"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
