"""expertlab: theory and algorithms for experts and mixture models."""

__version__ = "0.1.0"

from . import experts, sim

__all__ = ["experts", "sim", "__version__"]
