"""Dunn's local search (thesis Algorithms 2.1–2.3 and 3.1–3.2) with random restarts.

Each restart grows an RF-style start tree (CART with a random sqrt(p) feature subset per split, no
bootstrap), then re-optimises one node at a time in random order — best parallel split with the children
fixed, replacement by the lower or upper child, and (``split_type="hyperplane"``) coordinate-wise hyperplane
search from the best parallel split plus H random hyperplanes — accepting only strict improvements of the
shared objective (losses / L̂ + alpha * complexity) until no node improves. Restarts run in parallel threads
(the numba kernels release the GIL); every restart seeds its own generator, so the result depends only on
``random_state``, never on ``n_jobs`` (unless the run is stopped early).

Speed without changing any result (issue 17; every restart's tree is bit-identical to the plain search):
each worker thread keeps a cache of node-visit outcomes keyed by (node's row set, subtree below it) that
all its restarts share (parallel splits only, see ``_kernels``); a node whose subtree loss already equals
the least a new split could cost (e.g. a pure subtree) skips its split scan, and a node that has just taken
a new split with its children fixed is not re-scanned until something below or above it changes (that scan
could only find the same split); two-class and squared-loss scans keep the leaf statistics in registers.
Two classes with unit weights (the common case) run every visit in integers, exact and so with the same
decisions: one pass of packed counts gives the current loss, both promotions and the scan's start; each
feature's scan reads one sequential word per row (class, both leaves, rank) and keeps a leaf's count and
class margin in one word; rows are kept in leaf order, so a node's rows are one block found by binary search
(no pass over all n rows per visit); the top levels' feature orders are cached per node while their rows do
not change. A node's rows come in each feature's presorted order from a bitmap of their ranks (O(n_node +
n/64) instead of filtering all n rows); a node's points are routed only through the child subtree they are
not in, node by node with one comparison per row and level, and after an accepted move they are re-placed
from that routing instead of walking the tree again; start trees split each node's block of rows in place
and place random cuts by selection; per-call arrays are made once for all restarts (fresh megabytes per
restart were page faults); and restarts are ranked by the kernels' objective, so only the best trees are
built as :class:`~opttrees.tree.Tree` (all of them with ``return_all``; exact ties go to the first restart
without building the others).

Stopping (Ctrl-C, time limits): the kernels always run in worker threads, even with ``n_jobs=1``, while the
calling thread waits in short slices and polls :data:`opttrees.interrupt.STOP` and an optional
:class:`~opttrees.interrupt.Deadline`. When either fires it sets a one-element array the kernels read before
every node visit; restarts not yet started are skipped and the running ones return their tree so far (always
valid), so the best tree found so far comes back within about one node visit. Running the kernels off the
main thread is also what keeps a Ctrl-C from crashing the process: a KeyboardInterrupt raised while numba
boxes a kernel's result arrays (it calls back into Python for that) left an exception set inside numba's
C code, which ended in ``SystemError`` or a segfault (exit 139). Signals are only delivered to the main
thread, so a worker thread never sees one.
"""
from __future__ import annotations

import copy
import math
import os
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import numpy as np
from numba import types
from numba.typed import Dict

from ..data import PreparedData
from ..params import check_param
from ..interrupt import STOP
from ..jit import announce_compile
from ..progress import ProgressLine
from ..tree import Tree
from . import _kernels as K
from .core import (KIND, check_alpha, check_depth, heap_to_tree, make_problem, objective,
                   tree_to_heap)

SPLIT_TYPES = ("parallel", "hyperplane")


@dataclass
class LocalSearchResult:
    """Best tree plus every restart's tree and objective (sorted best first, ties by restart index).

    ``stopped``: the run was cut short (Ctrl-C or the deadline); then only the ``n_done`` restarts that
    started are listed (the last of them possibly not at a local optimum).
    """

    tree: Tree
    objective: float
    trees: list = field(default_factory=list)
    objectives: np.ndarray = field(default_factory=lambda: np.zeros(0))
    seeds: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    stopped: bool = False
    n_done: int = 0
    counters: dict = field(default_factory=dict)


COUNTER_NAMES = {K.C_PASSES: "passes", K.C_VISITS: "node_visits", K.C_HITS: "cache_hits",
                 K.C_SCANNED: "points_scanned", K.C_MOVES: "accepted_moves", K.C_ROWS: "rows_examined"}


def new_move_cache():
    """An empty cache of node-visit outcomes (see the move-cache note in ``_kernels``): one per worker thread."""
    return Dict.empty(key_type=types.UniTuple(types.int64, 2), value_type=types.float64[::1])


