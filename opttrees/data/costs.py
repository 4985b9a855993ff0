"""Cost data for SPO trees (features with one cost vector per row): the one check of ``(problem, X, C,
sample_weight)`` that every SPO fit runs (:func:`check_costs_fit`), and the prepared data of the SPOT MILP
(:func:`prepare_costs`: a :class:`~opttrees.data.prepared.PreparedData` with the costs in ``extra["costs"]``).

``problem`` is any decision problem with a ``check_costs(C)`` method (:class:`opttrees.oracles.DecisionProblem`):
only that method is called, so this module imports nothing above the data layer.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from .prepared import PreparedData, _as_2d_float, check_sample_weight, prepare


def check_costs_fit(problem, X, C, sample_weight) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X as a float matrix, C checked by ``problem``, the sample weights): rows of X and C must match."""
    X = _as_2d_float(X)[0]
    C = problem.check_costs(C)
    if C.shape[0] != X.shape[0]:
        raise InputError(f"X has {X.shape[0]} rows but C has {C.shape[0]}: lengths must match")
    w = check_sample_weight(sample_weight, X.shape[0])
    return X, C, w


def prepare_costs(problem, X, C, sample_weight=None, feature_names=None) -> PreparedData:
    """SPO training data: validated features (scaled, with epsilons) plus the cost vectors in ``extra["costs"]``."""
    X, C, w = check_costs_fit(problem, X, C, sample_weight)
    data = prepare(X, task="none", sample_weight=w)
    if feature_names is not None:
        data.feature_names = [str(f) for f in feature_names]
    data.extra["costs"] = C
    return data
