"""Greedy SPOT (depth 3) on n = 10,000 noisy shortest-path rows vs scikit-learn's multi-output CART regressor.

Same data, same run. scikit-learn's DecisionTreeRegressor (Cython, MSE on the 24 costs, all thresholds) is
the speed baseline; our MSE criterion on the same engine and greedy SPOT (99 quantile thresholds per feature
and node, all candidate children of a node in one batched grid-DP oracle call) are timed next to it, and the
test normalised extra travel time of each is printed (sklearn leaves decide w*(leaf mean) as well).

    python benchmarks/bench_spot_greedy.py [--n 10000] [--depth 3] [--repeats 3]
"""
from __future__ import annotations

import argparse
import time

from sklearn.tree import DecisionTreeRegressor

from opttrees.datasets.spo import shortest_path_data
from opttrees.spo import grow_spo_tree, normalized_extra_cost


def best_of(f, repeats):
    ts, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t0)
    return min(ts), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    print(f"n={a.n}, depth={a.depth}, 4x4 grid (d=24), p=5, min leaf 20; best of {a.repeats}")
    print(f"{'data':>14} {'method':>26} {'seconds':>8} {'vs sklearn':>10} {'leaves':>6} {'test NETT':>9}")
    for deg, noise in ((2, 0.5), (10, 0.5)):
        D = shortest_path_data(a.n, deg=deg, noise=noise, n_test=5000, seed=0)
        pr = D.problem
        t_sk, sk = best_of(lambda: DecisionTreeRegressor(max_depth=a.depth, min_samples_leaf=20,
                                                         random_state=0).fit(D.X, D.C), a.repeats)
        sk_dec = pr.solve(sk.predict(D.X_test))[0]
        rows = [("sklearn CART (MSE)", t_sk, sk.get_n_leaves(), normalized_extra_cost(pr, sk_dec, D.C_test))]
        for name, crit, q in (("opttrees CART (MSE, q=.01)", "mse", 0.01), ("greedy SPOT (q=.01)", "spo", 0.01),
                              ("greedy SPOT (all values)", "spo", None)):
            t, tree = best_of(lambda: grow_spo_tree(pr, D.X, D.C, max_depth=a.depth, min_samples_leaf=20,
                                                    criterion=crit, quantile_step=q), a.repeats)
            rows.append((name, t, tree.n_leaves, normalized_extra_cost(pr, tree.predict(D.X_test), D.C_test)))
        for name, t, leaves, nett in rows:
            print(f"{f'deg={deg} e={noise}':>14} {name:>26} {t:8.3f} {t / t_sk:9.1f}x {leaves:6d} {nett:9.4f}")


if __name__ == "__main__":
    main()
