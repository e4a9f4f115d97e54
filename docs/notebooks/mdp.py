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
# # Episodic MDPs
#
# An episodic model is a `sim.run` environment whose unit is the episode.
# UCBVI (Azar, Osband & Munos 2017) learns a random "garnet" MDP; its regret
# against the optimal policy is computed exactly from the model, episode by
# episode.

# %%
# %matplotlib inline
from expertlab import mdp, sim
from expertlab.mdp import instances

env = instances.garnet_episodic(n_states=4, n_actions=2, episode_length=3, seed=1)
res = sim.run(mdp.ucbvi(bonus="bernstein"), env, horizon=300, n_reps=32, seed=0, backend="numpy")
res

# %%
print(res.unit, sorted(res.metrics))
ax = res.plot()

# %% [markdown]
# The same numbers as an `xarray.Dataset` and as a pandas table:

# %%
ds = res.to_xarray()
df = res.to_pandas()
df[df.metric == "regret"].groupby("checkpoint")["value"].mean().tail()

# %% [markdown]
# ## Sublinear regret
#
# The regret of UCBVI is of order `sqrt(K)` in the number of episodes `K`
# (Azar et al. 2017, Thm 1 and 2), so its fitted exponent in `K` is at most
# 1/2 once the learner has seen each state-action pair a few times; on a
# short run we check the weaker statement that it is sublinear.

# %%
claim = sim.RateClaim(
    "notebook.ucbvi-sublinear", quantity="regret", variable="K", law="power_at_most",
    predicted=1.0, tolerance=0.0, fit_decades=1.0,
    source="Azar, Osband & Munos 2017, Thm 2 (UCBVI-BF: regret O(sqrt(H S A T)))")
check = sim.check_rate(claim, res.checkpoints, res.metric("regret"))
print(check.summary())
assert check.passed
