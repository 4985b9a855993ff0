"""Public entry points of the dynamic program: raw data in, an opttrees Tree and a SolveResult out.

- :func:`solve_dp`: binarises raw X with :class:`opttrees.data.binarizers.Binarizer` (quantile thresholds or all
  midpoints) and returns a Tree in original units (left iff x_j < t) that predicts raw X;
- :func:`solve_dp_binary`: the same search on a matrix that is already 0/1 (a split on column c is
  ``x_c < 0.5``, i.e. 0 goes left);
- :func:`solve_dp_columns`: the search over given 0/1 columns that decode to original-units splits (the
  columns of a flow formulation's :class:`~opttrees.data.binarized.BinarizedData`), so its tree is a tree of
  that formulation.

Both run the numba search (:mod:`opttrees.dp.engine`) by iterative deepening (depth 1, 2, ..., max_depth,
each optimum the next depth's upper bound, as pystreed does), in a worker thread while this thread polls the
time limit and the Ctrl-C flag: when either fires, the best tree so far is returned with a valid lower bound
and status "time_limit" / "interrupted". Every speed feature can be switched off (``use_*``) to measure it.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..data.prepared import _as_2d_float, check_sample_weight
from ..data.binarizers import Binarizer, nearest_threshold
from ..errors import InputError, VerificationError
from ..interrupt import STOP, Budget, stop_on_sigint
from ..jit import ABANDONED, announce_compile, is_cold, run_threads, warn_still_compiling
from ..progress import ProgressLine
from ..solvers.result import Incumbent, finish, relative_gap
from ..tree import LEAF, Tree, heap_topology
from . import chooser
from . import engine
from .engine_base import (N_BOUND_PRUNES, N_CACHE_HITS, N_COUNTERS, N_D2_CALLS, N_D2_INCREMENTAL, N_OPTS,
                          N_SIM_PRUNES, N_SUBPROBLEMS, O_HAS_COUNT, O_HAS_FCOST, O_K, O_KIND, O_MINLEAF, O_ONEHOT,
                          O_S, O_USE_BRANCH, O_USE_D2, O_USE_DATASET, O_USE_LB, O_USE_SIM, O_USE_UB, _norm,
                          cache_entries, leaf_cost, new_cache)
from .memory import check_estimate, check_limit, counts_bytes, fmt_bytes, resident_bytes
from .seed import cart_seed
from .common import MAX_DEPTH, _check_task, _common_checks, _fill_payload, _raw_cost, nested_to_tree, solved_problem

__all__ = ["MAX_DEPTH", "check_binary_matrix", "solve_dp", "solve_dp_binary", "solve_dp_columns", "heap_to_tree"]
from .tasks import EngineData

#: largest memory (bytes) the depth-two solver's frequency counts may take
MAX_COUNT_BYTES = 2 * 1024 ** 3


@dataclass
class EngineResult:
    heap: np.ndarray            # (2^(D+1)-1,) engine column per node, -1 leaf, -2 absent
    cost: float                 # raw cost of the tree (inf if none)
    bound: float                # raw lower bound
    termination: str            # optimal / time_limit / interrupted
    counters: dict
    trace: list
    runtime: float


def check_binary_matrix(Xb, name: str = "Xb") -> np.ndarray:
    """A 0/1 matrix as uint8; anything else is an InputError naming ``name``."""
    arr, _ = _as_2d_float(Xb, name)
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise InputError(f"{name} must be a binary 0/1 matrix (the dynamic program splits on binary columns); "
                         f"{name}[{r}, {c}] = {arr[r, c]:g}. Use solve_dp to binarise raw features.")
    return arr.astype(np.uint8)


def _useful_columns(Xb: np.ndarray, dedupe: bool):
    """Indices of the columns the search needs: not constant, and (``dedupe``) the first of identical ones."""
    n = Xb.shape[0]
    s = Xb.sum(axis=0)
    keep = np.nonzero((s > 0) & (s < n))[0]
    if dedupe and len(keep):
        packed = np.packbits(Xb[:, keep], axis=0).T
        _, first = np.unique(packed, axis=0, return_index=True)
        keep = keep[np.sort(first)]
    return keep


def _hashes(n: int, m: int, seed) -> tuple:
    """Random odd row keys (two independent sums identify a row subset) and per-column keys for the caches."""
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 2 ** 63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1),
            rng.integers(0, 2 ** 63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1),
            rng.integers(0, 2 ** 63, (max(m, 1), 2), dtype=np.uint64),
            rng.integers(0, 2 ** 63, (max(m, 1), 2), dtype=np.uint64))


def _column_costs(column_costs, cols, m: int) -> tuple:
    """Per useful column: full test cost, discounted cost, cost group and feature block (zeros without costs)."""
    if column_costs is None:
        return (np.zeros(max(m, 1)), np.zeros(max(m, 1)), np.full(max(m, 1), -1, np.int64),
                np.arange(max(m, 1), dtype=np.int64))
    fc, fd, fg, fb = (np.asarray(a)[cols] for a in column_costs)
    return fc.astype(np.float64), fd.astype(np.float64), fg.astype(np.int64), fb.astype(np.int64)


def _rebuild(root, size, d, nn, *state) -> np.ndarray:
    """The heap of the tree the search's root entry describes, from the caches."""
    heap = np.full(size, -2, np.int64)
    entry = (float(root[0]), float(root[0]), int(root[1]), int(root[2]), int(root[4]), int(root[5]), int(root[6]))
    dn = _norm(d, nn)
    n, hb0, data, ws, hashes, opt, dset, br = state
    if not engine.rebuild(n, dn[0], dn[1], entry, hb0, data, ws, hashes, opt, dset, br, heap):
        raise VerificationError("dynamic program: a cache entry of the optimal tree is missing")
    return heap


