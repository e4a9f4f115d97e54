"""The compiled math helpers of the fused drivers agree with their plain definitions."""

import math
from fractions import Fraction

import numpy as np
from numba import njit

from expertlab.sim import _kernels
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


def _chebyshev(d):
    """Coefficients of the Chebyshev polynomial T_d in powers of x (exact)."""
    t0, t1 = [Fraction(1)], [Fraction(0), Fraction(1)]
    for _ in range(d - 1):
        t2 = [Fraction(0)] + [2 * v for v in t1]
        for i, v in enumerate(t0):
            t2[i] -= v
        t0, t1 = t1, t2
    return t1


def test_exp_polynomial_is_the_economised_taylor_series():
    # X(r) = (e^r - 1 - r) / r^2 = sum_j r^j / (j + 2)!, to degree 22; remove its terms of degree 22 .. 10
    # one at a time by subtracting the multiple of T_d(r / a) that cancels r^d, a = 1.000001 ln(2) / 2
    c = [Fraction(1, math.factorial(j + 2)) for j in range(23)]
    a = Fraction(0.34657359027997264) * Fraction(1000001, 1000000)
    bound = Fraction(0)
    for d in range(22, 9, -1):
        T = _chebyshev(d)
        m = c[d] * a**d / T[d]
        for j in range(d + 1):
            c[j] -= m * T[j] / a**j
        bound += abs(m)  # |T_d| <= 1 on the interval
    assert all(v == 0 for v in c[10:])
    got = [getattr(_kernels, f"_E{j + 2}") for j in range(10)]
    assert got == [float(v) for v in c[:10]]
    assert not hasattr(_kernels, "_E12")
    # the economisation moves 1 + r + r^2 X by less than 2e-17, below a fifth of an ulp of e^r >= 0.7
    assert float(bound * a * a) < 2e-17


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
