"""Dunn's local search (thesis Algorithms 2.1–2.3 and 3.1–3.2) with random restarts.

Each restart grows an RF-style start tree (CART with a random sqrt(p) feature subset per split, no
bootstrap), then re-optimises one node at a time in random order — best parallel split with the children
fixed, replacement by the lower or upper child, and (``split_type="hyperplane"``) coordinate-wise hyperplane
search from the best parallel split plus H random hyperplanes — accepting only strict improvements of the
shared objective (losses / L̂ + alpha * complexity) until no node improves. Restarts run in parallel threads
(the numba kernels release the GIL); every restart seeds its own generator, so the result depends only on
``random_state``, never on ``n_jobs`` (unless the run is stopped early).

Speed without changing any result (issue 17; every restart's tree is bit-identical to the plain search):
all restarts and threads of a call share one lock-free table of node-visit outcomes keyed by (node's row
set, subtree below it) (parallel splits only, see :mod:`.kernels.movecache`); a node whose subtree loss already equals
the least a new split could cost (e.g. a pure subtree) skips its split scan, and a node that has just taken
a new split with its children fixed is not re-scanned until something below or above it changes (that scan
could only find the same split); two-class and squared-loss scans keep the leaf statistics in registers.
A split scan stops once no later cut can win (rows only enter the lower leaves, whose losses never fall, so
once they reach the best cut so far, or what a move must beat, the rest of that feature is skipped), and the
node's current feature is scanned first so the others stop sooner (ties still go to the first feature).
Two classes with unit weights (the common case) run every visit in integers, exact and so with the same
decisions: one pass of packed counts gives the current loss, both promotions and the scan's start; each
feature's scan reads one sequential word per row (class, both leaves, rank) and keeps a leaf's count and
class margin in one word; rows are kept in leaf order, so a node's rows are one block found by binary search
(no pass over all n rows per visit); each scanned node keeps its feature orders until an ancestor moves, and
a node whose rows changed filters its parent's orders (which gives its sibling's in the same pass), after
first rebuilding any stale orders on the path from its nearest valid ancestor, or takes a bitmap of its ranks
when that is cheaper (O(n_node + n/64), the first two bits of each word read without a branch); orders are
kept as 32-bit words (row and group rank) for up to 2^16 rows, 64-bit above (``kernels.orders.search_arrays``).
A node's points are routed only through the child subtree they are not in, node by node with one comparison
per row and level, and after an accepted move they are re-placed from that routing instead of walking the
tree again; start trees split each node's block of rows in place (two-class splits with their set-up done
once, each feature's scan of a node's rows kept in the shared table for the other restarts) and place random
cuts by selection; per-call arrays are made once for all restarts (fresh megabytes per restart were page
faults); each worker thread makes one kernel call that takes restarts one at a time from an atomic
counter; and restarts are ranked by the kernels' objective, so only the best trees are built as
:class:`~opttrees.tree.Tree` (all of them with ``return_all``; exact ties go to the first restart without
building or scoring the others).

Stopping (Ctrl-C, time limits): the kernels always run in worker threads, even with ``n_jobs=1``, while the
calling thread waits in short slices and polls :data:`opttrees.interrupt.STOP` and an optional
:class:`~opttrees.interrupt.Budget`. When either fires it sets a one-element array the kernels read before
every node visit; restarts not yet started are skipped and the running ones return their tree so far (always
valid), so the best tree found so far comes back within about one node visit. Running the kernels off the
main thread is also what keeps a Ctrl-C from crashing the process: a KeyboardInterrupt raised while numba
boxes a kernel's result arrays (it calls back into Python for that) left an exception set inside numba's
C code, which ended in ``SystemError`` or a segfault (exit 139). Signals are only delivered to the main
thread, so a worker thread never sees one.

A cold kernel (numba has not compiled it in this installation yet; ``opttrees warmup`` does it at install) is
compiled in those worker threads too, data preparation included, so the compile counts in the time limit and
Ctrl-C is seen within a poll: a kernel still compiling at the time limit or at Ctrl-C is left to finish in the
background (daemon threads; numba caches it for the next run), and the fit returns a fallback tree — CART
(scikit-learn, no numba) for classification, the root leaf for regression — with a warning
(:func:`opttrees.jit.run_threads`).
"""
from __future__ import annotations

