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
# # Load balancing of a mixture of experts
#
# Auxiliary-loss-free balancing (`alf_lb`) routes each batch of tokens to the
# top-`k` experts of their scores plus a per-expert bias, and moves the
# biases against the observed loads.  A run is a `sim.run` in batches.

# %%
# %matplotlib inline
from expertlab import balance, sim

route = balance.routing(balance.generators.iid_plus_offset([0.3, 0.1, -0.1, -0.3]), n_tokens=128, k=2)
runs = [sim.run(balance.alf_lb(step=step, rule="sign"), route, horizon=200, n_reps=8, seed=0,
                backend="numpy")
        for step in (0.001, 0.01)]
runs[1]

# %% [markdown]
# `maxvio` is the largest relative overload of an expert in a batch: a
# larger step balances faster.

# %%
ax = sim.plot(runs, metric="maxvio", labels=["step 0.001", "step 0.01"])

# %%
df = runs[1].to_pandas()
df[df.metric == "maxvio"].groupby("checkpoint")["value"].mean().tail()

# %% [markdown]
# ## A claim
#
# After the transient, the imbalance of the sign rule with a constant step
# fluctuates around a level set by the step (Han & Zhong, arXiv 2512.03915):
# over the second half of the run it does not grow with the number of
# batches, so its fitted growth exponent is at most 0.

# %%
claim = sim.RateClaim(
    "notebook.alf-lb-maxvio-stationary", quantity="maxvio", variable="batches", law="power_at_most",
    predicted=0.0, tolerance=0.1, fit_decades=0.3,
    source="Han & Zhong, arXiv 2512.03915 (approximate balance); Wang et al., arXiv 2408.15664 (the sign rule)")
res = runs[1]
check = sim.check_rate(claim, res.checkpoints, res.metric("maxvio"))
print(check.summary())
assert check.passed
