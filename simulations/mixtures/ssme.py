"""
SSME: accuracy estimates from a few labels and many unlabelled scores
=====================================================================

Three classifiers score every point; their logits are jointly Gaussian given
the class.  With 20 labelled points fixed, SSME (Gaussian class-conditionals,
posterior label draws) estimates each classifier's accuracy, and its error
against the population accuracy falls as n_u^(-1/2) in the number of
unlabelled points.  Drawn for comparison: the labelled-only estimate, whose
error does not change with n_u.

``python simulations/mixtures/ssme.py --real-data`` also compares SSME (KDE
with the improved Sheather–Jones and Scott bandwidths, shared by the classes or
one per class, and Gaussian class-conditionals) with its baselines on
scikit-learn's bundled data sets, with heterogeneous classifiers trained on a
separate split.
"""

import sys

import numpy as np
from scipy.special import ndtr

from expertlab import sim
from expertlab.mixtures import estimate_metrics, fit_ssme, labeled_only

PRIOR = np.array([0.4, 0.6])
MEANS = np.array([[-1.8, -1.2, -2.2], [1.5, 2.0, 0.9]])           # logit log(p1/p0) of each classifier
COV = np.array([[1.0, 0.3, 0.2], [0.3, 1.2, 0.3], [0.2, 0.3, 0.8]])
N_LABELED = 20


def population_accuracy():
    """Accuracy of each classifier (predict class 1 iff its logit is positive) under the score model."""
    sd = np.sqrt(np.diag(COV))
    return PRIOR[0] * ndtr(-MEANS[0] / sd) + PRIOR[1] * ndtr(MEANS[1] / sd)


