"""The local search's speed-ups change no result: specialised scans agree with a recount, the move cache
returns what a full node visit computes, and restarts ranked by the kernels' objective pick the same tree."""
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opttrees.data.prepared import prepare
from opttrees.heuristics.kernels import losses, movecache, orders, restarts, scans, search, splits, structs
from opttrees.heuristics import local_search
from opttrees.heuristics.core import make_problem, objective
from opttrees.heuristics.local_search import new_move_cache


def _leaf_loss(z, kind):
    if len(z) == 0:
        return 0.0
    s = z.sum(axis=0)
    if kind == losses.MISCLASSIFICATION:
        return s.sum() - s.max()
    if kind == losses.GINI:
        return s.sum() - (s * s).sum() / s.sum()
    return max(s[2] - s[1] ** 2 / s[0], 0.0)  # squared: [w, w*y, w*y^2]


def _recount(Z, movers, vals, kind, nmin):
    """Best cut by recounting both leaves at every position (q = -1: nobody moved)."""
    m = len(movers)
    best, bestq = np.inf, -2
    for q in range(-1, m):
        if q < m - 1 and q >= 0 and not vals[q + 1] > vals[q]:
            continue
        low, up = Z[movers[: q + 1]], Z[movers[q + 1:]]
        if len(low) < nmin or len(up) < nmin:
            continue
        v = _leaf_loss(low, kind) + _leaf_loss(up, kind)
        if v < best - 1e-9:
            best, bestq = v, q
    return best, bestq


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 40), kind=st.sampled_from([losses.MISCLASSIFICATION, losses.GINI, losses.SQUARED]),
       nmin=st.integers(1, 4), seed=st.integers(0, 10**6), weighted=st.booleans())
