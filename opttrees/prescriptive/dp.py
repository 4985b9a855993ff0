"""Exact prescriptive trees over a binarisation: OPT with constant counterfactuals and policy trees by DP.

Why a search of its own rather than a task for :mod:`opttrees.dp.engine`: the engine's leaf costs are fixed
kinds (misclassification, a cost matrix over one-hot classes, squared error). OPT's leaf cost (thesis (6.5):
mu·s·N·min over eligible treatments of the treatment's mean, plus (1 - mu) times the within-(leaf, treatment)
squared error) and the ``n_treatment`` eligibility rule are neither, although the objective is separable over
leaves (STreeD's condition, its paper's §4.4), so the STreeD recursion applies unchanged.

The search runs compiled (:mod:`opttrees.dp.stats_kernels`, numba): leaf costs from summed per-(treatment)
statistics, depth one from per-column sums, depth two from *pair statistics* (the summed statistics of the
rows with x_i = 1 and x_j = 1 for every pair of splitting columns; the MurTree/STreeD depth-two idea), deeper
levels by the recursion with a cache by row set and the pruning of :mod:`opttrees.dp.recursion`. One depth of
the iterative deepening is one kernel call on a worker thread that stops at the time limit or Ctrl-C.

``_engine="python"`` runs the same search as the task of :class:`opttrees.dp.recursion.SubsetRecursion` with
numpy (every subproblem evaluates all its candidate leaves in one vectorised call of
:func:`opttrees.prescriptive.objective.leaf_costs`, depth two in one BLAS product): the reference the compiled
search is tested against. In both, a split is abandoned when its first child alone already costs as much as
the best tree so far (leaf costs are made non-negative first by a constant shift, so zero is a valid lower
bound).

Objective: exactly :func:`opttrees.prescriptive.objective.tree_objective` (normalised, plus alpha per split),
recomputed from the returned tree and checked against the search's value.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..data.binarizers import Binarizer
from ..progress import ProgressLine
from ..errors import InputError, VerificationError
from ..interrupt import STOP, Budget, stop_on_sigint
from ..jit import ABANDONED, announce_compile, is_cold, run_threads, warn_still_compiling
from .objective import (KIND_LINEAR, KIND_OPT, KIND_POLICY, PrescriptiveProblem, leaf_costs,
                                      make_problem, tree_objective)
from .search import heap_to_tree
from ..solvers.result import Incumbent, finish
from ..dp.common import _check_alpha, _check_int
from ..dp import stats_kernels
from ..dp.recursion import Node, SubsetRecursion

#: the search is exponential in depth beyond the depth-two solver; deeper trees are out of reach anyway
PRESCRIPTIVE_MAX_DEPTH = 4
#: bytes the pair statistics of one depth-two subproblem may take (rows x columns x statistics, float64)
MAX_PAIR_BYTES = 512 * 1024 ** 2
#: the compiled search's pair statistics (columns that split the node, squared, x statistics, float64)
MAX_PAIR_BYTES_COMPILED = 128 * 1024 ** 2


def _shifted(prob: PrescriptiveProblem):
    """The same problem with every leaf cost >= 0, and the constant to add back (raw units)."""
    d = prob.data
    if prob.kind == KIND_OPT:
        lo = float(d.y.min())
        sp = make_problem(dataclasses.replace(d, ybar=lo), KIND_OPT, prob.mu, prob.n_treatment, prob.min_samples_leaf)
        return sp, -prob.a * d.n * (d.ybar - lo)
    if prob.kind == KIND_POLICY:
        G = np.asarray(prob.gamma, dtype=np.float64)
        rmin = G.min(axis=1)
        sp = make_problem(dataclasses.replace(d, ybar=0.0), KIND_POLICY, prob.mu, prob.n_treatment,
                          prob.min_samples_leaf, gamma=G - rmin[:, None])
        return sp, prob.a * (float(rmin.sum()) - d.n * d.ybar)
    raise InputError("the dynamic program solves OPT with constant counterfactuals and policy trees; OPT-L "
                     "(linear counterfactuals) is by local search only")


def _verified_tree(heap, binarizer, keep, prob, a, searched: float):
    """The heap's tree in original units and its objective, which must be what the search reported."""
    ntype = np.where(heap >= 0, 2, np.where(heap == -1, 1, 0)).astype(np.int8)
    thr = np.zeros(len(heap))
    feat_orig = np.zeros(len(heap), np.int64)
    for u in np.nonzero(heap >= 0)[0]:
        feat_orig[u], thr[u] = binarizer.decode(int(keep[heap[u]]))
    tree = heap_to_tree(prob, ntype, feat_orig, thr)
    objective = tree_objective(tree, prob, a)
    if abs(objective - searched) > 1e-7 * max(1.0, abs(objective)):
        raise VerificationError(f"prescriptive DP: the returned tree scores {objective:.12g} but the search reported "
                                f"{searched:.12g}")
    return tree, objective


