"""Dunn's synthetic studies, scaled down: optimal trees against CART on data drawn from a known tree.

Why: the thesis's central empirical claim is that, when the truth *is* a tree, a tree found by (near-)global
optimisation recovers it better than greedy CART, and that richer trees win when the truth needs them. This
script reproduces the *direction* of three of its synthetic studies (J. Dunn, *Optimal Trees for Prediction and
Prescription*, MIT PhD thesis, 2018):

- ``parallel`` (thesis §2.5): classification, ground truth with axis-parallel splits; OCT (local
  search, parallel) and OCT-H (local search, hyperplanes) against CART (scikit-learn) and opttrees' greedy tree.
- ``hyperplane`` (thesis §3.4, "split density"): the same with oblique ground-truth splits; OCT-H should win.
- ``constant`` (thesis §4.4): regression, parallel splits, constant leaves U(0, 1); ORT (local
  search) against CART; ORT-L should tie ORT (the thesis: linear leaves do not hurt when the truth is constant).
- ``linear`` (thesis §5.3): regression, parallel splits with random sparse linear leaves; ORT
  (local search, constant leaves) and ORT-L (lasso-leaf local search) against CART; ORT-L should win.

Each study varies the fitted depth (at a fixed training size) and the training size (at the true depth).
Generator choices the thesis leaves open and that we fix here: the ground truth is a
*complete* tree of depth ``--true-depth``; each split's threshold is a random quantile in [0.25, 0.75] of the
split values of a large uniform reference sample reaching that node (so no cell is empty or tiny); hyperplane
splits draw s ~ U{1..s_max} features with coefficients U(-1, 1); K = 2 with sibling leaves labelled
differently; linear leaves have intercept U(0, 1) and r ~ U{1..r_max} non-zero slopes U(-1, 1).
Hyperparameters are fixed, not tuned (the thesis tunes depth and alpha on a validation split): alpha = 0,
min_samples_leaf = 1 (as the thesis's N_min), CART unpruned but depth-limited; ORT-L uses a fixed lasso
penalty ``--leaf-penalty``.

Output (in ``--out``, default ``benchmarks/synthetic_studies/full``): ``results.csv`` (one row per fit),
``summary.md`` (mean ± standard error per setting, and paired win counts) and ``study.png``.
Run ``python benchmarks/synthetic_studies.py --help`` for the options.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from opttrees.tree import HYPERPLANE, LEAF, Tree

STUDIES = ("parallel", "hyperplane", "constant", "linear")
REGRESSION_STUDIES = ("constant", "linear")
#: one colour per method across panels (ORT plays OCT's role in regression)
COLOURS = {"CART": "tab:blue", "greedy": "tab:orange", "OCT": "tab:green", "ORT": "tab:green", "OCT-H": "tab:red",
           "ORT-L": "tab:purple"}
CLASSIFIERS = ("CART", "greedy", "OCT", "OCT-H")
REGRESSORS = ("CART", "ORT", "ORT-L")
REFERENCE_SIZE = 20_000


# ------------------------------------------------------------------------------------------- ground truth
@dataclass
class GroundTruth:
    """A complete tree of depth ``depth`` in heap order (node t has children 2t+1, 2t+2; leaves last).

    ``coef`` (internal nodes × p) and ``threshold`` define the splits (left iff coef·x < threshold, the opttrees
    convention); ``leaf_value`` is a class index per leaf (classification) or ``[intercept, slopes...]`` per
    leaf (linear regression; constant leaves have zero slopes).
    """

    depth: int
    coef: np.ndarray
    threshold: np.ndarray
    leaf_value: np.ndarray
    task: str  # "classification" | "regression"

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Leaf index (0 .. 2^depth - 1) of every row, routed level by level (vectorised)."""
        node = np.zeros(len(X), dtype=np.int64)
        for _ in range(self.depth):
            go_right = np.einsum("ij,ij->i", X, self.coef[node]) >= self.threshold[node]
            node = 2 * node + 1 + go_right
        return node - (2**self.depth - 1)

    def predict(self, X: np.ndarray) -> np.ndarray:
        leaf = self.apply(X)
        if self.task == "classification":
            return self.leaf_value[leaf].astype(np.int64)
        v = self.leaf_value[leaf]
        return v[:, 0] + np.einsum("ij,ij->i", X, v[:, 1:])

    @property
    def splits(self) -> list[frozenset]:
        """Feature sets of the splits (the thesis matches learned and true splits on these)."""
        return [frozenset(np.flatnonzero(a)) for a in self.coef]

    def to_tree(self) -> Tree:
        """The same tree as an opttrees :class:`~opttrees.tree.Tree` (a cross-check of the routing convention)."""
        n_internal, p = self.coef.shape
        m = n_internal + len(self.leaf_value)
        left = np.full(m, -1)
        right = np.full(m, -1)
        left[:n_internal] = 2 * np.arange(n_internal) + 1
        right[:n_internal] = 2 * np.arange(n_internal) + 2
        parallel = (self.coef != 0).sum(axis=1) == 1
        feature = np.full(m, LEAF)
        feature[:n_internal] = np.where(parallel, np.argmax(self.coef != 0, axis=1), HYPERPLANE)
        threshold = np.zeros(m)
        # a parallel split stored as e_j needs threshold / a_j (a_j > 0 is kept by the generator for 1-feature splits)
        scale = np.where(parallel, self.coef.sum(axis=1), 1.0)
        threshold[:n_internal] = self.threshold / scale
        coef = np.zeros((m, p))
        coef[:n_internal] = self.coef
        if self.task == "classification":
            label = np.zeros(m, dtype=np.int64)
            label[n_internal:] = self.leaf_value
            value = np.zeros((m, 2))
            value[n_internal:, :] = np.eye(2)[self.leaf_value]
            return Tree(left, right, feature, threshold, value, task="classification", label=label, coef=coef,
                        classes=[0, 1], n_features=p)
        value = np.zeros((m, p + 1))
        value[n_internal:] = self.leaf_value
        return Tree(left, right, feature, threshold, value, task="linear", coef=coef, n_features=p)


