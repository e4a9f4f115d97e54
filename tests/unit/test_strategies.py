"""The Hypothesis strategies of ``expertlab.testing.strategies`` draw only valid inputs, within their bounds.

Every drawn object is handed to the library's own validation (constructors,
``check_kernel``, the EM checks, ``solve_exact``, a short ``sim.run``) and its
stated invariants are checked directly; coverage tests use ``find`` to show
that the edge cases a strategy promises (zeros in a kernel, one-hot rows,
ties, a single awake expert) are actually drawn.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st

from expertlab import sim
from expertlab.balance import AssignmentProblem, solve_exact, top_k_route
from expertlab.bandits import instances as bandit_instances
from expertlab.experts import hedge
from expertlab.experts import instances as expert_instances
from expertlab.mdp import (EpisodicLinearMixture, FiniteHorizonMDP, LinearMixtureMDP, TabularMDP, backward_induction,
                           check_kernel, value_iteration)
from expertlab.mixtures import GaussianMixtureParams, e_step, log_likelihood
from expertlab.testing import play_losses
from expertlab.testing import strategies as xst
from expertlab.testing.strategies import _sample

FAST = settings(max_examples=15, deadline=None)
TINY = settings(max_examples=6, deadline=None)


# --------------------------------------------------------------------------
# losses and awake masks


@FAST
@given(xst.loss_matrices(min_reps=2, max_reps=3, min_horizon=3, max_horizon=5, min_experts=2, max_experts=4))
def test_loss_matrices_are_valid_losses_within_bounds(losses):
    assert losses.dtype == np.float64 and losses.ndim == 3
    n_reps, horizon, n = losses.shape
    assert 2 <= n_reps <= 3 and 3 <= horizon <= 5 and 2 <= n <= 4
    assert np.all(np.isfinite(losses)) and np.all((losses >= 0.0) & (losses <= 1.0))
    for r in range(n_reps):  # the library's fixed-matrix instance accepts every replication's losses
        assert expert_instances.loss_matrix(losses[r]).n_experts == n
    p, _ = play_losses(hedge(), losses)  # Hedge's update validates every round's losses
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_loss_matrices_draw_the_edge_values():
    for value in (1.0 - 2.0**-53, 5e-324, 1.0):
        found = find(xst.loss_matrices(), lambda x, v=value: bool(np.any(x == v)))
        assert np.any(found == value)


@FAST
@given(xst.loss_matrices(elements=st.sampled_from([0.0, 0.25, 1.0]), max_horizon=4))
def test_loss_matrices_take_elements_from_the_given_strategy(losses):
    assert set(np.unique(losses).tolist()) <= {0.0, 0.25, 1.0}


def test_loss_matrices_refuse_elements_outside_the_unit_interval():
    with pytest.raises(ValueError, match="elements"):
        find(xst.loss_matrices(elements=st.just(1.5)), lambda x: True)


@FAST
@given(xst.sleeping_losses(min_horizon=2, max_horizon=6, min_experts=1, max_experts=5))
def test_sleeping_losses_have_an_awake_expert_every_round(pair):
    losses, awake = pair
    assert awake.dtype == np.bool_ and awake.shape == losses.shape
    assert np.all(awake.any(axis=-1))
    p, r = play_losses(hedge(), losses, awake)  # the learner's update checks the masks
    assert np.all(p[~awake] == 0.0) and np.all(r[~awake] == 0.0)


@FAST
@given(xst.awake_masks((3, 4, 5)))
def test_awake_masks_have_the_shape_and_an_awake_expert_per_row(mask):
    assert mask.shape == (3, 4, 5) and mask.dtype == np.bool_
    assert np.all(mask.any(axis=-1))


def test_awake_masks_reach_single_awake_experts_and_asleep_ones():
    one = find(xst.awake_masks((2, 5, 4)), lambda m: bool(np.any(m.sum(axis=-1) == 1)))
    assert np.any(one.sum(axis=-1) == 1)
    everyone = find(xst.awake_masks((2, 5, 4)), lambda m: bool(np.any(m.all(axis=-1)) and not m.all()))
    assert np.any(everyone.all(axis=-1)) and not everyone.all()


# --------------------------------------------------------------------------
# bandits


@FAST
@given(xst.bandit_means(min_arms=3, max_arms=5))
def test_bernoulli_means_lie_in_the_unit_interval(means):
    assert means.shape[0] in (3, 4, 5) and np.all((means >= 0.0) & (means <= 1.0))
    assert bandit_instances.bernoulli(means).n_arms == means.size


@FAST
@given(xst.bandit_means(kind="gaussian", min_mean=-3.0, max_mean=2.0, min_gap=0.7))
def test_gaussian_means_respect_range_and_gap(means):
    assert np.all((means >= -3.0) & (means <= 2.0))
    top = np.sort(means)[::-1]
    assert top[0] - top[1] >= 0.7  # a unique best arm, ahead by the gap
    assert bandit_instances.gaussian(means, sigma=1.0).n_arms == means.size


@FAST
@given(st.floats(1e-9, 0.5), st.floats(0.0, 0.25), st.data())
def test_the_gap_holds_exactly_in_floating_point(gap, low, data):
    """Gaps and ranges chosen so that best - gap rounds: the gap must still hold for the computed differences."""
    means = data.draw(xst.bandit_means(min_mean=low, max_mean=min(1.0, low + gap + 0.25), min_gap=gap, min_arms=3))
    top = np.sort(means)[::-1]
    assert top[0] - top[1] >= gap and means.min() >= low


def test_gap_equal_to_the_range_puts_the_arms_at_the_ends():
    means = find(xst.bandit_means(min_gap=1.0, min_arms=4, max_arms=4), lambda m: True)
    assert sorted(means.tolist()) == [0.0, 0.0, 0.0, 1.0]


@FAST
@given(xst.bandit_arms(min_gap=0.2, min_sigma=0.5, max_sigma=1.5))
def test_bandit_arms_are_library_instances_with_the_gap(arms):
    assert isinstance(arms, sim.Arms) and arms.kind in ("bernoulli", "gaussian")
    means = np.array(arms.params["means"])
    top = np.sort(means)[::-1]
    assert top[0] - top[1] >= 0.2
    if arms.kind == "gaussian":
        assert 0.5 <= arms.params["sigma"] <= 1.5
    else:
        assert np.all((means >= 0) & (means <= 1))


# --------------------------------------------------------------------------
# MDPs


def assert_kernel(p):
    assert np.all(p >= 0.0)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    check_kernel(p)


@FAST
@given(xst.tabular_mdps(min_states=2, max_states=4, max_actions=2, min_gamma=0.2, max_gamma=0.8))
def test_tabular_mdps_are_valid(m):
    assert isinstance(m, TabularMDP) and 2 <= m.n_states <= 4 and 1 <= m.n_actions <= 2
    assert 0.2 <= m.gamma <= 0.8 and m.reward_range == (0.0, 1.0)
    assert_kernel(m.transitions)
    assert np.all((m.rewards >= 0.0) & (m.rewards <= 1.0))
    TabularMDP(m.transitions, m.rewards, m.gamma, reward_range=(0.0, 1.0))
    res = value_iteration(m.transitions, m.rewards, m.gamma, epsilon=1e-8)
    assert bool(res.converged) and np.all(res.values >= -1e-9) and np.all(res.values <= 1 / (1 - m.gamma) + 1e-9)


def test_tabular_mdps_draw_zeros_and_deterministic_rows():
    sparse = find(xst.tabular_mdps(min_states=3), lambda m: bool(np.any(m.transitions == 0.0)
                                                                and np.any(m.transitions[m.transitions > 0] < 1)))
    assert np.any(sparse.transitions == 0.0)
    one_hot = find(xst.tabular_mdps(min_states=2), lambda m: bool(np.any(m.transitions == 1.0)))
    assert np.any(one_hot.transitions == 1.0)


@FAST
@given(xst.episodic_mdps(max_states=3, max_actions=2, min_episode_length=2, max_episode_length=3))
def test_episodic_mdps_are_valid(m):
    assert isinstance(m, FiniteHorizonMDP) and 2 <= m.horizon <= 3 and m.n_states <= 3 and m.n_actions <= 2
    assert m.transitions.shape == (m.horizon, m.n_states, m.n_actions, m.n_states)
    assert_kernel(m.transitions)
    assert np.all((m.rewards >= 0.0) & (m.rewards <= 1.0))
    v = backward_induction(m).values
    assert np.all(v[0] <= m.horizon + 1e-12)


@TINY
@given(xst.episodic_mdps(stationary=True, min_episode_length=2))
def test_stationary_episodic_mdps_repeat_one_stage_and_run(m):
    assert np.array_equal(m.transitions[0], m.transitions[-1]) and np.array_equal(m.rewards[0], m.rewards[-1])
    from expertlab.mdp import ucbvi

    res = sim.run(ucbvi(), m, horizon=3, n_reps=2, seed=0, backend="numpy")
    assert np.all(np.isfinite(res.metrics["regret"])) and np.all(res.metrics["regret"] >= -1e-9)


@FAST
@given(xst.linear_mixture_mdps(min_dim=2, max_dim=3, max_states=3, max_gamma=0.9))
def test_linear_mixture_mdps_are_valid(m):
    assert isinstance(m, LinearMixtureMDP) and 2 <= m.dim <= 3 and m.gamma <= 0.9
    assert_kernel(m.features)
    assert np.all(m.theta >= 0) and abs(m.theta.sum() - 1.0) <= 1e-12
    assert_kernel(m.transitions)
    m.to_tabular()


@FAST
@given(xst.episodic_linear_mixtures(max_dim=2, max_states=3, min_episode_length=2, max_episode_length=3))
def test_episodic_linear_mixtures_are_valid(m):
    assert isinstance(m, EpisodicLinearMixture) and m.dim <= 2 and 2 <= m.horizon <= 3
    assert_kernel(m.features)
    assert np.all(m.theta >= 0) and abs(m.theta.sum() - 1.0) <= 1e-12
    assert_kernel(m.to_finite_horizon().transitions)


# --------------------------------------------------------------------------
# Gaussian mixtures


@FAST
@given(xst.gaussian_mixture_params(min_reps=2, max_reps=3, max_components=4, max_features=3, max_abs_mean=2.0,
                                   min_variance=0.1, max_variance=3.0, min_weight=0.05))
def test_gaussian_mixture_params_pass_the_em_checks(p):
    r, c, d = p.means.shape
    assert 2 <= r <= 3 and c <= 4 and d <= 3 and p.weights.shape == (r, c)
    assert np.all(p.weights >= 0.05 - 1e-15)
    np.testing.assert_allclose(p.weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(np.abs(p.means) <= 2.0)
    cov = p.covariances
    if p.covariance_type == "full":
        assert np.array_equal(cov, np.swapaxes(cov, -1, -2))
        assert np.linalg.eigvalsh(cov).min() >= 0.1 * (1 - 1e-9)
        assert np.all(np.diagonal(cov, axis1=-2, axis2=-1) <= 3.0 * (1 + 1e-12))
    else:
        assert cov.shape == ((r, c) if p.covariance_type == "spherical" else (r, c, d))
        assert np.all((cov >= 0.1) & (cov <= 3.0))
    ll = log_likelihood(np.zeros((r, 2, d)), p)  # the EM cores validate the parameters
    assert ll.shape == (r,) and np.all(np.isfinite(ll))


@FAST
@given(xst.gaussian_mixture_samples(min_samples=5, max_samples=30, max_components=3))
def test_gaussian_mixture_samples_fit_their_parameters(sample):
    params, X, labels = sample
    r, c, d = params.means.shape
    assert X.shape[0] == r and X.shape[2] == d and 5 <= X.shape[1] <= 30 and labels.shape == X.shape[:2]
    assert np.all(np.isfinite(X)) and labels.dtype == np.int64
    assert np.all((labels >= 0) & (labels < c))
    assert np.all(np.take_along_axis(params.weights, labels, axis=1) > 0)  # no point from a zero-weight component
    log_resp, ll = e_step(X, params)  # -inf exactly for the components of zero weight
    assert np.all(np.isfinite(ll))
    positive = np.broadcast_to((params.weights > 0)[:, None, :], log_resp.shape)
    assert np.all(np.isfinite(log_resp[positive])) and np.all(log_resp[~positive] == -np.inf)
    np.testing.assert_allclose(np.exp(log_resp).sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_sampler_draws_the_mixture():
    """Label frequencies, component means and covariances match the parameters within 4.5 standard errors."""
    n = 20_000
    cov = np.array([[[2.0, 0.5], [0.5, 1.0]], [[0.5, -0.2], [-0.2, 0.3]], [[1.0, 0.0], [0.0, 1.0]]])
    params = GaussianMixtureParams(np.array([[0.25, 0.75, 0.0]]), np.array([[[3.0, -1.0], [-2.0, 0.5], [9.0, 9.0]]]),
                                   cov[None], "full")
    X, labels = _sample(params, n, 12345)
    assert not np.any(labels == 2)  # a zero-weight component never produces a point
    frac = np.mean(labels[0] == 0)
    assert abs(frac - 0.25) <= 4.5 * np.sqrt(0.25 * 0.75 / n)
    for c in (0, 1):
        pts = X[0, labels[0] == c]
        se = np.sqrt(np.diag(cov[c]) / len(pts))
        assert np.all(np.abs(pts.mean(axis=0) - params.means[0, c]) <= 4.5 * se)
        emp = np.cov(pts.T)
        # sd of a sample covariance entry: sqrt((S_ij^2 + S_ii S_jj) / n)
        se_cov = np.sqrt((cov[c] ** 2 + np.outer(np.diag(cov[c]), np.diag(cov[c]))) / len(pts))
        assert np.all(np.abs(emp - cov[c]) <= 4.5 * se_cov)


def test_sampler_keys_each_mixture_by_its_index():
    one = GaussianMixtureParams(np.array([[0.5, 0.5]]), np.array([[[0.0], [5.0]]]), np.array([[1.0, 2.0]]),
                                "spherical")
    two = GaussianMixtureParams(np.repeat(one.weights, 2, 0), np.repeat(one.means, 2, 0),
                                np.repeat(one.covariances, 2, 0), "spherical")
    x1, l1 = _sample(one, 50, 7)
    x2, l2 = _sample(two, 50, 7)
    np.testing.assert_array_equal(x2[0], x1[0])
    np.testing.assert_array_equal(l2[0], l1[0])
    assert not np.array_equal(x2[1], x2[0])  # the second mixture has draws of its own


# --------------------------------------------------------------------------
# load balancing


@FAST
@given(xst.score_matrices(min_tokens=2, max_tokens=5, min_experts=2, max_experts=4, max_abs=3.0))
def test_score_matrices_are_finite_and_bounded(s):
    assert s.dtype == np.float64 and 2 <= s.shape[0] <= 5 and 2 <= s.shape[1] <= 4
    assert np.all(np.isfinite(s)) and np.all(np.abs(s) <= 3.0)
    AssignmentProblem(s, 1)
    assert np.all(top_k_route(s, None, 1).sum(axis=1) == 1)


@FAST
@given(xst.score_matrices(ties=True, max_abs=2.0), xst.score_matrices(ties=True, max_abs=8.0, grid=128))
def test_tied_scores_lie_on_the_grid(s, fine):
    assert set(np.unique(s * 2.0).tolist()) <= set(range(-4, 5))
    assert set(np.unique(fine * 16.0).tolist()) <= set(range(-128, 129))


@FAST
@given(xst.assignment_problems(max_tokens=5, min_experts=2, max_experts=4, min_k=2))
def test_assignment_problems_are_feasible(prob):
    assert isinstance(prob, AssignmentProblem)
    assert 2 <= prob.k <= prob.n_experts <= 4 and prob.n_tokens <= 5
    cap = prob.capacity
    assert np.all(cap >= 0) and np.minimum(cap, prob.n_tokens).sum() >= prob.n_tokens * prob.k * (1 - 1e-12)
    res = solve_exact(prob)
    np.testing.assert_allclose(res.assignment.sum(axis=1), prob.k, rtol=0, atol=1e-7)
    assert np.all(res.assignment.sum(axis=0) <= cap + 1e-7)


@FAST
@given(xst.assignment_problems(capacity="integer", max_tokens=6), xst.assignment_problems(capacity="balanced"))
def test_capacity_kinds(integer, balanced):
    assert integer.integral_capacity and np.all(integer.capacity <= integer.n_tokens)
    np.testing.assert_allclose(balanced.capacity, balanced.n_tokens * balanced.k / balanced.n_experts, rtol=1e-15)


# --------------------------------------------------------------------------
# registered learners


@FAST
@given(xst.learner_names(family="bandits", feedback="bandit"))
def test_learner_names_are_registered_with_the_filters(name):
    reg = sim.get_learner(name)
    assert reg.family == "bandits" and reg.feedback == "bandit"


@settings(max_examples=40, deadline=None)
@given(xst.learner_examples())
def test_learner_examples_of_every_family_pair_a_learner_with_its_environment(example):
    learner, env, horizon = example
    assert isinstance(learner, sim.Learner) and sim.is_environment(env)
    assert isinstance(horizon, int) and horizon >= 1 and learner.feedback == env.spec.feedback
    assert learner.name in sim.learners()


@TINY
@given(xst.learner_examples(family="experts"))
def test_learner_examples_run(example):
    learner, env, horizon = example
    assert isinstance(learner, sim.Learner) and sim.is_environment(env)
    assert isinstance(horizon, int) and horizon >= 1 and learner.feedback == env.spec.feedback
    assert learner.name in sim.learners("experts")
    res = sim.run(learner, env, horizon=horizon, n_reps=2, seed=0, backend="numpy")
    assert res.horizon == horizon and all(np.all(np.isfinite(v)) for v in res.metrics.values())


# --------------------------------------------------------------------------
# bad arguments are refused when the strategy is built


BAD = [
    (xst.loss_matrices, {"min_reps": 0}, ValueError, "min_reps"),
    (xst.loss_matrices, {"min_horizon": 5, "max_horizon": 2}, ValueError, "min_horizon"),
    (xst.loss_matrices, {"max_experts": 2.5}, TypeError, "max_experts"),
    (xst.loss_matrices, {"elements": [0.5]}, TypeError, "elements"),
    (xst.sleeping_losses, {"min_experts": 0}, ValueError, "min_experts"),
    (xst.awake_masks, {"shape": (3, 0)}, ValueError, r"shape\[1\]"),
    (xst.awake_masks, {"shape": 4}, TypeError, "shape"),
    (xst.bandit_means, {"kind": "poisson"}, ValueError, "kind"),
    (xst.bandit_means, {"min_arms": 1}, ValueError, "min_arms"),
    (xst.bandit_means, {"min_gap": 1.5}, ValueError, "min_gap"),
    (xst.bandit_means, {"min_gap": 0.0}, ValueError, "min_gap"),
    (xst.bandit_means, {"min_mean": -0.5}, ValueError, "min_mean"),
    (xst.bandit_arms, {"min_sigma": 0.0}, ValueError, "min_sigma"),
    (xst.bandit_arms, {"kind": "gaussian", "min_gap": 3.0}, ValueError, "min_gap"),
    (xst.tabular_mdps, {"max_gamma": 1.0}, ValueError, "max_gamma"),
    (xst.tabular_mdps, {"min_gamma": -0.1}, ValueError, "min_gamma"),
    (xst.tabular_mdps, {"min_states": 0}, ValueError, "min_states"),
    (xst.episodic_mdps, {"stationary": "yes"}, TypeError, "stationary"),
    (xst.episodic_mdps, {"min_episode_length": 0}, ValueError, "min_episode_length"),
    (xst.linear_mixture_mdps, {"min_dim": 3, "max_dim": 2}, ValueError, "min_dim"),
    (xst.episodic_linear_mixtures, {"max_actions": 0}, ValueError, "max_actions"),
    (xst.gaussian_mixture_params, {"covariance_type": "tied"}, ValueError, "covariance_type"),
    (xst.gaussian_mixture_params, {"min_variance": 0.0}, ValueError, "min_variance"),
    (xst.gaussian_mixture_params, {"min_weight": 0.5, "max_components": 3}, ValueError, "min_weight"),
    (xst.gaussian_mixture_params, {"max_abs_mean": float("nan")}, ValueError, "max_abs_mean"),
    (xst.gaussian_mixture_samples, {"min_samples": 0}, ValueError, "min_samples"),
    (xst.score_matrices, {"max_abs": 0.0}, ValueError, "max_abs"),
    (xst.score_matrices, {"ties": 1}, TypeError, "ties"),
    (xst.score_matrices, {"grid": 0}, ValueError, "grid"),
    (xst.assignment_problems, {"grid": 2.0}, TypeError, "grid"),
    (xst.assignment_problems, {"min_k": 7}, ValueError, "min_k"),
    (xst.assignment_problems, {"min_k": 2, "max_k": 1}, ValueError, "min_k"),
    (xst.assignment_problems, {"capacity": "huge"}, ValueError, "capacity"),
    (xst.learner_names, {"family": "nope"}, ValueError, "family"),
    (xst.learner_names, {"family": "experts", "feedback": "nope"}, ValueError, "feedback"),
    (xst.learner_examples, {"feedback": 3}, TypeError, "feedback"),
]


@pytest.mark.parametrize("factory, kwargs, error, name", BAD,
                         ids=[f"{f.__name__}-{'-'.join(k)}" for f, k, _, _ in BAD])
def test_bad_bounds_are_refused_naming_the_argument(factory, kwargs, error, name):
    with pytest.raises(error, match=name):
        factory(**kwargs)


# --------------------------------------------------------------------------
# the module is optional


def _python(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_importing_without_hypothesis_says_how_to_install_it():
    proc = _python("import sys; sys.modules['hypothesis'] = None\nimport expertlab.testing.strategies")
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr and "pip install hypothesis" in proc.stderr


def test_the_library_does_not_import_hypothesis():
    proc = _python("import sys, expertlab, expertlab.testing, expertlab.random, expertlab.cli\n"
                   "print(sorted(m for m in sys.modules if m.split('.')[0] == 'hypothesis'))")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"
