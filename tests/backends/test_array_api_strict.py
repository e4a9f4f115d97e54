"""The array path under ``array_api_strict``: what the CuPy path needs, checked without a GPU.

The reference path of :func:`expertlab.sim.run` is array code over ``xp``.
On a GPU ``xp`` is CuPy, which rejects NumPy-only calls (``np.*`` functions on
device arrays, ``.astype`` spellings CuPy lacks, host arrays mixed with device
arrays).  ``array_api_strict`` rejects all of those and more (arithmetic on
booleans, fancy-index assignment, NumPy scalars), so a pair that runs under it
and gives the NumPy numbers runs on CuPy too.

Every registered learner--environment pair runs through the array path on
``array_api_strict`` and its metrics and final values are compared with the
NumPy run of the same seed to a relative 1e-12.  A pair that cannot run there
is listed in :data:`NOT_PORTABLE` with the reason; the test fails when a listed
pair starts to pass, so the list only shrinks.
"""

from __future__ import annotations

import numpy as np
import pytest

from expertlab import sim
from expertlab.sim._engine import _run_array_on

xps = pytest.importorskip("array_api_strict")

N_REPS = 3
SEED = 11
RTOL = 1e-12

#: Pairs whose array path does not run on a strict array-API namespace, with the reason (a learner
#: declared NumPy array code would be listed here; none is at present).
NOT_PORTABLE: dict[str, str] = {}


def _all_pairs():
    return sorted(name for name, reg in sim.learners().items() if reg.example is not None)


def _metrics(xp, name):
    learner, env, horizon = sim.get_learner(name).example()
    return _run_array_on(xp, learner, env, horizon, N_REPS, SEED)


def _assert_same(ref, got, what):
    assert set(got) == set(ref), f"{what}: names differ: {sorted(got)} vs {sorted(ref)}"
    for key in ref:
        a = np.asarray(ref[key])
        b = np.asarray(got[key])
        assert b.shape == a.shape, f"{what}[{key!r}]: shape {b.shape} vs {a.shape}"
        if a.dtype.kind in "biu":
            np.testing.assert_array_equal(b, a, err_msg=f"{what}[{key!r}]")
            continue
        # NaN or inf must not hide a difference: both finite where either is, then a relative bound
        np.testing.assert_array_equal(np.isfinite(b), np.isfinite(a), err_msg=f"{what}[{key!r}] finiteness")
        fin = np.isfinite(a)
        np.testing.assert_array_equal(b[~fin], a[~fin], err_msg=f"{what}[{key!r}] non-finite entries")
        np.testing.assert_allclose(b[fin], a[fin], rtol=RTOL, atol=0.0, equal_nan=False,
                                   err_msg=f"{what}[{key!r}]")


def test_every_pair_is_covered():
    names = _all_pairs()
    assert len(names) >= 50, names
    unknown = set(NOT_PORTABLE) - set(names)
    assert not unknown, f"NOT_PORTABLE names unregistered learners: {sorted(unknown)}"


@pytest.mark.parametrize("name", _all_pairs())
def test_strict_array_path_matches_numpy(name):
    ref_metrics, ref_final = _metrics(np, name)
    if name in NOT_PORTABLE:
        try:
            got = _metrics(xps, name)
        except Exception:  # the documented failure: the pair stays listed
            pytest.xfail(NOT_PORTABLE[name])
        else:
            pytest.fail(f"{name} now runs on array_api_strict (metrics {sorted(got[0])}): "
                        "remove it from NOT_PORTABLE")
    got_metrics, got_final = _metrics(xps, name)
    assert ref_metrics, f"{name}: the example records no metric"
    _assert_same(ref_metrics, got_metrics, f"{name} metrics")
    _assert_same(ref_final, got_final, f"{name} final")


