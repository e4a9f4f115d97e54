"""Bad input to the SSME metrics and the ALR transform raises an error naming the argument."""

import numpy as np
import pytest

from expertlab._validation import as_real_array
from expertlab.mixtures import alr, roc_auc
from expertlab.mixtures._ssme_metrics import metric

P2 = np.array([[0.5, 0.5], [0.2, 0.8], [0.7, 0.3]])
P3 = np.full((3, 3), 1.0 / 3.0)


@pytest.mark.parametrize("labels", [np.array([1, 1, 1]), np.array([0, 0, 0])])
def test_roc_auc_needs_both_classes(labels):
    with pytest.raises(ValueError, match="labels must contain both classes"):
        roc_auc(labels, P2)


def test_roc_auc_counts_only_points_of_positive_weight():
    with pytest.raises(ValueError, match="labels must contain both classes"):
        roc_auc(np.array([0, 1, 1]), P2, sample_weight=np.array([0.0, 1.0, 1.0]))


def test_roc_auc_needs_both_classes_in_every_row_of_a_batch():
    with pytest.raises(ValueError, match="labels"):
        roc_auc(np.array([[0, 1, 1], [1, 1, 1]]), P2)


def test_roc_auc_multiclass_needs_every_class():
    with pytest.raises(ValueError, match="labels must contain every class 0, ..., 2"):
        roc_auc(np.array([0, 1, 1]), P3)


def test_metric_auc_keeps_nan_for_the_batched_estimators():
    v = metric("auc", np.array([[0, 1, 1], [1, 1, 1]]), P2)
    assert not np.isnan(v[0]) and np.isnan(v[1])


@pytest.mark.parametrize("eps", [2.0, 1.0, 0.51, float("nan"), float("inf"), 0.0, -1e-12])
def test_alr_rejects_a_bad_eps(eps):
    with pytest.raises(ValueError, match="eps"):
        alr(np.array([0.25, 0.75]), eps=eps)


def test_alr_eps_bound_is_one_over_the_number_of_classes():
    np.testing.assert_allclose(alr(np.array([0.25, 0.75]), eps=0.5), [np.log(0.5 / 0.75)])
    with pytest.raises(ValueError, match=r"eps must lie in \(0, 1 / n_classes\]"):
        alr(np.array([0.2, 0.3, 0.5]), eps=0.4)


def test_alr_rejects_complex_probs():
    with pytest.raises(TypeError, match="probs"):
        alr(np.array([0.25, 0.75]) + 0j)


@pytest.mark.parametrize("bad", ["1.0", np.array([1.0]) + 1j, np.array(["1.0"]), np.array([1.0], dtype=object),
                                 [[1.0], [1.0, 2.0]], None])
def test_as_real_array_rejects_non_real_data(bad):
    with pytest.raises(TypeError, match="weights"):
        as_real_array(bad, "weights")


def test_as_real_array_accepts_real_data():
    assert as_real_array([1, 2], "x").dtype == np.float64
    assert as_real_array(np.array([True]), "x").tolist() == [1.0]
    assert as_real_array(0.5, "x", np, np.float32).dtype == np.float32


@pytest.mark.parametrize("X", [np.ones((6, 2)) + 1j, np.ones((6, 2)).astype(str)], ids=["complex", "str"])
def test_gaussian_mixture_rejects_non_real_data_through_the_shared_helper(X):
    from expertlab.mixtures import GaussianMixture

    with pytest.raises(TypeError, match="X must hold real numbers"):
        GaussianMixture(1).fit(X)
