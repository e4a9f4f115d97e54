"""The ALF-LB CUDA kernel, run on the CPU by Numba's CUDA simulator, equals the NumPy reference path.

The simulator must be enabled before Numba is imported, so the comparison
runs in a subprocess with ``NUMBA_ENABLE_CUDASIM=1``.  Integer-valued scores
make exact ties frequent, so the tie rule (lowest expert index) is exercised
on both paths; per-problem capacities exercise the batched capacity rows.
"""

from expertlab.testing import run_in_cuda_simulator

SCRIPT = r"""
import json
import numpy as np
from expertlab.balance import AssignmentBatch, alf_lb
from expertlab.balance.generators import iid_plus_offset

np.seterr(over="ignore")  # the simulator runs the uint64 hash in NumPy scalars, which wrap by design
out = {}
rng = np.random.default_rng(0)
s = rng.integers(0, 4, size=(3, 12, 5)).astype(float)
cap = np.array([[6, 5, 5, 4, 4], [8, 4, 4, 4, 4], [5, 5, 5, 5, 4]], dtype=float)
for rule, step in (("sign", 0.3), ("magnitude", 0.5), ("decaying", 2.0)):
    kw = dict(step=step, rule=rule, n_iter=9, record_moves=True)
    a = alf_lb(AssignmentBatch(s, 2, capacity=cap), backend="numpy", **kw)
    b = alf_lb(AssignmentBatch(s, 2, capacity=cap), backend="cuda", **kw)
    assert len(a.moves) == len(b.moves) > 0
    out[f"det/{rule}"] = max(float(np.abs(a.bias - b.bias).max()), float(np.abs(a.dual - b.dual).max()),
                             float(np.abs(a.routes - b.routes).max()), float(np.abs(a.loads_at - b.loads_at).max()),
                             float(np.abs(a.global_maxvio - b.global_maxvio).max()))
g = iid_plus_offset([0.4, 0.0, -0.2, 0.1], 1.0)
kw = dict(step=0.05, rule="sign", n_iter=6, n_tokens=10, n_reps=3, seed=4)
a = alf_lb(g, 2, backend="numpy", **kw)
b = alf_lb(g, 2, backend="cuda", **kw)
out["online/sign"] = max(float(np.abs(a.bias - b.bias).max()), float(np.abs(a.regret - b.regret).max()),
                         float(np.abs(a.loads_at - b.loads_at).max()), float(np.abs(a.maxvio - b.maxvio).max()))
print(json.dumps(out))
"""


def test_cuda_simulator_matches_numpy():
    diffs = run_in_cuda_simulator(SCRIPT)
    assert set(diffs) == {"det/sign", "det/magnitude", "det/decaying", "online/sign"}
    bad = {k: v for k, v in diffs.items() if not v <= 1e-10}
    assert not bad, bad