def test_strict_namespace_rejects_numpy_only_code():
    """The check can fail: a learner that applies a NumPy function to its weights is caught."""
    from expertlab.experts import hedge, instances

    base = hedge()

    def numpy_act(state, obs, keys):
        action, state = base.act(state, obs, keys)
        return np.exp(np.log(action)), state  # NumPy functions: fine on NumPy arrays, not on device arrays

    bad = base._replace(act=numpy_act)
    env = instances.fair_coins(4)
    np.testing.assert_allclose(_run_array_on(np, bad, env, 5, 2)[0]["regret"],
                               _run_array_on(np, base, env, 5, 2)[0]["regret"], rtol=1e-12, atol=0.0)
    # a TypeError from mixing namespaces, or array_api_strict's warning (an error under this suite's
    # filterwarnings) when NumPy meets its dtypes
    with pytest.raises((TypeError, UserWarning)):
        _run_array_on(xps, bad, env, 5, 2)


# --------------------------------------------------------------------------
# pairs in settings that the registered examples do not reach


def _settings():
    """``name -> (learner, env, horizon, hook, reached[, metrics])``: ``reached`` is called on what the NumPy
    run's ``hook`` sees (``"update"``: the new state, ``"act"``: the observation, ``"play"``: the action)."""
    from expertlab.bandits import expertise_trees, knn_experts, partitioned_expertise
    from expertlab.experts import (adanormalhedge, hedge, instances, realizable, recent_plays_attack,
                                   small_loss_experts, small_loss_instance, sparse_vector_experts)

    grow = lambda st: int(np.asarray(st.n_nodes).max()) > 1  # noqa: E731
    wrap = lambda st: int(np.asarray(st.filled).max()) > 5  # noqa: E731
    switched = lambda st: int(np.asarray(st.switches).max()) > 0  # noqa: E731
    next_phase = lambda st: int(np.asarray(st.phase).max()) > 1  # noqa: E731
    return {
        # a switch to a leader drawn uniformly (noise=False; the example runs with noise)
        "sparse_vector_experts-no-noise": (sparse_vector_experts(2.0, 60, noise=False, threshold=1.0),
                                           realizable(8, 0.1), 60, "update", switched),
        # the switch budget of a phase is spent: the next phase's threshold and scales are read
        "small_loss_experts-phases": (small_loss_experts(2.0, 60, threshold=2.0, max_switches=2),
                                      instances.needle(6, gap=0.2), 60, "update", next_phase),
        "small_loss_experts-phases-no-noise": (small_loss_experts(2.0, 60, noise=False, threshold=2.0,
                                                                  max_switches=2),
                                               instances.needle(6, gap=0.2), 60, "update", next_phase),
        # the small-loss learner on its own instance (the best expert loses in its first rounds only)
        "small_loss_experts-small_loss_instance": (
            small_loss_experts(2.0, 40), small_loss_instance(6, 0.5, best_loss=5), 40, "update",
            lambda st: float(np.asarray(st.cum)[:, 0].max()) > 0, ("regret", "pseudo_regret")),
        # a spread p: the adaptive adversary draws the play by inverse CDF; all three of its metrics
        "recent_plays_attack-spread-p": (hedge(), recent_plays_attack(6, window=2), 30, "play",
                                         lambda p: bool(np.any(np.asarray(p).max(axis=1) < 1.0)),
                                         ("regret", "hits", "mixture_regret")),
        # the learners' trees split (the examples stop before the first grace period)
        "expertise_trees-splits": (expertise_trees(max_depth=2, grace_period=10, delta=0.1),
                                   partitioned_expertise(), 60, "update", grow),
        # the ring buffers wrap around and hold fewer than k contexts early on
        "knn_experts-ring-wraps": (knn_experts(k=3, memory=5), partitioned_expertise(), 40, "update", wrap),
        # sleeping experts: the awake masks come from the instance's own draws
        "adanormalhedge-sleeping": (adanormalhedge(), instances.sleeping(instances.iid_uniform(4), 0.5), 20, "act",
                                    lambda awake: not bool(np.all(np.asarray(awake)))),
    }


