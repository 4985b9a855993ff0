"""The estimator side of ``constraints=[...]`` that needs the fit pipeline: ``constraint_report`` and
``fairness_gap`` on fitted estimators (:class:`ConstrainedMixin`) and the constrained DP's start for the MIO
(:func:`constrained_dp_start`). Binding, start repair and the post-fit check are
:mod:`opttrees.constraints.binding`; the constraints a DP solves, :mod:`opttrees.constraints.dp_routes`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..constraints.binding import ConstraintContext, dp_start_name
from ..constraints.checks import check_constraints, report
from ..constraints.dp_routes import dp_part, fair_dp_depth, solve_dp_constrained
from ..constraints.fairness import FAIRNESS
from ..errors import InputError

if TYPE_CHECKING:
    from ..tree import Tree


class ConstrainedMixin:
    """Constraint values and fairness gaps of a fitted estimator on any data."""

    tree_: Tree   # the fitted tree, set by the estimator's fit (checked with check_is_fitted before use)

    def constraint_report(self, X, y=None, sample_weight=None) -> dict:
        """{name: {"value", "bound", "sense", "satisfied"}} of the fitted ``constraints`` on (X, y)."""
        from sklearn.utils.validation import check_is_fitted

        from .common import check_X_fitted

        check_is_fitted(self, "tree_")
        cons = check_constraints(getattr(self, "constraints", None))
        Xm = check_X_fitted(self, X)
        return report(cons, self.tree_, _with_names(Xm, self), None if y is None else np.asarray(y), sample_weight)

    def fairness_gap(self, X, y, protected, notion: str = "statistical_parity", positive=None, legit=None,
                     sample_weight=None) -> float:
        """The fitted tree's gap between groups of ``protected`` on (X, y) under ``notion`` (one of
        statistical_parity, conditional_statistical_parity, predictive_equality, equal_opportunity,
        equalized_odds)."""
        from sklearn.utils.validation import check_is_fitted

        from .common import check_X_fitted

        check_is_fitted(self, "tree_")
        kinds = {cls.notion: cls for cls in FAIRNESS}
        if notion not in kinds:
            raise InputError(f"notion={notion!r} is not a fairness notion; one of {sorted(kinds)}")
        kw = {"legit": legit} if notion == "conditional_statistical_parity" else {}
        c = kinds[notion](protected, 1.0, positive=positive, allow_split=True, **kw)
        Xm = check_X_fitted(self, X)
        return c.value(self.tree_, _with_names(Xm, self), np.asarray(y), sample_weight)


def _with_names(Xm: np.ndarray, est):
    """X with the tree's feature names as DataFrame columns (constraints may name columns)."""
    names = est.tree_.feature_names
    if names is None:
        return Xm
    import pandas as pd

    return pd.DataFrame(Xm, columns=[str(c) for c in names])


def constrained_dp_start(ctx: ConstraintContext, ctl, depth: int, *, min_samples_leaf: int = 1,
                         alpha: float = 0.0, binarizer=None, binarization: str = "quantile", n_thresholds: int = 10,
                         bound_of=None):
    """The constrained DP's tree under the constraints among ``ctx.cons`` it solves (group fairness by the Pareto
    DP, feature budgets by maximal feature sets; at most half the time left): a start for the constrained MIO (the
    pipeline repairs it when other constraints remain), None when it finds none in time.

    The split set is ``binarizer`` (the model's own binary columns) or ``binarization``. The fairness DP runs at
    the deepest depth its work allows (:func:`opttrees.constraints.dp_routes.fair_dp_depth`), over quantiles when every
    midpoint is too many columns for the full depth. ``bound_of``: given when a finished run over the MIO's own
    split set at the full ``depth`` solves a relaxation of the MIO (the constrained problem itself when it
    solves every constraint); ``bound_of(tree)`` then becomes ``ctx.bound_value`` (:meth:`ConstraintContext.tighten`).
    """
    from ..data.binarizers import Binarizer
    from ..dp.planner import dp_seconds
    from .pipeline import Start

    part = dp_part(ctx.cons)
    if not part:
        return None
    seconds = dp_seconds(ctl.remaining())
    run_depth = int(depth)
    if any(isinstance(c, FAIRNESS) for c in part):
        columns = binarizer or Binarizer(binarization, int(n_thresholds)).fit(ctx.data.X)
        run_depth = fair_dp_depth(ctx.data, columns, int(depth), seconds)
        if binarizer is None and binarization == "midpoints" and run_depth < depth:   # too many columns: fewer
            quantiles = Binarizer("quantile", int(n_thresholds)).fit(ctx.data.X)
            if fair_dp_depth(ctx.data, quantiles, int(depth), seconds) > run_depth:
                binarization, bound_of = "quantile", None
                run_depth = fair_dp_depth(ctx.data, quantiles, int(depth), seconds)
    if run_depth == 0:
        return None
    data = ctx.data
    try:
        with ctl.stage("warm_start"):
            tree, res = solve_dp_constrained(part, data.X, ctx.y, run_depth, int(min_samples_leaf), float(alpha),
                                                 data.sample_weight, seconds, data.feature_names, binarizer=binarizer,
                                                 binarization=binarization, n_thresholds=int(n_thresholds))
    except InputError:
        return None
    if bound_of is not None and res.status == "optimal" and run_depth == int(depth):
        ctx.bound_value = float(bound_of(tree))
        ctx.bound_exact = len(part) == len(ctx.cons)
    return Start.of(dp_start_name(ctx.cons), tree)   # repaired by the MIO pipeline when other constraints remain
