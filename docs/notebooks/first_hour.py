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
# # A first hour with expertlab
#
# One learner, one environment, one call to `sim.run`: the engine advances
# many independent Monte Carlo replications together and returns a
# `RunResult`.  This notebook runs Hedge on ten fair coins, compares two
# step-size schedules, exports the numbers to pandas and checks a rate claim.

# %%
# %matplotlib inline
from expertlab import sim
from expertlab.experts import hedge, instances

env = instances.fair_coins(10)
res = sim.run(hedge(), env, horizon=1000, n_reps=200, seed=1, backend="numpy")
res

# %% [markdown]
# `res.metrics["regret"]` has one row per checkpoint and one column per
# replication.  On fair coins every learner has the same expected regret,
# known in closed form, so the Monte Carlo mean must be within a few standard
# errors of it.

# %%
mean, se = res.mean()[-1], res.stderr()[-1]
exact = env.exact_expected_regret(1000)
print(f"regret at T=1000: {mean:.2f} ± {se:.2f} (exact {exact:.4f})")
assert abs(mean - exact) < 4 * se

# %% [markdown]
# ## Plots
#
# `result.plot()` draws the mean with a 95% band; `sim.plot` puts several
# runs on one axes, labelled by the parameters that differ (or by `labels`).

# %%
ax = res.plot()

# %%
needle = instances.needle(20, gap=0.1)
runs = [sim.run(hedge(schedule=s), needle, horizon=1000, n_reps=100, seed=3, backend="numpy")
        for s in ("anytime", "doubling")]
ax = sim.plot(runs, labels=["anytime", "doubling"], loglog=True)

# %% [markdown]
# ## To pandas
#
# `to_pandas` gives a long table (one row per metric, checkpoint and
# replication), ready for `groupby`.

# %%
df = res.to_pandas()
table = df[df.metric == "regret"].groupby("checkpoint")["value"].agg(["mean", "sem"])
table.tail()

# %% [markdown]
# ## A rate claim
#
# The claims registry states each rate with its source.  `sim.check_rate`
# fits the claim on the replications (bootstrap confidence interval) and
# says whether the prediction is inside it.

# %%
claim = sim.get_claim("hedge.fair-coins-exact")
print(claim.source)
check = sim.check_rate(claim, res.checkpoints[-1:], res.metric("regret")[-1:])
print(check.summary())
assert check.passed
