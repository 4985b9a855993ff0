"""Time to proof of the OCT-H and ORT MIOs on small real data, against the local search at the same time budget.

For each case the MIO estimator runs from the local-search warm start (the thesis's recipe) under one time
limit; then the local search alone gets the same wall time (the MIO fit's total, build and start included)
and as many restarts as fit in it. Reported: whether and when the MIO proved optimality, when it found its
best tree, its objective and bound, and the local search's objective at the same budget. Objectives are the
shared normalised ones (loss / L̂ + alpha * complexity).

    python benchmarks/bench_mio_family.py [--time-limit 120] [--quick] [--out benchmarks/mio_family]

Note: the OCT-H / ORT-H MIO searches only hyperplanes that keep every training point at least mu = 0.005
(scaled units) from the split, so its proven optimum can be worse than a local-search tree with a split
closer than mu; the estimator then returns the better start (column ``returned``).
"""
from __future__ import annotations

import argparse
import csv
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes, load_iris, load_wine

from opttrees import OptimalTreeClassifier, OptimalTreeRegressor


def iris():
    return load_iris(return_X_y=True)


def wine():
    return load_wine(return_X_y=True)


def diabetes(n=80, p=4):
    """A small regression set: the first ``n`` rows of sklearn's diabetes, BMI, BP, S5 and age."""
    X, y = load_diabetes(return_X_y=True)
    return X[:n][:, [2, 3, 8, 0][:p]], y[:n]


# (name, data, estimator class, MIO params); alpha 0.01 everywhere, as the thesis's smallest grid values
CASES = [
    ("iris", iris, OptimalTreeClassifier, dict(max_depth=1, split_type="hyperplane")),
    ("iris", iris, OptimalTreeClassifier, dict(max_depth=2, split_type="hyperplane")),
    ("wine", wine, OptimalTreeClassifier, dict(max_depth=1, split_type="hyperplane")),
    ("diabetes80", diabetes, OptimalTreeRegressor, dict(max_depth=1, loss="absolute", solver="highs")),
    ("diabetes80", diabetes, OptimalTreeRegressor, dict(max_depth=2, loss="absolute", solver="highs")),
    ("diabetes80", diabetes, OptimalTreeRegressor, dict(max_depth=1, loss="squared", solver="scip")),
    ("diabetes80", diabetes, OptimalTreeRegressor, dict(max_depth=1, loss="absolute", solver="highs",
                                                         split_type="hyperplane")),
]
QUICK = [0, 3, 5]


def model_name(cls, params) -> str:
    hyper = params.get("split_type") == "hyperplane"
    if cls is OptimalTreeClassifier:
        return "OCT-H" if hyper else "OCT"
    return ("ORT-H" if hyper else "ORT") + f" ({params['loss']})"


def time_to_best(res) -> float | None:
    """Seconds into the solve when the final incumbent was found (None without a trace)."""
    best = None
    for inc in res.trace:
        if inc.kind == "incumbent" and res.objective is not None and inc.primal <= res.objective + 1e-9:
            return inc.time
        best = inc.time
    return best


def run_case(name, load, cls, params, time_limit, restarts):
    X, y = load()
    common = dict(alpha=0.01, random_state=0, n_restarts=restarts, warm_start="local-search")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        mio = cls(method="mio", time_limit=time_limit, **common, **params).fit(X, y)
        wall = time.perf_counter() - t0
    res = mio.solve_result_
    ls_params = {k: v for k, v in params.items() if k not in ("solver",)}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ls = cls(method="local-search", time_limit=wall, alpha=0.01, random_state=1, n_restarts=10**6,
                 **ls_params).fit(X, y)
    ls_wall = time.perf_counter() - t0
    adjusted = any("warm start:" in str(w.message) for w in caught)
    kept_start = any("beats the MIO's tree" in str(w.message) for w in caught)
    return {
        "dataset": name, "model": model_name(cls, params), "depth": params["max_depth"], "n": len(y),
        "p": np.asarray(X).shape[1], "solver": params.get("solver", "highs"), "status": res.status,
        "proven": res.proven_optimal, "fit_wall_s": round(wall, 2), "solve_s": round(res.runtime, 2),
        "time_to_best_s": None if time_to_best(res) is None else round(time_to_best(res), 2),
        "start_objective": None if res.start_objective is None else round(float(res.start_objective), 6),
        "start_adjusted": adjusted, "mio_objective": None if res.objective is None else round(res.objective, 6),
        "bound": None if res.bound is None else round(res.bound, 6), "gap": round(res.gap, 4),
        "returned": "start" if kept_start else "mio", "fit_objective": round(mio.objective_, 6),
        "ls_budget_s": round(ls_wall, 2), "ls_objective": round(ls.objective_, 6),
    }


def markdown(rows) -> str:
    cols = ["dataset", "model", "depth", "solver", "status", "fit_wall_s", "time_to_best_s", "start_objective",
            "start_adjusted", "mio_objective", "bound", "returned", "ls_objective"]
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join("" if r[c] is None else str(r[c]) for c in cols) + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per MIO fit (whole fit)")
    ap.add_argument("--restarts", type=int, default=100, help="local-search restarts of the warm start")
    ap.add_argument("--quick", action="store_true", help="three cases only")
    ap.add_argument("--out", default=str(Path(__file__).with_name("mio_family")))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for k, (name, load, cls, params) in enumerate(CASES):
        if args.quick and k not in QUICK:
            continue
        row = run_case(name, load, cls, params, args.time_limit, args.restarts)
        rows.append(row)
        print(row, flush=True)
    with open(out / "results.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    table = markdown(rows)
    (out / "table.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
