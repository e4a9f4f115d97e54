"""What a notebook shows: short reprs, HTML tables, help() and pickling of every learner, environment and record.

Every registered learner and environment, every instance function and every
result record the families return must print in at most eight lines, with no
object address and no array dump: arrays appear as ``name: dtype[shape]``.
A learner shows its name and parameters, ``help(learner)`` shows the
factory's docstring, and a learner survives a pickle round trip (sweeps ship
learners to worker processes) as the same learner: the same numbers from the
same seed.
"""

import inspect
import pickle
import pydoc
import re

import numpy as np
import pytest

import expertlab.bandits.instances as bandit_instances
import expertlab.experts.instances as expert_instances
import expertlab.mdp.instances as mdp_instances
from expertlab import balance, bandits, experts, mdp, mixtures, sim
from expertlab._repr import record_repr

LEARNERS = sim.learners()
ENVIRONMENTS = sim.environments()

# a dump: three numbers in a row separated only by commas or spaces, as NumPy prints arrays
_DUMP = re.compile(r"-?\d+\.?\d*(e[-+]?\d+)?[,\s]+-?\d+\.?\d*(e[-+]?\d+)?[,\s]+-?\d+\.?\d*(e[-+]?\d+)?")


def _has_dump(text: str) -> bool:
    return _DUMP.search(re.sub(r"\w+\[[\d, ]*\]", "", text)) is not None  # shapes are not dumps


def _shape(a) -> str:
    return f"{a.dtype}[{', '.join(str(n) for n in a.shape)}]"


def _check_short(text: str):
    assert len(text.splitlines()) <= 8, text
    assert "0x" not in text, text
    assert re.search(r"(?<![\w.])array\(", text) is None, text


def _check_array_fields(text: str, fields):
    """Every array field shows as ``name: dtype[shape]``; returns how many there are."""
    n_arrays = 0
    for name, value in fields:
        if isinstance(value, np.ndarray) and value.ndim > 0:
            n_arrays += 1
            assert f"{name}: {_shape(value)}" in text, (name, text)
    return n_arrays


def _value_text(v):
    """A scalar parameter as it must appear after ``k=`` (None when it is not a plain scalar)."""
    if isinstance(v, (bool, int, str)) or v is None:
        return repr(v)
    if isinstance(v, float) and len(repr(v)) <= 10:
        return repr(v)
    return None


# --------------------------------------------------------------------------
# learners


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_learner_repr_shows_name_and_parameters(name):
    learner = LEARNERS[name].example()[0]
    text = repr(learner)
    _check_short(text)
    assert len(text.splitlines()) == 1 and text.startswith(f"{name}(") and text.endswith(")")
    assert "<function" not in text and "Learner(" not in text
    shown = 0
    for k, v in learner.params.items():
        if isinstance(v, np.ndarray) and v.ndim > 0:
            assert f"{k}: {_shape(v)}" in text, text
            shown += 1
        elif _value_text(v) is not None:
            assert f"{k}={_value_text(v)}" in text, text
            shown += 1
        else:
            assert f"{k}=" in text, text
    assert shown or not learner.params, f"no parameter value of {name} is shown: {text}"
    assert not _has_dump(text) or any(isinstance(v, (list, tuple)) for v in learner.params.values()), text


def test_learner_repr_given_parameters():
    assert repr(experts.hedge(eta=0.1)) == "hedge(eta=0.1, schedule='fixed')"
    assert repr(bandits.ucb1(c=3.5)) == "ucb1(c=3.5)"
    assert repr(mdp.ucbvi(delta=0.25)).startswith("ucbvi(bonus='hoeffding', delta=0.25, ")


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_learner_html_table(name):
    learner = LEARNERS[name].example()[0]
    html = learner._repr_html_()
    assert html.startswith("<table") and html.endswith("</table>") and f"<b>{name}</b>" in html
    for k in learner.params:
        assert f">{k}<" in html
    assert "0x" not in html and html.count("<tr>") == len(learner.params) + 1


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_help_shows_the_factory_docstring(name):
    learner = LEARNERS[name].example()[0]
    factory_doc = inspect.getdoc(LEARNERS[name].factory)
    assert factory_doc, f"the factory of {name} has no docstring"
    text = pydoc.render_doc(learner, renderer=pydoc.plaintext)
    assert factory_doc.splitlines()[0] in text
    assert "An online learner as a record of pure functions" not in text
    assert isinstance(learner, sim.Learner)


