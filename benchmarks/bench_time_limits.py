"""Does ``time_limit`` hold end to end? FlowOCT on breast cancer (569 x 30 continuous), as in issue 10.

Each configuration runs ``opttrees solve`` on a spec (data from a CSV, ``time_limit: 30``) in its own
process and reports the wall time of the whole command, the model size (binary columns, MIO rows, columns,
nonzeros), the fit status and the peak resident memory of that process.

    python benchmarks/bench_time_limits.py [--time-limit 30] [--solvers highs scip]
        [--binarizations default midpoints] [--code PATH]   # PATH: another checkout, e.g. the code before

``--code`` runs another copy of opttrees (e.g. ``git archive <commit> | tar -x -C /tmp/old``) for a before /
after comparison in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = r'''
import json, resource, sys, time
from pathlib import Path
t0 = time.perf_counter()
from opttrees.spec import load_spec, run_spec
spec = load_spec(sys.argv[1])
report = run_spec(spec)
sol = report.get("solve") or {}
tim = sol.get("timings", {})
print("RESULT " + json.dumps({
    "status": report.get("status", "-"), "solve_status": sol.get("status"), "fit_time": report["fit_time"],
    "wall_in_process": time.perf_counter() - t0, "n_rows": tim.get("n_rows"), "n_cols": tim.get("n_cols"),
    "n_nonzeros": tim.get("n_nonzeros"), "build": tim.get("build"), "compile": tim.get("compile"),
    "train_accuracy": report.get("train_accuracy"),
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
'''


def breast_cancer_csv(folder: Path) -> Path:
    from sklearn.datasets import load_breast_cancer
    d = load_breast_cancer(as_frame=True)
    df = d.frame.copy()
    df.columns = [c.replace(" ", "_") for c in df.columns]
    p = folder / "breast_cancer.csv"
    df.to_csv(p, index=False)
    return p


def binary_columns(binarization: str) -> int:
    import numpy as np
    from sklearn.datasets import load_breast_cancer
    X, _ = load_breast_cancer(return_X_y=True)
    if binarization == "midpoints":
        return int(sum(len(np.unique(X[:, j])) - 1 for j in range(X.shape[1])))
    from opttrees.data.binarizers import Binarizer
    return int(Binarizer().fit(X).n_columns_)


def run(code: Path, csv: Path, solver: str, binarization: str, time_limit: float, folder: Path) -> dict:
    model = {"type": "flow-oct", "max_depth": 2}
    if binarization != "default":
        model["binarization"] = binarization
    spec = {"data": {"csv": str(csv), "target": "target"}, "model": model,
            "solver": {"name": solver, "time_limit": time_limit},
            "output": str(folder / f"out_{solver}_{binarization}")}
    sp = folder / f"{solver}_{binarization}.json"
    sp.write_text(json.dumps(spec))
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CHILD, str(sp)], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(code)), timeout=20 * time_limit + 600)
    wall = time.perf_counter() - t0
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return {"wall": wall, **json.loads(line[7:])}
    return {"wall": wall, "status": "error", "error": (p.stderr or p.stdout)[-400:]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--solvers", nargs="+", default=["highs", "scip"])
    ap.add_argument("--binarizations", nargs="+", default=["default", "midpoints"])
    ap.add_argument("--code", default=str(ROOT), help="opttrees checkout to run (default: this one)")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        csv = breast_cancer_csv(folder)
        for solver in a.solvers:
            for b in a.binarizations:
                r = run(Path(a.code), csv, solver, b, a.time_limit, folder)
                row = {"solver": solver, "binarization": b, **r}
                print(json.dumps(row), flush=True)
                rows.append(row)
    fmt = lambda v, nd=1: "-" if v is None else (f"{v:,.{nd}f}" if isinstance(v, float) else f"{v:,}")
    print()
    print(f"| solver | binarization | status | wall s (limit {a.time_limit:g}) | build s | rows | columns | nonzeros "
          "| peak MB | train acc |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['solver']} | {r['binarization']} | {r.get('status')}/{r.get('solve_status')} | {fmt(r['wall'])} | "
              f"{fmt(r.get('build'), 2)} | {fmt(r.get('n_rows'))} | {fmt(r.get('n_cols'))} | {fmt(r.get('n_nonzeros'))} | "
              f"{fmt(r.get('peak_mb'), 0)} | {fmt(r.get('train_accuracy'), 3)} |")


if __name__ == "__main__":
    main()
