"""The CUDA driver, run on the CPU by Numba's CUDA simulator, equals the NumPy path.

The simulator must be enabled before Numba is imported, so the comparison runs
in a subprocess with ``NUMBA_ENABLE_CUDASIM=1``.
"""

import pytest

from expertlab.testing import run_in_cuda_simulator

SCRIPT = r"""
import json, numpy as np
from expertlab import sim
from expertlab.experts import instances
out = {}
for name, reg in sim.learners(family="experts").items():
    L = reg.example()[0]
    if not isinstance(L.kernel, sim.KernelSpec):
        continue
    for inst in (instances.needle(3, 0.2), instances.sleeping(instances.iid_uniform(3), 0.5),
                 instances.piecewise_best(3, 7, 0.2)):
        a = sim.run(L, inst, horizon=24, n_reps=3, seed=9, backend="numpy")
        b = sim.run(L, inst, horizon=24, n_reps=3, seed=9, backend="cuda", rep_offset=0)
        d = float(np.max(np.abs(a.metrics["regret"] - b.metrics["regret"])))
        d = max(d, float(np.max(np.abs(a.final["expert_regret"] - b.final["expert_regret"]))))
        for k in a.metrics:
            d = max(d, float(np.max(np.abs(a.metrics[k] - b.metrics[k]))))
        out[f"{name}/{inst.name}"] = d
print(json.dumps(out))
"""


def test_cuda_simulator_matches_numpy():
    diffs = run_in_cuda_simulator(SCRIPT)
    assert diffs, "no learner with a kernel was checked"
    assert any(k.startswith("hedge/") for k in diffs)
    bad = {k: v for k, v in diffs.items() if not v <= 1e-10}
    assert not bad, bad


@pytest.mark.gpu
def test_cupy_matches_numpy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no GPU")
    except Exception as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"no usable GPU: {exc}")
    import numpy as np

    from expertlab import sim
    from expertlab.experts import instances

    for name, reg in sim.learners(family="experts").items():
        L = reg.example()[0]
        if not isinstance(L.kernel, sim.KernelSpec):
            continue
        inst = instances.sleeping(instances.needle(5, 0.2), 0.6)
        a = sim.run(L, inst, horizon=100, n_reps=16, seed=3, backend="numpy")
        b = sim.run(L, inst, horizon=100, n_reps=16, seed=3, backend="cupy")
        np.testing.assert_allclose(b.metrics["regret"], a.metrics["regret"], atol=1e-10, err_msg=name)
