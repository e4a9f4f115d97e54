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

#: Pairs whose array path does not run on a strict array-API namespace, with the reason.  All are
#: NumPy array code that a CuPy run would reject too; porting them means rewriting their state
#: updates in ``xp`` (see the module docstring for what that takes).
_NUMPY_CODE = "NumPy array code: {} (its {} calls NumPy on the run's arrays)"
NOT_PORTABLE = {
    # declared NumPy-only: the learner refuses any other namespace with a clear ValueError
    "memory_adaptive": "declared NumPy array code: it refuses any other namespace",
    "noisy_ftpl": "declared NumPy array code: the private-experts runner refuses any other namespace",
    "small_loss_experts": "declared NumPy array code: the private-experts runner refuses any other namespace",
    "sparse_vector_experts": "declared NumPy array code: the private-experts runner refuses any other namespace",
    "tree_ftrl": "declared NumPy array code: the private-experts runner refuses any other namespace",
    # NumPy array code, not yet written over xp
    # (global_thompson is expertise_trees with depth-0 trees: the same Hoeffding-tree code)
    "expertise_trees": _NUMPY_CODE.format("bandits/_expertise_trees.py and bandits/_hoeffding_tree.py",
                                          "act and update (np.asarray contexts, normal_array(np, ...); "
                                          "hoeffding_tree_update writes leaf statistics and histograms in "
                                          "place by index arrays)"),
    "global_thompson": _NUMPY_CODE.format("bandits/_expertise_trees.py and bandits/_hoeffding_tree.py",
                                          "act and update (np.asarray contexts, normal_array(np, ...); "
                                          "hoeffding_tree_update writes leaf statistics and histograms in "
                                          "place by index arrays)"),
    "knn_experts": _NUMPY_CODE.format("bandits/_expertise_trees.py",
                                      "act and update (np.argpartition, which the array API lacks, and "
                                      "index-array writes into the ring buffers)"),
}


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
