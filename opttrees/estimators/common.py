"""Helpers shared by the estimators: the solver seed, feature names, and prediction from one fitted Tree.

Parameter rules live in :mod:`opttrees.params` and :mod:`opttrees.estimators.base`, not here.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..data import check_X
from ..errors import InputError
from ..params import check_param
from ..tree import Tree


def solver_seed(random_state) -> int:
    """An integer seed for the solver from any sklearn-style ``random_state`` (None, int, RandomState, Generator)."""
    check_param("random_state", random_state)
    if random_state is None:
        return 0
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2 ** 31))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2 ** 31))
    return int(random_state) % (2 ** 31)


def feature_names_in(X):
    """sklearn's ``feature_names_in_`` convention: only for DataFrames with string column names."""
    if isinstance(X, pd.DataFrame) and all(isinstance(c, str) for c in X.columns):
        return list(X.columns)
    return None


def check_X_fitted(est, X) -> np.ndarray:
    """X as the fitted estimator saw it: DataFrame columns are matched by name, not position.

    A DataFrame whose columns are reordered would otherwise be routed silently through the wrong features.
    """
    names = getattr(est, "feature_names_in_", None)
    if names is not None and isinstance(X, pd.DataFrame):
        names = [str(c) for c in names]
        cols = [str(c) for c in X.columns]
        missing = [c for c in names if c not in cols]
        if cols != names and len(missing) < len(names):   # no shared name at all: fitted on arrays, positional
            if missing:
                raise InputError(f"X is missing the column(s) {missing} seen at fit time "
                                 f"(fitted on {names})")
            X = X.set_axis(cols, axis=1)[names]
    return check_X(X, est.n_features_in_)


def record_display_bounds(est, X) -> None:
    """Give the fitted trees their training rows' display bounds (:meth:`~opttrees.tree.Tree.set_display_bounds`),
    so every printed threshold (text, DOT, pictures, HTML, the saved JSON) routes those rows as the tree does.

    ``X``: the training features as the trees split on them (the prepared matrix, original units). Called at the
    end of every estimator's ``fit``.
    """
    for attr in ("tree_", "unpruned_tree_", "greedy_tree_"):
        tree = getattr(est, attr, None)
        if isinstance(tree, Tree):
            tree.set_display_bounds(X)


class FittedTreeMixin:
    """predict / predict_proba / apply for estimators whose fitted model is one Tree in ``tree_``."""

    def predict(self, X):
        check_is_fitted(self, "tree_")
        return np.asarray(self.tree_.predict(check_X_fitted(self, X)))

    def predict_proba(self, X):
        check_is_fitted(self, "tree_")
        return self.tree_.predict_proba(check_X_fitted(self, X))

    def apply(self, X):
        check_is_fitted(self, "tree_")
        return self.tree_.apply(check_X_fitted(self, X))