def test_learner_class_keeps_its_own_docstring():
    assert sim.Learner.__doc__.startswith("An online learner as a record of pure functions")
    assert inspect.getdoc(sim.Learner).startswith("An online learner")
    assert experts.hedge().__doc__.startswith("Hedge / exponential weights")


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_pickle_round_trip_is_the_same_learner(name):
    learner, env, horizon = LEARNERS[name].example()
    back = pickle.loads(pickle.dumps(learner))
    assert isinstance(back, sim.Learner) and repr(back) == repr(learner) and back.name == learner.name
    horizon = min(horizon, 30)
    a = sim.run(learner, env, horizon=horizon, n_reps=2, seed=5, backend="numpy")
    b = sim.run(back, env, horizon=horizon, n_reps=2, seed=5, backend="numpy")
    assert a.metrics.keys() == b.metrics.keys()
    for k in a.metrics:
        np.testing.assert_array_equal(a.metrics[k], b.metrics[k], err_msg=k)


def test_pickle_refuses_a_modified_learner():
    # a record whose functions are not what its factory builds must not travel as (name, params): it would
    # come back as another learner
    mixed = experts.hedge(eta=0.5)._replace(act=experts.ftl().act)
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(mixed)
    # same code, other closed-over values: also refused
    other = experts.hedge(eta=0.5)._replace(params={"eta": 0.9, "schedule": "fixed"})
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(other)


# --------------------------------------------------------------------------
# environments


def _env_of_learner(learner_name):
    return lambda: LEARNERS[learner_name].example()[1]


_ENV_ARGS = {
    "bernoulli": dict(means=[0.2, 0.5, 0.6]),
    "gaussian": dict(means=[0.2, 0.5], sigma=0.5),
    "iid_bernoulli": dict(means=[0.2, 0.5, 0.6]),
    "loss_matrix": dict(losses=np.linspace(0, 1, 40).reshape(10, 4)),
    "minimax": dict(n_arms=4, horizon=100),
    "piecewise_bernoulli": dict(means=[[0.1, 0.5], [0.5, 0.1]], change_points=[20]),
    "reward_array": dict(rewards=np.linspace(0, 1, 30).reshape(10, 3)),
    "hard_linear_mixture": dict(gap=0.1),
}
_ENV_FROM_LEARNER = {"expert_tasks": "active_ranking", "linear_arms": "linfact", "safe_comb": "cucb",
                     "linear_mixture_stream": "uclk", "reward_free_mixture": "reward_free_ttr"}


def _build_env(name):
    reg = ENVIRONMENTS[name]
    if reg.example is not None:
        out = reg.example()
        envs = [o for o in (out if isinstance(out, tuple) else (out,)) if sim.is_environment(o)]
        assert envs, f"the example of environment {name} holds no environment"
        return envs[0]
    if name in _ENV_FROM_LEARNER:
        return _env_of_learner(_ENV_FROM_LEARNER[name])()
    return reg.factory(**_ENV_ARGS.get(name, {}))


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_environment_repr_and_html(name):
    env = _build_env(name)
    text = repr(env)
    _check_short(text)
    assert text.startswith(f"{env.name}(")
    _check_array_fields(text, env.params.items())
    html = env._repr_html_()
    assert html.startswith("<table") and f"<b>{env.name}</b>" in html and "0x" not in html
    assert f"{env.spec.n_actions} actions" in html
    for k in env.params:
        assert f">{k}<" in html


def test_environment_arrays_are_summarised():
    env = _env_of_learner("active_ranking")()
    assert "means: float64[4, 3]" in repr(env)
    arms = bandit_instances.reward_array(np.linspace(0, 1, 30).reshape(10, 3))
    assert "0x" not in repr(arms) and len(repr(arms)) < 100


# --------------------------------------------------------------------------
# instance functions

