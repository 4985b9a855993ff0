"""RobustOCT references: every shift of a sample within its budget, the worst case over every joint shift, and
every depth-one tree on integer features."""
import itertools

import numpy as np


# --- moved here from tests/robust/test_robust_trees.py ---
def shift_options(x, gamma, eps, S, box=3):
    """Every integer shift of one sample within the budget (respecting direction, bounds, one-hot groups)."""
    F = len(x)
    free = [f for f in range(F) if not S.in_group[f]]
    opts = []
    for moves in itertools.product(range(-box, box + 1), repeat=len(free)):
        xi = np.zeros(F)
        xi[free] = moves
        opts.append(xi)
    for g in S.groups:   # each categorical block: stay, or move the 1 to another column
        new = []
        a = int(np.argmax(x[g]))
        for xi in opts:
            new.append(xi)
            for t in range(len(g)):
                if t != a:
                    z = xi.copy(); z[g[a]] = -1; z[g[t]] = 1
                    new.append(z)
        opts = new
    out = []
    for xi in opts:
        xn = x + xi
        if np.any((S.direction > 0) & (xi < 0)) or np.any((S.direction < 0) & (xi > 0)):
            continue
        if np.any(xn < S.lower) or np.any(xn > S.upper):
            continue
        c = float(np.sum(gamma * np.abs(xi)))
        if c <= eps + 1e-9:
            out.append((xn, c))
    return out


def exhaustive_worst_case(predict, X, y, S):
    """min over every joint shift within the budget of the number of correct samples (full enumeration)."""
    per = [shift_options(X[i], S.gamma[i], S.budget, S) for i in range(len(y))]
    best = len(y)
    for combo in itertools.product(*per):
        if sum(c for _, c in combo) <= S.budget + 1e-9:
            Xs = np.array([xn for xn, _ in combo])
            best = min(best, int((predict(Xs) == y).sum()))
    return best


def depth1_trees(X, K):
    trees = [lambda Z, k=k: np.full(len(Z), k) for k in range(K)]
    for f in range(X.shape[1]):
        for th in range(int(X[:, f].min()), int(X[:, f].max())):
            for kl in range(K):
                for kr in range(K):
                    trees.append(lambda Z, f=f, th=th, kl=kl, kr=kr: np.where(Z[:, f] >= th + 1, kr, kl))
    return trees