def _workspace(n, m, SA, D, n_slots, n_sim, use_depth_two, use_sim, worst) -> tuple:
    """The engine's scratch arrays (depth-two counts, row marks, per-depth row lists, similarity-bound slots)."""
    mm = m if use_depth_two else 1
    ws = (np.zeros((n_slots, SA, mm, mm)), np.zeros((n_slots, n), np.int64), np.full(n_slots, -1, np.int64),
          np.zeros((n_slots, n), np.uint8), np.zeros(n_slots + 1, np.int64), np.zeros(n, np.uint8),
          np.zeros((D + 2, 2, n), np.int64), np.zeros((8, mm)), worst,
          np.zeros((D + 2, n_sim, n if use_sim else 1), np.int64), np.zeros((D + 2, n_sim), np.int64),
          np.full((D + 2, n_sim, 32), np.inf), np.zeros((D + 2, n_sim, 2), np.uint64), np.zeros(D + 2, np.int64))
    ws[6][0, 0, :] = np.arange(n)
    return ws


@dataclass
class _EngineArgs:
    """The arrays one run of the numba search reads and writes (made by :func:`_engine_args`)."""
    n: int
    m: int
    cap: int                    # memory limit (bytes)
    cols: np.ndarray            # useful column -> column of Xb
    leaf: float                 # raw cost of the root leaf
    hb0: np.ndarray
    hd0: np.ndarray
    blk: np.ndarray
    grp: np.ndarray
    data: tuple
    task: tuple
    ws: tuple
    hashes: tuple
    opt: np.ndarray
    dset: object
    br: object
    stats: np.ndarray
    stop: np.ndarray
    root: np.ndarray

    def search(self, d, nn, ub):
        engine.search(self.n, d, nn, ub, self.hb0, self.hd0, self.blk, self.grp, self.data, self.task, self.ws,
                 self.hashes, self.opt, self.dset, self.br, self.stats, self.stop, self.root)

    def root_lower_bound(self, D, nmax, first, best):
        z = np.uint64(0)
        return engine.root_lower_bound(self.n, D, nmax, z, z, first, self.data, self.task, self.ws, self.hashes, self.opt,
                                  self.dset, self.br, best)

    def rebuild(self, size, d, nn):
        return _rebuild(self.root, size, d, nn, self.n, self.hb0, self.data, self.ws, self.hashes, self.opt,
                        self.dset, self.br)


