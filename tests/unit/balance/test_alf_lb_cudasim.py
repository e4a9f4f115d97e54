"""The ALF-LB CUDA fast path, run on the CPU by Numba's CUDA simulator, equals the engine's array path.

The simulator must be enabled before Numba is imported, so the comparison
runs in a subprocess with ``NUMBA_ENABLE_CUDASIM=1``.  Integer-valued scores
make exact ties frequent, so the tie rule (lowest expert index) is exercised
on both paths; per-problem capacities exercise the batched capacity rows;
the online runs draw their batches from the engine's keys at a
``rep_offset``, with a fixed and a dynamic (drifting) comparator.
"""

from expertlab.testing import run_in_cuda_simulator

SCRIPT = r"""
import json
import numpy as np
from expertlab import sim
from expertlab.balance import AssignmentBatch, alf_lb, routing, routing_fixed
from expertlab.balance.generators import drifting, iid_plus_offset

np.seterr(over="ignore")  # the simulator runs the uint64 hash in NumPy scalars, which wrap by design


def diff(a, b):
    out = [float(np.abs(a.metrics[k] - b.metrics[k]).max()) for k in a.metrics]
    out += [float(np.abs(a.final[k] - b.final[k]).max()) for k in a.final]
    assert b.backend == "cuda" and set(a.metrics) <= set(b.metrics)
    return max(out)


out = {}
rng = np.random.default_rng(0)
s = rng.integers(0, 4, size=(3, 12, 5)).astype(float)
cap = np.array([[6, 5, 5, 4, 4], [8, 4, 4, 4, 4], [5, 5, 5, 5, 4]], dtype=float)
env = routing_fixed(AssignmentBatch(s, 2, capacity=cap), comparator_bias=rng.normal(size=5))
ck = np.arange(1, 10)
for rule, step in (("sign", 0.3), ("magnitude", 0.5), ("decaying", 2.0)):
    learner = alf_lb(step=step, rule=rule, bias0=rng.normal(size=(3, 5)) * 0.1)
    a = sim.run(learner, env, horizon=9, n_reps=3, backend="numpy", checkpoints=ck)
    b = sim.run(learner, env, horizon=9, n_reps=3, backend="cuda", checkpoints=ck)
    out[f"det/{rule}"] = diff(a, b)
for name, g in (("online/sign", iid_plus_offset([0.4, 0.0, -0.2, 0.1], 1.0)),
                ("drifting/sign", drifting([0.4, 0.0, -0.2, 0.1], [0.02, 0.0, -0.01, 0.0]))):
    env = routing(g, n_tokens=10, k=2)
    kw = dict(horizon=6, n_reps=3, seed=4, rep_offset=5)
    a = sim.run(alf_lb(step=0.05, rule="sign"), env, backend="numpy", **kw)
    b = sim.run(alf_lb(step=0.05, rule="sign"), env, backend="cuda", **kw)
    out[name] = diff(a, b)
print(json.dumps(out))
"""


def test_cuda_simulator_matches_numpy():
    diffs = run_in_cuda_simulator(SCRIPT)
    assert set(diffs) == {"det/sign", "det/magnitude", "det/decaying", "online/sign", "drifting/sign"}
    bad = {k: v for k, v in diffs.items() if not v <= 1e-10}
    assert not bad, bad
