"""The worst-case adversary of the robust tree (paper Algorithm 1), exact and combinatorial.

A tree over integer features with integer thresholds (right iff x_f >= theta + 1) is given by its decision
paths: each path is a box ``lo <= x~ <= hi`` plus the label of its prediction node. For one sample, the
cheapest integer shift that makes it follow a misclassifying path decomposes per feature (eq. 13): move
x_f to the nearest point of [lo_f, hi_f] (intersected with the feature's domain and allowed direction) at
cost gamma_f * |move|. One-hot categorical blocks (28) change at most one category: cost
gamma[active] + gamma[target] for the cheapest target the path admits. psi_i is the cheapest such path over
misclassifying paths; the adversary then misclassifies samples in increasing psi until the budget is
spent, which is optimal because every sample is worth one (a cardinality knapsack).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError


@dataclass
class ShiftSet:
    """The uncertainty set: costs gamma (n, F), budget, domain bounds, one-sided directions, one-hot groups.

    ``lower``/``upper``: scalar or (F,) bounds on the shifted value (NaN or -inf/inf = none).
    ``direction``: scalar or (F,) of 0 (two-sided), +1 (increases only), -1 (decreases only) — set (27).
    ``groups``: one-hot column blocks — set (28). ``kinds``: optional per-feature kinds as in
    :func:`~opttrees.robust.calibrate`; a "binary" feature is given the domain [0, 1].
    Bad parameters raise :class:`InputError` naming the parameter; :meth:`check_data` validates data against
    the set (one-hot blocks, binary columns, bounds).
    """

    gamma: np.ndarray
    budget: float
    lower: np.ndarray | None = None     # (F,) domain bounds on the shifted value (-inf/inf = none)
    upper: np.ndarray | None = None
    direction: np.ndarray | None = None  # (F,) 0 two-sided, +1 up only, -1 down only  (set (27))
    groups: list | None = None           # one-hot column blocks  (set (28))
    kinds: list | None = None            # optional per-feature kinds ("binary" -> domain [0, 1])

    def __post_init__(self):
        try:
            self.gamma = np.asarray(self.gamma, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("costs must be numbers (a 2-D (n, F) array)") from None
        if self.gamma.ndim != 2:
            raise InputError(f"costs must be a 2-D (n, F) array; got shape {self.gamma.shape}")
        if np.isnan(self.gamma).any() or (self.gamma < 0).any():
            raise InputError("costs must be non-negative (inf = never shifted)")
        try:
            self.budget = float(self.budget)
        except (TypeError, ValueError):
            raise InputError(f"budget must be a finite number >= 0; got {self.budget!r}") from None
        if not np.isfinite(self.budget) or self.budget < 0:
            raise InputError(f"budget must be a finite number >= 0; got {self.budget}")
        F = self.gamma.shape[1]
        from .calibration import check_set_params
        kinds, lower, upper, direction, groups = check_set_params(
            F, self.kinds, self.lower, self.upper, self.direction, self.groups, groups_name="groups")
        self.kinds = kinds
        binary = np.array([k == "binary" for k in kinds], dtype=bool)
        lower[binary & np.isnan(lower)] = 0.0
        upper[binary & np.isnan(upper)] = 1.0
        self.lower = np.where(np.isnan(lower), -np.inf, lower)
        self.upper = np.where(np.isnan(upper), np.inf, upper)
        self.direction = direction
        self.groups = groups
        for g in self.groups:
            self.lower[g], self.upper[g] = 0.0, 1.0
        self.in_group = np.zeros(F, dtype=bool)
        for g in self.groups:
            self.in_group[g] = True

    def check_data(self, X) -> None:
        """Raise :class:`InputError` if X (n, F) does not fit the set: shape, one-hot groups, binary, bounds."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.gamma.shape[1]:
            raise InputError(f"X must have {self.gamma.shape[1]} columns for this shift set; got shape {X.shape}")
        from .calibration import check_set_params
        assert self.lower is not None and self.upper is not None  # filled by __post_init__
        lo = np.where(np.isinf(self.lower), np.nan, self.lower)
        hi = np.where(np.isinf(self.upper), np.nan, self.upper)
        check_set_params(X.shape[1], self.kinds, lo, hi, self.direction, self.groups, X=X, groups_name="groups")


@dataclass
class Path:
    lo: np.ndarray   # (F,) lower bounds on x~ along the path
    hi: np.ndarray
    label: int
    node: int        # prediction node id


