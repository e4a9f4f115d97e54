"""Bad input to the MDP planners, models and instances raises an error naming the argument (no silent wrong answer)."""

import numpy as np
import pytest

from expertlab import mdp
from expertlab._validation import MAX_ARRAY_ELEMENTS, check_array_size
from expertlab.mdp import check_kernel, instances, policy_evaluation, policy_iteration, robust_value_iteration, worst_case
from expertlab.mdp.instances import forest, garnet, gridworld, random_linear_mixture, river_swim


def chain():
    """Two states, two actions: action 0 stays, action 1 swaps; reward 1 in state 0."""
    p = np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]])
    r = np.array([[1.0, 1.0], [0.0, 0.0]])
    return p, r


# --- policy_evaluation shares the checks of TabularMDP / value_iteration ----------------------------------------

@pytest.mark.parametrize("gamma", [1.5, 1.0, -0.1, float("nan"), float("inf")])
def test_policy_evaluation_rejects_a_bad_gamma(gamma):
    p, r = chain()
    with pytest.raises(ValueError, match="gamma"):
        policy_evaluation(p, r, gamma, np.array([0, 0]))


def test_policy_evaluation_rejects_a_non_numeric_gamma():
    p, r = chain()
    with pytest.raises(TypeError, match="gamma"):
        policy_evaluation(p, r, "0.5", np.array([0, 0]))


@pytest.mark.parametrize("policy", [np.array([-1, 0]), np.array([0, 2]), [-1, 0]])
def test_policy_evaluation_rejects_an_action_out_of_range(policy):
    p, r = chain()
    with pytest.raises(ValueError, match=r"policy must hold actions in \[0, 1\]"):
        policy_evaluation(p, r, 0.5, policy)


def test_policy_evaluation_rejects_a_float_policy():
    p, r = chain()
    with pytest.raises(TypeError, match="policy must be an integer array"):
        policy_evaluation(p, r, 0.5, np.array([1.7, 0.0]))


def test_policy_evaluation_rejects_a_policy_of_the_wrong_shape():
    p, r = chain()
    with pytest.raises(ValueError, match="policy must have shape"):
        policy_evaluation(p, r, 0.5, np.array([0, 0, 0]))


def test_policy_evaluation_rejects_a_bad_kernel_and_bad_rewards():
    p, r = chain()
    with pytest.raises(ValueError, match="transitions.*sum to 1"):
        policy_evaluation(0.5 * p, r, 0.5, np.array([0, 0]))
    with pytest.raises(ValueError, match="rewards contains NaN"):
        policy_evaluation(p, np.full_like(r, np.nan), 0.5, np.array([0, 0]))


def test_policy_evaluation_still_accepts_a_list_policy():
    p, r = chain()
    np.testing.assert_allclose(policy_evaluation(p, r, 0.5, [0, 1]), [2.0, 1.0])


def test_policy_iteration_rejects_a_float_policy0():
    p, r = chain()
    with pytest.raises(TypeError, match="policy0 must be an integer array"):
        policy_iteration(p, r, 0.5, policy0=np.array([0.0, 1.0]))


# --- check_kernel(atol) -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("atol", [float("nan"), float("inf"), -1.0])
def test_check_kernel_rejects_a_bad_atol(atol):
    p, _ = chain()
    with pytest.raises(ValueError, match="atol"):
        check_kernel(p, atol=atol)


def test_check_kernel_rejects_a_non_numeric_atol():
    p, _ = chain()
    with pytest.raises(TypeError, match="atol"):
        check_kernel(p, atol="1e-8")


# --- radius must be real numbers --------------------------------------------------------------------------------

@pytest.mark.parametrize("radius", ["0.1", b"0.1", 0.1 + 0j, np.array(["0.1"]), np.array([0.1], dtype=object)])
def test_worst_case_rejects_a_non_real_radius(radius):
    with pytest.raises(TypeError, match="radius"):
        worst_case(np.array([0.0, 1.0]), np.array([0.5, 0.5]), radius)


def test_robust_value_iteration_rejects_a_string_radius():
    p, r = chain()
    with pytest.raises(TypeError, match="radius"):
        robust_value_iteration(p, r, 0.5, radius="0.1")


# --- instance sizes are bounded before anything is allocated ----------------------------------------------------

@pytest.mark.parametrize("make, names", [
    (lambda: garnet(10**6, 3, 3), "n_states, n_actions, n_mdps"),
    (lambda: garnet(100, 3, 3, n_mdps=10**6), "n_states, n_actions, n_mdps"),
    (lambda: gridworld(10**5, 10), "n_rows, n_cols"),
    (lambda: river_swim(10**6), "n_states"),
    (lambda: forest(10**6), "n_states"),
    (lambda: random_linear_mixture(10**5, 3), "n_states, n_actions, dim"),
    (lambda: random_linear_mixture(4, 2, dim=10**5, n_mdps=10**5), "n_mdps, dim"),
])
def test_instances_refuse_sizes_beyond_the_array_limit(make, names):
    with pytest.raises(ValueError, match=f"{names} too large"):
        make()