import copy
import functools
import math
from dataclasses import dataclass, field

import numpy as np

from ..data.prepared import PreparedData
from ..errors import InputError
from ..params import check_param, n_workers
from ..interrupt import Budget
from ..jit import ABANDONED, announce_compile, is_cold, run_threads, warn_still_compiling
from ..progress import ProgressLine
from ..tree import Tree
from .kernels import movecache, orders, restarts, search, structs
from .core import (KIND, check_alpha, check_depth, heap_to_tree, make_problem, objective, standardized, to_user,
                   tree_to_heap)

SPLIT_TYPES = ("parallel", "hyperplane")


@dataclass
class LocalSearchResult:
    """Best tree plus every restart's tree and objective (sorted best first, ties by restart index).

    ``stopped``: the run was cut short (Ctrl-C or the time limit); then only the ``n_done`` restarts that
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


COUNTER_NAMES = {search.C_PASSES: "passes", search.C_VISITS: "node_visits", search.C_HITS: "cache_hits",
                 search.C_SCANNED: "points_scanned", search.C_MOVES: "accepted_moves", search.C_ROWS: "rows_examined"}


def new_move_cache(n_restarts: int = 1, T: int = 1):
    """An empty table of node-visit outcomes and start-tree split scans (see the move-cache note in
    :mod:`.kernels.movecache`), shared by all the worker threads of one call. One table per call: its entries are only
    valid for that call's data and parameters."""
    return movecache.move_cache(n_restarts, T)


def _check_common(min_samples_leaf, split_type, n_restarts, n_hyperplane_restarts):
    """The shared rules of opttrees.params (the same words as the estimators and specs)."""
    check_param("min_samples_leaf", min_samples_leaf)
    check_param("split_type", split_type)
    check_param("n_restarts", n_restarts)
    check_param("n_hyperplane_restarts", n_hyperplane_restarts)


def _seeds(random_state, n: int) -> np.ndarray:
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return _int_seeds(int(random_state), n).copy()
    rs = random_state if isinstance(random_state, np.random.RandomState) else np.random.RandomState(random_state)
    return rs.randint(0, 2**31 - 1, size=n).astype(np.int64)


@functools.lru_cache(maxsize=32)
def _int_seeds(random_state: int, n: int) -> np.ndarray:
    """The restarts' seeds for an integer random_state, remembered: making a RandomState costs 0.1 ms,
    a twentieth of a short two-thread search's serial time, and tuning repeats the same seed many times."""
    return np.random.RandomState(random_state).randint(0, 2**31 - 1, size=n).astype(np.int64)


def _run_stoppable(tasks, jobs: int, budget, stop: np.ndarray, on_poll=None, compiling=None):
    """Run ``tasks`` (callables) on ``jobs`` worker threads; set ``stop[0]`` on Ctrl-C or at the budget.

    Returns each task's result in order (None for a task skipped because the run stopped before it started);
    ``on_poll()`` is called in the calling thread every time it wakes (progress). Without
    :func:`~opttrees.interrupt.stop_on_sigint` around the call, Ctrl-C raises KeyboardInterrupt here in the
    main thread: the workers are stopped and joined first, then it is re-raised. With ``compiling`` (a
    kernel may still be compiling, see :func:`opttrees.jit.run_threads`) a stop during the compile returns
    :data:`opttrees.jit.ABANDONED` at once.
    """
    return run_threads(tasks, jobs, stop, budget, compiling, on_poll)


#: the kernels data preparation and the search's shared arrays call (compiled before the search can stop)
def _setup_kernels():
    return (orders.ranks, orders.og_words32, orders.og_words, movecache.row_hashes, orders.order_cache)


