"""
Avoiding catastrophe by asking a mentor
=======================================

Each round's payoff is the chance of avoiding catastrophe, so what counts is
the product of the payoffs.  A label-efficient Hedge over thresholds that
asks the mentor whenever its action has no nearby support (and on a few
random rounds) asks less and less often, and its chance of catastrophe
approaches the mentor's as the horizon grows.  The same learner without
queries never learns anything and is almost surely ruined.
"""

import numpy as np

from expertlab import sim
from expertlab.experts import ask_mentor, threshold_mentor
from expertlab.experts._claims_mentor import no_query_survival


def _runs(s, seed, inputs, n_reps):
    out = []
    for T in s["horizons"]:
        eps = T ** (-2.0 / 3.0)
        inst = threshold_mentor(s["threshold"], s["lipschitz"], inputs=inputs, width=eps)
        out.append(ask_mentor(inst, T, n_reps=n_reps, seed=seed, n_thresholds=s["n_thresholds"]))
    return out


def query_rate(s, backend, seed):
    x = np.array(s["horizons"], dtype=float)
    res = _runs(s, seed, "iid", s["n_reps"])
    adv = _runs(s, seed, "boundary", s["n_reps_adversary"])
    return sim.Measurement(
        x=x, y=np.stack([r.query_rate for r in res]), xlabel="horizon T", ylabel="queries / T (iid inputs)",
        curves={"boundary adversary": (x, np.array([r.query_rate.mean() for r in adv])),
                "T^(-1/3)": (x, x ** (-1.0 / 3.0))},
        info={"wall_time": sum(r.wall_time for r in res + adv)})


def multiplicative_regret(s, backend, seed):
    x = np.array(s["horizons"], dtype=float)
    res = _runs(s, seed, "iid", s["n_reps"])
    adv = _runs(s, seed, "boundary", s["n_reps_adversary"])
    return sim.Measurement(
        x=x, y=np.stack([r.multiplicative_regret for r in res]), xlabel="horizon T",
        ylabel="mentor's product − learner's product (iid inputs)",
        curves={"boundary adversary": (x, np.array([r.multiplicative_regret.mean() for r in adv])),
                "additive regret (iid)": (x, np.array([r.additive_regret.mean() for r in res])),
                "T^(-1/3)": (x, x ** (-1.0 / 3.0))},
        info={"wall_time": sum(r.wall_time for r in res + adv)})


def no_query_catastrophe(s, backend, seed):
    x = np.array(s["horizons"], dtype=float)
    inst = threshold_mentor(s["threshold"], s["lipschitz"], inputs="iid")
    base, asking = [], []
    for T in s["horizons"]:
        base.append(ask_mentor(inst, T, n_reps=s["n_reps"], seed=seed, n_thresholds=s["n_thresholds"],
                               allow_queries=False))
        asking.append(ask_mentor(inst, T, n_reps=s["n_reps"], seed=seed, n_thresholds=s["n_thresholds"]))
    m = no_query_survival(s["n_thresholds"], s["threshold"], s["lipschitz"])
    return sim.Measurement(
        x=x, y=np.stack([r.catastrophe.astype(float) for r in base]), xlabel="horizon T",
        ylabel="catastrophe frequency without queries",
        curves={"exact 1 − m^T": (x, 1.0 - m ** x),
                "learner that asks": (x, np.array([r.catastrophe.mean() for r in asking]))},
        info={"wall_time": sum(r.wall_time for r in base + asking)})


_INST = dict(threshold=0.5, lipschitz=1.0, n_thresholds=33)
_FULL_T = [1000, 2000, 5000, 10000, 20000, 50000, 100000, 300000]

EXPERIMENTS = [
    sim.Experiment("experts.mentor-query-rate", query_rate,
                   quick=dict(_INST, horizons=[1000, 2000, 5000, 10000], n_reps=60, n_reps_adversary=20),
                   full=dict(_INST, horizons=_FULL_T, n_reps=400, n_reps_adversary=400),
                   title="Asking a mentor: the query rate vanishes"),
    sim.Experiment("experts.mentor-multiplicative-regret", multiplicative_regret,
                   quick=dict(_INST, horizons=[1000, 2000, 5000, 10000], n_reps=60, n_reps_adversary=20),
                   full=dict(_INST, horizons=_FULL_T, n_reps=400, n_reps_adversary=400),
                   title="Asking a mentor: the chance of catastrophe approaches the mentor's"),
    sim.Experiment("experts.mentor-no-query-catastrophe", no_query_catastrophe,
                   quick=dict(_INST, horizons=[10, 30, 100, 300], n_reps=500),
                   full=dict(_INST, horizons=[10, 30, 100, 300, 1000, 3000], n_reps=3000),
                   title="Without queries, catastrophe is almost certain"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
