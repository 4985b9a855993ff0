"""The SPOT paper's Figure 3 setting at reduced scale: noisy shortest path on a 4 x 4 grid, n = 200.

For each (deg, noise) in {2, 10} x {0, 0.25} and each seed: the first 20% of the 200 rows are the validation
set (as in the paper's code), the rest train; 1000 test rows. Methods, all with minimum leaf size 20:
CART (MSE splits, MSE pruning on validation, leaves decide w*(mean)), greedy SPOT (SPO splits and pruning),
SPOT MILP (depths 1-3, warm-started by greedy, time limit per solve, then pruned on validation like the
paper's SPO2CART step), CART forest and SPO forest (100 trees, unrestricted, max_features tuned on validation
over {2, 3, 4, 5}). Metric: test normalised extra travel time.

    python examples/spo_shortest_path.py --seeds 5 --time-limit 10 --out results/spo_shortest_path
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

# numpy, pandas, joblib and opttrees are imported where they are used, so that --help answers at once
DEPTHS = [1, 2, 3, None]


def run_one(deg, noise, seed, time_limit, n_trees, mio_depths, solver):
    from opttrees.estimators.spo import SPOForest, SPOTree
    from opttrees.datasets.spo import shortest_path_data
    from opttrees.spo import normalized_extra_cost

    D = shortest_path_data(200, deg=deg, noise=noise, p=5, n_test=1000, seed=1000 * deg + 100 * int(noise * 100) + seed)
    pr = D.problem
    nv = 40
    Xv, Cv, Xtr, Ctr = D.X[:nv], D.C[:nv], D.X[nv:], D.C[nv:]
    rows = []

    def rec(method, depth, est, t0, **kw):
        rows.append(dict(deg=deg, noise=noise, seed=seed, method=method,
                         depth="unrestricted" if depth is None else str(depth),
                         nett=normalized_extra_cost(pr, est.predict(D.X_test), D.C_test),
                         seconds=time.perf_counter() - t0, **kw))

    for depth in DEPTHS:
        for method, crit in (("CART", "mse"), ("SPOT greedy", "spo")):
            t0 = time.perf_counter()
            est = SPOTree(decision_problem=pr, max_depth=depth, min_samples_leaf=20, criterion=crit).fit(Xtr, Ctr, X_val=Xv, C_val=Cv)
            rec(method, depth, est, t0, leaves=est.tree_.n_leaves)
        if depth is not None and depth in mio_depths:
            t0 = time.perf_counter()
            est = SPOTree(decision_problem=pr, max_depth=depth, min_samples_leaf=20, method="mio", time_limit=time_limit,
                          solver=solver, x_precision=2).fit(Xtr, Ctr, X_val=Xv, C_val=Cv)
            r = est.solve_result_
            rec("SPOT MILP", depth, est, t0, leaves=est.tree_.n_leaves, status=r.status, gap=r.gap,
                source=est.mio_info_["source"], mio_obj=est.mio_info_["objective"],
                greedy_obj=est.mio_info_["greedy_objective"])
    for method, crit in (("CART forest", "mse"), ("SPO forest", "spo")):
        t0 = time.perf_counter()
        best = None
        for mf in (2, 3, 4, 5):
            f = SPOForest(decision_problem=pr, n_estimators=n_trees, min_samples_leaf=20, max_features=mf, criterion=crit,
                          random_state=seed, n_jobs=1).fit(Xtr, Ctr)
            v = normalized_extra_cost(pr, f.predict(Xv), Cv)
            if best is None or v < best[0]:
                best = (v, f, mf)
        rec(method, None, best[1], t0, max_features=best[2])
    return rows


def summarise(df):
    """(mean test normalised extra travel time per setting and method, improvement over the MSE baselines)."""
    import pandas as pd

    table = df.pivot_table(index=["deg", "noise", "depth"], columns="method", values="nett", aggfunc="mean")
    per_setting = df.groupby(["deg", "noise", "depth", "method"])["nett"].mean().unstack("method")
    imp = {}
    for depth in ["1", "2", "3", "unrestricted"]:
        sub = per_setting.xs(depth, level="depth")
        row = {"SPOT greedy vs CART": (1 - sub["SPOT greedy"] / sub["CART"]).mean()}
        if "SPOT MILP" in sub and sub["SPOT MILP"].notna().all():
            row["SPOT MILP vs CART"] = (1 - sub["SPOT MILP"] / sub["CART"]).mean()
        imp[depth] = row
    forest = df[df.method.str.contains("forest")].groupby(["deg", "noise", "method"])["nett"].mean().unstack()
    imp["forest"] = {"SPO forest vs CART forest": (1 - forest["SPO forest"] / forest["CART forest"]).mean()}
    return table, pd.DataFrame(imp).T


def plot(df, path: Path):
    import matplotlib
    import numpy as np
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    methods = ["CART", "SPOT greedy", "SPOT MILP", "CART forest", "SPO forest"]
    colors = dict(zip(methods, ["#999999", "#1f77b4", "#2ca02c", "#d62728", "#9467bd"]))
    settings = sorted({(d, e) for d, e in zip(df.deg, df.noise)})
    fig, axes = plt.subplots(1, len(settings), figsize=(4.2 * len(settings), 4), sharey=False)
    xs = ["1", "2", "3", "unrestricted"]
    for ax, (deg, noise) in zip(np.atleast_1d(axes), settings):
        sub = df[(df.deg == deg) & (df.noise == noise)]
        for k, m in enumerate(methods):
            for xi, depth in enumerate(xs):
                vals = sub[(sub.method == m) & (sub.depth == depth)].nett.values
                if len(vals):
                    pos = xi + (k - 2) * 0.16
                    bp = ax.boxplot(vals, positions=[pos], widths=0.13, patch_artist=True, showfliers=False)
                    for b in bp["boxes"]:
                        b.set_facecolor(colors[m])
        ax.set_xticks(range(len(xs)), ["1", "2", "3", "unr."])
        ax.set_title(f"deg={deg}, noise={noise}")
        ax.set_xlabel("training depth")
    np.atleast_1d(axes)[0].set_ylabel("normalised extra travel time (test)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[m]) for m in methods]
    fig.legend(handles, methods, loc="upper center", ncol=5)
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    fig.savefig(path, dpi=120)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5, metavar="N",
                    help="data sets drawn per (deg, noise) setting, seeds 0..N-1 (default: %(default)s)")
    ap.add_argument("--time-limit", type=float, default=10.0, metavar="SECONDS",
                    help="time limit of each SPOT MILP solve (default: %(default)s)")
    ap.add_argument("--trees", type=int, default=100, metavar="N",
                    help="trees in each CART and SPO forest (default: %(default)s)")
    ap.add_argument("--mio-depths", type=int, nargs="*", default=[1, 2, 3], metavar="DEPTH",
                    help="depths at which the SPOT MILP is solved; none to skip it (default: 1 2 3)")
    ap.add_argument("--solver", default="highs", choices=["highs", "scip"],
                    help="MILP solver (default: %(default)s)")
    ap.add_argument("--jobs", type=int, default=2, metavar="N",
                    help="(deg, noise, seed) runs at once in worker processes (default: %(default)s)")
    ap.add_argument("--out", default="results/spo_shortest_path", metavar="FOLDER",
                    help="where results.csv, table.csv, improvement.csv and the PNG are written "
                         "(default: %(default)s)")
    return ap


def main():
    a = build_parser().parse_args()
    import pandas as pd
    from joblib import Parallel, delayed

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(deg, noise, s) for deg in (2, 10) for noise in (0.0, 0.25) for s in range(a.seeds)]
    t0 = time.perf_counter()
    rows = Parallel(n_jobs=a.jobs, verbose=5)(delayed(run_one)(d, e, s, a.time_limit, a.trees, a.mio_depths, a.solver)
                                             for d, e, s in jobs)
    df = pd.DataFrame([r for rr in rows for r in rr])
    df.to_csv(out / "results.csv", index=False)
    table, imp = summarise(df)
    pd.set_option("display.width", 200)
    print("\nMean test normalised extra travel time (over seeds):")
    print(table.round(4).to_string())
    print("\nImprovement over the MSE baseline, averaged over the four (deg, noise) settings "
          "(paper, n=200: SPOT vs CART 26.7% / 26.8% / 23.1% / 23.6% at depth 1/2/3/unrestricted; "
          "SPO forest vs CART forest 20.5%):")
    print((100 * imp).round(1).to_string())
    mio = df[df.method == "SPOT MILP"]
    if len(mio):
        print(f"\nSPOT MILP: {len(mio)} solves, statuses {mio.status.value_counts().to_dict()}, "
              f"kept MILP tree in {(mio.source == 'mio').sum()}, never worse than greedy on training: "
              f"{bool((mio.mio_obj <= mio.greedy_obj + 1e-12).all())}")
    table.to_csv(out / "table.csv")
    imp.to_csv(out / "improvement.csv")
    plot(df, out / "spo_shortest_path.png")
    print(f"\nwrote {out}/results.csv, table.csv, improvement.csv, spo_shortest_path.png "
          f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
