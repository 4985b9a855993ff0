"""The per-position bound of the continuous search (``continuous_kernels.point_bound`` / ``shrink``) against every
root position's exact depth-one sides, virtual ends included: a bound above a position's real cost would let the
search skip the optimum."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import opttrees.dp.continuous_kernels as kernels

L0, L1, L1U, R0, R1, R1U = range(6)


def _exact_rows(X, y, w, K, f, minl):
    """Every boundary of feature f evaluated exactly (eval_root with no incumbent): (bp, rows, wp, ends)."""
    so = np.ascontiguousarray(np.argsort(X, axis=0, kind="stable").T.astype(np.int32))
    xs = np.ascontiguousarray(np.take_along_axis(X, so.T.astype(np.int64), axis=0).T)
    m, p = X.shape
    Z = np.zeros((m, K))
    Z[np.arange(m), y] = w
    M = 1.0 - np.eye(K)
    labg, wtg = kernels._gathered(so, m, y.astype(np.int64), w, 0)
    rkg = kernels._ranks_for(so, m, f, 0, np.zeros(m, np.int32))
    ties = (np.diff(xs, axis=1) == 0).any(axis=1)
    bp = kernels.boundaries(xs, m, f, minl)
    rows = np.zeros((len(bp), 6))
    tot, cum, res, split = np.zeros((2, K)), np.zeros((2, K)), np.zeros(6), np.zeros((2, 3))
    for j, i in enumerate(bp):
        kernels.eval_root(so, xs, m, f, i, Z, labg, wtg, rkg, ties, 0, K, M, 0.0, minl, np.zeros(m, np.int32), tot,
                          cum, res, split)
        rows[j] = res
    wp = np.concatenate([[0.0], np.cumsum(w[so[f]])])
    ends = kernels.subset_ends(so, xs, m, Z, 0, K, M, 0.0, minl)
    return bp, rows, wp, ends


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10 ** 6), n=st.integers(8, 60), K=st.integers(2, 4), minl=st.sampled_from([1, 1, 3]),
       weighted=st.booleans(), B=st.sampled_from([2, 3]))
def test_no_position_is_bounded_above_its_cost(seed, n, K, minl, weighted, B):
    rng = np.random.default_rng(seed)
    X = np.round(rng.random((n, 3)) * rng.integers(2, 12), 1)      # ties and near-equal values
    y = rng.integers(0, K, n)
    w = rng.random(n) + 0.5 if weighted else np.ones(n)
    bp, rows, wp, ends = _exact_rows(X, y, w, K, 0, minl)
    nb = len(bp)
    if nb < 2:
        return
    cost = np.array([kernels.combine(r, B, 0.0) for r in rows])
    # every evaluated pair, the virtual ends -1 and nb included (one side empty, the other the whole subset)
    full = np.zeros((nb + 2, 6))
    full[1:-1] = rows
    full[0, [R0, R1, R1U]] = ends
    full[-1, [L0, L1, L1U]] = ends
    monoL, monoR, movL, movR = (np.zeros(2) for _ in range(4))
    for a in range(-1, nb):
        for b in range(a + 2, nb + 1):
            nk = kernels._side_bounds(full[a + 1], full[b + 1], B, monoL, monoR, movL, movR)
            args = (monoL[:nk], monoR[:nk], movL[:nk], movR[:nk], True, wp, bp, a, b, len(y))
            for j in range(a + 1, b):
                assert kernels.point_bound(*args, j, 0.0) <= cost[j] + 1e-9, (a, b, j)
            # shrink closes only positions whose bound reaches the cut, so never one below it
            cut = float(cost[a + 1:b].min()) + 1e-9
            lo, hi, low = kernels.shrink(*args, cut, 0.0)
            below = [j for j in range(a + 1, b) if cost[j] < cut]
            assert all(lo <= j <= hi for j in below)
            if lo > hi:
                assert low <= cost[a + 1:b].min() + 1e-9
