"""The public counter-based generator ``expertlab.random``: the engine's keys, the documented formulas, Numba.

Reference values come from two places independent of the library: the
published SplitMix64 reference outputs (seed 0) and a plain-Python
implementation of the formulas the module documents, in arbitrary-precision
integers reduced modulo 2**64.  The engine's keys are read off a run of
``sim.run`` through a learner that records what it is handed.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from numba.extending import register_jitable
from hypothesis import strategies as st

from expertlab import random as erandom
from expertlab import sim
from expertlab.experts import hedge, instances
from expertlab.testing import run_in_cuda_simulator

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
M1, M2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
ROOT = Path(__file__).resolve().parents[2]
words = st.integers(0, MASK)


def mix(z):
    z = ((z ^ (z >> 30)) * M1) & MASK
    z = ((z ^ (z >> 27)) * M2) & MASK
    return z ^ (z >> 31)


def ref_rep_key(s, r):
    return mix(mix((s + GOLDEN) & MASK) ^ (((r + 1) * M2) & MASK))


def ref_round_key(k, t):
    return mix(k ^ (((t + 1) * GOLDEN) & MASK))


def ref_uniform(k, j):
    return ((mix(k ^ (((j + 1) * GOLDEN) & MASK)) >> 11) + 0.5) * 2.0**-53


# --------------------------------------------------------------------------
# the formulas


def test_stream_key_is_the_splitmix64_finaliser():
    """SplitMix64 from state 0 outputs mix(GAMMA), mix(2 GAMMA), ...: the published first outputs."""
    assert int(erandom.stream_key(GOLDEN, 0)) == 0xE220A8397B1DCDAF
    assert int(erandom.stream_key((2 * GOLDEN) & MASK, 0)) == 0x6E789E6AA1B965F4
    assert int(erandom.stream_key((3 * GOLDEN) & MASK, 0)) == 0x06C45D188009454F


@settings(max_examples=30, deadline=None)
@given(words, words, words, st.integers(0, 2**53))
def test_keys_and_draws_follow_the_documented_formulas(seed, rep, t, j):
    rk = erandom.rep_key(seed, rep)
    assert int(rk) == ref_rep_key(seed, rep)
    kt = erandom.round_key(rk, t)
    assert int(kt) == ref_round_key(int(rk), t)
    assert int(erandom.stream_key(rk, erandom.LEARNER_STREAM)) == mix(int(rk) ^ int(erandom.LEARNER_STREAM))
    assert float(erandom.uniform(kt, j)) == ref_uniform(int(kt), j)
    u1, u2 = ref_uniform(int(kt), 2 * j), ref_uniform(int(kt), 2 * j + 1)
    assert float(erandom.normal(kt, j)) == pytest.approx(math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2),
                                                    rel=1e-12, abs=1e-12)


def test_arrays_broadcast_and_signed_integers_are_accepted():
    keys = erandom.rep_key(5, np.arange(4, dtype=np.uint64))
    assert keys.dtype == np.uint64 and keys.shape == (4,)
    assert [int(k) for k in keys] == [ref_rep_key(5, r) for r in range(4)]
    np.testing.assert_array_equal(erandom.rep_key(5, np.arange(4)), keys)            # int64 indices
    np.testing.assert_array_equal(erandom.rep_key(5, [0, 1, 2, 3]), keys)            # a list
    u = erandom.uniform(keys[:, None], np.arange(3, dtype=np.uint64)[None, :])
    assert u.shape == (4, 3)
    assert u.tolist() == [[ref_uniform(int(k), j) for j in range(3)] for k in keys]


def test_uniforms_are_midpoints_strictly_inside_the_unit_interval():
    u = erandom.uniform(erandom.round_key(erandom.rep_key(1, np.arange(10_000, dtype=np.uint64)), 0), 0)
    assert np.all((u > 0) & (u < 1))
    scaled = u * 2.0**53 - 0.5
    np.testing.assert_array_equal(scaled, np.round(scaled))
    # uniform: mean 1/2 and variance 1/12 within 5 standard errors
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / u.size)


def test_normal_draws_are_standard_normal():
    z = erandom.normal(erandom.round_key(erandom.rep_key(9, np.arange(40_000, dtype=np.uint64)), 3), 2)
    n = z.size
    assert abs(z.mean()) < 5 / math.sqrt(n)
    assert abs(z.var() - 1.0) < 5 * math.sqrt(2 / n)
    assert abs(np.mean(z < -1.0) - 0.15865525393145707) < 5 * math.sqrt(0.16 * 0.84 / n)


def test_scalars_raise_no_overflow_warning():
    # pytest turns warnings into errors: NumPy warns on uint64 scalar overflow, which the hash does by design
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow warning would fail here, whatever the pytest settings
        key = erandom.stream_key(erandom.rep_key(MASK, MASK), erandom.LEARNER_STREAM)
        u = erandom.uniform(erandom.round_key(key, MASK), MASK)
        z = erandom.normal(np.uint64(MASK), 7)
    assert 0.0 < float(u) < 1.0 and np.isfinite(z)


def test_seed_to_uint64():
    assert int(erandom.seed_to_uint64(2**64 + 3)) == 3
    ss = np.random.SeedSequence(42)
    assert int(erandom.seed_to_uint64(ss)) == int(ss.generate_state(1, dtype=np.uint64)[0])
    with pytest.raises(ValueError, match="seed"):
        erandom.seed_to_uint64(-1)
    with pytest.raises(TypeError, match="seed"):
        erandom.seed_to_uint64(1.0)


# --------------------------------------------------------------------------
# the engine's keys


def recording(learner, log):
    """``learner`` that records the keys it is handed, its plays and the losses it is told."""
    def init(spec, n_reps, keys=None, xp=np):
        log["init"] = np.array(keys)
        return learner.init(spec, n_reps, keys, xp)

    def act(state, obs, keys=None):
        log.setdefault("act", []).append(np.array(keys))
        p, state = learner.act(state, obs, keys)
        log.setdefault("play", []).append(np.array(p))
        return p, state

    def update(state, action, feedback, keys=None):
        log.setdefault("loss", []).append(np.array(feedback[0]))
        return learner.update(state, action, feedback, keys)

    return learner._replace(init=init, act=act, update=update)


@pytest.mark.parametrize("seed, rep_offset", [(2024, 0), (7, 5), (np.random.SeedSequence(3), 2)])
def test_engine_keys_are_the_keys_sim_run_passes(seed, rep_offset):
    log, n_reps, n, horizon = {}, 3, 4, 5
    sim.run(recording(hedge(), log), instances.iid_uniform(n), horizon=horizon, n_reps=n_reps, seed=seed,
            rep_offset=rep_offset, backend="numpy")
    np.testing.assert_array_equal(log["init"], erandom.engine_keys(seed, n_reps, rep_offset=rep_offset).learner)
    for t in range(horizon):
        keys = erandom.engine_keys(seed, n_reps, t=t, rep_offset=rep_offset)
        np.testing.assert_array_equal(log["act"][t], keys.learner)
        # iid_uniform reveals draw i of the environment's round key as expert i's loss
        np.testing.assert_array_equal(log["loss"][t], erandom.uniform(keys.env[:, None], np.arange(n)[None, :]))
    # the same keys from the elementary functions
    s = erandom.seed_to_uint64(seed)
    env = erandom.rep_key(s, np.arange(rep_offset, rep_offset + n_reps))
    np.testing.assert_array_equal(erandom.engine_keys(seed, n_reps, rep_offset=rep_offset).env, env)
    np.testing.assert_array_equal(log["act"][2], erandom.round_key(erandom.stream_key(env, erandom.LEARNER_STREAM), 2))


def test_a_block_holds_the_keys_of_the_batch():
    batch = erandom.engine_keys(11, 8, t=3)
    block = erandom.engine_keys(11, 3, t=3, rep_offset=4)
    np.testing.assert_array_equal(batch.env[4:7], block.env)
    np.testing.assert_array_equal(batch.learner[4:7], block.learner)
    assert not np.array_equal(batch.env, batch.learner)


def test_play_losses_with_engine_keys_replays_a_randomised_learner():
    """A randomised learner driven by ``play_losses`` with the engine's keys plays what ``sim.run`` makes it play."""
    from expertlab.experts import ftpl
    from expertlab.testing import play_losses

    n_reps, n, horizon, seed = 4, 3, 6, 99
    log = {}
    sim.run(recording(ftpl(), log), instances.iid_uniform(n), horizon=horizon, n_reps=n_reps, seed=seed,
            backend="numpy")
    played = np.stack(log["play"], axis=1)                                   # (n_reps, horizon, n)
    assert np.all((played == 0.0) | (played == 1.0))  # one expert sampled per round: the keys decide which
    losses = np.stack(log["loss"], axis=1)
    p, _ = play_losses(ftpl(), losses, keys=lambda t: erandom.engine_keys(seed, n_reps, t=t).learner)
    np.testing.assert_array_equal(p, played)
    other, _ = play_losses(ftpl(), losses, keys=lambda t: erandom.engine_keys(seed + 1, n_reps, t=t).learner)
    assert not np.array_equal(other, played)  # the comparison can fail: other keys, other plays


