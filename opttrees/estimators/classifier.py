"""OptimalTreeClassifier: the user-facing classifier, a real scikit-learn estimator."""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ..data import check_X, prepare
from ..errors import SolverError
from ..formulations.oct import OCT, check_alpha
from ..heuristics.cart import cart_classifier_tree
from ..objectives import classification_objective
from ..solvers import solve
from .common import check_choice, check_int, check_solver_param, check_time_limit, feature_names_in

#: fit strategies by name; the heuristics issue adds "local-search" and "greedy"
METHODS = ("mio", "greedy")
WARM_STARTS = ("greedy", None)


class OptimalTreeClassifier(ClassifierMixin, BaseEstimator):
    """Optimal classification tree (Bertsimas–Dunn OCT).

    ``method="mio"`` solves model (2.24) with ``solver`` ("highs" or "scip") under ``time_limit`` seconds,
    warm-started by ``warm_start`` ("greedy" = CART pruned with the same alpha, or None); ``method="greedy"``
    returns that CART tree. The objective is misclassification / (root baseline errors) + alpha * splits.

    After ``fit``: ``tree_`` (an :class:`opttrees.Tree`), ``solve_result_`` (status, objective, bound, gap, ...;
    None for heuristics), ``objective_``, ``classes_``, ``n_features_in_``.
    """

    def __init__(self, max_depth=2, min_samples_leaf=1, alpha=0.0, method="mio", solver="highs", time_limit=60,
                 warm_start="greedy", mip_gap=1e-4, threads=1, random_state=None, verbose=False):
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.alpha = alpha
        self.method = method
        self.solver = solver
        self.time_limit = time_limit
        self.warm_start = warm_start
        self.mip_gap = mip_gap
        self.threads = threads
        self.random_state = random_state
        self.verbose = verbose

    def _start_tree(self, data):
        if self.warm_start == "greedy":
            return cart_classifier_tree(data, self.max_depth, self.min_samples_leaf, self.alpha, self.random_state)
        return None

    def fit(self, X, y, sample_weight=None):
        check_choice("method", self.method, METHODS)
        check_choice("warm_start", self.warm_start, WARM_STARTS)
        depth = check_int("max_depth", self.max_depth, 0)
        check_int("min_samples_leaf", self.min_samples_leaf, 1)
        alpha = check_alpha(self.alpha)
        data = prepare(X, y, "classification", sample_weight, self.min_samples_leaf)
        self.solve_result_ = None
        if self.method == "greedy":
            tree = cart_classifier_tree(data, depth, self.min_samples_leaf, alpha, self.random_state)
        else:
            solver = check_solver_param(self.solver)
            time_limit = check_time_limit(self.time_limit)
            start = self._start_tree(data)
            form = OCT(data, depth, self.min_samples_leaf, alpha)
            res = solve(form, solver, time_limit=time_limit, mip_gap=self.mip_gap, threads=self.threads,
                        seed=0 if self.random_state is None else int(self.random_state) % (2 ** 31),
                        warm_start=start, verbose=self.verbose)
            self.solve_result_ = res
            if res.has_solution:
                tree = form.extract()
            elif start is not None:
                warnings.warn(f"the solver returned no solution ({res.status}); using the warm-start tree",
                              stacklevel=2)
                tree = start
            else:
                raise SolverError(f"the solver found no feasible tree ({res.status}) within time_limit="
                                  f"{time_limit}; raise time_limit or use warm_start='greedy'")
        self.tree_ = tree
        self.classes_ = np.asarray(data.codec.classes)
        self.n_features_in_ = data.p
        names = feature_names_in(X)
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        self.objective_ = classification_objective(tree, data.X, data.y, data.n_classes, alpha, None,
                                                   data.sample_weight)
        return self

    def predict(self, X):
        check_is_fitted(self, "tree_")
        return np.asarray(self.tree_.predict(check_X(X, self.n_features_in_)))

    def predict_proba(self, X):
        check_is_fitted(self, "tree_")
        return self.tree_.predict_proba(check_X(X, self.n_features_in_))

    def apply(self, X):
        check_is_fitted(self, "tree_")
        return self.tree_.apply(check_X(X, self.n_features_in_))
