"""Feature encodings for the flow-based and robust trees, as scikit-learn transformers.

Why: FlowOCT/BendersOCT split on *binary* columns and RobustOCT on *integer* features with integer
thresholds. Both are encodings of the original features, so each transformer also decodes a split on an
encoded column back to a split ``x_j < threshold`` in the user's original units (the Tree convention:
left iff x < b).

- :class:`Binarizer`: column ``c = (j, t)`` is ``1[x_j >= t]`` (1 = goes right). Thresholds are midpoints
  between adjacent distinct training values: by default at most ``n_thresholds`` of them per feature, at
  quantiles (every midpoint when a feature has few distinct values), or all of them (``"midpoints"``).
- :class:`IntegerEncoder`: maps each feature to an integer grid. ``"identity"`` keeps integer-valued
  features (the robust paper's data model); ``"rank"`` maps values to the rank of their distinct training
  value; ``"quantile"`` to the rank of their quantile bin (at most ``n_thresholds`` cut points per feature).
  A robust split ``x_int >= theta + 1`` decodes to ``x_j < cut(theta)``, the midpoint between the training
  values on either side of that integer step.

Why the quantile defaults: the flow and robust models carry one binary variable per (node, threshold) and,
for FlowOCT, one row entry per (sample, node, threshold). All midpoints of a continuous column give n - 1
thresholds per feature: on 569 x 30 continuous data (breast cancer) that is ~16 000 columns and a depth-2
FlowOCT with 15 M nonzeros that took minutes to build. Ten quantile thresholds per feature keep it at
~300 columns.
- :class:`OneHotGroups`: one-hot encodes categorical columns and records the column groups the
  categorical uncertainty set (28) needs.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .prepared import _as_2d_float, check_X, cut_of_le, split_between
from ..errors import InputError, NonNumericInputError


def _set_feature_names_in(est, X, n_features: int) -> None:
    """sklearn convention: ``n_features_in_`` always; ``feature_names_in_`` only for DataFrames with str columns."""
    est.n_features_in_ = int(n_features)
    if isinstance(X, pd.DataFrame) and all(isinstance(c, str) for c in X.columns):
        est.feature_names_in_ = np.asarray(X.columns, dtype=object)
    elif hasattr(est, "feature_names_in_"):
        del est.feature_names_in_


def _names_in(est, input_features=None) -> np.ndarray:
    """Input feature names: the fitted DataFrame's, else ``x0..x{p-1}``; ``input_features`` must agree."""
    fitted = getattr(est, "feature_names_in_", None)
    if input_features is None:
        if fitted is not None:
            return np.asarray(fitted, dtype=object)
        return np.asarray([f"x{j}" for j in range(est.n_features_in_)], dtype=object)
    names = np.asarray(input_features, dtype=object)
    if names.ndim != 1 or len(names) != est.n_features_in_:
        raise InputError(f"input_features must have {est.n_features_in_} names; got {len(names)}")
    if fitted is not None and not np.array_equal(names, fitted):
        raise InputError(f"input_features {list(names)} differ from the fitted feature names {list(fitted)}")
    return names


def _precheck(est, X, fitting: bool) -> None:
    """Errors in scikit-learn's wording (so ``check_estimator`` recognises them), as InputError/TypeError."""
    import scipy.sparse as sp
    name = type(est).__name__
    if sp.issparse(X):
        raise TypeError(f"{name} does not accept sparse input; pass a dense array (X.toarray())")
    if isinstance(X, pd.DataFrame):
        shape = X.shape
    else:
        try:
            arr = np.asarray(X)
        except Exception:
            return                                   # the encoder's own reader gives the message
        if np.iscomplexobj(arr):
            raise InputError("Complex data not supported")
        if arr.ndim == 1:
            raise InputError(f"Expected a 2D array, got a 1D array of shape {arr.shape}. Reshape your data either "
                             "using array.reshape(-1, 1) if your data has a single feature or array.reshape(1, -1) "
                             "if it contains a single sample.")
        shape = arr.shape
    if len(shape) == 2 and shape[1] == 0:
        raise InputError(f"0 feature(s) (shape={shape}) while a minimum of 1 is required.")
    if len(shape) == 2 and shape[0] == 0:
        raise InputError(f"0 sample(s) (shape={shape}) while a minimum of 1 is required.")
    if not fitting and len(shape) == 2 and hasattr(est, "n_features_in_") and shape[1] != est.n_features_in_:
        raise InputError(f"X has {shape[1]} features, but {name} is expecting {est.n_features_in_} features as input.")