def random_truth(rng: np.random.Generator, p: int, depth: int, task: str = "classification",
                 split_density: int = 1, regression_density: int = 0) -> GroundTruth:
    """Draw a ground-truth tree whose every cell holds a fair share of the unit cube.

    ``split_density`` = s_max (1 = axis-parallel splits); ``regression_density`` = r_max (0 = constant leaves).
    """
    if not 1 <= split_density <= p:
        raise ValueError(f"split_density must be in 1..p={p}; got {split_density}")
    if not 0 <= regression_density <= p:
        raise ValueError(f"regression_density must be in 0..p={p}; got {regression_density}")
    n_internal = 2**depth - 1
    coef = np.zeros((n_internal, p))
    threshold = np.zeros(n_internal)
    ref = rng.random((REFERENCE_SIZE, p))
    node = np.zeros(REFERENCE_SIZE, dtype=np.int64)
    for t in range(n_internal):  # heap order visits parents before children
        s = int(rng.integers(1, split_density + 1))
        features = rng.choice(p, size=s, replace=False)
        coef[t, features] = rng.uniform(-1, 1, size=s) if s > 1 else 1.0
        z = ref[node == t] @ coef[t]
        threshold[t] = np.quantile(z, rng.uniform(0.25, 0.75))
        node[node == t] = 2 * t + 1 + (z >= threshold[t])
    n_leaves = 2**depth
    if task == "classification":
        first = rng.integers(0, 2, size=n_leaves // 2)
        leaf_value = np.stack([first, 1 - first], axis=1).ravel()  # siblings differ (K = 2)
    else:
        leaf_value = np.zeros((n_leaves, p + 1))
        leaf_value[:, 0] = rng.random(n_leaves)
        for leaf in range(n_leaves):
            r = int(rng.integers(1, regression_density + 1)) if regression_density else 0
            leaf_value[leaf, 1 + rng.choice(p, size=r, replace=False)] = rng.uniform(-1, 1, size=r)
    return GroundTruth(depth, coef, threshold, leaf_value, task)


def sample(truth: GroundTruth, n: int, rng: np.random.Generator, noise: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """n uniform points labelled by ``truth``; ``noise`` flips that fraction of labels (classification) or adds
    N(0, noise²) to every target (regression), as in the thesis."""
    X = rng.random((n, truth.coef.shape[1]))
    y = truth.predict(X)
    if truth.task == "classification":
        flip = rng.choice(n, size=int(round(noise * n)), replace=False)
        y[flip] = 1 - y[flip]
    elif noise:
        y = y + rng.normal(0.0, noise, size=n)
    return X, y


# ------------------------------------------------------------------------------------------------ methods
def fit_predict(method: str, task: str, X, y, X_eval, depth: int, args, seed: int) -> tuple[np.ndarray, int]:
    """Fit ``method`` at max depth ``depth`` on (X, y); return its predictions on ``X_eval`` and its number of splits."""
    from opttrees import OptimalTreeClassifier, OptimalTreeRegressor

    if method == "CART":
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

        cls = DecisionTreeClassifier if task == "classification" else DecisionTreeRegressor
        est = cls(max_depth=depth, min_samples_leaf=1, random_state=seed).fit(X, y)
        return est.predict(X_eval), int(est.tree_.node_count - est.tree_.n_leaves)
    if method == "ORT-L":
        from opttrees.data.prepared import prepare
        from opttrees.heuristics.linear_leaves import linear_local_search

        tree = linear_local_search(prepare(X, y, task="regression"), depth, alpha=0.0, leaf_penalty=args.leaf_penalty,
                                   min_samples_leaf=1, n_restarts=args.linear_restarts, constant_restarts=args.restarts,
                                   random_state=seed,
                                   max_thresholds=args.max_thresholds)
        return tree.predict(X_eval), tree.n_splits
    common = dict(max_depth=depth, alpha=0.0, min_samples_leaf=1, random_state=seed, time_limit=None)
    if method == "greedy":
        est = OptimalTreeClassifier(method="greedy", **common)
    elif method in ("OCT", "OCT-H"):
        est = OptimalTreeClassifier(method="local-search", n_restarts=args.restarts,
                                    split_type="hyperplane" if method == "OCT-H" else "parallel",
                                    n_hyperplane_restarts=args.hyperplane_restarts, **common)
    elif method == "ORT":
        est = OptimalTreeRegressor(method="local-search", n_restarts=args.restarts, **common)
    else:
        raise ValueError(f"unknown method {method!r}")
    est.fit(X, y)
    return est.predict(X_eval), int(est.tree_.n_splits)


def score(task: str, y_true, y_pred) -> float:
    """Accuracy (classification) or R² (regression) on the test set."""
    if task == "classification":
        return float(np.mean(y_true == y_pred))
    return float(1.0 - np.sum((y_true - y_pred) ** 2) / np.sum((y_true - y_true.mean()) ** 2))


# -------------------------------------------------------------------------------------------------- study
def settings(args) -> list[tuple[str, str, int, int]]:
    """(study, axis, n_train, fitted depth): the depth sweep at ``--n-train`` and the size sweep at the true depth."""
    out = []
    for study in args.studies:
        out += [(study, "depth", args.n_train, d) for d in args.depths]
        out += [(study, "n", n, args.true_depth) for n in args.sizes]
    return out


def warm_up(args) -> None:
    """Fit every method once on tiny data so numba compilation (or loading its cache) is not timed."""
    rng = np.random.default_rng(0)
    for task, methods in (("classification", args.methods_clf), ("regression", args.methods_reg)):
        X, y = sample(random_truth(rng, args.p, 1, task, regression_density=int(task == "regression")), 40, rng)
        for method in methods:
            fit_predict(method, task, X, y, X, 2, argparse.Namespace(**{**vars(args), "restarts": 1}), 0)


def run(args, on_study_done=None) -> pd.DataFrame:
    """All fits, one row each; ``on_study_done(rows so far)`` after each study (partial results survive a kill)."""
    rows = []
    warm_up(args)
    t_start = time.perf_counter()
    for study in args.studies:
        task = "regression" if study in REGRESSION_STUDIES else "classification"
        methods = args.methods_reg if task == "regression" else args.methods_clf
        for rep in range(args.reps):
            rng = np.random.default_rng([args.seed, STUDIES.index(study), rep])
            truth = random_truth(rng, args.p, args.true_depth, task,
                                 split_density=args.split_density if study == "hyperplane" else 1,
                                 regression_density=args.regression_density if study == "linear" else 0)
            X_test, y_test = sample(truth, args.test_per_leaf * 2**args.true_depth, rng)  # noiseless test set
            done = {}  # the two sweeps share the setting (n_train, true depth): fit it once
            for _, axis, n, depth in (s for s in settings(args) if s[0] == study):
                X, y = sample(truth, n, np.random.default_rng([args.seed, STUDIES.index(study), rep, n]),
                              args.noise_reg if task == "regression" else args.noise_clf)
                for method in methods:
                    if (n, depth, method) not in done:
                        t0 = time.perf_counter()
                        pred, n_splits = fit_predict(method, task, X, y, np.vstack([X, X_test]), depth, args, rep)
                        done[n, depth, method] = dict(score=score(task, y_test, pred[n:]), train=score(task, y, pred[:n]),
                                                      n_splits=n_splits, seconds=time.perf_counter() - t0)
                    rows.append(dict(study=study, axis=axis, n_train=n, depth=depth, rep=rep, method=method,
                                     **done[n, depth, method]))
            print(f"[{time.perf_counter() - t_start:7.1f} s] {study} truth {rep + 1}/{args.reps} done", flush=True)
        if on_study_done is not None:
            on_study_done(pd.DataFrame(rows))
    return pd.DataFrame(rows)


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    """Mean ± standard error of the test score and mean fit time per (study, axis, n, depth, method)."""
    g = df.groupby(["study", "axis", "n_train", "depth", "method"], sort=False)
    out = g.agg(mean=("score", "mean"), sd=("score", "std"), reps=("score", "size"), train=("train", "mean"),
                splits=("n_splits", "mean"),
                seconds=("seconds", "mean")).reset_index()
    out["se"] = (out["sd"] / np.sqrt(out["reps"])).fillna(0.0)
    return out.drop(columns="sd")


def markdown(summary: pd.DataFrame, args) -> str:
    """One table per study and axis: rows = setting, columns = method (mean ± s.e.)."""
    metric = {"parallel": "test accuracy", "hyperplane": "test accuracy", "constant": "test R²", "linear": "test R²"}
    lines = [f"Settings: p = {args.p}, true depth = {args.true_depth}, split density = {args.split_density}, "
             f"regression density = {args.regression_density}, {args.reps} ground-truth trees per setting, "
             f"{args.restarts} restarts (H = {args.hyperplane_restarts}; ORT-L {args.linear_restarts} starts), "
             f"label noise: classification {args.noise_clf:g}, regression {args.noise_reg:g}; "
             f"ORT-L leaf penalty {args.leaf_penalty:g}.", ""]
    for (study, axis), part in summary.groupby(["study", "axis"], sort=False):
        key = "depth" if axis == "depth" else "n_train"
        cell = part.assign(cell=[f"{m:.3f} ± {s:.3f}" for m, s in zip(part["mean"], part["se"])])
        table = cell.pivot(index=key, columns="method", values="cell")[list(part["method"].unique())]
        secs = part.groupby("method", sort=False)["seconds"].mean()
        train = part.groupby("method", sort=False)["train"].mean()
        fixed = f"n = {part['n_train'].iloc[0]}" if axis == "depth" else f"depth = {part['depth'].iloc[0]}"
        lines += [f"### {study} truth: {metric[study]} against {'fitted depth' if axis == 'depth' else 'training size'}"
                  f" ({fixed})", "", "| " + key + " | " + " | ".join(table.columns) + " |",
                  "|---:|" + "---:|" * len(table.columns)]
        lines += [f"| {i} | " + " | ".join(table.loc[i]) + " |" for i in table.index]
        lines += ["", f"Mean training {metric[study].split()[-1]} over these settings: "
                  + ", ".join(f"{m} {v:.3f}" for m, v in train.items()) + ". Mean fit time: "
                  + ", ".join(f"{m} {v:.2f} s" for m, v in secs.items()) + ".", ""]
    return "\n".join(lines)


PAIRS = (("OCT", "CART"), ("OCT-H", "OCT"), ("OCT-H", "CART"), ("ORT", "CART"), ("ORT-L", "ORT"), ("ORT-L", "CART"))


def paired(df: pd.DataFrame) -> str:
    """Per study, how often method A's test score beats B's on the same data (each distinct fit counted once)."""
    fits = df.drop_duplicates(["study", "n_train", "depth", "rep", "method"])
    lines = ["### Paired comparison (same ground truth, same sample, every setting)", "",
             "| study | comparison | A better | B better | mean A − B | A's training score ≥ B's |", "|---|---|---:|---:|---:|---:|"]
    for study, part in fits.groupby("study", sort=False):
        test = part.pivot_table(index=["n_train", "depth", "rep"], columns="method", values="score")
        train = part.pivot_table(index=["n_train", "depth", "rep"], columns="method", values="train")
        for a, b in PAIRS:
            if a in test and b in test:
                d, dt = test[a] - test[b], train[a] - train[b]
                lines.append(f"| {study} | {a} vs {b} | {(d > 1e-12).sum()} | {(d < -1e-12).sum()} | {d.mean():+.3f} | "
                             f"{(dt >= -1e-12).sum()}/{len(dt)} |")
    return "\n".join(lines) + "\n"


def plot(summary: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(summary.groupby(["study", "axis"], sort=False))
    studies = list(dict.fromkeys(s for (s, _), _ in panels))
    fig, axes = plt.subplots(len(studies), 2, figsize=(10, 3.4 * len(studies)), squeeze=False)
    for (study, axis), part in panels:
        ax = axes[studies.index(study), 0 if axis == "depth" else 1]
        key = "depth" if axis == "depth" else "n_train"
        for method, m in part.groupby("method", sort=False):
            ax.errorbar(m[key], m["mean"], yerr=m["se"], marker="o", capsize=3, label=method, color=COLOURS[method])
        ax.set_xlabel("fitted max depth" if axis == "depth" else "training size n")
        if axis == "n":
            ax.set_xscale("log")
            ax.minorticks_off()
        ax.set_xticks(sorted(part[key].unique()), [str(v) for v in sorted(part[key].unique())])
        ax.set_ylabel("test R²" if study in REGRESSION_STUDIES else "test accuracy")
        ax.set_title(f"{study} truth")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------------- CLI
QUICK = dict(reps=3, depths=[1, 2, 3], sizes=[100, 300], n_train=300, restarts=5, hyperplane_restarts=2, linear_restarts=2,
             test_per_leaf=500, true_depth=2, max_thresholds=8)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--studies", nargs="+", choices=STUDIES, default=list(STUDIES),
                    help="which ground truths: parallel / hyperplane (classification), constant / linear (regression leaves)")
    ap.add_argument("--reps", type=int, default=6, help="random ground-truth trees per setting (thesis: 400)")
    ap.add_argument("--p", type=int, default=5, help="number of features (thesis default 5)")
    ap.add_argument("--true-depth", type=int, default=3, help="depth of the complete ground-truth tree (thesis: 4)")
    ap.add_argument("--depths", type=int, nargs="+", default=[1, 2, 3, 4], help="fitted max depths for the depth sweep")
    ap.add_argument("--n-train", type=int, default=500, help="training size for the depth sweep (thesis default 1000)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 250, 500, 1000],
                    help="training sizes for the size sweep (fitted depth = --true-depth)")
    ap.add_argument("--test-per-leaf", type=int, default=2000,
                    help="test points per true leaf: test size = this × 2^true_depth (thesis 2000)")
    ap.add_argument("--split-density", type=int, default=3,
                    help="hyperplane study: each true split uses s ~ U{1..this} features")
    ap.add_argument("--regression-density", type=int, default=3,
                    help="linear study: each true leaf has r ~ U{1..this} non-zero slopes")
    ap.add_argument("--noise-clf", type=float, default=0.0, help="fraction of training labels flipped (classification)")
    ap.add_argument("--noise-reg", type=float, default=0.05, help="std of Gaussian noise on training targets (regression)")
    ap.add_argument("--restarts", type=int, default=20,
                    help="local-search random restarts for OCT, OCT-H, ORT, ORT-L (thesis 100-1000)")
    ap.add_argument("--hyperplane-restarts", type=int, default=5, help="OCT-H random hyperplane restarts per node, H (thesis 5-10)")
    ap.add_argument("--linear-restarts", type=int, default=5,
                    help="ORT-L starts: the ORT local-search tree (--restarts restarts) plus this minus one random trees")
    ap.add_argument("--leaf-penalty", type=float, default=0.001, help="ORT-L lasso penalty lambda on scaled-feature slopes")
    ap.add_argument("--max-thresholds", type=int, default=32, help="ORT-L candidate thresholds per feature and node")
    ap.add_argument("--methods-clf", nargs="+", choices=CLASSIFIERS, default=list(CLASSIFIERS), help="classification methods")
    ap.add_argument("--methods-reg", nargs="+", choices=REGRESSORS, default=list(REGRESSORS), help="regression methods")
    ap.add_argument("--seed", type=int, default=0, help="master seed (ground truths, samples, restarts)")
    ap.add_argument("--quick", action="store_true",
                    help="a run of under a minute: " + ", ".join(f"{k}={v}" for k, v in QUICK.items())
                    + " (options given explicitly still win)")
    ap.add_argument("--out", type=Path, default=None,
                    help="output folder for results.csv, summary.md and study.png "
                         "(default benchmarks/synthetic_studies/full, or .../quick with --quick)")
    return ap


def write(df: pd.DataFrame, args) -> None:
    """results.csv, summary.md and study.png in ``args.out``."""
    df.to_csv(args.out / "results.csv", index=False)
    summary = summarise(df)
    (args.out / "summary.md").write_text(markdown(summary, args) + "\n" + paired(df))
    plot(summary, args.out / "study.png")


def main(argv=None) -> Path:
    ap = parser()
    if ap.parse_args(argv).quick:  # quick values become the defaults; options given explicitly still win
        ap.set_defaults(**QUICK)
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = Path(__file__).parent / "synthetic_studies" / ("quick" if args.quick else "full")
    args.out.mkdir(parents=True, exist_ok=True)
    run(args, on_study_done=lambda df: write(df, args))
    print((args.out / "summary.md").read_text())
    print(f"wrote {args.out}/results.csv, summary.md, study.png")
    return args.out


if __name__ == "__main__":
    main()
