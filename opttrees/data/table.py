"""The encoding of a raw table's columns: how text (categorical), date and missing values become the numeric
features a tree splits on (:class:`TableEncoding`, stored on a fitted tree as ``Tree.encoding`` and saved in its
JSON), and the helpers the spec's CSV reading shares with it (dates, category text, missing rows).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError, NonNumericInputError

#: what to do with missing values in a raw table (spec ``data.missing``)
MISSING_POLICIES = ("error", "drop", "impute")
#: a text column with more categories than this gets a warning: each category becomes a feature
MANY_CATEGORIES = 50


def category_text(value) -> str:
    """The one text form of a category value, so 3, 3.0 and "3" read from two CSVs are the same category."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (np.generic,)):
        value = value.item()
    return str(value)


def _is_missing(col: pd.Series) -> np.ndarray:
    return col.isna().to_numpy()


#: a date as text: year-month-day or day/month/year (separators - / .), an optional time after it
_DATE = r"^\s*(\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4})([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?\s*$"
#: dates become this many days after 1970-01-01 (a number a tree can split on; a threshold reads back as a date)
DATE_ORIGIN = "1970-01-01"


def _parse_dates(values: pd.Series) -> pd.Series:
    """Text dates (:data:`_DATE`) to datetimes; anything else to NaT."""
    text = values.astype(str)
    ok = text.str.match(_DATE)
    out = pd.Series(pd.NaT, index=values.index, dtype="datetime64[ns]")
    if ok.any():
        iso = text[ok].str.match(r"^\s*\d{4}")
        for part, dayfirst in ((iso, False), (~iso, True)):
            if part.any():
                out[part[part].index] = pd.to_datetime(text[ok][part], errors="coerce", format="mixed",
                                                         dayfirst=dayfirst)
    return out


def date_like(values: pd.Series) -> bool:
    """A text column whose present values are all dates (:data:`_DATE`), at least two of them."""
    present = values.dropna()
    return len(present) >= 2 and bool(_parse_dates(present).notna().all())


def date_days(values: pd.Series) -> np.ndarray:
    """Days after :data:`DATE_ORIGIN` (fractional with a time of day) of text dates; NaN where missing."""
    parsed = _parse_dates(values)
    return ((parsed - pd.Timestamp(DATE_ORIGIN)) / pd.Timedelta(days=1)).to_numpy(dtype=np.float64, na_value=np.nan)


