"""Bad input to the assignment problem, top-K routing and the capacity helper raises an error naming the argument."""

import numpy as np
import pytest

from expertlab.balance import AssignmentBatch, AssignmentProblem, capacity_from_gamma, capacity_route, top_k_route

S = np.array([[0.9, 0.1, 0.3], [0.2, 0.8, 0.4], [0.5, 0.6, 0.7], [0.1, 0.3, 0.2]])


# --- scores must hold real numbers (no silent coercion of complex / string / object data) ----------------------

@pytest.mark.parametrize("bad", [S + 1j, S.astype(str), S.astype(bytes), S.astype(object), S.tolist() + [["a", "b", "c"]]],
                         ids=["complex", "str", "bytes", "object", "list-with-strings"])
def test_assignment_problem_rejects_non_real_scores(bad):
    with pytest.raises(TypeError, match="scores"):
        AssignmentProblem(bad, 1)


@pytest.mark.parametrize("bad", [S + 1j, S.astype(str), S.astype(object)], ids=["complex", "str", "object"])
def test_top_k_route_rejects_non_real_scores(bad):
    with pytest.raises(TypeError, match="scores"):
        top_k_route(bad, k=1)


def test_ragged_scores_are_a_type_error():
    with pytest.raises(TypeError, match="scores"):
        AssignmentProblem([[0.1, 0.2], [0.3]], 1)


def test_integer_and_bool_scores_are_still_accepted():
    np.testing.assert_array_equal(AssignmentProblem(np.array([[1, 0], [0, 1]]), 1).scores, [[1.0, 0.0], [0.0, 1.0]])
    assert top_k_route(np.array([[True, False]]), k=1).tolist() == [[1, 0]]


@pytest.mark.parametrize("capacity", [["2", "1", "1"], np.array([2, 1, 1]) + 1j])
def test_capacity_must_hold_real_numbers(capacity):
    with pytest.raises(TypeError, match="capacity"):
        AssignmentProblem(S, 1, capacity=capacity)


def test_capacity_of_the_wrong_length_is_shown_as_given():
    with pytest.raises(ValueError, match=r"capacity must be a scalar or have shape \(3,\).*capacity=\[5, 3, 4, 1\]"):
        AssignmentProblem(S, 1, capacity=[5, 3, 4, 1])
    with pytest.raises(ValueError, match=r"capacity=\[\[5, 3\], \[4, 1\]\]"):
        AssignmentBatch(np.stack([S, S]), 1, capacity=[[5, 3], [4, 1]])


def test_batch_capacity_must_hold_real_numbers():
    with pytest.raises(TypeError, match="capacity"):
        AssignmentBatch(np.stack([S, S]), 1, capacity=[["2", "1", "1"], ["2", "1", "1"]])


# --- capacity_from_gamma validates every argument ---------------------------------------------------------------

@pytest.mark.parametrize("kwargs, exc, name", [
    (dict(gamma=-1.0), ValueError, "gamma"),
    (dict(gamma=0.0), ValueError, "gamma"),
    (dict(gamma=float("nan")), ValueError, "gamma"),
    (dict(gamma=float("inf")), ValueError, "gamma"),
    (dict(gamma=1e308, n_tokens=10**6), ValueError, "gamma"),
    (dict(gamma="1"), TypeError, "gamma"),
    (dict(n_tokens=-3), ValueError, "n_tokens"),
    (dict(n_tokens=0), ValueError, "n_tokens"),
    (dict(n_tokens=3.0), TypeError, "n_tokens"),
    (dict(n_experts=0), ValueError, "n_experts"),
    (dict(n_experts=-2), ValueError, "n_experts"),
    (dict(k=0), ValueError, "k"),
    (dict(k=5), ValueError, "k"),
])
def test_capacity_from_gamma_rejects_bad_arguments(kwargs, exc, name):
    args = dict(gamma=1.0, n_tokens=6, n_experts=4, k=2) | kwargs
    with pytest.raises(exc, match=name):
        capacity_from_gamma(**args)


def test_capacity_from_gamma_values():
    assert capacity_from_gamma(1.0, 6, 4, 2) == 3
    assert capacity_from_gamma(1.0, 3, 1, 1) == 3
    assert capacity_from_gamma(0.5, 6, 4, 2) == 1


def test_capacity_route_still_names_k_and_gamma():
    with pytest.raises(ValueError, match="k"):
        capacity_route(S, k=4, gamma=1.0, exact_method=None)
    with pytest.raises(ValueError, match="gamma"):
        capacity_route(S, k=1, gamma=-1.0, exact_method=None)


# --- routing baselines, the auxiliary loss and the move list ---------------------------------------------------

from expertlab import balance  # noqa: E402
from expertlab.balance import generators  # noqa: E402

