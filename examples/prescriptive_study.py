"""The thesis's synthetic prescription study (Dunn's thesis §6.2), at a scale you choose.

Experiments 1-3 (20 covariates, observational treatment assignment, noisy training outcomes, noiseless test
set; generator in :mod:`opttrees.prescriptive.synthetic`). For every simulation each method is fitted on the
training set and scored on the test set by

- treatment accuracy: the share of test rows given the truly better treatment (smaller outcomes are better);
- effect accuracy: R² of the predicted effect ŷ(1) - ŷ(0) against the true effect.

Methods: PT (greedy tree with mu = 1, Kallus's personalisation tree), OPT(1), OPT(0.5), OPT(0.5)-L (local
search), policy tree with doubly robust scores (exact DP over quantile thresholds, cross-fitted random-forest
outcome models and logistic propensities), and regress-and-compare with CART, lasso and random forests (one
model per arm, prescribe the arm with the lower prediction). Hyperparameters are fixed (no validation tuning,
unlike the thesis); see --help.

Writes results.csv (one row per experiment x simulation x method, appended as it goes), summary.csv and
summary.md (mean and standard error per experiment and method) and study.png (box plots) to --output.

    python examples/prescriptive_study.py --quick          # a minute: 2 simulations, small data
    python examples/prescriptive_study.py --sims 10        # the default scale (n = 1000, 60,000 test rows)
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# numpy, sklearn and opttrees are imported where they are used, so that --help answers at once
METHODS = ["PT", "OPT(1)", "OPT(0.5)", "OPT(0.5)-L", "Policy-DR", "RC-CART", "RC-Lasso", "RC-RF"]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--experiments", type=int, nargs="+", default=[1, 2, 3], choices=[1, 2, 3],
                   help="which of the thesis's experiments to run")
    p.add_argument("--sims", type=int, default=10, help="simulations per experiment (the thesis: 100)")
    p.add_argument("--n-train", type=int, default=1000, help="training rows per simulation")
    p.add_argument("--n-test", type=int, default=60000, help="noiseless test rows per simulation")
    p.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS, metavar="METHOD",
                   help=f"methods to run, from {METHODS}")
    p.add_argument("--depth", type=int, default=4, help="max_depth of PT, OPT and OPT-L and of RC-CART")
    p.add_argument("--policy-depth", type=int, default=3, help="max_depth of the DP policy tree (exact; <= 4)")
    p.add_argument("--alpha", type=float, default=0.001, help="complexity penalty per split (normalised scale)")
    p.add_argument("--n-treatment", type=int, default=10,
                   help="rows of a treatment a leaf needs before it may prescribe it (PT, OPT, OPT-L)")
    p.add_argument("--restarts", type=int, default=20, help="local-search restarts of OPT(1) and OPT(0.5)")
    p.add_argument("--restarts-linear", type=int, default=10, help="local-search restarts of OPT(0.5)-L")
    p.add_argument("--lasso-lambda", type=float, default=0.01, help="OPT-L's lasso weight (normalised scale)")
    p.add_argument("--n-thresholds", type=int, default=5, help="quantile thresholds per feature for the DP policy tree")
    p.add_argument("--seed", type=int, default=0, help="seed of the data and the methods")
    p.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "prescriptive_study",
                   help="folder for results.csv, summary.csv, summary.md and study.png")
    p.add_argument("--quick", action="store_true",
                   help="smoke-test scale: 2 simulations, 300 training and 5,000 test rows, depth 2, few restarts")
    args = p.parse_args(argv)
    if args.quick:
        args.sims, args.n_train, args.n_test = 2, 300, 5000
        args.depth, args.policy_depth, args.restarts, args.restarts_linear = 2, 2, 4, 2
    return args


def fit_methods(data, args, methods, seed):
    """{method: (prescribed treatment on the test set, predicted effect, fit seconds, splits or None)}."""
    import numpy as np
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.linear_model import LassoCV
    from sklearn.tree import DecisionTreeRegressor

    from opttrees.estimators.prescriptive import OptimalPrescriptiveTree, PolicyTree

    train, test = data
    out = {}
    tree_kw = dict(max_depth=args.depth, alpha=args.alpha, n_treatment=args.n_treatment, random_state=seed)
    trees = {
        "PT": lambda: OptimalPrescriptiveTree(mu=1.0, method="greedy", **tree_kw),
        "OPT(1)": lambda: OptimalPrescriptiveTree(mu=1.0, n_restarts=args.restarts, **tree_kw),
        "OPT(0.5)": lambda: OptimalPrescriptiveTree(mu=0.5, n_restarts=args.restarts, **tree_kw),
        "OPT(0.5)-L": lambda: OptimalPrescriptiveTree(mu=0.5, counterfactuals="linear", lasso_lambda=args.lasso_lambda,
                                                      n_restarts=args.restarts_linear, **tree_kw),
        "Policy-DR": lambda: PolicyTree(teacher="dr", max_depth=args.policy_depth, alpha=args.alpha,
                                        n_thresholds=args.n_thresholds, random_state=seed),
    }
    rc = {
        "RC-CART": lambda: DecisionTreeRegressor(max_depth=args.depth + 2, min_samples_leaf=10, random_state=seed),
        "RC-Lasso": lambda: LassoCV(cv=5, random_state=seed),
        "RC-RF": lambda: RandomForestRegressor(n_estimators=200, min_samples_leaf=5, random_state=seed, n_jobs=1),
    }
    for name in methods:
        t0 = time.perf_counter()
        if name in trees:
            est = trees[name]().fit(train.X, train.treatment, train.outcome)
            pred = est.predict_outcomes(test.X)
            pres, splits = est.predict(test.X), est.tree_.n_splits
        else:
            pred = np.column_stack([rc[name]().fit(train.X[train.treatment == k], train.outcome[train.treatment == k])
                                    .predict(test.X) for k in (0, 1)])
            pres, splits = np.argmin(pred, axis=1), None
        out[name] = (pres, pred[:, 1] - pred[:, 0], time.perf_counter() - t0, splits)
    return out


def summarise(df):
    import pandas as pd
    g = df.groupby(["experiment", "method"], sort=False)
    rows = []
    for (exp, method), d in g:
        n = len(d)
        rows.append({"experiment": exp, "method": method, "sims": n,
                     "treatment_acc": d.treatment_accuracy.mean(),
                     "treatment_acc_se": d.treatment_accuracy.std(ddof=1) / n ** 0.5 if n > 1 else float("nan"),
                     "effect_acc": d.effect_accuracy.mean(),
                     "effect_acc_se": d.effect_accuracy.std(ddof=1) / n ** 0.5 if n > 1 else float("nan"),
                     "fit_s": d.fit_seconds.mean(), "splits": d.splits.mean()})
    return pd.DataFrame(rows)


def markdown(summary) -> str:
    lines = ["| exp. | method | sims | treatment accuracy | effect accuracy (R²) | fit s | splits |",
             "|---|---|---|---|---|---|---|"]
    for r in summary.itertuples(index=False):
        splits = "" if r.splits != r.splits else f"{r.splits:.1f}"
        lines.append(f"| {r.experiment} | {r.method} | {r.sims} | {r.treatment_acc:.3f} ± {r.treatment_acc_se:.3f} | "
                     f"{r.effect_acc:.3f} ± {r.effect_acc_se:.3f} | {r.fit_s:.1f} | {splits} |")
    return "\n".join(lines)


def plot(df, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    exps = sorted(df.experiment.unique())
    fig, axes = plt.subplots(2, len(exps), figsize=(4.5 * len(exps), 7), squeeze=False)
    for c, exp in enumerate(exps):
        d = df[df.experiment == exp]
        methods = [m for m in METHODS if m in set(d.method)]
        for r, (col, label) in enumerate([("treatment_accuracy", "treatment accuracy"),
                                          ("effect_accuracy", "effect accuracy (R²)")]):
            ax = axes[r, c]
            ax.boxplot([d[d.method == m][col].to_numpy() for m in methods], tick_labels=methods)
            ax.tick_params(axis="x", rotation=60, labelsize=8)
            ax.set_title(f"experiment {exp}: {label}", fontsize=10)
            if col == "effect_accuracy":
                lo = max(-1.0, float(d[col].min()) - 0.05)
                ax.set_ylim(lo, 1.0)
            ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    args = parse_args(argv)
    import numpy as np
    import pandas as pd

    from opttrees.prescriptive import synthetic as syn

    args.output.mkdir(parents=True, exist_ok=True)
    csv = args.output / "results.csv"
    rows = []
    t_start = time.perf_counter()
    for exp in args.experiments:
        for sim in range(args.sims):
            seed = args.seed * 1000 + 100 * exp + sim
            rng = np.random.default_rng(seed)
            train = syn.make_experiment(exp, args.n_train, rng)
            test = syn.make_experiment(exp, args.n_test, rng, noise=False)
            fitted = fit_methods((train, test), args, args.methods, seed)
            for name, (pres, eff, secs, splits) in fitted.items():
                rows.append({"experiment": exp, "sim": sim, "method": name,
                             "treatment_accuracy": syn.treatment_accuracy(pres, test),
                             "effect_accuracy": syn.effect_accuracy(eff, test), "fit_seconds": secs,
                             "splits": splits})
            pd.DataFrame(rows).to_csv(csv, index=False)
            line = ", ".join(f"{r['method']} {r['treatment_accuracy']:.3f}/{r['effect_accuracy']:.2f}"
                             for r in rows[-len(fitted):])
            print(f"[{time.perf_counter() - t_start:7.0f} s] experiment {exp} sim {sim + 1}/{args.sims}: {line}",
                  flush=True)
    df = pd.DataFrame(rows)
    summary = summarise(df)
    summary.to_csv(args.output / "summary.csv", index=False)
    scale = (f"{args.sims} simulations per experiment, {args.n_train} training / {args.n_test} test rows, depth "
             f"{args.depth} (policy tree {args.policy_depth}), alpha {args.alpha}, n_treatment {args.n_treatment}, "
             f"restarts {args.restarts} (OPT-L {args.restarts_linear}), lasso_lambda {args.lasso_lambda}")
    text = f"# Prescriptive study\n\n{scale}; mean ± standard error.\n\n{markdown(summary)}\n"
    (args.output / "summary.md").write_text(text)
    plot(df, args.output / "study.png")
    print(text)
    print(f"wrote {csv}, summary.csv, summary.md and study.png to {args.output} "
          f"({time.perf_counter() - t_start:.0f} s)")


if __name__ == "__main__":
    main()