@pytest.mark.parametrize("case", sorted(_settings()))
def test_strict_array_path_in_other_settings(case):
    learner, env, horizon, hook, reached, *metrics = _settings()[case]
    metrics = metrics[0] if metrics else None
    seen = []
    if hook == "update":
        def update(state, *args, **kwargs):
            new = learner.update(state, *args, **kwargs)
            seen.append(reached(new))
            return new
        spied = learner._replace(update=update)
    else:
        def act(state, obs, keys):
            action, new = learner.act(state, obs, keys)
            seen.append(reached(obs if hook == "act" else action))
            return action, new
        spied = learner._replace(act=act)
    ref_metrics, ref_final = _run_array_on(np, spied, env, horizon, N_REPS, SEED, metrics=metrics)
    assert any(seen), f"{case}: the NumPy run never reaches the setting the case is for"
    assert metrics is None or set(ref_metrics) == set(metrics)
    got_metrics, got_final = _run_array_on(xps, learner, env, horizon, N_REPS, SEED, metrics=metrics)
    _assert_same(ref_metrics, got_metrics, f"{case} metrics")
    _assert_same(ref_final, got_final, f"{case} final")


# --------------------------------------------------------------------------
# batched planners (expertlab.mdp) and EM cores (expertlab.mixtures) on strict arrays


def _arrays_of(result):
    """The array fields of a result (a dataclass or an array) as NumPy arrays, by name."""
    if hasattr(result, "shape"):
        return {"": np.asarray(result)}
    fields = vars(result) if hasattr(result, "__dict__") else result._asdict()
    return {k: np.asarray(v) for k, v in fields.items() if hasattr(v, "shape")}


def _same_result(ref, got, what):
    r, g = _arrays_of(ref), _arrays_of(got)
    assert r, f"{what}: no array to compare"
    _assert_same(r, g, what)


def _garnet():
    from expertlab.mdp.instances import garnet

    m = garnet(8, 3, 3, n_mdps=4, gamma=0.9, seed=0)
    return m.transitions, m.rewards


@pytest.mark.parametrize("solver", ["value_iteration", "policy_iteration", "soft_value_iteration"])
def test_planner_on_strict_arrays(solver):
    import expertlab.mdp as mdp

    p, r = _garnet()
    solve = getattr(mdp, solver)
    kw = {"engine": "array"} if solver == "value_iteration" else {}  # the same array code on NumPy
    _same_result(solve(p, r, 0.9, **kw), solve(xps.asarray(p), xps.asarray(r), 0.9), solver)


def test_value_iteration_compiled_engine_needs_numpy():
    """NumPy inputs take the compiled engine by default, strict arrays the array one; asking for the compiled one
    on strict arrays is refused, naming ``engine``."""
    from expertlab.mdp import value_iteration

    p, r = _garnet()
    with pytest.raises(ValueError, match="engine"):
        value_iteration(xps.asarray(p), xps.asarray(r), 0.9, engine="compiled")
    _same_result(value_iteration(p, r, 0.9, engine="array"),
                 value_iteration(xps.asarray(p), xps.asarray(r), 0.9, engine="auto"), "value_iteration[array]")


@pytest.mark.parametrize("stop", ["sup", "span"])
def test_planners_gathers_on_strict_arrays(stop):
    """A kernel with 3 of 32 states per row is iterated by gathers (and the longest runs go on alone)."""
    from expertlab.mdp import policy_iteration, value_iteration
    from expertlab.mdp.instances import garnet

    m = garnet(32, 3, 3, n_mdps=5, gamma=0.95, seed=1)
    p, r = m.transitions, m.rewards
    _same_result(value_iteration(p, r, 0.95, stop=stop, engine="array"),
                 value_iteration(xps.asarray(p), xps.asarray(r), 0.95, stop=stop), f"value_iteration[{stop}]")
    if stop == "sup":
        _same_result(policy_iteration(p, r, 0.95), policy_iteration(xps.asarray(p), xps.asarray(r), 0.95),
                     "policy_iteration (gathers)")
    else:
        _same_result(policy_iteration(p, r, 0.95, warm_start=1e-2),
                     policy_iteration(xps.asarray(p), xps.asarray(r), 0.95, warm_start=1e-2),
                     "policy_iteration (warm start)")


