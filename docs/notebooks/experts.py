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
# # Prediction with expert advice
#
# Full-information learners (`expertlab.experts`) see every expert's loss
# each round.  Here Hedge, AdaHedge and Squint meet a "needle": one expert is
# better than the others by a gap, and an adaptive learner should find it
# faster than the worst-case step size allows.

# %%
# %matplotlib inline
from expertlab import experts, sim
from expertlab.experts import instances

env = instances.needle(16, gap=0.2)
learners = {"hedge": experts.hedge(), "adahedge": experts.adahedge(), "squint": experts.squint()}
runs = {name: sim.run(learner, env, horizon=1000, n_reps=32, seed=0, backend="numpy")
        for name, learner in learners.items()}
runs["adahedge"]

# %% [markdown]
# One call of `sim.plot` draws the three mean curves with their 95% bands.

# %%
ax = sim.plot(list(runs.values()), labels=list(runs))

# %% [markdown]
# The final regrets, as a pandas table (`to_pandas` is long: one row per
# metric, checkpoint and replication).

# %%
import pandas as pd

frames = [r.to_pandas() for r in runs.values()]
df = pd.concat(frames)
last = df[(df.metric == "regret") & (df.checkpoint == 1000)]
summary = last.groupby("learner")["value"].agg(["mean", "sem"])
summary

# %% [markdown]
# ## How the regret grows with the horizon
#
# With a fixed gap, the adaptive learners' regret stops growing once the
# best expert is found: the fitted exponent of the regret in `T` over the
# last decade is well below the worst-case 1/2.  `sim.check_rate` fits a
# claim on the replications with a bootstrap interval.

# %%
claim = sim.RateClaim(
    "notebook.adahedge-needle-below-sqrt", quantity="regret", variable="T", law="power_at_most",
    predicted=0.5, tolerance=0.0, fit_decades=1.0,
    source="de Rooij, van Erven, Grünwald & Koolen 2014, Thm 8 (AdaHedge: regret O(sqrt(L* ln N)))")
res = runs["adahedge"]
check = sim.check_rate(claim, res.checkpoints, res.metric("regret"))
print(check.summary())
assert check.passed

# %% [markdown]
# The registered claims of a learner, with their sources:

# %%
for name, c in sim.claims("adahedge").items():
    print(name, "-", c.law, c.predicted, "-", c.source)
