"""What the scikit-learn attributes cost (issue 41): the node statistics and importances every fit now records,
``to_sklearn()``, and predicting with the converted tree against ours.

For n rows x 10 features (synthetic, a depth-``d`` greedy tree, classification and squared/absolute regression):
the fit's total time, the time of the added end-of-fit step (``record_node_stats``: routing the training rows,
per-node impurity, importances) measured by re-running it on the fitted estimator, ``to_sklearn()``, and
``predict`` of both trees on the training rows (median of 3).

    PYTHONPATH=. python benchmarks/bench_sklearn_export.py [--rows 10000 100000] [--depth 3 5]

Timings depend on the machine's load (2 shared cores here); see benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from opttrees import OptimalTreeClassifier, OptimalTreeRegressor  # noqa: E402
from opttrees.estimators.common import record_node_stats  # noqa: E402


def timed(f, repeat=3):
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--depth", type=int, nargs="+", default=[3, 5])
    args = ap.parse_args()
    print("| task | rows | depth | leaves | fit s | node stats s | to_sklearn s | predict ours s | predict sklearn s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.rows:
        rng = np.random.default_rng(0)
        X = rng.normal(size=(n, 10))
        y_cls = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
        y_reg = X[:, 0] * 2 + np.sin(X[:, 1]) + 0.1 * rng.normal(size=n)
        for d in args.depth:
            for task, make, y, crit in (("classification", lambda d=d: OptimalTreeClassifier(max_depth=d, method="greedy"),
                                         y_cls, "gini"),
                                        ("regression squared", lambda d=d: OptimalTreeRegressor(max_depth=d, method="greedy"),
                                         y_reg, "squared_error"),
                                        ("regression absolute", lambda d=d: OptimalTreeRegressor(
                                            max_depth=d, method="greedy", loss="absolute"), y_reg, "absolute_error")):
                est = make().fit(X, y)        # compile / warm
                fit = timed(lambda: make().fit(X, y), 1)
                codes = np.searchsorted(np.unique(y), y) if crit == "gini" else y
                stats = timed(lambda: record_node_stats(est, X, codes, None, crit, 3 if crit == "gini" else None))
                conv = timed(est.to_sklearn)
                sk = est.to_sklearn()
                ours = timed(lambda: est.predict(X))
                theirs = timed(lambda: sk.predict(X))
                assert np.array_equal(sk.predict(X), est.predict(X))
                print(f"| {task} | {n:,} | {d} | {est.get_n_leaves()} | {fit:.3f} | {stats:.4f} | {conv:.4f} | "
                      f"{ours:.4f} | {theirs:.4f} |")


if __name__ == "__main__":
    main()
