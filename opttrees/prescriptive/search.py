"""Prescriptive trees by Dunn's local search with random restarts, and greedily (thesis §6).

The thesis's OPT is "the same local search with (6.5) or (6.9) as the loss": each restart grows an RF-style
start tree (best split over a random sqrt(p) features per node, no bootstrap; a share ``random_starts`` of the
restarts uses random feasible cuts instead, for diversity on small p), then visits the nodes in random order
and re-optimises each (best parallel split with the children fixed, or replacement by the lower or upper
child) until no node improves. The greedy tree (every feature, best split, grown to the depth limit, then
pruned with alpha) is Kallus's personalisation tree when mu = 1 and kind = OPT.

Restarts run in worker threads (the kernels release the GIL) with one seed each, so the result depends on
``random_state`` only; Ctrl-C and the time limit stop them and return the best tree so far (at least one restart
always completes).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..interrupt import Budget
from ..progress import ProgressLine
from ..heuristics.local_search import _run_stoppable, _seeds
from ..jit import ABANDONED, announce_compile, is_cold, warn_still_compiling
from ..params import check_alpha, check_depth, n_workers
from ..tree import LEAF, Tree, heap_topology
from . import _kernels
from .objective import KIND_LINEAR, PrescriptiveProblem, fill_payload, tree_objective

MAX_DEPTH = 10
#: cut positions evaluated per feature and node visit for OPT-L when ``max_cuts="auto"`` (each costs a lasso
#: per treatment in the two leaves it changes; every cut would make a node visit ~50x slower)
LINEAR_AUTO_CUTS = 24


@dataclass
class SearchResult:
    """The best tree and what the restarts found (objectives normalised, best first)."""

    tree: Tree
    objective: float
    objectives: np.ndarray = field(default_factory=lambda: np.zeros(0))
    n_done: int = 0
    stopped: bool = False
    moves: int = 0


def _max_cuts(prob: PrescriptiveProblem, max_cuts) -> int:
    if max_cuts is None:
        return 0
    if max_cuts == "auto":
        return LINEAR_AUTO_CUTS if prob.kind == KIND_LINEAR else 0
    if isinstance(max_cuts, bool) or not isinstance(max_cuts, (int, np.integer)) or max_cuts < 1:
        raise InputError(f"max_cuts={max_cuts!r} is not valid: expected an integer >= 1, 'auto' or None")
    return int(max_cuts)


def kernel_arrays(prob: PrescriptiveProblem):
    X = np.ascontiguousarray(prob.data.X, dtype=np.float64)
    orderT = np.ascontiguousarray(np.argsort(X, axis=0, kind="stable").T)
    featok = np.ascontiguousarray(prob.data.splittable, dtype=np.bool_)
    return X, orderT, featok


def heap_to_tree(prob: PrescriptiveProblem, ntype, feat, thr) -> Tree:
    """Compact heap arrays into a prescription Tree (original units) with its payload from the training data."""
    cl, cr, slot = heap_topology(np.asarray(ntype) == _kernels.SPLIT)
    branch = cl != LEAF
    fe = np.where(branch, np.asarray(feat, np.int64)[slot], LEAF)
    th = np.where(branch, np.asarray(thr, np.float64)[slot], 0.0)
    m = len(cl)
    tree = Tree(cl, cr, fe, th, np.zeros((m, prob.m)), task="prescription", label=np.zeros(m, np.int64),
                classes=list(prob.data.classes), feature_names=list(prob.data.feature_names), n_features=prob.data.p)
    return fill_payload(tree, prob)


def tree_to_heap(tree: Tree, D: int):
    """Embed a parallel-split Tree of depth <= D in heap arrays."""
    if tree.depth > D:
        raise InputError(f"start tree has depth {tree.depth} > max_depth={D}")
    T = 2 ** (D + 1) - 1
    ntype, feat, thr = np.zeros(T, np.int8), np.zeros(T, np.int64), np.zeros(T)

    def rec(k, u):
        if tree.children_left[k] == LEAF:
            ntype[u] = _kernels.LEAF
            return
        if tree.feature[k] < 0:
            raise InputError("the prescriptive local search takes parallel splits only")
        ntype[u], feat[u], thr[u] = _kernels.SPLIT, tree.feature[k], tree.threshold[k]
        rec(tree.children_left[k], 2 * u + 1)
        rec(tree.children_right[k], 2 * u + 2)

    rec(0, 0)
    return ntype, feat, thr


def greedy_prescriptive(prob: PrescriptiveProblem, max_depth: int, alpha: float = 0.0, max_cuts="auto") -> Tree:
    """The greedy tree: best split of every node over all features, grown to ``max_depth``, pruned with alpha.

    With kind OPT and mu = 1 this is Kallus's personalisation tree (the thesis's "PT").
    """
    D = check_depth(max_depth, MAX_DEPTH, "the prescriptive heuristics' heap arrays")
    alpha = check_alpha(alpha)
    X, orderT, featok = kernel_arrays(prob)
    T = 2 ** (D + 1) - 1
    announce_compile("prescriptive", _kernels.greedy, "about a minute on 2 cores")
    ntype, feat, thr = _kernels.greedy(T, X, orderT, prob.Z, prob.zlo, prob.zhi, featok, prob.kind, prob.ip(), prob.fp(),
                                alpha * prob.baseline, D, _max_cuts(prob, max_cuts), prob.p_lin)
    return heap_to_tree(prob, ntype, feat, thr)


def local_search_prescriptive(prob: PrescriptiveProblem, max_depth: int, alpha: float = 0.0, n_restarts: int = 100,
                              random_state=None, n_jobs: int | None = 1, max_cuts="auto", random_starts: float = 0.25,
                              max_moves: int | None = None, time_limit=None, verbose=False) -> SearchResult:
    """Best tree over ``n_restarts`` local searches (see the module docstring); ``verbose``: a live line (moves
    accepted, restart batches done, seconds left) refreshed every 1-2 s."""
    D = check_depth(max_depth, MAX_DEPTH, "the prescriptive heuristics' heap arrays")
    alpha = check_alpha(alpha)
    budget = Budget(time_limit)
    if isinstance(n_restarts, bool) or not isinstance(n_restarts, (int, np.integer)) or n_restarts < 1:
        raise InputError(f"n_restarts={n_restarts!r} is not valid: expected an integer >= 1")
    X, orderT, featok = kernel_arrays(prob)
    T = 2 ** (D + 1) - 1
    seeds = _seeds(random_state, int(n_restarts))
    nok = int(featok.sum())
    mtry = max(1, int(math.floor(math.sqrt(max(nok, 1)))))
    cuts = _max_cuts(prob, max_cuts)
    pen = alpha * prob.baseline
    tol = 1e-9 * prob.baseline
    mm = 2 ** 62 if max_moves is None else int(max_moves)
    jobs = min(n_workers(n_jobs), len(seeds))
    size = max(1, len(seeds) // (4 * jobs)) if jobs > 1 else len(seeds)
    chunks = [seeds[i:i + size] for i in range(0, len(seeds), size)]
    stop = np.zeros(1, np.int64)
    counters = np.zeros((len(chunks), 2), np.int64)
    ip, fp = prob.ip(), prob.fp()
    tasks = [lambda c=c, k=k: _kernels.run_restarts(c, T, X, orderT, prob.Z, prob.zlo, prob.zhi, featok, prob.kind, ip, fp,
                                             pen, tol, D, mtry, cuts, float(random_starts), mm, prob.p_lin, stop,
                                             counters[k])
             for k, c in enumerate(chunks)]
    cold = is_cold(_kernels.run_restarts)
    if cold:
        announce_compile("prescriptive", _kernels.run_restarts, "about a minute on 2 cores; counted in the time limit")
    left = budget.remaining()
    with ProgressLine("prescriptive local search", enabled=bool(verbose), time_limit=left) as line:
        line.update(restarts=len(seeds), moves=0)
        outs = _run_stoppable(tasks, jobs, budget, stop,
                              on_poll=(lambda: line.update(moves=int(counters[:, 0].sum()))) if verbose else None,
                              compiling=(lambda: is_cold(_kernels.run_restarts)) if cold else None)
        line.update(moves=int(counters[:, 0].sum()))
    if outs is ABANDONED:   # still compiling at the time limit / Ctrl-C: the root leaf (see opttrees.jit.run_threads)
        warn_still_compiling("prescriptive", "the root leaf", stacklevel=3)
        ntype = np.zeros(T, np.int8)
        ntype[0] = _kernels.LEAF
        tree = heap_to_tree(prob, ntype, np.zeros(T, np.int64), np.zeros(T))
        return SearchResult(tree, tree_objective(tree, prob, alpha), np.zeros(0), 0, True, 0)
    heaps = []
    obj_list: list[float] = []
    for out in outs:
        if out is None:
            continue
        NT, FE, TH, OB, done = out
        for r in range(done):
            heaps.append((NT[r], FE[r], TH[r]))
            obj_list.append(OB[r] / prob.baseline)
    objs = np.asarray(obj_list)
    order = np.lexsort((np.arange(len(objs)), np.round(objs, 12)))
    tree = heap_to_tree(prob, *heaps[order[0]])
    return SearchResult(tree, tree_objective(tree, prob, alpha), objs[order], len(objs), bool(stop[0]),
                        int(counters[:, 0].sum()))


def improve_tree(prob: PrescriptiveProblem, tree: Tree, max_depth: int, alpha: float = 0.0, random_state=None,
                 max_cuts="auto", max_moves: int | None = None, time_limit=None) -> Tree:
    """The local search from a given start tree (e.g. the greedy tree or a DP tree on quantile thresholds)."""
    D = check_depth(max_depth, MAX_DEPTH, "the prescriptive heuristics' heap arrays")
    alpha = check_alpha(alpha)
    budget = Budget(time_limit)
    X, orderT, featok = kernel_arrays(prob)
    ntype, feat, thr = tree_to_heap(tree, D)
    seed = int(_seeds(random_state, 1)[0])
    stop = np.zeros(1, np.int64)
    mm = 2 ** 62 if max_moves is None else int(max_moves)

    def run():
        return _kernels.improve(ntype, feat, thr, seed, X, orderT, prob.Z, prob.zlo, prob.zhi, featok, prob.kind, prob.ip(),
                         prob.fp(), alpha * prob.baseline, 1e-9 * prob.baseline, D, _max_cuts(prob, max_cuts), mm,
                         prob.p_lin, stop)

    _run_stoppable([run], 1, budget, stop)
    return heap_to_tree(prob, ntype, feat, thr)