def test_specialised_scans_match_a_recount(n, kind, nmin, seed, weighted):
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.5, 2.0, n) if weighted else np.ones(n)
    if kind == losses.SQUARED:
        y = rng.normal(size=n)
        Z = np.column_stack([w, w * y, w * y * y])
    else:
        Z = np.zeros((n, 2))
        Z[np.arange(n), rng.integers(0, 2, n)] = w
    vals = np.sort(rng.integers(0, max(2, n // 2), n)).astype(np.float64)
    movers = rng.permutation(n).astype(np.int64)
    T = 3
    low_d, up_d = np.full(n, 1, np.int64), np.full(n, 2, np.int64)
    stats, cnt, lloss = np.zeros((T, Z.shape[1])), np.zeros(T, np.int64), np.zeros(T)
    stats[2], cnt[2] = Z.sum(axis=0), n
    lloss[2] = losses.leaf_loss(kind, stats, 2, cnt)
    deficient = int(cnt[1] < nmin) + int(cnt[2] < nmin)
    got = scans.scan_core(movers, n, vals, low_d, up_d, Z, kind, nmin, stats, cnt, lloss, lloss[2], deficient,
                      losses.fen_empty())
    want = _recount(Z, movers, vals, kind, nmin)
    assert got[0] == pytest.approx(want[0], rel=1e-9, abs=1e-9)
    if np.isfinite(want[0]):  # the position can differ only between exact ties
        low, up = Z[movers[: got[1] + 1]], Z[movers[got[1] + 1:]]
        assert _leaf_loss(low, kind) + _leaf_loss(up, kind) == pytest.approx(want[0], rel=1e-9, abs=1e-9)


def _restart_args(d, D, loss=None):
    prob = make_problem(d, loss)
    T = 2 ** (D + 1) - 1
    start = losses.GINI if prob.loss == "misclassification" else prob.kind
    return prob, structs.settings(T, prob.kind, D, 1, 0.0, 1e-9 * prob.baseline, start_kind=start, H=5, mtry=2,
                                  random_frac=0.25)


def _run(prob, cfg, seeds, cache, counters=None, jobs=1, words=None):
    """restarts.run_restarts on ``jobs`` threads sharing ``cache``: (NT, FE, TH, OB) of every restart, and done.
    ``words``: the row-word maker (orders.og_words or orders.og_words32) instead of the one search_arrays picks."""
    out = structs.restart_output(len(seeds), cfg.T, 0)
    counters = np.zeros((jobs, search.N_COUNTERS), np.int64) if counters is None else counters
    stop, nxt = np.zeros(1, np.int64), np.zeros(1, np.int64)
    rankT, ogT, XT, rh = orders.search_arrays(prob.X, prob.orderT, prob.grpT)
    if words is not None:
        ogT = words(prob.orderT, prob.grpT)
    kprob, arrays = structs.problem(prob), structs.SearchArrays(rankT, XT, rh)
    with ThreadPoolExecutor(jobs) as ex:
        list(ex.map(lambda k: restarts.run_restarts(seeds, kprob, cfg, ogT, arrays, stop, nxt, cache, counters[k], out),
                    range(jobs)))
    return (out[0], out[1], out[2], out[4]), out[5]


@pytest.mark.parametrize("loss", [None, "squared"])
def test_move_cache_changes_no_restart(loss):
    """One cache table shared by 30 restarts on two threads gives the same trees as a fresh table per
    restart, and it is hit; so does a two-slot table that keeps overwriting itself (a lost entry is a miss),
    and so does an empty table, with which neither node visits nor start-tree scans are remembered."""
    rng = np.random.default_rng(3)
    X = np.round(rng.random((150, 4)), 2)
    y = (X[:, 0] + X[:, 1] > 1).astype(int) ^ (rng.random(150) < 0.15) if loss is None else X[:, 0] + rng.normal(size=150)
    d = prepare(X, y, task="classification" if loss is None else "regression")
    prob, args = _restart_args(d, 3, loss)
    seeds = np.arange(30, dtype=np.int64) * 7919 + 1
    counters = np.zeros((2, search.N_COUNTERS), np.int64)
    shared = new_move_cache(30, 15)
    out, done = _run(prob, args, seeds, shared, counters, jobs=2)
    assert done.tolist() == [1] * 30 and counters[:, search.C_HITS].sum() > 0
    if loss is None:  # the start trees' root scans (gini, min leaf 1) are in the table too
        rh = movecache.row_hashes(len(y))
        root = (rh[0].sum(), rh[1].sum())
        assert any(movecache.slot_get(shared, *movecache.start_key(*root, j, losses.GINI, 1))[0] for j in range(4))
    tiny, _ = _run(prob, args, seeds, np.zeros((2, 5), np.int64))
    plain = np.zeros((2, search.N_COUNTERS), np.int64)
    none, _ = _run(prob, args, seeds, np.zeros((0, 5), np.int64), plain)
    assert plain[:, search.C_HITS].sum() == 0
    for r in range(len(seeds)):
        one, _ = _run(prob, args, seeds[r:r + 1], new_move_cache())
        for a, b, c, e in zip(out, one, tiny, none):
            np.testing.assert_array_equal(a[r], b[0])
            np.testing.assert_array_equal(a[r], c[r])
            np.testing.assert_array_equal(a[r], e[r])


@pytest.mark.parametrize("depth", [2, 4])
def test_32_and_64_bit_row_words_give_the_same_restarts(depth):
    """Sets of up to 2^16 rows keep their orders in 32-bit row words (row | rank << 16), larger ones in 64-bit
    words: both decode to the same rows and ranks, and the restarts are the same with either."""
    rng = np.random.default_rng(11)
    X = np.round(rng.random((700, 5)), 2)
    y = ((X[:, 0] > 0.4) ^ (X[:, 1] > 0.6)).astype(int) ^ (rng.random(700) < 0.1)
    prob, args = _restart_args(prepare(X, y), depth)
    w64, w32 = orders.og_words(prob.orderT, prob.grpT), orders.og_words32(prob.orderT, prob.grpT)
    assert w32.dtype == np.uint32 and orders.og_shift(w32) == 16 and orders.og_shift(w64) == 32
    for w, sh in ((w64, 32), (w32, 16)):
        np.testing.assert_array_equal(w.astype(np.int64) & ((1 << sh) - 1), prob.orderT)
        np.testing.assert_array_equal(w.astype(np.int64) >> sh, prob.grpT)
    assert orders.search_arrays(prob.X, prob.orderT, prob.grpT)[1].dtype == np.uint32
    assert orders.order_cache(prob.Z, prob.kind, False, depth, 5, w32).shape == (depth - 1, 5, 700)  # orders cached
    seeds = np.arange(12, dtype=np.int64) * 31 + 5
    a, _ = _run(prob, args, seeds, new_move_cache(12, args.T), words=orders.og_words)
    b, _ = _run(prob, args, seeds, new_move_cache(12, args.T), words=orders.og_words32)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("n", [65536, 65537])
def test_row_words_switch_to_64_bits_above_2_to_the_16_rows(n):
    """Up to 2^16 rows, row | rank << 16 fits 32 bits (the last row with the last rank is 0xFFFFFFFF); one row
    more takes the 64-bit words."""
    X = np.arange(n, dtype=np.float64)[:, None]
    orderT = np.arange(n, dtype=np.int64)[None, :]
    grpT = np.arange(n, dtype=np.int32)[None, :]
    words = orders.search_arrays(X, orderT, grpT)[1]
    sh = 16 if n <= orders.OG32_ROWS else 32
    assert words.dtype == (np.uint32 if n <= orders.OG32_ROWS else np.int64) and orders.og_shift(words) == sh
    assert orders.og_row(words[0, -1], sh) == n - 1 and int(words[0, -1]) >> sh == n - 1
    assert int(words[0, -1]) == (0xFFFFFFFF if n == 65536 else (n - 1) | ((n - 1) << 32))


def test_move_cache_table_reads_a_torn_slot_as_a_miss():
    mc = new_move_cache()
    movecache.mc_put(mc, 12345, -678, 2, 7, np.float64(0.25).view(np.int64))
    assert movecache.mc_get(mc, 12345, -678) == (True, 2, 7, np.float64(0.25).view(np.int64))
    assert not movecache.mc_get(mc, 12345, -679)[0]
    slot = np.flatnonzero(mc[:, 0] == 12345)[0]
    mc[slot, 3] ^= 1  # the threshold half-written by another thread: the check word no longer matches
    assert not movecache.mc_get(mc, 12345, -678)[0]


def test_fetch_add_hands_out_every_index_once_across_threads():
    seen = np.zeros(20000, np.int64)
    nxt = np.zeros(1, np.int64)

    @numba.njit(nogil=True)
    def take(nxt, seen):
        while True:
            k = restarts.fetch_add(nxt, 0)
            if k >= seen.shape[0]:
                return
            restarts.fetch_add(seen, k)

    with ThreadPoolExecutor(2) as ex:
        list(ex.map(lambda _: take(nxt, seen), range(2)))
    assert (seen == 1).all() and nxt[0] == 20002


def test_kernel_objectives_rank_like_the_trees():
    """The per-restart kernel objectives equal the Python objective of the built trees, and the best tree
    returned without return_all is the first best of the full ranking."""
    rng = np.random.default_rng(5)
    X = np.round(rng.random((200, 5)), 2)
    y = (X[:, 0] > 0.5).astype(int) ^ (rng.random(200) < 0.2)
    d = prepare(X, y)
    res = local_search(d, 3, alpha=0.01, n_restarts=40, random_state=1, return_all=True)
    best = local_search(d, 3, alpha=0.01, n_restarts=40, random_state=1)
    assert objective(best, make_problem(d), 0.01) == res.objective
    assert best.predict(X).tolist() == res.tree.predict(X).tolist()
    assert res.counters["node_visits"] >= res.counters["cache_hits"] > 0


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 60), nmin=st.integers(1, 4), pairs=st.integers(1, 3), seed=st.integers(0, 10**6),
       bound=st.integers(0, 40))
def test_integer_scans_equal_the_float_scan(n, nmin, pairs, seed, bound):
    """With two classes and unit weights the integer scans return the float scan's (loss, q) exactly; with a
    bound (they stop once no later cut can be below it) exactly whenever that loss is below the bound, and
    otherwise nothing below it."""
    rng = np.random.default_rng(seed)
    Z = np.zeros((n, 2))
    Z[np.arange(n), rng.integers(0, 2, n)] = 1.0
    vals = np.sort(rng.integers(0, max(2, n // 2), n)).astype(np.float64)
    movers = rng.permutation(n).astype(np.int64)
    T = 2 * pairs + 1
    low_d = 1 + 2 * rng.integers(0, pairs, n).astype(np.int64)
    up_d = low_d + 1
    stats, cnt, lloss = np.zeros((T, 2)), np.zeros(T, np.int64), np.zeros(T)
    for i in range(n):
        stats[up_d[i]] += Z[i]
        cnt[up_d[i]] += 1
    leaves = np.arange(1, T)
    for L in leaves:
        lloss[L] = losses.leaf_loss(losses.MISCLASSIFICATION, stats, L, cnt)
    total, deficient = lloss.sum(), int(sum(cnt[L] < nmin for L in leaves))
    c1 = stats[:, 1].astype(np.int64)
    lidx, pk = np.zeros(T, np.int64), np.zeros(n, np.int64)
    upc, lowc, curc = (np.zeros(T, np.int64) for _ in range(3))
    got_counts = scans.unit_node_counts(np.arange(n), n, Z, up_d, low_d, up_d, leaves, len(leaves), len(leaves), lidx,
                                    pk, upc, lowc, curc, nmin)
    assert got_counts[3] == total and got_counts[4] == deficient  # the start placement: everyone upper
    np.testing.assert_array_equal(upc[:len(leaves)], (cnt[leaves] << 32) | c1[leaves])
    assert (pk & 1).tolist() == Z[:, 1].astype(int).tolist()
    assert (lidx[low_d] == (pk >> 1) & scans.LMASK).all() and (lidx[up_d] == (pk >> 16) & scans.LMASK).all()
    code = pk[movers] | (vals.astype(np.int64) << 32)
    margin = 2 * c1 - cnt
    cm = (cnt[1:] << 32) | (margin[1:] + scans.MBIAS)
    got = scans.scan_unit(code, n, nmin, cm.copy(), total, deficient, scans.NO_BOUND)
    cut = scans.scan_unit(code, n, nmin, cm.copy(), total, deficient, bound)
    if pairs == 1:
        assert cnt[1] == 0  # the lower leaf starts empty
        u1 = int(stats[2, 1])
        assert scans.scan_unit_pair(code, n, nmin, cnt[2] - u1, u1, scans.NO_BOUND) == got
        assert scans.scan_unit_pair(code, n, nmin, cnt[2] - u1, u1, bound) == cut
    want = scans.scan_core(movers, n, vals, low_d, up_d, Z, losses.MISCLASSIFICATION, nmin, stats, cnt, lloss, total, deficient,
                       losses.fen_empty())
    assert got == want
    if want[0] < bound:
        assert cut == want
    else:
        assert not cut[0] < bound


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 300), frac=st.floats(0.0, 1.0), seed=st.integers(0, 10**6))
def test_node_order_is_the_filtered_presorted_order(n, frac, seed):
    """The bitmap of ranks lists a node's rows exactly as filtering the global presorted order does, in any
    order of the node's rows (rows kept in leaf order are not sorted by index), with or without codes."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.random((n, 3)), 1)  # many ties
    prob = make_problem(prepare(X, rng.integers(0, 2, n), allow_single_class=True))
    rankT = orders.ranks(prob.orderT)
    inI = rng.random(n) < frac
    I = np.flatnonzero(inI).astype(np.int64)
    mark = np.zeros((n + 63) // 64, np.uint64)
    movers, vals = np.empty(n, np.int64), np.empty(n)
    for j in range(3):
        pk, code, stage = rng.integers(0, 2**31, n), np.empty(n, np.int64), np.empty(n, np.int64)
        m = orders.node_order(I, len(I), rankT, prob.orderT, prob.grpT, j, mark, movers, vals)
        keep = inI[prob.orderT[j]]
        assert m == len(I) and not mark.any()
        np.testing.assert_array_equal(movers[:m], prob.orderT[j][keep])
        np.testing.assert_array_equal(vals[:m], prob.grpT[j][keep])
        ogT = orders.og_words(prob.orderT, prob.grpT)
        assert orders.node_codes(I[::-1].copy(), len(I), rankT, ogT, j, mark, pk, code, stage, True) == m
        assert not mark.any()
        np.testing.assert_array_equal(code[:m], pk[movers[:m]] | (prob.grpT[j][keep].astype(np.int64) << 32))
        np.testing.assert_array_equal(stage[:m] & orders.LOW32, movers[:m])


def _tree_labels(X, depth, rng):
    """Labels of a random axis-aligned tree (alternating classes by leaf) with 5% noise."""
    node = np.zeros(len(X), dtype=int)
    for d in range(depth):
        feats, thr = rng.integers(0, X.shape[1], 2**d), rng.uniform(0.2, 0.8, 2**d)
        pos = node - (2**d - 1)
        node = 2 * node + 1 + (X[np.arange(len(X)), feats[pos]] >= thr[pos])
    y = (node - (2**depth - 1)) % 2
    return y ^ (rng.random(len(X)) < 0.05)


@pytest.mark.parametrize("n, p, depth, decimals, alpha", [(300, 5, 4, 2, 0.01), (300, 6, 3, 1, 0.0),
                                                          (3000, 10, 2, 6, 0.0), (3000, 10, 4, 6, 0.0)])
def test_unit_weights_take_the_integer_path_with_the_same_trees(n, p, depth, decimals, alpha):
    """Weights of 2 keep the float scans; every restart's tree equals the unit-weight (integer) run's, which
    also keeps rows in leaf order and caches the top nodes' feature orders (3000 continuous rows: large
    nodes filter all rows and reuse the cached orders, small ones use the rank bitmap), stops its scans at
    the best cut so far and scans a node's current feature first (one decimal: many features tie, and the
    first in index order must still win)."""
    rng = np.random.default_rng(11)
    X = np.round(rng.random((n, p)), decimals)
    y = _tree_labels(X, 5, rng) if n > 1000 else ((X[:, 0] > 0.4) ^ (X[:, 2] > 0.6)).astype(int) ^ (rng.random(n) < 0.1)
    # max_moves far above what these searches need: a wrong scan decision can make a search cycle forever
    one = local_search(prepare(X, y), depth, alpha=alpha, n_restarts=30, random_state=0, return_all=True,
                       max_moves=5000)
    two = local_search(prepare(X, y, sample_weight=np.full(n, 2.0)), depth, alpha=alpha, n_restarts=30,
                       random_state=0, return_all=True, max_moves=5000)
    assert scans.unit_binary(make_problem(prepare(X, y)).Z, losses.MISCLASSIFICATION)
    np.testing.assert_array_equal(one.objectives, two.objectives)
    for a, b in zip(one.trees, two.trees):
        assert a.predict(X).tolist() == b.predict(X).tolist()



@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 60), p=st.integers(1, 4), decimals=st.integers(0, 3), scale=st.sampled_from([1.0, 1e-9, 1e6]),
       flip=st.booleans(), seed=st.integers(0, 10**6))
def test_vectorised_presort_equals_the_per_column_sort(n, p, decimals, scale, flip, seed):
    """All columns sorted at once give each column's (key, X, row) order and dense key ranks, also when a
    column's key is not monotone in X (that column falls back to its own lexsort), and with many ties (the
    unstable argsort's ties are put back in row order)."""
    from opttrees.heuristics.core import _presort
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, p)) * scale, decimals)
    X[:, 0] = X[:, 0] if n % 3 else 3.0  # constant columns too
    lo, hi = X.min(axis=0), X.max(axis=0)
    key = np.round(np.clip((X - lo) / np.where(hi > lo, hi - lo, 1.0), 0.0, 1.0), 6)
    if flip:
        key[:, -1] = -key[:, -1]
    orderT, grp, grpT = _presort(X, key)
    for j in range(p):
        np.testing.assert_array_equal(orderT[j], np.lexsort((X[:, j], key[:, j])))
        np.testing.assert_array_equal(grp[:, j], np.unique(key[:, j], return_inverse=True)[1].ravel())
        np.testing.assert_array_equal(grpT[j], grp[orderT[j], j])
    assert grp.flags.c_contiguous and orderT.flags.c_contiguous and grpT.flags.c_contiguous


