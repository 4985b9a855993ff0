"""The prescriptive objective from per-(leaf, treatment) statistics, shared by every method.

The local search (:mod:`opttrees.prescriptive.search`), the dynamic program (:mod:`opttrees.prescriptive.dp`),
the MIO (:mod:`opttrees.prescriptive.mio`) and the estimators all score a tree with this module (the numba
kernels evaluate the same formulas, :mod:`opttrees.prescriptive._kernels`), so ``mu``, ``alpha``,
``n_treatment`` and ``min_samples_leaf`` mean the same thing everywhere.

**How the two terms of the thesis's (6.3) are scaled (our decision; the thesis gives none).** With the
internal, minimised outcome y (``-outcome`` when larger is better), its mean ȳ and standard deviation s over
the training rows, L̂ = n s² (the squared error of the root-only prediction, ORT's L̂), and C the number of
splits::

    OPT(mu):    mu * mean_i(ŷ_i(τ(x_i)) - ȳ) / s  +  (1 - mu) * Σ_i (y_i - ŷ_i(z_i))² / L̂  +  alpha * C
    OPT(mu)-L:  the same with lasso counterfactuals, plus (1 - mu) * lam * Σ_(leaf, treatment) ‖β‖₁ in the
                prediction term (lam on the ORT-L scale: per leaf and treatment the lasso is glmnet's with
                λ_GLM = lam * L̂ / (2 n_group), features scaled to [0, 1])
    policy:     mean_i(Γ_i,τ(x_i) - ȳ) / s  +  alpha * C        (Γ: teacher scores, see teacher.py)

Why: dividing the prescription term by n s and the prediction term by n s² makes both unit-free and of
order one, so the objective does not change when the outcome is shifted or rescaled, mu weighs comparable
quantities, and alpha means what it means for ORT (with mu = 0 and one treatment, OPT is exactly ORT's
SSE / L̂ + alpha * C). On data whose outcome has unit variance (the thesis's synthetic study) this is the
thesis's raw (6.3) divided by n, so mu keeps the thesis's meaning there. The prescription term uses the
observed outcome on the observed arm and the leaf's estimate elsewhere ((6.1)); with leaf means the leaf's
total for treatment t is N·ȳ_t, with lasso leaves it is Σ_i f_t(x_i) (the lasso intercept makes
the fitted values of a group sum to its outcomes).

Infeasible leaves: fewer than ``min_samples_leaf`` rows, or no treatment with ``n_treatment`` rows in the leaf
(the thesis leaves this open; we treat it like a too-small leaf). A treatment with fewer rows still counts in
the prediction term; it just cannot be prescribed there.

Raw costs (what the kernels and the DP add up) are ``a`` times the prescription total plus ``b`` times the
prediction term, with a = mu·s and b = 1 - mu (a = s, b = 0 for policy trees); normalised = raw / L̂.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from . import _kernels
from ..data.prescriptive import PrescriptiveData

KIND_OPT, KIND_POLICY, KIND_LINEAR = _kernels.KIND_OPT, _kernels.KIND_POLICY, _kernels.KIND_LINEAR
KIND_NAMES = {KIND_OPT: "opt", KIND_POLICY: "policy", KIND_LINEAR: "opt-linear"}


@dataclass
class PrescriptiveProblem:
    """Data, objective settings and the per-row statistics of one fit."""

    data: PrescriptiveData
    kind: int
    mu: float
    n_treatment: int
    min_samples_leaf: int
    Z: np.ndarray                  # (n, S) per-row statistics (see _kernels)
    zlo: np.ndarray                # (n,) first non-zero column of Z[i]
    zhi: np.ndarray                # (n,) one past the last
    lam: float = 0.0               # OPT-L: lasso weight on the normalised scale
    gamma: np.ndarray | None = None  # policy trees: (n, m) teacher scores in internal (minimised) units
    lasso_tol: float = 1e-8
    lasso_max_iter: int = 2000

    @property
    def m(self) -> int:
        return self.data.m

    @property
    def baseline(self) -> float:
        return self.data.baseline

    @property
    def a(self) -> float:
        return self.data.scale * (1.0 if self.kind == KIND_POLICY else self.mu)

    @property
    def b(self) -> float:
        return 0.0 if self.kind == KIND_POLICY else 1.0 - self.mu

    @property
    def p_lin(self) -> int:
        return self.data.p if self.kind == KIND_LINEAR else 0

    def ip(self) -> np.ndarray:
        return np.array([self.m, self.n_treatment, self.min_samples_leaf, self.p_lin, self.lasso_max_iter], np.int64)

    def fp(self) -> np.ndarray:
        return np.array([self.a, self.b, self.lam * self.baseline, self.lasso_tol])


def _check_mu(mu) -> float:
    try:
        v = float(mu)
    except (TypeError, ValueError):
        raise InputError(f"mu={mu!r} is not valid: expected a number in [0, 1]") from None
    if not 0.0 <= v <= 1.0:
        raise InputError(f"mu={mu!r} is not valid: expected a number in [0, 1] (the weight of the prescription term)")
    return v


def make_problem(data: PrescriptiveData, kind: int = KIND_OPT, mu: float = 0.5, n_treatment: int = 1,
                 min_samples_leaf: int = 1, lam: float = 0.0, gamma=None) -> PrescriptiveProblem:
    """The per-row statistics of ``kind`` for ``data`` (outcomes centred at ȳ: better conditioned sums)."""
    mu = _check_mu(mu)
    n, m = data.n, data.m
    t = data.treatment
    yc = data.y - data.ybar
    if kind == KIND_OPT:
        Z = np.zeros((n, 3 * m))
        Z[np.arange(n), 3 * t] = 1.0
        Z[np.arange(n), 3 * t + 1] = yc
        Z[np.arange(n), 3 * t + 2] = yc * yc
        zlo, zhi = 3 * t, 3 * t + 3
    elif kind == KIND_POLICY:
        if gamma is None:
            raise InputError("policy trees need teacher scores (gamma, one column per treatment)")
        G = np.asarray(gamma, dtype=np.float64)
        if G.shape != (n, m):
            raise InputError(f"teacher scores must have shape ({n}, {m}) (rows x treatments); got {G.shape}")
        if not np.isfinite(G).all():
            raise InputError("teacher scores contain NaN/infinite values")
        Z = np.zeros((n, 2 * m))
        Z[:, :m] = G - data.ybar
        Z[np.arange(n), m + t] = 1.0
        zlo, zhi = np.zeros(n, np.int64), np.full(n, 2 * m, np.int64)
        gamma = G
    elif kind == KIND_LINEAR:
        if lam < 0 or not np.isfinite(lam):
            raise InputError(f"lasso_lambda={lam!r} is not valid: expected a finite number >= 0")
        Z, q = linear_statistics(t, data.Xs, yc, m)
        zlo, zhi = q * t, q * t + q
    else:
        raise InputError(f"unknown prescriptive objective kind {kind!r}")
    return PrescriptiveProblem(data, kind, mu, int(n_treatment), int(min_samples_leaf), np.ascontiguousarray(Z),
                               np.ascontiguousarray(zlo, dtype=np.int64), np.ascontiguousarray(zhi, dtype=np.int64),
                               float(lam), gamma)


def linear_statistics(t: np.ndarray, Xs: np.ndarray, yc: np.ndarray, m: int):
    """Per-row Gram statistics of [1, x, y] in the row's treatment block (layout: see ``_kernels.lasso_group``)."""
    n, p = Xs.shape
    q = _kernels.linear_block_size(p)
    ju, ku = np.triu_indices(p)
    block = np.empty((n, q))
    block[:, 0] = 1.0
    block[:, 1:p + 1] = Xs
    block[:, p + 1] = yc
    block[:, p + 2:p + 2 + len(ju)] = Xs[:, ju] * Xs[:, ku]
    block[:, p + 2 + len(ju):p + 2 + len(ju) + p] = Xs * yc[:, None]
    block[:, -1] = yc * yc
    Z = np.zeros((n, m * q))
    for s in range(m):
        rows = t == s
        Z[rows, s * q:(s + 1) * q] = block[rows]
    return Z, q


