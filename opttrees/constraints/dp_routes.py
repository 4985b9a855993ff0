"""Declared constraints solved by dynamic programming: group fairness (Pareto fronts) and feature budgets
(maximal feature sets), alone or together.

Why two mechanisms: a fairness gap is a sum over leaves, so it enters the DP as value components (the Pareto DP,
:mod:`opttrees.constraints.fairness_dp`). A feature budget is not (a feature used in both subtrees is paid once), but it
only restricts *which features* the tree may use: a tree meets ``MaxFeatures`` / ``FeatureCost`` /
``ForbidFeatures`` (at every depth) iff the features it splits on lie in a feasible set, and every feasible set
lies in a *maximal* one. So the constrained optimum is the best of the DP optima restricted to each maximal
feasible feature set (a tree of depth D uses at most 2^D - 1 features, which caps the sets). This is exact;
its cost is the number of sets (capped by :data:`MAX_FEATURE_SETS`, an error naming the cap beyond it).
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import InputError
from ..interrupt import STOP, Budget
from ..solvers.result import Incumbent, finish
from .declarations import FeatureCost, ForbidFeatures, MaxFeatures
from .fairness import FAIRNESS

#: constraint types on the features a tree uses, solved by enumerating maximal feature sets
FEATURE_SET_TYPES = (MaxFeatures, FeatureCost, ForbidFeatures)
#: most maximal feature sets the DP enumerates (each is one DP run)
MAX_FEATURE_SETS = 2000
#: seconds per unit of work (binary columns ^ depth x rows) of the fairness Pareto DP at depth 2; x 8 per extra
#: level. Measured (2 shared cores): 995 columns x 200 rows at depth 2 (2e8) in 6-11 s; 22 columns x 341 rows at
#: depth 3 (3.6e6) in 1.0-1.8 s and at depth 4 (8e7) in 221 s (pruning by the incumbent weakens with depth).
FAIR_DP_SECONDS_PER_WORK = 5e-8


def fair_dp_seconds(n_columns: int, n_rows: int, depth: int) -> float:
    """Predicted seconds of the fairness Pareto DP (see :data:`FAIR_DP_SECONDS_PER_WORK`)."""
    return FAIR_DP_SECONDS_PER_WORK * 8.0 ** max(depth - 2, 0) * float(max(n_columns, 1)) ** depth * n_rows


#: largest binary matrix (rows x columns) the constrained DP builds (the Pareto DP keeps it as float64)
MAX_DP_CELLS = 5e7


def dp_solvable(constraints) -> bool:
    """Whether the DP solves these constraints exactly: group fairness (one positive class for all of them) and
    feature budgets (``MaxFeatures``, ``FeatureCost``, ``ForbidFeatures`` at every depth)."""
    if not constraints:
        return False
    for c in constraints:
        if isinstance(c, ForbidFeatures) and c.at_depths is not None:
            return False
        if not isinstance(c, FAIRNESS + FEATURE_SET_TYPES):
            return False
    pos = {c._pos for c in constraints if isinstance(c, FAIRNESS) and hasattr(c, "_pos")}
    return len(pos) <= 1


def dp_part(constraints) -> list:
    """The constraints among ``constraints`` the DP can solve (a relaxation of all of them)."""
    part = [c for c in constraints if dp_solvable([c])]
    fair = [c for c in part if isinstance(c, FAIRNESS)]
    if fair and not dp_solvable(fair):     # several positive classes: keep the first one's notions
        part = [c for c in part if not isinstance(c, FAIRNESS) or c._pos == fair[0]._pos]
    return part


def feature_sets(constraints, p: int, max_depth: int) -> list[list[int]]:
    """The maximal sets of features (0..p-1) a tree of depth <= ``max_depth`` may draw its splits from under the
    feature-budget constraints (bound to the data); protected columns of fairness constraints without
    ``allow_split`` are left out. A tree meets the constraints iff its features lie in one of the sets."""
    blocked = {j for c in constraints if isinstance(c, ForbidFeatures) for j in c._f}
    blocked |= {c._j for c in constraints if isinstance(c, FAIRNESS) and not c.allow_split}
    allowed = [j for j in range(p) if j not in blocked]
    cap = 2 ** int(max_depth) - 1                   # most distinct features a tree of this depth uses
    ks = [c.k for c in constraints if isinstance(c, MaxFeatures)]
    budgets = [(c._c, c.budget) for c in constraints if isinstance(c, FeatureCost)]
    kmax = min(ks + [cap])
    limited = [j for j in allowed if ks or any(cost[j] > 0 for cost, _ in budgets)]
    free = [j for j in allowed if j not in limited]
    if len(limited) <= kmax and all(sum(cost[j] for j in limited) <= b for cost, b in budgets):
        return [allowed]
    out: list[list[int]] = []
    visits = [0]

    def fits(T, j) -> bool:
        return len(T) < kmax and all(sum(cost[i] for i in T) + cost[j] <= b + 1e-12 for cost, b in budgets)

    def rec(i: int, T: list[int]) -> None:
        visits[0] += 1
        if visits[0] > 50 * MAX_FEATURE_SETS:
            raise InputError(_too_many(len(limited), kmax))
        if i == len(limited):
            if not any(j not in T and fits(T, j) for j in limited):      # maximal
                out.append(sorted(free + T))
                if len(out) > MAX_FEATURE_SETS:
                    raise InputError(_too_many(len(limited), kmax))
            return
        if fits(T, limited[i]):
            rec(i + 1, T + [limited[i]])
        rec(i + 1, T)

    rec(0, [])
    return out


def _too_many(m: int, k: int) -> str:
    return (f"the dynamic program enumerates the maximal feature sets the budget allows, and {m} limited features "
            f"with up to {k} per tree give more than {MAX_FEATURE_SETS}; use method='mio', a tighter budget, or "
            "fewer features")


def fair_dp_depth(data, binarizer, max_depth: int, seconds: float) -> int:
    """The deepest depth <= ``max_depth`` at which the fairness Pareto DP is predicted to finish in ``seconds``
    (:func:`fair_dp_seconds`), to start (and, at ``max_depth``, bound) an MIO fit; 0 when not even depth one."""
    m = binarizer.transform(np.asarray(data.X[:1], dtype=np.float64)).shape[1]
    d = int(max_depth)
    while d > 0 and fair_dp_seconds(m, data.n, d) > seconds:
        d -= 1
    return d


def solve_dp_constrained(constraints, X, y, max_depth: int, min_samples_leaf: int = 1, alpha: float = 0.0,
                         sample_weight=None, time_limit=None, feature_names=None, binarizer=None,
                         binarization: str = "midpoints", n_thresholds: int = 10, n_jobs: int = 1,
                         regression: bool = False):
    """The optimal tree under ``constraints`` (bound to the training data; :func:`dp_solvable`): (Tree in X's
    units, SolveResult). Objective: weighted errors (squared error with ``regression=True``, feature budgets
    only) / the root leaf's loss + ``alpha`` per split, the estimators' own. With a time limit or Ctrl-C: the
    best tree found so far (no bound).

    Splits: a fitted ``binarizer``'s columns (a model's own split set), else ``binarization``: "midpoints",
    "exact" or "auto" (every midpoint; feature sets without fairness use :func:`opttrees.dp.solve_dp`'s fastest
    exact engine) or "quantile" (``n_thresholds`` per feature).
    """
    from ..data.binarizers import Binarizer
    from ..dp.api import solve_dp, solve_dp_columns
    from ..dp.tasks import ClassificationTask, RegressionTask

    if not dp_solvable(constraints):
        raise InputError("the dynamic program solves group fairness (statistical_parity, "
                         "conditional_statistical_parity, predictive_equality, equal_opportunity, equalized_odds) "
                         "and feature budgets (max_features, feature_cost, forbid_features at every depth) only")
    t0 = time.perf_counter()
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    fair = [c for c in constraints if isinstance(c, FAIRNESS)]
    if regression and fair:
        raise InputError("group fairness constraints need classification")
    new_task = RegressionTask if regression else ClassificationTask
    exact = binarization != "quantile"
    if binarizer is None and fair:
        binarizer = Binarizer("midpoints" if exact else "quantile", int(n_thresholds)).fit(X)
    Z = col_feature = None
    if binarizer is not None:
        m = binarizer.transform(X[:1]).shape[1]
        if float(n) * m > MAX_DP_CELLS:
            raise InputError(f"the constrained dynamic program's binary matrix would have {n} x {m} cells (more "
                             f"than {MAX_DP_CELLS:.0e}); use binarization='quantile' (n_thresholds sets the "
                             "columns per feature)")
        Z = binarizer.transform(X)
        col_feature = np.asarray([binarizer.decode(c)[0] for c in range(Z.shape[1])], np.int64)
    sets = feature_sets(constraints, p, max_depth)
    budget = Budget(time_limit)
    if Z is None and max_depth >= 3 and len(sets) > 1:
        # most promising sets first (by their depth-two optimum, cheap): a time limit then keeps a good tree
        def shallow(S):
            if not S or budget.stop():
                return np.inf
            return solve_dp(X[:, S], y, new_task(), 2, None, min_samples_leaf, alpha, sample_weight,
                            "auto" if exact else "quantile", int(n_thresholds), budget.remaining())[1].objective
        sets = [S for _, S in sorted(((shallow(S), k), S) for k, S in enumerate(sets))]
    best, best_res, stopped, runs = None, None, None, 0
    for S in sets:
        left = budget.remaining()
        if Z is not None and col_feature is not None:
            keep = np.flatnonzero(np.isin(col_feature, S))
            if fair:
                tree, res = _fair_on_columns(fair, X, y, Z, keep, binarizer, max_depth, min_samples_leaf, alpha,
                                             sample_weight, left)
            else:
                Zk, decode = _columns_or_leaf(Z, keep, binarizer, n)
                tree, res = solve_dp_columns(Zk, X, decode, y, task=new_task(),
                                             max_depth=max_depth if len(keep) else 0,
                                             min_samples_leaf=min_samples_leaf, alpha=alpha,
                                             sample_weight=sample_weight, time_limit=left)
        elif S:
            tree, res = solve_dp(X[:, S], y, new_task(), max_depth, None, min_samples_leaf, alpha,
                                 sample_weight, "auto" if exact else "quantile", int(n_thresholds), left,
                                 n_jobs=n_jobs)
            for k in range(tree.n_nodes):
                if not tree.is_leaf(k):
                    tree.feature[k] = S[int(tree.feature[k])]
        else:      # no feature allowed: the best single leaf (depth 0 over a placeholder column)
            tree, res = solve_dp(X[:, :1] * 0, y, new_task(), 0, None, min_samples_leaf, alpha,
                                 sample_weight, "quantile", 1, left)
        runs += 1
        if best_res is None or res.objective < best_res.objective - 1e-12:
            best, best_res = tree, res
        if res.status != "optimal":
            stopped = res.status
            break
    assert best is not None and best_res is not None
    best.n_features = p
    best.feature_names = feature_names
    if len(sets) == 1 and stopped is None:
        return best, best_res
    termination = stopped or "optimal"
    if termination not in ("optimal", "time_limit", "interrupted"):
        termination = "interrupted" if STOP.is_set() else "time_limit"
    runtime = time.perf_counter() - t0
    obj = float(best_res.objective)
    bound = obj if termination == "optimal" else None
    result = finish("dp-feature-sets", "opttrees-dp", termination, obj, bound, runtime, runs,
                    [Incumbent(runtime, obj, obj if bound is not None else float("nan"), 0.0)],
                    timings={"total": runtime, "feature_sets": len(sets), "feature_sets_solved": runs})
    return best, result


def _columns_or_leaf(Z, keep, binarizer, n):
    """(columns, split decoder) of ``Z`` restricted to ``keep``; one unused placeholder column when empty."""
    if not len(keep):
        return np.zeros((n, 1), np.uint8), (lambda c: (0, 0.5))
    return Z[:, keep], (lambda c: binarizer.decode(int(keep[c])))


def _fair_on_columns(fair, X, y, Z, keep, binarizer, max_depth, min_samples_leaf, alpha, sample_weight,
                     time_limit):
    """The Pareto DP over the columns ``keep`` of ``Z`` under the fairness constraints ``fair``."""
    from .fairness_dp import GroupFairnessTask
    from .pareto import solve_dp_pareto

    info = fair[0]._bound_info
    pairs = [pr for c in fair for pr in c.dp_pairs()]
    task = GroupFairnessTask(pairs, positive=info.classes[fair[0]._pos], alpha=alpha)
    cols = keep if len(keep) else np.zeros(1, np.int64)
    Zk = Z[:, cols] if len(keep) else np.zeros((len(X), 1), Z.dtype)
    tree, res, _ = solve_dp_pareto(Zk, y, task, max_depth if len(keep) else 0, min_samples_leaf, sample_weight,
                                   time_limit, return_front=False)
    for k in range(tree.n_nodes):
        if not tree.is_leaf(k):
            tree.feature[k], tree.threshold[k] = binarizer.decode(int(cols[int(tree.feature[k])]))
    return tree, res


__all__ = ["dp_solvable", "dp_part", "feature_sets", "fair_dp_depth", "solve_dp_constrained"]
