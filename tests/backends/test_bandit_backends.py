"""Bandit learners: the CUDA driver (under Numba's CUDA simulator) and CuPy equal the NumPy path.

The simulator must be enabled before Numba is imported, so the comparison runs
in a subprocess with ``NUMBA_ENABLE_CUDASIM=1``.  The fused Numba driver is
compared with NumPy in ``tests/unit/bandits/test_engine.py``.
"""

import pytest

from expertlab.testing import run_in_cuda_simulator

SCRIPT = r"""
import json, numpy as np
from expertlab import sim
from expertlab.bandits import exp3, thompson_sampling, instances
regret = {n: r for n, r in sim.learners(family="bandits").items() if r.feedback == "bandit"}
cases = [(name, r.example()[0], instances.bernoulli([0.3, 0.6, 0.5])) for name, r in regret.items()]
cases += [("exp3/array", exp3(), instances.reward_array(np.random.default_rng(0).uniform(size=(24, 3)))),
          ("thompson/gaussian", thompson_sampling("gaussian"), instances.gaussian([0.0, 0.4, 0.2])),
          ("thompson/piecewise", thompson_sampling(),
           instances.piecewise_bernoulli([[0.9, 0.1, 0.5], [0.1, 0.9, 0.5]], [12]))]
out = {}
for name, L, inst in cases:
    a = sim.run(L, inst, horizon=24, n_reps=3, seed=9, backend="numpy")
    b = sim.run(L, inst, horizon=24, n_reps=3, seed=9, backend="cuda")
    d = float(np.max(np.abs(a.metrics["regret"] - b.metrics["regret"])))
    for k in a.metrics:
        d = max(d, float(np.max(np.abs(a.metrics[k] - b.metrics[k]))))
    d = max(d, float(np.max(np.abs(a.final["pulls"] - b.final["pulls"]))))
    out[name] = d
print(json.dumps(out))
"""


def test_bandit_cuda_simulator_matches_numpy():
    diffs = run_in_cuda_simulator(SCRIPT)
    for name in ("ucb1", "kl_ucb", "thompson_sampling", "exp3", "exp3/array", "thompson/gaussian"):
        assert name in diffs
    bad = {k: v for k, v in diffs.items() if not v <= 1e-12}
    assert not bad, bad


@pytest.mark.gpu
def test_bandit_cupy_matches_numpy():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no GPU")
    except Exception as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"no usable GPU: {exc}")
    import numpy as np

    from expertlab import sim
    from expertlab.bandits import instances

    inst = instances.bernoulli([0.3, 0.6, 0.5])
    for name, reg in sim.learners(family="bandits").items():
        if reg.feedback != "bandit":
            continue
        L = reg.example()[0]
        a = sim.run(L, inst, horizon=100, n_reps=16, seed=3, backend="numpy")
        b = sim.run(L, inst, horizon=100, n_reps=16, seed=3, backend="cupy")
        np.testing.assert_allclose(b.metrics["regret"], a.metrics["regret"], atol=1e-10, err_msg=name)