@pytest.mark.parametrize("divergence", ["tv", "kl", "chi2"])
def test_robust_planner_and_worst_case_on_strict_arrays(divergence):
    from expertlab.mdp import robust_value_iteration, worst_case

    p, r = _garnet()
    p, r = p[:2], r[:2]  # gamma = 0.5 and two MDPs: the strict namespace is slow, a few iterations suffice
    _same_result(robust_value_iteration(p, r, 0.5, radius=0.1, divergence=divergence),
                 robust_value_iteration(xps.asarray(p), xps.asarray(r), 0.5, radius=0.1, divergence=divergence),
                 f"robust_value_iteration[{divergence}]")
    v = np.repeat(np.linspace(0.0, 1.0, 8)[None, :], 5, axis=0)
    q = p[0, :5, 0]
    _same_result(worst_case(v, q, 0.2, divergence), worst_case(xps.asarray(v), xps.asarray(q), 0.2, divergence),
                 f"worst_case[{divergence}]")


def test_policy_evaluation_and_backup_on_strict_arrays():
    from expertlab.mdp import bellman_backup, policy_evaluation

    p, r = _garnet()
    pi = np.random.default_rng(1).integers(0, p.shape[-2], size=p.shape[:-2])
    _same_result(policy_evaluation(p, r, 0.9, pi), policy_evaluation(xps.asarray(p), xps.asarray(r), 0.9,
                                                                      xps.asarray(pi)), "policy_evaluation")
    v = np.random.default_rng(2).uniform(size=p.shape[:2])
    _same_result(bellman_backup(p, r, 0.9, v), bellman_backup(xps.asarray(p), xps.asarray(r), 0.9, xps.asarray(v)),
                 "bellman_backup")


def _mixture_data():
    rng = np.random.default_rng(5)
    return np.stack([np.concatenate([rng.normal(0.0, 1.0, (30, 2)), rng.normal(3.0, 0.7, (20, 2))])
                     for _ in range(3)])


@pytest.mark.parametrize("kind", ["full", "diag", "spherical"])
def test_em_cores_on_strict_arrays(kind):
    from expertlab.mixtures import GaussianMixtureParams, e_step, fit_gaussian_mixture, log_likelihood, m_step

    X = _mixture_data()
    params = fit_gaussian_mixture(X, 2, covariance_type=kind, seed=1, batched=True, max_iter=3).params
    sp = GaussianMixtureParams(*(xps.asarray(np.asarray(a)) for a in (params.weights, params.means,
                                                                         params.covariances)), kind)
    w = np.random.default_rng(6).uniform(0.5, 1.5, size=X.shape[:2])
    labels = np.full(X.shape[1], -1)
    labels[:3] = 0
    ref = e_step(X, params, sample_weight=w, labels=labels)
    got = e_step(xps.asarray(X), sp, sample_weight=xps.asarray(w), labels=xps.asarray(labels))
    _assert_same({"log_resp": ref[0], "loglik": ref[1]},
                 {"log_resp": np.asarray(got[0]), "loglik": np.asarray(got[1])}, f"e_step[{kind}]")
    resp = np.exp(ref[0])
    _same_result(m_step(X, resp, sample_weight=w, covariance_type=kind),
                 m_step(xps.asarray(X), xps.asarray(resp), sample_weight=xps.asarray(w), covariance_type=kind),
                 f"m_step[{kind}]")
    _assert_same({"ll": log_likelihood(X, params)}, {"ll": np.asarray(log_likelihood(xps.asarray(X), sp))},
                 f"log_likelihood[{kind}]")


