"""UCB1 and Thompson sampling throughput in replication-rounds per second.

One *replication-round* is one round of one replication: choosing an arm,
drawing its outcome and updating the learner.  The script measures, in one
process, on nine Bernoulli arms 0.1, ..., 0.9:

* ``numba``: the fused compiled driver of ``sim.run`` (``prange`` over
  replications, the round loop compiled);
* ``numpy``: the array-code path, one Python iteration per round for all
  replications;
* ``object loop`` (the baseline): one Python object per replication,
  SMPyBandits style, with its own count and sum vectors, stepping one
  replication at a time (``numpy.random.Generator`` for the Beta draws).

Compile time is excluded (each compiled path is warmed up first).  The slow
paths run fewer rounds/replications; the table compares rates.

    python benchmarks/bench_bandits.py [--json out.json] [--quick]

Targets (reported, never asserted): UCB1 >= 20 M/s and Thompson >= 1 M/s
with the Numba path on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time

import numpy as np

import expertlab
from expertlab import sim
from expertlab.bandits import instances, thompson_sampling, ucb1

TARGETS = {"ucb1": 20e6, "thompson_sampling": 1e6}
MEANS = np.arange(1, 10) / 10.0


class ObjectUCB1:
    def __init__(self, K):
        self.n = np.zeros(K)
        self.s = np.zeros(K)
        self.t = 0

    def choose(self):
        if self.t < self.n.size:
            return self.t
        return int(np.argmax(self.s / self.n + np.sqrt(2.0 * math.log(self.t) / self.n)))

    def observe(self, a, x):
        self.n[a] += 1
        self.s[a] += x
        self.t += 1


class ObjectThompson:
    def __init__(self, K, rng):
        self.a = np.ones(K)
        self.b = np.ones(K)
        self.rng = rng

    def choose(self):
        return int(np.argmax(self.rng.beta(self.a, self.b)))

    def observe(self, a, x):
        self.a[a] += x
        self.b[a] += 1 - x


def object_loop(name, n_reps, horizon, seed):
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n_reps)]
    regret = 0.0
    for g in rngs:
        L = ObjectUCB1(MEANS.size) if name == "ucb1" else ObjectThompson(MEANS.size, g)
        for _ in range(horizon):
            a = L.choose()
            L.observe(a, float(g.random() < MEANS[a]))
            regret += MEANS[-1] - MEANS[a]
    return regret / n_reps


def rate(fn, reps, horizon):
    t0 = time.perf_counter()
    fn()
    return reps * horizon / (time.perf_counter() - t0)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--json", default=None)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args(argv)
    inst = instances.bernoulli(MEANS)
    scale = 0.25 if a.quick else 1.0
    rows = {}
    for name, L, (R, T) in (("ucb1", ucb1(), (2000, 20_000)), ("thompson_sampling", thompson_sampling(), (500, 10_000))):
        R = max(int(R * scale), 2)
        sim.run(L, inst, horizon=50, n_reps=2, seed=0, backend="numba")  # compile
        r_numba = rate(lambda: sim.run(L, inst, horizon=T, n_reps=R, seed=0, backend="numba"), R, T)
        r_numpy = rate(lambda: sim.run(L, inst, horizon=2000, n_reps=200, seed=0), 200, 2000)
        r_obj = rate(lambda: object_loop(name, 4, 2000, 0), 4, 2000)
        rows[name] = {"numba": r_numba, "numpy": r_numpy, "object_loop": r_obj, "numba_over_object": r_numba / r_obj,
                      "numpy_over_object": r_numpy / r_obj, "target_numba": TARGETS[name],
                      "numba_reps": R, "numba_horizon": T}
    print(f"{'learner':20s} {'numba':>12s} {'numpy':>12s} {'object':>12s} {'numba/obj':>10s} {'target':>10s}")
    for name, r in rows.items():
        print(f"{name:20s} {r['numba'] / 1e6:10.2f} M {r['numpy'] / 1e6:10.3f} M {r['object_loop'] / 1e6:10.4f} M "
              f"{r['numba_over_object']:10.0f} {r['target_numba'] / 1e6:8.1f} M")
    if a.json:
        meta = {"version": expertlab.__version__, "python": sys.version.split()[0], "machine": platform.machine(),
                "cpus": os.cpu_count(), "numba_threads": int(os.environ.get("NUMBA_NUM_THREADS", os.cpu_count()))}
        with open(a.json, "w") as f:
            json.dump({"unit": "replication-rounds per second", "meta": meta, "results": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
