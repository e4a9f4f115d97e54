"""Mixture-model estimators and the numerical cores around mixtures of experts.

So far: Shapley values of the experts of a mixture, exactly on small games
and by permutation sampling (plain, truncated, or importance-weighted by the
router) on large ones.
"""

from . import _claims  # noqa: F401  (registers the rate claims)
from ._shapley import ShapleyResult, shapley_exact, shapley_mc, table_game

__all__ = ["ShapleyResult", "shapley_exact", "shapley_mc", "table_game"]
