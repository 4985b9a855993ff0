"""The STreeD recursion over row subsets in Python, shared by the DPs whose leaf cost the numba engine cannot
express (SPO trees: a decision oracle per leaf; prescriptive and policy trees: eligibility and counterfactuals).

Why one driver: each task only says what a node costs as a leaf and in which order to try its split columns
(and may solve small depths directly, e.g. from pair statistics); the recursion, its cache by row set, the
pruning, the deadline and the anytime iterative deepening are the same for all of them::

    best(rows, d) = min( leaf(rows),  min_f  pen + best(rows with x_f = 0, d - 1) + best(rows with x_f = 1, d - 1) )

A split is abandoned as soon as ``pen`` plus its left child reaches the best found (costs are >= 0, so zero
bounds a subtree from below). The Pareto DP (:mod:`opttrees.dp.pareto`) keeps fronts rather than one cost
and has its own search.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..interrupt import STOP, Budget, stop_on_sigint


class Stopped(Exception):
    """The deadline passed or Ctrl-C was pressed inside the recursion."""


@dataclass
class Node:
    """What a task says about a row subset at a depth.

    ``leaf``: its cost as one leaf (inf when not allowed); ``solved``: (cost, column) when the task solved this
    depth itself (column -1: the leaf), else None; ``order``: the split columns to try, best-looking first;
    ``n_right``: rows with x_f = 1 per column; ``one``: per column, the cost of the depth-one tree splitting on
    it (both sides leaves) when the task has them, used at depth one."""

    leaf: float
    solved: tuple | None = None
    order: np.ndarray | None = None
    n_right: np.ndarray | None = None
    one: np.ndarray | None = None


class SubsetRecursion:
    """Memoised best trees over row subsets of the 0/1 matrix ``Xb`` (1 goes right).

    ``node(rows, d) -> Node`` is the task; ``pen`` the cost per split; ``min_leaf`` rows per side;
    ``on_subproblem(count)`` is called for every new subproblem (progress). While ``node`` runs, ``path`` holds
    the splits that led to its rows from the root, as (column, side) with side 1 for x = 1: one description
    of the rows (the cache is by rows, so another path may lead to the same ones)."""

    def __init__(self, Xb: np.ndarray, node: Callable[[np.ndarray, int], Node], pen: float, min_leaf: int,
                 deadline: Budget, on_subproblem: Callable[[int], None] | None = None):
        self.right = np.asarray(Xb) > 0.5
        self.node = node
        self.pen = float(pen)
        self.lo = max(1, int(min_leaf))
        self.deadline = deadline
        self.on_subproblem = on_subproblem
        self.cache: dict = {}
        self.path: list[tuple[int, int]] = []
        self.counters = {"subproblems": 0, "cache_hits": 0}

    def best(self, rows: np.ndarray, d: int) -> tuple:
        """(cost, column) of the best tree of depth <= d for ``rows`` (column -1: a leaf)."""
        key = (rows.tobytes(), d)
        hit = self.cache.get(key)
        if hit is not None:
            self.counters["cache_hits"] += 1
            return hit
        if self.deadline.stop():
            raise Stopped
        self.counters["subproblems"] += 1
        if self.on_subproblem is not None:
            self.on_subproblem(self.counters["subproblems"])
        info = self.node(rows, d)
        sol = (float(info.leaf), -1)
        if info.solved is not None:
            if info.solved[0] < sol[0]:
                sol = (float(info.solved[0]), int(info.solved[1]))
        elif d > 0 and info.order is not None:
            sol = self._splits(rows, d, info, sol)
        self.cache[key] = sol
        return sol

    def _splits(self, rows, d, info: Node, sol):
        n = len(rows)
        assert info.order is not None
        for f in info.order:
            if self.pen >= sol[0]:
                break
            nr = int(info.n_right[f]) if info.n_right is not None else int(self.right[rows, f].sum())
            if nr < self.lo or n - nr < self.lo:
                continue
            if d == 1 and info.one is not None:
                c = self.pen + float(info.one[f])
            else:
                go = self.right[rows, f]
                c = self.pen + self._child(rows[~go], d - 1, int(f), 0)
                if c >= sol[0]:
                    continue
                c += self._child(rows[go], d - 1, int(f), 1)
            if c < sol[0]:
                sol = (float(c), int(f))
        return sol

    def _child(self, rows: np.ndarray, d: int, f: int, side: int) -> float:
        self.path.append((f, side))
        try:
            return self.best(rows, d)[0]
        finally:
            self.path.pop()

    def build(self, rows: np.ndarray, d: int, heap: np.ndarray, pos: int = 0) -> None:
        """Write the best tree's columns into ``heap`` (children of slot u at 2u+1, 2u+2; -1 leaf)."""
        _, f = self.best(rows, d)
        heap[pos] = f
        if f >= 0:
            go = self.right[rows, f]
            for side, child in ((0, rows[~go]), (1, rows[go])):
                self.path.append((int(f), side))
                try:
                    self.build(child, d - 1, heap, 2 * pos + 1 + side)
                finally:
                    self.path.pop()

    def deepen(self, max_depth: int, on_depth: Callable[[int, float], None] | None = None):
        """Iterative deepening from the root: each finished depth's tree is an anytime incumbent.

        Returns (heap of the deepest finished depth, that depth, termination "optimal" / "time_limit" /
        "interrupted"); with no depth finished the heap is the root leaf."""
        rows0 = np.arange(self.right.shape[0])
        heap = np.full(2 ** (max_depth + 1) - 1, -2, np.int64)
        heap[0] = -1
        done, termination = 0, "optimal"
        with stop_on_sigint():
            try:
                for d in range(max_depth + 1):
                    h = np.full_like(heap, -2)
                    self.build(rows0, d, h)
                    heap, done = h, d
                    if on_depth is not None:
                        on_depth(d, self.best(rows0, d)[0])
            except Stopped:
                termination = "interrupted" if STOP.is_set() else "time_limit"
        return heap, done, termination