# --------------------------------------------------------------------------
# Numba and the CUDA simulator


def test_the_functions_compile_in_numba_to_the_same_numbers():
    from numba import njit

    @njit
    def draws(seed, rep, t, j):
        k = erandom.round_key(erandom.stream_key(erandom.rep_key(seed, rep), erandom.LEARNER_STREAM), t)
        return erandom.uniform(k, j), erandom.normal(k, j)

    args = (np.uint64(2**63 + 5), np.uint64(3), np.uint64(17), np.uint64(4))
    k = erandom.round_key(erandom.stream_key(erandom.rep_key(*args[:2]), erandom.LEARNER_STREAM), args[2])
    assert draws(*args) == (erandom.uniform(k, args[3]), erandom.normal(k, args[3]))


@register_jitable
def _tilted_loss(data, key, t, i):
    """Expert i loses uniform draw i of the round; expert 0's loss is scaled by 1 - data[0][0]."""
    return erandom.uniform(key, np.uint64(i)) * (1.0 - data[0][0] * (i == 0))


def test_an_environment_of_ones_own_draws_the_same_on_every_backend():
    env = sim.LossSequence(name="tilted_uniform", n_experts=3, loss=_tilted_loss, data=(np.array([0.3]),))
    a = sim.run(hedge(), env, horizon=50, n_reps=4, seed=1, backend="numpy")
    b = sim.run(hedge(), env, horizon=50, n_reps=4, seed=1, backend="numba")
    assert (a.backend, b.backend) == ("numpy", "numba")
    np.testing.assert_allclose(a.metrics["regret"], b.metrics["regret"], rtol=0, atol=1e-12)
    # the losses are the documented draws: replay round 0 of replication 2
    log = {}
    sim.run(recording(hedge(), log), env, horizon=1, n_reps=4, seed=1, backend="numpy")
    key = erandom.engine_keys(1, 4, t=0).env[2]
    u = np.array([ref_uniform(int(key), i) for i in range(3)])
    np.testing.assert_array_equal(log["loss"][0][2], u * np.array([0.7, 1.0, 1.0]))


