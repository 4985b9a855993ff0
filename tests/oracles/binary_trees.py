"""The STreeD reference: minimum raw cost over every tree on binary columns (misclassification, squared, cost
matrix; node limits, minimum leaf, feature costs)."""
import functools

import numpy as np


# --- moved here from tests/dp/test_dp_engine.py ---
def binary_brute_force(Z, y, depth, nodes=None, alpha_raw=0.0, minleaf=1, w=None, kind="mis", M=None, fcost=None):
    """Minimum raw cost over every tree on binary columns (0 left), depth <= depth, <= nodes splits.

    ``fcost`` = (cost, block): a column's cost is paid per unit weight unless its block was tested above.
    """
    n, p = Z.shape
    w = np.ones(n) if w is None else w
    K = int(y.max()) + 1 if kind != "sq" else 1

    def leaf(rows):
        if len(rows) < minleaf:
            return np.inf
        if kind == "sq":
            ww, yy = w[rows], y[rows]
            mu = np.average(yy, weights=ww) if ww.sum() > 0 else 0.0
            return float(np.sum(ww * (yy - mu) ** 2))
        c = np.bincount(y[rows], weights=w[rows], minlength=K)
        if kind == "cost":
            return float((c @ M).min())
        return float(c.sum() - c.max())

    @functools.lru_cache(maxsize=None)
    def best(rows, d, k, blocks):
        rows_a = np.array(rows, dtype=np.int64)
        v = leaf(rows_a)
        if d == 0 or k == 0:
            return v
        for f in range(p):
            go = Z[rows_a, f] == 1
            left, right = rows_a[~go], rows_a[go]
            if len(left) < max(1, minleaf) or len(right) < max(1, minleaf):
                continue
            g = alpha_raw
            nb = blocks
            if fcost is not None:
                g += w[rows_a].sum() * (0.0 if fcost[1][f] in blocks else fcost[0][f])
                nb = tuple(sorted(set(blocks) | {int(fcost[1][f])}))
            for kl in range(k):
                c = g + best(tuple(left), d - 1, kl, nb) + best(tuple(right), d - 1, k - 1 - kl, nb)
                v = min(v, c)
        return v

    return best(tuple(range(n)), depth, (2 ** depth - 1) if nodes is None else nodes, ())
