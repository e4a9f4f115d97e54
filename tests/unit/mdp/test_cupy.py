"""The planners and the robust inner problems on CuPy arrays agree with NumPy (skipped without a GPU)."""

import numpy as np
import pytest

from expertlab.mdp import policy_iteration, robust_value_iteration, soft_value_iteration, value_iteration, worst_case
from expertlab.mdp.instances import garnet


@pytest.mark.gpu
def test_cupy_matches_numpy():
    cp = pytest.importorskip("cupy")
    m = garnet(8, 3, 3, n_mdps=4, gamma=0.9, seed=0)
    p, r = cp.asarray(m.transitions), cp.asarray(m.rewards)
    for solve in (value_iteration, policy_iteration, soft_value_iteration):
        a, b = solve(m.transitions, m.rewards, 0.9), solve(p, r, 0.9)
        np.testing.assert_allclose(cp.asnumpy(b.values), a.values, rtol=0, atol=1e-10)
    for div in ("tv", "kl", "chi2"):
        a = robust_value_iteration(m.transitions, m.rewards, 0.9, radius=0.1, divergence=div)
        b = robust_value_iteration(p, r, 0.9, radius=0.1, divergence=div)
        np.testing.assert_allclose(cp.asnumpy(b.values), a.values, rtol=0, atol=1e-10)
        v = np.linspace(0.0, 1.0, 8)[None].repeat(5, 0)
        q = m.transitions[0, :5, 0]
        wa, wb = worst_case(v, q, 0.2, div), worst_case(cp.asarray(v), cp.asarray(q), 0.2, div)
        np.testing.assert_allclose(cp.asnumpy(wb.value), wa.value, rtol=0, atol=1e-12)