INSTANCE_CALLS = {
    "experts.fair_coins": lambda: expert_instances.fair_coins(5),
    "experts.anti_correlated": lambda: expert_instances.anti_correlated(),
    "experts.iid_uniform": lambda: expert_instances.iid_uniform(5),
    "experts.iid_bernoulli": lambda: expert_instances.iid_bernoulli([0.2, 0.5, 0.6]),
    "experts.needle": lambda: expert_instances.needle(5),
    "experts.piecewise_best": lambda: expert_instances.piecewise_best(5, 10),
    "experts.loss_matrix": lambda: expert_instances.loss_matrix(np.linspace(0, 1, 200).reshape(50, 4)),
    "experts.sleeping": lambda: expert_instances.sleeping(expert_instances.needle(5)),
    "bandits.bernoulli": lambda: bandit_instances.bernoulli([0.1, 0.5]),
    "bandits.gaussian": lambda: bandit_instances.gaussian([0.1, 0.5]),
    "bandits.minimax": lambda: bandit_instances.minimax(4, 100),
    "bandits.reward_array": lambda: bandit_instances.reward_array(np.linspace(0, 1, 150).reshape(50, 3)),
    "bandits.piecewise_bernoulli": lambda: bandit_instances.piecewise_bernoulli([[0.1, 0.5], [0.5, 0.1]], [20]),
    "mdp.gridworld": lambda: mdp_instances.gridworld(3, 3),
    "mdp.river_swim": lambda: mdp_instances.river_swim(),
    "mdp.garnet": lambda: mdp_instances.garnet(10, 3, 3, n_mdps=8),
    "mdp.forest": lambda: mdp_instances.forest(),
    "mdp.random_linear_mixture": lambda: mdp_instances.random_linear_mixture(4, 2, dim=3),
    "mdp.hard_linear_mixture": lambda: mdp_instances.hard_linear_mixture(gap=0.1),
    "mdp.greedy_trap_mixture": lambda: mdp_instances.greedy_trap_mixture(),
    "mdp.two_point_lower_bound": lambda: mdp_instances.two_point_lower_bound(0.1),
    "mdp.conservative_garnet": lambda: mdp_instances.conservative_garnet(),
}
_NOT_INSTANCES = {"fair_coins_expected_regret", "lai_robbins_constant", "bernoulli_kl", "INSTANCES"}


def test_every_instance_function_is_covered():
    for family, module in (("experts", expert_instances), ("bandits", bandit_instances), ("mdp", mdp_instances)):
        for fn in set(module.__all__) - _NOT_INSTANCES:
            assert f"{family}.{fn}" in INSTANCE_CALLS, f"{family}.instances.{fn} has no repr check"


def _fields(obj):
    if hasattr(obj, "__dataclass_fields__"):
        return [(k, getattr(obj, k)) for k in obj.__dataclass_fields__]
    return list(getattr(obj, "params", {}).items())


@pytest.mark.parametrize("name", sorted(INSTANCE_CALLS))
def test_instance_repr(name):
    obj = INSTANCE_CALLS[name]()
    text = repr(obj)
    _check_short(text)
    if sim.is_environment(obj):
        _check_array_fields(text, obj.params.items())
    else:
        assert _check_array_fields(text, _fields(obj)) >= 2


def test_garnet_batch_prints_shapes():
    text = repr(mdp_instances.garnet(10, 3, 3, n_mdps=8))
    assert "transitions: float64[8, 10, 3, 10]" in text and "rewards: float64[8, 10, 3]" in text
    assert len(text.splitlines()) <= 2


# --------------------------------------------------------------------------
# result records


def _linear_mixture():
    return mdp_instances.random_linear_mixture(4, 2, dim=3, seed=0)


def _dr(method):
    m = _linear_mixture()
    data = mdp.sample_offline_dataset(m.features, m.theta, 50, 2, seed=1)
    return getattr(mdp, method)(m.features, np.broadcast_to(m.rewards, (3, 4, 2)), data, radius=0.1)


def _scores():
    return np.random.default_rng(0).standard_normal((12, 4))


def _ssme_data():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60)
    s = 1 / (1 + np.exp(-(2.0 * (2 * y[:, None] - 1) + rng.standard_normal((60, 2)))))
    return np.stack([1 - s, s], -1)[None], np.where(np.arange(60) < 10, y, -1)[None]


