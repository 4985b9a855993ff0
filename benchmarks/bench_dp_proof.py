"""A DP tree that reaches the DP bound, proven without a solver, against handing it to the solver (same run).

Why: with ``warm_start="auto", dp_bound="auto"`` one DP run over every midpoint gives the OCT MIO its start and
a bound. When the DP finishes, its tree reaches the bound, so the MIO has nothing to add; handing the model to
HiGHS anyway costs a hand-off (compile + load) that on thousands of rows is the slowest stage of the fit.
``opttrees.estimators.pipeline`` now proves the DP's tree without a solver (``solvers.api.prove_start``).
The "hand-off" column switches that step off (``pipeline._proven_by_dp`` patched to decline) so the solver
gets the same start and bound, as before this change.

Data: continuous tables users have: rounded normal columns (ties), one column 1e-9 away from another, a
category column one-hot encoded, labels from a noisy rule. OCT depth 2, alpha 0, HiGHS, the given time limit.

Usage: .venv/bin/python benchmarks/bench_dp_proof.py [--rows 2000 5000 10000] [--time-limit 60]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from opttrees import OptimalTreeClassifier
from opttrees.estimators import pipeline


def table(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=(n, 4)), 2)
    near = x[:, :1] + rng.choice([0.0, 1e-9], size=(n, 1))
    colour = rng.integers(0, 3, n)
    X = np.column_stack([x, near, np.eye(3)[colour]])
    y = (((x[:, 0] > 0.1) ^ (colour == 0)) | (x[:, 1] > 1.3)).astype(int)
    flip = rng.random(n) < 0.05
    return X, np.where(flip, 1 - y, y)


def fit(X, y, limit: float):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = OptimalTreeClassifier(max_depth=2, time_limit=limit, solver="highs").fit(X, y)
    res = est.solve_result_
    return time.perf_counter() - t0, res.status, res.solver, est.objective_, res.timings.get("compile", float("nan"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[2000, 5000, 10000], help="table sizes to fit")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per fit")
    ap.add_argument("--seed", type=int, default=0, help="seed of the synthetic table")
    args = ap.parse_args()
    print(f"{'rows':>6} | {'proof without solver':>34} | {'hand-off to HiGHS':>40}")
    for n in args.rows:
        X, y = table(n, args.seed)
        new = fit(X, y, args.time_limit)
        keep = pipeline._proven_by_dp
        pipeline._proven_by_dp = lambda *a, **k: None   # the step switched off: the solver gets start and bound
        try:
            old = fit(X, y, args.time_limit)
        finally:
            pipeline._proven_by_dp = keep
        print(f"{n:>6} | {new[0]:7.2f} s {new[1]:>10} obj {new[3]:.6f} {new[2]:>5} | "
              f"{old[0]:7.2f} s {old[1]:>12} obj {old[3]:.6f} {old[2]:>5} compile {old[4]:.2f} s")


if __name__ == "__main__":
    main()
