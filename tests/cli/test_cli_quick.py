"""A quicker, quieter CLI (issue 16, item 5): lazy imports, -q, predict --proba/--keep, models, datasets, examples."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from opttrees.cli import main

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("sklearn", "pyomo", "pandas", "numpy", "scipy", "highspy", "pyscipopt", "numba")


def run(*args, code=None):
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "opttrees.cli", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_help_and_version_import_no_heavy_module():
    """--help and --version load click and the standard library only (measured: ~0.2 s against 2-3 s), so
    scikit-learn, Pyomo, pandas and the solvers must not be imported with the command-line module."""
    r = run(code="import sys, opttrees.cli; print(sorted(m for m in %r if m in sys.modules))" % (HEAVY,))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
    r = run("--version")
    assert r.returncode == 0 and "version" in r.stdout


def test_quiet_solve_prints_no_solver_banner(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("data: {dataset: iris}\nmodel: {type: oct, max_depth: 1, warm_start: greedy, dp_bound: false}\n"
                    "solver: {name: highs, time_limit: 30}\n"
                    f"output: {tmp_path / 'o'}\n")
    r = run("solve", spec, "-q")
    assert r.returncode == 0, r.stderr
    assert "HiGHS" not in r.stdout and "Copyright" not in r.stdout
    assert r.stdout.splitlines()[0].startswith("status=optimal solver=highs")


def iris_tree(tmp_path):
    from opttrees.spec import parse_spec, run_spec
    spec = parse_spec({"data": {"dataset": "iris"}, "model": {"type": "cart", "max_depth": 2},
                       "output": str(tmp_path / "t")})
    run_spec(spec)
    from sklearn.datasets import load_iris
    X = load_iris(as_frame=True).data
    X.insert(0, "plant", [f"p{i}" for i in range(len(X))])
    X.to_csv(tmp_path / "iris.csv", index=False)
    return tmp_path / "t" / "tree.json", tmp_path / "iris.csv"


def test_predict_proba_and_keep(tmp_path):
    from opttrees.tree import Tree
    tree, csv = iris_tree(tmp_path)
    r = CliRunner().invoke(main, ["predict", str(tree), str(csv), "--proba", "--keep", "plant",
                                  "--keep", "sepal width (cm)"])
    assert r.exit_code == 0, r.output
    out = pd.read_csv(pd.io.common.StringIO(r.stdout))
    t = Tree.from_json(tree)
    assert list(out.columns) == ["plant", "sepal width (cm)", "prediction"] + [f"proba_{c}" for c in t.classes]
    X = pd.read_csv(csv)[t.feature_names]
    assert list(out["plant"]) == [f"p{i}" for i in range(150)]
    assert np.allclose(out[[f"proba_{c}" for c in t.classes]].to_numpy(), t.predict_proba(X))
    assert list(out["prediction"]) == list(t.predict(X))
    r = CliRunner().invoke(main, ["predict", str(tree), str(csv), "--keep", "name"])
    assert r.exit_code == 2 and "--keep: " in r.stderr and "no column(s) ['name']" in r.stderr


def test_predict_proba_needs_a_classification_tree(tmp_path):
    from opttrees.tree import LEAF, Tree
    Tree([LEAF], [LEAF], [LEAF], [0.0], [[2.5]], task="regression", n_features=1, feature_names=["x"]).to_json(
        tmp_path / "r.json")
    (tmp_path / "x.csv").write_text("x\n1\n2\n")
    r = CliRunner().invoke(main, ["predict", str(tmp_path / "r.json"), str(tmp_path / "x.csv"), "--proba"])
    assert r.exit_code == 2 and "--proba: class probabilities need a classification tree" in r.stderr


def section(text: str, model: str) -> str:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(model + " "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    return "\n".join(lines[start:end])


def test_models_params_leaves_solver_fields_off_models_without_a_solver():
    r = CliRunner().invoke(main, ["models", "--params"])
    assert r.exit_code == 0
    cart, oct_, cv = (section(r.output, m) for m in ("cart", "oct", "oct-cv"))
    assert "solver: time_limit, verbose" in cart and "name=" not in cart and "mip_gap=" not in cart
    assert "solver: name, time_limit, mip_gap, threads, verbose" in oct_ and "mip_gap=1e-06" in oct_
    assert "solver: time_limit" in cv and "threads" not in cv
    assert "random_state=0: None, an integer >= 0" in cart   # the seed is a model field, 0 unless set


def test_datasets_lists_task_rows_and_columns():
    from opttrees.experiments.datasets import dataset_info, dataset_names, load_dataset
    r = CliRunner().invoke(main, ["datasets"])
    assert r.exit_code == 0
    lines = {line.split()[0]: line.split() for line in r.output.splitlines()[1:]}
    assert set(lines) == set(dataset_names())
    for name in dataset_names():
        info = dataset_info(name)
        X, y = load_dataset(name)
        assert (info.rows, info.columns) == X.shape, name
        assert lines[name][1:4] == [info.task, str(info.rows), str(info.columns)]
        if info.task == "classification":
            assert info.targets == f"{y.nunique()} classes"
        elif info.task == "spo":
            assert info.targets == f"{y.shape[1]} cost columns"
    assert lines["diabetes"][1] == "regression" and lines["iris"][1:4] == ["classification", "150", "4"]


def option_help(text: str) -> dict:
    """{option: its description} from argparse's --help output (the 'options:' section)."""
    lines = text.split("options:", 1)[1].splitlines()
    found, current = {}, None
    for line in lines:
        if line.startswith("  -"):
            sig, _, desc = line.strip().partition("  ")
            current = sig.split(",")[-1].split()[0]
            found[current] = desc.strip()
        elif current and line.startswith("    ") and line.strip():
            found[current] = (found[current] + " " + line.strip()).strip()
    return found


@pytest.mark.parametrize("script", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.stem)
def test_example_scripts_describe_every_option(script):
    r = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    described = option_help(r.stdout)
    assert len(described) >= 3, r.stdout
    for option, text in described.items():
        assert len(text) > 15, (script.name, option, text)   # a sentence, not just the default