@settings(max_examples=40, deadline=None)
@given(n=st.integers(8, 400), frac=st.floats(0.02, 1.0), decimals=st.sampled_from([1, 3, 9]), weighted=st.booleans(),
       kind=st.sampled_from([losses.GINI, losses.MISCLASSIFICATION]), nmin=st.integers(1, 4), seed=st.integers(0, 10**6))
def test_start_tree_split_equals_the_generic_scan(n, frac, decimals, weighted, kind, nmin, seed):
    """best_parallel_start (a start tree's two-class split with the set-up done once; best_parallel hands it
    the two-leaf case) returns the best of the generic scan (:func:`scan`, its own set-up) over each feature's
    order, bit for bit, and that order is the filtered presorted order wherever a feature's values are all
    distinct (where small nodes take the bitmap instead of sorting): ties or distinct values, unit or float
    weights, gini or misclassification, minimum leaf sizes."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.random((n, 4)), decimals)
    y = rng.integers(0, 2, n)
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    prob = make_problem(prepare(X, y, sample_weight=w, allow_single_class=True))
    rankT = orders.ranks(prob.orderT)
    inI = rng.random(n) < frac
    I = rng.permutation(np.flatnonzero(inI)).astype(np.int64)  # any row order, as blocks of rows come
    nI = len(I)
    if nI < 2 * nmin:
        return
    T = 3
    low_d, up_d = np.full(n, 1, np.int64), np.full(n, 2, np.int64)
    leaves = np.array([1, 2], np.int64)
    movers, vals, mark = np.empty(n, np.int64), np.empty(n), np.zeros((n + 63) // 64, np.uint64)
    small, bitmap, bsmall = orders.order_mode(nI, n)
    want = (np.inf, -1, 0.0, 0.0)
    for j in range(4):
        m = orders.feature_order(I, nI, inI, prob.X, prob.grp, prob.orderT, prob.grpT, rankT, j, mark, movers, vals, small,
                            bitmap, bsmall)
        assert m == nI
        if len(np.unique(X[:, j])) == n or not small:
            np.testing.assert_array_equal(movers[:m], prob.orderT[j][inI[prob.orderT[j]]])
        if m < 2 or vals[0] == vals[m - 1]:
            continue
        loss, q = scans.scan(I, nI, movers, m, vals, low_d, up_d, np.zeros(n, np.bool_), prob.Z, kind, nmin, leaves, 2,
                         np.zeros((T, 2)), np.zeros(T, np.int64), np.zeros(T))
        if 0 <= q < m - 1 and loss < want[0]:
            i0, i1 = movers[q], movers[q + 1]
            want = (loss, j, splits.safe_mid(prob.X[i0, j], prob.X[i1, j]), 0.5 * (prob.Xs[i0, j] + prob.Xs[i1, j]))
    s0, s1 = 0.0, 0.0
    for i in I:  # in I's order, as the kernels sum (start() below gets the same I)
        s0 += prob.Z[i, 0]
        s1 += prob.Z[i, 1]
    x = losses.gini_loss2(s0, s1) if kind == losses.GINI else losses.mis_loss2(s0, s1)
    def start(fsub, memo, keys=None):
        keys = (np.uint64(0), np.uint64(0)) if keys is None else keys
        return splits.best_parallel_start(I, nI, inI, prob.X, prob.Xs, prob.grp, prob.orderT, prob.grpT, rankT,
                                     prob.featok, fsub, 4, prob.Z, kind, nmin, np.empty(n, np.int64), np.empty(n), s0, s1,
                                     x, memo, *keys, np.zeros(1))

    nomemo = np.zeros((0, 5), np.int64)
    assert start(np.arange(4, dtype=np.int64), nomemo) == want
    # each feature's scan kept in a memo under (rows, feature): the same split from a cold memo and from a warm
    # one, in any feature order (ties go to the first feature in it, as without the memo); a warm memo is read
    # (an entry planted for feature 2 wins)
    rh = movecache.row_hashes(n)
    keys = (rh[0, I].sum(), rh[1, I].sum())
    memo = new_move_cache()
    assert start(np.arange(4, dtype=np.int64), memo, keys) == want
    assert (memo[:, 4] != 0).sum() == prob.featok.sum()  # one entry per feature
    assert start(np.arange(4, dtype=np.int64), memo, keys) == want
    back = np.arange(3, -1, -1, dtype=np.int64)
    assert start(back, memo, keys) == start(back, nomemo)
    if prob.featok[2]:
        planted = new_move_cache()
        movecache.slot_put(planted, *movecache.start_key(*keys, 2, kind, nmin), np.float64(-1.0).view(np.int64), (I[0] << 32) | I[1])
        got = start(np.arange(4, dtype=np.int64), planted, keys)
        assert got[:2] == (-1.0, 2) and got[2] == splits.safe_mid(prob.X[I[0], 2], prob.X[I[1], 2])


@settings(max_examples=200, deadline=None)
@given(best=st.floats(0.0, 60.0), tol=st.sampled_from([0.0, 1e-9, 1e-6, 0.5]), extra=st.floats(0.0, 5.0),
       nmax=st.integers(0, 50))
def test_accept_bound_is_the_least_rejected_integer_loss(best, tol, extra, nmax):
    """The scans' bound is exactly where the acceptance test (loss + extra < best - tol) starts to fail, so
    stopping there never drops a split the search would have taken."""
    k = scans.accept_bound(best, tol, extra, nmax)
    assert 0 <= k <= nmax + 1
    if k <= nmax:
        assert not (float(k) + extra < best - tol)
    if k > 0:
        assert float(k - 1) + extra < best - tol

