"""
Explore-then-commit: the exact expected regret
==============================================

Two Bernoulli arms 0.4 and 0.6, 25 exploration pulls each, horizon 2000: the
Monte Carlo mean pseudo-regret of explore-then-commit matches the exact
value m Delta + (T - 2m) Delta P(S_0 >= S_1) with binomial S_j.
"""

import numpy as np

from expertlab import sim
from expertlab.bandits import etc_expected_regret, explore_then_commit, instances


def exact_regret(s, backend, seed):
    L = explore_then_commit(**s.get("learner_params", {"m": 25}))  # the exact value below is for m = 25
    res = sim.run(L, instances.bernoulli([0.4, 0.6]), horizon=2000, n_reps=s["n_reps"], seed=seed,
                  backend=backend, checkpoints=[2000])
    exact = etc_expected_regret(0.4, 0.6, 25, 2000)
    x = np.array([2000.0])
    return sim.Measurement(x=x, y=res.metrics["regret"], xlabel="T", ylabel="pseudo-regret at T = 2000",
                           curves={f"exact {exact:.4f}": (x, np.array([exact]))})


EXPERIMENTS = [
    sim.Experiment("bandits.etc-exact-regret", exact_regret, quick=dict(n_reps=20_000), full=dict(n_reps=500_000),
                   title="Explore-then-commit on Bernoulli(0.4), Bernoulli(0.6): exact expected regret"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