# ---------------------------------------------------------------------------------------------- leaf costs
def leaf_costs(prob: PrescriptiveProblem, V: np.ndarray):
    """(raw costs, prescribed treatments) of leaves with summed statistics ``V`` (..., S); inf / -1 if infeasible.

    Vectorised for the constant and policy kinds (the DP evaluates thousands of candidate leaves at once).
    """
    V = np.asarray(V, dtype=np.float64)
    shape = V.shape[:-1]
    V2 = V.reshape(-1, V.shape[-1])
    m = prob.m
    minl = max(1, prob.min_samples_leaf)
    if prob.kind == KIND_LINEAR:
        costs = np.empty(len(V2))
        labels = np.empty(len(V2), np.int64)
        beta = np.zeros((m, prob.p_lin + 1))
        C = np.zeros((max(prob.p_lin, 1), max(prob.p_lin, 1)))
        ip, fp = prob.ip(), prob.fp()
        for r in range(len(V2)):
            beta[:] = 0.0
            costs[r], labels[r] = _kernels.leaf_eval(prob.kind, V2[r], ip, fp, beta, C)
        return costs.reshape(shape), labels.reshape(shape)
    if prob.kind == KIND_OPT:
        cnt, s1, s2 = V2[:, 0::3], V2[:, 1::3], V2[:, 2::3]
        nt = max(1, prob.n_treatment)
        N = cnt.sum(axis=1)
        has = cnt > 0.5
        safe = np.where(has, cnt, 1.0)
        sse = np.where(has, np.maximum(s2 - s1 * s1 / safe, 0.0), 0.0).sum(axis=1)
        presc = np.where(cnt + 0.5 >= nt, N[:, None] * s1 / safe, np.inf)
        extra = prob.b * sse
    else:
        score, cnt = V2[:, :m], V2[:, m:]
        N = cnt.sum(axis=1)
        presc = np.where(cnt + 0.5 >= prob.n_treatment, score, np.inf)
        extra = 0.0
    lab = np.argmin(presc, axis=1)
    best = presc[np.arange(len(V2)), lab]
    bad = ~np.isfinite(best) | (N + 0.5 < minl)
    cost = prob.a * np.where(bad, 0.0, best) + extra
    cost = np.where(bad, np.inf, cost)
    lab = np.where(bad, -1, lab)
    return cost.reshape(shape), lab.reshape(shape)


