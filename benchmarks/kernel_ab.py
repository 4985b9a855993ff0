"""A/B timing of two versions of the local-search kernels, several compiled copies of each, in one process.

Why: the same kernels compiled from two copies of one file differ by up to 9% at synthetic depth 6 (code
placement), more than most single changes; separate processes add drift on a shared machine. This copies each
version's kernels (the package ``opttrees/heuristics/kernels/``, or the single module ``_kernels.py`` of versions
before 2026-11-28) ``--copies`` times into a scratch directory as separate packages or modules (each compiles
once, about a minute, then loads from numba's cache there), and runs 100 restarts of each copy in
turn, ``--reps`` rounds, timing CPU seconds of ``run_restarts`` alone (one thread) and one scikit-learn CART fit
per round. Both calling conventions are supported: the shared move-cache table (this version) and the per-thread
dictionary with chunked restarts (before 2026-11-24).

Usage: python benchmarks/kernel_ab.py OLD_CHECKOUT [NEW_CHECKOUT] [--copies 3] [--reps 3] [--scratch DIR] [set:D ...]
(sets: bc = breast cancer 75% split, syn = the 10,000 x 10 synthetic set of heuristics_speed.py; default
syn:2 syn:4 syn:6 bc:2 bc:4 bc:6). Prints each copy's best time, the median, and the ratio to CART's best.
"""
import argparse
import importlib
import math
import os
import shutil
import sys
import time
import types as pytypes

import numpy as np
from numba import types
from numba.typed import Dict
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heuristics_speed import synthetic  # noqa: E402

from opttrees.data.prepared import prepare  # noqa: E402
from opttrees.heuristics.core import make_problem  # noqa: E402
from opttrees.heuristics.local_search import _seeds  # noqa: E402


#: the kernel package's modules, in import order (a copy is flattened into one namespace for :func:`run`)
PACKAGE = ("structs", "losses", "routing", "scans", "movecache", "orders", "splits", "grow", "search", "restarts")


def load_copies(checkout, tag, copies, scratch):
    pkg = os.path.join(checkout, "opttrees", "heuristics", "kernels")
    src = os.path.join(checkout, "opttrees", "heuristics", "_kernels.py")
    if not os.path.isdir(pkg) and not os.path.exists(src):
        raise SystemExit(f"no kernels at {pkg} or {src}")
    mods = []
    for c in range(copies):
        name = f"k_{tag}_{c}"
        if os.path.isdir(pkg):  # the modules import each other relatively: a copied package works as it is
            dst = os.path.join(scratch, name)
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(pkg, dst, ignore=shutil.ignore_patterns("__pycache__"))
            ns = pytypes.SimpleNamespace()
            for m in PACKAGE:
                vars(ns).update(vars(importlib.import_module(f"{name}.{m}")))
            mods.append(ns)
        else:
            shutil.copyfile(src, os.path.join(scratch, name + ".py"))
            mods.append(importlib.import_module(name))
    return mods


def run(K, prob, D, R=100):
    """CPU seconds of R restarts (one thread) and the sum of their objectives (equal across versions)."""
    T = 2 ** (D + 1) - 1
    mtry = int(math.floor(math.sqrt(prob.featok.sum())))
    args = (int(T), prob.X, prob.Xs, prob.grp, prob.orderT, prob.grpT, prob.Z, prob.featok, int(prob.kind), K.GINI,
            D, 1, 0.0, False, 5, float(1e-9 * prob.baseline), mtry, 2**62, 0.25)
    shared = K.search_arrays(prob.X, prob.orderT, prob.grpT)
    stop = np.zeros(1, np.int64)
    c = time.process_time()
    if hasattr(K, "SearchArrays"):  # records instead of positional arguments (the kernel package)
        out = K.restart_output(R, T, 0)
        cfg = K.settings(T, prob.kind, D, 1, 0.0, 1e-9 * prob.baseline, start_kind=K.GINI, H=5, mtry=mtry,
                         random_frac=0.25)
        rankT, ogT, XT, rh = shared
        K.run_restarts(_seeds(0, R), K.problem(prob), cfg, ogT, K.SearchArrays(rankT, XT, rh), stop,
                       np.zeros(1, np.int64), K.move_cache(R, T), np.zeros(K.N_COUNTERS, np.int64), out)
        obj = out.OB
    elif hasattr(K, "move_cache"):
        out = (np.zeros((R, T), np.int8), np.zeros((R, T), np.int64), np.zeros((R, T)), np.zeros((R, T, 0)),
               np.zeros(R), np.zeros(R, np.int64))
        K.run_restarts(_seeds(0, R), *args, stop, np.zeros(1, np.int64), K.move_cache(R, T),
                       np.zeros(K.N_COUNTERS, np.int64), *shared, *out)
        obj = out[4]
    else:
        cache = Dict.empty(key_type=types.UniTuple(types.int64, 2), value_type=types.float64[::1])
        obj = K.run_restarts(_seeds(0, R), *args, stop, 1, cache, np.zeros(K.N_COUNTERS, np.int64), *shared,
                             K.order_cache(prob.Z, int(prob.kind), False, D, prob.p))[4]
    return time.process_time() - c, float(obj.sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new", nargs="?", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--scratch", default=os.path.join(os.path.expanduser("~"), ".cache", "opttrees-kernel-ab"))
    a = ap.parse_intermixed_args()
    if a.new and ":" in a.new:  # a case given where NEW was expected
        a.cases.insert(0, a.new)
        a.new = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cases = a.cases or ["syn:2", "syn:4", "syn:6", "bc:2", "bc:4", "bc:6"]
    os.makedirs(a.scratch, exist_ok=True)
    sys.path.insert(0, a.scratch)
    versions = {"old": load_copies(a.old, "old", a.copies, a.scratch),
                "new": load_copies(a.new, "new", a.copies, a.scratch)}
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xtr, _, ytr, _ = train_test_split(Xb, yb, test_size=0.25, random_state=0, stratify=yb)
    Xs, ys = synthetic()
    raw = {"bc": (Xtr, ytr), "syn": (Xs[:10000], ys[:10000])}
    print(f"old {a.old}, new {a.new}; {a.copies} compiled copies each, {a.reps} rounds; CPU s for 100 restarts, one "
          f"thread; load average {os.getloadavg()[0]:.2f}", flush=True)
    for mods in versions.values():  # compile (or load) every copy before timing anything
        for K in mods:
            run(K, make_problem(prepare(Xb[:60], yb[:60])), 2, 2)
    for case in cases:
        name, D = case.split(":")
        D = int(D)
        prob = make_problem(prepare(*raw[name]))
        times = {v: [[] for _ in mods] for v, mods in versions.items()}
        objs, cart = set(), []
        for _ in range(a.reps):
            for c in range(a.copies):
                for v, mods in versions.items():
                    t, o = run(mods[c], prob, D)
                    times[v][c].append(t)
                    objs.add(round(o, 6))
            t = time.process_time()
            DecisionTreeClassifier(max_depth=D, random_state=0).fit(*raw[name])
            cart.append(time.process_time() - t)
        cm = min(cart)
        line = [f"{case:6s} CART {cm * 1e3:5.1f} ms"]
        for v in versions:
            best = [min(ts) for ts in times[v]]
            line.append(f"{v}: " + " / ".join(f"{b:.3f}" for b in best) + f" s (mean {np.mean(best):.3f}, "
                        f"{np.mean(best) / cm:.0f}x CART)")
        line.append("same objectives" if len(objs) == 1 else "OBJECTIVES DIFFER")
        print("  ".join(line), flush=True)


if __name__ == "__main__":
    main()
