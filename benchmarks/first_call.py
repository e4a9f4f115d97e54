"""First-call cost of a compiled run in a fresh process: cold kernel cache against warm.

The fused Numba drivers are cached on disk (the ``Compiled kernels and the
cache`` section of the engine guide), so only the first process that runs a
learner-environment pair compiles it.  The script measures, each in a fresh
Python process and with a private cache folder (``EXPERTLAB_CACHE_DIR``):

* ``readme numba``: the first example of the README (Hedge on ten fair coins,
  horizon 1000, 2000 replications, ``backend="numba"``), run twice on one
  cache folder: cold (empty folder, the driver compiles) and warm (the
  driver is loaded);
* ``readme numpy``: the same run on the NumPy path (the baseline a notebook
  user would otherwise fall back to);
* ``import``: ``import expertlab`` alone;
* ``sweep``: ``expertlab sweep`` of a TOML file with two configs (Hedge,
  anytime and doubling rates, on fair coins, horizon 10 000, Numba backend),
  200 replications in blocks of 50, on the default process pool, cold and
  warm (a fresh output folder each time, so both compute every block).

For each it prints the wall time and the CPU time (user + system, of the
process and all its descendants: ``resource.getrusage``, and on Linux
samples of ``/proc`` for the sweep's workers, which nobody waits for) and the
cold/warm ratios; ``--json`` writes them.  The CPU time is the better guide
on a loaded machine.

    python benchmarks/first_call.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

README = """
from expertlab import sim
from expertlab.experts import hedge, instances

res = sim.run(hedge(), instances.fair_coins(10), horizon=1000, n_reps=2000, seed=1, backend={backend!r})
print(res.mean()[-1], res.stderr()[-1], res.backend)
"""

SWEEP_TOML = """
n_reps = 200
block_size = 50
seed = 1

[base]
learner = "hedge"
instance = "fair_coins"
horizon = 10000
backend = "numba"

[base.instance_params]
n_experts = 10

[grid]
"learner_params.schedule" = ["anytime", "doubling"]
"""


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _proc_table() -> dict:
    """``{pid: (ppid, start, cpu_seconds)}`` of every process, from ``/proc`` (Linux; empty elsewhere)."""
    table = {}
    try:
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit()]
        tick = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, AttributeError):
        return table
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # fields 3.. of proc(5): state, ppid, ...
        table[pid] = (int(fields[1]), int(fields[19]), (int(fields[11]) + int(fields[12])) / tick)
    return table


class _TreeSampler(threading.Thread):
    """Samples the CPU time of a process and all its descendants every 50 ms.

    ``getrusage(RUSAGE_CHILDREN)`` misses processes nobody waits for (the
    sweep's workers are forked by a fork server); sampling ``/proc`` misses
    at most the last 50 ms of each process.
    """

    def __init__(self, root: int):
        super().__init__(daemon=True)
        self.root, self.cpu, self.done = root, {}, threading.Event()

    def run(self):
        while not self.done.is_set():
            table = _proc_table()
            tree, frontier = set(), {self.root}
            while frontier:
                tree |= frontier
                frontier = {pid for pid, (ppid, _, _) in table.items() if ppid in frontier} - tree
            for pid in tree & table.keys():
                _, start, cpu = table[pid]
                self.cpu[(pid, start)] = max(cpu, self.cpu.get((pid, start), 0.0))
            self.done.wait(0.05)


def timed(cmd, cache: Path) -> dict:
    """Run ``cmd`` in a fresh process with the kernel cache in ``cache``: wall and CPU seconds.

    The CPU time is that of the process and all its descendants: the larger
    of ``getrusage`` (exact for the process and the children it waits for)
    and the ``/proc`` samples (which also see the processes nobody waits for).
    """
    env = {**os.environ, "EXPERTLAB_CACHE_DIR": str(cache)}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    cpu0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = _TreeSampler(proc.pid)
    sampler.start()
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t0
    sampler.done.set()
    sampler.join()
    cpu = max(_children_cpu() - cpu0, sum(sampler.cpu.values()))
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} failed:\n{stderr[-3000:]}")
    return {"wall_s": wall, "cpu_s": cpu, "processes": len(sampler.cpu),
            "stdout": stdout.strip().splitlines()[-1:] or [""]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None, help="write the numbers to this file")
    args = ap.parse_args(argv)
    py = sys.executable
    out: dict = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
                 "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None}
    with tempfile.TemporaryDirectory(prefix="expertlab-first-call-") as tmp:
        tmp = Path(tmp)
        cache = tmp / "kernels"
        out["import"] = timed([py, "-c", "import expertlab"], cache)
        out["readme numpy"] = timed([py, "-c", README.format(backend="numpy")], cache)
        out["readme numba cold"] = timed([py, "-c", README.format(backend="numba")], cache)
        out["readme numba warm"] = timed([py, "-c", README.format(backend="numba")], cache)
        toml = tmp / "sweep.toml"
        toml.write_text(SWEEP_TOML)
        sweep_cache = tmp / "sweep-kernels"
        for label in ("cold", "warm"):
            cmd = [py, "-m", "expertlab.cli", "sweep", str(toml), "--out", str(tmp / f"results-{label}")]
            out[f"sweep {label}"] = timed(cmd, sweep_cache)
    out["ratios"] = {
        "readme cold/warm wall": out["readme numba cold"]["wall_s"] / out["readme numba warm"]["wall_s"],
        "readme cold/warm cpu": out["readme numba cold"]["cpu_s"] / out["readme numba warm"]["cpu_s"],
        "readme warm numba/numpy wall": out["readme numba warm"]["wall_s"] / out["readme numpy"]["wall_s"],
        "readme warm numba/numpy cpu": out["readme numba warm"]["cpu_s"] / out["readme numpy"]["cpu_s"],
        "sweep cold/warm wall": out["sweep cold"]["wall_s"] / out["sweep warm"]["wall_s"],
        "sweep cold/warm cpu": out["sweep cold"]["cpu_s"] / out["sweep warm"]["cpu_s"],
    }
    print(f"python {out['python']} on {out['cpus']} CPUs, load average {out['load_average']}")
    print(f"{'fresh process':24s} {'wall s':>8s} {'cpu s':>8s}")
    for key in ("import", "readme numpy", "readme numba cold", "readme numba warm", "sweep cold", "sweep warm"):
        print(f"{key:24s} {out[key]['wall_s']:8.2f} {out[key]['cpu_s']:8.2f}")
    for key, value in out["ratios"].items():
        print(f"{key:32s} {value:6.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