def sample(n, n_reps, seed):
    """Probabilities ``(n_reps, n, 3, 2)``, labels with ``-1`` beyond the first 20, and the true labels."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, n]))
    y = (rng.uniform(size=(n_reps, n)) >= PRIOR[0]).astype(np.int64)
    logit = MEANS[y] + rng.standard_normal((n_reps, n, 3)) @ np.linalg.cholesky(COV).T
    p1 = 1.0 / (1.0 + np.exp(-logit))
    probs = np.stack([1.0 - p1, p1], axis=-1)
    labels = np.where(np.arange(n) < N_LABELED, y, -1)
    return probs, labels, y


def error_vs_n_unlabeled(s, backend, seed):
    truth = population_accuracy()
    ys, lab_err = [], []
    for n_u in s["sizes"]:
        n = n_u + N_LABELED
        probs_all, labels_all, _ = sample(n, s["n_reps"], seed)
        block = max(1, min(s["n_reps"], s["max_points"] // (n * s["n_draws"])))
        err = []
        if s.get("estimator", "ssme") == "labeled_only":      # the 20 labels alone, the unlabelled points unused
            lo = labeled_only(probs_all[:, :N_LABELED], labels_all[:, :N_LABELED], metrics=("accuracy",))
            err.append(np.mean(np.abs(lo.estimates["accuracy"] - truth), axis=1))
        for r0 in range(0, s["n_reps"] if not err else 0, block):   # blocks bound the memory of the label draws
            probs, labels = probs_all[r0:r0 + block], labels_all[r0:r0 + block]
            res = fit_ssme(probs, labels, density="gaussian", tol=s["tol"], max_iter=200)
            est = estimate_metrics(probs, labels, res.posterior, metrics=("accuracy",), n_draws=s["n_draws"],
                                   seed=seed, rep_ids=np.arange(r0, r0 + len(probs)))
            err.append(np.mean(np.abs(est.estimates["accuracy"] - truth), axis=1))
        ys.append(np.concatenate(err))
        lo = labeled_only(probs_all[:, :N_LABELED], labels_all[:, :N_LABELED], metrics=("accuracy",))
        lab_err.append(np.mean(np.abs(lo.estimates["accuracy"] - truth)))
    x = np.array(s["sizes"], dtype=float)
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="unlabelled points n_u", ylabel="|accuracy error|",
                           curves={f"labelled only ({N_LABELED} labels)": (x, np.array(lab_err))})


EXPERIMENTS = [
    sim.Experiment("mixtures.ssme-accuracy-error-vs-n-unlabeled", error_vs_n_unlabeled,
                   quick=dict(sizes=[500, 1000, 2000, 4000, 8000], n_reps=128, n_draws=10, tol=1e-7,
                              max_points=4_000_000),
                   full=dict(sizes=[500, 1000, 2000, 4000, 8000, 16000, 32000, 64000], n_reps=400, n_draws=20,
                             tol=1e-10, max_points=8_000_000),
                   title="SSME accuracy estimate: error ∝ n_u^(-1/2) with 20 labels"),
]


def real_data_comparison(dataset="breast_cancer", *, n_labeled=20, n_splits=10, seed=0, n_draws=50,
                         metrics=("accuracy", "auc"),
                         variants=(("kde", "isj", True), ("kde", "scott", True), ("kde", "scott", False),
                                   ("gaussian", None, True))):
    """Mean absolute error of SSME variants and the baselines on a scikit-learn data set, per split.

    Four heterogeneous classifiers (:func:`~expertlab.mixtures.classifier_pool`) are trained on a
    third of the data; the rest is the evaluation pool, of which ``n_labeled`` points are labelled.
    A variant is ``(density, bandwidth rule, shared_bandwidth)``.  Returns ``{method: {metric: array
    (n_splits,)}}``: the mean over classifiers of ``|estimate - value on the whole pool|`` in each
    split (NaN where a method leaves the metric undefined, e.g. an AUC without a labelled positive).
    Majority vote, pseudo-labels, Dawid–Skene and PPI are reported for the accuracy only.
    """
    from expertlab.mixtures import classifier_pool, dawid_skene, majority_vote, ppi_accuracy, pseudo_labels

    probs, y_ev = classifier_pool(dataset, seed=seed)
    truth = labeled_only(probs[None], y_ev[None], metrics=metrics).estimates
    rng = np.random.default_rng(np.random.SeedSequence([seed, n_labeled]))
    labels = np.full((n_splits, len(y_ev)), -1)
    for r in range(n_splits):
        pick = rng.choice(len(y_ev), n_labeled, replace=False)
        labels[r, pick] = y_ev[pick]
    P = np.broadcast_to(probs, (n_splits,) + probs.shape).copy()
    K = probs.shape[-1]
    est = {}
    for density, rule, shared in variants:
        kw = {"bandwidth": rule, "shared_bandwidth": shared} if density == "kde" else {}
        res = fit_ssme(P, labels, density=density, **kw)
        tag = f"{density}, {rule}, {'shared' if shared else 'per-class'}" if density == "kde" else density
        est[f"ssme ({tag})"] = estimate_metrics(P, labels, res.posterior, metrics=metrics, n_draws=n_draws,
                                                seed=seed).estimates
    est["labeled only"] = labeled_only(P, labels, metrics=metrics).estimates
    for name, fn in (("pseudo-labels", pseudo_labels), ("majority vote", majority_vote)):
        est[name] = fn(P, labels, metrics=("accuracy",)).estimates
    ds = dawid_skene(np.argmax(P, -1), labels, n_classes=K)
    est["dawid-skene"] = estimate_metrics(P, labels, ds.posterior, metrics=("accuracy",), n_draws=n_draws,
                                          seed=seed).estimates
    est["ppi"] = {"accuracy": ppi_accuracy(P, labels).estimate}
    return {name: {m: np.mean(np.abs(v - truth[m][0]), axis=1) for m, v in e.items()} for name, e in est.items()}


def print_real_data_table(dataset, errors, *, n_boot=2000, seed=1):
    """Mean absolute errors with 95% bootstrap intervals over splits, and the paired difference from labelled-only."""
    base = errors["labeled only"]
    n_splits = len(base["accuracy"])
    boot = np.random.default_rng(seed).integers(0, n_splits, (n_boot, n_splits))
    print(f"{dataset} ({n_splits} splits): mean absolute error [95% bootstrap CI]; "
          "labelled-only minus method (paired) [95% CI]")
    for name, errs in errors.items():
        cells = []
        for m, e in errs.items():
            if np.any(np.isnan(e)):
                cells.append(f"{m}: undefined in {int(np.isnan(e).sum())}/{n_splits} splits")
                continue
            lo, hi = np.quantile(e[boot].mean(1), [0.025, 0.975])
            cell = f"{m}: {e.mean():.4f} [{lo:.4f}, {hi:.4f}]"
            if name != "labeled only" and not np.any(np.isnan(base[m])):
                d = (base[m] - e)[boot].mean(1)
                cell += f" gain [{np.quantile(d, 0.025):+.4f}, {np.quantile(d, 0.975):+.4f}]"
            cells.append(cell)
        print(f"  {name:32s} " + "   ".join(cells))


if __name__ == "__main__":
    if "--real-data" in sys.argv:
        for name, splits in (("wine", 16), ("iris", 16), ("breast_cancer", 16), ("digits", 4)):
            print_real_data_table(name, real_data_comparison(name, n_splits=splits))
        raise SystemExit(0)
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
