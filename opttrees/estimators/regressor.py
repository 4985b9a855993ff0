"""OptimalTreeRegressor: ORT / ORT-H trees with constant leaves, by MIO, Dunn's local search, greedily or by DP,
and ORT-L / ORT-LH trees with lasso (linear) leaves, by local search or MIO."""
from __future__ import annotations

import math
from functools import partial
import warnings

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..data.prepared import TargetScaling, prepare, standardize_target
from ..errors import InputError
from ..formulations.ort import ORT
from ..formulations.ort_linear import ORTLinear
from ..params import NONE, Interval, Method, Needs, Options, When, methods, uses
from .base import OptTreesEstimator, SolverMixin, store_params, warm_start_rules
from ..constraints.dp_routes import dp_solvable, solve_dp_constrained
from ..constraints.checks import check_constraints
from ..constraints.binding import CONSTRAINT_RULES, ConstraintContext, bind, own_objective, verify
from .constrained import ConstrainedMixin
from .common import (TreeAttributesMixin, check_X_fitted, encode_categories, finish_fit, record_display_bounds,
                     record_node_stats, root_leaf)
from .classifier import (DP_RULES, DP_USES, LOCAL_SEARCH_USES, MARGIN_RULES, MIO_USES, NO_NODE_BUDGET, PARALLEL_ONLY,
                         fit_dp_tree)
from .fitcontrol import controlled_fit, warn_time_limit
from .pipeline import MIO, Start
from ..heuristics import greedy_tree, local_search
from ..heuristics.core import LeafProblem, make_problem, objective, refit_leaves
from ..heuristics.linear_leaves import check_leaf_penalty, linear_leaf_tree, linear_local_search, linear_tree_objective
from ..progress import fmt



#: linear leaves (ORT-L) / constant leaves: the conditions of the rules below
LINEAR = When("leaf_model", (Options("linear"),))
CONSTANT = When("leaf_model", (Options("constant"),))


#: what linear leaves need beyond the MIO: the local search fits lasso leaves (squared loss, l1, unbounded)
CONSTANT_LEAVES = Needs("leaf_model", (Options("constant"),), "leaf_model='linear' needs method='local-search' or "
                        "'mio'")
LINEAR_BY_LASSO = (
    Needs("loss", (Options("squared"),), "lasso leaves fit squared loss; use loss='squared', or method='mio' for "
          "absolute loss", when=LINEAR),
    Needs("leaf_penalty_type", (Options("l1"),), "the local search fits lasso leaves (leaf_penalty_type='l1'); "
          "l0 needs method='mio'", when=LINEAR),
    Needs("coef_bound", (NONE,), "the local search's lasso leaves are unbounded; coef_bound needs method='mio'"),
)
#: coef_bound bounds the MIO's linear leaves only
COEF_BOUND_LINEAR = Needs("coef_bound", (NONE,), "coef_bound needs leaf_model='linear' and method='mio'",
                          when=CONSTANT)
#: the lasso leaves' settings mean something with linear leaves only, whatever the method
LINEAR_LEAVES_USE = (uses("leaf_penalty", leaf_model=("linear",)), uses("leaf_penalty_type", leaf_model=("linear",)))

