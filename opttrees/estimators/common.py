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


def solver_seed(random_state) -> int:
    """An integer seed for the solver from any sklearn-style ``random_state`` (None, int, RandomState, Generator)."""
    if random_state is None:
        return 0
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise InputError(f"random_state must be >= 0; got {random_state!r}")
        return int(random_state) % (2 ** 31)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2 ** 31))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2 ** 31))
    raise InputError(f"random_state must be None, a non-negative integer, a numpy RandomState or Generator; "
                     f"got {random_state!r}")


def check_solver_param(value) -> str:
    return check_solver(value)


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
