"""RobustTreeClassifier: the robust classification tree (Justin et al.) against integer feature shifts.

The estimator encodes features to integers, builds the uncertainty set (given, or calibrated from ``rho``
and ``lam``), and solves RobustOCT by cut generation; evaluation helpers score a tree under shifts.
"""
from __future__ import annotations

from functools import partial

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..data.binarized import ThermometerData
from ..data.prepared import prepare
from ..data.binarizers import IntegerEncoder
from ..errors import InputError
from ..formulations.flow import FlowStructure, check_depth, greedy_incumbent
from ..formulations.robust import RobustOCT
from ..params import ARRAY_LIKE, NONE, InstanceOf, Interval, Options
from ..robust.adversary import ShiftSet, worst_case_accuracy
from ..robust.calibration import calibrate
from ..robust.shift import shifted_accuracy
from .base import OptTreesEstimator, SolverMixin, store_params, warm_start_rules
from .common import check_X_fitted
from .pipeline import MIO, Start
from .flow import _TreeClassifierMixin, flow_fit, model_size, model_tree, warn_if_huge

_LISTS = (list, tuple, np.ndarray)


class RobustTreeClassifier(_TreeClassifierMixin, SolverMixin, OptTreesEstimator):
    """Classification tree maximising the worst-case number of correct samples under integer feature shifts.

    ``fit(X, y, costs=gamma, budget=epsilon)`` uses the uncertainty set
    ``sum_i sum_f gamma_if |xi_if| <= epsilon`` directly; or give ``rho`` (probability of certainty) and
    ``lam`` and the set is calibrated (paper §4) at fit time. With neither, the budget is 0: the nominal
    (non-robust) integer-threshold tree.

    Parameters
    ----------
    max_depth : int, default=2
        Depth of the complete tree the model chooses from (at most 8).
    solver : {"auto", "highs", "scip"}, default="auto"
        MIO solver; ``"auto"`` is SCIP (SCIP adds the cuts lazily in one branch and bound; HiGHS by solve-separate-resolve).
    time_limit : float or None, default=None
        Seconds for the whole fit (None or ``inf``: no limit); Ctrl-C keeps the best tree so far.
    mip_gap : float, default=1e-6
        Relative gap at which the solver stops.
    regularization : float in [0, 1), default=0.0
        Weight of the split count against the worst-case correct count (the flow papers' lambda; not
        ``lam`` below).
    rho : float, array-like or None, default=None
        Probability of certainty for calibration: a scalar, one per feature, or one per training entry.
    lam : float in (0, 1] or None, default=None
        The calibration's lambda (paper §4): the share of the probability mass the set must cover.
    feature_kinds : list or None, default=None
        Per feature "unbounded" (the default), "bounded" or "binary" (calibration and test shifts).
    lower, upper : array-like or None, default=None
        Domain bounds per feature in the encoded integer units (NaN = none).
    direction : array-like or None, default=None
        Per feature 0 (two-sided), +1 (only increases), -1 (only decreases) — set (27).
    categorical_groups : list of lists or None, default=None
        Column indices forming one-hot blocks — set (28).
    encoding : {"auto", "identity", "rank", "quantile"}, default="auto"
        :class:`~opttrees.data.binarizers.IntegerEncoder` mode. "auto" keeps integer-valued features as they are
        (the paper's data model: one unit of shift is one unit of the feature) and puts other features on a
        grid of at most ``n_thresholds`` quantile cut points; "rank" uses every distinct value (a warning
        gives the model size when it will be huge).
    n_thresholds : int, default=10
        Cut points per continuous feature for "auto" / "quantile".
    threads : int, default=1
        Solver threads.
    random_state : int, RandomState instance or None, default=0
        Seeds the solver (its own seed is derived from it).
    warm_start : "greedy" or None, default="greedy"
        "greedy" starts from CART on the thermometer columns (also the fallback tree); None from nothing.
    verbose : bool or int, default=False
        Show live solver progress.

    Attributes
    ----------
    tree_ : Tree
        The fitted tree, thresholds in the original feature units.
    worst_case_train_accuracy_ : float
        Worst-case training accuracy under the fitted uncertainty set.
    shift_set_ : ShiftSet
        The uncertainty set used.
    encoder_ : IntegerEncoder
        The fitted integer encoding.
    solve_result_ : SolveResult
        Status, objective, bound, gap, number of cuts.
    formulation_ : RobustOCT or None
        The Pyomo model (None when the fit stopped during its build).
    classes_, n_features_in_, feature_names_in_, fit_status_, fit_timings_
        As for :class:`FlowOCTClassifier`.

    Examples
    --------
    >>> import numpy as np
    >>> from opttrees import RobustTreeClassifier
    >>> X = np.array([[0], [1], [2], [3], [4], [5]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> clf = RobustTreeClassifier(max_depth=1, solver="highs").fit(X, y, costs=np.ones(1), budget=0.0)
    >>> clf.score(X, y), clf.worst_case_train_accuracy_
    (1.0, 1.0)
    """

    _parameter_rules = {   # plus SHARED_RULES and SOLVER_RULES for the others
        "rho": [ARRAY_LIKE, NONE],
        "lam": [Interval("real", 0, 1, closed="right"), NONE],
        "feature_kinds": [InstanceOf(_LISTS, "a list of 'unbounded', 'bounded' or 'binary', one per feature"),
                          NONE],
        "lower": [ARRAY_LIKE, NONE],
        "upper": [ARRAY_LIKE, NONE],
        "direction": [ARRAY_LIKE, NONE],
        "categorical_groups": [InstanceOf(_LISTS, "a list of lists of column indices"), NONE],
        "encoding": [Options("auto", "identity", "rank", "quantile")],
        "n_thresholds": [Interval("int", 1)],
        "warm_start": warm_start_rules("greedy"),
    }

    def _auto_solver(self) -> tuple[str, str]:
        return "scip", "RobustOCT's cuts are lazy constraints, which SCIP adds inside one branch and bound: SCIP"

    def __init__(self, *, max_depth=2, solver="auto", time_limit=None, mip_gap=1e-6, regularization=0.0,
                 rho=None, lam=None, feature_kinds=None, lower=None, upper=None, direction=None,
                 categorical_groups=None, encoding="auto", n_thresholds=10, threads=1, random_state=0,
                 warm_start="greedy", verbose=False):
        store_params(self, locals())

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
        """Fit on (X, y) under the set ``sum_i sum_f costs_if |xi_if| <= budget`` (or the calibrated one)."""
        return self._fit(X, y, costs=costs, budget=budget)

    # ------------------------------------------------------------------ the fit's hooks (estimators.skeleton)
    _prepare_stage = "encode"

    def _prepare(self, X, y, costs=None, budget=None):
        data = prepare(X, y)
        self.encoder_ = IntegerEncoder(self.encoding, self.n_thresholds).fit(data.X)
        tdata = ThermometerData.from_prepared(data, self.encoder_)
        self.shift_set_ = self._shift_set(tdata.X_int, costs, budget)
        return flow_fit(data, tdata)

    def _fit_mio(self, fit):
        """RobustOCT by cut generation from CART on the thermometer columns (the fallback even when the solver
        starts from nothing); the returned tree's exact worst case (``worst_case_train_accuracy_``)."""
        data, tdata, ctl, S = fit.data, fit.problem, fit.ctl, self.shift_set_
        cols = tdata.cols
        depth = check_depth(self.max_depth) if cols else 0

        def start(d):   # CART on the thermometer columns (d = 0: the majority class, instant)
            Zt = tdata.Z if cols and d else np.zeros((data.n, 0), dtype=np.int8)
            inc = greedy_incumbent(Zt, data.y, d, data.n_classes)
            struct = FlowStructure(d, len(cols), data.n_classes)
            return inc, struct, struct.to_tree(inc, tdata.split_of_col, data.X, data.y,
                                               data.n_classes, None, data.codec.classes, data.feature_names)

        inc, struct, warm = ctl.run("warm_start", start, depth, fallback=lambda: start(0), threaded=True)
        size = model_size("robust", data.n, len(cols), depth, data.n_classes)
        warn_if_huge(type(self).__name__, size,
                     f"{len(cols):,} integer thresholds from encoding={self.encoding!r} (mode "
                     f"{self.encoder_.mode_!r}); encoding='quantile' with a small n_thresholds keeps it small")
        out = self._run_mio(ctl, MIO(partial(RobustOCT, tdata, self.max_depth, S, regularization=self.regularization),
                                     starts=[Start.of("greedy", warm)], hand_start=None))
        out.result.timings.setdefault("estimated_size", size)
        form = out.form
        if out.source == "mio":
            self.worst_case_train_accuracy_ = form.worst_case_correct / data.n
        else:   # the start tree's exact worst case, in the encoded units the set is defined in
            t_int = struct.to_tree(inc, tdata.integer_split_of_col, tdata.X_int, data.y, data.n_classes)
            wc = worst_case_accuracy(t_int, tdata.X_int, data.y, S).worst_case_correct
            self.worst_case_train_accuracy_ = wc / data.n
            if form is not None:    # the formulation's figures speak about the returned tree
                form.worst_case_correct = wc
                form.recomputed_objective = form.tree_objective(out.tree)
        fit.to_user = partial(self._own_worst_case, fit, out.tree)
        return model_tree(self, fit, out)

    def _own_worst_case(self, fit, before, tree):
        """The returned tree, tidied or the single leaf: the model's figures and ``worst_case_train_accuracy_``
        follow it."""
        form = self.formulation_
        if tree is not before and form is not None:
            form.worst_case_correct = form.worst_case(form.struct.from_tree(tree, form.col_of_split)).worst_case_correct
            self.worst_case_train_accuracy_ = form.worst_case_correct / fit.data.n
        return tree

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
        n, F = Xa.shape
        rho = self._rho_for(n, F, rho=rho)
        if rho is None:
            raise InputError("shift_score needs rho")
        Xi = self.encoder_.transform(Xa).astype(np.float64)
        enc = self.encoder_

        def predict_encoded(Z):
            return self.predict(enc.inverse_transform(np.rint(Z).astype(np.int64)))

        return shifted_accuracy(predict_encoded, Xi, np.asarray(y), rho, n_sets=n_sets,
                                rng=random_state, kinds=self.feature_kinds, lower=self.lower, upper=self.upper,
                                direction=self.direction, groups=self.categorical_groups)
