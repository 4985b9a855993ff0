"""The uncertainty set of a robust fit from what the caller gave: explicit ``costs`` and ``budget``, a calibration
from the estimator's ``rho`` and ``lam`` (paper §4), or, with neither, budget 0 (the nominal tree)."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import InputError
from .adversary import ShiftSet


def uncertainty_set(X_int, costs, budget, calibrated: Callable | None = None, *, lower=None, upper=None,
                    direction=None, groups=None, kinds=None) -> ShiftSet:
    """The set ``sum_i sum_f costs_if |xi_if| <= budget`` on the integer data ``X_int`` (n, F), checked against it.

    ``costs``: (n, F), (F,) (the same for every row) or None (all ones); ``budget`` None with costs is an error.
    With neither: ``calibrated(X_int) -> (costs, budget)`` when given (the estimator has ``rho`` or ``lam``), else
    budget 0. ``lower``, ``upper``, ``direction``, ``groups``, ``kinds``: the set's domain, as :class:`ShiftSet`.
    """
    n, F = X_int.shape
    if costs is None and budget is None:
        if calibrated is not None:
            costs, budget = calibrated(X_int)
        else:
            costs, budget = np.ones((n, F)), 0.0
    elif costs is None:
        costs = np.ones((n, F))
    elif budget is None:
        raise InputError("costs were given without a budget; pass budget= (epsilon) as well")
    costs = np.asarray(costs, dtype=np.float64)
    if costs.ndim == 1:
        costs = np.broadcast_to(costs, (n, F)).copy()
    if costs.shape != (n, F):
        raise InputError(f"costs must have shape (n, F) = {(n, F)} or (F,); got {costs.shape}")
    S = ShiftSet(costs, budget, lower=lower, upper=upper, direction=direction, groups=groups, kinds=kinds)
    S.check_data(X_int)
    return S