class _ThreadCaches:
    """One move cache and one order-cache array per worker thread, kept for the whole call: a thread runs one
    chunk at a time, so they are never used by two kernels at once, and every restart a thread runs reuses
    what the thread's earlier restarts learned. A cache hit returns what the full node visit would have
    computed, so the results do not depend on which thread ran which restart."""

    def __init__(self, make_order_cache=None):
        self.lock = threading.Lock()
        self.caches: dict = {}
        self.make_order_cache = make_order_cache

    def get(self):
        return self._get()[0]

    def get_order_cache(self):
        return self._get()[1]

    def _get(self):
        tid = threading.get_ident()
        with self.lock:
            if tid not in self.caches:
                oc = self.make_order_cache() if self.make_order_cache is not None else None
                self.caches[tid] = (new_move_cache(), oc)
            return self.caches[tid]


def _check_common(min_samples_leaf, split_type, n_restarts, n_hyperplane_restarts):
    """The shared rules of opttrees.params (the same words as the estimators and specs)."""
    check_param("min_samples_leaf", min_samples_leaf)
    check_param("split_type", split_type)
    check_param("n_restarts", n_restarts)
    check_param("n_hyperplane_restarts", n_hyperplane_restarts)


def _n_jobs(n_jobs) -> int:
    if n_jobs is None:
        return 1
    n_jobs = int(n_jobs)
    cpu = os.cpu_count() or 1
    return max(1, cpu + 1 + n_jobs) if n_jobs < 0 else max(1, n_jobs)


def _seeds(random_state, n: int) -> np.ndarray:
    rs = random_state if isinstance(random_state, np.random.RandomState) else np.random.RandomState(random_state)
    return rs.randint(0, 2**31 - 1, size=n).astype(np.int64)


def _stop_requested(deadline) -> bool:
    return STOP.is_set() or (deadline is not None and deadline.stop())


def _run_stoppable(tasks, jobs: int, deadline, stop: np.ndarray, on_done=None) -> list:
    """Run ``tasks`` (callables) on ``jobs`` worker threads; set ``stop[0]`` on Ctrl-C or at the deadline.

    Returns each task's result in order (None for a task cancelled before it started); ``on_done(k, result)``
    is called in the calling thread as task k finishes (progress). Without
    :func:`~opttrees.interrupt.stop_on_sigint` around the call, Ctrl-C raises KeyboardInterrupt here in the
    main thread: the workers are stopped and joined first, then it is re-raised.
    """
    ex = ThreadPoolExecutor(max_workers=max(1, jobs))
    futures = [ex.submit(t) for t in tasks]
    index = {f: k for k, f in enumerate(futures)}
    interrupted = None
    try:
        pending = set(futures)
        while pending:
            if not stop[0] and _stop_requested(deadline):
                stop[0] = 1
            finished, pending = wait(pending, timeout=0.02, return_when=FIRST_COMPLETED)
            if on_done is not None:
                for f in finished:
                    if not f.cancelled() and f.exception() is None:
                        on_done(index[f], f.result())
    except KeyboardInterrupt as exc:
        interrupted = exc
    finally:
        if interrupted is not None:
            stop[0] = 1
        ex.shutdown(wait=True, cancel_futures=True)
    if interrupted is not None:
        raise interrupted
    return [None if f.cancelled() else f.result() for f in futures]


