"""UCB1 and Thompson sampling against independent per-replication implementations.

The reference implementations below are written from the papers' update
rules (Auer, Cesa-Bianchi & Fischer 2002, Fig. 1; Thompson sampling with
Beta(1, 1) priors), one replication at a time in plain Python with their own
NumPy ``Generator``.  They share no code with the library, so the two mean
pseudo-regret curves agree only if both implement the same algorithm.

Calibration: at each of the checkpoints the two-sample z statistic of the
means is compared with the Bonferroni critical value at family-wise level
0.01, so a correct library fails with probability below 0.01 (the seeds are
fixed, so the verdict is deterministic).  The last test shows the test has
power: it tells UCB1 from Thompson sampling.
"""

import math

import numpy as np
import pytest
from scipy.stats import norm

from expertlab import sim
from expertlab.bandits import instances, thompson_sampling, ucb1

MEANS = np.arange(1, 10) / 10.0
T = 10_000
R = 64
CKPTS = np.array([100, 1000, 3000, 10_000])
_CK = set(CKPTS.tolist())
_MU = MEANS.tolist()
_BEST = max(_MU)
Z_CRIT = norm.ppf(1 - 0.01 / (2 * CKPTS.size))


def _ref_ucb1(rng):
    K = MEANS.size
    n = [0.0] * K
    s = [0.0] * K
    regret, out = 0.0, []
    for t in range(T):
        if t < K:
            a = t
        else:
            best, a = -1.0, 0
            for i in range(K):
                v = s[i] / n[i] + math.sqrt(2.0 * math.log(t) / n[i])
                if v > best:
                    best, a = v, i
        x = 1.0 if rng.random() < _MU[a] else 0.0
        n[a] += 1
        s[a] += x
        regret += _BEST - _MU[a]
        if t + 1 in _CK:
            out.append(regret)
    return out


def _ref_thompson(rng):
    K = MEANS.size
    succ = np.zeros(K)
    fail = np.zeros(K)
    regret, out = 0.0, []
    for t in range(T):
        theta = rng.beta(1.0 + succ, 1.0 + fail)
        a = int(np.argmax(theta))
        if rng.random() < _MU[a]:
            succ[a] += 1
        else:
            fail[a] += 1
        regret += _BEST - _MU[a]
        if t + 1 in _CK:
            out.append(regret)
    return out


def _reference(fn, seed):
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(R)]
    return np.array([fn(g) for g in rngs]).T  # (n_checkpoints, R)


def _library(L, seed):
    res = sim.run(L, instances.bernoulli(MEANS), horizon=T, n_reps=R, seed=seed, backend="numba",
                  checkpoints=CKPTS)
    return res.metrics["regret"]


def _z(a, b):
    se = np.sqrt(a.var(axis=1, ddof=1) / a.shape[1] + b.var(axis=1, ddof=1) / b.shape[1])
    return (a.mean(axis=1) - b.mean(axis=1)) / se


@pytest.fixture(scope="module")
def ref_ucb1():
    return _reference(_ref_ucb1, 101)


@pytest.fixture(scope="module")
def ref_ts():
    return _reference(_ref_thompson, 202)


def test_ucb1_matches_reference(ref_ucb1):
    z = _z(_library(ucb1(), 1), ref_ucb1)
    assert np.all(np.abs(z) < Z_CRIT), z


def test_thompson_matches_reference(ref_ts):
    z = _z(_library(thompson_sampling(), 2), ref_ts)
    assert np.all(np.abs(z) < Z_CRIT), z


def test_the_comparison_has_power(ref_ucb1):
    # Thompson's regret is far below UCB1's: the same test must reject
    z = _z(_library(thompson_sampling(), 3), ref_ucb1)
    assert np.max(np.abs(z)) > Z_CRIT
