"""Plots: ``RunResult.plot``, ``sim.plot``, ``sim.plot_check`` and the records' ``.plot`` methods."""

import dataclasses

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from expertlab import sim
from expertlab.experts import hedge, instances


@pytest.fixture(scope="module")
def two_hedges():
    env = instances.fair_coins(3)
    return (sim.run(hedge(), env, horizon=200, n_reps=30, seed=0),
            sim.run(hedge(schedule="doubling"), env, horizon=200, n_reps=30, seed=0))


def _legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def _band_at(ax, x):
    """The y values of the band's polygon at abscissa ``x`` (its lower and upper edge)."""
    (poly,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    verts = poly.get_paths()[0].vertices
    return np.sort(np.unique(verts[np.isclose(verts[:, 0], x), 1]))


# -- RunResult.plot -------------------------------------------------------------------------


def test_run_plot_mean_line_and_band(two_hedges):
    res = two_hedges[0]
    ax = res.plot(z=1.0)
    assert isinstance(ax, Axes) and isinstance(ax.figure, Figure)
    (line,) = ax.lines
    np.testing.assert_array_equal(line.get_xdata(), res.checkpoints)
    np.testing.assert_array_equal(line.get_ydata(), res.mean("regret"))
    m, se = res.mean(), res.stderr()
    assert np.all(se[1:] > 0)  # the band has a width to check
    for i in (3, len(m) - 1):
        np.testing.assert_allclose(_band_at(ax, res.checkpoints[i]), [m[i] - se[i], m[i] + se[i]], rtol=1e-12)
    assert ax.get_xlabel() == "rounds" and ax.get_ylabel() == "regret"
    assert ax.get_xscale() == "linear" and ax.get_yscale() == "linear"
    assert line.get_label() == "hedge"


def test_run_plot_options(two_hedges):
    res = two_hedges[0]
    fig = Figure()
    ax0 = fig.add_subplot()
    ax = res.plot("regret", ax=ax0, label="mine", loglog=True, color="tab:red", ls="--")
    assert ax is ax0
    (line,) = ax.lines
    assert line.get_label() == "mine" and line.get_linestyle() == "--" and line.get_color() == "tab:red"
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    # the band takes the line's colour
    (poly,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    np.testing.assert_allclose(poly.get_facecolor()[0][:3], (0.839, 0.153, 0.157), atol=2e-3)


def test_run_plot_default_metric_is_the_first_recorded():
    res = sim.run(hedge(), instances.needle(4, gap=0.2), horizon=100, n_reps=10, seed=1,
                  metrics=["pseudo_regret", "regret"])
    ax = res.plot()
    assert ax.get_ylabel() == "pseudo_regret"
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), res.mean("pseudo_regret"))
    assert not np.array_equal(res.mean("pseudo_regret"), res.mean("regret"))


def test_run_plot_one_replication_has_no_band():
    res = sim.run(hedge(), instances.fair_coins(3), horizon=50, n_reps=1, seed=0)
    ax = res.plot()
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]
    np.testing.assert_array_equal(ax.lines[0].get_ydata(), res.mean())


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"metric": "nope"}, ValueError, "metric 'nope'"),
    ({"metric": 3}, TypeError, "metric"),
    ({"z": -1.0}, ValueError, "z"),
    ({"z": float("nan")}, ValueError, "z"),
    ({"loglog": "yes"}, TypeError, "loglog"),
    ({"label": 3}, TypeError, "label"),
    ({"ax": "axes"}, TypeError, "ax"),
])
def test_run_plot_bad_input(two_hedges, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        two_hedges[0].plot(**kwargs)


# -- sim.plot -------------------------------------------------------------------------------


def test_default_labels_tell_configurations_apart(two_hedges, tmp_path):
    ax = sim.plot(list(two_hedges), path=tmp_path / "r.png")
    assert _legend(ax) == ["hedge (schedule=anytime)", "hedge (schedule=doubling)"]
    for line, res in zip(ax.lines, two_hedges):
        np.testing.assert_array_equal(line.get_ydata(), res.mean())
    assert len([c for c in ax.collections if isinstance(c, PolyCollection)]) == 2
    assert (tmp_path / "r.png").stat().st_size > 1000


def test_labels_override_and_length_check(two_hedges):
    ax = sim.plot(two_hedges, ["anytime", "doubling"], loglog=True)
    assert _legend(ax) == ["anytime", "doubling"]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="labels has 1 entries for 2 runs"):
        sim.plot(two_hedges, ["only one"])
    with pytest.raises(TypeError, match="labels"):
        sim.plot(two_hedges, "ab")
    with pytest.raises(TypeError, match=r"labels\[1\]"):
        sim.plot(two_hedges, ["a", 2])


