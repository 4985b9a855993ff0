"""The continuous-feature DP (``solve_dp(binarization="exact")``) against scikit-learn's CART and pystreed over
10 and 100 quantile thresholds per feature, all measured in the same run (issue 28).

Usage: .venv/bin/python benchmarks/bench_continuous.py [--quick] [--long] [--n-jobs 2] [--limit 600]
       .venv/bin/python benchmarks/bench_continuous.py --binary     # 30 small binary cases against pystreed
       .venv/bin/python benchmarks/bench_continuous.py --threads    # n_jobs 1 against 2, same tree

``--binary``: the per-call overhead on small binary data (the DL8.5 sets are not reachable offline, so 30
random binary matrices with planted structure: 100-800 rows, 10-40 columns, depths 3-4), total time of the
binary engine against pystreed's over the same cases, each method's own optimum checked equal.

Every method runs in its own forked process, so "peak MB" is that process's peak resident memory (the
parent is small when it forks). Objective: training misclassifications (classification) or squared error
(regression) of the method's tree on the raw data; "proof": the method proved its tree optimal over its own
split set (CART: never; pystreed: over its quantile thresholds only; ours: over every midpoint, the OCT
split set). ``--quick`` runs the small cases only; ``--long`` adds depth 3 at 20,000 rows and depth 4 at 2,000
rows with ``--limit`` seconds (600 by default), reporting the gap when the limit stops the search.

Data: only what ships with scikit-learn (no network here): breast cancer (569 x 30, 15,000 midpoints), wine
(178 x 13), diabetes (442 x 10, regression), and make_classification / make_regression sets with 10
features, rounded to 3 significant digits in half of the columns (ties) and with near-equal values
(differences of 1e-9 of the range) in the others.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import time

import numpy as np


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _forked(fn, *args):
    """Run fn(*args) in a forked process: (result, peak MB of that process)."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()

    def target():
        try:
            q.put((fn(*args), _peak_mb()))
        except Exception as exc:   # reported as a row, not a crash of the benchmark
            q.put(({"error": f"{type(exc).__name__}: {exc}"}, _peak_mb()))

    p = ctx.Process(target=target)
    p.start()
    out = q.get()
    p.join()
    return out


def synthetic(n, task="classification", seed=0, p=10):
    from sklearn.datasets import make_classification, make_regression

    rng = np.random.default_rng(seed)
    if task == "classification":
        X, y = make_classification(n, p, n_informative=6, n_redundant=2, flip_y=0.05, random_state=seed)
    else:
        X, y = make_regression(n, p, n_informative=6, noise=10.0, random_state=seed)
    X = X.copy()
    half = p // 2
    X[:, :half] = np.vectorize(lambda v: float(f"{v:.3g}"))(X[:, :half])          # ties
    span = X[:, half:].max(axis=0) - X[:, half:].min(axis=0)
    X[:, half:] += rng.integers(0, 3, (n, p - half)) * 1e-9 * span                # near-equal values
    return X, y


def cases(quick: bool, long: bool, only_long: bool = False):
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine

    bc = load_breast_cancer(return_X_y=True)
    wine = load_wine(return_X_y=True)
    out = [("wine", *wine, "classification", 2), ("wine", *wine, "classification", 3),
           ("breast_cancer", *bc, "classification", 2), ("breast_cancer", *bc, "classification", 3),
           ("diabetes", *load_diabetes(return_X_y=True), "regression", 2)]
    if not quick:
        out += [("synthetic 20,000x10", *synthetic(20000), "classification", 2),
                ("synthetic 5,000x10", *synthetic(5000, seed=1), "classification", 3),
                ("synthetic reg 10,000x8", *synthetic(10000, "regression", p=8), "regression", 2)]
    if only_long:
        out = []
    if long or only_long:
        out += [("synthetic 20,000x10", *synthetic(20000), "classification", 3),
                ("synthetic 2,000x10", *synthetic(2000, seed=2), "classification", 4)]
    return out


def _loss(tree, X, y, task):
    pred = tree.predict(X)
    if task == "classification":
        return float(np.sum(pred != y))
    return float(np.sum((pred - y) ** 2))


def run_ours(X, y, task, depth, limit, n_jobs):
    from opttrees.dp import RegressionTask, solve_dp

    t = time.perf_counter()
    tree, res = solve_dp(X, y, task=RegressionTask() if task == "regression" else None, max_depth=depth,
                         binarization="exact", time_limit=limit, n_jobs=n_jobs)
    dt = time.perf_counter() - t
    return {"s": dt, "obj": _loss(tree, X, y, task), "proof": res.status == "optimal",
            "gap": res.gap, "bound": res.bound * res.dp_baseline}


def run_cart(X, y, task, depth):
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    make = DecisionTreeClassifier if task == "classification" else DecisionTreeRegressor
    t = time.perf_counter()
    m = make(max_depth=depth, random_state=0).fit(X, y)
    dt = time.perf_counter() - t
    pred = m.predict(X)
    obj = float(np.sum(pred != y)) if task == "classification" else float(np.sum((pred - y) ** 2))
    return {"s": dt, "obj": obj, "proof": False}


