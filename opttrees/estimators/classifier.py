"""OptimalTreeClassifier: the user-facing classifier, a real scikit-learn estimator.

Also home of the rules the regressor shares (hyperplane margin, what each method cannot take, where the local
search's and the MIO's parameters apply); the DP's settings and ``method="dp"`` are :mod:`.dp_fit`'s.
"""
from __future__ import annotations

from functools import partial

from sklearn.base import ClassifierMixin

from ..dp.planner import START_SHARE, DPCost, RouteCost
from ..formulations.oct import OCT
from ..formulations.octh import OCTH
from ..heuristics.cart import cart_classifier_tree
from ..params import BOOLEAN, FALSE, NONE, Interval, Method, Needs, Options, When, methods, uses
from .base import OptTreesEstimator, SolverMixin, store_params, warm_start_rules
from ..constraints.binding import CONSTRAINT_RULES
from .constrained import ConstrainedMixin, constrained_dp_start
from .common import FittedTreeMixin
from .dp_fit import DP_RULES, DP_USES, fit_dp, fit_dp_tree
from .pipeline import MIO, DPUse
from .skeleton import Fit, TableMethods, classification_fit, dp_solvable_constraints

#: the hyperplane margin mu of OCT-H / ORT-H (``hyperplane_margin``), in min-max scaled units
MARGIN_RULES = {"hyperplane_margin": [Interval("real", 0.0, 1.0, closed="right")]}


#: what the methods other than "mio" / "local-search" (and the DP) cannot take (shared with the regressor)
PARALLEL_ONLY = Needs("split_type", (Options("parallel"),), "it builds parallel splits only (split_type='hyperplane' "
                      "needs method='mio' or 'local-search')")
NO_NODE_BUDGET = Needs("max_num_nodes", (NONE,), "a split budget needs method='dp' (the other methods bound the tree "
                       "by max_depth and alpha only)")
NO_DP_BOUND = Needs("dp_bound", (FALSE, Options("auto")), "dp_bound=True needs method='mio' with parallel splits "
                    "(the DP relaxes the OCT MIO only)")

#: the parameters the local search and the MIO use, and when (shared with the regressor; the spec reads them:
#: :func:`opttrees.params.applies_table`)
_HYPERPLANE = ("hyperplane",)
LOCAL_SEARCH_USES = (uses("n_restarts"), uses("n_jobs"), uses("cluster"), uses("split_type"),
                     uses("n_hyperplane_restarts", split_type=_HYPERPLANE))
MIO_USES = (uses("warm_start"), uses("n_restarts", warm_start=("local-search",)),
            uses("n_jobs", warm_start=("local-search",)), uses("split_type"),
            uses("n_hyperplane_restarts", split_type=_HYPERPLANE, warm_start=("local-search",)),
            uses("hyperplane_margin", split_type=_HYPERPLANE))