def test_check_array_size():
    check_array_size((2**16, 2**15), "n")  # exactly at the limit
    with pytest.raises(ValueError, match=r"n, m too large: .*shape \(65536, 32769\).*GiB"):
        check_array_size((2**16, 2**15 + 1), ("n", "m"))
    with pytest.raises(ValueError, match="rows too large"):
        check_array_size((11,), "rows", max_elements=10)
    assert MAX_ARRAY_ELEMENTS == 2**31


# --- the scan's direct calls: instances refuse bad sizes and parameters ------------------------------------------

def test_river_swim_forest_and_random_linear_mixture_refuse_bad_arguments():
    with pytest.raises(ValueError, match="n_states"):
        instances.river_swim(1)
    with pytest.raises(TypeError, match="n_states"):
        instances.river_swim(4.0)
    with pytest.raises(ValueError, match="gamma"):
        instances.river_swim(4, gamma=1.0)
    with pytest.raises(ValueError, match="n_states too large"):
        instances.river_swim(10**6)
    with pytest.raises(ValueError, match="p must be <= 1"):
        instances.forest(3, p=2.0)
    with pytest.raises(ValueError, match="r1"):
        instances.forest(3, r1=float("nan"))
    with pytest.raises(ValueError, match="n_states too large"):
        instances.forest(10**6)
    with pytest.raises(ValueError, match="branching"):
        instances.random_linear_mixture(3, 2, 2, branching=5)
    with pytest.raises(ValueError, match="dim"):
        instances.random_linear_mixture(3, 2, 0, 2)
    with pytest.raises(TypeError, match="seed"):
        instances.random_linear_mixture(3, 2, 2, 2, seed="x")
    with pytest.raises(ValueError, match="n_mdps"):
        instances.random_linear_mixture(3, 2, 2, 2, n_mdps=0)


def test_conservative_garnet_refuses_bad_arguments():
    with pytest.raises(ValueError, match="alpha"):
        instances.conservative_garnet(alpha=0.0)
    with pytest.raises(TypeError, match="episode_length"):
        instances.conservative_garnet(episode_length=3.0)
    with pytest.raises(ValueError, match="episode_length, n_states, n_actions too large"):
        instances.conservative_garnet(episode_length=10**9)
    with pytest.raises(ValueError, match="initial_state"):
        instances.conservative_garnet(initial_state=-1)


@pytest.mark.parametrize("signs, exc", [(["1", "-1"], TypeError), ([1 + 0j, 1], TypeError), ([[1, 1], [1]], TypeError),
                                        ([1, 0.5], ValueError), ([1, 1, 1], ValueError)])
def test_hard_linear_mixture_checks_signs(signs, exc):
    with pytest.raises(exc, match="signs"):
        instances.hard_linear_mixture(2, 4, gap=0.1, signs=signs)


def test_hard_linear_mixture_checks_n_episodes_and_its_size():
    with pytest.raises(ValueError, match="n_episodes"):
        instances.hard_linear_mixture(2, 4, gap=0.1, n_episodes=-5)  # checked even when gap sets the gap
    with pytest.raises(ValueError, match="horizon, n_coords too large"):
        instances.hard_linear_mixture(1, 10**9, gap=0.0)
    m = instances.hard_linear_mixture(2, 4, gap=0.1, signs=np.array([1, -1]))  # integer signs still work
    eps = 2 * 0.1 * 4  # m gap / delta with delta = 1 / horizon
    np.testing.assert_allclose(m.theta, [(1 + eps) / 4, (1 - eps) / 4, (1 - eps) / 4, (1 + eps) / 4])


def test_stationary_and_garnet_episodic_refuse_horizons_beyond_the_array_limit():
    p, r = chain()
    with pytest.raises(ValueError, match="horizon too large"):
        mdp.FiniteHorizonMDP.stationary(p, r, 10**9)
    with pytest.raises(ValueError, match="episode_length, n_states, n_actions too large"):
        mdp.garnet_episodic(episode_length=10**9)


# --- episodic environments and rollouts ---------------------------------------------------------------------------

def episodic_chain(horizon=3):
    p, r = chain()
    return mdp.FiniteHorizonMDP.stationary(p, r, horizon)


