"""scikit-learn estimators for the flow-based trees FlowOCT and BendersOCT, and the flow family's shared
helpers (model-size estimate and warning, start-tree fallback warning) that the robust tree reuses.
"""
from __future__ import annotations

import warnings
from functools import partial

import numpy as np
from sklearn.base import ClassifierMixin

from ..data.binarized import BinarizedData
from ..data.prepared import prepare
from ..dp.planner import DPCost, dp_statistics
from ..data.binarizers import Binarizer
from ..formulations.benders import BendersOCT
from ..formulations.flow import FlowOCT, FlowStructure, check_depth, greedy_incumbent
from ..params import BOOLEAN, Interval, Options
from .base import OptTreesEstimator, SolverMixin, store_params, warm_start_rules
from ..constraints.binding import CONSTRAINT_RULES, ConstraintContext, own_objective
from .constrained import ConstrainedMixin, constrained_dp_start
from .common import FittedTreeMixin, root_leaf
from .pipeline import MIO, Start
from .skeleton import Fit

#: a model above either size gets a warning before it is built (minutes of Pyomo build, GBs in SCIP)
HUGE_NONZEROS = 5_000_000
HUGE_COLUMNS = 200_000


def model_size(kind: str, n_rows: int, n_cols: int, depth: int, n_classes: int) -> tuple[int, int, int]:
    """(rows, columns, nonzeros) of a flow-family model before cuts, as the solver will see it.

    kind: "flow" (FlowOCT: flows per row and node), "benders" (master: tree + one g per row) or "robust"
    (master: tree + one t per row). ``n_rows`` = training rows after merging identical ones, ``n_cols`` =
    binary (or thermometer) columns. The tree block alone has (2^d - 1) * n_cols branching variables.
    """
    N, L = 2 ** depth - 1, 2 ** depth
    tree_rows = N + L + (N + L)
    tree_cols = N * n_cols + (N + L) * (1 + n_classes)
    tree_nnz = N * (n_cols + 1) + L + sum(d * 2 ** d for d in range(1, depth + 1)) + (N + L) * (n_classes + 1)
    if kind != "flow":
        return tree_rows, tree_cols + n_rows, tree_nnz
    rows = tree_rows + n_rows * (4 * N + L)
    cols = tree_cols + n_rows * (2 * N + L)
    nnz = tree_nnz + n_rows * (N * (n_cols + 8) + 2 * L)
    return rows, cols, nnz


def warn_if_huge(name: str, size: tuple[int, int, int], advice: str) -> None:
    rows, cols, nnz = size
    if nnz > HUGE_NONZEROS or cols > HUGE_COLUMNS:
        warnings.warn(f"{name}: the model will have about {rows:,} rows x {cols:,} columns and {nnz:,} nonzeros "
                      f"before cuts; building it may take minutes and GBs of memory. {advice}", stacklevel=4)


def _merged_rows(Z: np.ndarray, y: np.ndarray) -> int:
    """Number of distinct (binary row, label) pairs: the rows the flow model keeps after merging."""
    packed = np.column_stack([np.packbits(np.asarray(Z, dtype=bool), axis=1),
                              np.asarray(y, dtype=np.int64).view(np.uint8).reshape(len(y), -1)])
    return len(np.unique(np.ascontiguousarray(packed).view(f"V{packed.shape[1]}")))


def _cart_splits(data, depth: int):
    """(features, thresholds) of the splits of CART (gini) of this depth on the raw training features."""
    from sklearn.tree import DecisionTreeClassifier

    t = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(data.X, data.y,
                                                                   sample_weight=data.sample_weight).tree_
    inner = t.children_left >= 0
    return t.feature[inner], t.threshold[inner]


class _TreeClassifierMixin(FittedTreeMixin, ClassifierMixin):
    """Tree prediction plus sklearn's accuracy ``score``."""


