"""
Private experts in the realizable regime
========================================

The sparse-vector switching learner (Asi, Feldman, Koren & Talwar 2023, as
reconstructed in :func:`expertlab.experts.sparse_vector_experts`) follows a
random expert and drops it, privately, once it has lost.  On a realizable
instance its regret stops growing in T, scales as 1/eps up to a log factor
and grows only polylogarithmically in the number of experts; private FTPL
(fresh report-noisy-min every round) and DP-FTRL with the tree mechanism are
drawn for comparison.  Beyond the realizable regime, the small-loss variant
(:func:`expertlab.experts.small_loss_experts`, a doubling threshold) keeps
its regret flat in T and at most linear in the best expert's loss L*, where
the realizable learner becomes linear in T.  The same switching rule with
one switch per expert (the naive private elimination) is linear in d.
"""

import numpy as np

from expertlab import sim
from expertlab.experts import (noisy_ftpl, privacy_cost, realizable, small_loss_experts, small_loss_instance,
                               sparse_vector_experts, tree_ftrl)


def _run(learner, inst, T, n_reps, seed, **kw):
    return sim.run(learner, inst, T, n_reps, seed, backend="numpy", metrics=["regret"], **kw)


def _final(learner, inst, T, n_reps, seed):
    """Final regret per replication, shape (n_reps,)."""
    return _run(learner, inst, T, n_reps, seed, checkpoints=[T]).metrics["regret"][-1]


def flat_in_T(s, backend, seed):
    T, d, eps = s["horizon"], s["n_experts"], s["epsilon"]
    inst = realizable(d, s["p"])
    L = sparse_vector_experts(eps, T, **s.get("learner_params", {}))
    r = _run(L, inst, T, s["n_reps"], seed)
    curves = {}
    for name, f in (("private FTPL (noisy min per round)", noisy_ftpl), ("DP-FTRL, tree mechanism", tree_ftrl)):
        b = _run(f(eps, T), inst, T, s["baseline_reps"], seed)
        curves[name] = (b.checkpoints, b.mean())
    return sim.Measurement(x=r.checkpoints.astype(float), y=r.metrics["regret"], xlabel="round T", ylabel="regret",
                           curves=curves, info={"epsilon": privacy_cost(L, inst, T).epsilon,
                                                "final_baselines": {k: float(v[1][-1]) for k, v in curves.items()}})


def vs_epsilon(s, backend, seed):
    T, d = s["horizon"], s["n_experts"]
    lp = s.get("learner_params", {})
    ys = [_final(sparse_vector_experts(e, T, **lp), realizable(d, s["p"]), T, s["n_reps"], seed) for e in s["epsilons"]]
    x = np.array(s["epsilons"], dtype=float)
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="epsilon", ylabel="final regret",
                           curves={"c / eps": (x, np.mean(ys[0]) * x[0] / x)})


def _switch_budget(s, d):
    """``max_switches`` of the learner: ``None`` (the default log2 d + 3) or one switch per expert."""
    return {"log": None, "d": d}[s.get("switch_budget", "log")]


def vs_experts(s, backend, seed):
    T, eps = s["horizon"], s["epsilon"]
    ys = [_final(sparse_vector_experts(eps, T, max_switches=_switch_budget(s, d)), realizable(d, s["p"]), T,
                 s["n_reps"], seed) for d in s["n_experts"]]
    x = np.array(s["n_experts"], dtype=float)
    curves = {"∝ sqrt(d)": (x, np.mean(ys[0]) * np.sqrt(x / x[0]))}
    info = {}
    if s["baseline_reps"]:
        tree = [float(_final(tree_ftrl(eps, T), realizable(d, s["p"]), T, s["baseline_reps"], seed).mean())
                for d in s["n_experts"]]
        curves["DP-FTRL, tree mechanism"] = (x, np.array(tree))
        info["tree_final"] = tree
    return sim.Measurement(x=x, y=np.stack(ys), xlabel="number of experts d", ylabel="final regret",
                           curves=curves, info=info)


def small_loss_vs_lstar(s, backend, seed):
    T, d, eps = s["horizon"], s["n_experts"], s["epsilon"]
    lp = s.get("learner_params", {})
    ys = [_final(small_loss_experts(eps, T, **lp), small_loss_instance(d, s["p"], best_loss=b), T, s["n_reps"], seed)
          for b in s["best_loss"]]
    real = [float(_final(sparse_vector_experts(eps, T), small_loss_instance(d, s["p"], best_loss=b), T,
                         s["baseline_reps"], seed).mean()) for b in s["best_loss"]]
    x = np.array(s["best_loss"], dtype=float)
    y = np.stack(ys)
    return sim.Measurement(x=x, y=y, xlabel="loss of the best expert L*", ylabel="final regret",
                           curves={"L* ln d": (x, x * np.log(d)), "realizable learner": (x, np.array(real))},
                           info={"regret_over_Lstar_ln_d": (y.mean(axis=1) / (x * np.log(d))).tolist(),
                                 "realizable_final": real})


