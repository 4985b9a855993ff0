"""Input validation and preparation shared by every method.

Why one module: the MIO needs features scaled to [0, 1] with per-feature epsilons, the heuristics need the
same validated arrays, and every estimator must reject bad input with the same clear messages.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .errors import InputError, NonNumericInputError

#: values closer than this (after scaling to [0, 1]) count as equal when computing epsilons
EPS_ROUND_DECIMALS = 9


def _as_2d_float(X, name: str = "X") -> tuple[np.ndarray, list[str]]:
    """Return X as a float64 (n, p) array and its feature names, or raise InputError naming the problem."""
    if X is None:
        raise InputError(f"{name} is None; expected a 2-D array or DataFrame of numeric features")
    if isinstance(X, pd.Series):
        X = X.to_frame()
    if isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        bad = [c for c in X.columns if not (pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c]))]
        if bad:
            raise InputError(
                f"{name} has non-numeric column(s) {[str(b) for b in bad]}: encode categories "
                "(e.g. pandas.get_dummies) or drop them before fitting")
        if any(X[c].dtype.kind == "c" for c in X.columns):
            raise InputError(f"{name} has complex values; features must be real numbers (Complex data not supported)")
        arr = X.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        if hasattr(X, "tocsr") or type(X).__module__.startswith("scipy.sparse"):
            raise InputError(f"{name} is a sparse matrix; opttrees needs dense features (use X.toarray())")
        try:
            arr = np.asarray(X)
        except Exception as exc:  # ragged lists and the like
            raise InputError(f"{name} could not be read as an array: {exc}") from None
        if arr.dtype == object or arr.dtype.kind in "USV":
            try:
                arr = arr.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise NonNumericInputError(f"{name} contains non-numeric values (e.g. strings); all features must "
                                           f"be numeric (numpy: {exc})") from None
        names = None
    if arr.dtype.kind == "c":
        raise InputError(f"{name} has complex values; features must be real numbers (Complex data not supported)")
    if arr.ndim == 1:
        raise InputError(f"Reshape your data: {name} is 1-D with shape {arr.shape}; expected 2-D (n_samples, "
                         "n_features) — use X.reshape(-1, 1) for a single feature")
    if arr.ndim != 2:
        raise InputError(f"{name} must be 2-D (n_samples, n_features); got shape {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.shape[0] == 0:
        raise InputError(f"{name} is empty: it has 0 rows")
    if arr.shape[1] == 0:
        raise InputError(f"{name} has 0 feature columns: 0 feature(s) (shape={arr.shape}) while a minimum of 1 "
                         "is required.")
    if not np.isfinite(arr).all():
        rows, cols = np.nonzero(~np.isfinite(arr))
        kind = "NaN" if np.isnan(arr[rows[0], cols[0]]) else "infinite"
        raise InputError(f"{name} contains {len(rows)} NaN/infinite value(s) (first: {kind} at row {rows[0]}, "
                         f"column {cols[0]}); impute or drop them before fitting")
    if names is None:
        names = [f"x{j}" for j in range(arr.shape[1])]
    return arr, names


def check_X(X, n_features: int | None = None, name: str = "X") -> np.ndarray:
    """Validate a prediction-time feature matrix (same checks as training, plus the feature count)."""
    arr, _ = _as_2d_float(X, name)
    if n_features is not None and arr.shape[1] != n_features:
        raise InputError(f"{name} has {arr.shape[1]} features, but opttrees is expecting {n_features} features as "
                         f"input (the tree was fitted with {n_features})")
    return arr


def _as_1d(y, n: int, name: str = "y") -> np.ndarray:
    if y is None:
        raise InputError(f"{name} is None: this estimator requires y to be passed, but the target y is None")
    if isinstance(y, pd.DataFrame):
        if y.shape[1] != 1:
            raise InputError(f"{name} must be 1-D; got a DataFrame with {y.shape[1]} columns")
        y = y.iloc[:, 0]
    arr = np.asarray(y)
    if arr.ndim == 2 and arr.shape[1] == 1:
        from sklearn.exceptions import DataConversionWarning
        warnings.warn(f"A column-vector y was passed when a 1d array was expected ({name} has shape {arr.shape}); "
                      f"it was flattened to shape ({arr.shape[0]},)", DataConversionWarning, stacklevel=3)
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise InputError(f"{name} must be 1-D; got shape {arr.shape}")
    if arr.shape[0] != n:
        raise InputError(f"X has {n} rows but {name} has {arr.shape[0]}: lengths must match")
    return arr


def check_sample_weight(sample_weight, n: int) -> np.ndarray:
    """Validate weights: finite, non-negative, not all zero. None means unit weights."""
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != n:
        raise InputError(f"sample_weight must have shape ({n},); got {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise InputError("sample_weight must be finite and non-negative")
    if w.sum() <= 0:
        raise InputError("sample_weight sums to zero")
    return w


@dataclass
class LabelCodec:
    """Maps labels of any type (strings, -1/+1, floats) to 0..K-1 and back."""

    classes: np.ndarray

    @classmethod
    def fit(cls, y: np.ndarray) -> "LabelCodec":
        if y.dtype.kind == "f" and not np.isfinite(y).all():
            raise InputError("y contains NaN/infinite labels")
        if y.dtype == object and any(v is None or (isinstance(v, float) and np.isnan(v)) for v in y):
            raise InputError("y contains missing labels (None/NaN)")
        if y.dtype.kind == "f" and not np.all(y == np.round(y)) and len(np.unique(y)) > max(2, len(y) // 2):
            raise InputError("y has non-integer float values, most of them distinct: it looks like a continuous "
                             "target, not class labels; use OptimalTreeRegressor (or convert the labels to int/str)")
        if y.dtype.kind == "c":
            raise InputError("y has complex values; class labels must be integers, strings or booleans")
        try:
            classes = np.unique(y)
        except TypeError:
            raise InputError("y mixes label types that cannot be ordered (e.g. strings and numbers)") from None
        return cls(classes)

    def encode(self, y: np.ndarray) -> np.ndarray:
        idx = np.searchsorted(self.classes, y)
        idx = np.clip(idx, 0, len(self.classes) - 1)
        if not (self.classes[idx] == y).all():
            raise InputError("y contains labels not seen during fitting")
        return idx.astype(np.int64)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        return self.classes[np.asarray(codes, dtype=np.int64)]


@dataclass
class MinMaxScaling:
    """Per-feature affine map to [0, 1] fitted on training data; constant features map to 0."""

    lo: np.ndarray
    span: np.ndarray  # 1.0 for constant features so the map stays defined

    @classmethod
    def fit(cls, X: np.ndarray) -> "MinMaxScaling":
        lo, hi = X.min(axis=0), X.max(axis=0)
        span = hi - lo
        span = np.where(span > 0, span, 1.0)
        return cls(lo, span)

    def transform(self, X: np.ndarray) -> np.ndarray:
        return (X - self.lo) / self.span

    def inverse(self, Xs: np.ndarray) -> np.ndarray:
        return Xs * self.span + self.lo


def feature_epsilon(Xs: np.ndarray, decimals: int = EPS_ROUND_DECIMALS) -> np.ndarray:
    """Smallest gap between distinct (rounded) values of each scaled feature; 0 for constant features.

    Rounding first keeps float near-duplicates from producing epsilons of 1e-16 that wreck the MIO.
    """
    eps = np.zeros(Xs.shape[1])
    for j in range(Xs.shape[1]):
        u = np.unique(np.round(Xs[:, j], decimals))
        if len(u) > 1:
            eps[j] = np.diff(u).min()
    return eps


@dataclass
class PreparedData:
    """Validated training data plus everything the MIO and heuristics derive from it."""

    X: np.ndarray                      # (n, p) original units
    Xs: np.ndarray                     # (n, p) scaled to [0, 1]
    y: np.ndarray                      # encoded labels (int) or targets (float)
    feature_names: list[str]
    scaling: MinMaxScaling
    eps: np.ndarray                    # per-feature epsilon in scaled units (0 = constant feature)
    sample_weight: np.ndarray
    codec: LabelCodec | None = None    # classification only
    task: str = "classification"
    extra: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def p(self) -> int:
        return self.X.shape[1]

    @property
    def n_classes(self) -> int:
        return 0 if self.codec is None else len(self.codec.classes)

    @property
    def splittable(self) -> np.ndarray:
        """Features with at least two distinct values; constant ones are never split on."""
        return self.eps > 0


def prepare(X, y=None, task: str = "classification", sample_weight=None, min_samples_leaf: int = 1,
            allow_single_class: bool = False) -> PreparedData:
    """Validate X (and y) and derive scaling, epsilons and label codes.

    ``task`` is "classification", "regression" or "none" (X only, e.g. SPO trees with cost vectors).
    """
    if task not in ("classification", "regression", "none"):
        raise InputError(f"unknown task {task!r}")
    Xa, names = _as_2d_float(X)
    n = Xa.shape[0]
    if not isinstance(min_samples_leaf, (int, np.integer)) or isinstance(min_samples_leaf, bool) or min_samples_leaf < 1:
        raise InputError(f"min_samples_leaf must be an integer >= 1; got {min_samples_leaf!r}")
    if n < min_samples_leaf:
        raise InputError(f"X has {n} rows, fewer than min_samples_leaf={min_samples_leaf}: no tree is feasible")
    w = check_sample_weight(sample_weight, n)
    codec = None
    if task == "classification":
        ya = _as_1d(y, n)
        codec = LabelCodec.fit(ya)
        if len(codec.classes) < 2 and not allow_single_class:
            raise InputError(f"y has only one class ({codec.classes[0]!r}); a classifier needs at least two")
        yenc = codec.encode(ya)
    elif task == "regression":
        ya = _as_1d(y, n)
        try:
            yenc = ya.astype(np.float64)
        except (TypeError, ValueError):
            raise InputError("y must be numeric for regression") from None
        if not np.isfinite(yenc).all():
            raise InputError("y contains NaN/infinite values")
    else:
        yenc = np.zeros(n)
    scaling = MinMaxScaling.fit(Xa)
    Xs = np.clip(scaling.transform(Xa), 0.0, 1.0)
    eps = feature_epsilon(Xs)
    return PreparedData(Xa, Xs, yenc, names, scaling, eps, w, codec, task)
