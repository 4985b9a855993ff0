"""The research harness tells the truth: what ran, where a proof came from, one configuration per row; and it
writes publication tables and figures that can be read back (issue 40)."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from opttrees.experiments.grid import GridError, expand, load_grid
from opttrees.experiments.records import route_of, solver_words
from opttrees.experiments.report import pivot, results_frame, summary_table, write_report

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------------------------ records
def test_route_of_tells_the_solver_that_ran_from_the_planned_one():
    by_bound = {"solver": "none", "proven_optimal": True, "proof": "dp-bound",
                "plan": {"solver": "scip", "start": "dp", "bound": "dp-bound"}}
    r = route_of(by_bound)
    assert (r["solver_ran"], r["planned_solver"], r["route"], r["proof"]) == ("none", "scip", "dp-bound", "dp-bound")
    assert solver_words(by_bound) == "solver=none (scip not called: proven optimal by the DP bound)"
    ran = {"solver": "highs", "proven_optimal": True, "proof": "dp-bound", "plan": {"solver": "highs", "bound": "dp-bound"}}
    assert route_of(ran)["route"] == "solver" and route_of(ran)["proof"] == "dp-bound"
    assert solver_words(ran) == "solver=highs (proven optimal by the DP bound)"
    limit = {"solver": "scip", "proven_optimal": False, "proof": None, "plan": {"solver": "scip", "start": "greedy"}}
    assert route_of(limit)["proof"] == "none" and route_of(limit)["start"] == "greedy"
    assert solver_words(limit) == "solver=scip"
    dp = {"solver": "dp", "proven_optimal": True, "proof": "solver", "plan": {"engine": "binary"}}
    assert route_of(dp)["route"] == "dp-only" and route_of(dp)["proof"] == "dp"
    big = {"solver": "none", "proven_optimal": False, "plan": {"route": "local-search", "solver": "highs"}}
    assert route_of(big)["route"] == "heuristic"
    assert route_of(None) == {"solver_ran": "none", "planned_solver": None, "route": "heuristic", "proof": "none",
                              "start": "none", "bound_source": "none"}


# ------------------------------------------------------------------------------------------------ identity
def test_every_model_entry_is_its_own_row_and_a_shared_label_is_an_error():
    data = [{"dataset": "iris"}]
    g = expand({"datasets": data, "models": [{"type": "oct"}, {"type": "oct", "dp_bound": False, "warm_start": "greedy"}],
                "solvers": [{"name": "highs"}], "depths": [2]})
    assert [c.meta["method_solver"] for c in g.cells] == ["oct/highs", "oct[dp_bound=false,warm_start=greedy]/highs"]
    with pytest.raises(GridError, match=r"models\[0\] and models\[1\].*'oct'"):
        expand({"datasets": data, "models": [{"type": "oct"}, {"type": "oct", "alpha": 0.0}]})   # alpha 0 is the default
    with pytest.raises(GridError, match=r"models\[0\] and models\[2\].*'mine'"):
        expand({"datasets": data, "models": [{"type": "oct", "label": "mine"}, {"type": "cart"},
                                             {"type": "flow-oct", "label": "mine"}]})
    # the assist axis: one column per value, mapped onto warm_start / dp_bound; models without them keep one cell
    g = expand({"datasets": data, "assist": ["none", "dp"], "solvers": [{"name": "scip"}], "depths": [2],
                "models": [{"type": "flow-oct"}, {"type": "oct-dp", "uses_solver": False}]})
    cells = {c.meta["method_solver"]: c for c in g.cells}
    assert set(cells) == {"flow-oct/scip", "flow-oct/scip +dp", "oct-dp"}
    assert cells["flow-oct/scip"].spec["model"]["warm_start"] is None
    assert cells["flow-oct/scip"].spec["model"]["dp_bound"] is False
    assert cells["flow-oct/scip +dp"].spec["model"]["dp_bound"] is True
    assert cells["oct-dp"].meta["assist"] is None
    with pytest.raises(GridError, match="unknown assist 'always'"):
        expand({"datasets": data, "assist": ["always"], "models": [{"type": "oct"}]})
    with pytest.raises(GridError, match=r"models\[0\].assist: model type 'cart'"):
        expand({"datasets": data, "models": [{"type": "cart", "uses_solver": False, "assist": ["dp"]}]})


def _reduced_exact_binarised(tmp_path: Path) -> Path:
    """examples/grids/exact_binarised.yaml as shipped (models, solvers, assist), on one small split at depth 1."""
    raw = yaml.safe_load((ROOT / "examples" / "grids" / "exact_binarised.yaml").read_text())
    raw.update(name="exact_small", datasets=[{"dataset": "monk1", "test_size": 0.95}], depths=[1],
               limits={"wall_time": 120})
    raw["solvers"] = [{**s, "time_limit": 30} for s in raw["solvers"]]
    path = tmp_path / "exact_small.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_exact_binarised_table_shows_the_route_and_the_solver_that_ran(tmp_path):
    from click.testing import CliRunner

    from opttrees.experiments.compare_cli import compare
    grid = _reduced_exact_binarised(tmp_path)
    shipped = load_grid(ROOT / "examples" / "grids" / "exact_binarised.yaml")
    assert {c.meta["assist"] for c in shipped.cells} == {"none", "dp", None}   # the formulations alone, and +dp
    store, report = tmp_path / "s.sqlite", tmp_path / "report"
    r = CliRunner().invoke(compare, [str(grid), "--store", str(store), "--report", str(report), "--jobs", "2", "-q",
                                     "--metric", "train_score", "--metric", "solved"])
    assert r.exit_code == 0, r.output
    df = results_frame(store)
    assert (df["outcome"] == "done").all(), df[["method_solver", "error"]]
    # no row averages two configurations: one configuration per (dataset, method, depth)
    assert (df.groupby(["dataset", "method_solver", "depth"])["config"].nunique() == 1).all()
    s = summary_table(df).set_index("method")
    assert len(s) == df["config"].nunique() == 13   # 3 MIO x 2 solvers x 2 assists + the DP
    for method, row in s.iterrows():
        if method == "oct-dp":
            assert (row["solver_ran"], row["route"]) == ("dp", "dp-only")
            continue
        solver = method.split("/")[1].split()[0]
        if method.endswith("+dp"):   # the DP bound may prove it before the solver is called: then it says so
            assert row["solver_ran"] in (solver, "none")
            assert row["route"] == ("dp-bound" if row["solver_ran"] == "none" else "solver")
            assert row["proven_solver"] + row["proven_dp_bound"] == 1
        else:                        # assist none: the solver ran, and any proof is its own
            assert (row["solver_ran"], row["route"], row["proven_dp_bound"]) == (solver, "solver", 0)
    # the same in the CSV a paper's table is made from
    csv = pd.read_csv(report / "results.csv")
    assert {"solver_ran", "route", "proof", "time_to_first_incumbent", "time_to_proof", "node_count"} <= set(csv)
    # objectives keep their own units (FlowOCT counts hits); the normalised losses share one scale
    done = csv[csv["assist"] == "dp"].set_index("method_solver")
    flow, oct_ = done.loc["flow-oct/highs +dp"], done.loc["oct/highs +dp"]
    assert flow["objective"] > 1 >= oct_["objective"]
    assert flow["train_loss"] == pytest.approx(oct_["train_loss"]) and 0 <= oct_["train_loss"] <= 1
    none = csv[csv["assist"] == "none"]
    assert (none["solver_ran"] == none["solver"]).all() and set(none["route"]) == {"solver"}
    assert set(none["proof"]) <= {"solver", "none"}
    # --metric picked the pivot tables; each cell wrote its tree
    assert sorted(p.name for p in report.glob("pivot_*")) == [
        "pivot_solved.csv", "pivot_solved.md", "pivot_solved.tex",
        "pivot_train_score.csv", "pivot_train_score.md", "pivot_train_score.tex"]
    for key in df["key"]:
        assert (tmp_path / "cells" / key / "tree.json").exists()


# ------------------------------------------------------------------------------------------------ publication
def _rows():
    rows = []
    for seed, (a, b, ta, tb) in enumerate([(0.90, 0.80, 1.0, 3.0), (0.92, 0.84, 2.0, 30.0), (0.94, 0.82, 1.5, 9.0)]):
        for method, acc, t, proof in (("oct/highs", a, ta, "solver"), ("flow-oct/highs", b, tb, "dp-bound"),
                                      ("cart", 0.7, 0.01, None)):
            solver = None if method == "cart" else "highs"
            rows.append({"dataset": "monk1", "depth": 2, "seed": seed, "method_solver": method, "solver": solver,
                         "outcome": "done", "proven_optimal": proof is not None, "proof": proof or "none",
                         "route": "heuristic" if solver is None else "solver", "solver_ran": solver or "none",
                         "fit_time": t, "test_score": acc, "train_score": acc, "gap": 0.0 if proof else None,
                         "runtime": t, "trace": [{"time": 0.1, "primal": 1.0, "dual": 0.5}] if solver else []})
    rows.append({**rows[0], "seed": 3, "outcome": "timeout", "proven_optimal": False, "proof": "none",
                 "test_score": None, "fit_time": None, "wall_time": 60.0})
    return rows


def test_pivot_tables_and_figures_are_written_and_read_back(tmp_path):
    df = results_frame(_rows())
    written = write_report(df, tmp_path, title="t")
    # CSV: mean and sd over the seeds, best per row
    t = pd.read_csv(tmp_path / "pivot_test_score.csv").set_index("method")
    assert t.loc["oct/highs", "mean"] == pytest.approx(0.92) and t.loc["oct/highs", "sd"] == pytest.approx(0.02)
    assert t.loc["oct/highs", "n"] == 3 and bool(t.loc["oct/highs", "best"]) and not t.loc["cart", "best"]
    solved = pd.read_csv(tmp_path / "pivot_solved.csv").set_index("method")
    assert (solved.loc["oct/highs", "mean"], solved.loc["oct/highs", "n"]) == (3, 4)   # the timeout counts as unsolved
    assert (solved.loc["flow-oct/highs", "mean"], solved.loc["flow-oct/highs", "dp_bound"]) == (0, 3)
    md = (tmp_path / "pivot_test_score.md").read_text()
    assert "| dataset | depth | cart | flow-oct/highs | oct/highs |" in md and "**0.920 ± 0.020**" in md
    assert "0/4" not in md and "0/3 (+3)" in (tmp_path / "pivot_solved.md").read_text()
    tex = (tmp_path / "pivot_test_score.tex").read_text()
    assert r"\toprule" in tex and r"\bottomrule" in tex and r"\textbf{0.920 $\pm$ 0.020}" in tex
    assert r"flow-oct/highs" in tex and "monk1" in tex
    tex_time = (tmp_path / "pivot_fit_time.tex").read_text()
    assert r"\textbf{0.01 $\pm$ 0.00}" in tex_time and r"\textbf{1.50" not in tex_time   # the fastest is best
    assert r"(mean $\pm$ sd over seeds)" in tex_time
    # the two figures: solved over time and the Dolan-Moré profile, as real images
    mpl = pytest.importorskip("matplotlib.image")
    for name in ("solved_over_time", "performance_profile"):
        assert f"{name}.png" in written
        img = mpl.imread(tmp_path / f"{name}.png")
        assert img.ndim == 3 and img.shape[0] > 100 and np.ptp(img) > 0
    assert "oct/highs" in pivot(df, "solved")["method"].tolist()


def test_a_heuristic_only_report_has_no_empty_plots_and_no_warnings(tmp_path):
    rows = [r for r in _rows() if r["method_solver"] == "cart"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a legend with no artists warns: none may
        written = write_report(results_frame(rows), tmp_path, title="h")
    assert "solved_over_time.png" not in written and "performance_profile.png" not in written
    assert "gap_over_time.png" not in written and "accuracy_vs_depth.png" in written
    md = (tmp_path / "summary.md").read_text()
    assert "## Figures not drawn" in md and "no method that can prove optimality" in md
    assert "pivot_solved.md" not in written and "pivot_test_score.md" in written
    empty = write_report(results_frame([]), tmp_path / "empty", title="e")
    assert "No runs in the store yet" in (tmp_path / "empty" / "summary.md").read_text()
    assert set(empty) == {"results.csv", "traces.csv", "summary.md"}


def test_rows_of_two_configurations_under_one_label_are_kept_apart():
    base = {"dataset": "d", "depth": 2, "method_solver": "oct/highs", "outcome": "done", "proven_optimal": True,
            "fit_time": 1.0, "trace": []}
    rows = [{**base, "seed": 0, "key": "a", "spec": {"model": {"type": "oct", "alpha": 0.0}}},
            {**base, "seed": 0, "key": "b", "spec": {"model": {"type": "oct", "alpha": 0.1}}}]
    s = summary_table(results_frame(rows))
    assert len(s) == 2 and s["runs"].tolist() == [1, 1] and s["method"].str.startswith("oct/highs #").all()