def test_episodic_mdp_refuses_bad_arguments():
    m = episodic_chain()
    with pytest.raises(TypeError, match="model"):
        mdp.EpisodicMDP(np.zeros((3, 2, 2, 2)))
    with pytest.raises(TypeError, match="model"):
        mdp.EpisodicMDP(instances.river_swim(3))  # discounted, not episodic
    with pytest.raises(ValueError, match="initial_state"):
        mdp.EpisodicMDP(m, 2)
    with pytest.raises(TypeError, match="initial_state"):
        mdp.EpisodicMDP(m, 1.0)
    with pytest.raises(TypeError, match="name"):
        mdp.EpisodicMDP(m, 0, 5)
    with pytest.raises(TypeError, match="params"):
        mdp.EpisodicMDP(m, 0, "chain", [1, 2])


KEYS2 = np.arange(2, dtype=np.uint64)


@pytest.mark.parametrize("policy, exc, word", [
    (np.ones((2, 3, 2)), TypeError, "policy must be an integer array"),
    (np.full((2, 3, 2), 5), ValueError, r"policy must hold values in \[0, 1\]"),
    (np.full((2, 3, 2), -1), ValueError, r"policy must hold values in \[0, 1\]"),  # rolled out silently before
    (np.ones((2, 2, 2), dtype=np.int64), ValueError, "policy must have shape"),
])
def test_sample_episodes_checks_the_policy(policy, exc, word):
    with pytest.raises(exc, match=word):
        mdp.sample_episodes(episodic_chain(), policy, KEYS2, 0)


def test_sample_episodes_checks_keys_the_model_and_the_start():
    m, pol = episodic_chain(), np.ones((2, 3, 2), dtype=np.int64)
    with pytest.raises(TypeError, match="keys"):
        mdp.sample_episodes(m, pol, np.array([0.5, 1.5]), 0)
    with pytest.raises(ValueError, match="keys"):
        mdp.sample_episodes(m, pol, np.arange(3, dtype=np.uint64), 0)
    with pytest.raises(ValueError, match="initial_state"):
        mdp.sample_episodes(m, pol, KEYS2, -1)  # rolled out from state -1 before
    with pytest.raises(ValueError, match="initial_state"):
        mdp.sample_episodes(m, pol, KEYS2, 2)
    with pytest.raises(TypeError, match="mdp"):
        mdp.sample_episodes(m.transitions, pol, KEYS2, 0)
    # the deterministic swap chain: action 1 alternates the state
    np.testing.assert_array_equal(mdp.sample_episodes(m, pol, KEYS2, 0).states, [[0, 1, 0, 1]] * 2)


def test_conservative_mdp_refuses_bad_arguments():
    m = episodic_chain()
    b = mdp.known_baseline(m, np.zeros((3, 2), dtype=np.int64))
    with pytest.raises(TypeError, match="model"):
        mdp.ConservativeMDP(np.zeros(3), b)
    with pytest.raises(TypeError, match="baseline"):
        mdp.ConservativeMDP(m, (b.policy, b.value))
    with pytest.raises(ValueError, match="alpha"):
        mdp.ConservativeMDP(m, b, 1.0)
    with pytest.raises(ValueError, match="initial_state"):
        mdp.ConservativeMDP(m, b, 0.2, 7)
    with pytest.raises(ValueError, match="baseline_value"):
        mdp.ConservativeMDP(m, b, 0.2, 0, float("nan"))
    with pytest.raises(ValueError, match="baseline.policy"):
        mdp.ConservativeMDP(m, mdp.ConservativeBaseline(np.full((2, 2, 2), 0.5), 1.0, 1.0))


# --- UCBVI and value-targeted regression helpers -----------------------------------------------------------------

@pytest.mark.parametrize("kwargs, exc, word", [
    ({"kind": "bernoulli"}, ValueError, "kind"),
    ({"n": np.array([0.0, 2.0])}, ValueError, "n must be >= 1"),  # division by zero before
    ({"n": np.array([-1.0, 2.0])}, ValueError, "n must be >= 1"),
    ({"n": ["1", "2"]}, TypeError, "n must hold real numbers"),  # parsed before
    ({"h": 3}, ValueError, "h must be <= 2"),  # a negative bonus before
    ({"horizon": 2.0}, TypeError, "horizon"),
    ({"log_term": float("nan")}, ValueError, "log_term"),  # NaN bonuses before
    ({"scale": -1.0}, ValueError, "scale"),
    ({"kind": "bernstein"}, TypeError, "p_hat"),
    ({"kind": "bernstein", "p_hat": np.full((2, 3), 0.5), "v_next": np.zeros(2), "visits_next": np.ones(2)},
     ValueError, "p_hat, v_next and visits_next"),
])
def test_ucbvi_bonus_refuses_bad_input(kwargs, exc, word):
    args = {"kind": "hoeffding", "n": np.array([1.0, 4.0]), "h": 0, "horizon": 3, **kwargs}
    kind, n, h, horizon = (args.pop(k) for k in ("kind", "n", "h", "horizon"))
    with pytest.raises(exc, match=word):
        mdp.ucbvi_bonus(kind, n, h, horizon, **args)


