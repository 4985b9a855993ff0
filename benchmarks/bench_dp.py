"""opttrees.dp (numba STreeD) against pystreed 1.4.0 on the same binary matrices, in one run; and the DP as
warm start and bound of the OCT MIO and against the SPOT MILP (issue 11 item 6).

Usage: .venv/bin/python benchmarks/bench_dp.py [--depths 2 3] [--depth4-limit 300] [--skip-pystreed] [--ablation]
       .venv/bin/python benchmarks/bench_dp.py --oct-proofs [--depths 2 3] [--time-limit 60]
       .venv/bin/python benchmarks/bench_dp.py --spo [--depths 2 3] [--time-limit 120]

``--ablation``: breast cancer at depth 3 with each speed feature of the engine switched off in turn.

``--oct-proofs``: time to proof of the OCT MIO (HiGHS, alpha 0, min leaf 1) on iris, wine and breast cancer,
(a) from the CART start, (b) from CART with the DP bound, (c) from the DP start, (d) DP start and bound. The DP
runs over every midpoint (the MIO's own split set: its optimum is the OCT optimum and a valid bound); where
that is too large for the DP (breast cancer: 15,310 midpoints) the start comes from 10 quantile thresholds
per feature and there is no bound. Times exclude the Pyomo build (the same in every row, printed once).

``--spo``: shortest path (n = 1000, 5 features, deg 6, noise 0.5, 4x4 grid, min leaf 20, alpha 1e-4): the SPO
DP over quantile thresholds against the SPOT MILP from the greedy start, on the MILP's own objective (its
rounded features): DP time and objective, and when the MILP's incumbent first reaches the DP's objective.

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
from opttrees.data.binarizers import Binarizer


def datasets():
    X, y = load_breast_cancer(return_X_y=True)
    yield "breast_cancer q10", Binarizer(n_thresholds=10).fit_transform(X).astype(np.uint8), y
    from opttrees.datasets import load_dataset
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
    ap.add_argument("--oct-proofs", action="store_true")
    ap.add_argument("--spo", action="store_true")
    ap.add_argument("--datasets", nargs="+", default=["iris", "wine", "breast_cancer"])
    ap.add_argument("--time-limit", type=float, default=None)
    a = ap.parse_args()
    if a.oct_proofs:
        oct_proofs([d for d in a.depths if d <= 3], a.time_limit or 60.0, a.datasets)
        return
    if a.spo:
        spo_against_milp([d for d in a.depths if d <= 3], a.time_limit or 120.0)
        return
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


def _oct_data(name):
    from sklearn.datasets import load_iris, load_wine
    loader = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer}[name]
    return loader(return_X_y=True)


def oct_proofs(depths, limit, names):
    """Time to proof of the OCT MIO with and without the DP start and the DP bound."""
    from opttrees.data.prepared import prepare
    from opttrees.dp.bound import dp_for_formulation
    from opttrees.errors import InputError
    from opttrees.formulations.oct import OCT
    from opttrees.heuristics.cart import cart_classifier_tree
    from opttrees.solvers import solve

    print(f"OCT MIO (HiGHS, alpha 0, min leaf 1), solver time limit {limit:g} s; 'time' = DP + hand-off + solve "
          "(build excluded)", flush=True)
    print(f"{'dataset':14s} {'d':>2s} {'start':>6s} {'bound':>6s} {'build s':>8s} {'DP s':>6s} {'time s':>7s} "
          f"{'status':>11s} {'proof':>9s} {'objective':>9s} {'bound':>9s} {'gap':>7s}  DP split set", flush=True)
    for name in names:
        X, y = _oct_data(name)
        data = prepare(X, y)
        for d in depths:
            for start_kind, use_bound in (("cart", False), ("cart", True), ("dp", False), ("dp", True)):
                t = time.perf_counter()
                form = OCT(data, d, 1, 0.0)
                build = time.perf_counter() - t
                t = time.perf_counter()
                run, split_set = None, "-"
                if start_kind == "dp" or use_bound:
                    try:        # every midpoint: the MIO's own split set (start and bound)
                        run = dp_for_formulation(form, "midpoints", time_limit=limit)
                    except InputError:      # too many columns for the DP: quantile thresholds, a start only
                        run = dp_for_formulation(form, "quantile", 10, time_limit=limit)
                    split_set = run.details["split_set"]
                dp_time = time.perf_counter() - t if run is not None else 0.0
                if use_bound and run.bound is None:
                    print(f"{name:14s} {d:2d} {start_kind:>6s} {'n/a':>6s}  no DP bound: the DP over every midpoint "
                          f"does not fit in memory (start from {split_set})", flush=True)
                    continue
                start = run.tree if start_kind == "dp" else cart_classifier_tree(data, d, 1, 0.0, 0)
                t = time.perf_counter()
                res = solve(form, "highs", time_limit=limit, warm_start=start,
                            objective_bound=run.bound if use_bound else None)
                form.extract()
                total = dp_time + time.perf_counter() - t
                print(f"{name:14s} {d:2d} {start_kind:>6s} {'dp' if use_bound else '-':>6s} {build:8.2f} {dp_time:6.2f} "
                      f"{total:7.2f} {res.status:>11s} {str(res.proof):>9s} {res.objective:9.5f} {res.bound:9.5f} "
                      f"{res.gap:7.2%}  {split_set}", flush=True)


def spo_against_milp(depths, limit, n=1000):
    """SPO DP (quantile thresholds) against the SPOT MILP from greedy: time to an equal or better objective."""
    from opttrees.dp.bound import dp_for_formulation
    from opttrees.estimators.spot_mio import round_features
    from opttrees.datasets.spo import shortest_path_data
    from opttrees.data.costs import prepare_costs
    from opttrees.formulations.spot import SPOTFormulation
    from opttrees.solvers import solve
    from opttrees.spo import grow_spo_tree
    from opttrees.spo.objective import spot_norm
    from opttrees.spo.pruning import prune_alpha

    D = shortest_path_data(n, deg=6, noise=0.5, p=5, grid=(4, 4), n_test=0, seed=0)
    pr, C = D.problem, D.C
    Xr = round_features(D.X, 3)                  # what the MILP sees (SPOTree's x_precision=3)
    alpha, nmin = 1e-4, 20
    norm = spot_norm(pr, C, np.ones(n))
    print(f"SPO shortest path n={n}: objectives on the MILP's data (features rounded to 3 decimals); MILP limit "
          f"{limit:g} s", flush=True)
    for d in depths:
        t = time.perf_counter()
        greedy = prune_alpha(grow_spo_tree(pr, Xr, C, max_depth=d, min_samples_leaf=nmin), alpha, norm)
        t_greedy = time.perf_counter() - t
        t = time.perf_counter()
        form = SPOTFormulation(prepare_costs(pr, Xr, C), pr, max_depth=d, min_samples_leaf=nmin, alpha=alpha)
        build = time.perf_counter() - t
        g_obj = form.tree_objective(greedy)
        runs = {}
        for q in (5, 10, 20):
            t = time.perf_counter()
            r = dp_for_formulation(form, "quantile", q, time_limit=limit)
            runs[q] = r
            print(f"  depth {d}: DP {q:2d} thresholds/feature {time.perf_counter() - t:7.2f} s  objective "
                  f"{r.objective:.5f}  ({r.result.status}, feasible start: {r.start_feasible})", flush=True)
        target = runs[10].objective
        print(f"  depth {d}: greedy SPOT {t_greedy:.2f} s objective {g_obj:.5f}; MILP build {build:.2f} s", flush=True)
        for label, start in (("greedy start", greedy), ("DP start (10 thr.)", runs[10].tree)):
            f = form if label == "greedy start" else SPOTFormulation(prepare_costs(pr, Xr, C), pr, max_depth=d,
                                                                     min_samples_leaf=nmin, alpha=alpha)
            t = time.perf_counter()
            res = solve(f, "highs", time_limit=limit, warm_start=start)
            wall = time.perf_counter() - t
            offset = res.timings.get("compile", 0.0) + res.timings.get("load", 0.0)
            reach = next((offset + i.time for i in res.trace if i.primal <= target + 1e-9), None)
            print(f"  depth {d}: MILP from {label:18s} {wall:7.2f} s {res.status:>10s} objective {res.objective:.5f} "
                  f"bound {res.bound if res.bound is not None else float('nan'):.5f}  reaches the DP's "
                  f"{target:.5f}: {'never' if reach is None else f'{reach:.1f} s'} (hand-off {offset:.1f} s)",
                  flush=True)


if __name__ == "__main__":
    main()
