"""The comparison harness: grid expansion, the results store, the runner's limits and resuming, reports."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from opttrees.errors import InputError
from opttrees.experiments.grid import GridError, cell_key, expand, load_grid
from opttrees.experiments.report import (
    gap_over_time,
    performance_profile,
    results_frame,
    solved_over_time,
    summary_table,
    write_report,
)
from opttrees.experiments.runner import execute_cell, pending, run_grid
from opttrees.experiments.store import ResultStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tiny_csv(tmp_path):
    """24 rows, 2 features, a label that one split gets mostly right: depth-1 solves in well under a second."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(24, 2)).round(2)
    y = np.where(X[:, 0] + 0.2 * X[:, 1] > 0.6, "a", "b")
    y[:3] = np.where(y[:3] == "a", "b", "a")   # a little noise so trees differ from the root
    df = pd.DataFrame(X, columns=["f0", "f1"]).assign(label=y)
    path = tmp_path / "tiny.csv"
    df.to_csv(path, index=False)
    return path


def tiny_grid(tiny_csv, **over):
    raw = {"name": "tiny",
           "datasets": [{"csv": str(tiny_csv), "target": "label", "test_size": 0.25}],
           "models": [{"type": "oct"}, {"type": "cart", "uses_solver": False}], "assist": ["none"],
           "solvers": [{"name": "highs", "time_limit": 20}, {"name": "scip", "time_limit": 20}],
           "depths": [1], "seeds": [0], "limits": {"wall_time": 120}}
    raw.update(over)
    return raw


# ------------------------------------------------------------------------------------------------ grid
def test_grid_crosses_axes_and_drops_what_a_model_ignores(tiny_csv):
    g = expand(tiny_grid(tiny_csv, depths=[1, 2], seeds=[0, 1]))
    oct_cells = [c for c in g.cells if c.meta["model"] == "oct"]
    cart_cells = [c for c in g.cells if c.meta["model"] == "cart"]
    assert len(oct_cells) == 2 * 2 * 2           # solvers x depths x seeds
    assert len(cart_cells) == 2 * 2              # the solver axis is dropped for cart
    assert len({c.key for c in g.cells}) == len(g.cells)
    for c in g.cells:
        assert c.spec["model"]["max_depth"] == c.meta["depth"]
        assert c.spec["data"]["split_seed"] == c.meta["seed"]
        assert "name" not in c.spec.get("solver", {}) or c.meta["model"] == "oct"
    # every cell is an ordinary spec: parse_spec accepts it as it stands
    from opttrees.spec import parse_spec
    for c in g.cells:
        parse_spec(c.spec)


def test_grid_parameter_grid_and_relative_csv(tmp_path, tiny_csv):
    raw = tiny_grid(tiny_csv.name, models=[{"type": "cart", "grid": {"alpha": [0.0, 0.05]}}], solvers=None)
    p = tmp_path / "g.yaml"
    p.write_text(yaml.safe_dump(raw))
    g = load_grid(p)
    assert sorted(c.meta["method"] for c in g.cells) == ["cart[alpha=0.05]", "cart[alpha=0]"]
    assert all(Path(c.spec["data"]["csv"]).is_absolute() for c in g.cells)


@pytest.mark.parametrize("path", sorted((ROOT / "examples" / "grids").glob("*.yaml")), ids=lambda p: p.stem)
def test_shipped_grids_load(path):
    g = load_grid(path)
    assert len(g) > 0 and g.limits.get("wall_time")


def test_cell_key_depends_on_spec_and_version_not_output():
    spec = {"data": {"dataset": "iris"}, "model": {"type": "cart", "max_depth": 1}}
    assert cell_key(spec, "1") == cell_key({**spec, "output": "elsewhere"}, "1")
    assert cell_key(spec, "1") != cell_key(spec, "2")
    assert cell_key(spec, "1") != cell_key({**spec, "model": {"type": "cart", "max_depth": 2}}, "1")


@pytest.mark.parametrize("change, words", [
    ({"bogus": 1}, ["grid.bogus", "unknown"]),
    ({"models": []}, ["grid.models"]),
    ({"depths": ["two"]}, ["depths[0]"]),
    ({"limits": {"wall_time": -1}}, ["limits.wall_time"]),
    ({"models": [{"type": "oct", "alhpa": 0.1}]}, ["models[0]", "alhpa"]),
    ({"models": [{"type": "cart", "grid": {"alpha": []}}]}, ["models[0].grid.alpha"]),
])
def test_bad_grids_raise_input_errors_naming_the_key(tiny_csv, change, words):
    with pytest.raises(InputError) as exc:
        expand(tiny_grid(tiny_csv, **change))
    assert isinstance(exc.value, GridError)
    for w in words:
        assert w in str(exc.value)


