"""Small data sets shared by test modules (tests never import one another: shared data lives here)."""
from __future__ import annotations

import numpy as np
import pandas as pd


def tiny_classification(seed: int, n: int = 10):
    """Binary labels, two features with 3 values each, a binary group column correlated with the label."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    x0 = rng.integers(0, 3, n)
    x1 = (rng.integers(0, 3, n) + g) % 3
    y = ((x0 + g + rng.integers(0, 2, n)) >= 2).astype(int)
    if len(np.unique(y)) < 2:
        y[0] = 1 - y[0]
    return pd.DataFrame({"x0": x0, "x1": x1, "g": g}).astype(float), y


def tiny_regression(seed: int, n: int = 10):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x0": rng.integers(0, 3, n), "x1": rng.integers(0, 3, n)}).astype(float)
    y = X.x0.values - 1.5 * X.x1.values + rng.integers(-2, 3, n).astype(float)
    return X, y
