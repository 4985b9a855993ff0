"""Calibration of the uncertainty set: costs gamma and budget epsilon from rho and lambda (paper §4–5).

The analyst gives, per feature (optionally per sample), a probability of certainty ``rho`` (the chance the
value is *not* shifted) and a level ``lam`` in (0, 1]. A likelihood-ratio test on the perturbation
distribution turns these into the set ``sum_i sum_f gamma_if |xi_if| <= epsilon`` with

- epsilon = -n log(lam) in every case;
- unbounded integer:  gamma = log(1 / (1 - rho));
- bounded integer:    gamma = log(1 / r), r the root in (0, 1) of (22) (one bound) or (25) (two bounds);
- binary:             gamma = log(rho / (1 - rho));
- one-hot categorical: gamma = 0.5 log(rho (m - 1) / (1 - rho)) on each of its m columns.

Root finding: (22) and (25) are the normalisation of the truncated geometric pmf multiplied by (1 - r).
(25) always has the spurious root r = 1. We solve the *un-multiplied* normalisation
``h(r) = rho * (1 + sum_{j<=up} r^j + sum_{j<=down} r^j) - 1``, strictly increasing with h(0) < 0 < h(1),
so Brent's method on [0, 1] has exactly one root and can never return r = 1.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from ..errors import InputError

KINDS = ("unbounded", "bounded", "binary", "categorical")


def budget(lam: float, n: int) -> float:
    """epsilon = -n log(lam); lam = 1 gives 0 (the nominal model)."""
    lam = float(lam)
    if not 0.0 < lam <= 1.0:
        raise InputError(f"lam must be in (0, 1]; got {lam}")
    return float(-n * np.log(lam))


def _check_rho(rho, lo=0.0):
    rho = np.asarray(rho, dtype=np.float64)
    if not np.all(np.isfinite(rho)) or np.any(rho < lo) or np.any(rho > 1.0):
        raise InputError(f"rho must be in [{lo:g}, 1]; got values in [{rho.min():g}, {rho.max():g}]")
    return rho


def gamma_unbounded(rho):
    """log(1/(1 - rho)); inf at rho = 1 (never shifted), 0 at rho = 0."""
    rho = _check_rho(rho)
    with np.errstate(divide="ignore"):
        return -np.log1p(-rho)


def gamma_binary(rho):
    """log(rho/(1 - rho)) for 0/1 features; needs rho >= 1/2 (1/2 = a fair coin, cost 0)."""
    rho = _check_rho(rho, 0.5)
    with np.errstate(divide="ignore"):
        return np.maximum(np.log(rho) - np.log1p(-rho), 0.0)   # clip round-off below 0 at rho = 1/2


def gamma_categorical(rho, n_values: int):
    """0.5 log(rho (m-1)/(1-rho)) per one-hot column of an m-valued feature; needs rho >= 1/m.

    At the uniform limit rho = 1/m the cost is exactly 0 (the log evaluates to about -1e-17 in floating
    point, e.g. rho = 1/3, m = 3; results are clipped at 0 so the set's costs stay non-negative).
    """
    if n_values < 2:
        raise InputError(f"a categorical feature needs at least 2 values; got {n_values}")
    rho = _check_rho(rho, 1.0 / n_values - 1e-12)
    with np.errstate(divide="ignore"):
        return np.maximum(0.5 * (np.log(rho) + np.log(n_values - 1) - np.log1p(-rho)), 0.0)


def _vector(name: str, value, F: int, fill: float, dtype=np.float64) -> np.ndarray:
    """A per-feature parameter as an (F,) array: None -> ``fill``, scalar -> broadcast, else exactly F entries."""
    if value is None:
        return np.full(F, fill, dtype=dtype)
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numbers, one per feature ({F}); got {value!r}") from None
    if arr.ndim == 0:
        arr = np.full(F, float(arr))
    if arr.ndim != 1 or arr.shape[0] != F:
        raise InputError(f"{name} must be a scalar or have one entry per feature ({F}); got shape {arr.shape}")
    return arr


def check_set_params(F: int, kinds=None, lower=None, upper=None, direction=None, groups=None, X=None,
                     groups_name: str = "categorical_groups"):
    """Validate the uncertainty-set parameters shared by calibration, sampling and the adversary.

    Returns ``(kinds, lower, upper, direction, groups)`` normalised: kinds a list of F strings (a single
    string applies to every feature), lower/upper (F,) floats with NaN = no bound, direction (F,) ints in
    {-1, 0, +1}, groups a list of lists of column indices. With data ``X`` (n, F) in the set's integer units
    it also checks that binary features are 0/1, one-hot groups are one-hot, and values respect the bounds.
    Every problem raises :class:`InputError` naming the parameter.
    """
    if isinstance(kinds, str):
        kinds = [kinds] * F
    kinds = ["unbounded"] * F if kinds is None else list(kinds)
    if len(kinds) != F:
        raise InputError(f"feature_kinds must list one kind per feature ({F}); got {len(kinds)}")
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise InputError(f"feature_kinds has unknown kind {bad[0]!r}; choose from {KINDS}")
    lower = _vector("lower", lower, F, np.nan).copy()
    upper = _vector("upper", upper, F, np.nan).copy()
    lower[lower == -np.inf] = np.nan
    upper[upper == np.inf] = np.nan
    both = ~np.isnan(lower) & ~np.isnan(upper)
    if np.any(lower[both] > upper[both]):
        f = int(np.nonzero(both & (np.nan_to_num(lower) > np.nan_to_num(upper)))[0][0])
        raise InputError(f"lower[{f}] = {lower[f]:g} exceeds upper[{f}] = {upper[f]:g}")
    d = _vector("direction", direction, F, 0.0)
    if not np.all(np.isin(d, (-1.0, 0.0, 1.0))):
        f = int(np.nonzero(~np.isin(d, (-1.0, 0.0, 1.0)))[0][0])
        raise InputError(f"direction must be 0 (two-sided), +1 (increases only) or -1 (decreases only) per "
                         f"feature; direction[{f}] = {d[f]:g}")
    direction = d.astype(int)
    out_groups: list[list[int]] = []
    seen: set[int] = set()
    for g in groups or []:
        try:
            raw = list(g)
            g = [int(c) for c in raw]
            ok = all(c == c_ and not isinstance(c_, bool) for c, c_ in zip(g, raw))
        except (TypeError, ValueError):
            raise InputError(f"{groups_name} must be lists of integer column indices; got {g!r}") from None
        if not ok:
            raise InputError(f"{groups_name} must be lists of integer column indices; got {raw!r}")
        if len(g) < 2:
            raise InputError(f"{groups_name}: a one-hot group needs at least 2 columns; got {g}")
        out = [c for c in g if not 0 <= c < F]
        if out:
            raise InputError(f"{groups_name}: column index {out[0]} is out of range for {F} features")
        dup = (set(g) & seen) or (len(set(g)) < len(g))
        if dup:
            raise InputError(f"{groups_name}: column(s) appear twice in the one-hot groups: {g}")
        seen.update(g)
        out_groups.append(g)
    if X is not None:
        X = np.asarray(X, dtype=np.float64)
        for g in out_groups:
            B = X[:, g]
            if not (np.all((B == 0) | (B == 1)) and np.all(B.sum(axis=1) == 1)):
                raise InputError(f"{groups_name}: columns {g} are not a one-hot block (every row needs exactly "
                                 "one 1 and 0 elsewhere); encode the feature with OneHotGroups")
        for f in range(F):
            if f in seen:
                continue
            col = X[:, f]
            if kinds[f] == "binary" and not np.all((col == 0) | (col == 1)):
                raise InputError(f"feature_kinds[{f}] is 'binary' but column {f} has values other than 0/1 "
                                 f"(e.g. {col[(col != 0) & (col != 1)][0]:g})")
            if kinds[f] == "categorical":
                raise InputError(f"feature_kinds[{f}] is 'categorical' but column {f} is in no one-hot group "
                                 f"({groups_name})")
            if not np.isnan(lower[f]) and np.any(col < lower[f]):
                raise InputError(f"column {f} has values below lower[{f}] = {lower[f]:g} (min {col.min():g})")
            if not np.isnan(upper[f]) and np.any(col > upper[f]):
                raise InputError(f"column {f} has values above upper[{f}] = {upper[f]:g} (max {col.max():g})")
    return kinds, lower, upper, direction, out_groups


def broadcast_rho(rho, n: int, F: int) -> np.ndarray:
    """rho as an (n, F) array; a clear error for a shape that does not fit (e.g. a per-entry rho of the
    training set reused on a test set of another size)."""
    try:
        arr = np.asarray(rho, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"rho must be numbers in [0, 1]; got {rho!r}") from None
    try:
        return np.broadcast_to(arr, (n, F))
    except ValueError:
        raise InputError(f"rho must be a scalar, (F,) = ({F},) or (n, F) = {(n, F)} for this data; got shape "
                         f"{arr.shape} (a per-entry rho only fits data with the same number of rows)") from None


def _h(r: float, rho: float, up, down) -> float:
    """rho * sum of r^|zeta| over the allowed shifts minus 1 (``up``/``down`` = steps allowed, None = inf)."""
    def side(k):
        if k is None:
            return r / (1.0 - r)
        return r * (1.0 - r ** k) / (1.0 - r) if r != 1.0 else float(k)
    return rho * (1.0 + side(up) + side(down)) - 1.0


def allowed_steps(x: float, lower, upper, direction: int) -> tuple[int | None, int | None]:
    """(up, down): the unit steps a shift of an integer value ``x`` may take above and below it within the
    bounds (None: unbounded), 0 on the side ``direction`` forbids (+1 upward only, -1 downward only)."""
    up = None if upper is None else int(round(upper - x))
    down = None if lower is None else int(round(x - lower))
    if direction > 0:
        down = 0
    elif direction < 0:
        up = 0
    return up, down


def truncated_root(rho: float, up, down) -> float:
    """Root r in (0, 1) of the normalisation of P(xi = zeta) = rho r^|zeta| on the allowed shifts.

    ``up``/``down``: number of unit steps allowed above/below x (None = unbounded). One of them unbounded
    is Lemma 4.1 / eq. (22); both finite is Lemma 4.2 / eq. (25). Returns 0 for rho = 1.

    The uniform limit (both bounds finite): the paper's range is ``1/(U-L+1) <= rho <= 1`` (§4.2.2), where
    rho = 1/(U-L+1) makes the perturbation *uniform* over the allowed values (maximal uncertainty). That is
    the limit r -> 1 of (21), so at (and numerically at) the limit this returns r = 1, i.e. gamma = log(1/r)
    = 0 — consistent with :func:`gamma_binary` (rho = 1/2 gives 0) and :func:`gamma_categorical`
    (rho = 1/m gives 0). Below the limit no pmf of the form rho r^|zeta| with r <= 1 exists, so it raises.
    """
    rho = float(rho)
    if rho >= 1.0:
        return 0.0
    if up is None and down is None:
        # symmetric geometric on Z without the 1/2 factor: rho (1 + 2r/(1-r)) = 1
        return (1.0 - rho) / (1.0 + rho)
    if up is not None and down is not None:
        size = up + down + 1
        if size <= 1:
            raise InputError("a bounded feature with a single allowed value cannot be perturbed")
        limit = 1.0 / size
        if rho < limit - 1e-12:
            raise InputError(f"rho={rho:g} is below 1/(U-L+1) = {limit:g} (the uniform limit) for a bounded "
                             f"feature with {size} allowed values; give rho >= {limit:g}")
        if rho <= limit + 1e-12:
            return 1.0        # uniform perturbation: gamma = 0
    if rho <= 0.0:
        raise InputError("rho must be > 0 for a bounded feature")
    hi = 1.0 - 1e-15
    if _h(hi, rho, up, down) <= 0:  # numerically at the uniform limit: r = 1, gamma = 0
        return 1.0
    r = brentq(_h, 0.0, hi, args=(rho, up, down), xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    if not 0.0 <= r <= 1.0:  # pragma: no cover - guaranteed by the bracket
        raise InputError("calibration root left (0, 1)")
    return float(r)


def paper_poly_22(r, rho, x, L):
    """Left side of (22): rho r^(x-L+1) - (rho+1) r + 1 - rho (for checks)."""
    return rho * r ** (x - L + 1) - (rho + 1) * r + 1 - rho


def paper_poly_25(r, rho, x, L, U):
    """Left side of (25) (has the spurious root r = 1)."""
    M, m = max(U - x, x - L), min(U - x, x - L)
    return rho * r ** (M + 1) + rho * r ** (m + 1) - (rho + 1) * r + 1 - rho


def gamma_bounded(rho, x, lower=None, upper=None, direction: int = 0):
    """gamma = log(1/r) per sample for an integer feature with optional bounds and one-sided shifts.

    ``direction`` +1 allows only upward shifts (the lower bound becomes x itself, §5.1), -1 only downward.
    At the uniform limit rho = 1/(number of allowed values) gamma is 0 (see :func:`truncated_root`); rho
    below it raises :class:`InputError`.
    """
    x = np.asarray(x, dtype=np.float64)
    rho = np.broadcast_to(_check_rho(rho), x.shape)
    out = np.empty(x.shape)
    cache = {}
    for idx in np.ndindex(x.shape):
        xi = x[idx]
        up, down = allowed_steps(xi, lower, upper, direction)
        if (up is not None and up < 0) or (down is not None and down < 0):
            raise InputError(f"value {xi:g} lies outside the bounds [{lower}, {upper}]")
        key = (float(rho[idx]), up, down)
        if key not in cache:
            if up == 0 and down == 0:
                cache[key] = np.inf
            elif up is None and down is None and direction == 0:
                cache[key] = float(gamma_unbounded(key[0]))
            else:
                r = truncated_root(key[0], up, down)
                cache[key] = np.inf if r == 0.0 else max(float(-np.log(r)), 0.0) + 0.0
        out[idx] = cache[key]
    return out


def calibrate(X, rho, lam: float, kinds=None, lower=None, upper=None, direction=None, groups=None):
    """Costs gamma (n, F) and budget epsilon for data X (n, F) in the robust model's integer units.

    ``rho``: scalar, (F,) or (n, F). ``kinds``: per feature (or one string for all) "unbounded" (default), "bounded"
    (uses ``lower``/``upper``, each (F,) with NaN = no bound), "binary"; columns listed in ``groups``
    (one-hot blocks) are calibrated as categorical with the block's rho (the first column's).
    ``direction``: (F,) of 0 / +1 / -1 for two-sided / upward-only / downward-only shifts.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InputError(f"X must be 2-D; got shape {X.shape}")
    n, F = X.shape
    rho = broadcast_rho(rho, n, F)
    kinds, lower, upper, direction, groups = check_set_params(F, kinds, lower, upper, direction, groups, X=X)
    gamma = np.empty((n, F))
    in_group = set()
    for g in groups or []:
        g = list(g)
        in_group.update(g)
        gamma[:, g] = gamma_categorical(rho[:, g[0]], len(g))[:, None]
    for f in range(F):
        if f in in_group:
            continue
        kind = kinds[f]
        if kind == "categorical":
            raise InputError(f"feature {f} is 'categorical' but in no one-hot group")
        if kind == "binary":
            gamma[:, f] = gamma_binary(rho[:, f])
        elif kind == "unbounded" and direction[f] == 0:
            gamma[:, f] = gamma_unbounded(rho[:, f])
        else:
            lo = None if np.isnan(lower[f]) else lower[f]
            hi = None if np.isnan(upper[f]) else upper[f]
            if kind == "unbounded":
                lo = hi = None
            gamma[:, f] = gamma_bounded(rho[:, f], X[:, f], lo, hi, int(direction[f]))
    return gamma, budget(lam, n)