@pytest.mark.parametrize("inv, x, exc, word", [
    (np.eye(2), np.array([np.nan, 0.0]), ValueError, "x contains NaN"),
    (np.eye(2), np.array([1j, 0.0]), TypeError, "x must hold real numbers"),
    (np.eye(2), np.ones(3), ValueError, "x must have shape"),
    (np.ones((2, 3)), np.ones(3), ValueError, "inv must have shape"),
    (-np.eye(2), np.array([1.0, 0.0]), ValueError, "inv must be positive definite"),  # division by zero before
    (np.array([[1.0, 0.5], [0.0, 1.0]]), np.ones(2), ValueError, "inv must be symmetric"),
    (np.stack([np.eye(2)] * 2), np.ones((3, 2)), ValueError, "leading axes of inv"),
])
def test_sherman_morrison_refuses_bad_input(inv, x, exc, word):
    with pytest.raises(exc, match=word):
        mdp.sherman_morrison(inv, x)


def test_sherman_morrison_matches_the_inverse_it_updates():
    sigma = np.array([[2.0, 0.5], [0.5, 1.0]])
    x = np.array([0.3, -1.2])
    np.testing.assert_allclose(mdp.sherman_morrison(np.linalg.inv(sigma), x), np.linalg.inv(sigma + np.outer(x, x)))


@pytest.mark.parametrize("kwargs, exc, word", [
    ({"gamma": 2.0}, ValueError, "gamma"),  # accepted before
    ({"gamma": float("nan")}, ValueError, "gamma"),
    ({"values": np.zeros(3)}, ValueError, "values must have shape"),
    ({"values": np.array([np.nan, 0.0])}, ValueError, "values contains NaN"),
    ({"rewards": np.zeros((3, 2))}, ValueError, "rewards must have shape"),
    ({"transitions": 2 * chain()[0]}, ValueError, "transitions"),  # accepted before
    ({"transitions": chain()[0].tolist()}, TypeError, "transitions"),
    ({"values": np.zeros((3, 2)), "rewards": np.zeros((2, 2, 2))}, ValueError, "leading"),
])
def test_bellman_backup_refuses_bad_input(kwargs, exc, word):
    p, r = chain()
    args = {"transitions": p, "rewards": r, "gamma": 0.5, "values": np.array([1.0, 2.0]), **kwargs}
    with pytest.raises(exc, match=word):
        mdp.bellman_backup(args["transitions"], args["rewards"], args["gamma"], args["values"])


@pytest.mark.parametrize("args, exc, word", [
    ((0, 0.5, 10), ValueError, "dim"),
    ((2.5, 0.5, 10), TypeError, "dim"),
    ((2, 1.0, 10), ValueError, "gamma"),  # ZeroDivisionError before
    ((2, 1.5, 10), ValueError, "gamma"),  # a negative radius before
    ((2, 0.5, -1), ValueError, "horizon"),
])
def test_confidence_radius_refuses_bad_arguments(args, exc, word):
    with pytest.raises(exc, match=word):
        mdp.confidence_radius(*args)


def test_confidence_radius_refuses_bad_delta_and_lam():
    with pytest.raises(ValueError, match="delta"):
        mdp.confidence_radius(2, 0.5, 10, delta=2.0)
    with pytest.raises(ValueError, match="lam"):
        mdp.confidence_radius(2, 0.5, 10, lam=0.0)


# --- conservative exploration --------------------------------------------------------------------------------------

HALF = np.full((3, 2, 2), 0.5)  # the uniform policy of the 3-stage chain


@pytest.mark.parametrize("args, exc, word", [
    ((np.full((3, 2, 2), 0.9), 1.0, 1.0), ValueError, "policy does not sum to 1"),
    ((np.full((3, 2), 0.5), 1.0, 1.0), ValueError, "policy must have 3 axes"),
    ((np.full((3, 2, 2), "0.5"), 1.0, 1.0), TypeError, "policy"),
    ((HALF, float("nan"), 1.0), ValueError, "value must be finite"),
    ((HALF, 1.0, "1"), TypeError, "reference"),
    ((HALF, 2.0, 1.0), ValueError, "value .* must be <= reference"),
    ((HALF, 1.0, 1.0, -1), ValueError, "n_samples"),
])
def test_conservative_baseline_refuses_bad_fields(args, exc, word):
    with pytest.raises(exc, match=word):
        mdp.ConservativeBaseline(*args)