def _clean_value(v) -> str:
    """Category value as text for a column name: integral floats without '.0' (1.0 -> '1')."""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v) == int(v):
        return str(int(v))
    if isinstance(v, np.generic):
        return str(v.item())
    return str(v)


def midpoints(values: np.ndarray) -> np.ndarray:
    """A threshold t with a < t <= b between adjacent distinct values a < b (empty for a constant feature), so
    that ``x < t`` separates them exactly: the midpoint, or b where the midpoint rounds onto a (neighbouring
    floats, e.g. 1.0 and 1.0000000000000002, have no number between them) or overflows."""
    u = np.unique(values)
    lo, hi = u[:-1], u[1:]
    with np.errstate(over="ignore", invalid="ignore"):
        m = (lo + hi) / 2.0
    return np.where((lo < m) & (m <= hi), m, hi)


def nearest_threshold(thresholds: np.ndarray, candidates: np.ndarray, t: float) -> int:
    """Index among ``candidates`` of the threshold equal to ``t``, else the nearest one within float tolerance
    (a threshold recomputed elsewhere); -1 when none. The nearest, not the first close one: thresholds of
    values 1e-9 apart are all "close" to each other (np.isclose's relative 1e-5)."""
    cand = np.asarray(candidates, np.int64)
    if not len(cand):
        return -1
    th = np.asarray(thresholds, np.float64)[cand]
    exact = np.flatnonzero(th == t)
    if len(exact):
        return int(cand[exact[0]])
    close = np.flatnonzero(np.isclose(th, t))
    if not len(close):
        return -1
    return int(cand[close[np.argmin(np.abs(th[close] - t))]])


def quantile_midpoints(values: np.ndarray, n_thresholds: int) -> np.ndarray:
    """At most ``n_thresholds`` midpoints: the ones nearest above the quantiles k/(n_thresholds+1).

    Every midpoint when there are no more than ``n_thresholds`` of them (few distinct values).
    """
    mids = midpoints(values)
    if len(mids) > n_thresholds:
        q = np.quantile(values, np.arange(1, n_thresholds + 1) / (n_thresholds + 1))
        idx = np.unique(np.clip(np.searchsorted(mids, q), 0, len(mids) - 1))
        mids = mids[idx]
    return mids


