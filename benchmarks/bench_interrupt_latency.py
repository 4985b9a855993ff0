"""How fast does Ctrl-C stop an MIO fit, in every phase? SIGINT at several offsets into OCT, OCT-highs_backend, ORT and FlowOCT.

Data: ``make_classification(1500, 4)`` rounded to 2 decimals plus a column 1e-9 from the first (ORT: a numeric
target on the same X). Each case runs in its own process (imports, numba's cache and Pyomo's first use are paid
as a user pays them): the fit starts, a timer thread sends ``os.kill(os.getpid(), SIGINT)`` ``offset`` seconds
later, and the script reports the phase the fit was in at the signal, the seconds from the signal to ``fit``
returning, the fit's status and the phases it went through after the signal (the latency's breakdown).

Phases are read by wrapping, in the child process only, ``FitControl.stage`` (prepare / encode, warm_start,
build, dp, solve, extract, ...) and inside the solve ``compile_model`` ("compile"), HiGHS's load ("load"), its
root LP cut rounds ("lp-rounds") and its branch and bound ("highs"); outside every stage the phase is
"after <last stage>" (scoring starts, tidying the tree, ...).

    python benchmarks/bench_interrupt_latency.py [--models oct octh ort flow] [--offsets 0.5 1 2 3 5 8]
        [--time-limit 20] [--base COMMIT]        # COMMIT: the code before, run from a `git archive` copy

With ``--base`` every case runs on both copies, one after the other, in the same run (same load).
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

from base_code import archive

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = r'''
import contextlib, functools, json, os, signal, sys, threading, time, warnings
import numpy as np
warnings.simplefilter("ignore")
model, offset, time_limit = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
from sklearn.datasets import make_classification
X, y = make_classification(1500, 4, random_state=0)
X = X.round(2)
X = np.column_stack([X, X[:, 0] + 1e-9])
import opttrees.estimators.fitcontrol as fitcontrol
import opttrees.solvers.api as API
import opttrees.solvers.highs as highs_backend
from opttrees.estimators import FlowOCTClassifier, OptimalTreeClassifier, OptimalTreeRegressor

T0 = [None]
stack, log, last = [], [], ["start"]

def now():
    return time.perf_counter() - T0[0] if T0[0] is not None else 0.0

def enter(name):
    stack.append(name)
    log.append((now(), "+" + name))

def leave(name):
    if stack and stack[-1] == name:
        stack.pop()
    last[0] = name
    log.append((now(), "-" + name))

def phase():
    return "/".join(stack) if stack else "after " + last[0]

orig_stage = fitcontrol.FitControl.stage

@contextlib.contextmanager
def stage(self, name):
    enter(name)
    try:
        with orig_stage(self, name):
            yield
    finally:
        leave(name)

fitcontrol.FitControl.stage = stage

def traced(owner, attr, name):
    fn = getattr(owner, attr, None)
    if fn is None:
        return
    @functools.wraps(fn)
    def wrapper(*a, **k):
        enter(name)
        try:
            return fn(*a, **k)
        finally:
            leave(name)
    setattr(owner, attr, wrapper)

traced(API, "compile_model", "compile")
traced(highs_backend, "_build", "load")
traced(highs_backend.HighsRun, "loop", "highs")
traced(highs_backend.HighsCutLoop, "loop", "highs")
traced(highs_backend.HighsCutLoop, "lp_phase", "lp-rounds")

if model == "oct":
    est = OptimalTreeClassifier(max_depth=3, method="mio", time_limit=time_limit)
elif model == "oct-nodp":   # no DP: the HiGHS phases of OCT (the DP proves this one optimal in ~2 s)
    est = OptimalTreeClassifier(max_depth=3, method="mio", time_limit=time_limit, warm_start="greedy", dp_bound=False)
elif model == "octh":
    est = OptimalTreeClassifier(max_depth=2, method="mio", split_type="hyperplane", time_limit=time_limit)
elif model == "ort":
    rng = np.random.default_rng(0)
    y = (X[:, 0] - 0.5 * X[:, 1] + 0.3 * X[:, 2] * X[:, 3] + 0.1 * rng.normal(size=len(X))).round(2)
    est = OptimalTreeRegressor(max_depth=2, method="mio", loss="absolute", time_limit=time_limit)
elif model == "flow":
    est = FlowOCTClassifier(max_depth=3, time_limit=time_limit)
elif model == "flow-nodp":
    est = FlowOCTClassifier(max_depth=3, time_limit=time_limit, warm_start="greedy", dp_bound=False)
elif model == "benders":
    from opttrees.estimators import BendersOCTClassifier
    est = BendersOCTClassifier(max_depth=3, time_limit=time_limit, warm_start="greedy", dp_bound=False)
else:
    raise SystemExit(f"unknown model {model}")

sig = {}

def fire():
    sig["phase"] = phase()
    sig["t"] = now()
    os.kill(os.getpid(), signal.SIGINT)

timer = threading.Timer(offset, fire)
T0[0] = time.perf_counter()
timer.start()
est.fit(X, y)
t_end = now()
timer.cancel()
out = {"model": model, "offset": offset, "fit_time": t_end, "fit_status": est.fit_status_,
       "solve_status": getattr(getattr(est, "solve_result_", None), "status", None)}
if "t" in sig:
    out.update(phase=sig["phase"], latency=t_end - sig["t"],
               after=[f"{t - sig['t']:+.2f} {e}" for t, e in log if t >= sig["t"]])
else:
    out.update(phase="(fit ended first)", latency=None, after=[])
print("RESULT " + json.dumps(out), flush=True)
'''

NAMES = {"oct": "OCT depth 3", "oct-nodp": "OCT depth 3, greedy start, no DP",
         "octh": "OCT-H depth 2", "ort": "ORT depth 2 (absolute)", "flow": "FlowOCT depth 3",
         "flow-nodp": "FlowOCT depth 3, greedy start, no DP", "benders": "BendersOCT depth 3, greedy start, no DP"}


def run(code: Path, model: str, offset: float, time_limit: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code))
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", CHILD, model, str(offset), str(time_limit)], capture_output=True,
                       text=True, env=env, timeout=10 * time_limit + 300)
    wall = time.perf_counter() - t0
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return {"wall": wall, **json.loads(line[7:])}
    return {"wall": wall, "model": model, "offset": offset, "phase": "error", "latency": None,
            "error": (p.stderr or p.stdout)[-600:]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="+", default=["oct", "oct-nodp", "octh", "ort", "flow", "flow-nodp"],
                    choices=sorted(NAMES))
    ap.add_argument("--offsets", nargs="+", type=float, default=[0.5, 1, 2, 3, 5, 8])
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--base", default=None, help="a commit to run as 'before' in the same run")
    ap.add_argument("--verbose", action="store_true", help="print the phases after each signal")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        codes = [("after", ROOT)]
        if a.base:
            codes.insert(0, ("before", archive(a.base, Path(tmp))))
        for model in a.models:
            for offset in a.offsets:
                for label, code in codes:
                    r = {"code": label, **run(code, model, offset, a.time_limit)}
                    rows.append(r)
                    lat = "-" if r.get("latency") is None else f"{r['latency']:.2f} s"
                    print(f"{label:6} {model:5} offset {offset:4g} s  phase {r.get('phase')!s:28} latency {lat:8} "
                          f"{r.get('fit_status')}/{r.get('solve_status')}", flush=True)
                    if a.verbose or r.get("phase") == "error":
                        print("        " + " ".join(r.get("after", [])) + r.get("error", ""), flush=True)
    print()
    labels = [lab for lab, _ in codes]
    print("| model | offset s | " + " | ".join(f"{lab}: phase at SIGINT | {lab}: latency s" for lab in labels) + " |")
    print("|---|---:|" + "---|---:|" * len(labels))
    for model in a.models:
        for offset in a.offsets:
            cells = []
            for lab in labels:
                r = next(r for r in rows if r["code"] == lab and r["model"] == model and r["offset"] == offset)
                cells += [str(r.get("phase")), "-" if r.get("latency") is None else f"{r['latency']:.2f}"]
            print(f"| {NAMES[model]} | {offset:g} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