OPT = np.ones((1, 3, 2), dtype=np.int64)
ONE = np.ones(1)


@pytest.mark.parametrize("args, exc, word", [
    ((OPT * 1.0, ONE, ONE, ONE), TypeError, "optimistic"),
    ((-OPT, ONE, ONE, ONE), ValueError, "optimistic"),
    ((OPT, 2 * ONE, ONE, ONE), ValueError, "step_weight"),
    ((OPT, ONE, -ONE, ONE), ValueError, "episode_prob"),
    ((OPT, ONE, ONE, np.ones(2)), ValueError, "credit"),
    ((OPT, ONE, ONE, ONE, OPT[:, :2]), ValueError, "policy"),
])
def test_mixed_plan_refuses_bad_fields(args, exc, word):
    with pytest.raises(exc, match=word):
        mdp.MixedPlan(*args)


def test_sample_mixed_policy_refuses_bad_input():
    plan = mdp.MixedPlan(OPT, ONE, ONE, np.full(1, np.nan))  # NaN credit: no credit, allowed
    key = np.arange(1, dtype=np.uint64)
    with pytest.raises(TypeError, match="plan"):
        mdp.sample_mixed_policy((OPT, ONE), HALF, key)
    with pytest.raises(ValueError, match="baseline_policy does not sum to 1"):
        mdp.sample_mixed_policy(plan, 3 * HALF, key)
    with pytest.raises(ValueError, match="baseline_policy must have shape"):
        mdp.sample_mixed_policy(plan, HALF[:2], key)
    with pytest.raises(ValueError, match="baseline_policy has 1 actions"):
        mdp.sample_mixed_policy(plan, np.ones((3, 2, 1)), key)
    with pytest.raises(ValueError, match="keys"):
        mdp.sample_mixed_policy(plan, HALF, np.arange(3, dtype=np.uint64))
    np.testing.assert_array_equal(mdp.sample_mixed_policy(plan, HALF, key), OPT)  # w = eps = 1: the greedy policy


@pytest.mark.parametrize("args, exc, word", [
    ((OPT * 1.0, HALF, ONE), TypeError, "optimistic"),  # mixed as if it held integers before
    ((OPT * 5, HALF, ONE), ValueError, "optimistic"),  # dropped the optimistic mass before
    ((OPT, 2 * HALF, ONE), ValueError, "baseline does not sum to 1"),
    ((OPT, HALF[0], ONE), ValueError, "baseline must have shape"),
    ((OPT, np.stack([HALF] * 2), ONE), ValueError, "baseline has 2 replications"),
    ((OPT, HALF, 2 * ONE), ValueError, "weight"),  # negative probabilities before
    ((OPT, HALF, np.ones(2)), ValueError, "weight must have shape"),  # broadcast to 2 replications before
])
def test_mix_policies_refuses_bad_input(args, exc, word):
    with pytest.raises(exc, match=word):
        mdp.mix_policies(*args)


@pytest.mark.parametrize("args, kwargs, exc, word", [
    ((np.zeros(2), 0, 3), {}, ValueError, "n must be >= 1"),  # division by zero before
    ((np.ones(2), 3, 3), {}, ValueError, "h must be <= 2"),  # a negative width before
    ((np.ones(2), np.array([0, 3]), 3), {}, ValueError, r"h must hold values in \[0, 2\]"),
    ((np.ones(2), np.array([0.0, 1.0]), 3), {}, TypeError, "h must be an integer array"),
    ((np.ones(2), np.zeros(3, dtype=np.int64), 3), {}, ValueError, "do not broadcast"),
    ((np.ones(2), 0, 3), {"log_term": float("nan")}, ValueError, "log_term"),
    ((np.ones(2), 0, 3), {"log_term": -1.0}, ValueError, "log_term"),
    ((np.ones(2), 0, 3), {"scale": -1.0}, ValueError, "scale"),
])
def test_pessimism_bonus_refuses_bad_input(args, kwargs, exc, word):
    with pytest.raises(exc, match=word):
        mdp.pessimism_bonus(*args, **{"log_term": 2.0, **kwargs})


def test_pessimism_bonus_takes_an_array_of_stages():
    b = mdp.pessimism_bonus(np.full((1, 3), 4.0), np.arange(3)[None], 3, log_term=2.0)
    np.testing.assert_allclose(b, [[1.0, 0.5, 0.0]])  # (H - h - 1) / 2 * sqrt(2 * 2 / 4)


def pessimistic_problem():
    """Counts, rewards and a stochastic policy of the 3-stage chain, one replication."""
    return np.ones((1, 3, 2, 2, 2)), np.asarray(episodic_chain().rewards), np.full((1, 3, 2, 2), 0.5)


