"""The STreeD recursion over row subsets in Python: one driver for the DPs whose values the numba engine cannot
express (SPO trees: a decision oracle per leaf; prescriptive and policy trees' reference search: eligibility
and counterfactuals; Pareto tasks: fronts of value vectors rather than one cost).

Why one driver: what a search over row subsets of a 0/1 matrix needs besides its values is the same for all
of them, and lives in :class:`SubsetSearch`: the partition of a node's rows by a split column under the leaf
minimum, the cache by (row set, depth), the subproblem counters, the stop (time limit, Ctrl-C) and the anytime
iterative deepening that keeps the deepest finished depth. A task then says only what its values are:

- scalar costs, :class:`SubsetRecursion`: a task's ``node(rows, d) -> Node`` says what a node costs as a leaf
  and in which order to try its split columns (and may solve small depths itself, e.g. from pair
  statistics); the recursion is ::

    best(rows, d) = min( leaf(rows),  min_f  pen + best(rows with x_f = 0, d - 1) + best(rows with x_f = 1, d - 1) )

  and a split is abandoned as soon as ``pen`` plus its left child reaches the best found (costs are >= 0, so
  zero bounds a subtree from below);
- Pareto fronts, :class:`opttrees.constraints.pareto._Search`: a node's value is the front of its subtrees' value
  vectors, a split's the pairwise sums of its children's fronts; a cached front computed under a larger cost
  budget serves a smaller one (``usable`` of :meth:`SubsetSearch.lookup`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..interrupt import STOP, Budget, stop_on_sigint


class Stopped(Exception):
    """The time limit passed or Ctrl-C was pressed inside a search."""


class SubsetSearch:
    """What every search over row subsets of the 0/1 matrix ``Xb`` (1 goes right) shares.

    ``min_leaf``: rows per side of a split; ``budget``: the time limit and Ctrl-C (:class:`Budget`);
    ``on_subproblem(count)`` is called for every new subproblem (progress). Subclasses compute values and
    use :meth:`lookup` / :meth:`enter` / :meth:`store` around them and :meth:`sides` for splits."""

    def __init__(self, Xb: np.ndarray, min_leaf: int, budget: Budget,
                 on_subproblem: Callable[[int], None] | None = None):
        self.right = np.asarray(Xb) > 0.5
        self.lo = max(1, int(min_leaf))
        self.budget = budget
        self.on_subproblem = on_subproblem
        self.cache: dict = {}
        self.counters = {"subproblems": 0, "cache_hits": 0}

    def check_stop(self) -> None:
        """Raise :class:`Stopped` when the budget is spent or Ctrl-C was pressed."""
        if self.budget.stop():
            raise Stopped

    def lookup(self, rows: np.ndarray, d: int, usable: Callable[[Any], bool] | None = None):
        """The cached value of (rows, d), or None; ``usable(value)`` may reject a cached value."""
        hit = self.cache.get((rows.tobytes(), d))
        if hit is not None and (usable is None or usable(hit)):
            self.counters["cache_hits"] += 1
            return hit
        return None

    def enter(self) -> None:
        """Count a new subproblem (and stop if it is time): call before computing a value."""
        self.check_stop()
        self.counters["subproblems"] += 1
        if self.on_subproblem is not None:
            self.on_subproblem(self.counters["subproblems"])

    def store(self, rows: np.ndarray, d: int, value):
        self.cache[(rows.tobytes(), d)] = value
        return value

    def sides(self, rows: np.ndarray, f: int, n_right: int | None = None):
        """(rows with x_f = 0, rows with x_f = 1), or None when a side would hold fewer than the leaf minimum
        (``n_right``: the count of the second, when the caller already has it; then nothing is split for a
        column that fails the minimum)."""
        if n_right is None:
            go = self.right[rows, f]
            n_right = int(go.sum())
        else:
            go = None
        if n_right < self.lo or len(rows) - n_right < self.lo:
            return None
        if go is None:
            go = self.right[rows, f]
        return rows[~go], rows[go]

    def stoppable(self, run: Callable[[], None]) -> str:
        """Run ``run()`` under Ctrl-C handling; the termination: "optimal" when it finished, else "time_limit" /
        "interrupted" (the budget or Ctrl-C stopped it; what it stored so far stays usable)."""
        with stop_on_sigint():
            try:
                run()
            except Stopped:
                return "interrupted" if STOP.is_set() else "time_limit"
        return "optimal"

    def deepen_with(self, max_depth: int, step: Callable[[int], None]) -> tuple[int, str]:
        """Run ``step(d)`` for d = 0 .. max_depth (:meth:`stoppable`): iterative deepening, each finished depth
        an anytime incumbent. Returns (the deepest depth whose step finished, -1 when none; termination)."""
        done = [-1]

        def depths() -> None:
            for d in range(max_depth + 1):
                step(d)
                done[0] = d

        termination = self.stoppable(depths)
        return done[0], termination

@dataclass
class Node:
    """What a scalar task says about a row subset at a depth.

    ``leaf``: its cost as one leaf (inf when not allowed); ``solved``: (cost, column) when the task solved this
    depth itself (column -1: the leaf), else None; ``order``: the split columns to try, best-looking first;
    ``n_right``: rows with x_f = 1 per column; ``one``: per column, the cost of the depth-one tree splitting on
    it (both sides leaves) when the task has them, used at depth one."""

    leaf: float
    solved: tuple | None = None
    order: np.ndarray | None = None
    n_right: np.ndarray | None = None
    one: np.ndarray | None = None


class SubsetRecursion(SubsetSearch):
    """Memoised best trees (scalar costs) over row subsets of the 0/1 matrix ``Xb`` (1 goes right).

    ``node(rows, d) -> Node`` is the task; ``pen`` the cost per split; the rest as :class:`SubsetSearch`. While
    ``node`` runs, ``path`` holds the splits that led to its rows from the root, as (column, side) with side 1
    for x = 1: one description of the rows (the cache is by rows, so another path may lead to the same ones)."""

    def __init__(self, Xb: np.ndarray, node: Callable[[np.ndarray, int], Node], pen: float, min_leaf: int,
                 budget: Budget, on_subproblem: Callable[[int], None] | None = None):
        super().__init__(Xb, min_leaf, budget, on_subproblem)
        self.node = node
        self.pen = float(pen)
        self.path: list[tuple[int, int]] = []

    def best(self, rows: np.ndarray, d: int) -> tuple:
        """(cost, column) of the best tree of depth <= d for ``rows`` (column -1: a leaf)."""
        hit = self.lookup(rows, d)
        if hit is not None:
            return hit
        self.enter()
        info = self.node(rows, d)
        sol = (float(info.leaf), -1)
        if info.solved is not None:
            if info.solved[0] < sol[0]:
                sol = (float(info.solved[0]), int(info.solved[1]))
        elif d > 0 and info.order is not None:
            sol = self._splits(rows, d, info, sol)
        return self.store(rows, d, sol)

    def _splits(self, rows, d, info: Node, sol):
        assert info.order is not None
        for f in info.order:
            if self.pen >= sol[0]:
                break
            if d == 1 and info.one is not None:
                nr = int(info.n_right[f]) if info.n_right is not None else int(self.right[rows, f].sum())
                if nr < self.lo or len(rows) - nr < self.lo:
                    continue
                c = self.pen + float(info.one[f])
            else:
                parts = self.sides(rows, int(f), None if info.n_right is None else int(info.n_right[f]))
                if parts is None:
                    continue
                c = self.pen + self._child(parts[0], d - 1, int(f), 0)
                if c >= sol[0]:
                    continue
                c += self._child(parts[1], d - 1, int(f), 1)
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
        done = [heap, 0]

        def step(d: int) -> None:
            h = np.full_like(heap, -2)
            self.build(rows0, d, h)
            done[0], done[1] = h, d
            if on_depth is not None:
                on_depth(d, self.best(rows0, d)[0])

        _, termination = self.deepen_with(max_depth, step)
        return done[0], done[1], termination
