"""OptimalTreeCV: the thesis's tuning protocol (Algorithm 2.7) as one estimator.

fit(X, y) holds out a validation split (or takes X_val, y_val), tunes depth and alpha by batch
cost-complexity pruning of the best 10% of local-search restarts at each depth, then refits the local search
on train + validation with the tuned (depth, alpha) — L̂ is recomputed on the refit data, alpha is kept.
"""
from __future__ import annotations

import numpy as np
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import train_test_split

from ..data.prepared import check_X, prepare
from ..errors import InputError
from ..heuristics import local_search
from ..heuristics.greedy import greedy_tree
from ..heuristics.pruning import tune_cp
from ..heuristics import tune as _tune
from ..heuristics.local_search import _seeds
from ..heuristics.tuning import TuneResult, check_depth_grid
from ..params import NONE, InstanceOf, Interval, Options
from .base import OptTreesEstimator, store_params
from .common import FittedTreeMixin, finish_fit, record_display_bounds, record_node_stats, root_leaf
from .fitcontrol import controlled_fit, warn_time_limit


class OptimalTreeCV(FittedTreeMixin, OptTreesEstimator):
    """Tuned optimal tree (classification or regression) following the thesis's validation protocol.

    Parameters
    ----------
    task : {"classification", "regression"}, default="classification"
        What y is.
    max_depth : int, default=10
        Largest depth tried (the grid is 1..max_depth unless ``depths`` is given).
    depths : list of int or None, default=None
        The depth grid, instead of 1..max_depth.
    n_restarts : int, default=100
        Local-search restarts per depth (and in the refit).
    min_samples_leaf : int, default=1
        Minimum number of training samples in every leaf.
    split_type : {"parallel", "hyperplane"}, default="parallel"
        Parallel (OCT / ORT) or hyperplane (OCT-H / ORT-H) splits.
    n_hyperplane_restarts : int, default=5
        Restarts of each hyperplane-split search.
    validation_fraction : float, default=1/3
        Share of the data held out for tuning when no X_val is given (1/3 turns the thesis's 75%
        train+validation into its 50/25 split).
    batch_fraction : float, default=0.1
        Share of the restarts (the best ones) pruned at each depth.
    random_state : int, RandomState instance or None, default=0
        Seeds the split, the tuning and the refit.
    n_jobs : int or None, default=1
        Threads for the restarts (-1: all cores).
    loss : {"squared", "absolute"} or None, default=None
        None: misclassification (classification) or squared error (regression); "absolute" for regression
        (median leaves; the validation error is then the mean absolute error).
    method : {"local-search", "greedy"}, default="local-search"
        How each depth's trees are grown: Dunn's local search with ``n_restarts`` restarts, alpha by batch
        pruning (the OCT of the thesis), or one greedy CART tree (gini) with alpha by cost-complexity pruning on
        the validation set (Algorithm 2.5, the thesis's CART baseline: rpart with ``minbucket`` and ``cp`` tuned
        on validation); the refit on train + validation uses the same method.
    time_limit : float or None, default=None
        Seconds for the whole fit (None or ``inf``: no limit). When it runs out, or on Ctrl-C, the depths not
        yet tried are skipped, the running local search returns its best tree so far, and the refit on train
        + validation is the quick start tree of one restart (``fit_status_`` says why).

    Attributes
    ----------
    tree_ : Tree
        The tree refitted on train + validation with the tuned depth and alpha.
    best_depth_, best_alpha_ : int, float
        The tuned depth and complexity penalty.
    val_error_ : float
        Validation error of the tuned tree.
    tuning_table_ : list of dict
        One row per (depth, alpha) candidate.
    classes_ : ndarray
        Class labels (classification).
    n_features_in_ : int
        Number of features seen in ``fit``.
    fit_status_, fit_timings_ : str, dict
        As for :class:`OptimalTreeClassifier`.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from opttrees import OptimalTreeCV
    >>> X, y = load_iris(return_X_y=True)
    >>> cv = OptimalTreeCV(max_depth=2, n_restarts=5, random_state=0).fit(X, y)
    >>> cv.best_depth_ in (1, 2), cv.score(X, y) > 0.9
    (True, True)
    """

    _parameter_rules = {   # plus SHARED_RULES for the others
        "task": [Options("classification", "regression")],
        "depths": [InstanceOf((list, tuple, np.ndarray), "a non-empty list of integers >= 0"), NONE],
        "validation_fraction": [Interval("real", 0, 1, closed="neither")],
        "batch_fraction": [Interval("real", 0, 1, closed="right")],
        "loss": [Options("squared", "absolute"), NONE],
        "method": [Options("local-search", "greedy")],
    }

    def __init__(self, *, task="classification", max_depth=10, depths=None, n_restarts=100, min_samples_leaf=1,
                 split_type="parallel", n_hyperplane_restarts=5, validation_fraction=1 / 3, batch_fraction=0.1,
                 random_state=0, n_jobs=1, loss=None, method="local-search", time_limit=None):
        store_params(self, locals())

    def fit(self, X, y, X_val=None, y_val=None):
        self._check_params()
        # validate the depth grid and the validation set before any tuning work
        check_depth_grid(self.max_depth, self.depths)
        if (X_val is None) != (y_val is None):
            given, missing = ("y_val", "X_val") if X_val is None else ("X_val", "y_val")
            raise InputError(f"{given} was given without {missing}: pass both X_val and y_val, or neither "
                             "(a validation split is then held out)")
        if X_val is not None and len(X_val) != len(y_val):
            raise InputError(f"X_val and y_val have different lengths ({len(X_val)} vs {len(y_val)})")
        with controlled_fit(self, self._time_limit()) as ctl:
            self._fit(ctl, X, y, X_val, y_val)
            warn_time_limit(self, ctl, "the tuning (depths not reached were skipped)")
        return self

    def _fit(self, ctl, X, y, X_val, y_val):
        s_split, s_tune, s_refit = _seeds(self.random_state, 3)
        X = np.asarray(X) if not hasattr(X, "columns") else X
        if X_val is None:
            strat = y if self.task == "classification" else None
            try:
                Xt, Xv, yt, yv = train_test_split(X, y, test_size=self.validation_fraction, random_state=int(s_split),
                                                  stratify=strat)
            except ValueError:
                Xt, Xv, yt, yv = train_test_split(X, y, test_size=self.validation_fraction, random_state=int(s_split))
        else:
            Xt, yt, Xv, yv = X, y, X_val, y_val
        train = prepare(Xt, yt, task=self.task, min_samples_leaf=self.min_samples_leaf)
        Xv = check_X(Xv, train.p, "X_val")
        greedy = self.method == "greedy"
        if greedy and self.split_type != "parallel":
            raise InputError("method='greedy' (CART) grows parallel splits only: set split_type='parallel'")
        with ctl.stage("tune"):
            if greedy:
                res = _tune_greedy(train, Xv, np.asarray(yv), self.max_depth, self.depths, self.min_samples_leaf,
                                   self.loss, int(s_tune))
            else:
                res = _tune(train, Xv, np.asarray(yv), self.max_depth, self.depths, self.n_restarts,
                            self.min_samples_leaf, self.split_type, self.batch_fraction, int(s_tune), self.n_jobs,
                            self.n_hyperplane_restarts, self.loss, time_limit=ctl.time())
        Xall = np.vstack([np.asarray(Xt, dtype=np.float64), Xv])
        yall = np.concatenate([np.asarray(yt), np.asarray(yv)])
        full = prepare(Xall, yall, task=self.task, min_samples_leaf=self.min_samples_leaf)
        with ctl.stage("refit"):
            if greedy:
                self.tree_ = greedy_tree(full, res.depth, self.min_samples_leaf, res.alpha, loss=self.loss,
                                         random_state=int(s_refit))
            else:
                self.tree_ = local_search(full, res.depth, res.alpha, self.min_samples_leaf, self.n_restarts,
                                          self.split_type, int(s_refit), self.n_jobs, self.n_hyperplane_restarts,
                                          self.loss, time_limit=ctl.time())
        if ctl.stop():
            ctl.mark_cut_short("tuning")
        from ..heuristics.core import make_problem, objective, refit_leaves
        prob = make_problem(full, self.loss if self.task == "regression" else None)
        self.tree_ = finish_fit(self, self.tree_, full.X, lambda t: objective(t, prob, float(res.alpha)),
                                leaf=refit_leaves(root_leaf(self.tree_), prob))
        self.best_depth_, self.best_alpha_, self.val_error_ = res.depth, res.alpha, res.val_error
        self.tuning_table_ = res.table
        self.n_features_in_ = full.p
        record_display_bounds(self, full.X)
        if self.task == "classification":
            self.classes_ = np.asarray(full.codec.classes)
        record_node_stats(self, full.X, full.y, full.sample_weight, self._sklearn_criterion,
                          full.n_classes if self.task == "classification" else None)

    @property
    def _sklearn_criterion(self) -> str:   # type: ignore[override]
        if self.task == "classification":
            return "gini"
        return "absolute_error" if self.loss == "absolute" else "squared_error"

    def score(self, X, y):
        pred = self.predict(X)
        return accuracy_score(y, pred) if self.task == "classification" else r2_score(y, pred)


def _tune_greedy(train, X_val, y_val, max_depth, depths, min_samples_leaf, loss, seed) -> TuneResult:
    """The thesis's CART baseline per depth: one greedy tree grown to the depth (alpha 0), alpha by
    cost-complexity pruning on the validation set (Algorithm 2.5); the depth with the lowest validation error
    wins (the smaller depth on a tie)."""
    from ..heuristics.core import make_problem
    prob = make_problem(train, loss)
    best, table = None, []
    for depth in check_depth_grid(max_depth, depths):
        tree = greedy_tree(train, depth, min_samples_leaf, 0.0, loss=loss, random_state=seed)
        alpha, err = tune_cp(tree, prob, X_val, y_val)
        table.append({"depth": depth, "alpha": alpha, "val_error": err})
        if best is None or err < best[2] - 1e-12:
            best = (alpha, depth, err)
    assert best is not None   # the depth grid is never empty
    return TuneResult(best[0], best[1], best[2], table)
