"""Independent restarts on worker threads: each takes restarts from a shared atomic counter, grows a
start tree and runs the local search on it, and writes its tree and objective.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.core import cgutils
from numba.core import types as nbtypes
from numba.extending import intrinsic

from .grow import grow_ranked
from .orders import order_cache
from .routing import tree_objective_raw
from .search import local_search_ranked
from .structs import HeapTree


@intrinsic
def fetch_add(typingctx, arr, idx):
    """Atomically add 1 to arr[idx] (an int64 array) and return the old value (LLVM's sequentially
    consistent atomicrmw, so every store before it is visible to a thread that sees the new value).
    numba has no atomics; the worker threads of :func:`run_restarts` take restarts from a shared counter
    with it, and mark restarts done."""
    if not (isinstance(arr, nbtypes.Array) and arr.dtype == nbtypes.int64 and isinstance(idx, nbtypes.Integer)):
        return None

    def codegen(context, builder, signature, args):
        aryty, idxty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        i = context.cast(builder, args[1], idxty, nbtypes.intp)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [i])
        return builder.atomic_rmw("add", ptr, context.get_constant(nbtypes.int64, 1), "seq_cst")

    return nbtypes.int64(arr, idx), codegen


@njit(cache=True, nogil=True)
def run_restarts(seeds, prob, cfg, ogT, arrays, stop, nxt, cache, counters, out):
    """Independent restarts: RF-style start tree (random mtry features per split), then local search.

    prob, cfg, arrays, out: :class:`.structs.Problem`, :class:`.structs.Settings`, :class:`.structs.SearchArrays`
    and :class:`.structs.RestartOutput`. Every worker thread of a call runs this once: it takes the next restart r
    from the shared counter ``nxt[0]`` (:func:`fetch_add`) until all are taken, so work is shared one restart
    at a time without a Python call per chunk. Restart r seeds its own generator with seeds[r], so its tree does not depend on
    the thread. It writes its tree to NT[r], FE[r], TH[r] (and CO[r] when CO has p columns, i.e. for
    hyperplane splits), its raw objective (leaf losses + pen * complexity, recomputed from scratch) to
    OB[r], so the caller can rank restarts without building trees, then sets done[r] to 1.

    ``stop[0]`` set by another thread ends the run early: restarts r >= 1 are not started once it is set
    (restart 0 always runs, so the caller gets at least one tree), and a running one ends within one node
    visit with its tree so far (still valid: local search only applies whole improving moves). ``cache``
    (shared) and ``counters`` (this thread's): see :func:`local_search_ranked`; the start trees keep their split
    scans in ``cache`` too (:func:`grow_ranked`). ogT and arrays: :func:`search_arrays`, read only and
    shared by every thread.
    """
    X, Z = prob.X, prob.Z
    T, kind, start_kind, D, nmin, pen, hyper, tol, mtry, random_frac = (cfg.T, cfg.kind, cfg.start_kind, cfg.D,
        cfg.nmin, cfg.pen, cfg.hyper, cfg.tol, cfg.mtry, cfg.random_frac)
    rankT, XT, rh = arrays
    NT, FE, TH, CO, OB, done = out
    R = seeds.shape[0]
    p = X.shape[1]
    n = X.shape[0]
    ordc = order_cache(Z, kind, hyper, D, p, ogT)  # this thread's, for all its restarts
    leafpos = np.empty(n, np.int64)
    ostats = np.zeros((T, Z.shape[1]))
    ocnt = np.zeros(T, np.int64)
    oleaves = np.empty(T + 2, np.int64)
    orows = np.empty(n, np.int64)
    otmp = np.empty(n, np.int64)
    trace = np.zeros(1)
    keep_coef = CO.shape[2] == p
    while True:
        r = fetch_add(nxt, 0)
        if r >= R or (r >= 1 and stop[0] != 0):
            break
        np.random.seed(seeds[r])
        ntype = np.zeros(T, np.int8)
        feat = np.zeros(T, np.int64)
        thr = np.zeros(T)
        coef = np.zeros((T, p))
        rs = np.random.random() < random_frac
        tree = HeapTree(ntype, feat, thr, coef)
        grow_ranked(tree, prob, rankT, start_kind, D, nmin, mtry, tol, rs, cache, rh)
        local_search_ranked(tree, prob, cfg, ogT, arrays, ordc, trace, stop, cache, counters)
        NT[r] = ntype
        FE[r] = feat
        TH[r] = thr
        if keep_coef:
            CO[r] = coef
        OB[r] = tree_objective_raw(tree, prob, kind, nmin, pen, XT, leafpos, ostats, ocnt, oleaves, orows, otmp)[0]
        fetch_add(done, r)  # after the stores above, for a thread polling done


@njit(cache=True)
def seed_numba(seed):
    np.random.seed(seed)