def test_the_functions_run_in_cuda_device_code_under_the_simulator():
    out = run_in_cuda_simulator(
        "import json, numpy as np\n"
        "from numba import cuda\n"
        "from expertlab import random as erandom\n"
        "@cuda.jit\n"
        "def kernel(keys, out):\n"
        "    i = cuda.grid(1)\n"
        "    if i < keys.size:\n"
        "        out[i] = erandom.uniform(erandom.round_key(keys[i], np.uint64(2)), np.uint64(1))\n"
        "keys = erandom.rep_key(5, np.arange(8, dtype=np.uint64))\n"
        "out = np.zeros(8)\n"
        "kernel[1, 8](keys, out)\n"
        "ref = erandom.uniform(erandom.round_key(keys, 2), 1)\n"
        "print(json.dumps({'equal': bool(np.array_equal(out, ref))}))\n")
    assert out == {"equal": True}


# --------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("call, error, name", [
    (lambda: erandom.uniform(0.5, 1), TypeError, "key"),
    (lambda: erandom.uniform(1, -1), ValueError, r"\bj\b"),
    (lambda: erandom.uniform(np.array([1.0]), 0), TypeError, "key"),
    (lambda: erandom.round_key(True, 0), TypeError, "key"),
    (lambda: erandom.round_key(1, 2**64), ValueError, r"\bt\b"),
    (lambda: erandom.rep_key(-3, 0), ValueError, "seed"),
    (lambda: erandom.rep_key(1, np.array([0, -1])), ValueError, "rep"),
    (lambda: erandom.rep_key("7", 0), TypeError, "seed"),
    (lambda: erandom.stream_key(1, None), TypeError, "salt"),
    (lambda: erandom.normal(1, [[0, 1], [2]]), TypeError, r"\bj\b"),
    (lambda: erandom.engine_keys(None, 3), ValueError, "seed"),
    (lambda: erandom.engine_keys(1.5, 3), TypeError, "seed"),
    (lambda: erandom.engine_keys(1, 0), ValueError, "n_reps"),
    (lambda: erandom.engine_keys(1, 2, t=-1), ValueError, r"\bt\b"),
    (lambda: erandom.engine_keys(1, 2, t=0.5), TypeError, r"\bt\b"),
    (lambda: erandom.engine_keys(1, 2, rep_offset=-1), ValueError, "rep_offset"),
])
def test_bad_input_is_refused_naming_the_argument(call, error, name):
    with pytest.raises(error, match=name):
        call()


