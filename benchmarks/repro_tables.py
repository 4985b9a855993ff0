"""The measured tables of the two reproduction pages, from the grids' results stores.

    python benchmarks/repro_tables.py strong-trees   # docs/repro-strong-trees.md
    python benchmarks/repro_tables.py oct-vs-cart    # docs/repro-oct-vs-cart.md

Run the grid first (``opttrees compare GRID.yaml --jobs 2``, the grid named on the page); ``--store`` names
another results file. Prints Markdown.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from opttrees.experiments.report import results_frame, to_markdown

STORES = {"strong-trees": "results/repro_aghaei_strong_trees/results.sqlite",
          "oct-vs-cart": "results/repro_bertsimas_dunn_oct_vs_cart/results.sqlite"}
#: Dunn's thesis, Table 2.1 (depth 10, mean test accuracy % over 5 splits) for the datasets we have
THESIS_DEPTH10 = {"iris": (93.5, 94.6), "wine": (84.9, 94.2), "breast_cancer": (90.9, 92.7),
                  "balance-scale": (78.1, 79.4), "monk1": (74.8, 87.7), "monk2": (59.5, 60.0), "monk3": (94.2, 92.9),
                  "tic-tac-toe": (94.1, 94.0)}
#: Dunn's thesis, Table 2.2 (mean over 60 UCI datasets): depth -> (CART, OCT, gain, s.e.)
THESIS_BY_DEPTH = {2: (75.78, 77.92, 2.13, 0.32), 3: (79.27, 81.17, 1.90, 0.38), 4: (80.85, 82.91, 2.05, 0.37)}


def strong_trees(store: str) -> str:
    df = results_frame(store)
    df = df[df["outcome"] != "running"]
    mio = df[df["solver"].notna()]
    out = ["Instances solved to proven optimality (proofs by the solver; `assist: none`, so no DP bound), per "
           "formulation and solver:\n"]
    rows = []
    for method, g in mio.groupby("method_solver", sort=True):
        proven = g[g["proven_optimal"]]
        rows.append({"method": method, "instances": len(g), "solved": int(g["proven_optimal"].sum()),
                     "by the DP bound": int((g["proof"] == "dp-bound").sum()),
                     "median s (solved)": proven["time_to_proof"].median(),
                     "mean final gap (capped at 1)": g["gap"].clip(upper=1.0).mean(),
                     "failed cells": int((g["outcome"] != "done").sum())})
    import pandas as pd
    out.append(to_markdown(pd.DataFrame(rows)))
    # the training accuracy each method reached, against the DP's proven optimum
    piv = df.pivot_table(index=["dataset", "depth"], columns="method_solver", values="train_score", aggfunc="mean")
    out.append("\nTraining accuracy reached within the limit (oct-dp: the proven optimum, for reference):\n")
    out.append(to_markdown(piv.round(3).reset_index()))
    load = os.getloadavg()[0]
    out.append(f"\nHost load average when this table was printed: {load:.1f} on {os.cpu_count()} cores.\n")
    return "".join(out)


def oct_vs_cart(store: str) -> str:
    df = results_frame(store)
    df = df[df["outcome"] == "done"]
    acc = df.pivot_table(index=["dataset", "depth", "seed"], columns="method", values="test_score") * 100
    per = acc.groupby(["dataset", "depth"]).mean()
    gain = (acc["OCT"] - acc["CART"]).groupby(["dataset", "depth"]).mean()
    rows = []
    for depth, g in per.groupby("depth"):
        d = gain.xs(depth, level="depth")
        pub = THESIS_BY_DEPTH.get(int(depth))
        rows.append({"max depth": int(depth), "CART": g["CART"].mean(), "OCT": g["OCT"].mean(),
                     "OCT - CART": d.mean(), "s.e.": d.std(ddof=1) / np.sqrt(len(d)), "datasets": len(d),
                     "wins OCT/CART/ties": f"{int((d > 0.05).sum())}/{int((d < -0.05).sum())}/"
                                           f"{int((d.abs() <= 0.05).sum())}",
                     "published CART": pub[0] if pub else None, "published OCT": pub[1] if pub else None,
                     "published gain": f"{pub[2]:+.2f} ± {pub[3]:.2f}" if pub else ""})
    import pandas as pd
    out = ["Mean test accuracy (%) over the datasets (each the mean of its splits), by maximum depth; published: "
           "Dunn's thesis Table 2.2 (60 UCI datasets):\n", to_markdown(pd.DataFrame(rows).round(2))]
    wide = per.round(1).reset_index()
    wide["OCT - CART"] = (wide["OCT"] - wide["CART"]).round(1)
    wide["published CART / OCT (depth 10)"] = wide["dataset"].map(
        lambda n: "{} / {}".format(*THESIS_DEPTH10[n]) if n in THESIS_DEPTH10 else "")
    out += ["\nPer dataset (mean over splits; published: Table 2.1, at depth 10):\n", to_markdown(wide)]
    med = df.groupby("method")["fit_time"].median()
    out.append("\nMedian fit time per cell: " + ", ".join(f"{k} {v:.2f} s" for k, v in med.items()) + ".\n")
    return "".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("page", choices=sorted(STORES))
    ap.add_argument("--store")
    a = ap.parse_args(argv)
    print({"strong-trees": strong_trees, "oct-vs-cart": oct_vs_cart}[a.page](a.store or STORES[a.page]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
