"""Pyomo model builders. Each returns an object with ``model``, ``warm_start(tree)`` and ``extract()``."""
from .base import Formulation
from .oct import OCT
from .structure import BDStructure

__all__ = ["Formulation", "OCT", "BDStructure"]
