"""Exact SPO trees over a binarisation: the dynamic program with a decision oracle in the leaves.

A leaf holding rows R decides w*(sum of w_i c_i over R) (= w* of their mean cost) and pays the regret
sum_i w_i (c_i . w* - z*(c_i)), in min-cost form (``sign * c``). That leaf cost is separable, so the tree
search is the same recursion as the numba engine; what differs is that a leaf's cost needs the oracle, which
numba cannot call. So this search runs in Python, and every subproblem sends *all* its candidate leaves (both
sides of every binary column, and the node itself) through one batch ``solve`` of the DecisionProblem: one
oracle call per subproblem instead of one per leaf. Subproblems are cached by row set.

Objective (the SPOT one, :mod:`opttrees.spo.objective`): total weighted regret / N + alpha * splits with
N = sum_i w_i |z*(c_i)|.
"""
from __future__ import annotations

import time

import numpy as np

from ..data import _as_2d_float, check_sample_weight
from ..encoding import Binarizer
from ..errors import InputError
from ..interrupt import Budget
from ..oracles.base import DecisionProblem
from ..solvers.result import Incumbent, finish
from ..spo.objective import spot_norm
from .api import heap_to_tree
from .common import _check_alpha, _check_int
from .recursion import Node, SubsetRecursion

#: the Python search is exponential in depth without the depth-two solver; deeper trees are out of reach
SPO_MAX_DEPTH = 4


class SPOTask:
    """Marks a DecisionProblem for :func:`solve_dp_spo` (checks that it is one)."""

    tree_task = "spo"

    def __init__(self, problem):
        if not isinstance(problem, DecisionProblem):
            raise InputError(f"problem must be an opttrees.oracles.DecisionProblem; got {type(problem).__name__}")
        self.problem = problem


def solve_dp_spo(X, C, problem, max_depth: int = 2, alpha: float = 0.0, min_samples_leaf: int = 1,
                 sample_weight=None, binarization: str = "quantile", n_thresholds: int = 10,
                 time_limit: float | None = None, binarizer: Binarizer | None = None):
    """Optimal SPO tree (features X, true costs C) over a binarisation of X: (Tree with task "spo", SolveResult)."""
    t0 = time.perf_counter()
    deadline = Budget(time_limit)
    task = problem if isinstance(problem, SPOTask) else SPOTask(problem)
    prob = task.problem
    D = _check_int("max_depth", max_depth, 0, SPO_MAX_DEPTH)
    ml = _check_int("min_samples_leaf", min_samples_leaf, 1)
    a = _check_alpha(alpha)
    Xa, names = _as_2d_float(X, "X")
    C = prob.check_costs(C)
    n = Xa.shape[0]
    if C.shape[0] != n:
        raise InputError(f"X has {n} rows but C has {C.shape[0]}: lengths must match")
    w = check_sample_weight(sample_weight, n)
    if binarizer is None:
        if binarization not in ("quantile", "midpoints"):
            raise InputError(f"binarization must be 'quantile' or 'midpoints'; got {binarization!r}")
        binarizer = Binarizer(strategy=binarization, n_thresholds=n_thresholds).fit(Xa)
    Xb = binarizer.transform(Xa).astype(np.float64)
    Cm = prob.sign * C
    _, z = prob._solve_min(Cm)
    norm = spot_norm(prob, C, w, z=-z if prob.sign < 0 else z)
    pen = a * norm
    WC = w[:, None] * Cm
    wz = w * z
    counters = {"oracle_calls": 0, "oracle_rows": 0}

    def leaf_costs(rows):
        """Regret of the node as a leaf and of both sides of every column as leaves (one oracle call)."""
        Xr = Xb[rows]
        S = WC[rows].sum(axis=0)
        SR = Xr.T @ WC[rows]
        SL = S - SR
        zR = Xr.T @ wz[rows]
        zL = wz[rows].sum() - zR
        batch = np.vstack([S[None, :], SL, SR])
        W, _ = prob._solve_min(batch)
        counters["oracle_calls"] += 1
        counters["oracle_rows"] += len(batch)
        reg = np.einsum("ij,ij->i", batch, W)
        m = Xb.shape[1]
        nR = Xr.sum(axis=0)
        leaf = max(reg[0] - wz[rows].sum(), 0.0)
        return leaf, np.maximum(reg[1:m + 1] - zL, 0.0), np.maximum(reg[m + 1:] - zR, 0.0), nR

    def node(rows, d) -> Node:
        leaf, cl, cr, nR = leaf_costs(rows)
        one = cl + cr
        return Node(leaf if len(rows) >= ml else np.inf, order=np.argsort(one), n_right=nR, one=one)

    search = SubsetRecursion(Xb, node, pen, ml, deadline)
    heap, incumbent_depth, termination = search.deepen(D)
    counters.update(search.counters)
    tree = heap_to_tree(heap, binarizer.decode, Xa.shape[1], "spo", None, list(names))
    leafid = tree.apply(Xa)
    sums = np.zeros((tree.n_nodes, C.shape[1]))
    np.add.at(sums, leafid, w[:, None] * C)
    wsum = np.bincount(leafid, weights=w, minlength=tree.n_nodes)
    mean = sums / np.where(wsum > 0, wsum, 1.0)[:, None]
    dec, _ = prob.solve(mean)
    tree.value = mean
    tree.extras["decision"] = dec
    regret = np.einsum("ij,ij->i", Cm, dec[leafid]) - z
    objective = float(w @ regret) / norm + a * tree.n_splits
    bound = objective if termination == "optimal" else 0.0
    runtime = time.perf_counter() - t0
    counters["incumbent_depth"] = incumbent_depth
    result = finish("dp-spo", "opttrees-dp", termination, objective, bound, runtime, counters["subproblems"],
                    [Incumbent(runtime, objective, bound, 0.0 if termination == "optimal" else np.inf)],
                    timings={"total": runtime, **counters})
    return tree, result
