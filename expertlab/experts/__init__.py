"""Full-information experts: Hedge and its adaptive variants, with sleeping experts."""

from . import instances
from ._hedge import HedgeState, hedge

__all__ = ["instances", "hedge", "HedgeState"]
