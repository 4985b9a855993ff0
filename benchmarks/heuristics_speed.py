"""Speed: local search with 100 restarts vs scikit-learn CART, same run, same data.

Breast cancer (n=569, p=30) and a synthetic set (n=10,000 train + 10,000 test, p=10, labels from a random
depth-5 axis-aligned tree plus 5% label noise) at depths 2, 4, 6. alpha = 0, min_samples_leaf = 1.
Reports wall times, their ratio, the local search's CPU time (process_time, all threads; robust to other jobs
on the machine) and CPU ms per restart, and training / test accuracy. Usage: python benchmarks/heuristics_speed.py [n_jobs]
"""
import os
import sys
import time

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from opttrees.data import prepare
from opttrees.heuristics import local_search


def synthetic(n=20000, p=10, depth=5, noise=0.05, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, p))
    node = np.zeros(n, dtype=int)
    for d in range(depth):
        feats = rng.integers(0, p, 2**d)
        thr = rng.uniform(0.2, 0.8, 2**d)
        pos = node - (2**d - 1)
        node = 2 * node + 1 + (X[np.arange(n), feats[pos]] >= thr[pos])
    leaf_label = np.tile([0, 1], 2**depth // 2)
    y = leaf_label[node - (2**depth - 1)]
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return X, y


def timeit(f, reps):
    """Best wall time over reps runs, the CPU time (process_time, all threads) of that run, and its output."""
    best, cpu = np.inf, np.inf
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        out = f()
        w = time.perf_counter() - t
        if w < best:
            best, cpu = w, time.process_time() - c
    return best, cpu, out


def main(n_jobs=1):
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xs, ys = synthetic()
    sets = {"breast_cancer": train_test_split(Xb, yb, test_size=0.25, random_state=0, stratify=yb),
            "synthetic 10k x 10": (Xs[:10000], Xs[10000:], ys[:10000], ys[10000:])}
    # warm the JIT cache so compile time is not counted
    local_search(prepare(Xb[:50], yb[:50]), 2, n_restarts=2, random_state=0)
    print(f"local search: 100 restarts, n_jobs={n_jobs}; CART: sklearn DecisionTreeClassifier (best of 5 runs); "
          f"load average at start {os.getloadavg()[0]:.2f}")
    print(f"{'data':20s} {'D':>2s} {'CART s':>8s} {'LS s':>8s} {'ratio':>7s} {'LS cpu s':>9s} {'cpu/rst ms':>10s} | train acc CART / LS | test acc CART / LS")
    for name, (Xt, Xe, yt, ye) in sets.items():
        d = prepare(Xt, yt)
        for D in (2, 4, 6):
            tc, _, cart = timeit(lambda: DecisionTreeClassifier(max_depth=D, random_state=0).fit(Xt, yt), 5)
            tl, cl, tree = timeit(lambda: local_search(d, D, n_restarts=100, random_state=0, n_jobs=n_jobs), 1)
            print(f"{name:20s} {D:2d} {tc:8.4f} {tl:8.3f} {tl / tc:7.0f} {cl:9.3f} {cl * 10:10.2f} | "
                  f"{np.mean(cart.predict(Xt) == yt):.4f} / {np.mean(tree.predict(Xt) == yt):.4f} | "
                  f"{np.mean(cart.predict(Xe) == ye):.4f} / {np.mean(tree.predict(Xe) == ye):.4f}", flush=True)
    print(f"load average at end {os.getloadavg()[0]:.2f} (other jobs share the cores: compare CPU columns too)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
