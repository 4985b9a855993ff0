"""Greedy SPOT (SPOT paper §4.1) and, with ``criterion="mse"``, the paper's CART baseline on the same engine.

Why it is fast: by Theorem 1 a leaf's best prediction is its mean cost c̄ and its decision w*(c̄); the
leaf's total regret is then ``S·w*(c̄) − Σ ω z*`` with S = Σ ω c, so every candidate split's loss comes from
prefix sums of the sorted node data plus *one* oracle call on the stacked means of all candidate children
of the node (all features, all thresholds). The z*(c_i) terms sum to a node constant and cancel.

Both criteria make leaf decisions w*(c̄); they differ only in how splits are chosen (SPO regret vs squared
error of the cost vector), exactly as in the paper's experiments. Numeric splits only; thresholds are
midpoints between adjacent distinct node values (left iff x < threshold), candidates at quantiles of the
node's unique values (reference code: ``np.percentile(unique, q, 'higher')``).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import sparse

from ..data.costs import check_costs_fit
from ..errors import InputError
from ..tree import LEAF, Tree


def candidate_thresholds(x: np.ndarray, quantile_step: float | None) -> np.ndarray:
    """Node values -> increasing midpoint thresholds (left iff x < threshold), one per candidate split."""
    uniq = np.unique(x)
    if len(uniq) < 2:
        return np.zeros(0)
    step = quantile_step if quantile_step and quantile_step > 0 else None
    nq = math.ceil(1.0 / step) - 1 if step is not None else len(uniq)
    if step is not None and nq < len(uniq) - 1:
        s = np.percentile(uniq, 100.0 * step * np.arange(1, nq + 1), method="higher")
        s = np.unique(s)
        s = s[s > uniq[0]]
    else:
        s = uniq[1:]
    pos = np.searchsorted(uniq, s)
    mid = 0.5 * (uniq[pos - 1] + s)
    return np.where(mid > uniq[pos - 1], mid, s)  # float guard: a midpoint must separate the two values


class _Builder:
    """Grows one tree; node arrays are appended in preorder."""

    def __init__(self, problem, X, C, w, criterion, max_depth, min_samples_leaf, quantile_step,
                 max_features, rng):
        self.problem = problem
        self.X = X
        self.Cm = problem.sign * C           # min-cost form: regret = Cm·w - z
        self.C = C
        self.w = w
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_leaf = float(min_samples_leaf)
        self.q = quantile_step
        self.max_features = max_features
        self.rng = rng
        _, self.z = problem._solve_min(self.Cm)
        self.left, self.right, self.feature, self.threshold = [], [], [], []
        self.mean, self.decision, self.weight, self.loss, self.spo = [], [], [], [], []

    def _new_node(self, idx):
        w = self.w[idx]
        W = w.sum()
        S = w @ self.Cm[idx]
        mean_m = S / W if W > 0 else np.ones(self.Cm.shape[1])
        dec, _ = self.problem._solve_min(mean_m[None, :])
        dec = dec[0]
        spo = float(S @ dec - w @ self.z[idx])
        if self.criterion == "spo":
            loss = spo
        else:
            loss = float(w @ (self.Cm[idx] ** 2).sum(axis=1) - (S @ S) / W) if W > 0 else 0.0
        t = len(self.left)
        self.left.append(LEAF), self.right.append(LEAF), self.feature.append(LEAF), self.threshold.append(0.0)
        self.mean.append(self.problem.sign * mean_m), self.decision.append(dec)
        self.weight.append(W), self.loss.append(max(loss, 0.0)), self.spo.append(max(spo, 0.0))
        return t

    def _best_split(self, idx):
        Xn, Cn, wn = self.X[idx], self.Cm[idx], self.w[idx]
        W = wn.sum()
        S_tot = wn @ Cn
        p = Xn.shape[1]
        feats = np.arange(p)
        if self.max_features is not None and self.max_features < p:
            feats = np.sort(self.rng.choice(p, self.max_features, replace=False))
        fj, thr, SL, WL, QL = [], [], [], [], []
        need_q = self.criterion == "mse"
        WC = wn[:, None] * Cn
        WQ = wn * (Cn ** 2).sum(axis=1) if need_q else None
        n_node = len(wn)
        for j in feats:
            xj = Xn[:, j]
            mid = candidate_thresholds(xj, self.q)
            if not len(mid):
                continue
            # segment g holds the rows with mid[g-1] <= x < mid[g]; candidate k's left child = segments 0..k
            seg = np.searchsorted(mid, xj, side="right")
            K = len(mid)
            P = sparse.csr_matrix((np.ones(n_node), (seg, np.arange(n_node))), shape=(K + 1, n_node))
            wl = np.cumsum(P @ wn)[:K]
            ok = (wl >= self.min_leaf) & (W - wl >= self.min_leaf) & (wl > 0) & (W - wl > 0)
            if not ok.any():
                continue
            sl = np.cumsum(P @ WC, axis=0)[:K]
            fj.append(np.full(ok.sum(), j)), thr.append(mid[ok]), SL.append(sl[ok]), WL.append(wl[ok])
            if need_q:
                QL.append(np.cumsum(P @ WQ)[:K][ok])
        if not fj:
            return None
        fj, thr, SL, WL = np.concatenate(fj), np.concatenate(thr), np.vstack(SL), np.concatenate(WL)
        SR, WR = S_tot - SL, W - WL
        if self.criterion == "spo":
            means = np.vstack([SL / WL[:, None], SR / WR[:, None]])
            dec, _ = self.problem._solve_min(means)
            m = len(WL)
            loss = np.einsum("ij,ij->i", SL, dec[:m]) + np.einsum("ij,ij->i", SR, dec[m:])
            loss = loss - wn @ self.z[idx]
        else:
            QL = np.concatenate(QL)
            Q = wn @ (Cn ** 2).sum(axis=1)
            loss = (QL - (SL * SL).sum(axis=1) / WL) + ((Q - QL) - (SR * SR).sum(axis=1) / WR)
        b = int(np.argmin(loss))   # ties: first feature, then first threshold
        return int(fj[b]), float(thr[b])

    def build(self):
        n = self.X.shape[0]
        root_idx = np.arange(n)
        root = self._new_node(root_idx)
        stack = [(root, root_idx, 0)]
        while stack:
            t, idx, depth = stack.pop()
            if self.max_depth is not None and depth >= self.max_depth:
                continue
            if self.weight[t] < 2 * self.min_leaf or len(idx) < 2:
                continue
            if np.ptp(self.Cm[idx], axis=0).max() == 0.0:
                continue
            best = self._best_split(idx)
            if best is None:
                continue
            j, s = best
            go_left = self.X[idx, j] < s
            li, ri = idx[go_left], idx[~go_left]
            self.feature[t], self.threshold[t] = j, s
            lt = self._new_node(li)
            self.left[t] = lt
            rt = self._new_node(ri)
            self.right[t] = rt
            stack.append((rt, ri, depth + 1))
            stack.append((lt, li, depth + 1))
        return self

    def to_tree(self, feature_names=None) -> Tree:
        return Tree(self.left, self.right, self.feature, self.threshold, np.array(self.mean), task="spo",
                    feature_names=feature_names, n_features=self.X.shape[1],
                    extras={"decision": np.array(self.decision), "weight": np.array(self.weight),
                            "train_loss": np.array(self.loss), "train_spo": np.array(self.spo)})


def grow_spo_tree(problem, X, C, sample_weight=None, max_depth: int | None = None, min_samples_leaf: float = 1,
                  criterion: str = "spo", quantile_step: float = 0.01, max_features: int | None = None,
                  random_state=None, feature_names=None) -> Tree:
    """Grow a greedy tree (unpruned). ``min_samples_leaf`` is a minimum *weight* per leaf.

    Leaves carry the weighted mean cost (``value``) and its decision (``extras["decision"]``); every node,
    internal ones too, also carries ``extras["weight"]``, ``extras["train_loss"]`` (weighted split-criterion
    loss if it were a leaf) and ``extras["train_spo"]`` (weighted SPO regret if it were a leaf) for pruning.
    """
    if criterion not in ("spo", "mse"):
        raise InputError(f"criterion must be 'spo' or 'mse'; got {criterion!r}")
    if max_depth is not None and (int(max_depth) != max_depth or max_depth < 0):
        raise InputError(f"max_depth must be a non-negative integer or None; got {max_depth!r}")
    if not min_samples_leaf > 0:
        raise InputError(f"min_samples_leaf must be positive; got {min_samples_leaf!r}")
    if not (quantile_step is None or 0 < quantile_step <= 1):
        raise InputError(f"quantile_step must be in (0, 1] or None (all values); got {quantile_step!r}")
    X, C, w = check_costs_fit(problem, X, C, sample_weight)
    rng = np.random.default_rng(random_state)
    if max_features is not None:
        max_features = int(max(1, min(int(max_features), X.shape[1])))
    b = _Builder(problem, X, C, w, criterion, max_depth, min_samples_leaf, quantile_step, max_features, rng)
    return b.build().to_tree(feature_names)