def _check_n_thresholds(owner: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{owner}.n_thresholds must be an integer >= 1; got {value!r}")


class _CodeTransformer(TransformerMixin, BaseEstimator):
    """A transformer whose output is integer codes by design (:class:`Binarizer`, :class:`IntegerEncoder`): it
    tells scikit-learn's checks not to expect the input dtype back."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = []   # output is integer codes by design, not the input dtype
        return tags


class Binarizer(_CodeTransformer):
    """Threshold binarisation: one 0/1 column ``x_j >= t`` per candidate threshold ``t``.

    Parameters
    ----------
    strategy : "quantile" (the default: at most ``n_thresholds`` thresholds per feature, the midpoints
        nearest to the quantiles ``k/(n_thresholds+1)``; a feature with at most ``n_thresholds + 1`` distinct
        values keeps every midpoint) or "midpoints" (every midpoint between adjacent distinct values: exact
        for CART-style splits, but n - 1 columns per continuous feature, see the module docstring).
    n_thresholds : for "quantile", at most this many thresholds per feature; ignored for "midpoints".

    A feature already 0/1 gives one column ``x_j >= 0.5``, i.e. itself.
    """

    def __init__(self, strategy: str = "quantile", n_thresholds: int = 10):
        self.strategy = strategy
        self.n_thresholds = n_thresholds

    def fit(self, X, y=None):
        if self.strategy not in ("midpoints", "quantile"):
            raise InputError(f"Binarizer.strategy must be 'midpoints' or 'quantile'; got {self.strategy!r}")
        if self.strategy == "quantile":
            _check_n_thresholds("Binarizer", self.n_thresholds)
        _precheck(self, X, True)
        Xa, names = _as_2d_float(X)
        feats, thr = [], []
        for j in range(Xa.shape[1]):
            if self.strategy == "quantile":
                mids = quantile_midpoints(Xa[:, j], int(self.n_thresholds))
            else:
                mids = midpoints(Xa[:, j])
            feats.extend([j] * len(mids))
            thr.extend(mids.tolist())
        self.feature_ = np.asarray(feats, dtype=np.int64)
        self.threshold_ = np.asarray(thr, dtype=np.float64)
        _set_feature_names_in(self, X, Xa.shape[1])
        return self

    def add_thresholds(self, X, features, thresholds) -> "Binarizer":
        """Add columns for scikit-learn's splits ``x_j <= t`` (a fitted ``DecisionTreeClassifier``'s
        ``tree_.feature`` and ``tree_.threshold``, trained on ``X``): each becomes the midpoint ``x_j < b`` of the
        training data ``X`` that routes every training row as scikit-learn did (:func:`opttrees.data.prepared.cut_of_le`
        on float32 values, as scikit-learn compares; b is one of :func:`midpoints`); a split that sends every
        row one way adds nothing; columns already present are kept once.
        """
        check_is_fitted(self, "threshold_")
        Xa = check_X(X, self.n_features_in_)
        feats, thr = list(self.feature_), list(self.threshold_)
        for j, t in zip(np.asarray(features, dtype=np.int64), np.asarray(thresholds, dtype=np.float64)):
            b = cut_of_le(Xa[:, j], float(t), float32=True)
            if b is None:
                continue
            feats.append(int(j))
            thr.append(b)
        pairs = sorted(set(zip(feats, thr)))
        self.feature_ = np.asarray([f for f, _ in pairs], dtype=np.int64)
        self.threshold_ = np.asarray([t for _, t in pairs], dtype=np.float64)
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "threshold_")
        _precheck(self, X, False)
        Xa = check_X(X, self.n_features_in_)
        out = np.empty((Xa.shape[0], len(self.feature_)), dtype=np.int8)
        # feature by feature: one (n, columns of j) boolean at a time instead of an (n, all columns) float copy
        bounds = np.searchsorted(self.feature_, np.arange(self.n_features_in_ + 1))
        for j in range(self.n_features_in_):
            a, b = bounds[j], bounds[j + 1]
            if b > a:
                np.greater_equal(Xa[:, j:j + 1], self.threshold_[a:b], out=out[:, a:b], casting="unsafe")
        return out

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "threshold_")
        names = _names_in(self, input_features)
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

        An equal threshold first; else, with ``X`` (training data), the column that routes its rows identically;
        else the nearest threshold within float tolerance (:func:`nearest_threshold`).
        """
        check_is_fitted(self, "threshold_")
        cols = np.nonzero(self.feature_ == feature)[0]
        if not len(cols):
            raise InputError(f"feature {feature} has no binarised column (constant feature?)")
        if X is None or np.any(self.threshold_[cols] == threshold):
            c = nearest_threshold(self.threshold_, cols, threshold)
            if c >= 0:
                return c
        else:
            Xa = check_X(X, self.n_features_in_)
            target = Xa[:, feature] >= threshold
            for k in cols:
                if np.array_equal(Xa[:, feature] >= self.threshold_[k], target):
                    return int(k)
        raise InputError(f"split x{feature} < {threshold:g} has no matching binarised column")


