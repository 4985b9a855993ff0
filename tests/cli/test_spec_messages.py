"""Issue 27, section 5 (spec and CLI parts): clear messages for small data problems, spec words in the CLI,
fields that do not apply, duplicate keys, spec errors before the heavy imports, and a summary that adds up."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from opttrees.cli import main, summary_lines, timing_line
from opttrees.errors import SpecError
from opttrees.experiments.datasets import read_table, sniff_delimiter
from opttrees.spec_data import prepare_spec_data
from opttrees.spec import build_manifest, load_spec, parse_spec, quick_catalog, run_spec, spec_words

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("sklearn", "pyomo", "pandas", "scipy", "highspy", "pyscipopt", "numba")


def spec(tmp_path, text, name="s.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


# ----------------------------------------------------------------------------------------- data messages
def test_one_row_csv_with_test_size_names_the_counts(tmp_path):
    (tmp_path / "d.csv").write_text("x,y\n1,a\n")
    s = load_spec(spec(tmp_path, "data: {csv: d.csv, target: y, test_size: 0.25}\nmodel: {type: cart}\n"))
    with pytest.raises(SpecError, match=r"data.test_size: 1 row\(s\) are too few to split with test_size=0.25 "
                                        r"\(0 training and 1 test rows\)"):
        prepare_spec_data(s)


def test_one_class_training_split_mentions_the_split(tmp_path):
    (tmp_path / "d.csv").write_text("x,y\n" + "".join(f"{i},a\n" for i in range(6)) + "9,b\n")
    s = load_spec(spec(tmp_path, "data: {csv: d.csv, target: y, test_size: 0.2, split_seed: 1}\n"
                                 "model: {type: cart}\n"))
    tr = pd.read_csv(tmp_path / "d.csv")
    from sklearn.model_selection import train_test_split
    _, _, ytr, _ = train_test_split(tr.x, tr.y, test_size=0.2, random_state=1)
    assert set(ytr) == {"a"}   # the seed puts the one 'b' row in the test split
    with pytest.raises(SpecError, match=r"the training split \(after test_size=0.2, split_seed=1\) has only one "
                                        r"class \('a', 5 rows\).*another data.split_seed or a smaller"):
        prepare_spec_data(s)


@pytest.mark.parametrize("sep, decimal", [(";", ","), ("\t", "."), ("|", ".")])
def test_semicolon_and_tab_separated_files_are_split(tmp_path, sep, decimal):
    rows = [["sepal length", "sepal width", "species"], ["5" + decimal + "1", "3" + decimal + "5", "a"],
            ["6" + decimal + "2", "2" + decimal + "9", "b"]]
    (tmp_path / "d.csv").write_text("\n".join(sep.join(r) for r in rows) + "\n")
    assert sniff_delimiter(tmp_path / "d.csv") == (sep, decimal)
    df = read_table(tmp_path / "d.csv")
    assert list(df.columns) == rows[0] and df["sepal length"].tolist() == [5.1, 6.2]


def test_comma_files_and_one_column_files_read_as_before(tmp_path):
    (tmp_path / "a.csv").write_text('name,"note; with semicolon"\nx,1\n')
    assert sniff_delimiter(tmp_path / "a.csv") == (",", ".")
    (tmp_path / "b.csv").write_text("x\n1\n2\n")
    assert list(read_table(tmp_path / "b.csv").columns) == ["x"]


def test_infinite_value_with_impute_is_not_called_missing(tmp_path):
    (tmp_path / "d.csv").write_text("x,z,y\n1,2,a\n2,inf,b\n3,,a\n4,1,b\n")
    s = load_spec(spec(tmp_path, "data: {csv: d.csv, target: y, missing: impute}\nmodel: {type: cart}\n"))
    with pytest.raises(SpecError) as info:
        prepare_spec_data(s)
    msg = str(info.value)
    assert "column 'z' holds an infinite value (inf) at row 1 (line 3 of d.csv)" in msg
    assert "not missing values" in msg and "before fitting" not in msg


def test_predict_rows_without_values_speak_cli_words(tmp_path):
    s = parse_spec({"data": {"dataset": "iris"}, "model": {"type": "cart", "max_depth": 1},
                    "output": str(tmp_path / "t")})
    run_spec(s)
    from sklearn.datasets import load_iris
    from opttrees.cli import columns_read
    from opttrees.tree import Tree
    read = columns_read(Tree.from_json(tmp_path / "t" / "tree.json"))[0]   # a column the tree splits on
    X = load_iris(as_frame=True).data.head(4).copy()
    X.iloc[2, X.columns.get_loc(read)] = np.nan
    X.to_csv(tmp_path / "new.csv", index=False)
    r = CliRunner().invoke(main, ["predict", str(tmp_path / "t" / "tree.json"), str(tmp_path / "new.csv")])
    assert r.exit_code == 2
    assert f"column {read!r} has no value at row 2 (line 4)" in r.stderr
    assert "trained with data.missing: error" in r.stderr and "before fitting" not in r.stderr


# ----------------------------------------------------------------------------------------- spec words
def test_estimator_words_become_spec_words():
    assert spec_words("split_type='hyperplane' needs method='mio' or 'local-search': method='greedy' builds "
                      "parallel-split trees", "cart") == ("model.split_type: hyperplane needs type: oct or "
                                                          "oct-local-search: type: cart builds parallel-split trees")
    assert spec_words("OptimalTreeClassifier: time_limit=5 s reached during the dynamic program (best tree so far, "
                      "see solve_result_.bound)", "oct-dp") == (
        "model type 'oct-dp': solver.time_limit: 5 s reached during the dynamic program (best tree so far, see "
        "solve.bound in report.json)")
    assert spec_words("keeping the best tree (fit_status_='interrupted')", "oct") == \
        "keeping the best tree (status: interrupted)"
    assert spec_words("loss='squared' with method='mio' is quadratic", "ort") == \
        "model.loss: squared with model.method: mio is quadratic"


def test_cli_warnings_and_fit_errors_use_spec_words(tmp_path):
    from opttrees import cli
    cli._MODEL_TYPE.append("oct-dp")
    try:
        r = CliRunner()
        with r.isolation() as (_, err, _):
            cli._show_warning("OptimalTreeClassifier: time_limit=1 s reached", UserWarning, "f", 1)
            text = err.getvalue().decode()
    finally:
        cli._MODEL_TYPE.pop()
    assert text == "warning: model type 'oct-dp': solver.time_limit: 1 s reached\n"
    s = parse_spec({"data": {"dataset": "iris"}, "model": {"type": "ort", "method": "mio", "loss": "squared"},
                    "solver": {"name": "highs"}})
    with pytest.raises(SpecError) as info:
        run_spec(s, write=False)
    assert "method='" not in str(info.value) and "model/data" not in str(info.value)


# ----------------------------------------------------------------------------------------- fields
@pytest.mark.parametrize("field, value, where", [("routing", "thesis", "type 'oct'"),
                                                  ("warm_start", "greedy", "type 'oct'"),
                                                  ("n_jobs", 2, "type 'oct-local-search'; or type 'oct' with "
                                                                "model.warm_start: local-search")])
def test_fields_that_do_not_apply_are_errors(field, value, where):
    with pytest.raises(SpecError) as info:
        parse_spec({"data": {"dataset": "iris"}, "model": {"type": "cart", field: value}})
    assert str(info.value) == f"model.{field}: does not apply to model type 'cart' (it is used by {where}); remove it"
    # the same field applies where its condition holds
    parse_spec({"data": {"dataset": "iris"}, "model": {"type": "oct", "warm_start": "local-search", "n_jobs": 2}})


def test_duplicate_keys_are_errors(tmp_path):
    p = spec(tmp_path, "data: {dataset: iris}\nmodel:\n  type: cart\n  max_depth: 2\n  max_depth: 4\n")
    with pytest.raises(SpecError, match=r"model.max_depth: given twice \(lines 4 and 5\); keep one"):
        load_spec(p)
    p = spec(tmp_path, "data: {dataset: iris}\ndata: {dataset: wine}\nmodel: {type: cart}\n", "t.yaml")
    with pytest.raises(SpecError, match=r"t.yaml: data: given twice"):
        load_spec(p)
    p = spec(tmp_path, '{"data": {"dataset": "iris"}, "model": {"type": "cart", "alpha": 0, "alpha": 1}}', "j.json")
    with pytest.raises(SpecError, match="alpha: given twice"):
        load_spec(p)


def test_models_params_lists_only_fields_that_apply():
    r = CliRunner().invoke(main, ["models", "--params"])
    assert r.exit_code == 0
    blocks, name = {}, None
    for line in r.stdout.splitlines():
        if not line.startswith(" "):
            name = line.split()[0]
        blocks.setdefault(name, []).append(line)
    cart = "\n".join(blocks["cart"])
    for field in ("routing", "warm_start", "n_jobs", "n_restarts", "loss_rows", "binarization"):
        assert f" {field}=" not in cart, field
    assert " max_depth=2" in cart and " alpha=0.0" in cart
    assert "n_restarts=100: an integer >= 1  (only with model.warm_start: local-search)" in "\n".join(blocks["oct"])


# ----------------------------------------------------------------------------------------- method rules
METHOD_CASES = [
    ("model: {type: opt-mio, max_depth: 2}\nsolver: {name: highs}",
     "solver.name: highs is not valid with type: opt-mio: the OPT MIO's objective is quadratic"),
    ("model: {type: spot-dp, max_depth: 6}", "model.max_depth: 6 is not valid with type: spot-dp"),
    ("model: {type: spot-mio, max_depth: 2, criterion: mse}", "model.criterion: mse is not valid with type: spot-mio"),
    ("model: {type: ort-dp, loss: absolute}", "model.loss: absolute is not valid with type: ort-dp"),
    ("model: {type: ort, leaf_model: linear, loss: absolute}", "lasso leaves fit squared loss"),
    ("model: {type: oct, split_type: hyperplane, dp_bound: true}", "the DP relaxes the OCT MIO with parallel splits"),
    ("model: {type: opt-dp, max_depth: 9}", "the dynamic program searches trees of depth <= 4"),
]


@pytest.mark.parametrize("text, message", METHOD_CASES)
def test_method_rules_are_checked_when_the_spec_is_read(tmp_path, text, message):
    """A combination the chosen method rejects fails at parse time, with the manifest and with the live
    registry alike, and the estimator's own check (at fit) rejects the same parameters."""
    import yaml
    raw = yaml.safe_load("data: {dataset: iris}\n" + text)
    for catalog in (quick_catalog(), None):
        with pytest.raises(SpecError, match="^model: ") as info:
            parse_spec(raw, catalog=catalog)
        assert message in str(info.value), str(info.value)
    from opttrees.errors import InputError
    from opttrees.registry import models
    from opttrees.spec import SOLVER_TO_PARAM
    entry = models()[raw["model"].pop("type")]
    params = {**raw["model"], **{SOLVER_TO_PARAM[k]: v for k, v in raw.get("solver", {}).items()}}
    est = entry.make(**params)
    est._check_params()
    with pytest.raises(InputError, match="is not valid with method="):
        est._check_method()


