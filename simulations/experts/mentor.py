"""
Avoiding catastrophe by asking a mentor
=======================================

Each round's payoff is the chance of avoiding catastrophe, so what counts is
the product of the payoffs.  A label-efficient Hedge over thresholds that
asks the mentor whenever its action has no nearby support (and on a few
random rounds) asks less and less often, and its chance of catastrophe
approaches the mentor's as the horizon grows; on inputs at the mentor's
boundary it does so exactly at the rate T^(-1/3) of its bound.  The same
learner without queries never learns anything and is almost surely ruined.
"""

import numpy as np

from expertlab import sim
from expertlab.experts import mentor_hedge, threshold_mentor
from expertlab.experts._claims_mentor import no_query_survival

_FINAL = ("queries", "query_rate", "multiplicative_regret", "additive_regret", "catastrophe")


def _final(res):
    """The values at the horizon of the metrics the claims read, each of shape (n_reps,)."""
    return {k: res.metrics[k][-1] for k in _FINAL}


def _runs(s, backend, seed, inputs, n_reps, **kw):
    """One run per horizon, each with the learner tuned to it (radius T^(-2/3), query rate T^(-1/3)).

    ``learner_params`` of the settings (default none) override that tuning.
    """
    out, wall = [], 0.0
    for T in s["horizons"]:
        eps = T ** (-2.0 / 3.0)
        env = threshold_mentor(s["threshold"], s["lipschitz"], inputs=inputs, width=eps)
        learner = mentor_hedge(s["n_thresholds"], **{**s.get("learner_params", {}), **kw})
        res = sim.run(learner, env, horizon=T, n_reps=n_reps, seed=seed, backend=backend, metrics=_FINAL)
        out.append(_final(res))
        wall += res.wall_time
    return out, wall


def _adversary(s, backend, seed):
    """The boundary-adversary runs drawn for comparison (none when ``n_reps_adversary`` is 0)."""
    if not s["n_reps_adversary"]:
        return [], 0.0
    return _runs(s, backend, seed, "boundary", s["n_reps_adversary"])


def query_rate(s, backend, seed):
    x = np.array(s["horizons"], dtype=float)
    res, w1 = _runs(s, backend, seed, "iid", s["n_reps"])
    adv, w2 = _adversary(s, backend, seed)
    curves = {"T^(-1/3)": (x, x ** (-1.0 / 3.0))}
    if adv:
        curves["boundary adversary"] = (x, np.array([r["query_rate"].mean() for r in adv]))
    return sim.Measurement(
        x=x, y=np.stack([r["query_rate"] for r in res]), xlabel="horizon T", ylabel="queries / T (iid inputs)",
        curves=curves, info={"wall_time": w1 + w2})


def multiplicative_regret(s, backend, seed):
    x = np.array(s["horizons"], dtype=float)
    res, w1 = _runs(s, backend, seed, "iid", s["n_reps"])
    adv, w2 = _adversary(s, backend, seed)
    curves = {"additive regret (iid)": (x, np.array([r["additive_regret"].mean() for r in res])),
              "T^(-1/3)": (x, x ** (-1.0 / 3.0))}
    if adv:
        curves["boundary adversary"] = (x, np.array([r["multiplicative_regret"].mean() for r in adv]))
    return sim.Measurement(
        x=x, y=np.stack([r["multiplicative_regret"] for r in res]), xlabel="horizon T",
        ylabel="mentor's product − learner's product (iid inputs)", curves=curves, info={"wall_time": w1 + w2})


def boundary_regret(s, backend, seed):
    x = np.array(s["horizons"], dtype=float)
    adv, w1 = _runs(s, backend, seed, "boundary", s["n_reps"])
    curves = {"T^(-1/3)": (x, x ** (-1.0 / 3.0))}
    w2 = 0.0
    if s.get("n_reps_iid", 0):
        res, w2 = _runs(s, backend, seed, "iid", s["n_reps_iid"])
        curves["iid inputs"] = (x, np.array([r["multiplicative_regret"].mean() for r in res]))
    return sim.Measurement(
        x=x, y=np.stack([r["multiplicative_regret"] for r in adv]), xlabel="horizon T",
        ylabel="mentor's product − learner's product (boundary inputs)", curves=curves,
        info={"wall_time": w1 + w2})


def no_query_catastrophe(s, backend, seed):
    x = np.array(s["horizons"], dtype=float)
    base, w1 = _runs(s, backend, seed, "iid", s["n_reps"], allow_queries=s.get("allow_queries", False))
    asking, w2 = _runs(s, backend, seed, "iid", s["n_reps"])
    m = no_query_survival(s["n_thresholds"], s["threshold"], s["lipschitz"])
    return sim.Measurement(
        x=x, y=np.stack([r["catastrophe"] for r in base]), xlabel="horizon T",
        ylabel="catastrophe frequency without queries",
        curves={"exact 1 − m^T": (x, 1.0 - m ** x),
                "learner that asks": (x, np.array([r["catastrophe"].mean() for r in asking]))},
        info={"wall_time": w1 + w2})


_INST = dict(threshold=0.5, lipschitz=1.0, n_thresholds=33)
_FULL_T = [1000, 2000, 5000, 10000, 20000, 50000, 100000, 300000]

EXPERIMENTS = [
    sim.Experiment("experts.mentor-query-rate", query_rate,
                   quick=dict(_INST, horizons=[1000, 2000, 5000, 10000], n_reps=60, n_reps_adversary=0),
                   full=dict(_INST, horizons=_FULL_T, n_reps=400, n_reps_adversary=400),
                   title="Asking a mentor: the query rate vanishes"),
    sim.Experiment("experts.mentor-multiplicative-regret", multiplicative_regret,
                   quick=dict(_INST, horizons=[1000, 2000, 5000, 10000], n_reps=60, n_reps_adversary=0),
                   full=dict(_INST, horizons=_FULL_T, n_reps=400, n_reps_adversary=400),
                   title="Asking a mentor: the chance of catastrophe approaches the mentor's"),
    sim.Experiment("experts.mentor-boundary-regret", boundary_regret,
                   quick=dict(_INST, horizons=[1000, 10000], n_reps=100),
                   full=dict(_INST, horizons=_FULL_T, n_reps=400, n_reps_iid=100),
                   title="Asking a mentor, inputs at the boundary: multiplicative regret ∝ T^(-1/3)"),
    sim.Experiment("experts.mentor-no-query-catastrophe", no_query_catastrophe,
                   quick=dict(_INST, horizons=[10, 30, 100, 300], n_reps=500),
                   full=dict(_INST, horizons=[10, 30, 100, 300, 1000, 3000], n_reps=3000),
                   title="Without queries, catastrophe is almost certain"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