def _setup_cold() -> bool:
    return any(is_cold(d) for d in _setup_kernels())


def fallback_tree(data: PreparedData, max_depth: int, alpha: float = 0.0, min_samples_leaf: int = 1,
                  loss: str | None = None) -> Tree:
    """A tree made without numba, for a fit whose kernels are still compiling at its time limit: CART
    (scikit-learn, pruned with ``alpha``) for classification, the root leaf for regression."""
    from .cart import cart_classifier_tree
    from .core import default_loss, empty_heap, leaf_problem
    loss = loss or default_loss(data)
    if loss == "misclassification":
        try:
            return cart_classifier_tree(data, int(max_depth), int(min_samples_leaf), float(alpha))
        except Exception:   # pragma: no cover - the root leaf below is always valid
            pass
    return heap_to_tree(leaf_problem(data, loss), *empty_heap(0, data.p))


def _fallback(data, D, alpha, min_samples_leaf, loss, what="local-search"):
    tree = fallback_tree(data, D, alpha, min_samples_leaf, loss)
    kind = "the CART tree" if tree.task == "classification" and tree.n_nodes > 1 else "the root leaf"
    warn_still_compiling(what, f"{kind} instead of a local-search tree", stacklevel=5)
    return tree


class _Restarts:
    """The restarts' heap trees and kernel objectives, written by the worker threads into shared arrays
    (:func:`~opttrees.heuristics.kernels.restarts.run_restarts`), ranked without building every tree: many restarts
    reach the same heap tree, and building and scoring a Tree in Python costs about as much as a whole
    restart on small data. Only the trees that are needed are built, each distinct one once: the best ones
    (within ``_TIE`` of the best kernel objective, then ranked by the shared Python objective exactly as
    before) or, with ``return_all``, all of them. ``poll`` shows restarts done and the best objective on the
    progress line while the rest run."""

    _TIE = 1e-9  # kernel and Python objectives differ only by rounding (~1e-15); ties are resolved in Python

    def __init__(self, prob, alpha: float, seeds: np.ndarray, T: int, hyper: bool, progress, budget):
        R = len(seeds)
        self.prob, self.alpha, self.seeds = prob, alpha, seeds
        self.progress, self.budget = progress, budget
        self.out = structs.restart_output(R, T, prob.p if hyper else 0)
        self.built: dict = {}   # distinct tree id -> Tree
        self.objs: dict = {}    # distinct tree id -> its objective (the shared Python one)

    def poll(self) -> None:
        if self.progress is None:
            return
        OB, done = self.out[4], self.out[5] != 0
        left = self.budget.remaining() if self.budget is not None else None
        self.progress.update(restarts=f"{int(done.sum())}/{len(self.seeds)}",
                             best=float(OB[done].min()) / self.prob.baseline if done.any() else math.inf,
                             left=None if left is None or not math.isfinite(left) else round(max(left, 0.0), 1))

    def finish(self) -> None:
        """Index the finished restarts (in restart order) and their distinct heap trees, after the threads."""
        NT, FE, TH, CO, OB, done = self.out
        self.index = np.flatnonzero(done)
        R = len(self.index)
        rows = np.concatenate([a[self.index].reshape(R, -1).view(np.uint8).reshape(R, -1) for a in (NT, FE, TH, CO)],
                              axis=1)
        rows = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.shape[1]))).ravel()
        _, first, self.tree_id = np.unique(rows, return_index=True, return_inverse=True)
        self.tree_id = self.tree_id.ravel()
        self.first = first  # tree id -> its first restart (position in index)
        self.kobj = OB[self.index] / self.prob.baseline

    def n_done(self) -> int:
        return len(self.index)

    def _tree(self, tid: int) -> Tree:
        if tid not in self.built:
            r = self.index[self.first[tid]]
            NT, FE, TH, CO = self.out[:4]
            coef = CO[r] if CO.shape[2] else np.zeros((NT.shape[1], self.prob.p))
            self.built[tid] = heap_to_tree(self.prob, NT[r], FE[r], TH[r], coef)
        return self.built[tid]

    def _objective(self, tid: int) -> float:
        if tid not in self.objs:
            self.objs[tid] = objective(self._tree(tid), self.prob, self.alpha)
        return self.objs[tid]

    def best_tree(self) -> Tree:
        """The best tree, ties to the first restart (as ``ranked`` orders them), building only the candidates."""
        low = self.kobj.min()
        cand = np.flatnonzero(self.kobj <= low + self._TIE * max(1.0, abs(low)))  # positions, restart order
        if (self.kobj[cand] == low).all():
            # exact ties (e.g. many restarts reach a perfect tree at depth 6): the first restart wins, as the
            # ranking below would choose; building every tied tree cost 40 ms on breast cancer at depth 6
            return self._tree(int(self.tree_id[cand[0]]))
        objs = np.array([self._objective(int(self.tree_id[k])) for k in cand])
        return self._tree(int(self.tree_id[cand[int(np.lexsort((np.arange(len(objs)), np.round(objs, 12)))[0])]]))

    def ranked(self, return_all: bool):
        """(seeds, trees, objectives) in restart order."""
        trees, objs = [], []
        for tid in self.tree_id:
            t = self._tree(int(tid))
            trees.append(copy.deepcopy(t) if return_all else t)
            objs.append(self._objective(int(tid)))
        return self.seeds[self.index], trees, np.asarray(objs, dtype=np.float64)


