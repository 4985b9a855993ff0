"""Pyomo model builders, one contract (:class:`Formulation`): one prepared-data object in; ``model``,
``warm_start(tree)``, ``extract()`` and, for decomposition models, ``separator`` out; ``block=`` to build onto
a block of a bigger model.

- :class:`OCT` on :class:`~opttrees.data.PreparedData`: Bertsimas–Dunn OCT, thesis model (2.24);
- :class:`SPOTFormulation` on ``prepare_costs(problem, X, C)`` (a PreparedData with costs): SPOT MILP, Theorem 2;
- :class:`FlowOCT` on :class:`~opttrees.binarized.BinarizedData`: the max-flow tree (Aghaei, Gómez, Vayanos);
- :class:`BendersOCT` on BinarizedData: FlowOCT's master with lazy min-cut cuts (its ``separator``);
- :class:`RobustOCT` on :class:`~opttrees.binarized.ThermometerData`: trees robust to integer feature shifts.
"""
from ..binarized import BinarizedData, ThermometerData
from ..data import PreparedData, prepare
from .base import Formulation
from .benders import BendersOCT, BendersSeparator
from .flow import FlowOCT, FlowStructure
from .oct import OCT
from .robust import RobustOCT, RobustSeparator
from .spot import SPOTFormulation, prepare_costs
from .structure import BDStructure

__all__ = ["Formulation", "OCT", "SPOTFormulation", "FlowOCT", "BendersOCT", "RobustOCT",
           "BDStructure", "FlowStructure", "BendersSeparator", "RobustSeparator",
           "PreparedData", "prepare", "prepare_costs", "BinarizedData", "ThermometerData"]
