"""Fractional min-cuts (opttrees/formulations/mincut.py): max-flow against an LP, min-cut = max-flow, validity."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import linprog

from opttrees.formulations.flow import FlowStructure, Incumbent
from opttrees.formulations.mincut import max_flows, min_cut_coefficients, violated_min_cuts


def random_point(rng, struct):
    """A fractional (B, W) satisfying the tree block's rows (branch or predict, one label)."""
    size = 2 ** (struct.depth + 1)
    B = np.zeros((size, struct.n_cols))
    W = np.zeros((size, struct.n_classes))
    p = np.zeros(size)
    for n in struct.nodes:
        above = sum(p[a] for a in struct.ancestors(n))
        free = 1.0 - above
        if n in struct.internal:
            shares = rng.dirichlet(np.ones(struct.n_cols + 1)) * free
            B[n], p[n] = shares[:-1], shares[-1]
        else:
            p[n] = free
        W[n] = rng.dirichlet(np.ones(struct.n_classes)) * p[n]
    return B, W


def lp_max_flow(struct, B, W, z, label):
    """Max-flow of one sample's network by scipy's LP: arcs parent->child and node->sink."""
    arcs, cap = [], []
    first_leaf = 2 ** struct.depth
    for n in struct.nodes:
        arcs.append((n, "t")); cap.append(W[n, label])
        if n < first_leaf:
            arcs.append((n, 2 * n)); cap.append(B[n][z == 0].sum())
            arcs.append((n, 2 * n + 1)); cap.append(B[n][z == 1].sum())
    # flow conservation at every non-root node; maximise the outflow of the root
    A_eq, b_eq = [], []
    for n in struct.nodes:
        if n == 1:
            continue
        row = [(1.0 if a[1] == n else 0.0) - (1.0 if a[0] == n else 0.0) for a in arcs]
        A_eq.append(row); b_eq.append(0.0)
    c = [-1.0 if a[0] == 1 else 0.0 for a in arcs]
    res = linprog(c, A_eq=A_eq, b_eq=b_eq, bounds=list(zip([0.0] * len(cap), cap)), method="highs")
    return -res.fun


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10 ** 6), depth=st.integers(1, 3), n_cols=st.integers(1, 4), n_classes=st.integers(2, 3))
def test_max_flow_matches_lp_and_min_cut_matches_max_flow(seed, depth, n_cols, n_classes):
    rng = np.random.default_rng(seed)
    struct = FlowStructure(depth, n_cols, n_classes)
    B, W = random_point(rng, struct)
    Z = rng.integers(0, 2, (6, n_cols)).astype(np.int8)
    y = rng.integers(0, n_classes, 6)
    F, capL, capR = max_flows(struct, B, W, Z, y)
    for i in range(len(y)):
        assert F[i, 1] == pytest.approx(lp_max_flow(struct, B, W, Z[i], y[i]), abs=1e-7)
    cb, cw = min_cut_coefficients(struct, F, capL, capR, Z, y)
    cut_value = (cb * B[None]).sum(axis=(1, 2)) + (cw * W[None]).sum(axis=(1, 2))
    np.testing.assert_allclose(cut_value, F[:, 1], atol=1e-9)


def random_tree(rng, struct) -> tuple[np.ndarray, np.ndarray, Incumbent]:
    """An integer tree as (B, W) and as an Incumbent (random early leaves)."""
    size = 2 ** (struct.depth + 1)
    B = np.zeros((size, struct.n_cols))
    W = np.zeros((size, struct.n_classes))
    branch = -np.ones(size, dtype=np.int64)
    predict = -np.ones(size, dtype=np.int64)
    stack = [1]
    while stack:
        n = stack.pop()
        if n in struct.leaves or rng.random() < 0.25:
            predict[n] = rng.integers(struct.n_classes)
            W[n, predict[n]] = 1.0
            continue
        branch[n] = rng.integers(struct.n_cols)
        B[n, branch[n]] = 1.0
        stack += [2 * n, 2 * n + 1]
    return B, W, Incumbent(branch, predict)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10 ** 6), depth=st.integers(1, 3), n_cols=st.integers(1, 4))
def test_cuts_from_fractional_points_are_valid_for_every_integer_tree(seed, depth, n_cols):
    """A cut found at an LP point never cuts off an integer tree: at every tree it is >= 1[row correct]."""
    rng = np.random.default_rng(seed)
    struct = FlowStructure(depth, n_cols, 2)
    Z = rng.integers(0, 2, (8, n_cols)).astype(np.int8)
    y = rng.integers(0, 2, 8)
    B, W = random_point(rng, struct)
    rows, cb, cw = violated_min_cuts(struct, B, W, Z, y, np.ones(len(y)))
    if not len(rows):
        return
    for _ in range(10):
        Bt, Wt, inc = random_tree(rng, struct)
        node, _ = struct.route(inc, Z)
        correct = (inc.predict[node] == y).astype(float)
        value = (cb * Bt[None]).sum(axis=(1, 2)) + (cw * Wt[None]).sum(axis=(1, 2))
        assert np.all(value >= correct[rows] - 1e-9)


def test_at_an_integer_tree_max_flow_is_correctness():
    rng = np.random.default_rng(3)
    struct = FlowStructure(2, 3, 2)
    Z = rng.integers(0, 2, (30, 3)).astype(np.int8)
    y = rng.integers(0, 2, 30)
    for _ in range(20):
        B, W, inc = random_tree(rng, struct)
        node, _ = struct.route(inc, Z)
        F, _, _ = max_flows(struct, B, W, Z, y)
        np.testing.assert_allclose(F[:, 1], (inc.predict[node] == y).astype(float))
