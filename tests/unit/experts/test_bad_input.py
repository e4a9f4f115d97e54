"""Bad input to the experts family raises an error naming the argument (no silent wrong answer, no raw error).

The registered learners and environments have their cases in
``tests/conformance/_bad_inputs_experts.py``; this file covers the other
public callables (the environment and DAG records users may construct
directly, the search and schedule functions) and the inputs that used to be
coerced silently (complex or string arrays, scalars taken for vectors) or to
fail with a raw error (numpy's ragged-array message, MemoryError,
OverflowError).
"""

import dataclasses
import math

import numpy as np
import pytest

from expertlab.experts import (AdaptiveAdversary, BipartiteArrivals, GroupRegression, PrivacyCost, SearchDAG,
                               SearchStream, ThresholdMentor, audit_private, boa, brute_force_search, fixed_bipartite,
                               greedy_search, intersecting_groups, linear_grid, noisy_ftpl, privacy_audit,
                               privacy_cost, random_bipartite, random_dag, random_out_forest, random_series_parallel,
                               recent_plays_attack, search_dag, search_stream, small_loss_experts,
                               small_loss_schedule, sparse_vector_experts, squint, threshold_mentor, tree_ftrl)
from expertlab.experts import instances
from expertlab.experts._privacy import laplace_epsilon

NAN = float("nan")


def _dag():
    return search_dag([[], [0], [0]], [0.5, 0.2, 0.1], [1.0, 2.0, 2.0])


# --- priors: complex and string entries were coerced ---------------------------------------------------------------

@pytest.mark.parametrize("prior, exc", [
    ([0.5 + 0.5j, 0.5], TypeError),         # the imaginary part was dropped with a ComplexWarning
    (np.array([0.5, 0.5], dtype=complex), TypeError),
    (["0.5", "0.5"], TypeError),            # the strings were parsed
    ([[0.5], [0.5, 0.0]], TypeError),        # ragged
    ([0.5, 0.6], ValueError),
])
def test_a_prior_must_be_real_weights_on_the_simplex(prior, exc):
    with pytest.raises(exc, match="prior"):
        squint(prior=prior)
    with pytest.raises(exc, match="prior"):
        boa(prior=prior)


@pytest.mark.parametrize("prior", [[0.25, 0.75], np.array([0.25, 0.75]), np.array([1, 3]) / 4])
def test_a_real_prior_is_still_accepted_and_played_first(prior):
    for factory in (squint, boa):
        learner = factory(prior=prior)
        p, _ = learner.act(learner.init(2, 3), None)
        np.testing.assert_allclose(p, [[0.25, 0.75]] * 3, rtol=1e-12)


# --- loss sequences -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("means", [0.5, np.array(0.5)])
def test_iid_bernoulli_refuses_a_scalar(means):
    # np.ascontiguousarray made the scalar a vector: one expert, silently
    with pytest.raises(ValueError, match="means must be a non-empty 1-D array"):
        instances.iid_bernoulli(means)


@pytest.mark.parametrize("factory", [instances.fair_coins, instances.iid_uniform, instances.needle,
                                     instances.piecewise_best])
def test_instances_refuse_a_number_of_experts_that_cannot_be_allocated(factory):
    with pytest.raises(ValueError, match="n_experts too large"):
        factory(10 ** 12)


def test_the_number_of_experts_is_an_integer():
    with pytest.raises(TypeError, match="n_experts"):
        instances.iid_uniform(4.0)
    with pytest.raises(TypeError, match="n_experts"):
        instances.needle("4")
    with pytest.raises(ValueError, match="n_experts"):
        instances.piecewise_best(0)
    with pytest.raises(TypeError, match="period"):
        instances.piecewise_best(4, period=10.0)


# --- AdaptiveAdversary ----------------------------------------------------------------------------------------------