def _python_search(Xb, sp, pen, D, budget, counters, on_depth, line):
    """The search by :class:`SubsetRecursion` with numpy leaf costs: (heap, deepest finished depth, termination).

    The reference the compiled search (:func:`_compiled_search`) is tested against (``_engine="python"``)."""
    Z = sp.Z
    Xb = Xb.astype(np.float64)
    ncol, S = Xb.shape[1], Z.shape[1]

    def costs(V):
        return leaf_costs(sp, V)[0]

    def depth_one(rows, tot):
        R = Xb[rows].T @ Z[rows]
        c = costs(tot[None, :] - R) + costs(R) + pen
        k = int(np.argmin(c)) if len(c) else -1
        return (c[k], k) if k >= 0 else (np.inf, -1)

    def depth_two(rows, tot, leaf):
        counters["depth_two_calls"] += 1
        Xr, Zr = Xb[rows], Z[rows]
        nr = len(rows)
        if nr * ncol * S * 8 > MAX_PAIR_BYTES:   # too big for one product: root splits one at a time
            return None
        P = (Xr.T @ (Xr[:, :, None] * Zr[:, None, :]).reshape(nr, ncol * S)).reshape(ncol, ncol, S)
        diag = P[np.arange(ncol), np.arange(ncol)]            # R_i: rows with x_i = 1
        L = tot[None, :] - diag
        cR_leaf, cL_leaf = costs(diag), costs(L)
        right = costs(P) + costs(diag[:, None, :] - P) + pen  # right child (x_i = 1) split on j
        A = diag[None, :, :] - P                                # x_j = 1 and x_i = 0
        left = costs(A) + costs(L[:, None, :] - A) + pen        # left child (x_i = 0) split on j
        bestR = np.minimum(cR_leaf, right.min(axis=1))
        bestL = np.minimum(cL_leaf, left.min(axis=1))
        tot_i = bestL + bestR + pen
        i = int(np.argmin(tot_i))
        return (tot_i[i], i) if tot_i[i] < leaf else (leaf, -1)

    def node(rows, d) -> Node:
        tot = Z[rows].sum(axis=0)
        leaf = float(costs(tot[None, :])[0])
        if d < 1 or len(rows) < 2:
            return Node(leaf)
        if d == 1:
            return Node(leaf, solved=depth_one(rows, tot))
        if d == 2 and (out := depth_two(rows, tot, leaf)) is not None:
            return Node(leaf, solved=out)
        Xr = Xb[rows]
        R = Xr.T @ Z[rows]
        return Node(leaf, order=np.argsort(costs(tot[None, :] - R) + costs(R), kind="stable"),
                    n_right=Xr.sum(axis=0))

    def progress(k: int) -> None:
        counters["subproblems"] = k
        if k % 64 == 0:
            line.update(subproblems=k)

    search = SubsetRecursion(Xb, node, pen, 1, budget, on_subproblem=progress)
    heap, done, termination = search.deepen(D, on_depth)
    counters.update(search.counters)
    return heap, done, termination