class _Restarts:
    """Restart results as they arrive. Many restarts reach the same heap tree, and building and scoring a
    Tree in Python costs about as much as a whole restart on small data, so restarts are ranked by the
    kernels' objective and only the trees that are needed are built, each distinct one once: the best ones
    (within ``_TIE`` of the best kernel objective, then ranked by the shared Python objective exactly as
    before) or, with ``return_all``, all of them. The progress line shows restarts done and the best
    objective while the rest run."""

    _TIE = 1e-9  # kernel and Python objectives differ only by rounding (~1e-15); ties are resolved in Python

    def __init__(self, prob, alpha: float, n_total: int, progress: ProgressLine | None, deadline):
        self.prob, self.alpha, self.n_total = prob, alpha, n_total
        self.progress, self.deadline = progress, deadline
        self.heaps: dict = {}   # key -> (heap arrays, kernel objective / L̂)
        self.built: dict = {}   # key -> (Tree, objective)
        self.chunks: dict = {}
        self.best = math.inf

    def add(self, k: int, out, seeds: np.ndarray) -> None:
        NT, FE, TH, CO, OB, n = out
        rows = []
        for r in range(n):
            key = (NT[r].tobytes(), FE[r].tobytes(), TH[r].tobytes(), CO[r].tobytes())
            if key not in self.heaps:
                self.heaps[key] = ((NT[r], FE[r], TH[r], CO[r]), float(OB[r]) / self.prob.baseline)
                self.best = min(self.best, self.heaps[key][1])
            rows.append(key)
        self.chunks[k] = (seeds[:n], rows)
        if self.progress is not None:
            left = self.deadline.remaining() if self.deadline is not None else None
            self.progress.update(restarts=f"{self.n_done()}/{self.n_total}", best=self.best,
                                 left=None if left is None or not math.isfinite(left) else round(max(left, 0.0), 1))

    def n_done(self) -> int:
        return sum(len(s) for s, _ in self.chunks.values())

    def _build(self, key):
        if key not in self.built:
            t = heap_to_tree(self.prob, *self.heaps[key][0])
            self.built[key] = (t, objective(t, self.prob, self.alpha))
        return self.built[key]

    def _keys(self):
        seeds, keys = [], []
        for k in sorted(self.chunks):
            s, rows = self.chunks[k]
            seeds.append(s)
            keys.extend(rows)
        return (np.concatenate(seeds) if seeds else np.zeros(0, np.int64)), keys

    def best_tree(self) -> Tree:
        """The best tree, ties to the first restart (as ``ranked`` orders them), building only the candidates."""
        _, keys = self._keys()
        low = min(self.heaps[key][1] for key in keys)
        cands = [key for key in keys if self.heaps[key][1] <= low + self._TIE * max(1.0, abs(low))]
        if all(self.heaps[key][1] == low for key in cands):
            # exact ties (e.g. many restarts reach a perfect tree at depth 6): the first restart wins, as the
            # ranking below would choose; building every tied tree cost 40 ms on breast cancer at depth 6
            return self._build(cands[0])[0]
        objs = np.array([self._build(key)[1] for key in cands])
        return self.built[cands[int(np.lexsort((np.arange(len(objs)), np.round(objs, 12)))[0])]][0]

    def ranked(self, return_all: bool):
        """(seeds, trees, objectives) in restart order (chunks in submission order)."""
        seeds, keys = self._keys()
        trees, objs = [], []
        for key in keys:
            t, o = self._build(key)
            trees.append(copy.deepcopy(t) if return_all else t)
            objs.append(o)
        return seeds, trees, np.asarray(objs, dtype=np.float64)