def node_statistics(tree, prob: PrescriptiveProblem, X=None) -> tuple[np.ndarray, np.ndarray]:
    """(n_nodes, S) summed statistics of the training rows through every node (leaves and branches), and
    each row's leaf."""
    X = prob.data.X if X is None else X
    path = tree.decision_path(X)
    V = np.asarray(path.T @ prob.Z)
    return V, tree.apply(X)


def tree_objective(tree, prob: PrescriptiveProblem, alpha: float = 0.0) -> float:
    """The normalised objective of ``tree`` on the training data (inf when a leaf is infeasible).

    Recomputed from the rows routed through the tree, so it is the same number whichever method built it.
    """
    V, _ = node_statistics(tree, prob)
    costs, _ = leaf_costs(prob, V[tree.leaves])
    return float(costs.sum() / prob.baseline + alpha * tree.n_splits)


# ---------------------------------------------------------------------------------------------- payloads
def fill_payload(tree, prob: PrescriptiveProblem):
    """Set the prescription payload of every node of ``tree`` (in place) and return it.

    - ``label``: the prescribed treatment (index into ``classes``), for branch nodes too (what the node would
      prescribe as a leaf);
    - ``value`` (n_nodes, m): each treatment's estimated mean outcome in the node, in the user's outcome units:
      the treatment's mean observed outcome (OPT; a node without rows of a treatment takes its nearest
      ancestor's estimate), the mean teacher score (policy trees), or the mean lasso prediction over the node's
      rows (OPT-L);
    - ``extras["treatment_counts"]`` (n_nodes, m); for OPT-L also ``extras["outcome_coef"]`` (n_nodes, m, p + 1):
      per treatment [intercept, coefficients] in original feature units (predict_outcomes reads them).
    """
    data = prob.data
    m = prob.m
    tree.task = "prescription"
    tree.classes = list(data.classes)
    V, _ = node_statistics(tree, prob)
    path = tree.decision_path(data.X)
    counts = np.asarray(path.T @ np.eye(m)[data.treatment])
    nn = tree.n_nodes
    if prob.kind == KIND_LINEAR:
        labels, value, coef = _linear_payload(tree, prob, V, path)
        tree.extras["outcome_coef"] = coef
    else:
        _, labels = leaf_costs(prob, V)
        if prob.kind == KIND_OPT:
            sums = V[:, 1::3] + data.ybar * counts
            value = np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), np.nan)
            parents = tree.parents()
            for t in tree.preorder():               # parents before children: fill gaps from the ancestor
                gap = np.isnan(value[t])
                if gap.any():
                    value[t, gap] = value[parents[t], gap] if parents[t] >= 0 else data.ybar
        else:
            N = np.maximum(counts.sum(axis=1), 1.0)
            value = V[:, :m] / N[:, None] + data.ybar
    # a node that cannot prescribe (only possible for branch nodes of an infeasible tree): its best estimate
    labels = np.where(labels >= 0, labels, np.argmin(value, axis=1))
    tree.label = labels.astype(np.int64)
    tree.value = np.asarray(data.to_user(value), dtype=np.float64).reshape(nn, m)
    tree.extras["treatment_counts"] = counts
    return tree


