"""
Shapley values of experts
=========================

Permutation sampling estimates each expert's Shapley value by a mean of
marginal contributions over random join orders: unbiased, with squared error
∝ 1/m in the number of permutations m.  Drawn for comparison: truncation,
which skips the coalitions already worth about as much as all experts
together (cheaper, slightly biased), and a router-guided Plackett–Luce
proposal with self-normalised importance weights, which on this game costs
accuracy rather than saving it.
"""

import numpy as np

from expertlab import sim
from expertlab.mixtures import shapley_exact, shapley_mc


def coverage_game(skill):
    skill = np.asarray(skill, dtype=float)
    return lambda masks: 1.0 - np.prod(np.where(masks, 1.0 - skill[None, :], 1.0), axis=1)


def mse_vs_budget(s, backend, seed):
    skill = np.linspace(0.05, 0.6, s["n_experts"])
    game = coverage_game(skill)
    exact = shapley_exact(game, s["n_experts"]).values
    ys, trunc, imp, saved = [], [], [], []
    for m in s["budgets"]:
        est = shapley_mc(game, s["n_experts"], m, seed=seed, n_reps=s["n_reps"]).values
        t = shapley_mc(game, s["n_experts"], m, seed=seed, n_reps=s["n_reps"], truncation=s["truncation"])
        trunc.append(np.mean(np.sum((t.values - exact) ** 2, axis=1)))
        saved.append(1.0 - t.n_evaluations / (s["n_reps"] * m * (s["n_experts"] + 1)))
        i = shapley_mc(game, s["n_experts"], m, seed=seed, n_reps=s["n_reps"], proposal=skill).values
        imp.append(np.mean(np.sum((i - exact) ** 2, axis=1)))
        # the claim's estimator: plain permutation sampling unless a setting names a comparison
        claimed = {"plain": est, "truncated": t.values, "importance": i}[s.get("estimator", "plain")]
        ys.append(np.sum((claimed - exact) ** 2, axis=1))
    x = np.array(s["budgets"], dtype=float)
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="permutations m", ylabel="summed squared error",
                           curves={f"truncated at {s['truncation']} ({np.mean(saved):.0%} fewer evaluations)":
                                   (x, np.array(trunc)),
                                   "router-guided importance sampling": (x, np.array(imp))})


EXPERIMENTS = [
    sim.Experiment("mixtures.shapley-mse-vs-budget", mse_vs_budget,
                   quick=dict(n_experts=10, budgets=[16, 64, 256, 1024], n_reps=200, truncation=0.05),
                   full=dict(n_experts=14, budgets=[16, 64, 256, 1024, 4096, 16384], n_reps=1000, truncation=0.05),
                   title="Shapley values of experts by permutation sampling: squared error ∝ 1/m"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
