"""expertlab: theory and algorithms for experts and mixture models."""

__version__ = "0.1.0"

from . import bandits, experts, mixtures, sim

__all__ = ["bandits", "experts", "mixtures", "sim", "__version__"]
