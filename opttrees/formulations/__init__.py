"""Pyomo model builders, one contract (:class:`Formulation`): one prepared-data object in; ``model``,
``warm_start(tree)``, ``extract()`` and, for decomposition models, ``separator`` out; ``block=`` to build onto
a block of a bigger model.

- :class:`OCT` on :class:`~opttrees.data.PreparedData`: Bertsimas–Dunn OCT, thesis model (2.24);
- :class:`OCTH` on PreparedData: OCT-H, hyperplane splits with margin mu, thesis model (3.3);
- :class:`ORT` on regression PreparedData: ORT / ORT-H (``split_type``), absolute or squared loss, model (4.8);
- :class:`SPOTFormulation` on ``prepare_costs(problem, X, C)`` (a PreparedData with costs): SPOT MILP, Theorem 2;
- :class:`FlowOCT` on :class:`~opttrees.data.binarized.BinarizedData`: the max-flow tree (Aghaei, Gómez, Vayanos);
- :class:`BendersOCT` on BinarizedData: FlowOCT's master with lazy min-cut cuts (its ``separator``);
- :class:`RobustOCT` on :class:`~opttrees.data.binarized.ThermometerData`: trees robust to integer feature shifts.
"""
from ..data.binarized import BinarizedData, ThermometerData
from ..data.costs import prepare_costs
from ..data.prepared import PreparedData, prepare
from .base import Formulation
from .benders import BendersOCT, BendersSeparator
from .flow import FlowOCT, FlowStructure
from .oct import OCT
from .octh import OCTH
from .ort import ORT
from .ort_linear import ORTLinear
from .robust import RobustOCT, RobustSeparator
from .spot import SPOTFormulation
from .structure import BDStructure, HyperplaneStructure

__all__ = ["Formulation", "OCT", "OCTH", "ORT", "ORTLinear", "SPOTFormulation", "FlowOCT", "BendersOCT", "RobustOCT",
           "BDStructure", "HyperplaneStructure", "FlowStructure", "BendersSeparator", "RobustSeparator",
           "PreparedData", "prepare", "prepare_costs", "BinarizedData", "ThermometerData"]
