"""
Groupwise regret
================

One online ridge regression per group, combined as sleeping experts by
AdaNormalHedge, competes with the best linear model of every group at once:
the worst group's regret grows at most like √T (here logarithmically),
while one global regression is linear on the groups whose model differs
from the pooled one.  With Hedge over a finite grid of linear models as the
group learner, every group's regret against its best class member also
grows at most like √T, while one Hedge over the class on all rounds is
linear on a group.
"""

import numpy as np

from expertlab import sim
from expertlab.experts import groupwise, intersecting_groups, linear_grid, pooled_regression


def _runs(s, backend, seed):
    """The groupwise learner and one global learner of the same kind on the same rounds.

    ``learner`` names the one whose regret the claim reads (``"groupwise"`` or
    ``"pooled"``), the other is drawn for comparison unless ``compare`` is false.
    """
    kind = s.get("group_learner", "ridge")
    env = intersecting_groups(s["dim"], models=s["models"], noise=s["noise"],
                              hypotheses=linear_grid(s["dim"]) if kind == "hedge" else None)
    kw = dict(horizon=s["horizon"], n_reps=s["n_reps"], seed=seed, backend=backend, metrics=["worst_group_regret"])
    make = {"groupwise": groupwise, "pooled": pooled_regression}
    main = s["learner"]
    other = "pooled" if main == "groupwise" else "groupwise"
    r = sim.run(make[main](kind), env, **kw)
    g = sim.run(make[other](kind), env, **kw) if s.get("compare", True) else None
    return r, g


def _measure(s, backend, seed, ylabel, other_label):
    r, g = _runs(s, backend, seed)
    x = r.checkpoints.astype(float)
    curves = {"√T": (x, np.sqrt(x))}
    if g is not None:
        curves[other_label] = (x, g.mean("worst_group_regret"))
    return sim.Measurement(x=x, y=r.metrics["worst_group_regret"], xlabel="round T", ylabel=ylabel, curves=curves,
                           info={"wall_time": r.wall_time + (g.wall_time if g is not None else 0.0)})


def worst_group(s, backend, seed):
    return _measure(dict({"learner": "groupwise"}, **s), backend, seed, "largest group regret",
                    "one global learner")


def global_learner(s, backend, seed):
    return _measure(dict({"learner": "pooled"}, **s), backend, seed, "largest group regret of one global learner",
                    "groupwise learner")


_QUICK = dict(dim=3, models="a1", noise=0.5, horizon=5000, n_reps=64)
_FULL = dict(dim=5, models="a1", noise=0.5, horizon=100_000, n_reps=200)
_HEDGE_QUICK = dict(_QUICK, models="cells", group_learner="hedge")
_HEDGE_FULL = dict(_FULL, models="cells", group_learner="hedge")

EXPERIMENTS = [
    sim.Experiment("experts.groupwise-regret-at-most-sqrt", worst_group, quick=_QUICK, full=_FULL,
                   title="Groupwise learner: the worst group's regret grows at most like √T"),
    sim.Experiment("experts.groupwise-global-linear", global_learner, quick=_QUICK, full=_FULL,
                   title="One global learner: linear regret on a group"),
    sim.Experiment("experts.groupwise-hedge-regret-at-most-sqrt", worst_group, quick=_HEDGE_QUICK, full=_HEDGE_FULL,
                   title="Hedge over a finite class per group: the worst group's regret grows at most like √T"),
    sim.Experiment("experts.groupwise-hedge-global-linear", global_learner,
                   quick=dict(_HEDGE_QUICK, n_reps=32, compare=False), full=_HEDGE_FULL,
                   title="One Hedge over the class on all rounds: linear regret on a group"),
]

if __name__ == "__main__":
    if sim.experiment_main(EXPERIMENTS):
        raise SystemExit(1)