def _contaminated_fit():
    e = mixtures.FrozenExpert(np.array([1.0, 0.0]), 1e-3, "laplace")
    truth = mixtures.ContaminatedMoEParams.tile([0.7, 0.7], 1.0, [-1.0, 0.0], 1e-3, n_reps=1)
    X, y, _ = mixtures.sample_contaminated_moe(200, truth, e, seed=0)
    return mixtures.fit_contaminated_moe(X[0], y[0], e, init="perturbed_truth", truth=truth.select(0), seed=0,
                                         max_iter=5)


def _contaminated_errors():
    t = mixtures.ContaminatedMoEParams.tile([0.0, 0.0], 0.0, [1.0, 0.0], 1.0, n_reps=4)
    p = mixtures.ContaminatedMoEParams.tile([3.0, 4.0], np.log(2.0), [1.0, 0.0], 1.5, n_reps=4)
    return mixtures.parameter_errors(p, t)


def _moe_time_fit():
    truth = mixtures.MoETimeModel(0.5, 0.02, 0.001, n_experts=64, top_k=8)
    t = np.array([1, 2, 4, 8, 16, 32, 64, 128])
    return mixtures.fit_moe_time_model(t, truth.time(t), 64, 8)


def _rate_check():
    claim = sim.RateClaim("test.repr", "regret", "T", "power", 0.5, 0.1, source="test")
    x = np.array([10.0, 100.0, 1000.0])
    y = np.sqrt(x)[:, None] * (1 + 0.01 * np.random.default_rng(0).standard_normal((3, 20)))
    return sim.check_rate(claim, x, y, n_boot=50)


def _reward_free_estimate():
    rng = np.random.default_rng(0)
    return mdp.RewardFreeEstimate(theta=rng.random((2, 3)), theta_hat=rng.random((2, 3)),
                                  gram_inv=rng.random((2, 3, 3)), beta=rng.random(2), radius=rng.random(2),
                                  gram=rng.random((2, 3, 3)), values=rng.random((2, 4, 5)))


def _sweep_result():
    cfg = {"learner": "hedge", "instance": "fair_coins", "horizon": 20}
    return sim.sweep([cfg], n_reps=4, block_size=2, executor="serial")