def local_search(data: PreparedData, max_depth: int, alpha: float = 0.0, min_samples_leaf: int = 1,
                 n_restarts: int = 100, split_type: str = "parallel", random_state=None, n_jobs: int | None = 1,
                 n_hyperplane_restarts: int = 5, loss: str | None = None, return_all: bool = False,
                 max_moves: int | None = None, random_starts: float = 0.25, time_limit=None, verbose=False,
                 restart_seeds=None):
    """Best tree over ``n_restarts`` local searches (a Tree, or a LocalSearchResult with ``return_all``).

    restart_seeds: the restarts' own seeds, instead of the ``n_restarts`` seeds drawn from ``random_state``
    (:func:`seeds_for`); a restart's tree depends only on its seed, so a slice of them runs the same
    restarts as the whole run does (:func:`opttrees.heuristics.cluster.local_search_cluster`).

    random_starts: fraction of restarts that start from a fully random tree (random feature and random
    feasible cut per split) instead of the thesis's RF-style tree. RF-style starts have almost no diversity
    when p is tiny (with p = 3 there are only a handful of distinct start trees), and on random tiny
    instances the mix reaches the brute-force optimum far more often (tests/heuristics/test_heuristics_local_search.py).

    time_limit: seconds, or an :class:`opttrees.interrupt.Budget` (a fit's clock, shared); when it expires, or
    :data:`opttrees.interrupt.STOP`
    is set (the first Ctrl-C inside :func:`~opttrees.interrupt.stop_on_sigint`), the search stops within
    about one node visit and returns the best tree so far (at least one restart always runs: its start tree
    is grown in full).

    verbose: a live line (restarts done, best objective, seconds left) while the restarts run.

    Regression data is searched on a standardised y (:func:`~opttrees.heuristics.core.standardized`) and the
    trees' values mapped back, so an offset or scale of y changes neither the trees nor the objectives.
    """
    data, back = standardized(data)
    return to_user(_local_search(data, max_depth, alpha, min_samples_leaf, n_restarts, split_type, random_state,
                                 n_jobs, n_hyperplane_restarts, loss, return_all, max_moves, random_starts,
                                 time_limit, verbose, restart_seeds), back, loss)


def seeds_for(random_state, n_restarts: int) -> np.ndarray:
    """The seeds of the ``n_restarts`` restarts that :func:`local_search` runs for ``random_state`` (an int, None,
    or a RandomState, which this advances as the search would)."""
    check_param("n_restarts", n_restarts)
    return _seeds(random_state, int(n_restarts))