def _engine_args(Xb, ed, D, min_samples_leaf, alpha, column_costs, use_dataset_cache, use_branch_cache,
                 use_depth_two, use_upper_bound, use_lower_bound, use_similarity_bound, seed,
                 memory_limit) -> _EngineArgs:
    """The engine's arrays for ``Xb``; an InputError when they would not fit in ``memory_limit`` or no tree is
    feasible."""
    n, p = Xb.shape
    has_fc = column_costs is not None
    cols = _useful_columns(Xb, dedupe=not has_fc)
    XT = np.ascontiguousarray(Xb[:, cols].T)
    m = len(cols)
    pres = XT.T.astype(bool)
    rowptr = np.zeros(n + 1, np.int64)
    rowptr[1:] = np.cumsum(pres.sum(axis=1))
    rowfeat = np.nonzero(pres)[1].astype(np.int64)
    has_count = not np.all(ed.weights == 1.0)
    S = ed.Z.shape[1]
    SA = S + (1 if has_count else 0)
    if use_depth_two and counts_bytes(m, SA) > MAX_COUNT_BYTES:
        raise InputError(f"the depth-two solver would need {counts_bytes(m, SA) / 1e9:.1f} GB for {m} binary columns; "
                         "use fewer thresholds (n_thresholds) or use_depth_two=False")
    cap = check_limit(memory_limit)
    check_estimate(n, m, SA, D, cap, use_depth_two)
    hashes = _hashes(n, m, seed)
    pen = alpha * ed.baseline
    fc, fd, fg, fb = _column_costs(column_costs if has_fc else None, cols, m)
    task = (np.int64(ed.kind), np.int64(ed.K), np.ascontiguousarray(ed.M, dtype=np.float64), float(pen), fc, fd, fb, fg)
    data = (XT, rowptr, rowfeat, np.ascontiguousarray(ed.Z, dtype=np.float64), ed.lab.astype(np.int64))
    n_slots = 2
    # the similarity bound needs per-row worst contributions: classification without min_samples_leaf or
    # path-dependent costs (removing a row lowers a tree's cost by at most its worst contribution)
    use_sim = bool(use_similarity_bound and ed.kind in (0, 1) and min_samples_leaf == 1 and not has_fc)
    n_sim = 2
    if ed.kind == 1:
        worst = ed.weights * ed.M.max(axis=1)[ed.lab]
    else:
        worst = ed.weights.astype(np.float64).copy()
    ws = _workspace(n, m, SA, D, n_slots, n_sim, use_depth_two, use_sim, worst)
    opt = np.zeros(N_OPTS, np.int64)
    for slot, value in ((O_USE_DATASET, use_dataset_cache and not has_fc),   # path costs: no dataset cache
                        (O_USE_BRANCH, use_branch_cache or (use_dataset_cache and has_fc)),
                        (O_USE_D2, use_depth_two), (O_USE_UB, use_upper_bound), (O_USE_LB, use_lower_bound),
                        (O_USE_SIM, use_sim), (O_MINLEAF, min_samples_leaf), (O_KIND, ed.kind), (O_K, ed.K),
                        (O_HAS_FCOST, has_fc), (O_HAS_COUNT, has_count), (O_ONEHOT, ed.onehot), (O_S, S)):
        opt[slot] = int(value)
    dset, br = new_cache(), new_cache()   # built in numba (a typed Dict made from Python costs ~1.5 ms)
    hd1 = np.uint64(hashes[0].sum(dtype=np.uint64))
    hd2 = np.uint64(hashes[1].sum(dtype=np.uint64))
    tot = ed.Z.sum(axis=0)
    leaf = leaf_cost(np.concatenate([tot, [n]]) if has_count else tot, ed.kind, ed.K, ed.M)
    if n < min_samples_leaf:
        raise InputError(f"min_samples_leaf={min_samples_leaf} exceeds the number of rows ({n}): no tree is feasible")
    return _EngineArgs(n=n, m=m, cap=cap, cols=cols, leaf=leaf, hb0=np.zeros(2, np.uint64), hd0=np.array([hd1, hd2], np.uint64),
                       blk=np.zeros(int(fb.max()) + 1, np.int64), grp=np.zeros(max(int(fg.max()) + 1, 1), np.int64),
                       data=data, task=task, ws=ws, hashes=hashes, opt=opt, dset=dset, br=br,
                       stats=np.zeros(N_COUNTERS, np.int64), stop=np.zeros(1, np.int64), root=np.zeros(8))


def _run_depth(args: _EngineArgs, d: int, nn: int, ub: float, budget: Budget, cold: bool, line):
    """The search at depth ``d`` (at most ``nn`` branching nodes, cost < ``ub``) in a worker thread while this one
    polls the time limit, Ctrl-C and the memory cap: (run_threads' answer, whether the memory cap stopped it)."""
    if budget.stop():   # no depth starts past the time limit (the kernel returns at once, with its bound)
        args.stop[0] = 1
    over = [False]

    def grown() -> bool:
        over[0] = resident_bytes() > args.cap
        return over[0]

    try:
        ran = run_threads([lambda: args.search(d, nn, ub)], 1, args.stop, budget,
                          compiling=(lambda: is_cold(engine.search)) if cold else None,
                          on_poll=lambda: line.update(subproblems=int(args.stats[0])), over_memory=grown)
    except KeyboardInterrupt:
        line.close()
        raise
    return ran, over[0]


