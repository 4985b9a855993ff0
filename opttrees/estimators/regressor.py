"""OptimalTreeRegressor: ORT / ORT-H trees with constant leaves, found by Dunn's local search or greedily.

scikit-learn compatible (get_params/set_params, clone, GridSearchCV); the fitted tree is ``tree_``, an
:class:`opttrees.tree.Tree` with thresholds in the user's units.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..data import prepare
from ..errors import InputError
from .common import check_X_fitted, check_time_limit
from .fitcontrol import controlled_fit, warn_time_limit
from ..heuristics import greedy_tree, local_search
from ..heuristics.core import make_problem, objective

METHODS = ("local-search", "greedy")


class OptimalTreeRegressor(RegressorMixin, BaseEstimator):
    """Regression tree minimising loss/L̂ + alpha * complexity (thesis ch. 4).

    loss: "squared" (SSE, mean leaves; the default) or "absolute" (sum of absolute errors, weighted-median
    leaves: robust to outliers in y); L̂ is the same loss of the root-only tree.

    method: "local-search" (best of ``n_restarts`` restarts, the thesis's method) or "greedy" (CART-like
    then pruned with alpha). split_type: "parallel" (ORT) or "hyperplane" (ORT-H, local search only).

    time_limit: seconds for the whole fit (None = none): the local search stops starting restarts and
    returns the best tree so far. Ctrl-C does the same (``fit_status_ == "interrupted"``, a warning).
    """

    def __init__(self, max_depth=2, min_samples_leaf=1, alpha=0.0, method="local-search", n_restarts=100,
                 split_type="parallel", n_hyperplane_restarts=5, loss="squared", random_state=None, n_jobs=1,
                 verbose=False, time_limit=None):
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.alpha = alpha
        self.method = method
        self.n_restarts = n_restarts
        self.split_type = split_type
        self.n_hyperplane_restarts = n_hyperplane_restarts
        self.loss = loss
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.time_limit = time_limit

    def fit(self, X, y, sample_weight=None):
        if self.method not in METHODS:
            raise InputError(f"method must be one of {METHODS} for OptimalTreeRegressor; got {self.method!r} "
                             "(the ORT MIO is not available yet)")
        if self.method == "greedy" and self.split_type != "parallel":
            raise InputError("method='greedy' builds parallel splits only; use method='local-search' for hyperplanes")
        time_limit = check_time_limit(self.time_limit)
        with controlled_fit(self, time_limit) as ctl:
            with ctl.stage("prepare"):
                data = prepare(X, y, task="regression", sample_weight=sample_weight,
                               min_samples_leaf=self.min_samples_leaf)
            if self.method == "greedy":
                with ctl.stage("greedy"):
                    tree = greedy_tree(data, self.max_depth, self.min_samples_leaf, self.alpha, loss=self.loss)
            else:
                with ctl.stage("local_search"):
                    tree = local_search(data, self.max_depth, self.alpha, self.min_samples_leaf, self.n_restarts,
                                        self.split_type, self.random_state, self.n_jobs, self.n_hyperplane_restarts,
                                        self.loss, deadline=ctl.deadline)
                if ctl.stop():
                    ctl.mark_cut_short("local search")
                warn_time_limit(self, ctl, "the local search (best of the restarts completed)")
            self.tree_ = tree
            self.n_features_in_ = data.p
            if hasattr(X, "columns"):
                self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
            self.objective_ = objective(tree, make_problem(data, self.loss), float(self.alpha))
        if self.verbose:
            print(f"OptimalTreeRegressor: objective {self.objective_:.6g}, depth {tree.depth}, "
                  f"{tree.n_splits} splits")
        return self

    def predict(self, X):
        check_is_fitted(self, "tree_")
        return np.asarray(self.tree_.predict(check_X_fitted(self, X)), dtype=np.float64)