def test_adaptive_adversary_checks_its_fields():
    assert AdaptiveAdversary("attack", 8, 3, {}).window == 3
    with pytest.raises(ValueError, match="n_experts must be >= 2"):
        AdaptiveAdversary("attack", 1, 1, {})
    with pytest.raises(ValueError, match="window must be <= 8"):
        AdaptiveAdversary("attack", 8, 9, {})
    with pytest.raises(ValueError, match="window must be >= 1"):
        AdaptiveAdversary("attack", 8, 0, {})
    with pytest.raises(TypeError, match="window"):
        AdaptiveAdversary("attack", 8, 2.0, {})
    with pytest.raises(ValueError, match="n_experts too large"):
        AdaptiveAdversary("attack", 10 ** 12, 2, {})
    with pytest.raises(TypeError, match="name"):
        AdaptiveAdversary(None, 8, 2, {})
    with pytest.raises(TypeError, match="params"):
        AdaptiveAdversary("attack", 8, 2, None)


def test_recent_plays_attack_builds_a_checked_adversary():
    with pytest.raises(ValueError, match="window must be <= 4"):
        recent_plays_attack(4, window=5)


# --- GroupRegression and intersecting_groups -------------------------------------------------------------------------

def _group_fields(**change):
    fields = dict(name="groups", dim=3, betas=np.zeros((4, 3)), noise=0.5, hypotheses=None, params={})
    fields.update(change)
    return fields


