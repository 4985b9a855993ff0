"""Reproducible spec runs and one meaning per word (issue 16, items 2 and 3)."""
import inspect
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from opttrees.errors import SpecError
from opttrees.registry import models
from opttrees.estimators.base import DEFAULT_RANDOM_STATE
from opttrees.spec import parse_spec, run_spec, solver_keys, uses_solver

IRIS = {"dataset": "iris"}
#: fields a model type needs beyond its defaults (its method searches a fixed depth)
REQUIRED = {"spot-dp": {"max_depth": 2}, "spot-mio": {"max_depth": 2}}


# ------------------------------------------------------------------------------------------------ seeds
def test_a_spec_without_a_seed_runs_with_seed_0_and_records_it():
    spec = parse_spec({"data": IRIS, "model": {"type": "oct-local-search", "max_depth": 2, "n_restarts": 3}})
    assert spec.build_estimator().random_state == DEFAULT_RANDOM_STATE == 0
    first = run_spec(spec, write=False)
    again = run_spec(parse_spec(spec.raw), write=False)
    assert first["random_state"] == 0 and first["_tree_text"] == again["_tree_text"]
    own = parse_spec({"data": IRIS, "model": {"type": "ort", "random_state": 7}})
    assert own.build_estimator().random_state == 7
    fresh = parse_spec({"data": IRIS, "model": {"type": "oct-local-search", "random_state": None}})
    assert fresh.build_estimator().random_state is None   # asked for: a new seed each run


@pytest.mark.parametrize("model_type", sorted(models()))
def test_every_model_with_randomness_takes_its_seed_in_the_model_section(model_type):
    entry = models()[model_type]
    if "random_state" not in entry.defaults():
        pytest.skip("no randomness")
    extra = {"decision_problem": {"type": "shortest_path", "rows": 4, "cols": 4}} if "decision_problem" in \
        entry.defaults() else {}
    extra.update(REQUIRED.get(model_type, {}))
    spec = parse_spec({"data": IRIS, "model": {"type": model_type, "random_state": 3, **extra}})
    assert spec.build_estimator().get_params()["random_state"] == 3
    with pytest.raises(SpecError, match=r"solver.random_state: the seed is a model setting: write it as "
                                        r"model.random_state"):
        parse_spec({"data": IRIS, "model": {"type": model_type, **extra}, "solver": {"random_state": 3}})


def test_estimators_are_seeded_with_0_by_default():
    """The Python API is reproducible by default too: every estimator's ``random_state`` defaults to 0."""
    unseeded = set()
    for entry in models().values():
        params = inspect.signature(entry.estimator.__init__).parameters
        if "random_state" in params and params["random_state"].default != DEFAULT_RANDOM_STATE:
            unseeded.add(entry.estimator.__name__)
    assert not unseeded, sorted(unseeded)


# ------------------------------------------------------------------------------------- one meaning per word
@pytest.mark.parametrize("model_type", sorted(models()))
def test_one_warm_start_vocabulary(model_type):
    """A heuristic's name or None/False for every model with a warm start; never a bare True."""
    if "warm_start" not in models()[model_type].defaults():
        pytest.skip("no warm start")
    from opttrees.spec import applies
    if not applies(models()[model_type], "warm_start"):   # e.g. cart: a field that does not apply (issue 27)
        with pytest.raises(SpecError, match=f"model.warm_start: does not apply to model type '{model_type}'"):
            parse_spec({"data": IRIS, "model": {"type": model_type, "warm_start": "greedy"}})
        return
    # a type whose method is a setting (ort): warm_start applies with method: mio
    mio = {"method": "mio"} if "method" in models()[model_type].defaults() else {}
    mio.update(REQUIRED.get(model_type, {}))
    for value in ("greedy", None, False):
        parse_spec({"data": IRIS, "model": {"type": model_type, "warm_start": value, **mio}})
    with pytest.raises(SpecError, match=r"model.warm_start: expected (one of )?.*'greedy'.*; got bool True"):
        parse_spec({"data": IRIS, "model": {"type": model_type, "warm_start": True, **mio}})