def run_engine(Xb: np.ndarray, ed: EngineData, max_depth: int, max_num_nodes: int | None, min_samples_leaf: int,
               alpha: float, budget: Budget, column_costs=None, use_dataset_cache: bool = True,
               use_branch_cache: bool = False, use_depth_two: bool = True, use_upper_bound: bool = True,
               use_lower_bound: bool = True, use_similarity_bound: bool = True, iterative_deepening: bool = True,
               seed: int = 0, memory_limit=None, verbose=False) -> EngineResult:
    """Run the numba search on a checked uint8 matrix; returns the heap tree over ``Xb``'s columns.

    ``memory_limit`` (bytes or "4GB"; default half the physical memory, :mod:`opttrees.dp.memory`): a run
    whose fixed arrays exceed it is refused; a run whose caches reach it stops like a time limit (termination
    "limit", ``counters["memory_limit"]`` set) with its best tree and a valid bound. ``verbose``: a live line
    (depth searched, subproblems, best tree's objective, lower bound, seconds left) refreshed every 1-2 s."""
    t0 = time.perf_counter()
    D = max_depth
    nmax = (1 << D) - 1 if max_num_nodes is None else min(int(max_num_nodes), (1 << D) - 1)
    args = _engine_args(Xb, ed, D, min_samples_leaf, alpha, column_costs, use_dataset_cache, use_branch_cache,
                        use_depth_two, use_upper_bound, use_lower_bound, use_similarity_bound, seed, memory_limit)
    m, stats = args.m, args.stats
    size = 2 ** (D + 1) - 1
    best_heap = np.full(size, -2, np.int64)
    best_heap[0] = -1
    best = args.leaf
    trace = [Incumbent(time.perf_counter() - t0, best / ed.baseline, 0.0, relative_gap(best, 0.0), 0)]
    termination = "optimal"
    bound = best if (D == 0 or nmax == 0 or m == 0) else 0.0
    over_memory = False
    cold = is_cold(engine.search)
    abandoned = False
    if cold:   # said at once; the compile runs in the search's worker thread, inside the time limit
        announce_compile("dynamic-program", engine.search, "about a minute on 2 cores; counted in the time limit")
    depths = range(1, D + 1) if iterative_deepening else [D]
    if D == 0 or nmax == 0 or m == 0:
        depths = []
    line = ProgressLine("dynamic program", enabled=bool(verbose), time_limit=budget.remaining())
    line.update(depth=0, subproblems=0, best=best / ed.baseline, bound=bound / ed.baseline)
    for d in depths:
        nn = min(nmax, (1 << d) - 1)
        ub = best * (1 + 1e-12) + 1e-12 if use_upper_bound else np.inf
        line.update(depth=f"{d}/{D}")
        ran, over = _run_depth(args, d, nn, ub, budget, cold, line)
        over_memory = over_memory or over
        # still compiling at a stop (the kernel reads stop only once it runs): the compile finishes in the
        # background (daemon thread, cached for the next run); return the best tree so far
        abandoned = ran is ABANDONED
        if abandoned:
            termination = "interrupted" if STOP.is_set() else "limit" if over_memory else "time_limit"
            trace.append(Incumbent(time.perf_counter() - t0, best / ed.baseline, bound / ed.baseline,
                                   relative_gap(best, bound), int(stats[0])))
            warn_still_compiling("dynamic-program", "the best tree so far (the root leaf if none) with lower bound "
                                 f"{bound / ed.baseline:g}", stacklevel=4)
            break
        stopped = bool(args.stop[0])
        root = args.root
        rc = root[0]
        if root[1] >= 0 and rc < best * (1 - 1e-12) - 1e-12 or (not use_upper_bound and rc < best - 1e-12):
            best_heap = args.rebuild(size, d, nn)
            best = rc
        elif rc < best and root[1] < 0:
            best = rc
        if stopped:
            termination = "interrupted" if STOP.is_set() else "limit" if over_memory else "time_limit"
            lb = args.root_lower_bound(D, nmax, int(root[3]) if d == D else 0, best)
            bound = min(lb, best)
            trace.append(Incumbent(time.perf_counter() - t0, best / ed.baseline, bound / ed.baseline,
                                   relative_gap(best, bound), int(stats[0])))
            break
        if d == D:
            bound = best
        line.update(best=best / ed.baseline, bound=bound / ed.baseline, subproblems=int(stats[0]))
        trace.append(Incumbent(time.perf_counter() - t0, best / ed.baseline,
                               (best if d == D else 0.0) / ed.baseline, relative_gap(best, best if d == D else 0.0),
                               int(stats[0])))
    line.update(best=best / ed.baseline, bound=bound / ed.baseline, subproblems=int(stats[0]), status=termination)
    line.close()
    # heap over useful columns -> heap over Xb's columns
    heap = best_heap.copy()
    split = heap >= 0
    heap[split] = args.cols[heap[split]]
    counters = _counters(stats, 0 if abandoned else None, args.dset, args.br, m, over_memory)
    return EngineResult(heap, float(best), float(bound), termination, counters, trace, time.perf_counter() - t0)