class FlowOCTClassifier(ConstrainedMixin, _TreeClassifierMixin, SolverMixin, OptTreesEstimator):
    """Optimal classification tree by the FlowOCT max-flow MIO on binarised features (Aghaei et al. 2021).

    Objective, as in the paper: maximise ``(1 - regularization) * correct - regularization * splits``.

    Parameters
    ----------
    max_depth : int, default=2
        Depth of the complete tree the model chooses from (at most 8).
    regularization : float in [0, 1), default=0.0
        The paper's lambda: the weight of the split count against the correct classifications.
    objective : {"accuracy", "balanced_accuracy"}, default="accuracy"
        Correct classifications counted per sample, or class-reweighted so every class weighs the same.
    binarization : {"quantile", "midpoints"}, default="quantile"
        How features become binary columns (:class:`~opttrees.data.binarizers.Binarizer`). "quantile" keeps every
        midpoint of a feature with at most ``n_thresholds + 1`` distinct values and ``n_thresholds``
        quantile midpoints of a continuous one, plus the thresholds of CART of depth ``max_depth`` on the raw
        features (so the start tree, and hence the result, is at least as good as CART); "midpoints" (all
        of them) on continuous data makes the model grow with n x (distinct values): a warning gives the
        size when it will be huge.
    n_thresholds : int, default=10
        Thresholds per feature for "quantile".
    solver : {"auto", "highs", "scip"}, default="auto"
        MIO solver. ``"auto"``: HiGHS for FlowOCT (a linear MIO); SCIP for BendersOCT, whose cuts SCIP adds
        lazily inside one branch and bound (HiGHS has no lazy constraints: it re-solves round by round).
    time_limit : float or None, default=None
        Seconds for the whole fit (binarisation, warm start, model build, hand-off, solve, extraction);
        None or ``inf``: no limit. Ctrl-C stops the fit and keeps the best tree so far (``fit_status_``).
    mip_gap : float, default=1e-6
        Relative gap at which the solver stops.
    threads : int, default=1
        Solver threads.
    random_state : int, RandomState instance or None, default=0
        Seeds the solver (its own seed is derived from it).
    warm_start : {"auto", "greedy", "dp"} or None, default="auto"
        "auto": "dp" when the dynamic program over the model's binary columns is predicted to fit half of the
        time left and its memory cap (``opttrees.dp.planner.dp_fits``), else "greedy";
        ``solve_result_.plan`` says which and why. "greedy" starts the solver from CART on the binary columns
        (that tree is also the fallback when the fit stops before the solver has a solution); "dp" from the
        dynamic program's optimal tree over the same binary columns (:mod:`opttrees.dp.bound`; it may use half
        of the time left), which is the MIO optimum, so the solver only has to prove it; None: no start.
    dp_bound : bool or "auto", default="auto"
        "auto": True when the DP fits (as for ``warm_start``). True: give the solver the dynamic program's
        optimum over the same columns as a bound on the objective (``solve(..., objective_bound=...)``): the fit
        is proven optimal (``solve_result_.proof == "dp-bound"``) as soon as the solver's tree reaches it. One DP
        run serves ``warm_start="dp"`` too.
    verbose : bool or int, default=False
        Show live solver progress.
    constraints : list of opttrees.constraints objects or None, default=None
        Side constraints (fairness, feature budgets, monotonicity, leaf support; :mod:`opttrees.constraints`).
        Start trees that break them are pruned to feasible ones or dropped; the DP optimum stays a bound.

    Attributes
    ----------
    tree_ : Tree
        The fitted tree, thresholds in the original feature units.
    constraint_values_ : dict
        Each constraint's value on the training data ({} without constraints).
    solve_result_ : SolveResult
        Status, objective, bound, gap; ``timings`` has "build" seconds and the model's "n_rows", "n_cols",
        "n_nonzeros".
    formulation_ : FlowOCT or None
        The Pyomo model (None when the fit stopped during its build).
    binarizer_ : Binarizer
        The fitted feature binariser.
    classes_ : ndarray
        The class labels.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Feature names.
    fit_status_, fit_timings_ : str, dict
        "completed", "time_limit" or "interrupted"; seconds per stage.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from opttrees import FlowOCTClassifier
    >>> X, y = load_wine(return_X_y=True)
    >>> res = FlowOCTClassifier(max_depth=1, n_thresholds=5, time_limit=30).fit(X, y).solve_result_
    >>> res.status, res.plan["start"], res.plan["bound"]
    ('optimal', 'dp', 'dp-bound')
    """

    _formulation = FlowOCT
    _kind = "flow"
    _parameter_rules = {   # plus SHARED_RULES (max_depth, regularization, solver settings) for the others
        "objective": [Options("accuracy", "balanced_accuracy")],
        "binarization": [Options("quantile", "midpoints")],
        "n_thresholds": [Interval("int", 1)],
        "warm_start": warm_start_rules("auto", "greedy", "dp"),
        "dp_bound": [BOOLEAN, Options("auto")],
        **CONSTRAINT_RULES,
    }

    def __init__(self, *, max_depth=2, regularization=0.0, objective="accuracy", binarization="quantile",
                 n_thresholds=10, solver="auto", time_limit=None, mip_gap=1e-6, threads=1, random_state=0,
                 warm_start="auto", dp_bound="auto", verbose=False, constraints=None):
        store_params(self, locals())

    # ------------------------------------------------------------------ the fit's hooks (estimators.skeleton)
    _prepare_stage = "encode"

    def _prepare(self, X, y, sample_weight=None) -> Fit:
        depth = check_depth(self.max_depth)
        data = prepare(X, y, sample_weight=sample_weight)
        self.binarizer_ = Binarizer(self.binarization, self.n_thresholds).fit(data.X)
        if self.binarization == "quantile" and depth > 0:
            # plus the thresholds of CART on the raw features: the start tree is then as good as CART with every
            # midpoint available, so coarser columns never make the fit worse than CART
            self.binarizer_.add_thresholds(data.X, *_cart_splits(data, depth))
        return flow_fit(data, BinarizedData.from_prepared(data, self.binarizer_))

    def _context(self, fit, cons):
        """CART-style refit, and the misclassification count plus the regularisation per split as the score for
        choosing repairs."""
        from ..heuristics.core import make_problem, refit_leaves

        prob, lam = make_problem(fit.data), float(self.regularization)
        own = own_objective(prob, 0.0)
        return ConstraintContext(self, cons, fit.data, lambda t: refit_leaves(t, prob), lambda t: own(t) + lam * t.n_splits)

    def _fit_mio(self, fit):
        """FlowOCT / BendersOCT from CART on the binary columns (the fallback even when the solver starts from
        nothing), the DP over the model's columns as start and bound, the constrained DP's start."""
        data, bdata, ctl, depth = fit.data, fit.problem, fit.ctl, check_depth(self.max_depth)
        Z = bdata.Z
        start_tree = partial(_cart_on_columns, data, bdata)
        warm = ctl.run("warm_start", start_tree, depth, fallback=lambda: start_tree(0), threaded=True)
        size = model_size(self._kind, _merged_rows(Z, data.y) if not ctl.stop() else data.n, Z.shape[1],
                          depth, data.n_classes)
        warn_if_huge(type(self).__name__, size, f"{Z.shape[1]:,} binary columns from binarization="
                     f"{self.binarization!r}; binarization='quantile' with a small n_thresholds keeps it small")
        build = partial(self._formulation, bdata, depth, regularization=self.regularization, objective=self.objective)
        out = self._run_mio(ctl, MIO(build, starts=[Start.of("greedy", warm)], hand_start=None, constraints=fit.ctx,
                                     late_starts=[partial(self._constrained_start, fit)] if fit.ctx else []),
                            dp_bound=self.dp_bound, cost=DPCost(data.n, depth, Z.shape[1], dp_statistics(data),
                                                                "the DP over the model's binary columns"))
        out.result.timings.setdefault("estimated_size", size)
        return model_tree(self, fit, out)

    def _constrained_start(self, fit, form, bound, plan):
        """Over the model's own columns, with plain accuracy, a finished run bounds the constrained MIO."""
        if plan.start != "dp":
            return None
        plain = float(self.regularization) == 0.0 and self.objective == "accuracy"
        return constrained_dp_start(fit.ctx, fit.ctl, check_depth(self.max_depth), binarizer=self.binarizer_,
                                    bound_of=form.tree_objective if plain and bound is not None else None)