def _local_search(data, max_depth, alpha, min_samples_leaf, n_restarts, split_type, random_state, n_jobs,
                  n_hyperplane_restarts, loss, return_all, max_moves, random_starts, time_limit, verbose,
                  seeds=None):
    D = check_depth(max_depth)
    alpha = check_alpha(alpha)
    _check_common(min_samples_leaf, split_type, n_restarts, n_hyperplane_restarts)
    budget = Budget(time_limit)
    if seeds is None:
        seeds = _seeds(random_state, int(n_restarts))
    else:
        seeds = np.asarray(seeds, dtype=np.int64).ravel()
        if len(seeds) == 0:
            raise InputError("restart_seeds is empty: give at least one seed")
    T = 2 ** (D + 1) - 1
    jobs = min(n_workers(n_jobs), len(seeds))
    stop = np.zeros(1, np.int64)
    big = data.X.shape[0] > orders.OG32_ROWS
    cold = _setup_cold() or is_cold(restarts.run_restarts, "ogT", "int64" if big else "uint32")
    if cold:   # said at once, before any compile (which then runs in a worker thread, see the module docstring)
        announce_compile("local-search", restarts.run_restarts, "about a minute on 2 cores; counted in the time limit",
                         "ogT", "int64" if big else "uint32")

    def setup():
        prob = make_problem(data, loss)
        # every restart shares the search arrays and one move cache (see new_move_cache)
        return prob, orders.search_arrays(prob.X, prob.orderT, prob.grpT), new_move_cache(len(seeds), T)

    prep = _run_stoppable([setup], 1, budget, stop, compiling=_setup_cold if cold else None)
    if prep is ABANDONED:
        return _fallback(data, D, alpha, min_samples_leaf, loss)
    shared: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]   # K.search_arrays: rankT, ogT, XT, row hashes
    prob, shared, moves = prep[0]
    stop[0] = 0   # the search itself always runs restart 0 (stopped at once if the run is already stopped)
    nok = int(prob.featok.sum())
    mtry = max(1, int(math.floor(math.sqrt(max(nok, 1)))))  # floor, as randomForest and sklearn
    start_kind = KIND["gini"] if prob.loss == "misclassification" else prob.kind
    # every setting with one fixed type (int64 / float64 / bool, structs.settings), so the kernels compile once
    cfg = structs.settings(T, prob.kind, D, min_samples_leaf, alpha * prob.baseline, 1e-9 * prob.baseline,
                           start_kind=start_kind, hyper=split_type == "hyperplane", H=n_hyperplane_restarts,
                           mtry=mtry, max_moves=2**62 if max_moves is None else max_moves, random_frac=random_starts)
    kprob = structs.problem(prob)
    rankT, ogT, XT, rh = shared
    arrays = structs.SearchArrays(rankT, XT, rh)
    # each worker thread runs one kernel call that takes restarts one at a time from a shared counter
    # (restart times vary a lot; a Python call per chunk of restarts cost about 0.1 ms each); each restart
    # seeds itself, so which thread runs it never changes results. Restart 0 always completes, even when
    # stopped before it starts.
    nxt = np.zeros(1, np.int64)
    counters = np.zeros((jobs, search.N_COUNTERS), np.int64)
    left = budget.remaining()
    ogt = str(shared[1].dtype)

    def compiling() -> bool:
        return is_cold(restarts.run_restarts, "ogT", ogt)

    with ProgressLine("local search", enabled=bool(verbose), time_limit=left) as line:
        line.update(restarts=f"0/{len(seeds)}")
        runs = _Restarts(prob, alpha, seeds, T, split_type == "hyperplane", line if verbose else None, budget)
        tasks = [lambda k=k: restarts.run_restarts(seeds, kprob, cfg, ogT, arrays, stop, nxt, moves, counters[k],
                                                   runs.out)
                 for k in range(jobs)]
        out = _run_stoppable(tasks, jobs, budget, stop, on_poll=runs.poll, compiling=compiling if cold else None)
        if out is ABANDONED:
            line.update(restarts="kernels still compiling")
        else:
            runs.poll()
    if out is ABANDONED:
        tree = _fallback(data, D, alpha, min_samples_leaf, loss)
        if not return_all:
            return tree
        return LocalSearchResult(tree, objective(tree, prob, alpha), [tree], np.array([objective(tree, prob, alpha)]),
                                 seeds[:0], stopped=True, n_done=0)
    runs.finish()
    stopped = bool(stop[0])
    if not return_all:
        return runs.best_tree()
    seeds, trees, objs = runs.ranked(return_all)
    rank = np.lexsort((np.arange(len(objs)), np.round(objs, 12)))
    best = trees[rank[0]]
    total = counters.sum(axis=0)
    return LocalSearchResult(best, float(objs[rank[0]]), [trees[r] for r in rank], objs[rank], seeds[rank],
                             stopped=stopped, n_done=runs.n_done(),
                             counters={name: int(total[k]) for k, name in COUNTER_NAMES.items()})


