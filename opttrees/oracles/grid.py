"""Shortest path on a rows x cols grid with edges directed east and north (the SPOT paper's §5.1 problem).

The graph is a DAG, so a dynamic program over the vertices in row-major order is exact. It is
vectorised over all cost vectors at once (one numpy op per vertex), which makes greedy SPOT's
hundreds of oracle calls per node essentially free. The LP description (flow conservation, totally
unimodular) is what :meth:`add_to_block` puts in the SPOT MILP, and what
:func:`grid_lp_problem` hands to the generic solver-backed oracle for cross-checks.

Edge order follows the paper's reference code: vertices are numbered row-major from the south-west
source (row 0 = south); first all east edges ``(r, c) -> (r, c+1)`` in vertex order, then all north edges
``(r, c) -> (r+1, c)`` in vertex order. A 4 x 4 grid has 12 + 12 = 24 edges.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from .base import DecisionProblem


class GridShortestPath(DecisionProblem):
    """min c·w over the s-t paths of a rows x cols north/east grid (source south-west, sink north-east)."""

    def __init__(self, rows: int = 4, cols: int = 4):
        if int(rows) != rows or int(cols) != cols or rows < 1 or cols < 1 or rows * cols < 2:
            raise InputError(f"grid needs integer rows, cols >= 1 with at least 2 vertices; got {rows} x {cols}")
        self.rows, self.cols = int(rows), int(cols)
        self.sense = "min"
        self.n_east = self.rows * (self.cols - 1)
        self.n_north = (self.rows - 1) * self.cols
        self.n_decisions = self.n_east + self.n_north

    # edge index helpers -------------------------------------------------------------
    def east(self, r: int, c: int) -> int:
        return r * (self.cols - 1) + c

    def north(self, r: int, c: int) -> int:
        return self.n_east + r * self.cols + c

    def edges(self) -> list[tuple[int, int]]:
        """Edge list as (tail vertex, head vertex) with vertices numbered r*cols + c, in cost order."""
        out = [(r * self.cols + c, r * self.cols + c + 1) for r in range(self.rows) for c in range(self.cols - 1)]
        out += [(r * self.cols + c, (r + 1) * self.cols + c) for r in range(self.rows - 1) for c in range(self.cols)]
        return out

    # DP -----------------------------------------------------------------------------
    def _dp(self, C: np.ndarray, C2: np.ndarray | None = None, tol: float = 0.0):
        """Forward DP; with ``C2`` ties in C (within tol) are broken by the *largest* C2 (SPO worst case)."""
        n = C.shape[0]
        R, K = self.rows, self.cols
        dist = np.empty((n, R, K))
        sec = np.zeros((n, R, K))   # secondary (C2) distances; read only when C2 is given
        from_east = np.zeros((n, R, K), dtype=bool)   # True: arrived by an east edge from (r, c-1)
        for r in range(R):
            for c in range(K):
                if r == 0 and c == 0:
                    dist[:, 0, 0] = 0.0
                    continue
                cand: list[tuple[np.ndarray, Any]] = []   # (distance, secondary distance or None without C2)
                if c > 0:
                    e = self.east(r, c - 1)
                    cand.append((dist[:, r, c - 1] + C[:, e], None if C2 is None else sec[:, r, c - 1] + C2[:, e]))
                if r > 0:
                    e = self.north(r - 1, c)
                    cand.append((dist[:, r - 1, c] + C[:, e], None if C2 is None else sec[:, r - 1, c] + C2[:, e]))
                if len(cand) == 1:
                    dist[:, r, c] = cand[0][0]
                    from_east[:, r, c] = c > 0
                    if C2 is not None:
                        sec[:, r, c] = cand[0][1]
                    continue
                (de, se), (dn, sn) = cand
                if C2 is None:
                    pick_e = de <= dn
                else:
                    band = tol * np.maximum(1.0, np.abs(dn))
                    pick_e = (de < dn - band) | ((np.abs(de - dn) <= band) & (se >= sn))
                dist[:, r, c] = np.where(pick_e, de, dn)
                from_east[:, r, c] = pick_e
                if C2 is not None:
                    sec[:, r, c] = np.where(pick_e, se, sn)
        # backtrack all rows at once
        W = np.zeros((n, self.n_decisions))
        rr = np.full(n, R - 1)
        cc = np.full(n, K - 1)
        idx = np.arange(n)
        for _ in range(R + K - 2):
            fe = from_east[idx, rr, cc]
            e_idx = np.where(fe, rr * (K - 1) + cc - 1, self.n_east + (rr - 1) * K + cc)
            W[idx, e_idx] = 1.0
            cc = np.where(fe, cc - 1, cc)
            rr = np.where(fe, rr, rr - 1)
        return W, dist[:, R - 1, K - 1]

    def _solve_min(self, C):
        W, _ = self._dp(C)
        # recompute the value from W so it is exactly c·w (no DP round-off drift)
        return W, np.einsum("ij,ij->i", C, W)

    def worst_case_decisions(self, Chat, C, tol: float = 1e-9) -> np.ndarray:
        """Exact SPO tie rule: lexicographic DP (min ĉ·w, then max c·w among ties)."""
        Chat = self.check_costs(Chat, "Chat")
        C = self.check_costs(C)
        W, _ = self._dp(Chat, C, tol=tol)
        return W

    # Pyomo ------------------------------------------------------------------------
    def add_to_block(self, block):
        """Flow-conservation LP (totally unimodular, so its vertices are the paths): w_e in [0, 1]."""
        import pyomo.environ as pyo
        d = self.n_decisions
        V = self.rows * self.cols
        block.w = pyo.Var(range(d), bounds=(0.0, 1.0))
        out_e = {v: [] for v in range(V)}
        in_e = {v: [] for v in range(V)}
        for e, (u, v) in enumerate(self.edges()):
            out_e[u].append(e)
            in_e[v].append(e)
        rhs = {v: 0.0 for v in range(V)}
        rhs[0] = 1.0
        rhs[V - 1] = -1.0

        def flow_rule(b, v):
            return sum(b.w[e] for e in out_e[v]) - sum(b.w[e] for e in in_e[v]) == rhs[v]
        block.flow = pyo.Constraint(range(V), rule=flow_rule)
        return [block.w[e] for e in range(d)]


def grid_lp_problem(rows: int = 4, cols: int = 4, **kw):
    """The same grid problem as a generic Pyomo LP (for cross-checks and as an example of the wrapper)."""
    from .pyomo_problem import PyomoDecisionProblem
    g = GridShortestPath(rows, cols)
    return PyomoDecisionProblem(g.add_to_block, n_decisions=g.n_decisions, sense="min", **kw)
