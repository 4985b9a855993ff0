"""Binarised training data for the flow-family formulations (FlowOCT, BendersOCT, RobustOCT).

Why one object: those models see only 0/1 split columns, yet their trees must come back in the user's
original units and a warm-start tree must go the other way. The column matrix, the labels and weights, the
original X and both maps (column -> original-units split, split -> column) travel together here, so a
formulation takes one argument and no caller writes the maps as lambdas.

Column convention (as in :class:`~opttrees.data.binarizers.Binarizer`): ``Z[i, c] = 1`` means row i goes
**right** on column c, and column c decodes to the split ``x_j < t`` (left iff true).

- :class:`BinarizedData` — any 0/1 columns: from a fitted Binarizer (:meth:`BinarizedData.from_prepared`)
  or a raw binary matrix (:meth:`BinarizedData.from_binary`, column c = feature c at 0.5).
- :class:`ThermometerData` — integer features and every integer threshold ``(f, theta)``, column
  ``1[x_f >= theta + 1]`` (RobustOCT's data: the uncertainty set lives in these integer units).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from .prepared import PreparedData, ShapeOf, check_sample_weight
from .binarizers import Binarizer, IntegerEncoder
from ..errors import InputError

#: decoded thresholds closer than this (relative) count as the same split
SPLIT_RTOL = 1e-9


def _as_labels(y, n: int, n_classes: int | None) -> tuple[np.ndarray, int]:
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != n:
        raise InputError(f"y must be 1-D with one label per row of Z ({n}); got shape {y.shape}")
    if len(y) and (y.dtype.kind not in "iubf" or not np.all(y == np.round(y)) or y.min() < 0):
        raise InputError("y must hold integer class codes 0..K-1 (encode labels with opttrees.data.prepare)")
    y = y.astype(np.int64)
    k = int(y.max()) + 1 if len(y) else 1
    if n_classes is None:
        n_classes = k
    elif int(n_classes) < k:
        raise InputError(f"n_classes={n_classes} but y holds class code {k - 1}")
    return y, int(n_classes)


def _as_binary(Z) -> np.ndarray:
    Z = np.asarray(Z)
    if Z.ndim != 2:
        raise InputError(f"Z must be a 2-D (n, C) 0/1 matrix; got shape {Z.shape}")
    if not np.isin(Z, (0, 1)).all():
        raise InputError("Z must be binary (0/1)")
    return Z.astype(np.int8)


def _column_is_feature(c: int) -> tuple[int, float]:
    """A raw binary column c is feature c split at 0.5."""
    return int(c), 0.5


def _feature_is_column(j: int, t: float) -> int:
    return int(j)


class BinarizedData:
    """0/1 split columns ``Z`` (n, C), labels ``y`` in 0..K-1, weights, the original ``X`` and the split maps.

    ``split_of_col(c) -> (j, t)`` decodes column c to the original-units split ``x_j < t``;
    ``col_of_split(j, t) -> c`` maps a split back (warm starts); it raises InputError when no column routes
    like that split. Build with :meth:`from_prepared` (estimators) or :meth:`from_binary` (tests, research).
    """

    n = ShapeOf("Z", 0)
    n_columns = ShapeOf("Z", 1)

    def __init__(self, Z, y, n_classes: int | None = None, sample_weight=None, X=None, classes=None,
                 feature_names=None, split_of_col=None, col_of_split=None):
        self.Z = _as_binary(Z)
        self.y, self.n_classes = _as_labels(y, self.Z.shape[0], n_classes)
        self.sample_weight = check_sample_weight(sample_weight, self.n)
        self.X = self.Z.astype(np.float64) if X is None else np.asarray(X, dtype=np.float64)
        if self.X.ndim != 2 or self.X.shape[0] != self.n:
            raise InputError(f"X must be (n, p) with n = {self.n} rows (one per row of Z); got {self.X.shape}")
        self.classes = None if classes is None else list(classes)
        self.feature_names = None if feature_names is None else list(feature_names)
        self._split_of_col = split_of_col or _column_is_feature
        self._col_of_split = col_of_split or _feature_is_column

    @classmethod
    def from_binary(cls, Z, y, n_classes: int | None = None, sample_weight=None, **kw) -> "BinarizedData":
        """A raw binary matrix: column c is 'feature c >= 0.5' and trees come back in Z's own units."""
        return cls(Z, y, n_classes, sample_weight, **kw)

    @classmethod
    def from_prepared(cls, data: PreparedData, binarizer: Binarizer) -> "BinarizedData":
        """The training data of an estimator through a fitted :class:`~opttrees.data.binarizers.Binarizer`."""
        if data.codec is None:
            raise InputError("binarised data needs classification labels (prepare(X, y, task='classification'))")
        return cls(binarizer.transform(data.X), data.y, data.n_classes, data.sample_weight, X=data.X,
                   classes=data.codec.classes, feature_names=data.feature_names,
                   split_of_col=binarizer.decode, col_of_split=partial(binarizer.encode_split, X=data.X))

    def split_of_col(self, c: int) -> tuple[int, float]:
        j, t = self._split_of_col(int(c))
        return int(j), float(t)

    def col_of_split(self, j: int, t: float) -> int:
        return int(self._col_of_split(int(j), float(t)))


