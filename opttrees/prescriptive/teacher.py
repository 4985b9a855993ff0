"""Teacher scores for policy trees: direct method, inverse propensity weighting and doubly robust (the STreeD
paper, van der Linden, de Weerdt, Demirović, NeurIPS 2023, §4.4 and Appendix D).

A policy tree maximises (here: minimises, in the internal sense) the summed score Γ_i,τ(x_i) of the treatment
it assigns; the scores come from models fitted before the tree (the "teachers"), which is what makes the
objective separable and the tree exact by dynamic programming:

- ``"dm"``  direct method (regress and compare): Γ_ik = μ̂_k(x_i), an outcome model per treatment;
- ``"ipw"`` inverse propensity weighting: Γ_ik = 1[z_i = k] y_i / ê(z_i | x_i) (the standard estimator; the
  seed's (63) lost the y in extraction);
- ``"dr"``  doubly robust (Dudík et al.): Γ_ik = μ̂_k(x_i) + 1[z_i = k] (y_i - μ̂_k(x_i)) / ê(z_i | x_i).

The nuisance models are **cross-fitted**: with ``n_folds`` = K >= 2, the rows are split into K folds and each
fold's μ̂ and ê come from models fitted on the other folds (so a row's score never uses a model that saw its
own outcome); ``n_folds=1`` fits in-sample. Any scikit-learn regressor / classifier with ``predict_proba`` can
be passed; they are cloned. Estimated propensities are clipped to [clip, 1 - clip]; propensities a user passes
must lie strictly inside (0, 1).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold

from ..data.prepared import owned
from ..errors import InputError

TEACHERS = ("dm", "ipw", "dr")


def default_outcome_model(random_state=None):
    """Random forest per treatment arm (flexible enough for DR's outcome part, no tuning needed)."""
    return RandomForestRegressor(n_estimators=100, min_samples_leaf=5, random_state=random_state)


def default_propensity_model():
    return LogisticRegression(max_iter=2000)


def _seed(random_state):
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2 ** 31))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2 ** 31))
    return random_state


def _folds(n: int, n_folds: int, random_state):
    if n_folds == 1:
        return [(np.arange(n), np.arange(n))]
    if n_folds > n:
        raise InputError(f"n_folds={n_folds} is larger than the number of rows ({n})")
    return list(KFold(n_splits=n_folds, shuffle=True, random_state=_seed(random_state)).split(np.zeros(n)))


def cross_fit_outcomes(X, treatment, y, m: int, model=None, n_folds: int = 5, random_state=None) -> np.ndarray:
    """(n, m) out-of-fold predictions μ̂_k(x_i) of one outcome model per treatment (an arm with fewer than two
    training rows in a fold predicts that arm's mean, or the overall mean when it has none)."""
    n = len(y)
    out = np.empty((n, m))
    model = default_outcome_model(_seed(random_state)) if model is None else model
    if not hasattr(model, "fit") or not hasattr(model, "predict"):
        raise InputError(f"outcome_model must be a scikit-learn regressor (fit/predict); got {type(model).__name__}")
    for train, test in _folds(n, n_folds, random_state):
        for k in range(m):
            rows = train[treatment[train] == k]
            if len(rows) < 2:
                out[test, k] = y[rows].mean() if len(rows) else y[train].mean()
                continue
            est = clone(model).fit(X[rows], y[rows])
            out[test, k] = np.asarray(est.predict(X[test]), dtype=np.float64).ravel()
    return out


def cross_fit_propensity(X, treatment, m: int, model=None, n_folds: int = 5, random_state=None,
                         clip: float = 0.01) -> np.ndarray:
    """(n,) out-of-fold estimate of P(observed treatment | x_i), clipped to [clip, 1 - clip]."""
    n = len(treatment)
    out = np.empty(n)
    model = default_propensity_model() if model is None else model
    if not hasattr(model, "fit") or not hasattr(model, "predict_proba"):
        raise InputError("propensity_model must be a scikit-learn classifier with predict_proba; got "
                         f"{type(model).__name__}")
    for train, test in _folds(n, n_folds, random_state):
        present = np.unique(treatment[train])
        if len(present) < 2:
            out[test] = np.where(np.isin(treatment[test], present), 1.0, 0.0)
            continue
        est = clone(model).fit(X[train], treatment[train])
        proba = np.asarray(est.predict_proba(X[test]))
        col = {int(c): j for j, c in enumerate(est.classes_)}
        idx = np.array([col.get(int(t), -1) for t in treatment[test]])
        out[test] = np.where(idx >= 0, proba[np.arange(len(test)), np.maximum(idx, 0)], 0.0)
    return np.clip(out, clip, 1.0 - clip)


def check_propensity(propensity, treatment, m: int) -> np.ndarray:
    """User propensities as (n,) P(observed treatment | x): an (n,) vector, or an (n, m) matrix in treatment order."""
    n = len(treatment)
    try:
        e = np.asarray(propensity, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("propensity must be numeric: P(observed treatment | x) per row, or an (n, m) matrix") from None
    if e.ndim == 2 and e.shape == (n, m):
        e = e[np.arange(n), treatment]
    elif e.ndim == 2 and e.shape[1] == 1:
        e = e[:, 0]
    if e.shape != (n,):
        raise InputError(f"propensity must have shape ({n},) or ({n}, {m}); got {e.shape}")
    if not np.isfinite(e).all() or (e <= 0).any() or (e >= 1).any():
        bad = e[~(np.isfinite(e) & (e > 0) & (e < 1))]
        raise InputError(f"propensity must lie strictly between 0 and 1 (inverse weights 1/e); found {bad[0]!r}")
    return e


def check_outcome_estimates(est, n: int, m: int, sense: str) -> np.ndarray:
    """User outcome estimates (n, m) in outcome units -> internal (minimised) units."""
    try:
        mu = np.asarray(est, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("outcome_estimates must be a numeric (n, m) matrix") from None
    if mu.shape != (n, m):
        raise InputError(f"outcome_estimates must have shape ({n}, {m}) (rows x treatments); got {mu.shape}")
    if not np.isfinite(mu).all():
        raise InputError("outcome_estimates contain NaN/infinite values")
    return owned(mu) if sense == "min" else -mu


def teacher_scores(teacher: str, treatment: np.ndarray, y: np.ndarray, m: int, mu_hat: np.ndarray | None,
                   e_obs: np.ndarray | None) -> np.ndarray:
    """(n, m) scores Γ in the internal (minimised) units from the nuisance estimates (see the module docstring)."""
    if teacher not in TEACHERS:
        raise InputError(f"teacher={teacher!r} is not valid: expected one of {TEACHERS}")
    n = len(y)
    if teacher == "dm":
        return np.array(mu_hat, dtype=np.float64)
    onehot = np.zeros((n, m))
    onehot[np.arange(n), treatment] = 1.0
    if teacher == "ipw":
        return onehot * (y / e_obs)[:, None]
    assert mu_hat is not None, "the doubly robust teacher needs mu_hat"
    resid = y - mu_hat[np.arange(n), treatment]
    return mu_hat + onehot * (resid / e_obs)[:, None]
