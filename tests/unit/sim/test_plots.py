import numpy as np

from expertlab import sim
from expertlab.experts import hedge, instances


def test_plot_regret_band_and_file(tmp_path):
    res = sim.run(hedge(), instances.fair_coins(3), horizon=200, n_reps=30, seed=0)
    fig = sim.plot_regret([res], path=tmp_path / "r.png", loglog=True)
    ax = fig.axes[0]
    line = ax.lines[0]
    np.testing.assert_allclose(line.get_ydata(), res.mean())
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    # the band spans mean ± 1.96 stderr at every checkpoint
    verts = ax.collections[0].get_paths()[0].vertices
    assert verts[:, 1].max() >= (res.mean() + 1.9 * res.stderr()).max() - 1e-9
    assert (tmp_path / "r.png").stat().st_size > 1000


def test_plot_check_draws_fit_and_claim(tmp_path):
    x = np.logspace(1, 3, 7)
    y = np.sqrt(x)[:, None] * np.linspace(0.8, 1.2, 20)[None, :]
    claim = sim.RateClaim("test.plot", "regret", "T", "power", 0.5, 0.01, source="synthetic")
    chk = sim.check_rate(claim, x, y)
    m = sim.Measurement(x, y, "T", "regret")
    fig = sim.plot_check(chk, m, path=tmp_path / "c.png")
    labels = [l.get_label() for l in fig.axes[0].lines]
    assert any(l.startswith("fit: slope 0.500") for l in labels)
    assert any(l.startswith("claimed slope 0.5") for l in labels)
    assert "pass" in fig.axes[0].get_title()
    assert (tmp_path / "c.png").stat().st_size > 1000