def _counters(stats, entries, dset, br, m, over_memory) -> dict:
    """The engine's counters; ``entries`` None: count the caches (with a cached kernel: len() of a typed Dict
    compiles in every process; it would wait for a compile left running in the background, so an abandoned run
    passes 0)."""
    return {"subproblems": int(stats[N_SUBPROBLEMS]), "cache_hits": int(stats[N_CACHE_HITS]),
            "depth_two_calls": int(stats[N_D2_CALLS]), "bound_prunes": int(stats[N_BOUND_PRUNES]),
            "depth_two_incremental": int(stats[N_D2_INCREMENTAL]), "similarity_prunes": int(stats[N_SIM_PRUNES]),
            "cache_entries": int(cache_entries(dset, br)) if entries is None else entries, "binary_columns": int(m),
            "memory_limit": bool(over_memory)}


def heap_to_tree(heap: np.ndarray, decode, n_features: int, tree_task: str, classes=None, feature_names=None) -> Tree:
    """Compact heap arrays (column per node, -1 leaf, -2 absent) into a Tree; ``decode(col) -> (j, t)``."""
    cl, cr, slot = heap_topology(np.asarray(heap) >= 0)
    m = len(cl)
    fe, th = np.full(m, LEAF, np.int64), np.zeros(m)
    for k in np.flatnonzero(cl != LEAF):
        fe[k], th[k] = decode(int(heap[slot[k]]))
    return Tree(cl, cr, fe, th, np.zeros((m, 1)), task=tree_task, classes=classes,
                feature_names=feature_names, n_features=n_features)


def _feature_cost_of_tree(tree: Tree, X, w, costs_per_split):
    """Sum over branch nodes of (weight reaching the node) x (test cost given the node's ancestors)."""
    path = tree.decision_path(X)
    reach = np.asarray(path.T @ w).ravel()
    parents = tree.parents()
    total = 0.0
    for t in np.nonzero(tree.children_left != LEAF)[0]:
        anc, u = [], parents[t]
        while u >= 0:
            anc.append(u)
            u = parents[u]
        total += reach[t] * costs_per_split(t, anc)
    return total


def _solve(Xb, X_route, decode, n_features, y, task, max_depth, max_num_nodes, min_samples_leaf, alpha,
           sample_weight, budget, column_info, feature_names, t_start, engine_kw, timings, greedy_floor=True):
    """``greedy_floor``: a search stopped early returns CART's tree on ``X_route`` when that is better (off when
    the tree must stay within given columns, :func:`solve_dp_columns`)."""
    D, nn, ml, a = _common_checks(max_depth, max_num_nodes, min_samples_leaf, alpha, None)
    task = _check_task(task)
    n = Xb.shape[0]
    w = check_sample_weight(sample_weight, n)
    if (w == 0).any():   # one rule for every method (opttrees.data.prepare): a row of weight 0 is absent
        keep = w > 0
        y = np.asarray(y)
        if y.shape[:1] != (n,):
            raise InputError(f"y must have one entry per row of X ({n}); got shape {y.shape}")
        Xb, X_route, y, w = Xb[keep], X_route[keep], y[keep], w[keep]
        n = Xb.shape[0]
        if n < ml:
            raise InputError(f"X has {n} rows of positive weight, fewer than min_samples_leaf={ml}: no tree is "
                             "feasible (rows of weight 0 count as absent)")
    ed = task.prepare(y, n, w)
    col_costs = None
    cost_fn = None
    if getattr(task, "feature_costs", None) is not None:
        col_costs = task.column_costs(*column_info[:2])
        fc, fd, fg, fb = col_costs
        cost_fn = _make_feature_cost_fn(X_route, w, fc, fd, fg, fb, column_info[2])
    with stop_on_sigint():
        res = run_engine(Xb, ed, D, nn, ml, a, budget, col_costs, **engine_kw)
    tree = heap_to_tree(res.heap, decode, n_features, task.tree_task, ed.classes, feature_names)
    cost = res.cost
    if greedy_floor and res.termination != "optimal" and cost_fn is None:
        # stopped early: never return a tree worse than CART's of the same shape (opttrees.dp.seed)
        cap = (1 << D) - 1
        seed, seed_cost = cart_seed(X_route, ed, D, cap if nn is None else min(nn, cap), ml, a * ed.baseline)
        if seed is not None and seed_cost < cost - 1e-12 * max(1.0, abs(cost)):
            tree = nested_to_tree(seed, n_features, task.tree_task, ed.classes, feature_names)
            cost = seed_cost
            timings["start"] = "cart (better than the search's tree when it stopped)"
    leaf = _fill_payload(tree, task, ed, X_route)
    raw = _raw_cost(tree, task, ed, leaf, cost_fn) + a * ed.baseline * tree.n_splits
    if abs(raw - cost) > 1e-7 * max(1.0, abs(raw)):
        raise VerificationError(f"dynamic program: the returned tree scores {raw:.12g} but the search reported "
                                f"{cost:.12g}")
    objective = raw / ed.baseline
    bound = min(res.bound / ed.baseline, objective)
    timings.update({"search": res.runtime, "total": time.perf_counter() - t_start, **res.counters})
    result = finish("dp", "opttrees-dp", res.termination, objective, bound, time.perf_counter() - t_start,
                    res.counters["subproblems"], res.trace, timings=timings)
    result.dp_baseline = ed.baseline * ed.extra.get("loss_scale", 1.0)   # L-hat in y's units
    result.problem = solved_problem(D, nn, ml, a, w, "columns")
    if res.counters.get("memory_limit"):
        result.message = (f"stopped at memory_limit={fmt_bytes(check_limit(engine_kw.get('memory_limit')))} (the "
                          "search's caches); the best tree so far and a valid lower bound are returned")
        warnings.warn(f"dynamic program: {result.message}; raise memory_limit or lower max_depth / the number of "
                      "thresholds to search further", stacklevel=3)
    return tree, result


