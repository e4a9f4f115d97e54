r"""The top-label calibration error is never below the confidence ECE, for any labels and binning.

Statement checked
-----------------
For predictions :math:`p_i \in \Delta_K`, labels :math:`y_i`, weights
:math:`w_i \ge 0`, confidence :math:`c_i = \max_k p_{ik}`, predicted class
:math:`\hat y_i` and equal-width confidence bins :math:`b(c_i)`, let
:math:`B_b = \{i : b(c_i) = b\}` and :math:`B_{kb} = B_b \cap \{\hat y_i = k\}`.  Then

.. math::

    \mathrm{ECE} = \frac{1}{W}\sum_b \Bigl|\sum_{i \in B_b} w_i (\mathbb 1[\hat y_i = y_i] - c_i)\Bigr|
    \;\le\; \frac{1}{W}\sum_{k, b} \Bigl|\sum_{i \in B_{kb}} w_i (\mathbb 1[\hat y_i = y_i] - c_i)\Bigr|
    = \mathrm{TL\text{-}ECE},

because the top-label bins refine the confidence bins and the absolute value
is subadditive.  Equality holds when every bin holds one predicted class.
The refinement argument is that of Gupta & Ramdas (2022, Sec. 2), who show
top-label calibration is stronger than confidence calibration; the
proposition number there was not confirmed.  SSME estimates both metrics
(Shanmugam et al. 2025, Sec. 5), so the estimator's metric functions
:func:`expertlab.mixtures.expected_calibration_error` and
:func:`expertlab.mixtures.top_label_calibration_error` must satisfy it.

How the checks work
-------------------
Hypothesis draws up to 40 points with 2–4 classes, probabilities rounded to
a coarse grid (so that confidences fall on bin edges and ties happen),
arbitrary labels, weights (including zeros) and 1–15 bins, and compares the
two library functions.  The equality case is checked on data with a single
predicted class.

Self-test: the reverse inequality fails on a two-point example (one right
prediction of class 0, one wrong of class 1, same bin), so a harness that
compared the wrong way round would be caught.

References
----------
C. Gupta, A. Ramdas, "Top-label calibration and multiclass-to-binary
reductions", ICLR 2022, Sec. 2.  C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger,
"On calibration of modern neural networks", ICML 2017, Eq. (3).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from expertlab.mixtures import expected_calibration_error, top_label_calibration_error

pytestmark = pytest.mark.proof


@st.composite
def problems(draw):
    seed = draw(st.integers(0, 2 ** 32 - 1))
    n = draw(st.integers(1, 40))
    K = draw(st.integers(2, 4))
    n_bins = draw(st.integers(1, 15))
    rng = np.random.default_rng(seed)
    raw = np.round(rng.dirichlet(np.full(K, draw(st.sampled_from([0.3, 1.0, 5.0]))), n) * 20) + 1e-9
    probs = raw / raw.sum(-1, keepdims=True)
    labels = rng.integers(0, K, n)
    w = rng.uniform(0, 2, n) * (rng.uniform(size=n) > draw(st.sampled_from([0.0, 0.3])))
    w[0] = max(w[0], 0.1)
    return labels, probs, w, n_bins


@given(problems())
def test_top_label_error_dominates_ece(problem):
    labels, probs, w, n_bins = problem
    ece = float(expected_calibration_error(labels, probs, sample_weight=w, n_bins=n_bins))
    tl = float(top_label_calibration_error(labels, probs, sample_weight=w, n_bins=n_bins))
    assert tl >= ece - 1e-12 * (1 + ece)


@given(problems())
def test_equal_when_one_class_is_predicted(problem):
    labels, probs, w, n_bins = problem
    probs = np.sort(probs, axis=-1)[:, ::-1]          # every point predicts class 0
    ece = float(expected_calibration_error(labels, probs, sample_weight=w, n_bins=n_bins))
    tl = float(top_label_calibration_error(labels, probs, sample_weight=w, n_bins=n_bins))
    assert tl == pytest.approx(ece, rel=1e-12, abs=1e-14)


def test_self_test_reverse_inequality_fails():
    p = np.array([[0.7, 0.3], [0.3, 0.7]])
    y = np.array([0, 0])
    ece = float(expected_calibration_error(y, p))      # |(1 - 0.7) + (0 - 0.7)| / 2 = 0.2
    tl = float(top_label_calibration_error(y, p))      # (0.3 + 0.7) / 2 = 0.5
    assert not tl <= ece
