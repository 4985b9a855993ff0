"""Feature encodings for the flow-based and robust trees, as scikit-learn transformers.

Why: FlowOCT/BendersOCT split on *binary* columns and RobustOCT on *integer* features with integer
thresholds. Both are encodings of the original features, so each transformer also decodes a split on an
encoded column back to a split ``x_j < threshold`` in the user's original units (the Tree convention:
left iff x < b).

- :class:`Binarizer`: column ``c = (j, t)`` is ``1[x_j >= t]`` (1 = goes right). Thresholds are all
  midpoints between adjacent distinct training values, or midpoints at quantiles.
- :class:`IntegerEncoder`: maps each feature to an integer grid. ``"identity"`` keeps integer-valued
  features (the robust paper's data model); ``"rank"`` maps values to the rank of their distinct training
  value. A robust split ``x_int >= theta + 1`` decodes to ``x_j < midpoint(value(theta), value(theta + 1))``.
- :class:`OneHotGroups`: one-hot encodes categorical columns and records the column groups the
  categorical uncertainty set (28) needs.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .data import _as_2d_float, check_X
from .errors import InputError


def midpoints(values: np.ndarray) -> np.ndarray:
    """Midpoints between adjacent distinct values (empty for a constant feature)."""
    u = np.unique(values)
    return (u[:-1] + u[1:]) / 2.0


class Binarizer(TransformerMixin, BaseEstimator):
    """Threshold binarisation: one 0/1 column ``x_j >= t`` per candidate threshold ``t``.

    Parameters
    ----------
    strategy : "midpoints" (every midpoint between adjacent distinct values) or "quantile".
    n_thresholds : for "quantile", at most this many thresholds per feature (midpoints nearest to the
        quantiles ``k/(n_thresholds+1)``); ignored for "midpoints".

    A feature already 0/1 gives one column ``x_j >= 0.5``, i.e. itself.
    """

    def __init__(self, strategy: str = "midpoints", n_thresholds: int = 10):
        self.strategy = strategy
        self.n_thresholds = n_thresholds

    def fit(self, X, y=None):
        if self.strategy not in ("midpoints", "quantile"):
            raise InputError(f"Binarizer.strategy must be 'midpoints' or 'quantile'; got {self.strategy!r}")
        if self.strategy == "quantile" and (not isinstance(self.n_thresholds, (int, np.integer)) or self.n_thresholds < 1):
            raise InputError(f"Binarizer.n_thresholds must be an integer >= 1; got {self.n_thresholds!r}")
        Xa, names = _as_2d_float(X)
        feats, thr = [], []
        for j in range(Xa.shape[1]):
            mids = midpoints(Xa[:, j])
            if self.strategy == "quantile" and len(mids) > self.n_thresholds:
                q = np.quantile(Xa[:, j], np.arange(1, self.n_thresholds + 1) / (self.n_thresholds + 1))
                idx = np.unique(np.clip(np.searchsorted(mids, q), 0, len(mids) - 1))
                mids = mids[idx]
            feats.extend([j] * len(mids))
            thr.extend(mids.tolist())
        self.feature_ = np.asarray(feats, dtype=np.int64)
        self.threshold_ = np.asarray(thr, dtype=np.float64)
        self.feature_names_in_ = np.asarray(names, dtype=object)
        self.n_features_in_ = Xa.shape[1]
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "threshold_")
        Xa = check_X(X, self.n_features_in_)
        return (Xa[:, self.feature_] >= self.threshold_).astype(np.int8)

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "threshold_")
        names = self.feature_names_in_ if input_features is None else np.asarray(input_features, dtype=object)
        return np.asarray([f"{names[j]}>={t:g}" for j, t in zip(self.feature_, self.threshold_)], dtype=object)

    @property
    def n_columns_(self) -> int:
        return len(self.feature_)

    def decode(self, column: int) -> tuple[int, float]:
        """Split on binary column c (left iff column == 0) -> (feature j, threshold t): left iff x_j < t."""
        check_is_fitted(self, "threshold_")
        return int(self.feature_[column]), float(self.threshold_[column])

    def encode_split(self, feature: int, threshold: float, X=None) -> int:
        """Column for an original-units split ``x_j < threshold``; raises if no column routes identically.

        With ``X`` (training data) the match is by routing; otherwise the threshold must match exactly.
        """
        check_is_fitted(self, "threshold_")
        cols = np.nonzero(self.feature_ == feature)[0]
        if not len(cols):
            raise InputError(f"feature {feature} has no binarised column (constant feature?)")
        exact = cols[np.isclose(self.threshold_[cols], threshold)]
        if len(exact):
            return int(exact[0])
        if X is not None:
            Xa = check_X(X, self.n_features_in_)
            target = Xa[:, feature] >= threshold
            for c in cols:
                if np.array_equal(Xa[:, feature] >= self.threshold_[c], target):
                    return int(c)
        raise InputError(f"split x{feature} < {threshold:g} has no matching binarised column")


class IntegerEncoder(TransformerMixin, BaseEstimator):
    """Map numeric features to integers for the robust tree.

    ``mode="identity"`` requires integer-valued features and keeps them (shifts are unit moves in the
    user's units); ``"rank"`` replaces each value by the index of its distinct training value (unseen test
    values get the rank of the nearest training value at or below them); ``"auto"`` uses identity when all
    values are integers, else rank.
    """

    def __init__(self, mode: str = "auto"):
        self.mode = mode

    def fit(self, X, y=None):
        if self.mode not in ("auto", "identity", "rank"):
            raise InputError(f"IntegerEncoder.mode must be 'auto', 'identity' or 'rank'; got {self.mode!r}")
        Xa, names = _as_2d_float(X)
        is_int = bool(np.all(Xa == np.round(Xa)))
        mode = self.mode if self.mode != "auto" else ("identity" if is_int else "rank")
        if mode == "identity" and not is_int:
            bad = int(np.nonzero(np.any(Xa != np.round(Xa), axis=0))[0][0])
            raise InputError(f"IntegerEncoder(mode='identity') needs integer-valued features; column {bad} is not "
                             "(use mode='rank' or round the data)")
        self.mode_ = mode
        self.values_ = [np.unique(Xa[:, j]) for j in range(Xa.shape[1])]
        self.feature_names_in_ = np.asarray(names, dtype=object)
        self.n_features_in_ = Xa.shape[1]
        Z = self.transform(Xa)
        self.min_ = Z.min(axis=0).astype(np.int64)
        self.max_ = Z.max(axis=0).astype(np.int64)
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "mode_")
        Xa = check_X(X, self.n_features_in_)
        if self.mode_ == "identity":
            if not np.all(Xa == np.round(Xa)):
                raise InputError("X has non-integer values but the encoder was fitted with mode='identity'")
            return Xa.astype(np.int64)
        out = np.empty(Xa.shape, dtype=np.int64)
        for j, u in enumerate(self.values_):
            out[:, j] = np.clip(np.searchsorted(u, Xa[:, j], side="right") - 1, 0, len(u) - 1)
        return out

    def inverse_transform(self, Z) -> np.ndarray:
        check_is_fitted(self, "mode_")
        Z = np.asarray(Z)
        if self.mode_ == "identity":
            return Z.astype(np.float64)
        return np.column_stack([u[np.clip(Z[:, j], 0, len(u) - 1)] for j, u in enumerate(self.values_)])

    def decode_threshold(self, feature: int, theta: int) -> float:
        """Integer split (right iff z >= theta + 1) -> original-units threshold t (left iff x < t)."""
        check_is_fitted(self, "mode_")
        if self.mode_ == "identity":
            return float(theta) + 0.5
        u = self.values_[feature]
        lo = u[min(max(theta, 0), len(u) - 1)]
        hi = u[min(max(theta + 1, 0), len(u) - 1)]
        return float((lo + hi) / 2.0) if hi > lo else float(lo) + 0.5


class OneHotGroups(TransformerMixin, BaseEstimator):
    """One-hot encode the ``categorical`` columns (names or indices), pass the others through.

    After fit, ``groups_`` lists, for each categorical feature, the output column indices of its one-hot
    block — what the categorical uncertainty set (28) and its calibration (34) need.
    """

    def __init__(self, categorical=None):
        self.categorical = categorical

    def fit(self, X, y=None):
        df = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
        cols = list(df.columns)
        cat = [] if self.categorical is None else list(self.categorical)
        cat = [cols[c] if isinstance(c, (int, np.integer)) and c not in cols else c for c in cat]
        for c in cat:
            if c not in cols:
                raise InputError(f"categorical column {c!r} is not in X")
        self.columns_ = cols
        self.categorical_ = cat
        self.categories_ = {c: sorted(pd.unique(df[c]).tolist(), key=str) for c in cat}
        names, groups = [], []
        for c in cols:
            if c in cat:
                groups.append(list(range(len(names), len(names) + len(self.categories_[c]))))
                names.extend(f"{c}={v}" for v in self.categories_[c])
            else:
                names.append(str(c))
        self.groups_ = groups
        self.feature_names_out_ = names
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "groups_")
        df = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=object))
        if list(df.columns) != self.columns_:
            raise InputError(f"X columns {list(df.columns)} differ from the fitted {self.columns_}")
        parts = []
        for c in self.columns_:
            if c in self.categorical_:
                vals = df[c].to_numpy()
                cats = self.categories_[c]
                unseen = set(pd.unique(vals).tolist()) - set(cats)
                if unseen:
                    raise InputError(f"column {c!r} has categories not seen in fit: {sorted(map(str, unseen))}")
                parts.append(np.column_stack([(vals == v) for v in cats]).astype(np.float64))
            else:
                try:
                    parts.append(df[[c]].to_numpy(dtype=np.float64))
                except (TypeError, ValueError):
                    raise InputError(f"column {c!r} is not numeric; list it in categorical=") from None
        return np.hstack(parts)

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "groups_")
        return np.asarray(self.feature_names_out_, dtype=object)