def _make_feature_cost_fn(X_route, w, fc, fd, fg, fb, column_of):
    """Feature costs of a tree, as the engine charges them (see CostSensitiveTask)."""
    def fn(tree):
        cols = {}
        for t in np.nonzero(tree.children_left != LEAF)[0]:
            cols[t] = column_of(int(tree.feature[t]), float(tree.threshold[t]))
            if cols[t] < 0:
                raise VerificationError(f"the tree's split x{tree.feature[t]} < {tree.threshold[t]!r} is not a "
                                        "column of the binarised matrix; its feature costs cannot be checked")

        def cost(t, anc):
            c = cols[t]
            blocks = {fb[cols[u]] for u in anc}
            groups = {fg[cols[u]] for u in anc if fg[cols[u]] >= 0}
            if fb[c] in blocks:
                return 0.0
            if fg[c] >= 0 and fg[c] in groups:
                return float(fd[c])
            return float(fc[c])
        return _feature_cost_of_tree(tree, X_route, w, cost)
    return fn


def solve_dp_binary(Xb, y, task=None, max_depth: int = 3, max_num_nodes: int | None = None, min_samples_leaf: int = 1,
                    alpha: float = 0.0, sample_weight=None, time_limit: float | None = None, feature_costs_columns=None,
                    feature_names=None, **engine_kw):
    """Optimal tree on a binary matrix ``Xb`` (0 goes left): returns (Tree with splits ``x_c < 0.5``, SolveResult).

    ``task``: ClassificationTask() (default), CostSensitiveTask, RegressionTask. With a CostSensitiveTask that has
    feature costs, they are per column of ``Xb`` and ``feature_costs_columns`` (optional, one original-feature id
    per column) says which columns test the same feature (free after the first); by default each column is its
    own feature. Engine switches (``use_dataset_cache``, ``use_branch_cache``, ``use_depth_two``,
    ``use_upper_bound``, ``use_lower_bound``, ``iterative_deepening``) are passed through.
    """
    t0 = time.perf_counter()
    budget = Budget(time_limit)
    _common_checks(max_depth, max_num_nodes, min_samples_leaf, alpha, time_limit)
    Xb8 = check_binary_matrix(Xb, "Xb")
    p = Xb8.shape[1]
    _check_engine_kw(engine_kw)
    if feature_costs_columns is None:
        feature_costs_columns = np.arange(p)
    blocks = np.asarray(feature_costs_columns, np.int64)
    if blocks.shape != (p,):
        raise InputError(f"feature_costs_columns must have one entry per column of Xb ({p}); got {blocks.shape}")
    n_orig = int(blocks.max()) + 1 if p else 0
    column_info = (n_orig, blocks, lambda j, t: j)
    return _solve(Xb8, Xb8.astype(np.float64), lambda c: (c, 0.5), p, y, task, max_depth, max_num_nodes,
                  min_samples_leaf, alpha, sample_weight, budget, column_info, feature_names, t0, engine_kw, {})


