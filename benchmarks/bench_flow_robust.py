"""Time to proven optimality: FlowOCT / BendersOCT on balance-scale (depths 2, 3) and RobustOCT (depth 2) on
the MONK's problems for a few lambda, against ODTlearn (CBC) measured in the same run.

ODTlearn is GPL: it is installed only in the benchmark-private venv ``benchmarks/.venv-odtlearn`` (created
by ``odtlearn_env.sh``) and called as an external program; none of its code is copied here. Both tools get
the *same* binary matrix (our midpoint binarisation) and the same costs/budget.

Every configuration runs in its own process (``--jobs`` at a time, one solver thread each).

    python benchmarks/bench_flow_robust.py [--time-limit 300] [--jobs 2] [--no-odtlearn] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

ODT_RUNNER = r'''
import json, sys, time, numpy as np
d = np.load(sys.argv[1], allow_pickle=True)
cfg = json.loads(sys.argv[2])
X, y = d["X"], d["y"]
t = time.perf_counter()
try:
    if cfg["model"] == "robust":
        from odtlearn.robust_oct import RobustOCT
        m = RobustOCT(solver="cbc", depth=cfg["depth"], time_limit=cfg["time_limit"], num_threads=1)
        m.fit(X.astype(int), y, costs=d["costs"], budget=float(d["budget"]))
    else:
        from odtlearn.flow_oct import FlowOCT, BendersOCT
        cls = FlowOCT if cfg["model"] == "flow" else BendersOCT
        m = cls(solver="cbc", depth=cfg["depth"], time_limit=cfg["time_limit"], num_threads=1, _lambda=0.0)
        m.fit(X.astype(int), y)
    mm = m._solver.model
    out = {"status": str(mm.status).split(".")[-1].lower(), "objective": mm.objective_value,
           "bound": mm.objective_bound, "runtime": time.perf_counter() - t}
    try:
        out["train_acc"] = float(np.mean(m.predict(X.astype(int)) == y))
    except Exception as exc:
        out["predict_error"] = repr(exc)[:200]
except Exception as exc:
    out = {"status": "error", "error": repr(exc)[:300], "runtime": time.perf_counter() - t}
print("RESULT " + json.dumps(out))
'''


def balance_binary():
    from opttrees.data.binarizers import Binarizer
    from opttrees.datasets.robust import load
    ds = load("balance-scale")
    Z = Binarizer("midpoints").fit_transform(ds.X.to_numpy(float))
    return Z, ds.y


def monk_robust(k, lam, rho):
    from opttrees.datasets.robust import load
    from opttrees.robust import calibrate
    ds = load(f"monk{k}")
    X = ds.X.to_numpy(float)
    if lam >= 1.0:
        return X, ds.y, np.ones_like(X), 0.0
    gamma, eps = calibrate(X, rho, lam)
    return X, ds.y, gamma, eps


def peak_mb() -> float:
    """Peak resident memory of this process so far, in MB (Linux reports ru_maxrss in KB, macOS in bytes)."""
    import resource
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024 ** 2 if sys.platform == "darwin" else rss / 1024


def run_ours(cfg):
    """One configuration in this process (called with --one)."""
    from opttrees.estimators import BendersOCTClassifier, FlowOCTClassifier, RobustTreeClassifier
    t = time.perf_counter()
    if cfg["model"] == "robust":
        X, y, costs, eps = monk_robust(cfg["monk"], cfg["lam"], cfg["rho"])
        est = RobustTreeClassifier(max_depth=cfg["depth"], solver=cfg["solver"], time_limit=cfg["time_limit"])
        est.fit(X, y, costs=costs, budget=eps)
        extra = {"worst_case_acc": est.worst_case_train_accuracy_, "splits": est.tree_.n_splits}
    else:
        Z, y = balance_binary()
        cls = FlowOCTClassifier if cfg["model"] == "flow" else BendersOCTClassifier
        est = cls(max_depth=cfg["depth"], solver=cfg["solver"], time_limit=cfg["time_limit"]).fit(Z, y)
        extra = {}
    r = est.solve_result_
    return {"status": r.status, "objective": r.objective, "bound": r.bound, "runtime": r.runtime,
            "total": time.perf_counter() - t, "nodes": r.node_count, "cuts": r.n_lazy_cuts, "rounds": r.n_rounds,
            "train_acc": float(est.score(Z if cfg["model"] != "robust" else X, y)), "peak_mb": peak_mb(), **extra}


def run_odtlearn(cfg, py):
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "data.npz"
        if cfg["model"] == "robust":
            X, y, costs, eps = monk_robust(cfg["monk"], cfg["lam"], cfg["rho"])
            # ODTlearn's convention: budget -1 / costs budget+1 means "cannot move"
            np.savez(f, X=X, y=y, costs=costs, budget=eps if eps > 0 else -1.0)
        else:
            Z, y = balance_binary()
            np.savez(f, X=Z, y=y)
        script = Path(tmp) / "runner.py"
        script.write_text(ODT_RUNNER)
        try:
            p = subprocess.run([py, str(script), str(f), json.dumps(cfg)], capture_output=True, text=True,
                               timeout=cfg["time_limit"] * 2 + 120)
        except subprocess.TimeoutExpired:
            return {"status": "killed (2x time limit)", "runtime": cfg["time_limit"] * 2 + 120}
        for line in p.stdout.splitlines():
            if line.startswith("RESULT "):
                return json.loads(line[7:])
        return {"status": "error", "error": (p.stderr or p.stdout)[-300:]}


def run_one_subprocess(cfg):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, __file__, "--one", json.dumps(cfg)], capture_output=True, text=True, env=env)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"status": "error", "error": p.stderr[-400:]}


def configs(tl, quick):
    out = []
    depths = [2] if quick else [2, 3]
    for d in depths:
        for model, solver in [("flow", "highs"), ("flow", "scip"), ("benders", "scip"), ("benders", "highs")]:
            out.append({"impl": "opttrees", "data": "balance-scale", "model": model, "solver": solver, "depth": d,
                        "time_limit": tl})
        for model in ("flow", "benders"):
            out.append({"impl": "odtlearn", "data": "balance-scale", "model": model, "solver": "cbc", "depth": d,
                        "time_limit": tl})
    lams = [1.0, 0.9] if quick else [1.0, 0.9, 0.75]
    monks = [1] if quick else [1, 2, 3]
    for k in monks:
        for lam in lams:
            out.append({"impl": "opttrees", "data": f"monk{k}", "model": "robust", "solver": "scip", "depth": 2,
                        "monk": k, "lam": lam, "rho": 0.9, "time_limit": tl})
            if lam in (1.0, 0.9) and k == 1:
                out.append({"impl": "opttrees", "data": f"monk{k}", "model": "robust", "solver": "highs",
                            "depth": 2, "monk": k, "lam": lam, "rho": 0.9, "time_limit": tl})
            out.append({"impl": "odtlearn", "data": f"monk{k}", "model": "robust", "solver": "cbc", "depth": 2,
                        "monk": k, "lam": lam, "rho": 0.9, "time_limit": tl})
    return out


def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-odtlearn", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--models", nargs="+", default=["flow", "benders", "robust"],
                    help="run only these model families")
    ap.add_argument("--solvers", nargs="+", default=["highs", "scip", "cbc"], help="run only these solvers")
    ap.add_argument("--depths", nargs="+", type=int, default=None, help="only these depths (balance-scale rows)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(HERE / "results" / "flow_robust.jsonl"))
    a = ap.parse_args()
    if a.one:
        print("RESULT " + json.dumps(run_ours(json.loads(a.one))))
        return
    py = None
    if not a.no_odtlearn:
        try:
            subprocess.run(["bash", str(HERE / "odtlearn_env.sh")], check=True, capture_output=True, timeout=900)
            py = str(HERE / ".venv-odtlearn" / "bin" / "python")
        except Exception as exc:
            print(f"# ODTlearn unavailable ({exc}); running opttrees only")
    cfgs = [c for c in configs(a.time_limit, a.quick)
            if (c["impl"] == "opttrees" or py) and c["model"] in a.models and c["solver"] in a.solvers
            and (a.depths is None or c["model"] == "robust" or c["depth"] in a.depths)]

    def go(c):
        r = run_odtlearn(c, py) if c["impl"] == "odtlearn" else run_one_subprocess(c)
        row = {**c, **r}
        print(json.dumps(row), flush=True)
        return row

    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(a.jobs) as ex:
        rows = list(ex.map(go, cfgs))
    with open(a.out, "w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    print()
    print("| data | model | impl | solver | depth | lam | status | objective | bound | time s | train acc | worst-case acc "
          "| peak MB |")
    print("|---|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['data']} | {r['model']} | {r['impl']} | {r['solver']} | {r['depth']} | {fmt(r.get('lam'), 2)} | "
              f"{r.get('status')} | {fmt(r.get('objective'), 2)} | {fmt(r.get('bound'), 2)} | {fmt(r.get('runtime'))} | "
              f"{fmt(r.get('train_acc'), 3)} | {fmt(r.get('worst_case_acc'), 3)} | {fmt(r.get('peak_mb'), 0)} |")


if __name__ == "__main__":
    main()
