"""Accuracy versus fairness gap for the five group-fairness notions (issue 30): MIO and DP, time to proof.

There is no network on the machine this was written on, so the data is a **synthetic Adult-like table**
generated here (seeded) and written to ``benchmarks/fairness/adult_like.csv``; the study then reads that CSV
as a user would (a protected column ``sex``, the label ``income``). The generator: ``sex`` (0/1, 1 for about
half the rows) shifts hours worked, marriage and capital gains; the label is a logistic model of age,
education, hours, capital gains and marriage, plus a direct effect of ``sex`` (historical bias). Numeric
columns are rounded to the coarse values survey data has (age in 5-year bands, hours in 10-hour bands).

For each notion and each delta, at depth 2 (``--depth 3`` adds depth 3):

- ``mio``: ``OptimalTreeClassifier(method="mio", constraints=[...])`` with its defaults (the Pareto DP over every
  midpoint gives the start and, when it finishes, the bound; HiGHS proves it);
- ``mio-plain``: the same MIO from the greedy start without any DP (``warm_start="greedy", dp_bound=False``):
  the time the MIO alone needs to prove the optimum (time limit ``--plain-limit``);
- ``dp``: ``OptimalTreeClassifier(method="dp", binarization="midpoints", constraints=[...])``, the Pareto DP.

Columns: train accuracy, train gap (the constrained notion), test accuracy and gap, status, seconds.
Run: ``python benchmarks/bench_fairness.py [--depth 3] [--out benchmarks/fairness]``; writes ``results.csv``,
``tradeoff.png`` and prints a Markdown table.
"""
from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from opttrees import OptimalTreeClassifier
from opttrees import constraints

NOTIONS = {
    "statistical_parity": lambda d: constraints.StatisticalParity("sex", d),
    "conditional_statistical_parity": lambda d: constraints.ConditionalStatisticalParity("sex", d, legit="education"),
    "predictive_equality": lambda d: constraints.PredictiveEquality("sex", d),
    "equal_opportunity": lambda d: constraints.EqualOpportunity("sex", d),
    "equalized_odds": lambda d: constraints.EqualizedOdds("sex", d),
}
DELTAS = [0.0, 0.02, 0.05, 0.1]
#: feature budgets (the "delta" column holds k): solved by the DP over maximal feature sets
BUDGETS = {"max_features": lambda k: constraints.MaxFeatures(int(k))}


def make_adult_like(n: int = 500, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = (rng.random(n) < 0.5).astype(int)
    age = np.clip(np.round(rng.normal(40, 12, n) / 5) * 5, 20, 70)
    education = np.clip(np.round(rng.normal(10, 2.5, n)), 6, 16)
    education = np.select([education <= 8, education <= 10, education <= 12, education <= 14], [1, 2, 3, 4], 5)
    hours = np.clip(np.round(rng.normal(36 + 6 * sex, 9, n) / 10) * 10, 10, 70)
    married = (rng.random(n) < 0.3 + 0.35 * sex).astype(int)
    capital = (rng.random(n) < 0.08 + 0.06 * sex).astype(int)
    logit = (-7.0 + 0.04 * age + 0.55 * education + 0.04 * hours + 1.2 * married + 1.8 * capital + 1.1 * sex
             + rng.normal(0, 0.5, n))
    income = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), ">50K", "<=50K")
    return pd.DataFrame({"age": age, "education": education, "hours": hours, "married": married,
                         "capital_gain": capital, "sex": sex, "income": income})


def gaps(clf, X, y) -> dict:
    out = {}
    for name in NOTIONS:
        kw = {"legit": "education"} if name == "conditional_statistical_parity" else {}
        out[name] = clf.fairness_gap(X, y, "sex", notion=name, **kw)
    return out


