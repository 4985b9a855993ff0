"""opttrees' exact DP against the specialised peers, side by side in one run (issue 39): ConTree (``pycontree``, the
ConTree authors' C++), pystreed (STreeD, on binary tables) and scikit-learn's CART.

Usage: .venv/bin/python benchmarks/bench_peers.py [--depth 2] [--limit 60] [--quick | --names A B ...] [--binary]
(needs the ``bench`` extra: ``pip install -e ".[bench]"``)

Each (method, data) runs in a fresh Python process that fits twice: "first" is the first fit in the process
(imports done, but numba's cached kernels or the peer's library loaded on the way), "steady" the second fit of
the same data. Objective: training misclassifications of the method's tree (ConTree and opttrees are exact over
every midpoint, so their proven optima must agree; a mismatch is printed as "MISMATCH").

Data (all offline): scikit-learn's iris, wine, breast cancer and digits (64 features of 17 values, 10 classes),
and ``make_classification`` tables with 2-8 classes, 1,000-20,000 rows, values rounded to 3 decimals (ties).
``--binary``: 30 random binary tables (100-800 rows, 20-150 columns, planted structure, depths 3-4) with
pystreed, the DL8.5-style comparison of the issue.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

RUNNER = textwrap.dedent("""
    import json, sys, time, warnings
    warnings.simplefilter("ignore")
    import numpy as np
    spec = json.loads(sys.argv[1])
    sys.path.insert(0, "benchmarks")
    from bench_peers import data_of
    X, y = data_of(spec["data"])
    D, limit, method = spec["depth"], spec["limit"], spec["method"]

    def fit():
        t = time.perf_counter()
        if method == "opttrees":
            from opttrees.dp import solve_dp
            tree, res = solve_dp(X, y, max_depth=D, time_limit=limit)
            pred, status = tree.predict(X), res.status
            extra = res.plan.get("engine", res.timings.get("engine"))
        elif method == "contree":
            from pycontree import ConTree
            m = ConTree(max_depth=D, time_limit=limit).fit(X, y)
            pred, status, extra = m.predict(X), "optimal?", ""
        elif method == "pystreed":
            from pystreed import STreeDClassifier
            m = STreeDClassifier(max_depth=D, time_limit=limit, cost_complexity=0.0).fit(X.astype(int), y)
            pred, status, extra = m.predict(X.astype(int)), "optimal?", ""
        else:
            from sklearn.tree import DecisionTreeClassifier
            m = DecisionTreeClassifier(max_depth=D, random_state=0).fit(X, y)
            pred, status, extra = m.predict(X), "greedy", ""
        return time.perf_counter() - t, int((np.asarray(pred) != y).sum()), status, extra

    t1, e1, s1, x1 = fit()
    t2, e2, s2, x2 = fit()
    print(json.dumps({"first": t1, "steady": t2, "errors": e2, "status": s2, "engine": x2}))
""")


def data_of(name: str):
    import numpy as np
    from sklearn import datasets

    if name in ("iris", "wine", "breast_cancer", "digits"):
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
        return np.asarray(X, float), np.asarray(y, int)
    if name.startswith("binary"):
        _, n, p, seed = name.split("-")
        rng = np.random.default_rng(int(seed))
        X = rng.integers(0, 2, (int(n), int(p))).astype(float)
        y = ((X[:, 0] == 1) & (X[:, 1] == 0) | (X[:, 2] == 1) & (X[:, 3] == 1)).astype(int)
        return X, np.where(rng.random(int(n)) < 0.1, 1 - y, y)
    _, n, p, K = name.split("-")
    X, y = datasets.make_classification(n_samples=int(n), n_features=int(p), n_informative=min(int(p), 6),
                                        n_classes=int(K), n_clusters_per_class=1, random_state=0)
    return X.round(3), y


def run(method, data, depth, limit):
    spec = json.dumps({"method": method, "data": data, "depth": depth, "limit": limit})
    out = subprocess.run([sys.executable, "-c", RUNNER, spec], capture_output=True, text=True, timeout=6 * limit + 120)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"error": (out.stderr or out.stdout)[-300:]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--binary", action="store_true")
    ap.add_argument("--names", nargs="+", help="these data sets only (names as data_of reads them)")
    args = ap.parse_args()
    if args.binary:
        import numpy as np
        rng = np.random.default_rng(0)
        cases = [(f"binary-{int(rng.integers(100, 800))}-{int(rng.integers(20, 150))}-{k}", 3 + k % 2) for k in range(30)]
        methods = ("opttrees", "pystreed")
    else:
        names = ["iris", "wine", "breast_cancer", "digits", "mc-1000-10-2", "mc-2000-19-7", "mc-5000-10-5",
                 "mc-10000-10-4", "mc-20000-10-3", "mc-20000-10-8"]
        if args.quick:
            names = names[:5]
        if args.names:
            names = args.names
        cases = [(n, args.depth) for n in names]
        methods = ("opttrees", "contree", "cart")
    totals = {m: [0.0, 0.0] for m in methods}
    print(f"{'data':<22}{'D':>2} " + "".join(f"{m + ' first/steady (errors)':>38}" for m in methods))
    for data, depth in cases:
        res = {m: run(m, data, depth, args.limit) for m in methods}
        cells = []
        for m in methods:
            r = res[m]
            if "error" in r:
                cells.append(f"{'error':>38}")
                continue
            totals[m][0] += r["first"]
            totals[m][1] += r["steady"]
            eng = f" [{r['engine']}]" if r.get("engine") else ""
            if m == "opttrees" and r.get("status") != "optimal":
                eng += f" {r.get('status')}"
            cells.append(f"{r['first']:>10.2f}/{r['steady']:<7.2f} ({r['errors']}){eng:>12}")
        ours, peer = res.get("opttrees", {}), res.get("contree", res.get("pystreed", {}))
        flag = ""
        if ours.get("status") == "optimal" and "errors" in peer and peer["errors"] != ours["errors"]:
            flag = "  MISMATCH" if peer["errors"] < ours["errors"] else ""
        print(f"{data:<22}{depth:>2} " + "".join(cells) + flag, flush=True)
    print("total first / steady: " + ", ".join(f"{m} {a:.2f} / {b:.2f} s" for m, (a, b) in totals.items()))


if __name__ == "__main__":
    main()
