"""The "auto" engine chooser (opttrees.dp.chooser): fitted on benchmarks/engine_calibration.csv, it picks the faster
engine on that grid (measured times, not timings taken here), sends wide binary tables to the binary engine and
continuous ones to the continuous search, and records its prediction and choice in the result's plan."""
import csv
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

from opttrees.dp import chooser, solve_dp

CSV = Path(__file__).resolve().parents[2] / "benchmarks" / "engine_calibration.csv"


def _grid():
    with open(CSV) as fh:
        return [{k: (v if k.startswith("status") else float(v)) for k, v in r.items()} for r in csv.DictReader(fh)]


def test_on_the_calibration_grid_the_choice_costs_little_more_than_the_best():
    rows = _grid()
    assert len(rows) >= 100
    picked, best, slow = 0.0, 0.0, 0
    for r in rows:
        c = chooser.choose(int(r["n"]), int(r["p"]), int(r["midpoints"]), int(r["classes"]), int(r["depth"]),
                           int(r["min_leaf"]))["engine"]
        other = "continuous" if c == "binary" else "binary"
        picked += r[f"t_{c}"]
        best += min(r["t_binary"], r["t_continuous"])
        slow += r[f"t_{c}"] > 1.5 * r[f"t_{other}"]
    old_rule = sum(r["t_binary"] if r["midpoints"] <= 100 else r["t_continuous"] for r in rows)
    assert picked <= 1.15 * best            # 298.8 s against the best 279.4 s (benchmarks/README.md)
    assert picked < 0.8 * old_rule          # the rule it replaced (at most 100 midpoints: binary): 393.3 s
    assert slow <= 0.05 * len(rows)         # 5 of 180 cells more than 1.5x slower than the other engine


def test_a_wide_binary_table_goes_to_the_binary_engine():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (653, 125)).astype(float)
    y = (X[:, 0].astype(int) ^ X[:, 1].astype(int)) | (rng.random(653) < 0.1)
    tree, res = solve_dp(X, y, max_depth=2)
    assert res.plan["engine"] == "binary" and res.timings["engine"] == "binary"
    assert set(res.plan["predicted_seconds"]) == {"binary", "continuous"} and res.plan["actual_seconds"] >= 0
    _, exact = solve_dp(X, y, max_depth=2, binarization="exact")
    assert res.objective == pytest.approx(exact.objective, rel=1e-12)


def test_continuous_columns_go_to_the_continuous_search():
    X, y = load_breast_cancer(return_X_y=True)
    _, res = solve_dp(X, y, max_depth=2)
    assert res.plan["engine"] == "continuous" and res.status == "optimal"
    assert "memory" in res.plan["engine_why"]          # 15,310 midpoints: 11 GB of depth-two counts
    X = np.random.default_rng(0).normal(size=(2000, 8)).round(1)        # about 50 values per feature
    _, res = solve_dp(X, (X[:, 0] > 0).astype(int), max_depth=2)
    assert res.plan["engine"] == "continuous" and "predicted" in res.plan["engine_why"]


def test_a_binary_matrix_too_large_for_memory_is_never_chosen():
    c = chooser.choose(100_000, 50, 5_000_000, 2, 2, 1)
    assert c["engine"] == "continuous" and "memory" in c["why"]
