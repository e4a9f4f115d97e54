"""One sweep file mixing learners of every online family, run through the one engine."""

import numpy as np

from expertlab import sim
from expertlab.sim._sweep import load_sweep, load_sweep_spec, normalize_config, run_block, sweep

MIXED = """
n_reps = 6
block_size = 3
seed = 5

[[configs]]
learner = "hedge"
instance = "fair_coins"
horizon = 50
instance_params = { n_experts = 4 }

[[configs]]
learner = "ucb1"
instance = "bernoulli"
horizon = 60
instance_params = { means = [0.3, 0.5, 0.7] }

[[configs]]
learner = "ucbvi"
instance = "garnet_episodic"
horizon = 12
instance_params = { n_states = 4, n_actions = 2, episode_length = 3, seed = 1 }

[[configs]]
learner = "stepmix"
instance = "conservative_garnet"
horizon = 12

[[configs]]
learner = "alf_lb"
instance = "routing"
horizon = 10
learner_params = { step = 0.01, rule = "sign" }
instance_params = { generator = "iid_plus_offset", generator_params = { means = [0.0, 0.1, 0.2, 0.3] }, n_tokens = 32, k = 2 }
"""


def test_a_sweep_file_mixes_every_online_family(tmp_path):
    path = tmp_path / "mixed.toml"
    path.write_text(MIXED)
    spec = load_sweep_spec(path)
    assert [c["learner"] for c in spec["configs"]] == ["hedge", "ucb1", "ucbvi", "stepmix", "alf_lb"]
    res = sweep(**spec, out=tmp_path / "out", executor="serial", progress=False)
    families = {sim.get_learner(c["learner"]).family for c in res.configs}
    assert families == {"experts", "bandits", "mdp", "balance"}
    units = [r.unit for r in res.results]
    assert units == ["round", "round", "episode", "episode", "batch"]
    for cfg, seed, got in zip(res.configs, res.seeds, res.results):
        learner = sim.get_learner(cfg["learner"]).factory(**cfg["learner_params"])
        env = sim.get_environment(cfg["instance"]).factory(**cfg["instance_params"])
        direct = sim.run(learner, env, horizon=cfg["horizon"], n_reps=6, seed=seed, backend="numpy")
        assert got.metrics.keys() == direct.metrics.keys()
        for k in direct.metrics:
            np.testing.assert_allclose(got.metrics[k], direct.metrics[k], rtol=0, atol=1e-12, err_msg=k)
    again = load_sweep(tmp_path / "out")
    for a, b in zip(res.results, again.results):
        for k in a.metrics:
            np.testing.assert_array_equal(a.metrics[k], b.metrics[k])


def test_sweep_file_takes_base_or_configs_not_both(tmp_path):
    import pytest

    path = tmp_path / "bad.toml"
    path.write_text('n_reps = 2\n[base]\nlearner = "hedge"\ninstance = "fair_coins"\nhorizon = 5\n'
                    '[[configs]]\nlearner = "hedge"\ninstance = "fair_coins"\nhorizon = 5\n')
    with pytest.raises(ValueError, match="either 'base'"):
        load_sweep_spec(path)
    path.write_text('n_reps = 2\nconfigs = []\n')
    with pytest.raises(ValueError, match="non-empty list"):
        load_sweep_spec(path)


def test_run_block_builds_any_family():
    cfg = normalize_config({"learner": "ucbvi", "instance": "garnet_episodic", "horizon": 8})
    res = run_block(cfg, 1, block_size=2, n_reps=4, seed=3)
    assert res.unit == "episode" and res.rep_offset == 2 and res.metrics["regret"].shape[1] == 2