def _compiled_search(Xb, sp, pen, D, budget, counters, on_depth, line):
    """The same search in numba (:mod:`opttrees.dp.stats_kernels`), one depth of the iterative deepening per
    kernel call on a worker thread (:func:`opttrees.jit.run_threads` sets ``stop`` at the time limit or Ctrl-C).

    Returns (heap, deepest finished depth, termination); a depth cut short leaves the previous depth's tree."""
    n, ncol = Xb.shape
    kernels = (stats_kernels.row_columns, stats_kernels.new_cache, stats_kernels.search, stats_kernels.build)
    cold = any(is_cold(k) for k in kernels)
    if cold:
        announce_compile("prescriptive dynamic-program", stats_kernels.search, "about 20 s on 2 cores; counted in the time limit")
    rng = np.random.default_rng(20261127)                         # Zobrist words of the rows (cache keys)
    h1 = rng.integers(0, np.iinfo(np.uint64).max, n, dtype=np.uint64, endpoint=True)
    h2 = rng.integers(0, np.iinfo(np.uint64).max, n, dtype=np.uint64, endpoint=True)
    Z = np.ascontiguousarray(sp.Z, dtype=np.float64)
    S = Z.shape[1]
    pair_cap = MAX_PAIR_BYTES_COMPILED // 8
    kind = stats_kernels.KIND_OPT if sp.kind == KIND_OPT else stats_kernels.KIND_POLICY
    task = (np.array([kind, sp.m, sp.n_treatment, sp.min_samples_leaf, pair_cap], np.int64),
            np.array([sp.a, sp.b, pen], np.float64))
    state: dict = {}

    def prepare() -> None:
        """The kernels' arrays and cache by row set, made in the worker: kernels (even cached ones) wait for
        numba's compiler lock while another compiles, and a cold compile must count in the time limit."""
        rowptr, rowcols = stats_kernels.row_columns(Xb)
        state["data"] = (np.ascontiguousarray(Xb.T), rowptr, rowcols, Z, np.ascontiguousarray(sp.zlo, dtype=np.int64),
                         np.ascontiguousarray(sp.zhi, dtype=np.int64), h1, h2)
        state["ws"] = stats_kernels.workspace(n, ncol, S, D, int(np.diff(rowptr).max()) if n else 0, pair_cap)
        state["cache"] = stats_kernels.new_cache()

    stats = np.zeros(stats_kernels.N_COUNTERS, np.int64)
    stop = np.zeros(1, np.int64)
    rows0 = np.arange(n, dtype=np.int64)
    size = 2 ** (D + 1) - 1
    heap = np.full(size, -2, np.int64)
    heap[0] = -1
    done, termination = 0, "optimal"

    def sync():
        counters.update(subproblems=int(stats[stats_kernels.N_SUBPROBLEMS]), cache_hits=int(stats[stats_kernels.N_CACHE_HITS]),
                        depth_two_calls=int(stats[stats_kernels.N_D2_CALLS]))

    with stop_on_sigint():
        for d in range(D + 1):
            if budget.stop():   # no depth starts past the time limit (the kernel returns at once)
                stop[0] = 1
            out = np.zeros(3)
            h = np.full(size, -2, np.int64)

            def work(d=d, out=out, h=h):
                if not state:
                    prepare()
                data, ws, cache = state["data"], state["ws"], state["cache"]
                stats_kernels.search(rows0, n, d, data, task, ws, cache, stats, stop, out)
                if out[2] == 0:
                    stats_kernels.build(d, data, task, ws, cache, stats, h)

            def poll():
                sync()
                line.update(subproblems=counters["subproblems"])

            ran = run_threads([work], 1, stop, budget,
                              compiling=(lambda: any(is_cold(k) for k in kernels)) if cold else None,
                              on_poll=poll)
            sync()
            if ran is ABANDONED:
                termination = "interrupted" if STOP.is_set() else "time_limit"
                warn_still_compiling("prescriptive dynamic-program", f"the best tree of depth {done}", stacklevel=4)
                break
            if out[2] != 0:
                termination = "interrupted" if STOP.is_set() else "time_limit"
                break
            heap, done = h, d
            on_depth(d, float(out[0]))
    return heap, done, termination


