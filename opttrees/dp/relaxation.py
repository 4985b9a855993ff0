"""What a formulation tells the dynamic program about itself: the DP problem that relaxes its MIO.

A formulation that the DP can bound returns one of these from :meth:`Formulation.dp_relaxation`
(:mod:`opttrees.formulations.base`); :mod:`opttrees.dp.bound` reads nothing else of the formulation (it only
passes the formulation object on to the :class:`~opttrees.solvers.result.ObjectiveBound`, which names it).
Each kind says which DP solves the relaxed problem and what its data are:

- :class:`OCTRelaxation`: misclassification over every midpoint of the features (OCT and its subclasses);
- :class:`FlowRelaxation`: misclassification over the formulation's own binary columns (FlowOCT, BendersOCT);
- :class:`SPOTRelaxation`: SPO loss over every midpoint (the SPOT MILP).

The fields common to all (:class:`Relaxation`) are what the bound needs of the model: the model itself (its
objective expression, rows and variable domains are recorded when the bound is made), the integer variables the
bound relies on, the rows the formulation deactivates by design, how the formulation scores a tree, and how to
read the tree loaded in the model (``solution_objective``: its objective, or why the bound cannot prove it).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..tree import Tree


@dataclass(frozen=True, kw_only=True)
class Relaxation:
    """The common part of a formulation's DP relaxation (see the module docstring).

    ``exact``: every tree over the split set within the depth (and minimum leaf size) is feasible for the model,
    so the DP's tree is a start without a check; a subclass that adds rows is not exact, and the DP's tree is then
    a start only when ``admits(tree)`` (set as the model's start, it satisfies every active row)."""

    name: str
    model: Any
    owns_model: bool
    max_depth: int
    tree_objective: Callable[[Tree], float]
    solution_objective: Callable[[], tuple[float | None, str]]
    admits: Callable[[Tree], bool]
    exact: bool = True
    integer_components: tuple[str, ...] = ()
    inactive_by_design: tuple[str, ...] = ()
    feature_names: list | None = None


@dataclass(frozen=True, kw_only=True)
class OCTRelaxation(Relaxation):
    """Misclassification with split cost ``alpha`` over every midpoint of ``X``: rows ``X``, label codes ``y``
    (``classes`` their labels), ``sample_weight``, ``min_samples_leaf`` rows per leaf; ``baseline`` is the
    formulation's normalisation (the DP's must equal it)."""

    X: np.ndarray
    y: np.ndarray
    sample_weight: np.ndarray
    classes: list | None = None
    min_samples_leaf: int
    alpha: float
    baseline: float


@dataclass(frozen=True, kw_only=True)
class FlowRelaxation(Relaxation):
    """The flow objective ``(1 - regularization) * sum_i weights_i correct_i - regularization * splits`` over the
    binary columns ``Z`` (``split_of_col(c)``: the split a column stands for, in the units of ``X``); label codes
    ``y`` of ``n_classes`` classes (``classes`` their labels); no minimum leaf size."""

    Z: np.ndarray
    X: np.ndarray
    split_of_col: Callable[[int], tuple[int, float]]
    y: np.ndarray
    weights: np.ndarray
    n_classes: int
    regularization: float
    classes: list | None = None


@dataclass(frozen=True, kw_only=True)
class SPOTRelaxation(Relaxation):
    """Normalised SPO loss with split cost ``alpha`` over every midpoint of ``X``: cost vectors ``costs`` of the
    decision ``problem``, row ``weights``; a leaf's weight at least ``min_leaf_weight``."""

    X: np.ndarray
    costs: np.ndarray
    problem: Any
    weights: np.ndarray
    min_leaf_weight: float
    alpha: float