def local_search(data: PreparedData, max_depth: int, alpha: float = 0.0, min_samples_leaf: int = 1,
                 n_restarts: int = 100, split_type: str = "parallel", random_state=None, n_jobs: int | None = 1,
                 n_hyperplane_restarts: int = 5, loss: str | None = None, return_all: bool = False,
                 max_moves: int | None = None, random_starts: float = 0.25, deadline=None, verbose=False):
    """Best tree over ``n_restarts`` local searches (a Tree, or a LocalSearchResult with ``return_all``).

    random_starts: fraction of restarts that start from a fully random tree (random feature and random
    feasible cut per split) instead of the thesis's RF-style tree. RF-style starts have almost no diversity
    when p is tiny (with p = 3 there are only a handful of distinct start trees), and on random tiny
    instances the mix reaches the brute-force optimum far more often (tests/test_heuristics_local_search.py).

    deadline: an :class:`opttrees.interrupt.Deadline`; when it expires, or :data:`opttrees.interrupt.STOP`
    is set (the first Ctrl-C inside :func:`~opttrees.interrupt.stop_on_sigint`), the search stops within
    about one node visit and returns the best tree so far (at least one restart always runs: its start tree
    is grown in full).

    verbose: a live line (restarts done, best objective, seconds left) while the restarts run.
    """
    D = check_depth(max_depth)
    alpha = check_alpha(alpha)
    _check_common(min_samples_leaf, split_type, n_restarts, n_hyperplane_restarts)
    prob = make_problem(data, loss)
    seeds = _seeds(random_state, int(n_restarts))
    nok = int(prob.featok.sum())
    mtry = max(1, int(math.floor(math.sqrt(max(nok, 1)))))  # floor, as randomForest and sklearn
    start_kind = KIND["gini"] if prob.loss == "misclassification" else prob.kind
    T = 2 ** (D + 1) - 1
    # every argument with one fixed type (int64 / float64 / bool), so the kernels compile once
    args = (int(T), prob.X, prob.Xs, prob.grp, prob.orderT, prob.grpT, prob.Z, prob.featok, int(prob.kind),
            int(start_kind), int(D), int(min_samples_leaf), float(alpha * prob.baseline), split_type == "hyperplane",
            int(n_hyperplane_restarts), float(1e-9 * prob.baseline), int(mtry),
            2**62 if max_moves is None else int(max_moves), float(random_starts))
    jobs = min(_n_jobs(n_jobs), len(seeds))
    # dynamic dispatch: restart times vary a lot, so small chunks are handed to whichever thread is free
    # (static halves can leave one thread idle at the end); each restart seeds itself, so chunking never
    # changes results. The first chunk always completes one restart, even when stopped before it starts.
    # With a progress line, one thread also gets chunks so that the line moves as restarts finish.
    size = max(1, len(seeds) // (8 * jobs)) if jobs > 1 or verbose else len(seeds)
    chunks = [seeds[i:i + size] for i in range(0, len(seeds), size)]
    stop = np.zeros(1, np.int64)
    caches = _ThreadCaches(lambda: K.order_cache(prob.Z, int(prob.kind), split_type == "hyperplane", int(D),
                                                 int(prob.X.shape[1])))
    shared = K.search_arrays(prob.X, prob.orderT, prob.grpT)
    counters = np.zeros((len(chunks), K.N_COUNTERS), np.int64)
    tasks = [lambda c=c, k=k: K.run_restarts(c, *args, stop, 1 if k == 0 else 0, caches.get(), counters[k], *shared,
                                             caches.get_order_cache())
             for k, c in enumerate(chunks)]
    announce_compile("local-search", K.run_restarts, "about a minute on 2 cores")
    left = deadline.remaining() if deadline is not None else None
    with ProgressLine("local search", enabled=bool(verbose), time_limit=left) as line:
        line.update(restarts=f"0/{len(seeds)}")
        runs = _Restarts(prob, alpha, len(seeds), line if verbose else None, deadline)
        _run_stoppable(tasks, jobs, deadline, stop, on_done=lambda k, out: runs.add(k, out, chunks[k]))
    stopped = bool(stop[0])
    if not return_all:
        return runs.best_tree()
    seeds, trees, objs = runs.ranked(return_all)
    rank = np.lexsort((np.arange(len(objs)), np.round(objs, 12)))
    best = trees[rank[0]]
    total = counters.sum(axis=0)
    return LocalSearchResult(best, float(objs[rank[0]]), [trees[r] for r in rank], objs[rank], seeds[rank],
                             stopped=stopped, n_done=len(seeds),
                             counters={name: int(total[k]) for k, name in COUNTER_NAMES.items()})


def improve_tree(data: PreparedData, tree: Tree, max_depth: int, alpha: float = 0.0, min_samples_leaf: int = 1,
                 split_type: str = "parallel", random_state=None, n_hyperplane_restarts: int = 5,
                 loss: str | None = None, max_moves: int | None = None, return_trace: bool = False,
                 deadline=None):
    """Run the local search from a given start tree (e.g. CART, or the depth D-1 solution).

    With ``return_trace`` also returns the raw-objective trace (recomputed from scratch before each accepted
    move and after the last), divided by L̂ so it is on the normalised scale. Stops early (tree so far) on
    Ctrl-C or at ``deadline``, as :func:`local_search`.
    """
    D = check_depth(max_depth)
    alpha = check_alpha(alpha)
    _check_common(min_samples_leaf, split_type, 1, n_hyperplane_restarts)
    prob = make_problem(data, loss)
    ntype, feat, thr, coef = tree_to_heap(tree, prob, D)
    seed = int(_seeds(random_state, 1)[0])
    mm = 10**9 if max_moves is None else int(max_moves)
    trace = np.full(min(mm, 100000) + 1, np.nan)
    stop = np.zeros(1, np.int64)

    def run():  # in a worker thread (see the module docstring); numba's generator is per thread: seed it there
        K.seed_numba(seed)
        return K.local_search(ntype, feat, thr, coef, prob.X, prob.Xs, prob.grp, prob.orderT, prob.grpT, prob.Z,
                              prob.featok, int(prob.kind), int(D), int(min_samples_leaf),
                              float(alpha * prob.baseline), split_type == "hyperplane", int(n_hyperplane_restarts),
                              float(1e-9 * prob.baseline), mm, trace, stop, new_move_cache(),
                              np.zeros(K.N_COUNTERS, np.int64))

    moves = _run_stoppable([run], 1, deadline, stop)[0]
    out = heap_to_tree(prob, ntype, feat, thr, coef)
    if return_trace:
        return out, trace[: moves + 1] / prob.baseline
    return out