# ------------------------------------------------------------------------------------------ thermometer
def thermometer_columns(X: np.ndarray) -> list[tuple[int, int]]:
    """(f, theta) for theta in [min_f, max_f) — the threshold set Theta(f) of the robust-trees paper."""
    cols: list[tuple[int, int]] = []
    for f in range(X.shape[1]):
        lo, hi = int(X[:, f].min()), int(X[:, f].max())
        cols.extend((f, th) for th in range(lo, hi))
    return cols


def thermometer(X: np.ndarray, cols) -> np.ndarray:
    """Column (f, theta) is ``1[x_f >= theta + 1]``: a sample goes right on it."""
    if not len(cols):
        return np.zeros((X.shape[0], 0), dtype=np.int8)
    f = np.array([c[0] for c in cols], dtype=np.int64)
    th = np.array([c[1] for c in cols], dtype=np.float64)
    return (X[:, f] >= th + 1).astype(np.int8)


class ThermometerData(BinarizedData):
    """Integer features ``X_int`` and their thermometer columns: RobustOCT's data.

    ``cols[c] = (f, theta)``: column c sends x right iff ``x_f >= theta + 1``. ``X`` is the original-units
    data (same rows) the tree is returned in; ``thresholds[c]`` is column c's split in those units. With
    identity units (``X`` is ``X_int``, :meth:`from_integer`) any threshold in ``(theta, theta + 1]`` maps
    to column (f, theta); otherwise a warm-start split must match a column's threshold.
    """

    def __init__(self, X_int, y, n_classes: int | None = None, X=None, thresholds=None, classes=None,
                 feature_names=None, sample_weight=None):
        X_int = np.asarray(X_int, dtype=np.float64)
        if X_int.ndim != 2 or not np.all(X_int == np.round(X_int)):
            raise InputError("RobustOCT needs integer-valued features (encode them with IntegerEncoder)")
        self.X_int = X_int
        self.cols = thermometer_columns(X_int)
        self.col_index = {c: k for k, c in enumerate(self.cols)}
        self.identity_units = X is None
        self.thresholds = (np.array([th + 0.5 for _, th in self.cols]) if thresholds is None
                           else np.asarray(thresholds, dtype=np.float64))
        if len(self.thresholds) != len(self.cols):
            raise InputError(f"thresholds has {len(self.thresholds)} entries for {len(self.cols)} thermometer columns")
        self.col_feature = np.array([f for f, _ in self.cols], dtype=np.int64)
        super().__init__(thermometer(X_int, self.cols), y, n_classes, sample_weight, X=X_int if X is None else X,
                         classes=classes, feature_names=feature_names)

    @classmethod
    def from_integer(cls, X_int, y, n_classes: int | None = None, **kw) -> "ThermometerData":
        """Integer data used as is: column (f, theta) decodes to the split ``x_f < theta + 0.5``."""
        return cls(X_int, y, n_classes, **kw)

    @classmethod
    def from_prepared(cls, data: PreparedData, encoder: IntegerEncoder) -> "ThermometerData":
        """The training data of an estimator through a fitted :class:`~opttrees.data.binarizers.IntegerEncoder`."""
        if data.codec is None:
            raise InputError("thermometer data needs classification labels (prepare(X, y, task='classification'))")
        X_int = encoder.transform(data.X).astype(np.float64)
        cols = thermometer_columns(X_int)
        thresholds = [encoder.decode_threshold(f, th) for f, th in cols]
        identity = getattr(encoder, "mode_", None) == "identity" and np.array_equal(X_int, data.X)
        return cls(X_int, data.y, data.n_classes, X=None if identity else data.X, thresholds=thresholds,
                   classes=data.codec.classes, feature_names=data.feature_names, sample_weight=data.sample_weight)

    def split_of_col(self, c: int) -> tuple[int, float]:
        return int(self.col_feature[c]), float(self.thresholds[c])

    def integer_split_of_col(self, c: int) -> tuple[int, float]:
        """Column c as a split in the integer units (``x_int_f < theta + 0.5``), where the shift set lives."""
        f, th = self.cols[c]
        return f, th + 0.5

    def col_of_split(self, j: int, t: float) -> int:
        j, t = int(j), float(t)
        hit = np.nonzero((self.col_feature == j)
                         & (np.abs(self.thresholds - t) <= SPLIT_RTOL * max(1.0, abs(t))))[0]
        if len(hit):
            return int(hit[0])
        if self.identity_units:
            key = (j, int(np.ceil(t)) - 1)
            if key in self.col_index:
                return self.col_index[key]
        raise InputError(f"split x{j} < {t:g} is not an integer threshold of the training range")
