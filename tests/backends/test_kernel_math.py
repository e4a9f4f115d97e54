"""The compiled math helpers of the fused drivers agree with their plain definitions."""

import math

import numpy as np
from numba import njit

from expertlab.sim._kernels import exp_nonpos, kdot, kmax, ksum


@njit
def _exp_many(x, out):
    for i in range(x.size):
        out[i] = exp_nonpos(x[i])


def test_exp_nonpos_matches_libm():
    rng = np.random.default_rng(0)
    x = np.concatenate([-rng.exponential(5.0, 20000), -rng.uniform(0, 708.3, 20000),
                        [0.0, -0.0, -1e-300, -math.log(2) / 2, -708.3]])
    got = np.empty_like(x)
    _exp_many(x, got)
    ref = np.exp(x)
    rel = np.abs(got - ref) / ref
    assert rel.max() < 5e-16  # about 1-2 ulp
    # below the smallest normal double the result is flushed to 0, and -inf gives 0
    tail = np.array([-708.5, -745.0, -1e6, -np.inf])
    out = np.empty_like(tail)
    _exp_many(tail, out)
    assert np.all(out == 0.0)
    # the plain-Python (and CUDA) definition is math.exp
    assert exp_nonpos(-1.5) == math.exp(-1.5)


@njit
def _reduce(x, y, n):
    return ksum(x, n), kdot(x, y, n), kmax(x, n)


def test_partial_sum_reductions():
    rng = np.random.default_rng(1)
    for n in (0, 1, 3, 4, 5, 17, 100):
        x = rng.normal(size=max(n, 1))
        y = rng.normal(size=max(n, 1))
        s, d, m = _reduce(x, y, n)
        assert s == np.float64(math.fsum(x[:n])) or abs(s - math.fsum(x[:n])) < 1e-13
        assert abs(d - math.fsum(x[:n] * y[:n])) < 1e-13
        assert m == (x[:n].max() if n else -np.inf)
