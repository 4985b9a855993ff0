"""Test accuracy with the thesis's tuning protocol: OCT (local search + Alg 2.7) vs CART, same splits.

Protocol (thesis §2.6): 5 random 50/25/25 train/validation/test splits; tune on train/validation, refit on
train+validation with the tuned values, report mean test accuracy. OCT: depth grid 1..D_MAX, R restarts per
depth, alpha by batch pruning of the best 10% of restarts. CART: scikit-learn, min_samples_leaf = 1, depth
grid 1..D_MAX with ccp_alpha chosen on validation from its cost-complexity path (midpoint of the best
interval, like rpart's cp), refit on train+validation. Usage: python benchmarks/heuristics_accuracy.py [R] [D_MAX]

``--regression``: the same protocol for ORT on diabetes (442 x 10) and Friedman #1 (n = 1000, p = 10,
noise sd 1): ORT with squared loss and with absolute loss (OptimalTreeCV, validation MSE / MAE) vs CART
(DecisionTreeRegressor, squared_error, tuned on validation MSE); test R^2 and MAE.
"""
import sys
import time

import numpy as np
from sklearn import datasets
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from opttrees.estimators import OptimalTreeCV

THESIS = {"iris": (93.51, 94.59), "wine": (84.89, 94.22), "breast_cancer": (90.91, 92.73)}


def cart_tuned(Xt, yt, Xv, yv, dmax, model=DecisionTreeClassifier,
               error=lambda y, p: np.mean(p != y)):
    best = (np.inf, None, None)
    for D in range(1, dmax + 1):
        path = model(max_depth=D, random_state=0).cost_complexity_pruning_path(Xt, yt)
        a = np.unique(path.ccp_alphas)
        mids = np.append(0.5 * (a[:-1] + a[1:]), a[-1] * 1.5 + 1e-9) if len(a) > 1 else a
        for c in np.concatenate([[0.0], mids]):
            m = model(max_depth=D, ccp_alpha=c, random_state=0).fit(Xt, yt)
            v = error(yv, m.predict(Xv))
            if v < best[0] - 1e-12:
                best = (v, D, c)
    return model(max_depth=best[1], ccp_alpha=best[2], random_state=0).fit(
        np.vstack([Xt, Xv]), np.concatenate([yt, yv]))


def main(R=100, dmax=10, repeats=5):
    print(f"R={R} restarts, depths 1..{dmax}, {repeats} splits 50/25/25")
    print(f"{'dataset':15s} {'CART':>7s} {'OCT':>7s} {'diff':>6s} | thesis CART  OCT (depth 10, R=500) | OCT time/split")
    for name in THESIS:
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
        acc_c, acc_o, times, depths = [], [], [], []
        for rep in range(repeats):
            Xtv, Xte, ytv, yte = train_test_split(X, y, test_size=0.25, random_state=rep, stratify=y)
            Xt, Xv, yt, yv = train_test_split(Xtv, ytv, test_size=1 / 3, random_state=rep, stratify=ytv)
            cart = cart_tuned(Xt, yt, Xv, yv, dmax)
            acc_c.append(np.mean(cart.predict(Xte) == yte))
            t = time.perf_counter()
            oct_ = OptimalTreeCV(max_depth=dmax, n_restarts=R, random_state=rep, n_jobs=2).fit(Xt, yt, Xv, yv)
            times.append(time.perf_counter() - t)
            acc_o.append(oct_.score(Xte, yte))
            depths.append(oct_.best_depth_)
        c, o = 100 * np.mean(acc_c), 100 * np.mean(acc_o)
        se = 100 * np.std(np.array(acc_o) - np.array(acc_c), ddof=1) / np.sqrt(repeats)
        tc, to = THESIS[name]
        print(f"{name:15s} {c:7.2f} {o:7.2f} {o - c:+6.2f}±{se:.2f} | {tc:6.2f} {to:6.2f} {to - tc:+6.2f} | "
              f"{np.mean(times):5.1f}s  OCT depths {depths}", flush=True)


def main_regression(R=100, dmax=6, repeats=5):
    from sklearn.metrics import r2_score
    sets = {"diabetes": datasets.load_diabetes(return_X_y=True),
            "friedman1": datasets.make_friedman1(n_samples=1000, noise=1.0, random_state=0)}
    print(f"R={R} restarts, depths 1..{dmax}, {repeats} splits 50/25/25; mean test R^2 / MAE")
    print(f"{'dataset':10s} {'CART':>15s} {'ORT squared':>15s} {'ORT absolute':>15s} | ORT time/split sq, abs")
    for name, (X, y) in sets.items():
        res = {k: [] for k in ("cart", "squared", "absolute")}
        times = {"squared": [], "absolute": []}
        for rep in range(repeats):
            Xtv, Xte, ytv, yte = train_test_split(X, y, test_size=0.25, random_state=rep)
            Xt, Xv, yt, yv = train_test_split(Xtv, ytv, test_size=1 / 3, random_state=rep)
            cart = cart_tuned(Xt, yt, Xv, yv, dmax, DecisionTreeRegressor, lambda a, b: np.mean((a - b) ** 2))
            res["cart"].append(cart.predict(Xte))
            for loss in ("squared", "absolute"):
                t = time.perf_counter()
                m = OptimalTreeCV(task="regression", loss=loss, max_depth=dmax, n_restarts=R, random_state=rep,
                                  n_jobs=2).fit(Xt, yt, Xv, yv)
                times[loss].append(time.perf_counter() - t)
                res[loss].append(m.predict(Xte))
            res.setdefault("y", []).append(yte)
        cells = []
        for k in ("cart", "squared", "absolute"):
            r2 = np.mean([r2_score(yy, p) for yy, p in zip(res["y"], res[k])])
            mae = np.mean([np.mean(np.abs(yy - p)) for yy, p in zip(res["y"], res[k])])
            cells.append(f"{r2:6.3f} / {mae:6.2f}")
        print(f"{name:10s} {cells[0]:>15s} {cells[1]:>15s} {cells[2]:>15s} | "
              f"{np.mean(times['squared']):5.1f}s, {np.mean(times['absolute']):5.1f}s", flush=True)


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:] if not a.startswith("--")]
    main_regression(*args[:2]) if "--regression" in sys.argv else main(*args[:2])
