"""Exact prescriptive trees over a binarisation: OPT with constant counterfactuals and policy trees by DP.

Why a search of its own rather than a task for :mod:`opttrees.dp.engine`: the engine's leaf costs are fixed
kinds (misclassification, a cost matrix over one-hot classes, squared error). OPT's leaf cost (thesis (6.5):
mu·s·N·min over eligible treatments of the treatment's mean, plus (1 - mu) times the within-(leaf, treatment)
squared error) and the ``n_treatment`` eligibility rule are neither, although the objective is separable over
leaves (STreeD's condition, its paper's §4.4), so the STreeD recursion applies unchanged. This search is that
recursion in Python with numpy: every subproblem evaluates all its candidate leaves in one vectorised call of
:func:`opttrees.prescriptive.objective.leaf_costs`, and a depth-two subproblem is solved from *pair
statistics* (the summed statistics of the rows with x_i = 1 and x_j = 1 for every pair of binary columns, one
matrix product; the MurTree/STreeD depth-two idea), so a depth-two tree costs one BLAS call instead of one per
root split. Subproblems are cached by row set; a split is abandoned when its first child alone already costs
as much as the best tree so far (leaf costs are made non-negative first by a constant shift, so zero is a
valid lower bound).

Objective: exactly :func:`opttrees.prescriptive.objective.tree_objective` (normalised, plus alpha per split),
recomputed from the returned tree and checked against the search's value.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from ..encoding import Binarizer
from ..progress import ProgressLine
from ..errors import InputError, VerificationError
from ..interrupt import Deadline
from ..prescriptive.objective import (KIND_LINEAR, KIND_OPT, KIND_POLICY, PrescriptiveProblem, leaf_costs,
                                      make_problem, tree_objective)
from ..prescriptive.search import heap_to_tree
from ..solvers.result import Incumbent, finish
from .common import _check_alpha, _check_int
from .recursion import Node, SubsetRecursion

#: the search is exponential in depth beyond the depth-two solver; deeper trees are out of reach anyway
PRESCRIPTIVE_MAX_DEPTH = 4
#: bytes the pair statistics of one depth-two subproblem may take (rows x columns x statistics, float64)
MAX_PAIR_BYTES = 512 * 1024 ** 2


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


def solve_dp_prescriptive(prob: PrescriptiveProblem, max_depth: int = 2, alpha: float = 0.0,
                          binarization: str = "quantile", n_thresholds: int = 10, binarizer: Binarizer | None = None,
                          time_limit: float | None = None, verbose=False):
    """Optimal prescriptive tree over a binarisation of ``prob.data.X``: (Tree, SolveResult).

    ``binarization="midpoints"`` offers every midpoint (the local search's candidate splits, so both optimise
    over the same trees); ``"quantile"`` at most ``n_thresholds`` per feature. ``time_limit`` (seconds): on
    expiry the best tree of the deepest depth finished (iterative deepening), status "time_limit".
    """
    t0 = time.perf_counter()
    deadline = Deadline(time_limit)
    D = _check_int("max_depth", max_depth, 0, PRESCRIPTIVE_MAX_DEPTH)
    a = _check_alpha(alpha)
    if prob.kind == KIND_LINEAR:
        _shifted(prob)       # raises the explanation
    data = prob.data
    if binarizer is None:
        if binarization not in ("quantile", "midpoints"):
            raise InputError(f"binarization must be 'quantile' or 'midpoints'; got {binarization!r}")
        binarizer = Binarizer(strategy=binarization, n_thresholds=n_thresholds).fit(data.X)
    Xb = binarizer.transform(data.X).astype(np.float64)
    keep = np.nonzero((Xb.sum(axis=0) > 0) & (Xb.sum(axis=0) < data.n))[0]
    Xb = np.ascontiguousarray(Xb[:, keep])
    sp, const = _shifted(prob)
    Z = sp.Z
    pen = a * prob.baseline
    ncol, S = Xb.shape[1], Z.shape[1]
    counters = {"depth_two_calls": 0, "binary_columns": int(ncol)}

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

    best_cost = float(costs(Z.sum(axis=0)[None, :])[0])
    if not np.isfinite(best_cost):
        raise InputError("no feasible tree: the root already has fewer than min_samples_leaf rows or no treatment "
                         "with n_treatment rows")
    trace: list = []
    line = ProgressLine("prescriptive dynamic program", enabled=bool(verbose), time_limit=deadline.remaining())

    def progress(k: int) -> None:
        if k % 64 == 0:
            line.update(subproblems=k)

    search = SubsetRecursion(Xb, node, pen, 1, deadline, on_subproblem=progress if verbose else None)

    def on_depth(d, cost):
        nonlocal best_cost
        best_cost = cost
        trace.append(Incumbent(time.perf_counter() - t0, (cost + const) / prob.baseline, 0.0, np.inf))
        line.update(depth=f"{d}/{D}", best=(cost + const) / prob.baseline, subproblems=search.counters["subproblems"])

    with line:
        heap, depth_done, termination = search.deepen(D, on_depth)
        line.update(status=termination)
    counters.update(search.counters)
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