def improve_tree(data: PreparedData, tree: Tree, max_depth: int, alpha: float = 0.0, min_samples_leaf: int = 1,
                 split_type: str = "parallel", random_state=None, n_hyperplane_restarts: int = 5,
                 loss: str | None = None, max_moves: int | None = None, return_trace: bool = False,
                 time_limit=None):
    """Run the local search from a given start tree (e.g. CART, or the depth D-1 solution).

    With ``return_trace`` also returns the raw-objective trace (recomputed from scratch before each accepted
    move and after the last), divided by L̂ so it is on the normalised scale. Stops early (tree so far) on
    Ctrl-C or at ``time_limit``, as :func:`local_search`.
    """
    D = check_depth(max_depth)
    alpha = check_alpha(alpha)
    _check_common(min_samples_leaf, split_type, 1, n_hyperplane_restarts)
    budget = Budget(time_limit)
    prob = make_problem(data, loss)
    ntype, feat, thr, coef = tree_to_heap(tree, prob, D)
    seed = int(_seeds(random_state, 1)[0])
    mm = 10**9 if max_moves is None else int(max_moves)
    trace = np.full(min(mm, 100000) + 1, np.nan)
    stop = np.zeros(1, np.int64)

    hyper = split_type == "hyperplane"
    rankT, ogT, XT, rh = orders.search_arrays(prob.X, prob.orderT, prob.grpT)  # the word size the restarts use
    ordc = orders.order_cache(prob.Z, int(prob.kind), hyper, int(D), prob.p, ogT)

    def run():  # in a worker thread (see the module docstring); numba's generator is per thread: seed it there
        restarts.seed_numba(seed)
        cfg = structs.settings(len(ntype), prob.kind, D, min_samples_leaf, alpha * prob.baseline,
                               1e-9 * prob.baseline, hyper=hyper, H=n_hyperplane_restarts, max_moves=mm)
        return search.local_search_ranked(structs.HeapTree(ntype, feat, thr, coef), structs.problem(prob), cfg, ogT,
                                          structs.SearchArrays(rankT, XT, rh), ordc, trace, stop, new_move_cache(),
                                          np.zeros(search.N_COUNTERS, np.int64))

    ogt = str(ogT.dtype)
    cold = is_cold(search.local_search_ranked, "ogT", ogt)
    if cold:
        announce_compile("local-search", search.local_search_ranked, "about a minute on 2 cores; counted in the time limit",
                         "ogT", ogt)
    res = _run_stoppable([run], 1, budget, stop,
                         compiling=(lambda: is_cold(search.local_search_ranked, "ogT", ogt)) if cold else None)
    if res is ABANDONED:   # the start tree, unchanged: the search never ran
        warn_still_compiling("local-search", "the start tree unchanged")
        return (tree, np.zeros(0)) if return_trace else tree
    moves = res[0]
    out = heap_to_tree(prob, ntype, feat, thr, coef)
    if return_trace:
        return out, trace[: moves + 1] / prob.baseline
    return out
