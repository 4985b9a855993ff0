"""Data generators of the SPOT paper (§3.1 illustrative example, §5.1 noisy shortest path)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..oracles import GridShortestPath


def illustrative_example(n: int = 10000, seed: int = 0):
    """Two roads: c1 = 5x + 1.9, c2 = (5x + 0.4)^2, x ~ U(0, 1); equal cost at x ≈ 0.28.

    Encoded as in the reference code: a 2 x 2 grid whose edges cost [c1, c2, 0, 0], so one path costs c1 and
    the other c2. Returns (X (n, 1), C (n, 4), problem).
    """
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, n)
    c1 = 5 * x + 1.9
    c2 = (5 * x + 0.4) ** 2
    C = np.column_stack([c1, c2, np.zeros(n), np.zeros(n)])
    return x[:, None], C, GridShortestPath(2, 2)




def illustrative_boundary() -> float:
    """x where 5x + 1.9 = (5x + 0.4)^2: with u = 5x + 0.4, u^2 - u - 1.5 = 0."""
    u = (1 + np.sqrt(1 + 6.0)) / 2
    return float((u - 0.4) / 5)


@dataclass
class ShortestPathData:
    X: np.ndarray
    C: np.ndarray
    X_test: np.ndarray
    C_test: np.ndarray
    B: np.ndarray
    problem: GridShortestPath


def shortest_path_costs(X, B, deg: int, noise: float, rng) -> np.ndarray:
    p = X.shape[1]
    base = (X @ B.T / np.sqrt(p) + 1.0) ** deg
    eps = rng.uniform(1.0 - noise, 1.0 + noise, size=base.shape)
    return base * eps


def shortest_path_data(n: int = 200, deg: int = 2, noise: float = 0.0, p: int = 5, n_test: int = 1000,
                       grid: tuple[int, int] = (4, 4), seed: int = 0) -> ShortestPathData:
    """Noisy shortest path (paper §5.1): x ~ U(0,1)^p, B_kj ~ Bernoulli(0.5),
    c_k = ((Bx)_k / sqrt(p) + 1)^deg * U[1 - noise, 1 + noise]; the same B for train and test."""
    if n < 1 or n_test < 0 or p < 1 or deg < 1 or not 0 <= noise < 1:
        raise InputError(f"bad shortest-path settings n={n}, n_test={n_test}, p={p}, deg={deg}, noise={noise}")
    problem = GridShortestPath(*grid)
    rng = np.random.default_rng(seed)
    B = rng.binomial(1, 0.5, size=(problem.n_decisions, p)).astype(float)
    X = rng.uniform(0.0, 1.0, size=(n, p))
    Xt = rng.uniform(0.0, 1.0, size=(n_test, p))
    C = shortest_path_costs(X, B, deg, noise, rng)
    Ct = shortest_path_costs(Xt, B, deg, noise, rng)
    return ShortestPathData(X, C, Xt, Ct, B, problem)


def spo_dataset(name: str, **kw):
    """(X, C, decision-problem spec dict) for a named paper dataset: "shortest_path" or "illustrative"."""
    if name == "shortest_path":
        D = shortest_path_data(n_test=0, **kw)
        return D.X, D.C, {"type": "shortest_path", "rows": D.problem.rows, "cols": D.problem.cols}
    if name == "illustrative":
        X, C, pr = illustrative_example(**kw)
        return X, C, {"type": "shortest_path", "rows": 2, "cols": 2}
    raise InputError(f"unknown SPO dataset {name!r}; known: 'shortest_path', 'illustrative'")
