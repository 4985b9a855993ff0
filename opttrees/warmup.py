"""Compile every numba kernel once, at installation (``opttrees warmup``; ``make demo`` and ``make test`` run it).

Why: the kernels are compiled on their first call and cached on disk by numba (``cache=True``); a cold compile
takes minutes on a small machine (issue 27: a 60 s local search took 102 s on its first run and found a worse
tree). Compiling belongs to installation, not to a user's first fit.

How: each *group* below is a list of tiny fits (a few dozen rows) that call every kernel of its modules with the
exact argument types a real fit uses, so numba caches exactly the signatures fits need. The groups run in
separate processes (numba compiles in one thread per process; two processes use two cores), and afterwards
:func:`cold_kernels` checks that no cached kernel of the package is left cold.

The local search packs its row words in 32 bits up to 65,536 rows and in 64 bits above
(:func:`opttrees.heuristics.kernels.orders.search_arrays`). The 64-bit variant is a second compile of the kernels
that take row words; ``opttrees warmup`` compiles it too (group ``heuristics-64``, in the process of group
``heuristics``, after it, so the kernels they share are compiled once: :data:`FOLLOWS`) unless
``--no-large`` is given, in which case a fit on more than 65,536 rows compiles it on first use (announced,
counted in its time limit).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings

from . import jit, kernel_modules

#: the modules holding the package's cached numba kernels: the one list, in opttrees/kernel_modules.py
KERNEL_MODULES = kernel_modules.KERNEL_MODULES
HEURISTICS_KERNELS = kernel_modules.HEURISTICS_KERNELS

def kernels() -> list:
    """(qualified name, dispatcher) of every cached numba kernel of the package (imports the kernel modules)."""
    return jit.kernels(KERNEL_MODULES)


def cold_kernels(include_large: bool = True) -> list[str]:
    """The package's kernels (or their signatures) that a fit would compile: none after ``opttrees warmup``.
    Exact per signature: each kernel's signatures are those the tiny fits below compile (inputs are normalised
    at the boundary, so a user's fit calls the same ones), recorded in :mod:`opttrees._kernel_signatures`
    (``python -m opttrees.warmup --record`` rewrites it). ``include_large`` False skips the signatures only the
    64-bit local search calls (fits on more than 65,536 rows)."""
    return jit.cold_kernels(KERNEL_MODULES, include_large)


def _xy(n=48, p=3, classes=2, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    if classes > 2:
        y = y + (X[:, 2] > 0.5)
    return X, y, X[:, 0] * 2 + X[:, 1] + 0.1 * rng.normal(size=n)


# --- the tiny fits, grouped by the modules they compile -----------------------------------------------------
# (no time limit: at the estimators' default of 60 s a slow compile met the deadline and the fit returned its
# fallback, leaving the compile to a background thread that the end of the process could cut short)

def _ls_classification():
    from .estimators import OptimalTreeClassifier
    X, y, _ = _xy()
    OptimalTreeClassifier(time_limit=None, max_depth=2, method="local-search", n_restarts=2).fit(X, y)
    X, y, _ = _xy(classes=3)
    OptimalTreeClassifier(time_limit=None, max_depth=2, method="local-search", n_restarts=2).fit(X, y, sample_weight=1.0 + (y == 1))


def _ls_hyperplane():
    from .estimators import OptimalTreeClassifier, OptimalTreeRegressor
    X, y, r = _xy()
    OptimalTreeClassifier(time_limit=None, max_depth=2, method="local-search", split_type="hyperplane", n_restarts=2).fit(X, y)
    OptimalTreeRegressor(time_limit=None, max_depth=2, method="local-search", split_type="hyperplane", n_restarts=2).fit(X, r)


def _ls_regression():
    from .estimators import OptimalTreeRegressor
    X, _, r = _xy()
    OptimalTreeRegressor(time_limit=None, max_depth=2, method="local-search", n_restarts=2).fit(X, r)
    OptimalTreeRegressor(time_limit=None, max_depth=2, method="local-search", loss="absolute", n_restarts=2).fit(X, r)


def _ls_improve():
    from .data.prepared import prepare
    from .heuristics import greedy_tree, improve_tree
    X, y, r = _xy()
    for target in (y, r):
        data = prepare(X, target, task="classification" if target is y else "regression")
        improve_tree(data, greedy_tree(data, 2), 2)


def _presort():
    """The presort kernels: fits use plain numpy while they are cold (heuristics.core._presort), so compile
    them here explicitly."""
    import numpy as np

    from .heuristics.kernels import orders
    X, _, _ = _xy()
    XT = np.ascontiguousarray(X.T)
    orderT = np.argsort(XT, axis=1).astype(np.int64)
    orders.presort_ties(XT, orderT)
    p, n = XT.shape
    orders.presort_ranks(XT, orderT, np.empty((n, p), np.int32), np.empty((p, n), np.int32))


def _greedy():
    from .data.prepared import prepare
    from .estimators import OptimalTreeClassifier, OptimalTreeRegressor
    from .heuristics import greedy_tree
    X, y, r = _xy()
    OptimalTreeClassifier(time_limit=None, max_depth=2, method="greedy").fit(X, y)
    OptimalTreeRegressor(time_limit=None, max_depth=2, method="greedy").fit(X, r)
    OptimalTreeRegressor(time_limit=None, max_depth=2, method="greedy", loss="absolute").fit(X, r)
    greedy_tree(prepare(X, y, task="classification"), 2, max_features=1, random_state=0)   # forests


def _linear_leaves():
    from .estimators import OptimalTreeRegressor
    X, _, r = _xy()
    OptimalTreeRegressor(time_limit=None, max_depth=1, leaf_model="linear", n_restarts=2).fit(X, r)


def _ls_64bit():
    """The local search with 64-bit row words (fits on more than 65,536 rows), compiled on tiny data."""
    from .heuristics.kernels import orders
    saved = orders.OG32_ROWS
    orders.OG32_ROWS = 0   # a plain Python constant read by search_arrays only (not a numba global)
    try:
        _ls_classification()
        _ls_hyperplane()
        _ls_regression()
        _ls_improve()
    finally:
        orders.OG32_ROWS = saved


def _dp():
    from .estimators import OptimalTreeClassifier, OptimalTreeRegressor
    X, y, r = _xy()
    b = "quantile"        # the binary engine (the continuous search has its own task below)
    OptimalTreeClassifier(time_limit=None, max_depth=2, method="dp", binarization=b).fit(X, y)
    OptimalTreeClassifier(time_limit=None, max_depth=2, method="dp", binarization=b).fit(X, y, sample_weight=1.0 + y)
    OptimalTreeRegressor(time_limit=None, max_depth=2, method="dp", binarization=b).fit(X, r)
    from .dp.api import solve_dp   # a run stopped at once: its lower bound at a stop (root_lower_bound)
    solve_dp(X, y, max_depth=2, time_limit=1e-9, binarization=b)


def _dp_continuous():
    """Every path of the continuous search: two and three classes, a cost matrix, squared error, a minimum leaf
    size (the interval search), depth 3 (the recursion)."""
    import numpy as np

    from .dp import CostSensitiveTask, RegressionTask
    from .dp.continuous import solve_dp_continuous
    X, y, r = _xy()
    solve_dp_continuous(X, y, max_depth=3)
    solve_dp_continuous(X, y, max_depth=2, min_samples_leaf=2)
    solve_dp_continuous(X, np.arange(len(y)) % 3, max_depth=2)
    solve_dp_continuous(X, y, task=CostSensitiveTask(1 - np.eye(2), classes=[0, 1]), max_depth=2)
    solve_dp_continuous(X, r, task=RegressionTask(), max_depth=3)


def _dp_pareto():
    """The Pareto-front search: fronts (F1) and the incumbent-pruned fairness search."""
    import numpy as np

    from .constraints.fairness_dp import GroupFairnessTask
    from .constraints.pareto import F1Task, solve_dp_pareto
    X, y, _ = _xy()
    Z = (X > np.median(X, axis=0)).astype(np.uint8)
    g = np.arange(len(y)) % 2 == 0
    solve_dp_pareto(Z, y, F1Task(), max_depth=2)
    solve_dp_pareto(Z, y, GroupFairnessTask([(g, ~g, 0.1)]), max_depth=3, return_front=False)


def _prescriptive_data():
    import numpy as np
    X, _, r = _xy(n=60)
    t = (np.arange(len(X)) % 2).astype(int)
    return X, t, r + t * X[:, 1]


def _prescriptive():
    import numpy as np

    from .estimators import OptimalPrescriptiveTree, PolicyTree
    X, t, yy = _prescriptive_data()
    OptimalPrescriptiveTree(max_depth=2, n_restarts=2, method="local-search").fit(X, t, yy)
    OptimalPrescriptiveTree(max_depth=2, method="greedy").fit(X, t, yy)
    OptimalPrescriptiveTree(max_depth=1, n_restarts=2, counterfactuals="linear", n_treatment=5).fit(X, t, yy)
    PolicyTree(max_depth=2, method="local-search", n_restarts=2, teacher="dm").fit(
        X, t, yy, outcome_estimates=np.column_stack([yy, yy + X[:, 0]]))


def _prescriptive_dp():
    import numpy as np

    from .estimators import OptimalPrescriptiveTree, PolicyTree
    X, t, yy = _prescriptive_data()
    OptimalPrescriptiveTree(max_depth=3, method="dp").fit(X, t, yy)
    PolicyTree(max_depth=3, method="dp", teacher="dm").fit(X, t, yy, outcome_estimates=np.column_stack([yy, yy + X[:, 0]]))


def _prescriptive_improve():
    from .data.prescriptive import prepare_prescriptive
    from .prescriptive.objective import make_problem
    from .prescriptive.search import greedy_prescriptive, improve_tree
    X, t, yy = _prescriptive_data()
    prob = make_problem(prepare_prescriptive(X, t, yy))
    improve_tree(prob, greedy_prescriptive(prob, 2), 2)


#: group -> (modules it compiles, [(task name, tiny fit)]), largest first (the scheduler's order)
GROUPS = {
    "heuristics": ((*HEURISTICS_KERNELS, "opttrees.heuristics.linear_leaves"),
                   [("presort", _presort), ("local search, classification", _ls_classification),
                    ("local search, regression", _ls_regression),
                    ("local search, hyperplanes", _ls_hyperplane), ("local search from a start", _ls_improve),
                    ("greedy", _greedy), ("linear leaves", _linear_leaves)]),
    "dp": (("opttrees.dp.engine_base", "opttrees.dp.depth_two", "opttrees.dp.engine", "opttrees.dp.continuous_kernels",
            "opttrees.constraints.pareto_kernels"),
           [("dynamic program", _dp), ("continuous dynamic program", _dp_continuous),
            ("Pareto-front dynamic program", _dp_pareto)]),
    "prescriptive": (("opttrees.prescriptive._kernels", "opttrees.dp.stats_kernels"),
                     [("prescriptive trees", _prescriptive), ("prescriptive search from a start", _prescriptive_improve),
                      ("prescriptive and policy dynamic program", _prescriptive_dp)]),
    "heuristics-64": (HEURISTICS_KERNELS, [("local search, >65,536 rows (64-bit words)", _ls_64bit)]),
}

#: group -> the group whose process it runs in, after it. The 64-bit local search shares every kernel that does not
#: take row words with the 32-bit one; in the same process it compiles only the ones that do (in a process of its
#: own, started while the other still compiles, it compiled all of them again)
FOLLOWS = {"heuristics-64": "heuristics"}


def run_group(group: str, out=sys.stdout) -> None:
    """Run one group's tiny fits in this process; one JSON line per task (for the parent's progress lines)."""
    for name, fn in GROUPS[group][1]:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
        print(json.dumps({"group": group, "task": name, "seconds": round(time.perf_counter() - t0, 2)}), file=out,
              flush=True)


def warmup(groups=None, jobs: int = 2, large: bool = True, echo=print, env=None, check: bool = True) -> dict:
    """Run the groups' tiny fits in up to ``jobs`` processes, then check that no kernel is cold.

    Returns {"seconds": wall time, "tasks": [{group, task, seconds}], "cold": [kernel names left cold],
    "failed": {group: stderr tail}}. ``echo`` receives one progress line per finished task.
    """
    if groups is None:
        groups = [g for g in GROUPS if large or g != "heuristics-64"]
    n_tasks = sum(len(GROUPS[g][1]) for g in groups)
    # one process per unit of groups: a group listed in FOLLOWS runs in its leader's process, after it
    todo: list = []
    for g in groups:
        lead = FOLLOWS.get(g)
        unit = next((u for u in todo if lead in u), None) if lead in groups else None
        if unit is None:
            todo.append([g])
        else:
            unit.append(g)
    t0 = time.perf_counter()
    import queue
    import threading
    lines: queue.Queue = queue.Queue()
    running: dict = {}
    done: list = []
    failed: dict = {}
    env = dict(os.environ if env is None else env)
    env.setdefault("PYTHONWARNINGS", "ignore")
    jobs = max(1, int(jobs))

    def pump(g, p):   # one JSON line per finished task -> the queue; None when the process ends
        for line in p.stdout:
            lines.put((g, line))
        lines.put((g, None))

    while todo or running:
        while todo and len(running) < jobs:
            unit = todo.pop(0)
            g = "+".join(unit)
            p = subprocess.Popen([sys.executable, "-m", "opttrees.warmup", *(a for u in unit for a in ("--group", u))],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            running[g] = p
            threading.Thread(target=pump, args=(g, p), daemon=True).start()
        g, line = lines.get()
        if line is None:
            p = running.pop(g)
            err = p.stderr.read()
            if p.wait() != 0:
                failed[g] = err[-2000:]
                echo(f"  {g}: FAILED (exit {p.returncode})")
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        done.append(rec)
        echo(f"  [{len(done)}/{n_tasks}] {rec['group']}: {rec['task']} ({rec['seconds']:.1f} s, "
             f"{time.perf_counter() - t0:.0f} s elapsed)")
    cold = cold_kernels(include_large=large) if check else []
    return {"seconds": time.perf_counter() - t0, "tasks": done, "cold": cold, "failed": failed}


SIGNATURES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kernel_signatures.py")


def compiled_now() -> dict[str, list[list[str]]]:
    """Every kernel's signatures in numba's cache for this process's NUMBA_CACHE_DIR (sorted, for a file), by
    :func:`opttrees.jit.kernel_name`."""
    return {jit.kernel_name(d): sorted(list(sig) for sig in jit.compiled_signatures(d)) for _, d in kernels()}


def record(jobs: int = 2, echo=print, path: str = SIGNATURES_FILE) -> dict[str, list[list[str]]]:
    """Run every group's tiny fits in a fresh, empty numba cache and write the signatures they compiled to
    ``opttrees/_kernel_signatures.py``: what :func:`cold_kernels` and :func:`opttrees.jit.is_cold` check. The
    signatures only the 64-bit group (``heuristics-64``) adds are recorded as large. Rerun after changing a
    kernel's arguments (tests/cli/test_first_run.py checks the file against a fresh warmup, slow)."""
    import tempfile

    def dump(env) -> dict:
        out = subprocess.run([sys.executable, "-m", "opttrees.warmup", "--dump"], env=env, capture_output=True,
                             text=True, check=True)
        return json.loads(out.stdout)

    with tempfile.TemporaryDirectory(prefix="opttrees-record-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for large in (False, True):
            res = warmup(jobs=jobs, large=large, echo=echo, env=env, check=False)
            if res["failed"]:
                raise RuntimeError(f"warmup failed: {res['failed']}")
            if not large:
                base = dump(env)
        sigs = dump(env)
    large_only = {k: [s for s in v if s not in base.get(k, [])] for k, v in sigs.items()}
    large_only = {k: v for k, v in large_only.items() if v}
    with open(path + ".tmp", "w") as fh:
        fh.write(signatures_source(sigs, large_only))
    os.replace(path + ".tmp", path)
    return sigs


def signatures_source(sigs: dict[str, list[list[str]]], large: dict[str, list[list[str]]]) -> str:
    """The text of ``opttrees/_kernel_signatures.py``: one line per kernel (its name and every signature), sorted."""
    def table(d: dict) -> str:
        return "{\n" + "".join(f" {json.dumps(k)}: {json.dumps(d[k])},\n" for k in sorted(d)) + "}"

    return ('"""The signatures each numba kernel is called with by the estimators and the CLI: what `opttrees '
            'warmup` compiles\nand `opttrees warmup --check` checks (LARGE: those only fits on more than 65,536 '
            'rows call). Generated by\n`python -m opttrees.warmup --record`; do not edit."""\n\n'
            f"SIGNATURES: dict[str, list[list[str]]] = {table(sigs)}\n\n"
            f"LARGE: dict[str, list[list[str]]] = {table(large)}\n")


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="python -m opttrees.warmup")
    ap.add_argument("--group", choices=sorted(GROUPS), action="append")
    ap.add_argument("--dump", action="store_true", help="print the compiled signatures of every kernel (JSON)")
    ap.add_argument("--record", action="store_true", help="rewrite opttrees/_kernel_signatures.py (fresh cache)")
    args = ap.parse_args(argv)
    if args.dump:
        print(json.dumps(compiled_now()))
        return 0
    if args.record:
        record()
        return 0
    for g in args.group or list(GROUPS):
        run_group(g)
    return 0


if __name__ == "__main__":
    sys.exit(main())