RECORDS = {
    "PlanningResult": lambda: mdp.value_iteration(mdp_instances.garnet(10, 3, 3, n_mdps=8)),
    "PlanningResult(policy_iteration)": lambda: mdp.policy_iteration(mdp_instances.gridworld(3, 3)),
    "FiniteHorizonResult": lambda: mdp.backward_induction(mdp.garnet_episodic(6, 3, 3, 5).model),
    "SoftPlanningResult": lambda: mdp.soft_value_iteration(mdp_instances.gridworld(3, 3)),
    "WorstCaseResult": lambda: mdp.worst_case(np.arange(10.0), np.full(10, 0.1), 0.2),
    "RobustPlanningResult": lambda: mdp.robust_value_iteration(mdp_instances.gridworld(3, 3), radius=0.1),
    "MixtureRobustResult": lambda: mdp.mixture_robust_value_iteration(
        _linear_mixture().features, _linear_mixture().theta, _linear_mixture().rewards, 0.9, radius=0.1),
    "MixtureRobustFiniteResult": lambda: mdp.mixture_robust_backward_induction(
        _linear_mixture().features, _linear_mixture().theta, np.broadcast_to(_linear_mixture().rewards, (3, 4, 2)),
        radius=0.1),
    "OfflineDataset": lambda: mdp.sample_offline_dataset(_linear_mixture().features, _linear_mixture().theta, 20, 2),
    "DROfflineResult(vtr)": lambda: _dr("dr_vtr"),
    "DROfflineResult(ttr)": lambda: _dr("dr_ttr"),
    "RewardFreeEstimate": _reward_free_estimate,
    "Trajectory": lambda: mdp.sample_episodes(mdp.garnet_episodic(4, 2, 2, 3).model, np.zeros((5, 3, 4), int),
                                              np.arange(5, dtype=np.uint64), 0),
    "AuditResult": lambda: experts.privacy_audit(np.random.default_rng(0).integers(0, 3, 400),
                                                 np.random.default_rng(1).integers(0, 3, 400), 0.5),
    "AuxLossResult": lambda: balance.aux_loss(_scores(), k=2),
    "RouteResult": lambda: balance.base_route(_scores(), k=2),
    "SinkhornResult": lambda: balance.sinkhorn_route(_scores(), k=2),
    "CapacityRouteResult": lambda: balance.capacity_route(_scores(), 2, 1.0),
    "AssignmentResult": lambda: balance.solve_exact(balance.AssignmentProblem(_scores(), k=2, capacity=6)),
    "BatchAssignmentResult": lambda: balance.solve_exact(
        balance.AssignmentBatch(np.random.default_rng(0).standard_normal((3, 6, 3)), k=1)),
    "EMResult": lambda: mixtures.fit_gaussian_mixture(np.random.default_rng(0).standard_normal((50, 2)), 3,
                                                      max_iter=5),
    "EMResult(contaminated)": _contaminated_fit,
    "ContaminatedMoEErrors": _contaminated_errors,
    "ShapleyResult": lambda: mixtures.shapley_mc(lambda m: np.minimum(m[:, :2].sum(axis=1), m[:, 2]), 3,
                                                 n_permutations=30, seed=0),
    "SSMEResult": lambda: mixtures.fit_ssme(*_ssme_data(), density="gaussian", max_iter=5),
    "MetricEstimate": lambda: mixtures.labeled_only(*_ssme_data()),
    "DawidSkeneResult": lambda: mixtures.dawid_skene(np.array([[[0, 0, 1], [1, 1, 1], [0, 0, 0], [1, 1, 0]]]),
                                                     np.array([[-1, 1, 0, -1]]), n_classes=2),
    "PPIResult": lambda: mixtures.ppi_accuracy(*_ssme_data()),
    "MoETimeFit": _moe_time_fit,
    "ClusterTrainResult": lambda: mixtures.train_cluster_moe(8, 32, router="oracle", n_reps=2, seed=0),
    "RateCheck": _rate_check,
    "RunResult": lambda: sim.run(experts.hedge(), expert_instances.needle(4), horizon=50, n_reps=3),
    "SweepResult": _sweep_result,
}

_RECORD_SUFFIXES = ("Result", "Fit", "Errors", "Estimate")


def test_every_result_record_is_covered():
    covered = {name.split("(")[0] for name in RECORDS}
    for family in (sim, mdp, bandits, experts, balance, mixtures):
        for name in family.__all__:
            obj = getattr(family, name)
            if inspect.isclass(obj) and name.endswith(_RECORD_SUFFIXES):
                assert name in covered, f"{family.__name__}.{name} has no repr check"


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_record_repr(name):
    obj = RECORDS[name]()
    assert type(obj).__name__ == name.split("(")[0]
    text = repr(obj)
    _check_short(text)
    assert not _has_dump(text), text
    assert text.startswith(type(obj).__name__ + "(")
    # the records without a summary of their own list their fields: every array as name: dtype[shape]
    if type(obj).__repr__ is record_repr and "... +" not in text.splitlines()[-1]:
        fields = [(k, getattr(obj, k)) for k in getattr(obj, "__dataclass_fields__", getattr(obj, "_fields", ()))]
        _check_array_fields(text, fields)


def test_records_print_shapes_and_numbers():
    res = RECORDS["PlanningResult"]()
    text = repr(res)
    assert "values: float64[8, 10]" in text and "q_values: float64[8, 10, 3]" in text
    assert "policy: int64[8, 10]" in text and f"gamma={res.gamma}" in text
    # a 0-d array and a NumPy scalar print as numbers
    wc = RECORDS["WorstCaseResult"]()
    assert repr(wc) == "WorstCaseResult(value=2.8, distribution: float64[10], divergence='tv', radius=0.2)"
    em = RECORDS["EMResult"]()
    assert "params=GaussianMixtureParams(weights: float64[3], means: float64[3, 2]" in repr(em)
    assert f"n_iter={em.n_iter}" in repr(em)
