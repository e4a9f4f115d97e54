"""
Second-order and quantile methods
=================================

Squint, ML-Prod, BOA and AdaNormalHedge against Hedge tuned for the worst case.

* Stochastic losses with a gap: the second-order term of the best expert stays
  bounded, so the four methods' pseudo-regret is flat in T, while Hedge with
  the fixed rate sqrt(8 ln N / T) pays ln N / eta, of order sqrt(T ln N).
* The alternating sequence with every expert copied N/2 times: Squint and
  AdaNormalHedge see the prior mass 1/2 of each copied group, not N, so their
  regret does not move with N, while Hedge tuned to (T, N) pays eta T / 8, of
  order sqrt(T ln N).
"""

import math

import numpy as np

from expertlab import sim
from expertlab.experts import instances


def _factory(s, default):
    # settings may name another registered learner (and its parameters) to run in the default's place
    return sim.get_learner(s.get("learner", default)).factory, dict(s.get("learner_params", {}))


def _easy(name):
    def measure(s, backend, seed):
        n = s["n_experts"]
        inst = instances.needle(n, gap=s["gap"])  # expert 0: Bernoulli(1/2 - gap), the others Bernoulli(1/2)
        horizons = [int(h) for h in s["horizons"]]
        factory, params = _factory(s, name)
        if s.get("tuned", False):
            # a learner tuned to its horizon (Hedge's sqrt(8 ln N / T)): one run per horizon
            y = np.stack([sim.run(factory(**params, horizon=h), inst, horizon=h, n_reps=s["n_reps"], seed=seed,
                                  backend=backend, checkpoints=[h]).metric("pseudo_regret")[-1]
                          for h in horizons])
        else:  # an anytime learner: one run, read at every horizon
            y = sim.run(factory(**params), inst, horizon=max(horizons), n_reps=s["n_reps"], seed=seed,
                        backend=backend, checkpoints=horizons).metric("pseudo_regret")
        x = np.array(horizons, dtype=float)
        return sim.Measurement(x=x, y=y, xlabel="horizon T", ylabel="pseudo-regret",
                               curves={"ln N / η = √(T ln N / 8)": (x, np.sqrt(x * math.log(n) / 8))})

    return measure


def alternating_copies(horizon, n_experts):
    """The alternating sequence (1/2, 0), (0, 1), (1, 0), ... with each column copied ``n_experts / 2`` times."""
    base = np.zeros((horizon, 2))
    base[0] = (0.5, 0.0)
    base[1::2, 1] = 1.0  # rounds 2, 4, ...: the second group loses
    base[2::2, 0] = 1.0  # rounds 3, 5, ...: the first group loses
    return instances.loss_matrix(np.repeat(base, [n_experts // 2, n_experts - n_experts // 2], axis=1))


def _copies(name):
    def measure(s, backend, seed):
        T = s["horizon"]
        factory, params = _factory(s, name)
        if s.get("tuned", False):
            params["horizon"] = T  # Hedge's rate sqrt(8 ln N / T): tuned to T and to the number of experts
        ys = []
        for n in s["n_experts"]:
            res = sim.run(factory(**params), alternating_copies(T, n), horizon=T, n_reps=s["n_reps"], seed=seed,
                          backend=backend, checkpoints=[T])
            ys.append(res.metric("regret")[-1])
        x = np.log(np.array(s["n_experts"], dtype=float))
        return sim.Measurement(x=x, y=np.stack(ys), xlabel="ln N", ylabel=f"regret at T = {T}",
                               curves={"η T / 8 = √(T ln N / 8)": (x, np.sqrt(T * x / 8))})

    return measure


_EASY_QUICK = dict(horizons=[300, 1000, 3000], n_experts=10, gap=0.2, n_reps=100)
_EASY_FULL = dict(horizons=[1000, 3000, 10_000, 30_000, 100_000], n_experts=10, gap=0.2, n_reps=200)
_COPIES_QUICK = dict(horizon=1000, n_experts=[2, 32, 1024], n_reps=2)
_COPIES_FULL = dict(horizon=10_000, n_experts=[2, 8, 32, 128, 512, 2048], n_reps=2)

EXPERIMENTS = [
    sim.Experiment(f"{name}.easy-flat", _easy(name), quick=_EASY_QUICK, full=_EASY_FULL,
                   title=f"{name} on stochastic losses with a gap: pseudo-regret flat in T")
    for name in ("squint", "ml_prod", "boa", "adanormalhedge")
] + [
    sim.Experiment("hedge.worst-case-tuning-on-easy", _easy("hedge"),
                   quick=dict(_EASY_QUICK, horizons=[1000, 3000, 10_000], n_reps=200, tuned=True),
                   full=dict(_EASY_FULL, horizons=[1000, 10_000, 100_000, 1_000_000], tuned=True),
                   title="Hedge tuned to T on stochastic losses with a gap: pseudo-regret ∝ √T"),
] + [
    sim.Experiment(f"{name}.quantile-flat-in-N", _copies(name), quick=_COPIES_QUICK, full=_COPIES_FULL,
                   title=f"{name} on the alternating sequence copied N/2 times: regret flat in N")
    for name in ("squint", "adanormalhedge")
] + [
    sim.Experiment("hedge.worst-case-tuning-on-copies", _copies("hedge"),
                   quick=dict(_COPIES_QUICK, tuned=True), full=dict(_COPIES_FULL, tuned=True),
                   title="Hedge tuned to (T, N) on the alternating sequence copied N/2 times: regret ∝ √(ln N)"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
