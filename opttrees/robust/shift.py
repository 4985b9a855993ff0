"""Perturbed test sets drawn from the calibrated shift distribution, and accuracy under shift (§7.1.2).

Each entry is perturbed independently: unbounded integers by the symmetric geometric (17) (magnitude
geometric(rho) - 1, sign +-1 with probability 1/2); bounded integers by the truncated pmf rho r^|zeta| (21)
with r from the calibration root; binaries flip with probability 1 - rho; a one-hot block keeps its category
with probability rho, otherwise moves to one of the other categories uniformly (29).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from .calibration import allowed_steps, broadcast_rho, check_set_params, truncated_root


def _side_mass(r: float, k) -> float:
    """sum_{j=1..k} r^j (k None = infinity)."""
    if k == 0 or r == 0.0:
        return 0.0
    if k is None:
        return r / (1.0 - r)
    return float(k) if r == 1.0 else r * (1.0 - r ** k) / (1.0 - r)


def _side_magnitude(rng, size, r: float, k):
    """Magnitudes m in 1..k (k None = infinity) with P(m) proportional to r^m (inverse CDF)."""
    if k is None:
        return rng.geometric(1.0 - r, size=size)
    if r == 1.0:
        return rng.integers(1, k + 1, size=size)
    v = rng.random(size)
    m = np.ceil(np.log1p(-v * (1.0 - r ** k)) / np.log(r))
    return np.clip(m, 1, k).astype(np.int64)


def _truncated_sample(rng, size, r: float, up, down):
    """Shifts zeta with P(zeta) = rho r^|zeta| on -down..up (either side may be None = unbounded)."""
    w = np.array([1.0, _side_mass(r, up), _side_mass(r, down)])
    w /= w.sum()
    side = rng.choice(3, size=size, p=w)
    out = np.zeros(size, dtype=np.int64)
    n_up, n_down = int((side == 1).sum()), int((side == 2).sum())
    if n_up:
        out[side == 1] = _side_magnitude(rng, n_up, r, up)
    if n_down:
        out[side == 2] = -_side_magnitude(rng, n_down, r, down)
    return out


def _bounded_sample(rng, x, rho, lo, hi, direction):
    """Draw shifted values for one feature with finite support, grouped by (x, rho)."""
    out = x.copy()
    keys = np.stack([x, rho], axis=1)
    for key in np.unique(keys, axis=0):
        xi, r_ = float(key[0]), float(key[1])
        rows = np.nonzero((x == xi) & (rho == r_))[0]
        up, down = allowed_steps(xi, lo, hi, direction)
        if up == 0 and down == 0:
            continue
        if r_ >= 1.0:
            continue
        r = truncated_root(r_, up, down)
        if up is None or down is None:
            # one bound only (Lemma 4.1, eq. (22)): truncated geometric, infinite on the open side
            out[rows] = xi + _truncated_sample(rng, len(rows), r, up, down)
            continue
        support = np.arange(-down, up + 1)
        pmf = r_ * r ** np.abs(support)
        pmf /= pmf.sum()
        out[rows] = xi + rng.choice(support, size=len(rows), p=pmf)
    return out


def sample_shifts(X, rho, rng, kinds=None, lower=None, upper=None, direction=None, groups=None, n_sets: int = 1):
    """``n_sets`` perturbed copies of X, shape (n_sets, n, F); same arguments as ``calibrate``.

    Bounded features may have both bounds (pmf rho r^|zeta| on the finite support, eq. (21)/(25)) or one
    bound only (eq. (22): the same pmf, truncated on the bounded side and geometric on the open side).
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InputError(f"X must be 2-D; got shape {X.shape}")
    n, F = X.shape
    rho = broadcast_rho(rho, n, F)
    if not np.all(np.isfinite(rho)) or np.any(rho < 0) or np.any(rho > 1):
        raise InputError("rho must be in [0, 1]")
    kinds, lower, upper, direction, groups = check_set_params(F, kinds, lower, upper, direction, groups, X=X)
    rng = np.random.default_rng(rng)
    out = np.repeat(X[None], n_sets, axis=0)
    in_group = set()
    for g in groups or []:
        g = list(g)
        in_group.update(g)
        m = len(g)
        active = np.argmax(X[:, g], axis=1)
        change = rng.random((n_sets, n)) >= rho[:, g[0]][None, :]
        step = rng.integers(1, m, size=(n_sets, n))            # uniform over the other m-1 categories
        new = np.where(change, (active[None, :] + step) % m, active[None, :])
        block = np.zeros((n_sets, n, m))
        np.put_along_axis(block, new[..., None], 1.0, axis=2)
        out[:, :, g] = block
    for f in range(F):
        if f in in_group:
            continue
        x, r = X[:, f], rho[:, f]
        if kinds[f] == "binary":
            flip = rng.random((n_sets, n)) >= r[None, :]
            out[:, :, f] = np.where(flip, 1.0 - x[None, :], x[None, :])
        elif kinds[f] == "bounded" and not (np.isnan(lower[f]) and np.isnan(upper[f])):
            lo = None if np.isnan(lower[f]) else lower[f]
            hi = None if np.isnan(upper[f]) else upper[f]
            for s in range(n_sets):
                out[s, :, f] = _bounded_sample(rng, x, r, lo, hi, direction[f])
        else:
            rr = np.clip(r, 1e-12, 1.0)
            mag = rng.geometric(np.broadcast_to(rr, (n_sets, n))) - 1
            if direction[f] > 0:
                sign = 1
            elif direction[f] < 0:
                sign = -1
            else:
                sign = rng.choice([-1, 1], size=(n_sets, n))
            out[:, :, f] = x[None, :] + sign * mag
    return out


def shifted_accuracy(predict, X, y, rho, n_sets: int = 5000, rng=0, batch: int = 250, **kinds):
    """Worst-case (min) and average accuracy of ``predict`` over ``n_sets`` shifted copies of (X, y)."""
    y = np.asarray(y)
    rng = np.random.default_rng(rng)
    batches = []
    done = 0
    while done < n_sets:
        k = min(batch, n_sets - done)
        sets = sample_shifts(X, rho, rng, n_sets=k, **kinds)
        pred = np.asarray(predict(sets.reshape(-1, sets.shape[2]))).reshape(k, -1)
        batches.append((pred == y[None, :]).mean(axis=1))
        done += k
    accs = np.concatenate(batches)
    return {"worst": float(accs.min()), "average": float(accs.mean()), "accuracies": accs}