def _cart_on_columns(data, bdata, depth: int):
    """CART on the binary columns as a tree (depth 0: the majority class, instant)."""
    inc = greedy_incumbent(bdata.Z, data.y, depth, data.n_classes, data.sample_weight)
    return FlowStructure(depth, bdata.Z.shape[1], data.n_classes).to_tree(
        inc, bdata.split_of_col, data.X, data.y, data.n_classes, data.sample_weight, data.codec.classes,
        data.feature_names)


def flow_fit(data, model_data) -> Fit:
    """The :class:`~opttrees.estimators.skeleton.Fit` of the flow family (FlowOCT, BendersOCT, RobustOCT): the
    model's data as the problem, the majority-class leaf, no ``objective_``; the built model's own objective
    (maximised) judges the tidied tree (:func:`model_tree`), and without a built model (stopped before it) only the
    splits that change no training prediction are tidied."""
    from ..heuristics.core import leaf_problem, refit_leaves

    def leaf(tree):
        one = refit_leaves(root_leaf(tree), leaf_problem(data))
        one.classes = list(data.codec.classes)
        return one
    return Fit(data, model_data, leaf=leaf, objective=False, classes=data.codec.classes,
               stats=lambda t: dict(X=data.X, y=data.y, sample_weight=data.sample_weight, criterion="gini",
                                    n_classes=data.n_classes))


