"""
Gaussian mixture MLE by batched EM
==================================

EM fits hundreds of replications of a two-component bivariate Gaussian
mixture at once (one array program over the replication axis).  For a
well-separated, identifiable mixture the maximum-likelihood estimate is
asymptotically normal, so the parameter error falls as n^(-1/2).  Drawn for
comparison: the error of the oracle that knows every point's component (the
fully labelled MLE), which the mixture MLE approaches when the components
barely overlap.
"""

import numpy as np

from expertlab import sim
from expertlab.mixtures import fit_gaussian_mixture

WEIGHTS = np.array([0.4, 0.6])
MEANS = np.array([[-3.0, 0.0], [3.0, 0.0]])
COVS = np.array([[[1.0, 0.3], [0.3, 1.0]], [[0.5, 0.0], [0.0, 1.5]]])


def sample(n, n_reps, seed):
    """``n_reps`` data sets of ``n`` points and their components (seeded by ``(seed, n)``)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, n]))
    z = (rng.uniform(size=(n_reps, n)) >= WEIGHTS[0]).astype(int)
    chol = np.linalg.cholesky(COVS)
    eps = rng.standard_normal((n_reps, n, 2))
    X = MEANS[z] + np.einsum("rnij,rnj->rni", chol[z], eps)
    return X, z


def parameter_error(weights, means, covs):
    """Norm of the stacked parameter differences, components matched by the first mean coordinate."""
    order = np.argsort(means[:, :, 0], axis=1)
    take = lambda a: np.take_along_axis(a, order.reshape(order.shape + (1,) * (a.ndim - 2)), axis=1)  # noqa: E731
    w, m, c = take(weights), take(means), take(covs)
    sq = (np.sum((w - WEIGHTS) ** 2, axis=1) + np.sum((m - MEANS) ** 2, axis=(1, 2))
          + np.sum((c - COVS) ** 2, axis=(1, 2, 3)))
    return np.sqrt(sq)


def error_vs_n(s, backend, seed):
    ys, oracle = [], []
    for n in s["sizes"]:
        err, orc = [], []
        X_all, z_all = sample(n, s["n_reps"], seed)
        block = max(1, min(s["n_reps"], s["max_points"] // n))
        for r0 in range(0, s["n_reps"], block):      # blocks bound the memory of one batched E-step
            X, z = X_all[r0:r0 + block], z_all[r0:r0 + block]
            res = fit_gaussian_mixture(X, 2, seed=seed, tol=s["tol"], max_iter=s.get("max_iter", 500),
                                       reg_covar=0.0, batched=True)
            p = res.params
            err.append(parameter_error(p.weights, p.means, p.covariances))
            lab = fit_gaussian_mixture(X, 2, labels=z, seed=seed, tol=s["tol"], reg_covar=0.0, batched=True)
            q = lab.params
            orc.append(parameter_error(q.weights, q.means, q.covariances))
        ys.append(np.concatenate(err))
        oracle.append(np.mean(np.concatenate(orc)))
    x = np.array(s["sizes"], dtype=float)
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="sample size n", ylabel="parameter error",
                           curves={"fully labelled MLE (oracle)": (x, np.array(oracle))})


EXPERIMENTS = [
    sim.Experiment("mixtures.gmm-mle-error-vs-n", error_vs_n,
                   quick=dict(sizes=[200, 800, 3200, 12800], n_reps=200, tol=1e-8, max_points=3_000_000),
                   full=dict(sizes=[200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200, 102400], n_reps=400,
                             tol=1e-10, max_points=4_000_000),
                   title="Gaussian-mixture MLE by EM: parameter error ∝ n^(-1/2)"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