@pytest.mark.parametrize("change, exc, word", [
    ({"counts": -np.ones((1, 3, 2, 2, 2))}, ValueError, "counts must be >= 0"),  # accepted before
    ({"counts": np.ones((1, 1, 2, 2, 2))}, ValueError, "counts must have shape"),  # IndexError before
    ({"counts": np.ones((1, 3, 3, 2, 3))}, ValueError, "counts must have shape"),
    ({"rewards": np.full((3, 2, 2), np.nan)}, ValueError, "rewards contains NaN"),  # NaN values before
    ({"rewards": np.full((3, 2, 2), 2.0)}, ValueError, "rewards must be <= 1"),
    ({"policy": np.full((1, 3, 2, 2), 1.5)}, ValueError, "policy does not sum to 1"),  # values above r before
    ({"policy": np.full((3, 2, 2), 0.5)}, ValueError, "policy must have shape"),
    ({"stationary": "no"}, TypeError, "stationary"),  # read as True before
    ({"log_term": float("inf")}, ValueError, "log_term"),
])
def test_pessimistic_values_refuses_bad_input(change, exc, word):
    counts, rewards, policy = pessimistic_problem()
    args = {"counts": counts, "rewards": rewards, "policy": policy, "log_term": 1.0, **change}
    with pytest.raises(exc, match=word):
        mdp.pessimistic_values(args.pop("counts"), args.pop("rewards"), args.pop("policy"), **args)


@pytest.mark.parametrize("change, exc, word", [
    ({"threshold": float("nan")}, ValueError, "threshold"),  # weight 0 and NaN bound before
    ({"initial_state": 9}, ValueError, "initial_state"),  # IndexError before
    ({"n_bisect": -1}, ValueError, "n_bisect"),
    ({"optimistic": OPT * 7}, ValueError, "optimistic"),
    ({"baseline": 3 * HALF}, ValueError, "baseline does not sum to 1"),  # a weight of 0.69 before
    ({"counts": np.ones((2, 3, 2, 2, 2))}, ValueError, "counts must have shape"),
    ({"stationary": 1}, TypeError, "stationary"),
])
def test_stepmix_weight_refuses_bad_input(change, exc, word):
    counts, rewards, _ = pessimistic_problem()
    args = {"counts": counts, "rewards": rewards, "optimistic": OPT, "baseline": HALF, "threshold": 0.5,
            "initial_state": 0, "log_term": 1.0, **change}
    positional = [args.pop(k) for k in ("counts", "rewards", "optimistic", "baseline", "threshold", "initial_state")]
    with pytest.raises(exc, match=word):
        mdp.stepmix_weight(*positional, **args)


@pytest.mark.parametrize("args, exc, word", [
    ((np.array([0.5]), 1.0, 2.0), ValueError, "alpha"),  # probability 1 before
    ((np.array([np.nan]), 1.0, 0.2), ValueError, "lower contains NaN"),  # probability 0 before
    ((np.array([0.5]), np.nan, 0.2), ValueError, "baseline_value"),
    ((np.array([0.5]), "1", 0.2), TypeError, "baseline_value"),
    ((np.array([0.5]), 1.0, 0.2, np.inf), ValueError, "reference"),
    ((np.array([[0.5]]), 1.0, 0.2), ValueError, "lower must have 1 axes"),
])
def test_epsmix_probability_refuses_bad_input(args, exc, word):
    with pytest.raises(exc, match=word):
        mdp.epsmix_probability(*args)


# --- linear-mixture robust backups, projections, reward batteries --------------------------------------------------

PHI = np.stack([np.eye(2)[:, None, :], np.eye(2)[::-1][:, None, :]])  # stay / swap, A = 1
THETA = np.array([0.5, 0.5])


@pytest.mark.parametrize("features, values, exc, word", [
    (PHI, np.zeros(3), ValueError, "values must have shape"),
    (PHI, np.array([np.nan, 0.0]), ValueError, "values contains NaN"),  # NaN features before
    (PHI, [0.0, 1.0], TypeError, "values"),
    (2 * PHI, np.zeros(2), ValueError, "features"),  # accepted before
    (PHI[0], np.zeros(2), ValueError, "features must have shape"),
])
def test_mixture_value_features_refuses_bad_input(features, values, exc, word):
    with pytest.raises(exc, match=word):
        mdp.mixture_value_features(features, values)


