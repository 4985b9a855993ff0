"""opttrees.dp (numba STreeD) against pystreed 1.4.0 on the same binary matrices, in one run.

Usage: .venv/bin/python benchmarks/bench_dp.py [--depths 2 3] [--depth4-limit 300] [--skip-pystreed] [--ablation]

``--ablation``: breast cancer at depth 3 with each speed feature of the engine switched off in turn.

Datasets: breast cancer with 10 quantile thresholds per feature (opttrees Binarizer), balance-scale one-hot,
and a 10,000-row synthetic set (20 features x 5 quantile thresholds). Prints, per (dataset, depth): objective
(errors), time, proof, and the ratio to pystreed's time; peak memory of each run (tracemalloc for opttrees'
numpy/numba buffers is not complete, so the process's max RSS growth is printed too).
"""
from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import OneHotEncoder

from opttrees.dp import solve_dp_binary
from opttrees.encoding import Binarizer


def datasets():
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast_cancer q10", Binarizer(n_thresholds=10).fit_transform(X).astype(np.uint8), y
    from opttrees.experiments.datasets import load_dataset
    Xd, yd = load_dataset("balance-scale")
    Xo = OneHotEncoder(sparse_output=False).fit_transform(np.asarray(Xd)).astype(np.uint8)
    yield "balance-scale one-hot", Xo, np.unique(np.asarray(yd), return_inverse=True)[1]
    rng = np.random.default_rng(0)
    Xs = rng.normal(size=(10_000, 20))
    ys = ((Xs[:, 0] > 0.3) ^ (Xs[:, 1] * Xs[:, 2] > 0.1) ^ (rng.random(10_000) < 0.1)).astype(int)
    yield "synthetic n=10000", Binarizer(n_thresholds=5).fit_transform(Xs).astype(np.uint8), ys


def max_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_ours(Xb, y, d, limit):
    t = time.perf_counter()
    tree, res = solve_dp_binary(Xb, y, max_depth=d, time_limit=limit)
    return time.perf_counter() - t, res.objective * res.dp_baseline, res.proven_optimal, res


def run_pystreed(Xb, y, d, limit):
    from pystreed import STreeDClassifier
    t = time.perf_counter()
    m = STreeDClassifier(max_depth=d, time_limit=limit).fit(Xb.astype(int), y)
    dt = time.perf_counter() - t
    return dt, int((m.predict(Xb.astype(int)) != y).sum()), bool(m.fit_result.is_optimal())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--depths", type=int, nargs="+", default=[2, 3, 4])
    ap.add_argument("--depth4-limit", type=float, default=300.0)
    ap.add_argument("--skip-pystreed", action="store_true")
    ap.add_argument("--ablation", action="store_true")
    a = ap.parse_args()
    t = time.perf_counter()
    solve_dp_binary(np.eye(4, dtype=np.uint8), np.array([0, 1, 0, 1]), max_depth=3)
    print(f"first call (numba compile or cache load): {time.perf_counter() - t:.2f} s; "
          f"max RSS after imports and first call: {max_rss_mb():.0f} MB")
    if a.ablation:
        ablation()
        return
    print(f"{'dataset':24s} {'d':>2s} {'cols':>5s} {'ours s':>8s} {'obj':>7s} {'proof':>5s} "
          f"{'pystreed s':>10s} {'obj':>5s} {'proof':>5s} {'ratio':>6s} {'maxRSS MB':>9s}  counters")
    for name, Xb, y in datasets():
        for d in a.depths:
            limit = a.depth4_limit if d >= 4 else 600.0
            ts, obj, proven, res = run_ours(Xb, y, d, limit)
            rss = max_rss_mb()
            if a.skip_pystreed:
                ps = (float("nan"), -1, False)
            else:
                ps = run_pystreed(Xb, y, d, limit)
            ratio = ts / ps[0] if ps[0] == ps[0] and ps[0] > 0 else float("nan")
            c = res.timings
            print(f"{name:24s} {d:2d} {Xb.shape[1]:5d} {ts:8.3f} {obj:7.1f} {str(proven):>5s} {ps[0]:10.3f} "
                  f"{ps[1]:5d} {str(ps[2]):>5s} {ratio:6.2f} {rss:9.0f}  subproblems={c['subproblems']} "
                  f"d2={c['depth_two_calls']} hits={c['cache_hits']}", flush=True)


def ablation(limit=120.0):
    name, Xb, y = next(datasets())
    solve_dp_binary(Xb, y, max_depth=3)            # warm-up: the first full-size run pays page faults and loads
    for kw in [{}, {"use_similarity_bound": False}, {"use_upper_bound": False}, {"use_lower_bound": False},
               {"use_dataset_cache": False, "use_branch_cache": True}, {"use_dataset_cache": False},
               {"iterative_deepening": False}, {"use_depth_two": False}]:
        t = time.perf_counter()
        _, res = solve_dp_binary(Xb, y, max_depth=3, time_limit=limit, **kw)
        c = res.timings
        print(f"{name} d=3 {str(kw or 'default'):55s} {time.perf_counter() - t:8.2f} s  {res.status:10s} "
              f"errors={res.objective * res.dp_baseline:.0f} subproblems={c['subproblems']} d2={c['depth_two_calls']} "
              f"sim_prunes={c['similarity_prunes']} bound_prunes={c['bound_prunes']}", flush=True)


if __name__ == "__main__":
    main()