def test_labels_of_runs_that_differ_elsewhere():
    a = sim.run(hedge(), instances.fair_coins(3), horizon=30, n_reps=4, seed=0)
    b = sim.run(hedge(), instances.fair_coins(5), horizon=30, n_reps=4, seed=0)
    c = sim.run(hedge(), instances.needle(3, gap=0.1), horizon=30, n_reps=4, seed=0)
    assert _legend(sim.plot([a, b])) == ["hedge on fair_coins (n_experts=3)", "hedge on fair_coins (n_experts=5)"]
    labels = _legend(sim.plot([a, c]))
    assert labels[0].startswith("hedge on fair_coins") and labels[1].startswith("hedge on needle")
    # the same configuration with another seed, and the very same run twice
    d = sim.run(hedge(), instances.fair_coins(3), horizon=30, n_reps=4, seed=1)
    assert _legend(sim.plot([a, d])) == [f"hedge [seed={a.seed}]", f"hedge [seed={d.seed}]"]
    assert _legend(sim.plot([a, a])) == ["hedge #0", "hedge #1"]
    assert _legend(sim.plot(a)) == ["hedge"]


def test_plot_takes_a_sweep():
    grid = sim.expand_grid({"learner": "hedge", "instance": "fair_coins", "horizon": 40},
                           {"instance_params.n_experts": [2, 4]})
    sw = sim.sweep(grid, n_reps=4, block_size=4, executor="serial", progress=False)
    ax = sim.plot(sw)
    assert _legend(ax) == ["hedge on fair_coins (n_experts=2)", "hedge on fair_coins (n_experts=4)"]
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), sw.results[1].mean())


def test_plot_bad_input(two_hedges):
    with pytest.raises(ValueError, match="results is empty"):
        sim.plot([])
    with pytest.raises(TypeError, match=r"results\[1\] must be a RunResult"):
        sim.plot([two_hedges[0], "x"])
    with pytest.raises(TypeError, match="results"):
        sim.plot(3)
    with pytest.raises(ValueError, match=r"metric 'pseudo_regret' is not recorded by results\[0\]"):
        sim.plot(two_hedges, metric="pseudo_regret")
    episodes = dataclasses.replace(two_hedges[1], unit="episode")
    with pytest.raises(ValueError, match="different units"):
        sim.plot([two_hedges[0], episodes])
    with pytest.raises(TypeError, match="path"):
        sim.plot(two_hedges, path=3)


# -- plot_check -----------------------------------------------------------------------------


def test_plot_check_draws_band_fit_and_claim(tmp_path):
    x = np.logspace(1, 3, 7)
    y = np.sqrt(x)[:, None] * np.linspace(0.8, 1.2, 20)[None, :]
    claim = sim.RateClaim("test.plot", "regret", "T", "power", 0.5, 0.01, source="synthetic", fit_decades=1.0)
    chk = sim.check_rate(claim, x, y)
    ax = sim.plot_check(chk, sim.Measurement(x, y, "T", "regret"), path=tmp_path / "c.png")
    assert isinstance(ax, Axes)
    labels = [line.get_label() for line in ax.lines]
    assert any(lab.startswith("fit: slope 0.500 [") for lab in labels)
    assert "claimed slope 0.5" in labels
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log" and "pass" in ax.get_title()
    np.testing.assert_allclose(ax.lines[0].get_ydata(), chk.mean)
    # the confidence band and the shaded fit window (x >= 100 of [10, 1000])
    polys = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(polys) == 1
    np.testing.assert_allclose(_band_at(ax, x[3]), chk.mean[3] + np.array([-1.96, 1.96]) * chk.stderr[3])
    window = [p for p in ax.patches if p.get_label() == "fit window"]
    assert len(window) == 1
    span = window[0]
    xs = span.get_patch_transform().transform(span.get_path().vertices)[:, 0]  # Rectangle or Polygon
    assert xs.min() == pytest.approx(100.0) and xs.max() == pytest.approx(1000.0)
    assert (tmp_path / "c.png").stat().st_size > 1000


