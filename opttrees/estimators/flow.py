"""scikit-learn estimators for the flow-based trees: FlowOCT, BendersOCT and the robust tree.

All follow sklearn's rules: ``__init__`` only stores parameters, ``fit`` validates and sets ``*_``
attributes, so they clone and work in ``GridSearchCV``. Fitted attributes: ``tree_`` (an opttrees Tree in
original units), ``solve_result_`` (the solver's SolveResult), ``classes_``, ``n_features_in_``.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..data import prepare
from ..encoding import Binarizer, IntegerEncoder
from ..errors import InputError
from ..formulations.benders import BendersOCT
from ..formulations.flow import FlowOCT, FlowStructure, check_depth, greedy_incumbent
from ..formulations.robust import RobustOCT, thermometer, thermometer_columns
from ..robust.adversary import ShiftSet, worst_case_accuracy
from ..robust.calibration import calibrate
from ..robust.shift import shifted_accuracy
from .common import FittedTreeMixin, check_X_fitted, check_time_limit
from .fitcontrol import controlled_fit

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


def _fallback_warning(est, res) -> None:
    msg = f"; {res.message}" if res.message else ""
    warnings.warn(f"{type(est).__name__}: the solver returned no solution ({res.status}{msg}); using the "
                  "greedy (CART) start tree", stacklevel=4)


class _TreeClassifierMixin(FittedTreeMixin, ClassifierMixin):
    """Tree prediction plus sklearn's accuracy ``score``."""


class FlowOCTClassifier(_TreeClassifierMixin, BaseEstimator):
    """Optimal classification tree by the FlowOCT max-flow MIO on binarised features.

    Parameters
    ----------
    max_depth : depth of the complete tree the model chooses from.
    regularization : lam in [0, 1); objective ``(1 - lam) * correct - lam * splits`` (as in the paper).
    objective : "accuracy" or "balanced_accuracy" (class-reweighted samples).
    binarization, n_thresholds : passed to :class:`~opttrees.encoding.Binarizer`. The default, "quantile"
        with 10 thresholds per feature, keeps every midpoint of a feature with at most 11 distinct values and
        10 quantile midpoints of a continuous one, plus the thresholds of CART of depth ``max_depth`` on the
        raw features (so the start tree, and hence the result, is at least as good as CART); "midpoints" (all
        of them) on continuous data makes the model grow with n x (number of distinct values): a warning
        gives the size when it will be huge.
    solver : "highs" or "scip"; mip_gap, threads, seed, verbose go to the solver.
    time_limit : seconds for the whole fit (binarisation, warm start, model build, hand-off, solve,
        extraction). Ctrl-C stops the fit and keeps the best tree so far (``fit_status_``).
    warm_start : start from a CART tree on the binary columns (also the fallback tree when the fit is
        stopped before the solver has a solution).

    After ``fit``: ``fit_status_`` ("completed", "time_limit", "interrupted"), ``fit_timings_`` and
    ``solve_result_.timings`` ("build" seconds, "n_rows", "n_cols", "n_nonzeros" of the model).
    """

    _formulation = FlowOCT
    _kind = "flow"

    def __init__(self, max_depth=2, regularization=0.0, objective="accuracy", binarization="quantile",
                 n_thresholds=10, solver="highs", time_limit=None, mip_gap=1e-6, threads=1, seed=0,
                 warm_start=True, verbose=False):
        self.max_depth = max_depth
        self.regularization = regularization
        self.objective = objective
        self.binarization = binarization
        self.n_thresholds = n_thresholds
        self.solver = solver
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.threads = threads
        self.seed = seed
        self.warm_start = warm_start
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        time_limit = check_time_limit(self.time_limit)
        self.solve_result_ = None
        with controlled_fit(self, time_limit) as ctl:
            depth = check_depth(self.max_depth)
            with ctl.stage("encode"):
                data = prepare(X, y, sample_weight=sample_weight)
                self.binarizer_ = Binarizer(self.binarization, self.n_thresholds).fit(data.X)
                if self.binarization == "quantile" and depth > 0:
                    # plus the thresholds of CART on the raw features: the start tree is then as good as CART
                    # with every midpoint available, so coarser columns never make the fit worse than CART
                    self.binarizer_.add_thresholds(data.X, *_cart_splits(data, depth))
                Z = self.binarizer_.transform(data.X)
            sw = None if sample_weight is None else data.sample_weight

            def start_tree(d):   # CART on the binary columns (d = 0: the majority class, instant)
                inc = greedy_incumbent(Z, data.y, d, data.n_classes, data.sample_weight)
                return FlowStructure(d, Z.shape[1], data.n_classes).to_tree(
                    inc, self.binarizer_.decode, data.X, data.y, data.n_classes, data.sample_weight,
                    data.codec.classes, data.feature_names)

            warm = ctl.run("warm_start", start_tree, depth, fallback=lambda: start_tree(0), threaded=True)
            size = model_size(self._kind, _merged_rows(Z, data.y) if not ctl.stop() else data.n, Z.shape[1],
                              depth, data.n_classes)
            warn_if_huge(type(self).__name__, size,
                         f"{Z.shape[1]:,} binary columns from binarization={self.binarization!r}; "
                         "binarization='quantile' with a small n_thresholds keeps it small")
            form = ctl.build(self._formulation, Z, data.y, data.n_classes, depth, X=data.X,
                             split_of_col=self.binarizer_.decode,
                             col_of_split=lambda j, t: self.binarizer_.encode_split(j, t, data.X),
                             regularization=self.regularization, objective=self.objective,
                             sample_weight=sw, classes=data.codec.classes, feature_names=data.feature_names)
            res = ctl.solve(form, warm if self.warm_start else None, solver=self.solver, mip_gap=self.mip_gap,
                            threads=self.threads, seed=self.seed, verbose=self.verbose)
            res.timings.setdefault("estimated_size", size)
            self.formulation_ = form
            self.solve_result_ = res
            if form is not None and res.has_solution:
                with ctl.stage("extract"):
                    self.tree_ = form.extract()
            else:
                if ctl.reason() != "interrupted":
                    _fallback_warning(self, res)
                self.tree_ = warm
            self.classes_ = data.codec.classes
            self.n_features_in_ = data.p
            self.feature_names_in_ = np.asarray(data.feature_names, dtype=object)
        return self