def test_a_default_the_method_rejects_names_the_field_to_write():
    """spot-dp searches a fixed depth and max_depth defaults to None (greedy grows until min_samples_leaf):
    the message says to write model.max_depth, not that the user wrote None."""
    with pytest.raises(SpecError, match=r"^model: model.max_depth: required with type: spot-dp \(the default null "
                                        r"is not valid\): expected an integer in \[0, 4\]"):
        parse_spec({"data": {"dataset": "iris"}, "model": {"type": "spot-dp"}}, catalog=quick_catalog())


def test_method_rules_pass_what_the_method_accepts(tmp_path):
    """The same fields with values the method accepts parse (the check is not a blanket refusal)."""
    import yaml
    for text in ("model: {type: opt-mio, max_depth: 2}\nsolver: {name: scip}", "model: {type: spot-dp, max_depth: 4}",
                 "model: {type: ort-dp, loss: squared}", "model: {type: ort, leaf_model: linear, loss: squared}",
                 "model: {type: oct, split_type: hyperplane, dp_bound: false}"):
        raw = yaml.safe_load("data: {dataset: iris}\n" + text)
        parse_spec(raw, catalog=quick_catalog())
        parse_spec(raw)


# ----------------------------------------------------------------------------------------- speed
def test_spec_errors_come_before_the_heavy_imports(tmp_path):
    """A bad field is reported from the generated manifest, with scikit-learn, Pyomo, numba and the solvers
    not imported (measured: 0.6-0.7 s against 3.4-3.7 s before on this machine)."""
    cases = ["model: {type: cart, max_dpth: 2}", "model: {type: cart, routing: thesis}",
             "model: {type: cart}\nsolver: {mip_gap: 0.1}", "model: {type: oct, max_depth: -1}",
             "model: {type: nope}", "model: {type: opt-mio, max_depth: 2}\nsolver: {name: highs}",
             "model: {type: spot-dp, max_depth: 6}"]
    for i, case in enumerate(cases):
        p = spec(tmp_path, "data: {dataset: iris}\n" + case + "\n", f"b{i}.yaml")
        code = ("import sys\nfrom click.testing import CliRunner\nfrom opttrees.cli import main\n"
                f"r = CliRunner().invoke(main, ['solve', {str(p)!r}])\n"
                "print(r.exit_code, [m for m in %r if m in sys.modules])\nprint(r.stderr)" % (HEAVY,))
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                           env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        first, _, err = r.stdout.partition("\n")
        assert first == "2 []", (case, r.stdout, r.stderr)
        assert err.startswith("error: "), err


