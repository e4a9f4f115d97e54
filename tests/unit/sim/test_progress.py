"""Progress bars of ``sim.run`` (sweeps: test_sweep.py; ``expertlab rates``: test_cli.py)."""

import io
import sys
import types

import numpy as np
import pytest
from tqdm import std as tqdm_std

from expertlab import sim
from expertlab.experts import hedge, instances
from expertlab.sim import _progress


@pytest.fixture
def no_delay(monkeypatch):
    """Bars appear at once (by default only runs longer than two seconds show one)."""
    monkeypatch.setattr(_progress, "PROGRESS_DELAY", 0.0)


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _run(**kwargs):
    return sim.run(hedge(), instances.fair_coins(3), horizon=400, n_reps=8, seed=0, backend="numpy", **kwargs)


def test_progress_false_prints_nothing(no_delay, capfd):
    _run(progress=False)
    assert capfd.readouterr().err == ""


def test_progress_true_shows_a_full_bar(no_delay, capfd):
    quiet_res = _run(progress=False)
    res = _run(progress=True)
    err = capfd.readouterr().err
    assert "hedge" in err and "100%" in err and "400/400" in err and "round" in err
    np.testing.assert_array_equal(res.metrics["regret"], quiet_res.metrics["regret"])


def test_auto_shows_nothing_on_a_non_terminal(no_delay, capfd):
    _run()
    assert capfd.readouterr().err == ""


def test_auto_shows_a_bar_on_a_terminal(no_delay, monkeypatch):
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    _run()
    assert "400/400" in term.getvalue()
    inner = _Terminal()
    monkeypatch.setattr(sys, "stderr", inner)
    with _progress.quiet():  # inside an outer bar, automatic bars stay hidden; explicit ones do not
        _run()
        assert inner.getvalue() == ""
        assert _progress.show_progress(True) and not _progress.show_progress(None)
    assert _progress.show_progress(None)


def test_a_fast_run_shows_no_bar_by_default(capfd):
    assert _progress.PROGRESS_DELAY == 2.0
    _run(progress=True)
    assert capfd.readouterr().err == ""


def test_notebook_counts_as_interactive(monkeypatch):
    class ZMQInteractiveShell:
        pass

    shell = ZMQInteractiveShell()
    monkeypatch.setitem(sys.modules, "ipykernel", types.ModuleType("ipykernel"))
    fake_ipython = types.ModuleType("IPython")
    fake_ipython.get_ipython = lambda: shell
    monkeypatch.setitem(sys.modules, "IPython", fake_ipython)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert _progress.interactive()
    fake_ipython.get_ipython = lambda: None  # IPython imported, but no kernel running
    assert not _progress.interactive()


def test_bar_advances_per_chunk_not_per_step(no_delay, monkeypatch):
    calls = []
    original = _progress._Bar.update

    def counting(self, n=1):
        calls.append(n)
        original(self, n)

    monkeypatch.setattr(_progress._Bar, "update", counting)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    sim.run(hedge(), instances.fair_coins(3), horizon=5000, n_reps=4, seed=0, backend="numpy", progress=True)
    assert sum(calls) == 5000 and len(calls) <= 201


def test_bar_is_closed_when_the_run_fails(no_delay, capfd):
    def boom(acc, info, t):
        if t == 150:
            raise RuntimeError("metric failed")
        return acc

    metric = sim.Metric("boom", lambda n, xp: np.zeros(n), boom, lambda acc: acc)
    before = len(tqdm_std.tqdm._instances)
    with pytest.raises(RuntimeError, match="metric failed"):
        _run(progress=True, metrics=[metric])
    assert len(tqdm_std.tqdm._instances) == before
    assert "100%" not in capfd.readouterr().err


def test_stopping_procedure_fills_the_bar(no_delay, capfd):
    learner, env, _ = sim.learners()["compare_experts"].example()
    res = sim.run(learner, env, horizon=400, n_reps=4, seed=0, backend="numpy", progress=True)
    assert res.final["stopped"].all() and res.final["stopping_time"].max() < 400  # the loop ended early
    assert "400/400" in capfd.readouterr().err


@pytest.mark.parametrize("bad", ["yes", 1, 0.0])
def test_progress_must_be_a_bool_or_none(bad):
    with pytest.raises(TypeError, match="progress"):
        _run(progress=bad)