class BendersOCTClassifier(FlowOCTClassifier):
    """BendersOCT: FlowOCT's flows replaced by per-sample min-cut cuts added lazily (same optimum).

    Defaults to SCIP, whose constraint handler adds the cuts inside one branch and bound; with
    ``solver="highs"`` the cuts are added by solve–separate–resolve rounds under one time limit.
    """

    _formulation = BendersOCT
    _kind = "benders"

    def __init__(self, max_depth=2, regularization=0.0, objective="accuracy", binarization="quantile",
                 n_thresholds=10, solver="scip", time_limit=None, mip_gap=1e-6, threads=1, seed=0,
                 warm_start=True, verbose=False):
        super().__init__(max_depth=max_depth, regularization=regularization, objective=objective,
                         binarization=binarization, n_thresholds=n_thresholds, solver=solver,
                         time_limit=time_limit, mip_gap=mip_gap, threads=threads, seed=seed,
                         warm_start=warm_start, verbose=verbose)


class RobustTreeClassifier(_TreeClassifierMixin, BaseEstimator):
    """Classification tree maximising the worst-case number of correct samples under integer shifts.

    ``fit(X, y, costs=gamma, budget=epsilon)`` uses the uncertainty set
    ``sum_i sum_f gamma_if |xi_if| <= epsilon`` directly; or give ``rho`` (probability of certainty: scalar,
    per feature, or per entry) and ``lam`` in (0, 1] and the set is calibrated (paper §4) at fit time.
    With neither, the budget is 0: the nominal (non-robust) integer-threshold tree.

    feature_kinds : per feature "unbounded" (default), "bounded", "binary" (calibration and test shifts).
    lower, upper : domain bounds per feature in the encoded integer units (NaN = none).
    direction : per feature 0 (two-sided), +1 (only increases), -1 (only decreases) — set (27).
    categorical_groups : lists of column indices forming one-hot blocks — set (28).
    encoding : IntegerEncoder mode ("auto", "identity", "rank", "quantile"). "auto" keeps integer-valued
        features as they are (the paper's data model: one unit of shift is one unit of the feature) and puts
        other features on a grid of at most ``n_thresholds`` quantile cut points (one unit of shift = one
        quantile bin); "rank" uses every distinct value (n - 1 thresholds per continuous feature: a warning
        gives the model size when it will be huge).
    time_limit : seconds for the whole fit; Ctrl-C keeps the best tree so far (see FlowOCTClassifier).
    """

    def __init__(self, max_depth=2, solver="scip", time_limit=None, mip_gap=1e-6, regularization=0.0,
                 rho=None, lam=None, feature_kinds=None, lower=None, upper=None, direction=None,
                 categorical_groups=None, encoding="auto", n_thresholds=10, threads=1, seed=0, warm_start=True,
                 verbose=False):
        self.max_depth = max_depth
        self.solver = solver
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.regularization = regularization
        self.rho = rho
        self.lam = lam
        self.feature_kinds = feature_kinds
        self.lower = lower
        self.upper = upper
        self.direction = direction
        self.categorical_groups = categorical_groups
        self.encoding = encoding
        self.n_thresholds = n_thresholds
        self.threads = threads
        self.seed = seed
        self.warm_start = warm_start
        self.verbose = verbose

    # -------------------------------------------------------------------------------- calibration
    def calibrated_costs(self, X_int):
        """(costs, budget) from ``rho`` and ``lam`` for integer data (the calibration entry point)."""
        if self.rho is None or self.lam is None:
            raise InputError("calibration needs both rho and lam")
        X_int = np.asarray(X_int, dtype=np.float64)
        rho = self._rho_for(*X_int.shape) if X_int.ndim == 2 else self.rho
        return calibrate(X_int, rho, self.lam, kinds=self.feature_kinds, lower=self.lower, upper=self.upper,
                         direction=self.direction, groups=self.categorical_groups)

    def _shift_set(self, Xi, costs, budget):
        n, F = Xi.shape
        if costs is None and budget is None:
            if self.rho is not None or self.lam is not None:
                costs, budget = self.calibrated_costs(Xi)
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
        S = ShiftSet(costs, budget, lower=self.lower, upper=self.upper, direction=self.direction,
                     groups=self.categorical_groups, kinds=self.feature_kinds)
        S.check_data(Xi)
        return S

    def _rho_for(self, n, F, rho=None):
        """rho for a data set of n rows; a per-entry (n_train, F) rho does not transfer to other data."""
        rho = self.rho if rho is None else rho
        if rho is not None and np.ndim(rho) == 2 and np.shape(rho)[0] != n:
            raise InputError(f"rho has shape {np.shape(rho)} (one entry per training sample) but this data has {n} "
                             f"rows; pass a scalar, per-feature ({F},) or ({n}, {F}) rho for it (shift_score(rho=...)),"
                             " or costs=/budget= to worst_case_score")
        return rho

    def fit(self, X, y, costs=None, budget=None):
        time_limit = check_time_limit(self.time_limit)
        self.solve_result_ = None
        with controlled_fit(self, time_limit) as ctl:
            with ctl.stage("encode"):
                data = prepare(X, y)
                if self.solver not in ("scip", "highs"):
                    raise InputError(f"solver must be 'scip' or 'highs'; got {self.solver!r}")
                enc = IntegerEncoder(self.encoding, self.n_thresholds).fit(data.X)
                Xi = enc.transform(data.X).astype(np.float64)
                S = self._shift_set(Xi, costs, budget)
                cols = thermometer_columns(Xi)
            lookup = {(f, round(enc.decode_threshold(f, th), 9)): (f, th) for f, th in cols}

            def col_of_split(j, t):
                key = (j, round(float(t), 9))
                if key not in lookup:
                    raise InputError(f"split x{j} < {t:g} is not an integer threshold of the training range")
                return lookup[key]

            def split_of_col(f, th):
                return f, enc.decode_threshold(f, th)

            depth = check_depth(self.max_depth) if cols else 0

            def start(d):   # CART on the thermometer columns (d = 0: the majority class, instant)
                Zt = thermometer(Xi, cols) if cols and d else np.zeros((data.n, 0), dtype=np.int8)
                inc = greedy_incumbent(Zt, data.y, d, data.n_classes)
                struct = FlowStructure(d, len(cols), data.n_classes)
                return inc, struct, struct.to_tree(inc, lambda c: split_of_col(*cols[c]), data.X, data.y,
                                                   data.n_classes, None, data.codec.classes, data.feature_names)

            inc, struct, warm = ctl.run("warm_start", start, depth, fallback=lambda: start(0), threaded=True)
            size = model_size("robust", data.n, len(cols), depth, data.n_classes)
            warn_if_huge(type(self).__name__, size,
                         f"{len(cols):,} integer thresholds from encoding={self.encoding!r} (mode "
                         f"{enc.mode_!r}); encoding='quantile' with a small n_thresholds keeps it small")
            form = ctl.build(RobustOCT, Xi, data.y, data.n_classes, self.max_depth, S,
                             regularization=self.regularization, X_original=data.X, split_of_col=split_of_col,
                             col_of_split=col_of_split, classes=data.codec.classes, feature_names=data.feature_names)
            res = ctl.solve(form, warm if self.warm_start else None, solver=self.solver, mip_gap=self.mip_gap,
                            threads=self.threads, seed=self.seed, verbose=self.verbose)
            res.timings.setdefault("estimated_size", size)
            self.encoder_ = enc
            self.shift_set_ = S
            self.formulation_ = form
            self.solve_result_ = res
            if form is not None and res.has_solution:
                with ctl.stage("extract"):
                    self.tree_ = form.extract()
                self.worst_case_train_accuracy_ = form.worst_case_correct / data.n
            else:
                if ctl.reason() != "interrupted":
                    _fallback_warning(self, res)
                self.tree_ = warm
                # the start tree's exact worst case, in the encoded units the set is defined in
                t_int = struct.to_tree(inc, lambda c: (cols[c][0], cols[c][1] + 0.5), Xi, data.y, data.n_classes)
                self.worst_case_train_accuracy_ = worst_case_accuracy(t_int, Xi, data.y, S).worst_case_correct / data.n
            self.classes_ = data.codec.classes
            self.n_features_in_ = data.p
            self.feature_names_in_ = np.asarray(data.feature_names, dtype=object)
        return self

    # -------------------------------------------------------------------------------- evaluation
    def worst_case_score(self, X, y, costs=None, budget=None) -> float:
        """Exact worst-case accuracy on (X, y) under a set (default: calibrated from rho/lam for X)."""
        check_is_fitted(self, "tree_")
        Xa = check_X_fitted(self, X)
        Xi = self.encoder_.transform(Xa).astype(np.float64)
        S = self._shift_set(Xi, costs, budget)
        codes = np.searchsorted(self.classes_, np.asarray(y))
        if not np.array_equal(self.classes_[np.clip(codes, 0, len(self.classes_) - 1)], np.asarray(y)):
            raise InputError("y contains labels not seen during fit")
        if self.encoder_.mode_ != "identity":
            raise InputError("worst_case_score needs identity integer encoding (integer-valued features)")
        res = worst_case_accuracy(self.tree_, Xa, codes, S)
        return res.worst_case_correct / len(codes)

    def shift_score(self, X, y, rho=None, n_sets=5000, random_state=0) -> dict:
        """Worst-case and average accuracy over perturbed copies of (X, y) drawn with certainty ``rho``.

        Shifts are drawn in the encoded integer units the uncertainty set is defined in (the encoder's
        ranks for ``encoding="rank"``, the values themselves for identity encoding), with the same
        ``feature_kinds``/``lower``/``upper``/``direction``/``categorical_groups``; the shifted ranks are mapped
        back to training values (out-of-range ranks to the extreme values, which route identically) and
        classified by the tree.
        """
        check_is_fitted(self, "tree_")
        Xa = check_X_fitted(self, X)
        rho = self._rho_for(*Xa.shape, rho=rho)
        if rho is None:
            raise InputError("shift_score needs rho")
        Xi = self.encoder_.transform(Xa).astype(np.float64)
        enc = self.encoder_

        def predict_encoded(Z):
            return self.predict(enc.inverse_transform(np.rint(Z).astype(np.int64)))

        return shifted_accuracy(predict_encoded, Xi, np.asarray(y), rho, n_sets=n_sets,
                                rng=random_state, kinds=self.feature_kinds, lower=self.lower, upper=self.upper,
                                direction=self.direction, groups=self.categorical_groups)
