"""Validated prescriptive data (features, observed treatment, observed outcome) and the objective's scale.

Why one place: the local search, the dynamic program, the MIO, the teacher models and the estimators all
need the same checks (lengths, NaN outcomes, a treatment column with one value, ``n_treatment`` that no
treatment reaches) and the same internal conventions:

- treatments are coded 0..m-1 in the order of ``classes`` (sorted labels, or the user's ``treatments``);
- the internal outcome ``y`` is always *minimised*: ``y = outcome`` for ``sense="min"``, ``-outcome`` for
  ``sense="max"`` (income-like outcomes);
- the objective's scale: ``ybar`` and ``s`` are the mean and standard deviation of ``y``; the baseline
  ``L̂ = n s²`` is the squared error of the root-only prediction (ORT's L̂). See
  :mod:`opttrees.prescriptive.objective` for how the two terms of the thesis's (6.3) use them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .prepared import MinMaxScaling, RankedFeatures, _as_2d_float, check_vector, feature_epsilon, frame_column
from ..errors import InputError

SENSES = ("min", "max")


def as_vector(v, n: int | None, name: str) -> np.ndarray:
    """A 1-D array of length ``n`` (a one-column frame or column vector is flattened), else an InputError."""
    if v is None:
        raise InputError(f"{name} is None; expected one value per row of X")
    arr = frame_column(v, name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    return check_vector(arr, n, name)


def split_target(treatment, outcome):
    """``(treatment, outcome)`` from either two arguments or one two-column target ``[treatment, outcome]``.

    Why: the spec files and the CLI hand every model one target ``y`` (here the CSV columns
    ``target: [treatment, outcome]``), while the Python API takes them separately.
    """
    if outcome is not None:
        return treatment, outcome
    if isinstance(treatment, pd.DataFrame) and treatment.shape[1] == 2:
        return treatment.iloc[:, 0].to_numpy(), treatment.iloc[:, 1].to_numpy()
    arr = np.asarray(treatment, dtype=object) if treatment is not None else None
    if arr is not None and arr.ndim == 2 and arr.shape[1] == 2:
        return arr[:, 0], arr[:, 1]
    raise InputError("outcome is missing: pass fit(X, treatment, outcome), or one two-column target "
                     "[treatment, outcome]")


def encode_treatments(treatment: np.ndarray, treatments=None) -> tuple[np.ndarray, list]:
    """Codes 0..m-1 and the list of treatment labels; InputError for missing labels or an unknown treatment."""
    if treatment.dtype == object and any(v is None or (isinstance(v, float) and np.isnan(v)) for v in treatment):
        raise InputError("treatment contains missing values (None/NaN); every row needs its observed treatment")
    if treatment.dtype.kind == "f" and not np.isfinite(treatment).all():
        raise InputError("treatment contains NaN/infinite values; every row needs its observed treatment")
    try:
        uniq = np.unique(treatment)
    except TypeError:
        raise InputError("treatment mixes label types that cannot be ordered (e.g. strings and numbers)") from None
    seen = [v.item() if isinstance(v, np.generic) else v for v in uniq]
    if treatments is None:
        classes = list(seen)
    else:
        classes = [v.item() if isinstance(v, np.generic) else v for v in treatments]
        if len(set(map(repr, classes))) != len(classes):
            raise InputError(f"treatments={classes!r} lists a treatment twice")
        unknown = [v for v in seen if not any(v == c for c in classes)]
        if unknown:
            raise InputError(f"treatment contains {unknown[0]!r}, which is not in treatments={classes!r}")
        absent = [c for c in classes if not np.any(treatment == c)]
        if absent:
            raise InputError(f"treatments: {absent[0]!r} does not occur in the treatment column, so no leaf could "
                             "estimate its outcome; remove it from treatments")
    if len(classes) < 2:
        raise InputError(f"treatment has only one value ({classes[0]!r}); a prescription needs at least two "
                         "treatments to choose between")
    code = np.empty(len(treatment), np.int64)
    for k, c in enumerate(classes):
        code[treatment == c] = k
    return code, classes


def check_outcome(outcome, n: int, name: str = "outcome") -> np.ndarray:
    arr = as_vector(outcome, n, name)
    try:
        arr = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numeric (one observed outcome per row)") from None
    if not np.isfinite(arr).all():
        bad = int(np.nonzero(~np.isfinite(arr))[0][0])
        raise InputError(f"{name} contains {int((~np.isfinite(arr)).sum())} NaN/infinite value(s) (first at row "
                         f"{bad}); drop or impute those rows before fitting")
    return arr


@dataclass
class PrescriptiveData(RankedFeatures):
    """Validated training data for every prescriptive method (see the module docstring for conventions)."""

    X: np.ndarray                  # (n, p) original units
    Xs: np.ndarray                 # (n, p) scaled to [0, 1] on the training data
    feature_names: list
    scaling: MinMaxScaling
    eps: np.ndarray                # per-feature smallest scaled gap (0: constant feature, never split)
    treatment: np.ndarray          # (n,) codes 0..m-1
    classes: list                  # treatment labels, index = code
    y: np.ndarray                  # (n,) internal outcome, minimised
    sense: str
    ybar: float
    scale: float                   # s: standard deviation of y (1 when y is constant)

    @property
    def m(self) -> int:
        return len(self.classes)

    @property
    def baseline(self) -> float:
        """L̂ = n s²: the squared error of predicting the mean outcome everywhere (ORT's L̂)."""
        return self.n * self.scale ** 2

    def counts(self) -> np.ndarray:
        return np.bincount(self.treatment, minlength=self.m)

    def to_user(self, y_internal):
        """Internal (minimised) outcome values back to the user's outcome units."""
        return y_internal if self.sense == "min" else -np.asarray(y_internal)


def check_n_treatment(n_treatment, counts: np.ndarray, classes: list, allow_zero: bool = False) -> int:
    """``n_treatment`` as an int, or an InputError when no treatment has that many rows (no leaf could prescribe)."""
    lo = 0 if allow_zero else 1
    if isinstance(n_treatment, bool) or not isinstance(n_treatment, (int, np.integer)) or n_treatment < lo:
        raise InputError(f"n_treatment={n_treatment!r} is not valid: expected an integer >= {lo}"
                         + ("" if allow_zero else " (a leaf's counterfactual mean of a treatment needs at least one "
                            "row of it)"))
    k = int(np.argmax(counts))
    if n_treatment > counts[k]:
        raise InputError(f"n_treatment={n_treatment} is larger than the number of rows of every treatment (the most is "
                         f"{int(counts[k])}, for {classes[k]!r}): no leaf could prescribe any treatment")
    return int(n_treatment)


def prepare_prescriptive(X, treatment, outcome, sense: str = "min", treatments=None, min_samples_leaf: int = 1,
                         n_treatment: int | None = 1, allow_zero_n_treatment: bool = False) -> PrescriptiveData:
    """Validate ``(X, treatment, outcome)`` and derive the codes, scaling and the objective's scale.

    ``n_treatment=None`` skips its check (for callers that check it themselves).
    """
    if sense not in SENSES:
        raise InputError(f"sense={sense!r} is not valid: expected 'min' (smaller outcomes are better) or 'max'")
    Xa, names = _as_2d_float(X)
    n = Xa.shape[0]
    t = as_vector(treatment, n, "treatment")
    code, classes = encode_treatments(t, treatments)
    y = check_outcome(outcome, n)
    if isinstance(min_samples_leaf, bool) or not isinstance(min_samples_leaf, (int, np.integer)) or min_samples_leaf < 1:
        raise InputError(f"min_samples_leaf={min_samples_leaf!r} is not valid: expected an integer >= 1")
    if n < min_samples_leaf:
        raise InputError(f"X has {n} rows, fewer than min_samples_leaf={min_samples_leaf}: no tree is feasible")
    if n_treatment is not None:
        check_n_treatment(n_treatment, np.bincount(code, minlength=len(classes)), classes, allow_zero_n_treatment)
    yi = y if sense == "min" else -y
    ybar = float(yi.mean())
    s = float(yi.std())
    scaling = MinMaxScaling.fit(Xa)
    Xs = np.clip(scaling.transform(Xa), 0.0, 1.0)
    return PrescriptiveData(Xa, Xs, names, scaling, feature_epsilon(Xs), code, classes, yi, sense, ybar,
                            s if s > 0 else 1.0)
