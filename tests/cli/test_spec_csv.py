"""Specs on real CSVs (issue 16, item 1): categorical columns, missing values, empty files, continuous targets.

Most tests run the CLI in-process (click's CliRunner) on small CSVs written to tmp_path, so they are quick.
"""
import json
import warnings

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from opttrees.cli import main
from opttrees.data.table import TableEncoding
from opttrees.data.prepared import continuous_target, prepare
from opttrees.errors import InputError, SpecError
from opttrees.tree import LEAF, Tree


def cli(*args):
    return CliRunner().invoke(main, list(map(str, args)))


def pets(n=120, seed=0) -> pd.DataFrame:
    """label = yes iff colour is red or size > 6: a depth-2 tree with one categorical split is exact."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], n)
    size = rng.normal(5, 2, n).round(2)
    label = np.where((colour == "red") | (size > 6), "yes", "no")
    return pd.DataFrame({"id": [f"p{i}" for i in range(n)], "colour": colour, "size": size, "label": label})


def write(tmp_path, df, data=None, model=None, name="spec.yaml", csv="pets.csv", **extra):
    df.to_csv(tmp_path / csv, index=False)
    spec = {"data": {"csv": csv, "target": "label", "features": ["colour", "size"], **(data or {})},
            "model": model or {"type": "cart", "max_depth": 2}, "output": "out", **extra}
    path = tmp_path / name
    path.write_text(yaml.safe_dump(spec))
    return path


# ------------------------------------------------------------------------------------------ categoricals
def test_categorical_columns_are_one_hot_encoded_with_readable_splits(tmp_path):
    spec = write(tmp_path, pets(), {"categorical": "auto"})
    r = cli("solve", spec)
    assert r.exit_code == 0, r.output
    assert "colour != red" in r.output and "else:  # colour = red" in r.output
    out = tmp_path / "out"   # output: is relative to the spec file, not the working directory
    report = json.loads((out / "report.json").read_text())
    assert report["train_accuracy"] == 1.0 and report["data"]["categorical"] == {"colour": 3}
    tree = Tree.from_json(out / "tree.json")
    assert tree.feature_names == ["colour=blue", "colour=green", "colour=red", "size"]
    assert tree.encoding.categories == {"colour": ["blue", "green", "red"]}
    assert "colour != red" in (out / "tree.dot").read_text()
    # a saved tree predicts from the raw table, as it was trained: the same as on the encoded features
    raw = pets(40, seed=1)
    encoded = pd.get_dummies(raw["colour"], prefix="colour", prefix_sep="=").astype(float)
    encoded["size"] = raw["size"]
    assert list(tree.predict(raw)) == list(tree.predict(encoded[tree.feature_names]))
    assert list(tree.predict(raw)) == list(raw["label"])


def test_json_round_trip_keeps_the_encoding_and_the_text():
    enc = TableEncoding(["colour", "size"], {"colour": ["blue", "red"]})
    t = Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [1, LEAF, LEAF], [0.5, 0, 0], [[3, 3], [3, 0], [0, 3]],
             label=[0, 0, 1], classes=["no", "yes"], feature_names=enc.feature_names, encoding=enc)
    t2 = Tree.from_json(t.to_json())
    assert t2.encoding == enc and t2.export_text() == t.export_text()
    assert t2.split_text(0) == "colour != red" and t2.split_text(0, negate=True) == "colour = red"
    assert t2.prune([0]).encoding == enc
    # a threshold outside (0, 1] on a 0/1 feature is not a category test: it reads as a number
    t2.threshold[0] = 1.5
    assert t2.split_text(0) == "colour=red < 1.5"
    # without an encoding (older files) the split stays numeric
    d = t.to_dict()
    del d["encoding"]
    assert Tree.from_dict(d).split_text(0) == "colour=red < 0.5"


def test_predict_re_encodes_a_raw_csv_and_unseen_categories_get_zeros(tmp_path):
    spec = write(tmp_path, pets(), {"categorical": "auto"})
    assert cli("solve", spec, "-q").exit_code == 0
    new = pd.DataFrame({"id": ["a", "b", "c"], "size": [3.0, 3.0, 9.0], "colour": ["red", "purple", "purple"]})
    new.to_csv(tmp_path / "new.csv", index=False)
    r = cli("predict", tmp_path / "out" / "tree.json", tmp_path / "new.csv", "--keep", "id", "--proba")
    assert r.exit_code == 0, r.output
    assert "not seen in training (['purple'])" in r.stderr
    table = pd.read_csv(pd.io.common.StringIO(r.stdout))
    assert list(table.columns) == ["id", "prediction", "proba_no", "proba_yes"]
    # purple is none of blue/green/red: small -> "no", large -> "yes"
    assert list(table["prediction"]) == ["yes", "no", "yes"] and list(table["id"]) == ["a", "b", "c"]
    assert np.allclose(table[["proba_no", "proba_yes"]].sum(axis=1), 1)


def test_text_columns_need_the_categorical_setting(tmp_path):
    r = cli("solve", write(tmp_path, pets()))
    assert r.exit_code == 2
    assert "data.categorical: column(s) ['colour'] hold text" in r.stderr and "Traceback" not in r.stderr
    r = cli("solve", write(tmp_path, pets(), {"categorical": ["shape"]}, name="s2.yaml"))
    assert r.exit_code == 2 and "categorical column(s) ['shape'] are not feature columns" in r.stderr
    r = cli("solve", write(tmp_path, pets(), {"categorical": "yes"}, name="s3.yaml"))
    assert r.exit_code == 2 and "data.categorical: expected 'auto' or a list of column names" in r.stderr
    r = cli("solve", write(tmp_path, pets(), {"categorical": ["label"]}, name="s4.yaml"))
    assert r.exit_code == 2 and "data.categorical: ['label'] is the target" in r.stderr


def test_a_numeric_column_listed_as_categorical_is_one_hot_encoded():
    X = pd.DataFrame({"zone": [1, 2, 3, 1.0], "v": [0.1, 0.2, 0.3, 0.4]})
    enc = TableEncoding.fit(X, ["zone"])
    assert enc.feature_names == ["zone=1", "zone=2", "zone=3", "v"]
    again = enc.transform(pd.DataFrame({"v": [0.5], "zone": ["2"]}))   # read back as text: the same category
    assert again.to_numpy().tolist() == [[0.0, 1.0, 0.0, 0.5]]


# ----------------------------------------------------------------------------------------- missing values
def with_gaps():
    df = pets()
    df.loc[[3, 10], "size"] = np.nan
    df.loc[7, "colour"] = np.nan
    return df


def test_missing_values_error_names_the_column(tmp_path):
    r = cli("solve", write(tmp_path, with_gaps(), {"categorical": "auto"}))
    # counted in the whole file and located by file line (row 7 is line 9: the header is line 1)
    assert r.exit_code == 2 and "data.missing: pets.csv has 3 missing value(s) in 3 of 120 rows" in r.stderr
    assert "'colour': 1 (first on line 9), 'size': 2 (first on line 5)" in r.stderr
    # outside specs, the NaN error of prepare names the DataFrame column too
    X = pd.DataFrame({"a": [1.0, 2.0], "height": [1.0, np.nan]})
    with pytest.raises(InputError, match="column 'height'"):
        prepare(X, [0, 1])


def test_missing_drop_and_impute(tmp_path):
    r = cli("solve", write(tmp_path, with_gaps(), {"categorical": "auto", "missing": "drop"}), "-q")
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["data"]["rows_dropped"] == 3 and report["n_train"] == 117
    spec = write(tmp_path, with_gaps(), {"categorical": "auto", "missing": "impute"}, name="imp.yaml", output="imp")
    r = cli("solve", spec, "-q")
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "imp" / "report.json").read_text())
    df = with_gaps()
    assert report["n_train"] == 120
    assert report["data"]["imputed"]["size"] == pytest.approx(df["size"].median())
    assert report["data"]["imputed"]["colour"] == df["colour"].value_counts().idxmax()
    # the tree imputes a new row the same way
    tree = Tree.from_json(tmp_path / "imp" / "tree.json")
    row = pd.DataFrame({"colour": [np.nan], "size": [np.nan]})
    filled = pd.DataFrame({"colour": [report["data"]["imputed"]["colour"]], "size": [df["size"].median()]})
    assert list(tree.predict(row)) == list(tree.predict(filled))
    r = cli("solve", write(tmp_path, pets(), {"missing": "sometimes"}, name="bad.yaml"))
    assert r.exit_code == 2 and "data.missing: expected one of 'error', 'drop', 'impute'" in r.stderr


def test_missing_target_values(tmp_path):
    df = pets()
    df.loc[5, "label"] = np.nan
    r = cli("solve", write(tmp_path, df, {"categorical": "auto"}))
    assert r.exit_code == 2 and "data.target: 1 row(s) have no target value (first at row 5)" in r.stderr
    r = cli("solve", write(tmp_path, df, {"categorical": "auto", "missing": "drop"}, name="d.yaml"), "-q")
    assert r.exit_code == 0, r.output


# ------------------------------------------------------------------------------------ empty / header-only
@pytest.mark.parametrize("content, message", [("", "is empty: no header row and no data"),
                                              ("colour,size,label\n", "has a header (3 column(s)) but no data rows")])
def test_empty_and_header_only_csv_in_solve_and_predict(tmp_path, content, message):
    (tmp_path / "bad.csv").write_text(content)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"data": {"csv": "bad.csv", "target": "label"}, "model": {"type": "cart"}}))
    r = cli("solve", spec)
    assert r.exit_code == 2 and message in r.stderr and "non-numeric" not in r.stderr
    t = Tree([LEAF], [LEAF], [LEAF], [0.0], [[1, 1]], label=[0], classes=["no", "yes"], n_features=1,
             feature_names=["size"])
    t.to_json(tmp_path / "t.json")
    r = cli("predict", tmp_path / "t.json", tmp_path / "bad.csv")
    assert r.exit_code == 2 and message in r.stderr and "Traceback" not in r.output


# --------------------------------------------------------------------------------------- continuous targets
def test_classifier_on_a_continuous_target_points_to_the_regression_models(tmp_path):
    from opttrees.spec import parse_spec, run_spec
    spec = parse_spec({"data": {"dataset": "diabetes"}, "model": {"type": "oct", "max_depth": 1}})
    with pytest.raises(SpecError, match=r"model.type: 'oct' is a classifier, but the target 'target' looks "
                                        r"continuous \(214 distinct numeric values in 442 rows.*ort, ort-cv, ort-dp"):
        run_spec(spec, write=False)


def test_continuous_target_rule():
    rng = np.random.default_rng(0)
    assert continuous_target(np.arange(442) % 214 + 25.0) is not None       # diabetes-like: integral floats
    assert continuous_target(rng.integers(0, 30, 1000)) is None               # 30 classes in 1000 rows: fine
    assert continuous_target(np.arange(25)) is not None                       # 25 > max(20, 5)
    assert continuous_target(np.array(["a"] * 10 + [str(i) for i in range(100)])) is None   # text: classes
    assert continuous_target([0.5, 1.25, 2.0]) is not None                   # non-integer, all distinct
    assert continuous_target([0.5, 1.5, 0.5, 1.5]) is None                    # two float classes
    with pytest.raises(InputError, match="continuous"):
        prepare(np.zeros((100, 1)), np.arange(100.0))


# -------------------------------------------------------------------------------------- encoding properties
@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.floats(-5, 5, allow_nan=False)), min_size=1,
                max_size=25))
def test_encoding_is_one_hot_and_predictions_agree(rows):
    X = pd.DataFrame(rows, columns=["cat", "num"])
    enc = TableEncoding.fit(X, "auto")
    Z = enc.transform(X)
    cats = enc.categories["cat"]
    assert list(Z.columns) == [f"cat={c}" for c in cats] + ["num"]
    assert (Z[[f"cat={c}" for c in cats]].sum(axis=1) == 1).all()
    assert (np.asarray(cats)[Z[[f"cat={c}" for c in cats]].to_numpy().argmax(axis=1)] == X["cat"]).all()
    assert TableEncoding.from_dict(json.loads(json.dumps(enc.to_dict()))) == enc
    # a split on any one-hot column routes raw rows as the encoded ones
    j = len(cats) - 1
    t = Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [j, LEAF, LEAF], [0.5, 0, 0], [[0.0], [1.0], [2.0]],
             task="regression", feature_names=enc.feature_names, encoding=enc)
    assert np.array_equal(t.predict(X), np.where(X["cat"] == cats[j], 2.0, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t.predict(X)   # no warning: every category was seen


def test_built_in_datasets_with_text_columns_are_encoded_by_default():
    from opttrees.spec import parse_spec, run_spec
    rep = run_spec(parse_spec({"data": {"dataset": "tic-tac-toe"}, "model": {"type": "cart", "max_depth": 2}}),
                   write=False)
    assert rep["n_features"] == 27 and rep["data"]["categorical"] == {c: 3 for c in rep["data"]["categorical"]}
    assert rep["train_accuracy"] > 0.7 and "if middle_middle != o:" in rep["_tree_text"]
