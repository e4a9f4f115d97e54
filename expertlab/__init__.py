"""expertlab: theory and algorithms for experts and mixture models."""

__version__ = "0.1.0"

from . import balance, bandits, experts, mdp, mixtures, sim

__all__ = ["balance", "bandits", "experts", "mdp", "mixtures", "sim", "__version__"]
