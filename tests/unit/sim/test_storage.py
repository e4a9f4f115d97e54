"""Storage of sweep blocks: canonical ids, atomic files, sidecars as commit markers."""

import datetime
import hashlib
import json
import os

import numpy as np
import pytest

import expertlab
from expertlab import sim
from expertlab.experts import hedge, instances
from expertlab.sim import _storage
from expertlab.sim._storage import BlockError

CONFIG = {"learner": "hedge", "learner_params": {}, "instance": "fair_coins",
          "instance_params": {"n_experts": 4}, "horizon": 100, "backend": "numpy"}


def _result(instance=None, n_reps=5, rep_offset=0, seed=11):
    inst = instance if instance is not None else instances.piecewise_best(3, period=10)
    return sim.run(hedge(), inst, horizon=60, n_reps=n_reps, seed=seed, rep_offset=rep_offset)


def _assert_same_result(a, b):
    for field in ("learner", "environment", "unit", "horizon", "n_reps", "seed", "rep_offset", "backend"):
        assert getattr(a, field) == getattr(b, field), field
    assert dict(a.learner_params) == dict(b.learner_params)
    assert dict(a.environment_params) == dict(b.environment_params)
    np.testing.assert_array_equal(a.checkpoints, b.checkpoints)
    np.testing.assert_array_equal(a.metrics["regret"], b.metrics["regret"])
    assert a.metrics.keys() == b.metrics.keys() and a.final.keys() == b.final.keys()
    for k in a.metrics:
        np.testing.assert_array_equal(a.metrics[k], b.metrics[k])
    for k in a.final:
        np.testing.assert_array_equal(a.final[k], b.final[k])
    assert a.wall_time == pytest.approx(b.wall_time)


# -- canonical JSON and ids ------------------------------------------------


def test_canonical_json_sorts_keys_and_converts_numpy():
    text = _storage.canonical_json({"b": np.array([1, 2]), "a": (np.float64(0.5), np.int32(3), np.bool_(True))})
    assert text == '{"a":[0.5,3,true],"b":[1,2]}'


def test_canonical_json_rejects_nan_and_objects():
    with pytest.raises(ValueError, match="finite"):
        _storage.canonical_json({"eta": float("nan")}, "config")
    with pytest.raises(TypeError, match=r"config\['f'\]"):
        _storage.canonical_json({"f": object()}, "config")
    with pytest.raises(TypeError, match="string keys"):
        _storage.canonical_json({1: 2}, "config")


def test_config_id_is_stable_and_order_free():
    # The documented recipe, recomputed from the standard library: a change in how ids
    # are computed would orphan every stored sweep.
    import hashlib
    import json

    text = json.dumps(CONFIG, sort_keys=True, separators=(",", ":"))
    assert _storage.config_id(CONFIG) == hashlib.sha256(text.encode()).hexdigest()[:12]
    shuffled = dict(reversed(list(CONFIG.items())))
    assert _storage.config_id(shuffled) == _storage.config_id(CONFIG)
    other = dict(CONFIG, instance_params={"n_experts": 5})
    assert _storage.config_id(other) != _storage.config_id(CONFIG)


# -- atomic writes ---------------------------------------------------------


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path):
    p = tmp_path / "f.bin"
    _storage.atomic_write_bytes(p, b"one")
    _storage.atomic_write_bytes(p, b"two")
    assert p.read_bytes() == b"two"
    assert [q.name for q in tmp_path.iterdir()] == ["f.bin"]


