"""OptimalTreeClassifier: the user-facing classifier, a real scikit-learn estimator."""
from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ..data import prepare
from ..errors import InputError, SolverError
from ..formulations.oct import OCT, check_alpha
from ..heuristics import local_search
from ..heuristics.cart import cart_classifier_tree
from ..heuristics.core import make_problem, objective
from .common import (FittedTreeMixin, check_choice, check_int, check_solver_param, check_time_limit,
                     feature_names_in, solver_seed)
from .fitcontrol import controlled_fit, warn_time_limit

METHODS = ("mio", "local-search", "greedy")
WARM_STARTS = ("greedy", "local-search", None)
SPLIT_TYPES = ("parallel", "hyperplane")


class OptimalTreeClassifier(FittedTreeMixin, ClassifierMixin, BaseEstimator):
    """Optimal classification tree (Bertsimas–Dunn OCT / OCT-H).

    method:
      - ``"mio"``: solve the OCT model with ``solver`` ("highs" or "scip"), warm-started by ``warm_start``
        ("greedy" = CART pruned with the same alpha, "local-search", or None);
      - ``"local-search"``: Dunn's local search, best of ``n_restarts`` restarts (parallel or hyperplane splits);
      - ``"greedy"``: CART (gini) grown to ``max_depth`` and pruned with ``alpha``.

    time_limit: seconds for the whole fit, whatever the method (warm start, model build, hand-off, solve,
    extraction; the local search stops starting restarts). Ctrl-C stops the fit and returns the best tree
    so far (``fit_status_ == "interrupted"``); see :mod:`opttrees.estimators.fitcontrol`.

    Objective everywhere: misclassification / (root baseline errors) + alpha * splits.

    After ``fit``: ``tree_`` (an :class:`opttrees.Tree`), ``solve_result_`` (status, objective, bound, gap, ...;
    None for heuristics), ``objective_``, ``classes_``, ``n_features_in_``, ``fit_status_`` ("completed",
    "time_limit", "interrupted"), ``fit_timings_`` (seconds per stage).
    """

    def __init__(self, max_depth=2, min_samples_leaf=1, alpha=0.0, method="mio", solver="highs", time_limit=60,
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
        if self.split_type != "parallel":
            raise InputError("method='mio' solves parallel-split OCT; use method='local-search' for hyperplanes")
        solver = check_solver_param(self.solver)
        start = None
        if self.warm_start == "greedy":
            start = ctl.run("warm_start", cart_classifier_tree, data, depth, self.min_samples_leaf, alpha,
                            self.random_state, fallback=lambda: self._root_tree(data, alpha), cheap=True)
        elif self.warm_start == "local-search":
            start = self._local_search(data, alpha, ctl)
        form = ctl.build(OCT, data, depth, self.min_samples_leaf, alpha)
        res = ctl.solve(form, start, solver=solver, mip_gap=self.mip_gap, threads=self.threads,
                        seed=solver_seed(self.random_state), verbose=self.verbose)
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
        check_choice("method", self.method, METHODS)
        check_choice("warm_start", self.warm_start, WARM_STARTS + (False,))   # False: sklearn's "no warm start"
        check_choice("split_type", self.split_type, SPLIT_TYPES)
        depth = check_int("max_depth", self.max_depth, 0)
        check_int("min_samples_leaf", self.min_samples_leaf, 1)
        alpha = check_alpha(self.alpha)
        solver_seed(self.random_state)   # fail on a bad random_state before any work
        if not isinstance(self.verbose, (bool, numbers.Integral)):
            raise InputError(f"verbose must be True/False (or an integer level); got {self.verbose!r}")
        time_limit = check_time_limit(self.time_limit)
        self.solve_result_ = None
        with controlled_fit(self, time_limit) as ctl:
            with ctl.stage("prepare"):
                data = prepare(X, y, "classification", sample_weight, self.min_samples_leaf)
            if self.method == "greedy":
                if self.split_type != "parallel":
                    raise InputError("method='greedy' builds parallel splits; use method='local-search' for "
                                     "hyperplanes")
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