def run_pystreed(X, y, task, depth, k, limit):
    from opttrees.data.binarizers import Binarizer

    t = time.perf_counter()
    b = Binarizer("quantile", k).fit(X)
    Xb = b.transform(X).astype(int)
    if task == "classification":
        from pystreed import STreeDClassifier
        m = STreeDClassifier(max_depth=depth, time_limit=limit).fit(Xb, y)
        dt = time.perf_counter() - t
        return {"s": dt, "obj": float(np.sum(m.predict(Xb) != y)), "proof": bool(m.fit_result.is_optimal())}
    from pystreed import STreeDRegressor
    m = STreeDRegressor(max_depth=depth, time_limit=limit).fit(Xb, y)
    dt = time.perf_counter() - t
    return {"s": dt, "obj": float(np.sum((m.predict(Xb) - y) ** 2)), "proof": bool(m.fit_result.is_optimal())}


def fmt(r, peak):
    if "error" in r:
        return f"{'error':>28s}"
    obj = f"{r['obj']:.6g}"
    proof = "yes" if r["proof"] else (f"gap {r['gap']:.1%}" if r.get("gap") not in (None, 0) else "no")
    return f"{r['s']:7.2f} s {obj:>10s} {proof:>9s} {peak:6.0f} MB"


def binary_cases():
    rng = np.random.default_rng(0)
    out = []
    for k in range(30):
        n = int(rng.integers(100, 800))
        p = int(rng.integers(10, 40))
        Xb = (rng.random((n, p)) < rng.uniform(0.2, 0.5)).astype(np.uint8)
        y = (Xb[:, 0] & Xb[:, 1] | Xb[:, 2]) ^ (rng.random(n) < 0.1)
        out.append((Xb, y.astype(int), 3 if k % 2 == 0 else 4))
    return out


def bench_binary():
    from pystreed import STreeDClassifier

    from opttrees.dp import solve_dp_binary
    cases = binary_cases()
    solve_dp_binary(*cases[0][:2], max_depth=2)
    STreeDClassifier(max_depth=2).fit(*cases[0][:2])
    ours = theirs = 0.0
    for Xb, y, d in cases:
        t = time.perf_counter()
        _, res = solve_dp_binary(Xb, y, max_depth=d)
        ours += time.perf_counter() - t
        t = time.perf_counter()
        m = STreeDClassifier(max_depth=d).fit(Xb, y)
        theirs += time.perf_counter() - t
        errs = int((m.predict(Xb) != y).sum())
        assert abs(res.objective * res.dp_baseline - errs) < 1e-9, (res.objective * res.dp_baseline, errs)
    print(f"30 binary cases (depths 3-4): opttrees {ours:.2f} s, pystreed {theirs:.2f} s, ratio {ours / theirs:.2f}; "
          "the same optimum in every case")


def bench_threads():
    from opttrees.dp import solve_dp

    for name, (X, y), d in [("synthetic 20,000x10", synthetic(20000), 2), ("synthetic 2,000x10", synthetic(2000, seed=2), 3)]:
        row = []
        trees = []
        for j in (1, 2):
            t = time.perf_counter()
            tree, res = solve_dp(X, y, max_depth=d, binarization="exact", n_jobs=j)
            row.append(time.perf_counter() - t)
            trees.append(tree.to_json())
        print(f"{name} depth {d}: n_jobs=1 {row[0]:.2f} s, n_jobs=2 {row[1]:.2f} s, speed-up {row[0] / row[1]:.2f}x, "
              f"same tree: {trees[0] == trees[1]}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", action="store_true")
    ap.add_argument("--threads", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--long", action="store_true")
    ap.add_argument("--only-long", action="store_true", help="the --long cases only")
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--limit", type=float, default=600.0)
    a = ap.parse_args()
    if a.binary:
        bench_binary()
        return
    if a.threads:
        bench_threads()
        return
    # compile / load the kernels once, outside the timed runs (each fork inherits them)
    from opttrees.dp import solve_dp
    X0, y0 = synthetic(300)
    solve_dp(X0, y0, max_depth=2, binarization="exact")
    solve_dp(X0, y0, max_depth=3, binarization="exact", min_samples_leaf=2)
    print(f"{'case':26s} {'d':>2s} | {'opttrees exact DP':^38s} | {'sklearn CART':^38s} | "
          f"{'pystreed 10 quantiles':^38s} | {'pystreed 100 quantiles':^38s}")
    for name, X, y, task, depth in cases(a.quick, a.long, a.only_long):
        limit = a.limit if depth >= 3 and len(y) > 5000 or depth >= 4 else min(a.limit, 600.0)
        rows = [_forked(run_ours, X, y, task, depth, limit, a.n_jobs), _forked(run_cart, X, y, task, depth)]
        rows += [_forked(run_pystreed, X, y, task, depth, k, limit) for k in (10, 100)]
        print(f"{name:26s} {depth:2d} | " + " | ".join(fmt(r, pk) for r, pk in rows), flush=True)


if __name__ == "__main__":
    main()