NAN_S = np.where(np.eye(4, 3, dtype=bool), np.nan, S)


def test_aux_loss_refuses():
    with pytest.raises(ValueError, match="logits"):
        balance.aux_loss(NAN_S)
    with pytest.raises(ValueError, match="logits"):
        balance.aux_loss(S[0])
    with pytest.raises(TypeError, match="logits"):
        balance.aux_loss(S.astype(str))
    with pytest.raises(ValueError, match="k"):
        balance.aux_loss(S, 0)
    with pytest.raises(ValueError, match="k"):
        balance.aux_loss(S, 4)
    with pytest.raises(TypeError, match="k"):
        balance.aux_loss(S, 1.5)


def test_base_route_refuses():
    with pytest.raises(ValueError, match="k"):
        balance.base_route(S, 4)
    with pytest.raises(ValueError, match="method"):
        balance.base_route(S, 1, method="simplex")
    with pytest.raises(ValueError, match="scores"):
        balance.base_route(NAN_S)
    with pytest.raises(TypeError, match="scores"):
        balance.base_route(S + 1j)


def test_expert_choice_route_refuses():
    with pytest.raises(ValueError, match="capacity"):
        balance.expert_choice_route(S, 0)
    with pytest.raises(ValueError, match="capacity"):  # more slots than tokens
        balance.expert_choice_route(S, 5)
    with pytest.raises(TypeError, match="capacity"):
        balance.expert_choice_route(S, 1.5)
    with pytest.raises(ValueError, match="scores"):
        balance.expert_choice_route(NAN_S, 1)


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(temperature=0.0), ValueError, "temperature"),
    (dict(temperature=float("nan")), ValueError, "temperature"),
    (dict(n_iter=0), ValueError, "n_iter"),
    (dict(tol=-1.0), ValueError, "tol"),
    (dict(k=4), ValueError, "k"),
])
def test_sinkhorn_route_refuses(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        balance.sinkhorn_route(S, **kwargs)
    with pytest.raises(ValueError, match="scores"):
        balance.sinkhorn_route(NAN_S)


def test_token_moves_refuses_biases_of_the_wrong_shape_and_a_bare_array():
    problem = AssignmentProblem(S, 1)
    with pytest.raises(ValueError, match="biases"):
        balance.token_moves(problem, np.zeros(5))
    with pytest.raises(ValueError, match="biases"):
        balance.token_moves(problem, np.zeros((2, 4)))
    with pytest.raises(TypeError, match="k"):
        balance.token_moves(S, np.zeros((2, 3)))


# --- the routing environments and the score generators validate when built directly -----------------------------

def test_routing_classes_validate_when_built_directly():
    gen = generators.iid_gaussian(3)
    with pytest.raises(TypeError, match="generator"):
        balance.Routing("iid_gaussian", 8, 1)
    with pytest.raises(ValueError, match="k"):
        balance.Routing(gen, 8, 4)
    with pytest.raises(ValueError, match="n_tokens"):
        balance.Routing(gen, 0, 1)
    cap = np.ones((1, 3))
    with pytest.raises(ValueError, match="scores"):
        balance.FixedRouting(S, 1, cap)  # 2-d: not a batch of problems
    with pytest.raises(ValueError, match="scores"):
        balance.FixedRouting(NAN_S[None], 1, cap)
    with pytest.raises(ValueError, match="k"):
        balance.FixedRouting(S[None], 0, cap)
    with pytest.raises(ValueError, match="capacity_rows"):
        balance.FixedRouting(S[None], 1, np.ones((1, 2)))
    with pytest.raises(ValueError, match="comparator_bias"):
        balance.FixedRouting(S[None], 1, cap, np.full((1, 3), np.nan))


@pytest.mark.parametrize("args, exc, word", [
    (("gauss", 3, np.zeros(9)), ValueError, "name"),
    (("iid_gaussian", 0, np.zeros(3)), ValueError, "n_experts"),
    (("iid_gaussian", 3, np.zeros(5)), ValueError, "params"),
    (("iid_gaussian", 3, np.r_[-1.0, 0, 1, np.zeros(6)]), ValueError, "sigma"),
    (("iid_gaussian", 3, np.r_[1.0, 0, 1, np.nan, np.zeros(5)]), ValueError, "params"),
    (("drifting", 3, np.r_[1.0, 2.0, 1, np.zeros(6)]), ValueError, "mode"),
    (("drifting", 3, np.r_[1.0, 1.0, 0.0, np.zeros(6)]), ValueError, "period"),
    (("iid_gaussian", 3, np.zeros(9) + 1j), TypeError, "params"),
])
def test_score_generator_validates_when_built_directly(args, exc, word):
    with pytest.raises(exc, match=word):
        generators.ScoreGenerator(*args)