def solve_dp_columns(Z, X, split_of_col, y, task=None, max_depth: int = 3, max_num_nodes: int | None = None,
                     min_samples_leaf: int = 1, alpha: float = 0.0, sample_weight=None, time_limit: float | None = None,
                     feature_names=None, **engine_kw):
    """Optimal tree over the binary columns ``Z`` (1 = right), returned in ``X``'s units: (Tree, SolveResult).

    ``split_of_col(c) -> (j, t)`` decodes column c to the split ``x_j < t`` on the original features ``X``
    (same rows as ``Z``); the tree is re-routed on ``X`` and must score what the search found on ``Z``
    (a VerificationError otherwise: the map does not describe the columns). Other settings as :func:`solve_dp`.
    """
    t0 = time.perf_counter()
    budget = Budget(time_limit)
    _common_checks(max_depth, max_num_nodes, min_samples_leaf, alpha, time_limit)
    _check_engine_kw(engine_kw)
    Z8 = check_binary_matrix(Z, "Z")
    Xa, _ = _as_2d_float(X, "X")
    if Xa.shape[0] != Z8.shape[0]:
        raise InputError(f"X has {Xa.shape[0]} rows but Z has {Z8.shape[0]}: one row of X per row of Z")
    splits = [split_of_col(c) for c in range(Z8.shape[1])]
    feat = np.asarray([int(j) for j, _ in splits], np.int64)

    thresholds = np.asarray([float(t) for _, t in splits])

    def column_of(j, t):
        return nearest_threshold(thresholds, np.flatnonzero(feat == j), t)

    column_info = (Xa.shape[1], feat, column_of)
    return _solve(Z8, Xa, lambda c: splits[c], Xa.shape[1], y, task, max_depth, max_num_nodes, min_samples_leaf,
                  alpha, sample_weight, budget, column_info, feature_names, t0, engine_kw, {}, greedy_floor=False)


ENGINE_SWITCHES = ("use_dataset_cache", "use_branch_cache", "use_depth_two", "use_upper_bound", "use_lower_bound",
                   "use_similarity_bound", "iterative_deepening")
#: engine options that are not switches (checked by their own functions)
ENGINE_OPTIONS = ("memory_limit", "verbose")


def _check_engine_kw(kw):
    for k, v in kw.items():
        if k in ENGINE_OPTIONS:
            continue
        if k not in ENGINE_SWITCHES:
            raise InputError(f"unknown option {k!r}; the dynamic program accepts "
                             f"{', '.join(ENGINE_SWITCHES + ENGINE_OPTIONS)}")
        if not isinstance(v, (bool, np.bool_)):
            raise InputError(f"{k} must be True or False; got {v!r}")


BINARIZATIONS = ("auto", "exact", "quantile", "midpoints")


def choose_engine(Xa, task, binarization: str, engine_kw: dict, binarizer=None, y=None, max_depth: int = 3,
                  min_samples_leaf: int = 1) -> tuple[str, dict]:
    """("continuous" or "binary", the "auto" choice's record) for ``binarization`` (see :func:`solve_dp`), with the
    reason it cannot be the continuous search as an InputError when "exact" was asked for. "auto" takes the
    engine predicted to be faster on this shape (:mod:`opttrees.dp.chooser`)."""
    if binarizer is not None or binarization in ("quantile", "midpoints"):
        return "binary", {}
    switches = [k for k in engine_kw if k in ENGINE_SWITCHES]
    costs = getattr(task, "feature_costs", None) is not None
    if binarization == "exact":
        if switches:
            raise InputError(f"{switches[0]} is a switch of the binary engine; binarization='exact' runs the "
                             "continuous search, which has none")
        return "continuous", {}
    if switches or costs:
        return "binary", {}
    Xf = np.asarray(Xa, dtype=np.float64)
    distinct = [len(np.unique(c[np.isfinite(c)])) for c in Xf.T]
    m = sum(d - 1 for d in distinct)
    p = sum(d > 1 for d in distinct)
    K = 2 if getattr(task, "tree_task", "") == "regression" or y is None else len(np.unique(np.asarray(y)))
    fits = max_depth < 2 or counts_bytes(m, K + 1) <= MAX_COUNT_BYTES
    choice = chooser.choose(Xf.shape[0], p, m, K, int(max_depth), int(min_samples_leaf), binary_fits=fits)
    return choice["engine"], choice


