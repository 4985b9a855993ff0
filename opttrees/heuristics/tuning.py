"""Algorithm 2.7 TUNE: depth grid x batch cost-complexity pruning on a validation set.

For each depth the local search runs with alpha = 0 from ``n_restarts`` starts; the best 10% of those
trees (by training objective) are batch-pruned against the validation set (Algorithm 2.6). The depth with
the lowest averaged validation error wins (ties: the shallower depth). Refitting on train + validation with
the tuned (depth, alpha) is the caller's job (see :class:`opttrees.estimators.tuning.OptimalTreeCV`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..data.prepared import PreparedData
from ..errors import InputError
from .core import MAX_DEPTH, check_depth, make_problem
from .local_search import _seeds, local_search
from .pruning import batch_tune_cp


@dataclass
class TuneResult:
    alpha: float
    depth: int
    val_error: float
    table: list = field(default_factory=list)  # one dict per depth: depth, alpha, val_error


def _is_int(v) -> bool:
    return not isinstance(v, (bool, np.bool_)) and isinstance(v, (int, np.integer))


def check_depth_grid(max_depth, depths=None) -> list:
    """Validate ``max_depth`` and ``depths`` before any tuning work; return the depth grid.

    Both must be integers >= 0 within the heuristics' depth limit; floats are rejected rather than truncated.
    Without ``depths`` the grid is 1..max_depth.
    """
    if not _is_int(max_depth) or max_depth < 0:
        raise InputError(f"max_depth must be an integer >= 0; got {max_depth!r}")
    if max_depth > MAX_DEPTH:
        check_depth(max_depth)  # raises with the limit and its reason
    if depths is None:
        grid = list(range(1, int(max_depth) + 1))
    else:
        if isinstance(depths, (str, bytes)) or np.ndim(depths) != 1:
            raise InputError(f"depths must be a non-empty list of integers >= 0; got {depths!r}")
        grid = []
        for d in depths:
            if not _is_int(d) or d < 0:
                raise InputError(f"depths must contain integers >= 0; got {d!r} in {depths!r}")
            if d > MAX_DEPTH:
                raise InputError(f"depths contains {d}, above the limit {MAX_DEPTH}: the heuristics' heap arrays")
            grid.append(int(d))
    if not grid:
        raise InputError("no depths to tune over (depths is empty or max_depth is 0)")
    return grid


def tune(train: PreparedData, X_val, y_val, max_depth: int = 10, depths=None, n_restarts: int = 100,
         min_samples_leaf: int = 1, split_type: str = "parallel", batch_fraction: float = 0.1, random_state=None,
         n_jobs: int | None = 1, n_hyperplane_restarts: int = 5, loss: str | None = None,
         time_limit=None) -> TuneResult:
    """Tune (depth, alpha) by Algorithm 2.7; validation error is the error rate or the MSE.

    time_limit: seconds or an :class:`opttrees.interrupt.Budget` (shared clock); when it expires or Ctrl-C sets
    :data:`opttrees.interrupt.STOP`, depths not yet started are skipped (the first always runs, possibly
    cut short: see :func:`local_search`) and the best depth so far wins.
    """
    from ..interrupt import Budget
    budget = Budget(time_limit)
    if not 0 < batch_fraction <= 1:
        raise InputError(f"batch_fraction must be in (0, 1]; got {batch_fraction!r}")
    depths = check_depth_grid(max_depth, depths)
    prob = make_problem(train, loss)
    seeds = _seeds(random_state, len(depths))
    k = max(1, int(math.ceil(batch_fraction * n_restarts)))
    best = None
    table = []
    for D, s in zip(depths, seeds):
        if best is not None and budget.stop():
            break
        res = local_search(train, D, 0.0, min_samples_leaf, n_restarts, split_type, int(s), n_jobs,
                           n_hyperplane_restarts, loss, return_all=True, time_limit=budget)
        a, v = batch_tune_cp(res.trees[:k], prob, X_val, y_val)
        table.append({"depth": D, "alpha": a, "val_error": v, "train_objective": res.objective})
        if best is None or v < best[2] - 1e-12:
            best = (a, D, v)
    assert best is not None  # the depth grid is never empty and the first depth always runs
    return TuneResult(best[0], best[1], best[2], table)