def test_atomic_write_failure_keeps_old_file(tmp_path, monkeypatch):
    p = tmp_path / "f.bin"
    _storage.atomic_write_bytes(p, b"old")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(_storage.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        _storage.atomic_write_bytes(p, b"new")
    assert p.read_bytes() == b"old"
    assert [q.name for q in tmp_path.iterdir()] == ["f.bin"]


def test_atomic_write_rejects_text(tmp_path):
    with pytest.raises(TypeError, match="data must be bytes"):
        _storage.atomic_write_bytes(tmp_path / "f", "text")


# -- blocks ----------------------------------------------------------------


@pytest.mark.parametrize("make", [lambda: instances.piecewise_best(3, period=10),
                                  lambda: instances.sleeping(instances.fair_coins(3), 0.5)])
def test_block_roundtrip(tmp_path, make):
    res = _result(make(), n_reps=4, rep_offset=8)
    assert res.metrics  # the instances above declare a metric, so it is stored too
    _storage.write_block(tmp_path / "abc", 2, res, config=CONFIG, block_size=4)
    _assert_same_result(_storage.load_block(tmp_path / "abc", 2), res)
    assert sorted(p.name for p in (tmp_path / "abc").iterdir()) == ["block_2.json", "block_2.npz"]


def test_sidecar_contents(tmp_path):
    res = _result()
    side_path = _storage.write_block(tmp_path / "cid", 0, res, config=CONFIG, block_size=5)
    side = json.loads(side_path.read_text())
    assert side["config"] == CONFIG and side["config_id"] == "cid"
    assert (side["seed"], side["rep_offset"], side["n_reps"], side["block_size"]) == (res.seed, 0, 5, 5)
    assert side["backend"] == "numpy" and side["expertlab_version"] == expertlab.__version__
    assert side["wall_time"] == pytest.approx(res.wall_time)
    assert datetime.datetime.fromisoformat(side["created"]).tzinfo is not None
    npz = (tmp_path / "cid" / "block_0.npz").read_bytes()
    assert side["npz_sha256"] == hashlib.sha256(npz).hexdigest()
    assert side["metrics"] == list(res.metrics) and "tracking_regret" in side["metrics"]
    assert side["final"] == list(res.final) and "expert_regret" in side["final"]


def _corrupt_truncate(d):
    p = d / "block_0.npz"
    p.write_bytes(p.read_bytes()[:100])


def _corrupt_flip_byte(d):
    p = d / "block_0.npz"
    b = bytearray(p.read_bytes())
    b[len(b) // 2] ^= 0xFF
    p.write_bytes(bytes(b))


def _corrupt_sidecar_garbage(d):
    (d / "block_0.json").write_text('{"format": 1, "seed": ')


def _corrupt_sidecar_keys(d):
    (d / "block_0.json").write_text('{"format": 1}')


def _remove_sidecar(d):
    (d / "block_0.json").unlink()


def _remove_npz(d):
    (d / "block_0.npz").unlink()


@pytest.mark.parametrize("damage", [_corrupt_truncate, _corrupt_flip_byte, _corrupt_sidecar_garbage,
                                    _corrupt_sidecar_keys, _remove_sidecar, _remove_npz])
def test_damaged_block_is_rejected(tmp_path, damage):
    _storage.write_block(tmp_path, 0, _result(), config=CONFIG, block_size=5)
    damage(tmp_path)
    with pytest.raises(BlockError):
        _storage.load_block(tmp_path, 0)


def test_sidecar_of_older_npz_is_rejected(tmp_path):
    _storage.write_block(tmp_path, 0, _result(seed=1), config=CONFIG, block_size=5)
    old_sidecar = (tmp_path / "block_0.json").read_bytes()
    _storage.write_block(tmp_path, 0, _result(seed=2), config=CONFIG, block_size=5)
    (tmp_path / "block_0.json").write_bytes(old_sidecar)
    with pytest.raises(BlockError, match="SHA-256"):
        _storage.load_block(tmp_path, 0)


def test_rewrite_drops_old_sidecar_before_new_npz(tmp_path, monkeypatch):
    """If rewriting a block dies before its new sidecar, the block reads as missing, not stale."""
    _storage.write_block(tmp_path, 0, _result(seed=1), config=CONFIG, block_size=5)
    real = _storage.atomic_write_bytes

    def fail_on_npz(path, data):
        if str(path).endswith(".npz"):
            raise OSError("killed")
        real(path, data)

    monkeypatch.setattr(_storage, "atomic_write_bytes", fail_on_npz)
    with pytest.raises(OSError, match="killed"):
        _storage.write_block(tmp_path, 0, _result(seed=2), config=CONFIG, block_size=5)
    assert not (tmp_path / "block_0.json").exists()
    with pytest.raises(BlockError, match="no sidecar"):
        _storage.load_block(tmp_path, 0)


def test_sidecar_for_other_block_is_rejected(tmp_path):
    _storage.write_block(tmp_path, 0, _result(), config=CONFIG, block_size=5)
    os.replace(tmp_path / "block_0.json", tmp_path / "block_1.json")
    os.replace(tmp_path / "block_0.npz", tmp_path / "block_1.npz")
    with pytest.raises(BlockError, match="describes block 0"):
        _storage.load_block(tmp_path, 1)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="block must be"):
        _storage.block_paths(tmp_path, -1)
    with pytest.raises(TypeError, match="result must be a RunResult"):
        _storage.write_block(tmp_path, 0, {"regret": 1}, config=CONFIG, block_size=5)


# -- config folders and manifest -------------------------------------------


def test_config_and_manifest_roundtrip(tmp_path):
    d = tmp_path / "cid"
    assert _storage.read_config(d) is None
    _storage.write_config(d, CONFIG, seed=123, root_seed=4)
    meta = _storage.read_config(d)
    assert (meta["config"], meta["seed"], meta["root_seed"], meta["config_id"]) == (CONFIG, 123, 4, "cid")
    (d / "config.json").write_text("{not json")
    assert _storage.read_config(d) is None

    with pytest.raises(ValueError, match="not a sweep folder"):
        _storage.read_manifest(tmp_path)
    _storage.write_manifest(tmp_path, config_ids=["a", "b"], n_reps=10, block_size=3, seed=2)
    man = _storage.read_manifest(tmp_path)
    assert (man["config_ids"], man["n_reps"], man["block_size"], man["seed"]) == (["a", "b"], 10, 3, 2)
    (tmp_path / "sweep.json").write_text("[]")
    with pytest.raises(ValueError, match="lacks"):
        _storage.read_manifest(tmp_path)