# ------------------------------------------------------------------------------------------------ store
# store.py imports only the standard library: load it alone so the writers start in milliseconds, not seconds
WRITER = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("store", sys.argv[4])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
ResultStore = mod.ResultStore
store = ResultStore(sys.argv[1], timeout=60)
for i in range(int(sys.argv[3])):
    key = f"{sys.argv[2]}-{i}"
    store.mark_running(key, {"i": i}, {"writer": sys.argv[2]})
    store.record(key, "done", {"i": i}, {"writer": sys.argv[2]}, row={"objective": i, "trace": list(range(50))})
"""


def test_two_processes_writing_one_store_do_not_corrupt_it(tmp_path):
    path = tmp_path / "shared.sqlite"
    ResultStore(path)
    n = 300
    module = ROOT / "opttrees" / "experiments" / "store.py"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), name, str(n), str(module)], cwd=ROOT,
                              stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    store = ResultStore(path)
    assert store.integrity_ok()
    rows = store.rows()
    assert len(rows) == 2 * n
    assert {r["key"] for r in rows} == {f"{w}-{i}" for w in "ab" for i in range(n)}
    assert all(r["outcome"] == "done" and r["objective"] == int(r["key"].split("-")[1]) for r in rows)
    assert all(r["attempts"] == 1 for r in rows)


# ------------------------------------------------------------------------------------------------ runner
def test_tiny_grid_end_to_end_on_processes_then_resumes_and_reports(tmp_path, tiny_csv):
    g = expand(tiny_grid(tiny_csv, depths=[1, 2]))
    store = ResultStore(tmp_path / "r.sqlite")
    summary = run_grid(g, store, jobs=2, progress=False)
    assert summary.ran == len(g) == 6 and summary.outcomes == {"done": 6}, summary
    df = results_frame(store)
    assert len(df) == 6 and (df["outcome"] == "done").all()
    mio = df[df["model"] == "oct"]
    assert mio["proven_optimal"].all() and mio["solver_version"].notna().all()
    assert all(len(t) > 0 for t in mio["trace"])
    assert (df["peak_memory_mb"] > 10).all() and df["n_train"].eq(18).all() and df["test_score"].notna().all()
    # the two solvers prove the same optimum; the MIO is never worse than CART on its own objective
    for depth, d in mio.groupby("depth"):
        assert d["objective"].nunique() == 1 or np.ptp(d["objective"]) < 1e-6
        cart = df[(df["model"] == "cart") & (df["depth"] == depth)]
        assert d["train_score"].min() >= cart["train_score"].max() - 1e-9
    # the same cell run alone (as `opttrees solve` would) gives the same objective
    from opttrees.spec import parse_spec, run_spec
    cell = next(c for c in g.cells if c.meta["model"] == "oct" and c.meta["solver"] == "highs" and c.meta["depth"] == 2)
    alone = run_spec(parse_spec(cell.spec), write=False)
    assert df.set_index("key").loc[cell.key, "objective"] == pytest.approx(alone["solve"]["objective"], abs=1e-9)
    # a rerun finds everything stored
    again = run_grid(g, store, jobs=2, progress=False)
    assert again.ran == 0 and again.skipped == 6
    # report: tables always, figures with matplotlib
    written = write_report(store, tmp_path / "report", title="tiny")
    md = (tmp_path / "report" / "summary.md").read_text()
    assert "| dataset | method | depth |" in md and "oct/highs" in md and "cart" in md
    # every row says what ran: the MIO rows their solver (route solver), CART no solver (route heuristic)
    assert set(mio["solver_ran"]) == {"highs", "scip"} and (mio["solver_ran"] == mio["solver"]).all()
    assert (mio["route"] == "solver").all() and (mio["proof"] == "solver").all()
    assert mio["time_to_first_incumbent"].notna().all() and mio["time_to_proof"].notna().all()
    carts = df[df["model"] == "cart"]
    assert (carts["route"] == "heuristic").all() and (carts["solver_ran"] == "none").all()
    # each cell wrote its tree files into its own folder beside the store
    for key in df["key"]:
        folder = tmp_path / "cells" / key
        assert (folder / "tree.json").exists() and (folder / "report.json").exists()
    assert "<table>" in (tmp_path / "report" / "summary.html").read_text()
    assert len(pd.read_csv(written["results.csv"])) == 6
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    for name in ("solved_over_time", "performance_profile", "gap_over_time", "accuracy_vs_depth", "runtime_vs_rows"):
        assert (tmp_path / "report" / f"{name}.png").stat().st_size > 1000


def test_tiny_grid_on_a_two_worker_local_dask_cluster(tmp_path, tiny_csv):
    pytest.importorskip("distributed")
    g = expand(tiny_grid(tiny_csv, models=[{"type": "oct"}, {"type": "cart", "uses_solver": False}],
                         solvers=[{"name": "highs", "time_limit": 20}], seeds=[0]))
    store = ResultStore(tmp_path / "d.sqlite")
    summary = run_grid(g, store, jobs=2, backend="dask", progress=False)
    assert summary.outcomes == {"done": len(g)} and len(g) == 2, summary
    df = results_frame(store)
    assert (df["outcome"] == "done").all() and df[df["model"] == "oct"]["proven_optimal"].all()


def test_a_cell_past_its_wall_limit_is_killed_and_recorded(tmp_path):
    slow = {"data": {"dataset": "breast_cancer"}, "model": {"type": "oct", "max_depth": 3},
            "solver": {"name": "highs", "time_limit": 600}}
    store = ResultStore(tmp_path / "t.sqlite")
    t0 = time.perf_counter()
    summary = run_grid([slow], store, wall_time=2.0, grace=1.0, progress=False)
    took = time.perf_counter() - t0
    assert summary.outcomes == {"timeout": 1}
    row = store.rows()[0]
    assert row["outcome"] == "timeout" and "wall limit" in row["error"]
    assert 2.0 <= row["wall_time"] < 2.0 + 1.0 + 5.0 and took < 60
    # failed cells are skipped by a rerun unless retry_failed
    assert pending([slow], store) == [] and len(pending([slow], store, retry_failed=True)) == 1


def test_memory_limit_and_clean_errors_are_recorded(tmp_path, tiny_csv):
    # a cell that runs for minutes (a tiny one can finish between two memory polls on a fast machine)
    slow = {"data": {"dataset": "breast_cancer"}, "model": {"type": "oct", "max_depth": 3},
            "solver": {"name": "highs", "time_limit": 600}}
    r = execute_cell(slow, memory_mb=5.0, launcher="forkserver")   # any Python process is above 5 MB
    assert r["outcome"] == "oom" and "memory limit" in r["error"]
    broken = {"data": {"csv": str(tiny_csv), "target": "no_such_column"}, "model": {"type": "cart"}}
    r = execute_cell(broken, launcher="forkserver")
    assert r["outcome"] == "error" and "no_such_column" in r["error"]


@pytest.mark.parametrize("sig, outcome", [(signal.SIGKILL, "killed"), (signal.SIGSEGV, "crashed")])
def test_a_worker_killed_or_crashing_from_outside_is_recorded(sig, outcome):
    psutil = pytest.importorskip("psutil")
    import threading
    slow = {"data": {"dataset": "breast_cancer"}, "model": {"type": "oct", "max_depth": 3},
            "solver": {"name": "highs", "time_limit": 600}}
    box = {}
    t = threading.Thread(target=lambda: box.update(execute_cell(slow, wall_time=120, launcher="subprocess")))
    t.start()
    me = psutil.Process()
    deadline = time.time() + 30
    while not me.children() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    for child in me.children():
        if "opttrees.experiments.runner" in " ".join(child.cmdline()):
            os.kill(child.pid, sig)
    t.join(timeout=60)
    assert box["outcome"] == outcome and signal.Signals(sig).name in box["error"]


@pytest.mark.parametrize("sig", [signal.SIGKILL, pytest.param(signal.SIGTERM, marks=pytest.mark.slow)])
def test_killing_the_runner_mid_grid_then_rerunning_runs_only_the_missing_cells(tmp_path, tiny_csv, sig):
    raw = tiny_grid(tiny_csv, models=[{"type": "oct"}], solvers=[{"name": "highs", "time_limit": 20}],
                    depths=[1, 2], seeds=list(range(4)))
    grid_path = tmp_path / "g.yaml"
    grid_path.write_text(yaml.safe_dump(raw))
    store_path = tmp_path / "k.sqlite"
    runner = subprocess.Popen([sys.executable, "-m", "opttrees.experiments.compare_cli", str(grid_path), "--store",
                               str(store_path), "--jobs", "1", "--quiet"], cwd=ROOT, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    store = None
    deadline = time.time() + 120
    while time.time() < deadline:
        if store is None and store_path.exists():
            store = ResultStore(store_path)
        if store is not None and list(store.outcomes().values()).count("done") >= 2:
            break
        time.sleep(0.1)
    runner.send_signal(sig)
    runner.wait(timeout=60)
    outcomes = store.outcomes()
    finished = {k for k, v in outcomes.items() if v == "done"}
    assert 2 <= len(finished) < 8, outcomes
    assert store.integrity_ok()
    g = load_grid(grid_path)
    todo = pending(g, store)
    assert {c.key for c in todo} == {c.key for c in g.cells} - finished
    summary = run_grid(g, store, jobs=2, progress=False)
    assert summary.skipped == len(finished) and summary.ran == 8 - len(finished)
    assert summary.outcomes == {"done": 8 - len(finished)}, [r.get("error") for r in store.rows()]
    assert all(v == "done" for v in store.outcomes().values()) and len(store) == 8


# ------------------------------------------------------------------------------------------------ report maths
def test_performance_profile_and_gap_curves_from_hand_made_rows():
    rows = [
        {"method_solver": "a", "proven_optimal": True, "fit_time": 1.0, "bound": 1.0, "runtime": 1.0, "gap": 0.0,
         "outcome": "done", "trace": [{"time": 0.1, "primal": 2.0, "dual": 1.0}, {"time": 0.5, "primal": 1.0}]},
        {"method_solver": "a", "proven_optimal": False, "fit_time": 5.0, "bound": 0.5, "runtime": 5.0, "gap": 0.5,
         "outcome": "done", "trace": [{"time": 0.2, "primal": 1.0, "dual": 0.5}]},
        {"method_solver": "heuristic", "proven_optimal": False, "fit_time": 0.1, "outcome": "done", "trace": []},
    ]
    df = results_frame(rows)
    prof = solved_over_time(df, times=[0.5, 1.0, 10.0])
    assert list(prof.columns) == ["a"]                   # a method with no bound proves nothing: left out
    assert prof["a"].tolist() == [0.0, 0.5, 0.5]
    gaps = gap_over_time(df, times=[0.05, 0.15, 0.3, 0.6, 2.0])
    # run 1: no point yet (1), gap |2-1|/2, same, incumbent 1 meets bound 1 (0), done (0)
    # run 2: none (1), none (1), |1-0.5|/1, same, same
    assert gaps["a"].tolist() == pytest.approx([1.0, 0.75, 0.5, 0.25, 0.25])
    s = summary_table(df)
    assert set(s["method"]) == {"a", "heuristic"} and s.set_index("method").loc["a", "proven_solver"] == 1


def test_dolan_more_profile_is_the_ratio_to_the_fastest_method_per_instance():
    def run(m, seed, t, proven, proof="solver"):
        return {"dataset": "d", "depth": 2, "seed": seed, "method_solver": m, "solver": "highs", "outcome": "done",
                "proven_optimal": proven, "proof": proof if proven else "none", "fit_time": t, "trace": []}
    rows = [run("a", 0, 1.0, True), run("b", 0, 4.0, True),     # instance 0: a fastest, b at ratio 4
            run("a", 1, 10.0, False), run("b", 1, 2.0, True),   # instance 1: only b proves
            run("a", 2, 3.0, True), run("b", 2, 1.0, True, "dp-bound")]   # instance 2: b's proof is the DP bound's
    df = results_frame(rows)
    own = performance_profile(df, taus=[1.0, 3.0, 4.0, 100.0])
    assert own["a"].tolist() == pytest.approx([2 / 3, 2 / 3, 2 / 3, 2 / 3])   # best on 0 and 2 (b's proof left out)
    assert own["b"].tolist() == pytest.approx([1 / 3, 1 / 3, 2 / 3, 2 / 3])
    every = performance_profile(df, taus=[1.0, 3.0, 4.0], proofs="all")
    assert every["a"].tolist() == pytest.approx([1 / 3, 2 / 3, 2 / 3])       # ratio 3 on instance 2 now
    assert every["b"].tolist() == pytest.approx([2 / 3, 2 / 3, 1.0])


def test_cli_compare_lists_cells_and_rejects_bad_backends(tmp_path, tiny_csv):
    from click.testing import CliRunner

    from opttrees.experiments.compare_cli import compare
    p = tmp_path / "g.yaml"
    p.write_text(yaml.safe_dump(tiny_grid(tiny_csv)))
    r = CliRunner().invoke(compare, [str(p), "--list", "--store", str(tmp_path / "s.sqlite")])
    assert r.exit_code == 0, r.output
    assert r.output.count("oct/") == 2 and "opttrees solve" in r.output
    r = CliRunner().invoke(compare, [str(p), "--backend", "spark"])
    assert r.exit_code != 0 and "spark" in r.output
    with pytest.raises(InputError, match="jobs"):
        run_grid(expand(tiny_grid(tiny_csv)), tmp_path / "s.sqlite", jobs=0)
    assert json.loads(json.dumps(load_grid(p).cells[0].spec))  # cells are plain JSON-able specs
    assert not os.path.exists(tmp_path / "s.sqlite")   # --list and a refused run write nothing
