"""The continuous DP's root features and local-search restarts on a local 2-worker Dask cluster, against one
process (issue 43, "Beyond one machine").

Usage: .venv/bin/python benchmarks/bench_cluster.py [--rows 20000] [--ls-rows 100000] [--limit 60]
       [--depths 2 3] [--restarts 8] [--ls-depth 3] [--dp-parts 0 2] [--skip-dp] [--skip-ls]

Data: ``make_classification(n_samples=rows, n_features=10 (DP) / 20 (local search), n_informative=6 / 8,
n_classes=3, random_state=0)``, values rounded to 3 decimals (ties). Each configuration runs once, in this
process (the cluster's workers are 2 separate processes of 1 thread each, started before the clock): the DP
with ``n_jobs=1`` and ``n_jobs=2`` threads, then ``solve_dp_continuous_cluster`` on the cluster; the local
search with ``n_jobs=1`` and ``2``, then ``local_search_cluster``. A small warm-up fit first loads the numba
kernels in every process. Prints wall time, status, objective and bound, and whether the cluster's tree is the
one-process tree. On a 2-core machine two workers can at best halve the wall time of one thread, and so match
two threads; the cluster adds the task hand-off, the data's transfer and uneven parts.
"""
from __future__ import annotations

import argparse
import time
import warnings

from sklearn.datasets import make_classification


def data(rows, p, informative):
    X, y = make_classification(n_samples=rows, n_features=p, n_informative=informative, n_classes=3,
                               random_state=0)
    return X.round(3), y


def warm(client, X, y):
    from opttrees.data import prepare
    from opttrees.dp.cluster import solve_dp_continuous_cluster
    from opttrees.dp.continuous import solve_dp_continuous
    from opttrees.heuristics.cluster import local_search_cluster
    from opttrees.heuristics.local_search import local_search
    small, ys = X[:300], y[:300]
    for D in (2, 3):
        solve_dp_continuous(small, ys, max_depth=D)
        solve_dp_continuous_cluster(client, small, ys, max_depth=D)
    big = prepare(X[:70000, :3], y[:70000])          # > 65,536 rows: the 64-bit order kernels
    for d in (prepare(small, ys), big):
        local_search(d, 2, n_restarts=2, random_state=0)
        local_search_cluster(client, d, 2, n_restarts=4, random_state=0)


def row(name, wall, status, objective, bound=None, same=None):
    b = "" if bound is None else f"{bound:.6f}"
    s = "" if same is None else ("yes" if same else "NO")
    print(f"| {name} | {wall:.2f} | {status} | {objective:.6f} | {b} | {s} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--ls-rows", type=int, default=100000)
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--depths", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--restarts", type=int, default=8)
    ap.add_argument("--dp-parts", type=int, nargs="+", default=[0, 2], help="0: the default (2 per worker thread)")
    ap.add_argument("--ls-depth", type=int, default=3)
    ap.add_argument("--skip-dp", action="store_true")
    ap.add_argument("--skip-ls", action="store_true")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    from distributed import Client, LocalCluster

    from opttrees.data import prepare
    from opttrees.dp.cluster import solve_dp_continuous_cluster
    from opttrees.dp.continuous import solve_dp_continuous
    from opttrees.heuristics.cluster import local_search_cluster
    from opttrees.heuristics.core import make_problem, objective
    from opttrees.heuristics.local_search import local_search

    t = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(cluster)
    print(f"local cluster: 2 worker processes x 1 thread, started in {time.perf_counter() - t:.1f} s", flush=True)
    Xd, yd = data(a.rows, 10, 6)
    Xl, yl = data(a.ls_rows, 20, 8)
    t = time.perf_counter()
    warm(client, Xl, yl)
    print(f"warm-up (kernels loaded in every process): {time.perf_counter() - t:.1f} s", flush=True)
    try:
        if not a.skip_dp:
            for D in a.depths:
                print(f"\ncontinuous DP, {a.rows:,} x 10, 3 classes, depth {D}, time_limit={a.limit:g}\n")
                print("| run | wall s | status | objective | bound | same tree |\n|---|---|---|---|---|---|")
                ref = None
                for jobs in (1, 2):
                    t = time.perf_counter()
                    tree, r = solve_dp_continuous(Xd, yd, max_depth=D, time_limit=a.limit, n_jobs=jobs)
                    row(f"one process, n_jobs={jobs} (search s {r.timings['search']:.2f})", time.perf_counter() - t,
                        r.status, r.objective, r.bound)
                    ref = ref or (tree, r)
                for parts in a.dp_parts:
                    t = time.perf_counter()
                    tree, r = solve_dp_continuous_cluster(client, Xd, yd, max_depth=D, time_limit=a.limit,
                                                          parts=parts or None)
                    row(f"Dask, 2 workers, {r.timings['parts']} parts (parts' search s: max "
                        f"{r.timings['part_seconds_max']:.2f}, sum {r.timings['part_seconds_sum']:.2f})",
                        time.perf_counter() - t, r.status, r.objective, r.bound, tree.to_dict() == ref[0].to_dict())
        if not a.skip_ls:
            d = prepare(Xl, yl)
            prob = make_problem(d)
            print(f"\nlocal search, {a.ls_rows:,} x 20, 3 classes, depth {a.ls_depth}, {a.restarts} restarts, "
                  f"random_state=0, time_limit={a.limit:g}\n")
            print("| run | wall s | status | objective | bound | same tree |\n|---|---|---|---|---|---|")
            ref = None
            for jobs in (1, 2):
                t = time.perf_counter()
                tree = local_search(d, a.ls_depth, n_restarts=a.restarts, random_state=0, n_jobs=jobs,
                                    time_limit=a.limit)
                row(f"one process, n_jobs={jobs}", time.perf_counter() - t, "-", objective(tree, prob, 0.0))
                ref = ref or tree
            for parts in (None, a.restarts):
                t = time.perf_counter()
                tree = local_search_cluster(client, d, a.ls_depth, n_restarts=a.restarts, random_state=0,
                                            time_limit=a.limit, parts=parts)
                row(f"Dask, 2 workers, {parts or 4} parts", time.perf_counter() - t, "-", objective(tree, prob, 0.0),
                    None, tree.to_dict() == ref.to_dict())
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
