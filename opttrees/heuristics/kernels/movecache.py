"""The move cache: a lock-free table shared by the worker threads of one call, from a 128-bit key (a
node's row set and the subtree below it, or a start tree's row set and feature) to a decision, and the
hashes that make the keys (see the note below).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .routing import push_children, subtree_stack


H_SEED1 = np.uint64(0x9E3779B97F4A7C15)


H_SEED2 = np.uint64(0xD1B54A32D192ED03)


H_MUL1 = np.uint64(0xBF58476D1CE4E5B9)


H_MUL2 = np.uint64(0x94D049BB133111EB)


H_S30, H_S27, H_S31 = np.uint64(30), np.uint64(27), np.uint64(31)


@njit(cache=True, nogil=True, inline="always")
def mix64(x):
    """splitmix64's finaliser: a bijection of uint64 whose output bits all depend on every input bit."""
    x = (x ^ (x >> H_S30)) * H_MUL1
    x = (x ^ (x >> H_S27)) * H_MUL2
    return x ^ (x >> H_S31)


@njit(cache=True, nogil=True)
def subtree_key(ntype, feat, thrb, t, h1, h2):
    """Fold the shape, features and thresholds (bits) of the subtree at t, in preorder, into (h1, h2)."""
    stack, sp = subtree_stack(t)
    while sp > 0:
        sp -= 1
        u = stack[sp]
        code = np.uint64(ntype[u])
        if ntype[u] >= 2:  # a leaf's feat / thr entries are stale: leave them out
            code += np.uint64(8) * np.uint64(feat[u] + 2)
        h1 = mix64(h1 ^ code) + H_SEED1
        h2 = mix64(h2 + code * H_SEED2) ^ H_MUL1
        if ntype[u] >= 2:
            h1 = mix64(h1 ^ thrb[u]) + H_SEED1
            h2 = mix64(h2 + thrb[u] * H_SEED2) ^ H_MUL1
            sp = push_children(stack, sp, u)
    return np.int64(mix64(h1)), np.int64(mix64(h2 + H_SEED1))


MC_WAYS = 2  # slots probed per key (adjacent, so one or two cache lines)


def move_cache(n_restarts, T):
    """An empty move-cache table for a call of ``n_restarts`` restarts on heap size T: about four slots per
    possible node visit of the first pass plus the start trees' split scans (:func:`grow_ranked`), a power
    of two between 2^12 and 2^18 slots (40 bytes each)."""
    want = max(4096, 6 * int(n_restarts) * int(T))
    return np.zeros((1 << min(18, max(12, (want - 1).bit_length())), 5), np.int64)


@njit(cache=True, nogil=True, inline="always")
def mc_check(k1, k2, a, b):
    """A slot's check word: every bit depends on all four words; never 0 (0 marks an empty slot)."""
    return np.int64(mix64(mix64(mix64(mix64(np.uint64(k1) ^ H_SEED2) ^ np.uint64(k2)) + np.uint64(a)) ^ np.uint64(b))) | 1


@njit(cache=True, nogil=True)
def slot_get(mc, k1, k2):
    """Look (k1, k2) up in a move-cache table: (hit, a, b), the two words stored with it (see the
    move-cache note). An empty table (no rows) always misses."""
    mask = mc.shape[0] - 1
    if mask < 1:  # no table (or one slot: the two probed slots would not exist)
        return False, np.int64(0), np.int64(0)
    h = k1 & mask
    for w in range(MC_WAYS):
        s = h ^ w
        s1 = mc[s, 0]
        s2 = mc[s, 1]
        a = mc[s, 2]
        b = mc[s, 3]
        c = mc[s, 4]
        if s1 == k1 and s2 == k2 and c == mc_check(s1, s2, a, b):
            return True, a, b
    return False, np.int64(0), np.int64(0)


@njit(cache=True, nogil=True)
def slot_put(mc, k1, k2, a, b):
    """Store two words under (k1, k2): the key's first empty slot, else its first (a lost entry is only a
    later miss). An empty table stores nothing."""
    mask = mc.shape[0] - 1
    if mask < 1:
        return
    h = k1 & mask
    s = h
    for w in range(MC_WAYS):
        if mc[h ^ w, 4] == 0:
            s = h ^ w
            break
    mc[s, 0] = k1
    mc[s, 1] = k2
    mc[s, 2] = a
    mc[s, 3] = b
    mc[s, 4] = mc_check(k1, k2, a, b)


@njit(cache=True, nogil=True)
def mc_get(mc, k1, k2):
    """Look a node visit up: (hit, move, feature, threshold's bits) (see the move-cache note)."""
    hit, a, b = slot_get(mc, k1, k2)
    if hit:
        return True, a & 7, (a >> 3) - 1, b
    return False, np.int64(0), np.int64(-1), np.int64(0)


@njit(cache=True, nogil=True)
def mc_put(mc, k1, k2, move, pj, ptbits):
    """Store a visit's decision (ptbits: the threshold's bits)."""
    slot_put(mc, k1, k2, np.int64(move) | ((np.int64(pj) + 1) << 3), ptbits)


@njit(cache=True, nogil=True, inline="always")
def start_key(r1, r2, j, kind, nmin):
    """The move-cache key of a start tree's split scan of feature j over a node's rows (hash sums r1, r2), with
    its loss kind and minimum leaf size: mixed differently from :func:`subtree_key`, so the two kinds of entries
    share one table. (A table serves one call: the data and its presorted orders are not in the key.)"""
    code = np.uint64(j + 1) | (np.uint64(nmin) << np.uint64(24)) | (np.uint64(kind) << np.uint64(56))
    return np.int64(mix64((r1 ^ H_MUL1) + code * H_SEED2)), np.int64(mix64((r2 + H_SEED1) ^ (code * H_MUL2)))


@njit(cache=True, nogil=True)
def row_hashes(n):
    """Each row's two 64-bit hash words (rh[0, i], rh[1, i]): a row set's key is their two sums."""
    rh = np.empty((2, n), np.uint64)
    for i in range(n):
        rh[0, i] = mix64(np.uint64(i) + H_SEED1)
        rh[1, i] = mix64(np.uint64(i) * H_MUL2 + H_SEED2)
    return rh