@pytest.mark.parametrize("kind", ["full", "diag", "spherical"])
def test_fit_gaussian_mixture_on_strict_arrays(kind):
    """The whole batched EM loop (shared with the contaminated MoE) runs on strict arrays, step for step."""
    from expertlab.mixtures import fit_gaussian_mixture

    X = _mixture_data()
    w = np.random.default_rng(7).uniform(0.5, 1.5, size=X.shape[:2])
    ref = fit_gaussian_mixture(X, 2, covariance_type=kind, sample_weight=w, seed=1, batched=True, max_iter=30,
                               tol=1e-8)
    got = fit_gaussian_mixture(xps.asarray(X), 2, covariance_type=kind, sample_weight=xps.asarray(w), seed=1,
                               batched=True, max_iter=30, tol=1e-8)
    assert not isinstance(got.params.means, np.ndarray)
    np.testing.assert_array_equal(np.asarray(got.n_iter), ref.n_iter)
    np.testing.assert_array_equal(np.asarray(got.converged), ref.converged)
    np.testing.assert_allclose(np.asarray(got.loglik_path), ref.loglik_path, rtol=1e-10, atol=1e-12)
    for field in ("weights", "means", "covariances"):
        np.testing.assert_allclose(np.asarray(getattr(got.params, field)), getattr(ref.params, field),
                                   rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("link, density", [
    ("tanh", "laplace"), ("sigmoid", "gaussian"), ("linear", "student_t"), ("gelu", "gaussian")])
def test_contaminated_moe_em_on_strict_arrays(link, density):
    """The array engine of the contaminated-MoE EM runs on strict arrays and matches the compiled NumPy kernel."""
    from expertlab.mixtures import (ContaminatedMoEParams, FrozenExpert, contaminated_moe_loglik,
                                    fit_contaminated_moe, perturbed_truth, sample_contaminated_moe)

    e1 = np.eye(2)[0]
    truth = ContaminatedMoEParams.tile(np.ones(2) / np.sqrt(2), 1.0, -e1, 1e-2, 3)
    expert = FrozenExpert(e1, 1e-2, density)
    X, y, _ = sample_contaminated_moe(300, truth, expert, link=link, seed=1)
    init = perturbed_truth(truth, scale=0.2, seed=2)
    strict_init = ContaminatedMoEParams(*(xps.asarray(a) for a in (init.beta, init.tau, init.eta, init.nu)))
    ref = fit_contaminated_moe(X, y, expert, link=link, init=init, batched=True, max_iter=40, tol=1e-10)
    got = fit_contaminated_moe(xps.asarray(X), xps.asarray(y), expert, link=link, init=strict_init, batched=True,
                               max_iter=40, tol=1e-10)
    assert isinstance(got.params.eta, type(xps.asarray(0.0)))
    np.testing.assert_array_equal(np.asarray(got.n_iter), ref.n_iter)
    np.testing.assert_array_equal(np.asarray(got.converged), ref.converged)
    np.testing.assert_allclose(np.asarray(got.loglik_path), ref.loglik_path, rtol=1e-9, atol=1e-12)
    for field in ("beta", "tau", "eta", "nu"):
        np.testing.assert_allclose(np.asarray(getattr(got.params, field)), getattr(ref.params, field),
                                   rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(np.asarray(contaminated_moe_loglik(xps.asarray(X), xps.asarray(y), got.params, expert,
                                                                  link=link)),
                               contaminated_moe_loglik(X, y, ref.params, expert, link=link), rtol=1e-9)


# --- every registered environment, not only those of the learners' examples ----------------------------------

def _env_cases():
    """``{environment name: (build, learner name)}``: a small instance of every registered environment and a
    learner of its family and feedback.  Environments that a learner's example already uses appear too, with
    other settings."""
    import numpy as np

    from expertlab.balance import routing_fixed
    from expertlab.bandits import instances as bi
    from expertlab.experts import instances as ei
    from expertlab.experts._lomar import fixed_bipartite
    from expertlab.experts._memory_adaptive import recent_plays_attack
    from expertlab.experts._private_run import realizable
    from expertlab.experts._private_small_loss import small_loss_instance

    reg = sim.environments()
    rng = np.random.default_rng(4)
    example_env = {}
    for lname, lreg in sim.learners().items():
        if lreg.example is not None:
            env = lreg.example()[1]
            example_env.setdefault(getattr(env, "name", None), (lambda e=env: e, lname))
    cases = {
        "anti_correlated": (lambda: reg["anti_correlated"].factory(), "hedge"),
        "fair_coins": (lambda: ei.fair_coins(4), "hedge"),
        "iid_uniform": (lambda: ei.iid_uniform(4), "fixed_share"),
        "iid_bernoulli": (lambda: ei.iid_bernoulli([0.2, 0.5, 0.7]), "adahedge"),
        "needle": (lambda: ei.needle(5, 0.2), "squint"),
        "loss_matrix": (lambda: ei.loss_matrix(rng.uniform(size=(30, 3))), "hedge"),
        "piecewise_best": (lambda: ei.piecewise_best(3, 7, 0.2), "fixed_share"),
        "realizable": (lambda: realizable(4), "hedge"),
        "small_loss": (lambda: small_loss_instance(4, best_loss=2), "hedge"),
        "recent_plays_attack": (lambda: recent_plays_attack(4), "hedge"),
        "bernoulli": (lambda: bi.bernoulli([0.2, 0.5, 0.7]), "thompson_sampling"),
        "gaussian": (lambda: bi.gaussian([0.2, 0.5, 0.7]), "ucb1"),
        "minimax": (lambda: bi.minimax(3, 40), "exp3"),
        "piecewise_bernoulli": (lambda: bi.piecewise_bernoulli([[0.2, 0.8], [0.8, 0.2]], [10]), "ucb1"),
        "reward_array": (lambda: bi.reward_array(rng.uniform(size=(30, 3))), "ucb1"),
        "fixed_bipartite": (lambda: fixed_bipartite(rng.uniform(size=(6, 3))), None),
        "routing_fixed": (lambda: routing_fixed(rng.normal(size=(12, 4)), 2), "alf_lb"),
    }
    # the rest: the environment of a learner's example (the name under which the instance reports itself)
    aliases = {"hard_linear_mixture": "linear_mixture", "hou_tan_zhong": "safe_comb",
               "safe_cost_ladder": "learned_cost_safe_mixture", "safe_trap_mixture": "safe_linear_mixture",
               "threshold_mentor": "threshold_mentor_iid"}
    for name in reg:
        if name not in cases and aliases.get(name, name) in example_env:
            cases[name] = example_env[aliases.get(name, name)]
    return cases


def test_every_registered_environment_has_a_strict_case():
    missing = set(sim.environments()) - set(_env_cases())
    assert not missing, f"give these environments a case in _env_cases: {sorted(missing)}"


@pytest.mark.parametrize("env_name", sorted(sim.environments()))
def test_every_registered_environment_runs_strictly(env_name):
    build, lname = _env_cases()[env_name]
    env = build()
    if lname is None:  # a learner of the matching family whose example runs on this feedback
        reg = sim.environments()[env_name]
        lname = next(n for n, r in sorted(sim.learners().items())
                     if r.example is not None and (r.family, r.feedback) == (reg.family, reg.feedback))
    learner = sim.get_learner(lname).example()[0]
    horizon = 20 if env.spec.max_horizon is None else min(20, env.spec.max_horizon)
    ref_metrics, ref_final = _run_array_on(np, learner, env, horizon, N_REPS, SEED)
    got_metrics, got_final = _run_array_on(xps, learner, env, horizon, N_REPS, SEED)
    assert ref_metrics, f"{env_name}: no metric recorded"
    _assert_same(ref_metrics, got_metrics, f"{env_name}/{lname} metrics")
    _assert_same(ref_final, got_final, f"{env_name}/{lname} final")
