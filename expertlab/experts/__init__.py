"""Full-information experts: Hedge and its adaptive variants, with sleeping experts.

Every learner is a :class:`expertlab.sim.Learner` built by a factory named
after the algorithm; :data:`LEARNERS` maps registered names to factories and
:data:`instances.INSTANCES` does the same for loss sequences.
"""

from ..sim._rates import document_claims as _document_claims
from . import _claims, instances
from ._hedge import HedgeState, hedge

#: Registered learner factories, by name (used by the CLI and sweeps).
LEARNERS = {
    "hedge": hedge,
}

for _name, _factory in LEARNERS.items():
    _document_claims(_factory, _name)

__all__ = ["instances", "hedge", "HedgeState", "LEARNERS"]
