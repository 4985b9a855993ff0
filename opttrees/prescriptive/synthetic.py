"""The thesis's synthetic prescription experiments 1-3 (Dunn's thesis §6.2; after Powers et
al. 2017), and their two metrics.

Covariates x ∈ R^20: odd coordinates x1, x3, ... (1-based, as the thesis writes them) N(0, 1), even ones x2,
x4, ... Bernoulli(0.5). Two treatments 0 and 1 with potential outcomes y0 = baseline - effect / 2 and
y1 = baseline + effect / 2; **smaller is better**, so treatment 1 is right iff effect < 0. Observational
assignment P(Z = 1 | x) = e^{y0} / (1 + e^{y0}); training outcomes get N(0, σ²) noise, test outcomes none.

"Both [baseline and effect] are functions of the covariates, centered and scaled to have zero mean and unit
variance": we standardise each *function's values* over the covariate distribution, with mean and standard
deviation estimated once on 400,000 draws from a fixed seed (:func:`standardisation`); a constant function
(experiment 2's baseline, 0) is left as it is. This reading is ours (the thesis is ambiguous here).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import InputError

N_FEATURES = 20
NOISE = {1: 0.1, 2: 0.2, 3: 0.5}


def _x(X, k):
    """The thesis's 1-based x_k."""
    return X[:, k - 1]


def raw_functions(experiment: int, X: np.ndarray):
    """(baseline, effect) before standardisation, as printed in the thesis."""
    x = lambda k: _x(X, k)   # noqa: E731
    if experiment == 1:
        base = x(1) + x(3) + x(5) + x(7) + x(8) + x(9) - 2
        eff = 5.0 * (x(1) > 1) - 5
    elif experiment == 2:
        base = np.zeros(len(X))
        eff = 4.0 * (x(1) > 1) * (x(3) > 0) + 4.0 * (x(5) > 1) * (x(7) > 0) + 2 * x(8) * x(9)
    elif experiment == 3:
        base = 5.0 * (x(1) > 1) - 5
        eff = 0.5 * (x(1) ** 2 + x(2) + x(3) ** 2 + x(4) + x(5) ** 2 + x(6) + x(7) ** 2 + x(8) + x(9) ** 2 - 11)
    else:
        raise InputError(f"experiment must be 1, 2 or 3; got {experiment!r}")
    return base, eff


def covariates(n: int, rng: np.random.Generator) -> np.ndarray:
    X = np.empty((n, N_FEATURES))
    X[:, 0::2] = rng.normal(size=(n, N_FEATURES // 2))            # x1, x3, ... (1-based odd)
    X[:, 1::2] = rng.integers(0, 2, size=(n, N_FEATURES // 2))     # x2, x4, ... (1-based even)
    return X


@lru_cache(maxsize=None)
def standardisation(experiment: int) -> tuple[float, float, float, float]:
    """(mean, sd) of the baseline and of the effect over the covariate distribution (400,000 draws, seed 0)."""
    X = covariates(400_000, np.random.default_rng(0))
    base, eff = raw_functions(experiment, X)
    return float(base.mean()), float(base.std()), float(eff.mean()), float(eff.std())


@dataclass
class PrescriptionData:
    X: np.ndarray
    treatment: np.ndarray       # observed treatment (0/1)
    outcome: np.ndarray         # observed outcome (with noise on training data)
    y0: np.ndarray              # noiseless potential outcomes
    y1: np.ndarray

    @property
    def effect(self) -> np.ndarray:
        return self.y1 - self.y0

    @property
    def best(self) -> np.ndarray:
        """The right treatment: 1 iff y1 < y0 (smaller outcomes are better)."""
        return (self.y1 < self.y0).astype(np.int64)


def make_experiment(experiment: int, n: int, rng: np.random.Generator, noise: bool = True) -> PrescriptionData:
    """One sample of experiment 1, 2 or 3 (noise: the thesis's σ on the observed outcome; test sets have none)."""
    X = covariates(n, rng)
    base, eff = raw_functions(experiment, X)
    bm, bs, em, es = standardisation(experiment)
    base = (base - bm) / bs if bs > 0 else base
    eff = (eff - em) / es
    y0, y1 = base - eff / 2, base + eff / 2
    z = (rng.random(n) < 1.0 / (1.0 + np.exp(-y0))).astype(np.int64)
    y = np.where(z == 1, y1, y0)
    if noise:
        y = y + NOISE[experiment] * rng.normal(size=n)
    return PrescriptionData(X, z, y, y0, y1)


def treatment_accuracy(prescribed, data: PrescriptionData) -> float:
    """Share of rows given the truly better treatment."""
    return float(np.mean(np.asarray(prescribed) == data.best))


def effect_accuracy(predicted_effect, data: PrescriptionData) -> float:
    """R² of the predicted effect ŷ(1) - ŷ(0) against the true effect (can be negative)."""
    e = data.effect
    return float(1.0 - np.sum((e - np.asarray(predicted_effect)) ** 2) / np.sum((e - e.mean()) ** 2))
