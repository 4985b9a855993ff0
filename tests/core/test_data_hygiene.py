"""Data hygiene on the way in (issue 41): identifiers, dates, duplicate headers, constant columns and missing values
are named when a table arrives, in the estimators and in the CLI's data preparation."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from opttrees.data.table import TableEncoding, date_days
from opttrees.data.prepared import id_like, prepare
from opttrees.datasets import read_table
from opttrees.errors import InputError, NonNumericInputError


def _warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(w.message) for w in caught]


# --- identifiers ----------------------------------------------------------------------------------------------

def test_a_sorted_id_column_is_named():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"customer_id": np.arange(100000, 100060), "income": rng.normal(size=60)})
    _, msgs = _warnings(lambda: prepare(X, np.arange(60) >= 30))
    hits = [m for m in msgs if "row identifier" in m]
    assert len(hits) == 1 and "'customer_id'" in hits[0] and "increasing" in hits[0]


def test_a_shuffled_id_column_is_named_and_ordinary_columns_are_not():
    rng = np.random.default_rng(1)
    ids = rng.permutation(np.arange(500, 580))[:60]               # a training split of row numbers
    X = np.column_stack([ids, rng.integers(0, 5, 60), rng.normal(size=60), np.round(rng.normal(size=60) * 1000)])
    _, msgs = _warnings(lambda: prepare(X, np.arange(60) % 2))
    assert [m.split("'")[1] for m in msgs if "row identifier" in m] == ["x0"]
    assert id_like(np.arange(10.0)) is None                      # too few rows to tell
    assert id_like(np.arange(40.0) * 0.5) is None                # not integers
    _, msgs = _warnings(lambda: prepare(np.arange(60.0)[:, None], np.arange(60) % 2))
    assert not [m for m in msgs if "row identifier" in m]        # a lone 0, 1, 2, ... column: a time step


# --- dates ----------------------------------------------------------------------------------------------------

def test_date_text_becomes_days_under_auto():
    X = pd.DataFrame({"signup": ["2021-03-04", "2021-03-05", "2022-01-01", None],
                      "when": ["04/03/2021", "05/03/2021", "01/01/2022", "02/01/2022"],
                      "colour": ["red", "blue", "red", "blue"]})
    enc, msgs = _warnings(lambda: TableEncoding.fit(X, "auto", "impute"))
    assert enc.dates == ["signup", "when"] and list(enc.categories) == ["colour"]
    assert any("'signup' holds dates" in m and "data.categorical" in m for m in msgs)
    out = enc.transform(X)
    assert out["signup"].tolist()[:3] == [18690.0, 18691.0, 18993.0]    # days after 1970-01-01
    assert out["when"].tolist()[:2] == [18690.0, 18691.0]               # day first without a leading year
    assert out["signup"].iloc[3] == 18691.0                              # the median of the present days
    back = TableEncoding.from_dict(enc.to_dict())
    assert back.dates == enc.dates and back.transform(X).equals(out)
    with pytest.raises(InputError, match="'signup' holds dates in training but 'soon'"):
        enc.transform(X.assign(signup=["soon", "2021-01-01", "2021-01-01", "2021-01-01"]))


def test_date_text_without_auto_names_the_field():
    X = pd.DataFrame({"signup": ["2021-03-04", "2021-03-05", "2022-01-01"], "n": [1.0, 2.0, 3.0]})
    with pytest.raises(NonNumericInputError, match="hold dates .*data.categorical: auto"):
        TableEncoding.fit(X, None)
    enc, msgs = _warnings(lambda: TableEncoding.fit(X, ["signup"]))   # listed: one-hot, as asked, with a word
    assert enc.categories["signup"] and not enc.dates
    assert any("lists it" in m for m in msgs)
    assert np.isnan(date_days(pd.Series(["2021-13-45"])))[0]


# --- duplicate headers, constant columns, missing values (the CLI's preparation) -------------------------------

def test_duplicate_header_names_are_reported_with_their_new_names(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("income,age,income,label\n1,2,3,a\n4,5,6,b\n")
    df, msgs = _warnings(lambda: read_table(p))
    assert list(df.columns) == ["income", "age", "income.1", "label"]
    assert any("'income' 2 times" in m and "['income.1']" in m for m in msgs), msgs


def _spec(tmp_path, csv_text: str, extra: str = ""):
    from opttrees.spec import load_spec
    (tmp_path / "d.csv").write_text(csv_text)
    (tmp_path / "s.yaml").write_text(f"data: {{csv: d.csv, target: y{extra}}}\nmodel: {{type: cart, max_depth: 1}}\n")
    return load_spec(tmp_path / "s.yaml")


def test_a_constant_column_is_dropped_with_a_note(tmp_path):
    from opttrees.spec_data import prepare_spec_data
    rows = "\n".join(f"{i % 7},3,{'ab'[i % 2]}" for i in range(30))
    spec = _spec(tmp_path, "a,k,y\n" + rows + "\n")
    sd, msgs = _warnings(lambda: prepare_spec_data(spec))
    assert list(sd.X.columns) == ["a"] and sd.constant_columns == ["k"]
    assert any("'k' has the same value (3) in every row: dropped" in m for m in msgs)


def test_missing_values_are_counted_in_the_whole_file_by_line(tmp_path):
    from opttrees.errors import SpecError
    from opttrees.spec_data import prepare_spec_data
    lines = [f"{'' if i in (2, 9, 30) else i},{'' if i == 5 else i % 3},{'ab'[i % 2]}" for i in range(40)]
    spec = _spec(tmp_path, "a,b,y\n" + "\n".join(lines) + "\n", ", test_size: 0.25")
    with pytest.raises(SpecError) as err:
        prepare_spec_data(spec)
    msg = str(err.value)
    assert "d.csv has 4 missing value(s) in 4 of 40 rows" in msg
    assert "'a': 3 (first on line 4)" in msg and "'b': 1 (first on line 7)" in msg


def test_missing_values_in_a_frame_name_its_index():
    X = pd.DataFrame({"c": ["u", None, "v"]}, index=[10, 11, 12])
    with pytest.raises(InputError, match="1 missing value.*first at index 11"):
        TableEncoding.fit(X, "auto")
