import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from opttrees.errors import InputError
from opttrees.oracles import (GridShortestPath, NewsRecommendation, PolytopeDecisionProblem,
                              PyomoDecisionProblem, grid_lp_problem)
from opttrees.spo import spo_loss

_LP = {}


def lp_for(r, c):
    if (r, c) not in _LP:
        _LP[(r, c)] = grid_lp_problem(r, c)
    return _LP[(r, c)]


def is_path(g, W):
    """Flow conservation: one unit out of the source, into the sink, balanced elsewhere."""
    V = g.rows * g.cols
    bal = np.zeros((W.shape[0], V))
    for e, (u, v) in enumerate(g.edges()):
        bal[:, u] += W[:, e]
        bal[:, v] -= W[:, e]
    want = np.zeros(V)
    want[0], want[-1] = 1, -1
    return np.allclose(bal, want) and set(np.unique(W)) <= {0.0, 1.0}


@settings(max_examples=40, deadline=None)
@given(r=st.integers(1, 4), c=st.integers(1, 4), seed=st.integers(0, 10**6), ties=st.booleans())
def test_grid_dp_equals_generic_lp(r, c, seed, ties):
    if r * c < 2:
        return
    g = GridShortestPath(r, c)
    rng = np.random.default_rng(seed)
    C = rng.integers(0, 3, (20, g.n_decisions)).astype(float) if ties else rng.random((20, g.n_decisions)) * 10
    W, z = g.solve(C)
    W2, z2 = lp_for(r, c).solve(C)
    assert np.allclose(z, z2, atol=1e-7)
    assert is_path(g, W)
    assert np.allclose(np.einsum("ij,ij->i", C, W), z)
    if not ties:  # unique optimum almost surely: identical decisions
        assert np.array_equal(W, np.round(W2))


@settings(max_examples=25, deadline=None)
@given(r=st.integers(2, 3), c=st.integers(2, 3), seed=st.integers(0, 10**6))
def test_worst_case_tie_rule_grid_equals_lp(r, c, seed):
    g = GridShortestPath(r, c)
    rng = np.random.default_rng(seed)
    Chat = rng.integers(0, 2, (10, g.n_decisions)).astype(float)   # many ties
    C = rng.random((10, g.n_decisions))
    l1 = spo_loss(g, Chat, C)
    l2 = spo_loss(lp_for(r, c), Chat, C)
    assert np.allclose(l1, l2, atol=1e-7)
    # worst case >= any optimal decision's regret, and the all-zero prediction gives the longest path
    assert (l1 >= spo_loss(g, Chat, C, worst_case=False) - 1e-9).all()
    zero = spo_loss(g, np.zeros_like(C), C)
    lo, hi = g.cost_bounds(C)
    assert np.allclose(zero, hi - lo)


def test_grid_edge_order_matches_paper():
    g = GridShortestPath(4, 4)
    e = [(u + 1, v + 1) for u, v in g.edges()]
    assert e[:3] == [(1, 2), (2, 3), (3, 4)] and e[11] == (15, 16) and e[12] == (1, 5) and e[23] == (12, 16)
    assert g.n_decisions == 24


def test_news_vertices_match_generic_lp_and_maximise():
    nw = NewsRecommendation.random(seed=10)
    lp = PyomoDecisionProblem(nw.add_to_block, sense="max")
    rng = np.random.default_rng(0)
    P = rng.random((30, 6))
    W, z = nw.solve(P)
    W2, z2 = lp.solve(P)
    assert np.allclose(z, z2, atol=1e-7)
    assert np.allclose(W.sum(1), 1) and (W >= -1e-9).all() and (W @ nw.A.T <= 1 + 1e-9).all()
    # maximisation: z is the largest achievable value and regret is non-negative
    mix = rng.dirichlet(np.ones(len(nw.vertices)), 30) @ nw.vertices    # random feasible points
    assert (z >= np.einsum("ij,ij->i", P, mix) - 1e-12).all()
    assert np.allclose(z, (P @ nw.vertices.T).max(axis=1))
    Phat = rng.random((30, 6))
    reg = spo_loss(nw, Phat, P)
    assert (reg >= -1e-12).all() and (reg > 0).any()
    assert np.allclose(reg, spo_loss(lp, Phat, P), atol=1e-7)


def test_generic_milp_oracle_brute_force():
    import itertools
    from oracles.bruteforce import KNAPSACK_CAPACITY, KNAPSACK_WEIGHTS as wts, binary_knapsack_problem
    prob = binary_knapsack_problem()
    rng = np.random.default_rng(1)
    V = rng.random((15, 4))
    W, z = prob.solve(V)
    feas = np.array([s for s in itertools.product([0, 1], repeat=4) if wts @ s <= KNAPSACK_CAPACITY], float)
    assert np.allclose(z, (V @ feas.T).max(1))
    poly = PolytopeDecisionProblem(np.vstack([np.eye(2), -np.eye(2)]), [1, 1, 0, 0])
    assert np.allclose(poly.solve([[-1.0, 2.0]])[0], [[1.0, 0.0]])


