"""OptimalTreeClassifier: the user-facing classifier, a real scikit-learn estimator.

Also home of :data:`DP_RULES` and :func:`fit_dp_tree`, the ``method="dp"`` path the regressor shares: the
dynamic program (:mod:`opttrees.dp`) on the prepared data under the fit's deadline and Ctrl-C.
"""
from __future__ import annotations

from functools import partial

import numpy as np
from sklearn.base import ClassifierMixin

from ..data.prepared import prepare
from ..errors import InputError
from ..formulations.oct import OCT
from ..formulations.octh import OCTH
from ..heuristics import local_search
from ..heuristics.cart import cart_classifier_tree
from ..heuristics.core import make_problem, objective, refit_leaves
from ..solvers.result import finish
from ..params import BOOLEAN, FALSE, NONE, Interval, Method, Needs, Options, When, methods, n_workers, uses
from .base import OptTreesEstimator, SolverMixin, store_params, warm_start_rules
from ..constraints.dp_routes import dp_solvable, solve_dp_constrained
from ..constraints.checks import check_constraints
from ..constraints.binding import CONSTRAINT_RULES, ConstraintContext, bind, own_objective, user_labels, verify
from .constrained import ConstrainedMixin, constrained_dp_start
from .common import (FittedTreeMixin, encode_categories, feature_names_in, finish_fit, record_display_bounds,
                     record_node_stats, root_leaf)
from .fitcontrol import controlled_fit, dp_plan, mio_route, warn_time_limit
from .pipeline import MIO, DPUse, Start

#: the hyperplane margin mu of OCT-H / ORT-H (``hyperplane_margin``), in min-max scaled units
MARGIN_RULES = {"hyperplane_margin": [Interval("real", 0.0, 1.0, closed="right")]}


#: the settings of the dynamic program (``method="dp"``, ``warm_start="dp"``), one rule each
DP_RULES = {
    "binarization": [Options("auto", "exact", "quantile", "midpoints")],
    "n_thresholds": [Interval("int", 1)],
    "max_num_nodes": [Interval("int", 0), NONE],
}


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
LOCAL_SEARCH_USES = (uses("n_restarts"), uses("n_jobs"), uses("split_type"),
                     uses("n_hyperplane_restarts", split_type=_HYPERPLANE))
MIO_USES = (uses("warm_start"), uses("n_restarts", warm_start=("local-search",)),
            uses("n_jobs", warm_start=("local-search",)), uses("split_type"),
            uses("n_hyperplane_restarts", split_type=_HYPERPLANE, warm_start=("local-search",)),
            uses("hyperplane_margin", split_type=_HYPERPLANE))
DP_USES = (uses("binarization"), uses("n_thresholds"), uses("max_num_nodes"))


def fit_dp_tree(est, data, ctl, max_num_nodes=None, share: float = 1.0, stage: str = "dp", binarization=None):
    """The DP's optimal tree over ``est``'s binarisation of ``data`` -> (Tree, SolveResult).

    Misclassification for classification data, squared error for regression data (``data.task``).
    The search gets ``share`` of the time the fit has left (all of it for ``method="dp"``; a start leaves
    the rest to the solver) and stops on Ctrl-C or the deadline with its best tree and a valid bound.
    """
    from ..dp import ClassificationTask, RegressionTask, solve_dp

    task = ClassificationTask() if data.task == "classification" else RegressionTask()
    left = ctl.remaining()
    n_jobs = getattr(est, "n_jobs", 1)
    with ctl.stage(stage):
        # prepare() dropped the rows of weight 0 (one min-leaf rule for every method): every row here counts
        tree, res = solve_dp(data.X, data.y, task=task, max_depth=int(est.max_depth), max_num_nodes=max_num_nodes,
                             min_samples_leaf=int(est.min_samples_leaf), alpha=float(est.alpha),
                             sample_weight=data.sample_weight, binarization=binarization or est.binarization,
                             n_thresholds=int(est.n_thresholds), n_jobs=n_workers(n_jobs),
                             time_limit=None if left is None else left * share, verbose=bool(est.verbose))
    if res.status != "optimal" and share == 1.0:    # the fit's own answer was cut short (a start is only a start)
        ctl.mark_cut_short(stage)
    tree.feature_names = data.feature_names
    if data.codec is not None:      # the DP saw the label codes 0..K-1: give the tree the user's labels
        tree.classes = list(data.codec.classes)
    return tree, res