def model_tree(est, fit, out):
    """The MIO outcome's tree, with ``formulation_`` set and the built model's objective judging the epilogue."""
    est.formulation_ = out.form
    if out.form is not None:
        fit.score, fit.sense = out.form.tree_objective, int(out.form.sense)
    return out.tree


class BendersOCTClassifier(FlowOCTClassifier):
    """BendersOCT: FlowOCT's flows replaced by per-sample min-cut cuts added lazily (same optimum).

    Defaults to SCIP, whose constraint handler adds the cuts inside one branch and bound; with
    ``solver="highs"`` the cuts are added by solve–separate–resolve rounds under one time limit.

    Parameters
    ----------
    max_depth, regularization, objective, binarization, n_thresholds, time_limit, mip_gap, threads, \
random_state, warm_start, dp_bound, verbose, constraints
        As for :class:`FlowOCTClassifier` (``regularization`` is the paper's lambda).
    solver : {"auto", "highs", "scip"}, default="auto"
        MIO solver; ``"auto"`` is SCIP (lazy constraints).

    Attributes
    ----------
    tree_, solve_result_, formulation_, binarizer_, classes_, n_features_in_, feature_names_in_, \
fit_status_, fit_timings_, constraint_values_
        As for :class:`FlowOCTClassifier`; ``solve_result_.n_lazy_cuts`` counts the cuts added.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from opttrees import BendersOCTClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> BendersOCTClassifier(max_depth=1, time_limit=30).fit(X, y).solve_result_.proven_optimal
    True
    """

    _formulation = BendersOCT
    _kind = "benders"

    def _auto_solver(self) -> tuple[str, str]:
        return "scip", "BendersOCT's cuts are lazy constraints, which SCIP adds inside one branch and bound: SCIP"

    def __init__(self, *, max_depth=2, regularization=0.0, objective="accuracy", binarization="quantile",
                 n_thresholds=10, solver="auto", time_limit=None, mip_gap=1e-6, threads=1, random_state=0,
                 warm_start="auto", dp_bound="auto", verbose=False, constraints=None):
        store_params(self, locals())
