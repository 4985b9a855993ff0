"""scikit-learn estimators for the flow-based trees: FlowOCT, BendersOCT and the robust tree.

All follow sklearn's rules: ``__init__`` only stores parameters, ``fit`` validates and sets ``*_``
attributes, so they clone and work in ``GridSearchCV``. Fitted attributes: ``tree_`` (an opttrees Tree in
original units), ``solve_result_`` (the solver's SolveResult), ``classes_``, ``n_features_in_``.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..data import prepare
from ..encoding import Binarizer, IntegerEncoder
from ..errors import InputError
from ..formulations.benders import BendersOCT
from ..formulations.flow import FlowOCT, greedy_incumbent
from ..formulations.robust import RobustOCT
from ..robust.adversary import ShiftSet, worst_case_accuracy
from ..robust.calibration import calibrate
from ..robust.shift import shifted_accuracy
from .common import FittedTreeMixin, check_X_fitted


def _solve(formulation, est, warm_tree):
    from ..solvers import solve  # imported lazily: the solver layer is optional at import time

    return solve(formulation, solver=est.solver, time_limit=est.time_limit, mip_gap=est.mip_gap,
                 threads=est.threads, seed=est.seed, warm_start=warm_tree, verbose=est.verbose)


class _TreeClassifierMixin(FittedTreeMixin, ClassifierMixin):
    """Tree prediction plus sklearn's accuracy ``score``."""


class FlowOCTClassifier(_TreeClassifierMixin, BaseEstimator):
    """Optimal classification tree by the FlowOCT max-flow MIO on binarised features.

    Parameters
    ----------
    max_depth : depth of the complete tree the model chooses from.
    regularization : lam in [0, 1); objective ``(1 - lam) * correct - lam * splits`` (as in the paper).
    objective : "accuracy" or "balanced_accuracy" (class-reweighted samples).
    binarization, n_thresholds : passed to :class:`~opttrees.encoding.Binarizer`.
    solver : "highs" or "scip"; time_limit (s), mip_gap, threads, seed, verbose go to the solver.
    warm_start : start from a CART tree on the binary columns.
    """

    _formulation = FlowOCT

    def __init__(self, max_depth=2, regularization=0.0, objective="accuracy", binarization="midpoints",
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

    def _build(self, X, y, sample_weight):
        data = prepare(X, y, sample_weight=sample_weight)
        self.binarizer_ = Binarizer(self.binarization, self.n_thresholds).fit(data.X)
        Z = self.binarizer_.transform(data.X)
        form = self._formulation(Z, data.y, data.n_classes, self.max_depth, X=data.X,
                                 split_of_col=self.binarizer_.decode,
                                 col_of_split=lambda j, t: self.binarizer_.encode_split(j, t, data.X),
                                 regularization=self.regularization, objective=self.objective,
                                 sample_weight=None if sample_weight is None else data.sample_weight,
                                 classes=data.codec.classes, feature_names=data.feature_names)
        return data, Z, form

    def fit(self, X, y, sample_weight=None):
        data, Z, form = self._build(X, y, sample_weight)
        warm = None
        if self.warm_start:
            inc = greedy_incumbent(Z, data.y, form.depth, data.n_classes, data.sample_weight)
            warm = form.struct.to_tree(inc, form.split_of_col, data.X, data.y, data.n_classes, data.sample_weight,
                                       data.codec.classes, data.feature_names)
        self.formulation_ = form
        self.solve_result_ = _solve(form, self, warm)
        self.tree_ = form.extract()
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

    def __init__(self, max_depth=2, regularization=0.0, objective="accuracy", binarization="midpoints",
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
    encoding : IntegerEncoder mode ("auto", "identity", "rank").
    """

    def __init__(self, max_depth=2, solver="scip", time_limit=None, mip_gap=1e-6, regularization=0.0,
                 rho=None, lam=None, feature_kinds=None, lower=None, upper=None, direction=None,
                 categorical_groups=None, encoding="auto", threads=1, seed=0, warm_start=True, verbose=False):
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
        data = prepare(X, y)
        if self.solver not in ("scip", "highs"):
            raise InputError(f"solver must be 'scip' or 'highs'; got {self.solver!r}")
        enc = IntegerEncoder(self.encoding).fit(data.X)
        Xi = enc.transform(data.X).astype(np.float64)
        S = self._shift_set(Xi, costs, budget)
        from ..formulations.robust import thermometer_columns
        lookup = {(f, round(enc.decode_threshold(f, th), 9)): (f, th) for f, th in thermometer_columns(Xi)}

        def col_of_split(j, t):
            key = (j, round(float(t), 9))
            if key not in lookup:
                raise InputError(f"split x{j} < {t:g} is not an integer threshold of the training range")
            return lookup[key]

        form = RobustOCT(Xi, data.y, data.n_classes, self.max_depth, S, regularization=self.regularization,
                         X_original=data.X, split_of_col=lambda f, th: (f, enc.decode_threshold(f, th)),
                         col_of_split=col_of_split, classes=data.codec.classes, feature_names=data.feature_names)
        warm = None
        if self.warm_start:
            inc = greedy_incumbent(form.Z, data.y, form.depth, data.n_classes)
            warm = form.struct.to_tree(inc, form.split_of_col, data.X, data.y, data.n_classes, None,
                                       data.codec.classes, data.feature_names)
        self.encoder_ = enc
        self.shift_set_ = S
        self.formulation_ = form
        self.solve_result_ = _solve(form, self, warm)
        self.tree_ = form.extract()
        self.worst_case_train_accuracy_ = form.worst_case_correct / data.n
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