@pytest.mark.parametrize("theta, values, radius, divergence, exc, word", [
    (np.array([0.9, 0.9]), np.zeros(2), 0.1, "tv", ValueError, "theta"),  # named 'nominal' before
    (np.array([0.5, 0.25, 0.25]), np.zeros(2), 0.1, "tv", ValueError, "theta"),  # a broadcasting error before
    (THETA, np.array([np.nan, 0.0]), 0.1, "tv", ValueError, "values"),
    (THETA, np.zeros(2), -0.1, "tv", ValueError, "radius"),
    (THETA, np.zeros(2), np.full(3, 0.1), "tv", ValueError, "radius"),
    (THETA, np.zeros(2), 0.1, "hellinger", ValueError, "divergence"),
])
def test_mixture_robust_backup_refuses_bad_input(theta, values, radius, divergence, exc, word):
    with pytest.raises(exc, match=word):
        mdp.mixture_robust_backup(PHI, theta, values, radius, divergence)


@pytest.mark.parametrize("x, exc, word", [
    (np.array([np.nan, 0.5]), ValueError, "x contains NaN"),  # NaN 'probabilities' before
    (np.array([0.5 + 1j, 0.5]), TypeError, "x must hold real numbers"),  # complex 'probabilities' before
    (np.zeros(0), ValueError, "x must have shape"),
    (np.float64(0.3), ValueError, "x must have shape"),
    ("0.3", TypeError, "x"),
])
def test_simplex_projection_refuses_bad_input(x, exc, word):
    with pytest.raises(exc, match=word):
        mdp.simplex_projection(x)


def test_reward_battery_refuses_bad_arguments():
    with pytest.raises(ValueError, match="n_states, n_actions, horizon, n_random too large"):
        mdp.reward_battery(10**4, 10**4, 10**3)  # a MemoryError of petabytes before
    with pytest.raises(TypeError, match="seed"):
        mdp.reward_battery(2, 2, 2, seed="a")
    with pytest.raises(ValueError, match="seed"):
        mdp.reward_battery(2, 2, 2, seed=-1)
    with pytest.raises(TypeError, match="n_random"):
        mdp.reward_battery(2, 2, 2, n_random=2.0)
    with pytest.raises(ValueError, match="horizon"):
        mdp.reward_battery(2, 2, 0)


@pytest.mark.parametrize("rewards", [np.full((1, 3, 2, 2), "0.1"), np.full((1, 3, 2, 2), 0.1 + 0j)])
def test_reward_free_mixture_and_plan_for_rewards_refuse_non_real_rewards(rewards):
    m = instances.hard_linear_mixture(1, horizon=3, gap=0.1)
    with pytest.raises(TypeError, match="rewards"):
        mdp.RewardFreeMixture(m, rewards=rewards)  # parsed, or the imaginary part dropped, before
    with pytest.raises(TypeError, match="rewards"):
        mdp.plan_for_rewards(m.features, m.theta[None], rewards)


# --- safe exploration ----------------------------------------------------------------------------------------------

COSTS = np.array([[0.0], [1.0]])
W = np.ones((1, 2))


@pytest.mark.parametrize("change, exc, word", [
    ({"costs": np.array([[np.nan], [1.0]])}, ValueError, "costs contains NaN"),  # 'never safe' before
    ({"costs": np.array([[0.0, 1.0]])}, ValueError, "costs must have shape"),
    ({"threshold": float("nan")}, ValueError, "threshold"),
    ({"weights": -W}, ValueError, "weights must be >= 0"),  # counted as reachable before
    ({"weights": np.ones((1, 3))}, ValueError, "weights must have shape"),
    ({"horizon": 0}, ValueError, "horizon"),  # IndexError before
    ({"reachability": "no"}, TypeError, "reachability"),
    ({"features": 2 * PHI}, ValueError, "features"),
])
def test_safe_action_sets_refuses_bad_input(change, exc, word):
    args = {"features": PHI, "weights": W, "costs": COSTS, "threshold": 0.5, "horizon": 2, **change}
    with pytest.raises(exc, match=word):
        mdp.safe_action_sets(args.pop("features"), args.pop("weights"), args.pop("costs"), args.pop("threshold"),
                             args.pop("horizon"), **args)


CERT = np.array([[[True], [False]]])


@pytest.mark.parametrize("change, exc, word", [
    ({"certified": CERT * 0.5}, TypeError, "certified must be a boolean array"),  # cast to bool before
    ({"certified": CERT[:, :1]}, ValueError, "certified must have shape"),
    ({"horizon": 0}, ValueError, "horizon"),
    ({"horizon": 2.0}, TypeError, "horizon"),
    ({"weights": np.full((1, 2), np.nan)}, ValueError, "weights"),
    ({"reachability": None}, TypeError, "reachability"),
])
def test_certified_action_sets_refuses_bad_input(change, exc, word):
    args = {"features": PHI, "weights": W, "certified": CERT, "horizon": 2, **change}
    with pytest.raises(exc, match=word):
        mdp.certified_action_sets(args.pop("features"), args.pop("weights"), args.pop("certified"),
                                  args.pop("horizon"), **args)


