"""Input validation and preparation shared by every method.

Why one module: the MIO needs features scaled to [0, 1] with per-feature epsilons, the heuristics need the
same validated arrays, and every estimator must reject bad input with the same clear messages.
"""
from __future__ import annotations

import copy
import dataclasses
import math
import warnings
from dataclasses import dataclass, field
from typing import overload

import numpy as np
import pandas as pd

from ..errors import InputError, NonNumericInputError

#: the rank scale keeps neighbouring values this far apart at least; above it (more than about 10^5 distinct
#: values in one feature) the MIO's strict-inequality rows come within ten times the solvers' feasibility
#: tolerance (1e-6) and a warning says so (the re-verification still catches any misrouted point)
MIN_SAFE_GAP = 1e-5


def check_unique_columns(X: pd.DataFrame, name: str = "X") -> None:
    """A table's columns are features named by their column names: two with one name (also after ``str``, as
    the tree stores names) cannot be told apart by name, so they are an error naming them."""
    names = pd.Index([str(c) for c in X.columns])
    dup = names[names.duplicated()].unique().tolist()
    if dup:
        raise InputError(f"{name} has duplicate column names {dup}: give every column a distinct name "
                         "(e.g. X.columns = [...]) before fitting")


def _as_2d_float(X, name: str = "X") -> tuple[np.ndarray, list[str]]:
    """Return X as a float64 (n, p) array and its feature names, or raise InputError naming the problem."""
    if X is None:
        raise InputError(f"{name} is None; expected a 2-D array or DataFrame of numeric features")
    if isinstance(X, pd.Series):
        X = X.to_frame()
    if isinstance(X, pd.DataFrame):
        check_unique_columns(X, name)
        names = [str(c) for c in X.columns]
        bad = [c for c in X.columns if not (pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c]))]
        if bad:
            raise InputError(
                f"{name} has non-numeric column(s) {[str(b) for b in bad]}: give category columns the pandas "
                "'category' dtype (X[col].astype('category'), one-hot encoded by the estimator), encode them "
                "yourself (e.g. pandas.get_dummies) or drop them")
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
    arr = owned(arr, np.float64)
    if arr.shape[0] == 0:
        raise InputError(f"{name} is empty: it has 0 rows")
    if arr.shape[1] == 0:
        raise InputError(f"{name} has 0 feature columns: 0 feature(s) (shape={arr.shape}) while a minimum of 1 "
                         "is required.")
    if not np.isfinite(arr).all():
        rows, cols = np.nonzero(~np.isfinite(arr))
        kind = "NaN" if np.isnan(arr[rows[0], cols[0]]) else "infinite"
        where = f"column {names[cols[0]]!r}" if names is not None else f"column {cols[0]}"
        raise InputError(f"{name} contains {len(rows)} NaN/infinite value(s) (first: {kind} at row {rows[0]}, "
                         f"{where}); impute or drop those rows")
    if names is None:
        names = [f"x{j}" for j in range(arr.shape[1])]
    return arr, names