def solve_dp_prescriptive(prob: PrescriptiveProblem, max_depth: int = 2, alpha: float = 0.0,
                          binarization: str = "quantile", n_thresholds: int = 10, binarizer: Binarizer | None = None,
                          time_limit: float | None = None, verbose=False, *, _engine: str = "numba"):
    """Optimal prescriptive tree over a binarisation of ``prob.data.X``: (Tree, SolveResult).

    ``binarization="midpoints"`` offers every midpoint (the local search's candidate splits, so both optimise
    over the same trees); ``"quantile"`` at most ``n_thresholds`` per feature. ``time_limit`` (seconds): on
    expiry the best tree of the deepest depth finished (iterative deepening), status "time_limit".
    ``_engine="python"`` runs the search in Python (:class:`SubsetRecursion`), the compiled search's reference.
    """
    t0 = time.perf_counter()
    budget = Budget(time_limit)
    D = _check_int("max_depth", max_depth, 0, PRESCRIPTIVE_MAX_DEPTH)
    a = _check_alpha(alpha)
    if prob.kind == KIND_LINEAR:
        _shifted(prob)       # raises the explanation
    data = prob.data
    if binarizer is None:
        if binarization not in ("quantile", "midpoints"):
            raise InputError(f"binarization must be 'quantile' or 'midpoints'; got {binarization!r}")
        binarizer = Binarizer(strategy=binarization, n_thresholds=n_thresholds).fit(data.X)
    Xb = binarizer.transform(data.X)                                  # int8 0/1
    ones = Xb.sum(axis=0, dtype=np.int64)
    keep = np.nonzero((ones > 0) & (ones < data.n))[0]
    Xb = np.ascontiguousarray(Xb[:, keep], dtype=np.uint8)
    sp, const = _shifted(prob)
    pen = a * prob.baseline
    counters = {"subproblems": 0, "cache_hits": 0, "depth_two_calls": 0, "binary_columns": int(Xb.shape[1])}
    best_cost = float(leaf_costs(sp, sp.Z.sum(axis=0)[None, :])[0][0])
    if not np.isfinite(best_cost):
        raise InputError("no feasible tree: the root already has fewer than min_samples_leaf rows or no treatment "
                         "with n_treatment rows")
    trace: list = []
    line = ProgressLine("prescriptive dynamic program", enabled=bool(verbose), time_limit=budget.remaining())

    def on_depth(d, cost):
        nonlocal best_cost
        best_cost = cost
        trace.append(Incumbent(time.perf_counter() - t0, (cost + const) / prob.baseline, 0.0, np.inf))
        line.update(depth=f"{d}/{D}", best=(cost + const) / prob.baseline, subproblems=counters["subproblems"])

    if _engine not in ("numba", "python"):
        raise InputError(f"_engine must be 'numba' or 'python'; got {_engine!r}")
    run = _compiled_search if _engine == "numba" else _python_search
    with line:
        heap, depth_done, termination = run(Xb, sp, pen, D, budget, counters, on_depth, line)
        line.update(status=termination)
    tree, objective = _verified_tree(heap, binarizer, keep, prob, a, (best_cost + const) / prob.baseline)
    runtime = time.perf_counter() - t0
    bound = objective if termination == "optimal" else -np.inf
    counters["incumbent_depth"] = depth_done
    result = finish("dp-prescriptive", "opttrees-dp", termination, objective, None if bound == -np.inf else bound,
                    runtime, counters["subproblems"],
                    trace + [Incumbent(runtime, objective, objective if termination == "optimal" else -np.inf,
                                       0.0 if termination == "optimal" else np.inf)],
                    timings={"total": runtime, **counters})
    return tree, result
