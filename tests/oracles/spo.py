"""SPO trees: exact minimum regret over every tree (parallel splits on raw values, or binary columns), the
depth-one enumeration, and the tiny shortest-path instances the SPOT tests share."""
import numpy as np

from opttrees.experiments.spo_data import shortest_path_data


# --- moved here from tests/spo/test_spo_mio.py ---
def leaf_loss(pr, Cm, z, w, idx):
    if w[idx].sum() <= 0:
        return 0.0
    d, _ = pr._solve_min((w[idx] @ Cm[idx] / w[idx].sum())[None])
    return float(w[idx] @ (Cm[idx] @ d[0] - z[idx]))


def best_subtree(pr, X, Cm, z, w, idx, depth, min_leaf, alpha_raw):
    """Exact minimum of (weighted regret + alpha_raw * splits) over trees of depth <= depth on rows idx."""
    best = leaf_loss(pr, Cm, z, w, idx)
    if depth == 0:
        return best
    for j in range(X.shape[1]):
        for s in np.unique(X[idx, j])[1:]:
            L, R = idx[X[idx, j] < s], idx[X[idx, j] >= s]
            if w[L].sum() < min_leaf or w[R].sum() < min_leaf:
                continue
            v = alpha_raw + best_subtree(pr, X, Cm, z, w, L, depth - 1, min_leaf, alpha_raw)
            if v < best:
                v += best_subtree(pr, X, Cm, z, w, R, depth - 1, min_leaf, alpha_raw)
                best = min(best, v)
    return best


def brute_objective(pr, X, C, w, depth, min_leaf, alpha):
    Cm = pr.sign * C
    _, z = pr._solve_min(Cm)
    norm = w @ np.abs(z)
    return best_subtree(pr, X, Cm, z, w, np.arange(len(X)), depth, min_leaf, alpha * norm) / norm


def tiny(seed, n=14, p=2, grid=(2, 3)):
    D = shortest_path_data(n, deg=4, noise=0.3, p=p, grid=grid, n_test=0, seed=seed)
    X = np.round(D.X, 1)   # repeated values exercise the epsilon rows
    w = np.random.default_rng(seed).integers(1, 3, n).astype(float)
    return D.problem, X, D.C, w


# --- moved here from tests/dp/test_dp_spo.py ---
def brute_spo(Xb, C, prob, depth, alpha, norm, min_leaf=1, w=None):
    """Minimum over every tree on binary columns (0 left) of total (weighted) regret / norm + alpha * splits,
    with at least ``min_leaf`` rows in every leaf (inf when even the root has fewer)."""
    Cm = prob.sign * C
    _, z = prob._solve_min(Cm)
    w = np.ones(len(C)) if w is None else np.asarray(w, dtype=np.float64)

    def leaf(rows):
        if len(rows) < min_leaf:
            return np.inf
        if not len(rows):
            return 0.0
        W, _ = prob._solve_min((w[rows] @ Cm[rows])[None, :])
        return float(w[rows] @ (Cm[rows] @ W[0] - z[rows]))

    def best(rows, d):
        v = leaf(rows)
        if d == 0:
            return v
        for f in range(Xb.shape[1]):
            go = Xb[rows, f] == 1
            if go.sum() < min_leaf or (~go).sum() < min_leaf:
                continue
            v = min(v, alpha * norm + best(rows[~go], d - 1) + best(rows[go], d - 1))
        return v
    return best(np.arange(len(C)), depth) / norm


# --- moved here from tests/spo/test_spo_greedy.py ---
def brute_depth1(pr, X, C, w, min_leaf):
    Cm = pr.sign * C
    _, z = pr._solve_min(Cm)
    best = np.inf
    for j in range(X.shape[1]):
        for s in np.unique(X[:, j])[1:]:
            L = X[:, j] < s
            if w[L].sum() < min_leaf or w[~L].sum() < min_leaf:
                continue
            tot = 0.0
            for m in (L, ~L):
                d, _ = pr._solve_min((w[m] @ Cm[m] / w[m].sum())[None])
                tot += w[m] @ (Cm[m] @ d[0] - z[m])
            best = min(best, tot)
    return best