def path_costs(X: np.ndarray, S: ShiftSet, path: Path, rows=None) -> tuple[np.ndarray, np.ndarray]:
    """Min cost (n,) of shifting each row onto ``path`` and the shifted rows (n, F); inf if impossible.

    ``rows``: which rows of the cost matrix X corresponds to (default all).
    """
    n, F = X.shape
    # filled by ShiftSet.__post_init__
    assert S.lower is not None and S.upper is not None and S.direction is not None and S.groups is not None
    G = S.gamma if rows is None else S.gamma[rows]
    free = ~S.in_group
    lo = np.maximum(path.lo, S.lower)[None, :].repeat(n, 0)
    hi = np.minimum(path.hi, S.upper)[None, :].repeat(n, 0)
    up_only, down_only = S.direction > 0, S.direction < 0
    lo[:, up_only] = np.maximum(lo[:, up_only], X[:, up_only])
    hi[:, down_only] = np.minimum(hi[:, down_only], X[:, down_only])
    Xn = np.clip(X, lo, hi).astype(np.float64)
    feasible = ~np.any((lo > hi) & free[None, :], axis=1)
    with np.errstate(invalid="ignore"):
        move = np.where(free[None, :], G * np.abs(Xn - X), 0.0)
    move = np.where(np.isnan(move), 0.0, move)   # inf * 0 (never-moved feature, no move) costs nothing
    cost = move.sum(axis=1)
    for g in S.groups:
        g = np.asarray(g)
        admissible = (path.lo[g] <= 1) & (path.hi[g] >= 1)                 # column may be the active one
        others_ok = (path.lo[g] <= 0) & (path.hi[g] >= 0)                   # column may be 0
        # target t is admissible iff t may be 1 and every other column may be 0
        ok = np.array([admissible[t] and np.all(np.delete(others_ok, t)) for t in range(len(g))])
        active = np.argmax(X[:, g], axis=1)
        Xn[:, g] = X[:, g]
        stay = ok[active]
        gcost = np.where(stay, 0.0, np.inf)
        if ok.any():
            cand = np.where(ok[None, :], G[:, g], np.inf)             # cost of the target column
            tgt = np.argmin(cand, axis=1)
            move_cost = G[np.arange(n), g[active]] + cand[np.arange(n), tgt]
            gcost = np.where(stay, 0.0, move_cost)
            mv = ~stay & np.isfinite(move_cost)
            rows = np.nonzero(mv)[0]
            Xn[rows[:, None], g[None, :]] = 0.0
            Xn[rows, g[tgt[rows]]] = 1.0
        cost = cost + gcost
    cost = np.where(feasible, cost, np.inf)
    return cost, Xn


@dataclass
class AttackResult:
    correct_nominal: np.ndarray   # (n,) bool
    attacked: np.ndarray          # (n,) bool: misclassified by the worst-case shift
    psi: np.ndarray               # (n,) cheapest misclassifying shift cost (0 if nominally wrong)
    X_shifted: np.ndarray         # (n, F) the worst-case perturbed data
    spent: float

    @property
    def worst_case_correct(self) -> int:
        return int((self.correct_nominal & ~self.attacked).sum())


def attack(X: np.ndarray, y: np.ndarray, S: ShiftSet, paths: list[Path], nominal_label: np.ndarray,
           tol: float = 1e-9) -> AttackResult:
    """Algorithm 1: per-sample cheapest misclassifying path, then cheapest-first within the budget."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if S.gamma.shape != X.shape:
        raise InputError(f"costs have shape {S.gamma.shape} but X has shape {X.shape}")
    S.check_data(X)
    correct = nominal_label == y
    psi = np.full(n, np.inf)
    best = X.copy()
    for p in paths:
        wrong = y != p.label
        if not wrong.any():
            continue
        rows = np.nonzero(wrong)[0]
        c, Xn = path_costs(X[wrong], S, p, rows)
        better = c < psi[rows]
        psi[rows[better]] = c[better]
        best[rows[better]] = Xn[better]
    psi[~correct] = 0.0
    best[~correct] = X[~correct]
    order = np.argsort(np.where(correct, psi, np.inf), kind="stable")
    attacked = np.zeros(n, dtype=bool)
    spent = 0.0
    for i in order:
        if not correct[i] or not np.isfinite(psi[i]) or spent + psi[i] > S.budget + tol:
            break
        attacked[i] = True
        spent += psi[i]
    X_shifted = X.copy()
    X_shifted[attacked] = best[attacked]
    return AttackResult(correct, attacked, psi, X_shifted, spent)


def tree_paths(tree, n_features: int) -> list[Path]:
    """Decision paths of an opttrees Tree whose splits are x_f < t (integer data: x_f <= ceil(t) - 1)."""
    out = []

    def rec(t, lo, hi):
        if tree.is_leaf(t):
            out.append(Path(lo.copy(), hi.copy(), int(tree.label[t]), int(t)))
            return
        f = int(tree.feature[t])
        if f < 0:
            raise InputError("the robust adversary handles parallel splits only")
        thr = float(tree.threshold[t])
        left_hi = np.ceil(thr) - 1          # integer x < thr  <=>  x <= ceil(thr) - 1
        l_hi = hi.copy(); l_hi[f] = min(hi[f], left_hi)
        rec(tree.children_left[t], lo, l_hi)
        r_lo = lo.copy(); r_lo[f] = max(lo[f], left_hi + 1)
        rec(tree.children_right[t], r_lo, hi)

    rec(0, np.full(n_features, -np.inf), np.full(n_features, np.inf))
    return out


def worst_case_accuracy(tree, X, y_codes, S: ShiftSet) -> AttackResult:
    """Exact worst-case outcome of a Tree (integer data, encoded labels) under the set S."""
    X = np.asarray(X, dtype=np.float64)
    nominal = tree.label[tree.apply(X)]
    return attack(X, np.asarray(y_codes), S, tree_paths(tree, X.shape[1]), nominal)