class OptimalTreeClassifier(ConstrainedMixin, FittedTreeMixin, ClassifierMixin, SolverMixin, OptTreesEstimator):
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
        memory cap (``opttrees.estimators.fitcontrol.dp_plan``), for parallel splits; False otherwise.
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
                 n_thresholds=10, max_num_nodes=None, random_state=0, verbose=False, constraints=None):
        store_params(self, locals())

    def _local_search(self, data, alpha, ctl, share: float = 1.0):
        budget = ctl.budget if share == 1.0 else ctl.share(share)
        with ctl.stage("local_search"):
            tree = local_search(data, self.max_depth, alpha, self.min_samples_leaf, self.n_restarts,
                                self.split_type, self.random_state, self.n_jobs, self.n_hyperplane_restarts,
                                time_limit=budget, verbose=self.verbose)
        if ctl.stop():
            ctl.mark_cut_short("local search")
        return tree

    def _root_tree(self, data, alpha):
        """The majority-class leaf: the fallback when even the greedy start was cut short."""
        return cart_classifier_tree(data, 0, self.min_samples_leaf, alpha, self.random_state)

    def _plan(self, data, depth, ctl) -> tuple[str | None, bool, dict]:
        """(warm_start, dp_bound, plan) with ``"auto"`` resolved: the DP's start and bound when the DP fits the
        time and memory (:func:`~opttrees.estimators.fitcontrol.dp_plan`), else the greedy start."""
        ws, db = self.warm_start, self.dp_bound
        if ws is False:
            ws = None
        if ws != "auto" and db != "auto":
            return ws, bool(db), {}
        if self.split_type != "parallel":
            return ("greedy" if ws == "auto" else ws), False, {"why": "hyperplane splits: no DP relaxation"}
        mode, why = dp_plan(data, depth, ctl.remaining(), int(self.n_thresholds))
        if db == "auto":
            db = mode == "midpoints"
        if ws == "auto":
            ws = "dp" if mode else "greedy"
        return ws, bool(db), {"why": why, "dp_binarization": "midpoints" if db else "quantile" if mode else None}

    def _constrained_dp(self, data, cons, ctl):
        """``method="dp"`` with constraints: group fairness by the Pareto DP, feature budgets by maximal feature
        sets (:func:`opttrees.constrained_dp.solve_dp_constrained`); over every midpoint (``binarization`` "auto",
        "exact", "midpoints") its optimum is the constrained OCT optimum."""
        if self.max_num_nodes is not None:
            raise InputError("max_num_nodes cannot be combined with constraints (the constrained DP bounds the depth "
                             "only)")
        with ctl.stage("dp"):
            tree, res = solve_dp_constrained(cons, data.X, user_labels(data), int(self.max_depth),
                                                 int(self.min_samples_leaf), float(self.alpha), data.sample_weight,
                                                 ctl.remaining(), data.feature_names,
                                                 binarization=self.binarization, n_thresholds=int(self.n_thresholds),
                                                 n_jobs=n_workers(self.n_jobs))
        if res.status != "optimal":
            ctl.mark_cut_short("dp")
        return tree, res

    def _routed(self, data, depth, alpha, ctl, plan):
        """The tree of another route when the MIO cannot finish in the time left (:func:`mio_route`), with
        ``solve_result_`` saying which and why in its plan; None when the MIO runs."""
        if self._ctx is not None or self.split_type != "parallel" or self.warm_start != "auto" \
                or self.dp_bound != "auto" or ctl.stop():    # out of time already: the MIO path's fallback
            return None
        route, why = mio_route(data, depth, ctl.remaining(), self._solver_name())
        if route == "dp" and self.binarization not in ("auto", "exact", "midpoints"):
            route = "local-search"
        if route == "mio":
            return None
        if route == "dp":
            tree, res = fit_dp_tree(self, data, ctl)
            warn_time_limit(self, ctl, "the dynamic program (best tree so far, see solve_result_.bound)")
        else:
            t0 = ctl.budget.elapsed()
            tree = self._local_search(data, alpha, ctl)
            warn_time_limit(self, ctl, "the local search (best of the restarts completed)")
            res = finish("local-search", "", "time_limit" if ctl.stop() else "limit",
                         objective(tree, make_problem(data), alpha), None, ctl.budget.elapsed() - t0, 0, [],
                         message="a heuristic route: no bound and no proof")
        res.plan = {**plan, "route": route, "start": None, "bound": None, "dp_binarization": None, "why": why}
        self.solve_result_ = res
        return tree

    def _mio(self, data, depth, alpha, ctl):
        ws, db, plan = self._plan(data, depth, ctl)
        routed = self._routed(data, depth, alpha, ctl, plan)
        if routed is not None:
            return routed
        prob = make_problem(data)
        starts = []
        if ws in ("greedy", "dp"):   # CART is cheap, and a DP start is kept only when it scores no worse
            starts.append(Start.of("greedy", ctl.run("warm_start", cart_classifier_tree, data, depth,
                                                        self.min_samples_leaf, alpha, self.random_state,
                                                        fallback=lambda: self._root_tree(data, alpha), cheap=True)))
        if ws == "local-search":
            starts.append(Start.of("local-search", self._local_search(data, alpha, ctl, share=0.5)))
        elif ws == "dp" and not db:   # with dp_bound, the pipeline's one DP run over the model gives both
            # same objective, splits and min_samples_leaf as OCT: a feasible start (the optimum with midpoints)
            binarization = "quantile" if plan.get("dp_binarization") == "quantile" else self.binarization
            starts.append(Start.of("dp", fit_dp_tree(self, data, ctl, share=0.5, stage="warm_start",
                                                        binarization=binarization)[0]))
        late = []
        if self._ctx is not None and (ws == "dp" or db):
            # over every midpoint (with the DP bound on) a finished run bounds the constrained MIO
            ctx = self._ctx
            late.append(lambda form, bound: constrained_dp_start(
                ctx, ctl, depth, min_samples_leaf=self.min_samples_leaf, alpha=alpha,
                binarization="midpoints" if db else "quantile", n_thresholds=self.n_thresholds,
                bound_of=ctx.score if db else None))
        if self.split_type == "hyperplane":
            make = partial(OCTH, margin=float(self.hyperplane_margin))
        else:
            make = partial(OCT)
        build = partial(make, data, depth, self.min_samples_leaf, alpha, routing=self.routing, loss=self.loss_rows)
        # stopped before any tree existed: the CART tree (or, if that is cut short too, the root)
        fallback = lambda: ctl.run("fallback", cart_classifier_tree, data, depth, self.min_samples_leaf,  # noqa: E731
                                   alpha, self.random_state, fallback=lambda: self._root_tree(data, alpha), cheap=True)
        return self._run_mio(ctl, MIO(build, lambda tree: objective(tree, prob, alpha), starts,
                                      dp=DPUse(ws == "dp" and db, db, self.binarization, int(self.n_thresholds)),
                                      late_starts=late, fallback=fallback, constraints=self._ctx, plan=plan)).tree

    def fit(self, X, y, sample_weight=None):
        self._check_params()
        self._check_method()
        depth, alpha = int(self.max_depth), float(self.alpha)
        self.solve_result_ = None
        with controlled_fit(self, self._time_limit()) as ctl:
            with ctl.stage("prepare"):
                X, encoding = encode_categories(X)
                data = prepare(X, y, "classification", sample_weight, self.min_samples_leaf)
                by_dp = self.method == "dp" and dp_solvable(check_constraints(self.constraints))
                cons = bind(self, data, (self.method == "mio" and self.split_type == "parallel") or by_dp,
                            f"by method={self.method!r}, split_type={self.split_type!r}"
                            + (" (the DP solves group fairness and feature budgets only)" if self.method == "dp" else ""))
                prob0 = make_problem(data)
                self._ctx = ConstraintContext(self, cons, data, lambda t: refit_leaves(t, prob0),
                                              own_objective(prob0, alpha)) if cons else None
            if self.method == "greedy":
                tree = ctl.run("greedy", cart_classifier_tree, data, depth, self.min_samples_leaf, alpha,
                               self.random_state, fallback=lambda: self._root_tree(data, alpha), cheap=True)
            elif self.method == "local-search":
                tree = self._local_search(data, alpha, ctl)
                warn_time_limit(self, ctl, "the local search (best of the restarts completed)")
            elif self.method == "dp" and cons:
                tree, self.solve_result_ = self._constrained_dp(data, cons, ctl)
            elif self.method == "dp":
                tree, self.solve_result_ = fit_dp_tree(self, data, ctl, self.max_num_nodes)
                warn_time_limit(self, ctl, "the dynamic program (best tree so far, see solve_result_.bound)")
            else:
                tree = self._mio(data, depth, alpha, ctl)
            prob = prob0    # the same data: its presorted orders are seconds at 100,000 rows, built once
            score = lambda t: objective(t, prob, alpha)  # noqa: E731
            if self._ctx is not None:   # own labels, and no tidying step or single leaf that breaks a constraint
                score = own_objective(prob, alpha)
            tree = finish_fit(self, tree, data.X, score if self._ctx is None else self._ctx.guard(score),
                              leaf=refit_leaves(root_leaf(tree), prob), encoding=encoding)
            self.tree_ = tree
            self.classes_ = np.asarray(data.codec.classes)
            self.n_features_in_ = data.p
            names = feature_names_in(X)
            if names is not None:
                self.feature_names_in_ = np.asarray(names, dtype=object)
            self.objective_ = score(tree)
            verify(self, tree, self._ctx)
            self._ctx = None    # the context holds the training data: not kept after the fit
            record_display_bounds(self, data)
            record_node_stats(self, data.X, data.y, data.sample_weight, "gini", data.n_classes)
        return self
