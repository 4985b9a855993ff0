"""Which exact engine ``binarization="auto"`` runs: the one predicted to be faster on this table's shape.

Why a cost model: both engines search every midpoint and return the same optimum, but their costs grow with
different things. The binary engine (STreeD) grows with the number of binary columns (all midpoints) and their
pairs; the continuous search with rows x features^2 and the pairs of classes. A fixed rule (at most 100
midpoints: binary) sent wide binary tables to the continuous search, 20-700x slower on the calibration grid.

The model: ``log10(seconds) = c . (1, log n, log p, log m, log K, [min leaf > 1], (log p)^2, log K log p)`` (logs
base 10)
per engine and depth (2, or 3 and deeper; depth 1 uses the depth-2 model, deeper trees the depth-3 model plus
``DEEPER_PER_LEVEL`` per extra level), fitted by least squares on ``benchmarks/engine_calibration.csv``
(``benchmarks/calibrate_engines.py --fit`` prints the coefficients; steady-state times, each capped at 5 s).
The binary engine is also ruled out when its binary matrix or its depth-two counts would not fit memory, or
when its depth-two counting work (rows x midpoints^2) is so large that it would overrun a time limit.
"""
from __future__ import annotations

import math

import numpy as np

#: (engine, depth model) -> coefficients of :func:`features`
COEF: dict[tuple[str, int], tuple[float, ...]] = {
    ("binary", 2): (-2.51, 0.3198, -1.4236, 0.7395, -0.6458, 0.0662, 0.3197, 0.376),
    ("binary", 3): (-3.6997, 0.3964, -1.1771, 1.2527, -0.1033, -0.0471, 0.44, 0.1417),
    ("continuous", 2): (-2.6384, 0.4947, -0.9587, 0.1071, -0.2709, -0.0924, 0.5608, 0.3571),
    ("continuous", 3): (-4.8749, 0.3354, 3.282, 0.2477, 1.0631, -0.0906, -0.7491, -0.4517),
}
#: log10 seconds added per level beyond 3: (binary: about m more subproblems, continuous: about 20 p)
DEEPER_PER_LEVEL = {"binary": 1.0, "continuous": 1.0}
#: the binary matrix (one byte per row x midpoint) above this is refused by the chooser (2,000 x 233,000: 72 s to
#: build before the engine's own memory check refused it)
MAX_BINARY_CELLS = 5e7
#: rows x midpoints^2 above this rule the binary engine out at depth >= 2: its depth-two frequency counts grow so
#: and poll no time limit (2,000 x 4,680 midpoints: 40 s against a 5 s limit; the continuous search 5-12 s)
MAX_PAIR_WORK = 5e9


def features(n: int, p: int, m: int, n_classes: int, min_leaf: int) -> np.ndarray:
    """The model's inputs for a shape (the squared and product terms let the continuous search's p^2 K^2 depth-two
    work and the binary engine's pairs of columns bend the fit where they dominate)."""
    ln, lp, lm, lk = (math.log10(max(n, 2)), math.log10(max(p, 1)), math.log10(max(m, 1)),
                      math.log10(max(n_classes, 2)))
    return np.array([1.0, ln, lp, lm, lk, 1.0 if min_leaf > 1 else 0.0, lp * lp, lk * lp])


def predict_seconds(engine: str, n: int, p: int, m: int, n_classes: int, depth: int, min_leaf: int) -> float:
    """Predicted steady-state seconds of ``engine`` ("binary" or "continuous") on this shape."""
    model = 2 if depth <= 2 else 3
    log_t = float(features(n, p, m, n_classes, min_leaf) @ np.asarray(COEF[engine, model]))
    log_t += DEEPER_PER_LEVEL[engine] * max(depth - 3, 0) * (math.log10(max(m if engine == "binary" else 20 * p, 2)))
    return 10.0 ** log_t


def choose(n: int, p: int, m: int, n_classes: int, depth: int, min_leaf: int, binary_fits: bool = True) -> dict:
    """The engine for "auto" and why: {"engine", "predicted": {engine: seconds}, "why"}."""
    pred = {e: predict_seconds(e, n, p, m, n_classes, depth, min_leaf) for e in ("binary", "continuous")}
    if not binary_fits or n * m > MAX_BINARY_CELLS:
        return {"engine": "continuous", "predicted": pred,
                "why": f"the binary engine's matrix or counts would not fit memory ({n} rows x {m} midpoints)"}
    if depth >= 2 and float(n) * m * m > MAX_PAIR_WORK:
        return {"engine": "continuous", "predicted": pred,
                "why": f"the binary engine's depth-two counts ({n} rows x {m}^2 midpoint pairs) take tens of seconds "
                       "and do not poll the time limit"}
    engine = "binary" if pred["binary"] <= pred["continuous"] else "continuous"
    return {"engine": engine, "predicted": pred,
            "why": f"predicted {pred['binary']:.3g} s (binary engine) vs {pred['continuous']:.3g} s (continuous "
                   f"search) on {n} rows x {p} features, {m} midpoints, {n_classes} classes, depth {depth}"}