# --------------------------------------------------------------------------
# the tests use the public module


def _called_name(func):
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def private_random_imports(source: str) -> list[str]:
    """Lines of ``source`` that import ``expertlab._random`` (import, from-import or importlib call)."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            hits += [f"line {node.lineno}" for a in node.names if a.name.split(".")[:2] == ["expertlab", "_random"]]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[:2] == ["expertlab", "_random"] or (
                    parts == ["expertlab"] and any(a.name == "_random" for a in node.names)):
                hits.append(f"line {node.lineno}")
        elif isinstance(node, ast.Call) and _called_name(node.func) in ("import_module", "__import__") \
                and node.args and isinstance(node.args[0], ast.Constant) \
                and str(node.args[0].value).split(".")[:2] == ["expertlab", "_random"]:
            hits.append(f"line {node.lineno}")
    return hits


@pytest.mark.parametrize("source, found", [
    ("from expertlab import _random", True),
    ("from expertlab import sim, _random as r", True),
    ("from expertlab._random import uniform", True),
    ("import expertlab._random", True),
    ("import expertlab._random as r", True),
    ("import importlib\nimportlib.import_module('expertlab._random')", True),
    ("__import__('expertlab._random')", True),
    ("name = 'expertlab._random'.startswith('x')", False),
    ("from expertlab import random", False),
    ("from expertlab.random import uniform", False),
    ("import random\nx = '_random'", False),
    ("def _random(): pass", False),
])
def test_the_scan_recognises_private_imports(source, found):
    assert bool(private_random_imports(source)) is found


def test_no_test_file_imports_the_private_random_module():
    """Tests and proof checks draw keys through ``expertlab.random``, the surface users have."""
    files = sorted([*ROOT.joinpath("tests").rglob("*.py"), *ROOT.joinpath("proofs_check").rglob("*.py")])
    assert len(files) > 50  # the scan sees the suites
    offenders = {str(f.relative_to(ROOT)): hits for f in files
                 if (hits := private_random_imports(f.read_text(encoding="utf-8")))}
    assert not offenders, f"import expertlab.random instead of expertlab._random in: {offenders}"
