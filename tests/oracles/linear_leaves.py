"""Depth <= 1 trees with linear leaves: squared-loss lasso leaves, LAD-lasso leaves (an LP), and the ORT-L MIO's
exact leaves (L1 or L0 penalty, absolute or squared loss)."""
import itertools

import numpy as np
from scipy.optimize import linprog

from opttrees import objectives as obj
from opttrees.heuristics.linear_leaves import fit_leaf, linear_tree_objective
from opttrees.objectives import baseline
from opttrees.tree import LEAF, Tree


# --- moved here from tests/heuristics/test_linear_leaves.py ---
def lasso_depth1(data, alpha, lam, nmin=1):
    """Best depth <= 1 lasso-leaf objective over every split position of every feature."""
    root = Tree([LEAF], [LEAF], [LEAF], [0.0], [[0.0]], task="regression", n_features=data.p)
    best = linear_tree_objective(root, data, alpha, lam)
    for j in range(data.p):
        u = np.unique(data.X[:, j])
        for b in (u[1:] + u[:-1]) / 2:
            left = int((data.X[:, j] < b).sum())
            if min(left, data.n - left) < nmin:
                continue
            t = Tree([1, LEAF, LEAF], [2, LEAF, LEAF], [j, LEAF, LEAF], [b, 0, 0], np.zeros((3, 1)),
                     task="regression", n_features=data.p)
            best = min(best, linear_tree_objective(t, data, alpha, lam))
    return best


# --- moved here from tests/estimators/test_regressor_linear.py ---
def lad_lasso_leaf(xs, y, lam, base):
    """min Σ|y − b0 − xs·β| / L̂ + λ Σ|β| over one leaf's rows, as an LP (b0, β+, β−, r+, r−)."""
    n, p = xs.shape
    c = np.concatenate([[0.0], np.full(2 * p, lam), np.full(2 * n, 1.0 / base)])
    A = np.hstack([np.ones((n, 1)), xs, -xs, np.eye(n), -np.eye(n)])
    res = linprog(c, A_eq=A, b_eq=y, bounds=[(None, None)] + [(0, None)] * (2 * p + 2 * n), method="highs")
    assert res.status == 0
    return res.fun


def lad_lasso_depth1(data, alpha, lam):
    """Best depth-<=1 ORT-L objective (absolute loss, L1): no split, or every split between distinct values."""
    base = baseline(data.y, "absolute")
    best = lad_lasso_leaf(data.Xs, data.y, lam, base)
    for j in range(data.p):
        values = np.unique(data.X[:, j])
        for t in (values[1:] + values[:-1]) / 2:
            left = data.X[:, j] < t
            best = min(best, alpha + lad_lasso_leaf(data.Xs[left], data.y[left], lam, base)
                       + lad_lasso_leaf(data.Xs[~left], data.y[~left], lam, base))
    return best


# --- moved here from tests/formulations/test_ort_linear_mio.py ---
def leaf_lp(data, rows, lam, base, support, penalty):
    """Exact absolute-loss leaf: min Σ w|y − β0 − xs·β| / L̂ + λ ||β|| over β supported on ``support`` (an LP)."""
    k, n = len(support), len(rows)
    if n == 0:
        return 0.0
    xs, y, w = data.Xs[rows][:, support], data.y[rows], data.sample_weight[rows]
    # variables: beta (k), beta0, e (n), u (k)
    c = np.concatenate([np.zeros(k + 1), w / base, np.full(k, lam if penalty == "l1" else 0.0)])
    A, b = [], []
    for i in range(n):   # e_i >= ±(y_i − β0 − x_i β)
        for s in (1, -1):
            row = np.zeros(2 * k + 1 + n)
            row[:k], row[k], row[k + 1 + i] = -s * xs[i], -s, -1.0
            A.append(row), b.append(-s * y[i])
    for j in range(k):   # u_j >= ±β_j
        for s in (1, -1):
            row = np.zeros(2 * k + 1 + n)
            row[j], row[k + 1 + n + j] = s, -1.0
            A.append(row), b.append(0.0)
    res = linprog(c, A_ub=np.array(A), b_ub=np.array(b), bounds=[(None, None)] * (k + 1) + [(0, None)] * (n + k),
                  method="highs")
    assert res.status == 0
    return res.fun + (lam * k if penalty == "l0" else 0.0)


def leaf_best(data, rows, lam, penalty, loss):
    if loss == "squared":
        return fit_leaf(data, rows, lam, obj.baseline(data.y, "squared", None, data.sample_weight)).objective
    base = obj.baseline(data.y, "absolute", None, data.sample_weight)
    supports = [list(range(data.p))] if penalty == "l1" else [
        list(s) for r in range(data.p + 1) for s in itertools.combinations(range(data.p), r)]
    return min(leaf_lp(data, rows, lam, base, s, penalty) for s in supports)


def ort_linear_brute_force(data, alpha, lam, penalty, loss):
    """Best depth <= 1 ORT-L objective: root only, or every split with each leaf solved exactly."""
    rows = np.arange(data.n)
    best = leaf_best(data, rows, lam, penalty, loss)
    for j in range(data.p):
        u = np.unique(data.X[:, j])
        for b in (u[1:] + u[:-1]) / 2:
            left = data.X[:, j] < b
            best = min(best, alpha + leaf_best(data, rows[left], lam, penalty, loss)
                       + leaf_best(data, rows[~left], lam, penalty, loss))
    return best