@pytest.mark.parametrize("keys, horizon, exc, word", [
    (np.array([0.5, 1.5]), 3, TypeError, "keys"),  # truncated to integers before
    (np.array([-1, 1]), 3, ValueError, "keys"),
    (np.arange(4, dtype=np.uint64).reshape(2, 2), 3, ValueError, "keys"),
    (np.arange(2, dtype=np.uint64), -1, ValueError, "horizon"),  # an empty array before
    (np.arange(2, dtype=np.uint64), 2.5, TypeError, "horizon"),
])
def test_cost_noise_refuses_bad_input(keys, horizon, exc, word):
    with pytest.raises(exc, match=word):
        mdp.cost_noise(keys, horizon)


@pytest.mark.parametrize("index, value, exc, word", [
    (0, -0.1, ValueError, "noise_scale"),  # a smaller radius before
    (0, float("nan"), ValueError, "noise_scale"),
    (1, 0.0, ValueError, "delta"),  # ZeroDivisionError before
    (2, -5, ValueError, "n_obs"),  # math domain error before
    (3, 0, ValueError, "dim"),
    (3, 2.0, TypeError, "dim"),
    (4, 0.0, ValueError, "lam"),
    (5, -1.0, ValueError, "feature_bound"),
    (6, -1.0, ValueError, "param_bound"),  # a negative radius before
])
def test_cost_radius_refuses_bad_arguments(index, value, exc, word):
    args = [0.1, 0.1, 10, 2, 1.0, 1.0, 1.0]
    args[index] = value
    with pytest.raises(exc, match=word):
        mdp.cost_radius(*args)


PSI = np.array([[[1.0, 0.0], [0.0, 1.0]]])  # S = 1, A = 2, d_c = 2
INV = np.eye(2)[None] / 4


@pytest.mark.parametrize("args, exc, word", [
    ((PSI, INV, np.array([[2.0, 0.0]]), -1.0), ValueError, "beta"),  # costs below the estimate before
    ((PSI, INV, np.array([[2.0, 0.0]]), float("nan")), ValueError, "beta"),
    ((PSI, np.eye(3)[None], np.array([[2.0, 0.0]]), 1.0), ValueError, "inv must have shape"),
    ((PSI, INV, np.array([[2.0, 0.0, 1.0]]), 1.0), ValueError, "b must have shape"),
    ((PSI, INV, np.array([[2.0, 0.0]] * 3), 1.0), ValueError, "b must have shape"),
    ((PSI * np.nan, INV, np.array([[2.0, 0.0]]), 1.0), ValueError, "cost_features contains NaN"),
    ((PSI[0], INV, np.array([[2.0, 0.0]]), 1.0), ValueError, "cost_features must have 3 axes"),
])
def test_pessimistic_costs_refuses_bad_input(args, exc, word):
    with pytest.raises(exc, match=word):
        mdp.pessimistic_costs(*args)


def test_safe_environments_refuse_non_real_costs_and_huge_horizons():
    m = instances.hard_linear_mixture(1, horizon=3, gap=0.1)
    with pytest.raises(TypeError, match="costs"):
        mdp.SafeLinearMixture(m, np.full((2, 2), "0.1"), 0.5, 0, 0.3)
    with pytest.raises(TypeError, match="cost_param"):
        mdp.LearnedCostSafeMixture(m, np.full((2, 2, 1), 0.1), np.array(["1"]), 0.5, 0, 0.3,
                                   np.array([True, True]), 0.1)
    with pytest.raises(TypeError, match="rung_rewards"):
        mdp.safe_cost_ladder(4, rung_rewards=["1", "0.5", "0.5", "0.5"])
    with pytest.raises(ValueError, match="horizon too large"):
        mdp.safe_cost_ladder(10**9)
    with pytest.raises(ValueError, match="horizon too large"):
        mdp.safe_trap_mixture(10**9)


def test_episodic_and_conservative_refuse_a_name_that_is_not_a_string():
    m = episodic_chain()
    with pytest.raises(TypeError, match="name"):
        mdp.episodic(m, name=0)  # fell back to the default name before
    with pytest.raises(TypeError, match="name"):
        mdp.conservative(m, mdp.known_baseline(m, np.zeros((3, 2), dtype=np.int64)), name=False)
    assert mdp.episodic(m).name == "finite_horizon_mdp"


def test_an_array_given_for_a_named_option_is_refused_naming_it():
    import numpy as np

    from expertlab import mdp

    with pytest.raises(ValueError, match="bonus"):
        mdp.ucbvi(bonus=np.array(["hoeffding"]))
    assert mdp.ucbvi(bonus=np.str_("hoeffding")).params["bonus"] == "hoeffding"
