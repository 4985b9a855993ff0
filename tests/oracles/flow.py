"""FlowOCT / BendersOCT reference: the best (1 - lam) * weighted correct - lam * splits over every tree on binary
columns, and the tiny binary instances the flow tests share."""
import numpy as np


# --- moved here from tests/formulations/test_flow_formulations.py ---
def brute_force(Z, y, K, depth, lam, s):
    """Best (1-lam) * weighted correct - lam * splits over every tree of depth <= depth on binary columns."""
    def best(rows, d):
        v = (1 - lam) * np.bincount(y[rows], weights=s[rows], minlength=K).max() if len(rows) else 0.0
        if d == 0:
            return v
        for c in range(Z.shape[1]):
            go = Z[rows, c] == 1
            v = max(v, best(rows[~go], d - 1) + best(rows[go], d - 1) - lam)
        return v
    return best(np.arange(len(y)), depth)


def instance(seed, n=24, C=4, K=2):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 2, (n, C))
    y = (Z[:, 0] ^ (rng.random(n) < 0.25)).astype(int) if K == 2 else rng.integers(0, K, n)
    return Z, y
