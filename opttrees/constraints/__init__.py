"""Side constraints on optimal trees, in one package: what a constraint is, the rows it adds to an MIO, the DP
that solves it, and its binding to one fit.

- :mod:`~opttrees.constraints.declarations`: the :class:`Constraint` contract (``validate``, ``add_to``: its rows on
  a named Block of the formulation's model, ``value``, ``satisfied``) and the feature budgets
  (:class:`MaxFeatures`, :class:`FeatureCost`, :class:`ForbidFeatures`), :class:`Monotone`,
  :class:`MinLeafPerClass`, :class:`MinLeafWeight`;
- :mod:`~opttrees.constraints.fairness`: the five group-fairness notions (:class:`StatisticalParity`,
  :class:`ConditionalStatisticalParity`, :class:`PredictiveEquality`, :class:`EqualOpportunity`,
  :class:`EqualizedOdds`);
- :mod:`~opttrees.constraints.checks`: the ``constraints`` parameter read from objects or spec mappings
  (:func:`check_constraints`, :func:`from_dict`) and a tree checked against them (:func:`report`,
  :func:`all_satisfied`); :mod:`~opttrees.constraints.start_repair`: start repair (the best feasible pruning);
- DP routes: :mod:`~opttrees.constraints.dp_routes` (which constraints a DP solves: fairness by Pareto fronts,
  feature budgets by maximal feature sets), :mod:`~opttrees.constraints.pareto` (the Pareto-front DP, merges in
  :mod:`~opttrees.constraints.pareto_kernels`), :mod:`~opttrees.constraints.fairness_dp` (the fairness notions as
  one Pareto task);
- :mod:`~opttrees.constraints.binding`: the constraints of one fit (which methods honour them, the build stage
  that adds the rows, start repair, the post-fit check); the pieces that need the fit pipeline are
  :mod:`opttrees.estimators.constrained`.

The public names below load on first use, so the DP modules of this package do not import Pyomo.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

#: public name -> the module of this package that defines it
_LAZY = {
    **dict.fromkeys(("TOL", "Constraint", "MaxFeatures", "FeatureCost", "ForbidFeatures", "Monotone",
                     "MinLeafPerClass", "MinLeafWeight"), ".declarations"),
    **dict.fromkeys(("FAIRNESS", "StatisticalParity", "ConditionalStatisticalParity", "PredictiveEquality",
                     "EqualOpportunity", "EqualizedOdds"), ".fairness"),
    **dict.fromkeys(("CONSTRAINT_TYPES", "from_dict", "check_constraints", "report", "all_satisfied"), ".checks"),
    "repair": ".start_repair",
}
__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals(), __all__)

if TYPE_CHECKING:   # static analysers and IDEs see the real names
    from .checks import CONSTRAINT_TYPES, all_satisfied, check_constraints, from_dict, report
    from .declarations import (TOL, Constraint, FeatureCost, ForbidFeatures, MaxFeatures, MinLeafPerClass,
                               MinLeafWeight, Monotone)
    from .fairness import (FAIRNESS, ConditionalStatisticalParity, EqualizedOdds, EqualOpportunity,
                           PredictiveEquality, StatisticalParity)
    from .start_repair import repair