def small_loss_flat_in_T(s, backend, seed):
    """Regret in T of ``learner`` (``"small_loss"`` or ``"realizable"``); the other is drawn for comparison."""
    T, d, eps = s["horizon"], s["n_experts"], s["epsilon"]
    inst = small_loss_instance(d, s["p"], best_loss=s["best_loss"])
    make = {"small_loss": small_loss_experts, "realizable": sparse_vector_experts}
    names = {"small_loss": "small-loss learner", "realizable": "realizable learner"}
    main = s.get("learner", "small_loss")
    other = "realizable" if main == "small_loss" else "small_loss"
    L = make[main](eps, T)
    r = _run(L, inst, T, s["n_reps"], seed)
    info = {"epsilon": privacy_cost(L, inst, T).epsilon}
    curves = {}
    if s["baseline_reps"]:
        b = _run(make[other](eps, T), inst, T, s["baseline_reps"], seed)
        curves[names[other]] = (b.checkpoints, b.mean())
        info[f"{other}_final"] = float(b.mean()[-1])
    return sim.Measurement(x=r.checkpoints.astype(float), y=r.metrics["regret"], xlabel="round T",
                           ylabel=f"regret of the {names[main]}", curves=curves, info=info)


EXPERIMENTS = [
    sim.Experiment("experts.private-flat-in-T", flat_in_T,
                   quick=dict(horizon=5000, n_experts=8, p=0.5, epsilon=4.0, n_reps=400, baseline_reps=100),
                   full=dict(horizon=100_000, n_experts=8, p=0.5, epsilon=4.0, n_reps=4000, baseline_reps=500),
                   title="Sparse-vector switching: regret flat in T (private FTPL grows)"),
    sim.Experiment("experts.private-inverse-epsilon", vs_epsilon,
                   quick=dict(horizon=3000, n_experts=8, p=0.5, epsilons=[2.0, 4.0, 8.0, 16.0], n_reps=300),
                   full=dict(horizon=20_000, n_experts=8, p=0.5, epsilons=[0.5, 1.0, 2.0, 4.0, 8.0, 16.0],
                             n_reps=2000),
                   title="Sparse-vector switching: regret ∝ 1/eps (up to a log factor)"),
    sim.Experiment("experts.private-polylog-d", vs_experts,
                   quick=dict(horizon=3000, epsilon=4.0, p=0.5, n_experts=[4, 8, 16, 32, 64], n_reps=200,
                              baseline_reps=20),
                   full=dict(horizon=20_000, epsilon=4.0, p=0.5, n_experts=[4, 8, 16, 32, 64, 128, 256, 512],
                             n_reps=2000, baseline_reps=200),
                   title="Sparse-vector switching: regret polylogarithmic in d"),
    sim.Experiment("experts.private-switch-per-expert-linear-in-d", vs_experts,
                   quick=dict(horizon=3000, epsilon=4.0, p=0.5, n_experts=[4, 8, 16, 32, 64], n_reps=40,
                              switch_budget="d", baseline_reps=0),
                   full=dict(horizon=20_000, epsilon=4.0, p=0.5, n_experts=[4, 8, 16, 32, 64, 128, 256, 512],
                             n_reps=1000, switch_budget="d", baseline_reps=0),
                   title="Sparse-vector switching with one switch per expert: regret linear in d"),
    sim.Experiment("experts.private-small-loss-vs-Lstar", small_loss_vs_lstar,
                   quick=dict(horizon=10_000, n_experts=8, p=0.5, epsilon=8.0, best_loss=[128, 256, 512, 1024],
                              n_reps=60, baseline_reps=8),
                   full=dict(horizon=100_000, n_experts=8, p=0.5, epsilon=8.0,
                             best_loss=[128, 256, 512, 1024, 2048, 4096, 8192], n_reps=1000, baseline_reps=100),
                   title="Small-loss variant: regret at most linear in L*"),
    sim.Experiment("experts.private-small-loss-flat-in-T", small_loss_flat_in_T,
                   quick=dict(horizon=20_000, n_experts=8, p=0.5, epsilon=8.0, best_loss=128, n_reps=100,
                              baseline_reps=20),
                   full=dict(horizon=200_000, n_experts=8, p=0.5, epsilon=8.0, best_loss=128, n_reps=1000,
                             baseline_reps=100),
                   title="Small-loss variant: regret flat in T (the realizable learner is linear)"),
    sim.Experiment("experts.private-realizable-linear-on-small-loss", small_loss_flat_in_T,
                   quick=dict(horizon=20_000, n_experts=8, p=0.5, epsilon=8.0, best_loss=128, n_reps=20,
                              learner="realizable", baseline_reps=0),
                   full=dict(horizon=200_000, n_experts=8, p=0.5, epsilon=8.0, best_loss=128, n_reps=200,
                             learner="realizable", baseline_reps=100),
                   title="The realizable learner on a best expert with L* > 0: regret linear in T"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
