"""Calibration grid of the DP chooser (issue 39): both exact engines over every midpoint, timed on the same data.

Usage: .venv/bin/python benchmarks/calibrate_engines.py [--cap 8] [--quick] [--rows 300 2000 8000] [--out CSV]
                                                        [--binary-from OLD_CSV]
       .venv/bin/python benchmarks/calibrate_engines.py --fit      # fit the chooser's model on the CSV

Each cell is a table shape (rows n, features p, distinct values per feature v — 2 is a binary table, 0 means
every value distinct —, classes K, depth D, minimum leaf size); the data have a planted tree plus 10 % label
noise. Both engines (``binarization="midpoints"``: the binary engine; ``"exact"``: the continuous search) run
in forked processes after the kernels are loaded in the parent, so the times are steady state, each capped at
``--cap`` seconds (a capped or refused run is written as its cap, with its status; the binary engine is not run
when its matrix would exceed ``opttrees.dp.chooser.MAX_BINARY_CELLS``). Rows are appended to the CSV one cell
at a time. ``--binary-from``: the binary engine's times of each cell taken from an earlier grid (run with the same
cap) when only the continuous search changed. The CSV is what
``opttrees.dp.chooser`` was fitted on and what ``tests/dp/test_dp_chooser.py`` checks the chooser against.
"""
from __future__ import annotations

import argparse
import csv
import itertools
import multiprocessing as mp
import os
import time
import warnings

import numpy as np


from opttrees.dp.chooser import MAX_BINARY_CELLS, MAX_PAIR_WORK


def table(n, p, v, K, seed=0):
    rng = np.random.default_rng(seed)
    if v == 0:
        X = rng.normal(size=(n, p)).round(4)
    else:
        X = rng.integers(0, v, (n, p)).astype(float)
    s = X[:, 0] - X[:, 1 % p] + 0.5 * X[:, 2 % p] * (X[:, 3 % p] > np.median(X[:, 3 % p]))
    y = np.digitize(s, np.quantile(s, np.linspace(0, 1, K + 1)[1:-1]))
    flip = rng.random(n) < 0.1
    y[flip] = rng.integers(0, K, flip.sum())
    return X, y


def run(X, y, depth, min_leaf, binarization, cap):
    from opttrees.dp import solve_dp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        try:
            _, res = solve_dp(X, y, max_depth=depth, min_samples_leaf=min_leaf, binarization=binarization,
                              time_limit=cap)
            status = res.status
        except Exception as exc:        # refused (memory) or failed: the cell is written as capped
            status = type(exc).__name__
        return time.perf_counter() - t, status


def forked(fn, *args):
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    proc = ctx.Process(target=lambda: q.put(fn(*args)))
    proc.start()
    out = q.get()
    proc.join()
    return out


def read(path):
    with open(path) as fh:
        return [{k: (v if k.startswith("status") else float(v)) for k, v in row.items()} for row in csv.DictReader(fh)]


def fit(rows):
    """Least-squares coefficients of opttrees.dp.chooser's model, per engine and depth model."""
    from opttrees.dp.chooser import features

    coef = {}
    for engine in ("binary", "continuous"):
        for model in (2, 3):
            sel = [r for r in rows if (r["depth"] <= 2) == (model == 2)
                   and (engine == "continuous" or r["n"] * r["midpoints"] ** 2 <= MAX_PAIR_WORK)]
            A = np.array([features(int(r["n"]), int(r["p"]), int(r["midpoints"]), int(r["classes"]),
                                   int(r["min_leaf"])) for r in sel])
            t = np.log10(np.maximum([r[f"t_{engine}"] for r in sel], 1e-3))
            coef[engine, model] = tuple(round(float(c), 4) for c in np.linalg.lstsq(A, t, rcond=None)[0])
    return coef


