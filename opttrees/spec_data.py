"""A spec's data ready to fit: the dataset or CSV loaded, infinite and missing values checked (or rows dropped),
constant columns dropped, the target checked against the model type, the train/test split, and the table's
encoding (:class:`~opttrees.data.table.TableEncoding`, learned on the training rows). Errors name the spec field.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .errors import InputError, SpecError
from .registry import models


class DataSpec(Protocol):
    """What this module reads of a parsed spec (:class:`opttrees.spec.Spec`, which imports this module)."""

    data: dict
    model_type: str


def load_spec_data(spec: DataSpec):
    from .datasets import load_csv, load_dataset
    d = spec.data
    if "csv" in d:
        try:
            X, y = load_csv(d["csv"], d["target"], d.get("features"))
        except InputError as exc:
            field = "data.features" if "feature column" in str(exc) else "data.target" if "target column" in str(exc) \
                else "data.csv"
            raise SpecError(f"{field}: {exc}") from None
    else:
        try:
            X, y = load_dataset(d["dataset"], **d.get("params", {}))
        except InputError as exc:
            raise SpecError(f"data.{'params' if d.get('params') else 'dataset'}: {exc}") from None
        if "features" in d:
            missing = [f for f in d["features"] if f not in X.columns]
            if missing:
                raise SpecError(f"data.features: {missing} not in dataset {d['dataset']!r}; columns: {list(X.columns)}")
            X = X[d["features"]]
    return X, y


@dataclass
class SpecData:
    """The spec's data ready to fit: encoded features (train, and test when ``data.test_size``), targets, and
    how the raw table was encoded (kept with the tree so it predicts from the same kind of CSV)."""

    X: Any
    y: Any
    X_test: Any = None
    y_test: Any = None
    encoding: Any = None        # data.TableEncoding
    rows_dropped: int = 0
    constant_columns: list = field(default_factory=list)   # dropped: one value in every row


def _data_error(exc: InputError) -> SpecError:
    msg = str(exc)
    where = ("data.categorical" if "categor" in msg or "hold text" in msg
             else "data.missing" if "missing value" in msg or "impute" in msg else "data")
    return SpecError(f"{where}: {msg}")


def _check_infinite(X, csv_name: str | None = None) -> None:
    """Infinite feature values are an error naming the column and row: they are not missing values, so
    ``data.missing: impute`` or ``drop`` would not touch them (and the model cannot split on them)."""
    import pandas as pd
    for col in X.columns:
        v = X[col]
        if not pd.api.types.is_numeric_dtype(v) or pd.api.types.is_bool_dtype(v):
            continue
        bad = np.isinf(v.to_numpy(dtype=np.float64, na_value=np.nan))
        if bad.any():
            i = int(np.argmax(bad))
            row = X.index[i]
            where = f"row {row}" + (f" (line {row + 2} of {csv_name})" if csv_name and isinstance(row, (int, np.integer)) else "")
            raise SpecError(f"data: column {col!r} holds an infinite value ({v.iloc[i]}) at {where}, "
                            f"{int(bad.sum())} such row(s) in all; infinite values are not missing values, so "
                            "data.missing does not replace them: correct or remove those rows")


def prepare_spec_data(spec: DataSpec) -> SpecData:
    """Load the spec's data and apply its missing-value policy, target check, split and categorical encoding.

    The encoding (categories, imputed values) is learned on the training rows only; test rows are encoded
    with it, as new rows are at predict time.
    """
    import pandas as pd

    from .data.table import TableEncoding, missing_rows
    from .data.prepared import continuous_target

    entry = models()[spec.model_type]
    d = spec.data
    X, y = load_spec_data(spec)
    csv_name = Path(d["csv"]).name if "csv" in d else None
    _check_infinite(X, csv_name)
    missing = d.get("missing", "error")
    if missing == "error":   # counted and located in the whole file, before any split shuffles the rows
        _check_missing(X, csv_name)
    X, constant = _drop_constant(X)
    dropped = 0
    if missing == "drop":
        rows = missing_rows(X, y)
        if rows.all():
            raise SpecError(f"data.missing: every one of the {len(rows)} rows has a missing value; nothing is left "
                            "to fit (use missing: impute)")
        dropped = int(rows.sum())
        X, y = X[~rows].reset_index(drop=True), y[~rows].reset_index(drop=True)
    else:
        ymiss = pd.DataFrame(y).isna().to_numpy().any(axis=1)
        if ymiss.any():
            raise SpecError(f"data.target: {int(ymiss.sum())} row(s) have no target value (first at row "
                            f"{int(np.argmax(ymiss))}); set data.missing: drop to leave them out")
    if entry.metric == "accuracy" and getattr(y, "ndim", 1) == 1:
        reason = continuous_target(np.asarray(y))
        if reason is not None:
            regressors = sorted(n for n, e in models().items() if e.metric == "r2")
            name = d.get("target", "target")
            raise SpecError(f"model.type: {spec.model_type!r} is a classifier, but the target {name!r} looks "
                            f"continuous ({reason}); use a regression model ({', '.join(regressors)}), or give "
                            "the labels as text if they are classes")
    X_test = y_test = None
    if "test_size" in d:
        from sklearn.model_selection import train_test_split
        n, ts = len(X), d["test_size"]
        n_test = math.ceil(ts * n)
        n_train = n - n_test
        if n_test < 1 or n_train < 1:
            raise SpecError(f"data.test_size: {n} row(s) are too few to split with test_size={ts:g} ({n_train} "
                            f"training and {n_test} test rows); give more rows or leave out data.test_size")
        seed = d.get("split_seed", 0)
        X, X_test, y, y_test = train_test_split(X, y, test_size=ts, random_state=seed)
        if entry.metric == "accuracy" and getattr(y, "ndim", 1) == 1:
            kinds = pd.unique(pd.Series(np.asarray(y, dtype=object)))
            if len(kinds) < 2 and len(pd.unique(pd.Series(np.asarray(y_test, dtype=object)))) + len(kinds) > 1:
                raise SpecError(f"data.test_size: the training split (after test_size={ts:g}, split_seed={seed}) "
                                f"has only one class ({kinds[0]!r}, {len(y)} rows) while the data has more; try "
                                "another data.split_seed or a smaller data.test_size")
    try:
        # a built-in dataset's text columns are categories by construction (tic-tac-toe); a CSV's must be asked for
        categorical = d.get("categorical", "auto" if "dataset" in d else None)
        if isinstance(categorical, list):   # a dropped constant column is no longer a feature
            categorical = [c for c in categorical if c not in constant]
        enc = TableEncoding.fit(X, categorical, missing)
        X = enc.transform(X, "data")
        if X_test is not None:
            X_test = enc.transform(X_test, "test rows")
    except InputError as exc:
        raise _data_error(exc) from None
    return SpecData(X, y, X_test, y_test, enc, dropped, constant)


def _row_words(X, i: int, csv_name: str | None) -> str:
    """Where row ``i`` of the loaded table is: its line in the CSV (line 1 is the header), else its row number."""
    row = X.index[i]
    if csv_name and isinstance(row, (int, np.integer)):
        return f"line {int(row) + 2}"
    return f"row {row}"


def _check_missing(X, csv_name: str | None) -> None:
    """``data.missing: error`` and a feature column with missing values: one error counting them in the whole
    file, per column, and naming the first line of each (not rows of the shuffled training split)."""
    miss = X.isna()
    cols = [c for c in X.columns if miss[c].any()]
    if not cols:
        return
    rows = miss.to_numpy().any(axis=1)
    where = csv_name or "the data"
    parts = [f"{c!r}: {int(miss[c].sum())} (first on {_row_words(X, int(np.argmax(miss[c].to_numpy())), csv_name)})"
             for c in cols]
    raise SpecError(f"data.missing: {where} has {int(miss.to_numpy().sum())} missing value(s) in {int(rows.sum())} of "
                    f"{len(X)} rows, in column(s) " + ", ".join(parts) + "; drop or impute them (data.missing: drop | "
                    "impute)")


def _drop_constant(X):
    """Feature columns with one value in every row (missing values aside) say nothing a split could use: dropped,
    with a note naming each (report.json lists them under data.constant_columns)."""
    import warnings
    constant = [c for c in X.columns if X[c].nunique(dropna=True) <= 1 and X[c].notna().any()]
    if not constant or len(constant) == X.shape[1]:
        return X, []
    for c in constant:
        value = X[c].dropna().iloc[0]
        value = value.item() if isinstance(value, np.generic) else value
        warnings.warn(f"column {c!r} has the same value ({value!r}) in every row: dropped (no split can use it)",
                      stacklevel=3)
    return X.drop(columns=constant), constant