class OptimalTreeClassifier(ConstrainedMixin, FittedTreeMixin, ClassifierMixin, TableMethods, SolverMixin,
                            OptTreesEstimator):
    """Optimal classification tree (Bertsimas–Dunn OCT / OCT-H), by MIO, local search or greedily.

    Every method minimises the same objective: misclassifications / (root baseline errors) + alpha * splits.

    Parameters
    ----------
    max_depth : int, default=2
        Maximum depth of the tree (the MIO allows at most 8, the heuristics 12).
    min_samples_leaf : int, default=1
        Minimum number of training samples in every leaf.
    alpha : float, default=0.0
        Complexity penalty per split (per non-zero coefficient with hyperplane splits), on the normalised
        objective's scale (0: no penalty).
    method : {"mio", "local-search", "greedy", "dp"}, default="mio"
        ``"mio"`` solves the OCT model (OCT-H with ``split_type="hyperplane"``) with ``solver``;
        ``"local-search"`` runs Dunn's local search (best of ``n_restarts`` restarts, parallel or hyperplane
        splits); ``"greedy"`` grows CART (gini) to ``max_depth`` and prunes it with ``alpha``; ``"dp"`` finds
        the optimal tree over a binarisation of the features by dynamic programming (STreeD,
        :func:`opttrees.dp.solve_dp`): with ``binarization="midpoints"`` its optimum is the OCT optimum,
        usually in a fraction of the time.
    solver : {"auto", "highs", "scip"}, default="auto"
        MIO solver (``method="mio"`` only); ``"auto"`` is HiGHS (a linear MIO).
    time_limit : float or None, default=60
        Seconds for the whole fit, whatever the method (warm start, model build, hand-off, solve, extraction;
        the local search stops starting restarts). None or ``inf``: no limit. Ctrl-C stops the fit and keeps
        the best tree so far (``fit_status_ == "interrupted"``; see :mod:`opttrees.estimators.fitcontrol`).
    warm_start : {"auto", "greedy", "local-search", "dp"} or None, default="auto"
        The heuristic whose tree starts the MIO. ``"auto"``: the dynamic program's tree when the DP fits the
        time and memory budget (over every midpoint, or over ``n_thresholds`` quantiles when that is too
        big; whichever of it and CART scores better), else the greedy tree; ``solve_result_.plan`` says which
        and why. ``"greedy"`` is CART pruned with the same alpha;
        ``"local-search"`` Dunn's local search with ``split_type`` (the thesis's start for OCT-H; it may use
        half of the time left); ``"dp"`` the dynamic program's tree over ``binarization`` (with "midpoints" it
        is the OCT optimum, so the solver only has to prove it; the DP may use half of the time left); None
        starts from nothing. An OCT-H start whose splits are closer than ``hyperplane_margin`` is adjusted
        (:meth:`opttrees.formulations.OCTH.feasible_start`, with a warning); when the adjusted start and the
        solver's tree both score worse than the original start, the original start is returned.
    routing : {"aggregated", "thesis"}, default="aggregated"
        How the MIO writes the routing rows (``method="mio"``): the thesis's (2.13)/(2.14) literally, or one
        aggregated row per branch node and point (same integer solutions, fewer rows; :class:`opttrees.formulations.OCT`).
    loss_rows : {"tight", "thesis"}, default="tight"
        How the MIO writes the misclassification rows (``method="mio"``): the thesis's (2.24) literally, or the
        tighter equivalent rows (same integer solutions, stronger LP bound).
    dp_bound : bool or "auto", default="auto"
        ``"auto"``: True when the DP over every midpoint is predicted to fit half the time left and the DP's
        memory cap (``opttrees.dp.planner.dp_plan``), for parallel splits; False otherwise.
        True: hand the solver the dynamic program's optimum over every midpoint as an objective bound
        (``method="mio"``, parallel splits): it relaxes the OCT MIO, so a tree that reaches it is proven optimal
        (``solve_result_.proof == "dp-bound"``). With ``warm_start="dp"`` the same DP run gives the start.
    mip_gap : float, default=1e-6
        Relative gap at which the solver stops.
    threads : int, default=1
        Solver threads.
    n_restarts : int, default=100
        Local-search restarts (``method="local-search"`` or ``warm_start="local-search"``).
    split_type : {"parallel", "hyperplane"}, default="parallel"
        Hyperplane splits (OCT-H) with ``method="mio"`` (model (3.3)) or ``"local-search"``; the complexity
        is then the number of non-zero coefficients.
    n_hyperplane_restarts : int, default=5
        Restarts of each hyperplane-split search inside the local search.
    hyperplane_margin : float, default=0.005
        The OCT-H MIO's margin mu (the thesis's 0.005) in min-max scaled units with sum |a| <= 1: every training
        point lies at least mu left of, or on or right of, each hyperplane. Larger values are numerically
        safer but exclude more splits (``method="mio"``, ``split_type="hyperplane"`` only).
    n_jobs : int or None, default=1
        Threads for the local-search restarts and the continuous DP's root features (-1: all cores).
    cluster : {None, "dask"}, default=None
        "dask": run ``method="local-search"``'s restarts, or ``method="dp"``'s continuous search (its root
        features), on the Dask cluster of this process's ``dask.distributed`` Client (start one before ``fit``:
        ``Client(LocalCluster(n_workers=2))`` or ``Client("tcp://scheduler:8786")``; the ``dask`` extra). The
        same tree as one process; ``method="dp"`` then needs ``binarization`` "auto" or "exact".
    binarization : {"auto", "exact", "quantile", "midpoints"}, default="auto"
        Candidate splits of the dynamic program (``method="dp"`` or ``warm_start="dp"``): "exact" every
        midpoint, searched on the features' sorted orders (:mod:`opttrees.dp.continuous`: no binary matrix,
        the OCT optimum at thousands of rows); "midpoints" the same splits through a binary matrix
        (fastest on few distinct values); "auto" whichever of the two suits the data
        (:func:`opttrees.dp.solve_dp`); "quantile" at most ``n_thresholds`` midpoints per feature (all of
        them for a feature with at most ``n_thresholds + 1`` distinct values): faster, not the OCT optimum.
    n_thresholds : int, default=10
        Thresholds per feature for ``binarization="quantile"``.
    max_num_nodes : int or None, default=None
        At most this many splits (``method="dp"`` only; None: up to ``2**max_depth - 1``).
    random_state : int, RandomState instance or None, default=0
        Seeds the local search, CART's tie-breaking and the solver's own seed.
    verbose : bool or int, default=False
        Show live solver progress.
    constraints : list of opttrees.constraints objects or None, default=None
        Side constraints (fairness, feature budgets, monotonicity, leaf support; :mod:`opttrees.constraints`),
        honoured by ``method="mio"`` with parallel splits, and the five group-fairness notions also by
        ``method="dp"`` (the Pareto dynamic program; an InputError otherwise). Start trees that break them are
        pruned to feasible ones or dropped; the DP optimum stays a bound (a relaxation).

    Attributes
    ----------
    tree_ : Tree
        The fitted tree, thresholds in the original feature units.
    objective_ : float
        The tree's objective (normalised misclassification + alpha * splits).
    solve_result_ : SolveResult or None
        Status, objective, bound, gap, timings of the MIO or the dynamic program (None for the heuristics).
    classes_ : ndarray
        The class labels.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        Column names, when X was a DataFrame with string column names.
    fit_status_ : str
        "completed", "time_limit" or "interrupted".
    fit_timings_ : dict
        Seconds per stage of the fit, plus "total".
    constraint_values_ : dict
        Each constraint's value on the training data ({} without constraints).
    feature_importances_ : ndarray of shape (n_features,)
        The normalised decrease of the training rows' gini impurity at each feature's splits, as scikit-learn
        defines it (:mod:`opttrees.sklearn_export`). With ``apply``, ``decision_path``, ``get_depth()``,
        ``get_n_leaves()`` and ``to_sklearn()`` (a fitted scikit-learn tree for its tools), as in scikit-learn.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from opttrees import OptimalTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = OptimalTreeClassifier(max_depth=1, time_limit=30).fit(X, y)
    >>> clf.solve_result_.proven_optimal, round(clf.score(X, y), 3)
    (True, 0.667)
    >>> OptimalTreeClassifier(max_depth=2, method="greedy").fit(X, y).tree_.n_leaves   # CART, pruned
    3
    """

    _parameter_rules = {   # plus SHARED_RULES and SOLVER_RULES for the others
        "method": [Options("mio", "local-search", "greedy", "dp")],
        "warm_start": warm_start_rules("auto", "greedy", "local-search", "dp"),
        "dp_bound": [BOOLEAN, Options("auto")],
        "routing": [Options("aggregated", "thesis")],
        "loss_rows": [Options("tight", "thesis")],
        **DP_RULES,
        **MARGIN_RULES,
        **CONSTRAINT_RULES,
    }

    _methods = methods(
        Method("mio", (NO_NODE_BUDGET, Needs("dp_bound", (FALSE, Options("auto")), "the DP relaxes the OCT MIO with "
                                             "parallel splits only", when=When("split_type", (Options("hyperplane"),)))),
               uses=(*MIO_USES, uses("dp_bound"), uses("routing"), uses("loss_rows"),
                     *(uses(p, **cond) for p in ("binarization", "n_thresholds")   # the DP's start or bound
                       for cond in ({"warm_start": ("dp", "auto")}, {"dp_bound": (True, "auto")})),
                     uses("constraints", split_type=("parallel",)))),
        Method("local-search", (NO_NODE_BUDGET, NO_DP_BOUND), uses=LOCAL_SEARCH_USES),
        Method("greedy", (PARALLEL_ONLY, NO_NODE_BUDGET, NO_DP_BOUND)),
        Method("dp", (PARALLEL_ONLY, NO_DP_BOUND), uses=(*DP_USES, uses("constraints"))),   # fairness, feature budgets
    )

    def __init__(self, *, max_depth=2, min_samples_leaf=1, alpha=0.0, method="mio", solver="auto", time_limit=60,
                 warm_start="auto", mip_gap=1e-6, threads=1, n_restarts=100, split_type="parallel",
                 n_hyperplane_restarts=5, hyperplane_margin=0.005, n_jobs=1, binarization="auto", dp_bound="auto",
                 routing="aggregated", loss_rows="tight",
                 n_thresholds=10, max_num_nodes=None, random_state=0, verbose=False, constraints=None, cluster=None):
        store_params(self, locals())

    # ------------------------------------------------------------------ the fit's hooks (estimators.skeleton)
    def _prepare(self, X, y, sample_weight=None) -> Fit:
        return classification_fit(self, X, y, sample_weight)

    def _honours(self, fit) -> tuple[bool, str]:
        by_dp = self.method == "dp" and dp_solvable_constraints(self)
        return ((self.method == "mio" and self.split_type == "parallel") or by_dp,
                f"by method={self.method!r}, split_type={self.split_type!r}"
                + (" (the DP solves group fairness and feature budgets only)" if self.method == "dp" else ""))

    def _cart(self, fit, stage: str, depth: int):
        """CART pruned with alpha (the majority-class leaf when even that is cut short)."""
        alpha = float(self.alpha)
        root = lambda: cart_classifier_tree(fit.data, 0, self.min_samples_leaf, alpha, self.random_state)  # noqa: E731
        return fit.ctl.run(stage, cart_classifier_tree, fit.data, depth, self.min_samples_leaf, alpha,
                           self.random_state, fallback=root, cheap=True)

    def _fit_greedy(self, fit):
        return self._cart(fit, "greedy", int(self.max_depth))

    def _fit_mio(self, fit):
        """OCT (OCT-H) from the plan's start, with the DP over the model's midpoints as start and bound, the
        constrained DP's start, or another route when the MIO cannot finish (:mod:`opttrees.dp.planner`)."""
        data, ctl, depth, alpha = fit.data, fit.ctl, int(self.max_depth), float(self.alpha)
        parallel = self.split_type == "parallel"
        make = OCT if parallel else partial(OCTH, margin=float(self.hyperplane_margin))
        job = MIO(partial(make, data, depth, self.min_samples_leaf, alpha, routing=self.routing, loss=self.loss_rows),
                  fit.score, sources={"greedy": lambda plan: self._cart(fit, "warm_start", depth),
                                      "local-search": lambda plan: self._local_search(fit, START_SHARE)},
                  dp_start=lambda plan: fit_dp_tree(self, data, ctl, share=START_SHARE, stage="warm_start",
                                                    binarization="quantile" if plan.split_set == "quantile"
                                                    else self.binarization)[0],
                  dp=DPUse(binarization=self.binarization, n_thresholds=int(self.n_thresholds)),
                  late_starts=[partial(self._constrained_start, fit)] if fit.ctx is not None else [],
                  routes={"dp": lambda: (fit_dp(self, fit), self.solve_result_),
                          "local-search": lambda: (self._fit_local_search(fit), None)},
                  fallback=lambda: self._cart(fit, "fallback", depth), constraints=fit.ctx)
        auto = parallel and fit.ctx is None
        return self._run_mio(ctl, job, dp_bound=self.dp_bound, no_dp="hyperplane splits: no DP relaxation",
                             cost=DPCost.of_ranks(data, depth, int(self.n_thresholds)) if parallel else None,
                             route=RouteCost(data, depth, self.binarization in ("auto", "exact", "midpoints"))
                             if auto else None).tree

    def _constrained_start(self, fit, form, bound, plan):
        """The constrained DP's start (over every midpoint with the DP bound on, where a finished run bounds the
        constrained MIO); None unless the plan runs the DP."""
        if not (plan.start == "dp" or plan.bound):
            return None
        return constrained_dp_start(fit.ctx, fit.ctl, int(self.max_depth), min_samples_leaf=self.min_samples_leaf,
                                    alpha=float(self.alpha), binarization="midpoints" if plan.bound else "quantile",
                                    n_thresholds=self.n_thresholds, bound_of=fit.ctx.score if plan.bound else None)