def test_plot_check_refuses_other_objects():
    with pytest.raises(TypeError, match="check must be a RateCheck"):
        sim.plot_check("x")


# -- planning results -----------------------------------------------------------------------


def _random_mdp(seed, s=4, a=3, scale=1.0):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(s), size=(s, a))
    return p, scale * rng.uniform(size=(s, a))


def test_value_iteration_trace_and_plot():
    from expertlab.mdp import value_iteration

    p, r = _random_mdp(0)
    gamma, eps = 0.9, 1e-6
    res = value_iteration(p, r, gamma, epsilon=eps)
    path = res.residual_path
    assert path.shape == (int(res.n_iter),)
    # entry 1 is ||T 0 - 0|| = max_s max_a r(s, a) (rewards >= 0), the last one met the stopping rule
    assert path[0] == pytest.approx(r.max(axis=1).max(), rel=1e-12)
    tol = eps * (1 - gamma) / (2 * gamma)
    assert path[-1] < tol <= path[-2]
    # a gamma-contraction: each residual is at most gamma times the previous one
    assert np.all(path[1:] <= gamma * path[:-1] + 1e-13)  # rounding of values of size ~ 1 / (1 - gamma)
    ax = res.plot()
    trace, rate = ax.lines
    np.testing.assert_array_equal(trace.get_xdata(), np.arange(1, path.size + 1))
    np.testing.assert_array_equal(trace.get_ydata(), path)
    np.testing.assert_allclose(rate.get_ydata(), path[0] * gamma ** np.arange(path.size))
    assert ax.get_yscale() == "log"


def test_batched_trace_is_the_largest_over_the_mdps_still_iterating():
    from expertlab.mdp import value_iteration

    (p1, r1), (p2, r2) = _random_mdp(1), _random_mdp(2, scale=50.0)
    one, two = value_iteration(p1, r1, 0.8), value_iteration(p2, r2, 0.8)
    both = value_iteration(np.stack([p1, p2]), np.stack([r1, r2]), 0.8)
    n1, n2 = one.residual_path.size, two.residual_path.size
    assert n1 != n2 and both.residual_path.size == max(n1, n2)
    longest = max(n1, n2)
    pad = lambda a: np.concatenate([a, np.zeros(longest - a.size)])  # noqa: E731
    np.testing.assert_allclose(both.residual_path, np.maximum(pad(one.residual_path), pad(two.residual_path)),
                               rtol=1e-12)


def test_policy_iteration_trace():
    from expertlab.mdp import policy_evaluation, policy_iteration

    p, r = _random_mdp(3, s=6)
    res = policy_iteration(p, r, 0.95)
    path = res.residual_path
    assert path.shape == (int(res.n_iter),)
    v0 = policy_evaluation(p, r, 0.95, np.zeros(6, dtype=int))
    tv0 = (r + 0.95 * p @ v0).max(axis=1)
    assert path[0] == pytest.approx(np.abs(tv0 - v0).max(), rel=1e-9)
    assert path[-1] <= 1e-9
    np.testing.assert_array_equal(res.plot().lines[0].get_ydata(), path)


def test_soft_and_robust_traces():
    from expertlab.mdp import robust_value_iteration, soft_value_iteration, value_iteration

    p, r = _random_mdp(4)
    vi = value_iteration(p, r, 0.9)
    rob = robust_value_iteration(p, r, 0.9, radius=0.0)
    np.testing.assert_allclose(rob.residual_path, vi.residual_path, rtol=0, atol=1e-13)  # radius 0: VI
    soft = soft_value_iteration(p, r, 0.9, temperature=0.5)
    assert soft.residual_path.shape == (int(soft.n_iter),)
    assert np.all(soft.residual_path[1:] <= 0.9 * soft.residual_path[:-1] + 1e-13)
    for res in (rob, soft):
        ax = res.plot(label="trace")
        assert len(ax.lines) == 1 and ax.lines[0].get_label() == "trace"
        np.testing.assert_array_equal(ax.lines[0].get_ydata(), res.residual_path)


