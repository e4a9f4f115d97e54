"""One suite over EVERY registered online learner, of every family.

Each learner is registered with a small example run (``example() -> (learner,
env, horizon)``).  On it the suite checks the engine's contract: the record,
the shapes of the result, that the same keys give the same numbers, that
replication r alone equals r in a batch and r in a block at ``rep_offset``,
that every registered compiled path agrees with the array path, and that bad
input gets a clear error naming the argument.
"""

import numpy as np
import pytest

from expertlab import sim
from expertlab.sim._engine import _FAST_PATHS

REGISTERED = sim.learners()
NAMES = sorted(REGISTERED)


def _example(name):
    learner, env, horizon = REGISTERED[name].example()
    return learner, env, horizon


def test_every_registered_learner_is_covered():
    missing = [n for n in NAMES if REGISTERED[n].example is None]
    assert not missing, f"registered learners without an example run: {missing}"
    assert len(NAMES) >= 20
    families = {r.family for r in REGISTERED.values()}
    assert {"experts", "bandits"} <= families


@pytest.mark.parametrize("name", NAMES)
def test_record(name):
    learner, env, horizon = _example(name)
    reg = REGISTERED[name]
    assert isinstance(learner, sim.Learner)
    assert learner.name == name
    assert learner.feedback == reg.feedback == env.spec.feedback
    assert sim.is_environment(env)
    assert env.spec.unit in sim.UNITS
    for obj in (learner, env):
        text = repr(obj)
        assert len(text.splitlines()) == 1 and len(text) < 300 and "0x" not in text


def _run(learner, env, horizon, **kw):
    kw.setdefault("backend", "numpy")
    return sim.run(learner, env, horizon=horizon, seed=kw.pop("seed", 3), **kw)


@pytest.mark.parametrize("name", NAMES)
def test_shapes_and_determinism(name):
    learner, env, horizon = _example(name)
    a = _run(learner, env, horizon, n_reps=4)
    assert a.unit == env.spec.unit and a.backend == "numpy" and a.horizon == horizon
    assert a.checkpoints[-1] <= horizon and a.checkpoints.dtype == np.int64
    assert a.metrics, "a run must record at least one metric"
    for k, v in a.metrics.items():
        assert v.shape == (a.checkpoints.size, 4), k
        assert not np.any(np.isnan(v)), k
    for k, v in a.final.items():
        assert np.shape(v)[0] == 4, k
    b = _run(learner, env, horizon, n_reps=4)
    for k in a.metrics:
        np.testing.assert_array_equal(a.metrics[k], b.metrics[k], err_msg=k)
    for k in a.final:
        np.testing.assert_array_equal(a.final[k], b.final[k], err_msg=k)
    # a seed must matter wherever replications differ (a run whose replications all agree is deterministic)
    c = _run(learner, env, horizon, n_reps=4, seed=4)
    random = any(np.any(np.ptp(v, axis=1) > 0) for v in a.metrics.values())
    assert not random or any(not np.array_equal(a.metrics[k], c.metrics[k]) for k in a.metrics), \
        "another seed gave the same numbers"


@pytest.mark.parametrize("name", NAMES)
def test_replication_alone_in_batch_and_in_block(name):
    learner, env, horizon = _example(name)
    full = _run(learner, env, horizon, n_reps=5)
    alone = _run(learner, env, horizon, n_reps=1, rep_offset=3)
    block = _run(learner, env, horizon, n_reps=3, rep_offset=2)
    for k in full.metrics:
        np.testing.assert_allclose(alone.metrics[k][:, 0], full.metrics[k][:, 3], rtol=0, atol=1e-12, err_msg=k)
        np.testing.assert_allclose(block.metrics[k], full.metrics[k][:, 2:], rtol=0, atol=1e-12, err_msg=k)
    for k in full.final:
        np.testing.assert_allclose(np.asarray(block.final[k], dtype=float),
                                   np.asarray(full.final[k], dtype=float)[2:], rtol=0, atol=1e-12, err_msg=k)
    joined = sim.RunResult.concat([_run(learner, env, horizon, n_reps=2), block])
    for k in full.metrics:
        np.testing.assert_allclose(joined.metrics[k], full.metrics[k], rtol=0, atol=1e-12, err_msg=k)


def _fast_cases():
    out = []
    for name in NAMES:
        learner, env, _ = _example(name)
        for f in _FAST_PATHS:
            if f.backend == "numba" and f.supports(learner, env):
                out.append((name, f.name))
    return out


FAST = _fast_cases()


def test_compiled_paths_are_covered():
    assert any(n == "hedge" for n, _ in FAST) and any(n == "ucb1" for n, _ in FAST)


@pytest.mark.parametrize("name, path", FAST, ids=[f"{n}-{p}" for n, p in FAST])
def test_compiled_path_agrees_with_the_array_path(name, path):
    learner, env, horizon = _example(name)
    a = _run(learner, env, horizon, n_reps=6, backend="numpy")
    b = _run(learner, env, horizon, n_reps=6, backend="numba")
    assert b.backend == "numba"
    assert set(a.metrics) == set(b.metrics)
    for k in a.metrics:
        np.testing.assert_allclose(b.metrics[k], a.metrics[k], rtol=0, atol=1e-10, err_msg=k)
    for k in a.final:
        np.testing.assert_allclose(np.asarray(b.final[k], dtype=float), np.asarray(a.final[k], dtype=float),
                                   rtol=0, atol=1e-10, err_msg=k)


BAD = [
    (dict(horizon=0), ValueError, "horizon"),
    (dict(horizon=2.5), TypeError, "horizon"),
    (dict(n_reps=0), ValueError, "n_reps"),
    (dict(n_reps="3"), TypeError, "n_reps"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(seed=1.5), TypeError, "seed"),
    (dict(rep_offset=-1), ValueError, "rep_offset"),
    (dict(backend="tpu"), ValueError, "backend"),
    (dict(checkpoints=[0]), ValueError, "checkpoints"),
    (dict(checkpoints=[1.5]), ValueError, "checkpoints"),
    (dict(checkpoints=[float("nan")]), ValueError, "checkpoints"),
    (dict(metrics=["no_such_metric"]), ValueError, "metrics"),
    (dict(metrics=[3]), TypeError, "metrics"),
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad, exc, word", BAD, ids=[f"{list(b)[0]}={list(b.values())[0]!r}" for b, _, _ in BAD])
def test_bad_run_arguments_are_named(name, bad, exc, word):
    learner, env, horizon = _example(name)
    kw = dict(horizon=horizon, n_reps=2, seed=0, backend="numpy") | bad
    with pytest.raises(exc, match=word):
        sim.run(learner, env, **kw)


class _OtherKind(sim.Environment):
    name = "other"
    params = {}

    @property
    def spec(self):
        return sim.EnvSpec(feedback="no-such-kind", unit="round", n_actions=2)

    def reset(self, n_reps, keys, xp):
        return None

    def step(self, env_state, action, t, keys):  # pragma: no cover - never reached
        raise AssertionError

    def available_metrics(self):
        return {}


@pytest.mark.parametrize("name", NAMES)
def test_wrong_environment_kind_is_refused(name):
    learner, env, horizon = _example(name)
    with pytest.raises(ValueError, match="feedback"):
        sim.run(learner, _OtherKind(), horizon=horizon, n_reps=2)
    with pytest.raises(TypeError, match="env must be an Environment"):
        sim.run(learner, object(), horizon=horizon, n_reps=2)
    with pytest.raises(TypeError, match="learner must be a Learner"):
        sim.run(env, env, horizon=horizon, n_reps=2)
