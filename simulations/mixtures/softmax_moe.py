"""
Softmax-gated Gaussian MoE: exact-fit Voronoi loss rate
=======================================================

With the number of experts known, the maximum-likelihood estimate of a
softmax-gated Gaussian mixture of experts converges to the truth in the
Voronoi loss D1 at the parametric rate n^(-1/2) (up to the logarithmic factor
of the bound).  Here two experts in one dimension are fitted by batched EM,
warm-started near the truth.
"""

import numpy as np

from expertlab import sim
from expertlab.mixtures import SoftmaxMoEParams, fit_softmax_moe, sample_softmax_moe, voronoi_loss_exact


def truth(n_reps):
    """The true parameters, in the gauge where the last expert's gate is zero."""
    return SoftmaxMoEParams(np.tile([0.5, 0.0], (n_reps, 1)), np.tile([[[2.0], [0.0]]], (n_reps, 1, 1)),
                            np.tile([[[1.0], [-1.0]]], (n_reps, 1, 1)), np.tile([1.0, -1.0], (n_reps, 1)),
                            np.tile([0.3, 0.5], (n_reps, 1)))


def perturbed(t, scale, rng):
    """Additive uniform noise of size ``scale`` on every free parameter (multiplicative on the variances)."""
    u = lambda a: rng.uniform(-scale, scale, size=np.shape(a))  # noqa: E731
    gb, gw = t.gate_bias + u(t.gate_bias), t.gate_weight + u(t.gate_weight)
    return SoftmaxMoEParams(gb - gb[:, -1:], gw - gw[:, -1:], t.expert_weight + u(t.expert_weight),
                            t.expert_bias + u(t.expert_bias), t.variance * np.exp(u(t.variance)))


def d1_vs_n(s, backend, seed):
    ys = []
    for n in s["sizes"]:
        t = truth(s["n_reps"])
        X, y, _ = sample_softmax_moe(n, t, seed=np.random.SeedSequence([seed, n]))
        init = perturbed(t, s["init_scale"], np.random.default_rng(np.random.SeedSequence([seed, n, 1])))
        frozen = None if s.get("frozen") is None else np.asarray(s["frozen"], dtype=bool)   # experts kept at init
        res = fit_softmax_moe(X, y, 2, init=init, frozen=frozen, tol=s["tol"], max_iter=s["max_iter"], batched=True)
        ys.append(voronoi_loss_exact(res.params, t))
    return sim.Measurement(x=np.array(s["sizes"], dtype=float), y=np.stack(ys), xlabel="sample size n",
                           ylabel="Voronoi loss D1")


EXPERIMENTS = [
    sim.Experiment("mixtures.softmax-moe.exact-fit-voronoi-d1-vs-n", d1_vs_n,
                   quick=dict(sizes=[500, 1000, 2000, 4000], n_reps=40, tol=1e-10, max_iter=1000, init_scale=0.1),
                   full=dict(sizes=[int(round(v)) for v in np.geomspace(1e3, 1e5, 20)], n_reps=40, tol=1e-10,
                             max_iter=2000, init_scale=0.1),
                   title="Softmax-gated Gaussian MoE: exact-fit Voronoi loss D1 ∝ n^(-1/2)"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