def test_planning_result_without_trace():
    from expertlab.mdp import value_iteration

    res = dataclasses.replace(value_iteration(*_random_mdp(5), 0.5), residual_path=None)
    with pytest.raises(ValueError, match="residual_path"):
        res.plot()


# -- EM results -----------------------------------------------------------------------------


def _two_clusters(n_reps=None):
    rng = np.random.default_rng(0)
    shape = (n_reps, 60, 1) if n_reps else (60, 1)
    return np.concatenate([rng.normal(0.0, 1.0, shape), rng.normal(4.0, 1.0, shape)], axis=-2)


def test_em_result_plot_single_and_batched():
    from expertlab.mixtures import fit_gaussian_mixture

    one = fit_gaussian_mixture(_two_clusters(), 2, seed=0)
    ax = one.plot()
    (line,) = ax.lines
    np.testing.assert_array_equal(line.get_xdata(), np.arange(one.loglik_path.size))
    np.testing.assert_array_equal(line.get_ydata(), one.loglik_path)
    assert ax.get_xlabel() == "EM iteration k"
    many = fit_gaussian_mixture(_two_clusters(3), 2, seed=0, batched=True)
    ax = many.plot()
    assert len(ax.lines) == 3
    for line, row in zip(ax.lines, many.loglik_path):
        np.testing.assert_array_equal(line.get_ydata(), row)
    assert ax.lines[0].get_label() == "3 paths"


def test_ssme_result_plot():
    from expertlab.mixtures import fit_ssme

    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, (2, 80))
    s = 1 / (1 + np.exp(-(1.5 * (2 * y[..., None] - 1) + rng.standard_normal((2, 80, 3)))))
    probs = np.stack([1 - s, s], -1)
    labels = np.where(np.arange(80) < 10, y, -1)
    res = fit_ssme(probs, labels, density="gaussian", max_iter=20)
    ax = res.plot()
    assert len(ax.lines) == 2
    for line, row in zip(ax.lines, res.loglik_path):
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, row.size + 1))
        np.testing.assert_array_equal(line.get_ydata(), row)


# -- balance results ------------------------------------------------------------------------


def _bars(ax):
    return [float(b.get_height()) for b in ax.patches if b.get_label() != "fit window"]


def test_assignment_result_plot():
    from expertlab.balance import AssignmentProblem, solve_exact

    rng = np.random.default_rng(2)
    scores = rng.normal(size=(12, 4))
    scores[:, 0] += 2.0  # everyone prefers expert 0: the capacity binds there
    prob = AssignmentProblem(scores, k=1, capacity=[4, 3, 3, 3])
    res = solve_exact(prob)
    np.testing.assert_array_equal(res.capacity, [4, 3, 3, 3])
    ax = res.plot()
    loads = np.asarray(res.assignment).sum(axis=0)
    assert loads[0] == 4
    assert _bars(ax) == loads.tolist()
    cap = [line for line in ax.lines if line.get_label() == "capacity"]
    assert len(cap) == 1 and cap[0].get_ydata().tolist() == [4, 3, 3, 3]
    balanced = [line for line in ax.lines if line.get_label().startswith("balanced")]
    np.testing.assert_allclose(balanced[0].get_ydata(), [3.0, 3.0])


def test_route_results_plot():
    from expertlab.balance import base_route, capacity_route

    rng = np.random.default_rng(3)
    scores = rng.normal(size=(5, 16, 4))
    scores[..., 1] += 1.5
    routed = base_route(scores[0])
    np.testing.assert_array_equal(_bars(routed.plot()), routed.loads)
    cap = capacity_route(scores, 1, 1.0, policy="drop")
    ax = cap.plot()
    np.testing.assert_allclose(_bars(ax), cap.loads.mean(axis=0))
    (limit,) = [line for line in ax.lines if line.get_label().startswith("capacity")]
    np.testing.assert_allclose(limit.get_ydata(), [cap.capacity] * 2)
    (before,) = [line for line in ax.lines if line.get_label() == "before the capacity"]
    np.testing.assert_allclose(before.get_ydata(), cap.routed.sum(axis=-2).mean(axis=0))
    assert before.get_ydata()[1] > cap.capacity  # top-k overloads expert 1, which the capacity cuts
    assert "drop rate" in ax.get_title()
