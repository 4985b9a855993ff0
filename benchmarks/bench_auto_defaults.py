"""Old defaults (CART start, no bound) against the new ``"auto"`` defaults (DP start and bound when they fit).

OptimalTreeClassifier(method="mio", solver="highs") on iris, wine and breast cancer at depths 2 and 3 under
the same time limit: status, proof, objective, bound, fit seconds, and the plan the "auto" rule chose.
Run: python benchmarks/bench_auto_defaults.py [time_limit=60]
"""
import sys
import time
import warnings

from sklearn.datasets import load_breast_cancer, load_iris, load_wine

from opttrees import OptimalTreeClassifier

SETS = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer}
CONFIGS = {"old (greedy, no bound)": dict(warm_start="greedy", dp_bound=False), "new (auto)": {}}


def main(time_limit: float = 60.0) -> None:
    print("| data | depth | defaults | status | proof | objective | bound | fit s | plan |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, load in SETS.items():
        X, y = load(return_X_y=True)
        for depth in (2, 3):
            for label, kw in CONFIGS.items():
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    clf = OptimalTreeClassifier(max_depth=depth, solver="highs", time_limit=time_limit, **kw).fit(X, y)
                r = clf.solve_result_
                bound = "-" if r.bound is None else f"{r.bound:.4f}"
                print(f"| {name} | {depth} | {label} | {r.status} | {r.proof or '-'} | {clf.objective_:.4f} | {bound} | "
                      f"{time.perf_counter() - t0:.1f} | {r.plan.get('why', '') or '-'} |", flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0)
