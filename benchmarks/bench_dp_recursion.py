"""SPO, OPT and policy-tree DP times (best of 3) and objectives; the OPT and policy DPs in Python and compiled.

Why: issue 29 replaced the SPO and prescriptive DPs' own recursions by ``opttrees.dp.recursion`` (trees unchanged,
time not grown), then compiled the prescriptive/policy search (``opttrees.dp.stats_kernels``). Each prescriptive
case runs both engines in the same process (``_engine="python"``: the recursion of ``opttrees.dp.recursion`` with
numpy leaf costs; ``"numba"``: the compiled search), best of 3 each after one untimed call (kernel loading), and
checks that the objectives agree. The SPO DP stays in Python (its leaf cost calls a decision oracle). To compare
two checkouts, run it once per checkout, e.g. against a ``git worktree`` of the commit before a change::

    PYTHONPATH=/path/to/other/checkout python benchmarks/bench_dp_recursion.py
    python benchmarks/bench_dp_recursion.py

``--quick`` skips the largest cases. ``--spo`` runs only the SPO DP: both engines in the same process on the
cases above and on ``bench_dp.py --spo``'s problem (shortest path n = 1000, 4x4 grid, min leaf 20, alpha 1e-4,
depths 2 and 3, 5 / 10 / 20 quantile thresholds): ``_engine="python"`` (the recursion down to depth one, one
oracle call per subproblem; also run with BLAS held to one thread, to separate that effect) against the default
(the depth-two solver), checking that the objectives agree; ``--spo-old-once`` times the Python engine once
instead of best of 3 (its depth-3, 20-threshold case takes minutes).
"""
import sys
import time

import numpy as np

from opttrees.prescriptive.dp import solve_dp_prescriptive
from opttrees.dp.spo import solve_dp_spo
from opttrees.oracles import GridShortestPath
from opttrees.data.prescriptive import prepare_prescriptive
from opttrees.prescriptive.objective import KIND_OPT, KIND_POLICY, make_problem


def prescriptive_problems(n, seed):
    rng = np.random.default_rng(seed)
    Xp = np.round(rng.normal(size=(n, 5)), 2)
    t = rng.integers(0, 3, n)
    y = Xp[:, 0] * (t == 1) - Xp[:, 1] * (t == 2) + rng.normal(0, 0.5, n)
    opt = make_problem(prepare_prescriptive(Xp, t, y), KIND_OPT, mu=0.5, n_treatment=5)
    gamma = rng.normal(size=(n, 3))
    pol = make_problem(prepare_prescriptive(Xp, t, y), KIND_POLICY, mu=1.0, n_treatment=1, gamma=gamma)
    return opt, pol


def best_of(f, k=3):
    ts, res = [], None
    for _ in range(k):
        t0 = time.perf_counter()
        _, res = f()
        ts.append(time.perf_counter() - t0)
    return min(ts), res