def test_group_regression_checks_its_fields():
    env = GroupRegression(**_group_fields(betas=[[0.5, 0.5, 0.0]] * 4))
    assert env.betas.dtype == np.float64 and not env.betas.flags.writeable
    with pytest.raises(ValueError, match="noise must be >= 0"):
        GroupRegression(**_group_fields(noise=-1.0))
    with pytest.raises(ValueError, match="noise must be finite"):
        GroupRegression(**_group_fields(noise=NAN))
    with pytest.raises(ValueError, match=r"betas must be a finite array of shape \(4, 3\)"):
        GroupRegression(**_group_fields(betas=np.zeros((2, 3))))
    with pytest.raises(ValueError, match="betas"):
        GroupRegression(**_group_fields(betas=np.ones((4, 3))))      # ||beta_c||_1 > 1
    with pytest.raises(ValueError, match="dim must be >= 2"):
        GroupRegression(**_group_fields(dim=1, betas=np.zeros((4, 1))))
    with pytest.raises(ValueError, match="hypotheses"):
        GroupRegression(**_group_fields(hypotheses=np.zeros((2, 4))))
    with pytest.raises(TypeError, match="name"):
        GroupRegression(**_group_fields(name=3))


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(betas=np.zeros((4, 3)) + 0j), TypeError, "betas"),        # was cast with a ComplexWarning
    (dict(betas=[["0"] * 3] * 4), TypeError, "betas"),              # was parsed
    (dict(betas=[[0, 0, 0]] * 3 + [[0, 0]]), TypeError, "betas"),   # was numpy's ragged-array ValueError
    (dict(hypotheses="x"), TypeError, "hypotheses"),                # was "could not convert string to float"
    (dict(hypotheses=np.zeros((2, 3)) + 0j), TypeError, "hypotheses"),
    (dict(hypotheses=[[0, 0, 0], [0, 0]]), TypeError, "hypotheses"),
    (dict(models="bogus", betas=np.zeros((4, 3))), ValueError, "models"),  # was ignored
    (dict(dim=10 ** 6), ValueError, "dim too large"),
])
def test_intersecting_groups_refuses_non_real_arrays(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        intersecting_groups(**kwargs)


def test_intersecting_groups_still_takes_a_grid_of_hypotheses():
    env = intersecting_groups(3, hypotheses=linear_grid(3))
    assert env.hypotheses.shape == (121, 3)


# --- BipartiteArrivals and fixed_bipartite --------------------------------------------------------------------------

def _arrival_fields(**change):
    fields = dict(name="arrivals", n_offline=3, n_online=4, w_max=1.0,
                  weights=lambda keys, t: np.full((keys.shape[0], 3), 0.5), expert="greedy", threshold=0.5,
                  params={})
    fields.update(change)
    return fields


def test_bipartite_arrivals_checks_its_fields():
    env = BipartiteArrivals(**_arrival_fields())
    keys = np.arange(2, dtype=np.uint64)
    assert env.observe(env.reset(2, keys, np), 0, keys).weights.shape == (2, 3)
    with pytest.raises(ValueError, match="n_offline must be >= 1"):
        BipartiteArrivals(**_arrival_fields(n_offline=0))
    with pytest.raises(TypeError, match="n_online"):
        BipartiteArrivals(**_arrival_fields(n_online=4.0))
    with pytest.raises(ValueError, match="w_max must be > 0"):
        BipartiteArrivals(**_arrival_fields(w_max=0.0))
    with pytest.raises(ValueError, match="w_max must be finite"):
        BipartiteArrivals(**_arrival_fields(w_max=NAN))
    with pytest.raises(TypeError, match="weights must be a callable"):
        BipartiteArrivals(**_arrival_fields(weights=np.ones((4, 3))))
    with pytest.raises(ValueError, match="expert must be one of"):
        BipartiteArrivals(**_arrival_fields(expert="optimal"))
    with pytest.raises(ValueError, match="threshold must be >= 0"):
        BipartiteArrivals(**_arrival_fields(threshold=-0.5))


@pytest.mark.parametrize("weights", [[[1.0 + 1j, 0.5]], [["1", "0.5"]], [[1.0], [1.0, 0.5]]])
def test_fixed_bipartite_refuses_non_real_weights(weights):
    # complex was float()'s TypeError, strings were parsed, ragged was numpy's ValueError
    with pytest.raises(TypeError, match="weights"):
        fixed_bipartite(weights)


def test_random_bipartite_refuses_sizes_that_cannot_be_allocated():
    with pytest.raises(ValueError, match="n_offline too large"):
        random_bipartite(10 ** 12, 4)


# --- ThresholdMentor and threshold_mentor ---------------------------------------------------------------------------

def _mentor_fields(**change):
    fields = dict(name="mentor", threshold=0.5, lipschitz=1.0, inputs=lambda keys, t: np.full(keys.shape[0], 0.3),
                  n_inputs=None, params={})
    fields.update(change)
    return fields


def test_threshold_mentor_record_checks_its_fields():
    env = ThresholdMentor(**_mentor_fields(n_inputs=5))
    assert env.spec.max_horizon == 5
    with pytest.raises(ValueError, match="threshold must be <= 1"):
        ThresholdMentor(**_mentor_fields(threshold=1.5))
    with pytest.raises(ValueError, match="threshold must be finite"):
        ThresholdMentor(**_mentor_fields(threshold=NAN))
    with pytest.raises(ValueError, match="lipschitz must be > 0"):
        ThresholdMentor(**_mentor_fields(lipschitz=0.0))
    with pytest.raises(TypeError, match="inputs must be a callable"):
        ThresholdMentor(**_mentor_fields(inputs=[0.2, 0.7]))
    with pytest.raises(ValueError, match="n_inputs must be >= 1"):
        ThresholdMentor(**_mentor_fields(n_inputs=0))
    with pytest.raises(TypeError, match="n_inputs"):
        ThresholdMentor(**_mentor_fields(n_inputs=2.0))


@pytest.mark.parametrize("inputs", [[0.5 + 1j], ["0.2", "0.7"], [[0.5], [0.1, 0.2]], None])
def test_threshold_mentor_refuses_non_real_inputs(inputs):
    with pytest.raises(TypeError, match="inputs"):
        threshold_mentor(inputs=inputs)


# --- SearchDAG, the generators, greedy_search, SearchStream ---------------------------------------------------------

@pytest.mark.parametrize("parents, prob, cost, exc, word", [
    (((1,), (0,)), [0.5, 0.3], [1.0, 1.0], ValueError, "cycle"),            # was accepted
    (((), (0,)), [0.5, 0.3], [1.0, -1.0], ValueError, "cost must be positive"),
    (((), (0,)), [0.5, 0.7], [1.0, 1.0], ValueError, "prob must sum to at most 1"),
    (((), (5,)), [0.5, 0.3], [1.0, 1.0], ValueError, r"parents\[1\]"),
    (((), 0), [0.5, 0.3], [1.0, 1.0], TypeError, r"parents\[1\]"),            # was "'int' object is not iterable"
    (((), (0,)), [0.5, 0.3, 0.1], [1.0, 1.0], ValueError, "prob must have shape"),
    (((), (0,)), ["0.5", "0.3"], [1.0, 1.0], TypeError, "prob"),            # strings were parsed
    (((), (0,)), [0.5, 0.3], [1.0 + 1j, 1.0], TypeError, "cost"),
])
def test_a_search_dag_is_checked_when_constructed(parents, prob, cost, exc, word):
    with pytest.raises(exc, match=word):
        SearchDAG(parents, prob, cost)
    with pytest.raises(exc, match=word):
        search_dag(parents, prob, cost)


def test_a_search_dag_constructed_directly_is_normalised():
    dag = SearchDAG([[], [0, 0]], [0.5, 0.3], [1, 2])
    assert dag.parents == ((), (0,)) and dag.cost.dtype == np.float64 and not dag.prob.flags.writeable
    with pytest.raises(TypeError, match="name must be a str"):
        SearchDAG([[]], [0.5], [1.0], name=3)


def test_greedy_search_refuses_what_is_not_a_search_dag():
    with pytest.raises(TypeError, match="dag must be a SearchDAG"):
        greedy_search([[], [0]])
    with pytest.raises(TypeError, match="dag must be a SearchDAG"):
        greedy_search(None)
    assert greedy_search(_dag()).plan[0] == 0


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(n_nodes=0), ValueError, "n_nodes"),
    (dict(n_nodes=2.5), TypeError, "n_nodes"),
    (dict(n_nodes=5, p_series=1.5), ValueError, "p_series"),
    (dict(n_nodes=5, p_series=NAN), ValueError, "p_series"),
    (dict(n_nodes=5, absent=1.0), ValueError, "absent"),
    (dict(n_nodes=5, seed=-1), ValueError, "seed"),                 # was SeedSequence's "expected non-negative"
    (dict(n_nodes=5, seed=1.5), TypeError, "seed"),
    (dict(n_nodes=5, seed=None), TypeError, "seed"),                # was fresh entropy: not a function of the seed
    (dict(n_nodes=10 ** 6), ValueError, "n_nodes too large"),
])
def test_random_series_parallel_refuses_bad_input(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        random_series_parallel(**kwargs)


def test_the_generators_take_a_seed_sequence_as_documented():
    # a SeedSequence was refused by SeedSequence(seed) itself; it gives the instance of its int entropy
    for gen in (random_out_forest, random_series_parallel, random_dag):
        a, b = gen(6, seed=np.random.SeedSequence(7)), gen(6, seed=7)
        assert a.parents == b.parents and np.array_equal(a.prob, b.prob) and np.array_equal(a.cost, b.cost)
    with pytest.raises(ValueError, match="seed"):
        random_out_forest(5, seed=-1)
    with pytest.raises(ValueError, match="n_nodes too large"):
        random_dag(10 ** 6)


def _stream_fields(**change):
    env = search_stream(_dag(), budget=50.0, n_budgets=4)
    fields = {f.name: getattr(env, f.name) for f in dataclasses.fields(env)}
    fields.update(change)
    return fields


def test_search_stream_record_checks_its_fields():
    assert SearchStream(**_stream_fields()).max_instances == 50
    with pytest.raises(TypeError, match="dag must be a SearchDAG"):
        SearchStream(**_stream_fields(dag="dag"))
    with pytest.raises(ValueError, match="budget must be > 0"):
        SearchStream(**_stream_fields(budget=-1.0))
    with pytest.raises(ValueError, match="budgets"):
        SearchStream(**_stream_fields(budgets=np.array([10.0, 5.0, 50.0])))     # not increasing
    with pytest.raises(ValueError, match="budgets"):
        SearchStream(**_stream_fields(budgets=np.array([5.0, 10.0, 40.0])))     # does not end at the budget
    with pytest.raises(ValueError, match="optimal_rate"):
        SearchStream(**_stream_fields(optimal_rate=NAN))
    with pytest.raises(ValueError, match="cum_prob"):
        SearchStream(**_stream_fields(cum_prob=np.array([0.5, 0.6, 0.9])))
    big = search_dag([[]] * 63, [0.01] * 63, [1.0] * 63)
    with pytest.raises(ValueError, match="dag has 63 nodes"):
        SearchStream(**_stream_fields(dag=big, cum_prob=np.cumsum(big.prob)))


def test_search_stream_names_the_dag_and_the_budget_grid():
    with pytest.raises(ValueError, match="dag is too large for search_stream"):   # was brute force's message
        search_stream(random_out_forest(70, seed=0))
    with pytest.raises(ValueError, match="n_budgets too large"):                  # was a MemoryError
        search_stream(_dag(), n_budgets=10 ** 12)
    with pytest.raises(ValueError, match="max_ideals"):
        brute_force_search(search_dag([[]] * 6, [0.1] * 6, [1.0] * 6), max_ideals=10)


# --- privacy: PrivacyCost, the accountant, the schedule, the audit ---------------------------------------------------

@pytest.mark.parametrize("epsilon, exc", [("1", TypeError), (True, TypeError), (1 + 1j, TypeError),
                                          (None, TypeError), (-0.1, ValueError), (NAN, ValueError)])
def test_privacy_cost_refuses_a_bad_epsilon(epsilon, exc):
    # a string was kept as the epsilon, a complex one gave float()'s message
    with pytest.raises(exc, match="epsilon"):
        PrivacyCost(epsilon)


def test_privacy_cost_refuses_a_bad_delta_and_stores_floats():
    with pytest.raises(ValueError, match="delta must be <= 1"):
        PrivacyCost(1.0, 1.5)
    with pytest.raises(TypeError, match="delta"):
        PrivacyCost(1.0, "0.1")
    cost = PrivacyCost(np.float64(2), 0)
    assert type(cost.epsilon) is float and type(cost.delta) is float and PrivacyCost(math.inf).epsilon == math.inf


def test_privacy_audit_and_laplace_epsilon_refuse_a_string():
    a = np.zeros(100, dtype=np.int64)
    with pytest.raises(TypeError, match="epsilon"):
        privacy_audit(a, a, "1.0")
    with pytest.raises(TypeError, match="scale"):
        laplace_epsilon(1.0, "2")


def test_audit_private_refuses_complex_losses():
    a = np.zeros((3, 2))
    learner = sparse_vector_experts(2.0, 3)
    with pytest.raises(TypeError, match="losses_a"):
        audit_private(learner, a + 0j, a, n_reps=10)
    with pytest.raises(TypeError, match="losses_b"):
        audit_private(learner, a, [["0"] * 2] * 3, n_reps=10)


@pytest.mark.parametrize("factory", [sparse_vector_experts, noisy_ftpl, tree_ftrl, small_loss_experts])
def test_private_learners_refuse_a_horizon_beyond_the_engine(factory):
    # the accountants' float arithmetic overflowed (OverflowError) on such horizons
    with pytest.raises(ValueError, match="horizon must be <="):
        factory(horizon=10 ** 400)


def test_privacy_cost_refuses_a_horizon_beyond_the_engine():
    with pytest.raises(ValueError, match="horizon must be <="):
        privacy_cost(noisy_ftpl(1.0, 10), 4, 10 ** 400)


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(n_experts=0), ValueError, "n_experts"),
    (dict(n_experts=2.5), TypeError, "n_experts"),
    (dict(n_experts=4, epsilon=0.0), ValueError, "epsilon"),
    (dict(n_experts=4, delta=0.9), ValueError, "delta"),
    (dict(n_experts=4, horizon=0), ValueError, "horizon"),
    (dict(n_experts=4, max_switches=0), ValueError, "max_switches"),
    (dict(n_experts=4, threshold=-1.0), ValueError, "threshold"),
    (dict(n_experts=4, threshold="1"), TypeError, "threshold"),
])
def test_small_loss_schedule_refuses_bad_input(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        small_loss_schedule(**kwargs)


def test_small_loss_schedule_takes_a_tiny_threshold():
    # horizon / threshold overflowed to inf and math.ceil raised OverflowError; P is the first phase with
    # 2^(P-1) * threshold >= horizon, and tau_k = 2^(k-1) * threshold
    theta = 5e-324
    sc = small_loss_schedule(4, horizon=10_000, threshold=theta)
    P = sc.n_phases
    assert P == 1 + math.ceil(math.log2(10_000) + 1074)
    assert sc.tau[P] >= 10_000 > sc.tau[P - 1]
    assert sc.tau[P] == math.ldexp(theta, P - 1) and np.all(np.isfinite(sc.b1))
