"""The SPOT training objective: one definition for greedy pruning, the MILP, the estimators and reports.

For a tree T with leaf decisions w_T(x) (the decision of the leaf x falls in) on training data (X, C, ω):

    F(T) = Σ_i ω_i [ c_i·w_T(x_i) − z*(c_i) ] / N   +   alpha · splits(T),      N = Σ_i ω_i |z*(c_i)|

with costs in min-cost form (``sign·c``, so for a maximisation problem the bracket is the lost value); the
bracket is the regret, >= 0. The first term is the training **normalised SPO loss** (the paper's "normalised
extra travel time", the same number ``score`` reports on test data, negated); ``splits(T)`` is the number of
branch nodes. ``alpha`` therefore lives on the normalised scale, like the thesis's ``loss / L̂ + alpha·splits``
used by OCT and the local search — except that SPOT's denominator is N = Σ ω |z*| (the total optimal cost,
a property of the data alone) rather than the root-only tree's regret, so the training objective and the
reported metric share one unit. If every z*(c_i) is 0 (N = 0), the training objective falls back to
N = Σ ω (mean regret) rather than failing; the test metrics raise instead.

**Relation to the paper's code.** The reference MILP minimises ``Σ_it y_it − Σ_i z*(c_i) + α_p·n·Σ_m d_m``,
i.e. n × [mean regret + α_p·splits] (``α_p = 1e-4`` for shortest path, ``1e-5`` for news, a "pooling" term).
Dividing ours by N / Σω gives mean regret + alpha·(N/Σω)·splits, so

    α_p = alpha · N / Σω = alpha · mean_ω |z*|,        alpha = α_p · Σω / N   (:func:`alpha_from_paper`).

On the paper's shortest-path generator (4×4 grid, p = 5, n = 200 with the code's 160 training rows, 10 seeds)
mean |z*| is ≈ 12.5 at deg 2 (11.5–14.7) and ≈ 730 at deg 10 (median; 550–1950), so the paper's α_p = 1e-4
is alpha ≈ 8e-6 (deg 2) to ≈ 1.4e-7 (deg 10), and our default alpha = 1e-4 is ≈ 12× (deg 2) to ≈ 730×
(deg 10) the paper's pooling term.
"""
from __future__ import annotations

import numpy as np

from ..data.prepared import check_sample_weight
from ..errors import InputError


def spot_norm(problem, C, sample_weight=None, z=None, on_zero: str = "mean") -> float:
    """N = Σ ω |z*(c)|, the denominator of the SPOT objective (and of the normalised SPO loss).

    ``z``: the optimal values z*(c_i) if already known (either sense: only |z*| is used). ``on_zero``: what
    to do when N = 0 — ``"mean"`` returns Σ ω (the objective becomes mean regret), ``"raise"`` raises.
    """
    C = problem.check_costs(C)
    w = check_sample_weight(sample_weight, C.shape[0])
    if z is None:
        _, z = problem.solve(C)
    den = float(w @ np.abs(np.asarray(z, float)))
    if den > 0:
        return den
    if on_zero == "raise":
        raise InputError("normalised SPO loss is undefined: all optimal values z*(c) are zero")
    return float(w.sum())


def objective_value(total_regret: float, n_splits: int, norm: float, alpha: float) -> float:
    """F = total weighted regret / N + alpha · splits: the one formula every SPOT method uses."""
    return float(total_regret) / float(norm) + float(alpha) * int(n_splits)


def tree_regret(problem, tree, X, C, decisions=None, z=None) -> np.ndarray:
    """Per-row regret (>= 0) of the leaf decisions of ``tree`` (or ``decisions[leaf]``).

    ``z``: the min-cost-form optimal values z*(sign·c_i) if already known.
    """
    C = problem.check_costs(C)
    Cm = problem.sign * C
    z = problem._solve_min(Cm)[1] if z is None else np.asarray(z, float)
    leaf = tree.apply(X)
    W = (tree.extras["decision"] if decisions is None else np.asarray(decisions, float))[leaf]
    return np.einsum("ij,ij->i", Cm, W) - z


def spot_objective(problem, tree, X, C, sample_weight=None, alpha: float = 0.0, decisions=None, norm=None,
                   z=None) -> float:
    """F(tree) on (X, C, ω): training normalised SPO loss + alpha · splits (see the module docstring).

    ``decisions``: per-node decisions to use instead of ``tree.extras["decision"]``; ``norm``: N if already
    known; ``z``: the min-cost-form optimal values z*(sign·c_i) if already known.
    """
    C = problem.check_costs(C)
    w = check_sample_weight(sample_weight, C.shape[0])
    if z is None:
        _, z = problem._solve_min(problem.sign * C)
    if norm is None:
        norm = spot_norm(problem, C, w, z=z)
    reg = tree_regret(problem, tree, X, C, decisions=decisions, z=z)
    return objective_value(float(w @ reg), tree.n_splits, norm, alpha)


def alpha_from_paper(alpha_paper: float, problem, C, sample_weight=None) -> float:
    """Our alpha equal to the reference code's pooling parameter α_p on this data: α_p · Σω / N."""
    C = problem.check_costs(C)
    w = check_sample_weight(sample_weight, C.shape[0])
    return float(alpha_paper) * float(w.sum()) / spot_norm(problem, C, w)


def alpha_to_paper(alpha: float, problem, C, sample_weight=None) -> float:
    """The reference code's α_p (mean-regret units per split) equal to ``alpha`` on this data: alpha · N / Σω."""
    C = problem.check_costs(C)
    w = check_sample_weight(sample_weight, C.shape[0])
    return float(alpha) * spot_norm(problem, C, w) / float(w.sum())