def spo_cases(X, C, prob, old_k=3):
    """SPO DP: the reference engine (``_engine="python"``, as is and with BLAS on one thread) against the default."""
    from threadpoolctl import threadpool_limits

    from opttrees.datasets.spo import shortest_path_data
    from opttrees.estimators.spot_mio import round_features

    D = shortest_path_data(1000, deg=6, noise=0.5, p=5, grid=(4, 4), n_test=0, seed=0)
    Xr = round_features(D.X, 3)                  # what bench_dp.py --spo's DP sees
    cases = {"spo d2 (400 rows, 3x3 grid)": (X, C, prob, dict(max_depth=2)),
             "spo d3 (400 rows, 6 thresholds)": (X, C, prob, dict(max_depth=3, n_thresholds=6))}
    for d in (2, 3):
        for q in (5, 10, 20):
            cases[f"spo sp1000 d{d} {q} thresholds"] = (Xr, D.C, D.problem, dict(max_depth=d, n_thresholds=q,
                                                                                  min_samples_leaf=20, alpha=1e-4))
    print(f"{'case':36s} {'python':>9s} {'py 1 BLAS':>9s} {'pairs':>8s} {'speed-up':>8s}  objective (all)  "
          f"oracle rows python / pairs")
    for name, (Xc, Cc, pr, kw) in cases.items():
        tp, rp = best_of(lambda: solve_dp_spo(Xc, Cc, pr, _engine="python", **kw), old_k)
        with threadpool_limits(1, user_api="blas"):
            t1, r1 = best_of(lambda: solve_dp_spo(Xc, Cc, pr, _engine="python", **kw), old_k)
        tn, rn = best_of(lambda: solve_dp_spo(Xc, Cc, pr, **kw))
        same = "same" if max(abs(rp.objective - rn.objective), abs(r1.objective - rn.objective)) <= 1e-9 else \
            f"DIFFERENT ({rp.objective:.12g}, {r1.objective:.12g})"
        print(f"{name:36s} {tp:8.3f}s {t1:8.3f}s {tn:7.3f}s {tp / tn:7.1f}x  {rn.objective:.9f} {same}  "
              f"{rp.timings['oracle_rows']} / {rn.timings['oracle_rows']}", flush=True)


def main(quick=False):
    rng = np.random.default_rng(0)
    prob = GridShortestPath(3, 3)
    X = rng.normal(size=(400, 5))
    B = rng.normal(size=(5, prob.n_decisions))
    C = np.exp(X @ B / 3) + rng.random((400, prob.n_decisions))
    spo_cases(X, C, prob, old_k=1 if "--spo-old-once" in sys.argv else 3)
    if "--spo" in sys.argv:
        return

    # the 1,000-row problems as the first version of this script drew them (same stream of ``rng``)
    Xp = np.round(rng.normal(size=(1000, 5)), 2)
    t = rng.integers(0, 3, 1000)
    y = Xp[:, 0] * (t == 1) - Xp[:, 1] * (t == 2) + rng.normal(0, 0.5, 1000)
    pp = make_problem(prepare_prescriptive(Xp, t, y), KIND_OPT, mu=0.5, n_treatment=5)
    pol = make_problem(prepare_prescriptive(Xp, t, y), KIND_POLICY, mu=1.0, n_treatment=1,
                       gamma=rng.normal(size=(1000, 3)))
    pp5, pol5 = prescriptive_problems(5000, seed=1)
    cases = {
        "opt d3 (1000 rows)": (pp, dict(max_depth=3)),
        "policy d3 (1000 rows)": (pol, dict(max_depth=3)),
        "opt d2 (5000 rows)": (pp5, dict(max_depth=2)),
        "opt d3 (5000 rows)": (pp5, dict(max_depth=3)),
        "policy d3 (5000 rows)": (pol5, dict(max_depth=3)),
        "opt d3 (1000 rows, 20 thresholds)": (pp, dict(max_depth=3, n_thresholds=20)),
    }
    if not quick:
        cases["opt d4 (1000 rows, 5 thresholds)"] = (pp, dict(max_depth=4, n_thresholds=5))
        cases["policy d4 (1000 rows, 5 thresholds)"] = (pol, dict(max_depth=4, n_thresholds=5))
    print(f"{'case':44s} {'python':>9s} {'compiled':>9s} {'speed-up':>8s}  objective (both)")
    for name, (p, kw) in cases.items():
        solve_dp_prescriptive(p, max_depth=1)          # load the kernels (not timed)
        tp, rp = best_of(lambda: solve_dp_prescriptive(p, _engine="python", **kw))
        tc, rc = best_of(lambda: solve_dp_prescriptive(p, **kw))
        same = "same" if abs(rp.objective - rc.objective) <= 1e-9 else f"DIFFERENT ({rp.objective:.12g})"
        print(f"{name:44s} {tp:8.3f}s {tc:8.3f}s {tp / tc:7.1f}x  {rc.objective:.9f} {same}  {rc.status}, "
              f"{rc.timings['binary_columns']} columns", flush=True)


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