@pytest.mark.parametrize("model_type", sorted(models()))
def test_solver_fields_only_on_models_with_a_solver(model_type):
    entry = models()[model_type]
    extra = {"decision_problem": {"type": "shortest_path", "rows": 4, "cols": 4}} if "decision_problem" in \
        entry.defaults() else {}
    extra.update(REQUIRED.get(model_type, {}))
    # models that solve a MIO, or may (ort, ort-linear: method: mio)
    mio = model_type in ("oct", "flow-oct", "benders-oct", "robust-oct", "spot-mio", "ort-mio", "opt-mio", "ort",
                         "ort-linear")
    assert uses_solver(entry) == mio
    for key, value in (("name", "scip"), ("mip_gap", 0.01), ("threads", 2)):
        raw = {"data": IRIS, "model": {"type": model_type, **extra}, "solver": {key: value}}
        if mio and key in solver_keys(entry):
            parse_spec(raw)
        elif not mio:
            with pytest.raises(SpecError, match=rf"solver.{key}: model '{model_type}' has no (solver|such setting)"):
                parse_spec(raw)


def test_output_is_relative_to_the_spec_file(tmp_path, monkeypatch):
    folder = tmp_path / "specs"
    folder.mkdir()
    path = folder / "run.yaml"
    path.write_text(yaml.safe_dump({"data": IRIS, "model": {"type": "cart", "max_depth": 1}, "output": "res"}))
    from opttrees.spec import load_spec
    assert load_spec(path).output == folder / "res"
    monkeypatch.chdir(tmp_path)
    from opttrees.cli import main
    r = CliRunner().invoke(main, ["solve", str(path), "-q"])
    assert r.exit_code == 0, r.output
    assert (folder / "res" / "report.json").exists() and not (tmp_path / "res").exists()
    r = CliRunner().invoke(main, ["solve", str(path), "-q", "-o", "here"])   # -o: the working directory
    assert r.exit_code == 0 and (tmp_path / "here" / "report.json").exists()
    absolute = parse_spec({"data": IRIS, "model": {"type": "cart"}, "output": str(tmp_path / "abs")}, path)
    assert absolute.output == tmp_path / "abs"
    assert parse_spec({"data": IRIS, "model": {"type": "cart"}}, path).output == Path("results/run")


def test_reports_give_the_same_training_loss_for_every_model():
    """OCT and FlowOCT find the same depth-1 iris tree (setosa apart): their own objectives differ (errors / L̂
    minimised, correct points maximised), the shared figures agree."""
    reports = {}
    for mtype in ("oct", "flow-oct", "cart"):
        spec = parse_spec({"data": IRIS, "model": {"type": mtype, "max_depth": 1}, "solver": {"time_limit": 60}})
        reports[mtype] = run_spec(spec, write=False)
    for mtype, rep in reports.items():
        assert rep["normalised_loss"]["train"] == pytest.approx(0.5), mtype          # 50 errors / 100 root-only errors
        assert rep["train_accuracy"] == pytest.approx(2 / 3), mtype
        assert rep["objective"] is not None, mtype
    assert reports["oct"]["objective"] == pytest.approx(0.5) and reports["oct"]["objective_sense"] == "minimise"
    assert reports["flow-oct"]["objective"] == pytest.approx(100) and reports["flow-oct"]["objective_sense"] == "maximise"


def test_regression_and_spo_reports_have_the_shared_loss():
    rep = run_spec(parse_spec({"data": {"dataset": "diabetes"}, "model": {"type": "ort", "method": "greedy",
                                                                          "max_depth": 2}}), write=False)
    assert rep["normalised_loss"]["train"] == pytest.approx(1 - rep["train_r2"])   # squared loss / squared loss of the mean
    rep = run_spec(parse_spec({"data": {"dataset": "shortest_path", "params": {"n": 80}},
                               "model": {"type": "spot", "decision_problem": {"type": "shortest_path"},
                                         "max_depth": 1}}), write=False)
    assert rep["normalised_loss"]["train"] == pytest.approx(rep["train_normalised_spo_loss"])


def test_tuned_models_record_what_they_chose(tmp_path):
    spec = {"data": IRIS, "model": {"type": "oct-cv", "max_depth": 2, "n_restarts": 4}, "output": "cv"}
    path = tmp_path / "cv.yaml"
    path.write_text(yaml.safe_dump(spec))
    from opttrees.cli import main
    r = CliRunner().invoke(main, ["solve", str(path), "-q"])
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "cv" / "report.json").read_text())
    chosen = report["chosen"]
    assert chosen["max_depth"] in (1, 2) and chosen["alpha"] >= 0 and np.isfinite(chosen["validation_error"])
    assert report["tree"]["depth"] <= chosen["max_depth"] and "chosen: max_depth=" in r.output
