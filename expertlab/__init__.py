"""expertlab: theory and algorithms for experts and mixture models."""

__version__ = "0.1.0"

from . import bandits, experts, mdp, mixtures, sim

__all__ = ["bandits", "experts", "mdp", "mixtures", "sim", "__version__"]