def test_bad_costs_raise():
    g = GridShortestPath(4, 4)
    with pytest.raises(InputError, match="shape"):
        g.solve(np.zeros((3, 5)))
    with pytest.raises(InputError, match="NaN"):
        g.solve(np.full((1, 24), np.nan))
    with pytest.raises(InputError):
        GridShortestPath(1, 1)
    with pytest.raises(InputError, match="sense"):
        PyomoDecisionProblem(g.add_to_block, sense="maximise")


# ------------------------------------------------------------------------------------------ input hardening
def test_polytope_unbounded_empty_and_vertex_free_regions_raise():
    with pytest.raises(InputError, match="unbounded"):
        PolytopeDecisionProblem(-np.eye(2), [0, 0])                      # the orthant: min -w1-w2 is -inf
    with pytest.raises(InputError, match="unbounded"):
        PolytopeDecisionProblem(np.array([[1.0, 0.0], [-1.0, 0.0]]), [1, 1])   # a slab: non-empty, no vertex
    with pytest.raises(InputError, match="empty"):
        PolytopeDecisionProblem(np.vstack([np.eye(2), -np.eye(2)]), [1, 1, -2, 0])
    with pytest.raises(InputError, match="b_ub"):
        PolytopeDecisionProblem(np.eye(2), [1, 1, 1])
    with pytest.raises(InputError, match="A_eq"):
        PolytopeDecisionProblem(np.vstack([np.eye(2), -np.eye(2)]), [1, 1, 0, 0], A_eq=np.ones((1, 3)), b_eq=[1])
    # bounded without explicit box rows: detected by the LPs, solved correctly
    tri = PolytopeDecisionProblem(np.array([[-1.0, 0.0], [0.0, -1.0], [1.0, 1.0]]), [0, 0, 1])
    assert np.allclose(tri.solve([[-1.0, -2.0]])[1], [-2.0])


def test_non_numeric_costs_raise_input_error():
    g = GridShortestPath(2, 2)
    with pytest.raises(InputError, match="non-numeric"):
        g.solve([["a", "b", "c", "d"]])
    with pytest.raises(InputError, match="non-numeric"):
        g.solve([[1.0, 2.0], [1.0]])
    with pytest.raises(InputError, match="None"):
        g.solve(None)


def test_pyomo_problem_rejects_objectives_none_and_bad_tol():
    import pyomo.environ as pyo

    def with_objective(b):
        b.x = pyo.Var(range(2), bounds=(0, 1))
        b.c = pyo.Constraint(expr=b.x[0] + b.x[1] <= 1)
        b.obj = pyo.Objective(expr=b.x[0])
        return [b.x[0], b.x[1]]
    with pytest.raises(InputError, match="Objective"):
        PyomoDecisionProblem(with_objective)

    def returns_none(b):
        b.x = pyo.Var(range(2), bounds=(0, 1))
    with pytest.raises(InputError, match="returned None"):
        PyomoDecisionProblem(returns_none)

    def returns_number(b):
        b.x = pyo.Var(range(2), bounds=(0, 1))
        return 3
    with pytest.raises(InputError, match="list of decision variables"):
        PyomoDecisionProblem(returns_number)

    def ok(b):
        b.x = pyo.Var(range(2), bounds=(0, 1))
        return b.x                                      # an indexed Var is accepted (its values in order)
    with pytest.raises(InputError, match="tol"):
        PyomoDecisionProblem(ok, tol=-1)
    with pytest.raises(InputError, match="build must be a function"):
        PyomoDecisionProblem("not callable")
    p = PyomoDecisionProblem(ok, tol=1e-6)
    assert p.n_decisions == 2 and p.tol == 1e-6
    # tol is the default tie tolerance of the SPO tie rule: ĉ = (0, 1e-8) ties w = (1, 0) with w = (0, 0)
    W = p.worst_case_decisions([[1e-8, 0.0]], [[1.0, 0.0]])
    assert np.allclose(W, [[1.0, 0.0]])
    W = p.worst_case_decisions([[1e-8, 0.0]], [[1.0, 0.0]], tol=1e-12)
    assert W[0, 0] < 1e-3                               # a tighter tie band keeps w0 near 0


def test_duck_typed_problem_protocol_is_checked():
    from opttrees.estimators.spo import SPOTree
    from opttrees.oracles import make_decision_problem

    class Duck:
        n_decisions = 2
        sense = "min"

        def solve(self, C):
            return np.zeros((len(C), 2)), np.zeros(len(C))
    with pytest.raises(InputError, match="protocol.*check_costs"):
        make_decision_problem(Duck())
    with pytest.raises(InputError, match="protocol"):
        SPOTree(decision_problem=Duck()).fit(np.zeros((4, 1)), np.zeros((4, 2)))
