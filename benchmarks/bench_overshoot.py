"""Where does a fit spend the time past its ``time_limit``? Whole fits under a short limit, optionally under load.

Data as ``bench_interrupt_latency.py`` (``make_classification(1500, 4)`` rounded to 2 decimals plus a column 1e-9
from the first), or ``--data breast_cancer`` (569 x 30 continuous, as ``bench_time_limits.py``). Each fit runs in
its own process with the same tracing as that script (``FitControl.stage``,
``compile_model``, HiGHS's load / root cut rounds / each branch and bound, SCIP's solve), and reports the wall time
of ``fit``, the overshoot (wall - limit) and the overshoot by innermost phase: of the time after the limit, how
much each phase took ("highs" past its own limit is HiGHS's overshoot: presolve, a long LP; "after <stage>" is
our own work between stages, scoring starts, tidying the tree).

``--load N`` starts N busy-loop Python processes for the duration of the run (``stress`` style; killed at the
end), as on a shared 2-core machine.

    python benchmarks/bench_overshoot.py [--models flow benders oct octh] [--time-limit 3] [--repeat 2]
        [--load 2] [--data synthetic|breast_cancer] [--base COMMIT]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from base_code import archive

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = r'''
import contextlib, functools, json, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
model, time_limit, dataset = sys.argv[1], float(sys.argv[2]), sys.argv[3]
if dataset == "breast_cancer":
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
else:
    from sklearn.datasets import make_classification
    X, y = make_classification(1500, 4, random_state=0)
    X = X.round(2)
    X = np.column_stack([X, X[:, 0] + 1e-9])
import opttrees.estimators.fitcontrol as fitcontrol
import opttrees.solvers.api as API
import opttrees.solvers.highs as highs_backend
import opttrees.solvers.scip as scip_backend
from opttrees.estimators import BendersOCTClassifier, FlowOCTClassifier, OptimalTreeClassifier

T0 = [None]
log = []

def now():
    return time.perf_counter() - T0[0] if T0[0] is not None else 0.0

orig_stage = fitcontrol.FitControl.stage

@contextlib.contextmanager
def stage(self, name):
    log.append((now(), "+", name))
    try:
        with orig_stage(self, name):
            yield
    finally:
        log.append((now(), "-", name))

fitcontrol.FitControl.stage = stage

def traced(owner, attr, name):
    fn = getattr(owner, attr, None)
    if fn is None:
        return
    @functools.wraps(fn)
    def wrapper(*a, **k):
        log.append((now(), "+", name))
        try:
            return fn(*a, **k)
        finally:
            log.append((now(), "-", name))
    setattr(owner, attr, wrapper)

traced(API, "compile_model", "compile")
traced(highs_backend, "_build", "load")
traced(highs_backend.HighsRun, "run_round", "highs")
traced(highs_backend.HighsCutLoop, "lp_phase", "lp-rounds")
traced(scip_backend, "solve_scip", "scip")
limits = []
orig_solve = API.solve

def solve(*a, **k):
    limits.append((now(), k.get("time_limit")))
    return orig_solve(*a, **k)

API.solve = solve
import opttrees.solvers as SOLVERS
SOLVERS.solve = solve

if model == "flow":
    est = FlowOCTClassifier(max_depth=3, time_limit=time_limit)
elif model == "flow-nodp":
    est = FlowOCTClassifier(max_depth=3, time_limit=time_limit, warm_start="greedy", dp_bound=False)
elif model == "benders":
    est = BendersOCTClassifier(max_depth=3, time_limit=time_limit)
elif model == "benders-highs":
    est = BendersOCTClassifier(max_depth=3, time_limit=time_limit, solver="highs")
elif model == "oct":
    est = OptimalTreeClassifier(max_depth=3, time_limit=time_limit)
elif model == "oct-nodp":
    est = OptimalTreeClassifier(max_depth=3, time_limit=time_limit, warm_start="greedy", dp_bound=False)
elif model == "octh":
    est = OptimalTreeClassifier(max_depth=2, split_type="hyperplane", time_limit=time_limit)
else:
    raise SystemExit(f"unknown model {model}")
T0[0] = time.perf_counter()
est.fit(X, y)
wall = now()
r = est.solve_result_
print("RESULT " + json.dumps({"model": model, "wall": wall, "fit_status": est.fit_status_,
                              "solve_status": getattr(r, "status", None), "log": log, "solver_limits": limits,
                              "timings": {k: v for k, v in (getattr(r, "timings", None) or {}).items()
                                          if isinstance(v, (int, float))}}), flush=True)
'''


def by_phase(log: list, limit: float, wall: float) -> dict:
    """Seconds after ``limit`` spent in each innermost phase (outside every phase: "after <last one>")."""
    out: dict = defaultdict(float)
    stack: list = []
    last = "start"
    t_prev = 0.0
    for t, kind, name in log + [(wall, "end", "")]:
        lo = max(t_prev, limit)
        if t > lo:
            out[stack[-1] if stack else f"after {last}"] += t - lo
        if kind == "+":
            stack.append(name)
        elif kind == "-":
            if stack and stack[-1] == name:
                stack.pop()
            last = name
        t_prev = t
    return dict(out)


def run(code: Path, model: str, time_limit: float, dataset: str = "synthetic") -> dict:
    env = dict(os.environ, PYTHONPATH=str(code))
    p = subprocess.run([sys.executable, "-c", CHILD, model, str(time_limit), dataset], capture_output=True, text=True,
                       env=env, timeout=20 * time_limit + 300)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"model": model, "wall": None, "error": (p.stderr or p.stdout)[-600:]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="+", default=["flow", "benders", "oct", "oct-nodp", "octh"])
    ap.add_argument("--time-limit", type=float, default=3.0)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--data", default="synthetic", choices=["synthetic", "breast_cancer"])
    ap.add_argument("--load", type=int, default=0, help="busy-loop processes running meanwhile")
    ap.add_argument("--base", default=None, help="a commit to run as 'before' in the same run")
    a = ap.parse_args()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(a.load)]
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            codes = [("after", ROOT)]
            if a.base:
                codes.insert(0, ("before", archive(a.base, Path(tmp))))
            for model in a.models:
                for _ in range(a.repeat):
                    for label, code in codes:
                        r = run(code, model, a.time_limit, a.data)
                        if r.get("wall") is None:
                            print(f"{label:6} {model}: error {r.get('error')}", flush=True)
                            continue
                        phases = by_phase(r["log"], a.time_limit, r["wall"])
                        r.update(code=label, over=r["wall"] - a.time_limit, phases=phases)
                        rows.append(r)
                        top = ", ".join(f"{k} {v:.2f}" for k, v in sorted(phases.items(), key=lambda kv: -kv[1])
                                        if v >= 0.01)
                        lim = ", ".join(f"{lim:.2f} s at {t:.2f}" for t, lim in r["solver_limits"]
                                        if lim is not None)
                        print(f"{label:6} {model:8} wall {r['wall']:6.2f} s  over {r['over']:+.2f} s  "
                              f"{r['fit_status']}/{r['solve_status']}  solver given: {lim or '-'}  "
                              f"past the limit: {top or '-'}", flush=True)
    finally:
        for p in busy:
            p.kill()
            p.wait()
    print()
    print(f"| model | code | fits | wall s (limit {a.time_limit:g}, median) | overshoot s (max) | past the limit, by phase "
          "(median s) |")
    print("|---|---|---:|---:|---:|---|")
    for model in a.models:
        for label, _ in codes:
            rs = [r for r in rows if r["model"] == model and r["code"] == label]
            if not rs:
                continue
            keys = sorted({k for r in rs for k in r["phases"]})
            med = {k: statistics.median([r["phases"].get(k, 0.0) for r in rs]) for k in keys}
            top = ", ".join(f"{k} {v:.2f}" for k, v in sorted(med.items(), key=lambda kv: -kv[1]) if v >= 0.01)
            print(f"| {model} | {label} | {len(rs)} | {statistics.median(r['wall'] for r in rs):.2f} | "
                  f"{max(r['over'] for r in rs):+.2f} | {top or '-'} |")


if __name__ == "__main__":
    main()
