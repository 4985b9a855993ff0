"""Parameter checks shared by the estimators (clear errors at fit time, sklearn style)."""
from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..errors import InputError
from ..data import check_X
from ..solvers import check_solver


def check_choice(name: str, value, choices) -> str:
    if value not in choices:
        raise InputError(f"{name}={value!r} is not valid; choose one of {list(choices)}")
    return value


def check_int(name: str, value, low: int = 0) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
        raise InputError(f"{name} must be an integer >= {low}; got {value!r}")
    return int(value)


def check_time_limit(value):
    if value is None:
        return None
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not value > 0:
        raise InputError(f"time_limit must be a positive number of seconds or None; got {value!r}")
    return float(value)


def check_solver_param(value) -> str:
    return check_solver(value)


def feature_names_in(X):
    """sklearn's ``feature_names_in_`` convention: only for DataFrames with string column names."""
    if isinstance(X, pd.DataFrame) and all(isinstance(c, str) for c in X.columns):
        return list(X.columns)
    return None


class FittedTreeMixin:
    """predict / predict_proba / apply for estimators whose fitted model is one Tree in ``tree_``."""

    def predict(self, X):
        check_is_fitted(self, "tree_")
        return np.asarray(self.tree_.predict(check_X(X, self.n_features_in_)))

    def predict_proba(self, X):
        check_is_fitted(self, "tree_")
        return self.tree_.predict_proba(check_X(X, self.n_features_in_))

    def apply(self, X):
        check_is_fitted(self, "tree_")
        return self.tree_.apply(check_X(X, self.n_features_in_))