def check(rows, slack=1.5):
    """Cells where the chooser's engine is more than ``slack`` times slower than the other (both capped: equal)."""
    from opttrees.dp.chooser import choose

    bad = []
    for r in rows:
        pick = choose(int(r["n"]), int(r["p"]), int(r["midpoints"]), int(r["classes"]), int(r["depth"]),
                      int(r["min_leaf"]))["engine"]
        other = "continuous" if pick == "binary" else "binary"
        if r[f"t_{pick}"] > slack * r[f"t_{other}"] and r[f"t_{other}"] < r[f"t_{pick}"]:
            bad.append((r, pick))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cap", type=float, default=8.0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default="benchmarks/engine_calibration.csv")
    ap.add_argument("--fit", action="store_true", help="fit the chooser on --out and report its choices")
    ap.add_argument("--rows", type=int, nargs="+", default=[300, 2000, 8000])
    ap.add_argument("--binary-from", help="an earlier grid's CSV: reuse its binary-engine times, time the other only")
    args = ap.parse_args()
    if args.fit:
        from opttrees.dp import chooser

        rows = read(args.out)
        fitted = fit(rows)
        for key, c in fitted.items():
            print(f"    {key!r}: {c},")
        chooser.COEF.update(fitted)
        bad = check(rows)
        total = sum(min(r["t_binary"], r["t_continuous"]) for r in rows)
        print(f"{len(bad)} of {len(rows)} cells more than 1.5x slower than the other engine; best total {total:.1f} s")
        for r, pick in bad:
            print("  ", pick, {k: r[k] for k in ("n", "p", "values", "classes", "depth", "min_leaf", "t_binary",
                                                "t_continuous")})
        return
    Xw, yw = table(60, 4, 0, 3)
    for b in ("midpoints", "exact"):     # load both engines' kernels before forking
        run(Xw, yw, 3, 1, b, None)
        run(Xw, yw, 3, 3, b, None)
    grid = itertools.product(args.rows, [8, 30, 120], [2, 6, 40, 0], [2, 4], [2, 3], [1, 5])
    if args.quick:
        grid = itertools.product([300, 2000], [8, 30], [2, 0], [2, 4], [2, 3], [1])
    keys = ("n", "p", "values", "classes", "depth", "min_leaf")
    earlier = {tuple(int(r[k]) for k in keys): r for r in read(args.binary_from)} if args.binary_from else {}
    rows = []
    for n, p, v, K, D, ml in grid:
        if ml > 1 and (v not in (2, 0) or K != 2):     # min leaf on a slice of the grid
            continue
        X, y = table(n, p, v, K)
        mids = int(sum(len(np.unique(c)) - 1 for c in X.T))
        old = earlier.get((n, p, v, K, D, ml))
        if old is not None:
            tb, sb = old["t_binary"], old["status_binary"]
        elif n * mids > MAX_BINARY_CELLS:     # the binary matrix alone would take minutes and gigabytes
            tb, sb = args.cap, "refused"
        else:
            tb, sb = forked(run, X, y, D, ml, "midpoints", args.cap)
        tc, sc = forked(run, X, y, D, ml, "exact", args.cap)
        tb = tb if sb == "optimal" else max(tb, args.cap)
        tc = tc if sc == "optimal" else max(tc, args.cap)
        row = dict(n=n, p=p, values=v, classes=K, depth=D, min_leaf=ml, midpoints=mids,
                   t_binary=round(tb, 4), status_binary=sb, t_continuous=round(tc, 4), status_continuous=sc)
        rows.append(row)
        print(row, flush=True)
        new = not os.path.exists(args.out) or os.path.getsize(args.out) == 0
        with open(args.out, "a", newline="") as fh:     # a row at a time: a long grid can be resumed
            w = csv.DictWriter(fh, fieldnames=list(row))
            if new:
                w.writeheader()
            w.writerow(row)
    print(f"wrote {len(rows)} cells to {args.out}")


if __name__ == "__main__":
    main()
