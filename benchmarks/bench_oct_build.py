"""Time to build the OCT MIO and hand it to each solver, against building the same matrix directly in numpy
and loading it with highspy ``passModel`` (the floor any Pyomo route is compared with), in one run.

Usage: python benchmarks/bench_oct_build.py [--sizes 1000 5000] [--depth 3] [--p 10]
Prints one row per (n, route); nothing is asserted.
"""
from __future__ import annotations

import argparse
import gc
import time

import highspy
import numpy as np

from opttrees.data.prepared import prepare
from opttrees.formulations import OCT
from opttrees.solvers.compile import compile_model
from opttrees.solvers.highs import _build as highs_build
from opttrees.solvers.options import SolveOptions
from opttrees.solvers.scip import _build as scip_build


def make_data(n: int, p: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = np.round(rng.random((n, p)), 3)  # 3 decimals: epsilon 1e-3, as in the solver probe
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.2 * rng.standard_normal(n) > 0.8).astype(int)
    return prepare(X, y)


def direct_arrays(data, D: int, routing: str):
    """The same OCT rows (structure + tight loss) as CSR arrays built with numpy only, loaded by passModel."""
    n, K = data.n, data.n_classes
    J = np.nonzero(data.splittable)[0]
    p = len(J)
    TB = np.arange(1, 2 ** D)
    TL = np.arange(2 ** D, 2 ** (D + 1))
    nb, nl = len(TB), len(TL)
    # columns: a[j,t] | b[t] | d[t] | z[i,t] | l[t] | Nk[k,t] | N[t] | c[k,t] | L[t] | u[i,t]
    off = {}
    c = 0
    for name, size in [("a", p * nb), ("b", nb), ("d", nb), ("z", n * nl), ("l", nl), ("Nk", K * nl), ("N", nl),
                       ("c", K * nl), ("L", nl), ("u", n * nl)]:
        off[name] = c
        c += size
    ncol = c
    Xs = data.Xs[:, J]
    eps = data.eps[J]
    emin, emax = eps.min(), eps.max()
    M1 = 1 + emax
    rows_idx, rows_val, lo, hi = [], [], [], []

    def add(idx, val, l, h):
        rows_idx.append(idx); rows_val.append(val); lo.append(l); hi.append(h)

    a = lambda t: off["a"] + np.arange(p) * nb + (t - 1)
    z = lambda i, t: off["z"] + i * nl + (t - 2 ** D)
    # routing rows, vectorised per (node, side)
    block_idx, block_val, block_lo, block_hi = [], [], [], []
    for m in TB:
        for side in (0, 1):
            child = 2 * m + side
            lo_leaf, hi_leaf = child, child
            while lo_leaf < 2 ** D:
                lo_leaf, hi_leaf = 2 * lo_leaf, 2 * hi_leaf + 1
            leaves = np.arange(lo_leaf, hi_leaf + 1) if routing == "aggregated" else None
            groups = [leaves] if routing == "aggregated" else [[t] for t in range(lo_leaf, hi_leaf + 1)]
            for g in groups:
                g = np.asarray(g)
                zi = off["z"] + np.arange(n)[:, None] * nl + (g - 2 ** D)[None, :]
                ai = np.broadcast_to(a(m), (n, p))
                bi = np.full((n, 1), off["b"] + m - 1)
                idx = np.hstack([ai, bi, zi])
                if side == 0:
                    val = np.hstack([Xs + eps - emin, -np.ones((n, 1)), np.full((n, len(g)), M1)])
                    block_lo.append(np.full(n, -np.inf)); block_hi.append(np.full(n, M1 - emin))
                else:
                    val = np.hstack([Xs, -np.ones((n, 1)), -np.ones((n, len(g)))])
                    block_lo.append(np.full(n, -1.0)); block_hi.append(np.full(n, np.inf))
                block_idx.append(idx); block_val.append(val)
    # the small rows (structure, counts, loss) are a negligible share; build them in a loop
    for t in TB:
        add(np.r_[a(t), off["d"] + t - 1], np.r_[np.ones(p), -1.0], 0, 0)
        add(np.r_[off["b"] + t - 1, off["d"] + t - 1], [1.0, -1.0], -np.inf, 0)
        if t > 1:
            add(np.r_[off["d"] + t - 1, off["d"] + t // 2 - 1], [1.0, -1.0], -np.inf, 0)
    for i in range(n):
        add(z(i, TL), np.ones(nl), 1, 1)
    ZL = off["z"] + np.arange(n)[:, None] * nl + np.arange(nl)[None, :]
    # z <= l, u <= z, u <= c : n*nl rows each
    li = off["l"] + np.arange(nl)
    ui = off["u"] + np.arange(n)[:, None] * nl + np.arange(nl)[None, :]
    ci = off["c"] + data.y[:, None] * nl + np.arange(nl)[None, :]
    pair_blocks = [(ZL, np.broadcast_to(li, (n, nl))), (ui, ZL), (ui, ci)]
    for left, right in pair_blocks:
        block_idx.append(np.stack([left.ravel(), right.ravel()], 1))
        block_val.append(np.tile([1.0, -1.0], (n * nl, 1)))
        block_lo.append(np.full(n * nl, -np.inf)); block_hi.append(np.zeros(n * nl))
    for t in range(nl):
        add(np.r_[off["z"] + np.arange(n) * nl + t, off["l"] + t], np.r_[np.ones(n), -1.0], 0, np.inf)
        add(np.r_[off["z"] + np.arange(n) * nl + t, off["N"] + t], np.r_[np.ones(n), -1.0], 0, 0)
        for k in range(K):
            ik = np.nonzero(data.y == k)[0]
            add(np.r_[off["z"] + ik * nl + t, off["Nk"] + k * nl + t], np.r_[np.ones(len(ik)), -1.0], 0, 0)
        add(np.r_[off["c"] + np.arange(K) * nl + t, off["l"] + t], np.r_[np.ones(K), -1.0], 0, 0)
        add(np.r_[off["L"] + t, off["N"] + t, off["u"] + np.arange(n) * nl + t], np.r_[1.0, -1.0, np.ones(n)], 0, 0)
    starts = [0]
    idx_all, val_all = [], []
    for idx, val in zip(block_idx, block_val):
        lens = np.full(idx.shape[0], idx.shape[1])
        starts.extend((starts[-1] + np.cumsum(lens)).tolist())
        idx_all.append(idx.ravel()); val_all.append(val.ravel())
    for idx, val in zip(rows_idx, rows_val):
        starts.append(starts[-1] + len(idx))
        idx_all.append(np.asarray(idx)); val_all.append(np.asarray(val, float))
    rlo = np.concatenate(block_lo + [np.asarray(lo, float)])
    rhi = np.concatenate(block_hi + [np.asarray(hi, float)])
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = ncol, len(rlo)
    lp.col_cost_ = np.zeros(ncol)
    lp.col_lower_ = np.zeros(ncol)
    lp.col_upper_ = np.ones(ncol)
    lp.row_lower_, lp.row_upper_ = rlo, rhi
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.asarray(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.concatenate(idx_all).astype(np.int32)
    lp.a_matrix_.value_ = np.concatenate(val_all)
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = ncol, len(rlo)
    return lp


def timed(fn):
    gc.collect()
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000])
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--p", type=int, default=10)
    ap.add_argument("--routing", default="aggregated", choices=["aggregated", "thesis"])
    a = ap.parse_args()
    opts = SolveOptions()
    print(f"OCT depth {a.depth}, p={a.p}, routing={a.routing}, loss=tight")
    print(f"{'n':>6} {'rows':>8} {'nnz':>9} {'pyomo build':>12} {'compile':>8} {'->highs':>8} {'->scip':>8} "
          f"{'direct numpy+passModel':>23} {'ratio pyomo->highs / direct':>28}")
    for n in a.sizes:
        data = make_data(n, a.p)
        f, t_build = timed(lambda: OCT(data, a.depth, routing=a.routing))
        cm, t_comp = timed(lambda: compile_model(f.model))
        _, t_highs = timed(lambda: highs_build(cm, opts))
        _, t_scip = timed(lambda: scip_build(cm, opts))
        lp, t_direct_build = timed(lambda: direct_arrays(data, a.depth, a.routing))
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        _, t_pass = timed(lambda: h.passModel(lp))
        direct = t_direct_build + t_pass
        ours = t_build + t_comp + t_highs
        assert lp.num_row_ == cm.n_rows, (lp.num_row_, cm.n_rows)  # same matrix shape
        print(f"{n:>6} {cm.n_rows:>8} {cm.n_nonzeros:>9} {t_build:>11.2f}s {t_comp:>7.2f}s {t_highs:>7.2f}s "
              f"{t_scip:>7.2f}s {direct:>22.2f}s {ours / direct:>27.1f}x", flush=True)


if __name__ == "__main__":
    main()
