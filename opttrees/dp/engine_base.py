"""The binary engine's shared parts: option slots and counters, the cache's entries and keys, and leaf costs.

Read by the search (:mod:`opttrees.dp.engine`), the depth-two solver (:mod:`opttrees.dp.depth_two`), the
continuous search's kernels and :mod:`opttrees.dp.api`, which fills the option array. Conventions: see
:mod:`opttrees.dp.engine`.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict

from ..heuristics.kernels.losses import sq_loss3

INF = np.inf

#: entry = (lower bound, optimal cost or inf, feature (-1 leaf), left node budget, left child split,
#:          right child split, kind: 0 bound only, 1 optimal (children in the cache), 2 optimal depth-two tree)
ENTRY = types.Tuple((types.float64, types.float64, types.int64, types.int64, types.int64, types.int64, types.int64))
KEY = types.Tuple((types.uint64, types.uint64, types.int64, types.int64))

# counters (the ``stats`` array)
N_SUBPROBLEMS, N_CACHE_HITS, N_D2_CALLS, N_BOUND_PRUNES, N_D2_INCREMENTAL, N_SIM_PRUNES = range(6)
N_COUNTERS = 8

# option flags (the ``opt`` int array)
O_USE_DATASET, O_USE_BRANCH, O_USE_D2, O_USE_UB, O_USE_LB, O_USE_SIM, O_MINLEAF, O_KIND, O_K, O_HAS_FCOST, \
    O_HAS_COUNT, O_ONEHOT, O_S = range(13)
N_OPTS = 16


@njit(cache=True)
def new_cache():
    return Dict.empty(KEY, ENTRY)


@njit(cache=True)
def cache_entries(dset, br):
    """Entries of both caches: ``len()`` of a typed Dict called from Python compiles numba's own helper in every
    process (it is never cached on disk), this kernel is."""
    return len(dset) + len(br)


@njit(cache=True, nogil=True)
def leaf_cost(v, kind, K, M):
    """Best constant leaf's raw loss for the summed statistics ``v``."""
    if kind == 0:
        tot = 0.0
        mx = 0.0
        for k in range(K):
            tot += v[k]
            if v[k] > mx:
                mx = v[k]
        r = tot - mx
        return r if r > 0.0 else 0.0
    if kind == 1:
        best = INF
        for kh in range(K):
            c = 0.0
            for k in range(K):
                c += v[k] * M[k, kh]
            if c < best:
                best = c
        return best
    return sq_loss3(v[0], v[1], v[2])


@njit(cache=True, nogil=True)
def _count(v, opt):
    """Number of rows behind the statistics ``v`` (the count column, or the weight when weights are 1)."""
    if opt[O_HAS_COUNT]:
        return v[opt[O_S]]
    return _weight(v, opt)


@njit(cache=True, nogil=True)
def _weight(v, opt):
    """Total sample weight behind ``v`` (what a feature cost is multiplied by)."""
    if opt[O_KIND] == 2:
        return v[0]
    t = 0.0
    for k in range(opt[O_K]):
        t += v[k]
    return t


@njit(cache=True, nogil=True)
def _feature_cost(f, extra, blk_cnt, grp_cnt, fcost, fdisc, fblock, fgroup):
    """m(F, f): free when a column of the same original feature was tested on the path (or is ``extra``),
    the group discount when a feature of its group was, the full cost otherwise."""
    b = fblock[f]
    if blk_cnt[b] > 0 or (extra >= 0 and fblock[extra] == b):
        return 0.0
    g = fgroup[f]
    if g >= 0 and (grp_cnt[g] > 0 or (extra >= 0 and fgroup[extra] == g)):
        return fdisc[f]
    return fcost[f]


@njit(cache=True, nogil=True)
def _norm(d, n):
    full = (1 << d) - 1
    if n > full:
        n = full
    if d > n:
        d = n
    return d, n


@njit(cache=True, nogil=True)
def _lookup(dset, br, kd, kb, opt):
    """(lower bound, optimal cost or inf, found optimal entry) from the caches that are switched on."""
    lb = 0.0
    if opt[O_USE_DATASET] and kd in dset:
        lb, found = _probe(dset[kd], lb)
        if found:
            return lb, lb, True
    if opt[O_USE_BRANCH] and kb in br:
        lb, found = _probe(br[kb], lb)
        if found:
            return lb, lb, True
    return lb, INF, False


@njit(cache=True, nogil=True, inline="always")
def _probe(e, lb):
    """One cache entry read by :func:`_lookup`: (its optimal cost, True) when it holds one, else (the larger of its
    lower bound and ``lb``, False)."""
    if e[6] > 0:
        return e[1], True
    return (e[0] if e[0] > lb else lb), False


# Cache keys and entries built with fixed element types (uint64 x2, int64 x2; float64 x2, int64 x5): a literal int
# in a tuple (or as an argument) is typed as that literal, and _store, _set_root and _feature_cost compiled once
# per literal combination (8, 3 and 2 signatures) before these helpers.
@njit(cache=True, nogil=True, inline="always")
def _key(h1, h2, d, n):
    return (h1, h2, np.int64(d), np.int64(n))


@njit(cache=True, nogil=True, inline="always")
def _entry(lb, ub, f, nl, left, right, kind):
    return (np.float64(lb), np.float64(ub), np.int64(f), np.int64(nl), np.int64(left), np.int64(right),
            np.int64(kind))


@njit(cache=True, nogil=True, inline="always")
def _no_extra():   # "no extra feature" (-1) for _feature_cost, as an int64 rather than a literal
    return np.int64(-1)


@njit(cache=True, nogil=True)
def _store(dset, br, kd, kb, e, opt):
    if opt[O_USE_DATASET]:
        if e[6] == 0 and kd in dset:
            old = dset[kd]
            if old[6] > 0 or old[0] >= e[0]:
                pass
            else:
                dset[kd] = e
        else:
            dset[kd] = e
    if opt[O_USE_BRANCH] or not opt[O_USE_DATASET]:
        if e[6] == 0 and kb in br:
            old = br[kb]
            if old[6] > 0 or old[0] >= e[0]:
                return
        br[kb] = e


def _guard_cache() -> None:
    """The squared loss (``sq_loss3``) is compiled in from the heuristics' kernels: drop this module's cache when
    either file changed (see :func:`opttrees.jit.fresh_cache`)."""
    from ..jit import guard_cache

    guard_cache(__name__)   # the files: opttrees/kernel_modules.py


_guard_cache()