@dataclass
class TableEncoding:
    """How the columns of a raw table become the numeric features a tree splits on.

    Text (categorical) columns are one-hot encoded, one 0/1 feature ``column=category`` per category seen in
    training, and missing values follow ``missing`` ("error", "drop": the caller drops those rows, "impute":
    the median of a numeric column, the most frequent category of a text column). Why it travels with the Tree
    (``Tree.encoding``): a saved tree must predict from the same kind of CSV it was trained on, so the
    categories, their order and the imputed values belong to the model, and its text can say
    ``colour = red`` instead of ``colour=red < 0.5``. At predict time a category not seen in training gets 0 in
    every one-hot feature of its column, with a warning.
    """

    columns: list[str]                                   # raw feature columns, in order
    categories: dict[str, list[str]] = field(default_factory=dict)   # text column -> its categories, in order
    missing: str = "error"
    fill: dict = field(default_factory=dict)             # missing="impute": the value used per column
    dates: list[str] = field(default_factory=list)       # text columns read as days after DATE_ORIGIN

    @property
    def feature_names(self) -> list[str]:
        """The encoded features, in order: a numeric column as it is, a text column as ``column=category``."""
        out = []
        for col in self.columns:
            out += [f"{col}={c}" for c in self.categories[col]] if col in self.categories else [col]
        return out

    def sources(self) -> list[tuple[str, str | None]]:
        """(raw column, category or None) of every encoded feature, aligned with :attr:`feature_names`."""
        out: list[tuple[str, str | None]] = []
        for col in self.columns:
            out += [(col, c) for c in self.categories[col]] if col in self.categories else [(col, None)]
        return out

    @property
    def is_trivial(self) -> bool:
        """Nothing to re-encode: numeric columns only and nothing imputed."""
        return not self.categories and not self.fill and not self.dates

    @classmethod
    def fit(cls, X: pd.DataFrame, categorical="auto", missing: str = "error") -> "TableEncoding":
        """Learn the categories (and imputation values) of ``X``'s columns.

        ``categorical``: "auto" (every non-numeric column), a list of column names (numeric ones included, e.g.
        codes), or None (no column is categorical: text columns are an error naming them).
        """
        if not isinstance(X, pd.DataFrame):
            raise InputError("TableEncoding.fit needs a DataFrame (a raw table with column names)")
        if missing not in MISSING_POLICIES:
            raise InputError(f"missing={missing!r}: expected one of {MISSING_POLICIES}")
        cols = [str(c) for c in X.columns]
        X = X.set_axis(cols, axis=1)
        text = [c for c in cols if not (pd.api.types.is_numeric_dtype(X[c]) or pd.api.types.is_bool_dtype(X[c]))]
        dates = [c for c in text if date_like(X[c])]
        listed = [str(c) for c in categorical] if isinstance(categorical, (list, tuple)) else []
        if categorical == "auto":
            chosen = [c for c in text if c not in dates]
        elif categorical is None:
            if text:
                hint = "" if not dates else (f"; {dates} hold dates (e.g. {X[dates[0]].dropna().iloc[0]!r}): with "
                                             f"data.categorical: auto they are read as days after {DATE_ORIGIN}")
                raise NonNumericInputError(
                    f"column(s) {text} hold text; one-hot encode them (spec: data.categorical: auto, or a list of "
                    f"columns) or leave them out (data.features){hint}")
            chosen = []
        else:
            chosen = [str(c) for c in categorical]
            unknown = [c for c in chosen if c not in cols]
            if unknown:
                raise InputError(f"categorical column(s) {unknown} are not feature columns; columns: {cols}")
            left = [c for c in text if c not in chosen and c not in dates]
            if left:
                raise NonNumericInputError(f"column(s) {left} hold text but are not listed as categorical; add them "
                                           "to the categorical columns or leave them out")
        dates = [c for c in dates if c not in listed]   # a listed column is one-hot encoded, as asked
        for c in listed:
            if c in text and date_like(X[c]):
                warnings.warn(f"column {c!r} holds dates, and data.categorical lists it: each date becomes a 0/1 "
                              f"feature; leave it out of the list to read it as days after {DATE_ORIGIN}", stacklevel=2)
        for c in dates:
            warnings.warn(f"column {c!r} holds dates: read as days after {DATE_ORIGIN} (a number a tree can split "
                          "on); list it in data.categorical to one-hot encode it instead", stacklevel=2)
        enc = cls(cols, {}, missing, {}, dates)
        for c in cols:
            miss = _is_missing(X[c])
            if missing == "error" and miss.any():
                raise InputError(_missing_message(c, miss, index=X.index))
            present = X[c][~miss]
            if c in chosen:
                keys = present.map(category_text)
                cats = sorted(keys.unique())
                if not cats:
                    raise InputError(f"column {c!r} has no values: every row is missing")
                if len(cats) > MANY_CATEGORIES:
                    warnings.warn(f"column {c!r} has {len(cats)} categories, each one becomes a 0/1 feature; is it "
                                  "an identifier? (leave it out of the features)", stacklevel=2)
                enc.categories[c] = cats
                if missing == "impute" and miss.any():
                    enc.fill[c] = keys.value_counts().sort_index(kind="stable").idxmax()
            elif c in dates and missing == "impute" and miss.any():
                enc.fill[c] = float(np.median(date_days(present)))
            elif missing == "impute" and miss.any():
                if not len(present):
                    raise InputError(f"column {c!r} has no values to impute from: every row is missing")
                enc.fill[c] = float(np.median(present.to_numpy(dtype=np.float64)))
        return enc

    def transform(self, X: pd.DataFrame, name: str = "X") -> pd.DataFrame:
        """The encoded float features of a raw table (columns matched by name; extra columns are ignored)."""
        if not isinstance(X, pd.DataFrame):
            raise InputError(f"{name}: re-encoding categories needs a table with column names (a DataFrame)")
        X = X.set_axis([str(c) for c in X.columns], axis=1)
        absent = [c for c in self.columns if c not in X.columns]
        if absent:
            raise InputError(f"{name} lacks the column(s) {absent} the tree was trained on (columns: "
                             f"{list(X.columns)})")
        parts = []
        for c in self.columns:
            col = X[c]
            miss = _is_missing(col)
            if miss.any() and c not in self.fill:
                policy = "it was trained with missing='error'" if self.missing == "error" else \
                    "no value was imputed for this column in training"
                raise InputError(_missing_message(c, miss, name, X.index) + f" ({policy})")
            if c in self.categories:
                keys = col.map(category_text, na_action="ignore").to_numpy(dtype=object)
                if miss.any():
                    keys[miss] = self.fill[c]
                cats = np.asarray(self.categories[c], dtype=object)
                hot = keys[:, None] == cats[None, :]
                unseen = ~hot.any(axis=1)
                if unseen.any():
                    new = sorted({str(k) for k in keys[unseen]})
                    warnings.warn(f"{name}: column {c!r} has {int(unseen.sum())} row(s) with categories not seen in "
                                  f"training ({new[:5]}); they get 0 in every {c}=... feature", stacklevel=2)
                parts.append(pd.DataFrame(hot.astype(np.float64), columns=[f"{c}={k}" for k in cats], index=X.index))
                continue
            if c in self.dates:
                values = date_days(col)
                bad = np.isnan(values) & ~miss
                if bad.any():
                    raise InputError(f"{name}: column {c!r} holds dates in training but {col[bad].iloc[0]!r} here "
                                     f"(row {X.index[int(np.argmax(bad))]}), which is not a date")
                if miss.any():
                    values = np.where(miss, self.fill[c], values)
                parts.append(pd.DataFrame({c: values}, index=X.index))
                continue
            if not (pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col)):
                num = pd.to_numeric(col, errors="coerce")
                bad = num.isna().to_numpy() & ~miss
                if bad.any():
                    raise NonNumericInputError(f"{name}: column {c!r} was numeric in training but holds text here "
                                               f"(e.g. {col[bad].iloc[0]!r} at row {int(np.argmax(bad))})")
                col = num
            values = col.to_numpy(dtype=np.float64, na_value=np.nan)
            if miss.any():
                values = np.where(miss, self.fill[c], values)
            parts.append(pd.DataFrame({c: values}, index=X.index))
        return pd.concat(parts, axis=1) if parts else pd.DataFrame(index=X.index)

    def to_dict(self) -> dict:
        return {"columns": list(self.columns), "categories": {k: list(v) for k, v in self.categories.items()},
                "missing": self.missing, "fill": {k: (v.item() if isinstance(v, np.generic) else v)
                                                  for k, v in self.fill.items()},
                **({"dates": list(self.dates)} if self.dates else {})}

    @classmethod
    def from_dict(cls, d: dict) -> "TableEncoding":
        if not isinstance(d, dict) or not isinstance(d.get("columns"), list):
            raise InputError("tree JSON: 'encoding' must be a mapping with a 'columns' list")
        cats = d.get("categories") or {}
        if not isinstance(cats, dict) or any(not isinstance(v, list) for v in cats.values()):
            raise InputError("tree JSON: 'encoding.categories' must map column names to lists of categories")
        unknown = [c for c in cats if c not in d["columns"]]
        if unknown:
            raise InputError(f"tree JSON: 'encoding.categories' names columns {unknown} not in 'encoding.columns'")
        missing = d.get("missing", "error")
        if missing not in MISSING_POLICIES:
            raise InputError(f"tree JSON: 'encoding.missing' must be one of {MISSING_POLICIES}; got {missing!r}")
        dates = d.get("dates") or []
        if not isinstance(dates, list) or any(c not in d["columns"] for c in dates):
            raise InputError("tree JSON: 'encoding.dates' must list columns of 'encoding.columns'")
        return cls([str(c) for c in d["columns"]], {str(k): [str(c) for c in v] for k, v in cats.items()},
                   missing, dict(d.get("fill") or {}), [str(c) for c in dates])


def _missing_message(column: str, miss: np.ndarray, name: str = "", index=None) -> str:
    """``column`` has missing values: how many, and the first by the table's own row label (its index), so that a
    shuffled or filtered table still points at the user's row."""
    where = f"{name}: " if name else ""
    i = int(np.argmax(miss))
    label = index[i].item() if index is not None and isinstance(index[i], np.generic) else None if index is None \
        else index[i]
    first = f"index {label!r}" if index is not None else f"row {i}"
    return (f"{where}column {column!r} has {int(miss.sum())} missing value(s) (first at {first}); "
            "drop or impute them (spec: data.missing: drop | impute)")


def missing_rows(X: pd.DataFrame, y=None) -> np.ndarray:
    """Rows with a missing value in any feature column (or target column): the rows ``missing="drop"`` drops."""
    miss = X.isna().to_numpy().any(axis=1) if X.shape[1] else np.zeros(len(X), dtype=bool)
    if y is not None:
        ym = pd.DataFrame(y).isna().to_numpy().any(axis=1)
        miss = miss | ym
    return miss
