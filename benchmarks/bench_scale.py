"""The 100,000-row user (issue 43): time limits that hold, never worse than CART, a default that picks a route
that can finish, and peak memory, against scikit-learn's CART and ConTree (``pycontree``) on the same data.

Usage: .venv/bin/python benchmarks/bench_scale.py [--rows 100000] [--limit 60] [--quick]
(ConTree needs the ``bench`` extra: ``pip install -e ".[bench]"``; its rows are skipped when it is missing)

Data: ``make_classification(n_samples=rows, n_features=20, n_informative=8, n_classes=3, random_state=0)``,
values rounded to 3 decimals (ties), the issue's table. Each fit runs in its own fresh process (imports, data and
numba's cached kernels loaded before the clock starts: "wall" is the fit alone) and reports wall time, status,
training accuracy, the process's peak resident memory, and for the DP its memory estimate beside the measured
peak. Besides the defaults, ``method="dp"`` at depth 3 runs with 5, 30 and the full limit: a time limit holds
when wall <= 1.05 x limit.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

RUNNER = textwrap.dedent("""
    import json, resource, sys, time, warnings
    warnings.simplefilter("ignore")
    import numpy as np
    from sklearn.datasets import make_classification
    spec = json.loads(sys.argv[1])
    X, y = make_classification(n_samples=spec["rows"], n_features=20, n_informative=8, n_classes=3, random_state=0)
    X = X.round(3)
    D, limit, method = spec["depth"], spec["limit"], spec["method"]
    out = {}
    if method == "cart":
        from sklearn.tree import DecisionTreeClassifier
        t = time.perf_counter()
        m = DecisionTreeClassifier(max_depth=D, random_state=0).fit(X, y)
        out["status"] = "greedy"
    elif method == "contree":
        from pycontree import ConTree
        t = time.perf_counter()
        m = ConTree(max_depth=D, time_limit=limit).fit(X, y)
        out["status"] = "optimal?"
    else:
        from opttrees import OptimalTreeClassifier
        kw = {} if method == "default" else {"method": method}
        m = OptimalTreeClassifier(max_depth=D, time_limit=limit, **kw)
        OptimalTreeClassifier(max_depth=1, time_limit=limit, **kw).fit(X[:200], y[:200])   # kernels loaded
        t = time.perf_counter()
        m.fit(X, y)
        r = m.solve_result_
        if r is None:      # the local search: no solver result (fit_status_ says whether the limit stopped it)
            out.update(status=getattr(m, "fit_status_", "heuristic"), bound=None, route=method)
        else:
            out.update(status=r.status, bound=r.bound, route=r.plan.get("route") or r.plan.get("engine") or method)
        if r is not None and method == "dp" and r.plan.get("engine", r.timings.get("engine")) == "continuous":
            from opttrees.dp.continuous import _memory_estimate
            out["estimate_mb"] = _memory_estimate(len(y), X.shape[1], D, 1) / 2**20
    out["wall"] = time.perf_counter() - t
    out["accuracy"] = float((np.asarray(m.predict(X)) == y).mean())
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
""")


def run(method: str, depth: int, limit: float, rows: int) -> dict:
    spec = json.dumps({"method": method, "depth": depth, "limit": limit, "rows": rows})
    try:
        out = subprocess.run([sys.executable, "-c", RUNNER, spec], capture_output=True, text=True,
                             timeout=4 * limit + 300)
    except subprocess.TimeoutExpired:
        return {"error": f"no answer in {4 * limit + 300:.0f} s"}
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"error": (out.stderr or out.stdout).strip().splitlines()[-1][-160:] if (out.stderr or out.stdout)
                else f"exit {out.returncode}"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--quick", action="store_true", help="depth 2 only, no ConTree, 5 s DP limit only")
    a = ap.parse_args()
    L = a.limit
    try:
        import pycontree  # noqa: F401
        contree = not a.quick
    except ImportError:
        contree = False
    cases = [("cart", 2, L), ("cart", 3, L)]
    if contree:
        cases += [("contree", 2, L), ("contree", 3, L)]
    cases += [("default", 2, L), ("dp", 2, L)]
    if not a.quick:
        cases += [("default", 3, L), ("dp", 3, 5.0), ("dp", 3, 30.0), ("dp", 3, L), ("local-search", 4, L)]
    print(f"{a.rows} x 20, 3 classes, values rounded to 3 decimals; each fit in its own process")
    print("| fit | depth | time_limit | wall s | status | route | accuracy | bound | peak MB | DP estimate MB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for method, depth, limit in cases:
        r = run(method, depth, limit, a.rows)
        if "error" in r:
            print(f"| {method} | {depth} | {limit:g} | error: {r['error']} |||||||", flush=True)
            continue
        held = "" if method in ("cart", "contree") or r["wall"] <= 1.05 * limit else " (over)"
        bound = f"{r['bound']:.4f}" if r.get("bound") is not None else ""
        est = f"{r['estimate_mb']:.0f}" if "estimate_mb" in r else ""
        print(f"| {method} | {depth} | {limit:g} | {r['wall']:.1f}{held} | {r['status']} | {r.get('route', '')} | "
              f"{r['accuracy']:.4f} | {bound} | {r['peak_mb']:.0f} | {est} |", flush=True)


if __name__ == "__main__":
    main()