def solve_dp(X, y, task=None, max_depth: int = 3, max_num_nodes: int | None = None, min_samples_leaf: int = 1,
             alpha: float = 0.0, sample_weight=None, binarization: str = "auto", n_thresholds: int = 10,
             time_limit: float | None = None, binarizer: Binarizer | None = None, n_jobs: int = 1, **engine_kw):
    """Optimal tree over raw ``X``: returns (Tree in original units, SolveResult).

    Parameters
    ----------
    X, y : raw features (n, p) and targets (class labels of any type, or numbers for RegressionTask).
    task : ClassificationTask() (default), CostSensitiveTask(cost_matrix, feature_costs=...), RegressionTask().
    max_depth : branching levels (0 = one leaf), at most ``MAX_DEPTH``.
    max_num_nodes : optional limit on branching nodes.
    min_samples_leaf : every leaf holds at least this many rows.
    alpha : cost per split on the normalised scale: objective = loss / L̂ + alpha * splits.
    binarization : which splits and which search.
        "exact": every midpoint, searched on the rows' sorted orders (:mod:`opttrees.dp.continuous`; no
        binary matrix, O(n p) memory): the OCT / CART split set at any size.
        "midpoints": the same split set through a binary matrix and the binary engine (fastest on few distinct
        values; its depth-two counts grow with the square of the midpoints).
        "quantile": at most ``n_thresholds`` midpoints per feature (fewer candidates: faster, not the OCT optimum).
        "auto" (default): the engine predicted to be faster (:mod:`opttrees.dp.chooser`; ``plan["engine"]`` and
        the predictions are recorded in the result), the binary one always when a task has feature costs or a
        binary-engine switch is given. Both are exact over every midpoint, so "auto" only picks the faster
        engine.
    time_limit : seconds for the whole call; on expiry the best tree so far, with a valid lower bound.
    binarizer : a fitted or unfitted :class:`~opttrees.data.binarizers.Binarizer` (overrides ``binarization``).
    n_jobs : threads for the continuous search (the root's features); the result does not depend on it.
    engine switches : see :func:`solve_dp_binary` (binary engine only); ``memory_limit`` and ``verbose`` for both.

    The result's ``timings`` hold seconds ("binarize", "search", "total"), "engine" ("binary" or
    "continuous") and the search's counters.
    """
    t0 = time.perf_counter()
    budget = Budget(time_limit)
    _common_checks(max_depth, max_num_nodes, min_samples_leaf, alpha, time_limit)
    _check_engine_kw(engine_kw)
    if binarization not in BINARIZATIONS:
        raise InputError(f"binarization must be one of {', '.join(map(repr, BINARIZATIONS))}; got {binarization!r}")
    Xa, names = _as_2d_float(X, "X")
    engine, choice = choose_engine(Xa, _check_task(task), binarization, engine_kw, binarizer, y, max_depth,
                                   min_samples_leaf)
    if engine == "continuous":
        from .continuous import solve_dp_continuous

        tree, res = solve_dp_continuous(Xa, y, task=task, max_depth=max_depth, max_num_nodes=max_num_nodes,
                                        min_samples_leaf=min_samples_leaf, alpha=alpha, sample_weight=sample_weight,
                                        time_limit=budget.remaining() if time_limit is not None else None,
                                        n_jobs=n_jobs, **engine_kw)
        if names is not None:
            tree.feature_names = list(names)
        res.timings["engine"] = "continuous"
        _note_choice(res, choice)
        return tree, res
    if binarizer is None:
        strategy = "quantile" if binarization == "quantile" else "midpoints"
        binarizer = Binarizer(strategy=strategy, n_thresholds=n_thresholds).fit(Xa)
    elif not hasattr(binarizer, "threshold_"):
        binarizer = binarizer.fit(Xa)
    Xb = binarizer.transform(Xa).astype(np.uint8)
    t_bin = time.perf_counter() - t0
    feat = binarizer.feature_

    def column_of(j, t):
        return nearest_threshold(binarizer.threshold_, np.flatnonzero(feat == j), t)

    column_info = (Xa.shape[1], feat, column_of)
    feature_names = list(names) if names is not None else None
    tree, res = _solve(Xb, Xa, binarizer.decode, Xa.shape[1], y, task, max_depth, max_num_nodes, min_samples_leaf,
                       alpha, sample_weight, budget, column_info, feature_names, t0, engine_kw,
                       {"binarize": t_bin})
    res.timings["engine"] = "binary"
    _note_split_set(res, Xa, binarizer)
    _note_choice(res, choice)
    return tree, res


def _note_choice(res, choice: dict) -> None:
    """The "auto" engine choice in ``res.plan``: the engine, both predictions and the measured search time."""
    if choice:
        res.plan = {**res.plan, "engine": choice["engine"], "engine_why": choice["why"],
                    "predicted_seconds": {k: round(v, 4) for k, v in choice["predicted"].items()},
                    "actual_seconds": round(float(res.timings.get("search", res.runtime)), 4)}


def _note_split_set(res, Xa: np.ndarray, binarizer) -> None:
    """Say in the result when its proof covers fewer splits than every midpoint (quantile thresholds): an
    "optimal" DP tree is then the best over those thresholds only, and another method can beat it."""
    m = len(binarizer.threshold_)
    every = sum(max(len(np.unique(Xa[:, j])) - 1, 0) for j in range(Xa.shape[1]))
    res.problem["split_set"] = "quantile" if m < every else "every midpoint"
    if m < every:
        res._note(f"the search covered {m} of the {every} midpoints (binarization {binarizer.strategy!r}); "
                  "an optimum is over those thresholds only (binarization='exact' searches every midpoint)")
