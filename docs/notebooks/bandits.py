# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Regret bandits
#
# A bandit learner sees only the reward of the arm it pulls.  The learners of
# `expertlab.bandits` (UCB1, MOSS, KL-UCB, Thompson sampling, EXP3, ...) run
# through the same `sim.run` as the experts, on the arm sets of
# `expertlab.bandits.instances`.

# %%
# %matplotlib inline
import numpy as np

from expertlab import bandits, sim
from expertlab.bandits import instances

env = instances.bernoulli(np.linspace(0.1, 0.9, 9).tolist())
runs = [sim.run(learner, env, horizon=1000, n_reps=32, seed=0, backend="numpy")
        for learner in (bandits.ucb1(), bandits.kl_ucb(), bandits.thompson_sampling())]
runs[0]

# %%
ax = sim.plot(runs)

# %% [markdown]
# Each run also records how often every arm was pulled (`final["pulls"]`,
# one row per replication): the best arm (mean 0.9) gets most pulls.

# %%
pulls = runs[2].final["pulls"].mean(axis=0)
print(np.round(pulls, 1))
assert pulls.argmax() == 8

# %% [markdown]
# Per-replication numbers in pandas:

# %%
df = runs[0].to_pandas()
df[df.checkpoint == 1000].groupby("metric")["value"].describe()

# %% [markdown]
# ## UCB1's logarithmic regret
#
# The registered claim `bandits.ucb1-log-slope` states that UCB1's
# pseudo-regret grows linearly in `ln T` on these nine arms, with the slope an
# index-crossing model gives over the claim's window (the last decade of
# `T = 10^4`; the limit `sum 2/Delta_i` is only reached much later).  A run
# of that length, fitted over its last decade:

# %%
claim = sim.get_claim("bandits.ucb1-log-slope")
res = sim.run(bandits.ucb1(), env, horizon=10_000, n_reps=64, seed=1, backend="numpy")
check = sim.check_rate(claim, res.checkpoints, res.metric("regret"))
print(check.summary())
assert check.passed
