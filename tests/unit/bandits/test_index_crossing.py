"""The fluid (index-crossing) model behind the UCB1 and UCB(alpha) slope claims."""

import numpy as np
import pytest

from expertlab import sim
from expertlab.bandits._claims import index_crossing_slope

NINE = np.arange(1, 10) / 10.0
INV_GAPS = float(np.sum(1.0 / (0.9 - NINE[:-1])))


def test_slope_tends_to_the_asymptotic_constant():
    # far out the optimal arm's bonus vanishes and N_i -> c ln t / Delta_i^2: slope sum_i c / Delta_i
    for c in (2.0, 1.5):
        assert index_crossing_slope(NINE, c, 1e40) == pytest.approx(c * INV_GAPS, rel=2e-3)


def test_finite_horizon_slope_is_above_the_limit_and_solves_the_crossing():
    # the optimal arm's own bonus delays the crossing: more pulls of each suboptimal arm than the limit
    for T in (1e4, 1e6):
        assert index_crossing_slope(NINE, 2.0, T) > 2.0 * INV_GAPS * 1.3
    # two arms, one gap: the regret is Delta N(t) with N solving sqrt(w/N) = Delta + sqrt(w/(t - N)),
    # w = c ln t; check the slope against a direct finite difference of that solution
    from scipy.optimize import brentq

    def regret(t, c=2.0, gap=0.2):
        w = c * np.log(t)
        n = brentq(lambda n: np.sqrt(w / n) - gap - np.sqrt(w / (t - n)), 1e-9, t / 2)
        return gap * n

    t_lo, t_hi = 1e3, 1e4
    ts = np.geomspace(t_lo, t_hi, 40)
    direct = np.polyfit(np.log(ts), [regret(t) for t in ts], 1)[0]
    assert index_crossing_slope([0.3, 0.5], 2.0, t_hi, n_points=40) == pytest.approx(direct, rel=1e-8)


def test_the_ucb_claims_are_the_midpoints_of_the_model_on_the_quick_and_full_windows():
    for name, c in (("bandits.ucb1-log-slope", 2.0), ("bandits.ucb_alpha-log-slope", 1.5)):
        claim = sim.get_claim(name)
        quick, full = index_crossing_slope(NINE, c, 1e4), index_crossing_slope(NINE, c, 1e6)
        assert claim.predicted == pytest.approx((quick + full) / 2)
        assert claim.tolerance == pytest.approx(abs(quick - full) / 2 + 0.05 * claim.predicted)
        # the asymptotic constant alone would not be accepted: the finite-T correction is needed
        assert claim.predicted - claim.tolerance > c * INV_GAPS


def test_a_tie_for_the_best_arm_is_refused():
    with pytest.raises(ValueError, match="means"):
        index_crossing_slope([0.5, 0.5, 0.2], 2.0, 1e4)