def _linear_payload(tree, prob: PrescriptiveProblem, V, path):
    data = prob.data
    m, p = prob.m, data.p
    ip, fp = prob.ip(), prob.fp()
    beta = np.zeros((m, p + 1))
    C = np.zeros((p, p))
    labels = np.full(tree.n_nodes, -1, np.int64)
    coef = np.zeros((tree.n_nodes, m, p + 1))
    value = np.zeros((tree.n_nodes, m))
    q = _kernels.linear_block_size(p)
    sc = data.scaling
    rows_of = path.T.tocsr()
    parents = tree.parents()
    for t in tree.preorder():
        beta[:] = 0.0
        _, labels[t] = _kernels.leaf_eval(prob.kind, V[t], ip, fp, beta, C)
        for s in range(m):
            if V[t, q * s] < 0.5:                   # no row of s here: the ancestor's model (root: the mean)
                coef[t, s] = coef[parents[t], s] if parents[t] >= 0 else np.r_[data.ybar, np.zeros(p)]
                continue
            b_scaled, b0 = beta[s, :p], beta[s, p] + data.ybar
            coef[t, s, 0] = b0 - float(np.sum(b_scaled * sc.lo / sc.span))
            coef[t, s, 1:] = b_scaled / sc.span
        idx = rows_of[t].indices
        if len(idx):
            value[t] = (coef[t, :, 0][None, :] + data.X[idx] @ coef[t, :, 1:].T).mean(axis=0)
        else:
            value[t] = coef[t, :, 0]
    # back to user units: the stored coefficients describe the internal outcome
    if data.sense == "max":
        coef = -coef
    return labels, value, coef


def outcomes(tree, X) -> np.ndarray:
    """(n, m) estimated outcome of every treatment for the rows of X, in the user's units, from a fitted Tree alone
    (constant leaves: ``value``; OPT-L: ``extras["outcome_coef"]``), so a saved tree predicts them too."""
    if tree.task != "prescription":
        raise InputError(f"outcome estimates need a prescription tree; got task {tree.task!r}")
    leaf = tree.apply(X)
    coef = tree.extras.get("outcome_coef")
    if coef is None:
        return tree.value[leaf]
    from ..data.prepared import check_X
    Xa = check_X(X, tree.n_features)
    c = coef[leaf]                                   # (n, m, p + 1)
    return c[:, :, 0] + np.einsum("nmp,np->nm", c[:, :, 1:], Xa)