class OptimalTreeRegressor(ConstrainedMixin, TreeAttributesMixin, RegressorMixin, SolverMixin, OptTreesEstimator):
    """Regression tree (ORT / ORT-H) minimising loss / L̂ + alpha * complexity (thesis ch. 4), with constant
    leaves or, ``leaf_model="linear"``, lasso leaves (ORT-L / ORT-LH, thesis ch. 5: + leaf_penalty * Σ ||β_t|| / s_y).

    L̂ is the same loss of the root-only constant tree, so ``alpha`` and ``leaf_penalty`` mean the same thing on
    every data set. The complexity is the number of splits (parallel) or of non-zero split coefficients
    (hyperplane). Leaf coefficients are penalised on the features min-max scaled to [0, 1] on the training
    data; the tree stores them in original units, so ``predict`` takes raw X. Every method fits a standardised
    target (y - mean) / s (:func:`opttrees.data.prepared.standardize_target`) and the tree is mapped back to y's units, so an
    offset or scale of y changes neither the tree nor ``objective_``.

    Parameters
    ----------
    max_depth : int, default=2
        Maximum depth of the tree (at most 12).
    min_samples_leaf : int, default=1
        Minimum number of training samples in every leaf.
    alpha : float, default=0.0
        Complexity penalty per split on the normalised objective's scale.
    method : {"local-search", "mio", "greedy", "dp"}, default="local-search"
        ``"local-search"``: best of ``n_restarts`` restarts of Dunn's local search (the thesis's method);
        ``"mio"``: the ORT model (4.8) (ORT-H with hyperplane splits) solved by ``solver`` from ``warm_start``,
        with explicit bounds on the fitted values so its big-M is valid (:class:`opttrees.formulations.ORT`);
        ``"greedy"``: CART-like, then pruned with alpha (parallel splits only); ``"dp"``: the optimal tree over
        a binarisation of the features (``binarization``) by dynamic programming (STreeD,
        :func:`opttrees.dp.solve_dp`; squared loss only).
    n_restarts : int, default=100
        Local-search restarts.
    split_type : {"parallel", "hyperplane"}, default="parallel"
        ORT or ORT-H (hyperplanes: local search only).
    n_hyperplane_restarts : int, default=5
        Restarts of each hyperplane-split search.
    loss : {"squared", "absolute"}, default="squared"
        SSE with mean leaves, or the sum of absolute errors with weighted-median leaves (robust to outliers
        in y; not with ``method="dp"``). With ``method="mio"`` squared loss is a quadratic MIO that only
        ``solver="scip"`` solves; absolute loss is linear (HiGHS or SCIP).
    hyperplane_margin : float, default=0.005
        ORT-H's margin mu in min-max scaled units (as OptimalTreeClassifier; ``method="mio"``,
        ``split_type="hyperplane"`` only).
    solver : {"auto", "highs", "scip"}, default="auto"
        MIO solver (``method="mio"`` only). ``"auto"``: SCIP for squared loss (a quadratic objective HiGHS
        cannot solve with integers), HiGHS otherwise; ``solve_result_.plan["solver_why"]`` says so.
    warm_start : {"local-search", "greedy"} or None, default="local-search"
        The heuristic whose tree starts the MIO: the local search (with ``split_type`` and ``loss``; it may use
        half of the time left) or the greedy tree (parallel splits); None starts from nothing.
    mip_gap : float, default=1e-6
        Relative gap at which the solver stops.
    threads : int, default=1
        Solver threads.
    binarization : {"auto", "exact", "quantile", "midpoints"}, default="auto"
        Candidate splits of ``method="dp"``: every midpoint (the same splits as the local search), searched on
        sorted orders ("exact", :mod:`opttrees.dp.continuous`) or through a binary matrix ("midpoints"),
        "auto" picking the faster; or at most ``n_thresholds`` midpoints per feature ("quantile").
    n_thresholds : int, default=10
        Thresholds per feature for ``binarization="quantile"``.
    max_num_nodes : int or None, default=None
        At most this many splits (``method="dp"`` only; None: up to ``2**max_depth - 1``).
    leaf_model : {"constant", "linear"}, default="constant"
        Constant leaves (ORT), or a linear model in every leaf (ORT-L; ``method="local-search"`` or ``"mio"``):
        a lasso on the scaled features, fitted by coordinate descent inside the local search
        (:func:`opttrees.heuristics.linear_leaves.linear_local_search`, squared loss) or chosen by the MIO
        (:class:`opttrees.formulations.ORTLinear`, squared or absolute loss).
    leaf_penalty : float, default=0.01
        lambda >= 0 (``leaf_model="linear"`` only), unit-free: with ``leaf_penalty_type="l1"`` the objective adds
        lambda * Σ|β| / s_y, where β are the leaf coefficients on the min-max scaled features and s_y is y's
        (weighted) standard deviation, so the same value means the same on any scale of y; with "l0" it adds
        lambda per non-zero coefficient. 0 with leaves that may hold no more rows than features warns: the leaf
        fits are then not unique and interpolate.
    leaf_penalty_type : {"l1", "l0"}, default="l1"
        Penalise Σ|β| (lasso) or the number of non-zero coefficients; "l0" with ``method="mio"`` only.
    coef_bound : float or None, default=None
        Bound on each leaf coefficient (scaled units) in the MIO (``leaf_model="linear"``, ``method="mio"`` only).
        None: implied by the objective for "l1" with ``leaf_penalty`` > 0 (exact), else 10 * (max y - min y),
        with a warning when the solution reaches it.
    max_thresholds : int, default=32
        Candidate thresholds per feature at each node visit of the linear-leaf local search (quantile positions
        among the feasible ones): each visit costs about ``p * max_thresholds`` lasso fits per leaf below.
    constraints : list of opttrees.constraints objects or None, default=None
        Side constraints (MaxFeatures, FeatureCost, ForbidFeatures, Monotone, MinLeafWeight;
        :mod:`opttrees.constraints`), honoured by ``method="mio"`` with constant leaves and parallel splits (an
        InputError otherwise). A start that breaks them is pruned to a feasible tree or dropped.
    random_state : int, RandomState instance or None, default=0
        Seeds the local search and the solver.
    n_jobs : int or None, default=1
        Threads for the restarts (-1: all cores).
    verbose : bool or int, default=False
        Print the objective and tree size after fitting (and show live solver progress).
    time_limit : float or None, default=None
        Seconds for the whole fit (None or ``inf``: no limit): the local search stops starting restarts and
        returns the best tree so far, the dynamic program its best tree and a lower bound. Ctrl-C does the
        same (``fit_status_ == "interrupted"``, a warning).

    Attributes
    ----------
    tree_ : Tree
        The fitted tree, thresholds in the original feature units.
    objective_ : float
        The tree's objective (with linear leaves: of the tree's own leaf models, with ``loss`` and
        ``leaf_penalty_type``, :func:`opttrees.heuristics.linear_leaves.linear_tree_objective`).
    solve_result_ : SolveResult or None
        Status, objective, bound, gap and counters of the MIO or the dynamic program (else None).
    n_features_in_, feature_names_in_, fit_status_, fit_timings_, constraint_values_
        As for :class:`~opttrees.OptimalTreeClassifier` (feature names when X was a DataFrame).
    feature_importances_ : ndarray of shape (n_features,)
        The normalised decrease of the training rows' squared error (``loss="absolute"``: absolute deviation from
        the median; linear leaves: the same constant-leaf loss) at each feature's splits, as scikit-learn defines
        it; ``apply``, ``decision_path``, ``get_depth()``, ``get_n_leaves()``, ``to_sklearn()`` as for the classifier.

    Examples
    --------
    >>> import numpy as np
    >>> from opttrees import OptimalTreeRegressor
    >>> X = np.arange(20.0).reshape(-1, 1)
    >>> y = np.where(X[:, 0] < 10, 1.0, 5.0)
    >>> reg = OptimalTreeRegressor(max_depth=1, n_restarts=5, random_state=0).fit(X, y)
    >>> reg.predict([[3.0], [15.0]]).tolist()
    [1.0, 5.0]
    >>> mio = OptimalTreeRegressor(max_depth=1, method="mio", loss="absolute", n_restarts=5).fit(X, y)
    >>> mio.solve_result_.proven_optimal, mio.predict([[3.0], [15.0]]).tolist()
    (True, [1.0, 5.0])
    >>> y_lin = np.where(X[:, 0] < 10, X[:, 0], 30.0 - 2.0 * X[:, 0])
    >>> lin = OptimalTreeRegressor(max_depth=1, leaf_model="linear", leaf_penalty=1e-4, n_restarts=2).fit(X, y_lin)
    >>> np.round(lin.predict([[3.0], [15.0]]), 1).tolist()
    [3.0, 0.0]
    """

    _parameter_rules = {   # plus SHARED_RULES for the others
        "method": [Options("local-search", "mio", "greedy", "dp")],
        "loss": [Options("squared", "absolute")],
        "warm_start": warm_start_rules("local-search", "greedy"),
        **DP_RULES,
        **MARGIN_RULES,
        "leaf_model": [Options("constant", "linear")],
        "leaf_penalty": [Interval("real", 0)],
        "leaf_penalty_type": [Options("l1", "l0")],
        "coef_bound": [Interval("real", 0, closed="neither"), NONE],
        "max_thresholds": [Interval("int", 1)],
        **CONSTRAINT_RULES,
    }

    _methods = methods(
        Method("mio", (NO_NODE_BUDGET, COEF_BOUND_LINEAR),
               uses=(*MIO_USES, *LINEAR_LEAVES_USE, uses("coef_bound", leaf_model=("linear",)),
                     uses("constraints", split_type=("parallel",), leaf_model=("constant",)))),
        Method("local-search", (NO_NODE_BUDGET, *LINEAR_BY_LASSO), uses=(*LOCAL_SEARCH_USES, *LINEAR_LEAVES_USE)),
        Method("greedy", (PARALLEL_ONLY, NO_NODE_BUDGET, CONSTANT_LEAVES, COEF_BOUND_LINEAR), uses=LINEAR_LEAVES_USE),
        Method("dp", (PARALLEL_ONLY, CONSTANT_LEAVES, Needs("loss", (Options("squared"),), "the dynamic program "
                      "solves squared loss; use loss='squared', or method='local-search' for absolute loss"),
                      COEF_BOUND_LINEAR),
               uses=(*DP_USES, *LINEAR_LEAVES_USE, uses("constraints", leaf_model=("constant",)))),   # feature budgets
    )

    def __init__(self, *, max_depth=2, min_samples_leaf=1, alpha=0.0, method="local-search", n_restarts=100,
                 split_type="parallel", n_hyperplane_restarts=5, loss="squared", hyperplane_margin=0.005,
                 solver="auto", warm_start="local-search", mip_gap=1e-6, threads=1, random_state=0, n_jobs=1,
                 verbose=False, time_limit=None, binarization="auto", n_thresholds=10, max_num_nodes=None,
                 leaf_model="constant", leaf_penalty=0.01, leaf_penalty_type="l1", coef_bound=None, max_thresholds=32,
                 constraints=None):
        store_params(self, locals())

    def _auto_solver(self) -> tuple[str, str]:
        if self.loss == "squared":
            return "scip", "squared loss is a quadratic MIO, which HiGHS cannot solve with integers: SCIP"
        return "highs", "absolute loss is a linear MIO: HiGHS"

    def fit(self, X, y, sample_weight=None):
        self._check_params()
        self._check_method()
        if self.method == "mio" and self.loss == "squared" and self._solver_name() == "highs":
            raise InputError("loss='squared' with method='mio' is a quadratic MIO, which HiGHS cannot solve "
                             "(integers plus a quadratic objective): use solver='scip', or loss='absolute'")
        linear = self.leaf_model == "linear"
        self.solve_result_ = None
        with controlled_fit(self, self._time_limit()) as ctl:
            with ctl.stage("prepare"):
                X, encoding = encode_categories(X)
                # every method searches a standardised y (offset and scale meet no tolerance, no cancellation and
                # no big-M of 1e9); the tree is mapped back to y's units at the end (data.target)
                raw = prepare(X, y, task="regression", sample_weight=sample_weight,
                              min_samples_leaf=self.min_samples_leaf)
                data = standardize_target(raw)
                by_dp = (self.method == "dp" and not linear
                         and dp_solvable(check_constraints(self.constraints)))
                cons = bind(self, data, (self.method == "mio" and not linear and self.split_type == "parallel")
                            or by_dp, f"by method={self.method!r}, leaf_model={self.leaf_model!r}, "
                            f"split_type={self.split_type!r}"
                            + (" (the DP solves feature budgets only)" if self.method == "dp" else ""))
                prob0 = make_problem(data, self.loss)
                self._ctx = ConstraintContext(self, cons, data, lambda t: refit_leaves(t, prob0),
                                              own_objective(prob0, float(self.alpha))) if cons else None
            if linear:
                check_leaf_penalty(self.leaf_penalty, data, self.min_samples_leaf)   # warns once, at the caller
                with warnings.catch_warnings():   # the search and the formulation check it again
                    warnings.filterwarnings("ignore", message="leaf_model='linear' with leaf_penalty=0")
                    tree = (self._mio_linear(data, ctl) if self.method == "mio"
                            else self._linear_local_search(data, ctl, ctl.budget))
                if self.method != "mio":
                    warn_time_limit(self, ctl, "the local search (best of the restarts completed)")
            elif self.method == "dp" and cons:
                if self.max_num_nodes is not None:
                    raise InputError("max_num_nodes cannot be combined with constraints (the constrained DP bounds "
                                     "the depth only)")
                with ctl.stage("dp"):
                    tree, self.solve_result_ = solve_dp_constrained(
                        cons, data.X, data.y, int(self.max_depth), int(self.min_samples_leaf), float(self.alpha),
                        data.sample_weight, ctl.remaining(), data.feature_names, binarization=self.binarization,
                        n_thresholds=int(self.n_thresholds), regression=True)
                if self.solve_result_.status != "optimal":
                    ctl.mark_cut_short("dp")
                warn_time_limit(self, ctl, "the dynamic program (best tree so far)")
            elif self.method == "dp":
                tree, self.solve_result_ = fit_dp_tree(self, data, ctl, self.max_num_nodes)
                warn_time_limit(self, ctl, "the dynamic program (best tree so far, see solve_result_.bound)")
            elif self.method == "greedy":
                with ctl.stage("greedy"):
                    tree = greedy_tree(data, self.max_depth, self.min_samples_leaf, self.alpha, loss=self.loss,
                                      time_limit=ctl.budget)
                if ctl.stop():   # the fit ran out during the greedy tree (its kernel still compiling: the root leaf)
                    ctl.mark_cut_short("greedy")
            elif self.method == "mio":
                tree = self._mio(data, ctl)
            else:
                tree = self._local_search(data, ctl, ctl.budget)
                warn_time_limit(self, ctl, "the local search (best of the restarts completed)")
            if linear:      # no one-leaf linear model to compare with: splits are tidied only
                score, leaf = self._linear_objective(data), None
            else:
                prob = prob0    # the same data and loss: built once
                score = lambda t: objective(t, prob, float(self.alpha))  # noqa: E731
                if self._ctx is not None:   # the leaves' own values (a monotone tree's need not be the medians)
                    score = own_objective(prob, float(self.alpha))
                leaf = refit_leaves(root_leaf(tree), prob)
            tree = finish_fit(self, tree, data.X, score if self._ctx is None else self._ctx.guard(score), leaf=leaf,
                              encoding=encoding)
            self.tree_ = tree
            self.n_features_in_ = data.p
            if hasattr(X, "columns"):
                self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
            self.objective_ = score(tree)     # normalised: the same on y and on the standardised y
            verify(self, tree, self._ctx)
            constrained, self._ctx = self._ctx is not None, None   # the context holds the training data: not kept
            user = self._target(data).tree_to_user(tree)           # values in y's units
            if not linear and not constrained:      # constant leaves: the exact means / medians of the caller's y
                user = refit_leaves(user, LeafProblem(raw, raw.X, raw.y, self.loss))
            self.tree_ = user
            record_display_bounds(self, data)
            record_node_stats(self, raw.X, raw.y, raw.sample_weight, self._sklearn_criterion)
        if self.verbose:
            print(f"OptimalTreeRegressor: objective {fmt(self.objective_)}, depth {tree.depth}, "
                  f"{tree.n_splits} splits")
        return self

    @staticmethod
    def _target(data) -> TargetScaling:
        return data.target if data.target is not None else TargetScaling()

    def _coef_bound(self, data):
        """``coef_bound`` (y's units per scaled feature unit) on the standardised y the MIO sees."""
        return None if self.coef_bound is None else float(self.coef_bound) / self._target(data).scale

    def _penalty(self, data) -> float:
        """The penalty the search and the MIO see: per unit of coefficient (y's units), so ``leaf_penalty`` / s_y
        for l1, which makes ``leaf_penalty`` unit-free; l0 counts coefficients and needs no scaling."""
        lam = float(self.leaf_penalty)
        if self.leaf_penalty_type != "l1":
            return lam
        y, w = np.asarray(data.y, dtype=np.float64), np.asarray(data.sample_weight, dtype=np.float64)
        W = float(w.sum())
        mean = float((w * y).sum() / W) if W > 0 else 0.0
        s_y = math.sqrt(float((w * (y - mean) ** 2).sum()) / W) if W > 0 else 0.0
        return lam / s_y if s_y > 0 else lam

    def _linear_objective(self, data):
        """The ORT-L objective of a tree's own leaf models (what the MIO counts; the local search's for l1)."""
        alpha, lam = float(self.alpha), self._penalty(data)
        return lambda tree: linear_tree_objective(tree, data, alpha, lam, loss=self.loss,
                                                  penalty=self.leaf_penalty_type, refit=False)

    def _linear_local_search(self, data, ctl, budget):
        with ctl.stage("local_search"):
            tree = linear_local_search(data, self.max_depth, self.alpha, self._penalty(data), self.min_samples_leaf,
                                       self.n_restarts, self.random_state, split_type=self.split_type,
                                       n_hyperplane_restarts=self.n_hyperplane_restarts,
                                       max_thresholds=self.max_thresholds, time_limit=budget)
        if ctl.stop():
            ctl.mark_cut_short("local search")
        return tree

    def _mio_linear(self, data, ctl):
        """ORT-L / ORT-LH from the warm start (its lasso leaves fit squared loss whatever ``loss``); the greedy
        tree with lasso leaves is the fallback when the fit stops before any tree."""
        lam = self._penalty(data)

        def greedy(stage):
            tree = ctl.run(stage, greedy_tree, data, self.max_depth, self.min_samples_leaf, self.alpha,
                           loss=self.loss, cheap=True)
            return None if tree is None else linear_leaf_tree(tree, data, lam)

        start = None
        if self.warm_start == "local-search":
            start = Start.of("local-search", self._linear_local_search(data, ctl, ctl.share(0.5)))
        elif self.warm_start == "greedy":
            start = Start.of("greedy", greedy("warm_start"))
        score = self._linear_objective(data)
        # any feasible tree's objective bounds the coefficients (ORTLinear); the slack keeps the start feasible
        build = partial(ORTLinear, data, self.max_depth, self.min_samples_leaf, self.alpha, leaf_penalty=lam,
                        penalty=self.leaf_penalty_type, loss=self.loss, split_type=self.split_type,
                        margin=float(self.hyperplane_margin), coef_bound=self._coef_bound(data),
                        upper_bound=1.0 if start is None else min(1.0, score(start.tree) * (1 + 1e-6) + 1e-9))
        return self._run_mio(ctl, MIO(build, score, [start], fallback=lambda: greedy("fallback"))).tree

    def _local_search(self, data, ctl, budget):
        with ctl.stage("local_search"):
            tree = local_search(data, self.max_depth, self.alpha, self.min_samples_leaf, self.n_restarts,
                                self.split_type, self.random_state, self.n_jobs, self.n_hyperplane_restarts,
                                self.loss, time_limit=budget, verbose=self.verbose)
        if ctl.stop():
            ctl.mark_cut_short("local search")
        return tree

    def _mio(self, data, ctl):
        """ORT / ORT-H from the warm start; the greedy tree is the fallback when the fit stops before any tree."""
        def greedy(stage):
            return ctl.run(stage, greedy_tree, data, self.max_depth, self.min_samples_leaf, self.alpha,
                           loss=self.loss, cheap=True)

        start = None
        if self.warm_start == "local-search":
            start = Start.of("local-search", self._local_search(data, ctl, ctl.share(0.5)))
        elif self.warm_start == "greedy":
            start = Start.of("greedy", greedy("warm_start"))
        prob = make_problem(data, self.loss)
        build = partial(ORT, data, self.max_depth, self.min_samples_leaf, self.alpha, loss=self.loss,
                        split_type=self.split_type, margin=float(self.hyperplane_margin))
        return self._run_mio(ctl, MIO(build, lambda tree: objective(tree, prob, float(self.alpha)), [start],
                                      fallback=lambda: greedy("fallback"), constraints=self._ctx)).tree

    @property
    def _sklearn_criterion(self) -> str:   # type: ignore[override]
        return "absolute_error" if self.loss == "absolute" else "squared_error"

    def predict(self, X):
        check_is_fitted(self, "tree_")
        return np.asarray(self.tree_.predict(check_X_fitted(self, X)), dtype=np.float64)
