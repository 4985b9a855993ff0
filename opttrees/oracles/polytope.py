"""Small polytopes solved by vertex enumeration, and the news-recommendation problem of the SPOT paper.

Why enumerate: for the paper's news problem (d = 6 article types, 5 side constraints) the polytope has a
few dozen vertices, so ``argmax_v c·v`` over a precomputed vertex matrix solves a whole batch of LPs in one
matrix product — exact, and thousands of times faster than calling an LP solver per row.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from ..errors import InputError
from .base import DecisionProblem


def enumerate_vertices(A_ub, b_ub, A_eq=None, b_eq=None, tol: float = 1e-9, max_combos: int = 2_000_000):
    """Vertices of {w : A_ub w <= b_ub, A_eq w = b_eq} (must be bounded) by checking every active set."""
    A_ub = np.atleast_2d(np.asarray(A_ub, float))
    b_ub = np.asarray(b_ub, float).ravel()
    d = A_ub.shape[1]
    A_eq = np.zeros((0, d)) if A_eq is None else np.atleast_2d(np.asarray(A_eq, float))
    b_eq = np.zeros(0) if b_eq is None else np.asarray(b_eq, float).ravel()
    k = d - A_eq.shape[0]
    from math import comb
    if comb(A_ub.shape[0], k) > max_combos:
        raise InputError("polytope too large for vertex enumeration; use PyomoDecisionProblem instead")
    verts = []
    for act in combinations(range(A_ub.shape[0]), k):
        M = np.vstack([A_eq, A_ub[list(act)]])
        rhs = np.concatenate([b_eq, b_ub[list(act)]])
        if abs(np.linalg.det(M)) < 1e-12:
            continue
        v = np.linalg.solve(M, rhs)
        if (A_ub @ v <= b_ub + tol).all() and np.allclose(A_eq @ v, b_eq, atol=tol):
            verts.append(v)
    if not verts:
        raise InputError("the polytope is empty (no feasible vertex); check the constraints")
    V = np.unique(np.round(np.array(verts), 12), axis=0)
    return V


class PolytopeDecisionProblem(DecisionProblem):
    """min/max c·w over a bounded polytope {A_ub w <= b_ub, A_eq w = b_eq}, solved over its vertices."""

    def __init__(self, A_ub, b_ub, A_eq=None, b_eq=None, sense: str = "min"):
        if sense not in ("min", "max"):
            raise InputError(f"sense must be 'min' or 'max'; got {sense!r}")
        self.A_ub = np.atleast_2d(np.asarray(A_ub, float))
        self.b_ub = np.asarray(b_ub, float).ravel()
        self.A_eq = None if A_eq is None else np.atleast_2d(np.asarray(A_eq, float))
        self.b_eq = None if b_eq is None else np.asarray(b_eq, float).ravel()
        self.sense = sense
        self.n_decisions = self.A_ub.shape[1]
        self.vertices = enumerate_vertices(self.A_ub, self.b_ub, self.A_eq, self.b_eq)

    def _solve_min(self, C):
        vals = C @ self.vertices.T
        k = vals.argmin(axis=1)
        return self.vertices[k].copy(), vals[np.arange(len(k)), k]

    def worst_case_decisions(self, Chat, C, tol: float = 1e-9) -> np.ndarray:
        """Exact tie rule over vertices (an LP's worst optimal point can be taken at a vertex)."""
        Chat = self.check_costs(Chat, "Chat")
        C = self.check_costs(C)
        s = self.sign
        vh = s * (Chat @ self.vertices.T)
        best = vh.min(axis=1, keepdims=True)
        tie = vh <= best + tol * np.maximum(1.0, np.abs(best))
        vt = np.where(tie, s * (C @ self.vertices.T), -np.inf)
        return self.vertices[vt.argmax(axis=1)].copy()

    def add_to_block(self, block):
        import pyomo.environ as pyo
        d = self.n_decisions
        block.w = pyo.Var(range(d))
        block.ub = pyo.Constraint(range(len(self.b_ub)),
                                  rule=lambda b, m: sum(self.A_ub[m, j] * b.w[j] for j in range(d) if self.A_ub[m, j] != 0)
                                  <= self.b_ub[m])
        if self.A_eq is not None:
            block.eq = pyo.Constraint(range(len(self.b_eq)),
                                      rule=lambda b, m: sum(self.A_eq[m, j] * b.w[j] for j in range(d) if self.A_eq[m, j] != 0)
                                      == self.b_eq[m])
        return [block.w[j] for j in range(d)]


class NewsRecommendation(PolytopeDecisionProblem):
    """max p·w s.t. w >= 0, sum w = 1, w <= 1, A w <= b (SPOT paper §5.2; costs are click probabilities).

    ``sense="max"``: SPO loss is then the click probability lost versus the best feasible policy.
    """

    def __init__(self, A, b):
        A = np.atleast_2d(np.asarray(A, float))
        d = A.shape[1]
        b = np.asarray(b, float).ravel()
        if b.shape[0] != A.shape[0]:
            raise InputError(f"A has {A.shape[0]} rows but b has {b.shape[0]} entries")
        A_ub = np.vstack([A, -np.eye(d), np.eye(d)])
        b_ub = np.concatenate([b, np.zeros(d), np.ones(d)])
        super().__init__(A_ub, b_ub, np.ones((1, d)), np.ones(1), sense="max")
        self.A, self.b = A, b

    @classmethod
    def random(cls, d: int = 6, m: int = 5, seed: int = 10):
        """The paper's constraint sets: A ~ Exponential(1) i.i.d., b = 1 (ref-code seeds 10-18)."""
        rng = np.random.RandomState(seed)
        return cls(rng.exponential(1.0, size=(m, d)), np.ones(m))

    def add_to_block(self, block):
        import pyomo.environ as pyo
        d = self.n_decisions
        block.w = pyo.Var(range(d), bounds=(0.0, 1.0))
        block.simplex = pyo.Constraint(expr=sum(block.w[j] for j in range(d)) == 1)
        block.side = pyo.Constraint(range(self.A.shape[0]),
                                    rule=lambda b, m: sum(self.A[m, j] * b.w[j] for j in range(d)) <= self.b[m])
        return [block.w[j] for j in range(d)]
