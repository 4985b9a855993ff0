"""OptimalTreeClassifier: the user-facing classifier, a real scikit-learn estimator."""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import ClassifierMixin

from ..data import prepare
from ..errors import InputError, SolverError
from ..formulations.oct import OCT
from ..heuristics import local_search
from ..heuristics.cart import cart_classifier_tree
from ..heuristics.core import make_problem, objective
from ..params import Options
from .base import OptTreesEstimator, SolverMixin, warm_start_rules
from .common import FittedTreeMixin, feature_names_in
from .fitcontrol import controlled_fit, warn_time_limit


class OptimalTreeClassifier(FittedTreeMixin, ClassifierMixin, SolverMixin, OptTreesEstimator):
    """Optimal classification tree (Bertsimas–Dunn OCT / OCT-H), by MIO, local search or greedily.

    Every method minimises the same objective: misclassifications / (root baseline errors) + alpha * splits.

    Parameters
    ----------
    max_depth : int, default=2
        Maximum depth of the tree (the MIO allows at most 8, the heuristics 12).
    min_samples_leaf : int, default=1
        Minimum number of training samples in every leaf.
    alpha : float, default=0.0
        Complexity penalty per split, on the normalised objective's scale (0: no penalty).
    method : {"mio", "local-search", "greedy"}, default="mio"
        ``"mio"`` solves the OCT model with ``solver``; ``"local-search"`` runs Dunn's local search (best of
        ``n_restarts`` restarts, parallel or hyperplane splits); ``"greedy"`` grows CART (gini) to
        ``max_depth`` and prunes it with ``alpha``.
    solver : {"highs", "scip"}, default="highs"
        MIO solver (``method="mio"`` only).
    time_limit : float or None, default=60
        Seconds for the whole fit, whatever the method (warm start, model build, hand-off, solve, extraction;
        the local search stops starting restarts). None or ``inf``: no limit. Ctrl-C stops the fit and keeps
        the best tree so far (``fit_status_ == "interrupted"``; see :mod:`opttrees.estimators.fitcontrol`).
    warm_start : {"greedy", "local-search"} or None, default="greedy"
        The heuristic whose tree starts the MIO: ``"greedy"`` is CART pruned with the same alpha; None starts
        from nothing.
    mip_gap : float, default=1e-6
        Relative gap at which the solver stops.
    threads : int, default=1
        Solver threads.
    n_restarts : int, default=100
        Local-search restarts (``method="local-search"`` or ``warm_start="local-search"``).
    split_type : {"parallel", "hyperplane"}, default="parallel"
        Hyperplane splits (OCT-H) need ``method="local-search"``.
    n_hyperplane_restarts : int, default=5
        Restarts of each hyperplane-split search inside the local search.
    n_jobs : int or None, default=1
        Threads for the local-search restarts (-1: all cores).
    random_state : int, RandomState instance or None, default=None
        Seeds the local search, CART's tie-breaking and the solver's own seed.
    verbose : bool or int, default=False
        Show live solver progress.

    Attributes
    ----------
    tree_ : Tree
        The fitted tree, thresholds in the original feature units.
    objective_ : float
        The tree's objective (normalised misclassification + alpha * splits).
    solve_result_ : SolveResult or None
        Status, objective, bound, gap, timings of the MIO (None for the heuristics).
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
        "method": [Options("mio", "local-search", "greedy")],
        "warm_start": warm_start_rules("greedy", "local-search"),
    }

    def __init__(self, *, max_depth=2, min_samples_leaf=1, alpha=0.0, method="mio", solver="highs", time_limit=60,
                 warm_start="greedy", mip_gap=1e-6, threads=1, n_restarts=100, split_type="parallel",
                 n_hyperplane_restarts=5, n_jobs=1, random_state=None, verbose=False):
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.alpha = alpha
        self.method = method
        self.solver = solver
        self.time_limit = time_limit
        self.warm_start = warm_start
        self.mip_gap = mip_gap
        self.threads = threads
        self.n_restarts = n_restarts
        self.split_type = split_type
        self.n_hyperplane_restarts = n_hyperplane_restarts
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _local_search(self, data, alpha, ctl):
        with ctl.stage("local_search"):
            tree = local_search(data, self.max_depth, alpha, self.min_samples_leaf, self.n_restarts,
                                self.split_type, self.random_state, self.n_jobs, self.n_hyperplane_restarts,
                                deadline=ctl.deadline)
        if ctl.stop():
            ctl.mark_cut_short("local search")
        return tree

    def _root_tree(self, data, alpha):
        """The majority-class leaf: the fallback when even the greedy start was cut short."""
        return cart_classifier_tree(data, 0, self.min_samples_leaf, alpha, self.random_state)

    def _mio(self, data, depth, alpha, ctl):
        start = None
        if self.warm_start == "greedy":
            start = ctl.run("warm_start", cart_classifier_tree, data, depth, self.min_samples_leaf, alpha,
                            self.random_state, fallback=lambda: self._root_tree(data, alpha), cheap=True)
        elif self.warm_start == "local-search":
            start = self._local_search(data, alpha, ctl)
        form = ctl.build(OCT, data, depth, self.min_samples_leaf, alpha)
        res = ctl.solve(form, start, **self._solver_options())
        self.solve_result_ = res
        if form is not None and res.has_solution:
            with ctl.stage("extract"):
                return form.extract()
        if start is None and ctl.stop():
            # stopped before any tree existed: the CART tree (or, if that is cut short too, the root)
            start = ctl.run("fallback", cart_classifier_tree, data, depth, self.min_samples_leaf, alpha,
                            self.random_state, fallback=lambda: self._root_tree(data, alpha), cheap=True)
        if start is not None:
            if ctl.reason() != "interrupted":
                warnings.warn(f"the solver returned no solution ({res.status}"
                              f"{'; ' + res.message if res.message else ''}); using the "
                              f"{'warm-start' if self.warm_start else 'CART'} tree", stacklevel=3)
            return start
        raise SolverError(f"the solver found no feasible tree ({res.status}) within time_limit={self.time_limit}; "
                          "raise time_limit or use warm_start='greedy'")

    def fit(self, X, y, sample_weight=None):
        self._check_params()
        if self.split_type != "parallel" and self.method != "local-search":
            raise InputError(f"split_type={self.split_type!r} needs method='local-search': method={self.method!r} "
                             "builds parallel-split OCT trees")
        depth, alpha = int(self.max_depth), float(self.alpha)
        self.solve_result_ = None
        with controlled_fit(self, self._time_limit()) as ctl:
            with ctl.stage("prepare"):
                data = prepare(X, y, "classification", sample_weight, self.min_samples_leaf)
            if self.method == "greedy":
                tree = ctl.run("greedy", cart_classifier_tree, data, depth, self.min_samples_leaf, alpha,
                               self.random_state, fallback=lambda: self._root_tree(data, alpha), cheap=True)
            elif self.method == "local-search":
                tree = self._local_search(data, alpha, ctl)
                warn_time_limit(self, ctl, "the local search (best of the restarts completed)")
            else:
                tree = self._mio(data, depth, alpha, ctl)
            self.tree_ = tree
            self.classes_ = np.asarray(data.codec.classes)
            self.n_features_in_ = data.p
            names = feature_names_in(X)
            if names is not None:
                self.feature_names_in_ = np.asarray(names, dtype=object)
            self.objective_ = objective(tree, make_problem(data), alpha)
        return self