class IntegerEncoder(_CodeTransformer):
    """Map numeric features to integers for the robust tree.

    ``mode="identity"`` requires integer-valued features and keeps them (shifts are unit moves in the
    user's units); ``"rank"`` replaces each value by the index of its distinct training value;
    ``"quantile"`` by the index of its quantile bin, with at most ``n_thresholds`` cut points per feature
    (the Binarizer's quantile midpoints; a feature with few distinct values keeps them all, i.e. its rank);
    ``"auto"`` uses identity when all values are integers, else quantile (reported as ``mode_ = "rank"``
    when no feature needed fewer cut points than its midpoints). One unit of shift in the uncertainty set is
    then one step on that grid: one quantile bin for continuous data.

    Rank (and quantile) encoding of a value x is the number of cut points (midpoints between adjacent
    distinct training values) that are <= x. A training value gets its bin's index; an unseen value gets
    the rank of the *nearest* training value (ties at a midpoint go up). This is exactly the routing of the
    decoded splits: an integer split ``z >= theta + 1`` decodes to ``x >= cut(theta)``, so the encoded and
    the decoded tree send every x, seen or not, the same way.
    """

    def __init__(self, mode: str = "auto", n_thresholds: int = 10):
        self.mode = mode
        self.n_thresholds = n_thresholds

    def fit(self, X, y=None):
        if self.mode not in ("auto", "identity", "rank", "quantile"):
            raise InputError(f"IntegerEncoder.mode must be 'auto', 'identity', 'rank' or 'quantile'; "
                             f"got {self.mode!r}")
        if self.mode in ("auto", "quantile"):
            _check_n_thresholds("IntegerEncoder", self.n_thresholds)
        _precheck(self, X, True)
        Xa, names = _as_2d_float(X)
        is_int = bool(np.all(Xa == np.round(Xa)))
        mode = self.mode if self.mode != "auto" else ("identity" if is_int else "quantile")
        if mode == "identity" and not is_int:
            bad = int(np.nonzero(np.any(Xa != np.round(Xa), axis=0))[0][0])
            raise InputError(f"IntegerEncoder(mode='identity') needs integer-valued features; column {bad} is not "
                             "(use mode='rank' or 'quantile', or round the data)")
        values = [np.unique(Xa[:, j]) for j in range(Xa.shape[1])]
        if mode == "quantile":
            cuts = [quantile_midpoints(Xa[:, j], int(self.n_thresholds)) for j in range(Xa.shape[1])]
            if self.mode == "auto" and all(len(c) == len(u) - 1 for c, u in zip(cuts, values)):
                mode = "rank"      # every feature kept all its midpoints: exactly the rank encoding
            else:
                # one representative training value per bin (its smallest), for inverse_transform
                values = [u[np.unique(np.searchsorted(c, u, side="right"), return_index=True)[1]]
                          for c, u in zip(cuts, values)]
        else:
            cuts = [midpoints(u) for u in values]
        self.mode_ = mode
        self.values_ = values
        self.midpoints_ = cuts
        _set_feature_names_in(self, X, Xa.shape[1])
        Z = self.transform(Xa)
        self.min_ = Z.min(axis=0).astype(np.int64)
        self.max_ = Z.max(axis=0).astype(np.int64)
        return self

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "mode_")
        _precheck(self, X, False)
        Xa = check_X(X, self.n_features_in_)
        if self.mode_ == "identity":
            if not np.all(Xa == np.round(Xa)):
                raise InputError("X has non-integer values but the encoder was fitted with mode='identity'")
            return Xa.astype(np.int64)
        out = np.empty(Xa.shape, dtype=np.int64)
        for j, mids in enumerate(self.midpoints_):
            out[:, j] = np.searchsorted(mids, Xa[:, j], side="right")   # = #midpoints <= x (routing-consistent)
        return out

    def get_feature_names_out(self, input_features=None):
        """One output column per input feature, with the same name."""
        check_is_fitted(self, "mode_")
        return _names_in(self, input_features)

    def inverse_transform(self, Z) -> np.ndarray:
        """Training value of each rank (quantile mode: the bin's smallest training value; ranks outside the
        range map to the extreme values). Encoding the result gives back the (clipped) ranks."""
        check_is_fitted(self, "mode_")
        Z = check_X(Z, self.n_features_in_, name="Z")
        if self.mode_ == "identity":
            return Z
        Z = np.rint(Z).astype(np.int64)
        return np.column_stack([u[np.clip(Z[:, j], 0, len(u) - 1)] for j, u in enumerate(self.values_)])

    def decode_threshold(self, feature: int, theta: int) -> float:
        """Integer split (right iff z >= theta + 1) -> original-units threshold t (left iff x < t)."""
        check_is_fitted(self, "mode_")
        if self.mode_ == "identity":
            return float(theta) + 0.5
        cuts = self.midpoints_[feature]
        if 0 <= theta < len(cuts):
            return float(cuts[theta])
        u = self.values_[feature]
        lo = u[min(max(theta, 0), len(u) - 1)]
        hi = u[min(max(theta + 1, 0), len(u) - 1)]
        return split_between(float(lo), float(hi)) if hi > lo else float(lo) + 0.5


