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


def _as_matrix(name, A, d=None):
    try:
        A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a numeric matrix") from None
    if A.ndim != 2 or (d is not None and A.shape[1] != d):
        raise InputError(f"{name} must be 2-D with {d if d is not None else 'd'} columns; got shape {A.shape}")
    if not np.isfinite(A).all():
        raise InputError(f"{name} contains NaN/infinite entries")
    return A


def _as_vector(name, b, m):
    try:
        b = np.asarray(b, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numeric") from None
    if b.shape[0] != m:
        raise InputError(f"{name} has {b.shape[0]} entries but its matrix has {m} rows")
    if not np.isfinite(b).all():
        raise InputError(f"{name} contains NaN/infinite entries")
    return b


def check_polytope(A_ub, b_ub, A_eq=None, b_eq=None):
    """Validated arrays of {A_ub w <= b_ub, A_eq w = b_eq}; raises InputError unless it is non-empty and bounded.

    Two LPs per coordinate (min and max w_j, HiGHS via scipy.optimize.linprog) decide boundedness; a
    bounded non-empty polyhedron has vertices, so vertex enumeration is then exact. An unbounded region
    (e.g. the orthant {w >= 0}) would otherwise silently give a wrong optimum, and a vertex-free slab was
    misreported as empty.
    """
    from scipy.optimize import linprog
    A_ub = _as_matrix("A_ub", A_ub)
    d = A_ub.shape[1]
    b_ub = _as_vector("b_ub", b_ub, A_ub.shape[0])
    if (A_eq is None) != (b_eq is None):
        raise InputError("give both A_eq and b_eq, or neither")
    if A_eq is not None:
        A_eq = _as_matrix("A_eq", A_eq, d)
        b_eq = _as_vector("b_eq", b_eq, A_eq.shape[0])
    kw = dict(A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=[(None, None)] * d, method="highs")
    # fast path: rows a*e_j <= b with a > 0 and a < 0 for every j bound every coordinate -> one feasibility LP
    single = (A_ub != 0).sum(axis=1) == 1
    col = np.argmax(A_ub != 0, axis=1)
    sgn_row = np.sign(A_ub[np.arange(A_ub.shape[0]), col])
    boxed = all(np.any(single & (col == j) & (sgn_row > 0)) and np.any(single & (col == j) & (sgn_row < 0))
                for j in range(d))
    if boxed:
        res = linprog(np.zeros(d), **kw)
        if res.status == 2:
            raise InputError("the polytope is empty (the constraints are infeasible); check A_ub/b_ub/A_eq/b_eq")
        return A_ub, b_ub, A_eq, b_eq
    for j in range(d):
        for sgn in (1.0, -1.0):
            c = np.zeros(d)
            c[j] = sgn
            res = linprog(c, **kw)
            if res.status == 2:
                raise InputError("the polytope is empty (the constraints are infeasible); check A_ub/b_ub/A_eq/b_eq")
            if res.status == 3:
                raise InputError(f"the feasible region is unbounded (w[{j}] can go to {'-' if sgn > 0 else '+'}inf); "
                                 "a PolytopeDecisionProblem needs a bounded polytope — add bounds on every "
                                 "decision (or use PyomoDecisionProblem if the optimum is finite for your costs)")
            if res.status != 0:  # pragma: no cover - numerical trouble
                raise InputError(f"could not check the polytope (LP status {res.status}: {res.message})")
    return A_ub, b_ub, A_eq, b_eq


def enumerate_vertices(A_ub, b_ub, A_eq=None, b_eq=None, tol: float = 1e-9, max_combos: int = 2_000_000,
                       _checked: bool = False):
    """Vertices of {w : A_ub w <= b_ub, A_eq w = b_eq} by checking every active set.

    Raises :class:`InputError` if the region is empty or unbounded (see :func:`check_polytope`).
    """
    if not _checked:
        A_ub, b_ub, A_eq, b_eq = check_polytope(A_ub, b_ub, A_eq, b_eq)
    d = A_ub.shape[1]
    A_eq = np.zeros((0, d)) if A_eq is None else A_eq
    b_eq = np.zeros(0) if b_eq is None else b_eq
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
    if not verts:  # bounded and non-empty has a vertex; this means degenerate (dependent) equality rows
        raise InputError("no vertex found: the equality constraints A_eq are linearly dependent or the polytope "
                         "is numerically degenerate; remove redundant rows")
    V = np.unique(np.round(np.array(verts), 12), axis=0)
    return V


class PolytopeDecisionProblem(DecisionProblem):
    """min/max c·w over a bounded polytope {A_ub w <= b_ub, A_eq w = b_eq}, solved over its vertices."""

    def __init__(self, A_ub, b_ub, A_eq=None, b_eq=None, sense: str = "min"):
        if sense not in ("min", "max"):
            raise InputError(f"sense must be 'min' or 'max'; got {sense!r}")
        self.A_ub, self.b_ub, self.A_eq, self.b_eq = check_polytope(A_ub, b_ub, A_eq, b_eq)
        self.sense = sense
        self.n_decisions = self.A_ub.shape[1]
        self.vertices = enumerate_vertices(self.A_ub, self.b_ub, self.A_eq, self.b_eq, _checked=True)

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
