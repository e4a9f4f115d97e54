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

Each rate is given in wall-clock time and per CPU-second of the process (the
second is steadier when other processes share the cores).  Compile time is
excluded (each compiled path is warmed up first).  The slow paths run fewer
rounds/replications; the table compares rates.

A second table times the Beta draws alone (nine per round, one thread):
the library's counter-based draw (Marsaglia--Tsang gamma draws with
ziggurat normal proposals) against the same draw with Box--Muller normal
proposals, written here as the baseline.

    python benchmarks/bench_bandits.py [--json out.json] [--quick]

Targets (reported, never asserted): UCB1 >= 20 M/s and Thompson >= 3 M/s
(wall clock) with the Numba path on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time

import numba
import numpy as np

import expertlab
from expertlab import sim
from expertlab._random import uniform
from expertlab.bandits import instances, thompson_sampling, ucb1
from expertlab.sim import _variates

TARGETS = {"ucb1": 20e6, "thompson_sampling": 3e6}
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
    """(wall-clock, per-CPU-second) replication-rounds per second of one call of ``fn``."""
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return reps * horizon / wall, reps * horizon / max(cpu, 1e-9)


@numba.njit
def _gamma_box_muller(key, g, a):
    """Marsaglia--Tsang gamma (shape ``a >= 1``) with Box--Muller proposals: the baseline draw."""
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    for m in range(16):
        j = np.uint64(g * 49 + 3 * m)
        z = math.sqrt(-2.0 * math.log(uniform(key, j))) * math.cos(2.0 * math.pi * uniform(key, j + np.uint64(1)))
        v = 1.0 + c * z
        if v > 0.0:
            v = v * v * v
            u = uniform(key, j + np.uint64(2))
            if u < 1.0 - 0.0331 * z ** 4 or math.log(u) < 0.5 * z * z + d - d * v + d * math.log(v):
                return d * v
    return d


@numba.njit
def _beta_box_muller(key, b, a1, a2):
    x = _gamma_box_muller(key, 2 * b, a1)
    return x / (x + _gamma_box_muller(key, 2 * b + 1, a2))


@numba.njit
def _beta_ziggurat(key, b, a1, a2):
    return _variates.beta(key, b, a1, a2)


@numba.njit
def _beta_rounds(draw, n_rounds, a1, a2):
    """``n_rounds`` rounds of nine Beta draws (one per arm), single thread; returns their sum."""
    acc = 0.0
    for r in range(n_rounds):
        key = np.uint64(r) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(12345)
        for i in range(a1.size):
            acc += draw(key, i, a1[i], a2[i])
    return acc


def beta_draw_rates(n_rounds, repeat=3):
    """Beta draws per CPU-second, ziggurat against Box--Muller proposals (posteriors of nine arms)."""
    a1 = 1.0 + 40.0 * MEANS
    a2 = 1.0 + 40.0 * (1.0 - MEANS)
    out = {}
    for name, draw in (("ziggurat", _beta_ziggurat), ("box_muller", _beta_box_muller)):
        _beta_rounds(draw, 10, a1, a2)
    best = {"ziggurat": math.inf, "box_muller": math.inf}
    for _ in range(repeat):  # interleaved, best of repeat
        for name, draw in (("ziggurat", _beta_ziggurat), ("box_muller", _beta_box_muller)):
            c0 = time.process_time()
            _beta_rounds(draw, n_rounds, a1, a2)
            best[name] = min(best[name], time.process_time() - c0)
    for name, sec in best.items():
        out[name] = a1.size * n_rounds / sec
    out["ziggurat_over_box_muller"] = out["ziggurat"] / out["box_muller"]
    return out


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
        r_numba, c_numba = rate(lambda: sim.run(L, inst, horizon=T, n_reps=R, seed=0, backend="numba"), R, T)
        r_numpy, c_numpy = rate(lambda: sim.run(L, inst, horizon=2000, n_reps=200, seed=0), 200, 2000)
        r_obj, c_obj = rate(lambda: object_loop(name, 4, 2000, 0), 4, 2000)
        rows[name] = {"numba": r_numba, "numpy": r_numpy, "object_loop": r_obj, "numba_over_object": r_numba / r_obj,
                      "numpy_over_object": r_numpy / r_obj, "numba_per_cpu_s": c_numba, "numpy_per_cpu_s": c_numpy,
                      "object_loop_per_cpu_s": c_obj, "target_numba": TARGETS[name],
                      "numba_reps": R, "numba_horizon": T}
    beta = beta_draw_rates(int(200_000 * scale))
    print(f"{'learner':20s} {'numba':>12s} {'numpy':>12s} {'object':>12s} {'numba/obj':>10s} {'target':>10s} "
          f"{'numba/CPU-s':>12s}")
    for name, r in rows.items():
        print(f"{name:20s} {r['numba'] / 1e6:10.2f} M {r['numpy'] / 1e6:10.3f} M {r['object_loop'] / 1e6:10.4f} M "
              f"{r['numba_over_object']:10.0f} {r['target_numba'] / 1e6:8.1f} M {r['numba_per_cpu_s'] / 1e6:10.2f} M")
    print(f"Beta draws per CPU-second (one thread): ziggurat proposals {beta['ziggurat'] / 1e6:.1f} M, "
          f"Box-Muller proposals {beta['box_muller'] / 1e6:.1f} M (x{beta['ziggurat_over_box_muller']:.2f})")
    if a.json:
        meta = {"version": expertlab.__version__, "python": sys.version.split()[0], "machine": platform.machine(),
                "cpus": os.cpu_count(), "numba_threads": int(os.environ.get("NUMBA_NUM_THREADS", os.cpu_count())),
                "load_average": os.getloadavg()}
        with open(a.json, "w") as f:
            json.dump({"unit": "replication-rounds per second", "meta": meta, "results": rows,
                       "beta_draws_per_cpu_s": beta}, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
