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
# # Mixture models
#
# The estimators of `expertlab.mixtures` follow the scikit-learn contract
# (`fit`, `get_params`, `set_params`, `clone`) and take one `seed`.  Here a
# Gaussian mixture is fitted, its number of components chosen by BIC, and
# the error of the fit checked against the parametric rate.

# %%
# %matplotlib inline
import matplotlib.pyplot as plt
import numpy as np

from expertlab.mixtures import GaussianMixture

rng = np.random.default_rng(0)
X = np.concatenate([rng.normal(-3, 1, (300, 2)), rng.normal(3, 1, (200, 2))])
gm = GaussianMixture(2, covariance_type="diag", seed=0).fit(X)
gm

# %% [markdown]
# ## Choosing the number of components
#
# The Bayesian information criterion is smallest at the true number of
# components.

# %%
bic = {c: GaussianMixture(c, covariance_type="diag", seed=0).fit(X).bic(X) for c in (1, 2, 3, 4)}
print(bic)
assert min(bic, key=bic.get) == 2

# %%
fig, ax = plt.subplots()
ax.plot(list(bic), list(bic.values()), "o-")
ax.set_xlabel("components")
ax.set_ylabel("BIC")

# %% [markdown]
# ## The weights as a table

# %%
import pandas as pd

pd.DataFrame({"weight": gm.weights_, "mean_x": gm.means_[:, 0], "mean_y": gm.means_[:, 1]})

# %% [markdown]
# ## The parametric rate
#
# The maximum likelihood estimator of a well-separated mixture is
# `sqrt(n)`-consistent (van der Vaart 1998, Thm 5.39): the error of the
# fitted means falls like `n^(-1/2)`.  `fit_gaussian_mixture` fits 32 data
# sets of each size at once (`batched=True`), and `sim.check_rate` checks
# the exponent with a bootstrap interval over the data sets.

# %%
from expertlab import sim
from expertlab.mixtures import fit_gaussian_mixture

truth = np.array([[-3.0, -3.0], [3.0, 3.0]])
sizes = np.array([100, 300, 1000, 3000])
errors = np.empty((sizes.size, 32))
for i, n in enumerate(sizes):
    labels = np.arange(n) % 2                                         # equal weights
    data = truth[labels] + rng.normal(size=(32, n, 2))                # 32 data sets of size n
    means = fit_gaussian_mixture(data, 2, covariance_type="diag", seed=0, batched=True).params.means
    means = np.sort(means, axis=1)                                    # components in the order of truth
    errors[i] = np.abs(means - truth).max(axis=(1, 2))
claim = sim.RateClaim("notebook.gmm-mean-error-vs-n", quantity="max error of the means", variable="n",
                      law="power", predicted=-0.5, tolerance=0.15,
                      source="van der Vaart 1998 (Asymptotic Statistics), Thm 5.39")
check = sim.check_rate(claim, sizes, errors)
print(check.summary())
assert check.passed