class OneHotGroups(TransformerMixin, BaseEstimator):
    """One-hot encode the ``categorical`` columns (names or indices), pass the others through.

    After fit, ``groups_`` lists, for each categorical feature, the output column indices of its one-hot
    block — what the categorical uncertainty set (28) and its calibration (34) need.
    """

    def __init__(self, categorical=None):
        self.categorical = categorical

    @staticmethod
    def _frame(X, name="X") -> pd.DataFrame:
        if isinstance(X, pd.DataFrame):
            return X
        try:
            arr = np.asarray(X, dtype=object)
        except Exception as exc:
            raise InputError(f"{name} could not be read as an array: {exc}") from None
        if arr.ndim != 2:
            raise InputError(f"{name} must be 2-D (n_samples, n_features); got shape {arr.shape}")
        return pd.DataFrame(arr)

    def fit(self, X, y=None):
        _precheck(self, X, True)
        df = self._frame(X)
        if df.shape[0] == 0 or df.shape[1] == 0:
            raise InputError(f"X is empty: shape {df.shape}")
        cols = list(df.columns)
        cat = [] if self.categorical is None else list(self.categorical)
        cat = [cols[c] if isinstance(c, (int, np.integer)) and c not in cols and -len(cols) <= c < len(cols) else c
               for c in cat]
        for c in cat:
            if c not in cols:
                raise InputError(f"categorical column {c!r} is not in X")
        if len(set(cat)) < len(cat):
            raise InputError(f"categorical lists a column twice: {cat}")
        self.columns_ = cols
        self.categorical_ = cat
        self.categories_ = {}
        for c in cat:
            vals = pd.unique(df[c]).tolist()
            if any(v is None or (isinstance(v, float) and np.isnan(v)) for v in vals):
                raise InputError(f"categorical column {c!r} has missing values (None/NaN); fill them first")
            try:
                self.categories_[c] = sorted(vals)
            except TypeError:
                self.categories_[c] = sorted(vals, key=str)
        names, groups = [], []
        for c in cols:
            if c in cat:
                groups.append(list(range(len(names), len(names) + len(self.categories_[c]))))
                names.extend(f"{c}={_clean_value(v)}" for v in self.categories_[c])
            else:
                names.append(str(c))
        self.groups_ = groups
        self.feature_names_out_ = names
        _set_feature_names_in(self, X, len(cols))
        # numeric check of the pass-through columns at fit time (not only at transform)
        self._passthrough(df)
        return self

    def _passthrough(self, df):
        out = {}
        for c in self.columns_:
            if c in self.categorical_:
                continue
            try:
                col = df[[c]].to_numpy(dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise NonNumericInputError(f"column {c!r} is not numeric; list it in categorical= "
                                           f"(numpy: {exc})") from None
            if not np.isfinite(col).all():
                raise InputError(f"column {c!r} contains NaN/infinite values")
            out[c] = col
        return out

    def transform(self, X) -> np.ndarray:
        check_is_fitted(self, "groups_")
        _precheck(self, X, False)
        df = self._frame(X)
        if list(df.columns) != self.columns_:
            if df.shape[1] != len(self.columns_):
                raise InputError(f"X has {df.shape[1]} features but OneHotGroups was fitted with {len(self.columns_)}")
            raise InputError(f"X columns {list(df.columns)} differ from the fitted {self.columns_}")
        num = self._passthrough(df)
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
                parts.append(num[c])
        return np.hstack(parts)

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "groups_")
        if input_features is not None:
            _names_in(self, input_features)
        return np.asarray(self.feature_names_out_, dtype=object)
