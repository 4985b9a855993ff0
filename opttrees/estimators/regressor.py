"""OptimalTreeRegressor: ORT / ORT-H trees with constant leaves, by MIO, Dunn's local search, greedily or by DP,
and ORT-L / ORT-LH trees with lasso (linear) leaves, by local search or MIO."""
from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..data.prepared import prepare, standardize_target
from ..errors import InputError
from ..params import NONE, Interval, Method, Needs, Options, When, methods, uses
from .base import OptTreesEstimator, SolverMixin, store_params, warm_start_rules
from ..constraints.binding import CONSTRAINT_RULES
from .constrained import ConstrainedMixin
from .common import TreeAttributesMixin, check_X_fitted
from .classifier import LOCAL_SEARCH_USES, MARGIN_RULES, MIO_USES, NO_NODE_BUDGET, PARALLEL_ONLY
from .dp_fit import DP_RULES, DP_USES
from .fitcontrol import warn_time_limit
from .leaf_models import LEAF_MODELS
from .skeleton import Fit, TableMethods, dp_solvable_constraints
from ..heuristics import greedy_tree
from ..heuristics.core import make_problem


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

class OptimalTreeRegressor(ConstrainedMixin, TreeAttributesMixin, RegressorMixin, TableMethods, SolverMixin,
                           OptTreesEstimator):
    """Regression tree (ORT / ORT-H) minimising loss / L̂ + alpha * complexity (thesis ch. 4), with constant
    leaves or, ``leaf_model="linear"``, lasso leaves (ORT-L / ORT-LH, thesis ch. 5: + leaf_penalty * Σ ||β_t|| / s_y).

    L̂ is the same loss of the root-only constant tree, so ``alpha`` and ``leaf_penalty`` mean the same thing on
    every data set. The complexity is the number of splits (parallel) or of non-zero split coefficients
    (hyperplane). Leaf coefficients are penalised on the features min-max scaled to [0, 1] on the training
    data; the tree stores them in original units, so ``predict`` takes raw X. Every method fits a standardised
    target (y - mean) / s (:func:`opttrees.data.standardize_target`) and the tree is mapped back to y's units, so an
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
    cluster : {None, "dask"}, default=None
        "dask": run the constant-leaf local search's restarts, or ``method="dp"``'s continuous search, on the
        Dask cluster of this process's ``dask.distributed`` Client (started before ``fit``; the ``dask`` extra).
        The same tree as one process; not for ``leaf_model="linear"``.
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
                 constraints=None, cluster=None):
        store_params(self, locals())

    def _auto_solver(self) -> tuple[str, str]:
        if self.loss == "squared":
            return "scip", "squared loss is a quadratic MIO, which HiGHS cannot solve with integers: SCIP"
        return "highs", "absolute loss is a linear MIO: HiGHS"

    # ------------------------------------------------------------------ the fit's hooks (estimators.skeleton)
    def _leaves(self):
        """The declared leaf model (:mod:`opttrees.estimators.leaf_models`): constant or linear leaves."""
        return LEAF_MODELS[self.leaf_model](self)

    def _prepare(self, X, y, sample_weight=None) -> Fit:
        if self.method == "mio" and self.loss == "squared" and self._solver_name() == "highs":
            raise InputError("loss='squared' with method='mio' is a quadratic MIO, which HiGHS cannot solve "
                             "(integers plus a quadratic objective): use solver='scip', or loss='absolute'")
        # every method searches a standardised y (offset and scale meet no tolerance, no cancellation and no big-M
        # of 1e9); the tree is mapped back to y's units at the end (the leaf model's to_user)
        raw = prepare(X, y, task="regression", sample_weight=sample_weight, min_samples_leaf=self.min_samples_leaf)
        data = standardize_target(raw)
        fit = Fit(data, make_problem(data, self.loss), report="OptimalTreeRegressor",
                  stats=lambda t: dict(X=raw.X, y=raw.y, sample_weight=raw.sample_weight,
                                       criterion=self._sklearn_criterion))
        self._leaves().declare(fit, raw)
        return fit

    def _honours(self, fit) -> tuple[bool, str]:
        linear = self.leaf_model == "linear"
        by_dp = self.method == "dp" and not linear and dp_solvable_constraints(self)
        return ((self.method == "mio" and not linear and self.split_type == "parallel") or by_dp,
                f"by method={self.method!r}, leaf_model={self.leaf_model!r}, split_type={self.split_type!r}"
                + (" (the DP solves feature budgets only)" if self.method == "dp" else ""))

    _constrained_dp_warning = "the dynamic program (best tree so far)"

    def _fit_local_search(self, fit):
        leaves = self._leaves()
        with leaves.quiet():
            tree = leaves.local_search(fit)
        warn_time_limit(self, fit.ctl, "the local search (best of the restarts completed)")
        return tree

    def _fit_greedy(self, fit):
        # cut short when the fit ran out during the greedy tree (its kernel still compiling: the root leaf)
        return fit.ctl.search("greedy", greedy_tree, fit.data, self.max_depth, self.min_samples_leaf, self.alpha,
                              loss=self.loss)

    def _fit_mio(self, fit):
        leaves = self._leaves()
        with leaves.quiet():
            return leaves.mio(fit)

    def _greedy(self, fit, stage: str):
        return fit.ctl.run(stage, greedy_tree, fit.data, self.max_depth, self.min_samples_leaf, self.alpha,
                           loss=self.loss, cheap=True)

    @property
    def _sklearn_criterion(self) -> str:   # type: ignore[override]
        return "absolute_error" if self.loss == "absolute" else "squared_error"

    def predict(self, X):
        check_is_fitted(self, "tree_")
        return np.asarray(self.tree_.predict(check_X_fitted(self, X)), dtype=np.float64)
