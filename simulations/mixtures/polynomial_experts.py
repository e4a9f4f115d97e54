"""
Mixtures of polynomial experts: KL risk against n, and the U-shape in m
=======================================================================

The KL risk of the maximum-likelihood mixture of m polynomial experts of
order k is bounded by an approximation term m^(-2(alpha ^ (k+1))/s) plus an
estimation term (m J_k + v_m) log n / n (Mendes & Jiang).  Inside the family
the risk falls as n^(-1) (up to the log factor); for a smooth target outside
it, the risk at fixed n is U-shaped in m.  The second experiment also plots
the mean risk against m and, in the full setting, the (m, k) trade-off at a
fixed parameter budget.
"""

import numpy as np

from expertlab import sim
from expertlab.mixtures import (PolyMoEParams, SmoothRegressionTarget, fit_polynomial_moe, kl_risk, parameter_count,
                                poly_moe_log_density, sample_polynomial_moe, sample_smooth_regression)


def truth(n_reps):
    """Two quadratic experts on [-1, 1]: means 0.5 + x^2 and -0.5 + x, gate (1, 3) against the reference expert."""
    return PolyMoEParams(np.tile([1.0, 0.0], (n_reps, 1)), np.tile([[[3.0], [0.0]]], (n_reps, 1, 1)),
                         np.tile([[[0.5, 0.0, 1.0], [-0.5, 1.0, 0.0]]], (n_reps, 1, 1)),
                         np.tile([0.1, 0.2], (n_reps, 1)), degree=2)


def kl_vs_n(s, backend, seed):
    """KL risk of the fit with ``s["n_experts"]`` experts (default 2, the truth's; started at the truth)."""
    ys, m = [], s.get("n_experts", 2)
    for n in s["sizes"]:
        t = truth(s["n_reps"])
        X, y, _ = sample_polynomial_moe(n, t, seed=np.random.SeedSequence([seed, n]))
        res = fit_polynomial_moe(X, y, m, 2, init=t if m == 2 else "slices", tol=s["tol"], max_iter=s["max_iter"],
                                 batched=True)
        ys.append(kl_risk(res.params, t, n_mc=s["n_mc"], n_quad=s["n_quad"], seed=seed + 1).mean)
    return sim.Measurement(x=np.array(s["sizes"], dtype=float), y=np.stack(ys), xlabel="sample size n",
                           ylabel="KL risk")


TARGET = SmoothRegressionTarget(noise_var=0.25, amplitude=1.0, frequency=np.pi)


def _risks(n, ms, degree, s, seed):
    """KL risk of each fit, shape (len(ms), n_reps): on fresh x (``s["risk"] = "held-out"``, the default) or,
    as a wrong measure of risk, on the training sample itself (``"in-sample"``)."""
    X, y, _ = sample_smooth_regression(n, s["n_reps"], TARGET, seed=np.random.SeedSequence([seed, n, degree]))
    out = []
    for m in ms:
        res = fit_polynomial_moe(X, y, m, degree, tol=s["tol"], max_iter=s["max_iter"], batched=True)
        if s.get("risk", "held-out") == "in-sample":
            true_log = -0.5 * (np.log(2 * np.pi * TARGET.noise_var) + (y - TARGET.mean(X)) ** 2 / TARGET.noise_var)
            out.append(np.mean(true_log - poly_moe_log_density(X, y, res.params), axis=1))
        else:
            out.append(kl_risk(res.params, TARGET, n_mc=s["n_mc"], n_quad=s["n_quad"], seed=seed + 1).mean)
    return np.stack(out)


def u_shape_in_m(s, backend, seed):
    ms = list(s["ms"])
    risk = _risks(s["n"], ms, 1, s, seed)                      # (len(ms), n_reps)
    mid = ms.index(s["m_mid"])
    won = (risk[mid] < risk[0]) & (risk[mid] < risk[-1])
    curves = {"mean KL risk vs m (k = 1)": (np.array(ms, float), risk.mean(axis=1))}
    for budget in s.get("budgets", []):                     # (m, k) trade-off at a fixed parameter budget
        pairs = [(min(range(1, 13), key=lambda m: abs(parameter_count(m, k, 1).total - budget)), k) for k in range(4)]
        r = [float(_risks(s["n"], [m], k, s, seed).mean()) for m, k in pairs]
        curves[f"budget {budget}: mean KL risk vs k"] = (np.array([k for _, k in pairs], float), np.array(r))
    return sim.Measurement(x=np.array([float(s["m_mid"])]), y=won[None, :].astype(float), xlabel="intermediate m",
                           ylabel="risk at m below both ends", curves=curves,
                           info={"ms": ms, "mean_risk": risk.mean(axis=1).tolist(),
                                 "stderr": (risk.std(axis=1, ddof=1) / np.sqrt(risk.shape[1])).tolist()})


EXPERIMENTS = [
    sim.Experiment("mixtures.poly-experts.well-specified-kl-vs-n", kl_vs_n,
                   quick=dict(sizes=[200, 400, 800, 1600], n_reps=20, tol=1e-8, max_iter=300, n_mc=500, n_quad=16),
                   full=dict(sizes=[int(round(v)) for v in np.geomspace(1e3, 6.4e4, 13)], n_reps=100, tol=1e-10,
                             max_iter=2000, n_mc=4000, n_quad=24),
                   title="Polynomial experts, well-specified: KL risk ∝ n^(-1) (up to log n)"),
    sim.Experiment("mixtures.poly-experts.u-shape-in-m", u_shape_in_m,
                   quick=dict(n=300, ms=[1, 3, 6], m_mid=3, n_reps=40, tol=1e-8, max_iter=150, n_mc=500, n_quad=16),
                   full=dict(n=300, ms=[1, 2, 3, 4, 6, 8, 10], m_mid=3, n_reps=100, tol=1e-9, max_iter=1000,
                             n_mc=2000, n_quad=24, budgets=[16, 24]),
                   title="Polynomial experts, misspecified: KL risk U-shaped in m at fixed n"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
