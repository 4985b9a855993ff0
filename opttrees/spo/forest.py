"""SPO Forest (SPOT paper §4.3): bagged greedy trees with per-node feature bagging.

Prediction averages the trees' leaf *mean cost vectors* and makes one oracle call on the average
(the paper's "mean" aggregation), so the forest's decision is always feasible and optimal for its
predicted cost. Trees are fitted in parallel with joblib; each gets its own seed from one master seed.
The trees are grown unpruned, as in the paper's forests: the forest has no complexity cost (alpha = 0 in
the SPOT objective of :mod:`opttrees.spo.objective`, which single trees and the MILP share).
"""
from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed

from .greedy import grow_spo_tree


def _fit_one(problem, X, C, w, seed, max_depth, min_samples_leaf, criterion, quantile_step, max_features,
             bootstrap):
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    if bootstrap:
        counts = np.bincount(rng.integers(0, n, n), minlength=n).astype(float)
        keep = counts > 0
        Xb, Cb, wb = X[keep], C[keep], (w * counts)[keep]
    else:
        Xb, Cb, wb = X, C, w
    return grow_spo_tree(problem, Xb, Cb, wb, max_depth=max_depth, min_samples_leaf=min_samples_leaf,
                         criterion=criterion, quantile_step=quantile_step, max_features=max_features,
                         random_state=rng.integers(2**31))


def fit_forest(problem, X, C, w, n_estimators=100, max_depth=None, min_samples_leaf=20, criterion="spo",
               quantile_step=0.01, max_features=None, bootstrap=True, n_jobs=None, random_state=0):
    """Fit ``n_estimators`` unpruned greedy trees on bootstrap samples (counts become sample weights)."""
    seeds = np.random.SeedSequence(random_state).generate_state(n_estimators)
    return Parallel(n_jobs=n_jobs)(
        delayed(_fit_one)(problem, X, C, w, int(s), max_depth, min_samples_leaf, criterion, quantile_step,
                          max_features, bootstrap) for s in seeds)


def forest_mean_cost(trees, X) -> np.ndarray:
    """Average of the trees' predicted (leaf mean) cost vectors."""
    acc: np.ndarray | None = None
    for t in trees:
        v = t.value[t.apply(X)]
        acc = v if acc is None else acc + v
    assert acc is not None, "forest_mean_cost needs at least one tree"
    return acc / len(trees)