def owned(arr, dtype=None) -> np.ndarray:
    """``arr`` as a C-ordered, writeable array (of ``dtype`` when given): the one form every kernel receives.

    Why: numba compiles one machine-code signature per argument type, and "read-only" and "not C-ordered" are
    parts of the type. pandas 3 ``to_numpy()`` returns read-only views, slices are strided: passed on as they
    are, each would compile every kernel a second time on a user's first fit (minutes), although
    ``opttrees warmup`` had compiled them. Copies only when ``arr`` is not already in that form.
    """
    out = np.ascontiguousarray(arr, dtype=dtype)
    if not out.flags.writeable:
        out = out.copy()
    return out


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
    arr = frame_column(y, name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        from sklearn.exceptions import DataConversionWarning
        warnings.warn(f"A column-vector y was passed when a 1d array was expected ({name} has shape {arr.shape}); "
                      f"it was flattened to shape ({arr.shape[0]},)", DataConversionWarning, stacklevel=3)
        arr = arr[:, 0]
    return check_vector(arr, n, name)


def frame_column(v, name: str) -> np.ndarray:
    """``v`` as an array, a one-column DataFrame as its column (InputError for more columns): the first step of
    reading a per-row vector (labels, treatments, outcomes)."""
    if isinstance(v, pd.DataFrame):
        if v.shape[1] != 1:
            raise InputError(f"{name} must be 1-D; got a DataFrame with {v.shape[1]} columns")
        v = v.iloc[:, 0]
    arr = np.asarray(v)
    return owned(arr) if arr.ndim else arr


def check_vector(arr: np.ndarray, n: int | None, name: str) -> np.ndarray:
    """``arr`` when it is 1-D with ``n`` entries (any length when n is None), else an InputError."""
    if arr.ndim != 1:
        raise InputError(f"{name} must be 1-D; got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise InputError(f"X has {n} rows but {name} has {arr.shape[0]}: lengths must match")
    return arr


def check_sample_weight(sample_weight, n: int) -> np.ndarray:
    """Validate weights: finite, non-negative, not all zero. None means unit weights."""
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 1:
        w = owned(w)
    if w.ndim != 1 or w.shape[0] != n:
        raise InputError(f"sample_weight must have shape ({n},); got {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise InputError("sample_weight must be finite and non-negative")
    if w.sum() <= 0:
        raise InputError("sample_weight sums to zero")
    return w


def continuous_target(y) -> str | None:
    """Why the labels ``y`` look like a regression target rather than classes, or None when they do not.

    The rule (docs/data.md, "Specs on real data"): numeric labels with more distinct values than ``max(20, n/5)`` (on
    average fewer than five rows per class), or non-integer floats most of which are distinct. Strings and
    booleans are always classes. Why a rule at all: a classifier given the diabetes target trains 214
    "classes" and reports an accuracy of 0.04 instead of saying that the model is the wrong kind.
    """
    arr = np.asarray(y)
    if arr.dtype.kind not in "iuf" or arr.size == 0:
        return None
    finite = arr[np.isfinite(arr)] if arr.dtype.kind == "f" else arr
    distinct, n = len(np.unique(finite)), len(arr)
    limit = max(20, n // 5)
    if distinct > limit:
        return f"{distinct} distinct numeric values in {n} rows; class labels allow at most max(20, n/5) = {limit}"
    if arr.dtype.kind == "f" and not np.all(finite == np.round(finite)) and distinct > max(2, n // 2):
        return f"non-integer values, {distinct} of {n} distinct"
    return None


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
        reason = continuous_target(y)
        if reason is not None:
            raise InputError(f"y looks like a continuous target, not class labels ({reason}); use a regression "
                             "model (OptimalTreeRegressor; in a spec model.type: ort, ort-dp or ort-cv), or give "
                             "the labels as strings if they really are classes")
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


def feature_epsilon(Xs: np.ndarray) -> np.ndarray:
    """Smallest gap between distinct values of each scaled feature, exactly (no rounding); 0 for constant ones.

    Why exact: rounding merged distinct values (500000 and 500000.0002 on a [0, 1e6] range), so no split could
    separate them and a worse tree was proven "optimal". Tiny gaps are no longer a hazard for axis-parallel
    MIOs, which route on the rank scale (:func:`rank_scale`); this epsilon only says which features split.
    """
    eps = np.zeros(Xs.shape[1])
    for j in range(Xs.shape[1]):
        u = np.unique(Xs[:, j])
        if len(u) > 1:
            eps[j] = np.diff(u).min()
    return eps


def rank_scale(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Each feature on its rank scale: (R, gap, values).

    ``values[j]`` are feature j's distinct values in increasing order (exact, no rounding), ``R[i, j]`` is the
    position of ``X[i, j]`` among them divided by ``len(values[j]) - 1`` (so R lies in [0, 1]) and ``gap[j]`` =
    1 / (len(values[j]) - 1), the distance between neighbouring distinct values (0 for a constant feature).

    Why: an axis-parallel split only sees the order of a feature's values, so any increasing map of a feature
    gives the same trees. On the min-max scale neighbouring values of real data are 1e-6..1e-12 apart, inside
    the solvers' feasibility tolerance, and an MIO's strict-inequality rows could be violated "feasibly" (the
    solver's tree is not the tree the data follows). On the rank scale they are at least 1/(distinct values)
    apart, and a threshold maps back to the midpoint of the two values it falls between
    (:func:`split_between`).
    """
    n, p = X.shape
    R = np.zeros((n, p))
    gap = np.zeros(p)
    values = []
    for j in range(p):
        u, inv = np.unique(X[:, j], return_inverse=True)
        values.append(u)
        if len(u) > 1:
            gap[j] = 1.0 / (len(u) - 1)
            R[:, j] = inv * gap[j]
    return R, gap, values


def split_between(lo: float, hi: float) -> float:
    """A threshold t with lo < t <= hi, so ``x < t`` sends lo left and hi right exactly: the midpoint when it
    falls strictly above lo in floating point, else hi (neighbouring floats have no number between them)."""
    t = (lo + hi) / 2.0
    return float(t) if lo < t <= hi else float(hi)


def cut_of_le(values, t: float, float32: bool = False) -> float | None:
    """The threshold b (``x < b`` left, the project's rule) that routes each of ``values`` as scikit-learn's
    ``x <= t`` does: :func:`split_between` the largest value ``x <= t`` sends left and the smallest it sends
    right, so b lies in (max left, min right]. ``float32``: the test is on ``float32(x)`` (a scikit-learn tree
    fitted on float64 features compares their float32 copies with its float64 t; rounding to float32 keeps the
    order, so the left side is still every value below some cut). None when t sends every value one way.

    Why not the nearest midpoint, or ``searchsorted(values, mid, side="right")``: a midpoint of neighbouring
    floats rounds onto the upper value, which that sends left where scikit-learn sent it right.
    """
    v = np.asarray(values, dtype=np.float64)
    key = v.astype(np.float32).astype(np.float64) if float32 else v
    left = key <= float(t)
    if left.all() or not left.any():
        return None
    return split_between(float(v[left].max()), float(v[~left].min()))


class ShapeOf:
    """A read-only ``int`` attribute: the size of the instance's array attribute ``array`` along ``axis``. The
    data classes' ``n``, ``p`` and ``n_columns`` are each one such line (``n = ShapeOf("X", 0)``), which says
    which array it measures, rather than a four-line property each."""

    def __init__(self, array: str, axis: int):
        self.array, self.axis = array, axis

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> ShapeOf: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> int: ...

    def __get__(self, obj, owner=None):
        return self if obj is None else getattr(obj, self.array).shape[self.axis]


class RankedFeatures:
    """The features every tree MIO routes on, shared by the prepared and the prescriptive data: ``X`` in original
    units, ``Xs`` min-max scaled, the per-feature gaps ``eps``, names and scaling (declared here, set by the data
    classes), and ``n``, ``p``, ``ranks`` and ``splittable`` derived from ``X``."""

    X: np.ndarray                      # (n, p) original units
    Xs: np.ndarray                     # (n, p) min-max scaled to [0, 1]
    eps: np.ndarray                    # per-feature smallest scaled gap (0: constant feature, never split)
    feature_names: list
    scaling: MinMaxScaling
    n = ShapeOf("X", 0)
    p = ShapeOf("X", 1)

    @property
    def ranks(self) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
        """:func:`rank_scale` of ``X``, computed once."""
        cache = self.__dict__.get("_ranks")
        if cache is None:
            cache = self.__dict__["_ranks"] = rank_scale(self.X)
        return cache

    @property
    def splittable(self) -> np.ndarray:
        """Features with at least two distinct values; constant ones are never split on."""
        return self.ranks[1] > 0


def is_constant_target(y) -> bool:
    """Whether the values of ``y`` are all equal relative to their own scale (a spread within a few rounding
    units of the largest magnitude): the one test of a constant target, whatever its units (1e-9 or 1e9)."""
    y = np.asarray(y, dtype=np.float64)
    if y.size == 0:
        return True
    lo, hi = float(y.min()), float(y.max())
    return bool(hi - lo <= 8 * np.finfo(np.float64).eps * max(abs(lo), abs(hi)))


@dataclass(frozen=True)
class TargetScaling:
    """The affine map y' = (y - loc) / scale a regression fit works in, and its inverse for fitted values.

    Why: squared and absolute losses of y = 1e6 + small spread, or of y ~ 1e-9, meet absolute tolerances and
    cancellation in every search (sums of squares, big-M constants, solver feasibility tolerances); on y' (mean
    0, spread about 1) they do not. The normalised objective loss / L-hat + alpha * splits is the same on y and
    y' for squared and absolute loss, so trees and objectives carry over; fitted values map back with
    :meth:`values_to_user` / :meth:`tree_to_user`. ``loc`` is the weighted mean, ``scale`` the power of two
    nearest y's weighted standard deviation (dividing by it is exact), exactly 1 for a constant target.
    """

    loc: float = 0.0
    scale: float = 1.0

    @classmethod
    def fit(cls, y, sample_weight=None) -> "TargetScaling":
        y = np.asarray(y, dtype=np.float64)
        if y.size == 0:
            return cls()
        w = np.ones(y.shape) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        W = float(w.sum())
        loc = float(np.sum(w * y) / W) if W > 0 else float(y.mean())
        if not np.isfinite(loc):                          # the sum overflowed: the mean of halves
            loc = float(np.sum(w * (y / 2)) / W) * 2 if W > 0 else 0.0
        if is_constant_target(y) or not W > 0:
            return cls(float(y[0]) if is_constant_target(y) else loc, 1.0)
        loc += float(np.sum(w * (y - loc)) / W)           # second pass: the mean to the spread's precision
        d = y - loc
        a = float(np.abs(d).max())                        # scaled first: no overflow or underflow in the squares
        sd = a * math.sqrt(float(np.sum(w * (d / a) ** 2)) / W) if a > 0 else 0.0
        if not (np.isfinite(sd) and sd > 0):
            return cls(loc, 1.0)
        return cls(loc, float(2.0 ** round(math.log2(sd))))

    @property
    def identity(self) -> bool:
        return self.loc == 0.0 and self.scale == 1.0

    @classmethod
    def fit_transform(cls, y, sample_weight=None) -> tuple["TargetScaling", np.ndarray]:
        """The scaling of ``y`` and y' = the training target in its units. A constant target
        (:func:`is_constant_target`) maps to exactly 0, not to its rounding residue y - y[0]: a residue of one
        float (y = 1e6 and its next float) would itself be a non-constant target of spread 1e-10, and every search
        split on it (issue 38). Every method searches this y' (:func:`standardize_target`, the DP's tasks)."""
        y = np.asarray(y, dtype=np.float64)
        ts = cls.fit(y, sample_weight)
        return ts, (np.zeros_like(y) if is_constant_target(y) else ts.transform(y))

    def transform(self, y) -> np.ndarray:
        return (np.asarray(y, dtype=np.float64) - self.loc) / self.scale

    def values_to_user(self, v) -> np.ndarray:
        """Fitted constants (or predictions) on y' back to y's units: loc + scale * v."""
        return self.loc + self.scale * np.asarray(v, dtype=np.float64)

    def loss_to_user(self, raw_loss: float, loss: str) -> float:
        """A raw loss on y' in y's units (squared loss scales by scale**2, absolute loss by scale)."""
        return float(raw_loss) * (self.scale ** 2 if loss == "squared" else self.scale)

    def tree_to_user(self, tree):
        """A copy of a regression ``Tree`` fitted on y' whose values are in y's units: constants loc + scale * v;
        linear leaves (``task == "linear"``, value rows [intercept, coefs]) intercept loc + scale * b and coefficients
        scale * beta. Splits are unchanged. (Duck-typed: this module sits below ``tree``.)"""
        if self.identity or tree.task not in ("regression", "linear"):
            return tree
        out = copy.copy(tree)
        v = np.array(tree.value, dtype=np.float64, copy=True)
        if tree.task == "linear":
            v[:, 0] = self.loc + self.scale * v[:, 0]
            v[:, 1:] = self.scale * v[:, 1:]
        else:
            v = self.loc + self.scale * v
        out.value = v
        out.extras = dict(tree.extras)
        return out


@dataclass
class PreparedData(RankedFeatures):
    """Validated training data plus everything the MIO and heuristics derive from it."""

    X: np.ndarray                      # (n, p) original units
    Xs: np.ndarray                     # (n, p) min-max scaled to [0, 1] (hyperplane splits, linear leaves)
    y: np.ndarray                      # encoded labels (int) or targets (float)
    feature_names: list[str]
    scaling: MinMaxScaling
    eps: np.ndarray                    # per-feature epsilon in scaled units (0 = constant feature)
    sample_weight: np.ndarray
    codec: LabelCodec | None = None    # classification only
    task: str = "classification"
    extra: dict = field(default_factory=dict)
    #: rows of the caller's X kept here (zero-weight rows are dropped); None when every row was kept
    kept_rows: np.ndarray | None = None
    #: the features (original units) of the rows of weight 0 that were dropped; None when none was
    dropped_X: np.ndarray | None = None
    #: regression only: the map from the caller's y to ``y`` (set by :func:`standardize_target`); None when ``y``
    #: is in the caller's units
    target: TargetScaling | None = None

    @property
    def n_classes(self) -> int:
        return 0 if self.codec is None else len(self.codec.classes)

    @property
    def all_rows_X(self) -> np.ndarray:
        """Every training row's features, the dropped rows of weight 0 included (after ``X``'s): the rows a
        fitted tree's threshold snapping keeps on their side (:meth:`opttrees.tree.Tree.set_display_bounds`)."""
        return self.X if self.dropped_X is None or not len(self.dropped_X) else np.vstack([self.X, self.dropped_X])

    def class_labels(self) -> np.ndarray:
        """The class labels, for the places where the task guarantees a codec (classification)."""
        if self.codec is None:
            raise InputError(f"{self.task} data has no class labels")
        return self.codec.classes



def prepare(X, y=None, task: str = "classification", sample_weight=None, min_samples_leaf: int = 1,
            allow_single_class: bool = False) -> PreparedData:
    """Validate X (and y) and derive scaling, epsilons and label codes.

    ``task`` is "classification", "regression" or "none" (X only, e.g. SPO trees with cost vectors).

    **Zero weights** (one rule for every method, docs/data.md "Sample weights"): a row of weight 0 is dropped here,
    as if it were not in the data. It counts toward no leaf's ``min_samples_leaf``, gives no threshold and no
    class; ``kept_rows`` records which rows stayed and ``dropped_X`` keeps the others' features, so that snapping
    a fitted tree's thresholds moves no row of the caller's X (:attr:`PreparedData.all_rows_X`). (Task "none"
    keeps every row: its cost vectors are aligned with X by the caller.) ``min_samples_leaf`` counts the
    remaining rows, whatever their weights.
    """
    if task not in ("classification", "regression", "none"):
        raise InputError(f"unknown task {task!r}")
    Xa, names = _as_2d_float(X)
    n = Xa.shape[0]
    warn_id_like(Xa, names)
    if not isinstance(min_samples_leaf, (int, np.integer)) or isinstance(min_samples_leaf, bool) or min_samples_leaf < 1:
        raise InputError(f"min_samples_leaf must be an integer >= 1; got {min_samples_leaf!r}")
    if n < min_samples_leaf:
        raise InputError(f"X has {n} rows, fewer than min_samples_leaf={min_samples_leaf}: no tree is feasible")
    w = check_sample_weight(sample_weight, n)
    kept = dropped = None
    if task != "none":
        ya_all = _as_1d(y, n)
        if (w == 0).any():
            kept, dropped = np.flatnonzero(w > 0), Xa[w == 0]
            Xa, w, ya_all, n = Xa[kept], w[kept], ya_all[kept], len(kept)
            if n < min_samples_leaf:
                raise InputError(f"X has {n} rows of positive weight, fewer than min_samples_leaf={min_samples_leaf}: "
                                 "no tree is feasible (rows of weight 0 count as absent)")
    codec = None
    if task == "classification":
        ya = ya_all
        codec = LabelCodec.fit(ya)
        if len(codec.classes) < 2 and not allow_single_class:
            raise InputError(f"y has only one class ({codec.classes[0]!r}); a classifier needs at least two")
        yenc = codec.encode(ya)
    elif task == "regression":
        ya = ya_all
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
    return PreparedData(Xa, Xs, yenc, names, scaling, eps, w, codec, task, kept_rows=kept, dropped_X=dropped)


#: a column needs this many rows before it can look like a row identifier
ID_MIN_ROWS = 20


def id_like(col: np.ndarray) -> str | None:
    """Why a feature column looks like a row identifier (customer number, row number), or None.

    Identifiers are distinct integers: in row order (monotone: a file sorted by id, and often by time or by label,
    lets a tree read the label off the id: ``customer_id < 100125.5`` with test accuracy 1) or, shuffled by a
    train/test split, dense in their range (span below twice the row count). Needs :data:`ID_MIN_ROWS` rows.
    """
    n = len(col)
    if n < ID_MIN_ROWS or not np.all(col == np.round(col)):
        return None
    step = np.diff(col)
    if (step > 0).all() or (step < 0).all():
        return f"distinct integers in {'increasing' if step[0] > 0 else 'decreasing'} row order"
    if len(np.unique(col)) == n and col.max() - col.min() < 2 * n:
        return f"{n} distinct integers from {int(col.min())} to {int(col.max())}"
    return None


def warn_id_like(Xa: np.ndarray, names: list[str]) -> list[str]:
    """Warn, naming each one, about feature columns that look like row identifiers (see :func:`id_like`): a tree
    can split on them and learn the file's order instead of anything about the rows. Returns their names.
    A single feature is never called one: a lone 0, 1, 2, ... column is a time step or a grid the caller chose."""
    found: list[str] = []
    if Xa.shape[1] < 2:
        return found
    for j, name in enumerate(names):
        why = id_like(Xa[:, j])
        if why is not None:
            found.append(name)
            warnings.warn(f"feature {name!r} looks like a row identifier ({why}): a tree splitting on it learns the "
                          "order of the rows, not the rows (a file sorted by the label leaks the label through it); "
                          "leave it out of the features (spec: data.features)", stacklevel=3)
    return found


def standardize_target(data: PreparedData) -> PreparedData:
    """Regression data with ``y`` standardised (:class:`TargetScaling`, recorded in ``data.target``); other data,
    or data already standardised, as it is. Every search on the result finds the trees it would find on the
    caller's y in exact arithmetic; map fitted values back with ``data.target``."""
    if data.task != "regression" or data.target is not None:
        return data
    ts, y = TargetScaling.fit_transform(data.y, data.sample_weight)
    out = dataclasses.replace(data, y=y, target=ts)
    if "_ranks" in data.__dict__:          # X is shared: so is its ranking
        out.__dict__["_ranks"] = data.__dict__["_ranks"]
    return out