def run(method: str, depth: int, notion: str | None, delta: float | None, data, limit: float,
        binarization: str = "midpoints", n_thresholds: int = 10) -> dict:
    Xtr, ytr, Xte, yte = data
    cons = None if notion is None else [BUDGETS[notion](delta) if notion in BUDGETS else NOTIONS[notion](delta)]
    if method == "dp":
        clf = OptimalTreeClassifier(method="dp", max_depth=depth, binarization=binarization,
                                    n_thresholds=n_thresholds, constraints=cons, time_limit=limit)
    elif method == "mio-plain":
        clf = OptimalTreeClassifier(max_depth=depth, warm_start="greedy", dp_bound=False, time_limit=limit,
                                    constraints=cons)
    else:
        clf = OptimalTreeClassifier(max_depth=depth, time_limit=limit, constraints=cons)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(Xtr, ytr)
    secs = time.perf_counter() - t0
    res = clf.solve_result_
    g_tr, g_te = gaps(clf, Xtr, ytr), gaps(clf, Xte, yte)
    key = notion if notion in NOTIONS else "statistical_parity"
    if method == "dp" and binarization != "midpoints":
        method = f"dp-{binarization}{n_thresholds}"
    return {"method": method, "depth": depth, "notion": notion or "none", "delta": delta,
            "train_acc": clf.score(Xtr, ytr), "train_gap": g_tr[key], "test_acc": clf.score(Xte, yte),
            "test_gap": g_te[key], "status": res.status if res is not None else "", "proven": bool(
                res is not None and res.proven_optimal), "seconds": secs,
            "start": (res.plan or {}).get("start") if res is not None and method != "dp" else None,
            **{f"train_{k}": v for k, v in g_tr.items()}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--depth", type=int, nargs="*", default=[2])
    ap.add_argument("--out", default=str(Path(__file__).parent / "fairness"))
    ap.add_argument("--limit", type=float, default=300.0)
    ap.add_argument("--plain-limit", type=float, default=120.0)
    ap.add_argument("--plain-deltas", type=float, nargs="*", default=[0.05])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--depth3", nargs="*", default=[], help="notions to run at depth 3 (delta 0.05 only)")
    ap.add_argument("--depth3-limit", type=float, default=300.0)
    ap.add_argument("--budgets", type=int, nargs="*", default=[], help="depths for MaxFeatures(k), k = 1, 2, 3")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    csv = out / "adult_like.csv"
    make_adult_like(args.n).to_csv(csv, index=False)
    df = pd.read_csv(csv)                      # as a user would: a CSV with a protected column
    X, y = df.drop(columns="income"), df["income"].to_numpy()
    rng = np.random.default_rng(1)
    test = rng.random(len(df)) < 0.3
    data = (X[~test].reset_index(drop=True), y[~test], X[test].reset_index(drop=True), y[test])
    rows = []
    for depth in args.depth:
        for method in ("mio", "dp"):
            rows.append(run(method, depth, None, None, data, args.limit))
            print(rows[-1], flush=True)
        for notion in NOTIONS:
            for delta in DELTAS:
                methods = ["mio", "dp"] + (["mio-plain"] if delta in args.plain_deltas and depth == 2 else [])
                for method in methods:
                    rows.append(run(method, depth, notion, delta, data, args.plain_limit if method == "mio-plain"
                                    else args.limit))
                    print({k: rows[-1][k] for k in ("method", "depth", "notion", "delta", "train_acc", "train_gap",
                                                    "status", "seconds")}, flush=True)
    for depth in args.budgets:       # feature budgets: the DP over maximal feature sets, and the MIO it starts
        for k in (1, 2, 3):
            for method in ("mio", "dp"):
                rows.append(run(method, depth, "max_features", k, data, args.limit))
                print({k2: rows[-1][k2] for k2 in ("method", "depth", "notion", "delta", "train_acc", "status",
                                                   "seconds")}, flush=True)
    for notion in args.depth3:    # depth 3: the Python Pareto DP over every midpoint is slow; quantiles too
        for method, kw in (("mio", {}), ("dp", {}), ("dp", {"binarization": "quantile", "n_thresholds": 3})):
            rows.append(run(method, 3, notion, 0.05, data, args.depth3_limit, **kw))
            print({k: rows[-1][k] for k in ("method", "depth", "notion", "delta", "train_acc", "train_gap",
                                            "status", "seconds")}, flush=True)
    res = pd.DataFrame(rows)
    if (out / "results.csv").exists() and not args.depth:   # depth-3 runs only: add them to the saved table
        res = pd.concat([pd.read_csv(out / "results.csv"), res], ignore_index=True)
    res.to_csv(out / "results.csv", index=False)
    plot(res, out / "tradeoff.png")
    print(table(res))


def plot(res: pd.DataFrame, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    depths = [d for d in sorted(res.depth.unique()) if (res[(res.depth == d) & (res.method == "mio")].notion
                                                         .value_counts() > 1).any()] or [2]
    fig, axes = plt.subplots(1, len(depths), figsize=(6.5 * len(depths), 4.5), squeeze=False)
    for ax, depth in zip(axes[0], depths):
        sub = res[(res.depth == depth) & (res.method == "mio")]
        free = sub[sub.notion == "none"]
        for notion in NOTIONS:
            s = sub[sub.notion == notion].sort_values("delta")
            ax.plot(s.train_gap, s.train_acc, "o-", label=notion.replace("_", " "))
        if len(free):
            ax.axhline(float(free.train_acc.iloc[0]), color="grey", ls="--", lw=1, label="unconstrained")
        ax.set_xlabel("fairness gap of the constrained notion (train)")
        ax.set_ylabel("train accuracy")
        ax.set_title(f"depth {depth}: proven-optimal trees, delta in {DELTAS}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def table(res: pd.DataFrame) -> str:
    lines = ["| depth | notion | delta | method | train acc | train gap | test acc | test gap | status | s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in res.itertuples():
        lines.append(f"| {r.depth} | {r.notion} | {'' if pd.isna(r.delta) else r.delta} | {r.method} | "
                     f"{r.train_acc:.3f} | {r.train_gap:.3f} | {r.test_acc:.3f} | {r.test_gap:.3f} | "
                     f"{r.status}{' (proven)' if r.proven and r.status != 'optimal' else ''} | {r.seconds:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