def test_manifest_is_fresh():
    """opttrees/_spec_fields.py must match the estimators; after changing one, regenerate it with
    ``python -c "import opttrees.spec as s; s.write_manifest()"``."""
    from opttrees._spec_fields import FIELDS
    assert quick_catalog() is not None, "opttrees/_spec_fields.py is stale: run opttrees.spec.write_manifest()"
    assert FIELDS == json.loads(json.dumps(build_manifest()))


# ----------------------------------------------------------------------------------------- summary
def test_summary_has_one_status_timings_that_add_up_and_named_objective():
    report = {"status": "completed", "objective": 0.06, "objective_sense": "minimise",
              "objective_meaning": "normalised loss: errors / baseline errors + alpha * splits",
              "normalised_loss": {"train": 0.06, "test": None}, "train_accuracy": 0.96, "fit_time": 49.99,
              "fit_timings": {"prepare": 0.1, "warm_start": 1.0, "build": 3.0, "solve": 45.0, "extract": 0.2,
                              "total": 49.5},
              "solve": {"status": "time_limit", "solver": "highs", "bound": 0.0, "gap": 1.0, "runtime": 41.97,
                        "node_count": 10, "proven_optimal": False,
                        "timings": {"n_rows": 2886, "n_cols": 1254, "n_nonzeros": 9999, "build": 3.0}}}
    lines = summary_lines(report, "train_accuracy")
    assert lines[0].startswith("status=time_limit solver=highs objective=0.06") and "status=completed" not in lines[0]
    assert lines[1].startswith("objective: normalised loss: errors / baseline errors + alpha * splits")
    t = timing_line(report)
    assert t.startswith("time: 49.99s = prepare 0.10 + warm_start 1.00 + build 3.00 + hand-off 3.03 + "
                        "solver 41.97 + extract 0.20 + other")
    parts = [float(x.split()[-1]) for x in t.split("=", 1)[1].split("+")]
    assert abs(sum(parts) - 49.99) < 0.02
    assert "model size: 2,886 constraints x 1,254 variables, 9,999 nonzeros" in lines


def test_cli_summary_for_a_heuristic(tmp_path):
    p = spec(tmp_path, f"data: {{dataset: iris}}\nmodel: {{type: cart, max_depth: 2}}\noutput: {tmp_path / 'o'}\n")
    r = CliRunner().invoke(main, ["solve", str(p), "-q"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("status=completed objective=") and lines[0].count("status") == 1
    assert lines[1].startswith("objective: normalised loss: errors / baseline errors")
    assert lines[2].startswith("time: ") and " greedy " in lines[2] and " other " in lines[2]
