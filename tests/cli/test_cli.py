import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "opttrees.cli", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def write_spec(tmp_path, spec, name="spec.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(spec))
    return p


BASE = {"data": {"dataset": "iris"}, "model": {"type": "oct", "max_depth": 1},
        "solver": {"name": "highs", "time_limit": 30}}


def test_help_documents_commands():
    r = run("--help")
    assert r.returncode == 0
    for word in ("solve", "show", "predict", "models", "datasets", "time_limit", "Solve statuses"):
        assert word in r.stdout


def test_solve_example_spec_writes_outputs(tmp_path):
    out = tmp_path / "out"
    r = run("solve", "examples/iris_oct.yaml", "--time-limit", "30", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "objective=" in r.stdout and "bound=" in r.stdout and "train_accuracy=" in r.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["solve"]["status"] in ("optimal", "gap_limit", "time_limit")
    assert report["train_accuracy"] >= 0.96
    assert (out / "tree.dot").read_text().startswith("digraph")
    r2 = run("show", str(out / "tree.json"))
    assert r2.returncode == 0 and "leaf" in r2.stdout


def test_csv_spec_and_predict(tmp_path):
    out = tmp_path / "wine"
    r = run("solve", "examples/wine_csv_cart.yaml", "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    r = run("predict", str(out / "tree.json"), "examples/data/wine_subset.csv")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0] == "prediction" and len(lines) == 179 and lines[1].startswith("cultivar_")


def test_regression_spec_with_absolute_loss(tmp_path):
    """The shipped ORT example: leaves predict lower medians (training targets), the tree splits on the five
    informative features of Friedman's data only, and two runs give the same tree (seeded by default)."""
    out = tmp_path / "fr"
    r = run("solve", "examples/friedman1_ort_absolute.yaml", "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    from opttrees.spec import load_spec, run_spec
    again = run_spec(load_spec(ROOT / "examples/friedman1_ort_absolute.yaml"), write=False)   # a second run
    report = json.loads((out / "report.json").read_text())
    assert report["model"] == "ort" and report["spec"]["model"]["loss"] == "absolute" and report["random_state"] == 0
    assert report["test_r2"] > 0.6
    from opttrees.experiments.datasets import load_dataset
    from opttrees.tree import Tree
    X, y = load_dataset("friedman1")
    tree = Tree.from_json(out / "tree.json")
    assert tree.export_text() == again["_tree_text"] and report["test_r2"] == again["test_r2"]
    assert tree.n_leaves >= 8 and np.isin(tree.value[tree.leaves, 0], y.to_numpy()).all()
    assert set(tree.feature[tree.feature >= 0]) <= {0, 1, 2, 3, 4}
    bad = write_spec(tmp_path, {"data": {"dataset": "diabetes"}, "model": {"type": "ort", "loss": "huber"}})
    r = run("solve", str(bad), "-o", str(tmp_path / "bad"))
    assert r.returncode == 2 and "model.loss: expected one of 'squared', 'absolute'; got str 'huber'" in r.stderr


@pytest.mark.parametrize("mutate, field", [
    (lambda s: s["model"].update(max_dept=2), "model.max_dept: unknown field (did you mean 'max_depth'?)"),
    (lambda s: s["model"].update(max_depth="two"), "model.max_depth: expected an integer"),
    (lambda s: s.update(data={"csv": "missing.csv", "target": "y"}), "data.csv: file not found"),
    (lambda s: s.update(data={"dataset": "irsi"}), "data.dataset: unknown dataset 'irsi'"),
    (lambda s: s["solver"].update(name="gurobi"), "solver.name: expected one of 'auto', 'highs', 'scip' (any case); got str "
                                                  "'gurobi'"),
    (lambda s: s["solver"].update(time_limit="fast"), "solver.time_limit: expected a number"),
    (lambda s: s["model"].update(type="xgboost"), "model.type: unknown model 'xgboost'"),
    (lambda s: s.update(extra=1), "spec.extra: unknown field"),
    (lambda s: s.pop("model"), "model: missing section"),
    (lambda s: s["data"].update(csv="x.csv"), "data: give exactly one of"),
    (lambda s: s["model"].update(alpha=-1.0), "model.alpha: expected a finite number >= 0; got float -1.0"),
    (lambda s: s["data"].update(target="species"), "data.target: only valid with data.csv"),
    (lambda s: s["model"].update(random_state=-3), "model.random_state: expected None, an integer >= 0"),
    (lambda s: s["model"].update(seed=3), "model.seed: unknown field (did you mean 'random_state'?)"),
    (lambda s: s["solver"].update(seed=3), "solver.seed: the seed is a model setting: write it as model.random_state"),
    (lambda s: s["solver"].update(random_state=3), "solver.random_state: the seed is a model setting"),
    (lambda s: s.update(model={"type": "cart"}), "solver.name: model 'cart' has no solver"),
    (lambda s: s["model"].update(depth=3), "model.depth: unknown field (did you mean 'max_depth'?)"),
    (lambda s: s["solver"].update(mip_gap=5), "solver.mip_gap: expected a finite number in [0, 1)"),
    (lambda s: s["solver"].update(threads=0), "solver.threads: expected an integer >= 1"),
    (lambda s: s["model"].update(warm_start="cart"), "model.warm_start: expected one of 'auto', 'greedy', 'local-search'"),
    (lambda s: s.update(model={"type": "ort", "method": "foo"}), "model.method: expected one of 'local-search', "
                                                                   "'mio', 'greedy', 'dp'; got str 'foo'"),
    (lambda s: s["data"].update(params={"n": 3}), "data.params"),
    (lambda s: s.update(model={"type": "robust-oct", "max_depth": 1, "rho": "high", "lam": 0.9},
                        data={"dataset": "monk1"}), "model.rho: expected a number or an array-like of numbers"),
])
def test_broken_specs_exit_nonzero_naming_the_field(tmp_path, mutate, field):
    spec = json.loads(json.dumps(BASE))
    mutate(spec)
    r = run("solve", str(write_spec(tmp_path, spec)), "-o", str(tmp_path / "o"))
    assert r.returncode == 2
    assert field in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_missing_spec_file_and_bad_yaml(tmp_path):
    r = run("solve", str(tmp_path / "nope.yaml"))
    assert r.returncode == 2 and "spec file not found" in r.stderr
    p = tmp_path / "bad.yaml"
    p.write_text("data: [unclosed")
    r = run("solve", str(p))
    assert r.returncode == 2 and "could not parse" in r.stderr


def test_spot_spec(tmp_path):
    r = run("solve", "examples/shortest_path_spot.yaml", "-o", str(tmp_path / "spot"), "-q")
    assert r.returncode == 0, r.stderr
    report = json.loads((tmp_path / "spot" / "report.json").read_text())
    assert 0 <= report["test_normalised_spo_loss"] < 0.5


def test_solver_name_is_case_insensitive_and_cv_model_runs(tmp_path):
    spec = {"data": {"dataset": "iris", "test_size": 0.3},
            "model": {"type": "oct-cv", "max_depth": 2, "n_restarts": 4, "random_state": 1}}
    out = tmp_path / "cv"
    r = run("solve", str(write_spec(tmp_path, spec)), "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["train_accuracy"] > 0.9 and report["tree"]["depth"] <= 2
    spec = json.loads(json.dumps(BASE))
    spec["solver"]["name"] = "HiGHS"
    r = run("solve", str(write_spec(tmp_path, spec, "s2.yaml")), "-o", str(tmp_path / "o2"), "-q")
    assert r.returncode == 0, r.stderr


def test_csv_target_cannot_also_be_a_feature(tmp_path):
    spec = {"data": {"csv": str(ROOT / "examples/data/wine_subset.csv"), "target": "target",
                     "features": ["alcohol", "target"]}, "model": {"type": "cart", "max_depth": 1}}
    r = run("solve", str(write_spec(tmp_path, spec)), "-o", str(tmp_path / "o"))
    assert r.returncode == 2 and "data.features: ['target'] is also the target" in r.stderr, r.stderr


def test_flow_models_take_the_model_random_state():
    from opttrees.spec import parse_spec
    spec = parse_spec({"data": {"dataset": "monk1"}, "model": {"type": "benders-oct", "max_depth": 1,
                                                               "random_state": 3}})
    assert spec.build_estimator().get_params()["random_state"] == 3


def test_spo_forest_spec_takes_an_integer_max_features(tmp_path):
    spec = {"data": {"dataset": "shortest_path", "params": {"n": 60}},
            "model": {"type": "spo-forest", "decision_problem": {"type": "shortest_path", "rows": 4, "cols": 4},
                      "max_features": 3, "n_estimators": 3}}
    out = tmp_path / "forest"
    r = run("solve", str(write_spec(tmp_path, spec)), "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stdout and "tree.json" not in r.stdout and (out / "report.json").exists()


def test_output_folder_that_cannot_be_created(tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    r = run("solve", str(write_spec(tmp_path, BASE)), "-o", str(blocker / "sub"))
    assert r.returncode == 2 and "output: cannot create the folder" in r.stderr and "Traceback" not in r.stderr


def test_models_lists_parameters():
    r = run("models", "--params")
    assert r.returncode == 0
    assert "oct-cv" in r.stdout and "max_depth=2" in r.stdout and "solver: name, time_limit" in r.stdout
    # each parameter with the description of its declared rules, the same text its errors use
    assert "alpha=0.0: a finite number >= 0" in r.stdout
    assert "warm_start='auto': one of 'auto', 'greedy', 'local-search', 'dp', False or None" in r.stdout
    assert "(fixed: method='mio')" in r.stdout and "regularization=0.0: a finite number in [0, 1)" in r.stdout


def test_spec_fields_are_checked_before_any_data_loads(monkeypatch):
    """model.* and solver.* are checked from the estimators' declarations in parse_spec; no data is read."""
    import opttrees.experiments.datasets as datasets
    from opttrees.errors import SpecError
    from opttrees.spec import parse_spec

    def boom(*a, **k):
        raise AssertionError("data loaded before the spec was validated")

    monkeypatch.setattr(datasets, "load_dataset", boom)
    monkeypatch.setattr(datasets, "load_csv", boom)
    for model, solver, field in [({"type": "ort", "method": "foo"}, {}, "model.method"),
                                 ({"type": "flow-oct", "objective": "f1"}, {}, "model.objective"),
                                 ({"type": "spo-forest", "max_features": "auto"}, {}, "model.max_features"),
                                 ({"type": "oct"}, {"time_limit": 0}, "solver.time_limit"),
                                 ({"type": "oct-cv"}, {"mip_gap": 0.1}, "solver.mip_gap: model 'oct-cv' has no")]:
        with pytest.raises(SpecError, match=field):
            parse_spec({"data": {"dataset": "iris"}, "model": model, "solver": solver})


def test_time_limit_inf_means_no_limit_in_specs_and_estimators():
    """The same rule everywhere: .inf is accepted by the spec, the estimators and solve() (no limit)."""
    from sklearn.datasets import load_iris

    from opttrees import OptimalTreeClassifier
    from opttrees.spec import parse_spec
    spec = parse_spec({"data": {"dataset": "iris"}, "model": {"type": "cart", "max_depth": 1},
                       "solver": {"time_limit": float("inf")}})
    est = spec.build_estimator()
    assert est.time_limit == float("inf") and est.method == "greedy"
    X, y = load_iris(return_X_y=True)
    est.fit(X, y)
    assert est.fit_status_ == "completed"
    mio = OptimalTreeClassifier(max_depth=1, time_limit=float("inf")).fit(X, y)
    assert mio.solve_result_.proven_optimal and mio.fit_status_ == "completed"


def test_solve_prints_the_solve_result_summary(tmp_path):
    # the greedy start and no DP bound: HiGHS proves it (with the DP's start and bound no solver would run)
    spec = {**BASE, "model": {**BASE["model"], "warm_start": "greedy", "dp_bound": False}}
    r = run("solve", str(write_spec(tmp_path, spec)), "-o", str(tmp_path / "o"), "-q")
    assert r.returncode == 0, r.stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["solve"]["solver"] == "highs"
    # one status word (the solver's), the objective named, the stage timings (issue 27)
    assert r.stdout.splitlines()[0].startswith("status=optimal solver=highs (proven optimal")
    assert "status=completed" not in r.stdout and "train_accuracy=" in r.stdout and "bound=" in r.stdout
    assert "\nobjective: normalised loss" in r.stdout and "\ntime: " in r.stdout and " solver " in r.stdout


def test_solve_names_the_solver_that_ran_not_the_planned_one(tmp_path):
    # the DP's start reaches the DP bound: no solver is called, and the line says so (not "solver=none" alone,
    # and never the planned solver as if it had run)
    spec = {**BASE, "solver": {**BASE["solver"], "name": "scip"}}
    r = run("solve", str(write_spec(tmp_path, spec)), "-o", str(tmp_path / "o"), "-q")
    assert r.returncode == 0, r.stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["solve"]["solver"] == "none" and report["solve"]["plan"]["solver"] == "scip"
    assert "solver=none (scip not called: proven optimal by the DP bound)" in r.stdout.splitlines()[0]


def test_every_shipped_example_spec_is_valid():
    """Specs in examples/ are checked like a user's (field names, types, files) without running them."""
    from pathlib import Path

    from opttrees.spec import load_spec

    specs = sorted(Path(__file__).resolve().parents[2].glob("examples/*.yaml"))
    assert len(specs) >= 8
    for path in specs:
        load_spec(path)
