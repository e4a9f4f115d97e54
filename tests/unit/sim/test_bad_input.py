"""Bad input to the engine's records, registries, rate machinery and test helpers is refused, naming the argument.

Each record is checked where a user builds it (a custom environment's spec,
metric, loss sequence or arms; a simulation file's measurement and
experiment): a record that would only fail, or silently mislead, deep inside a
run is refused at construction.
"""

import numpy as np
import pytest

from expertlab import experts, sim, testing

ok = lambda *a, **k: 0  # noqa: E731  a callable placeholder


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(feedback=3), TypeError, "feedback"),
    (dict(feedback=""), TypeError, "feedback"),
    (dict(unit="minute"), ValueError, "unit"),
    (dict(n_actions=0), ValueError, "n_actions"),
    (dict(n_actions=1.5), TypeError, "n_actions"),
    (dict(n_actions=True), TypeError, "n_actions"),
    (dict(horizon=0), ValueError, "horizon"),
    (dict(max_horizon=2.5), TypeError, "max_horizon"),
    (dict(info=[("a", 1)]), TypeError, "info"),
])
def test_env_spec_refuses(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        sim.EnvSpec(**(dict(feedback="full", unit="round", n_actions=2) | kwargs))


def test_metric_and_kernel_spec_refuse_non_callables_and_bad_sizes():
    with pytest.raises(TypeError, match="name"):
        sim.Metric(3, ok, ok, ok)
    with pytest.raises(TypeError, match="read"):
        sim.Metric("m", ok, ok, None)
    with pytest.raises(TypeError, match="final"):
        sim.Metric("m", ok, ok, ok, final=1.0)
    with pytest.raises(ValueError, match="n_rows"):
        sim.KernelSpec(-1, 0, np.zeros(1), ok, ok, ok)
    with pytest.raises(TypeError, match="n_scalars"):
        sim.KernelSpec(1, 0.5, np.zeros(1), ok, ok, ok)
    with pytest.raises(TypeError, match="update"):
        sim.KernelSpec(1, 0, np.zeros(1), ok, ok, "update")
    assert sim.Metric("m", ok, ok, ok).name == "m"  # a well-formed record is still built


def test_loss_sequence_and_arms_refuse_inconsistent_records():
    with pytest.raises(ValueError, match="n_experts"):
        sim.LossSequence("x", 0, ok, ())
    with pytest.raises(TypeError, match="n_experts"):
        sim.LossSequence("x", 2.0, ok, ())
    with pytest.raises(TypeError, match="loss"):
        sim.LossSequence("x", 2, None, ())
    with pytest.raises(TypeError, match="data"):
        sim.LossSequence("x", 2, ok, [np.zeros(2)])
    with pytest.raises(ValueError, match="max_horizon"):
        sim.LossSequence("x", 2, ok, (), max_horizon=0)
    with pytest.raises(ValueError, match="n_arms"):
        sim.Arms("x", 0, ok, ok, ())
    with pytest.raises(TypeError, match="mean"):
        sim.Arms("x", 2, ok, None, ())
    with pytest.raises(ValueError, match="kind"):
        sim.Arms("x", 2, ok, ok, (), kind="poisson")
    with pytest.raises(TypeError, match="name"):
        sim.Arms("", 2, ok, ok, ())


def test_run_result_refuses_arrays_that_disagree_with_its_sizes():
    base = dict(learner="x", environment="y", learner_params={}, environment_params={}, unit="round",
                horizon=10, n_reps=2, seed=0, rep_offset=0, backend="numpy", checkpoints=np.array([5, 10]),
                metrics={"regret": np.zeros((2, 2))}, final={}, wall_time=0.0)
    sim.RunResult(**base)
    for bad, word in [(dict(metrics={"regret": np.zeros((2, 3))}), "regret"),
                      (dict(checkpoints=np.array([10, 5])), "checkpoints"),
                      (dict(checkpoints=np.array([5, 11])), "checkpoints"),
                      (dict(checkpoints=np.array([5.0, 10.0])), "checkpoints"),
                      (dict(final={"answer": np.zeros(3)}), "answer"),
                      (dict(unit="minute"), "unit"),
                      (dict(n_reps=0), "n_reps")]:
        with pytest.raises(ValueError, match=word):
            sim.RunResult(**(base | bad))


def test_measurement_and_experiment_refuse_malformed_records():
    with pytest.raises(ValueError, match="y must have shape"):
        sim.Measurement(np.arange(3), np.zeros((4, 2)), "x", "y")
    with pytest.raises(ValueError, match="x contains NaN"):
        sim.Measurement(np.array([1.0, np.nan]), np.zeros((2, 2)), "x", "y")
    with pytest.raises(ValueError, match="x must be"):
        sim.Measurement(np.zeros((2, 2)), np.zeros((2, 2)), "x", "y")
    with pytest.raises(TypeError, match="xlabel"):
        sim.Measurement(np.arange(2), np.zeros((2, 2)), None, "y")
    with pytest.raises(TypeError, match="measure"):
        sim.Experiment("hedge.regret-vs-T", 3, {}, {})
    with pytest.raises(TypeError, match="quick"):
        sim.Experiment("hedge.regret-vs-T", ok, [1], {})
    with pytest.raises(TypeError, match="claim"):
        sim.Experiment(None, ok, {}, {})


def test_run_experiment_and_horizon_measurement_refuse_bad_arguments():
    exp = sim.Experiment("hedge.regret-vs-T", lambda settings, backend, seed: 3.0, {}, {})
    with pytest.raises(TypeError, match="exp"):
        sim.run_experiment("hedge.regret-vs-T")
    with pytest.raises(ValueError, match="backend"):
        sim.run_experiment(exp, backend="tpu")
    with pytest.raises(ValueError, match="seed"):
        sim.run_experiment(exp, seed=-1)
    with pytest.raises(TypeError, match="must return a Measurement"):
        sim.run_experiment(exp)
    with pytest.raises(ValueError, match="no claim named"):
        sim.run_experiment(sim.Experiment("no.such-claim", ok, {}, {}))
    env = experts.instances.fair_coins(2)
    with pytest.raises(ValueError, match="settings"):
        sim.horizon_measurement(experts.hedge(), env, {"horizon": 10}, "numpy", 0)
    with pytest.raises(TypeError, match="metric"):
        sim.horizon_measurement(experts.hedge(), env, {"horizon": 10, "n_reps": 2}, "numpy", 0, metric=3)


def test_discover_and_experiment_main_name_what_is_wrong(tmp_path, capsys):
    with pytest.raises(FileNotFoundError, match="no simulations directory"):
        sim.discover(tmp_path / "absent")
    with pytest.raises(SystemExit):
        sim.experiment_main([], argv=["--bogus"])
    assert "--bogus" in capsys.readouterr().err


def test_claim_lookups_refuse_unknown_and_mistyped_names():
    with pytest.raises(ValueError, match="no claim named"):
        sim.get_claim("hedge.no-such-claim")
    with pytest.raises(TypeError, match="name"):
        sim.get_claim(3)
    with pytest.raises(ValueError, match="hedg"):  # a misspelt learner is not an empty table
        sim.claims("hedg")
    with pytest.raises(TypeError, match="learner"):
        sim.claims(3)
    assert sim.claims("hedge")  # a registered learner with claims
    with pytest.raises(TypeError, match="func"):
        sim.document_claims(3, "hedge")
    with pytest.raises(TypeError, match="learner"):
        sim.document_claims(ok, "")


def test_registries_refuse_bad_registrations_and_unknown_families():
    with pytest.raises(ValueError, match="family"):
        sim.learners("expert")
    with pytest.raises(TypeError, match="family"):
        sim.environments(3)
    with pytest.raises(ValueError, match="unknown learner"):
        sim.get_learner("hedgee")
    with pytest.raises(TypeError, match="learner"):
        sim.get_learner(None)
    with pytest.raises(ValueError, match="unknown environment"):
        sim.get_environment("nope")
    with pytest.raises(TypeError, match="family"):
        sim.register_learner("zz_bad", ok, family=3, feedback="full")
    with pytest.raises(TypeError, match="feedback"):
        sim.register_environment("zz_bad", ok, family="experts", feedback="")
    with pytest.raises(TypeError, match="example"):
        sim.register_learner("zz_bad", ok, family="experts", feedback="full", example=3)
    with pytest.raises(ValueError, match="already registered"):
        sim.register_learner("hedge", ok, family="experts", feedback="full")
    assert "zz_bad" not in sim.learners() and "zz_bad" not in sim.environments()


def test_register_fast_path_refuses_bad_paths():
    with pytest.raises(ValueError, match="backend"):
        sim.register_fast_path("tpu", "x", supports=ok, metrics=(), driver=ok)
    with pytest.raises(ValueError, match="backend"):
        sim.register_fast_path("numpy", "x", supports=ok, metrics=(), driver=ok)
    with pytest.raises(TypeError, match="supports"):
        sim.register_fast_path("numba", "x", supports=3, metrics=(), driver=ok)
    with pytest.raises(TypeError, match="driver"):
        sim.register_fast_path("numba", "x", supports=ok, metrics=(), driver=None)
    with pytest.raises(TypeError, match="metrics"):
        sim.register_fast_path("numba", "x", supports=ok, metrics="regret", driver=ok)


def test_replication_keys_refuse_bad_sizes_and_seeds():
    with pytest.raises(ValueError, match="rep_offset"):
        sim.replication_keys(np.uint64(1), -1, 3)
    with pytest.raises(ValueError, match="n_reps"):
        sim.replication_keys(np.uint64(1), 0, 0)
    with pytest.raises(ValueError, match="seed_u"):
        sim.replication_keys(-1, 0, 3)
    with pytest.raises(TypeError, match="seed_u"):
        sim.replication_keys(1.5, 0, 3)
    a, b = sim.replication_keys(1, 2, 3)
    assert a.shape == b.shape == (3,) and a.dtype == np.uint64 and not np.any(a == b)


def test_testing_helpers_refuse_bad_input():
    with pytest.raises(ValueError, match="loss"):
        testing.play_losses(experts.hedge(), np.full((1, 3, 2), 2.0))
    with pytest.raises(ValueError, match="losses"):
        testing.play_losses(experts.hedge(), np.zeros((3, 2)))
    with pytest.raises(TypeError, match="losses"):
        testing.play_losses(experts.hedge(), np.zeros((1, 3, 2)) + 1j)
    with pytest.raises(TypeError, match="learner"):
        testing.play_losses("hedge", np.zeros((1, 3, 2)))
    with pytest.raises(ValueError, match="awake"):
        testing.play_losses(experts.hedge(), np.zeros((1, 3, 2)), awake=np.ones((1, 3, 2)))
    with pytest.raises(ValueError, match="n_reps"):
        testing.random_losses(-1, 3, 2)
    with pytest.raises(ValueError, match="seed"):
        testing.random_losses(1, 3, 2, seed=-1)
    with pytest.raises(ValueError, match="best_scale"):  # would put losses above 1
        testing.random_losses(1, 3, 2, best_scale=2.0)
    with pytest.raises(ValueError, match="p_awake"):
        testing.random_losses(1, 3, 2, p_awake=1.5)
    with pytest.raises(TypeError, match="code"):
        testing.run_in_cuda_simulator(3)
    with pytest.raises(ValueError, match="timeout"):
        testing.run_in_cuda_simulator("print(1)", timeout=0)


def test_learner_record_refuses_malformed_fields():
    fine = dict(name="mine", feedback="full", init=ok, act=ok, update=ok, params={})
    assert sim.Learner(**fine).name == "mine"
    for bad, exc, word in [(dict(name=""), TypeError, "name"), (dict(feedback=None), TypeError, "feedback"),
                           (dict(act="act"), TypeError, "act"), (dict(params=[("eta", 1.0)]), TypeError, "params"),
                           (dict(done=ok), ValueError, "answer"), (dict(final=1), TypeError, "final"),
                           (dict(doc=3), TypeError, "doc")]:
        with pytest.raises(exc, match=word):
            sim.Learner(**(fine | bad))


def test_rate_claim_and_checkpoints_refuse_bad_values():
    base = dict(name="test.bad", quantity="regret", variable="T", law="power", predicted=0.5, tolerance=0.1,
                source="test")
    for bad, word in [(dict(law="cubic"), "law"), (dict(tolerance=-0.1), "tolerance"), (dict(level=1.5), "level"),
                      (dict(predicted=float("nan")), "predicted")]:
        with pytest.raises(ValueError, match=word):
            sim.RateClaim(**(base | bad))
    with pytest.raises(ValueError, match="checkpoints"):
        sim.check_checkpoints([0], 10)
    with pytest.raises(ValueError, match="checkpoints"):
        sim.check_checkpoints([3, 11], 10)
    assert sim.check_checkpoints([10, 3], 10).tolist() == [3, 10]
